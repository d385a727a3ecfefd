/* gpu_modules.c - GPU time by nn.Module path, from the sampled launches (see gpu_modules.h). */
#include "gpu_modules.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/gpu/gpu_module_order.h"
#include "analysis/sites/autograd_nodes.h"
#include "analysis/sites/kernel_names.h"
#include "analysis/sites/python_sites.h"
#include "gemm.h"

#define FORWARD ".forward"
#define BACKWARD PI_GPU_BACKWARD

/* A kernel's figures, and its sampled launches by one group of threads: those with Python
 * frames, or (native) those with none, autograd's. Its GPU time that the group launched is
 * its time in the ratio of the group's launches to all of its launches. */
struct kernel {
    const char *name;
    int native;
    uint64_t gpu_ns, launches, samples;
    uint64_t python_launches; /* by the group's threads */
    double python_gpu_ns;
    double python_gemm_flops, python_gemm_ns; /* of products (gemm.h), in the same ratio */
};

struct build {
    struct kernel *kernels;
    size_t kernel_count;
    struct pi_gpu_modules *out;
    size_t capacity;
    uint64_t *row_samples; /* [row][kernel]: a row's sampled launches of each kernel */
};

static struct kernel *kernel_of(struct build *b, const char *name, int native)
{
    for (size_t i = 0; i < b->kernel_count; i++)
        if (b->kernels[i].native == native && strcmp(b->kernels[i].name, name) == 0)
            return &b->kernels[i];
    return NULL;
}

static void add_samples(struct build *b, const struct pi_line_stat *lines, size_t count,
                        int native)
{
    for (size_t i = 0; i < count; i++) {
        struct kernel *k = kernel_of(b, lines[i].kernel, native);
        if (!k) {
            k = &b->kernels[b->kernel_count++];
            k->name = lines[i].kernel;
            k->native = native;
        }
        k->samples += lines[i].count;
    }
}

/* Set @field of both groups' kernel @name to @value. */
static void set_kernel(struct build *b, const char *name, size_t field, uint64_t value)
{
    for (size_t i = 0; i < b->kernel_count; i++)
        if (strcmp(b->kernels[i].name, name) == 0)
            memcpy((char *)&b->kernels[i] + field, &value, sizeof(value));
}

/*
 * A kernel's launches by its group's threads. The Python group: those of
 * the threads that had Python frames, all of them when not told apart by
 * thread. The native group: every other thread's (a short-lived thread may
 * have had no launch sampled; it is still no Python thread), at least its
 * samples.
 */
static uint64_t group_launches(const struct pi_analysis *a, const struct kernel *k)
{
    uint64_t python = pi_python_launches_of(a, k->name);
    if (!k->native)
        return python >= k->samples && python <= k->launches ? python : k->launches;
    uint64_t others = python <= k->launches ? k->launches - python : 0;
    return others < k->samples ? k->samples : others > k->launches ? k->launches : others;
}

/* The kernels of the sampled launches, with their GPU time and launches from the tables. */
static int collect_kernels(const struct pi_analysis *a, const struct pi_python_sites *s,
                           struct build *b)
{
    size_t lines = s->launch_count + s->native_launch_count;
    b->kernels = calloc(lines ? lines : 1, sizeof(*b->kernels));
    if (!b->kernels)
        return -1;
    add_samples(b, s->launches, s->launch_count, 0);
    add_samples(b, s->native_launches, s->native_launch_count, 1);
    size_t n;
    struct pi_latency_entry **gpu = pi_latency_sorted(&a->calls, "gpu", &n);
    for (size_t i = 0; gpu && i < n; i++) {
        if (strcmp(gpu[i]->detail, "kernel") != 0)
            continue;
        b->out->gpu_ns += gpu[i]->durations.sum;
        set_kernel(b, gpu[i]->name, offsetof(struct kernel, gpu_ns), gpu[i]->durations.sum);
    }
    free(gpu);
    struct pi_latency_entry **launches = pi_latency_sorted(&a->calls, "kernel", &n);
    for (size_t i = 0; launches && i < n; i++)
        if (strcmp(launches[i]->detail, "launch") == 0)
            set_kernel(b, launches[i]->name, offsetof(struct kernel, launches),
                       launches[i]->durations.count);
    free(launches);
    for (size_t i = 0; i < b->kernel_count; i++) {
        struct kernel *k = &b->kernels[i];
        k->python_launches = group_launches(a, k);
        k->python_gpu_ns = k->launches ? (double)k->gpu_ns * (double)k->python_launches /
                                             (double)k->launches
                                       : (double)k->gpu_ns;
        if (!k->native)
            b->out->placed_ns += (uint64_t)k->python_gpu_ns;
        double flops;
        uint64_t gemm_ns;
        if (pi_gemm_kernel_figures(a, k->name, &flops, &gemm_ns) && k->launches) {
            double ratio = (double)k->python_launches / (double)k->launches;
            k->python_gemm_flops = flops * ratio;
            k->python_gemm_ns = (double)gemm_ns * ratio;
        }
    }
    return 0;
}

