/*
 * summary_events.h - summary-mode streams (format 6) in the one pass: a
 * PI_REC_SUMMARY feeds the same latency tables, GPU time and thread times
 * as the records it stands for would have (its histogram's buckets are
 * the analyzer's own, so percentiles keep the documented bucket error);
 * PI_REC_DETAIL marks the windows of full detail and the flight ring's
 * replays, whose records the summaries already count.
 */
#ifndef PI_SUMMARY_EVENTS_H
#define PI_SUMMARY_EVENTS_H

#include "analysis/model/model.h"
#include "reader/trace_reader.h"

/* pi_summary_event - a PI_REC_SUMMARY or PI_REC_DETAIL record */
void pi_summary_event(struct pi_analysis *a, const struct pi_reader *reader,
                      struct pi_process_info *p, const struct pi_event *ev);

/* pi_summary_replayed - whether @ev is a replayed record: shown, not counted again */
int pi_summary_replayed(struct pi_process_info *p, const struct pi_event *ev);

#endif
