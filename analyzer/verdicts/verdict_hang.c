/*
 * verdict_hang.c - ranks that stopped making progress until the job ended:
 * some blocked in one call (a collective, by its Python line) for far longer
 * than a step, the others elsewhere. The ones elsewhere never came to it and
 * hold the rest; each is said first, with where it was.
 *
 * The place of a rank is what its main thread was blocked in when the
 * signal ended it (PI_REC_WAIT_IN_FLIGHT): its innermost user line and the
 * Python call it made there. A rank that was not blocked is placed by the
 * last time sample of its main thread.
 *
 * NCCL's collectives wait on the device: a waiting rank's host blocks in a
 * CUDA synchronisation, and the collective is told by its communicator's
 * call count. The ranks of one communicator (by its unique id's hash) call
 * its collectives in the same order, so the first call a rank never made
 * is the one the others wait for.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/gpu/collectives.h"
#include "analysis/sites/call_sites.h"
#include "analysis/sites/python_lines.h"
#include "process_words.h"
#include "verdict.h"

/* Blocked at least this long, and at least STEPS_HUNG of its steps: a hang, not a slow call. */
#define HANG_MIN_NS 500000000u
#define STEPS_HUNG 10
/* Ranks named one by one in a sentence; the rest are counted. */
#define RANKS_NAMED 8
#define RANKS_MAX 65536

struct placed {
    const struct pi_process_info *p;
    const struct pi_blocked_thread *blocked; /* its main thread's, NULL: not blocked */
    int stuck;                               /* blocked long enough to be hung */
};

/* The longest a rank's main thread may block in a healthy step. */
static uint64_t hang_threshold(const struct pi_process_info *p)
{
    uint64_t step = 0;
    if (p->steps.count)
        step = (uint64_t)pi_histogram_quantile((struct pi_histogram *)&p->steps.steady_ns, 0.5);
    return step * STEPS_HUNG > HANG_MIN_NS ? step * STEPS_HUNG : HANG_MIN_NS;
}

/* Whether @b is a wait that someone else was to end: a sleep ends by itself, and a thread
 * that sleeps for long is waiting on purpose, not hung. */
static int waits_for_another(const struct pi_blocked_thread *b)
{
    return b && b->what != PI_IN_FLIGHT_WAIT(PI_WAIT_SLEEP);
}

/* Whether two blocked main threads are in the same call at the same line. */
static int same_place(const struct pi_blocked_thread *a, const struct pi_blocked_thread *b)
{
    const struct pi_call_site *x = a->site, *y = b->site;
    if (!x || !y || !x->headline || !y->headline || !x->python_count || !y->python_count)
        return x == y && a->what == b->what;
    return strcmp(x->headline, y->headline) == 0 &&
           strcmp(x->frames[0].function ? x->frames[0].function : "",
                  y->frames[0].function ? y->frames[0].function : "") == 0;
}

/* "ranks 0, 1 and 3", the first RANKS_NAMED of @ranks[] whose @in is @want */
static void rank_list(const struct placed *ranks, const int *in, size_t count, int want,
                      char *out, size_t size)
{
    size_t named = 0, total = 0, at = 0;
    for (size_t i = 0; i < count; i++)
        total += in[i] == want;
    at += (size_t)snprintf(out, size, total == 1 ? "rank" : "ranks");
    for (size_t i = 0; i < count && at < size; i++) {
        if (in[i] != want)
            continue;
        if (named == RANKS_NAMED) {
            at += (size_t)snprintf(out + at, size - at, " and %zu more", total - named);
            break;
        }
        const char *join = named == 0 ? " " : named + 1 == total ? " and " : ", ";
        at += (size_t)snprintf(out + at, size - at, "%s%ld", join, ranks[i].p->rank);
        named++;
    }
}

/* The NCCL collective the waiting ranks wait for: on communicator @hash, call @seq. */
struct awaited {
    uint64_t hash;
    uint64_t seq;          /* the first call a rank that never came did not make */
    uint64_t missing_last; /* the last call on it of the first rank (in order) that never came */
    unsigned func;         /* its function, where a waiting rank's last call was it; 0: not known */
    int nranks;
};

/* @p's communicator of @hash that is still its own: the latest made with it */
static const struct pi_nccl_communicator *communicator(const struct pi_process_info *p,
                                                       uint64_t hash)
{
    const struct pi_collectives *c = p->collectives;
    const struct pi_nccl_communicator *found = NULL;
    for (size_t i = 0; c && i < c->comm_count; i++)
        if (c->comms[i].hash == hash && !c->comms[i].failed)
            found = &c->comms[i];
    return found;
}

/* The communicator on which the waiting ranks (@in[] 1) went furthest past a member that
 * never came (@in[] 0), into @out: 1, or 0 when none did (no NCCL, or gloo's waits). The
 * communicators looked at are those of the ranks that never came: a few, where the waiting
 * ones may be thousands. */
