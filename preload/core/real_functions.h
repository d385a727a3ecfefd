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

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PI_REQUIRED 1
#define PI_OPTIONAL 0

/* name, return type, parameters, required?, symbol version (NULL: the default) */
#define PI_REAL_FUNCTIONS(X)                                                                      \
    X(fork, pid_t, (void), PI_REQUIRED, NULL)                                                     \
    X(execve, int, (const char *, char *const[], char *const[]), PI_REQUIRED, NULL)               \
    X(execv, int, (const char *, char *const[]), PI_REQUIRED, NULL)                               \
    X(execvp, int, (const char *, char *const[]), PI_REQUIRED, NULL)                              \
    X(execvpe, int, (const char *, char *const[], char *const[]), PI_OPTIONAL, NULL)              \
    X(fexecve, int, (int, char *const[], char *const[]), PI_OPTIONAL, NULL)                       \
    X(_exit, void, (int), PI_REQUIRED, NULL)                                                      \
    X(_Exit, void, (int), PI_REQUIRED, NULL)                                                       \
    X(sigaction, int, (int, const struct sigaction *, struct sigaction *), PI_REQUIRED, NULL)     \
    X(signal, sighandler_t, (int, sighandler_t), PI_REQUIRED, NULL)                               \
    X(wait, pid_t, (int *), PI_REQUIRED, NULL)                                                    \
    X(waitpid, pid_t, (pid_t, int *, int), PI_REQUIRED, NULL)                                     \
    X(wait4, pid_t, (pid_t, int *, int, struct rusage *), PI_OPTIONAL, NULL)                      \
    X(waitid, int, (idtype_t, id_t, siginfo_t *, int), PI_OPTIONAL, NULL)                         \
    PI_THREAD_FUNCTIONS(X)                                                                        \
    PI_IO_FUNCTIONS(X)

/* pthread_cond_* exist in two versions; dlsym would return the old one. */
#define PI_THREAD_FUNCTIONS(X)                                                                    \
    X(pthread_create, int, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *),     \
      PI_REQUIRED, NULL)                                                                          \
    X(pthread_setname_np, int, (pthread_t, const char *), PI_OPTIONAL, NULL)                      \
    X(prctl, int, (int, unsigned long, unsigned long, unsigned long, unsigned long), PI_REQUIRED, \
      NULL)                                                                                       \
    X(pthread_mutex_lock, int, (pthread_mutex_t *), PI_REQUIRED, NULL)                            \
    X(pthread_cond_wait, int, (pthread_cond_t *, pthread_mutex_t *), PI_REQUIRED, "GLIBC_2.3.2")  \
    X(pthread_cond_timedwait, int, (pthread_cond_t *, pthread_mutex_t *, const struct timespec *),\
      PI_REQUIRED, "GLIBC_2.3.2")                                                                 \
    X(pthread_cond_clockwait, int,                                                                \
      (pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *), PI_OPTIONAL,     \
      NULL)                                                                                       \
    X(sem_wait, int, (sem_t *), PI_REQUIRED, NULL)                                                \
    X(sem_post, int, (sem_t *), PI_REQUIRED, NULL)                                                \
    X(sem_timedwait, int, (sem_t *, const struct timespec *), PI_REQUIRED, NULL)                  \
    X(sem_clockwait, int, (sem_t *, clockid_t, const struct timespec *), PI_OPTIONAL, NULL)       \
    X(nanosleep, int, (const struct timespec *, struct timespec *), PI_REQUIRED, NULL)           \
    X(clock_nanosleep, int, (clockid_t, int, const struct timespec *, struct timespec *),         \
      PI_REQUIRED, NULL)                                                                          \
    X(usleep, int, (useconds_t), PI_REQUIRED, NULL)                                               \
    X(sleep, unsigned, (unsigned), PI_REQUIRED, NULL)

