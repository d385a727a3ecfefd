/*
 * prog_ranges COUNT SCALE: COUNT ranges named "work" around busy waits of
 * log-uniform length from 1 us to 2 ms, times SCALE. The same seed gives
 * the same lengths, so two runs with different SCALE differ only in speed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <time.h>

#include "profinject/profinject.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 2000;
    double scale = argc > 2 ? atof(argv[2]) : 1.0;
    if (!profinject_range || !profinject_now)
        return 2;
    srand(7);
    for (int i = 0; i < count; i++) {
        /* 1 us .. 2 ms, log-uniform */
        double exponent = 3.0 + 3.3 * rand() / (double)RAND_MAX;
        uint64_t length = (uint64_t)(scale * pow(10.0, exponent));
        uint64_t start = profinject_now(), begin = now_ns();
        while (now_ns() - begin < length)
            ;
        profinject_range("work", start, (uint64_t)i);
    }
    return 0;
}
