/* quantiles.c - the percentiles of the latency tables (see quantiles.h). */
#include "quantiles.h"

#include <cjson/cJSON.h>
#include <stdio.h>

const double pi_quantiles[PI_QUANTILE_COUNT] = {0.50, 0.90, 0.95, 0.99, 0.999, 1.0};
const char *const pi_quantile_names[PI_QUANTILE_COUNT] = {"p50", "p90", "p95", "p99", "p99.9",
                                                          "max"};

void pi_quantiles_json(cJSON *object, struct pi_histogram *h)
{
    cJSON_AddNumberToObject(object, "count", (double)h->count);
    cJSON_AddNumberToObject(object, "total_ns", (double)h->sum);
    cJSON_AddNumberToObject(object, "mean_ns", pi_histogram_mean(h));
    for (int q = 0; q < PI_QUANTILE_COUNT; q++) {
        char key[16];
        snprintf(key, sizeof(key), "%s_ns", pi_quantile_names[q]);
        for (char *c = key; *c; c++)
            if (*c == '.')
                *c = '_';
        cJSON_AddNumberToObject(object, key, pi_histogram_quantile(h, pi_quantiles[q]));
    }
}
