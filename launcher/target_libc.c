/* target_libc.c - see target_libc.h. */
#define _GNU_SOURCE
#include "target_libc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_symbols.h"
#include "proc_maps.h"

/* glibc's private flag that __libc_dlopen_mode needs to behave as dlopen */
#define GLIBC_RTLD_DLOPEN 0x80000000

static int is_glibc_start(const struct pi_mapping *m, const void *unused)
{
    (void)unused;
    return m->offset == 0 && strchr(m->path, '/') && !strstr(m->path, "musl") &&
           strncmp(pi_mapping_name(m), "libc.so", 7) == 0;
}

static int is_musl(const struct pi_mapping *m, const void *unused)
{
    (void)unused;
    return strstr(m->path, "musl") != NULL; /* ld-musl-x86_64.so.1, or Debian's .../x86_64-linux-musl/libc.so */
}

/* The library file as @pid maps it: through its root, else the mapping
 * itself. The container decides what is at that path: never wait on a
 * FIFO put there, never read anything but the mapped file. */
static int open_mapped_file(pid_t pid, const struct pi_mapping *m)
{
    char path[700];
    snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m->path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == m->inode)
        return fd;
    if (fd >= 0)
        close(fd);
    snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)pid,
             (unsigned long)m->start, (unsigned long)m->end);
    return open(path, O_RDONLY | O_CLOEXEC);
}

static int read_symbols(pid_t pid, const struct pi_mapping *m, struct pi_target_libc *libc)
{
    int fd = open_mapped_file(pid, m);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        fprintf(stderr, "profinject: cannot read %s, the C library of process %d\n", m->path,
                (int)pid);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    void *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    struct pi_elf_file elf;
    if (data == MAP_FAILED || pi_elf_open(data, (size_t)st.st_size, &elf) != 0) {
        fprintf(stderr, "profinject: %s, the C library of process %d, is not an x86-64 ELF "
                        "library\n", m->path, (int)pid);
        if (data != MAP_FAILED)
            munmap(data, (size_t)st.st_size);
        return -1;
    }
    libc->glibc_minor = pi_elf_glibc_minor(&elf);
    uint64_t dl = pi_elf_symbol(&elf, "dlopen");
    libc->dlopen_mode_extra = 0;
    if (!dl) { /* before glibc 2.34 dlopen lives in libdl, which may not be loaded */
        dl = pi_elf_symbol(&elf, "__libc_dlopen_mode");
        libc->dlopen_mode_extra = (int)GLIBC_RTLD_DLOPEN;
    }
    uint64_t offsets[5] = {pi_elf_symbol(&elf, "setenv"), dl, pi_elf_symbol(&elf, "memfd_create"),
                           pi_elf_symbol(&elf, "close"),
                           libc->dlopen_mode_extra ? 0 : pi_elf_symbol(&elf, "dlerror")};
    munmap(data, (size_t)st.st_size);
    uintptr_t *functions[5] = {&libc->setenv, &libc->dlopen, &libc->memfd_create, &libc->close,
                               &libc->dlerror};
    for (int i = 0; i < 5; i++)
        *functions[i] = offsets[i] ? m->start + offsets[i] : 0;
    return 0;
}

int pi_target_libc(pid_t pid, struct pi_target_libc *libc)
{
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    struct pi_mapping m;
    if (pi_find_mapping(pid_text, is_glibc_start, NULL, &m) != 0) {
        if (pi_find_mapping(pid_text, is_musl, NULL, &m) == 0)
            fprintf(stderr, "profinject: process %d runs on musl libc (%s): the profiler needs "
                            "glibc 2.%d or newer in the process (an image based on Alpine "
                            "cannot be attached to)\n",
                    (int)pid, m.path, PI_TARGET_GLIBC_MIN_MINOR);
        else
            fprintf(stderr, "profinject: process %d has no C library loaded (a statically "
                            "linked program): there is nothing to load the profiler with\n",
                    (int)pid);
        return -1;
    }
    snprintf(libc->path, sizeof(libc->path), "%s", m.path);
    if (read_symbols(pid, &m, libc) != 0)
        return -1;
    if (libc->glibc_minor < PI_TARGET_GLIBC_MIN_MINOR) {
        if (libc->glibc_minor < 0)
            fprintf(stderr, "profinject: %s in process %d is not glibc\n", m.path, (int)pid);
        else
            fprintf(stderr, "profinject: process %d runs on glibc 2.%d (%s); the profiler needs "
                            "glibc 2.%d or newer\n",
                    (int)pid, libc->glibc_minor, m.path, PI_TARGET_GLIBC_MIN_MINOR);
        return -1;
    }
    if (!libc->setenv || !libc->dlopen || !libc->memfd_create || !libc->close) {
        fprintf(stderr, "profinject: %s in process %d lacks setenv, dlopen, memfd_create or "
                        "close\n", m.path, (int)pid);
        return -1;
    }
    return 0;
}
