/*
 * python_time.h - where each process's main thread spent its time, by
 * Python function, from the time samples (PI_REC_PY_SAMPLE): each sample
 * gives a span of wall time to the stack found at its end. A function's
 * inclusive time is the time of the samples whose stack holds it (once,
 * however deep it recurses); its self time, of those where it is innermost.
 * Samples inside the import machinery (importlib's frozen frames) are also
 * counted apart: modules loading, not the job's work.
 */
#ifndef PI_PYTHON_TIME_H
#define PI_PYTHON_TIME_H

#include <stdint.h>

#include "analysis/model/model.h"
#include "analysis/sites/call_tree.h"

struct pi_python_function {
    char *file, *function; /* as recorded: the code object's file and qualified name */
    uint64_t inclusive_ns, self_ns;
    uint64_t work_self_ns; /* self time in samples outside the import machinery */
    uint64_t samples;      /* samples whose stack holds it */
};

/* One process's samples, by function (most inclusive time first). */
struct pi_python_profile {
    size_t process; /* its position in the analysis's processes */
    uint64_t sampled_ns, samples;
    uint64_t outside_ns; /* samples with no Python frame: the interpreter starting or ending */
    uint64_t unknown_ns; /* samples whose frames were not kept (the trace's stack table was full) */
    uint64_t import_ns;  /* samples inside the import machinery: modules loading */
    struct pi_python_function *functions;
    size_t function_count, function_capacity;
    struct pi_call_tree tree; /* time by call path, "function (file)" outermost first */
    void *index;   /* (file, function) -> position in functions */
    void *pending; /* this file's samples by stack id, until its end */
};

struct pi_python_time {
    struct pi_python_profile *profiles; /* processes with samples, in file order */
    size_t profile_count, profile_capacity;
    int reading; /* the last profile is the file being read */
};

/* pi_python_time_event - account a PI_REC_PY_SAMPLE of @process (record_dispatch.c) */
void pi_python_time_event(struct pi_analysis *analysis, const struct pi_process_info *process,
                          const struct pi_event *ev);

/* pi_python_time_finish_file - resolve the file's stacks while its definitions are known */
void pi_python_time_finish_file(struct pi_analysis *analysis, const struct pi_reader *reader);

/* pi_python_time_merge - move the profiles of @from (one file, read apart: file_merge.h)
 * into @into, as the profiles of its process number @process; 0, or -1 without memory */
int pi_python_time_merge(struct pi_analysis *into, struct pi_analysis *from, size_t process);

/* pi_python_time_of - the profile of @process, NULL when it has no samples */
const struct pi_python_profile *pi_python_time_of(const struct pi_analysis *analysis,
                                                  const struct pi_process_info *process);

/* pi_python_import_frame - whether @file is the import machinery's (importlib's frozen code) */
int pi_python_import_frame(const char *file);

void pi_python_time_free(struct pi_analysis *analysis);

#endif
