/*
 * prog_segv: installs its own SIGSEGV handler (after the profiler's),
 * records 500 marks, then dereferences NULL. The handler prints
 * "handler ran", restores the default action and returns, so the process
 * dies of SIGSEGV.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "profinject/profinject.h"

static void handler(int sig)
{
    static const char text[] = "handler ran\n";
    write(1, text, sizeof(text) - 1);
    signal(sig, SIG_DFL);
}

int main(void)
{
    struct sigaction act;
    memset(&act, 0, sizeof(act));
    act.sa_handler = handler;
    sigaction(SIGSEGV, &act, NULL);
    for (uint64_t i = 0; i < 500; i++)
        PROFINJECT_MARK("before-crash", i);
    volatile int *null = NULL;
    return *null;
}
