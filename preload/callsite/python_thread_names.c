/* python_thread_names.c - see python_thread_names.h. Through the C API:
 * threading._active maps each running thread's ident to its Thread, whose
 * _name and _native_id (3.8+) are plain instance attributes. */
#include "python_thread_names.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/raw_syscalls.h"
#include "core/real_functions.h"
#include "core/recorder.h"
#include "python_capi.h"

/* How often the threads are looked at: a look costs a few microseconds of
 * the main thread, so ten a second cost it under 0.01%, and a thread that
 * lives a few hundred milliseconds is still named. */
#define LOOK_EVERY_NS 100000000u
/* Threads whose name was recorded: at most this many are remembered. */
#define REMEMBERED 256

static const struct pi_python_capi *api;
static uint64_t next_look_ns;
static struct {
    uint32_t tid;
    uint64_t name_hash;
} remembered[REMEMBERED];
static size_t remembered_count;

static uint64_t hash(const char *text)
{
    uint64_t h = 1469598103934665603ull;
    for (; *text; text++)
        h = (h ^ (unsigned char)*text) * 1099511628211ull;
    return h;
}

/* Whether @tid's name is new or changed; remembers it. */
static int is_news(uint32_t tid, uint64_t name_hash)
{
    for (size_t i = 0; i < remembered_count; i++)
        if (remembered[i].tid == tid) {
            int changed = remembered[i].name_hash != name_hash;
            remembered[i].name_hash = name_hash;
            return changed;
        }
    /* full: the oldest goes (its thread has most likely ended) */
    if (remembered_count == REMEMBERED)
        memmove(remembered, remembered + 1, sizeof(remembered) - sizeof(remembered[0]));
    else
        remembered_count++;
    remembered[remembered_count - 1].tid = tid;
    remembered[remembered_count - 1].name_hash = name_hash;
    return 1;
}

static void record_thread(void *thread)
{
    void *native = api->get_attr(thread, "_native_id");
    void *name = native ? api->get_attr(thread, "_name") : NULL;
    unsigned long tid = native ? api->as_unsigned_long(native) : 0;
    const char *text = name ? api->as_utf8(name) : NULL;
    /* not the main thread (named by the system's name), nor a thread of another process: in a
     * fork child, threading._active holds the parent's threads until Python's own after-fork
     * handler runs, and a look may come first (seen: a DataLoader worker's file named the
     * parent's main thread "MainThread"); asked of the kernel only for a name not yet
     * recorded, not for every thread at every look */
    if (text && tid && tid <= UINT32_MAX && tid != (unsigned long)getpid() &&
        is_news((uint32_t)tid, hash(text)) && pi_sys_thread_is_ours((uint32_t)tid)) {
        uint32_t id = pi_intern(text, strnlen(text, 64));
        pi_emit(PI_REC_THREAD_NAME, 0, pi_clock_ticks(), 0, id, 0, tid);
    }
    if (native)
        api->dec_ref(native);
    if (name)
        api->dec_ref(name);
    api->err_clear();
}

void pi_python_thread_names(const struct pi_python *py)
{
    uint64_t now = pi_clock_ns(CLOCK_MONOTONIC);
    if (now < next_look_ns || !(api = pi_python_capi(py)))
        return;
    next_look_ns = now + LOOK_EVERY_NS;
    /* sys.modules read directly: PyImport_GetModule runs importlib's module lock for a
     * module still being imported, and this call may come in the middle of that lock */
    void *modules = api->modules();
    void *threading = modules ? api->dict_item(modules, "threading") : NULL;
    void *active = threading ? api->get_attr(threading, "_active") : NULL;
    long pos = 0;
    void *key, *thread;
    while (active && api->dict_next(active, &pos, &key, &thread))
        record_thread(thread);
    if (active)
        api->dec_ref(active);
    api->err_clear();
}
