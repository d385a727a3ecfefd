/*
 * fatal_signals.c - write the trace out when a signal ends the process,
 * then let the application's own handling happen as if we were not there.
 *
 * Our handler stays installed for the signals below; the application's
 * sigaction() and signal() calls for them (host/signal_hooks.c) are kept
 * here as the "chained" disposition and reported back as if they had taken
 * effect. SIG_IGN is installed for real, since a caught-and-ignored signal
 * would interrupt system calls where an ignored one does not.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "fatal_signals.h"

#include "background_thread.h"
#include "guard.h"
#include "process_events.h"
#include "real_functions.h"
#include "recorder.h"
#include "signal_notes.h"
#define SIGNAL_FLUSH_TIMEOUT_MS 1000

static const int handled_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
                                      SIGTERM, SIGINT, SIGHUP, SIGQUIT};

/* What the application believes is installed, per signal. */
static struct sigaction chained[NSIG];
static _Atomic int ours_installed[NSIG];
static _Atomic int ending;
/* the fatal signal's record, for its frames: the thread ending the process, and whether the
 * signal came in the profiler's own code (its locks may be held) */
static _Atomic uint32_t fatal_tid;
static uint64_t fatal_ts;
static int fatal_in_profiler;
static void *fatal_context; /* the handler's ucontext_t */

int pi_fatal_signal_handled(int sig)
{
    for (size_t i = 0; i < sizeof(handled_signals) / sizeof(handled_signals[0]); i++)
        if (handled_signals[i] == sig)
            return 1;
    return 0;
}

static int is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT;
}

static int has_handler(const struct sigaction *act)
{
    return act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN;
}

static void call_application_handler(int sig, siginfo_t *info, void *context)
{
    struct sigaction app = chained[sig];
    if (app.sa_flags & SA_RESETHAND) {
        chained[sig].sa_handler = SIG_DFL;
        chained[sig].sa_flags &= ~SA_SIGINFO;
    }
    if (app.sa_flags & SA_SIGINFO)
        app.sa_sigaction(sig, info, context);
    else
        app.sa_handler(sig);
}

/* Who sent the signal or where the thread faulted: PI_REC_FATAL_SIGNAL's flags and arg1. */
static unsigned signal_origin(int sig, const siginfo_t *info, uint64_t *from)
{
    *from = 0;
    if (info && info->si_code <= 0) { /* SI_USER, SI_QUEUE, SI_TKILL: a process sent it */
        *from = (uint32_t)info->si_pid | (uint64_t)info->si_uid << 32;
        return PI_SIGNAL_SENT;
    }
    if (info && is_fault(sig) && sig != SIGABRT) {
        *from = (uint64_t)(uintptr_t)info->si_addr;
        return PI_SIGNAL_FAULT;
    }
    return 0;
}

/* Have the writer name the process that sent stop signal @sig (slot 0: fatal, 1: handled). */
static void name_sender(int slot, int sig, unsigned flags, uint64_t from)
{
    uint32_t pid = (uint32_t)from;
    if (pi_signal_is_stop(sig) && (flags & PI_SIGNAL_SENT) && pid && pid != (uint32_t)pi_recorder_pid())
        pi_signal_note_sender(slot, pid, sig);
}

/* The signal, and who sent it or where the thread faulted (PI_REC_FATAL_SIGNAL). */
static void emit_signal(int sig, const siginfo_t *info, int in_profiler)
{
    uint64_t from;
    unsigned flags = signal_origin(sig, info, &from);
    name_sender(0, sig, flags, from);
    fatal_ts = pi_clock_ticks();
    fatal_in_profiler = in_profiler;
    atomic_store(&fatal_tid, (uint32_t)pi_current_tid());
    pi_emit(PI_REC_FATAL_SIGNAL, (uint16_t)flags, fatal_ts, 0,
            (uint32_t)sig | (uint64_t)(uint32_t)(info ? info->si_code : 0) << 32, from, 0);
}

