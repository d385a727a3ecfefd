/* prog_window_edges N: opens and closes N capture windows in its own process,
 * through the control signal (`profinject ctl`'s way in when the socket cannot
 * be reached), while a second thread records marks valued 0, 1, 2, ... without
 * a pause, so that every window edge falls between two marks. Prints the
 * number of marks made after "done". */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "profinject/profinject.h"
#include "window_switch.h"

static atomic_int finished;
static uint64_t marks;

static void *mark_without_pause(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&finished, memory_order_relaxed))
        PROFINJECT_MARK(NULL, marks++);
    return NULL;
}

int main(int argc, char **argv)
{
    int windows = argc > 1 ? atoi(argv[1]) : 100;
    if (!profinject_is_recording) {
        fprintf(stderr, "not under the profiler\n");
        return 1;
    }
    pthread_t marker;
    pthread_create(&marker, NULL, mark_without_pause, NULL);
    for (int i = 0; i < windows; i++) {
        switch_to(PI_CONTROL_SIGNAL_START, 1); /* the window lasts the signal's way */
        switch_to(PI_CONTROL_SIGNAL_STOP, 0);
        usleep(100);
    }
    atomic_store(&finished, 1);
    pthread_join(marker, NULL);
    printf("done %llu\n", (unsigned long long)marks);
    return 0;
}
