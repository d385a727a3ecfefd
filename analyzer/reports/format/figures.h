/*
 * figures.h - figures every report gives the same way: the percentiles
 * every latency table shows (the text and HTML columns name them, JSON
 * gives a histogram's figures under the same names), and a series over
 * time in JSON.
 */
#ifndef PI_FIGURES_H
#define PI_FIGURES_H

#include <stdint.h>

#include "analysis/common/histogram.h"
#include "analysis/common/series.h"

struct cJSON;

#define PI_QUANTILE_COUNT 6
extern const double pi_quantiles[PI_QUANTILE_COUNT];
extern const char *const pi_quantile_names[PI_QUANTILE_COUNT];

/* pi_quantiles_json - add @h's count, total, mean and each quantile ("p99_9_ns") to @object */
void pi_quantiles_json(struct cJSON *object, struct pi_histogram *h);

/* pi_quantile_values_json - the same from figures kept after their histogram was let go:
 * @ns holds the PI_QUANTILE_COUNT quantiles in the order of pi_quantiles */
void pi_quantile_values_json(struct cJSON *object, uint64_t count, uint64_t total_ns,
                             double mean_ns, const double *ns);

/* pi_series_json - add @series to @object under @key as [[time from @base_ns, value], ...] */
void pi_series_json(struct cJSON *object, const char *key, const struct pi_series *series,
                    uint64_t base_ns);

#endif
