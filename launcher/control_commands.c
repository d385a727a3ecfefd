/* control_commands.c - the commands that speak to running processes: ctl and stacks (see
 * control_commands.h). */
#include "control_commands.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "durations.h"
#include "terminal_text.h"

static void usage_ctl(FILE *out)
{
    fprintf(out, "usage: profinject ctl [--timeout TIME] PID start|stop|status|detach|capture TIME\n"
                 "Applies to PID and all its descendants that run under the profiler.\n"
                 "  --timeout TIME  longest wait for each process's answer (default 5s)\n");
}

/* @text as a process id, else 0 with a message for @command */
static int parse_pid(const char *command, const char *text)
{
    char *end;
    long value = strtol(text, &end, 10);
    if (*end || value <= 0 || value > INT32_MAX) {
        char shown[256];
        fprintf(stderr, "profinject: %s: %s is not a process id\n", command,
                pi_shown(shown, sizeof(shown), text));
        return 0;
    }
    return (int)value;
}

static int send_request(int pid, const char *request, int whole_tree);

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
    int pid = parse_pid("ctl", argv[0]);
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
    return send_request(pid, request, 1);
}

/* @request to @pid (and, with @whole_tree, its descendants under the profiler): 0 when one
 * answered, 2 with a message when none did */
static int send_request(int pid, const char *request, int whole_tree)
{
    if (kill(pid, 0) != 0 && errno == ESRCH) {
        fprintf(stderr, "profinject: no process %d\n", pid);
        return 2;
    }
    if (pi_control_tree(pid, request, whole_tree) == 0) {
        fprintf(stderr, "profinject: no process under the profiler answered at pid %d (is it "
                        "running under profinject, as this user? 'profinject attach %d' profiles "
                        "one that is not)\n", pid, pid);
        return 2;
    }
    return 0;
}

static void usage_stacks(FILE *out)
{
    fprintf(out, "usage: profinject stacks [--timeout TIME] [--all] PID\n"
                 "Every Python thread's stack in PID, innermost frame first, read while the\n"
                 "profiler holds its interpreter's lock (the pause is said); PID runs under the\n"
                 "profiler ('profinject attach PID' first for one that does not).\n"
                 "  --all           PID and all its descendants under the profiler (workers, ranks)\n"
                 "  --timeout TIME  longest wait for each process's answer (default 5s)\n");
}

int pi_cmd_stacks(int argc, char **argv)
{
    int whole_tree = 0;
    for (; argc >= 1 && argv[0][0] == '-'; argc--, argv++) {
        if (strcmp(argv[0], "--help") == 0) {
            usage_stacks(stdout);
            return 0;
        } else if (strcmp(argv[0], "--all") == 0) {
            whole_tree = 1;
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
    int pid = parse_pid("stacks", argv[0]);
    return pid > 0 ? send_request(pid, "stacks\n", whole_tree) : 1;
}

