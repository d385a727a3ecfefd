/*
 * html_plot.h - what every SVG plot of the HTML page is drawn with: its
 * size and frame, the line of a series over time, the colours of where
 * threads' time went.
 */
#ifndef PI_HTML_PLOT_H
#define PI_HTML_PLOT_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/common/series.h"
#include "analysis/model/model.h"

#define PLOT_W 760
#define PLOT_H 220
#define MARGIN 50

/* The colours of the lines and bars that stand for one of several things (processes, calls) */
#define PI_HTML_COLOR_COUNT 8
extern const char *const pi_html_colors[PI_HTML_COLOR_COUNT];

/* The colour of each time class (enum pi_time_class), in every plot of where threads' time went */
extern const char *const pi_html_time_colors[PI_TIME_CLASS_COUNT];

/* pi_html_axis_frame - open an <svg> plot with a heading, a frame and axis labels */
void pi_html_axis_frame(FILE *out, const char *id, const char *title, const char *x_label,
                        const char *y_label);

/* pi_html_series_points - the points="" of a polyline for @series: time from
 * @base_ns over @span_ns across, value over @peak up */
void pi_html_series_points(FILE *out, const struct pi_series *series, uint64_t base_ns,
                           double span_ns, double peak);

/* pi_html_axis_ends - the largest values shown: @x_end (seconds, steps) at the right end of the
 * x axis, @y_end at the top of the y axis */
void pi_html_axis_ends(FILE *out, double x_end, double y_end);

/* pi_html_seconds - @ns as seconds after @base_ns, 0 before it */
double pi_html_seconds(uint64_t base_ns, uint64_t ns);

#endif
