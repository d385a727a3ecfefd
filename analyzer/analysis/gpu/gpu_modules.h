/*
 * gpu_modules.h - where in the model the GPU time goes: each kernel's GPU
 * time credited to the nn.Module forward calls its sampled launches were
 * made under (the Python frames "Class.forward", outermost first: the
 * module path "GPT2LMHeadModel/GPT2Model/GPT2Block/GPT2Attention").
 *
 * Launches carry Python frames one in PROFINJECT_PY_SAMPLE (100): a
 * kernel's GPU time and launches are shared among its sampled sites by
 * their counts, so a module's figures are estimates whose sampling error is
 * stated (95%, in points of the GPU time). Only the launches of threads with
 * Python frames can be placed: a kernel's GPU time is shared in the ratio of
 * its launches by those threads to all its launches, the rest (the backward
 * pass, which autograd's threads launch) is counted apart. Those threads'
 * sampled launches carry native frames instead, and the autograd node being
 * applied names them: rows "backward" and "backward/MmBackward0", shared
 * the same way among the launches of threads without Python frames. What
 * neither names is unplaced, with the kernels none of whose launches was
 * sampled (launched too rarely). A kernel's launches are taken to last
 * alike, wherever they were made.
 * The FLOPs of cuBLAS products go with their kernels' GPU time, the same way.
 */
#ifndef PI_GPU_MODULES_H
#define PI_GPU_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/model/model.h"
#include "analysis/sites/call_tree.h"

/* One module path: the GPU time of every kernel launched under it, its own modules' included. */
struct pi_gpu_module {
    char *path;       /* "Model/Block/Attention" */
    const char *name; /* its last part, in path */
    unsigned depth;   /* 0 for the outermost */
    double gpu_ns;    /* estimated */
    double launches;  /* estimated */
    uint64_t samples; /* sampled launches under it */
    double error_points; /* 95% half-width of its share of the GPU time, in points */
    /* the matrix products among its kernels (gemm.h), estimated alike: their FLOPs, credited
     * with their kernels' GPU time, and that GPU time */
    double gemm_flops, gemm_gpu_ns;
    int backward;        /* PI_GPU_BACKWARD or one of its nodes, not a module path */
};

/* The row of the backward pass; its nodes' paths are "backward/MmBackward0". */
#define PI_GPU_BACKWARD "backward"

/* One kernel's part of one row (the export's kernels by module). */
struct pi_gpu_module_kernel {
    char *path;         /* the row's */
    const char *kernel; /* demangled; borrowed from the analysis */
    double gpu_ns, launches; /* estimated */
    uint64_t samples;
};

/* One line's GPU time: the innermost Python frame of the sites that launched it
 * ("transformers/models/gpt2/modeling_gpt2.py:300 in GPT2MLP.forward"), or "backward:
 * MmBackward0" for an autograd node's. */
struct pi_gpu_path {
    char *headline;
    double gpu_ns; /* estimated */
};

struct pi_gpu_modules {
    struct pi_gpu_module *rows; /* each path after its parent, siblings by GPU time, most first */
    size_t count;
    struct pi_gpu_module_kernel *kernels; /* each row's kernels, in no order */
    size_t kernel_count;
    uint64_t gpu_ns;      /* all kernels' GPU time */
    uint64_t placed_ns;   /* estimated: launched by threads with Python frames, sampled kernels */
    uint64_t samples;     /* sampled launches with Python frames */
    uint64_t native_samples; /* sampled launches of threads without: native frames only */
    uint64_t outside_ns;  /* estimated: sampled outside any forward */
    /* GPU time by Python call path, each path's kernels (short names) below it, the
     * backward pass's as backward / node / kernel, and "(not placed)": estimated, for a
     * flame graph */
    struct pi_call_tree tree;
    struct pi_gpu_path *paths; /* by GPU time, most first */
    size_t path_count, path_capacity;
};

/**
 * pi_gpu_modules_find - the module paths of @analysis's sampled launches
 * Return: 0 (an empty table when no launch was sampled under a forward), -1 without memory.
 */
int pi_gpu_modules_find(const struct pi_analysis *analysis, struct pi_gpu_modules *modules);

/* pi_gpu_modules_backward - the backward pass's row (PI_GPU_BACKWARD); NULL when none of its
 * launches was sampled under an autograd node */
const struct pi_gpu_module *pi_gpu_modules_backward(const struct pi_gpu_modules *modules);

/* pi_gpu_modules_unplaced_ns - the GPU time neither Python frames nor an autograd node place:
 * launches of threads without Python frames under no node, kernels never sampled */
uint64_t pi_gpu_modules_unplaced_ns(const struct pi_gpu_modules *modules);

void pi_gpu_modules_free(struct pi_gpu_modules *modules);

#endif
