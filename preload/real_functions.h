/*
 * real_functions.h - the one table of intercepted functions.
 *
 * Each entry: name, return type, parameter list, and whether the hook can
 * work without the real function (PI_OPTIONAL entries are simply not
 * called through when missing). pi_real_resolve fills a pointer per entry
 * with dlsym(RTLD_NEXT): the next definition after this object, normally
 * libc's.
 */
#ifndef PI_REAL_FUNCTIONS_H
#define PI_REAL_FUNCTIONS_H

#include <signal.h>
#include <sys/types.h>

#define PI_REQUIRED 1
#define PI_OPTIONAL 0

#define PI_REAL_FUNCTIONS(X)                                                                      \
    X(fork, pid_t, (void), PI_REQUIRED)                                                           \
    X(execve, int, (const char *, char *const[], char *const[]), PI_REQUIRED)                     \
    X(execv, int, (const char *, char *const[]), PI_REQUIRED)                                     \
    X(execvp, int, (const char *, char *const[]), PI_REQUIRED)                                    \
    X(execvpe, int, (const char *, char *const[], char *const[]), PI_OPTIONAL)                    \
    X(fexecve, int, (int, char *const[], char *const[]), PI_OPTIONAL)                             \
    X(_exit, void, (int), PI_REQUIRED)                                                            \
    X(_Exit, void, (int), PI_REQUIRED)                                                            \
    X(sigaction, int, (int, const struct sigaction *, struct sigaction *), PI_REQUIRED)           \
    X(signal, sighandler_t, (int, sighandler_t), PI_REQUIRED)

/* Hooks with no real counterpart of their own (variadic front ends). */
#define PI_EXTRA_HOOKS(X) X(execl) X(execlp) X(execle)

#define PI_DECLARE_REAL(name, ret, params, required) extern ret(*pi_real_##name) params;
PI_REAL_FUNCTIONS(PI_DECLARE_REAL)
#undef PI_DECLARE_REAL

/**
 * pi_real_resolve - look up every real function
 *
 * Prints one profinject: line per required function that is missing.
 * Return: 0 when every required function was found.
 */
int pi_real_resolve(void);

#endif
