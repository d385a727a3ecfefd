/*
 * quantiles.h - the percentiles every latency table shows, in each format:
 * the text and HTML columns name them, JSON gives a histogram's figures
 * under the same names.
 */
#ifndef PI_QUANTILES_H
#define PI_QUANTILES_H

#include "analysis/common/histogram.h"

struct cJSON;

#define PI_QUANTILE_COUNT 6
extern const double pi_quantiles[PI_QUANTILE_COUNT];
extern const char *const pi_quantile_names[PI_QUANTILE_COUNT];

/* pi_quantiles_json - add @h's count, total, mean and each quantile ("p99_9_ns") to @object */
void pi_quantiles_json(struct cJSON *object, struct pi_histogram *h);

#endif
