/*
 * top.c - profinject top: a running job's figures, refreshed, from each
 * process's own counters (its control channel's "figures", counted by its
 * writer as records go by), never from re-reading traces. Two readings an
 * interval apart give the rates: steps a second, the main thread's time
 * by what it waited for, the GPU's busy share; the steps that ended in the
 * last window give the step time's percentiles, and the shares the
 * analyzer's first verdict, by its rules and thresholds.
 */
#include "top.h"

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.h"
#include "durations.h"
#include "proc_maps.h"
#include "profinject/verdict_thresholds.h"

#define REPLY_SIZE 16384
#define STEPS_KEPT 256
#define STEP_WINDOW_NS 10000000000ull /* the steps a window's percentiles are of */

/* One process's reading. */
struct reading {
    int pid, ppid, ok, recording;
    char mode[16];
    uint64_t now, rss, device, main_cpu, main_cpu_wait, gpu_busy, gpu_until, steps;
    uint64_t data_wait, file_io, other_io, lock_wait, sleep, sync;
    uint64_t step_end[STEPS_KEPT], step_length[STEPS_KEPT];
    int recent;
    uint64_t main_blocked;   /* ns the main thread has been blocked, 0: not blocked */
    char main_blocked_in[96]; /* in what, in words */
};

/* The number after "@key": in @text, 0 where it is not there. */
static uint64_t number(const char *text, const char *key)
{
    char quoted[64];
    snprintf(quoted, sizeof(quoted), "\"%s\": ", key);
    const char *at = strstr(text, quoted);
    return at ? strtoull(at + strlen(quoted), NULL, 10) : 0;
}

static void parse(struct reading *r, const char *text)
{
    const char *mode = strstr(text, "\"mode\": \"");
    /* its word, or "?": what the process answers reaches the terminal */
    size_t length = mode ? strspn(mode + 9, "abcdefghijklmnopqrstuvwxyz") : 0;
    snprintf(r->mode, sizeof(r->mode), "%.*s", length ? (int)length : 1, length ? mode + 9 : "?");
    r->recording = strstr(text, "\"recording\": true") != NULL;
    r->now = number(text, "now_ns");
    r->rss = number(text, "rss_bytes");
    r->device = number(text, "device_bytes");
    r->main_cpu = number(text, "main_cpu_ns");
    r->main_cpu_wait = number(text, "main_cpu_wait_ns");
    r->gpu_busy = number(text, "gpu_busy_ns");
    r->gpu_until = number(text, "gpu_until_ns");
    r->steps = number(text, "steps");
    r->data_wait = number(text, "data_wait");
    r->file_io = number(text, "file_io");
    r->other_io = number(text, "other_io");
    r->lock_wait = number(text, "lock_wait");
    r->sleep = number(text, "sleep");
    r->sync = number(text, "sync");
    const char *steps = strstr(text, "\"recent_steps\": [");
    r->recent = 0;
    for (const char *at = steps ? steps + 17 : NULL; at && r->recent < STEPS_KEPT;) {
        unsigned long long end, length;
        int used = 0;
        if (sscanf(at, " [%llu, %llu]%n", &end, &length, &used) != 2 || !used)
            break;
        r->step_end[r->recent] = end;
        r->step_length[r->recent++] = length;
        at += used;
        at += *at == ',';
    }
    r->main_blocked = number(text, "main_blocked_ns");
    /* words of letters and brackets only: what the process answers reaches the terminal */
    const char *in = strstr(text, "\"main_blocked_in\": \"");
    size_t words = in ? strspn(in + 20, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ _()")
                      : 0;
    snprintf(r->main_blocked_in, sizeof(r->main_blocked_in), "%.*s", (int)words,
             words ? in + 20 : "");
    r->ok = r->now > 0;
}

static void read_one(const char *dir, int pid, struct reading *r)
{
    static char reply[REPLY_SIZE];
    memset(r, 0, sizeof(*r));
    r->pid = pid;
    if (pi_control_ask(dir, pid, "figures\n", reply, sizeof(reply)) > 0)
        parse(r, reply);
    /* the parent as this side numbers it: the process's own number is its PID namespace's */
    char ppid[32];
    r->ppid = pi_status_field(pid, "PPid", ppid, sizeof(ppid)) == 0 ? atoi(ppid) : 0;
}

/* @pid's answered reading among @count, or NULL */
static const struct reading *reading_of(const struct reading *readings, int count, int pid)
{
    for (int i = 0; i < count; i++)
        if (readings[i].pid == pid)
            return readings[i].ok ? &readings[i] : NULL;
    return NULL;
}

/* The command line of @pid, its arguments joined by NULs, into @out: its length (0: unknown). */
static size_t command_of(int pid, char *out, size_t size)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(out, 1, size, f) : 0;
    if (f)
        fclose(f);
    return n;
}

