/* python_lines.c - the user's lines that held a main thread (see python_lines.h). */
#include "python_lines.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/common/u64_map.h"
#include "analysis/sites/call_sites.h"

void pi_python_lines_event(struct pi_process_info *p, const struct pi_event *ev)
{
    struct pi_python_lines *l = p->python_lines;
    if (!l && !(l = p->python_lines = calloc(1, sizeof(*l))))
        return;
    if (!l->pending && !(l->pending = pi_u64_map_new()))
        return;
    l->sampled_ns += ev->dur_ns;
    uint64_t cpu = 0;
    if (ev->rec.flags & PI_PY_SAMPLE_CPU) {
        cpu = ev->rec.arg[2];
        l->sampled_cpu_ns += cpu;
    } else {
        l->cpu_unknown_ns += ev->dur_ns;
    }
    if (!ev->rec.arg[0])
        return;
    if (ev->ts_ns + ev->dur_ns >= l->last_ns) {
        l->last_stack = ev->rec.arg[0];
        l->last_ns = ev->ts_ns + ev->dur_ns;
    }
    struct pi_u64_entry *e = pi_u64_map_put(l->pending, ev->rec.arg[0]);
    if (e) {
        e->value[0] += ev->dur_ns;
        e->value[1] += cpu;
    }
}

/* Where a multiprocessing child's own code starts: the frames outside it are its parent's,
 * which the fork copied (a DataLoader worker's <module> line that made the iterator). */
static int process_start(const struct pi_site_frame *f)
{
    size_t n = strlen(f->file), m = sizeof("multiprocessing/process.py") - 1;
    return strcmp(f->function, "BaseProcess._bootstrap") == 0 && n >= m &&
           strcmp(f->file + n - m, "multiprocessing/process.py") == 0;
}

/* The innermost Python frame of the user's own code, NULL when all are libraries' (or the
 * parent's, in a fork child). */
static const struct pi_site_frame *users_frame(const struct pi_call_site *site)
{
    for (size_t i = 0; i < site->python_count; i++) {
        if (!site->frames[i].python)
            continue;
        if (process_start(&site->frames[i]))
            return NULL;
        if (!pi_call_site_library_file(site->frames[i].file))
            return &site->frames[i];
    }
    return NULL;
}

/* Add @ns to the line of @frame; a process's lines are few: a search is enough. */
static void add_line(struct pi_python_lines *l, const struct pi_site_frame *frame, uint64_t ns,
                     uint64_t cpu_ns)
{
    for (size_t i = 0; i < l->count; i++) {
        struct pi_python_line *x = &l->lines[i];
        if (x->line == frame->line && strcmp(x->file, frame->file) == 0 &&
            strcmp(x->function, frame->function) == 0) {
            x->ns += ns;
            x->cpu_ns += cpu_ns;
            return;
        }
    }
    if (pi_array_room(&l->lines, &l->capacity, l->count, sizeof(*l->lines), 16) != 0)
        return;
    struct pi_python_line *x = &l->lines[l->count];
    x->file = strdup(frame->file);
    x->function = strdup(frame->function);
    x->line = frame->line;
    x->ns = ns;
    x->cpu_ns = cpu_ns;
    if (!x->file || !x->function) {
        free(x->file);
        free(x->function);
        return;
    }
    l->count++;
}

static int by_time(const void *a, const void *b)
{
    const struct pi_python_line *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

void pi_python_lines_finish_file(struct pi_process_info *p, const struct pi_reader *reader)
{
    struct pi_python_lines *l = p->python_lines;
    if (!l || !l->pending)
        return;
    struct pi_u64_map *pending = l->pending;
    for (size_t i = 0; i < pending->capacity; i++) {
        const struct pi_u64_entry *e = &pending->slots[i];
        if (!e->key)
            continue;
        struct pi_call_site *site = pi_call_site_read(reader, e->key);
        const struct pi_site_frame *frame = site ? users_frame(site) : NULL;
        if (frame)
            add_line(l, frame, e->value[0], e->value[1]);
        pi_call_site_free(site);
    }
    pi_u64_map_free(pending);
    l->pending = NULL;
    struct pi_call_site *last = l->last_stack ? pi_call_site_read(reader, l->last_stack) : NULL;
    const struct pi_site_frame *frame = last ? users_frame(last) : NULL;
    if (frame && !l->last.file) {
        l->last = (struct pi_python_line){strdup(frame->file), strdup(frame->function), frame->line,
                                          0, 0};
    }
    pi_call_site_free(last);
    if (l->count > 1)
        qsort(l->lines, l->count, sizeof(*l->lines), by_time);
}

void pi_python_lines_free(struct pi_process_info *p)
{
    struct pi_python_lines *l = p->python_lines;
    if (!l)
        return;
    for (size_t i = 0; i < l->count; i++) {
        free(l->lines[i].file);
        free(l->lines[i].function);
    }
    free(l->lines);
    free(l->last.file);
    free(l->last.function);
    pi_u64_map_free(l->pending);
    free(l);
    p->python_lines = NULL;
}
