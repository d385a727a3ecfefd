/* trace_inputs.c - command-line paths to trace files (see trace_inputs.h). */
#include "trace_inputs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profinject/trace_format.h"


const char *pi_file_type_name(unsigned mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a file";
}

static int add_path(struct pi_trace_inputs *inputs, const char *path)
{
    char **grown = realloc(inputs->paths, sizeof(char *) * (inputs->count + 1));
    if (!grown)
        return -1;
    inputs->paths = grown;
    inputs->paths[inputs->count] = strdup(path);
    return inputs->paths[inputs->count++] ? 0 : -1;
}

static int has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    return n > s && strcmp(name + n - s, suffix) == 0;
}

static int compare_paths(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_directory(struct pi_trace_inputs *inputs, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "profinject-analyze: %s: cannot open directory: %s\n", dir,
                strerror(errno));
        return -1;
    }
    size_t before = inputs->count;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL) {
        if (!has_suffix(entry->d_name, PI_TRACE_SUFFIX))
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, entry->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            /* a FIFO would have the reader wait forever for a writer */
            fprintf(stderr, "profinject-analyze: %s: skipped: not a regular file (%s)\n", path,
                    pi_file_type_name(st.st_mode));
            continue;
        }
        if (add_path(inputs, path) != 0) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    if (inputs->count == before) {
        fprintf(stderr, "profinject-analyze: %s: no trace files (*%s) in this directory\n", dir,
                PI_TRACE_SUFFIX);
        return -1;
    }
    qsort(inputs->paths + before, inputs->count - before, sizeof(char *), compare_paths);
    return 0;
}

int pi_trace_inputs_collect(struct pi_trace_inputs *inputs, char **args, int count)
{
    inputs->paths = NULL;
    inputs->count = 0;
    for (int i = 0; i < count; i++) {
        struct stat st;
        if (stat(args[i], &st) != 0) {
            fprintf(stderr, "profinject-analyze: %s: %s\n", args[i], strerror(errno));
            return -1;
        }
        int result = S_ISDIR(st.st_mode) ? add_directory(inputs, args[i])
                                         : add_path(inputs, args[i]);
        if (result != 0)
            return -1;
    }
    return 0;
}

/* A FIFO or a device named like a trace would have the reader wait forever: it is opened
 * without blocking, and only a regular file is read. */
int pi_trace_inputs_find(const struct pi_trace_inputs *inputs, const char *path)
{
    struct stat out, in;
    if (stat(path, &out) != 0)
        return -1;
    for (size_t i = 0; i < inputs->count; i++)
        if (stat(inputs->paths[i], &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            return (int)i;
    return -1;
}

unsigned pi_trace_inputs_mode(const struct pi_trace_inputs *inputs)
{
    unsigned mode = 0666;
    struct stat st;
    for (size_t i = 0; i < inputs->count; i++)
        if (stat(inputs->paths[i], &st) == 0)
            mode &= st.st_mode;
    return inputs->count ? mode & 0666 : 0600;
}

FILE *pi_open_trace_file(const char *path, char *error, size_t error_size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(error, error_size, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(error, error_size, "%s: not a regular file (%s): only trace files are read",
                 path, pi_file_type_name(st.st_mode));
        close(fd);
        return NULL;
    }
    FILE *file = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0 ? fdopen(fd, "rb")
                                                                           : NULL;
    if (!file) {
        snprintf(error, error_size, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return file;
}


void pi_trace_inputs_free(struct pi_trace_inputs *inputs)
{
    for (size_t i = 0; i < inputs->count; i++)
        free(inputs->paths[i]);
    free(inputs->paths);
    inputs->paths = NULL;
    inputs->count = 0;
}