/* The row of @path (its first @length bytes), made when new; its index or -1. */
static long row_of(struct build *b, const char *path, size_t length, unsigned depth)
{
    struct pi_gpu_modules *m = b->out;
    for (size_t i = 0; i < m->count; i++)
        if (strlen(m->rows[i].path) == length && memcmp(m->rows[i].path, path, length) == 0)
            return (long)i;
    if (m->count == b->capacity) {
        size_t capacity = b->capacity ? 2 * b->capacity : 32;
        struct pi_gpu_module *grown = realloc(m->rows, capacity * sizeof(*grown));
        if (!grown)
            return -1;
        m->rows = grown;
        b->capacity = capacity;
    }
    struct pi_gpu_module *r = &m->rows[m->count];
    memset(r, 0, sizeof(*r));
    r->path = malloc(length + 1);
    if (!r->path)
        return -1;
    memcpy(r->path, path, length);
    r->path[length] = '\0';
    const char *slash = strrchr(r->path, '/');
    r->name = slash ? slash + 1 : r->path;
    r->depth = depth;
    return (long)m->count++;
}

/* The class of a frame that is a module's forward ("GPT2Attention.forward": "GPT2Attention"),
 * its length in @length; NULL for any other frame. */
static const char *forward_class(const struct pi_site_frame *f, size_t *length)
{
    size_t n = f->function ? strlen(f->function) : 0, suffix = strlen(FORWARD);
    if (n <= suffix || strcmp(f->function + n - suffix, FORWARD) != 0)
        return NULL;
    const char *start = f->function;
    for (const char *c = f->function; c < f->function + n - suffix; c++)
        if (*c == '.')
            start = c + 1; /* a nested class: its own name */
    *length = (size_t)(f->function + n - suffix - start);
    return *length ? start : NULL;
}

/* The outermost optimizer step of a site's frames ("AdamW.step" in torch/optim/) as a row's
 * name, "AdamW.step (optimizer)", into @path; its length, 0 for none. */
static size_t optimizer_step(const struct pi_call_site *site, char *path, size_t size)
{
    for (size_t f = site->python_count; f-- > 0;) {
        const struct pi_site_frame *frame = &site->frames[f];
        size_t n = frame->function ? strlen(frame->function) : 0;
        if (n > 5 && strcmp(frame->function + n - 5, ".step") == 0 && frame->file &&
            strstr(frame->file, "/torch/optim/")) {
            int written = snprintf(path, size, "%s (optimizer)", frame->function);
            return written > 0 && (size_t)written < size ? (size_t)written : 0;
        }
    }
    return 0;
}

/* @ns to the line @headline launched from. */
static int add_path(struct pi_gpu_modules *m, const char *headline, double ns)
{
    for (size_t i = 0; i < m->path_count; i++)
        if (strcmp(m->paths[i].headline, headline) == 0) {
            m->paths[i].gpu_ns += ns;
            return 0;
        }
    if (pi_array_room(&m->paths, &m->path_capacity, m->path_count, sizeof(*m->paths), 16) != 0)
        return -1;
    m->paths[m->path_count] = (struct pi_gpu_path){strdup(headline), ns};
    return m->paths[m->path_count++].headline ? 0 : -1;
}

/* Site @l's share of kernel @k to the call tree and the lines: along its Python frames, or
 * (@node) under backward / @node; its kernel below either. */
static int note_path(struct build *b, const struct pi_line_stat *l, const struct kernel *k,
                     const char *node)
{
    double ns = k->samples ? (double)l->count / (double)k->samples * k->python_gpu_ns : 0;
    char kernel[PI_KERNEL_SHORT_NAME], headline[512];
    pi_kernel_short_name(k->name, kernel, sizeof(kernel));
    const char *backward[] = {BACKWARD, node, kernel}, *leaf[] = {kernel};
    int failed = node ? pi_call_tree_add(&b->out->tree, backward, 3, (uint64_t)ns)
                      : pi_call_tree_add_site(&b->out->tree, l->site, leaf, 1, (uint64_t)ns);
    /* the line that made the call: inside a model's code (modeling_gpt2.py:NNN in
     * GPT2MLP.forward), where a site's headline would be the script's one line that calls it */
    if (node)
        snprintf(headline, sizeof(headline), BACKWARD ": %s", node);
    else if (l->site->python_count)
        pi_call_site_frame_text(&l->site->frames[0], headline, sizeof(headline));
    else
        snprintf(headline, sizeof(headline), "%s", l->site->headline);
    return failed | add_path(b->out, headline, ns);
}

