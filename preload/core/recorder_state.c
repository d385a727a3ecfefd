/*
 * recorder_state.c - the state the application side (recorder.c) and the
 * writer thread (writer.c) share, defined apart from both so that neither
 * file depends on the other for it.
 */
#include "recorder_internal.h"

#include "clock.h"

struct pi_recorder pi_rec;
_Atomic uint64_t pi_recording;
uint64_t pi_wait_threshold_ticks;

uint64_t pi_thread_cpu_in_trace(uint32_t tid)
{
    uint64_t cpu = pi_clock_thread_cpu_ns(tid);
    if (tid == (uint32_t)pi_rec.pid) /* the only thread that can predate the trace */
        cpu = cpu > pi_rec.main_cpu_start_ns ? cpu - pi_rec.main_cpu_start_ns : 0;
    return cpu;
}
