/*
 * prog_io_vector DIR: the batched and in-kernel I/O calls, every size fixed
 * here (the test reads them back from the trace):
 *   pwritev2 4096 + 4096 bytes to DIR/a.bin, preadv2 100 + 50 bytes of it;
 *   copy_file_range 5000 bytes of it into DIR/b.bin;
 *   sendfile 3000 bytes of it into a stream socket, the peer reads them;
 *   sendmmsg 3 datagrams of 7, 9 and 11 bytes, recvmmsg all three (27 bytes)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 64;
    char a[4096], b[4096], block[4096], buf[8192];
    snprintf(a, sizeof(a), "%s/a.bin", argv[1]);
    snprintf(b, sizeof(b), "%s/b.bin", argv[1]);
    memset(block, 'v', sizeof(block));

    int fd = open(a, O_RDWR | O_CREAT | O_TRUNC, 0600);
    struct iovec out[2] = {{block, 4096}, {block, 4096}};
    if (pwritev2(fd, out, 2, 0, 0) != 8192)
        return 1;
    struct iovec in[2] = {{buf, 100}, {buf + 100, 50}};
    if (preadv2(fd, in, 2, 0, 0) != 150)
        return 2;

    int copy = open(b, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    off_t from = 0;
    if (copy_file_range(fd, &from, copy, NULL, 5000, 0) != 5000)
        return 3;
    close(copy);

    int s[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) != 0)
        return 4;
    off_t at = 0;
    if (sendfile(s[0], fd, &at, 3000) != 3000)
        return 5;
    for (ssize_t got = 0, n; got < 3000; got += n)
        if ((n = recv(s[1], buf, sizeof(buf), 0)) <= 0)
            return 6;
    close(fd);

    int d[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, d) != 0)
        return 7;
    char m0[7] = {0}, m1[9] = {0}, m2[11] = {0}, r[3][32];
    struct iovec send_parts[3] = {{m0, 7}, {m1, 9}, {m2, 11}}, recv_parts[3];
    struct mmsghdr sent[3], received[3];
    memset(sent, 0, sizeof(sent));
    memset(received, 0, sizeof(received));
    for (int i = 0; i < 3; i++) {
        sent[i].msg_hdr.msg_iov = &send_parts[i];
        sent[i].msg_hdr.msg_iovlen = 1;
        recv_parts[i] = (struct iovec){r[i], sizeof(r[i])};
        received[i].msg_hdr.msg_iov = &recv_parts[i];
        received[i].msg_hdr.msg_iovlen = 1;
    }
    if (sendmmsg(d[0], sent, 3, 0) != 3 || recvmmsg(d[1], received, 3, 0, NULL) != 3)
        return 8;
    printf("ok\n");
    return 0;
}