/* Credit @row with site @l's share of kernel @k: its figures (@pass 0) or its samples of
 * that kernel, for the error (pass 1). */
static void credit(struct build *b, long row, const struct pi_line_stat *l,
                   const struct kernel *k, int pass)
{
    struct pi_gpu_module *r = &b->out->rows[row];
    double share = k->samples ? (double)l->count / (double)k->samples : 0;
    if (pass == 0) {
        r->gpu_ns += share * k->python_gpu_ns;
        r->launches += share * (double)k->python_launches;
        r->samples += l->count;
        r->gemm_flops += share * k->python_gemm_flops;
        r->gemm_gpu_ns += share * k->python_gemm_ns;
    } else {
        b->row_samples[(size_t)row * b->kernel_count + (size_t)(k - b->kernels)] += l->count;
    }
}

/*
 * Each sampled site credits its share of its kernel to every module path
 * its frames go through, from the outermost forward in; a site outside any
 * forward, to the optimizer step above it, if any. @pass 0 makes the rows,
 * pass 1 counts each row's samples of each kernel (for the error).
 */
static int credit_sites(const struct pi_python_sites *s, struct build *b, int pass)
{
    char path[2048];
    for (size_t i = 0; i < s->launch_count; i++) {
        const struct pi_line_stat *l = &s->launches[i];
        const struct kernel *k = kernel_of(b, l->kernel, 0);
        if (!k)
            continue;
        if (pass == 0 && note_path(b, l, k, NULL) != 0)
            return -1;
        size_t used = 0;
        unsigned depth = 0;
        for (size_t f = l->site->python_count; f-- > 0;) {
            size_t length;
            const char *name = forward_class(&l->site->frames[f], &length);
            if (!name || used + length + 1 >= sizeof(path))
                continue;
            if (used)
                path[used++] = '/';
            memcpy(path + used, name, length);
            used += length;
            long row = row_of(b, path, used, depth++);
            if (row < 0)
                return -1;
            credit(b, row, l, k, pass);
        }
        if (depth > 0)
            continue;
        used = optimizer_step(l->site, path, sizeof(path));
        long row = used ? row_of(b, path, used, 0) : -2;
        if (row == -1)
            return -1;
        if (row >= 0)
            credit(b, row, l, k, pass);
        else if (pass == 0 && k->samples)
            b->out->outside_ns += (uint64_t)((double)l->count / (double)k->samples *
                                             k->python_gpu_ns);
    }
    return 0;
}

/*
 * Each sampled launch of a thread without Python frames credits its share
 * of its kernel to "backward" and to the autograd node its native frames
 * were applying ("backward/MmBackward0"); one under no node stays unplaced.
 */
static int credit_backward(const struct pi_python_sites *s, struct build *b, int pass)
{
    char path[512] = BACKWARD "/";
    size_t prefix = strlen(path);
    for (size_t i = 0; i < s->native_launch_count; i++) {
        const struct pi_line_stat *l = &s->native_launches[i];
        const struct kernel *k = kernel_of(b, l->kernel, 1);
        if (!k || !pi_autograd_node(l->site, path + prefix, sizeof(path) - prefix))
            continue;
        long root = row_of(b, BACKWARD, strlen(BACKWARD), 0);
        long node = root < 0 ? -1 : row_of(b, path, strlen(path), 1);
        if (node < 0)
            return -1;
        b->out->rows[root].backward = b->out->rows[node].backward = 1;
        if (pass == 0 && note_path(b, l, k, path + prefix) != 0)
            return -1;
        credit(b, root, l, k, pass);
        credit(b, node, l, k, pass);
    }
    return 0;
}

/*
 * A row's share is a sum over kernels of each kernel's GPU time times the
 * fraction of its samples under the row, each fraction estimated from that
 * kernel's own samples: its variance is the sum of theirs, each a sample's
 * of its launches (none when every launch was sampled). A fraction is taken
 * with two samples added either way (Agresti and Coull): one of 0 or 1 from
 * few samples says no error at all, where one of 50 samples all under a
 * path may well be 0.9.
 */
static void sampling_errors(struct build *b)
{
    struct pi_gpu_modules *m = b->out;
    for (size_t r = 0; r < m->count && m->gpu_ns; r++) {
        double variance = 0;
        for (size_t k = 0; k < b->kernel_count; k++) {
            const struct kernel *kernel = &b->kernels[k];
            if (kernel->samples < 1 || kernel->native != m->rows[r].backward)
                continue; /* the other group's kernel: none of its samples can be here */
            double n = (double)kernel->samples + 4;
            double p = ((double)b->row_samples[r * b->kernel_count + k] + 2) / n;
            double weight = kernel->python_gpu_ns / (double)m->gpu_ns;
            double unsampled = kernel->python_launches > kernel->samples
                                   ? 1 - (double)kernel->samples / (double)kernel->python_launches
                                   : 0;
            variance += weight * weight * p * (1 - p) / n * unsampled;
        }
        m->rows[r].error_points = 100 * 1.96 * sqrt(variance);
    }
}

