/*
 * working_span.h - a process's main thread from the end of its first wait
 * for data to the start of its last. A DataLoader worker waits on its index
 * queue before its first sample and, after its last, until it is told to
 * stop: between the two it makes batches. Its start-up and its wait to stop
 * grow with the load on the machine, not with the dataset, so the workers'
 * causes are judged over this span where the trace has it. A wait is a
 * readiness wait and the receive from the descriptor it found ready
 * together (Connection.recv after poll): the last wait starts at the poll.
 */
#ifndef PI_WORKING_SPAN_H
#define PI_WORKING_SPAN_H

#include "analysis/model/model.h"

/* pi_working_span_wait - the main thread of @process waited for data @dur ns from @ts in
 * @record (an I/O call), time of its @time_class; its waits so far (@thread->time) already
 * hold it */
void pi_working_span_wait(struct pi_process_info *process, const struct pi_thread_info *thread,
                          const struct pi_record *record, uint64_t ts, uint64_t dur,
                          unsigned time_class);

/* pi_working_span_summarised - the main thread of @process waited @ns in @time_class in calls
 * that summary mode counted together, from @start_ns to @end_ns */
void pi_working_span_summarised(struct pi_process_info *process, uint64_t start_ns,
                                uint64_t end_ns, uint64_t ns, unsigned time_class);

/* pi_working_span_free - what pi_working_span_summarised kept */
void pi_working_span_free(struct pi_process_info *process);

/* pi_working_span_clock - read the main thread's CPU over the span from its clock's samples
 * (before they are released) */
void pi_working_span_clock(struct pi_process_info *process);

/* pi_working_span_ns - the main thread's time in @class over its working span: a recorded
 * wait's total, its CPU (by its clock, else what the waits leave), or for PI_TIME_OTHER the
 * rest; the span's length for PI_TIME_CLASS_COUNT; 0 for all when it has no span */
uint64_t pi_working_span_ns(const struct pi_process_info *process, enum pi_time_class class);

#endif
