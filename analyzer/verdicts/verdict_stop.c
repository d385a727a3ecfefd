/*
 * verdict_stop.c - a job stopped from outside (analysis/pass/job_stop.h)
 * says so in one finding, before any other: who sent what, when, after
 * how many steps, how the processes it reached ended, and what each was
 * doing then. It is no death, and no advice follows from it: the findings
 * after it judge the part of the job that ran.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "analysis/pass/child_status.h"
#include "analysis/pass/job_stop.h"
#include "process_words.h"
#include "signal_words.h"
#include "verdict.h"

/* processes whose whereabouts the finding lists; the rest are counted */
#define WHEREABOUTS_LISTED 4

/* How @p ended after its stop signal, in words after "it ": "", when the signal ended it. */
static void ending(const struct pi_analysis *a, const struct pi_process_info *p, char *out,
                   size_t size)
{
    out[0] = '\0';
    const struct pi_child_status *reaped = pi_child_status_of(a, p);
    if (p->ended && p->end_reason == PI_END_SIGNAL)
        snprintf(out, size, "ended by %s", pi_signal_name((long)p->end_status));
    else if (p->ended)
        snprintf(out, size, "exited with status %" PRId64, p->end_status);
    else if (reaped && WIFSIGNALED(reaped->status))
        snprintf(out, size, "was killed by %s, as its parent's wait said",
                 pi_signal_name(WTERMSIG(reaped->status)));
    else if (reaped)
        snprintf(out, size, "exited with status %d, as its parent's wait said",
                 WEXITSTATUS(reaped->status));
    else
        snprintf(out, size, "ended without its end record (killed outright)");
}

/* "pid N (role or command)" of @p into @out. */
static void naming(const struct pi_process_info *p, const struct pi_process_info *training,
                   char *out, size_t size)
{
    char role[32], command[160];
    const char *is = pi_process_role(p, training, role, sizeof(role));
    const char *text = p->command ? p->command : "?";
    pi_printable(command, sizeof(command), text, strlen(text));
    snprintf(out, size, "pid %d (%s)", p->header.pid, is ? is : command);
}

/* The stopped processes other than the first, counted by how the stop reached them. */
static void the_others(const struct pi_analysis *a, struct pi_finding *f, char *out, size_t size)
{
    size_t counted[PI_STOPPED_AFTER + 1] = {0};
    for (size_t i = 0; i < a->process_count; i++)
        if (&a->processes[i] != a->stop.first)
            counted[a->processes[i].stopped]++;
    static const char *const how[] = {
        [PI_STOPPED_FROM_OUTSIDE] = "got the same kind of signal from outside at the same time",
        [PI_STOPPED_BY_THE_JOB] = "were signalled by a stopped process of the job (a launcher "
                                  "stopping its workers)",
        [PI_STOPPED_AFTER] = "ended after their parent was stopped",
    };
    out[0] = '\0';
    size_t at = 0;
    for (int k = PI_STOPPED_FROM_OUTSIDE; k <= PI_STOPPED_AFTER && at < size; k++)
        if (counted[k])
            at += (size_t)snprintf(out + at, size - at, "%s%zu %s", at ? ", " : "; with it ",
                                   counted[k], how[k]);
    pi_finding_evidence(f, "processes_stopped", (double)a->stop.processes, "");
}

/* What the stopped processes were doing at the end, the first one first. */
static void whereabouts(const struct pi_analysis *a, const struct pi_process_info *training,
                        struct pi_finding *f, char *out, size_t size)
{
    size_t at = 0, listed = 0, more = 0;
    out[0] = '\0';
    for (size_t pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < a->process_count; i++) {
            const struct pi_process_info *p = &a->processes[i];
            if (!p->stopped || (pass == 0) != (p == a->stop.first))
                continue;
            if (listed == WHEREABOUTS_LISTED) {
                more++;
                continue;
            }
            char name[256], where[700], how[160];
            struct pi_finding scratch = {0};
            naming(p, training, name, sizeof(name));
            ending(a, p, how, sizeof(how));
            /* the first's own line and figures are the finding's */
            pi_process_whereabouts(p, p->fatal.site, p->fatal.tid, 1, pass == 0 ? f : &scratch,
                                   where, sizeof(where));
            if (at < size)
                at += (size_t)snprintf(out + at, size - at, ". %s %s%s", name, how, where);
            listed++;
        }
    if (more && at < size)
        snprintf(out + at, size - at, ". And %zu more", more);
}

int pi_verdict_stop(const struct pi_analysis *a, struct pi_finding *f)
{
    const struct pi_job_stop *stop = &a->stop;
    if (!stop->first)
        return 0;
    const struct pi_process_info *p = stop->first, *training = pi_training_process(a);
    const struct pi_fatal_signal *s = stop->signal;
    f->kind = "stopped";
    f->score = 1;
    f->ends_job = PI_ENDS_JOB_STOPPED;
    f->pid = p->header.pid;
    f->ended_ns = stop->ns;
    double at_s = (double)(stop->ns - a->base_ns) / 1e9;
    char origin[320], name[256], steps[160] = "", handled[80] = "", others[400], where[1000];
    if ((s->flags & PI_SIGNAL_SENT) && (uint32_t)s->detail == (uint32_t)p->header.pid)
        snprintf(origin, sizeof(origin), " (raised again by Python after its KeyboardInterrupt: "
                                         "the first one's sender was not recorded)");
    else
        pi_signal_origin_of(a, p, s, origin, sizeof(origin));
    naming(p, training, name, sizeof(name));
    if (training && training->steps.count) {
        uint64_t done = pi_steps_started_by(training, stop->ns);
        snprintf(steps, sizeof(steps), ", after %" PRIu64 " of %s's %" PRIu64 " steps", done,
                 pi_loop_name(training), training->steps.count);
        pi_finding_evidence(f, "steps_done", (double)done, "");
    }
    if (s->flags & PI_SIGNAL_HANDLED)
        snprintf(handled, sizeof(handled), "; its own handler took it");
    the_others(a, f, others, sizeof(others));
    whereabouts(a, training, f, where, sizeof(where));
    snprintf(f->summary, sizeof(f->summary),
             "the job was stopped from outside: %s%s reached %s %.2f s into the job%s%s%s%s",
             pi_signal_name(s->signo), origin[0] ? origin : " (its sender unknown)", name, at_s,
             steps, handled, others, where);
    snprintf(f->advice, sizeof(f->advice),
             "not a failure: the job ran until it was stopped, and the findings after this one "
             "judge the %.1f s it ran", at_s);
    pi_finding_evidence(f, "signal", s->signo, "");
    pi_finding_evidence(f, "stopped_at_s", at_s, "s");
    pi_finding_evidence(f, "handled", (s->flags & PI_SIGNAL_HANDLED) != 0, "");
    if (s->flags & PI_SIGNAL_SENT) {
        pi_finding_evidence(f, "sender_pid", (double)(uint32_t)s->detail, "");
        pi_finding_evidence(f, "sender_uid", (double)(uint32_t)(s->detail >> 32), "");
    }
    pi_finding_evidence(f, "signal_code", (double)s->code, "");
    return 1;
}
