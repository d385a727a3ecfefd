/*
 * window_switch.h - for test programs that open and close capture windows in
 * their own process: through the control signal (`profinject ctl`'s way in
 * when the socket cannot be reached), waiting until the switch is seen.
 */
#ifndef PI_TEST_WINDOW_SWITCH_H
#define PI_TEST_WINDOW_SWITCH_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "profinject/control_protocol.h"
#include "profinject/profinject.h"

/* ask for a window to open or close and wait until it did */
static void switch_to(int request, int recording)
{
    union sigval value = {.sival_int = request};
    if (sigqueue(getpid(), SIGRTMIN + PI_CONTROL_SIGNAL_OFFSET, value) != 0) {
        perror("sigqueue");
        exit(1);
    }
    for (int waited = 0; profinject_is_recording() != recording; waited++) {
        if (waited == 100000) {
            fprintf(stderr, "the window did not %s\n", recording ? "open" : "close");
            exit(1);
        }
        usleep(50);
    }
}

#endif
