/*
 * prog_sleeps: sleeps once in each of the ways a program can, in this
 * order: nanosleep, clock_nanosleep for a length, clock_nanosleep until a
 * moment, usleep (each about 40 ms), then sleep (1 s). It prints how long
 * each took by its own clock (CLOCK_MONOTONIC ns), one line each: the truth
 * for the sleep records.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define SLEEP_NS 40000000L

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
    long long took[5], start;
    struct timespec length = {0, SLEEP_NS};

    start = now_ns();
    nanosleep(&length, NULL);
    took[0] = now_ns() - start;

    start = now_ns();
    clock_nanosleep(CLOCK_MONOTONIC, 0, &length, NULL);
    took[1] = now_ns() - start;

    struct timespec until;
    start = now_ns();
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += SLEEP_NS;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
    took[2] = now_ns() - start;

    start = now_ns();
    usleep(SLEEP_NS / 1000);
    took[3] = now_ns() - start;

    start = now_ns();
    sleep(1);
    took[4] = now_ns() - start;

    for (int i = 0; i < 5; i++)
        printf("%lld\n", took[i]);
    return 0;
}
