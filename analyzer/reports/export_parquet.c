/*
 * export_parquet.c - run export_parquet.py over the exported CSV tables.
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "export_parquet.h"

/* export_parquet.py's own exit statuses */
#define WRITER_WRONG_TABLE 2
#define WRITER_NO_PYARROW 3

extern char **environ;

int pi_export_format_parse(const char *text, enum pi_export_format *format)
{
    static const struct {
        const char *word;
        enum pi_export_format format;
    } words[] = {{"csv", PI_EXPORT_CSV}, {"parquet", PI_EXPORT_PARQUET}, {"both", PI_EXPORT_BOTH}};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcmp(text, words[i].word) == 0) {
            *format = words[i].format;
            return 0;
        }
    return -1;
}

/* The writer installed beside this program: BIN/../share/profinject/export_parquet.py. */
static int writer_path(char *out, size_t size)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    struct stat st;
    int length = snprintf(out, size, "%s/../share/profinject/export_parquet.py", self);
    return length > 0 && (size_t)length < size && stat(out, &st) == 0 ? 0 : -1;
}

/* The writer's exit status; 127 when the Python cannot be started. */
static int run_writer(const char *python, const char *writer, const char *dir, int drop_csv)
{
    char *argv[] = {(char *)python, (char *)writer, (char *)dir, drop_csv ? "--drop-csv" : NULL,
                    NULL};
    pid_t pid;
    if (posix_spawnp(&pid, python, NULL, NULL, argv, environ) != 0)
        return 127;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int pi_export_parquet(const char *dir, enum pi_export_format format)
{
    if (format == PI_EXPORT_CSV)
        return 0;
    int asked = format != PI_EXPORT_AS_AVAILABLE;
    const char *python = getenv("PROFINJECT_PYTHON");
    python = python && *python ? python : "python3";
    char writer[PATH_MAX + 64];
    int status = writer_path(writer, sizeof(writer)) == 0
                     ? run_writer(python, writer, dir, format == PI_EXPORT_PARQUET)
                     : -2;
    if (status == 0) {
        fprintf(stderr, "profinject-analyze: wrote Parquet tables in %s\n", dir);
        return 0;
    }
    const char *why = status == -2 ? "its writer, share/profinject/export_parquet.py, is not "
                                     "installed beside this program"
                      : status == 127 ? "no such Python (PROFINJECT_PYTHON names another)"
                      : status == WRITER_NO_PYARROW
                          ? "no pyarrow in that Python (pip install pyarrow, or name another "
                            "Python in PROFINJECT_PYTHON)"
                      : status == WRITER_WRONG_TABLE ? "a table is not the one the writer knows"
                                                     : "the writer failed";
    if (!asked && (status == -2 || status == 127 || status == WRITER_NO_PYARROW)) {
        fprintf(stderr,
                "profinject-analyze: CSV tables only, no Parquet: %s: %s (--export-format csv: "
                "CSV without this line)\n",
                python, why);
        return 0;
    }
    fprintf(stderr, "profinject-analyze: cannot write Parquet tables in %s with %s: %s%s\n", dir,
            python, why, format == PI_EXPORT_PARQUET ? " (the CSV tables are there)" : "");
    return -1;
}
