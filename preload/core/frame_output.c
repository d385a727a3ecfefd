/*
 * frame_output.c - the writer's way out: staged records become one frame
 * (record_codec.h's encoding), compressed with zstd, appended to the trace
 * file. Raw system calls only, like the rest of the writer thread.
 */
#include "frame_output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "diagnostics.h"
#include "profinject/record_codec.h"
#include "raw_syscalls.h"
#include "string_table.h"
#include "trace_file.h"

/* A write failed: say so once, stop recording, keep draining buffers. */
static void writer_fail(struct pi_writer *w, const char *what)
{
    if (w->failed)
        return;
    w->failed = 1;
    atomic_store(&pi_recording, 0);
    pi_diag("cannot %s trace file %s: %s; tracing stopped, the program continues", what,
            pi_rec.trace_path[0] ? pi_rec.trace_path : pi_rec.config.output_dir,
            strerror(errno));
}

/* Once a second: a trace file removed while recording is said once, and the writer stops. */
void pi_writer_check_not_removed(struct pi_writer *w, uint64_t now)
{
    if (w->failed || w->fd < 0 || now < w->next_removal_check_ns)
        return;
    w->next_removal_check_ns = now + 1000000000u;
    if (pi_trace_file_removed(w->fd)) {
        w->failed = 1;
        atomic_store(&pi_recording, 0);
        pi_diag("trace file %s was removed while recording (its directory with it?); tracing "
                "stopped, what it held is lost, the program continues", pi_rec.trace_path);
    }
}

/*
 * The level's own match tables are sized for megabytes; a frame is mostly
 * one flush interval of records (about 14 KB at 10 flushes a second in a
 * DataLoader process), and the writer wakes with its caches cold, so
 * clearing and missing in those tables cost more than the matching. The
 * transposed columns are long runs that zstd finds through repeat offsets,
 * so 4 KB tables give the same ratio at the default levels (measured: the
 * same to 0.3% on an example job's frames of 14 and 140 KB), in about
 * two-thirds of the time with cold caches. A frame of a full staging area
 * (a burst) keeps the level's own tables: there they gain 0.3%. Levels
 * above 3 always keep theirs.
 */
#define SMALL_TABLES_UP_TO_LEVEL 3
#define SMALL_TABLES_UP_TO_BYTES (128u << 10)
#define SMALL_TABLE_LOG 12

static void fit_tables(ZSTD_CCtx *cctx, size_t raw_len)
{
    static int small = -1; /* what @cctx has: unset, the level's own, small */
    int want = pi_rec.config.compression_level <= SMALL_TABLES_UP_TO_LEVEL &&
               raw_len <= SMALL_TABLES_UP_TO_BYTES;
    if (want == small)
        return;
    small = want;
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog, want ? SMALL_TABLE_LOG : 0);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_chainLog, want ? SMALL_TABLE_LOG : 0);
}

/* Compress @raw_len bytes of @raw into one frame and append it. */
void pi_writer_write_frame(struct pi_writer *w, const void *raw, size_t raw_len, uint32_t sequence)
{
    if (w->failed)
        return;
    fit_tables(w->cctx, raw_len);
    size_t n = ZSTD_compress2(w->cctx, w->compressed, w->compressed_capacity, raw, raw_len);
    if (ZSTD_isError(n)) {
        errno = EIO;
        writer_fail(w, "compress for");
        return;
    }
    if (pi_rec.config.test_writer_stall_ns)
        pi_sys_sleep(pi_rec.config.test_writer_stall_ns);
    uint64_t limit = pi_rec.config.test_fail_write_after;
    if (limit && atomic_load(&pi_rec.stat_bytes) + n > limit) {
        errno = ENOSPC; /* injected: the disk is full */
        writer_fail(w, "write");
        return;
    }
    /* the file is ours unless a process ending without us took it (unfinished_writer.h) */
    uint32_t open_gate = PI_WRITE_GATE_OPEN;
    if (!atomic_compare_exchange_strong(&pi_rec.write_gate, &open_gate, PI_WRITE_GATE_WRITER)) {
        w->failed = 1;
        return;
    }
    int written = pi_sys_write_all(w->fd, w->compressed, n);
    if (written == 0 && sequence)
        atomic_store(&pi_rec.sequence_written, sequence);
    uint32_t held = PI_WRITE_GATE_WRITER; /* CLOSED stays closed */
    atomic_compare_exchange_strong(&pi_rec.write_gate, &held, PI_WRITE_GATE_OPEN);
    if (written != 0) {
        writer_fail(w, "write");
        return;
    }
    atomic_fetch_add(&pi_rec.stat_frames, 1);
    atomic_fetch_add(&pi_rec.stat_bytes, n);
    atomic_fetch_add(&pi_rec.stat_raw_bytes, raw_len);
}

