/* attach.h - load libprofinject.so into a running process (ptrace) */
#ifndef PI_LAUNCHER_ATTACH_H
#define PI_LAUNCHER_ATTACH_H

#include <sys/types.h>

/**
 * pi_attach - in @pid, set PROFINJECT_ATTACHED=1, give it the output
 * directory @output and dlopen @library, whose constructor then redirects
 * the calls the process has already bound. Prints why on failure.
 *
 * A process in other mount or PID namespaces, or under another root (a
 * container, a chroot), sees neither our paths nor our sockets: the
 * library goes in as a copy in memory (memfd) unless the process sees this
 * very file at the same path; the directory as a descriptor
 * (output_handoff.h); its control socket is an abstract one (no file left
 * in the container).
 * Return: 0, or -1.
 */
int pi_attach(pid_t pid, const char *library, const char *output);

#endif
