/*
 * phases.h - the phases of a process's life as its user sees them:
 * start-up, imports, loading (from_pretrained, torch.load), compiling
 * (torch.compile), warm-up, the steady steps, evaluation inside training,
 * checkpoint saving and shutdown. Each Python time sample of the main
 * thread (PI_REC_PY_SAMPLE) belongs to one phase: by its stack first
 * (importing, compiling, saving, loading, evaluating, in that order), else
 * evaluating inside an evaluation loop of the framework's own calls (a
 * no_grad loop between training steps: pi_step_bounds), else
 * by when it came against the steps (before the first: start-up; the
 * warm-up steps; the steady steps; after the last: shutdown), else, in a
 * process without steps, "running".
 *
 * Compiling is any sample under dynamo's callback for a frame it has no
 * code for (convert_frame.py's __call__ and _compile) or inductor's
 * compile_fx (the lazy backward compile included). Its samples make
 * compilations: a run of them with less than PI_COMPILE_GAP_NS of other
 * work between (imports inside a compilation are part of it), named by the
 * user's line of the first. A compilation at a line compiled before is a
 * recompilation (a new shape, a guard that failed). Where the framework's
 * own calls were marked (PI_SPAN_COMPILE, format 15), the compilations are
 * those calls instead, exact: one per frame dynamo compiled, however close
 * together, named by that frame, again where the frame was compiled
 * before; the user's line is the sampled compilation's that overlaps it.
 */
#ifndef PI_PHASES_H
#define PI_PHASES_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/model/model.h"
#include "reader/trace_reader.h"

enum pi_phase {
    PI_PHASE_STARTUP,
    PI_PHASE_IMPORTS,
    PI_PHASE_LOADING,
    PI_PHASE_COMPILING,
    PI_PHASE_WARMUP,
    PI_PHASE_STEADY,
    PI_PHASE_EVALUATION,
    PI_PHASE_CHECKPOINT,
    PI_PHASE_SHUTDOWN,
    PI_PHASE_RUNNING, /* a process without steps: whatever no stack named */
    PI_PHASE_COUNT
};

#define PI_COMPILE_GAP_NS 200000000ull
#define PI_PHASE_BANDS_MAX 2048

/* A stretch of one phase: samples of it with under 250 ms of others between. */
struct pi_phase_band {
    uint64_t start_ns, end_ns;
    enum pi_phase phase;
};

struct pi_compilation {
    uint64_t start_ns, end_ns;
    uint64_t compiling_ns; /* its samples' time */
    char line[200];        /* the user's line that called what was compiled */
    char frame[200];       /* the frame compiled, from the compile calls; "": sampled only */
    int again;             /* a frame (else a line) compiled before: a recompilation */
};

struct pi_phases {
    uint64_t ns[PI_PHASE_COUNT]; /* sampled time in each */
    uint64_t sampled_ns;
    struct pi_phase_band *bands;
    size_t band_count, band_capacity;
    int bands_cut; /* more than PI_PHASE_BANDS_MAX: the last ones were not kept */
    struct pi_compilation *compilations;
    size_t compilation_count, compilation_capacity;
    /* during the pass: this file's samples, until its end */
    struct pi_phase_moment {
        uint64_t ns, dur_ns, stack;
    } *moments;
    size_t moment_count, moment_capacity;
    /* during the pass: this file's compile calls (PI_SPAN_COMPILE), name a string id */
    struct pi_compile_call {
        uint64_t start_ns, end_ns;
        uint32_t name;
    } *compile_calls;
    size_t compile_call_count, compile_call_capacity;
};

/* pi_phase_name - "compiling", "steady steps", ... */
const char *pi_phase_name(enum pi_phase phase);

/* pi_phases_event - keep a PI_REC_PY_SAMPLE of @process (record_dispatch.c) */
void pi_phases_event(struct pi_process_info *process, const struct pi_event *ev);

/* pi_phases_compile_call - a PI_REC_SPAN record of @process: a compilation where its kind is
 * PI_SPAN_COMPILE (record_dispatch.c) */
void pi_phases_compile_call(struct pi_process_info *process, const struct pi_event *ev);

/* A stretch of time: an evaluation loop inside training. */
struct pi_phase_window {
    uint64_t start_ns, end_ns;
};

/* Where a process's steps lie, for its phases (0s: no steps), and its evaluation loops (the
 * framework's own calls: host/evaluation_loops.h, found by the caller). */
struct pi_step_bounds {
    uint64_t first_start_ns; /* the first step's start */
    uint64_t steady_start_ns; /* the first steady step's start (the warm-up's end) */
    uint64_t last_end_ns;    /* the last step's end */
    const struct pi_phase_window *evaluation;
    size_t evaluation_count;
};

/* pi_phases_finish_file - place the file's samples in phases, once its steps are known */
void pi_phases_finish_file(struct pi_process_info *process, const struct pi_reader *reader,
                           const struct pi_step_bounds *steps);

/* pi_phases_free - release @process's phases */
void pi_phases_free(struct pi_process_info *process);

#endif
