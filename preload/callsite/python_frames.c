/*
 * python_frames.c - walking the frame chain of the thread that holds the
 * GIL (see python_frames.h and, for every field read, python_runtime.h).
 *
 * A frame becomes (code object, instruction offset); names and line of
 * that pair are worked out once and cached: strings are read character by
 * character through the C API and the line through the line table, which
 * costs far more than the walk itself. A cache entry remembers the
 * filename and name objects it was made from, so a code object freed and
 * replaced at the same address is noticed.
 */
#include "python_frames.h"

#include <stdatomic.h>
#include <string.h>

#include "core/recorder.h"

#define CACHE_SLOTS 8192
#define MAX_CHAIN 4096 /* a chain longer than any real one: stop rather than loop */
#define NAME_MAX_BYTES 1024
#define FRAME_OWNED_BY_GENERATOR 1
#define FRAME_OWNED_BY_CSTACK 3 /* 3.12+: the interpreter's entry frames, no Python code */

struct site {
    const void *code;
    long lasti;
    const void *filename, *name; /* the objects the ids were made from */
    uint32_t file_id, name_id;
    int line;
};

static struct site cache[CACHE_SLOTS];
static atomic_flag cache_busy = ATOMIC_FLAG_INIT;

/* UTF-8 of a str object, read through PyUnicode_GetLength/ReadChar. */
static uint32_t intern_text(const struct pi_python *py, void *text)
{
    if (!text || pi_python_object_type(text) != py->unicode_type)
        return pi_intern_cstr("?");
    char bytes[NAME_MAX_BYTES];
    size_t used = 0;
    long length = py->unicode_length(text);
    for (long i = 0; i < length && used + 4 <= sizeof(bytes); i++) {
        uint32_t c = py->unicode_char(text, i);
        if (c < 0x80) {
            bytes[used++] = (char)c;
        } else if (c < 0x800) {
            bytes[used++] = (char)(0xc0 | (c >> 6));
            bytes[used++] = (char)(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            bytes[used++] = (char)(0xe0 | (c >> 12));
            bytes[used++] = (char)(0x80 | ((c >> 6) & 0x3f));
            bytes[used++] = (char)(0x80 | (c & 0x3f));
        } else if (c < 0x110000) {
            bytes[used++] = (char)(0xf0 | (c >> 18));
            bytes[used++] = (char)(0x80 | ((c >> 12) & 0x3f));
            bytes[used++] = (char)(0x80 | ((c >> 6) & 0x3f));
            bytes[used++] = (char)(0x80 | (c & 0x3f));
        }
    }
    return pi_intern(bytes, used);
}

/* The line of @frame at @lasti: each version's own allocation-free function. */
static int line_of(const struct pi_python *py, void *frame, void *code, long lasti)
{
    if (py->frame_object_line)
        return py->frame_object_line(frame);
    if (py->code_line) /* 3.11: byte offset of the instruction */
        return py->code_line(code, (int)(lasti * 2));
    return py->frame_line(frame);
}

static void describe(const struct pi_python *py, void *frame, void *code, long lasti,
                     struct site *s)
{
    const struct pi_python_layout *l = &py->layout;
    s->code = code;
    s->lasti = lasti;
    s->filename = pi_python_field(code, l->code_filename);
    s->name = pi_python_field(code, l->code_name);
    s->file_id = intern_text(py, (void *)s->filename);
    s->name_id = intern_text(py, (void *)s->name);
    s->line = line_of(py, frame, code, lasti);
}

/* The file of the spans' wrappers (python_spans.h): their frames are passed over, so that a
 * stack is as deep, and its lines the same, as without them. */
static const void *_Atomic skipped_file;

void pi_python_frames_skip_file(const void *filename)
{
    atomic_store_explicit(&skipped_file, filename, memory_order_relaxed);
}

static int skipped(const struct pi_python *py, void *code)
{
    const void *file = atomic_load_explicit(&skipped_file, memory_order_relaxed);
    return file && pi_python_field(code, py->layout.code_filename) == file;
}

/* Whether this walk may use the cache: taken once per walk, never waited
 * for (walks hold the GIL, so only interpreters with their own GIL meet). */
static __thread int cache_mine __attribute__((tls_model("initial-exec")));

/* One frame into @out, through the cache when this walk holds it. */
static void add_frame(const struct pi_python *py, void *frame, void *code, long lasti,
                      struct pi_stack_frame *out)
{
    const struct pi_python_layout *l = &py->layout;
    struct site found;
    uintptr_t key = (uintptr_t)code ^ ((uintptr_t)lasti * 0x9E3779B97F4A7C15ull);
    struct site *slot = &cache[(key ^ (key >> 29)) % CACHE_SLOTS];
    if (cache_mine && slot->code == code && slot->lasti == lasti &&
        slot->filename == pi_python_field(code, l->code_filename) &&
        slot->name == pi_python_field(code, l->code_name)) {
        found = *slot;
    } else {
        describe(py, frame, code, lasti, &found);
        if (cache_mine && found.file_id && found.name_id)
            *slot = found;
    }
    memset(out, 0, sizeof(*out));
    out->type = PI_FRAME_PYTHON;
    out->ref = found.file_id;
    out->name = found.name_id;
    out->line = found.line > 0 ? (uint32_t)found.line : 0;
}

static int frame_object_chain(const struct pi_python *py, void *frame, struct pi_stack_frame *out,
                              int max, int at_safe_point)
{
    const struct pi_python_layout *l = &py->layout;
    int n = 0;
    for (int steps = 0; frame && n < max && steps < MAX_CHAIN; steps++) {
        if (pi_python_object_type(frame) != py->frame_type)
            break;
        void *code = pi_python_field(frame, l->frame_code);
        if (!code || pi_python_object_type(code) != py->code_type)
            break;
        int lasti = *(const int *)((const char *)frame + l->frame_lasti);
        /* f_lasti is -1 until the frame runs its first instruction */
        if (!(at_safe_point && n == 0 && lasti < 0) && !skipped(py, code))
            add_frame(py, frame, code, lasti, &out[n++]);
        frame = pi_python_field(frame, l->frame_back);
    }
    return n;
}

static int interpreter_frame_chain(const struct pi_python *py, void *tstate,
                                   struct pi_stack_frame *out, int max, int at_safe_point)
{
    const struct pi_python_layout *l = &py->layout;
    if (!tstate)
        return 0;
    void *frame;
    if (l->tstate_cframe) {
        void *cframe = pi_python_field(tstate, l->tstate_cframe);
        frame = cframe ? pi_python_field(cframe, l->cframe_current) : NULL;
    } else {
        frame = pi_python_field(tstate, l->tstate_current);
    }
    int n = 0;
    for (int steps = 0; frame && n < max && steps < MAX_CHAIN; steps++) {
        void *previous = pi_python_field(frame, l->frame_back);
        char owner = *((const char *)frame + l->frame_owner);
        if (owner == FRAME_OWNED_BY_CSTACK && py->version >= 0x030C0000) {
            frame = previous;
            continue;
        }
        void *code = pi_python_field(frame, l->frame_code);
        if (!code || pi_python_object_type(code) != py->code_type)
            break;
        const char *start = (const char *)code + l->code_adaptive;
        long lasti = ((const char *)pi_python_field(frame, l->frame_instr) - start) / 2;
        long first = l->code_firsttraceable
                         ? *(const int *)((const char *)code + l->code_firsttraceable)
                         : 0;
        /* _PyFrame_IsIncomplete: pushed, not yet at its RESUME; skipped as
         * PyThreadState_GetFrame skips them. At a safe point, a frame just
         * at its RESUME was entered after the call being described. */
        int incomplete = owner != FRAME_OWNED_BY_GENERATOR && lasti < first;
        int just_entered = at_safe_point && n == 0 && l->code_firsttraceable && lasti == first;
        if (!incomplete && !just_entered && lasti >= 0 && !skipped(py, code))
            add_frame(py, frame, code, lasti, &out[n++]);
        frame = previous;
    }
    return n;
}

int pi_python_frames(const struct pi_python *py, struct pi_stack_frame *out, int max,
                     int at_safe_point)
{
    if (max > PI_PYTHON_FRAMES_MAX)
        max = PI_PYTHON_FRAMES_MAX;
    cache_mine = !atomic_flag_test_and_set_explicit(&cache_busy, memory_order_acquire);
    int n = py->layout.frame_objects
                ? frame_object_chain(py, py->current_frame_object(), out, max, at_safe_point)
                : interpreter_frame_chain(py, py->this_thread_state(), out, max, at_safe_point);
    if (cache_mine)
        atomic_flag_clear_explicit(&cache_busy, memory_order_release);
    cache_mine = 0;
    return n;
}

int pi_python_frames_of_blocked(const struct pi_python *py, void *thread_state,
                                struct pi_stack_frame *out, int max)
{
    const struct pi_python_layout *l = &py->layout;
    if (!thread_state || (l->frame_objects && !l->tstate_frame))
        return 0;
    if (max > PI_PYTHON_FRAMES_MAX)
        max = PI_PYTHON_FRAMES_MAX;
    /* no cache: the thread ending the process may have been inside a walk when it stopped */
    cache_mine = 0;
    return l->frame_objects
               ? frame_object_chain(py, pi_python_field(thread_state, l->tstate_frame), out, max, 0)
               : interpreter_frame_chain(py, thread_state, out, max, 0);
}
