/*
 * stress_recorder - the recorder core under concurrency, as a plain
 * program so that it also runs under ThreadSanitizer (which the forking
 * test runner does not survive).
 *
 * Waves of threads record events and intern names while the main thread
 * forces flushes and reads the file back; at the end every event must be
 * in the file or counted as lost, and every name a record refers to must
 * be defined.
 *
 *   stress_recorder [THREADS] [EVENTS_PER_THREAD] [WAVES]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "core/recorder.h"

static uint64_t events_per_thread;
static atomic_uint_fast64_t emitted;

static void *hammer(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg;
    char name[32];
    for (uint64_t i = 0; i < events_per_thread; i++) {
        uint32_t name_id = 0;
        if (i % 64 == 0) {
            snprintf(name, sizeof(name), "name-%llu", (unsigned long long)(i / 64 % 50));
            name_id = pi_intern_cstr(name);
        }
        pi_emit(PI_REC_MARK, 0, pi_clock_ticks(), 0, id << 32 | i, name_id, 0);
        atomic_fetch_add_explicit(&emitted, 1, memory_order_relaxed);
    }
    pi_thread_exit();
    return NULL;
}

struct tally {
    uint64_t marks, exits, undefined_names;
};

static void tally_marks(const struct pi_reader *reader, const struct pi_event *ev,
                        struct traced_file *file, void *context)
{
    (void)file;
    struct tally *t = context;
    t->exits += ev->rec.kind == PI_REC_THREAD_EXIT;
    if (ev->rec.kind != PI_REC_MARK)
        return;
    t->marks++;
    if (ev->rec.arg[1] && !pi_reader_string(reader, ev->rec.arg[1]))
        t->undefined_names++;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 16;
    events_per_thread = argc > 2 ? strtoull(argv[2], NULL, 10) : 20000;
    int waves = argc > 3 ? atoi(argv[3]) : 3;
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    struct pi_config config;
    pi_config_from_env(&config);
    snprintf(config.output_dir, sizeof(config.output_dir), "%s", dir);
    config.buffer_count = 32;
    config.buffer_records = 256;
    config.flush_interval_ns = 5000000;
    config.sample_interval_ns = 1000000;
    if (pi_recorder_start(&config) != 0) {
        printf("0 passed, 1 failed\n");
        return 1;
    }
    pthread_t *ids = calloc((size_t)threads, sizeof(pthread_t));
    for (int w = 0; w < waves; w++) {
        for (int t = 0; t < threads; t++)
            pthread_create(&ids[t], NULL, hammer, (void *)(uintptr_t)(w * threads + t + 1));
        for (int f = 0; f < 5; f++)
            pi_recorder_flush_sync(1000);
        for (int t = 0; t < threads; t++)
            pthread_join(ids[t], NULL);
    }
    free(ids);
    pi_recorder_stop(PI_END_EXIT, 0);

    struct traced_file files[4];
    struct tally tally = {0, 0, 0};
    int n = read_trace_dir(dir, files, 4, tally_marks, &tally);
    /* every thread also records its exit */
    uint64_t total = atomic_load(&emitted) + (uint64_t)threads * (uint64_t)waves;
    int ok = n == 1 && !files[0].read_error &&
             tally.marks + tally.exits + files[0].lost == total &&
             tally.undefined_names == 0;
    printf("stress: %d threads x %llu events x %d waves: recorded %llu, lost %llu, "
           "undefined names %llu%s%s\n",
           threads, (unsigned long long)events_per_thread, waves,
           (unsigned long long)tally.marks, (unsigned long long)(n ? files[0].lost : 0),
           (unsigned long long)tally.undefined_names, n && files[0].read_error ? ": " : "",
           n && files[0].read_error ? files[0].error : "");
    printf("%d passed, %d failed\n", ok, !ok);
    return ok ? 0 : 1;
}
