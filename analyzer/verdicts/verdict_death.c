/*
 * verdict_death.c - a process of the job that died says so first. A job
 * that died is why most people open a profiler: how fast it went matters
 * only after why it stopped. The processes judged are the job's own (the
 * training process, its fork children such as DataLoader workers, the
 * ranks): a helper program that exits non-zero (a probe, a compiler
 * check) is no death of the job.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "analysis/common/series.h"
#include "analysis/gpu/gpu_analysis.h"
#include "analysis/host/host_memory.h"
#include "analysis/pass/child_status.h"
#include "analysis/sites/call_sites.h"
#include "process_words.h"
#include "signal_words.h"
#include "verdict.h"

#define MAX_DEATHS 4

#define MiB 1048576.0

/* The device allocations of @p that failed, in words after @prefix, into @out; evidence
 * into @f. 0 when none failed. */
static int device_failures(const struct pi_analysis *a, const struct pi_process_info *p,
                           struct pi_finding *f, const char *prefix, char *out, size_t size)
{
    const struct pi_gpu_memory *m = p->gpu;
    if (!m || !m->failure_count)
        return 0;
    const struct pi_device_failure *first = &m->failures[0];
    int at = snprintf(out, size,
                      "%s%" PRIu64 " device allocation%s failed, the first a request of %.0f MiB "
                      "at %.2f s at %s, with %.0f MiB held by the process",
                      prefix, m->failures_total, m->failures_total == 1 ? "" : "s",
                      (double)first->bytes / MiB, (double)(first->ns - a->base_ns) / 1e9,
                      pi_site_headline(&first->site), (double)first->held_bytes / MiB);
    if (first->has_device_memory && at > 0 && (size_t)at < size)
        at += snprintf(out + at, size - (size_t)at, " and %.0f MiB free of the device's %.0f MiB",
                       (double)first->free_bytes / MiB, (double)first->total_bytes / MiB);
    if (first->retried && at > 0 && (size_t)at < size)
        at += snprintf(out + at, size - (size_t)at,
                       "; it then freed %.0f MiB (a caching allocator emptying its cache) and asked "
                       "again: %s",
                       (double)first->freed_before_retry / MiB,
                       first->retry_failed ? "that failed too" : "that worked");
    if (p->growth.by_steps && p->growth.device_bytes_per_step > 0 && at > 0 && (size_t)at < size)
        snprintf(out + at, size - (size_t)at, "; its device memory grew %.1f MiB a step from step %" PRIu64,
                 p->growth.device_bytes_per_step / MiB, p->growth.device_start_step);
    f->cause = "device-out-of-memory";
    pi_finding_evidence(f, "failed_allocations", (double)m->failures_total, "");
    pi_finding_evidence(f, "request_mib", (double)first->bytes / MiB, "MiB");
    pi_finding_evidence(f, "held_mib", (double)first->held_bytes / MiB, "MiB");
    if (first->has_device_memory) {
        pi_finding_evidence(f, "device_free_mib", (double)first->free_bytes / MiB, "MiB");
        pi_finding_evidence(f, "device_total_mib", (double)first->total_bytes / MiB, "MiB");
    }
    if (first->retried)
        pi_finding_evidence(f, "freed_before_retry_mib", (double)first->freed_before_retry / MiB, "MiB");
    return 1;
}

#define DEVICE_ADVICE                                                                             \
    "the device is full at the peak: a smaller batch, activation checkpointing, bfloat16, "     \
    "fewer tensors kept across steps (losses kept as tensors, lists of outputs); "              \
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True where the cache is fragmented"

/* A process's memory cgroup counting an OOM kill after @p's last record, within a few seconds
 * (the others read the count with their samples, every 50 ms to 100 ms while they run) */
#define OOM_SEEN_WITHIN_NS 5000000000ull

static const struct pi_oom_rise *oom_kill_of(const struct pi_analysis *a,
                                             const struct pi_process_info *p, int *seen_by)
{
    const struct pi_oom_rise *best = NULL;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *q = &a->processes[i];
        if (p->cgroup && q->cgroup && strcmp(p->cgroup, q->cgroup) != 0)
            continue;
        for (uint32_t k = 0; k < q->oom.rise_count; k++) {
            const struct pi_oom_rise *r = &q->oom.rises[k];
            if (r->ns >= p->end_ns && r->ns - p->end_ns <= OOM_SEEN_WITHIN_NS &&
                (!best || r->ns < best->ns)) {
                best = r;
                *seen_by = q->header.pid;
            }
        }
    }
    return best;
}

