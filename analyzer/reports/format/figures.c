/* figures.c - figures as every report gives them (see figures.h). */
#include "figures.h"

#include <cjson/cJSON.h>
#include <stdio.h>

const double pi_quantiles[PI_QUANTILE_COUNT] = {0.50, 0.90, 0.95, 0.99, 0.999, 1.0};
const char *const pi_quantile_names[PI_QUANTILE_COUNT] = {"p50", "p90", "p95", "p99", "p99.9",
                                                          "max"};

void pi_quantile_values_json(cJSON *object, uint64_t count, uint64_t total_ns, double mean_ns,
                             const double *ns)
{
    cJSON_AddNumberToObject(object, "count", (double)count);
    cJSON_AddNumberToObject(object, "total_ns", (double)total_ns);
    cJSON_AddNumberToObject(object, "mean_ns", mean_ns);
    for (int q = 0; q < PI_QUANTILE_COUNT; q++) {
        char key[16];
        snprintf(key, sizeof(key), "%s_ns", pi_quantile_names[q]);
        for (char *c = key; *c; c++)
            if (*c == '.')
                *c = '_';
        cJSON_AddNumberToObject(object, key, ns[q]);
    }
}

void pi_quantiles_json(cJSON *object, struct pi_histogram *h)
{
    double ns[PI_QUANTILE_COUNT];
    for (int q = 0; q < PI_QUANTILE_COUNT; q++)
        ns[q] = pi_histogram_quantile(h, pi_quantiles[q]);
    pi_quantile_values_json(object, h->count, h->sum, pi_histogram_mean(h), ns);
}

void pi_series_json(cJSON *object, const char *key, const struct pi_series *s, uint64_t base_ns)
{
    cJSON *samples = cJSON_AddArrayToObject(object, key);
    for (uint32_t i = 0; i < s->count; i++) {
        cJSON *point = cJSON_CreateArray();
        cJSON_AddItemToArray(point, cJSON_CreateNumber((double)(s->t[i] - base_ns)));
        cJSON_AddItemToArray(point, cJSON_CreateNumber((double)s->v[i]));
        cJSON_AddItemToArray(samples, point);
    }
}
