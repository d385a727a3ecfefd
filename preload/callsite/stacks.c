/* stacks.c - interning call stacks (see stacks.h). */
#include "stacks.h"

#include <stdatomic.h>
#include <string.h>

#include "core/recorder.h"
#include "native_frames.h"

#define CACHE_SLOTS 4096
#define MAX_FRAMES (PI_MAX_STRING_LEN / sizeof(struct pi_stack_frame))

/* raw return addresses -> native stack id: describing a stack takes a
 * dladdr per frame, walking it again is what an allocation costs anyway */
static struct {
    uint64_t hash;
    uint32_t id;
} native_cache[CACHE_SLOTS];
static atomic_flag cache_busy = ATOMIC_FLAG_INIT;

static uint64_t hash_pcs(void *const *pcs, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)(uintptr_t)pcs[i]) * 1099511628211ull;
    return h ? h : 1;
}

uint32_t pi_stack_intern_native(void *const *pcs, int n)
{
    if (n <= 0)
        return 0;
    uint64_t h = hash_pcs(pcs, n);
    unsigned slot = (unsigned)(h % CACHE_SLOTS);
    uint32_t id = 0;
    /* never wait for another thread: without the cache the stack is described again */
    int mine = !atomic_flag_test_and_set_explicit(&cache_busy, memory_order_acquire);
    if (mine && native_cache[slot].hash == h)
        id = native_cache[slot].id;
    if (mine)
        atomic_flag_clear_explicit(&cache_busy, memory_order_release);
    if (id)
        return id;
    struct pi_stack_frame frames[PI_NATIVE_FRAMES_MAX];
    int count = pi_native_describe(pcs, n < PI_NATIVE_FRAMES_MAX ? n : PI_NATIVE_FRAMES_MAX,
                                   frames);
    id = count ? pi_intern_kind(PI_REC_STACK, frames, (uint64_t)count * sizeof(frames[0])) : 0;
    if (id && !atomic_flag_test_and_set_explicit(&cache_busy, memory_order_acquire)) {
        native_cache[slot].hash = h;
        native_cache[slot].id = id;
        atomic_flag_clear_explicit(&cache_busy, memory_order_release);
    }
    return id;
}

uint32_t pi_stack_intern(const struct pi_stack_frame *python, int python_count, uint32_t native)
{
    struct pi_stack_frame frames[MAX_FRAMES];
    size_t n = 0;
    for (int i = 0; i < python_count && n < MAX_FRAMES; i++)
        frames[n++] = python[i];
    uint32_t length = 0;
    const char *below = native ? pi_interned_bytes(native, &length) : NULL;
    /* byte copies: the string arena keeps no alignment */
    for (size_t i = 0; below && i < length / sizeof(frames[0]) && n < MAX_FRAMES; i++)
        memcpy(&frames[n++], below + i * sizeof(frames[0]), sizeof(frames[0]));
    if (n == 0)
        return 0;
    if (python_count == 0)
        return native;
    return pi_intern_kind(PI_REC_STACK, frames, n * sizeof(frames[0]));
}

void pi_stack_emit_call_site(uint16_t kind, uint16_t flags, unsigned detail, uint64_t ts,
                             uint64_t key, uint32_t stack, uint16_t site_flags)
{
    if (stack)
        pi_emit(PI_REC_CALL_SITE, site_flags, ts, 0, stack, PI_CALL_SITE_OF(kind, flags, detail),
                key);
}
