/*
 * partial_values.h - structures of the model that several parts of a
 * partial file hold (partial.h): histograms, call sites, series.
 */
#ifndef PI_PARTIAL_VALUES_H
#define PI_PARTIAL_VALUES_H

#include "analysis/model/model.h"
#include "analysis/pass/partial_codec.h"

/* pi_partial_histogram - a histogram (histogram.h): its extent, buckets and exact values */
void pi_partial_histogram(struct pi_codec *codec, struct pi_histogram *h);

/* pi_partial_call_site - an optional call site (call_sites.h) */
void pi_partial_call_site(struct pi_codec *codec, struct pi_call_site **site);

/* pi_partial_series - a series of up to PI_SERIES_MAX points (series.h) */
void pi_partial_series(struct pi_codec *codec, struct pi_series *series);

#endif
