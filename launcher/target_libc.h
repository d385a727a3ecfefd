/*
 * target_libc.h - the C library of another process and the functions attach
 * calls in it, found in that library's own file: a process in a container
 * has its own glibc, at addresses and of a version that ours says nothing
 * about.
 */
#ifndef PI_LAUNCHER_TARGET_LIBC_H
#define PI_LAUNCHER_TARGET_LIBC_H

#include <stdint.h>
#include <sys/types.h>

/* The oldest glibc the library runs on: its symbol versions (preload/core/glibc_versions.h). */
#define PI_TARGET_GLIBC_MIN_MINOR 28

struct pi_target_libc {
    char path[512];        /* as the process sees it */
    int glibc_minor;       /* 2.N */
    uintptr_t setenv;
    uintptr_t dlopen;      /* dlopen (glibc >= 2.34), else __libc_dlopen_mode */
    int dlopen_mode_extra; /* flags __libc_dlopen_mode wants beside the caller's */
    uintptr_t memfd_create;
    uintptr_t close;
    uintptr_t dlerror;     /* 0 before glibc 2.34 (it is libdl's) */
};

/**
 * pi_target_libc - find the C library of process @pid and its functions
 * Prints why it cannot: no C library (a static program), musl, a glibc
 * older than 2.28, a file that cannot be read.
 * Return: 0, or -1.
 */
int pi_target_libc(pid_t pid, struct pi_target_libc *libc);

#endif
