/*
 * Integration with a real PyTorch training process (pip's torch in the
 * project's Python, PI_PYTHON: tools/python says which): the example job
 * runs under the preload and what the trace says is checked against what
 * the script says it did.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#define MAX_FILES 32
#define PYTHON PI_PYTHON

struct job {
    char traces[64];
    char data_dir[256];
    int pid, samples, epochs, workers;
    double file_bytes;
};

/* Run the example with @delay_ms per sample; fills @job from its --summary. */
static void run_example(struct job *job, const char *data_dir, const char *delay_ms, int epochs)
{
    make_temp_dir(job->traces, sizeof(job->traces));
    char summary[128], epochs_text[16];
    snprintf(summary, sizeof(summary), "%s.json", job->traces);
    snprintf(epochs_text, sizeof(epochs_text), "%d", epochs);
    char *argv[] = {PYTHON,     PI_SOURCE_DIR "/examples/pytorch_train.py",
                    "--data-dir", (char *)data_dir,
                    "--samples",  "128",
                    "--batch-size", "16",
                    "--epochs",   epochs_text,
                    "--workers",  "2",
                    "--delay-ms", (char *)delay_ms,
                    "--summary",  summary,
                    NULL};
    static struct run_result result;
    run_program(job->traces, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "training failed (%d): %s", result.status,
              result.err);
    cr_assert_eq(count_lines_with_prefix(result.err, "profinject:"), 0, "%s", result.err);
    FILE *f = fopen(summary, "r");
    cr_assert_not_null(f);
    static char text[4096];
    text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
    fclose(f);
    cJSON *json = cJSON_Parse(text);
    cr_assert_not_null(json, "summary is not JSON: %s", text);
    job->pid = cJSON_GetObjectItem(json, "pid")->valueint;
    job->samples = cJSON_GetObjectItem(json, "samples")->valueint;
    job->epochs = cJSON_GetObjectItem(json, "epochs")->valueint;
    job->workers = cJSON_GetObjectItem(json, "workers")->valueint;
    job->file_bytes = cJSON_GetObjectItem(json, "file_bytes")->valuedouble;
    snprintf(job->data_dir, sizeof(job->data_dir), "%s",
             cJSON_GetObjectItem(json, "data_dir")->valuestring);
    cJSON_Delete(json);
}

static int is_dataset_file(const char *path, const char *data_dir)
{
    size_t n = strlen(data_dir), len = path ? strlen(path) : 0;
    return path && strncmp(path, data_dir, n) == 0 && strncmp(path + n, "/sample_", 8) == 0 &&
           len > 4 && strcmp(path + len - 4, ".bin") == 0;
}

struct dataset_io {
    const char *data_dir;
    uint64_t opens, bytes_read, reads;
};

static void count_dataset_io(const struct pi_reader *reader, const struct pi_event *ev,
                             struct traced_file *file, void *context)
{
    (void)file;
    struct dataset_io *io = context;
    const struct pi_record *r = &ev->rec;
    if (r->kind != PI_REC_IO || (r->flags & PI_FLAG_FAILED))
        return;
    const char *path = r->arg[2] ? pi_reader_string(reader, r->arg[2]) : NULL;
    if (!is_dataset_file(path, io->data_dir))
        return;
    unsigned op = PI_IO_OP(r->flags);
    if (op == PI_IO_OPEN)
        io->opens++;
    if (op == PI_IO_READ || op == PI_IO_PREAD || op == PI_IO_READV || op == PI_IO_FREAD) {
        cr_assert_eq(PI_IO_CLASS(r->flags), PI_FD_FILE, "dataset reads are file reads");
        io->bytes_read += r->arg[1];
        io->reads++;
    }
}

