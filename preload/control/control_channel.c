/*
 * control_channel.c - capture windows on demand (see control_channel.h).
 *
 * Socket directory: see control_directory.h. Socket: <pid>.<pid ns>.sock,
 * 0600, removed when the image ends (exit, a fatal signal, exec); a
 * connecting process must have our uid (or be root), checked with
 * SO_PEERCRED, as `profinject ctl` checks that the socket is ours. Protocol:
 * one line ("start", "stop", "status", "capture <ms>"), one line back;
 * "stacks" gets its Python threads' stacks back, many lines, to the end.
 */
#include "control_channel.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/background_thread.h"
#include "attach_bindings.h"
#include "callsite/python_stacks.h"
#include "control_directory.h"
#include "core/diagnostics.h"
#include "core/process_events.h"
#include "core/process_sample.h"
#include "core/guard.h"
#include "core/live_figures.h"
#include "cuda/live_allocations.h"
#include "core/raw_syscalls.h"
#include "core/real_functions.h"
#include "core/recorder.h"
#include "core/summary_mode.h"
#include "core/settings.h"
#include "core/thread_cpu_edges.h"

static char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int listen_fd = -1;
/* The socket is made on the writer while the process may be ending on
 * another thread: whichever of the two comes second removes it. */
static _Atomic int socket_bound, control_ended;
static _Atomic uint64_t capture_deadline_ns;

/* What a window's close time is set past the switch (see pi_capture_set). */
#define CLOSE_MARGIN_S 2e-6

void pi_capture_set(int on)
{
    if (pi_recorder_state() != PI_STATE_RUNNING)
        return;
    if (pi_recorder_summary_mode()) { /* recording never pauses: a window of full detail */
        pi_summary_mode_request_detail(on);
        /* opened or closed by the writer's flush, now rather than at its next (a second
         * away in summary mode) */
        pi_recorder_flush_sync(2000);
        return;
    }
    if (on) {
        if (atomic_load(&pi_recording))
            return;
        if (pi_live_open_window() != 0)
            pi_diag("a capture window opened without the full list of live CUDA allocations");
        pi_thread_cpu_edges(pi_clock_ticks(), PI_THREAD_CPU_OPENING);
    } else if (atomic_load(&pi_recording)) {
        /* what is still on its way (GPU times) is written while the window is open */
        int guard = pi_guard_enter();
        pi_process_event_notify(PI_EVENT_WINDOW_CLOSING);
        pi_guard_restore(guard);
        /* recording off first, then the time of the close, read once the switch is
         * seen by all: a record that is still on its way read its time before the
         * switch, so none comes later than the close */
        atomic_store(&pi_recording, 0);
        /* and a margin past it: a thread that saw recording on read its clock before, but
         * another CPU's clock may run a little ahead of ours (on a virtual machine) */
        uint64_t closed = pi_clock_ticks_ordered() +
                          (uint64_t)(pi_recorder_ticks_per_second() * CLOSE_MARGIN_S);
        pi_emit_while_paused(PI_REC_CAPTURE, 0, closed, 0, 0, 0, 0);
        pi_thread_cpu_edges(closed, PI_THREAD_CPU_CLOSING);
        pi_recorder_flush_sync(2000);
    }
}

/* The fallback signal's request (PI_CONTROL_SIGNAL_START or _STOP), for the
 * listener to carry out: the handler only stores it and writes one byte to
 * wake_pipe (both async-signal-safe); the window's work (the live allocations'
 * snapshot, the records, the flush) is not. */
static _Atomic int signal_request;
static int wake_pipe[2] = {-1, -1};

