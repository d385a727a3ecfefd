/*
 * process_events.c - see process_events.h. Subscriptions are rare (once per
 * part and process) and taken under a spin flag; notification reads the
 * count with acquire ordering, so every handler it sees is complete.
 */
#include "process_events.h"

#include <stdatomic.h>
#include <stddef.h>

#define MAX_HANDLERS 8

static void (*handlers[PI_EVENT_COUNT][MAX_HANDLERS])(void);
static _Atomic unsigned handler_count[PI_EVENT_COUNT];
static atomic_flag subscribing = ATOMIC_FLAG_INIT;

int pi_process_event_subscribe(enum pi_process_event event, void (*handler)(void))
{
    while (atomic_flag_test_and_set_explicit(&subscribing, memory_order_acquire))
        ;
    unsigned count = atomic_load_explicit(&handler_count[event], memory_order_relaxed);
    int result = 0;
    unsigned i = 0;
    while (i < count && handlers[event][i] != handler)
        i++;
    if (i == count) {
        if (count < MAX_HANDLERS) {
            handlers[event][count] = handler;
            atomic_store_explicit(&handler_count[event], count + 1, memory_order_release);
        } else {
            result = -1;
        }
    }
    atomic_flag_clear_explicit(&subscribing, memory_order_release);
    return result;
}

void pi_process_event_notify(enum pi_process_event event)
{
    /* a thread of the parent may have been subscribing at the fork */
    if (event == PI_EVENT_FORK_CHILD)
        atomic_flag_clear(&subscribing);
    unsigned count = atomic_load_explicit(&handler_count[event], memory_order_acquire);
    for (unsigned i = 0; i < count; i++)
        handlers[event][i]();
}
