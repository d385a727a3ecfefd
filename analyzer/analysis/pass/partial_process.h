/*
 * partial_process.h - one file's process record (model.h), read whole and
 * finished, as a partial file holds it (partial.h): every figure the
 * commit and the reports read, none of the state that only lives while
 * the file is read (it is freed by then).
 */
#ifndef PI_PARTIAL_PROCESS_H
#define PI_PARTIAL_PROCESS_H

#include "analysis/model/model.h"
#include "analysis/pass/partial_codec.h"

/* pi_partial_process - write @process, or read it into a zeroed one (what was read is
 * freed with the analysis it is put in, whatever happened) */
void pi_partial_process(struct pi_codec *codec, struct pi_process_info *process);

#endif