/* A fork child that kept its parent's command line: a DataLoader worker. Its main thread's
 * reads of its index queue look like a loop's batches: they are no steps of the job. */
static int is_worker(int pid, int ppid)
{
    static char mine[4096], parents[4096];
    size_t a = command_of(pid, mine, sizeof(mine)), b = command_of(ppid, parents, sizeof(parents));
    return a > 0 && a == b && memcmp(mine, parents, a) == 0;
}

/* What two readings of one process say of the time between them. */
struct figures {
    int pid, ppid, worker, recording;
    const char *mode;
    double seconds, steps_per_s, step_p50_ms, step_p95_ms;
    uint64_t window_steps;
    /* shares of the main thread's time */
    double data, sync, cpu, cpu_wait, lock, io, sleep, other, gpu_busy;
    double rss_mib, device_mib, rss_growth_mib, device_growth_mib; /* growth: a step, or a s */
    int growth_per_step, has_gpu;
    const char *leading, *verdict;
    double verdict_share;
    double main_blocked_s; /* now: how long its main thread has been blocked, 0: not */
    const char *main_blocked_in;
};

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double share(uint64_t before, uint64_t after, double ns)
{
    return after > before && ns > 0 ? (double)(after - before) / ns : 0;
}

/* The largest share names what holds the loop, in the verdicts' words. */
static const char *leading(const struct figures *f)
{
    struct {
        double value;
        const char *name;
    } parts[] = {{f->data, "input-bound (waiting for data)"},
                 {f->sync, "waiting for the GPU (synchronising)"},
                 {f->cpu, "computing on the CPU"},
                 {f->cpu_wait, "waiting for a CPU"},
                 {f->lock, "waiting on locks (the GIL, queues)"},
                 {f->io, "in file and other I/O"},
                 {f->sleep, "asleep"},
                 {f->other, "in calls no hook sees"}};
    size_t best = 0;
    for (size_t i = 1; i < sizeof(parts) / sizeof(parts[0]); i++)
        if (parts[i].value > parts[best].value)
            best = i;
    return parts[best].name;
}

/* The analyzer's first verdict by its rules and thresholds (analyzer/verdicts/), over the
 * interval's shares of the main thread's time: the largest share above its threshold. */
static void live_verdict(struct figures *f)
{
    double idle = 1 - f->gpu_busy - f->data - f->sync;
    int gpu_bound = f->has_gpu && f->gpu_busy >= PI_GPU_BOUND_SHARE;
    struct {
        int holds;
        double share;
        const char *kind;
    } rules[] = {
        {f->data >= PI_INPUT_BOUND_SHARE, f->data, "input-bound"},
        {gpu_bound, f->gpu_busy, "gpu-bound"},
        {f->sync >= PI_SYNC_BOUND_SHARE && !gpu_bound, f->sync, "sync-bound"},
        {f->has_gpu && !gpu_bound && f->sync < PI_HOST_WAITS_LITTLE && idle >= PI_LAUNCH_BOUND_IDLE,
         idle, "launch-bound"},
        {f->lock >= PI_WAIT_BOUND_SHARE, f->lock, "lock-bound"},
        {!f->has_gpu && f->cpu >= PI_COMPUTE_BOUND_SHARE, f->cpu, "compute-bound"},
    };
    f->verdict = "none";
    f->verdict_share = 0;
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
        if (rules[i].holds && rules[i].share > f->verdict_share) {
            f->verdict = rules[i].kind;
            f->verdict_share = rules[i].share;
        }
}

