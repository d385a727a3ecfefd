/*
 * gen_ranks - trace files of a synthetic data-parallel job, one per rank,
 * with a straggler and a skew between ranks planted at known sizes, for the
 * cross-rank analysis's tests and benchmarks.
 *
 *   gen_ranks DIR RANKS STEPS STRAGGLER DELAY_MS [SKEW_US [SEED]]
 *
 * STRAGGLER is the rank made slow (-1: none); each of its steps computes
 * DELAY_MS longer. Prints what was planted as one JSON object on stdout:
 * the figures a test checks the analyzer against.
 *
 * Each rank's step k, as a synchronous job (DDP over gloo) runs it:
 *   starts where its step k-1 ended; a loader thread reads files beside it;
 *   computes for own time (64 nested NVTX ranges, 4 short lock waits of the
 *   main thread between them);
 *   waits in the collective (a condition wait of the main thread) until the
 *   last rank has arrived, plus the collective's latency; the release
 *   reaches rank r skew * r / (RANKS - 1) after rank 0;
 *   runs the optimizer for a fixed tail plus end jitter;
 *   all inside one top-level NVTX range of the main thread: the step.
 * With GEN_RANKS_HOSTS=2 the upper half of the ranks is on a second host:
 * another boot id, and a monotonic clock an hour ahead of the first host's
 * (the wall clocks agree), so only an analyzer that aligns hosts by their
 * wall clocks finds the planted skew.
 * With GEN_RANKS_GPU=1 in the environment the job is a GPU one (DDP over
 * NCCL): the collective is an NCCL kernel launched where the wait began and
 * running on the GPU until the release, while the main thread waits in a
 * stream synchronisation; there is no condition wait.
 * So a rank's own time (step less the main thread's lock waits, or its
 * NCCL kernels' GPU time) is compute + tail + end jitter, and the spread of the step ends is the planted skew
 * plus the end jitter. Jitter is uniform, from a counter-based generator
 * seeded by SEED: any (rank, step) draws the same number in any pass.
 *
 * The records are written as the recorder frames them (a header built by
 * pi_trace_header_build from the identity variables set per rank, then
 * zstd frames of encoded records), without the recorder's threads: a 256-rank
 * job is written in seconds.
 */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "core/trace_file.h"
#include "profinject/record_codec.h"
#include "profinject/trace_format.h"

#define NESTED_RANGES 64
#define FILE_NAMES 64
#define FRAME_RECORDS 4096
#define STEP_NS 100000000.0       /* a step's compute, before jitter */
#define COMPUTE_JITTER_NS 4000000 /* uniform [0, this) added to each step's compute */
#define END_JITTER_NS 200000      /* uniform [0, this) added to each step's end */
#define TAIL_NS 1000000           /* the optimizer after the collective */
#define LATENCY_NS 150000         /* the collective after the last rank arrived */
#define BASE_NS 1000000000000ull  /* the monotonic clock when the job starts */

static uint64_t seed;
static int gpu; /* GEN_RANKS_GPU: collectives are NCCL kernels, not condition waits */
static int hosts = 1; /* GEN_RANKS_HOSTS: 2 puts the upper half of the ranks on a second host */
#define SECOND_HOST_SHIFT_NS 3600000000000ull /* its monotonic clock ahead of the first's */

