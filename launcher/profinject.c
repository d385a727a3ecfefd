/*
 * profinject - the launcher: run a command under the profiler, control
 * capture windows of running processes, forward to the analyzer.
 *
 *   profinject run [-o DIR] [--append] [--paused | --summary] [--duration 30s] -- COMMAND...
 *   profinject ctl PID start|stop|status|detach|capture 10s
 *   profinject attach PID [-o DIR] [--duration 10s]
 *   profinject stacks [--all] [--native] PID
 *   profinject top [--once] [--json] PID
 *   profinject analyze ...
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze_hint.h"
#include "attach.h"
#include "control.h"
#include "control_commands.h"
#include "durations.h"
#include "profinject/control_protocol.h"
#include "profinject/trace_format.h"
#include "terminal_text.h"
#include "top.h"

static void usage_run(FILE *out)
{
    fprintf(out, "usage: profinject run [-o DIR] [--append] [--paused | --summary] [--duration TIME]\n"
                 "                      [--span MODULE:FUNCTION]... -- COMMAND...\n"
                 "  -o DIR          where the trace files go (default ./profinject-traces)\n"
                 "  --append        add to the traces DIR already holds (else a DIR with traces is\n"
                 "                  refused: the analyzer would merge both runs into one report)\n"
                 "  --paused        start with recording off; open windows with 'profinject ctl'\n"
                 "  --summary       always-on summary mode: per-interval histograms, full events\n"
                 "                  only in windows (a slow step, 'profinject ctl capture', --duration)\n"
                 "  --duration TIME record for TIME (e.g. 30s, 500ms, 2m), then stop recording\n"
                 "                  (with --summary: full events for TIME, then summaries)\n"
                 "  --span MODULE:FUNCTION\n"
                 "                  record every call of a Python function (mymodule:handle,\n"
                 "                  mymodule:Trainer.evaluate); repeatable; added to PROFINJECT_SPANS\n"
                 "The command's exit status is passed through. The command is sent SIGTERM\n"
                 "when the launcher ends before it, even by SIGKILL.\n");
}

static void usage(FILE *out)
{
    fprintf(out, "usage: profinject COMMAND [ARGS]\n"
                 "  run [-o DIR] [--append] [--paused|--summary] [--duration TIME] [--span M:F]\n"
                 "      -- COMMAND...\n"
                 "                                                            record a command\n"
                 "  ctl PID start|stop|status|detach|capture TIME             capture windows\n"
                 "  attach PID [-o DIR] [--duration TIME]                     profile a running process\n"
                 "  stacks [--all] [--native] PID                             its threads' stacks now\n"
                 "  top [--once] [--json] PID                                 its live figures\n"
                 "  analyze ARGS...                                           profinject-analyze\n"
                 "Each command takes --help.\n");
}

/* @relative to the folder above this program's own (/proc/self/exe, links
 * resolved): installed, bin/profinject finds lib/profinject/ and bin/; in
 * the build tree, bin/profinject finds preload/ and analyzer/. */
static void sibling(char *out, size_t size, const char *relative)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(out, size, "%s/%s", self, relative);
}

/* The first of @relatives (NULL-terminated) that exists beside this
 * program, else the first: 0 when found. */
static int find_sibling(char *out, size_t size, const char *const *relatives, int mode)
{
    for (int i = 0; relatives[i]; i++) {
        sibling(out, size, relatives[i]);
        if (access(out, mode) == 0)
            return 0;
    }
    sibling(out, size, relatives[0]);
    return -1;
}

/* The library by absolute path: PROFINJECT_LIB, or the one installed or
 * built beside this program. */
static int find_library(char *library, size_t size)
{
    static const char *const beside[] = {"lib/profinject/libprofinject.so",
                                         "preload/libprofinject.so", NULL};
    const char *configured = getenv("PROFINJECT_LIB");
    if (configured && *configured)
        snprintf(library, size, "%s", configured);
    else
        find_sibling(library, size, beside, R_OK);
    if (access(library, R_OK) != 0) {
        char shown[4 * PATH_MAX];
        fprintf(stderr, "profinject: %s not found; set PROFINJECT_LIB to libprofinject.so\n",
                pi_shown(shown, sizeof(shown), library));
        return -1;
    }
    return 0;
}

/* @output (default ./profinject-traces) as an absolute path */
static const char *absolute_output_dir(const char *output, char *buf, size_t size)
{
    if (!output || !*output)
        output = "profinject-traces";
    if (output[0] == '/')
        return output;
    char cwd[PATH_MAX];
    snprintf(buf, size, "%s/%s", getcwd(cwd, sizeof(cwd)) ? cwd : ".", output);
    return buf;
}

static void usage_attach(FILE *out)
{
    fprintf(out, "usage: profinject attach PID [-o DIR] [--duration TIME]\n"
                 "  loads the profiler into running process PID (not its children) and records\n"
                 "  from then on; with --duration, detaches after TIME (the calls go back where\n"
                 "  they went), else 'profinject ctl PID stop|detach' ends it.\n"
                 "  Needs the right to ptrace PID (CAP_SYS_PTRACE, or kernel.yama.ptrace_scope=0).\n");
}

