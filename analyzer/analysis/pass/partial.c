/* partial.c - a partial file's head, figures and end (see partial.h). */
#include "partial.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/gpu/collectives.h"
#include "analysis/gpu/gemm.h"
#include "analysis/gpu/gpu_analysis.h"
#include "analysis/host/requests.h"
#include "analysis/host/spans.h"
#include "analysis/pass/file_merge.h"
#include "analysis/pass/partial_codec.h"
#include "analysis/pass/partial_process.h"
#include "analysis/pass/partial_tables.h"
#include "analysis/sites/native_time.h"
#include "analysis/sites/phases.h"
#include "analysis/sites/python_lines.h"
#include "analysis/sites/python_sites.h"
#include "analysis/sites/python_time.h"
#include "profinject/trace_format.h"

static const char magic[8] = {'P', 'I', 'P', 'A', 'R', 'T', 'L', '\n'};
static const char end_mark[4] = {'E', 'N', 'D', '\n'};

#ifndef PI_ANALYZER_VERSION
#define PI_ANALYZER_VERSION "unknown"
#endif

static void mark(struct pi_codec *c, const char *bytes, size_t n, const char *wrong)
{
    for (size_t i = 0; i < n && !c->failed; i++) {
        uint32_t byte = (unsigned char)bytes[i];
        if (c->reading) {
            int got = c->left ? getc(c->file) : EOF;
            c->left -= got != EOF;
            if (got == EOF)
                pi_codec_fail(c, "the file ends too early (truncated)");
            else if ((unsigned)got != byte)
                pi_codec_fail(c, wrong);
        } else if (putc((int)byte, c->file) == EOF) {
            pi_codec_fail(c, "cannot write");
        }
    }
}

/* The sizes of the model's structures a partial holds: a build whose model changed
 * without a new partial format (a field added between two releases) reads as another. */
static uint64_t model_fingerprint(void)
{
    const uint64_t sizes[] = {sizeof(struct pi_process_info), sizeof(struct pi_steps),
                              sizeof(struct pi_thread_info), sizeof(struct pi_analysis),
                              sizeof(struct pi_gpu_memory),   sizeof(struct pi_spans),
                              sizeof(struct pi_requests),     sizeof(struct pi_collectives),
                              sizeof(struct pi_gemm),         sizeof(struct pi_python_time),
                              sizeof(struct pi_python_sites), sizeof(struct pi_native_time),
                              sizeof(struct pi_phases),       sizeof(struct pi_python_lines)};
    uint64_t hash = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        hash = (hash ^ sizes[i]) * 1099511628211ull;
    return hash;
}

/* The head: what it is, who wrote it, with which options, from which trace. */
static void head(struct pi_codec *c, struct pi_partial_head *h)
{
    mark(c, magic, sizeof(magic), "not a partial file (no PIPARTL mark)");
    uint32_t format = PI_PARTIAL_FORMAT_VERSION, trace_format = PI_FORMAT_VERSION;
    char *analyzer = c->reading ? NULL : (char *)PI_ANALYZER_VERSION;
    pi_codec_u32(c, &format);
    if (c->reading && !c->failed && format != PI_PARTIAL_FORMAT_VERSION) {
        char why[160];
        snprintf(why, sizeof(why),
                 "partial format %u, this analyzer reads format %u: make it again with this "
                 "analyzer",
                 format, PI_PARTIAL_FORMAT_VERSION);
        pi_codec_fail(c, why);
    }
    pi_codec_str(c, &analyzer);
    pi_codec_u32(c, &trace_format);
    if (c->reading && !c->failed &&
        (!analyzer || strcmp(analyzer, PI_ANALYZER_VERSION) != 0 ||
         trace_format != PI_FORMAT_VERSION)) {
        char why[160];
        snprintf(why, sizeof(why),
                 "written by analyzer %.40s (trace format %u), this is %s (trace format %u): "
                 "make it again with this analyzer",
                 analyzer ? analyzer : "?", trace_format, PI_ANALYZER_VERSION, PI_FORMAT_VERSION);
        pi_codec_fail(c, why);
    }
    if (c->reading)
        free(analyzer);
    uint64_t model = model_fingerprint();
    pi_codec_u64(c, &model);
    if (c->reading && !c->failed && model != model_fingerprint())
        pi_codec_fail(c, "written by another build of this analyzer version, whose model "
                         "differs: make it again with this analyzer");
    pi_codec_int(c, &h->options.exact);
    pi_codec_uint(c, &h->options.warmup_steps);
    pi_codec_str(c, &h->trace_path);
    pi_codec_int(c, &h->read_failed);
    if (c->reading && !c->failed && !h->trace_path)
        pi_codec_fail(c, "no trace path");
}

