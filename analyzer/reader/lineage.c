/* lineage.c - fork children's inherited ids, from their parents' files (see lineage.h). */
#include "lineage.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_reader.h"

enum parent_state { PARENT_NEW, PARENT_LOADING, PARENT_LOADED, PARENT_FAILED };

/* A parent's file, and what was read of its definitions. */
struct parent {
    char *path;
    uint32_t want_below;      /* the most any of its children needs */
    uint32_t loaded_below;    /* what was read for */
    struct pi_reader *reader; /* PARENT_LOADED: its definitions, kept */
    int state;                /* enum parent_state */
    int partial;              /* loaded, but not all that was asked for was found */
    char why[512];            /* PARENT_FAILED, or partial: the reason */
};

struct pi_lineage {
    char **inputs;
    size_t input_count;
    struct parent **parents;
    size_t parent_count, parent_capacity;
    /* readers loaded for fewer ids than a later child needed: children may hold them */
    struct pi_reader **retired;
    size_t retired_count;
    pthread_mutex_t lock; /* recursive: loading a parent attaches it to its own parent */
};

struct pi_lineage *pi_lineage_new(char *const *paths, size_t count)
{
    struct pi_lineage *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->inputs = calloc(count ? count : 1, sizeof(*l->inputs));
    if (!l->inputs) {
        free(l);
        return NULL;
    }
    for (size_t i = 0; i < count; i++)
        if ((l->inputs[l->input_count] = strdup(paths[i])) != NULL)
            l->input_count++;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&l->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    return l;
}

void pi_lineage_free(struct pi_lineage *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->parent_count; i++) {
        pi_reader_close(l->parents[i]->reader);
        free(l->parents[i]->path);
        free(l->parents[i]);
    }
    for (size_t i = 0; i < l->retired_count; i++)
        pi_reader_close(l->retired[i]);
    for (size_t i = 0; i < l->input_count; i++)
        free(l->inputs[i]);
    free(l->retired);
    free(l->parents);
    free(l->inputs);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The parent's file of @child: an input of its name, else that name beside the child. */
static int parent_path(const struct pi_lineage *l, const struct pi_reader *child, char *out,
                       size_t size)
{
    const char *name = pi_reader_info(child)->parent_file;
    for (size_t i = 0; i < l->input_count; i++)
        if (strcmp(base_name(l->inputs[i]), name) == 0) {
            snprintf(out, size, "%s", l->inputs[i]);
            return 0;
        }
    const char *path = pi_reader_path(child);
    int dir = (int)(base_name(path) - path);
    int n = snprintf(out, size, "%.*s%s", dir, path, name);
    return n > 0 && (size_t)n < size && access(out, R_OK) == 0 ? 0 : -1;
}

static struct parent *parent_entry(struct pi_lineage *l, const char *path)
{
    for (size_t i = 0; i < l->parent_count; i++)
        if (strcmp(l->parents[i]->path, path) == 0)
            return l->parents[i];
    if (l->parent_count == l->parent_capacity) {
        size_t capacity = l->parent_capacity ? 2 * l->parent_capacity : 8;
        struct parent **grown = realloc(l->parents, capacity * sizeof(*grown));
        if (!grown)
            return NULL;
        l->parents = grown;
        l->parent_capacity = capacity;
    }
    struct parent *e = calloc(1, sizeof(*e));
    if (!e || !(e->path = strdup(path))) {
        free(e);
        return NULL;
    }
    l->parents[l->parent_count++] = e;
    return e;
}

void pi_lineage_want(struct pi_lineage *l, const struct pi_reader *child)
{
    uint32_t bound = pi_reader_info(child)->inherited_below;
    char path[4096];
    if (!bound || parent_path(l, child, path, sizeof(path)) != 0)
        return;
    pthread_mutex_lock(&l->lock);
    struct parent *e = parent_entry(l, path);
    if (e && bound > e->want_below)
        e->want_below = bound;
    pthread_mutex_unlock(&l->lock);
}

/*
 * Read @e's file until every id it defines below @need is defined (a parent
 * writes them in the order it made them, at its next flush after the fork,
 * so this is the start of its file), or until a clock sync says that every id
 * below @need is defined or held back, then keep only the definitions. Its
 * own inherited ids are resolved through its parent first.
 */
