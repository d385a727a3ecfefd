/*
 * stress_parallel_pass - the analyzer's parallel reading (-j N) as a plain
 * program, so that it also runs under ThreadSanitizer (which the forking
 * test runner does not survive).
 *
 * Files written by hand whose stacks hold Python frames and a native frame
 * of this very program: reading them, threads name frames at once (the
 * symbolizer's shared Dwfl sessions), resolve Python samples into time by
 * function and a call tree, sampled launches and leaked allocations by
 * call site, GPU timing choices, I/O and NVTX latency tables. Rounds of
 * 4 threads must give the text report of one file after the other.
 *
 *   stress_parallel_pass [FILES] [ROUNDS]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/pass/analysis.h"
#include "reports/report.h"
#include "synthetic_trace.h"

enum { FILE_ID = 1, FUNCTION_ID = 2, MODULE_ID = 3, STACK_ID = 4, KERNEL_ID = 5, NVTX_ID = 6,
       PATH_ID = 7, REASON_ID = 8 };

/* A function of this program for the native frame: named from its symbol table. */
__attribute__((noinline)) static int named_native_frame(int n)
{
    return n * 7 + 1;
}

/* This program as a PI_REC_MODULE definition: load base, no build id, path. */
static uint32_t self_module(uint8_t *bytes, uint64_t *base)
{
    Dl_info info;
    struct link_map *map = NULL;
    char self[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (!dladdr1((void *)named_native_frame, &info, (void **)&map, RTLD_DL_LINKMAP) || !map ||
        n <= 0) {
        fprintf(stderr, "stress_parallel_pass: cannot find this program's module\n");
        exit(2);
    }
    struct pi_module_def def = {(uint64_t)map->l_addr, 0, (uint16_t)n, 0};
    memcpy(bytes, &def, sizeof(def));
    memcpy(bytes + sizeof(def), self, (size_t)n);
    *base = (uint64_t)map->l_addr;
    return (uint32_t)(sizeof(def) + (size_t)n);
}

static struct pi_record record(uint16_t kind, uint16_t flags, uint32_t tid, uint64_t ts,
                               uint64_t dur, uint64_t a0, uint64_t a1, uint64_t a2)
{
    struct pi_record r = {kind, flags, tid, ts, dur, {a0, a1, a2}};
    return r;
}

/* One process's file: @f varies the timings, so that files differ. */
static char *write_file(int f)
{
    /* long enough that the threads' first files are read side by side, and end together */
    static struct pi_record r[32768];
    uint8_t module[600], header[16384];
    uint64_t base;
    uint32_t module_length = self_module(module, &base);
    uint64_t inside = (uint64_t)(uintptr_t)named_native_frame + 4 - base;
    struct pi_stack_frame frames[3] = {
        {PI_FRAME_PYTHON, {0}, FILE_ID, FUNCTION_ID, 45 + (uint32_t)(f % 3), 0},
        {PI_FRAME_PYTHON, {0}, FILE_ID, FUNCTION_ID, 80, 0},
        {PI_FRAME_NATIVE, {0}, MODULE_ID, 0, 0, inside}};
    uint32_t n = 0;
    n += synthetic_definition(r, n, PI_REC_STRING, FILE_ID, "/home/me/train.py", 17);
    n += synthetic_definition(r, n, PI_REC_STRING, FUNCTION_ID, "train_step", 10);
    n += synthetic_definition(r, n, PI_REC_MODULE, MODULE_ID, module, module_length);
    n += synthetic_definition(r, n, PI_REC_STACK, STACK_ID, frames, sizeof(frames));
    n += synthetic_definition(r, n, PI_REC_STRING, KERNEL_ID, "_Z6kernelPf", 11);
    n += synthetic_definition(r, n, PI_REC_STRING, NVTX_ID, "step", 4);
    n += synthetic_definition(r, n, PI_REC_STRING, PATH_ID, "/data/shard.bin", 15);
    n += synthetic_definition(r, n, PI_REC_STRING, REASON_ID, f % 2 ? "no CUPTI" : "", f % 2 ? 8 : 0);
    uint32_t pid = 1; /* the header's pid: the main thread */
    r[n++] = record(PI_REC_GPU_TIMING, 0, pid, 100, 0, (uint64_t)(f % 3), 0, REASON_ID);
    uint64_t t = 1000;
    for (int i = 0; i < 5000; i++, t += 1000 + (uint64_t)f) {
        r[n++] = record(PI_REC_IO, PI_IO_FLAGS(PI_IO_READ, PI_FD_FILE, 0), pid, t, 50 + (uint64_t)f,
                        3, 4096, PATH_ID);
        r[n++] = record(PI_REC_NVTX_RANGE, 0, pid, t, 900, NVTX_ID, 0, 0);
        r[n++] = record(PI_REC_GPU_LAUNCH, PI_CUDA_FLAGS(PI_CUDA_API_cudaLaunchKernel, 0, 0), pid,
                        t + 10, 5, (uint64_t)i + 1, KERNEL_ID, 0);
        r[n++] = record(PI_REC_GPU_TIME, 0, pid, t + 20, 300 + (uint64_t)(i % 7) * 10,
                        (uint64_t)i + 1, 0, 0);
        r[n++] = record(PI_REC_CALL_SITE, PI_CALL_SITE_DEFERRED, pid, t + 10, 0, STACK_ID,
                        PI_CALL_SITE_OF(PI_REC_GPU_LAUNCH, 0, 0), KERNEL_ID);
        r[n++] = record(PI_REC_PY_SAMPLE, 0, pid, t, 1000, STACK_ID, 0, 0);
    }
    /* two allocations never freed: leaks named by their call sites */
    r[n++] = record(PI_REC_GPU_ALLOC, PI_CUDA_FLAGS(PI_CUDA_API_cudaMalloc, PI_GPU_ALLOC_DEVICE, 0),
                    pid, t, 10, 0x1000, 1 << 20, PI_CUDA_WHERE(0, 0, STACK_ID));
    r[n++] = record(PI_REC_GPU_ALLOC, PI_CUDA_FLAGS(PI_CUDA_API_cudaMalloc, PI_GPU_ALLOC_DEVICE, 0),
                    pid, t + 10, 10, 0x2000, 2 << 20, PI_CUDA_WHERE(0, 0, STACK_ID));
    char *path = strdup(synthetic_begin());
    synthetic_frame(header, synthetic_header(header, PI_FORMAT_VERSION));
    synthetic_records(r, n);
    synthetic_end();
    return path;
}

/* The text report of @paths read with @jobs threads, malloc'd. */
static char *report(char **paths, size_t count, unsigned jobs)
{
    struct pi_analysis a;
    struct pi_analysis_options options;
    memset(&options, 0, sizeof(options));
    options.jobs = jobs;
    if (pi_analysis_run(&a, &options, paths, count) != 0) {
        fprintf(stderr, "stress_parallel_pass: the files were not read (-j %u)\n", jobs);
        exit(1);
    }
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out)
        exit(2);
    pi_report_text(out, &a);
    fclose(out);
    pi_analysis_free(&a);
    return text;
}

