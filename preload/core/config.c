/* config.c - PROFINJECT_* environment settings (see config.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "diagnostics.h"
#include "settings.h"
#include "profinject/control_protocol.h"
#include "profinject/trace_format.h"

void pi_config_from_env(struct pi_config *config)
{
    memset(config, 0, sizeof(*config));
    config->output_dir_fd = -1;
    const char *dir = getenv("PROFINJECT_OUTPUT");
    if (!dir || !*dir)
        dir = "profinject-traces";
    if (strlen(dir) >= sizeof(config->output_dir) - 128) {
        pi_diag("PROFINJECT_OUTPUT is too long; using ./profinject-traces");
        dir = "profinject-traces";
    }
    strcpy(config->output_dir, dir);

    config->summary = strcmp(pi_setting_choice("PROFINJECT_MODE"), "summary") == 0;
    /* both have summary mode's own defaults (settings.c) */
    config->flush_interval_ns = pi_setting_number("PROFINJECT_FLUSH_MS") * 1000000u;
    config->sample_interval_ns = pi_setting_number("PROFINJECT_SAMPLE_MS") * 1000000u;
    config->wait_threshold_ns = pi_setting_number("PROFINJECT_WAIT_US") * 1000u;
    uint64_t buffer_kb = pi_setting_number("PROFINJECT_BUFFER_KB");
    uint64_t pool_mb = pi_setting_number("PROFINJECT_POOL_MB");
    config->buffer_records = (uint32_t)(buffer_kb * 1024 / PI_RECORD_SIZE);
    uint64_t count = pool_mb * 1024 / buffer_kb;
    config->buffer_count = (uint32_t)(count < 2 ? 2 : count);
    /* the pool grows with the threads that hold its buffers, up to this */
    uint64_t max_count = pi_setting_number("PROFINJECT_POOL_MAX_MB") * 1024 / buffer_kb;
    config->buffer_max_count =
        (uint32_t)(max_count < config->buffer_count ? config->buffer_count : max_count);
    config->compression_level = (int)pi_setting_number("PROFINJECT_ZSTD_LEVEL");

    const char *clock = pi_setting_choice("PROFINJECT_CLOCK");
    config->clock = strcmp(clock, "tsc") == 0         ? PI_CLOCK_FORCE_TSC
                    : strcmp(clock, "monotonic") == 0 ? PI_CLOCK_FORCE_MONOTONIC
                                                      : PI_CLOCK_AUTO;

    config->test_writer_stall_ns = pi_setting_number("PROFINJECT_TEST_WRITER_STALL_MS") * 1000000u;
    config->test_stop_stall_ns = pi_setting_number("PROFINJECT_TEST_STOP_STALL_MS") * 1000000u;
    config->test_fail_write_after = pi_setting_number("PROFINJECT_TEST_FAIL_WRITE_AFTER");

    config->disabled = pi_setting_flag("PROFINJECT_DISABLE");
    config->summary_interval_ns = pi_setting_number("PROFINJECT_SUMMARY_INTERVAL_S") * 1000000000u;
    config->summary_detail_ns = pi_setting_number("PROFINJECT_SUMMARY_DETAIL_MS") * 1000000u;
    config->summary_trigger_gap_ns =
        pi_setting_number("PROFINJECT_SUMMARY_TRIGGER_GAP_S") * 1000000000u;
}

uint64_t pi_record_until_ns(void)
{
    return pi_setting_number(PI_RECORD_UNTIL_ENV);
}
