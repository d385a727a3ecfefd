/*
 * test_elf_symbols - attach's reader of a C library's file, against what
 * this process's own loader and glibc say about the same file: the version
 * glibc reports, and the addresses dlsym gives.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_symbols.h"

struct loaded {
    struct pi_elf_file elf;
    uintptr_t base; /* where this process's loader put it */
    void *handle;
};

static struct loaded open_libc(void)
{
    struct loaded l = {0};
    l.handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(l.handle);
    struct link_map *map;
    cr_assert_eq(dlinfo(l.handle, RTLD_DI_LINKMAP, &map), 0);
    l.base = map->l_addr;
    int fd = open(map->l_name, O_RDONLY);
    struct stat st;
    cr_assert(fd >= 0 && fstat(fd, &st) == 0, "%s", map->l_name);
    void *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    cr_assert_neq(data, MAP_FAILED);
    cr_assert_eq(pi_elf_open(data, (size_t)st.st_size, &l.elf), 0);
    return l;
}

Test(elf_symbols, glibc_version_is_the_one_glibc_reports)
{
    struct loaded l = open_libc();
    int minor = atoi(gnu_get_libc_version() + 2); /* "2.36" */
    cr_assert_eq(pi_elf_glibc_minor(&l.elf), minor);
}

Test(elf_symbols, addresses_are_the_loaders)
{
    struct loaded l = open_libc();
    /* dlopen has two versions since glibc 2.34: the default one is what dlsym gives */
    const char *names[] = {"setenv", "dlopen", "memfd_create", "close", "dlerror"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        uint64_t offset = pi_elf_symbol(&l.elf, names[i]);
        cr_assert_neq(offset, 0, "%s", names[i]);
        cr_assert_eq(l.base + offset, (uintptr_t)dlsym(l.handle, names[i]), "%s", names[i]);
    }
    cr_assert_eq(pi_elf_symbol(&l.elf, "no_such_function_here"), 0);
}

Test(elf_symbols, not_elf_is_refused)
{
    static const unsigned char text[64] = "#!/bin/sh\necho not a library\n";
    struct pi_elf_file elf;
    cr_assert_eq(pi_elf_open(text, sizeof(text), &elf), -1);
    cr_assert_eq(pi_elf_open(text, 3, &elf), -1);
}