static int cmd_attach(int argc, char **argv)
{
    const char *output = getenv("PROFINJECT_OUTPUT");
    long duration = 0;
    int pid = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            usage_attach(stdout);
            return 0;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            output = argv[++i];
        } else if (strcmp(argv[i], "--duration") == 0 && i + 1 < argc &&
                   (duration = pi_parse_ms(argv[i + 1])) > 0) {
            i++;
        } else if (!pid && atoi(argv[i]) > 0) {
            pid = atoi(argv[i]);
        } else {
            usage_attach(stderr);
            return 1;
        }
    }
    if (!pid) {
        usage_attach(stderr);
        return 1;
    }
    char library[PATH_MAX], absolute_output[PATH_MAX], resolved[PATH_MAX], dir[PATH_MAX];
    if (find_library(library, sizeof(library)) != 0)
        return 1;
    if (!realpath(library, resolved))
        snprintf(resolved, sizeof(resolved), "%s", library);
    if (pi_runs_profiler(pid)) {
        fprintf(stderr, "profinject: process %d already runs the profiler; use 'profinject ctl'\n",
                pid);
        return 2;
    }
    output = absolute_output_dir(output, absolute_output, sizeof(absolute_output));
    if (pi_attach(pid, resolved, output) != 0)
        return 2;
    char shown[4 * PATH_MAX];
    printf("profinject: attached to %d; traces go to %s\n", pid,
           pi_shown(shown, sizeof(shown), output));
    if (duration <= 0) {
        char detach[32];
        snprintf(detach, sizeof(detach), "ctl %d detach", pid);
        pi_print_launcher_hint(stdout, "profinject: end it with: ", detach, NULL);
        return 0;
    }
    fflush(stdout);
    struct timespec pause = {duration / 1000, (duration % 1000) * 1000000};
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
        ;
    pi_control_dir(dir, sizeof(dir));
    if (pi_control_one(dir, pid, "detach\n", 0) != 0) {
        fprintf(stderr, "profinject: process %d did not answer the detach request\n", pid);
        return 2;
    }
    printf("profinject: detached from %d\n", pid);
    pi_print_launcher_hint(stdout, "profinject: analyse with: ", "analyze", output);
    return 0;
}

static pid_t running_child;

/* Termination requests are for the command: pass them on, then report its status. */
static void forward_signal(int sig)
{
    if (running_child > 0)
        kill(running_child, sig);
}

static int wait_child(pid_t child)
{
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Whether @dir holds a trace file: a process that ends within its first flush
 * having recorded nothing leaves none. */
static int has_traces(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t suffix = strlen(PI_TRACE_SUFFIX);
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        found = n > suffix && strcmp(e->d_name + n - suffix, PI_TRACE_SUFFIX) == 0;
    }
    closedir(d);
    return found;
}