/* Each row's share of each kernel it has samples of, from the samples pass 1 counted. */
static int row_kernels(struct build *b)
{
    struct pi_gpu_modules *m = b->out;
    size_t n = 0;
    for (size_t i = 0; i < m->count * b->kernel_count; i++)
        n += b->row_samples[i] != 0;
    m->kernels = calloc(n ? n : 1, sizeof(*m->kernels));
    if (!m->kernels)
        return -1;
    for (size_t r = 0; r < m->count; r++)
        for (size_t k = 0; k < b->kernel_count; k++) {
            uint64_t samples = b->row_samples[r * b->kernel_count + k];
            const struct kernel *kernel = &b->kernels[k];
            if (!samples)
                continue;
            double share = (double)samples / (double)kernel->samples;
            struct pi_gpu_module_kernel *e = &m->kernels[m->kernel_count];
            *e = (struct pi_gpu_module_kernel){strdup(m->rows[r].path), kernel->name,
                                               share * kernel->python_gpu_ns,
                                               share * (double)kernel->python_launches, samples};
            if (!e->path)
                return -1;
            m->kernel_count++;
        }
    return 0;
}

static int by_path_time(const void *x, const void *y)
{
    const struct pi_gpu_path *a = x, *b = y;
    return a->gpu_ns < b->gpu_ns ? 1 : a->gpu_ns > b->gpu_ns ? -1 : strcmp(a->headline, b->headline);
}

int pi_gpu_modules_find(const struct pi_analysis *a, struct pi_gpu_modules *m)
{
    memset(m, 0, sizeof(*m));
    const struct pi_python_sites *s = a->python_sites;
    if (!s || (!s->launch_count && !s->native_launch_count))
        return 0;
    struct build b = {.out = m};
    int result = collect_kernels(a, s, &b);
    for (size_t k = 0; k < b.kernel_count; k++)
        *(b.kernels[k].native ? &m->native_samples : &m->samples) += b.kernels[k].samples;
    if (result == 0)
        result = credit_sites(s, &b, 0) | credit_backward(s, &b, 0);
    if (result == 0 && m->count) {
        b.row_samples = calloc(m->count * b.kernel_count, sizeof(*b.row_samples));
        result = b.row_samples ? credit_sites(s, &b, 1) | credit_backward(s, &b, 1) : -1;
    }
    if (result == 0 && m->count) {
        sampling_errors(&b);
        result = row_kernels(&b);
    }
    if (result == 0)
        result = pi_gpu_modules_sort(m);
    if (result == 0 && m->path_count)
        qsort(m->paths, m->path_count, sizeof(*m->paths), by_path_time);
    const char *unplaced[] = {"(not placed)"}; /* so that the graph's widths are shares of all */
    if (result == 0 && m->tree.count && pi_gpu_modules_unplaced_ns(m))
        result = pi_call_tree_add(&m->tree, unplaced, 1, pi_gpu_modules_unplaced_ns(m));
    free(b.row_samples);
    free(b.kernels);
    if (result != 0)
        pi_gpu_modules_free(m);
    return result;
}

const struct pi_gpu_module *pi_gpu_modules_backward(const struct pi_gpu_modules *m)
{
    for (size_t i = 0; i < m->count; i++)
        if (m->rows[i].backward && m->rows[i].depth == 0)
            return &m->rows[i];
    return NULL;
}

uint64_t pi_gpu_modules_unplaced_ns(const struct pi_gpu_modules *m)
{
    const struct pi_gpu_module *backward = pi_gpu_modules_backward(m);
    double placed = (double)m->placed_ns + (backward ? backward->gpu_ns : 0);
    return (double)m->gpu_ns > placed ? (uint64_t)((double)m->gpu_ns - placed) : 0;
}

void pi_gpu_modules_free(struct pi_gpu_modules *m)
{
    for (size_t i = 0; i < m->count; i++)
        free(m->rows[i].path);
    free(m->rows);
    for (size_t i = 0; i < m->kernel_count; i++)
        free(m->kernels[i].path);
    free(m->kernels);
    for (size_t i = 0; i < m->path_count; i++)
        free(m->paths[i].headline);
    free(m->paths);
    pi_call_tree_free(&m->tree);
    memset(m, 0, sizeof(*m));
}