/* Who sent @p's fatal signal, as numbers. */
static void signal_evidence(const struct pi_process_info *p, struct pi_finding *f)
{
    if (!p->fatal.seen)
        return;
    pi_finding_evidence(f, "signal_code", (double)p->fatal.code, "");
    if (p->fatal.flags & PI_SIGNAL_SENT) {
        pi_finding_evidence(f, "sender_pid", (double)(uint32_t)p->fatal.detail, "");
        pi_finding_evidence(f, "sender_uid", (double)(uint32_t)(p->fatal.detail >> 32), "");
    }
    if (p->fatal.site)
        pi_finding_evidence(f, "signal_frames", (double)p->fatal.site->count, "");
}

/*
 * How @p ended, in words, or 0 when it ended well. Without an end record
 * it died where no code runs (SIGKILL, the OOM killer), unless its image
 * went on in an exec, or it was recorded by windows that closed while it
 * ran (attach, capture windows): then it may well be running still.
 */
static int how_it_ended(const struct pi_analysis *a, const struct pi_process_info *p,
                        struct pi_finding *f, char *how, size_t size)
{
    int signal = p->ended && p->end_reason == PI_END_SIGNAL;
    if (signal || (p->ended && p->end_status != 0 && p->end_status != -1)) {
        char origin[320] = "", frames[600] = "";
        if (signal) {
            pi_signal_origin(a, p, origin, sizeof(origin));
            pi_signal_frames(p, 3, frames, sizeof(frames));
            signal_evidence(p, f);
        }
        int at = signal ? snprintf(how, size, "was killed by signal %" PRId64 " (%s)%s%s%s",
                                   p->end_status, pi_signal_name((long)p->end_status), origin,
                                   frames[0] ? " in " : "", frames)
                        : snprintf(how, size, "exited with status %" PRId64, p->end_status);
        if (at > 0 && (size_t)at < size)
            device_failures(a, p, f, " after out of device memory: ", how + at, size - (size_t)at);
        return 1;
    }
    if (!pi_process_unended(p))
        return 0;
    int seen_by = 0;
    const struct pi_oom_rise *oom = oom_kill_of(a, p, &seen_by);
    if (oom) {
        char limit[64] = "no limit";
        if (oom->limit_bytes)
            snprintf(limit, sizeof(limit), "limit %.0f MiB", (double)oom->limit_bytes / MiB);
        /* RSS, sampled every 50 ms to 100 ms; PSS is read a second or more apart and would
         * miss the last second's growth, which is what the kill was about */
        struct pi_tree_memory tree = pi_host_memory_at(a, p->end_ns);
        snprintf(how, size,
                 "was killed by the kernel's OOM killer: its memory cgroup (%s; %.0f MiB in use once it was gone) "
                 "counted an OOM kill %.2f s after its last record (seen by pid %d); it held "
                 "%.0f MiB resident then, growing %.1f MiB/s over its life, and the %" PRIu32
                 " traced processes alive then %.0f MiB (their RSS: pages they share counted in each)",
                 limit, (double)oom->usage_bytes / MiB, (double)(oom->ns - p->end_ns) / 1e9,
                 seen_by, (double)p->rss_last / MiB, pi_series_slope(&p->rss, 0) / MiB,
                 tree.alive, (double)tree.rss_bytes / MiB);
        f->cause = "oom-killer";
        pi_finding_evidence(f, "oom_kills", (double)oom->kills, "");
        pi_finding_evidence(f, "cgroup_limit_mib", (double)oom->limit_bytes / MiB, "MiB");
        pi_finding_evidence(f, "cgroup_usage_mib", (double)oom->usage_bytes / MiB, "MiB");
        pi_finding_evidence(f, "rss_mib", (double)p->rss_last / MiB, "MiB");
        pi_finding_evidence(f, "tree_rss_mib", (double)tree.rss_bytes / MiB, "MiB");
        pi_finding_evidence(f, "processes_alive", (double)tree.alive, "");
        return 1;
    }
    const struct pi_child_status *reaped = pi_child_status_of(a, p);
    if (reaped && WIFSIGNALED(reaped->status)) {
        snprintf(how, size,
                 "was killed by signal %d (%s), as its parent's wait said %.2f s after its last "
                 "record (it wrote no end record of its own: nothing of the process ran)%s",
                 WTERMSIG(reaped->status), pi_signal_name(WTERMSIG(reaped->status)),
                 (double)(reaped->ns - p->end_ns) / 1e9,
                 WTERMSIG(reaped->status) == SIGKILL
                     ? "; no OOM kill was counted in a memory cgroup a process of the job read: "
                       "another process sent SIGKILL, or the host's OOM killer outside one"
                     : "");
        pi_finding_evidence(f, "signal", WTERMSIG(reaped->status), "");
        pi_finding_evidence(f, "reaped_by_parent", 1, "");
        return 1;
    }
    if (reaped && WEXITSTATUS(reaped->status) == 0)
        return 0; /* its end record was lost, not the process */
    if (reaped) {
        snprintf(how, size,
                 "exited with status %d, as its parent's wait said (it wrote no end record of "
                 "its own)",
                 WEXITSTATUS(reaped->status));
        pi_finding_evidence(f, "exit_status", WEXITSTATUS(reaped->status), "");
        pi_finding_evidence(f, "reaped_by_parent", 1, "");
        return 1;
    }
    snprintf(how, size,
             "stopped without an end record%s: killed by SIGKILL or the kernel's OOM killer "
             "(neither leaves the process a moment to write), unless it was still running "
             "when its trace was read%s",
             p->truncated ? " in a file cut mid-frame" : "",
             pi_process_by_pid(a, p->header.ppid) ? " (its parent's trace holds no wait that reaped it)"
                                                 : "");
    return 1;
}