static void open_wake_pipe(void)
{
    for (int i = 0; i < 2; i++)
        if (wake_pipe[i] >= 0)
            pi_sys_close(wake_pipe[i]);
    if (syscall(SYS_pipe2, wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        wake_pipe[0] = wake_pipe[1] = -1;
}

static void answer(int fd, const char *text)
{
    pi_sys_write_all(fd, text, strlen(text));
}

/* The longest wait for the interpreter's lock, for "stacks"; the client waits longer. */
#define STACKS_TIMEOUT_MS 1000
#define STACKS_TEXT_MAX (256 * 1024)

static void answer_stacks(int client)
{
    char *text = malloc(STACKS_TEXT_MAX);
    if (!text) {
        answer(client, "out of memory\n");
        return;
    }
    size_t length = pi_python_stacks(text, STACKS_TEXT_MAX, STACKS_TIMEOUT_MS);
    pi_sys_write_all(client, text, length);
    free(text);
}

/* "figures": the process's own counters as one JSON object, for `profinject top` */
static void answer_figures(int client)
{
    enum { SIZE = 16384 };
    char *text = malloc(SIZE);
    if (!text) {
        answer(client, "{}\n");
        return;
    }
    /* read as the writer reads its samples */
    struct pi_process_sampler sampler = {0};
    struct pi_process_sample sample;
    pi_process_sampler_open(&sampler, 0);
    pi_process_sample_read(&sampler, &sample);
    pi_process_sampler_close(&sampler);
    int schedstat = pi_run_delay_open(pi_recorder_pid());
    int64_t waiting = pi_run_delay_read(schedstat);
    if (schedstat >= 0)
        pi_sys_close(schedstat);
    int n = snprintf(text, SIZE,
                     "{\"pid\": %d, \"ppid\": %d, \"recording\": %s, \"mode\": \"%s\", "
                     "\"rss_bytes\": %llu, \"device_bytes\": %llu, \"main_cpu_ns\": %llu, "
                     "\"main_cpu_wait_ns\": %llu, ",
                     pi_recorder_pid(), (int)getppid(), atomic_load(&pi_recording) ? "true" : "false",
                     pi_recorder_summary_mode() ? "summary" : "full",
                     (unsigned long long)sample.rss_bytes,
                     (unsigned long long)pi_live_device_bytes(),
                     (unsigned long long)pi_clock_thread_cpu_ns((uint32_t)pi_recorder_pid()),
                     (unsigned long long)(waiting > 0 ? waiting : 0));
    size_t at = n > 0 && n < SIZE ? (size_t)n : 0;
    at += pi_live_figures_json(text + at, SIZE - at - 2, pi_recorder_ticks_per_second());
    text[at++] = '}';
    text[at++] = '\n';
    pi_sys_write_all(client, text, at);
    free(text);
}

/* The longest a client may take to send its request or read the answer. */
#define CLIENT_DEADLINE_MS 500

static void serve(int client)
{
    struct ucred peer;
    socklen_t length = sizeof(peer);
    if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 ||
        (peer.uid != geteuid() && peer.uid != 0)) {
        answer(client, "refused\n");
        return;
    }
    /* a client that sends nothing, or reads no answer, holds the listener at most this long */
    struct timeval deadline = {CLIENT_DEADLINE_MS / 1000, (CLIENT_DEADLINE_MS % 1000) * 1000};
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof(deadline));
    setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &deadline, sizeof(deadline));
    char line[64] = {0};
    ssize_t n = pi_sys_read(client, line, sizeof(line) - 1);
    if (n <= 0)
        return;
    line[n] = '\0';
    long ms = 0;
    if (strncmp(line, "stacks", 6) == 0) {
        answer_stacks(client);
        return;
    }
    if (strncmp(line, "figures", 7) == 0) {
        answer_figures(client);
        return;
    }
    if (strncmp(line, "start", 5) == 0) {
        atomic_store(&capture_deadline_ns, 0);
        pi_capture_set(1);
    } else if (strncmp(line, "stop", 4) == 0) {
        atomic_store(&capture_deadline_ns, 0);
        pi_capture_set(0);
    } else if (sscanf(line, "capture %ld", &ms) == 1 && ms > 0) {
        pi_capture_set(1);
        atomic_store(&capture_deadline_ns, pi_clock_ns(CLOCK_MONOTONIC) + (uint64_t)ms * 1000000u);
    } else if (strncmp(line, "detach", 6) == 0) {
        /* the calls go back where they went before attach; the library stays, idle */
        atomic_store(&capture_deadline_ns, 0);
        pi_attach_unbind();
        pi_capture_set(0);
        pi_live_forget_all(); /* frees after this are not seen: a later window must not list them */
    } else if (strncmp(line, "status", 6) != 0) {
        answer(client, "unknown command\n");
        return;
    }
    char reply[128];
    snprintf(reply, sizeof(reply), "%s %d %s\n", atomic_load(&pi_recording) ? "recording" : "paused",
             pi_recorder_pid(), pi_recorder_trace_path());
    answer(client, reply);
}

/* The control signal's handler is ours (the application had none). */
static int signal_handler_ours;

/* Milliseconds until a timed window closes, at most @otherwise (-1: none). */
static int until_deadline_ms(int otherwise)
{
    uint64_t deadline = atomic_load(&capture_deadline_ns);
    if (!deadline)
        return otherwise;
    uint64_t now = pi_clock_ns(CLOCK_MONOTONIC);
    uint64_t ms = deadline > now ? (deadline - now + 999999) / 1000000 : 0;
    return otherwise >= 0 && (uint64_t)otherwise < ms ? otherwise : (int)(ms < 60000 ? ms : 60000);
}

