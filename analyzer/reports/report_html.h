/*
 * report_html.h - what the files of the HTML page share: the plot frame
 * and its size, and the GPU-first sections (report_html_gpu.c).
 */
#ifndef PI_REPORT_HTML_H
#define PI_REPORT_HTML_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

#define PLOT_W 760
#define PLOT_H 220
#define MARGIN 50

/* The colour of each time class (enum pi_time_class), in every plot of where threads' time went */
extern const char *const pi_html_time_colors[PI_TIME_CLASS_COUNT];

/* pi_html_axis_frame - open an <svg> plot with a heading, a frame and axis labels */
void pi_html_axis_frame(FILE *out, const char *id, const char *title, const char *x_label,
                        const char *y_label);

/* pi_html_series_points - the points="" of a polyline for @series: time from
 * @base_ns over @span_ns across, value over @peak up */
void pi_html_series_points(FILE *out, const struct pi_series *series, uint64_t base_ns,
                           double span_ns, double peak);

/* pi_html_gpu_sections - step time, GPU busy and device memory over time, top kernels */
void pi_html_gpu_sections(FILE *out, const struct pi_analysis *analysis);

/* pi_html_step_bars - each step of the training process as a stacked bar (report_html_steps.c) */
void pi_html_step_bars(FILE *out, const struct pi_analysis *analysis);

/* pi_html_flame_sections - flame graphs of Python time and of device memory still held
 * (report_html_flame.c) */
void pi_html_flame_sections(FILE *out, const struct pi_analysis *analysis);

/* pi_html_cards - the first screen's figures: steps/s, step time, GPU busy, peak device and
 * host memory, growth per step, records lost (report_html_cards.c) */
void pi_html_cards(FILE *out, const struct pi_analysis *analysis);

/* pi_html_threads_over_time - a row per thread, what it mostly did in each bucket of the run
 * (report_html_threads.c) */
void pi_html_threads_over_time(FILE *out, const struct pi_analysis *analysis);

#endif
