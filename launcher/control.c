/* control.c - reaching the profiler in running processes: their control
 * sockets, or the fallback signal where it is the library's (see control.h). */
#define _GNU_SOURCE
#include "control.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "namespaces.h"
#include "proc_maps.h"
#include "terminal_text.h"
#include "profinject/control_protocol.h"


/* The control directory; exits with a message when its sockets' paths cannot fit. An
 * empty or relative one is the default directory, as in the library (control_channel.c). */
void pi_control_dir(char *out, size_t size)
{
    const char *dir = getenv("PROFINJECT_CONTROL_DIR");
    if (dir && *dir && strlen(dir) > PI_CONTROL_DIR_MAX) {
        fprintf(stderr, "profinject: PROFINJECT_CONTROL_DIR is %zu bytes long; a control "
                        "socket's path must fit in 108 bytes, which leaves the directory %zu\n",
                strlen(dir), (size_t)PI_CONTROL_DIR_MAX);
        exit(2);
    }
    snprintf(out, size, "/tmp/profinject-%u", (unsigned)geteuid());
    if (dir && (dir[0] == '/' || dir[0] == '@'))
        snprintf(out, size, "%s", dir);
    else if (dir)
        fprintf(stderr, "profinject: PROFINJECT_CONTROL_DIR=%s is %s; using %s, as the "
                        "profiled processes do (set an absolute path, or unset it)\n",
                dir, *dir ? "not an absolute path" : "empty", out);
}

int pi_control_parse_pid(const char *command, const char *text)
{
    char *end;
    long value = strtol(text, &end, 10);
    if (!*text || *end || value <= 0 || value > INT32_MAX) {
        char shown[256];
        fprintf(stderr, "profinject: %s: %s is not a process id\n", command,
                pi_shown(shown, sizeof(shown), text));
        return 0;
    }
    return (int)value;
}

void pi_control_say_none_answered(int pid)
{
    if (kill(pid, 0) != 0 && errno == ESRCH)
        fprintf(stderr, "profinject: no process %d\n", pid);
    else
        fprintf(stderr, "profinject: no process under the profiler answered at pid %d (is it "
                        "running under profinject, as this user? 'profinject attach %d' profiles "
                        "one that is not)\n", pid, pid);
}

/* @pid as it sees itself (the last NSpid of /proc/PID/status) and its PID namespace's inode. */
static int pid_in_namespace(int pid, int *inner, unsigned long long *pid_ns)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
    if (stat(path, &st) != 0)
        return -1;
    *pid_ns = st.st_ino;
    *inner = pi_pid_inside(pid);
    return 0;
}

/* PID and its descendants, from /proc/PID/task/TID/children. */
int pi_control_collect_tree(int pid, int *pids, int n)
{
    if (n >= PI_CONTROL_TREE_MAX)
        return n;
    pids[n++] = pid;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", pid);
    DIR *tasks = opendir(path);
    struct dirent *task;
    while (tasks && (task = readdir(tasks))) {
        if (task->d_name[0] == '.')
            continue;
        char children[128];
        snprintf(children, sizeof(children), "/proc/%d/task/%s/children", pid, task->d_name);
        FILE *f = fopen(children, "r");
        int child;
        while (f && fscanf(f, "%d", &child) == 1)
            n = pi_control_collect_tree(child, pids, n);
        if (f)
            fclose(f);
    }
    if (tasks)
        closedir(tasks);
    return n;
}

/* The longest wait for one process's answer (ctl --timeout). */
long pi_control_timeout_ms = 5000;

/* @fd connected to @address within the answer's deadline (ctl --timeout); closed and -1
 * when it cannot be. */
static int connect_within_deadline(int fd, const struct sockaddr_un *address, socklen_t length)
{
    struct timeval deadline = {pi_control_timeout_ms / 1000, (pi_control_timeout_ms % 1000) * 1000};
    if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof(deadline)) == 0 &&
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &deadline, sizeof(deadline)) == 0 &&
        connect(fd, (const struct sockaddr *)address, length) == 0)
        return fd;
    if (fd >= 0)
        close(fd);
    return -1;
}

