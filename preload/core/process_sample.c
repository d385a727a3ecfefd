/* process_sample.c - see process_sample.h. */
#include "process_sample.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "raw_syscalls.h"

/* The second number of a line of numbers (statm: resident pages; schedstat: run delay);
 * 0 when unreadable. */
static uint64_t second_number(const char *statm)
{
    const char *p = statm;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p++ != ' ')
        return 0;
    uint64_t pages = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        pages = pages * 10 + (uint64_t)(*p - '0');
    return pages;
}

void pi_process_sampler_open(struct pi_process_sampler *s, uint64_t now_ns)
{
    s->statm_fd = pi_sys_open("/proc/self/statm", O_RDONLY | O_CLOEXEC, 0);
    s->smaps_rollup_fd = -1;
    s->pss_unreadable = 0;
    s->next_pss_ns = now_ns + PI_PSS_FIRST_NS;
}

void pi_process_sampler_close(struct pi_process_sampler *s)
{
    /* > 0: a sampler never opened is all zeroes, and fd 0 is the program's */
    if (s->statm_fd > 0)
        pi_sys_close(s->statm_fd);
    if (s->smaps_rollup_fd > 0)
        pi_sys_close(s->smaps_rollup_fd);
    s->statm_fd = s->smaps_rollup_fd = -1;
}

void pi_process_sample_read(const struct pi_process_sampler *s, struct pi_process_sample *sample)
{
    sample->rss_bytes = sample->user_ns = sample->system_ns = 0;
    char statm[128];
    if (s->statm_fd >= 0) {
        ssize_t n = pi_sys_pread(s->statm_fd, statm, sizeof(statm) - 1, 0);
        if (n > 0) {
            statm[n] = '\0';
            sample->rss_bytes = second_number(statm) * (uint64_t)sysconf(_SC_PAGESIZE);
        }
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        sample->user_ns =
            (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000u;
        sample->system_ns =
            (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u;
    }
}

/* The descriptor pi_resident_bytes_now reads; -1 until the first read of a process image.
 * Once published it is never closed while threads may read it: only in a fork child that has
 * one thread (pi_resident_after_fork). */
static _Atomic int resident_fd = -1;

uint64_t pi_resident_bytes_now(void)
{
    static long page_size;
    int fd = atomic_load_explicit(&resident_fd, memory_order_acquire);
    if (fd < 0) {
        int fresh = pi_sys_open("/proc/self/statm", O_RDONLY | O_CLOEXEC, 0), none = -1;
        if (fresh < 0)
            return 0;
        if (atomic_compare_exchange_strong(&resident_fd, &none, fresh))
            fd = fresh;
        else { /* another thread opened it first */
            pi_sys_close(fresh);
            fd = none;
        }
    }
    if (!page_size)
        page_size = sysconf(_SC_PAGESIZE);
    char statm[128];
    ssize_t n = pi_sys_pread(fd, statm, sizeof(statm) - 1, 0);
    if (n <= 0)
        return 0;
    statm[n] = '\0';
    return second_number(statm) * (uint64_t)page_size;
}

void pi_resident_after_fork(void)
{
    int fd = atomic_exchange(&resident_fd, -1);
    if (fd >= 0)
        pi_sys_close(fd);
}

/* The bytes of the line "@name:   N kB" of smaps_rollup; 0 with *found unset when absent. */
static uint64_t rollup_field(const char *text, const char *name, int *found)
{
    size_t length = strlen(name);
    const char *line = text;
    while (strncmp(line, name, length) != 0 || line[length] != ':') {
        line = strchr(line, '\n');
        if (!line)
            return 0;
        line++;
    }
    const char *p = line + length + 1;
    while (*p == ' ')
        p++;
    if (*p < '0' || *p > '9')
        return 0;
    uint64_t kb = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        kb = kb * 10 + (uint64_t)(*p - '0');
    *found = 1;
    return kb * 1024u;
}

int pi_pss_sample_read(struct pi_process_sampler *s, uint64_t now_ns, struct pi_pss_sample *pss)
{
    if (s->pss_unreadable || now_ns < s->next_pss_ns)
        return 0;
    if (s->smaps_rollup_fd < 0)
        s->smaps_rollup_fd = pi_sys_open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC, 0);
    if (s->smaps_rollup_fd < 0) {
        s->pss_unreadable = 1;
        return 0;
    }
    /* the header line and Rss and Pss, which come first: the kernel walks
     * the page tables for the whole text however little is read */
    char text[512];
    /* its cost by the writer's own CPU clock: a wait for a busy CPU costs the process nothing */
    uint64_t start = pi_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    ssize_t n = pi_sys_pread(s->smaps_rollup_fd, text, sizeof(text) - 1, 0);
    uint64_t end = pi_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (n <= 0) { /* again at the next interval */
        s->next_pss_ns = now_ns + PI_PSS_INTERVAL_NS;
        return 0;
    }
    text[n] = '\0';
    int found_rss = 0, found_pss = 0;
    pss->rss_bytes = rollup_field(text, "Rss", &found_rss);
    pss->pss_bytes = rollup_field(text, "Pss", &found_pss);
    if (!found_rss || !found_pss) { /* a kernel that says it otherwise: never again */
        pi_sys_close(s->smaps_rollup_fd);
        s->smaps_rollup_fd = -1;
        s->pss_unreadable = 1;
        return 0;
    }
    pss->read_ns = end - start;
    uint64_t gap = pss->read_ns * PI_PSS_COST_SHARE;
    s->next_pss_ns = now_ns + (gap > PI_PSS_INTERVAL_NS ? gap : PI_PSS_INTERVAL_NS);
    return 1;
}

int pi_run_delay_open(int tid)
{
    if (pi_sys_proc_self_pid() != (int)syscall(SYS_getpid))
        return -1;
    char path[64] = "/proc/self/task/", digits[16];
    size_t n = 0, at = 16;
    do /* no snprintf: nothing hooked is called from the writer */
        digits[n++] = (char)('0' + tid % 10);
    while ((tid /= 10) > 0 && n < sizeof(digits));
    while (n)
        path[at++] = digits[--n];
    memcpy(path + at, "/schedstat", sizeof("/schedstat"));
    return pi_sys_open(path, O_RDONLY | O_CLOEXEC, 0);
}

int64_t pi_run_delay_read(int schedstat_fd)
{
    char line[128];
    if (schedstat_fd < 0)
        return -1;
    ssize_t n = pi_sys_pread(schedstat_fd, line, sizeof(line) - 1, 0);
    if (n <= 0)
        return -1;
    line[n] = '\0';
    return (int64_t)second_number(line);
}
