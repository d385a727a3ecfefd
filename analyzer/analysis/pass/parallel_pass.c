/* parallel_pass.c - files read by several threads, committed in file order (see parallel_pass.h). */
#include "parallel_pass.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pass/file_merge.h"
#include "analysis/pass/file_pass.h"

/* Files read ahead of the last committed, per thread: one being read, one read and
 * waiting for an earlier file that takes longer. */
#define WINDOW_PER_THREAD 2

enum job_state { JOB_FREE, JOB_READING, JOB_READ };

/* One file in flight. */
struct file_job {
    enum job_state state;
    int opened, failed;
    struct pi_analysis own;         /* the file's shares of the shared tables */
    struct pi_process_info process; /* moved into the analysis's processes at the commit */
    void *observer_file;
    char *messages; /* what reading it had to say (errors, a truncation), said at the commit */
    size_t messages_size;
};

struct parallel_pass {
    struct pi_analysis *analysis;
    char **paths;
    size_t count;
    struct file_job *jobs; /* file i in jobs[i % window] */
    size_t window;
    size_t next;      /* the next file to take */
    size_t committed; /* files committed: file i may be taken once i < committed + window */
    pthread_mutex_t lock;
    pthread_cond_t room; /* a file was committed: its slot is free */
    pthread_cond_t read; /* a file was read */
};

/* Read file @index into @job: what needs no order, on the thread that took it. */
static void read_file(struct parallel_pass *pass, struct file_job *job, size_t index)
{
    const struct pi_analysis *a = pass->analysis;
    FILE *messages = open_memstream(&job->messages, &job->messages_size);
    FILE *say = messages ? messages : stderr;
    char error[600];
    struct pi_reader *reader = pi_reader_open(pass->paths[index], error, sizeof(error));
    job->opened = reader != NULL;
    if (!reader) {
        fprintf(say, "profinject-analyze: %s\n", error);
    } else {
        memset(&job->process, 0, sizeof(job->process));
        job->process.path = strdup(pass->paths[index]);
        pi_file_analysis_init(&job->own, &a->options, &job->process);
        job->observer_file = pi_file_pass_open_observer(&a->options);
        pi_file_pass_inherit(a, &job->process, reader, say);
        job->failed =
            pi_file_pass_read(&job->own, &job->process, reader, job->observer_file, say) != 0;
        pi_reader_close(reader);
    }
    if (messages)
        fclose(messages);
}

static void *reader_thread(void *context)
{
    struct parallel_pass *pass = context;
    pthread_mutex_lock(&pass->lock);
    for (;;) {
        while (pass->next < pass->count && pass->next >= pass->committed + pass->window)
            pthread_cond_wait(&pass->room, &pass->lock);
        if (pass->next >= pass->count)
            break;
        size_t index = pass->next++;
        struct file_job *job = &pass->jobs[index % pass->window];
        job->state = JOB_READING;
        pthread_mutex_unlock(&pass->lock);
        read_file(pass, job, index);
        pthread_mutex_lock(&pass->lock);
        job->state = JOB_READ;
        pthread_cond_signal(&pass->read);
    }
    pthread_mutex_unlock(&pass->lock);
    return NULL;
}

/* Copy @size bytes of @from to @to, memory that is zero and was never written (calloc): the
 * parts that are zero in @from are not written, so pages with nothing in them take no memory,
 * as when reading one by one fills the slot in place. A process record is 9 KB, a good part
 * of it room for windows and devices that most processes leave empty (when it held its RSS
 * series inline, 35 KB, writing it whole was 25 KB more a rank). */
static void copy_into_zeroed(void *to, const void *from, size_t size)
{
    static const char zero[512];
    for (size_t at = 0; at < size; at += sizeof(zero)) {
        size_t n = size - at < sizeof(zero) ? size - at : sizeof(zero);
        if (memcmp((const char *)from + at, zero, n) != 0)
            memcpy((char *)to + at, (const char *)from + at, n);
    }
}

/* The file of @job takes its place after the ones before it (the calling thread). */
static void commit(struct pi_analysis *a, struct file_job *job)
{
    if (job->messages)
        fputs(job->messages, stderr);
    free(job->messages);
    job->messages = NULL;
    if (!job->opened) {
        a->bad_input = 1;
        return;
    }
    struct pi_process_info *p = &a->processes[a->process_count++];
    copy_into_zeroed(p, &job->process, sizeof(*p));
    pi_file_analysis_merge(a, &job->own, p);
    pi_file_analysis_free(&job->own);
    pi_file_pass_commit(a, p, job->observer_file);
    if (job->failed)
        a->bad_input = 1;
    pi_file_pass_progress(a, a->bytes_done);
}

int pi_parallel_pass(struct pi_analysis *a, char **paths, size_t count, unsigned jobs)
{
    struct parallel_pass pass;
    memset(&pass, 0, sizeof(pass));
    pass.analysis = a;
    pass.paths = paths;
    pass.count = count;
    pass.window = (size_t)jobs * WINDOW_PER_THREAD;
    pthread_t *threads = calloc(jobs, sizeof(*threads));
    pass.jobs = calloc(pass.window, sizeof(*pass.jobs));
    if (!threads || !pass.jobs) {
        free(threads);
        free(pass.jobs);
        return -1;
    }
    pthread_mutex_init(&pass.lock, NULL);
    pthread_cond_init(&pass.room, NULL);
    pthread_cond_init(&pass.read, NULL);
    unsigned started = 0;
    while (started < jobs && pthread_create(&threads[started], NULL, reader_thread, &pass) == 0)
        started++;
    if (started == 0) {
        pthread_cond_destroy(&pass.read);
        pthread_cond_destroy(&pass.room);
        pthread_mutex_destroy(&pass.lock);
        free(threads);
        free(pass.jobs);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        struct file_job *job = &pass.jobs[i % pass.window];
        pthread_mutex_lock(&pass.lock);
        /* the slot holds file i once it is read: no later file takes it before i is committed */
        while (i >= pass.next || job->state != JOB_READ)
            pthread_cond_wait(&pass.read, &pass.lock);
        pthread_mutex_unlock(&pass.lock);
        commit(a, job);
        pthread_mutex_lock(&pass.lock);
        job->state = JOB_FREE;
        pass.committed++;
        pthread_cond_broadcast(&pass.room);
        pthread_mutex_unlock(&pass.lock);
    }
    for (unsigned t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    pthread_cond_destroy(&pass.read);
    pthread_cond_destroy(&pass.room);
    pthread_mutex_destroy(&pass.lock);
    free(threads);
    free(pass.jobs);
    return 0;
}
