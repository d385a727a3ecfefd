/*
 * native_sampler.c - native stacks sampled by each thread's CPU time (see
 * native_sampler.h).
 *
 * A timer of the thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID, signalled
 * to that thread alone by SIGEV_THREAD_ID) is the one way to sample CPU
 * thread by thread: a process-wide CPU timer signals the main thread
 * whichever thread computed. The timers are made by raw system calls, as
 * timer_create lived in librt before glibc 2.34.
 *
 * A thread arms its own timer (the timer is of the calling thread's clock):
 * a new thread at its start; a process's main thread where the library
 * starts sampling (the constructor when PROFINJECT_NATIVE_CPU_MS is set, else
 * its first Python time sample after the writer's first flush, between two
 * bytecodes); a fork child's one thread as the child starts. Threads that
 * began before sampling started are not sampled.
 *
 * The handler does no more than a walk from the interrupted instruction
 * (pi_native_walk_signal: no allocation, no lock held across it) into a
 * slot of a ring it claims with one atomic add; interning the stack (the
 * modules' ranges, the string table) and writing the record is the
 * sampling thread's work, every DRAIN_NS. A thread inside the profiler is
 * not walked (it may be inside the unwinder already), nor one while the
 * loader's list of modules is locked (loader_lock.h): its sample is counted
 * without a stack. Before an exec the thread's timer is deleted and any of
 * its signals still pending taken: kernels before 6.13 keep a deleted
 * timer's pending signal across the exec, where the default action ends the
 * process.
 */
#include "native_sampler.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/background_thread.h"
#include "core/diagnostics.h"
#include "core/guard.h"
#include "core/process_events.h"
#include "core/raw_syscalls.h"
#include "core/real_functions.h"
#include "core/recorder.h"
#include "core/settings.h"
#include "native_frames.h"
#include "python_runtime.h"
#include "stacks.h"

/* SIGRTMIN + 7 is the control channel's fallback signal */
#define SAMPLE_SIGNAL_OFFSET 6
/* 4096 walks: 160 threads computing at 10 ms between two drains 250 ms apart; each wake of
 * the sampling thread costs 17-40 us of CPU on a virtual machine: 4 a second, not 20 */
#define RING_SLOTS 4096
#define DRAIN_NS 250000000u

enum { SLOT_FREE, SLOT_WRITING, SLOT_READY };
#define NOT_WALKED_IN_PROFILER (-1) /* beside pi_native_walk_signal's PI_NATIVE_LOADER_BUSY */

struct sample_slot {
    _Atomic uint32_t state;
    uint32_t tid;
    uint64_t ticks, cpu_ns;
    int count; /* NOT_WALKED_IN_PROFILER or PI_NATIVE_LOADER_BUSY: not walked */
    void *pcs[PI_NATIVE_SAMPLE_FRAMES_MAX];
};

static uint64_t interval_ns; /* 0: not sampling (yet) */
static uint64_t asked_ns;    /* PROFINJECT_NATIVE_CPU_MS, from the constructor */
static _Atomic int running;  /* timers are being armed */
static int signal_number;
static struct sample_slot *ring;
static _Atomic uint64_t ring_head;
static _Atomic uint64_t lost_samples;
/* the calling thread's timer: the kernel's id + 1, 0: none */
static __thread int armed __attribute__((tls_model("initial-exec")));
static pthread_key_t thread_end_key;
static _Atomic int drainer_started;

