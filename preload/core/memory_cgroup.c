/* memory_cgroup.c - see memory_cgroup.h. */
#include "memory_cgroup.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "raw_syscalls.h"

/* Append @text to @out (of @size) at *@at; 0 when it does not fit. */
static int append(char *out, size_t size, size_t *at, const char *text, size_t length)
{
    if (*at + length + 1 > size)
        return 0;
    memcpy(out + *at, text, length);
    *at += length;
    out[*at] = '\0';
    return 1;
}

/* The number after "@key " at the start of a line of @text; -1 when absent. */
static int64_t keyed_number(const char *text, const char *key)
{
    size_t length = strlen(key);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, key, length) != 0 || line[length] != ' ')
            continue;
        const char *p = line + length + 1;
        if (*p < '0' || *p > '9')
            return -1;
        int64_t n = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            n = n * 10 + (*p - '0');
        return n;
    }
    return -1;
}

/* The number a one-number file of the cgroup holds; 0 for "max" or when unreadable. */
static uint64_t cgroup_number(const struct pi_memory_cgroup *c, const char *file)
{
    char path[320], text[64];
    size_t at = 0;
    if (!append(path, sizeof(path), &at, c->dir, strlen(c->dir)) ||
        !append(path, sizeof(path), &at, file, strlen(file)) ||
        pi_sys_read_file(path, text, sizeof(text)) == 0 || text[0] < '0' || text[0] > '9')
        return 0;
    uint64_t n = 0;
    for (const char *p = text; *p >= '0' && *p <= '9'; p++)
        n = n * 10 + (uint64_t)(*p - '0');
    return n;
}

/* Open @c's events file under @root + @path; 0 when there. */
static int try_hierarchy(struct pi_memory_cgroup *c, const char *root, const char *path,
                         size_t path_length, int v2)
{
    size_t at = 0;
    if (!append(c->dir, sizeof(c->dir), &at, root, strlen(root)) ||
        !append(c->dir, sizeof(c->dir), &at, path, path_length) ||
        (at > 0 && c->dir[at - 1] != '/' && !append(c->dir, sizeof(c->dir), &at, "/", 1)))
        return -1;
    char events[320];
    size_t e = 0;
    const char *name = v2 ? "memory.events" : "memory.oom_control";
    if (!append(events, sizeof(events), &e, c->dir, at) ||
        !append(events, sizeof(events), &e, name, strlen(name)))
        return -1;
    c->events_fd = pi_sys_open(events, O_RDONLY | O_CLOEXEC, 0);
    c->v2 = v2;
    return c->events_fd >= 0 ? 0 : -1;
}

void pi_memory_cgroup_open(struct pi_memory_cgroup *c)
{
    memset(c, 0, sizeof(*c));
    c->events_fd = -1;
    c->last_kills = -1;
}

/* Open the events file of this process's memory cgroup, once, at its first reading: a
 * process that ends before its first sample never looks. */
static void find_cgroup(struct pi_memory_cgroup *c)
{
    c->looked = 1;
    char text[2048];
    if (pi_sys_read_file("/proc/self/cgroup", text, sizeof(text)) == 0)
        return;
    /* cgroup v1's memory controller where it is mounted, else the unified hierarchy's */
    const char *unified = NULL;
    size_t unified_length = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        const char *colon = strchr(line, ':'), *end = strchr(line, '\n');
        if (!colon)
            break;
        size_t length = end ? (size_t)(end - line) : strlen(line);
        if (strncmp(colon, ":memory:", 8) == 0 &&
            try_hierarchy(c, "/sys/fs/cgroup/memory", colon + 8, length - (size_t)(colon + 8 - line), 0) == 0)
            return;
        if (strncmp(colon, "::", 2) == 0) {
            unified = colon + 2;
            unified_length = length - (size_t)(colon + 2 - line);
        }
    }
    if (unified)
        try_hierarchy(c, "/sys/fs/cgroup", unified, unified_length, 1);
}

void pi_memory_cgroup_close(struct pi_memory_cgroup *c)
{
    if (c->events_fd > 0) /* > 0: one never opened is all zeroes, and fd 0 is the program's */
        pi_sys_close(c->events_fd);
    c->events_fd = -1;
}

int pi_memory_cgroup_read(struct pi_memory_cgroup *c, struct pi_memory_cgroup_reading *reading)
{
    char text[512];
    if (!c->looked)
        find_cgroup(c);
    if (c->events_fd <= 0)
        return 0;
    ssize_t n = pi_sys_pread(c->events_fd, text, sizeof(text) - 1, 0);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    int64_t kills = keyed_number(text, "oom_kill");
    if (kills < 0 || kills == c->last_kills)
        return 0;
    c->last_kills = kills;
    reading->oom_kills = (uint64_t)kills;
    reading->limit_bytes = cgroup_number(c, c->v2 ? "memory.max" : "memory.limit_in_bytes");
    reading->usage_bytes = cgroup_number(c, c->v2 ? "memory.current" : "memory.usage_in_bytes");
    /* v1 says "no limit" as the largest page-aligned number */
    if (reading->limit_bytes >= (1ull << 62))
        reading->limit_bytes = 0;
    return 1;
}
