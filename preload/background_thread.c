/* background_thread.c - see background_thread.h. */
#include "background_thread.h"

#include <pthread.h>
#include <signal.h>

int pi_background_thread(void *(*routine)(void *), void *arg)
{
    /* the new thread inherits this mask: block everything around the create */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int result = pthread_create(&thread, &attr, routine, arg);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return result;
}
