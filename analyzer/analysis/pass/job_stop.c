/* job_stop.c - see job_stop.h. */
#include "job_stop.h"

#include <signal.h>
#include <string.h>

#include "child_status.h"

/* a process group's Ctrl-C, or a launcher passing the signal on, reaches its processes
 * within this of one another */
#define STOP_TOGETHER_NS 2000000000ull

/* Python's own exit after a KeyboardInterrupt: it sets SIGINT's default action and raises it */
static int keyboard_interrupt(const struct pi_process_info *p)
{
    return p->stderr_tail && strstr(p->stderr_tail, "KeyboardInterrupt") != NULL;
}

static int sent_by(const struct pi_fatal_signal *s, int pid)
{
    return (s->flags & PI_SIGNAL_SENT) && (uint32_t)s->detail == (uint32_t)pid;
}

const struct pi_fatal_signal *pi_stop_signal_of(const struct pi_process_info *p)
{
    if (p->stop.seen)
        return &p->stop;
    const struct pi_fatal_signal *f = &p->fatal;
    if (!p->ended || p->end_reason != PI_END_SIGNAL || !f->seen || !pi_signal_is_stop(f->signo))
        return NULL;
    if (sent_by(f, p->header.pid) && !(f->signo == SIGINT && keyboard_interrupt(p)))
        return NULL; /* raised by itself: its own doing */
    return f;
}

/* The traced process that sent @s, or NULL: from outside the job (a terminal, a person, a
 * scheduler, an untraced launcher) or unknown */
static const struct pi_process_info *sender_in_job(const struct pi_analysis *a,
                                                   const struct pi_process_info *p,
                                                   const struct pi_fatal_signal *s)
{
    if (!(s->flags & PI_SIGNAL_SENT) || sent_by(s, p->header.pid))
        return NULL;
    return pi_process_by_pid(a, (int)(uint32_t)s->detail);
}

static uint64_t distance(uint64_t x, uint64_t y)
{
    return x > y ? x - y : y - x;
}

/* Whether @p ended with the stop at @ns: how (enum pi_stopped_how), or 0 */
static int ended_with_stop(const struct pi_analysis *a, const struct pi_process_info *p,
                           uint64_t ns)
{
    const struct pi_fatal_signal *s = pi_stop_signal_of(p);
    if (s) {
        const struct pi_process_info *sender = sender_in_job(a, p, s);
        if (!sender)
            return distance(s->ns, ns) <= STOP_TOGETHER_NS ? PI_STOPPED_FROM_OUTSIDE : 0;
        return sender->stopped && s->ns + STOP_TOGETHER_NS >= ns ? PI_STOPPED_BY_THE_JOB : 0;
    }
    const struct pi_process_info *parent = pi_process_by_pid(a, p->header.ppid);
    if (!parent || !parent->stopped || p == parent)
        return 0;
    const struct pi_child_status *reaped = pi_child_status_of(a, p);
    uint64_t end = reaped ? reaped->ns : p->end_ns;
    return (p->ended || pi_process_unended(p) || reaped) && end >= ns ? PI_STOPPED_AFTER : 0;
}

void pi_job_stop_find(struct pi_analysis *a)
{
    memset(&a->stop, 0, sizeof(a->stop));
    /* the first stop from outside that reached the top of the tree */
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        const struct pi_fatal_signal *s = pi_stop_signal_of(p);
        if (!s || sender_in_job(a, p, s) || pi_process_by_pid(a, p->header.ppid))
            continue;
        if (!a->stop.first || s->ns < a->stop.ns) {
            a->stop.first = p;
            a->stop.signal = s;
            a->stop.ns = s->ns;
        }
    }
    if (!a->stop.first)
        return;
    /* then whatever it reached, through the job's own processes too: until nothing changes */
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < a->process_count; i++) {
            struct pi_process_info *p = &a->processes[i];
            int how = p->stopped ? 0 : ended_with_stop(a, p, a->stop.ns);
            if (how) {
                p->stopped = how;
                a->stop.processes++;
                changed = 1;
            }
        }
    }
}