/* Add @span to PROFINJECT_SPANS, the list the library's spans read (python_spans.h). */
static int add_span(const char *span)
{
    if (!strchr(span, ':') || span[0] == ':' || span[strlen(span) - 1] == ':') {
        fprintf(stderr, "profinject: --span %s: write it as MODULE:FUNCTION or "
                        "MODULE:Class.method (mymodule:handle_request)\n", span);
        return -1;
    }
    const char *spans = getenv("PROFINJECT_SPANS");
    size_t size = (spans ? strlen(spans) : 0) + strlen(span) + 2;
    char *joined = malloc(size);
    if (!joined)
        return -1;
    snprintf(joined, size, "%s%s%s", spans && *spans ? spans : "", spans && *spans ? "," : "",
             span);
    setenv("PROFINJECT_SPANS", joined, 1);
    free(joined);
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    const char *output = getenv("PROFINJECT_OUTPUT");
    int paused = 0, summary = 0, append = 0, i = 0;
    long duration = 0;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            usage_run(stdout);
            return 0;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            output = argv[++i];
        } else if (strcmp(argv[i], "--append") == 0) {
            append = 1;
        } else if (strcmp(argv[i], "--paused") == 0) {
            paused = 1;
        } else if (strcmp(argv[i], "--summary") == 0) {
            summary = 1;
        } else if (strcmp(argv[i], "--duration") == 0 && i + 1 < argc &&
                   (duration = pi_parse_ms(argv[i + 1])) > 0) {
            i++;
        } else if (strcmp(argv[i], "--span") == 0 && i + 1 < argc) {
            if (add_span(argv[++i]) != 0)
                return 1;
        } else {
            usage_run(stderr);
            return 1;
        }
    }
    if (i + 1 >= argc) {
        usage_run(stderr);
        return 1;
    }
    if (paused && summary) {
        fprintf(stderr, "profinject: --summary never pauses (summaries go on, 'profinject ctl "
                        "capture' opens windows of full detail); use one of --paused, --summary\n");
        return 1;
    }
    char library[PATH_MAX], absolute_output[PATH_MAX], shown[4 * PATH_MAX];
    if (find_library(library, sizeof(library)) != 0)
        return 1;
    output = absolute_output_dir(output, absolute_output, sizeof(absolute_output));
    if (!append && has_traces(output)) {
        fprintf(stderr, "profinject: %s already holds traces, which the analyzer would merge with "
                        "this run's into one report; choose another -o DIR, remove them, or add "
                        "--append to add to them\n", pi_shown(shown, sizeof(shown), output));
        return 1;
    }
    /* keep whatever else the user preloads, after us */
    const char *existing = getenv("LD_PRELOAD");
    char preload[2 * PATH_MAX];
    snprintf(preload, sizeof(preload), "%s%s%s", library, existing && *existing ? ":" : "",
             existing ? existing : "");
    setenv("LD_PRELOAD", preload, 1);
    setenv("PROFINJECT_OUTPUT", output, 1);
    if (paused)
        setenv("PROFINJECT_PAUSED", "1", 1);
    if (summary)
        setenv("PROFINJECT_MODE", "summary", 1);
    if (duration > 0) {
        /* every process of the tree, started now or later, ends its recording then itself */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        char until[32];
        snprintf(until, sizeof(until), "%llu",
                 (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec +
                     (unsigned long long)duration * 1000000ull);
        setenv(PI_RECORD_UNTIL_ENV, until, 1);
    }
    /* NVTX ranges come through the injection interface, when the program has any */
    if (!getenv("NVTX_INJECTION64_PATH"))
        setenv("NVTX_INJECTION64_PATH", library, 1);
    pid_t launcher = getpid();
    pid_t child = fork();
    if (child == 0) {
        /* The job does not outlive a launcher killed unawares (SIGKILL, the OOM
         * killer): it gets the SIGTERM the launcher would have forwarded, so its
         * processes end their traces and a supervisor (torchrun) stops its
         * workers, which a SIGKILL to it would leave running. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != launcher)
            _exit(128 + SIGTERM); /* the launcher died before prctl took effect */
        execvp(argv[i + 1], argv + i + 1);
        fprintf(stderr, "profinject: cannot run %s: %s\n",
                pi_shown(shown, sizeof(shown), argv[i + 1]), strerror(errno));
        _exit(127);
    }
    if (child < 0) {
        fprintf(stderr, "profinject: cannot start %s: %s\n",
                pi_shown(shown, sizeof(shown), argv[i + 1]), strerror(errno));
        return 1;
    }
    running_child = child;
    struct sigaction forward;
    memset(&forward, 0, sizeof(forward));
    forward.sa_handler = forward_signal;
    sigemptyset(&forward.sa_mask);
    forward.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &forward, NULL);
    sigaction(SIGHUP, &forward, NULL);
    sigaction(SIGQUIT, &forward, NULL);
    signal(SIGINT, SIG_IGN); /* the terminal sends Ctrl-C to the command itself */
    int status = wait_child(child);
    pi_shown(shown, sizeof(shown), output);
    if (has_traces(output)) {
        fprintf(stderr, "profinject: traces in %s\n", shown);
        pi_print_launcher_hint(stderr, "profinject: analyse them with: ", "analyze", output);
    } else {
        fprintf(stderr, "profinject: no trace in %s: the program ended within its first 100 ms "
                        "without a call the profiler records\n", shown);
    }
    return status;
}

static int cmd_analyze(int argc, char **argv)
{
    char analyzer[PATH_MAX];
    static const char *const beside[] = {"bin/profinject-analyze", "analyzer/profinject-analyze",
                                         NULL};
    if (find_sibling(analyzer, sizeof(analyzer), beside, X_OK) != 0)
        snprintf(analyzer, sizeof(analyzer), "profinject-analyze");
    argv[-1] = analyzer;
    (void)argc;
    execvp(analyzer, argv - 1);
    char shown[4 * PATH_MAX];
    fprintf(stderr, "profinject: cannot run %s: %s\n", pi_shown(shown, sizeof(shown), analyzer),
            strerror(errno));
    return 1;
}

int main(int argc, char **argv)
{
    pi_set_invoked_as(argv[0]);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 1 : 0;
    }
    if (strcmp(argv[1], "run") == 0)
        return cmd_run(argc - 2, argv + 2);
    if (strcmp(argv[1], "ctl") == 0)
        return pi_cmd_ctl(argc - 2, argv + 2);
    if (strcmp(argv[1], "attach") == 0)
        return cmd_attach(argc - 2, argv + 2);
    if (strcmp(argv[1], "stacks") == 0)
        return pi_cmd_stacks(argc - 2, argv + 2);
    if (strcmp(argv[1], "top") == 0)
        return pi_cmd_top(argc - 2, argv + 2);
    if (strcmp(argv[1], "analyze") == 0)
        return cmd_analyze(argc - 2, argv + 2);
    char shown[256];
    fprintf(stderr, "profinject: unknown command '%s'\n", pi_shown(shown, sizeof(shown), argv[1]));
    usage(stderr);
    return 1;
}