/* The last lines of @p's stderr that say something, at most @lines of them, joined by " | ". */
static void last_words(const struct pi_process_info *p, char *out, size_t size, int lines)
{
    out[0] = '\0';
    if (!p->stderr_tail)
        return;
    const char *tail = p->stderr_tail, *end = tail + strlen(tail), *start = end;
    for (int found = 0; start > tail && found < lines;) {
        const char *line_end = start;
        while (line_end > tail && (line_end[-1] == '\n' || line_end[-1] == ' '))
            line_end--;
        const char *line = line_end;
        while (line > tail && line[-1] != '\n')
            line--;
        if (line == line_end)
            break;
        start = line;
        found++;
    }
    while (start < end && *start == ' ')
        start++;
    /* from the first of those lines to the end, newlines as " | " */
    char joined[1024];
    size_t at = 0;
    for (const char *c = start; c < end && at + 4 < sizeof(joined); c++) {
        if (*c == '\n') {
            if (c + 1 < end && at)
                at += (size_t)snprintf(joined + at, sizeof(joined) - at, " | ");
        } else {
            joined[at++] = *c;
        }
    }
    pi_printable(out, size, joined, at);
}

static void write_death(const struct pi_analysis *a, const struct pi_process_info *p,
                        const char *role, const char *how, const struct pi_process_info *training,
                        struct pi_finding *f)
{
    f->kind = "died";
    f->frames = p->fatal.site;
    f->score = 1;
    f->ends_job = PI_ENDS_JOB_DIED;
    f->pid = p->header.pid;
    f->ended_ns = p->end_ns;
    double at_s = (double)(p->end_ns - a->base_ns) / 1e9;
    char when[160] = "";
    if (training && training->steps.count) {
        uint64_t steps = pi_steps_done_by(training, p->end_ns);
        snprintf(when, sizeof(when), ", after %" PRIu64 " of %s's %" PRIu64 " steps", steps,
                 pi_loop_name(training), training->steps.count);
        pi_finding_evidence(f, "steps_done", (double)steps, "");
    }
    char seen[480], command[256], words[400];
    pi_process_whereabouts(p, p->fatal.site, p->fatal.tid, 0, f, seen, sizeof(seen));
    pi_printable(command, sizeof(command), p->command ? p->command : "?",
                 strlen(p->command ? p->command : "?"));
    last_words(p, words, sizeof(words), 3);
    /* without an end record, the last record is all there is: the records of up to one
     * flush interval (PROFINJECT_FLUSH_MS) before the kill went with the process */
    snprintf(f->summary, sizeof(f->summary), "%s (pid %d, %s) %s, %s%.2f s into the job%s%s%s%s%s",
             role, f->pid, command, how, p->ended ? "" : "its last record ", at_s, when, seen,
             words[0] ? "; its stderr ended: \"" : "", words, words[0] ? "\"" : "");
    const char *advice =
        f->cause && strcmp(f->cause, "device-out-of-memory") == 0 ? DEVICE_ADVICE
        : f->cause && strcmp(f->cause, "oom-killer") == 0
            ? "the host ran out of memory for the job: give its cgroup more (the container's "
              "memory limit) or make it keep less: fewer or lighter DataLoader workers (each "
              "holds its own copies of what it touches), smaller prefetch_factor, no growing "
              "lists or caches in the Dataset"
        : !p->ended
            ? "see whether the kernel's OOM killer took it (dmesg, the memory cgroup's oom_kill "
              "count): then give the job more memory or make it keep less (fewer or lighter "
              "DataLoader workers, smaller prefetch); else find who sent it SIGKILL"
        : p->end_reason == PI_END_SIGNAL && (p->fatal.flags & PI_SIGNAL_FAULT)
            ? "a crash in native code: the innermost frames above name the library and function "
              "(an extension built for another version, an index out of bounds in a custom "
              "kernel or op, a bad pointer through ctypes); its Python line says which call"
        : p->end_reason == PI_END_SIGNAL
            ? "a fatal signal: SIGTERM, SIGINT and SIGHUP come from outside (a launcher stopping "
              "the job after another process failed, a scheduler's time limit, a closed "
              "terminal): see the sender named above; SIGABRT is the process's own abort(), "
              "its reason in its stderr"
            : "the error it raised is in its stderr (its last lines quoted above, when "
              "recorded); a process of the job that exits non-zero usually follows another's "
              "failure: the earliest death is listed first";
    snprintf(f->advice, sizeof(f->advice), "%s", advice);
    pi_finding_evidence(f, "ended_at_s", at_s, "s");
    if (p->ended)
        pi_finding_evidence(f, p->end_reason == PI_END_SIGNAL ? "signal" : "exit_status",
                            (double)p->end_status, "");
    else
        pi_finding_evidence(f, "end_record", 0, "");
}

