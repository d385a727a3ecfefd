/* trace_inputs.c - command-line paths to trace files (see trace_inputs.h). */
#include "trace_inputs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profinject/trace_format.h"


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

void pi_trace_inputs_free(struct pi_trace_inputs *inputs)
{
    for (size_t i = 0; i < inputs->count; i++)
        free(inputs->paths[i]);
    free(inputs->paths);
    inputs->paths = NULL;
    inputs->count = 0;
}