/* splitmix64 of (seed, rank, step, what): a uniform draw in [0, 1). */
static double draw(uint64_t rank, uint64_t step, uint64_t what)
{
    uint64_t z = seed ^ (rank << 40) ^ (step << 8) ^ what;
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

struct job {
    long ranks, steps, straggler;
    uint64_t delay_ns, skew_ns;
    uint64_t *release; /* per step: when the collective let rank 0 go */
};

static uint64_t compute_ns(const struct job *j, long r, long k)
{
    uint64_t extra = r == j->straggler ? j->delay_ns : 0;
    return (uint64_t)STEP_NS + (uint64_t)(COMPUTE_JITTER_NS * draw(r, k, 1)) + extra;
}

static uint64_t small_wait_ns(long r, long k, int i)
{
    return 20000 + (uint64_t)(40000 * draw(r, k, 16 + i));
}

static uint64_t offset_ns(const struct job *j, long r)
{
    return j->ranks > 1 ? j->skew_ns * (uint64_t)r / (uint64_t)(j->ranks - 1) : 0;
}

static uint64_t end_ns(const struct job *j, long r, long k)
{
    return j->release[k] + offset_ns(j, r) + TAIL_NS + (uint64_t)(END_JITTER_NS * draw(r, k, 2));
}

/* When rank r arrives at step k's collective, its step having started at @start. */
static uint64_t arrival_ns(const struct job *j, long r, long k, uint64_t start)
{
    uint64_t t = start + compute_ns(j, r, k);
    for (int i = 0; i < 4; i++)
        t += small_wait_ns(r, k, i);
    return t;
}

/* The collective's releases, step by step: the last arrival plus the latency. */
static int plan_releases(struct job *j)
{
    uint64_t *start = malloc(sizeof(*start) * (size_t)j->ranks);
    j->release = malloc(sizeof(*j->release) * (size_t)j->steps);
    if (!start || !j->release)
        return -1;
    for (long r = 0; r < j->ranks; r++)
        start[r] = BASE_NS + offset_ns(j, r);
    for (long k = 0; k < j->steps; k++) {
        uint64_t last = 0;
        for (long r = 0; r < j->ranks; r++) {
            uint64_t a = arrival_ns(j, r, k, start[r]);
            last = a > last ? a : last;
        }
        j->release[k] = last + LATENCY_NS;
        for (long r = 0; r < j->ranks; r++)
            start[r] = end_ns(j, r, k);
    }
    free(start);
    return 0;
}

/* --- one rank's file: frames of encoded records, as the writer makes them */

struct out {
    FILE *file;
    ZSTD_CCtx *zstd;
    struct pi_record records[FRAME_RECORDS + 64];
    uint8_t raw[sizeof(struct pi_frame_header) + (FRAME_RECORDS + 64) * PI_RECORD_SIZE];
    void *compressed;
    size_t bound;
    uint32_t count, sequence;
    uint64_t written;
    uint64_t shift; /* added to every time: this host's monotonic clock against the first's */
};

static int write_compressed(struct out *o, const void *raw, size_t size)
{
    size_t n = ZSTD_compressCCtx(o->zstd, o->compressed, o->bound, raw, size, 1);
    return ZSTD_isError(n) || fwrite(o->compressed, 1, n, o->file) != n ? -1 : 0;
}

static int flush_frame(struct out *o)
{
    if (!o->count)
        return 0;
    struct pi_frame_header fh = {PI_FRAME_MAGIC, o->count, ++o->sequence, 0};
    memcpy(o->raw, &fh, sizeof(fh));
    pi_codec_encode(o->records, o->count, o->raw + sizeof(fh));
    int rc = write_compressed(o, o->raw, sizeof(fh) + (size_t)o->count * PI_RECORD_SIZE);
    o->written += o->count;
    o->count = 0;
    return rc;
}

static int emit(struct out *o, uint16_t kind, uint16_t flags, uint32_t tid, uint64_t ts,
                uint64_t dur, uint64_t a0, uint64_t a1, uint64_t a2)
{
    o->records[o->count++] = (struct pi_record){kind, flags, tid, ts + o->shift, dur, {a0, a1, a2}};
    return o->count >= FRAME_RECORDS ? flush_frame(o) : 0;
}

static int define_string(struct out *o, uint32_t id, const char *text)
{
    uint32_t length = (uint32_t)strlen(text), slots = pi_string_slots(length);
    if (o->count + 1 + slots > FRAME_RECORDS && flush_frame(o) != 0)
        return -1;
    struct pi_record *at = &o->records[o->count];
    memset(at, 0, sizeof(*at) * (1 + slots));
    at->kind = PI_REC_STRING;
    at->arg[0] = id;
    at->arg[1] = length;
    memcpy(at + 1, text, length);
    o->count += 1 + slots;
    return 0;
}

/* The header of rank @r, built by the recorder's own code from the launcher's variables. */
static int write_header(struct out *o, const struct job *j, long r, int pid)
{
    char value[32];
    snprintf(value, sizeof(value), "%ld", r);
    setenv("RANK", value, 1);
    snprintf(value, sizeof(value), "%ld", r % 8);
    setenv("LOCAL_RANK", value, 1);
    snprintf(value, sizeof(value), "%ld", j->ranks);
    setenv("WORLD_SIZE", value, 1);
    setenv("LOCAL_WORLD_SIZE", "8", 1);
    setenv("MASTER_ADDR", "10.0.0.1", 1);
    setenv("MASTER_PORT", "29500", 1);
    struct pi_header_clock clock = {PI_CLOCK_MONOTONIC, BASE_NS + 1700000000000000000ull,
                                    BASE_NS + o->shift, BASE_NS + o->shift, 1e9, 100000000, 0, pid, 0, NULL};
    static uint8_t header[16384];
    size_t size = pi_trace_header_build(header, sizeof(header), &clock);
    char *boot = o->shift ? memmem(header, size, "boot_id=", 8) : NULL;
    if (boot) /* the second host's own boot id, as long as this one's */
        for (char *c = boot + 8; c < (char *)header + size && *c != '\n'; c++)
            *c = *c == '-' ? '-' : 'b';
    struct pi_file_header h;
    memcpy(&h, header, sizeof(h));
    h.pid = pid; /* each rank its own process */
    h.ppid = 1;
    memcpy(header, &h, sizeof(h));
    return write_compressed(o, header, size);
}

enum { ID_STEP = 1, ID_OPTIMIZER, ID_LAYER, ID_FILE = ID_LAYER + NESTED_RANGES,
       ID_NCCL = ID_FILE + FILE_NAMES };

static int write_strings(struct out *o)
{
    char name[96];
    int rc = define_string(o, ID_STEP, "train_step") | define_string(o, ID_OPTIMIZER, "optimizer");
    for (int i = 0; i < NESTED_RANGES; i++) {
        snprintf(name, sizeof(name), "layer_%02d.%s", i / 2, i % 2 ? "backward" : "forward");
        rc |= define_string(o, ID_LAYER + (uint32_t)i, name);
    }
    for (int i = 0; i < FILE_NAMES; i++) {
        snprintf(name, sizeof(name), "/data/shards/train-%05d-of-01024.tar", i);
        rc |= define_string(o, ID_FILE + (uint32_t)i, name);
    }
    return rc | define_string(o, ID_NCCL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
}

#define IO_READ_FILE PI_IO_FLAGS(PI_IO_READ, PI_FD_FILE, 0)

/* Step @k of rank @r from @start: the records in the order the threads finish them. */
static int write_step(struct out *o, const struct job *j, long r, long k, uint64_t start, int pid)
{
    uint32_t main = (uint32_t)pid, loader = (uint32_t)pid + 1;
    uint64_t compute = compute_ns(j, r, k), slice = compute / NESTED_RANGES, t = start;
    int rc = 0;
    for (int f = 0; f < 8; f++) /* the loader thread reads the next batch */
        rc |= emit(o, PI_REC_IO, IO_READ_FILE, loader, start + (uint64_t)f * 3000000,
                   50000 + (uint64_t)(200000 * draw(r, k, 32 + f)), 12, 1 << 20,
                   ID_FILE + (uint64_t)((k * 8 + f) % FILE_NAMES));
    rc |= emit(o, PI_REC_WAIT, 0, loader, start + 30000000, 300000, PI_WAIT_COND, 0x7f00aa00, 0);
    for (int i = 0; i < NESTED_RANGES; i++) {
        uint64_t d = i == NESTED_RANGES - 1 ? compute - slice * (NESTED_RANGES - 1) : slice;
        rc |= emit(o, PI_REC_NVTX_RANGE, 0, main, t, d, ID_LAYER + (uint64_t)i, 1, 0);
        t += d;
        if (i % 16 == 15) { /* a short lock wait: the autograd engine's queue */
            uint64_t w = small_wait_ns(r, k, i / 16);
            rc |= emit(o, PI_REC_WAIT, 0, main, t, w, PI_WAIT_MUTEX, 0x7f00bb00, 0);
            t += w;
        }
        if (i == 0) /* the main thread reads a small file once a step */
            rc |= emit(o, PI_REC_IO, IO_READ_FILE, main, t, 0, 13, 4096, ID_FILE);
    }
    uint64_t released = j->release[k] + offset_ns(j, r), end = end_ns(j, r, k);
    if (gpu) { /* the all-reduce kernel waits on the GPU; the host waits for the stream */
        uint64_t corr = (uint64_t)k + 1, launch = 5000, where = PI_CUDA_WHERE(1, 0, 0);
        rc |= emit(o, PI_REC_GPU_LAUNCH,
                   PI_CUDA_FLAGS(PI_CUDA_API_cuLaunchKernel, PI_GPU_KERNEL, PI_CUDA_DRIVER), main,
                   t, launch, corr, ID_NCCL, where);
        rc |= emit(o, PI_REC_GPU_TIME, 0, main, t + launch, released - t - launch, corr,
                   PI_GPU_TIMING_EVENTS, 0);
        rc |= emit(o, PI_REC_GPU_SYNC,
                   PI_CUDA_FLAGS(PI_CUDA_API_cuStreamSynchronize, PI_GPU_SYNC_STREAM,
                                 PI_CUDA_DRIVER),
                   main, t + launch, released - t - launch, 0x5000, 0, where);
    } else {
        rc |= emit(o, PI_REC_WAIT, 0, main, t, released - t, PI_WAIT_COND, 0x7f00cc00, 0);
    }
    rc |= emit(o, PI_REC_NVTX_RANGE, 0, main, released, end - released, ID_OPTIMIZER, 1, 0);
    rc |= emit(o, PI_REC_NVTX_RANGE, 0, main, start, end - start, ID_STEP, 0, 0);
    if (k % 10 == 9) /* the recorder's process sample, about once a second */
        rc |= emit(o, PI_REC_PROC_SAMPLE, 0, 0, end, 0, (3ull << 30) + (uint64_t)k * 4096,
                   (uint64_t)k * 90000000, (uint64_t)k * 9000000);
    return rc;
}

static int write_rank(const struct job *j, const char *dir, long r, uint64_t *records)
{
    static struct out o;
    char path[1024];
    int pid = 1000 + (int)r;
    snprintf(path, sizeof(path), "%s/rank%05ld-%d.pitrace.zst", dir, r, pid);
    if (!o.zstd) {
        o.zstd = ZSTD_createCCtx();
        o.bound = ZSTD_compressBound(sizeof(o.raw));
        o.compressed = malloc(o.bound);
    }
    o.file = fopen(path, "wbx");
    o.count = o.sequence = 0;
    o.written = 0;
    o.shift = hosts == 2 && r >= j->ranks / 2 ? SECOND_HOST_SHIFT_NS : 0;
    if (!o.file || !o.zstd || !o.compressed)
        return -1;
    int rc = write_header(&o, j, r, pid) | write_strings(&o);
    uint64_t start = BASE_NS + offset_ns(j, r);
    for (long k = 0; k < j->steps && rc == 0; k++) {
        rc |= write_step(&o, j, r, k, start, pid);
        start = end_ns(j, r, k);
    }
    rc |= emit(&o, PI_REC_PROCESS_END, 0, (uint32_t)pid, start + 1000000, 0, 0, PI_END_EXIT, 0);
    rc |= flush_frame(&o);
    *records += o.written;
    return fclose(o.file) != 0 || rc != 0 ? -1 : 0;
}

/* --- the truth: what was planted, as the analyzer should find it */

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Own time of rank r in step k: compute, tail and end jitter (ns). */
static double own_ns(const struct job *j, long r, long k)
{
    return (double)compute_ns(j, r, k) + TAIL_NS + (double)(uint64_t)(END_JITTER_NS * draw(r, k, 2));
}

/* The median over steps @from.. of each step's end spread and of the straggler's delay. */
static void truth_medians(const struct job *j, long from, double *skew, double *delay)
{
    size_t n = (size_t)(j->steps - from);
    uint64_t *spread = malloc(sizeof(*spread) * n), *late = malloc(sizeof(*late) * n);
    for (long k = from; k < j->steps; k++) {
        uint64_t first = UINT64_MAX, last = 0;
        double others = 0;
        for (long r = 0; r < j->ranks; r++) {
            uint64_t e = end_ns(j, r, k);
            first = e < first ? e : first;
            last = e > last ? e : last;
            others += r == j->straggler ? 0 : own_ns(j, r, k);
        }
        spread[k - from] = last - first;
        others /= (double)(j->ranks - (j->straggler >= 0));
        late[k - from] = j->straggler >= 0 ? (uint64_t)(own_ns(j, j->straggler, k) - others) : 0;
    }
    qsort(spread, n, sizeof(*spread), compare_u64);
    qsort(late, n, sizeof(*late), compare_u64);
    *skew = n % 2 ? (double)spread[n / 2] : ((double)spread[n / 2 - 1] + (double)spread[n / 2]) / 2;
    *delay = n % 2 ? (double)late[n / 2] : ((double)late[n / 2 - 1] + (double)late[n / 2]) / 2;
    free(spread);
    free(late);
}

int main(int argc, char **argv)
{
    if (argc < 6 || argc > 8) {
        fprintf(stderr, "usage: gen_ranks DIR RANKS STEPS STRAGGLER DELAY_MS [SKEW_US [SEED]]\n");
        return 2;
    }
    struct job j = {strtol(argv[2], NULL, 10), strtol(argv[3], NULL, 10),
                    strtol(argv[4], NULL, 10), (uint64_t)(strtod(argv[5], NULL) * 1e6),
                    argc > 6 ? (uint64_t)(strtod(argv[6], NULL) * 1e3) : 2000000, NULL};
    seed = argc > 7 ? strtoull(argv[7], NULL, 10) : 42;
    const char *gpu_job = getenv("GEN_RANKS_GPU");
    gpu = gpu_job && strcmp(gpu_job, "1") == 0;
    const char *two_hosts = getenv("GEN_RANKS_HOSTS");
    hosts = two_hosts && strcmp(two_hosts, "2") == 0 ? 2 : 1;
    if (j.ranks < 2 || j.steps < 20 || j.straggler >= j.ranks || plan_releases(&j) != 0)
        return 2;
    mkdir(argv[1], 0700);
    uint64_t records = 0;
    for (long r = 0; r < j.ranks; r++) {
        if (write_rank(&j, argv[1], r, &records) != 0) {
            fprintf(stderr, "gen_ranks: writing rank %ld in %s failed\n", r, argv[1]);
            return 1;
        }
    }
    /* the analyzer's warm-up (steps.c): a tenth of the steps, at most 10 */
    long warmup = j.steps / 10 > 10 ? 10 : j.steps / 10;
    double skew, delay;
    truth_medians(&j, warmup, &skew, &delay);
    printf("{\"ranks\": %ld, \"steps\": %ld, \"straggler\": %ld, \"delay_ns\": %llu, "
           "\"skew_ns\": %llu, \"end_jitter_ns\": %d, \"compute_jitter_ns\": %d, "
           "\"records\": %llu, \"steady_from\": %ld, \"step_end_skew_p50_ns\": %.0f, "
           "\"straggler_delay_p50_ns\": %.0f}\n",
           j.ranks, j.steps, j.straggler, (unsigned long long)j.delay_ns,
           (unsigned long long)j.skew_ns, END_JITTER_NS, COMPUTE_JITTER_NS,
           (unsigned long long)records, warmup, skew, delay);
    free(j.release);
    return 0;
}
