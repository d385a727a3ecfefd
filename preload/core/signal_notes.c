/* signal_notes.c - what a signal handler leaves for the writer (see signal_notes.h). */
#include "signal_notes.h"

#include <stdatomic.h>
#include <stdio.h>

#include "raw_syscalls.h"
#include "recorder_internal.h"

enum { STOP_FREE, STOP_FILLING, STOP_READY };
static _Atomic int stop_state;
static struct pi_stop_signal stop_kept;
/* [0] the fatal signal's sender, [1] the handled one's: a pid | the signal << 32, 0: none */
static _Atomic uint64_t senders[2];

int pi_signal_note_stop(const struct pi_stop_signal *stop)
{
    int expected = STOP_FREE;
    if (!atomic_compare_exchange_strong(&stop_state, &expected, STOP_FILLING))
        return 0;
    stop_kept = *stop;
    atomic_store(&stop_state, STOP_READY);
    return 1;
}

int pi_stop_signal_take(struct pi_stop_signal *out)
{
    if (atomic_load(&stop_state) != STOP_READY)
        return 0;
    *out = stop_kept;
    atomic_store(&stop_state, STOP_FREE);
    return 1;
}

void pi_signal_note_sender(int slot, uint32_t pid, int sig)
{
    atomic_store(&senders[slot], pid | (uint64_t)(uint32_t)sig << 32);
}

void pi_signal_senders_name(struct pi_signal_senders *out)
{
    out->count = 0;
    for (int slot = 0; slot < 2; slot++) {
        uint64_t sender = atomic_exchange(&senders[slot], 0);
        if (!sender)
            continue;
        char path[32], command[257];
        snprintf(path, sizeof(path), "/proc/%u/cmdline", (uint32_t)sender);
        size_t n = pi_sys_read_file(path, command, sizeof(command));
        while (n > 0 && command[n - 1] == '\0')
            n--;
        for (size_t k = 0; k < n; k++)
            if (command[k] == '\0')
                command[k] = ' '; /* the arguments, as a shell shows them */
        int i = out->count++;
        out->pids[i] = (uint32_t)sender;
        out->signals[i] = (uint32_t)(sender >> 32);
        /* the table itself: pi_intern refuses once the process is ending, the moment a stop
         * signal is most often named */
        out->commands[i] = n ? pi_strings_intern(&pi_rec.strings, command, n) : 0;
    }
}
