/* attach.h - load libprofinject.so into a running process (ptrace) */
#ifndef PI_LAUNCHER_ATTACH_H
#define PI_LAUNCHER_ATTACH_H

#include <sys/types.h>

/**
 * pi_attach - in @pid, set PROFINJECT_ATTACHED=1 (and PROFINJECT_OUTPUT to
 * @output) and dlopen @library, whose constructor then redirects the calls
 * the process has already bound. Prints why on failure.
 * Return: 0, or -1.
 */
int pi_attach(pid_t pid, const char *library, const char *output);

#endif