static void *listener(void *arg)
{
    int fd = (int)(intptr_t)arg;
    pi_guard_enter(); /* our socket I/O is not the application's */
    /* what `profinject ctl` reads in /proc/PID/task/TID/comm, from any namespace,
     * before it sends the fallback signal: PI_CONTROL_THREAD_SIGNAL says the
     * handler is ours, so the signal cannot end the process */
    (void)syscall(SYS_prctl, PR_SET_NAME,
                  signal_handler_ours ? PI_CONTROL_THREAD_SIGNAL : PI_CONTROL_THREAD);
    for (;;) {
        /* asleep until a request or the signal comes, or a timed window is to close */
        struct pollfd p[2] = {{fd, POLLIN, 0}, {wake_pipe[0], POLLIN, 0}};
        /* attached: every 100 ms, bind modules loaded since (dlopen is not ours to wrap:
         * it depends on its caller's address) */
        int timeout = until_deadline_ms(pi_attach_bound() ? 100 : -1);
        int ready = (int)syscall(SYS_poll, p, wake_pipe[0] >= 0 ? 2 : 1, timeout);
        if (ready > 0 && (p[1].revents & POLLIN)) {
            char drain[16];
            while (pi_sys_read(wake_pipe[0], drain, sizeof(drain)) > 0)
                ;
            int request = atomic_exchange(&signal_request, 0);
            if (request) {
                atomic_store(&capture_deadline_ns, 0);
                pi_capture_set(request == PI_CONTROL_SIGNAL_START);
            }
        }
        if (pi_attach_bound() && pi_attach_modules_changed())
            pi_attach_bind();
        uint64_t deadline = atomic_load(&capture_deadline_ns);
        if (deadline && pi_clock_ns(CLOCK_MONOTONIC) >= deadline) {
            atomic_store(&capture_deadline_ns, 0);
            pi_capture_set(0);
        }
        if (ready <= 0 || !(p[0].revents & POLLIN))
            continue;
        int client = (int)syscall(SYS_accept4, fd, NULL, NULL, SOCK_CLOEXEC);
        if (client < 0)
            continue;
        serve(client);
        pi_sys_close(client);
    }
    return NULL;
}

static void on_control_signal(int sig, siginfo_t *info, void *context)
{
    (void)sig, (void)context;
    int saved = errno;
    int request = info->si_value.sival_int;
    if (info->si_code == SI_QUEUE &&
        (request == PI_CONTROL_SIGNAL_START || request == PI_CONTROL_SIGNAL_STOP)) {
        atomic_store(&signal_request, request);
        if (wake_pipe[1] >= 0)
            (void)syscall(SYS_write, wake_pipe[1], "w", 1);
    }
    errno = saved;
}

