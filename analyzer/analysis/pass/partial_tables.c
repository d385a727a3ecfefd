/* partial_tables.c - a file's shares of the shared tables in a partial file (see partial_tables.h). */
#include "partial_tables.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/pass/partial_values.h"
#include "analysis/sites/python_sites.h"
#include "analysis/sites/python_time.h"

#define ARRAY(c, array, count) pi_codec_array(c, (void **)&(array), &(count), sizeof(*(array)))

/* Entries in the order of the slots they were in: read back, each is added anew by its
 * key (the table places it by its hash). */
static void latency_table(struct pi_codec *c, struct pi_latency_table *t)
{
    size_t count = t->count;
    if (!pi_codec_count(c, &count, SIZE_MAX, 4))
        return;
    for (size_t i = 0, slot = 0; i < count && !c->failed; i++) {
        struct pi_latency_entry read = {0}, *e = &read;
        if (!c->reading) {
            while (!t->slots[slot])
                slot++;
            e = t->slots[slot++];
        }
        pi_codec_str(c, &e->group);
        pi_codec_str(c, &e->name);
        pi_codec_str(c, &e->detail);
        if (c->reading) {
            struct pi_latency_entry *to =
                e->group && e->name && e->detail
                    ? pi_latency_get(t, e->group, e->name, e->detail) : NULL;
            free(read.group);
            free(read.name);
            free(read.detail);
            if (!to) {
                pi_codec_fail(c, c->failed ? c->why : "a table entry without its name");
                return;
            }
            if (to->durations.count) {
                pi_codec_fail(c, "a table entry twice");
                return;
            }
            pi_histogram_free(&to->durations);
            e = to;
        }
        pi_partial_histogram(c, &e->durations);
        pi_codec_u64(c, &e->bytes);
        pi_codec_u64(c, &e->opens);
    }
}

static void line_stats(struct pi_codec *c, struct pi_line_stat **lines, size_t *count)
{
    struct pi_line_stat *l = *lines;
    size_t n = pi_codec_array(c, (void **)&l, count, sizeof(*l));
    *lines = l;
    for (size_t i = 0; i < n; i++) {
        pi_partial_call_site(c, &l[i].site);
        pi_codec_str(c, &l[i].kernel);
        pi_codec_int(c, &l[i].wait_class);
        pi_codec_u64(c, &l[i].count);
        pi_codec_u64(c, &l[i].total_ns);
    }
}

static void python_sites(struct pi_codec *c, struct pi_python_sites **sites)
{
    if (!pi_codec_present(c, (void **)sites, sizeof(**sites)))
        return;
    struct pi_python_sites *s = *sites;
    line_stats(c, &s->launches, &s->launch_count);
    for (size_t i = 0, n = ARRAY(c, s->python_launches, s->python_launch_count); i < n; i++) {
        pi_codec_str(c, &s->python_launches[i].kernel);
        pi_codec_u64(c, &s->python_launches[i].count);
    }
    line_stats(c, &s->native_launches, &s->native_launch_count);
    line_stats(c, &s->waits, &s->wait_count);
    for (size_t i = 0, n = ARRAY(c, s->processes, s->process_count); i < n; i++) {
        pi_codec_int(c, &s->processes[i].pid);
        pi_codec_uint(c, &s->processes[i].version);
        pi_codec_uint(c, &s->processes[i].mode);
        pi_codec_text(c, &s->processes[i].reason);
    }
}

static void call_tree(struct pi_codec *c, struct pi_call_tree *t)
{
    for (size_t i = 0, n = ARRAY(c, t->nodes, t->count); i < n; i++) {
        struct pi_call_tree_node *node = &t->nodes[i];
        pi_codec_text(c, &node->label);
        pi_codec_u32(c, &node->parent);
        pi_codec_u32(c, &node->first_child);
        pi_codec_u32(c, &node->next_sibling);
        pi_codec_u64(c, &node->weight);
        /* the reports walk the tree by these: each must name a node */
        if (c->reading && (node->parent >= n || node->first_child >= n || node->next_sibling >= n))
            pi_codec_fail(c, "a call tree node out of range");
    }
    if (c->reading) {
        t->capacity = t->count;
        t->index = NULL; /* only adding a path needs it: nothing is added once the file is read */
    }
}

static void python_time(struct pi_codec *c, struct pi_python_time **time_of)
{
    if (!pi_codec_present(c, (void **)time_of, sizeof(**time_of)))
        return;
    struct pi_python_time *t = *time_of;
    for (size_t i = 0, n = ARRAY(c, t->profiles, t->profile_count); i < n; i++) {
        struct pi_python_profile *p = &t->profiles[i];
        pi_codec_size(c, &p->process);
        pi_codec_u64(c, &p->sampled_ns);
        pi_codec_u64(c, &p->samples);
        pi_codec_u64(c, &p->outside_ns);
        pi_codec_u64(c, &p->unknown_ns);
        pi_codec_u64(c, &p->import_ns);
        for (size_t f = 0, m = ARRAY(c, p->functions, p->function_count); f < m; f++) {
            struct pi_python_function *fn = &p->functions[f];
            pi_codec_text(c, &fn->file);
            pi_codec_text(c, &fn->function);
            pi_codec_u64(c, &fn->inclusive_ns);
            pi_codec_u64(c, &fn->self_ns);
            pi_codec_u64(c, &fn->work_self_ns);
            pi_codec_u64(c, &fn->samples);
        }
        if (c->reading)
            p->function_capacity = p->function_count;
        call_tree(c, &p->tree);
    }
    if (c->reading)
        t->profile_capacity = t->profile_count;
}

void pi_partial_tables(struct pi_codec *c, struct pi_analysis *own)
{
    latency_table(c, &own->calls);
    latency_table(c, &own->files);
    python_sites(c, &own->python_sites);
    python_time(c, &own->python_time);
    pi_codec_u64(c, &own->gpu.gpu_busy_ns);
    pi_codec_u64(c, &own->bytes_done);
}
