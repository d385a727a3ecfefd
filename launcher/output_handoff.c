/* output_handoff.c - see output_handoff.h. */
#define _GNU_SOURCE
#include "output_handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "namespaces.h"
#include "profinject/attach_protocol.h"

#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#define OPEN_TREE_CLONE 1

static int make_directories(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s", dir);
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            return -1;
        if (!(*p = saved))
            return 0;
    }
}

/* A listening abstract socket named @h->name in @h->target's network namespace. */
static int listen_in_target_network(struct pi_handoff *h)
{
    int fd = pi_socket_in_network_of(h->target);
    if (fd < 0) {
        fprintf(stderr, "profinject: cannot make a socket in the network namespace of process "
                        "%d (%s): entering it needs CAP_SYS_ADMIN\n", (int)h->target,
                strerror(errno));
        return -1;
    }
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    memcpy(address.sun_path + 1, h->name, strlen(h->name));
    socklen_t length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(h->name));
    if (bind(fd, (struct sockaddr *)&address, length) != 0 || listen(fd, 4) != 0) {
        fprintf(stderr, "profinject: cannot listen for process %d: %s\n", (int)h->target,
                strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void send_directory(struct pi_handoff *h, int client)
{
    struct ucred peer;
    socklen_t length = sizeof(peer);
    /* the process we attach to, nothing else of its namespace */
    if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.pid != h->target)
        return;
    struct pi_output_handoff_envelope envelope;
    struct msghdr *msg = pi_output_handoff_envelope(&envelope);
    envelope.message.host_pid = h->target;
    struct cmsghdr *c = CMSG_FIRSTHDR(msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &h->dir_fd, sizeof(int));
    if (sendmsg(client, msg, MSG_NOSIGNAL) == (ssize_t)sizeof(envelope.message))
        h->delivered = 1;
}

static void *serve(void *arg)
{
    struct pi_handoff *h = arg;
    uint64_t deadline = now_ms() + PI_OUTPUT_HANDOFF_TIMEOUT_MS * 2;
    while (!h->delivered && !h->stop && now_ms() < deadline) {
        struct pollfd p = {h->listen_fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int client = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (client >= 0) {
            send_directory(h, client);
            close(client);
        }
    }
    return NULL;
}

int pi_handoff_prepare(struct pi_handoff *h, pid_t target, const char *dir)
{
    memset(h, 0, sizeof(*h));
    h->target = target;
    h->listen_fd = h->dir_fd = -1;
    if (make_directories(dir) != 0) {
        fprintf(stderr, "profinject: cannot make %s: %s\n", dir, strerror(errno));
        return -1;
    }
    h->dir_fd = (int)syscall(SYS_open_tree, AT_FDCWD, dir, OPEN_TREE_CLONE | O_CLOEXEC);
    if (h->dir_fd < 0) {
        fprintf(stderr, "profinject: process %d lives in other namespaces (a container): its "
                        "traces come to %s through a confined copy of that directory's mount, "
                        "which needs CAP_SYS_ADMIN and Linux 5.2 (%s)\n",
                (int)target, dir, strerror(errno));
        return -1;
    }
    uint64_t nonce = 0;
    if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
        nonce = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
    snprintf(h->name, sizeof(h->name), "profinject-output/%d.%016llx", (int)getpid(),
             (unsigned long long)nonce);
    h->listen_fd = listen_in_target_network(h);
    if (h->listen_fd < 0 || pthread_create(&h->server, NULL, serve, h) != 0) {
        pi_handoff_finish(h);
        return -1;
    }
    return 0;
}

int pi_handoff_finish(struct pi_handoff *h)
{
    h->stop = 1;
    if (h->server) {
        pthread_join(h->server, NULL);
        h->server = 0;
    }
    if (h->listen_fd >= 0)
        close(h->listen_fd);
    if (h->dir_fd >= 0)
        close(h->dir_fd);
    h->listen_fd = h->dir_fd = -1;
    return h->delivered;
}