static void on_sample(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    int saved = errno;
    if (!atomic_load_explicit(&pi_recording, memory_order_relaxed) || !ring) {
        errno = saved;
        return;
    }
    uint64_t index = atomic_fetch_add_explicit(&ring_head, 1, memory_order_relaxed);
    struct sample_slot *s = &ring[index % RING_SLOTS];
    uint32_t expected = SLOT_FREE;
    if (!atomic_compare_exchange_strong_explicit(&s->state, &expected, SLOT_WRITING,
                                                 memory_order_acquire, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&lost_samples, 1, memory_order_relaxed);
        errno = saved;
        return;
    }
    s->tid = pi_sys_gettid();
    s->ticks = pi_clock_ticks();
    /* an overrun: the timer expired again before this signal was taken */
    s->cpu_ns = interval_ns * (1 + (uint64_t)(info && info->si_overrun > 0 ? info->si_overrun : 0));
    /* the unwinder checks addresses by writing them to a pipe of its own (libunwind's
     * validate_mem): under the guard, those calls are not the thread's I/O */
    int guard = pi_guard_enter();
    s->count = guard ? NOT_WALKED_IN_PROFILER
                     : pi_native_walk_signal(context, s->pcs, PI_NATIVE_SAMPLE_FRAMES_MAX);
    pi_guard_restore(guard);
    atomic_store_explicit(&s->state, SLOT_READY, memory_order_release);
    errno = saved;
}

static int by_ticks(const void *a, const void *b)
{
    const struct sample_slot *x = *(struct sample_slot *const *)a,
                             *y = *(struct sample_slot *const *)b;
    return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

/* Write every finished walk, oldest first; the sampling thread, or a process's end. */
static void drain(void)
{
    static struct sample_slot *ready[RING_SLOTS];
    static atomic_flag draining = ATOMIC_FLAG_INIT;
    if (!ring || atomic_flag_test_and_set(&draining))
        return;
    size_t n = 0;
    for (size_t i = 0; i < RING_SLOTS; i++)
        if (atomic_load_explicit(&ring[i].state, memory_order_acquire) == SLOT_READY)
            ready[n++] = &ring[i];
    qsort(ready, n, sizeof(ready[0]), by_ticks);
    double ticks_per_ns = pi_recorder_ticks_per_second() / 1e9;
    for (size_t i = 0; i < n; i++) {
        struct sample_slot *s = ready[i];
        uint32_t stack = 0, without = s->count == NOT_WALKED_IN_PROFILER ? PI_NATIVE_IN_PROFILER
                                      : s->count == PI_NATIVE_LOADER_BUSY  ? PI_NATIVE_IN_LOADER
                                                                           : 0;
        if (s->count > 0)
            stack = pi_stack_intern_sampled(s->pcs, s->count);
        pi_emit(PI_REC_NATIVE_SAMPLE, 0, s->ticks, (uint64_t)((double)s->cpu_ns * ticks_per_ns),
                s->tid, stack, without);
        atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
    }
    uint64_t lost = atomic_exchange(&lost_samples, 0);
    if (lost)
        pi_emit(PI_REC_NATIVE_SAMPLE, 0, pi_clock_ticks(),
                (uint64_t)((double)(lost * interval_ns) * ticks_per_ns), 0, 0, PI_NATIVE_LOST);
    atomic_flag_clear(&draining);
}

static void *drainer_main(void *unused)
{
    (void)unused;
    pi_guard_enter(); /* nothing this thread calls is recorded */
    for (;;) {
        pi_sys_sleep(DRAIN_NS);
        drain();
    }
    return NULL;
}

static void start_drainer(void)
{
    if (atomic_exchange(&drainer_started, 1))
        return;
    int err = pi_background_thread("pi-native-smp", drainer_main, NULL);
    if (err != 0) {
        pi_diag("no native CPU samples: the sampling thread could not start (error %d)", err);
        interval_ns = 0;
    }
}

/* This thread's timer. */
static void arm_this_thread(void)
{
    if (!atomic_load(&running) || armed)
        return;
    struct sigevent ev;
    memset(&ev, 0, sizeof(ev));
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = signal_number;
    ev._sigev_un._tid = (pid_t)pi_sys_gettid();
    int timer = -1;
    if (syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &ev, &timer) != 0)
        return;
    armed = timer + 1;
    pthread_setspecific(thread_end_key, (void *)1);
    struct itimerspec every = {
        {(time_t)(interval_ns / 1000000000u), (long)(interval_ns % 1000000000u)},
        {(time_t)(interval_ns / 1000000000u), (long)(interval_ns % 1000000000u)}};
    syscall(SYS_timer_settime, timer, 0, &every, NULL);
}

static void disarm_this_thread(void)
{
    if (armed)
        syscall(SYS_timer_delete, armed - 1);
    armed = 0;
}