int main(int argc, char **argv)
{
    int files = argc > 1 ? atoi(argv[1]) : 16, rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (files < 2 || files > 256 || rounds < 1) {
        fprintf(stderr, "usage: stress_parallel_pass [FILES 2-256] [ROUNDS]\n");
        return 2;
    }
    char **paths = calloc((size_t)files, sizeof(*paths));
    for (int f = 0; f < files; f++)
        paths[f] = write_file(f);
    /* in parallel first: the threads meet the module before any other thread named it */
    char *first = report(paths, (size_t)files, 4);
    char *one_by_one = report(paths, (size_t)files, 1);
    /* not a vacuous match: the frames were named, the samples and launches resolved (the
     * kernel, kernel(float*), as its row in the kernels' table names it: "kernel" and its
     * launches) */
    const char *wanted[] = {"named_native_frame", "train_step", "train.py:45", "/data/shard.bin"};
    for (size_t i = 0; i < sizeof(wanted) / sizeof(*wanted); i++)
        if (!strstr(one_by_one, wanted[i])) {
            fprintf(stderr, "stress_parallel_pass: '%s' is not in the report:\n%s\n", wanted[i],
                    one_by_one);
            return 1;
        }
    regex_t kernel_row;
    if (regcomp(&kernel_row, "\n  kernel +[0-9]+ ", REG_EXTENDED) != 0)
        return 2;
    int row_found = regexec(&kernel_row, one_by_one, 0, NULL, 0) == 0;
    regfree(&kernel_row);
    if (!row_found) {
        fprintf(stderr, "stress_parallel_pass: no row of kernel(float*) in the report:\n%s\n",
                one_by_one);
        return 1;
    }
    int failed = strcmp(first, one_by_one) != 0;
    if (failed)
        fprintf(stderr, "stress_parallel_pass: the first -j 4 differs from -j 1\n");
    free(first);
    for (int round = 1; round < rounds && !failed; round++) {
        char *parallel = report(paths, (size_t)files, 4);
        if (strcmp(parallel, one_by_one) != 0) {
            fprintf(stderr, "stress_parallel_pass: round %d: -j 4 differs from -j 1\n", round);
            failed = 1;
        }
        free(parallel);
    }
    free(one_by_one);
    for (int f = 0; f < files; f++) {
        unlink(paths[f]);
        free(paths[f]);
    }
    free(paths);
    printf("stress_parallel_pass: %d files, %d rounds of 4 threads: %s\n", files, rounds,
           failed ? "FAILED" : "same as one by one");
    return failed;
}