Test(pytorch, workers_have_own_files_and_dataset_io_adds_up, .timeout = 300)
{
    char data[64];
    make_temp_dir(data, sizeof(data));
    struct job job;
    run_example(&job, data, "0", 2);

    struct traced_file files[MAX_FILES];
    struct dataset_io io = {job.data_dir, 0, 0, 0};
    int n = read_trace_dir(job.traces, files, MAX_FILES, count_dataset_io, &io);
    int main_files = 0, worker_files = 0;
    for (int i = 0; i < n; i++) {
        cr_assert_not(files[i].read_error, "%s", files[i].error);
        main_files += files[i].pid == job.pid;
        worker_files += files[i].ppid == job.pid;
    }
    cr_assert_eq(main_files, 1);
    /* a DataLoader starts its workers anew every epoch */
    cr_assert_eq(worker_files, job.workers * job.epochs, "worker files: %d of %d", worker_files,
                 job.workers * job.epochs);
    cr_assert_eq(io.opens, (uint64_t)job.samples * job.epochs, "dataset opens: %lu",
                 (unsigned long)io.opens);
    cr_assert_eq((double)io.bytes_read, job.file_bytes * job.epochs,
                 "dataset bytes read: %lu, files hold %.0f x %d epochs", (unsigned long)io.bytes_read,
                 job.file_bytes, job.epochs);
}

/* Time the main thread spent blocked on the workers' pipes and sockets. */
struct blocked {
    int pid;
    uint64_t ns, pipe_polls, pipe_reads;
    uint64_t first_ns, last_ns; /* from the first wait's start to the last one's end */
};

static void add_blocked_time(const struct pi_reader *reader, const struct pi_event *ev,
                             struct traced_file *file, void *context)
{
    (void)reader;
    struct blocked *b = context;
    const struct pi_record *r = &ev->rec;
    if (file->pid != b->pid || (int)r->tid != b->pid || r->kind != PI_REC_IO)
        return;
    unsigned op = PI_IO_OP(r->flags), fd_class = PI_IO_CLASS(r->flags);
    int waits = op == PI_IO_POLL || op == PI_IO_PPOLL || op == PI_IO_SELECT ||
                op == PI_IO_PSELECT || op == PI_IO_EPOLL_WAIT || op == PI_IO_READ ||
                op == PI_IO_RECV || op == PI_IO_RECVMSG;
    if (waits && (fd_class == PI_FD_PIPE || fd_class == PI_FD_SOCKET)) {
        b->ns += ev->dur_ns;
        if (!b->first_ns || ev->ts_ns < b->first_ns)
            b->first_ns = ev->ts_ns;
        if (ev->ts_ns + ev->dur_ns > b->last_ns)
            b->last_ns = ev->ts_ns + ev->dur_ns;
    }
    b->pipe_polls += fd_class == PI_FD_PIPE && op == PI_IO_POLL;
    b->pipe_reads += fd_class == PI_FD_PIPE && op == PI_IO_READ;
}

static struct blocked main_thread_blocked(const struct job *job)
{
    struct traced_file files[MAX_FILES];
    struct blocked b = {job->pid, 0, 0, 0, 0, 0};
    read_trace_dir(job->traces, files, MAX_FILES, add_blocked_time, &b);
    /* the DataLoader waits for a batch in poll on the result queue's pipe, then reads it */
    cr_assert_gt(b.pipe_polls, 0, "no poll on a pipe in the main thread");
    cr_assert_gt(b.pipe_reads, 0, "no read from a pipe in the main thread");
    return b;
}

Test(pytorch, starved_model_waits_longer_for_workers, .timeout = 300)
{
    char data[64];
    make_temp_dir(data, sizeof(data));
    struct job fast, slow;
    run_example(&fast, data, "0", 1);
    run_example(&slow, data, "25", 1);
    struct blocked fed = main_thread_blocked(&fast), starved = main_thread_blocked(&slow);
    uint64_t fast_ns = fed.ns, slow_ns = starved.ns;
    cr_log_info("main thread blocked on workers: %.3f s without delay, %.3f s with 25 ms/sample",
                fast_ns / 1e9, slow_ns / 1e9);
    cr_assert_gt(slow_ns, 0);
    cr_assert_gt(slow_ns, 3 * fast_ns, "blocked %.3f s starved vs %.3f s fed", slow_ns / 1e9,
                 fast_ns / 1e9);
    /* 128 samples x 25 ms over 2 workers cannot arrive in under 1.6 s: the
     * waits for them span at least that, less the first batch's head start.
     * (How much of it is spent blocked depends on how fast this machine
     * computes the steps in between.) */
    cr_assert_gt(starved.last_ns - starved.first_ns, 1500000000ull, "waits spanned %.3f s",
                 (starved.last_ns - starved.first_ns) / 1e9);
}

