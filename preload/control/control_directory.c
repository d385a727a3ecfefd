/*
 * control_directory.c - where the control sockets go (see control_directory.h).
 */
#include "control_directory.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/diagnostics.h"
#include "core/raw_syscalls.h"
#include "core/settings.h"
#include "profinject/control_protocol.h"

static char chosen[PI_CONTROL_DIR_MAX + 1];

int pi_control_directory_choose(void)
{
    const char *dir = getenv("PROFINJECT_CONTROL_DIR");
    snprintf(chosen, sizeof(chosen), "/tmp/profinject-%u", (unsigned)geteuid());
    if (!dir)
        return 0;
    if (strlen(dir) > PI_CONTROL_DIR_MAX) {
        /* never a shortened path: that would be another directory than the one checked */
        pi_settings_tell("PROFINJECT_CONTROL_DIR is %zu bytes long; a control socket's path "
                         "must fit in 108 bytes, which leaves the directory %zu: on-demand "
                         "capture is off",
                         strlen(dir), (size_t)PI_CONTROL_DIR_MAX);
        return -1;
    }
    if (dir[0] == '/' || dir[0] == '@')
        snprintf(chosen, sizeof(chosen), "%s", dir);
    else /* `profinject ctl` does the same, and says the same */
        pi_settings_tell("PROFINJECT_CONTROL_DIR=%s is %s; using %s, as 'profinject ctl' does "
                         "(set an absolute path, or unset it)",
                         dir, *dir ? "not an absolute path" : "empty", chosen);
    return 0;
}

const char *pi_control_directory_open(const char *otherwise)
{
    if (chosen[0] == '@')
        return chosen; /* the abstract namespace: no file, nothing to check */
    if (syscall(SYS_mkdirat, AT_FDCWD, chosen, 0700) != 0 && errno != EEXIST) {
        pi_diag("cannot make the control directory %s (%s): no control socket; %s", chosen,
                strerror(errno), otherwise);
        return NULL;
    }
    struct stat st;
    if (pi_sys_stat(chosen, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        pi_diag("control directory %s is not a private directory of this user: no control "
                "socket (set PROFINJECT_CONTROL_DIR); %s",
                chosen, otherwise);
        return NULL;
    }
    return chosen;
}

/* Whether no one listens on the socket file @path: a connection is refused at once. */
static int nobody_listens(const char *path)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
    int fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return 0;
    int refused = syscall(SYS_connect, fd, &address, sizeof(address)) != 0 && errno == ECONNREFUSED;
    pi_sys_close(fd);
    return refused;
}

/* Whether @name in @dir is the socket of one of our processes that ended. */
static int left_by_the_dead(const char *dir, const char *name, unsigned long long pid_ns)
{
    int pid, end = 0;
    unsigned long long ns;
    if (sscanf(name, "%d.%llu.sock%n", &pid, &ns, &end) != 2 || name[end] != '\0' ||
        ns != pid_ns || pid <= 0 || pid == getpid())
        return 0;
    /* gone: not a process of another user (EPERM), nor one of ours */
    if (syscall(SYS_kill, pid, 0) == 0 || errno != ESRCH)
        return 0;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    struct stat st;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
        pi_sys_stat(path, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode) ||
        st.st_uid != geteuid())
        return 0;
    /* and still refused: a process that took the pid since would be listening (its
     * socket is made 100 ms after its start, long after the check above) */
    return nobody_listens(path);
}

void pi_control_directory_sweep(const char *dir, unsigned long long pid_ns)
{
    if (dir[0] == '@' || pid_ns == 0)
        return;
    int fd = pi_sys_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0)
        return;
    char buffer[4096] __attribute__((aligned(8)));
    long n;
    while ((n = syscall(SYS_getdents64, fd, buffer, sizeof(buffer))) > 0) {
        for (long at = 0; at < n;) {
            struct dirent64 *entry = (struct dirent64 *)(buffer + at);
            at += entry->d_reclen;
            if ((entry->d_type == DT_SOCK || entry->d_type == DT_UNKNOWN) &&
                left_by_the_dead(dir, entry->d_name, pid_ns))
                (void)syscall(SYS_unlinkat, fd, entry->d_name, 0);
        }
    }
    pi_sys_close(fd);
}
