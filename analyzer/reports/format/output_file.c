/* output_file.c - report files written whole or not at all (see output_file.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output_file.h"

/* Reports hold the traces' command lines and paths: they get the traces' permissions. */
static mode_t output_mode = 0600;

void pi_output_mode_set(unsigned mode)
{
    output_mode = mode & 0666;
}

unsigned pi_output_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return output_mode & ~mask;
}

FILE *pi_open_output(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)pi_output_mode());
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        fchmod(fd, (mode_t)pi_output_mode()); /* a file written before, maybe 0644 */
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && !out)
        close(fd);
    return out;
}

FILE *pi_create_temporary(const char *path, char *temporary, size_t size)
{
    /* not a file to replace: a device, a pipe (/dev/null, /dev/stdout, a FIFO a
     * viewer reads) is written into; renaming over it would destroy it */
    struct stat st;
    int exists = stat(path, &st) == 0;
    size_t length = strlen(path);
    if ((exists && S_ISDIR(st.st_mode)) || (length && path[length - 1] == '/')) {
        errno = EISDIR; /* a file name is wanted, not a directory to put it in */
        return NULL;
    }
    if (exists && !S_ISREG(st.st_mode)) {
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
    fchmod(fd, (mode_t)pi_output_mode()); /* mkstemp makes it 0600 */
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
