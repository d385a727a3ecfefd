/*
 * memory_order.c - allocations and frees in time order (see memory_order.h).
 */
#include "memory_order.h"

#include <stdlib.h>

#define MIN_HORIZON_NS 1000000000ull /* 1 s */
#define FLUSHES_OF_HORIZON 10

struct pi_memory_waiting {
    uint64_t key;
    /* at equal times a free goes first (it ends the older allocation), then
     * allocations, then the call sites that follow them */
    int rank;
    struct pi_event ev;
};

void pi_memory_order_init(struct pi_memory_order *order, uint64_t flush_interval_ns)
{
    order->items = NULL;
    order->count = order->capacity = 0;
    order->latest_ns = 0;
    uint64_t horizon = flush_interval_ns * FLUSHES_OF_HORIZON;
    order->horizon_ns = horizon > MIN_HORIZON_NS ? horizon : MIN_HORIZON_NS;
}

void pi_memory_order_seen(struct pi_memory_order *order, uint64_t ts_ns)
{
    if (ts_ns > order->latest_ns)
        order->latest_ns = ts_ns;
}

static int before(const struct pi_memory_waiting *a, const struct pi_memory_waiting *b)
{
    if (a->key != b->key)
        return a->key < b->key;
    if (a->rank != b->rank)
        return a->rank < b->rank;
    return a->ev.index < b->ev.index;
}

static void swap(struct pi_memory_waiting *a, struct pi_memory_waiting *b)
{
    struct pi_memory_waiting t = *a;
    *a = *b;
    *b = t;
}

int pi_memory_order_push(struct pi_memory_order *order, const struct pi_event *ev)
{
    if (order->count == order->capacity) {
        size_t capacity = order->capacity ? 2 * order->capacity : 256;
        struct pi_memory_waiting *grown = realloc(order->items, capacity * sizeof(*grown));
        if (!grown)
            return -1;
        order->items = grown;
        order->capacity = capacity;
    }
    /* an allocation is keyed by its end, a free by its start; a call site,
     * written by the allocating thread after the allocation, by how far the
     * file had come when it was read: never before its allocation */
    int rank = ev->rec.kind == PI_REC_GPU_FREE ? 0 : ev->rec.kind == PI_REC_GPU_ALLOC ? 1 : 2;
    uint64_t key = rank == 0 ? ev->ts_ns : rank == 1 ? ev->ts_ns + ev->dur_ns : order->latest_ns;
    struct pi_memory_waiting *items = order->items;
    size_t i = order->count++;
    items[i] = (struct pi_memory_waiting){key, rank, *ev};
    pi_memory_order_seen(order, ev->ts_ns + ev->dur_ns);
    while (i > 0 && before(&items[i], &items[(i - 1) / 2])) {
        swap(&items[i], &items[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    return 0;
}

int pi_memory_order_pop(struct pi_memory_order *order, struct pi_event *ev, int all)
{
    struct pi_memory_waiting *items = order->items;
    if (order->count == 0 ||
        (!all && items[0].key + order->horizon_ns > order->latest_ns))
        return 0;
    *ev = items[0].ev;
    items[0] = items[--order->count];
    for (size_t i = 0;;) {
        size_t smallest = i, left = 2 * i + 1, right = left + 1;
        if (left < order->count && before(&items[left], &items[smallest]))
            smallest = left;
        if (right < order->count && before(&items[right], &items[smallest]))
            smallest = right;
        if (smallest == i)
            break;
        swap(&items[i], &items[smallest]);
        i = smallest;
    }
    return 1;
}

void pi_memory_order_free(struct pi_memory_order *order)
{
    free(order->items);
    order->items = NULL;
    order->count = order->capacity = 0;
}