int pi_partial_write(const char *path, const struct pi_partial_head *h, struct pi_analysis *own,
                     struct pi_process_info *process, char *why, size_t why_size)
{
    char temporary[4200];
    snprintf(temporary, sizeof(temporary), "%s.%ld.tmp", path, (long)getpid());
    struct pi_codec c = {0};
    /* a partial holds the trace's command line and paths: no more readable than the trace */
    struct stat st;
    mode_t mode = stat(h->trace_path, &st) == 0 ? (st.st_mode & 0666) : 0600;
    int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    c.file = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!c.file) {
        if (fd >= 0)
            close(fd);
        snprintf(why, why_size, "cannot write %s: %s", temporary, strerror(errno));
        return -1;
    }
    struct pi_partial_head written = *h;
    head(&c, &written);
    pi_partial_process(&c, process);
    pi_partial_tables(&c, own);
    mark(&c, end_mark, sizeof(end_mark), "");
    if (fclose(c.file) != 0)
        pi_codec_fail(&c, "cannot write");
    if (!c.failed && rename(temporary, path) != 0)
        pi_codec_fail(&c, strerror(errno));
    if (c.failed) {
        snprintf(why, why_size, "cannot write %s: %s", path, c.why);
        remove(temporary);
        return -1;
    }
    return 0;
}

/* @path opened for reading, the codec bounded by its size */
static int open_partial(struct pi_codec *c, const char *path, char *why, size_t why_size)
{
    memset(c, 0, sizeof(*c));
    c->reading = 1;
    c->file = fopen(path, "rb");
    struct stat st;
    if (!c->file || fstat(fileno(c->file), &st) != 0) {
        snprintf(why, why_size, "%s: %s", path, strerror(errno));
        if (c->file)
            fclose(c->file);
        return -1;
    }
    c->left = (uint64_t)st.st_size;
    return 0;
}

static int close_partial(struct pi_codec *c, const char *path, char *why, size_t why_size)
{
    fclose(c->file);
    if (c->failed)
        snprintf(why, why_size, "%s: not a partial this analyzer can read: %s", path, c->why);
    return c->failed ? -1 : 0;
}

int pi_partial_peek(const char *path, struct pi_partial_head *h, char *why, size_t why_size)
{
    struct pi_codec c;
    memset(h, 0, sizeof(*h));
    if (open_partial(&c, path, why, why_size) != 0)
        return -1;
    head(&c, h);
    return close_partial(&c, path, why, why_size);
}

int pi_partial_read(const char *path, struct pi_partial_head *h, struct pi_analysis *own,
                    struct pi_process_info *process, char *why, size_t why_size)
{
    struct pi_codec c;
    memset(h, 0, sizeof(*h));
    /* @process is zeroed memory never written (calloc): its pages that stay zero (most of
     * the RSS series) take no memory, as in the parallel pass (copy_into_zeroed) */
    pi_file_analysis_init(own, &h->options, process);
    if (open_partial(&c, path, why, why_size) != 0)
        return -1;
    head(&c, h);
    /* the tables count as the options say: made again with the partial's */
    pi_file_analysis_free(own);
    pi_file_analysis_init(own, &h->options, process);
    pi_partial_process(&c, process);
    pi_partial_tables(&c, own);
    mark(&c, end_mark, sizeof(end_mark), "no END mark where the figures end");
    if (!c.failed && c.left)
        pi_codec_fail(&c, "bytes after the END mark");
    return close_partial(&c, path, why, why_size);
}