#define PI_IO_FUNCTIONS(X)                                                                        \
    X(open, int, (const char *, int, ...), PI_REQUIRED, NULL)                                     \
    X(open64, int, (const char *, int, ...), PI_OPTIONAL, NULL)                                   \
    X(openat, int, (int, const char *, int, ...), PI_REQUIRED, NULL)                              \
    X(openat64, int, (int, const char *, int, ...), PI_OPTIONAL, NULL)                            \
    X(__open_2, int, (const char *, int), PI_OPTIONAL, NULL)                                      \
    X(__open64_2, int, (const char *, int), PI_OPTIONAL, NULL)                                    \
    X(__openat_2, int, (int, const char *, int), PI_OPTIONAL, NULL)                               \
    X(__openat64_2, int, (int, const char *, int), PI_OPTIONAL, NULL)                             \
    X(creat, int, (const char *, mode_t), PI_REQUIRED, NULL)                                      \
    X(creat64, int, (const char *, mode_t), PI_OPTIONAL, NULL)                                    \
    X(close, int, (int), PI_REQUIRED, NULL)                                                       \
    X(dup, int, (int), PI_REQUIRED, NULL)                                                         \
    X(dup2, int, (int, int), PI_REQUIRED, NULL)                                                   \
    X(dup3, int, (int, int, int), PI_OPTIONAL, NULL)                                              \
    X(read, ssize_t, (int, void *, size_t), PI_REQUIRED, NULL)                                    \
    X(pread, ssize_t, (int, void *, size_t, off_t), PI_REQUIRED, NULL)                            \
    X(pread64, ssize_t, (int, void *, size_t, off_t), PI_OPTIONAL, NULL)                          \
    X(readv, ssize_t, (int, const struct iovec *, int), PI_REQUIRED, NULL)                        \
    X(preadv, ssize_t, (int, const struct iovec *, int, off_t), PI_OPTIONAL, NULL)                \
    X(preadv64, ssize_t, (int, const struct iovec *, int, off_t), PI_OPTIONAL, NULL)              \
    X(write, ssize_t, (int, const void *, size_t), PI_REQUIRED, NULL)                             \
    X(pwrite, ssize_t, (int, const void *, size_t, off_t), PI_REQUIRED, NULL)                     \
    X(pwrite64, ssize_t, (int, const void *, size_t, off_t), PI_OPTIONAL, NULL)                   \
    X(writev, ssize_t, (int, const struct iovec *, int), PI_REQUIRED, NULL)                       \
    X(pwritev, ssize_t, (int, const struct iovec *, int, off_t), PI_OPTIONAL, NULL)               \
    X(pwritev64, ssize_t, (int, const struct iovec *, int, off_t), PI_OPTIONAL, NULL)             \
    X(recv, ssize_t, (int, void *, size_t, int), PI_REQUIRED, NULL)                               \
    X(recvfrom, ssize_t, (int, void *, size_t, int, struct sockaddr *, socklen_t *), PI_REQUIRED, \
      NULL)                                                                                       \
    X(recvmsg, ssize_t, (int, struct msghdr *, int), PI_REQUIRED, NULL)                           \
    X(send, ssize_t, (int, const void *, size_t, int), PI_REQUIRED, NULL)                         \
    X(sendto, ssize_t, (int, const void *, size_t, int, const struct sockaddr *, socklen_t),      \
      PI_REQUIRED, NULL)                                                                          \
    X(sendmsg, ssize_t, (int, const struct msghdr *, int), PI_REQUIRED, NULL)                     \
    X(preadv2, ssize_t, (int, const struct iovec *, int, off_t, int), PI_OPTIONAL, NULL)          \
    X(preadv64v2, ssize_t, (int, const struct iovec *, int, off_t, int), PI_OPTIONAL, NULL)       \
    X(pwritev2, ssize_t, (int, const struct iovec *, int, off_t, int), PI_OPTIONAL, NULL)         \
    X(pwritev64v2, ssize_t, (int, const struct iovec *, int, off_t, int), PI_OPTIONAL, NULL)      \
    X(recvmmsg, int, (int, struct mmsghdr *, unsigned int, int, struct timespec *), PI_OPTIONAL,  \
      NULL)                                                                                       \
    X(sendmmsg, int, (int, struct mmsghdr *, unsigned int, int), PI_OPTIONAL, NULL)               \
    X(copy_file_range, ssize_t, (int, off_t *, int, off_t *, size_t, unsigned int), PI_OPTIONAL,  \
      NULL)                                                                                       \
    X(sendfile, ssize_t, (int, int, off_t *, size_t), PI_OPTIONAL, NULL)                          \
    X(sendfile64, ssize_t, (int, int, off_t *, size_t), PI_OPTIONAL, NULL)                        \
    X(poll, int, (struct pollfd *, nfds_t, int), PI_REQUIRED, NULL)                               \
    X(ppoll, int, (struct pollfd *, nfds_t, const struct timespec *, const sigset_t *),           \
      PI_OPTIONAL, NULL)                                                                          \
    X(select, int, (int, fd_set *, fd_set *, fd_set *, struct timeval *), PI_REQUIRED, NULL)      \
    X(pselect, int, (int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *),\
      PI_OPTIONAL, NULL)                                                                          \
    X(epoll_wait, int, (int, struct epoll_event *, int, int), PI_OPTIONAL, NULL)                  \
    X(epoll_pwait, int, (int, struct epoll_event *, int, int, const sigset_t *), PI_OPTIONAL,     \
      NULL)                                                                                       \
    X(mmap, void *, (void *, size_t, int, int, int, off_t), PI_REQUIRED, NULL)                    \
    X(mmap64, void *, (void *, size_t, int, int, int, off_t), PI_OPTIONAL, NULL)                  \
    X(fopen, FILE *, (const char *, const char *), PI_REQUIRED, NULL)                             \
    X(fopen64, FILE *, (const char *, const char *), PI_OPTIONAL, NULL)                           \
    X(fclose, int, (FILE *), PI_REQUIRED, NULL)                                                   \
    X(fread, size_t, (void *, size_t, size_t, FILE *), PI_REQUIRED, NULL)                         \
    X(fwrite, size_t, (const void *, size_t, size_t, FILE *), PI_REQUIRED, NULL)

