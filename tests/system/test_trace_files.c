/*
 * Integration: trace files as files. `zstd -d` reads every one and yields
 * exactly the bytes the reader decoded; files are private; the preload
 * object needs only libc and exports only its hooks and control API.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "core/real_functions.h"

#define MAX_FILES 16

static void sum_frame_bytes(const struct pi_reader *reader, const struct pi_event *ev,
                            struct traced_file *file, void *context)
{
    (void)reader;
    (void)file;
    uint64_t *last_frame = context;
    if (ev->frame_offset != last_frame[0]) {
        last_frame[0] = ev->frame_offset;
        last_frame[1]++; /* frames seen */
    }
    last_frame[2]++; /* slots */
    if (ev->rec.kind == PI_REC_STRING)
        last_frame[2] += pi_string_slots(ev->rec.arg[1]);
}

static uint64_t command_output_number(const char *command)
{
    FILE *p = popen(command, "r");
    cr_assert_not_null(p);
    unsigned long long value = 0;
    int got = fscanf(p, "%llu", &value);
    int status = pclose(p);
    cr_assert(got == 1 && status == 0, "`%s` failed", command);
    return value;
}

Test(trace_files, zstd_cli_decompresses_every_file, .timeout = 60)
{
    char dir[64];
    char *argv[] = {(char *)test_program("prog_fork"), "2", NULL};
    struct run_result result;
    run_in_new_dir(dir, sizeof(dir), argv, &result);
    cr_assert(result.exited && result.status == 0);
    struct traced_file files[MAX_FILES];
    int n = read_trace_dir(dir, files, MAX_FILES, NULL, NULL);
    cr_assert_eq(n, 3);
    for (int i = 0; i < n; i++) {
        uint64_t counters[3] = {UINT64_MAX, 0, 0};
        struct traced_file again;
        memset(&again, 0, sizeof(again));
        strcpy(again.path, files[i].path);
        char error[600];
        struct pi_reader *reader = pi_reader_open(again.path, error, sizeof(error));
        cr_assert_not_null(reader, "%s", error);
        uint32_t header_size = pi_reader_info(reader)->header.header_size;
        struct pi_event ev;
        while (pi_reader_next(reader, &ev) == PI_READ_EVENT)
            sum_frame_bytes(reader, &ev, &again, counters);
        pi_reader_close(reader);
        uint64_t expected = header_size + counters[1] * sizeof(struct pi_frame_header) +
                            counters[2] * PI_RECORD_SIZE;
        char command[sizeof(files[i].path) + 64];
        snprintf(command, sizeof(command), "zstd -q -d -c '%.500s' | wc -c", files[i].path);
        cr_assert_eq(command_output_number(command), expected,
                     "zstd -d output differs from what the reader decoded");

        struct stat st;
        cr_assert_eq(stat(files[i].path, &st), 0);
        cr_assert_eq(st.st_mode & 0777, 0600, "trace files are private to the user");
    }
    struct stat st;
    cr_assert_eq(stat(dir, &st), 0);
}

/* libc, and the two libraries that held dlopen and pthread_* before glibc
 * 2.34 (empty stubs since): preload/core/glibc_versions.h */
Test(trace_files, preload_needs_only_libc)
{
    char command[1200];
    snprintf(command, sizeof(command), "readelf -d '%s' | grep -c NEEDED", PI_PRELOAD_PATH);
    cr_assert_eq(command_output_number(command), 3);
    snprintf(command, sizeof(command),
             "readelf -d '%s' | grep NEEDED | grep -cE '\\[(libc\\.so\\.6|libdl\\.so\\.2|libpthread\\.so\\.0)\\]'",
             PI_PRELOAD_PATH);
    cr_assert_eq(command_output_number(command), 3);
}

#define HOOK_NAME(name, ret, params, required, version) #name,
#define EXTRA_NAME(name) #name,
static const char *const hook_names[] = {PI_REAL_FUNCTIONS(HOOK_NAME) PI_EXTRA_HOOKS(EXTRA_NAME)};

/* CUDA runtime and driver entry points (nvcc's __cuda ones too), NCCL's
 * (preload/nccl/), cuBLAS's and cuBLASLt's matrix products (preload/blas/),
 * dlsym through which they are found, the CUPTI calls of other clients, and
 * the entry point of NVTX's injection interface */
static int is_cuda_hook(const char *name)
{
    return (strncmp(name, "cuda", 4) == 0 && name[4] >= 'A' && name[4] <= 'Z') ||
           (strncmp(name, "__cuda", 6) == 0 && name[6] >= 'A' && name[6] <= 'Z') ||
           (strncmp(name, "cupti", 5) == 0 && name[5] >= 'A' && name[5] <= 'Z') ||
           (strncmp(name, "cu", 2) == 0 && name[2] >= 'A' && name[2] <= 'Z') ||
           (strncmp(name, "nccl", 4) == 0 && name[4] >= 'A' && name[4] <= 'Z') ||
           (strncmp(name, "cublas", 6) == 0 && name[6] >= 'A' && name[6] <= 'Z') ||
           strcmp(name, "dlsym") == 0 || strcmp(name, "InitializeInjectionNvtx2") == 0;
}

static int is_expected_export(const char *name)
{
    if (strncmp(name, "profinject_", 11) == 0 || is_cuda_hook(name))
        return 1;
    for (size_t i = 0; i < sizeof(hook_names) / sizeof(hook_names[0]); i++)
        if (strcmp(name, hook_names[i]) == 0)
            return 1;
    return 0;
}

Test(trace_files, exports_only_hooks_and_control_api)
{
    char command[1200];
    snprintf(command, sizeof(command), "nm -D --defined-only '%s'", PI_PRELOAD_PATH);
    FILE *p = popen(command, "r");
    cr_assert_not_null(p);
    char line[512];
    int exported = 0, hooks_found = 0;
    while (fgets(line, sizeof(line), p)) {
        char address[64], type[8], name[256];
        if (sscanf(line, "%63s %7s %255s", address, type, name) != 3)
            continue;
        exported++;
        cr_expect(is_expected_export(name), "unexpected exported symbol %s", name);
        cr_expect(strncmp(name, "ZSTD_", 5) != 0, "zstd must stay hidden");
        hooks_found += strncmp(name, "profinject_", 11) != 0 && !is_cuda_hook(name);
    }
    pclose(p);
    cr_assert_eq(hooks_found, (int)(sizeof(hook_names) / sizeof(hook_names[0])),
                 "every hook in the table is exported");
    cr_assert_gt(exported, hooks_found);
}