static void load(struct pi_lineage *l, struct parent *e, uint32_t need)
{
    char error[600];
    e->state = PARENT_LOADING;
    struct pi_reader *r = pi_reader_open(e->path, error, sizeof(error));
    if (!r) {
        snprintf(e->why, sizeof(e->why), "%.500s", error);
        e->state = PARENT_FAILED;
        return;
    }
    char why[512];
    if (pi_lineage_attach(l, r, why, sizeof(why)) != 0) {
        e->partial = 1;
        snprintf(e->why, sizeof(e->why), "of its grandparent's: %.400s", why);
    }
    uint32_t own_from = pi_reader_info(r)->inherited_below ? pi_reader_info(r)->inherited_below : 1;
    uint32_t missing = need > own_from ? need - own_from : 0;
    uint8_t *seen = calloc(missing ? missing : 1, 1);
    struct pi_event ev;
    int got = PI_READ_EVENT;
    while (seen && missing && (got = pi_reader_next(r, &ev)) == PI_READ_EVENT) {
        uint64_t id = ev.rec.arg[0];
        /* every id below it is defined or held back (a quiet path, format 12): the ids still
         * unseen below @need are held, and the child defines those it names */
        if (ev.rec.kind == PI_REC_CLOCK_SYNC && ev.rec.arg[2] >= need) {
            missing = 0;
            break;
        }
        if (pi_record_is_definition(ev.rec.kind) && id >= own_from && id < need &&
            !seen[id - own_from]) {
            seen[id - own_from] = 1;
            missing--;
        }
    }
    free(seen);
    if (missing && !e->partial) {
        e->partial = 1;
        if (got == PI_READ_ERROR)
            snprintf(e->why, sizeof(e->why), "%.500s", pi_reader_error(r));
        else
            snprintf(e->why, sizeof(e->why),
                     "%u of them are not in %.300s (it ends first: its process ended before its "
                     "writer wrote them)",
                     missing, e->path);
    }
    pi_reader_keep_definitions(r);
    e->reader = r;
    e->loaded_below = need;
    e->state = PARENT_LOADED;
}

static int attach_locked(struct pi_lineage *l, struct pi_reader *child, char *why,
                         size_t why_size)
{
    const struct pi_trace_info *info = pi_reader_info(child);
    char path[4096];
    if (parent_path(l, child, path, sizeof(path)) != 0) {
        snprintf(why, why_size, "its parent's trace %s is neither among the inputs nor beside it",
                 info->parent_file);
        return -1;
    }
    struct parent *e = parent_entry(l, path);
    if (!e) {
        snprintf(why, why_size, "out of memory");
        return -1;
    }
    uint32_t need = info->inherited_below > e->want_below ? info->inherited_below : e->want_below;
    e->want_below = need;
    if (e->state == PARENT_LOADING) {
        snprintf(why, why_size, "its parents' traces name each other in a loop (%s)", path);
        return -1;
    }
    if (e->state == PARENT_LOADED && e->loaded_below < need) { /* read further, anew */
        struct pi_reader **grown =
            realloc(l->retired, (l->retired_count + 1) * sizeof(*grown));
        if (grown) {
            l->retired = grown;
            l->retired[l->retired_count++] = e->reader;
            e->reader = NULL;
            e->partial = 0;
            e->state = PARENT_NEW;
        }
    }
    if (e->state == PARENT_NEW)
        load(l, e, need);
    if (e->state == PARENT_FAILED) {
        snprintf(why, why_size, "%.500s", e->why);
        return -1;
    }
    pi_reader_inherit(child, e->reader);
    if (e->partial) {
        snprintf(why, why_size, "%.500s", e->why);
        return -1;
    }
    return 0;
}

int pi_lineage_attach(struct pi_lineage *l, struct pi_reader *child, char *why, size_t why_size)
{
    if (!pi_reader_info(child)->inherited_below)
        return 0;
    pthread_mutex_lock(&l->lock);
    int result = attach_locked(l, child, why, why_size);
    pthread_mutex_unlock(&l->lock);
    return result;
}
