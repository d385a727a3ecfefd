/*
 * fuzz_partial_file - libFuzzer target: any bytes as a partial file
 * (analysis/pass/partial.h), read and merged as `profinject-analyze merge`
 * does, then every report. A partial is read from disk like a trace:
 * bad input must give an error, never a crash, a hang or a leak.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/pass/analysis.h"
#include "analysis/pass/partial.h"
#include "analysis/pass/partial_pass.h"
#include "reports/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("partial", 0);
    if (fd < 0)
        return 0;
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    /* quiet: the messages of every bad input would drown libFuzzer's */
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w");
    struct pi_partial_head head;
    char why[700];
    struct pi_analysis analysis;
    memset(&analysis, 0, sizeof(analysis));
    if (pi_partial_peek(path, &head, why, sizeof(why)) == 0) {
        char *paths[1] = {path};
        int merged = pi_partial_merge(&analysis, &head.options, paths, 1);
        if (merged >= 0) {
            FILE *out = fopen("/dev/null", "w");
            if (out) {
                pi_report_text(out, &analysis);
                fclose(out);
            }
            struct cJSON *json = pi_report_json_object(&analysis);
            extern void cJSON_Delete(struct cJSON *);
            cJSON_Delete(json);
            pi_report_html("/dev/null", &analysis);
        }
        pi_analysis_free(&analysis);
    }
    free(head.trace_path);
    fclose(stderr);
    stderr = saved;
    close(fd);
    return 0;
}
