/*
 * prog_io DIR: a known mix of I/O, every count and size fixed here.
 *   file:   creat + write 3 x 4096 bytes, close; open, read 5000 + 5000 + 2288
 *           + 0 bytes, pread 100 at 0, readv 2 x 50, close; fopen + fread
 *           12288 bytes, fclose; open + mmap 12288, close
 *   pipe:   write 10 bytes, poll (ready), read 10 bytes
 *   socket: socketpair, send 20, recv 20
 *   dup2:   the file descriptor number reused for a pipe is classified anew
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 64;
    char path[4096], block[4096], buf[8192];
    snprintf(path, sizeof(path), "%s/data.bin", argv[1]);
    memset(block, 'x', sizeof(block));

    int fd = creat(path, 0600);
    for (int i = 0; i < 3; i++)
        if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
            return 1;
    close(fd);

    fd = open(path, O_RDONLY);
    ssize_t total = 0, n;
    size_t sizes[] = {5000, 5000, 5000, 5000};
    for (int i = 0; i < 4; i++) {
        n = read(fd, buf, sizes[i]);
        total += n;
    }
    if (total != 12288)
        return 2;
    if (pread(fd, buf, 100, 0) != 100)
        return 3;
    struct iovec iov[2] = {{buf, 50}, {buf + 50, 50}};
    lseek(fd, 0, SEEK_SET);
    if (readv(fd, iov, 2) != 100)
        return 4;
    close(fd);

    FILE *f = fopen(path, "rb");
    static char big[12288];
    if (fread(big, 1, sizeof(big), f) != sizeof(big))
        return 5;
    fclose(f);

    fd = open(path, O_RDONLY);
    void *map = mmap(NULL, 12288, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return 6;
    munmap(map, 12288);
    close(fd);

    int p[2];
    if (pipe(p) != 0 || write(p[1], "0123456789", 10) != 10)
        return 7;
    struct pollfd pfd = {p[0], POLLIN, 0};
    if (poll(&pfd, 1, 1000) != 1 || read(p[0], buf, 10) != 10)
        return 8;

    int s[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) != 0 || send(s[0], buf, 20, 0) != 20 ||
        recv(s[1], buf, 20, 0) != 20)
        return 9;
    printf("ok\n");
    return 0;
}
