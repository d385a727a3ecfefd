/* stacks.c - interning call stacks (see stacks.h). */
#include "stacks.h"

#include <stdatomic.h>
#include <string.h>

#include "core/recorder.h"
#include "native_frames.h"

#define CACHE_SLOTS 4096
#define MAX_FRAMES (PI_MAX_STRING_LEN / sizeof(struct pi_stack_frame))

/* raw return addresses -> native stack id: describing a stack takes a
 * dladdr per frame, walking it again is what an allocation costs anyway;
 * and (Python frames, native stack id) -> stack id: the string table
 * would hash the whole stack byte by byte */
struct cached {
    uint64_t hash;
    uint32_t id;
};
static struct cached native_cache[CACHE_SLOTS], combined_cache[CACHE_SLOTS];
static atomic_flag cache_busy = ATOMIC_FLAG_INIT;

/* The id cached under @hash, 0 if none; never waits for another thread. */
static uint32_t cache_get(struct cached *cache, uint64_t hash)
{
    uint32_t id = 0;
    if (!atomic_flag_test_and_set_explicit(&cache_busy, memory_order_acquire)) {
        if (cache[hash % CACHE_SLOTS].hash == hash)
            id = cache[hash % CACHE_SLOTS].id;
        atomic_flag_clear_explicit(&cache_busy, memory_order_release);
    }
    return id;
}

static void cache_put(struct cached *cache, uint64_t hash, uint32_t id)
{
    if (id && !atomic_flag_test_and_set_explicit(&cache_busy, memory_order_acquire)) {
        cache[hash % CACHE_SLOTS] = (struct cached){hash, id};
        atomic_flag_clear_explicit(&cache_busy, memory_order_release);
    }
}

static uint64_t hash_pcs(void *const *pcs, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)(uintptr_t)pcs[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* The id of the native stack @pcs, described by @describe (up to @max frames) once per
 * distinct stack. */
static uint32_t intern_native(void *const *pcs, int n, int max,
                              int (*describe)(void *const *, int, struct pi_stack_frame *))
{
    if (n <= 0)
        return 0;
    uint64_t h = hash_pcs(pcs, n);
    uint32_t id = cache_get(native_cache, h);
    if (id)
        return id;
    struct pi_stack_frame frames[PI_NATIVE_SAMPLE_FRAMES_MAX];
    int count = describe(pcs, n < max ? n : max, frames);
    id = count ? pi_intern_kind(PI_REC_STACK, frames, (uint64_t)count * sizeof(frames[0])) : 0;
    cache_put(native_cache, h, id);
    return id;
}

uint32_t pi_stack_intern_native(void *const *pcs, int n)
{
    return intern_native(pcs, n, PI_NATIVE_FRAMES_MAX, pi_native_describe);
}

uint32_t pi_stack_intern_launch(void *const *pcs, int n)
{
    return intern_native(pcs, n, PI_NATIVE_SAMPLE_FRAMES_MAX, pi_native_describe);
}

uint32_t pi_stack_intern_sampled(void *const *pcs, int n)
{
    return intern_native(pcs, n, PI_NATIVE_SAMPLE_FRAMES_MAX, pi_native_describe_by_range);
}

/* A 64-bit hash of Python frames (whole words at a time) and a native stack id. */
static uint64_t hash_frames(const struct pi_stack_frame *frames, int n, uint32_t native)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ native;
    for (int i = 0; i < n; i++) {
        uint64_t words[3];
        memcpy(words, &frames[i], sizeof(words));
        for (int w = 0; w < 3; w++) {
            h ^= words[w];
            h *= 0xff51afd7ed558ccdull;
            h ^= h >> 32;
        }
    }
    return h ? h : 1;
}

uint32_t pi_stack_intern(const struct pi_stack_frame *python, int python_count, uint32_t native)
{
    if (python_count == 0)
        return native;
    uint64_t h = hash_frames(python, python_count, native);
    uint32_t id = cache_get(combined_cache, h);
    if (id)
        return id;
    struct pi_stack_frame frames[MAX_FRAMES];
    size_t n = 0;
    for (int i = 0; i < python_count && n < MAX_FRAMES; i++)
        frames[n++] = python[i];
    uint32_t length = 0;
    const char *below = native ? pi_interned_bytes(native, &length) : NULL;
    /* byte copies: the string arena keeps no alignment */
    for (size_t i = 0; below && i < length / sizeof(frames[0]) && n < MAX_FRAMES; i++)
        memcpy(&frames[n++], below + i * sizeof(frames[0]), sizeof(frames[0]));
    id = pi_intern_kind(PI_REC_STACK, frames, n * sizeof(frames[0]));
    cache_put(combined_cache, h, id);
    return id;
}

void pi_stack_emit_call_site(uint16_t kind, uint16_t flags, unsigned detail, uint64_t ts,
                             uint64_t key, uint32_t stack, uint16_t site_flags)
{
    if (stack)
        pi_emit(PI_REC_CALL_SITE, site_flags, ts, 0, stack, PI_CALL_SITE_OF(kind, flags, detail),
                key);
}
