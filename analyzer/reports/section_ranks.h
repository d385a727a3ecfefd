/* section_ranks.h - the ranks of a distributed job side by side (section_ranks.c). */
#ifndef PI_SECTION_RANKS_H
#define PI_SECTION_RANKS_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;
struct pi_json_stream;

/* pi_report_ranks_text - "RANKS": per rank steps and shares, straggler, skew, clocks */
void pi_report_ranks_text(FILE *out, struct pi_analysis *analysis);

/* pi_report_ranks_json - add "ranks" to @root (null without ranks; schema in analyzer/REPORT.md) */
void pi_report_ranks_json(struct cJSON *root, struct pi_analysis *analysis);

/* pi_report_ranks_json_stream - the same "ranks" into the object open in @stream, a rank's
 * entry at a time (a tree of 10,000 entries was 15 MB) */
void pi_report_ranks_json_stream(struct pi_json_stream *stream, struct pi_analysis *analysis);

/* pi_report_ranks_html - the page's rank view: a bar per rank, own time against waiting */
void pi_report_ranks_html(FILE *out, struct pi_analysis *analysis);

#endif
