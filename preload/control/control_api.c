/*
 * control_api.c - the small API applications and tests may call; see
 * include/profinject/profinject.h. Callers reach it through weak symbols,
 * so a program runs unchanged without the preload.
 */
#define PROFINJECT_BUILDING_LIBRARY
#include "profinject/profinject.h"

#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/recorder.h"

#define PI_EXPORT __attribute__((visibility("default")))

PI_EXPORT void profinject_mark(const char *name, uint64_t value)
{
    pi_ensure_init();
    uint64_t now = pi_clock_ticks();
    uint32_t id = name ? pi_intern_cstr(name) : 0;
    pi_emit(PI_REC_MARK, 0, now, 0, value, id, 0);
}

PI_EXPORT uint64_t profinject_now(void)
{
    return pi_clock_ticks();
}

PI_EXPORT void profinject_range(const char *name, uint64_t start, uint64_t value)
{
    pi_ensure_init();
    uint64_t now = pi_clock_ticks();
    uint32_t id = name ? pi_intern_cstr(name) : 0;
    pi_emit(PI_REC_RANGE, 0, start, now - start, value, id, 0);
}

PI_EXPORT int profinject_flush(unsigned timeout_ms)
{
    pi_ensure_init();
    int guard = pi_guard_enter();
    int result = pi_recorder_flush_sync(timeout_ms);
    pi_guard_restore(guard);
    return result;
}

PI_EXPORT int profinject_is_recording(void)
{
    pi_ensure_init();
    return atomic_load(&pi_recording) != 0;
}