static int connect_to(const char *path)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
    return connect_within_deadline(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), &address,
                                   sizeof(address));
}

/* Connect @fd to the abstract socket @name (no leading NUL); closes it on failure. */
static int connect_abstract(int fd, const char *name)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    size_t length = strlen(name);
    if (length + 1 > sizeof(address.sun_path)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    memcpy(address.sun_path + 1, name, length);
    return connect_within_deadline(
        fd, &address, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + length));
}

/* A socket refused: its name said it was @pid's, its peer is another process. */
static struct {
    int seen, peer_pid;
    unsigned peer_uid;
    char where[PATH_MAX];
} refused;

/* Whether @uid is one of @pid's (real, effective, saved, file system). */
static int has_uid(int pid, unsigned uid)
{
    char line[128];
    unsigned ids[4];
    if (pi_status_field(pid, "Uid", line, sizeof(line)) != 0 ||
        sscanf(line, "%u %u %u %u", &ids[0], &ids[1], &ids[2], &ids[3]) != 4)
        return 0;
    return uid == ids[0] || uid == ids[1] || uid == ids[2] || uid == ids[3];
}

/* Whether the socket @fd is connected to is held by @pid, as the kernel says
 * (SO_PEERCRED: who called listen(), its pid as we see it), with one of @pid's
 * uids or root's. A name anyone could have bound (another user's directory, the
 * abstract namespace) proves nothing. */
static int held_by(int fd, int pid)
{
    struct ucred peer;
    socklen_t length = sizeof(peer);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0)
        return 0;
    return peer.pid == pid && (peer.uid == 0 || has_uid(pid, peer.uid));
}

/* @fd when its peer is @pid; else closed, -1, and the refusal kept to be told. */
static int checked(int fd, int pid, const char *where)
{
    if (fd < 0 || held_by(fd, pid))
        return fd;
    struct ucred peer = {0};
    socklen_t length = sizeof(peer);
    (void)getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length);
    close(fd);
    refused.seen = 1;
    refused.peer_pid = peer.pid;
    refused.peer_uid = peer.uid;
    snprintf(refused.where, sizeof(refused.where), "%s", where);
    return -1;
}

/* @text as printable ASCII: a backslash and every other byte escaped, so that
 * what a process answers cannot drive the terminal. */
static void print_escaped(FILE *out, const char *text, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\\')
            fputs("\\\\", out);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c == '\t')
            fputs("\\t", out);
        else if (c < 0x20 || c > 0x7e)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
}

/* The socket of @pid named @name as its own network namespace lists it
 * (/proc/PID/net/unix): a file in its mount namespace, reached through its
 * root, or an abstract one, reached from its network namespace. */
static int connect_as_listed(int pid, const char *name)
{
    char path[PATH_MAX], line[PATH_MAX + 128], bound[PATH_MAX];
    snprintf(path, sizeof(path), "/proc/%d/net/unix", pid);
    FILE *table = fopen(path, "r");
    int fd = -1;
    size_t name_length = strlen(name);
    while (table && fd < 0 && fgets(line, sizeof(line), table)) {
        /* Num RefCount Protocol Flags Type St Inode Path */
        if (sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %4095s", bound) != 1)
            continue;
        size_t length = strlen(bound);
        if (length <= name_length || strcmp(bound + length - name_length, name) != 0 ||
            bound[length - name_length - 1] != '/')
            continue;
        if (bound[0] == '@') {
            fd = checked(connect_abstract(pi_socket_in_network_of(pid), bound + 1), pid, bound);
            continue;
        }
        /* through a descriptor of its directory, so the path fits in sun_path */
        bound[length - name_length - 1] = '\0';
        snprintf(path, sizeof(path), "/proc/%d/root%s", pid, bound);
        int dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
            continue;
        snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dir, name);
        fd = connect_to(path);
        close(dir);
        bound[length - name_length - 1] = '/';
        fd = checked(fd, pid, bound);
    }
    if (table)
        fclose(table);
    return fd;
}

/* The socket of @pid: by its name (the pid it sees and its namespace) in
 * our control directory, or as its network namespace lists it (another
 * mount namespace, an abstract socket), or else the one of the directory
 * whose peer is @pid. */
