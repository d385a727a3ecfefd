/* fake_device.c - stream timelines of the simulated GPU (see fake_device.h). */
#include "fake_device.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

struct fake_stream {
    uint64_t busy_until;
    struct fake_stream *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_stream default_stream;
static struct fake_stream *streams = &default_stream;

uint64_t fake_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct fake_stream *fake_stream_of(void *cu_stream)
{
    /* 0: legacy default stream; 1 and 2: CU_STREAM_LEGACY / CU_STREAM_PER_THREAD */
    if ((uintptr_t)cu_stream <= 2)
        return &default_stream;
    return cu_stream;
}

struct fake_stream *fake_stream_create(void)
{
    struct fake_stream *s = calloc(1, sizeof(*s));
    pthread_mutex_lock(&lock);
    s->next = streams;
    streams = s;
    pthread_mutex_unlock(&lock);
    return s;
}

void fake_stream_destroy(struct fake_stream *stream)
{
    (void)stream; /* kept: events may still point at its timeline */
}

uint64_t fake_enqueue(struct fake_stream *stream, uint64_t duration_ns)
{
    uint64_t now = fake_now_ns();
    pthread_mutex_lock(&lock);
    uint64_t start = stream->busy_until > now ? stream->busy_until : now;
    stream->busy_until = start + duration_ns;
    uint64_t end = stream->busy_until;
    pthread_mutex_unlock(&lock);
    return end;
}

uint64_t fake_stream_end(struct fake_stream *stream)
{
    pthread_mutex_lock(&lock);
    uint64_t end = stream->busy_until;
    pthread_mutex_unlock(&lock);
    return end;
}

uint64_t fake_device_end(void)
{
    uint64_t end = 0;
    pthread_mutex_lock(&lock);
    for (struct fake_stream *s = streams; s; s = s->next)
        if (s->busy_until > end)
            end = s->busy_until;
    pthread_mutex_unlock(&lock);
    return end;
}

/* The wait goes to the kernel directly, as a driver's does: through the C library's
 * clock_nanosleep the profiler would also record it as the program asleep. */
void fake_sleep_until(uint64_t when_ns)
{
    struct timespec at = {(time_t)(when_ns / 1000000000u), (long)(when_ns % 1000000000u)};
    while (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0 &&
           errno == EINTR)
        ;
}
