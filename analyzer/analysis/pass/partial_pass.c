/* partial_pass.c - a trace read into its partial; partials committed into one analysis (see partial_pass.h). */
#include "partial_pass.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/pass/analysis.h"
#include "analysis/pass/file_merge.h"
#include "analysis/pass/file_pass.h"
#include "analysis/pass/partial.h"

int pi_partial_make(const char *trace, const char *out, const struct pi_analysis_options *options,
                    char *why, size_t why_size)
{
    struct pi_reader *reader = pi_reader_open(trace, why, why_size);
    if (!reader)
        return -1;
    struct pi_process_info *process = calloc(1, sizeof(*process)); /* 35 KB: not on the stack */
    struct pi_analysis *own = calloc(1, sizeof(*own));
    if (!process || !own || !(process->path = strdup(trace))) {
        snprintf(why, why_size, "out of memory");
        free(process);
        free(own);
        pi_reader_close(reader);
        return -1;
    }
    /* as a thread of the parallel pass reads a file (parallel_pass.c), its fork parent's
     * file looked for beside it, as the whole analysis does for a parent not among its
     * inputs */
    struct pi_analysis_options read_options = {options->exact, options->warmup_steps, NULL, 0, 1};
    pi_file_analysis_init(own, &read_options, process);
    char *const paths[1] = {(char *)trace};
    own->lineage = pi_lineage_new(paths, 1);
    if (own->lineage)
        pi_lineage_want(own->lineage, reader);
    pi_file_pass_inherit(own, process, reader, stderr);
    int failed = pi_file_pass_read(own, process, reader, NULL, stderr) != 0;
    pi_reader_close(reader);
    pi_lineage_free(own->lineage);
    own->lineage = NULL;
    struct pi_partial_head head = {read_options, (char *)trace, failed};
    int written = pi_partial_write(out, &head, own, process, why, why_size);
    pi_file_analysis_free(own);
    /* the record is freed as an analysis frees its processes */
    struct pi_analysis holder;
    memset(&holder, 0, sizeof(holder));
    holder.processes = process;
    holder.process_count = 1;
    pi_analysis_free(&holder);
    free(own);
    return written != 0 ? -1 : failed;
}

int pi_partial_merge(struct pi_analysis *a, const struct pi_analysis_options *options, char **paths,
                     size_t count)
{
    if (pi_analysis_begin(a, options, count) != 0) {
        fprintf(stderr, "profinject-analyze: out of memory\n");
        return -1;
    }
    struct pi_analysis *own = calloc(1, sizeof(*own));
    if (!own) {
        fprintf(stderr, "profinject-analyze: out of memory\n");
        return -1;
    }
    int unreadable = 0;
    for (size_t i = 0; i < count && !unreadable; i++) {
        /* read straight into its place: the files before it are committed */
        struct pi_process_info *p = &a->processes[a->process_count++];
        struct pi_partial_head head;
        char why[600];
        if (pi_partial_read(paths[i], &head, own, p, why, sizeof(why)) != 0) {
            fprintf(stderr, "profinject-analyze: %s\n", why);
            unreadable = 1;
        } else if (head.options.exact != options->exact ||
                   head.options.warmup_steps != options->warmup_steps) {
            fprintf(stderr,
                    "profinject-analyze: %s: made with other options than %s (--exact, "
                    "--warmup): make the partials with the same ones\n",
                    paths[i], paths[0]);
            unreadable = 1;
        }
        free(head.trace_path);
        if (unreadable) {
            pi_file_analysis_free(own);
            break;
        }
        /* the time line's origin: the earliest start among the headers, as the whole pass
         * takes it before reading */
        if (p->header.start_monotonic_ns < a->base_ns)
            a->base_ns = p->header.start_monotonic_ns;
        pi_file_analysis_merge(a, own, p);
        pi_file_analysis_free(own);
        pi_file_pass_commit(a, p, NULL);
        if (head.read_failed)
            a->bad_input = 1;
    }
    free(own);
    if (a->base_ns == UINT64_MAX)
        a->base_ns = 0;
    if (unreadable)
        return -1;
    return pi_analysis_end(a) != 0 ? 1 : 0;
}
