/*
 * lib_pause_here.c - a thread that runs no Python, waiting in a function of
 * this library: `profinject stacks` must name the function from the file
 * the process loaded, which in a container is a file of the container's.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <unistd.h>

void *pause_here(void *arg)
{
    for (;;)
        pause();
    return arg;
}

/* start_pausing_thread - a thread named "native-pause" in pause_here(): 0, or an errno */
int start_pausing_thread(void)
{
    pthread_t thread;
    int failed = pthread_create(&thread, NULL, pause_here, NULL);
    if (!failed)
        pthread_setname_np(thread, "native-pause");
    return failed;
}