/* A process whose device allocations failed and that lived on (its caller freed and retried,
 * or caught the error): the device ran full, which slows a job and ends the next one. */
static void survived_device_oom(const struct pi_analysis *a, const struct pi_process_info *p,
                                struct pi_finding *f)
{
    char words[600];
    f->kind = "device-out-of-memory";
    f->score = 1;
    f->ends_job = PI_ENDS_JOB_GROWTH;
    f->pid = p->header.pid;
    device_failures(a, p, f, "", words, sizeof(words));
    snprintf(f->summary, sizeof(f->summary), "pid %d ran out of device memory and went on: %s",
             f->pid, words);
    snprintf(f->advice, sizeof(f->advice), "%s", DEVICE_ADVICE);
}

int pi_verdict_deaths(const struct pi_analysis *a, struct pi_finding *out, int room)
{
    const struct pi_process_info *training = pi_training_process(a);
    int n = 0;
    for (size_t i = 0; i < a->process_count && n < room && n < MAX_DEATHS; i++) {
        const struct pi_process_info *p = &a->processes[i];
        char buf[32], how[700];
        const char *role = pi_process_role(p, training, buf, sizeof(buf));
        /* a process that ended with the job's stop is said once for the job (verdict_stop.c) */
        if (role && !p->stopped && how_it_ended(a, p, &out[n], how, sizeof(how)))
            write_death(a, p, role, how, training, &out[n++]);
        else if (p->gpu && p->gpu->failure_count)
            survived_device_oom(a, p, &out[n++]);
    }
    return n;
}
