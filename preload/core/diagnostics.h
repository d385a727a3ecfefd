/*
 * diagnostics.h - the profiler's only way to talk to the user at run time:
 * one line on stderr starting "profinject: ". Written with a raw write(2)
 * syscall so that it works in any state (signal handler, fork child, before
 * the C library's stdio is ready) and preserves errno.
 */
#ifndef PI_DIAGNOSTICS_H
#define PI_DIAGNOSTICS_H

/* pi_diag - print "profinject: <formatted text>\n" to stderr; errno is preserved */
void pi_diag(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif
