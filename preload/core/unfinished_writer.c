/* unfinished_writer.c - what a writer that could not finish lost (see unfinished_writer.h). */
#include "unfinished_writer.h"

#include <string.h>

#include "recorder_internal.h"
#include "diagnostics.h"
#include "profinject/record_codec.h"
#include "raw_syscalls.h"

/* The records made but not written: those the threads' buffers still hold,
 * those the writer had staged for its next frame (the one it is stuck on),
 * and the drops it had not yet counted. The writer runs on meanwhile, so a
 * record moving from a buffer to the staging area may be seen in both or
 * neither: the count is close, not exact. */
static uint64_t unwritten_records(uint32_t *buffers)
{
    struct pi_buffer_pool *pool = &pi_rec.pool;
    uint64_t records = 0;
    *buffers = 0;
    uint32_t count = pi_pool_count(pool);
    for (uint32_t i = 0; i < count; i++) {
        struct pi_buffer *b = pi_pool_buffer(pool, i);
        if (atomic_load(&b->state) == PI_BUF_FREE)
            continue;
        uint32_t committed = atomic_load(&b->committed);
        uint32_t flushed = __atomic_load_n(&b->flushed, __ATOMIC_RELAXED);
        if (committed > flushed) {
            records += committed - flushed;
            ++*buffers;
        }
    }
    records += __atomic_load_n(&pi_rec.writer.staged, __ATOMIC_RELAXED);
    uint32_t slots = atomic_load(&pi_rec.thread_slots_used);
    for (uint32_t i = 0; i < slots && i < PI_THREAD_SLOTS; i++)
        records += atomic_load(&pi_rec.thread_slots[i].lost);
    return records;
}

/* One frame with one LOST record after the last frame the writer wrote; 0 or -1. */
static int record_loss(uint64_t records)
{
    int fd = pi_rec.writer.fd;
    if (fd < 0 || pi_rec.writer.failed || atomic_load(&pi_rec.stat_frames) == 0)
        return -1; /* no file, or not even its header yet */
    struct {
        struct pi_frame_header header;
        uint8_t records[PI_RECORD_SIZE];
    } raw;
    struct pi_record lost, events[1];
    memset(&lost, 0, sizeof(lost));
    lost.kind = PI_REC_LOST;
    lost.ts = pi_clock_ticks();
    lost.arg[0] = records;
    lost.arg[1] = PI_LOST_WRITE_FAILED;
    raw.header = (struct pi_frame_header){PI_FRAME_MAGIC, 1,
                                          atomic_load(&pi_rec.sequence_written) + 1, 0};
    raw.header.definition_slots = pi_codec_encode_frame(&lost, 1, events, raw.records);
    /* One zstd frame holding @raw as it is (RFC 8878: a single segment of
     * one raw block): no compression context, no allocation, as _exit may
     * be called from a signal handler. */
    _Static_assert(sizeof(raw) < 256, "the content size fits the one-byte field");
    uint8_t frame[4 + 2 + 3 + sizeof(raw)];
    uint32_t magic = 0xFD2FB528u, block = 1u | (uint32_t)sizeof(raw) << 3; /* last, raw */
    memcpy(frame, &magic, 4);
    frame[4] = 0x20; /* single segment, a one-byte content size, no checksum */
    frame[5] = (uint8_t)sizeof(raw);
    frame[6] = (uint8_t)block;
    frame[7] = (uint8_t)(block >> 8);
    frame[8] = (uint8_t)(block >> 16);
    memcpy(frame + 9, &raw, sizeof(raw));
    return pi_sys_write_all(fd, frame, sizeof(frame));
}

void pi_writer_abandon(unsigned waited_ms)
{
    /* once the gate is closed the writer writes nothing more; closed while
     * it is inside a write, the trace cannot take our frame */
    uint32_t open_gate = PI_WRITE_GATE_OPEN;
    int gate_ours = atomic_compare_exchange_strong(&pi_rec.write_gate, &open_gate,
                                                   PI_WRITE_GATE_CLOSED);
    if (!gate_ours)
        atomic_store(&pi_rec.write_gate, PI_WRITE_GATE_CLOSED);
    uint32_t buffers;
    uint64_t records = unwritten_records(&buffers);
    int recorded = gate_ours && record_loss(records) == 0;
    const char *trace = pi_rec.trace_path[0] ? pi_rec.trace_path : "the trace file";
    pi_diag("the writer had not finished %u ms after the process began to end (a slow or "
            "stalled disk?): about %llu records (of the frame it was writing and of %u thread "
            "buffers) were not written to %s; %s",
            waited_ms, (unsigned long long)records, buffers, trace,
            recorded ? "the trace ends here and records the loss"
                     : "the trace ends early and does not record the loss");
}