static int open_control(const char *dir, int pid)
{
    char path[PATH_MAX], name[64];
    int inner;
    unsigned long long pid_ns;
    if (pid_in_namespace(pid, &inner, &pid_ns) == 0) {
        snprintf(name, sizeof(name), PI_CONTROL_SOCKET_FORMAT, "", inner, pid_ns);
        snprintf(path, sizeof(path), "%s%s", dir, name);
        int fd = dir[0] == '@'
                     ? connect_abstract(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), path + 1)
                     : connect_to(path);
        fd = checked(fd, pid, path);
        if (fd < 0)
            fd = connect_as_listed(pid, name + 1);
        if (fd >= 0)
            return fd;
    }
    int fd = -1;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strstr(e->d_name, ".sock"))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        fd = connect_to(path);
        if (fd >= 0 && held_by(fd, pid))
            break;
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    if (d)
        closedir(d);
    return fd;
}

/* Is libprofinject.so mapped in @pid? Only then may the fallback signal go
 * there: for any other process a real-time signal's default is to die. */
int pi_runs_profiler(int pid)
{
    char path[64], line[4096];
    snprintf(path, sizeof(path), "/proc/%d/maps", pid);
    FILE *maps = fopen(path, "r");
    int found = 0;
    while (maps && !found && fgets(line, sizeof(line), maps))
        found = strstr(line, "libprofinject.so") != NULL; /* a file, or a memfd of attach */
    if (maps)
        fclose(maps);
    return found;
}

/* Has @pid said that the fallback signal is the library's to handle? Its
 * control thread's name says so, and the kernel must agree that the signal
 * is caught (SigCgt): for any other process the signal's default is to die. */
static int takes_control_signal(int pid)
{
    char path[96], name[32];
    int said = 0;
    snprintf(path, sizeof(path), "/proc/%d/task", pid);
    DIR *tasks = opendir(path);
    struct dirent *task;
    while (tasks && !said && (task = readdir(tasks))) {
        snprintf(path, sizeof(path), "/proc/%d/task/%.20s/comm", pid, task->d_name);
        FILE *f = fopen(path, "r");
        said = f && fgets(name, sizeof(name), f) &&
               strcmp(name, PI_CONTROL_THREAD_SIGNAL "\n") == 0;
        if (f)
            fclose(f);
    }
    if (tasks)
        closedir(tasks);
    char mask[32];
    unsigned long long caught = 0;
    if (pi_status_field(pid, "SigCgt", mask, sizeof(mask)) != 0 ||
        sscanf(mask, "%llx", &caught) != 1)
        caught = 0;
    int bit = SIGRTMIN + PI_CONTROL_SIGNAL_OFFSET - 1;
    return said && (caught >> bit & 1);
}

#define SOCKET_GRACE_MS 1000
#define REPLY_MAX (512 * 1024)

/* "PID: " and each line of @reply, our newlines kept, anything else in it escaped; a reply
 * of many lines starts on the next line, indented */
static void print_reply(int pid, const char *reply, size_t length)
{
    if (length && reply[length - 1] == '\n')
        length--;
    const char *newline = memchr(reply, '\n', length);
    printf("%d:%s", pid, newline ? "\n  " : " ");
    for (const char *line = reply, *end = reply + length; line <= end;) {
        const char *stop = memchr(line, '\n', (size_t)(end - line));
        if (!stop)
            stop = end;
        print_escaped(stdout, line, (size_t)(stop - line));
        line = stop + 1;
        if (line <= end)
            printf("\n  ");
    }
    putchar('\n');
}

/* The control socket of @pid, waiting for it a while where the library is mapped; -1, with
 * the reason said where another process holds a socket of its name */
