/* output_file.c - report files written whole or not at all (see report.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"

FILE *pi_create_temporary(const char *path, char *temporary, size_t size)
{
    /* not a file to replace: a device, a pipe (/dev/null, /dev/stdout, a FIFO a
     * viewer reads) is written into; renaming over it would destroy it */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        if (size)
            temporary[0] = '\0';
        return fopen(path, "w");
    }
    /* beside @path (rename stays in one file system), a name no one can foresee, created
     * O_EXCL by mkstemp: no link planted at a predictable name is followed */
    const char *slash = strrchr(path, '/');
    int dir_length = slash ? (int)(slash - path + 1) : 0;
    if ((size_t)snprintf(temporary, size, "%.*s.%s.XXXXXX", dir_length, path,
                         slash ? slash + 1 : path) >= size)
        return NULL;
    int fd = mkstemp(temporary);
    if (fd < 0)
        return NULL;
    mode_t mask = umask(0); /* mkstemp makes it 0600: give it the mode a new file gets */
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    FILE *out = fdopen(fd, "w");
    if (!out) {
        close(fd);
        unlink(temporary);
    }
    return out;
}

int pi_commit_temporary(FILE *out, const char *temporary, const char *path, int keep)
{
    if (!temporary[0]) /* written into a device or a pipe: nothing to sync or rename */
        return fclose(out) == 0 && keep ? 0 : -1;
    int ok = keep && fflush(out) == 0 && fsync(fileno(out)) == 0;
    ok = fclose(out) == 0 && ok;
    if (!ok || rename(temporary, path) != 0) {
        int saved = errno;
        unlink(temporary);
        errno = saved;
        return -1;
    }
    return 0;
}

int pi_write_file_atomically(const char *path, const char *data, size_t size)
{
    char temporary[4096];
    FILE *out = pi_create_temporary(path, temporary, sizeof(temporary));
    if (!out)
        return -1;
    return pi_commit_temporary(out, temporary, path, fwrite(data, 1, size, out) == size);
}
