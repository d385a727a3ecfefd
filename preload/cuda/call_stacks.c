/*
 * call_stacks.c - where an allocation came from, as an interned string of
 * frames "function+0xoffset (library)" joined by ';'.
 *
 * libunwind is dlopen'ed with RTLD_LOCAL, never linked: linked, it would
 * join the global scope and take _Unwind_RaiseException from libgcc_s for
 * every C++ exception the host throws (DESIGN.md, decision 10). Stacks are
 * walked only for allocations, which a caching allocator makes rare, and
 * each distinct stack is symbolised once.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_common.h"
#include "core/guard.h"
#include "core/real_functions.h"
#include "core/recorder.h"

#define MAX_FRAMES 24
#define OWN_FRAMES_MAX 8 /* frames of the profiler itself, dropped from the top */
#define CACHE_SLOTS 4096

static int (*backtrace_fn)(void **, int);
static const void *own_base;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static struct {
    uint64_t hash;
    uint32_t id;
} cache[CACHE_SLOTS];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static void load_unwinder(void)
{
    void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (lib)
        backtrace_fn = (int (*)(void **, int))pi_dlsym(lib, "unw_backtrace");
    Dl_info self;
    if (dladdr((const void *)pi_cuda_alloc_stack, &self))
        own_base = self.dli_fbase;
}

/* Frames at the top that are the profiler's own (how many depends on inlining). */
static int own_frames(void *const *frames, int n)
{
    int skip = 0;
    Dl_info info;
    while (skip < n && dladdr(frames[skip], &info) && info.dli_fbase == own_base)
        skip++;
    return skip;
}

static uint64_t hash_frames(void *const *frames, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)(uintptr_t)frames[i]) * 1099511628211ull;
    return h ? h : 1;
}

static uint32_t symbolise(void *const *frames, int n)
{
    char text[PI_MAX_STRING_LEN];
    size_t used = 0;
    for (int i = 0; i < n && used + 2 < sizeof(text); i++) {
        Dl_info info;
        const char *library = "?";
        int written;
        /* a return address points after the call: look up the call itself */
        const char *pc = (const char *)frames[i] - 1;
        if (dladdr(pc, &info) && info.dli_fname) {
            const char *slash = strrchr(info.dli_fname, '/');
            library = slash ? slash + 1 : info.dli_fname;
        }
        if (info.dli_sname)
            written = snprintf(text + used, sizeof(text) - used, "%s%s+0x%lx (%s)", i ? ";" : "",
                               info.dli_sname, (unsigned long)(pc - (const char *)info.dli_saddr),
                               library);
        else
            written = snprintf(text + used, sizeof(text) - used, "%s0x%lx (%s)", i ? ";" : "",
                               (unsigned long)(pc - (const char *)info.dli_fbase), library);
        if (written < 0)
            break;
        used += (size_t)written;
    }
    if (used >= sizeof(text))
        used = sizeof(text) - 1;
    return pi_intern(text, used);
}

uint32_t pi_cuda_alloc_stack(void)
{
    pthread_once(&once, load_unwinder);
    if (!backtrace_fn)
        return 0;
    int saved = errno;
    int guard = pi_guard_enter();
    void *frames[MAX_FRAMES + OWN_FRAMES_MAX];
    int n = backtrace_fn(frames, MAX_FRAMES + OWN_FRAMES_MAX);
    int skip = own_frames(frames, n);
    uint32_t id = 0;
    if (n > skip) {
        void **mine = frames + skip;
        n -= skip;
        uint64_t h = hash_frames(mine, n);
        PI_REAL(pthread_mutex_lock)(&cache_lock);
        unsigned slot = (unsigned)(h % CACHE_SLOTS);
        if (cache[slot].hash == h)
            id = cache[slot].id;
        pthread_mutex_unlock(&cache_lock);
        if (!id) {
            id = symbolise(mine, n);
            PI_REAL(pthread_mutex_lock)(&cache_lock);
            cache[slot].hash = h;
            cache[slot].id = id;
            pthread_mutex_unlock(&cache_lock);
        }
    }
    pi_guard_restore(guard);
    errno = saved;
    return id;
}