static void figure(const struct reading *a, const struct reading *b, struct figures *f)
{
    memset(f, 0, sizeof(*f));
    f->pid = b->pid;
    f->ppid = b->ppid;
    f->mode = b->mode;
    f->worker = is_worker(b->pid, b->ppid);
    f->main_blocked_s = (double)b->main_blocked / 1e9;
    f->main_blocked_in = b->main_blocked_in;
    /* paused over the whole interval: nothing was recorded, so nothing was counted */
    f->recording = a->recording || b->recording;
    double ns = b->now > a->now ? (double)(b->now - a->now) : 0;
    f->seconds = ns / 1e9;
    uint64_t steps = b->steps > a->steps && !f->worker ? b->steps - a->steps : 0;
    f->steps_per_s = ns > 0 ? (double)steps / f->seconds : 0;
    double lengths[STEPS_KEPT];
    size_t n = 0;
    for (int i = 0; i < b->recent && !f->worker; i++)
        if (b->step_end[i] + STEP_WINDOW_NS >= b->now)
            lengths[n++] = (double)b->step_length[i] / 1e6;
    f->window_steps = n;
    if (n) {
        qsort(lengths, n, sizeof(lengths[0]), by_value);
        f->step_p50_ms = lengths[(n - 1) / 2];
        f->step_p95_ms = lengths[(size_t)ceil(0.95 * (double)n) - 1];
    }
    f->data = share(a->data_wait, b->data_wait, ns);
    f->sync = share(a->sync, b->sync, ns);
    f->cpu = share(a->main_cpu, b->main_cpu, ns);
    f->cpu_wait = share(a->main_cpu_wait, b->main_cpu_wait, ns);
    f->lock = share(a->lock_wait, b->lock_wait, ns);
    f->io = share(a->file_io + a->other_io, b->file_io + b->other_io, ns);
    f->sleep = share(a->sleep, b->sleep, ns);
    double known = f->data + f->sync + f->cpu + f->cpu_wait + f->lock + f->io + f->sleep;
    f->other = known < 1 ? 1 - known : 0;
    /* of the span the GPU's times that came in cover: they come in batches, not as the
     * wall clock goes */
    f->has_gpu = b->gpu_until > a->gpu_until;
    f->gpu_busy = f->has_gpu
                      ? share(a->gpu_busy, b->gpu_busy, (double)(b->gpu_until - a->gpu_until))
                      : 0;
    f->rss_mib = (double)b->rss / 1048576.0;
    f->device_mib = (double)b->device / 1048576.0;
    f->growth_per_step = steps > 0;
    double per = steps > 0 ? (double)steps : f->seconds > 0 ? f->seconds : 1;
    f->rss_growth_mib = ((double)b->rss - (double)a->rss) / 1048576.0 / per;
    f->device_growth_mib = ((double)b->device - (double)a->device) / 1048576.0 / per;
    f->leading = leading(f);
    if (!f->recording)
        f->verdict = "paused";
    else if (!f->worker)
        live_verdict(f);
    else
        f->verdict = "-"; /* a worker has no loop of its own */
}

static void print_json(const struct figures *f, size_t count)
{
    printf("[");
    for (size_t i = 0; i < count; i++)
        printf("%s\n {\"pid\": %d, \"ppid\": %d, \"role\": \"%s\", \"mode\": \"%s\", "
               "\"recording\": %s, "
               "\"seconds\": %.3f, "
               "\"steps_per_s\": %.3f, \"window_steps\": %llu, \"step_p50_ms\": %.3f, "
               "\"step_p95_ms\": %.3f, \"main_thread\": {\"data_wait\": %.4f, \"sync\": %.4f, "
               "\"cpu\": %.4f, \"cpu_wait\": %.4f, \"lock_wait\": %.4f, \"io\": %.4f, "
               "\"sleep\": %.4f, \"other\": %.4f}, \"gpu_busy\": %.4f, \"rss_mib\": %.1f, "
               "\"device_mib\": %.1f, \"rss_growth_mib\": %.3f, \"device_growth_mib\": %.3f, "
               "\"growth_per\": \"%s\", \"leading\": \"%s\", \"verdict\": \"%s\", "
               "\"main_blocked_s\": %.3f, \"main_blocked_in\": \"%s\"}",
               i ? "," : "", f[i].pid, f[i].ppid, f[i].worker ? "worker" : "process", f[i].mode,
               f[i].recording ? "true" : "false",
               f[i].seconds, f[i].steps_per_s,
               (unsigned long long)f[i].window_steps, f[i].step_p50_ms, f[i].step_p95_ms,
               f[i].data, f[i].sync, f[i].cpu, f[i].cpu_wait, f[i].lock, f[i].io, f[i].sleep,
               f[i].other, f[i].gpu_busy, f[i].rss_mib, f[i].device_mib, f[i].rss_growth_mib,
               f[i].device_growth_mib, f[i].growth_per_step ? "step" : "second", f[i].leading,
               f[i].verdict, f[i].main_blocked_s, f[i].main_blocked_in);
    printf("\n]\n");
}

