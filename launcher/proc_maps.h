/* proc_maps.h - the memory mappings of a process, from /proc/PID/maps, and the
 * fields of its /proc/PID/status */
#ifndef PI_LAUNCHER_PROC_MAPS_H
#define PI_LAUNCHER_PROC_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct pi_mapping {
    uintptr_t start, end;
    unsigned long offset, inode;
    char device[16];
    char path[512]; /* empty for anonymous memory */
};

/**
 * pi_find_mapping - the first mapping of process @pid ("self", or a number)
 * for which @match(mapping, @arg) is nonzero, copied to @found
 * Return: 0, or -1 when none matches or the map cannot be read.
 */
int pi_find_mapping(const char *pid, int (*match)(const struct pi_mapping *, const void *),
                    const void *arg, struct pi_mapping *found);

/* pi_mapping_name - the file name of @mapping's path, without its directory */
const char *pi_mapping_name(const struct pi_mapping *mapping);

/**
 * pi_status_field - the value of @field ("NSpid", "SigCgt", ...) in /proc/@pid/status,
 * leading blanks and the newline left out, into @out
 * Return: 0, or -1 when the process or the field is not there.
 */
int pi_status_field(int pid, const char *field, char *out, size_t size);

/**
 * pi_pid_inside - @pid (a process, or a thread by its tid) as it numbers itself: the last
 * of its NSpid, its innermost PID namespace's number
 * Return: that number, or @pid where the kernel gives none.
 */
int pi_pid_inside(int pid);

#endif
