/* helpers.c - see helpers.h */
#include "helpers.h"

#include "reader/lineage.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

void make_temp_dir(char *path, size_t size)
{
    const char *tmp = getenv("TMPDIR"); /* tools/test's folder of the run */
    int n = snprintf(path, size, "%s/profinject-test-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    if (n < 0 || (size_t)n >= size) /* a folder too deep for the caller's buffer */
        snprintf(path, size, "/tmp/profinject-test-XXXXXX");
    if (!mkdtemp(path))
        abort();
}

const char *test_program(const char *name)
{
    static char path[4][1024];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof(path[0]), "%s/%s", PI_TEST_PROGRAM_DIR, name);
    return p;
}

static void read_file(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

struct kill_later {
    unsigned ms;
};

static void kill_after(int pid, void *context)
{
    sleep_ms(((struct kill_later *)context)->ms);
    kill(pid, SIGKILL);
}

static void run(const char *trace_dir, char *const argv[], char *const extra_env[],
                void (*before_exec)(void), void (*during)(int, void *), void *context,
                struct run_result *result);

void run_program(const char *trace_dir, char *const argv[], char *const extra_env[],
                 void (*before_exec)(void), unsigned kill_after_ms, struct run_result *result)
{
    struct kill_later later = {kill_after_ms};
    run(trace_dir, argv, extra_env, before_exec, kill_after_ms ? kill_after : NULL, &later,
        result);
}

void run_in_new_dir(char *dir, size_t size, char *const argv[], struct run_result *result)
{
    make_temp_dir(dir, size);
    run_program(dir, argv, NULL, NULL, 0, result);
}

void run_program_during(const char *trace_dir, char *const argv[], char *const extra_env[],
                        void (*during)(int pid, void *context), void *context,
                        struct run_result *result)
{
    run(trace_dir, argv, extra_env, NULL, during, context, result);
}

static void run(const char *trace_dir, char *const argv[], char *const extra_env[],
                void (*before_exec)(void), void (*during)(int, void *), void *context,
                struct run_result *result)
{
    char out_path[] = "/tmp/profinject-out-XXXXXX", err_path[] = "/tmp/profinject-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    char *env[512];
    size_t n = 0;
    for (char **e = environ; *e && n < 400; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0 && strncmp(*e, "PROFINJECT_", 11) != 0)
            env[n++] = *e;
    char preload[1100], output[1100];
    /* an LD_PRELOAD of @extra_env (the tests' build of the library) replaces ours */
    int own_preload = 1;
    for (size_t i = 0; extra_env && extra_env[i]; i++)
        if (strncmp(extra_env[i], "LD_PRELOAD=", 11) == 0)
            own_preload = 0;
    if (trace_dir) {
        snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", PI_PRELOAD_PATH);
        snprintf(output, sizeof(output), "PROFINJECT_OUTPUT=%s", trace_dir);
        if (own_preload)
            env[n++] = preload;
        env[n++] = output;
    }
    for (size_t i = 0; extra_env && extra_env[i] && n < 510; i++)
        env[n++] = extra_env[i];
    env[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        if (before_exec)
            before_exec();
        execve(argv[0], argv, env);
        _exit(127);
    }
    if (during) {
        /* wait for the first line, so the program is surely running */
        for (int i = 0; i < 5000; i++) {
            struct stat st;
            if (fstat(out_fd, &st) == 0 && st.st_size > 0)
                break;
            sleep_ms(1);
        }
        during(pid, context);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    result->exited = WIFEXITED(status);
    result->status = WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status);
    close(out_fd);
    close(err_fd);
    read_file(out_path, result->out, sizeof(result->out));
    read_file(err_path, result->err, sizeof(result->err));
    unlink(out_path);
    unlink(err_path);
}

static int compare_files(const void *a, const void *b)
{
    return strcmp(((const struct traced_file *)a)->path, ((const struct traced_file *)b)->path);
}

static void read_one(struct pi_lineage *lineage, struct traced_file *f, event_visitor visit,
                     void *context)
{
    struct pi_reader *reader = pi_reader_open(f->path, f->error, sizeof(f->error));
    if (!reader) {
        f->read_error = 1;
        return;
    }
    /* a fork child's names made before the fork are in its parent's file, beside it */
    f->inherited_below = pi_reader_info(reader)->inherited_below;
    f->inherited_unresolved =
        !lineage || pi_lineage_attach(lineage, reader, f->error, sizeof(f->error)) != 0;
    f->inherited_unresolved &= f->inherited_below != 0;
    f->pid = pi_reader_info(reader)->header.pid;
    f->ppid = pi_reader_info(reader)->header.ppid;
    struct pi_event ev;
    int got;
    while ((got = pi_reader_next(reader, &ev)) == PI_READ_EVENT) {
        f->counts[ev.rec.kind]++;
        if (ev.rec.kind == PI_REC_LOST)
            f->lost += ev.rec.arg[0];
        if (ev.rec.kind == PI_REC_PROCESS_END) {
            f->has_end = 1;
            f->end_status = (int64_t)ev.rec.arg[0];
            f->end_reason = ev.rec.arg[1];
        }
        if (visit)
            visit(reader, &ev, f, context);
    }
    if (got == PI_READ_ERROR) {
        f->read_error = 1;
        snprintf(f->error, sizeof(f->error), "%s", pi_reader_error(reader));
    }
    f->truncated = pi_reader_truncated(reader, NULL, NULL);
    pi_reader_close(reader);
}

int read_trace_dir(const char *dir, struct traced_file *files, int max, event_visitor visit,
                   void *context)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL && n < max) {
        if (!strstr(entry->d_name, ".pitrace.zst"))
            continue;
        memset(&files[n], 0, sizeof(files[n]));
        snprintf(files[n].path, sizeof(files[n].path), "%s/%s", dir, entry->d_name);
        n++;
    }
    closedir(d);
    qsort(files, (size_t)n, sizeof(files[0]), compare_files);
    struct pi_lineage *lineage = pi_lineage_new(NULL, 0);
    for (int i = 0; i < n; i++)
        read_one(lineage, &files[i], visit, context);
    pi_lineage_free(lineage);
    return n;
}

int count_lines_with_prefix(const char *text, const char *prefix)
{
    int count = 0;
    size_t len = strlen(prefix);
    for (const char *line = text; line && *line;) {
        if (strncmp(line, prefix, len) == 0)
            count++;
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return count;
}