static int awaited_collective(const struct placed *ranks, const int *in, size_t count,
                              struct awaited *out)
{
    uint64_t widest = 0;
    for (size_t i = 0; i < count; i++) {
        const struct pi_collectives *c = in[i] ? NULL : ranks[i].p->collectives;
        for (size_t k = 0; c && k < c->comm_count; k++) {
            uint64_t hash = c->comms[k].hash, fewest = UINT64_MAX, most = 0, first = UINT64_MAX;
            if (!hash || communicator(ranks[i].p, hash) != &c->comms[k])
                continue;
            for (size_t j = 0; j < count; j++) {
                const struct pi_nccl_communicator *m = communicator(ranks[j].p, hash);
                if (m && in[j] && m->calls > most)
                    most = m->calls;
                if (m && !in[j]) {
                    fewest = m->calls < fewest ? m->calls : fewest;
                    first = first == UINT64_MAX ? m->calls : first;
                }
            }
            if (most <= fewest || most - fewest <= widest)
                continue;
            widest = most - fewest;
            *out = (struct awaited){hash, fewest + 1, first, 0, c->comms[k].nranks};
            for (size_t j = 0; j < count; j++) {
                const struct pi_nccl_communicator *m = communicator(ranks[j].p, hash);
                if (m && in[j] && m->calls == out->seq)
                    out->func = m->last_func;
            }
        }
    }
    return widest > 0;
}

/* Where a rank that never came was: what it was blocked in, or where it last ran; with the
 * last call it made on @nccl's communicator (NULL: none known). */
static void elsewhere(const struct placed *r, const struct awaited *nccl, char *out, size_t size)
{
    const struct pi_python_lines *lines = r->p->python_lines;
    const struct pi_nccl_communicator *m = nccl ? communicator(r->p, nccl->hash) : NULL;
    char last[80] = "";
    if (m)
        snprintf(last, sizeof(last), ", whose last call on that communicator was #%" PRIu64 ",",
                 m->calls);
    if (r->blocked) {
        char what[600];
        pi_blocked_words(r->blocked, what, sizeof(what));
        snprintf(out, size, "Rank %ld (pid %d)%s was in %s, for %.2f s", r->p->rank,
                 r->p->header.pid, last, what, (double)r->blocked->for_ns / 1e9);
    } else if (lines && lines->last.file && lines->last.function) {
        snprintf(out, size, "Rank %ld (pid %d)%s was running, last seen at %s:%u in %s",
                 r->p->rank, r->p->header.pid, last, lines->last.file, lines->last.line,
                 lines->last.function);
    } else {
        snprintf(out, size, "Rank %ld (pid %d)%s was running", r->p->rank, r->p->header.pid,
                 last);
    }
}

static int write_hang(struct placed *ranks, size_t count, struct pi_finding *f)
{
    /* the waiting: the largest group of hung ranks in one place, the lowest rank on a tie */
    static int in[RANKS_MAX];
    size_t best = count, best_size = 0;
    for (size_t i = 0; i < count; i++) {
        if (!ranks[i].stuck)
            continue;
        size_t size = 0;
        for (size_t j = 0; j < count; j++)
            size += ranks[j].stuck && same_place(ranks[i].blocked, ranks[j].blocked);
        if (size > best_size)
            best = i, best_size = size;
    }
    if (best == count)
        return 0;
    const struct pi_blocked_thread *wait = ranks[best].blocked;
    uint64_t waited = UINT64_MAX, since = UINT64_MAX;
    size_t missing = 0;
    long first_missing = -1;
    for (size_t i = 0; i < count; i++) {
        in[i] = ranks[i].stuck && same_place(wait, ranks[i].blocked);
        if (in[i]) {
            waited = ranks[i].blocked->for_ns < waited ? ranks[i].blocked->for_ns : waited;
            since = ranks[i].blocked->since_ns < since ? ranks[i].blocked->since_ns : since;
        } else if (missing++ == 0) {
            first_missing = ranks[i].p->rank;
        }
    }
    char waiting[200], what[600], absent[200];
    rank_list(ranks, in, count, 1, waiting, sizeof(waiting));
    rank_list(ranks, in, count, 0, absent, sizeof(absent));
    pi_blocked_words(wait, what, sizeof(what));
    f->kind = "hang";
    f->score = 1;
    f->pid = ranks[best].p->header.pid;
    f->ends_job = PI_ENDS_JOB_HUNG;
    f->ended_ns = since;
    if (wait->site && wait->site->headline)
        snprintf(f->line, sizeof(f->line), "%s", wait->site->headline);
    size_t at = 0;
    char *s = f->summary;
    size_t size = sizeof(f->summary);
    if (missing)
        at += (size_t)snprintf(s, size,
                               "%s never came to the call where %s (of %zu) waited %.2f s or more "
                               "until the job ended, in %s",
                               absent, waiting, count, (double)waited / 1e9, what);
    else
        at += (size_t)snprintf(s, size,
                               "every rank (%zu) waited %.2f s or more until the job ended, in %s: "
                               "the rank they wait for is none of the traced ones, or they wait "
                               "for each other",
                               count, (double)waited / 1e9, what);
    struct awaited nccl;
    int by_nccl = missing && awaited_collective(ranks, in, count, &nccl);
    if (by_nccl && at < size) {
        char call[64];
        snprintf(call, sizeof(call), "%s%s#%" PRIu64, nccl.func ? pi_nccl_func_name(nccl.func) : "",
                 nccl.func ? " " : "call ", nccl.seq);
        at += (size_t)snprintf(s + at, size - at,
                               ": NCCL %s of communicator %016" PRIx64 " (%d ranks), which "
                               "they made and %s never did",
                               call, nccl.hash, nccl.nranks, absent);
    }
    size_t said = 0;
    for (size_t i = 0; i < count && at < size && said < RANKS_NAMED; i++) {
        if (in[i])
            continue;
        char where[900];
        elsewhere(&ranks[i], by_nccl ? &nccl : NULL, where, sizeof(where));
        at += (size_t)snprintf(s + at, size - at, "%s%s", said++ ? "; " : ". ", where);
    }
    char printable[sizeof(f->summary)];
    pi_printable(printable, sizeof(printable), s, strlen(s));
    snprintf(f->summary, sizeof(f->summary), "%s", printable);
    snprintf(f->advice, sizeof(f->advice),
             "%s: each rank blocks in a collective until every rank has come to it. Fix what "
             "kept %s there (a branch only some ranks take, a loader that ran out of data on "
             "one rank, an exception caught on one rank); a shorter timeout in "
             "init_process_group(timeout=...) ends a hang with an error instead of idle devices",
             missing ? "the ranks that never came hold the others" : "a hang of every rank",
             missing ? "them" : "the ranks");
    pi_finding_evidence(f, "waiting_ranks", (double)best_size, "");
    pi_finding_evidence(f, "missing_ranks", (double)missing, "");
    if (missing)
        pi_finding_evidence(f, "first_missing_rank", (double)first_missing, "");
    pi_finding_evidence(f, "waited_s", (double)waited / 1e9, "s");
    if (by_nccl) {
        pi_finding_evidence(f, "collective_seq", (double)nccl.seq, "");
        pi_finding_evidence(f, "missing_rank_last_seq", (double)nccl.missing_last, "");
    }
    return 1;
}

