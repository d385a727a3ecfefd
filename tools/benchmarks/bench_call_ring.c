/*
 * bench_call_ring - what a launch costs its thread in CUPTI mode beyond the
 * hook itself: one clock read after the real call and a note in the
 * thread's call ring (preload/gpu_timing/call_ring.c). Prints
 * "cuda_launch_cupti_note_ns N ns", the median of 9 rounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/clock.h"
#include "gpu_timing/call_ring.h"

#define ROUNDS 9
#define NOTES 2000000

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(void)
{
    pi_clock_init(PI_CLOCK_AUTO);
    double rounds[ROUNDS];
    uint64_t start = pi_clock_ticks();
    for (int r = 0; r < ROUNDS; r++) {
        double begin = now_ns();
        for (uint64_t i = 0; i < NOTES; i++)
            pi_call_ring_note(start + i, pi_clock_ticks(), i + 1);
        rounds[r] = (now_ns() - begin) / NOTES;
    }
    qsort(rounds, ROUNDS, sizeof(rounds[0]), compare);
    printf("cuda_launch_cupti_note_ns %.1f ns\n", rounds[ROUNDS / 2]);
    return 0;
}
