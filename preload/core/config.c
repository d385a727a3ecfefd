/* config.c - PROFINJECT_* environment settings (see config.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "diagnostics.h"
#include "profinject/control_protocol.h"
#include "profinject/trace_format.h"

static uint64_t env_number(const char *name, uint64_t fallback, uint64_t min, uint64_t max)
{
    const char *text = getenv(name);
    if (!text || !*text)
        return fallback;
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (*end != '\0' || value < min || value > max) {
        pi_diag("%s=%s is not a number from %llu to %llu; using %llu", name, text,
                (unsigned long long)min, (unsigned long long)max, (unsigned long long)fallback);
        return fallback;
    }
    return value;
}

void pi_config_from_env(struct pi_config *config)
{
    memset(config, 0, sizeof(*config));
    const char *dir = getenv("PROFINJECT_OUTPUT");
    if (!dir || !*dir)
        dir = "profinject-traces";
    if (strlen(dir) >= sizeof(config->output_dir) - 128) {
        pi_diag("PROFINJECT_OUTPUT is too long; using ./profinject-traces");
        dir = "profinject-traces";
    }
    strcpy(config->output_dir, dir);

    config->flush_interval_ns = env_number("PROFINJECT_FLUSH_MS", 100, 1, 3600000) * 1000000u;
    config->sample_interval_ns = env_number("PROFINJECT_SAMPLE_MS", PI_DEFAULT_SAMPLE_MS, 0, 3600000) * 1000000u;
    config->wait_threshold_ns = env_number("PROFINJECT_WAIT_US", 20, 0, 60000000) * 1000u;
    uint64_t buffer_kb = env_number("PROFINJECT_BUFFER_KB", 64, 4, 65536);
    uint64_t pool_mb = env_number("PROFINJECT_POOL_MB", 16, 1, 65536);
    config->buffer_records = (uint32_t)(buffer_kb * 1024 / PI_RECORD_SIZE);
    uint64_t count = pool_mb * 1024 / buffer_kb;
    config->buffer_count = (uint32_t)(count < 2 ? 2 : count);
    config->compression_level = (int)env_number("PROFINJECT_ZSTD_LEVEL", 3, 1, 19);

    const char *clock = getenv("PROFINJECT_CLOCK");
    config->clock = PI_CLOCK_AUTO;
    if (clock && strcmp(clock, "tsc") == 0)
        config->clock = PI_CLOCK_FORCE_TSC;
    else if (clock && strcmp(clock, "monotonic") == 0)
        config->clock = PI_CLOCK_FORCE_MONOTONIC;
    else if (clock && *clock && strcmp(clock, "auto") != 0)
        pi_diag("PROFINJECT_CLOCK=%s is not auto, tsc or monotonic; using auto", clock);

    config->test_writer_stall_ns =
        env_number("PROFINJECT_TEST_WRITER_STALL_MS", 0, 0, 600000) * 1000000u;
    config->test_fail_write_after =
        env_number("PROFINJECT_TEST_FAIL_WRITE_AFTER", 0, 0, UINT64_MAX / 2);

    const char *disable = getenv("PROFINJECT_DISABLE");
    config->disabled = disable && *disable && strcmp(disable, "0") != 0;
}

uint64_t pi_record_until_ns(void)
{
    return env_number(PI_RECORD_UNTIL_ENV, 0, 1, UINT64_MAX / 2);
}