/* A job of one process hangs when its main thread blocks this long, at least: a rank's
 * hang is told by the others that still ran, one process's by its wait alone. */
#define HANG_ALONE_MIN_NS 2000000000u

/* The training process's main thread blocked until the job ended, where it has no ranks. */
static int write_hang_alone(const struct pi_analysis *a, struct pi_finding *f)
{
    const struct pi_process_info *p = pi_training_process(a);
    const struct pi_blocked_thread *b = p ? pi_blocked_thread_of(p, (uint32_t)p->header.pid) : NULL;
    uint64_t threshold = p ? hang_threshold(p) : 0;
    if (!waits_for_another(b) ||
        b->for_ns < (threshold > HANG_ALONE_MIN_NS ? threshold : HANG_ALONE_MIN_NS))
        return 0;
    char what[600], printable[sizeof(f->summary)];
    pi_blocked_words(b, what, sizeof(what));
    f->kind = "hang";
    f->score = 1;
    f->pid = p->header.pid;
    f->ends_job = PI_ENDS_JOB_HUNG;
    f->ended_ns = b->since_ns;
    if (b->site && b->site->headline)
        snprintf(f->line, sizeof(f->line), "%s", b->site->headline);
    snprintf(printable, sizeof(printable),
             "the main thread of pid %d (the training process) was blocked for %.2f s, until the "
             "job ended, in %s",
             p->header.pid, (double)b->for_ns / 1e9, what);
    pi_printable(f->summary, sizeof(f->summary), printable, strlen(printable));
    snprintf(f->advice, sizeof(f->advice),
             "find who was to end that wait: the thread or process that holds the lock, writes "
             "the pipe, or answers the socket (profinject stacks --all PID on the running job "
             "shows every thread's call and what it is blocked in)");
    pi_finding_evidence(f, "waited_s", (double)b->for_ns / 1e9, "s");
    return 1;
}

int pi_verdict_hang(const struct pi_analysis *a, struct pi_finding *out)
{
    static struct placed ranks[RANKS_MAX];
    size_t count = 0, stuck = 0;
    for (size_t i = 0; i < a->process_count && count < RANKS_MAX; i++) {
        const struct pi_process_info *p = &a->processes[i];
        if (p->rank < 0)
            continue;
        const struct pi_blocked_thread *b = pi_blocked_thread_of(p, (uint32_t)p->header.pid);
        int hung = waits_for_another(b) && b->for_ns >= hang_threshold(p);
        ranks[count++] = (struct placed){p, b, hung};
        stuck += hung;
    }
    if (count < 2)
        return count == 0 ? write_hang_alone(a, out) : 0;
    return stuck ? write_hang(ranks, count, out) : 0;
}
