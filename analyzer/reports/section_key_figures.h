/*
 * section_key_figures.h - the figures a user looks for first, in the text
 * report and on the page (section_key_figures.c).
 */
#ifndef PI_SECTION_KEY_FIGURES_H
#define PI_SECTION_KEY_FIGURES_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

/* pi_report_key_figures_text - "KEY NUMBERS": steps/s, step time, GPU busy, peaks, growth, loss */
void pi_report_key_figures_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_key_figures_html - the first screen's cards: steps/s, step time, GPU busy, peak
 * device and host memory, growth per step, records lost */
void pi_report_key_figures_html(FILE *out, const struct pi_analysis *analysis);

#endif
