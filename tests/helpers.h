/*
 * helpers.h - running test programs under the preload and reading what
 * they recorded, for the integration tests.
 */
#ifndef PI_TEST_HELPERS_H
#define PI_TEST_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "reader/trace_reader.h"

struct run_result {
    int exited;   /* 1 when the program exited, 0 when a signal ended it */
    int status;   /* exit status or signal number */
    char out[65536];
    char err[65536];
};

/* make_temp_dir - a fresh private directory under $TMPDIR (or /tmp), in @path */
void make_temp_dir(char *path, size_t size);

/**
 * run_program - run @argv with LD_PRELOAD and PROFINJECT_OUTPUT=@trace_dir
 * @trace_dir: output directory, or NULL to run without the preload
 * @extra_env: more NAME=VALUE entries, NULL-terminated, or NULL
 * @before_exec: called in the child before exec (limits), or NULL
 * @kill_after_ms: send SIGKILL after this long once the program printed a line (0: never)
 */
void run_program(const char *trace_dir, char *const argv[], char *const extra_env[],
                 void (*before_exec)(void), unsigned kill_after_ms, struct run_result *result);

/* run_in_new_dir - make_temp_dir(@dir), then run_program(@dir, @argv) with nothing more */
void run_in_new_dir(char *dir, size_t size, char *const argv[], struct run_result *result);

/**
 * run_program_during - run_program, calling @during(pid, @context) once the
 * program has printed its first line; @during is responsible for ending it
 */
void run_program_during(const char *trace_dir, char *const argv[], char *const extra_env[],
                        void (*during)(int pid, void *context), void *context,
                        struct run_result *result);

/* test_program - absolute path of a test program built beside the tests */
const char *test_program(const char *name);

struct traced_file {
    char path[512];
    int pid, ppid;
    uint64_t counts[PI_REC_KIND_COUNT];
    uint64_t lost;
    int has_end;
    int64_t end_status;
    uint64_t end_reason;
    int truncated;
    int read_error;
    uint32_t inherited_below;  /* a fork child's: ids below are its parent's */
    int inherited_unresolved;  /* they could not be looked up: error says why */
    char error[600];
};

typedef void (*event_visitor)(const struct pi_reader *reader, const struct pi_event *event,
                              struct traced_file *file, void *context);

/**
 * read_trace_dir - read every trace file in @dir
 * @files: receives one summary per file, sorted by path
 * @max: capacity of @files
 * @visit: called for every record, or NULL
 * Return: the number of files.
 */
int read_trace_dir(const char *dir, struct traced_file *files, int max, event_visitor visit,
                   void *context);

/* count_lines_with_prefix - lines of @text that start with @prefix */
int count_lines_with_prefix(const char *text, const char *prefix);

#endif