/* Hooks with no real counterpart of their own (variadic front ends). */
#define PI_EXTRA_HOOKS(X) X(execl) X(execlp) X(execle)

#define PI_DECLARE_REAL(name, ret, params, required, version) extern ret(*pi_real_##name) params;
PI_REAL_FUNCTIONS(PI_DECLARE_REAL)
#undef PI_DECLARE_REAL

/* glibc's own dlsym: the profiler's lookups never pass through its dlsym hook */
extern void *(*pi_real_dlsym)(void *, const char *);

/* pi_real_dlsym_resolve - find glibc's dlsym by version (dlvsym is never hooked) */
void pi_real_dlsym_resolve(void);

/**
 * pi_dlsym - glibc's dlsym, for the profiler's own lookups
 * @handle: a dlopen handle, RTLD_DEFAULT, or RTLD_NEXT (the objects after this library)
 * @name: the symbol
 * Return: its address, or NULL.
 */
void *pi_dlsym(void *handle, const char *name);

/**
 * pi_real_resolve - look up every real function
 *
 * Prints one profinject: line per required function that is missing.
 * Return: 0 when every required function was found.
 */
int pi_real_resolve(void);

/**
 * pi_real_lookup - resolve one real function now (a hook ran before pi_real_resolve)
 * @name: the function's name
 * @slot: the pointer to fill
 * Return: the function, or NULL.
 */
void *pi_real_lookup(const char *name, void **slot);

/* PI_REAL - the real function behind hook @name, resolved on first use if need be.
 * The core built on its own for tests and benchmarks has no hooks in front of
 * libc (and, under a sanitizer, must go through its interceptors): there
 * the real function is simply the function. */
#ifdef PI_CORE_STANDALONE
#define PI_REAL(name) name
#else
#define PI_REAL(name)                                                                             \
    (__builtin_expect(pi_real_##name != NULL, 1)                                                  \
         ? pi_real_##name                                                                         \
         : (__typeof__(pi_real_##name))pi_real_lookup(#name, (void **)&pi_real_##name))
#endif

#endif
