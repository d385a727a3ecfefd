/*
 * Unit: call sites in the analyzer. Format 2 stacks made by hand whose
 * native frames point into this very program, named back to the functions
 * they point into; damaged definitions; Python frames that arrive after
 * their allocation; and a file of format 1, still read.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/pass/analysis.h"
#include "analysis/sites/call_sites.h"
#include "analysis/gpu/gpu_analysis.h"
#include "analysis/sites/symbolizer.h"
#include "synthetic_trace.h"

/* A function of this program that only the symbol table names (static). */
__attribute__((noinline)) static int counted_call(int n)
{
    return n * 3 + 1;
}

enum { FILE_ID = 1, FUNCTION_ID = 2, MODULE_ID = 3, STACK_ID = 4, NATIVE_STACK_ID = 5 };

/* This program as a PI_REC_MODULE definition: load base, build id (none), path. */
static uint32_t self_module(uint8_t *bytes, uint64_t *base)
{
    Dl_info info;
    struct link_map *map = NULL;
    cr_assert(dladdr1((void *)counted_call, &info, (void **)&map, RTLD_DL_LINKMAP) && map);
    char self[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    cr_assert_gt(n, 0);
    struct pi_module_def def = {(uint64_t)map->l_addr, 0, (uint16_t)n, 0};
    memcpy(bytes, &def, sizeof(def));
    memcpy(bytes + sizeof(def), self, (size_t)n);
    *base = (uint64_t)map->l_addr;
    return (uint32_t)(sizeof(def) + (size_t)n);
}

static struct pi_stack_frame python_frame(uint32_t line)
{
    struct pi_stack_frame f = {PI_FRAME_PYTHON, {0}, FILE_ID, FUNCTION_ID, line, 0};
    return f;
}

static struct pi_stack_frame native_frame(uint32_t module, uint64_t offset)
{
    struct pi_stack_frame f = {PI_FRAME_NATIVE, {0}, module, 0, 0, offset};
    return f;
}

/* Definitions of a file, a function, this module and two stacks; the slots used. */
static uint32_t definitions(struct pi_record *r, uint64_t offset)
{
    uint8_t module[600];
    uint64_t base;
    uint32_t module_length = self_module(module, &base);
    struct pi_stack_frame frames[3] = {python_frame(45), python_frame(80),
                                       native_frame(MODULE_ID, offset - base)};
    uint32_t at = 0;
    at += synthetic_definition(r, at, PI_REC_STRING, FILE_ID, "/home/me/train.py", 17);
    at += synthetic_definition(r, at, PI_REC_STRING, FUNCTION_ID, "train_step", 10);
    at += synthetic_definition(r, at, PI_REC_MODULE, MODULE_ID, module, module_length);
    at += synthetic_definition(r, at, PI_REC_STACK, STACK_ID, frames, sizeof(frames));
    at += synthetic_definition(r, at, PI_REC_STACK, NATIVE_STACK_ID, &frames[2], sizeof(frames[2]));
    return at;
}

static struct pi_reader *read_through(const char *path)
{
    char error[700];
    struct pi_reader *reader = pi_reader_open(path, error, sizeof(error));
    cr_assert(reader, "%s", error);
    struct pi_event ev;
    int got;
    while ((got = pi_reader_next(reader, &ev)) == PI_READ_EVENT)
        ;
    cr_assert_eq(got, PI_READ_END, "%s", pi_reader_error(reader));
    return reader;
}

Test(call_sites, python_first_and_native_named_from_the_symbol_table)
{
    uint8_t header[16384];
    struct pi_record records[200];
    /* the return address of a call inside counted_call, as the recorder keeps it */
    uint64_t inside = (uint64_t)(uintptr_t)counted_call + 4;
    uint32_t n = definitions(records, inside);
    const char *path = synthetic_begin();
    synthetic_frame(header, synthetic_header(header, PI_FORMAT_VERSION));
    synthetic_records(records, n);
    synthetic_end();
    struct pi_reader *reader = read_through(path);
    struct pi_call_site *site = pi_call_site_read(reader, STACK_ID);
    cr_assert(site);
    cr_assert_eq(site->count, 3);
    cr_assert_eq(site->python_count, 2);
    cr_assert_str_eq(site->headline, "/home/me/train.py:45 in train_step");
    cr_assert_eq(site->frames[1].line, 80);
    const struct pi_site_frame *native = &site->frames[2];
    cr_assert_str_eq(native->symbol, "counted_call");
    cr_assert_eq(native->symbol_offset, 4);
    cr_assert(strstr(site->text, "/home/me/train.py:45 in train_step;/home/me/train.py:80 in "
                                 "train_step;counted_call+0x4 (test_call_sites)"),
              "%s", site->text);
    pi_call_site_free(site);
    cr_assert_null(pi_call_site_read(reader, FILE_ID), "a string is no stack");
    cr_assert_null(pi_call_site_read(reader, 999));
    pi_reader_close(reader);
    pi_symbolizer_free();
}

Test(call_sites, damaged_definitions_give_question_marks_not_crashes)
{
    uint8_t header[16384];
    struct pi_record records[64];
    struct pi_module_def lying = {0, 200, 200, 0}; /* says more bytes than it has */
    struct pi_stack_frame frames[4] = {
        {PI_FRAME_PYTHON, {0}, 77, 78, 1, 0}, /* strings never defined */
        native_frame(1, 10),                  /* a string where a module should be */
        native_frame(2, 10),                  /* the lying module */
        {9, {0}, 0, 0, 0, 0},                 /* no such frame type */
    };
    uint32_t at = 0;
    at += synthetic_definition(records, at, PI_REC_STRING, 1, "text", 4);
    at += synthetic_definition(records, at, PI_REC_MODULE, 2, &lying, sizeof(lying));
    at += synthetic_definition(records, at, PI_REC_STACK, 3, frames, sizeof(frames) - 5);
    const char *path = synthetic_begin();
    synthetic_frame(header, synthetic_header(header, PI_FORMAT_VERSION));
    synthetic_records(records, at);
    synthetic_end();
    struct pi_reader *reader = read_through(path);
    struct pi_call_site *site = pi_call_site_read(reader, 3);
    cr_assert(site);
    cr_assert_eq(site->count, 3, "the cut-off fourth frame is left out");
    cr_assert_str_eq(site->headline, "?:1 in ?");
    cr_assert_str_eq(site->frames[1].module, "?");
    cr_assert_str_eq(site->frames[2].module, "?");
    pi_call_site_free(site);
    pi_reader_close(reader);
}

Test(call_sites, format_2_kinds_are_unknown_in_a_format_1_file)
{
    uint8_t header[16384];
    struct pi_record records[8];
    struct pi_stack_frame frame = python_frame(1);
    uint32_t at = synthetic_definition(records, 0, PI_REC_STACK, 1, &frame, sizeof(frame));
    const char *path = synthetic_begin();
    synthetic_frame(header, synthetic_header(header, 1));
    long offset = synthetic_records(records, at);
    synthetic_end();
    char error[700];
    struct pi_reader *reader = pi_reader_open(path, error, sizeof(error));
    cr_assert(reader, "%s", error);
    struct pi_event ev;
    cr_assert_eq(pi_reader_next(reader, &ev), PI_READ_ERROR);
    char where[300];
    snprintf(where, sizeof(where), "%s: byte %ld: record 0 has unknown kind %d", path, offset,
             PI_REC_STACK);
    cr_assert_str_eq(pi_reader_error(reader), where);
    pi_reader_close(reader);
}

static struct pi_analysis analyse(const char *path)
{
    struct pi_analysis a;
    struct pi_analysis_options options = {0};
    char *paths[1] = {(char *)path};
    cr_assert_eq(pi_analysis_run(&a, &options, paths, 1), 0);
    return a;
}

static struct pi_record gpu_alloc(uint64_t ts, uint64_t pointer, uint32_t stack)
{
    struct pi_record r = {PI_REC_GPU_ALLOC,
                          PI_CUDA_FLAGS(PI_CUDA_API_cudaMalloc, PI_GPU_ALLOC_DEVICE, 0),
                          1,
                          ts,
                          10,
                          {pointer, 1 << 20, PI_CUDA_WHERE(0, 0, stack)}};
    return r;
}

static struct pi_record call_site(uint64_t ts, uint64_t pointer, uint32_t stack)
{
    struct pi_record r = {PI_REC_CALL_SITE,
                          PI_CALL_SITE_DEFERRED,
                          1,
                          ts,
                          0,
                          {stack, PI_CALL_SITE_OF(PI_REC_GPU_ALLOC, 0, 0), pointer}};
    return r;
}

Test(call_sites, python_frames_that_come_later_replace_the_allocations_stack)
{
    uint8_t header[16384];
    struct pi_record records[200];
    uint32_t n = definitions(records, (uint64_t)(uintptr_t)counted_call + 4);
    records[n++] = gpu_alloc(2000, 0x1000, NATIVE_STACK_ID);
    records[n++] = call_site(2000, 0x1000, STACK_ID); /* its Python frames */
    records[n++] = gpu_alloc(3000, 0x2000, NATIVE_STACK_ID);
    records[n++] = call_site(2500, 0x2000, STACK_ID); /* another allocation's: ignored */
    const char *path = synthetic_begin();
    synthetic_frame(header, synthetic_header(header, PI_FORMAT_VERSION));
    synthetic_records(records, n);
    synthetic_end();
    struct pi_analysis a = analyse(path);
    const struct pi_gpu_memory *m = a.processes[0].gpu;
    cr_assert_eq(m->leak_count, 2);
    int python = 0, native = 0;
    for (size_t i = 0; i < m->leak_count; i++) {
        cr_assert_eq(m->leaks[i].bytes, 1 << 20);
        if (m->leaks[i].site->python_count) {
            python++;
            cr_assert_str_eq(pi_site_headline(&m->leaks[i]), "/home/me/train.py:45 in train_step");
        } else {
            native++;
            cr_assert_str_eq(m->leaks[i].site->frames[0].symbol, "counted_call");
        }
    }
    cr_assert_eq(python, 1);
    cr_assert_eq(native, 1);
    pi_analysis_free(&a);
}

Test(call_sites, the_peak_allocation_gets_its_frames_in_the_picture_of_the_peak)
{
    uint8_t header[16384];
    struct pi_record records[200];
    uint32_t n = definitions(records, (uint64_t)(uintptr_t)counted_call + 4);
    records[n++] = gpu_alloc(2000, 0x1000, NATIVE_STACK_ID);
    records[n++] = gpu_alloc(3000, 0x2000, NATIVE_STACK_ID); /* the peak */
    records[n++] = call_site(3000, 0x2000, STACK_ID);
    const char *path = synthetic_begin();
    synthetic_frame(header, synthetic_header(header, PI_FORMAT_VERSION));
    synthetic_records(records, n);
    synthetic_end();
    struct pi_analysis a = analyse(path);
    const struct pi_gpu_memory *m = a.processes[0].gpu;
    cr_assert_eq(m->peak, 2 << 20);
    cr_assert_eq(m->at_peak_count, 2);
    int python = 0;
    for (int i = 0; i < m->at_peak_count; i++)
        python += m->at_peak[i].site && m->at_peak[i].site->python_count > 0;
    cr_assert_eq(python, 1, "the allocation that made the peak, with its Python frames");
    pi_analysis_free(&a);
}

Test(call_sites, format_1_file_still_read)
{
    struct pi_analysis a =
        analyse(PI_SOURCE_DIR "/tests/analyzer/fixtures/format1-cuda-runtime.pitrace.zst");
    cr_assert_eq(a.process_count, 1);
    const struct pi_gpu_memory *m = a.processes[0].gpu;
    cr_assert(m);
    /* prog_cuda_runtime: 1, 2 and 4 MiB allocated, the 4 MiB never freed, in main */
    cr_assert_eq(m->peak, 7 << 20);
    cr_assert_eq(m->leak_count, 1);
    cr_assert_eq(m->leaks[0].bytes, 4 << 20);
    const struct pi_call_site *site = m->leaks[0].site;
    cr_assert(site);
    cr_assert_eq(site->python_count, 0);
    cr_assert_str_eq(site->frames[0].symbol, "main");
    cr_assert_str_eq(site->frames[0].module, "prog_cuda_runtime");
    cr_assert_eq(site->frames[0].symbol_offset, 0x58);
    cr_assert_str_eq(pi_site_headline(&m->leaks[0]), "main+0x58 (prog_cuda_runtime)");
    pi_analysis_free(&a);
}
