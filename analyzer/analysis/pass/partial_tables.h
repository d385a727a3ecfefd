/*
 * partial_tables.h - one file's shares of the tables every file adds to
 * (file_merge.h: latency and file tables, Python sites and time, GPU busy
 * time), as a partial file holds them (partial.h).
 */
#ifndef PI_PARTIAL_TABLES_H
#define PI_PARTIAL_TABLES_H

#include "analysis/model/model.h"
#include "analysis/pass/partial_codec.h"

/* pi_partial_tables - write @own's tables, or read them into @own as made by
 * pi_file_analysis_init (freed by pi_file_analysis_free whatever happened) */
void pi_partial_tables(struct pi_codec *codec, struct pi_analysis *own);

#endif