struct gil {
    uint32_t tid[2];
    uint64_t cond_waits, cond_ns;
};

static void count_cond_waits(const struct pi_reader *reader, const struct pi_event *ev,
                             struct traced_file *file, void *context)
{
    (void)reader;
    (void)file;
    struct gil *g = context;
    if (ev->rec.kind == PI_REC_WAIT && ev->rec.arg[0] == PI_WAIT_COND &&
        (ev->rec.tid == g->tid[0] || ev->rec.tid == g->tid[1])) {
        g->cond_waits++;
        g->cond_ns += ev->dur_ns;
    }
}

Test(pytorch, gil_waits_between_two_python_threads, .timeout = 120)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {PYTHON, PI_SOURCE_DIR "/tests/programs/gil_contention.py", NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "%s", result.err);
    /* each spinning thread's own account: time asleep, and time off a CPU */
    struct gil g = {{0, 0}, 0, 0};
    unsigned long long slept[2], off_cpu[2];
    cr_assert_eq(sscanf(result.out, "thread %u slept %llu off-cpu %llu thread %u slept %llu off-cpu %llu",
                        &g.tid[0], &slept[0], &off_cpu[0], &g.tid[1], &slept[1], &off_cpu[1]),
                 6, "%s", result.out);
    uint64_t slept_ns = slept[0] + slept[1], off_cpu_ns = off_cpu[0] + off_cpu[1];
    struct traced_file files[MAX_FILES];
    cr_assert_eq(read_trace_dir(dir, files, MAX_FILES, count_cond_waits, &g), 1);
    cr_log_info("GIL: %lu condition waits, %.3f s; the threads slept %.3f s, %.3f s off a CPU",
                (unsigned long)g.cond_waits, g.cond_ns / 1e9, slept_ns / 1e9, off_cpu_ns / 1e9);
    /* a 5 ms switch interval over about 1 s of two spinning threads */
    cr_assert_gt(g.cond_waits, 50, "only %lu GIL waits seen", (unsigned long)g.cond_waits);
    cr_assert_gt(slept_ns, 250000000ull, "the threads hardly contended: %.3f s asleep", slept_ns / 1e9);
    /* spinning threads sleep only for the GIL; a wait ends when the woken
     * thread runs again, so it may also hold some of the time off a CPU */
    cr_assert_geq(g.cond_ns, slept_ns * 9 / 10, "GIL waits %.3f s, slept %.3f s", g.cond_ns / 1e9,
                  slept_ns / 1e9);
    cr_assert_leq(g.cond_ns, off_cpu_ns + 5000000, "GIL waits %.3f s, off a CPU %.3f s",
                  g.cond_ns / 1e9, off_cpu_ns / 1e9);
}

struct sem_waits {
    int pid;
    uint64_t long_waits;
};

static void count_long_sem_waits(const struct pi_reader *reader, const struct pi_event *ev,
                                 struct traced_file *file, void *context)
{
    (void)reader;
    struct sem_waits *s = context;
    if (file->pid == s->pid && ev->rec.kind == PI_REC_WAIT && ev->rec.arg[0] == PI_WAIT_SEM &&
        ev->dur_ns > 50000000)
        s->long_waits++;
}

Test(pytorch, python_lock_waits_are_semaphore_waits, .timeout = 120)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {PYTHON, PI_SOURCE_DIR "/tests/programs/python_waits.py", NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "%s", result.err);
    struct traced_file files[MAX_FILES];
    int n = read_trace_dir(dir, files, MAX_FILES, NULL, NULL);
    cr_assert_eq(n, 2, "the script and its lock-holding child");
    struct sem_waits s = {0, 0};
    for (int i = 0; i < n; i++)
        if (files[i].counts[PI_REC_FORK])
            s.pid = files[i].pid;
    read_trace_dir(dir, files, MAX_FILES, count_long_sem_waits, &s);
    /* queue.Queue.get(timeout) and multiprocessing.Lock.acquire(timeout) */
    cr_assert_geq(s.long_waits, 2, "long semaphore waits: %lu", (unsigned long)s.long_waits);
}