/* A stop signal the application's handler is about to take, kept for the writer. */
static void keep_stop(int sig, const siginfo_t *info)
{
    struct pi_stop_signal stop;
    stop.ts = pi_clock_ticks();
    stop.tid = (uint32_t)pi_current_tid();
    stop.flags = signal_origin(sig, info, &stop.from) | PI_SIGNAL_HANDLED;
    stop.signal_and_code = (uint32_t)sig | (uint64_t)(uint32_t)(info ? info->si_code : 0) << 32;
    if (pi_signal_note_stop(&stop)) /* the sender of the one recorded */
        name_sender(1, sig, stop.flags, stop.from);
}

int pi_fatal_signal_moment(uint64_t *ts, int *in_profiler, void **context)
{
    if (atomic_load(&fatal_tid) != (uint32_t)pi_current_tid())
        return 0;
    *ts = fatal_ts;
    *in_profiler = fatal_in_profiler;
    *context = fatal_context;
    return 1;
}

static void pi_signal_handler(int sig, siginfo_t *info, void *context)
{
    int saved = errno;
    int app_handles = has_handler(&chained[sig]);
    /* Write the trace out when the process is likely to die: default
     * action, or a fault whose handler may not return. Once only. */
    if ((!app_handles || is_fault(sig)) && !atomic_exchange(&ending, 1)) {
        int guard = pi_guard_enter();
        if (!app_handles) {
            fatal_context = context;
            emit_signal(sig, info, guard != 0);
            pi_process_event_notify(PI_EVENT_FATAL_SIGNAL);
            pi_emit(PI_REC_PROCESS_END, 0, pi_clock_ticks(), 0, (uint64_t)sig, PI_END_SIGNAL,
                    pi_background_cpu_ns());
        }
        pi_recorder_flush_sync(SIGNAL_FLUSH_TIMEOUT_MS);
        if (!app_handles) {
            /* the frames last: walking a broken stack may fault, and all else is out by now */
            pi_process_event_notify(PI_EVENT_FATAL_FRAMES);
            pi_recorder_flush_sync(SIGNAL_FLUSH_TIMEOUT_MS);
            pi_process_event_notify(PI_EVENT_DYING);
        }
        pi_guard_restore(guard);
        if (app_handles)
            atomic_store(&ending, 0);
    }
    if (app_handles) {
        if (pi_signal_is_stop(sig))
            keep_stop(sig, info);
        call_application_handler(sig, info, context);
        errno = saved;
        return;
    }
    if (chained[sig].sa_handler == SIG_IGN) {
        errno = saved;
        return;
    }
    /* Default action: reinstall it and raise again. The signal is blocked
     * while we run, so it is delivered (and kills) once we return. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    pi_real_sigaction(sig, &dfl, NULL);
    atomic_store(&ours_installed[sig], 0);
    raise(sig);
    errno = saved;
}

/* Install our handler with the application's flags and mask. */
static int install_ours(int sig, const struct sigaction *app)
{
    struct sigaction act;
    memset(&act, 0, sizeof(act));
    act.sa_sigaction = pi_signal_handler;
    act.sa_mask = app->sa_mask;
    act.sa_flags = (app->sa_flags & ~(SA_RESETHAND | SA_NODEFER)) | SA_SIGINFO;
    if (app->sa_flags & SA_NODEFER)
        act.sa_flags |= SA_NODEFER;
    int result = pi_real_sigaction(sig, &act, NULL);
    if (result == 0)
        atomic_store(&ours_installed[sig], 1);
    return result;
}

void pi_fatal_signals_install(void)
{
    for (size_t i = 0; i < sizeof(handled_signals) / sizeof(handled_signals[0]); i++) {
        int sig = handled_signals[i];
        struct sigaction current;
        if (pi_real_sigaction(sig, NULL, &current) != 0)
            continue;
        chained[sig] = current;
        if (current.sa_handler == SIG_IGN)
            continue; /* nohup and friends: leave ignored signals alone */
        install_ours(sig, &current);
    }
}

int pi_fatal_signal_set(int sig, const struct sigaction *act, struct sigaction *old)
{
    struct sigaction previous = chained[sig];
    if (act) {
        int result = act->sa_handler == SIG_IGN ? pi_real_sigaction(sig, act, NULL)
                                                 : install_ours(sig, act);
        if (result != 0)
            return result;
        if (act->sa_handler == SIG_IGN)
            atomic_store(&ours_installed[sig], 0);
        chained[sig] = *act;
    }
    if (old)
        *old = previous;
    return 0;
}
