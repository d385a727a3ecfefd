/*
 * symbolizer.c - libdwfl over the modules that call stacks name (see
 * symbolizer.h). One Dwfl session per module, kept for the whole run:
 * the same libraries appear in every process's stacks.
 */
#define _GNU_SOURCE
#include "symbolizer.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUILD_ID_MAX 64

struct module {
    char *path;
    unsigned char build_id[BUILD_ID_MAX];
    size_t build_id_length;
    Dwfl *dwfl; /* NULL: not found, not tried again */
    Dwfl_Module *mod;
    struct module *next;
};

static struct module *modules;
/* files read in parallel name frames at once: the list and a Dwfl session
 * are one thread's at a time (libdwfl is not safe to share) */
static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/* A regular file only: a trace may name anything, and a FIFO would block. */
static int open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Report @path as the module, at its own addresses (bias 0); keep it when
 * its build id is the recorded one (or none was recorded). */
static int try_file(struct module *m, const char *path)
{
    int fd = open_regular(path);
    if (fd < 0)
        return 0;
    Dwfl *dwfl = dwfl_begin(&callbacks);
    if (!dwfl) {
        close(fd);
        return 0;
    }
    Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, fd, 0, true); /* consumes fd */
    dwfl_report_end(dwfl, NULL, NULL);
    if (mod && m->build_id_length) {
        const unsigned char *bits;
        GElf_Addr vaddr;
        int n = dwfl_module_build_id(mod, &bits, &vaddr);
        if (n != (int)m->build_id_length || memcmp(bits, m->build_id, (size_t)n) != 0)
            mod = NULL; /* another build than the one that ran */
    }
    if (!mod) {
        dwfl_end(dwfl);
        return 0;
    }
    m->dwfl = dwfl;
    m->mod = mod;
    return 1;
}

static struct module *find_module(const char *path, const unsigned char *build_id,
                                  size_t build_id_length)
{
    static int registered;
    if (!registered)
        registered = atexit(pi_symbolizer_free) == 0;
    if (build_id_length > BUILD_ID_MAX)
        build_id_length = 0;
    for (struct module *m = modules; m; m = m->next)
        if (strcmp(m->path, path) == 0 && m->build_id_length == build_id_length &&
            memcmp(m->build_id, build_id, build_id_length) == 0)
            return m;
    struct module *m = calloc(1, sizeof(*m));
    if (!m || !(m->path = strdup(path))) {
        free(m);
        return NULL;
    }
    memcpy(m->build_id, build_id, build_id_length);
    m->build_id_length = build_id_length;
    m->next = modules;
    modules = m;
    /* offline: no debuginfod server is asked, whatever the environment says */
    unsetenv("DEBUGINFOD_URLS");
    if (!try_file(m, path) && build_id_length >= 2) {
        char debug[64 + 2 * BUILD_ID_MAX];
        int used = snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%02x/", build_id[0]);
        for (size_t i = 1; i < build_id_length; i++)
            used += snprintf(debug + used, sizeof(debug) - (size_t)used, "%02x", build_id[i]);
        snprintf(debug + used, sizeof(debug) - (size_t)used, ".debug");
        try_file(m, debug);
    }
    return m;
}

int pi_symbolize(const char *path, const unsigned char *build_id, size_t build_id_length,
                 uint64_t offset, char *name, size_t size, uint64_t *symbol_offset)
{
    if (!path || !path[0])
        return 0;
    pthread_mutex_lock(&modules_lock);
    struct module *m = find_module(path, build_id, build_id_length);
    GElf_Off off = 0;
    GElf_Sym sym;
    const char *found =
        m && m->mod ? dwfl_module_addrinfo(m->mod, offset, &off, &sym, NULL, NULL, NULL) : NULL;
    int named = found && found[0];
    if (named) {
        /* "__libc_start_main@@GLIBC_2.34": the version belongs to linking, not to the name */
        snprintf(name, size, "%.*s", (int)strcspn(found, "@"), found);
        *symbol_offset = off;
    }
    pthread_mutex_unlock(&modules_lock);
    return named;
}

void pi_symbolizer_free(void)
{
    pthread_mutex_lock(&modules_lock);
    while (modules) {
        struct module *m = modules;
        modules = m->next;
        if (m->dwfl)
            dwfl_end(m->dwfl);
        free(m->path);
        free(m);
    }
    pthread_mutex_unlock(&modules_lock);
}