static void print_screen(const struct figures *f, size_t count, int root)
{
    printf("profinject top %d: %zu process%s under the profiler, over the last %.1f s\n\n", root,
           count, count == 1 ? "" : "es", count ? f[0].seconds : 0.0);
    printf("%8s %-7s %7s %9s %9s   %5s %5s %5s %5s %5s %5s %5s  %5s %9s %9s\n", "pid", "role",
           "steps/s",
           "p50 ms", "p95 ms", "data", "cpu", "cpuq", "sync", "lock", "io", "other", "gpu",
           "rss MiB", "dev MiB");
    for (size_t i = 0; i < count; i++) {
        const struct figures *p = &f[i];
        printf("%8d %-7s %7.2f %9.1f %9.1f   %4.0f%% %4.0f%% %4.0f%% %4.0f%% %4.0f%% %4.0f%% "
               "%4.0f%%  %4.0f%% %9.0f %9.0f\n",
               p->pid, p->worker ? "worker" : "process", p->steps_per_s, p->step_p50_ms, p->step_p95_ms, 100 * p->data,
               100 * p->cpu, 100 * p->cpu_wait, 100 * p->sync, 100 * p->lock, 100 * p->io,
               100 * p->other, 100 * p->gpu_busy, p->rss_mib, p->device_mib);
    }
    for (size_t i = 0; i < count; i++) {
        printf("\n%d: ", f[i].pid);
        if (!f[i].recording) {
            printf("paused: outside a capture window nothing is recorded, so nothing is counted "
                   "('profinject ctl %d capture 10s' opens one)", f[i].pid);
            continue;
        }
        if (!f[i].worker && f[i].verdict_share > 0)
            printf("%s now (%.0f%%); ", f[i].verdict, 100 * f[i].verdict_share);
        else if (!f[i].worker)
            printf("none now; ");
        printf("its main thread is mostly %s", f[i].leading);
        if (f[i].main_blocked_s >= 1) /* a hang shows here first: a rank in its collective */
            printf(", blocked for %.1f s now in %s", f[i].main_blocked_s, f[i].main_blocked_in);
        printf("; memory %+.2f MiB host, %+.2f MiB device a %s", f[i].rss_growth_mib,
               f[i].device_growth_mib, f[i].growth_per_step ? "step" : "second");
    }
    printf("\n");
}

static volatile sig_atomic_t stopping;

static void stop(int sig)
{
    (void)sig;
    stopping = 1;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: profinject top [--once] [--json] [--interval TIME] PID\n"
                 "A running job's figures from its processes' own counters, refreshed every\n"
                 "interval: steps/s and step time, its main thread's time by what it waited for,\n"
                 "GPU busy, host and device memory and their growth, per process of PID's tree.\n"
                 "  --once           one interval, printed, then exit\n"
                 "  --json           as JSON (with --once, for scripts and monitoring)\n"
                 "  --interval TIME  between readings (default 1s)\n"
                 "Ctrl-C ends it.\n");
}

int pi_cmd_top(int argc, char **argv)
{
    int once = 0, json = 0;
    long interval_ms = 1000;
    for (; argc >= 1 && argv[0][0] == '-'; argc--, argv++) {
        if (strcmp(argv[0], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[0], "--once") == 0) {
            once = 1;
        } else if (strcmp(argv[0], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[0], "--interval") == 0 && argc >= 2 &&
                   (interval_ms = pi_parse_ms(argv[1])) > 0) {
            argc--;
            argv++;
        } else {
            usage(stderr);
            return 1;
        }
    }
    if (argc != 1) {
        usage(stderr);
        return 1;
    }
    int root = pi_control_parse_pid("top", argv[0]);
    if (root <= 0)
        return 1;
    char dir[4096];
    pi_control_dir(dir, sizeof(dir));
    static int pids[PI_CONTROL_TREE_MAX];
    static struct reading readings[2][PI_CONTROL_TREE_MAX];
    static struct figures shown[PI_CONTROL_TREE_MAX];
    signal(SIGINT, stop);
    signal(SIGTERM, stop);
    /* each interval's reading of a process is the next one's start */
    struct reading *before = readings[0], *after = readings[1];
    int had = pi_control_collect_tree(root, pids, 0);
    for (int i = 0; i < had; i++)
        read_one(dir, pids[i], &before[i]);
    while (!stopping) {
        usleep((useconds_t)interval_ms * 1000);
        int n = pi_control_collect_tree(root, pids, 0);
        size_t count = 0;
        for (int i = 0; i < n && !stopping; i++) {
            read_one(dir, pids[i], &after[i]);
            const struct reading *start = reading_of(before, had, pids[i]);
            if (start && after[i].ok)
                figure(start, &after[i], &shown[count++]);
        }
        if (stopping)
            break;
        if (count == 0) {
            pi_control_say_none_answered(root);
            return 2;
        }
        if (!once && !json)
            printf("\x1b[H\x1b[2J"); /* the screen, from its top */
        if (json)
            print_json(shown, count);
        else
            print_screen(shown, count, root);
        fflush(stdout);
        if (once)
            return 0;
        struct reading *spare = before;
        before = after;
        after = spare;
        had = n;
    }
    return 0;
}