static int reach(const char *dir, int pid)
{
    refused.seen = 0;
    int fd = open_control(dir, pid);
    /* a process makes its socket at its first flush (100 ms in): one that
     * maps the library is given a second for it */
    for (int waited = 0; fd < 0 && waited < SOCKET_GRACE_MS && pi_runs_profiler(pid);
         waited += 20) {
        usleep(20000);
        fd = open_control(dir, pid);
    }
    if (fd < 0 && refused.seen) {
        fprintf(stderr, "profinject: %d: refused the control socket ", pid);
        print_escaped(stderr, refused.where, strlen(refused.where));
        fprintf(stderr, ": it is held by pid %d (uid %u), not by process %d: another process "
                        "bound a socket of that name; nothing was sent to it\n",
                refused.peer_pid, refused.peer_uid, pid);
    }
    return fd;
}

/* @request over @fd, and the whole answer into @reply: its length, or -1 (said) */
static ssize_t exchange(int fd, int pid, const char *request, char *reply, size_t size)
{
    size_t got = 0;
    ssize_t n = 0;
    int sent = write(fd, request, strlen(request)) == (ssize_t)strlen(request);
    while (sent && got + 1 < size && (n = read(fd, reply + got, size - 1 - got)) > 0)
        got += (size_t)n;
    int timed_out = sent && n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    close(fd);
    reply[got] = '\0';
    if (timed_out)
        fprintf(stderr, "profinject: %d: no %sanswer within %ld ms (--timeout)\n", pid,
                got ? "whole " : "", pi_control_timeout_ms);
    return sent && got > 0 && n >= 0 ? (ssize_t)got : -1;
}

ssize_t pi_control_ask(const char *dir, int pid, const char *request, char *reply, size_t size)
{
    int fd = reach(dir, pid);
    return fd < 0 ? -1 : exchange(fd, pid, request, reply, size);
}

int pi_control_one(const char *dir, int pid, const char *request, int fallback_value)
{
    return pi_control_one_then(dir, pid, request, fallback_value, NULL, NULL);
}

int pi_control_one_then(const char *dir, int pid, const char *request, int fallback_value,
                        pi_control_answered then, void *arg)
{
    int fd = reach(dir, pid);
    if (fd < 0) {
        /* no socket we can reach: the signal, for start and stop, where it is ours */
        if (!pi_runs_profiler(pid))
            return -1;
        if (!fallback_value || !takes_control_signal(pid)) {
            if (refused.seen)
                return -1;
            fprintf(stderr, "profinject: %d: not reached: it maps the library but has no control "
                            "socket here%s\n", pid, fallback_value ? " and does not handle the "
                            "control signal (control off, disabled, or not started yet)" : "");
            return -1;
        }
        union sigval value = {.sival_int = fallback_value};
        if (sigqueue(pid, SIGRTMIN + PI_CONTROL_SIGNAL_OFFSET, value) != 0)
            return -1;
        printf("%d: signalled (%s)\n", pid,
               fallback_value == PI_CONTROL_SIGNAL_START ? "start" : "stop");
        return 0;
    }
    /* the answer, to the end: one line, or the many of "stacks" */
    static char reply[REPLY_MAX];
    ssize_t got = exchange(fd, pid, request, reply, sizeof(reply));
    if (got > 0)
        print_reply(pid, reply, (size_t)got);
    int answered = got > 0 && strncmp(reply, "refused", 7) != 0;
    if (answered && then)
        then(pid, reply, arg);
    return answered ? 0 : -1;
}

int pi_control_tree(int pid, const char *request, int whole_tree)
{
    return pi_control_tree_then(pid, request, whole_tree, NULL, NULL);
}

int pi_control_tree_then(int pid, const char *request, int whole_tree, pi_control_answered then,
                         void *arg)
{
    char dir[PATH_MAX];
    pi_control_dir(dir, sizeof(dir));
    int fallback = strncmp(request, "start", 5) == 0  ? PI_CONTROL_SIGNAL_START
                   : strncmp(request, "stop", 4) == 0 ? PI_CONTROL_SIGNAL_STOP
                                                      : 0;
    static int pids[PI_CONTROL_TREE_MAX];
    int n = whole_tree ? pi_control_collect_tree(pid, pids, 0) : (pids[0] = pid, 1), answered = 0;
    for (int i = 0; i < n; i++)
        answered += pi_control_one_then(dir, pids[i], request, fallback, then, arg) == 0;
    return answered;
}
