/* control_commands.c - the commands that speak to running processes: ctl and stacks (see
 * control_commands.h). */
#include "control_commands.h"

#include <stdio.h>
#include <string.h>

#include "control.h"
#include "durations.h"
#include "native_stacks.h"
#include "stacks_places.h"

static void usage_ctl(FILE *out)
{
    fprintf(out, "usage: profinject ctl [--timeout TIME] PID start|stop|status|detach|capture TIME\n"
                 "Applies to PID and all its descendants that run under the profiler.\n"
                 "  --timeout TIME  longest wait for each process's answer (default 5s)\n");
}

static int send_request(int pid, const char *request, int whole_tree, pi_control_answered then,
                        void *arg);

int pi_cmd_ctl(int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "--help") == 0) {
        usage_ctl(stdout);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[0], "--timeout") == 0) {
        pi_control_timeout_ms = pi_parse_ms(argv[1]);
        if (pi_control_timeout_ms <= 0) {
            usage_ctl(stderr);
            return 1;
        }
        argc -= 2;
        argv += 2;
    }
    if (argc < 2) {
        usage_ctl(stderr);
        return 1;
    }
    int pid = pi_control_parse_pid("ctl", argv[0]);
    if (pid <= 0)
        return 1;
    char request[64];
    if (strcmp(argv[1], "capture") == 0) {
        long ms = argc > 2 ? pi_parse_ms(argv[2]) : -1;
        if (ms <= 0) {
            usage_ctl(stderr);
            return 1;
        }
        snprintf(request, sizeof(request), "capture %ld\n", ms);
    } else if (strcmp(argv[1], "start") == 0 || strcmp(argv[1], "stop") == 0 ||
               strcmp(argv[1], "status") == 0 || strcmp(argv[1], "detach") == 0) {
        snprintf(request, sizeof(request), "%s\n", argv[1]);
    } else {
        usage_ctl(stderr);
        return 1;
    }
    return send_request(pid, request, 1, NULL, NULL);
}

/* @request to @pid (and, with @whole_tree, its descendants under the profiler): 0 when one
 * answered, 2 with a message when none did */
static int send_request(int pid, const char *request, int whole_tree, pi_control_answered then,
                        void *arg)
{
    if (pi_control_tree_then(pid, request, whole_tree, then, arg) == 0) {
        pi_control_say_none_answered(pid);
        return 2;
    }
    return 0;
}

static void usage_stacks(FILE *out)
{
    fprintf(out, "usage: profinject stacks [--timeout TIME] [--all] [--native] PID\n"
                 "Every Python thread's stack in PID, innermost frame first, and what it is\n"
                 "blocked in and for how long, read while the profiler holds its\n"
                 "interpreter's lock (the pause is said), and the native\n"
                 "frames of its threads that run no Python, each stopped (ptrace) only while\n"
                 "its own are read; PID runs under the profiler ('profinject attach PID' first\n"
                 "for one that does not).\n"
                 "  --all           PID and all its descendants under the profiler (workers, ranks),\n"
                 "                  then their main threads grouped by where they are, the\n"
                 "                  fewest first: a rank that never came to a collective\n"
                 "  --native        the native frames of the Python threads too\n"
                 "  --timeout TIME  longest wait for each process's answer (default 5s)\n");
}

/* after a process's Python stacks, its native frames; where its main thread is, kept */
static void native_frames(int pid, const char *reply, void *every_thread)
{
    pi_native_stacks_print(pid, reply, *(int *)every_thread);
    pi_stacks_place_note(pid, reply);
}

int pi_cmd_stacks(int argc, char **argv)
{
    int whole_tree = 0, every_thread = 0;
    for (; argc >= 1 && argv[0][0] == '-'; argc--, argv++) {
        if (strcmp(argv[0], "--help") == 0) {
            usage_stacks(stdout);
            return 0;
        } else if (strcmp(argv[0], "--all") == 0) {
            whole_tree = 1;
        } else if (strcmp(argv[0], "--native") == 0) {
            every_thread = 1;
        } else if (strcmp(argv[0], "--timeout") == 0 && argc >= 2 &&
                   (pi_control_timeout_ms = pi_parse_ms(argv[1])) > 0) {
            argc--;
            argv++;
        } else {
            usage_stacks(stderr);
            return 1;
        }
    }
    if (argc != 1) {
        usage_stacks(stderr);
        return 1;
    }
    int pid = pi_control_parse_pid("stacks", argv[0]);
    if (pid <= 0)
        return 1;
    int status = send_request(pid, "stacks\n", whole_tree, native_frames, &every_thread);
    pi_stacks_places_print(stdout); /* with --all: the processes grouped by where they are */
    return status;
}

