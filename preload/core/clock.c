/* clock.c - tick source selection and calibration (see clock.h). */
#include "clock.h"

#include "profinject/trace_format.h"

#if PI_HAVE_TSC
#include <cpuid.h>
#include <dlfcn.h>
#endif

int pi_clock_uses_tsc;

#if PI_HAVE_TSC
/*
 * glibc 2.33 and later keep the CPUID leaves they read at start and hand
 * them out (<sys/platform/x86.h>; looked up by version, as the library
 * binds to 2.28's symbols). In a virtual machine each CPUID instruction
 * traps to the hypervisor: 4.5 us on the development VM, and asking
 * directly takes four, a tenth of the library's start. 0: unknown.
 */
#define GLIBC_LEAF_80000007 4 /* CPUID_INDEX_80000007 of glibc's public enum */

static int glibc_says_invariant_tsc(void)
{
    struct leaf {
        unsigned cpuid[4]; /* eax, ebx, ecx, edx */
        unsigned active[4];
    };
    const struct leaf *(*get_leaf)(unsigned) = (const struct leaf *(*)(unsigned))dlvsym(
        RTLD_DEFAULT, "__x86_get_cpuid_feature_leaf", "GLIBC_2.33");
    const struct leaf *leaf = get_leaf ? get_leaf(GLIBC_LEAF_80000007) : NULL;
    return leaf && ((leaf->cpuid[3] >> 8) & 1);
}
#endif

static int cpu_has_invariant_tsc(void)
{
#if PI_HAVE_TSC
    if (glibc_says_invariant_tsc())
        return 1;
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u)
        return 0;
    if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx))
        return 0;
    return (edx >> 8) & 1;
#else
    return 0;
#endif
}

void pi_clock_init(enum pi_clock_request request)
{
    switch (request) {
    case PI_CLOCK_FORCE_MONOTONIC:
        pi_clock_uses_tsc = 0;
        break;
    case PI_CLOCK_FORCE_TSC:
        pi_clock_uses_tsc = PI_HAVE_TSC;
        break;
    default:
        pi_clock_uses_tsc = cpu_has_invariant_tsc();
        break;
    }
}

int pi_clock_source(void)
{
    return pi_clock_uses_tsc ? PI_CLOCK_TSC : PI_CLOCK_MONOTONIC;
}

void pi_clock_sync_point(uint64_t *ticks, uint64_t *mono_ns)
{
    if (!pi_clock_uses_tsc) {
        *mono_ns = pi_clock_ns(CLOCK_MONOTONIC);
        *ticks = *mono_ns;
        return;
    }
    /* Bracket the clock_gettime between two TSC reads and keep the tightest
     * of a few tries: a preemption between the reads would skew the pair. */
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t before = pi_clock_ticks();
        uint64_t mono = pi_clock_ns(CLOCK_MONOTONIC);
        uint64_t after = pi_clock_ticks();
        if (after - before < best_gap) {
            best_gap = after - before;
            *ticks = before + (after - before) / 2;
            *mono_ns = mono;
        }
    }
}

double pi_clock_rate_between(uint64_t ticks0, uint64_t mono0_ns, uint64_t ticks1,
                             uint64_t mono1_ns)
{
    if (!pi_clock_uses_tsc)
        return 1e9;
    return (double)(ticks1 - ticks0) * 1e9 / (double)(mono1_ns - mono0_ns);
}

double pi_clock_rate_since(uint64_t ticks0, uint64_t mono0_ns, uint64_t min_ns)
{
    if (!pi_clock_uses_tsc)
        return 1e9;
    uint64_t ticks, mono;
    do {
        pi_clock_sync_point(&ticks, &mono);
    } while (mono - mono0_ns < min_ns);
    return pi_clock_rate_between(ticks0, mono0_ns, ticks, mono);
}

uint64_t pi_clock_thread_cpu_ns(uint32_t tid)
{
    /* the kernel's id of a thread's scheduler CPU clock (clock_getcpuclockid(3)) */
    clockid_t clock = (clockid_t)((~tid << 3) | 6);
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
