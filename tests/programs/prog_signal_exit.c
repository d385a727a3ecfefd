/* prog_signal_exit: records 50 marks, then exit(3) from a SIGUSR1 handler. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include "profinject/profinject.h"

static void leave(int sig)
{
    (void)sig;
    exit(3);
}

int main(void)
{
    signal(SIGUSR1, leave);
    for (uint64_t i = 0; i < 50; i++)
        PROFINJECT_MARK("before-signal", i);
    raise(SIGUSR1);
    return 0;
}
