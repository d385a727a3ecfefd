/* span_stack.c - see span_stack.h. */
#include "span_stack.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/clock.h"
#include "core/process_sample.h"
#include "core/recorder.h"
#include "profinject/trace_format.h"

static uint64_t (*_Atomic device_bytes_now)(void);

void pi_span_device_bytes_from(uint64_t (*now)(void))
{
    atomic_store_explicit(&device_bytes_now, now, memory_order_relaxed);
}

static uint64_t device_bytes(void)
{
    uint64_t (*now)(void) = atomic_load_explicit(&device_bytes_now, memory_order_relaxed);
    return now ? now() : 0;
}

/*
 * A thread's CPU clock costs a system call to read (CLOCK_THREAD_CPUTIME_ID has
 * no vDSO path): about 0.5 us each on a virtual machine, twice a span, where the
 * rest of a span costs about 0.1 us. So it is read only for the names whose
 * calls last at least CPU_WORTH times what the two reads cost (under 0.5% of
 * them): a step, a request, a backward; a name's first call, and its calls
 * while its typical length is not known, are read. Each name's typical length
 * (ticks, a running mean) is kept in a slot of its own by name id; two names
 * in one slot take it from each other, which only makes a few more reads.
 * The process's resident memory is read by the same rule with its own cost
 * (a pread of /proc/self/statm, about 1.5 us): the change a call made to it
 * is had for the calls of names that last about a millisecond or more.
 */
#define CPU_WORTH 200
#define TYPICAL_SLOTS 1024
static _Atomic uint64_t typical[TYPICAL_SLOTS]; /* name id << 32 | ticks, 0: none */
static uint64_t cpu_read_ticks;                 /* what two reads cost, set at install */
static uint64_t resident_read_ticks;            /* likewise */

/* the typical length of @name's calls (ticks), UINT64_MAX while not known: read once a span,
 * each read is worth it for calls of at least CPU_WORTH times its cost */
static uint64_t typical_ticks(uint32_t name)
{
    uint64_t t = atomic_load_explicit(&typical[name % TYPICAL_SLOTS], memory_order_relaxed);
    return (uint32_t)(t >> 32) == name ? t & 0xffffffffu : UINT64_MAX;
}

static void note_length(uint32_t name, uint64_t ticks)
{
    _Atomic uint64_t *slot = &typical[name % TYPICAL_SLOTS];
    uint64_t t = atomic_load_explicit(slot, memory_order_relaxed);
    uint64_t mean = (uint32_t)(t >> 32) == name ? ((t & 0xffffffffu) * 7 + ticks) / 8 : ticks;
    atomic_store_explicit(slot, (uint64_t)name << 32 | (mean < 0xffffffffu ? mean : 0xffffffffu),
                          memory_order_relaxed);
}

/* Rounds of two reads each; the cheapest round is the cost. One timing of a few reads took a
 * preemption on a busy machine for the reads' cost, and a name's calls of a millisecond were
 * then never read. */
#define READ_ROUNDS 16

void pi_span_measure_reads(void)
{
    (void)pi_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    (void)pi_resident_bytes_now(); /* the first opens its file */
    uint64_t cpu = UINT64_MAX, resident = UINT64_MAX;
    for (int i = 0; i < READ_ROUNDS; i++) {
        uint64_t start = pi_clock_ticks();
        (void)pi_clock_ns(CLOCK_THREAD_CPUTIME_ID);
        (void)pi_clock_ns(CLOCK_THREAD_CPUTIME_ID);
        uint64_t middle = pi_clock_ticks();
        (void)pi_resident_bytes_now();
        (void)pi_resident_bytes_now();
        uint64_t end = pi_clock_ticks();
        cpu = middle - start < cpu ? middle - start : cpu;
        resident = end - middle < resident ? end - middle : resident;
    }
    cpu_read_ticks = cpu;
    resident_read_ticks = resident;
}

/* Each thread's stack is allocated at its first span, its address kept in a pointer of
 * static TLS: the stack itself (1.3 KB) would not fit in what static TLS keeps spare for a
 * library loaded later (profinject attach dlopens this one). A thread's stack is freed
 * when it ends (the key's destructor). */
static __thread struct pi_span_stack *stack __attribute__((tls_model("initial-exec")));
static pthread_key_t stack_key;
static pthread_once_t stack_key_once = PTHREAD_ONCE_INIT;

