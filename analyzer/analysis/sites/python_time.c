/* python_time.c - time by Python function from the time samples (see python_time.h). */
#include "python_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/sites/call_sites.h"
#include "analysis/common/u64_map.h"

/* The profile of the file being read, started at its first sample. */
static struct pi_python_profile *current_profile(struct pi_python_time *t, size_t process)
{
    if (t->reading)
        return &t->profiles[t->profile_count - 1];
    if (pi_array_room(&t->profiles, &t->profile_capacity, t->profile_count,
                      sizeof(*t->profiles), 8) != 0)
        return NULL;
    struct pi_python_profile *p = &t->profiles[t->profile_count];
    memset(p, 0, sizeof(*p));
    p->process = process;
    p->index = pi_u64_map_new();
    p->pending = pi_u64_map_new();
    if (!p->index || !p->pending) {
        pi_u64_map_free(p->index);
        pi_u64_map_free(p->pending);
        return NULL;
    }
    t->profile_count++;
    t->reading = 1;
    return p;
}

void pi_python_time_event(struct pi_analysis *a, const struct pi_process_info *process,
                          const struct pi_event *ev)
{
    if (!a->python_time && !(a->python_time = calloc(1, sizeof(*a->python_time))))
        return;
    struct pi_python_profile *p = current_profile(a->python_time, (size_t)(process - a->processes));
    if (!p)
        return;
    p->sampled_ns += ev->dur_ns;
    p->samples++;
    uint64_t stack = ev->rec.arg[0];
    if (!stack) {
        if (ev->rec.arg[1])
            p->unknown_ns += ev->dur_ns;
        else
            p->outside_ns += ev->dur_ns;
        return;
    }
    struct pi_u64_entry *e = pi_u64_map_put(p->pending, stack);
    if (e) {
        e->value[0] += ev->dur_ns;
        e->value[1]++;
    }
}

static uint64_t hash_name(const char *file, const char *function)
{
    uint64_t h = pi_text_hash_part(pi_text_hash_part(PI_TEXT_HASH_START, file), function);
    return h ? h : 1;
}

/* The function (@file, @function) of @p, added when new; probing past another name of the same hash. */
static struct pi_python_function *function_of(struct pi_python_profile *p, const char *file,
                                              const char *function)
{
    for (uint64_t key = hash_name(file, function);; key = key + 1 ? key + 1 : 1) {
        struct pi_u64_entry *e = pi_u64_map_put(p->index, key);
        if (!e)
            return NULL;
        if (e->value[0]) {
            struct pi_python_function *f = &p->functions[e->value[0] - 1];
            if (strcmp(f->file, file) == 0 && strcmp(f->function, function) == 0)
                return f;
            continue;
        }
        if (pi_array_room(&p->functions, &p->function_capacity, p->function_count,
                          sizeof(*p->functions), 64) != 0)
            return NULL;
        struct pi_python_function *f = &p->functions[p->function_count];
        memset(f, 0, sizeof(*f));
        f->file = strdup(file);
        f->function = strdup(function);
        if (!f->file || !f->function) {
            free(f->file);
            free(f->function);
            return NULL;
        }
        e->value[0] = ++p->function_count;
        return f;
    }
}

/* Give @ns of @samples to each function of @site, once per function. */
static void account_stack(struct pi_python_profile *p, const struct pi_call_site *site,
                          uint64_t ns, uint64_t samples)
{
    pi_call_tree_add_site(&p->tree, site, NULL, 0, ns); /* "function (file name)" */
    int importing = 0;
    for (size_t i = 0; i < site->python_count && !importing; i++)
        importing = pi_python_import_frame(site->frames[i].file);
    if (importing)
        p->import_ns += ns;
    for (size_t i = 0; i < site->python_count; i++) {
        const struct pi_site_frame *frame = &site->frames[i];
        int seen = 0; /* recursion: an outer frame of the same function counts once */
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(site->frames[j].file, frame->file) == 0 &&
                   strcmp(site->frames[j].function, frame->function) == 0;
        if (seen)
            continue;
        struct pi_python_function *f = function_of(p, frame->file, frame->function);
        if (!f)
            continue;
        f->inclusive_ns += ns;
        f->samples += samples;
        if (i == 0)
            f->self_ns += ns;
        if (i == 0 && !importing)
            f->work_self_ns += ns;
    }
}

static int by_inclusive(const void *a, const void *b)
{
    const struct pi_python_function *x = a, *y = b;
    if (x->inclusive_ns != y->inclusive_ns)
        return x->inclusive_ns < y->inclusive_ns ? 1 : -1;
    return x->self_ns < y->self_ns ? 1 : x->self_ns > y->self_ns ? -1 : 0;
}

void pi_python_time_finish_file(struct pi_analysis *a, const struct pi_reader *reader)
{
    struct pi_python_time *t = a->python_time;
    if (!t || !t->reading)
        return;
    t->reading = 0;
    struct pi_python_profile *p = &t->profiles[t->profile_count - 1];
    struct pi_u64_map *pending = p->pending;
    for (size_t i = 0; i < pending->capacity; i++) {
        const struct pi_u64_entry *e = &pending->slots[i];
        if (!e->key)
            continue;
        struct pi_call_site *site = pi_call_site_read(reader, e->key);
        if (site && site->python_count)
            account_stack(p, site, e->value[0], e->value[1]);
        else
            p->unknown_ns += e->value[0];
        pi_call_site_free(site);
    }
    pi_u64_map_free(pending);
    p->pending = NULL;
    /* the positions in the index are done with once the file is */
    pi_u64_map_free(p->index);
    p->index = NULL;
    if (p->function_count > 1) /* none: no array at all, which qsort may not be given */
        qsort(p->functions, p->function_count, sizeof(*p->functions), by_inclusive);
}

int pi_python_time_merge(struct pi_analysis *into, struct pi_analysis *from, size_t process)
{
    struct pi_python_time *f = from->python_time;
    if (!f)
        return 0;
    if (!into->python_time && !(into->python_time = calloc(1, sizeof(*into->python_time))))
        return -1;
    struct pi_python_time *t = into->python_time;
    for (size_t i = 0; i < f->profile_count; i++) {
        if (pi_array_room(&t->profiles, &t->profile_capacity, t->profile_count,
                          sizeof(*t->profiles), 8) != 0)
            return -1;
        t->profiles[t->profile_count] = f->profiles[i];
        t->profiles[t->profile_count++].process = process;
    }
    f->profile_count = 0; /* moved: @from's free leaves them */
    return 0;
}

int pi_python_import_frame(const char *file)
{
    return strncmp(file, "<frozen importlib.", 18) == 0;
}

const struct pi_python_profile *pi_python_time_of(const struct pi_analysis *a,
                                                  const struct pi_process_info *process)
{
    const struct pi_python_time *t = a->python_time;
    for (size_t i = 0; t && i < t->profile_count; i++)
        if (&a->processes[t->profiles[i].process] == process)
            return &t->profiles[i];
    return NULL;
}

void pi_python_time_free(struct pi_analysis *a)
{
    struct pi_python_time *t = a->python_time;
    if (!t)
        return;
    for (size_t i = 0; i < t->profile_count; i++) {
        struct pi_python_profile *p = &t->profiles[i];
        for (size_t f = 0; f < p->function_count; f++) {
            free(p->functions[f].file);
            free(p->functions[f].function);
        }
        free(p->functions);
        pi_call_tree_free(&p->tree);
        pi_u64_map_free(p->index);
        pi_u64_map_free(p->pending);
    }
    free(t->profiles);
    free(t);
    a->python_time = NULL;
}
