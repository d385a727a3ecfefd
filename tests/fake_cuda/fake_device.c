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
    int (*gate)(void *); /* NULL: none; else what is queued from gated_ns on waits for it */
    void *gate_arg;
    uint64_t gated_ns; /* the work queued behind the gate */
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

/* The work behind @s's gate starts once it opens. Lock held. */
static void open_gate(struct fake_stream *s, uint64_t now)
{
    if (!s->gate || !s->gate(s->gate_arg))
        return;
    s->busy_until = (s->busy_until > now ? s->busy_until : now) + s->gated_ns;
    s->gate = NULL;
    s->gated_ns = 0;
}

static __thread int (*next_gate)(void *);
static __thread void *next_gate_arg;

__attribute__((visibility("default"))) void fake_gate_next_kernel(int (*ready)(void *),
                                                                   void *arg)
{
    next_gate = ready;
    next_gate_arg = arg;
}

static uint64_t enqueue(struct fake_stream *stream, uint64_t duration_ns, int (*gate)(void *),
                        void *gate_arg)
{
    uint64_t now = fake_now_ns();
    pthread_mutex_lock(&lock);
    open_gate(stream, now);
    /* behind a gate still closed, a later gated kernel's gate holds both: the peers that
     * came to the later collective came to the earlier one */
    if (gate && (stream->gate || !gate(gate_arg))) {
        stream->gate = gate;
        stream->gate_arg = gate_arg;
    }
    uint64_t end = FAKE_NEVER;
    if (stream->gate) {
        stream->gated_ns += duration_ns;
    } else {
        uint64_t start = stream->busy_until > now ? stream->busy_until : now;
        stream->busy_until = start + duration_ns;
        end = stream->busy_until;
    }
    pthread_mutex_unlock(&lock);
    return end;
}

uint64_t fake_enqueue(struct fake_stream *stream, uint64_t duration_ns)
{
    return enqueue(stream, duration_ns, NULL, NULL);
}

uint64_t fake_enqueue_kernel(struct fake_stream *stream, uint64_t duration_ns)
{
    int (*gate)(void *) = next_gate;
    next_gate = NULL;
    return enqueue(stream, duration_ns, gate, next_gate_arg);
}

uint64_t fake_stream_end(struct fake_stream *stream)
{
    pthread_mutex_lock(&lock);
    open_gate(stream, fake_now_ns());
    uint64_t end = stream->gate ? FAKE_NEVER : stream->busy_until;
    pthread_mutex_unlock(&lock);
    return end;
}

uint64_t fake_device_end(void)
{
    uint64_t end = 0, now = fake_now_ns();
    pthread_mutex_lock(&lock);
    for (struct fake_stream *s = streams; s; s = s->next) {
        open_gate(s, now);
        uint64_t e = s->gate ? FAKE_NEVER : s->busy_until;
        if (e > end)
            end = e;
    }
    pthread_mutex_unlock(&lock);
    return end;
}

void fake_stream_wait(struct fake_stream *stream)
{
    uint64_t end;
    /* a gate opens when another process says so: polled, as a driver spins on a flag */
    while ((end = stream ? fake_stream_end(stream) : fake_device_end()) == FAKE_NEVER)
        fake_sleep_until(fake_now_ns() + 1000000u);
    fake_sleep_until(end);
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
