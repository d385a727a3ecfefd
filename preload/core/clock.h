/*
 * clock.h - the recorder's timestamp source.
 *
 * Hooks read the clock twice per event, so it must be cheap: the invariant
 * TSC where the CPU has one (about 10 ns a read here), else
 * CLOCK_MONOTONIC through the vDSO. The mapping from ticks to nanoseconds
 * is measured off the hot path by the writer and stored in the trace.
 */
#ifndef PI_CLOCK_H
#define PI_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define PI_HAVE_TSC 1
#else
#define PI_HAVE_TSC 0
#endif

enum pi_clock_request { PI_CLOCK_AUTO, PI_CLOCK_FORCE_TSC, PI_CLOCK_FORCE_MONOTONIC };

/* Set once by pi_clock_init, read on every event. */
extern int pi_clock_uses_tsc;

/* pi_clock_ticks - current time in clock ticks (TSC cycles or monotonic ns) */
static inline uint64_t pi_clock_ticks(void)
{
#if PI_HAVE_TSC
    if (__builtin_expect(pi_clock_uses_tsc, 1))
        return __rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/**
 * pi_clock_ticks_ordered - pi_clock_ticks read only once every earlier store of
 * this thread is visible to the other threads: the time of a switch (a capture
 * window closing) that no record made before the switch may come later than.
 * A plain TSC read may run ahead of an earlier locked store still waiting for
 * its cache line: hundreds of ns on a virtual machine, dozens of records.
 */
static inline uint64_t pi_clock_ticks_ordered(void)
{
#if PI_HAVE_TSC
    _mm_mfence();
    _mm_lfence(); /* the read waits for the fence: the sequence the CPU makers give */
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
    return pi_clock_ticks();
}

/* pi_clock_ns - read clock @id (monotonic, real time, a CPU clock) in nanoseconds */
static inline uint64_t pi_clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/**
 * pi_clock_init - choose the tick source
 * @request: what the user asked for (PROFINJECT_CLOCK)
 *
 * Uses the TSC only when the CPU reports it invariant (CPUID 0x80000007
 * EDX bit 8), since a TSC that stops or changes rate in idle states cannot
 * be compared across cores.
 */
void pi_clock_init(enum pi_clock_request request);

/* pi_clock_thread_cpu_ns - CPU time used so far by thread @tid of this process (ns), from
 * the kernel's per-thread CPU clock; 0 when the thread is gone */
uint64_t pi_clock_thread_cpu_ns(uint32_t tid);

/* pi_clock_source - PI_CLOCK_TSC or PI_CLOCK_MONOTONIC (trace_format.h) */
int pi_clock_source(void);

/**
 * pi_clock_sync_point - read ticks and CLOCK_MONOTONIC as close together as possible
 * @ticks: receives the tick count
 * @mono_ns: receives the monotonic time matching @ticks
 */
void pi_clock_sync_point(uint64_t *ticks, uint64_t *mono_ns);

/**
 * pi_clock_rate_between - ticks per second between two sync points
 * (1e9 when the clock is CLOCK_MONOTONIC itself)
 */
double pi_clock_rate_between(uint64_t ticks0, uint64_t mono0_ns, uint64_t ticks1,
                             uint64_t mono1_ns);

/**
 * pi_clock_rate_since - ticks per second between an earlier sync point and now
 * @ticks0: ticks of the earlier pi_clock_sync_point
 * @mono0_ns: its CLOCK_MONOTONIC time
 * @min_ns: spin until at least this long has passed since @mono0_ns
 *
 * A pair of readings taken far apart instead of a spin: the recorder's start
 * and the writer's first moments are usually more than @min_ns apart already.
 */
double pi_clock_rate_since(uint64_t ticks0, uint64_t mono0_ns, uint64_t min_ns);

#endif