/* A socket listening at socket_path, or -1 with errno. */
static int bind_socket(void)
{
    int fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof(address.sun_path), "%s", socket_path);
    socklen_t length = sizeof(address);
    int abstract = socket_path[0] == '@';
    if (abstract) {
        address.sun_path[0] = '\0'; /* the name is what follows, without a NUL of its own */
        length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(socket_path));
    } else {
        unlink(socket_path); /* a stale socket of a process that had our pid */
    }
    /* listen right after bind: a connect between the two is refused, and a client
     * (profinject ctl) may connect as soon as the path appears; the mode after,
     * as the directory (ours, 0700) already keeps everyone else out */
    if (syscall(SYS_bind, fd, &address, length) != 0 || syscall(SYS_listen, fd, 8) != 0 ||
        (!abstract && chmod(socket_path, 0600) != 0)) {
        int saved = errno;
        pi_sys_close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* What `profinject ctl` can still do with a process that has no socket. */
static const char *reach_without_socket(void)
{
    return signal_handler_ours ? "'profinject ctl' reaches this process by signal only (start "
                                 "and stop)"
                               : "'profinject ctl' cannot reach this process";
}

/* Said once, by the process that has no socket: `profinject ctl` cannot tell it from
 * one that never ran the library, or worse, finds whoever holds the name. */
static void tell_no_socket(void)
{
    static int told;
    if (told++)
        return;
    int taken = errno == EADDRINUSE;
    pi_diag("cannot make the control socket %s (%s); %s", socket_path,
            taken ? "another process holds that name" : strerror(errno), reach_without_socket());
}

/* The socket and its listener; without a socket, the listener still carries out
 * the signal's requests and binds what an attached process loads later. */
static void listen_here(void)
{
    const char *dir = pi_control_directory_open(reach_without_socket());
    struct stat ns;
    unsigned long long pid_ns = pi_sys_stat("/proc/self/ns/pid", &ns, 0) == 0 ? ns.st_ino : 0;
    int fd = -1;
    if (dir) {
        snprintf(socket_path, sizeof(socket_path), PI_CONTROL_SOCKET_FORMAT, dir, (int)getpid(),
                 pid_ns);
        fd = bind_socket();
        if (fd < 0) {
            tell_no_socket();
            socket_path[0] = '\0';
        } else {
            atomic_store(&socket_bound, 1);
        }
    }
    if (atomic_load(&control_ended) || (fd < 0 && !signal_handler_ours && !pi_attach_bound())) {
        if (fd >= 0) {
            pi_control_stop();
            pi_sys_close(fd);
        }
        return; /* ending, or nothing for a listener to do */
    }
    if (pi_background_thread("pi-control", listener, (void *)(intptr_t)fd) != 0) {
        if (fd >= 0) {
            pi_sys_close(fd);
            if (socket_path[0] != '@')
                unlink(socket_path);
        }
        socket_path[0] = '\0';
        return;
    }
    listen_fd = fd;
    /* those of our processes that were killed (SIGKILL removes nothing) */
    if (fd >= 0)
        pi_control_directory_sweep(dir, pid_ns);
}

/* The exec that removed the socket (pi_control_stop) failed: this image goes on,
 * so does its socket. A new one takes the listener's descriptor, and the
 * listener is woken to poll it. */
static void after_failed_exec(void)
{
    atomic_store(&control_ended, 0);
    if (listen_fd < 0 || !socket_path[0] || socket_path[0] == '@')
        return; /* an abstract name goes only with its descriptor: it is still there */
    int fd = bind_socket();
    if (fd < 0) {
        tell_no_socket();
        return;
    }
    (void)syscall(SYS_dup3, fd, listen_fd, O_CLOEXEC);
    pi_sys_close(fd);
    if (wake_pipe[1] >= 0)
        (void)syscall(SYS_write, wake_pipe[1], "w", 1);
}

void pi_control_start(void)
{
    if (!pi_setting_flag("PROFINJECT_CONTROL"))
        return;
    /* the fallback signal, unless the application uses it */
    int sig = SIGRTMIN + PI_CONTROL_SIGNAL_OFFSET;
    struct sigaction current;
    if (PI_REAL(sigaction)(sig, NULL, &current) == 0 && current.sa_handler == SIG_DFL) {
        struct sigaction act;
        memset(&act, 0, sizeof(act));
        act.sa_sigaction = on_control_signal;
        act.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&act.sa_mask);
        signal_handler_ours = PI_REAL(sigaction)(sig, &act, NULL) == 0;
    }
    open_wake_pipe();
    /* `run --duration`: the window closes at its end in this process too (the listener's deadline) */
    uint64_t until = pi_record_until_ns();
    if (until && atomic_load(&pi_recording))
        atomic_store(&capture_deadline_ns, until);
    /* the socket and its thread wait for the writer's first flush: a process
     * that ends before (a shell's /bin/true) is not worth controlling, and
     * starts faster without them */
    if (pi_control_directory_choose() == 0)
        pi_process_event_subscribe(PI_EVENT_SETTLED, listen_here);
    pi_process_event_subscribe(PI_EVENT_FORK_CHILD, pi_control_after_fork);
    pi_process_event_subscribe(PI_EVENT_END, pi_control_stop);
    pi_process_event_subscribe(PI_EVENT_DYING, pi_control_stop); /* an unlink: signal-safe */
    /* the new image has the pid, not the socket: a file left would be a dead one's */
    pi_process_event_subscribe(PI_EVENT_BEFORE_EXEC, pi_control_stop);
    pi_process_event_subscribe(PI_EVENT_EXEC_FAILED, after_failed_exec);
}

void pi_control_after_fork(void)
{
    if (listen_fd >= 0)
        pi_sys_close(listen_fd); /* the parent's; its listener thread is not here */
    listen_fd = -1;
    socket_path[0] = '\0';
    atomic_store(&socket_bound, 0);
    if (pi_setting_flag("PROFINJECT_CONTROL")) {
        open_wake_pipe(); /* the parent's would wake the parent's listener */
        atomic_store(&signal_request, 0);
        /* the socket comes at the child writer's first flush (PI_EVENT_SETTLED) */
    }
}

void pi_control_stop(void)
{
    atomic_store(&control_ended, 1);
    if (atomic_load(&socket_bound) && socket_path[0] && socket_path[0] != '@')
        unlink(socket_path);
}
