/*
 * Unit: the JSON report as it is written, streamed a process and a rank at
 * a time (reports/report_json.c), against the report's whole tree
 * (pi_report_json_object, which compare reads): cJSON's parser must read
 * the file back as the tree, and the file must be cJSON_Print of the tree,
 * byte for byte. On the fixtures' traces, and on jobs of ranks made by the
 * generator (tools/benchmarks/gen_ranks.c), whose per-rank lists (ranks,
 * collectives) are the parts streamed entry by entry.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/pass/analysis.h"
#include "reader/trace_inputs.h"
#include "reports/report.h"

static char *read_whole(const char *path)
{
    FILE *in = fopen(path, "rb");
    cr_assert_not_null(in, "%s", path);
    char *text = NULL;
    size_t size = 0;
    FILE *copy = open_memstream(&text, &size);
    char buffer[65536];
    size_t n;
    while ((n = fread(buffer, 1, sizeof(buffer), in)) > 0)
        fwrite(buffer, 1, n, copy);
    fclose(in);
    fclose(copy);
    return text;
}

/* The report of the traces @input holds (a file or a directory), written and built whole. */
static void expect_stream_is_tree(const char *input)
{
    struct pi_trace_inputs inputs;
    char *args[1] = {(char *)input};
    cr_assert_eq(pi_trace_inputs_collect(&inputs, args, 1), 0, "%s", input);
    struct pi_analysis_options options = {0};
    struct pi_analysis analysis;
    pi_analysis_run(&analysis, &options, inputs.paths, inputs.count);
    pi_trace_inputs_free(&inputs);
    cr_assert_gt(analysis.process_count, 0, "%s", input);

    char path[] = "/tmp/pi-report-stream-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(pi_report_json(path, &analysis), 0, "%s", input);
    char *written = read_whole(path);
    unlink(path);

    cJSON *tree = pi_report_json_object(&analysis);
    char *printed = cJSON_Print(tree);
    cJSON *parsed = cJSON_Parse(written);
    cr_assert_not_null(parsed, "%s: the file does not parse", input);
    cr_expect(cJSON_Compare(parsed, tree, 1), "%s: read back, the file is not the tree", input);
    cr_expect(strcmp(written, printed) == 0, "%s: the file is not laid out as the tree prints",
              input);
    cJSON_Delete(parsed);
    free(printed);
    cJSON_Delete(tree);
    free(written);
    pi_analysis_free(&analysis);
}

/* @ranks ranks of @steps steps in a new directory, with GEN_RANKS_GPU=@gpu: its path. */
static char *generate(int ranks, int steps, int gpu)
{
    char *directory = strdup("/tmp/pi-report-stream-ranks-XXXXXX");
    cr_assert_not_null(mkdtemp(directory));
    char command[1024];
    snprintf(command, sizeof(command), "GEN_RANKS_GPU=%d '%s' '%s/job' %d %d 2 30 >/dev/null",
             gpu, PI_GEN_RANKS, directory, ranks, steps);
    cr_assert_eq(system(command), 0, "%s", command);
    return directory;
}

static void remove_generated(char *directory)
{
    char command[1024];
    snprintf(command, sizeof(command), "rm -rf '%s'", directory);
    cr_expect_eq(system(command), 0);
    free(directory);
}

Test(report_stream, fixtures_one_process_and_many)
{
    static const char *const fixtures[] = {
        "format1-cuda-runtime.pitrace.zst", "h100/train-pin-events", "h100/compiled",
        "loaded/kept-batches-split"};
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(*fixtures); i++) {
        char input[1024];
        snprintf(input, sizeof(input), "%s/tests/analyzer/fixtures/%s", PI_SOURCE_DIR,
                 fixtures[i]);
        expect_stream_is_tree(input);
    }
}

Test(report_stream, ranks_on_the_cpu_and_with_nccl)
{
    for (int gpu = 0; gpu <= 1; gpu++) {
        char *directory = generate(12, 30, gpu);
        char input[1100];
        snprintf(input, sizeof(input), "%s/job", directory);
        expect_stream_is_tree(input);
        remove_generated(directory);
    }
}
