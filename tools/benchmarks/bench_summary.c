/*
 * bench_summary - what summary mode writes and costs, against full mode,
 * on the event mix and rate of a real GPU job.
 *
 *   bench_summary full|summary TRACE SECONDS
 *
 * Replays the training part of TRACE (the records from the first to the
 * last kernel launch of a real trace: the H100 job of
 * tests/analyzer/fixtures/h100/) into the recorder core, again and again,
 * each record on its own thread id, kernel names and paths interned anew,
 * times shifted so that the replay covers SECONDS of the job's time at its
 * own rate (as fast as the writer drains: the summaries' intervals follow
 * the records' times). Prints, as "name value unit" lines:
 *
 *   MODE_bytes_per_day     the file's bytes over SECONDS, times a day
 *   MODE_records_per_s     the job's record rate that was replayed
 *   MODE_writer_ns_per_record  the writer thread's CPU per record
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/background_thread.h"
#include "core/recorder.h"
#include "reader/trace_reader.h"

#define MAX_RECORDS 2000000u
#define FLUSH_EVERY 200000u

struct replay_record {
    struct pi_record rec;
    uint64_t ts_ns, dur_ns;
};

static struct replay_record *records;
static size_t record_count;

/* A string id of the trace as an id of this recorder. */
static uint64_t map_string(const struct pi_reader *reader, uint64_t id)
{
    const char *text = id ? pi_reader_string(reader, id) : NULL;
    return text ? pi_intern_cstr(text) : 0;
}

/* The fields that name strings or stacks: strings re-interned, stacks dropped. */
static void map_ids(const struct pi_reader *reader, struct pi_record *r)
{
    switch (r->kind) {
    case PI_REC_GPU_LAUNCH:
        r->arg[1] = map_string(reader, r->arg[1]);
        r->arg[2] &= 0xffffffffffull; /* stream and device; the call stack is not replayed */
        break;
    case PI_REC_GPU_ALLOC:
    case PI_REC_GPU_FREE:
    case PI_REC_GPU_COPY:
    case PI_REC_GPU_SYNC:
        r->arg[2] &= 0xffffffffffull;
        break;
    case PI_REC_GPU_TIME:
        r->arg[2] = map_string(reader, r->arg[2]);
        break;
    case PI_REC_IO:
        r->arg[2] = map_string(reader, r->arg[2]);
        break;
    case PI_REC_NVTX_RANGE:
    case PI_REC_THREAD_NAME:
    case PI_REC_EXEC:
        r->arg[0] = map_string(reader, r->arg[0]);
        break;
    case PI_REC_CALL_SITE:
    case PI_REC_PY_SAMPLE:
        r->arg[0] = 0;
        break;
    default:
        break;
    }
}

/* The records of @path between its first and last launch; 0 or -1. */
static int load(const char *path, int pid)
{
    char error[600];
    struct pi_reader *reader = pi_reader_open(path, error, sizeof(error));
    if (!reader) {
        fprintf(stderr, "bench_summary: %s\n", error);
        return -1;
    }
    int trace_pid = pi_reader_info(reader)->header.pid;
    records = malloc(MAX_RECORDS * sizeof(*records));
    struct pi_event ev;
    size_t last_launch = 0;
    int seen_launch = 0;
    uint64_t last_sample = 0;
    while (records && record_count < MAX_RECORDS && pi_reader_next(reader, &ev) == PI_READ_EVENT) {
        if (!pi_record_has_time(ev.rec.kind) || ev.rec.kind == PI_REC_PROCESS_END)
            continue;
        seen_launch |= ev.rec.kind == PI_REC_GPU_LAUNCH;
        if (!seen_launch)
            continue;
        /* the trace was taken with samples every 10 ms; the default is now 50 ms */
        if (ev.rec.kind == PI_REC_PROC_SAMPLE && ev.ts_ns < last_sample + 50000000u)
            continue;
        if (ev.rec.kind == PI_REC_PROC_SAMPLE)
            last_sample = ev.ts_ns;
        struct replay_record *r = &records[record_count++];
        r->rec = ev.rec;
        r->ts_ns = ev.ts_ns;
        r->dur_ns = ev.dur_ns;
        if (r->rec.tid == (uint32_t)trace_pid)
            r->rec.tid = (uint32_t)pid; /* the main thread's records stay the main thread's */
        map_ids(reader, &r->rec);
        if (ev.rec.kind == PI_REC_GPU_LAUNCH)
            last_launch = record_count;
    }
    pi_reader_close(reader);
    record_count = last_launch;
    return record_count ? 0 : -1;
}

