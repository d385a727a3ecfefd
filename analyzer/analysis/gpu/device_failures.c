/* device_failures.c - see device_failures.h. */
#include "device_failures.h"

#include <string.h>

#include "site_bytes.h"

/* the failure of thread @tid still waiting for what follows it, or NULL */
static struct pi_device_failure *last_of_thread(struct pi_gpu_memory *m, uint32_t tid)
{
    for (unsigned i = m->failure_count; i-- > 0;)
        if (m->failures[i].tid == tid)
            return &m->failures[i];
    return NULL;
}

void pi_device_failure_event(struct pi_gpu_memory *m, const struct pi_reader *reader,
                             const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    unsigned kind = PI_CUDA_SUBTYPE(r->flags);
    if (pi_gpu_alloc_on_host(kind))
        return;
    m->failures_total++;
    if (m->failure_count == PI_MAX_DEVICE_FAILURES)
        return;
    struct pi_device_failure *f = &m->failures[m->failure_count++];
    memset(f, 0, sizeof(*f));
    f->ns = ev->ts_ns;
    f->bytes = r->arg[1];
    f->tid = r->tid;
    f->site.stack = PI_CUDA_STACK(r->arg[2]);
    pi_site_resolve(&f->site, reader);
}

void pi_device_failure_in_order(struct pi_gpu_memory *m, const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    unsigned kind = PI_CUDA_SUBTYPE(r->flags);
    if (pi_gpu_alloc_on_host(kind))
        return;
    for (unsigned i = 0; i < m->failure_count; i++) {
        struct pi_device_failure *f = &m->failures[i];
        if (f->tid != r->tid)
            continue;
        if (f->ns == ev->ts_ns && (r->flags & PI_FLAG_FAILED)) {
            f->held_bytes = m->live;
            f->in_order = 1;
        } else if (f->in_order && !f->retried && ev->ts_ns > f->ns) {
            /* the thread's next request: what it let go of in between, and how it went */
            f->retried = 1;
            f->retry_failed = (r->flags & PI_FLAG_FAILED) != 0;
            f->freed_before_retry = f->held_bytes > m->live ? f->held_bytes - m->live : 0;
        }
    }
}

void pi_device_failure_memory(struct pi_gpu_memory *m, const struct pi_event *ev)
{
    struct pi_device_failure *f = last_of_thread(m, ev->rec.tid);
    if (!f || f->has_device_memory)
        return;
    f->has_device_memory = 1;
    f->free_bytes = ev->rec.arg[0];
    f->total_bytes = ev->rec.arg[1];
}

void pi_device_failure_site(struct pi_gpu_memory *m, const struct pi_reader *reader,
                            const struct pi_event *ev)
{
    for (unsigned i = 0; i < m->failure_count; i++) {
        struct pi_device_failure *f = &m->failures[i];
        /* the call site record carries its allocation's start (48 bits of it) */
        if (f->tid == ev->rec.tid && (f->ns & 0xffffffffffffull) == (ev->ts_ns & 0xffffffffffffull)) {
            pi_site_free(&f->site);
            f->site.stack = (uint32_t)(ev->rec.arg[0] & 0xffffffu);
            pi_site_resolve(&f->site, reader);
            return;
        }
    }
}

void pi_device_failures_free(struct pi_gpu_memory *m)
{
    for (unsigned i = 0; i < m->failure_count; i++)
        pi_site_free(&m->failures[i].site);
    m->failure_count = 0;
}
