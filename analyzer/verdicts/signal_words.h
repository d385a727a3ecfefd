/*
 * signal_words.h - how a fatal signal came, in words: its name, who sent
 * it (a process, the kernel) or where the thread faulted, and the frames
 * it found, from the signal handler's record (PI_REC_FATAL_SIGNAL).
 */
#ifndef PI_SIGNAL_WORDS_H
#define PI_SIGNAL_WORDS_H

#include <stddef.h>

#include "analysis/model/model.h"

/* pi_signal_name - "SIGKILL", ... as the shell says it; "a signal" for one it does not name */
const char *pi_signal_name(long sig);

/* pi_signal_origin - who sent @p's fatal signal or where its thread faulted, in words
 * (" sent by pid 4242 (uid 0, python3 launch.py)"), into @out; "" when its trace does not say */
void pi_signal_origin(const struct pi_analysis *analysis, const struct pi_process_info *p,
                      char *out, size_t size);

/* pi_signal_origin_of - the same for the signal @s that @p took (its fatal or its stop signal) */
void pi_signal_origin_of(const struct pi_analysis *analysis, const struct pi_process_info *p,
                         const struct pi_fatal_signal *s, char *out, size_t size);

/* pi_signal_frames - the native frames, innermost first and at most @count, where the fatal
 * signal found @p's thread, their names short ("crash_here() (libfaulty.so) <- ..."), into
 * @out; "" when none */
void pi_signal_frames(const struct pi_process_info *p, int count, char *out, size_t size);

#endif
