/*
 * key_figures.h - the figures a user looks for first, about the training
 * process (verdicts/verdict.h says which it is): the HTML report's cards
 * and the text report's KEY NUMBERS show the same ones, from here.
 */
#ifndef PI_KEY_FIGURES_H
#define PI_KEY_FIGURES_H

#include <stdint.h>

#include "analysis/pass/analysis.h"

struct pi_key_figures {
    int pid;                          /* of the training process, 0: none found */
    uint64_t steady_steps;            /* 0: no steps found */
    double steps_per_s;
    double step_p50_ns, step_p95_ns;
    double gpu_busy_share;            /* -1: no GPU work */
    int gpu_share_of_steps;           /* 1: of the steady steps' time; 0: of the process's run */
    uint64_t gpu_busy_ns;
    uint64_t device_peak;             /* the largest process's; 0: no CUDA allocations */
    uint64_t host_peak;               /* the tree's PSS (or RSS) at one moment; 0: no samples */
    const char *host_figure;          /* "PSS" or "RSS": which host_peak adds up */
    unsigned host_processes;          /* alive at that moment */
    int growth_known;                 /* over steady steps */
    double device_growth_per_step, rss_growth_per_step; /* bytes */
    uint64_t lost, strings_lost;
};

/* pi_key_figures_of - the key figures of @analysis into @figures */
void pi_key_figures_of(const struct pi_analysis *analysis, struct pi_key_figures *figures);

#endif