/* Encode and write the staged records as one frame. */
void pi_writer_flush_staging(struct pi_writer *w)
{
    if (w->staged == 0)
        return;
    /* the file is made for the first frame: a process that ends having
     * recorded nothing needs none (writer.c) */
    if (w->fd < 0 && !w->failed)
        w->open_file(w);
    if (w->failed) {
        w->staged = 0;
        w->staged_own = 0;
        return;
    }
    struct pi_frame_header fh = {PI_FRAME_MAGIC, w->staged, ++w->frame_sequence, 0};
    fh.definition_slots =
        pi_codec_encode_frame(w->staging, w->staged, w->events, w->encoded + sizeof(fh));
    memcpy(w->encoded, &fh, sizeof(fh));
    pi_writer_write_frame(w, w->encoded, sizeof(fh) + (size_t)w->staged * PI_RECORD_SIZE,
                          fh.sequence);
    if (!w->failed)
        atomic_fetch_add(&pi_rec.stat_records, w->staged);
    w->staged = 0;
    w->staged_own = 0;
}

/* Room for @slots more records, writing a frame first if needed. */
struct pi_record *pi_writer_stage(struct pi_writer *w, uint32_t slots)
{
    if (w->staged + slots > w->staging_capacity)
        pi_writer_flush_staging(w);
    struct pi_record *r = &w->staging[w->staged];
    w->staged += slots;
    return r;
}

/*
 * Definitions go out in frames of at most this many slots (96 KB). A first
 * flush after a large import holds hundreds of KB of names and stacks: as
 * one frame, that would be three buffers of that size written through for
 * the first time (in a fork child, each page a copy-on-write fault) and the
 * level's own match tables; in frames of this size, the same first pages
 * and small tables serve every frame, for a fraction of the faults.
 */
#define DEFINITION_FRAME_SLOTS 2048u

void pi_writer_stage_definition(struct pi_writer *w, uint32_t id)
{
    uint32_t length;
    const char *text = pi_strings_get(&pi_rec.strings, id, &length);
    if (!text)
        return;
    uint32_t slots = pi_string_slots(length);
    struct pi_record *r = pi_writer_stage(w, 1 + slots);
    memset(r, 0, sizeof(*r) * (1 + slots));
    r->kind = pi_strings_kind(&pi_rec.strings, id);
    r->arg[0] = id;
    r->arg[1] = length;
    memcpy(r + 1, text, length);
}

void pi_writer_stage_new_definitions(struct pi_writer *w)
{
    uint32_t id;
    while ((id = pi_strings_next_unemitted(&pi_rec.strings)) != 0) {
        if (w->staged >= DEFINITION_FRAME_SLOTS)
            pi_writer_flush_staging(w);
        pi_writer_stage_definition(w, id);
    }
}

int pi_writer_allocate(struct pi_writer *w)
{
    w->staging_capacity = STAGING_RECORDS;
    size_t raw = sizeof(struct pi_frame_header) + (size_t)STAGING_RECORDS * PI_RECORD_SIZE;
    if (!w->staging)
        w->staging = malloc((size_t)STAGING_RECORDS * sizeof(struct pi_record));
    if (!w->events)
        w->events = malloc((size_t)STAGING_RECORDS * sizeof(struct pi_record));
    if (!w->encoded)
        w->encoded = malloc(raw > HEADER_CAPACITY ? raw : HEADER_CAPACITY);
    w->compressed_capacity = ZSTD_compressBound(raw > HEADER_CAPACITY ? raw : HEADER_CAPACITY);
    if (!w->compressed)
        w->compressed = malloc(w->compressed_capacity);
    if (!w->cctx && (w->cctx = ZSTD_createCCtx()) != NULL) {
        ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, pi_rec.config.compression_level);
        /* a checksum per frame: the reader tells a damaged frame and skips it (4 bytes) */
        ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
    }
    /* for the pool at its largest (it grows, never shrinks), so they fit in a
     * fork child as well: 20 bytes a buffer */
    if (!w->snapshot_state)
        w->snapshot_state = malloc(sizeof(uint32_t) * pi_rec.pool.max_count);
    if (!w->snapshot_committed)
        w->snapshot_committed = malloc(sizeof(uint32_t) * pi_rec.pool.max_count);
    if (!w->drain_order)
        w->drain_order = malloc(sizeof(uint32_t) * pi_rec.pool.max_count);
    if (!w->drain_keys)
        w->drain_keys = malloc(sizeof(uint64_t) * pi_rec.pool.max_count);
    return w->staging && w->events && w->encoded && w->compressed && w->cctx && w->snapshot_state &&
                   w->snapshot_committed && w->drain_order && w->drain_keys
               ? 0
               : -1;
}

