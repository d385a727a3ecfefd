/* proc_maps.c - see proc_maps.h. */
#include "proc_maps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pi_find_mapping(const char *pid, int (*match)(const struct pi_mapping *, const void *),
                    const void *arg, struct pi_mapping *found)
{
    char path[64], line[1024];
    snprintf(path, sizeof(path), "/proc/%s/maps", pid);
    FILE *maps = fopen(path, "r");
    if (!maps)
        return -1;
    int result = -1;
    while (result != 0 && fgets(line, sizeof(line), maps)) {
        struct pi_mapping m = {0};
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %lx %15s %lu %511s", &m.start, &m.end,
                   &m.offset, m.device, &m.inode, m.path) < 5)
            continue;
        if (match(&m, arg)) {
            *found = m;
            result = 0;
        }
    }
    fclose(maps);
    return result;
}

const char *pi_mapping_name(const struct pi_mapping *mapping)
{
    const char *slash = strrchr(mapping->path, '/');
    return slash ? slash + 1 : mapping->path;
}

int pi_status_field(int pid, const char *field, char *out, size_t size)
{
    char path[64], line[1024];
    snprintf(path, sizeof(path), "/proc/%d/status", pid);
    FILE *status = fopen(path, "r");
    size_t length = strlen(field);
    int found = -1;
    while (status && found != 0 && fgets(line, sizeof(line), status)) {
        if (strncmp(line, field, length) != 0 || line[length] != ':')
            continue;
        const char *value = line + length + 1 + strspn(line + length + 1, " \t");
        snprintf(out, size, "%.*s", (int)strcspn(value, "\n"), value);
        found = 0;
    }
    if (status)
        fclose(status);
    return found;
}

int pi_pid_inside(int pid)
{
    char line[256];
    int inner = pid;
    if (pi_status_field(pid, "NSpid", line, sizeof(line)) == 0)
        for (char *field = strtok(line, " \t"); field; field = strtok(NULL, " \t"))
            inner = atoi(field);
    return inner;
}