/* The largest file of @dir: the training process. */
static int largest_file(const char *dir, char *out, size_t size)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    off_t best = -1;
    while (d && (e = readdir(d))) {
        char path[2048];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_size > best) {
            best = st.st_size;
            snprintf(out, size, "%s", path);
        }
    }
    if (d)
        closedir(d);
    return best > 0 ? 0 : -1;
}

static uint64_t file_bytes(const char *dir)
{
    char path[2048];
    struct stat st;
    return largest_file(dir, path, sizeof(path)) == 0 && stat(path, &st) == 0
               ? (uint64_t)st.st_size
               : 0;
}

/* Replay the loaded records over @seconds of the job's time; the records replayed. */
static uint64_t replay(double seconds)
{
    double ticks_per_ns = pi_recorder_ticks_per_second() / 1e9;
    uint64_t first = records[0].ts_ns, span = records[record_count - 1].ts_ns - first + 1;
    uint64_t base = pi_clock_ticks(), emitted = 0;
    uint32_t own_tid = pi_current_tid();
    for (uint64_t offset = 0; offset < (uint64_t)(seconds * 1e9); offset += span) {
        for (size_t i = 0; i < record_count; i++) {
            const struct replay_record *r = &records[i];
            uint64_t ts = base + (uint64_t)((double)(r->ts_ns - first + offset) * ticks_per_ns);
            pi_tls.tid = r->rec.tid; /* each record on the thread that made it */
            pi_emit(r->rec.kind, r->rec.flags, ts, (uint64_t)((double)r->dur_ns * ticks_per_ns),
                    r->rec.arg[0], r->rec.arg[1], r->rec.arg[2]);
            if (++emitted % FLUSH_EVERY == 0)
                pi_recorder_flush_sync(60000);
        }
    }
    pi_tls.tid = own_tid;
    return emitted;
}

int main(int argc, char **argv)
{
    char trace[2048], dir[] = "/tmp/profinject-bench-summary-XXXXXX";
    if (argc != 4 || largest_file(argv[2], trace, sizeof(trace)) != 0 || !mkdtemp(dir))
        return 2;
    int summary = strcmp(argv[1], "summary") == 0;
    setenv("PROFINJECT_MODE", summary ? "summary" : "full", 1);
    struct pi_config config;
    pi_config_from_env(&config);
    snprintf(config.output_dir, sizeof(config.output_dir), "%s", dir);
    config.buffer_count = 1024; /* the replay never waits for the writer */
    config.sample_interval_ns = 0; /* the trace's own samples are replayed at their rate */
    if (pi_recorder_start(&config) != 0 || load(trace, getpid()) != 0)
        return 1;
    double seconds = atof(argv[3]);
    uint64_t cpu_before = pi_background_cpu_ns();
    uint64_t emitted = replay(seconds);
    pi_recorder_flush_sync(60000);
    uint64_t cpu = pi_background_cpu_ns() - cpu_before;
    pi_recorder_stop(PI_END_EXIT, 0);
    struct pi_recorder_stats stats;
    pi_recorder_get_stats(&stats);
    const char *mode = summary ? "summary" : "full";
    double per_day = (double)file_bytes(dir) * 86400.0 / seconds;
    printf("%s_bytes_per_day %.3f GB%s\n", mode, per_day / 1e9, summary ? " (goal <= 1 GB)" : "");
    printf("%s_records_per_s %.0f records/s (the H100 job's training rate, replayed)\n", mode,
           (double)emitted / seconds);
    printf("%s_writer_ns_per_record %.1f ns\n", mode, (double)cpu / (double)emitted);
    printf("%s_lost_records %llu records\n", mode, (unsigned long long)stats.records_lost);
    if (getenv("BENCH_SUMMARY_KEEP")) /* to look at what was written */
        return printf("kept %s\n", dir) < 0;
    char command[128];
    snprintf(command, sizeof(command), "rm -rf %s", dir);
    return system(command) == 0 ? 0 : 1;
}