static void make_stack_key(void)
{
    if (pthread_key_create(&stack_key, free) != 0)
        stack_key = (pthread_key_t)-1;
}

static struct pi_span_stack *new_stack(void)
{
    pthread_once(&stack_key_once, make_stack_key);
    if (stack_key == (pthread_key_t)-1)
        return NULL;
    struct pi_span_stack *s = calloc(1, sizeof(*s));
    if (s && pthread_setspecific(stack_key, s) != 0) {
        free(s);
        s = NULL;
    }
    return s;
}

/* The calling thread's stack; NULL where it could not be made (nothing is recorded). */
struct pi_span_stack *pi_span_stack(void)
{
    struct pi_span_stack *s = stack;
    if (__builtin_expect(!s, 0) && !(s = stack = new_stack()))
        return NULL;
    uint32_t generation = atomic_load_explicit(&pi_generation, memory_order_relaxed);
    if (__builtin_expect(s->generation != generation, 0)) {
        s->generation = generation;
        s->depth = s->module_depth = 0;
        s->module_type = s->optimizer_type = NULL;
    }
    return s;
}

void pi_span_open(struct pi_span_stack *s, uint64_t sid)
{
    if (s->depth < OPEN_MAX) {
        struct open_span *o = &s->open[s->depth];
        o->sid = sid;
        o->flags = 0;
        o->device = device_bytes();
        uint64_t typical_length = typical_ticks((uint32_t)sid);
        o->resident = typical_length >= CPU_WORTH * resident_read_ticks ? pi_resident_bytes_now()
                                                                        : UINT64_MAX;
        o->cpu_ns = typical_length >= CPU_WORTH * cpu_read_ticks
                        ? pi_clock_ns(CLOCK_THREAD_CPUTIME_ID)
                        : PI_SPAN_CPU_UNMEASURED;
        o->ts = pi_clock_ticks(); /* last: the span's time leaves out its own reads */
    }
    s->depth++;
}

void pi_span_flag_innermost(struct pi_span_stack *s, uint64_t flag)
{
    if (s->depth && s->depth <= OPEN_MAX)
        s->open[s->depth - 1].flags |= flag;
}

void pi_span_note(struct pi_span_stack *s, uint64_t text)
{
    if (s->depth == 0 || s->depth > OPEN_MAX)
        return;
    const struct open_span *o = &s->open[s->depth - 1];
    pi_emit(PI_REC_SPAN_NOTE, 0, o->ts, 0,
            PI_SPAN_ARG0((uint32_t)o->sid, o->sid >> 32, s->depth - 1, 0), text, 0);
}

/* The innermost open span of @sid ends: spans opened after it and never closed (an
 * optimizer step that raised, whose post-hook never ran) are dropped with it. */
void pi_span_close(struct pi_span_stack *s, uint64_t sid, int raised)
{
    uint64_t now = pi_clock_ticks();
    if (s->depth > OPEN_MAX) {
        s->depth--;
        return;
    }
    uint32_t i = s->depth;
    while (i > 0 && s->open[i - 1].sid != sid)
        i--;
    if (i == 0)
        return; /* not open here: its entry came before the spans were installed */
    const struct open_span *o = &s->open[i - 1];
    s->depth = i - 1;
    uint64_t ticks = now > o->ts ? now - o->ts : 0, cpu_ns = PI_SPAN_CPU_UNMEASURED;
    if (o->cpu_ns != PI_SPAN_CPU_UNMEASURED) {
        uint64_t end = pi_clock_ns(CLOCK_THREAD_CPUTIME_ID);
        cpu_ns = end > o->cpu_ns ? end - o->cpu_ns : 0;
    }
    note_length((uint32_t)sid, ticks);
    uint64_t arg0 = PI_SPAN_ARG0((uint32_t)sid, sid >> 32, s->depth, raised) | o->flags;
    if (o->resident != UINT64_MAX && o->resident) {
        uint64_t resident = pi_resident_bytes_now();
        if (resident) /* 0: unreadable */
            pi_emit(PI_REC_SPAN_HOST_MEMORY, 0, o->ts, ticks, arg0, resident - o->resident,
                    resident);
    }
    pi_emit(PI_REC_SPAN, 0, o->ts, ticks, arg0, cpu_ns, device_bytes() - o->device);
}
