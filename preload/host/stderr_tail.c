/* stderr_tail.c - see stderr_tail.h. */
#include "stderr_tail.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "core/clock.h"
#include "core/process_events.h"
#include "core/recorder.h"
#include "core/settings.h"

/* Threads writing at once may each claim their bytes' place and copy: a
 * line of one can be cut by another's, which the tail of a log tolerates
 * better than a lock on every write to stderr would the job. */
static char ring[PI_STDERR_TAIL_BYTES];
static _Atomic uint64_t written; /* bytes ever written to fd 2; ring holds the last of them */
static _Atomic int following;
static _Atomic int said;

void pi_stderr_tail_note(int fd, const void *buf, size_t n)
{
    if (fd != 2 || !atomic_load_explicit(&following, memory_order_relaxed) || n == 0)
        return;
    /* of a write longer than the ring only its end can stay: it goes where the end falls */
    size_t kept = n < PI_STDERR_TAIL_BYTES ? n : PI_STDERR_TAIL_BYTES;
    const char *bytes = (const char *)buf + (n - kept);
    uint64_t at = (atomic_fetch_add(&written, n) + (n - kept)) % PI_STDERR_TAIL_BYTES;
    n = kept;
    size_t first = n < PI_STDERR_TAIL_BYTES - at ? n : PI_STDERR_TAIL_BYTES - at;
    memcpy(ring + at, bytes, first);
    memcpy(ring, bytes + first, n - first);
}

/* The tail as one record, once: at exit, or at a fatal signal before the end record. */
static void write_tail(void)
{
    uint64_t total = atomic_load(&written);
    if (!total || atomic_exchange(&said, 1))
        return;
    char text[PI_STDERR_TAIL_BYTES];
    size_t kept = total < PI_STDERR_TAIL_BYTES ? (size_t)total : PI_STDERR_TAIL_BYTES;
    uint64_t start = (total - kept) % PI_STDERR_TAIL_BYTES;
    size_t first = kept < PI_STDERR_TAIL_BYTES - start ? kept : PI_STDERR_TAIL_BYTES - start;
    memcpy(text, ring + start, first);
    memcpy(text + first, ring, kept - first);
    pi_emit(PI_REC_STDERR_TAIL, 0, pi_clock_ticks(), 0, pi_intern(text, kept), total, kept);
}

/* A fork child starts its own account: what its parent wrote is the parent's. */
static void after_fork(void)
{
    atomic_store(&written, 0);
    atomic_store(&said, 0);
}

void pi_stderr_tail_start(void)
{
    if (!pi_setting_flag("PROFINJECT_STDERR_TAIL"))
        return;
    pi_process_event_subscribe(PI_EVENT_FORK_CHILD, after_fork);
    pi_process_event_subscribe(PI_EVENT_END, write_tail);
    pi_process_event_subscribe(PI_EVENT_FATAL_SIGNAL, write_tail);
    atomic_store(&following, 1);
}
