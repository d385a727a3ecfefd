/* process_sample.c - see process_sample.h. */
#include "process_sample.h"

#include <sys/resource.h>
#include <unistd.h>

#include "raw_syscalls.h"

/* The second number of /proc/self/statm (resident pages); 0 when unreadable. */
static uint64_t resident_pages(const char *statm)
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

void pi_process_sample_read(int statm_fd, struct pi_process_sample *sample)
{
    sample->rss_bytes = sample->user_ns = sample->system_ns = 0;
    char statm[128];
    if (statm_fd >= 0) {
        ssize_t n = pi_sys_pread(statm_fd, statm, sizeof(statm) - 1, 0);
        if (n > 0) {
            statm[n] = '\0';
            sample->rss_bytes = resident_pages(statm) * (uint64_t)sysconf(_SC_PAGESIZE);
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
