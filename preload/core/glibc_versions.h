/*
 * glibc_versions.h - bind the preload object to symbol versions that glibc
 * 2.28 already had, so that one build loads on every system from glibc 2.28
 * (Debian 10, RHEL 8, Ubuntu 18.10) onwards.
 *
 * Linked against a newer glibc, a reference takes the newest version of its
 * symbol: dlopen@GLIBC_2.34 (libdl and libpthread moved into libc in 2.34),
 * pthread_sigmask@GLIBC_2.32, stat@GLIBC_2.33, and the dynamic loader of an
 * older system refuses the whole object ("version `GLIBC_2.34' not found").
 * glibc keeps the old versions for binaries built before the move, so each
 * call here is pointed at its old version instead. Before 2.34 those
 * functions lived in libdl.so.2 and libpthread.so.0: the object lists both as
 * NEEDED (empty stubs from 2.34 on), and an old version is looked up by
 * name in every loaded object, not only in the one the link saw.
 *
 * stat and lstat have no old version of that name (they were inline
 * wrappers of __xstat until 2.33): the library calls fstatat's system call
 * instead (pi_sys_stat in raw_syscalls.h).
 *
 * Force-included into every file of the preload object (-include). A name
 * listed here must never be one the library defines (a hook): .symver would
 * turn the hook itself into a versioned definition. tests/system's
 * glibc_versions test fails on any GLIBC_ version above 2.28.
 */
#ifndef PI_GLIBC_VERSIONS_H
#define PI_GLIBC_VERSIONS_H

#if defined(__x86_64__)
#define PI_GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define PI_GLIBC_BASE "GLIBC_2.17"
#endif

#ifdef PI_GLIBC_BASE
#define PI_OLD_VERSION(name, version) __asm__(".symver " #name "," #name "@" version)
PI_OLD_VERSION(dlopen, PI_GLIBC_BASE);
PI_OLD_VERSION(dlclose, PI_GLIBC_BASE);
PI_OLD_VERSION(dlvsym, PI_GLIBC_BASE);
PI_OLD_VERSION(dladdr, PI_GLIBC_BASE);
PI_OLD_VERSION(pthread_key_create, PI_GLIBC_BASE);
PI_OLD_VERSION(pthread_setspecific, PI_GLIBC_BASE);
PI_OLD_VERSION(pthread_once, PI_GLIBC_BASE);
PI_OLD_VERSION(pthread_mutex_trylock, PI_GLIBC_BASE);
PI_OLD_VERSION(pthread_sigmask, PI_GLIBC_BASE);
#if defined(__x86_64__)
PI_OLD_VERSION(dladdr1, "GLIBC_2.3.3");
#else
PI_OLD_VERSION(dladdr1, PI_GLIBC_BASE);
#endif
#undef PI_OLD_VERSION
#endif

#endif
