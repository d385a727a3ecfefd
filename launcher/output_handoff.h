/*
 * output_handoff.h - giving a process in another mount namespace the output
 * directory of the host, as a descriptor: its paths are not ours.
 *
 * The descriptor is that of a detached copy of the directory's mount
 * (open_tree), whose ".." leads nowhere: a directory descriptor handed to a
 * container would otherwise be a way out of it, to the whole host file system.
 * It is served on an abstract unix socket in the process's network namespace
 * (no file in the container), to that process only (SO_PEERCRED).
 */
#ifndef PI_LAUNCHER_OUTPUT_HANDOFF_H
#define PI_LAUNCHER_OUTPUT_HANDOFF_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

struct pi_handoff {
    char name[100]; /* the abstract socket's name, for PI_OUTPUT_HANDOFF_ENV */
    int listen_fd, dir_fd;
    pid_t target;
    pthread_t server;
    _Atomic int delivered, stop;
};

/**
 * pi_handoff_prepare - make @dir (created when missing) ready to be handed
 * to @target, and start serving it. Prints why it cannot.
 * Return: 0, or -1.
 */
int pi_handoff_prepare(struct pi_handoff *h, pid_t target, const char *dir);

/* pi_handoff_finish - stop serving. Return: 1 when @target took the directory. */
int pi_handoff_finish(struct pi_handoff *h);

#endif
