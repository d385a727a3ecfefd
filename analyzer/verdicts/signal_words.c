/* signal_words.c - see signal_words.h. */
#include "signal_words.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "analysis/sites/call_sites.h"

const char *pi_signal_name(long sig)
{
    static const struct {
        int number;
        const char *name;
    } names[] = {{SIGKILL, "SIGKILL"}, {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"},
                 {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},
                 {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},   {SIGHUP, "SIGHUP"},
                 {SIGQUIT, "SIGQUIT"}, {SIGPIPE, "SIGPIPE"}, {SIGUSR1, "SIGUSR1"},
                 {SIGUSR2, "SIGUSR2"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].number == sig)
            return names[i].name;
    return "a signal";
}

/* What the kernel's si_code of a fault says of the address (signal(7)'s words). */
static const char *fault_kind(uint32_t sig, int32_t code)
{
    if (sig == SIGSEGV)
        return code == SEGV_MAPERR ? "not mapped" : code == SEGV_ACCERR ? "not allowed" : "";
    if (sig == SIGBUS)
        return code == BUS_ADRALN   ? "misaligned"
               : code == BUS_ADRERR ? "no such physical address"
               : code == BUS_OBJERR ? "past the end of a mapped file"
                                    : "";
    if (sig == SIGFPE)
        return code == FPE_INTDIV ? "integer divide by zero" : code == FPE_INTOVF ? "integer overflow" : "";
    return "";
}

void pi_signal_origin_of(const struct pi_analysis *a, const struct pi_process_info *p,
                         const struct pi_fatal_signal *s, char *out, size_t size)
{
    out[0] = '\0';
    if (!s->seen)
        return;
    if (s->flags & PI_SIGNAL_SENT) {
        uint32_t pid = (uint32_t)s->detail, uid = (uint32_t)(s->detail >> 32);
        const struct pi_process_info *sender = pi_process_by_pid(a, (int)pid);
        const char *named = NULL; /* an untraced sender, as the process named it */
        for (int k = 0; k < p->sender_count && !named; k++)
            if (p->senders[k].pid == pid)
                named = p->senders[k].command;
        if (pid == (uint32_t)p->header.pid)
            snprintf(out, size, " raised by the process itself (abort(), raise() or kill of its own pid)");
        else if (sender && sender->command)
            snprintf(out, size, " sent by pid %" PRIu32 " (uid %" PRIu32 ", %s)", pid, uid,
                     sender->command);
        else
            snprintf(out, size, " sent by pid %" PRIu32 " (uid %" PRIu32 ", %s%snot traced)", pid,
                     uid, named ? named : "", named ? ", " : "");
    } else if (s->flags & PI_SIGNAL_FAULT) {
        const char *kind = fault_kind(s->signo, s->code);
        snprintf(out, size, ", a fault of its own at address 0x%" PRIx64 "%s%s%s", s->detail,
                 kind[0] ? " (" : "", kind, kind[0] ? ")" : "");
    } else if (s->code == SI_KERNEL && (s->signo == SIGINT || s->signo == SIGHUP)) {
        snprintf(out, size, " from its terminal (%s)", s->signo == SIGINT ? "Ctrl-C" : "it closed");
    } else if (s->code > 0) {
        snprintf(out, size, " sent by the kernel");
    }
}

void pi_signal_origin(const struct pi_analysis *a, const struct pi_process_info *p, char *out,
                      size_t size)
{
    pi_signal_origin_of(a, p, &p->fatal, out, size);
}

/* The frame a walk from a signal handler starts with: the C library's return path from the
 * handler (__restore_rt, a symbol its tables often leave out), no code of the process's own. */
static int signal_return(const struct pi_site_frame *f)
{
    return !f->symbol || strcmp(f->symbol, "__restore_rt") == 0 ||
           strstr(f->symbol, "sigreturn") != NULL;
}

void pi_signal_frames(const struct pi_process_info *p, int count, char *out, size_t size)
{
    const struct pi_call_site *site = p->fatal.site;
    out[0] = '\0';
    if (!site)
        return;
    size_t at = 0;
    size_t first = site->python_count;
    if (first < site->count && signal_return(&site->frames[first]))
        first++;
    for (size_t i = first; i < site->count && count > 0 && at < size; i++) {
        char frame[256];
        pi_call_site_frame_short_text(&site->frames[i], frame, sizeof(frame));
        int n = snprintf(out + at, size - at, "%s%s", at ? " <- " : "", frame);
        if (n < 0)
            break;
        at += (size_t)n;
        count--;
    }
    if (at >= size && size > 0)
        out[size - 1] = '\0';
}
