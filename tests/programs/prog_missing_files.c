/*
 * prog_missing_files DIR N: opens that fail, every count fixed here.
 *   N x open of DIR/missing-I (ENOENT), 2 x open of DIR/file/x where
 *   DIR/file is a regular file (ENOTDIR), 3 x fopen of DIR/missing (ENOENT),
 *   and one open that succeeds (creat of DIR/file).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 64;
    char path[4096];
    snprintf(path, sizeof(path), "%s/file", argv[1]);
    int fd = creat(path, 0600);
    if (fd < 0)
        return 1;
    close(fd);
    for (int i = 0, n = atoi(argv[2]); i < n; i++) {
        snprintf(path, sizeof(path), "%s/missing-%d", argv[1], i);
        if (open(path, O_RDONLY) >= 0)
            return 1;
    }
    snprintf(path, sizeof(path), "%s/file/x", argv[1]);
    for (int i = 0; i < 2; i++)
        if (open(path, O_RDONLY) >= 0)
            return 1;
    snprintf(path, sizeof(path), "%s/missing", argv[1]);
    for (int i = 0; i < 3; i++)
        if (fopen(path, "r"))
            return 1;
    return 0;
}
