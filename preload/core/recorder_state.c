/*
 * recorder_state.c - the state the application side (recorder.c) and the
 * writer thread (writer.c) share, defined apart from both so that neither
 * file depends on the other for it.
 */
#include "recorder_internal.h"

struct pi_recorder pi_rec;
_Atomic uint64_t pi_recording;
uint64_t pi_wait_threshold_ticks;
