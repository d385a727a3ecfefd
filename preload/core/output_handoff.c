/* output_handoff.c - see output_handoff.h. Raw system calls: the socket
 * hooks must not see the profiler's own hand-over. */
#include "output_handoff.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "diagnostics.h"
#include "raw_syscalls.h"
#include "profinject/attach_protocol.h"

static int connect_abstract(const char *name)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    size_t length = strlen(name);
    if (length + 1 > sizeof(address.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(address.sun_path + 1, name, length);
    int fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval deadline = {PI_OUTPUT_HANDOFF_TIMEOUT_MS / 1000,
                               (PI_OUTPUT_HANDOFF_TIMEOUT_MS % 1000) * 1000};
    if (fd >= 0 &&
        (syscall(SYS_setsockopt, fd, SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof(deadline)) != 0 ||
         syscall(SYS_connect, fd, &address,
                 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + length)) != 0)) {
        int saved = errno;
        pi_sys_close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* One message with one descriptor: the directory's. */
static int receive_directory(int socket_fd, struct pi_output_handoff *message)
{
    struct pi_output_handoff_envelope envelope;
    struct msghdr *msg = pi_output_handoff_envelope(&envelope);
    ssize_t n = syscall(SYS_recvmsg, socket_fd, msg, MSG_CMSG_CLOEXEC);
    struct cmsghdr *c = n == (ssize_t)sizeof(*message) ? CMSG_FIRSTHDR(msg) : NULL;
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
        c->cmsg_len != CMSG_LEN(sizeof(int))) {
        errno = n < 0 ? errno : EPROTO;
        return -1;
    }
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof(fd));
    *message = envelope.message;
    return fd;
}

int pi_output_handoff_take(struct pi_config *config)
{
    const char *name = getenv(PI_OUTPUT_HANDOFF_ENV);
    if (!name || !*name)
        return 0;
    struct pi_output_handoff message = {0};
    int socket_fd = connect_abstract(name);
    int dir_fd = socket_fd >= 0 ? receive_directory(socket_fd, &message) : -1;
    int saved = errno;
    if (socket_fd >= 0)
        pi_sys_close(socket_fd);
    unsetenv(PI_OUTPUT_HANDOFF_ENV);
    if (dir_fd < 0) {
        pi_diag("attached: the output directory was not handed over (%s); nothing is recorded",
                strerror(saved));
        return -1;
    }
    config->output_dir_fd = dir_fd;
    config->host_pid = message.host_pid;
    config->host_pid_of = (int)getpid();
    return 0;
}