static void on_thread_end(void *unused)
{
    (void)unused;
    disarm_this_thread();
}

/* Before an exec: no timer, and no signal of one left pending for the new image. */
static void before_exec(void)
{
    if (!armed)
        return;
    disarm_this_thread();
    sigset_t ours, old;
    sigemptyset(&ours);
    sigaddset(&ours, signal_number);
    pthread_sigmask(SIG_BLOCK, &ours, &old);
    struct timespec now = {0, 0};
    while (sigtimedwait(&ours, NULL, &now) == signal_number)
        ;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A fork child: the parent's timers and threads are not its own; its one thread is sampled
 * anew, and the walks its parent left unwritten are the parent's to write. */
static void after_fork(void)
{
    armed = 0; /* the parent's timer, not the child's */
    for (size_t i = 0; ring && i < RING_SLOTS; i++)
        atomic_store(&ring[i].state, SLOT_FREE);
    atomic_store(&lost_samples, 0);
    atomic_store(&drainer_started, 0);
    if (atomic_load(&running)) {
        start_drainer();
        arm_this_thread();
    }
}

/* The signal, unless the application has a disposition of its own for it. */
static int take_signal(void)
{
    signal_number = SIGRTMIN + SAMPLE_SIGNAL_OFFSET;
    struct sigaction current;
    if (pi_real_sigaction(signal_number, NULL, &current) != 0 || current.sa_handler != SIG_DFL)
        return 0;
    struct sigaction act;
    memset(&act, 0, sizeof(act));
    act.sa_sigaction = on_sample;
    act.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&act.sa_mask); /* one walk at a time in a thread */
    return pi_real_sigaction(signal_number, &act, NULL) == 0;
}

/* Load the unwinder, take the signal, start the sampling thread: 1 when sampling runs. */
static int start(void)
{
    if (atomic_load(&running))
        return 1;
    if (!asked_ns)
        return 0;
    if (!pi_native_can_walk_signal()) {
        pi_diag("no native CPU samples: libunwind.so.8 (1.3 or later) was not found");
        asked_ns = 0;
        return 0;
    }
    void *map = pi_sys_anonymous_map(sizeof(*ring) * RING_SLOTS);
    ring = map == MAP_FAILED ? NULL : map;
    if (!ring || pthread_key_create(&thread_end_key, on_thread_end) != 0 || !take_signal()) {
        asked_ns = 0;
        return 0;
    }
    interval_ns = asked_ns;
    start_drainer();
    if (!interval_ns) /* no thread to write the samples */
        return 0;
    atomic_store(&running, 1);
    return 1;
}

/* The writer's first flush: by default, a process that runs Python starts sampling here (its
 * main thread arms at its next Python time sample). */
static void settle(void)
{
    if (pi_python_get())
        start();
}

void pi_native_sampler_start(void)
{
    /* summary mode has a default of its own (settings.c) */
    asked_ns = pi_setting_number("PROFINJECT_NATIVE_CPU_MS") * 1000000u;
    if (!asked_ns)
        return;
    pi_process_event_subscribe(PI_EVENT_FORK_CHILD, after_fork);
    pi_process_event_subscribe(PI_EVENT_BEFORE_EXEC, before_exec);
    pi_process_event_subscribe(PI_EVENT_EXEC_FAILED, arm_this_thread);
    pi_process_event_subscribe(PI_EVENT_WINDOW_CLOSING, drain);
    pi_process_event_subscribe(PI_EVENT_END, drain);
    /* asked for: every process, from now, its main thread first */
    if (getenv("PROFINJECT_NATIVE_CPU_MS")) {
        if (start())
            arm_this_thread();
    } else {
        pi_process_event_subscribe(PI_EVENT_SETTLED, settle);
    }
}

void pi_native_sampler_thread_start(void)
{
    if (!atomic_load_explicit(&running, memory_order_relaxed))
        return;
    int guard = pi_guard_enter();
    arm_this_thread();
    pi_guard_restore(guard);
}

void pi_native_sampler_here(void)
{
    if (!armed && atomic_load_explicit(&running, memory_order_relaxed))
        arm_this_thread();
}
