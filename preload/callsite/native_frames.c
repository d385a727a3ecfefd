/*
 * native_frames.c - return addresses, their modules and offsets (see
 * native_frames.h).
 *
 * libunwind is dlopen'ed with RTLD_LOCAL, never linked: linked, it would
 * join the global scope and take _Unwind_RaiseException from libgcc_s for
 * every C++ exception the host throws (docs/ARCHITECTURE.md, decision 10). Stacks are
 * walked only for allocations, which a caching allocator makes rare; each
 * module is described once (dladdr1 for its link map, dl_iterate_phdr for
 * its program headers, whose PT_NOTE holds the GNU build id in memory), so
 * no file is read.
 */
#include "native_frames.h"

#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

/* types and the architecture's symbol names only: the library is dlopen'ed, never linked */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "core/diagnostics.h"
#include "core/real_functions.h"
#include "core/recorder.h"
#include "core/settings.h"
#include "loader_lock.h"

#define OWN_FRAMES_MAX 8 /* frames of the profiler itself, dropped from the top */
#define MODULE_SLOTS 512
#define BUILD_ID_MAX 64

static int (*backtrace_fn)(void **, int);
/* libunwind's frame-by-frame walk, for signal handlers (pi_native_walk_signal) */
static int (*init_local2_fn)(unw_cursor_t *, unw_context_t *, int);
static int (*step_fn)(unw_cursor_t *);
static int (*get_reg_fn)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
static int can_walk_signal;
static int walk_context(void *context, void **pcs, int max);
static const void *own_base;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int unwinder_loaded;

/* link map -> module id; a slot is written under the flag, read under it
 * too. The load base is kept as well: a library unloaded and another
 * loaded may get the same link map. */
static struct {
    const struct link_map *map;
    uintptr_t base;
    uint32_t id;
} modules[MODULE_SLOTS];
static atomic_flag modules_busy = ATOMIC_FLAG_INIT;

/* libunwind's exported name of a function of its API (unw_step: _ULx86_64_step) */
#define SYMBOL_NAME(function) SYMBOL_NAME_EXPANDED(function)
#define SYMBOL_NAME_EXPANDED(name) #name

/* libunwind.so.8 beside this library (the relocatable tarball ships one),
 * else the system's. By path, not through a run path: a run path would also
 * be searched for libdl and libpthread in every process at start. Where
 * there is none (GPU images often lack it: seen on an H200 image, where every
 * allocation came without a call stack), glibc's backtrace(), slower
 * (libgcc_s's unwinder) but present wherever glibc is; its first call loads
 * libgcc_s, so it is made here, once. PROFINJECT_TEST_NO_LIBUNWIND=1 takes
 * that path where libunwind is installed. */
static void load_unwinder(void)
{
    Dl_info self;
    void *lib = NULL;
    int skip_libunwind = pi_setting_flag("PROFINJECT_TEST_NO_LIBUNWIND");
    if (dladdr((const void *)pi_native_walk, &self)) {
        own_base = self.dli_fbase;
        const char *slash = self.dli_fname ? strrchr(self.dli_fname, '/') : NULL;
        char path[PATH_MAX];
        if (!skip_libunwind && slash &&
            (size_t)(slash - self.dli_fname) + sizeof("/libunwind.so.8") <= sizeof(path)) {
            memcpy(path, self.dli_fname, (size_t)(slash - self.dli_fname));
            strcpy(path + (slash - self.dli_fname), "/libunwind.so.8");
            lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        }
    }
    if (!lib && !skip_libunwind)
        lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (lib) {
        backtrace_fn = (int (*)(void **, int))pi_dlsym(lib, "unw_backtrace");
        init_local2_fn = (int (*)(unw_cursor_t *, unw_context_t *, int))pi_dlsym(
            lib, SYMBOL_NAME(unw_init_local2));
        step_fn = (int (*)(unw_cursor_t *))pi_dlsym(lib, SYMBOL_NAME(unw_step));
        get_reg_fn = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))pi_dlsym(
            lib, SYMBOL_NAME(unw_get_reg));
    }
    can_walk_signal = init_local2_fn && step_fn && get_reg_fn;
    if (can_walk_signal && !pi_loader_lock_find()) {
        pi_diag("native CPU samples and fatal signals come without stacks: the C library's "
                "loader lock, which a walk must not wait for, was not found");
        can_walk_signal = 0;
    }
    if (can_walk_signal) {
        /* libunwind's first walk sets up its process-wide state (a lock, its check of
         * addresses): here, where the application holds nothing, not in a handler */
        ucontext_t here;
        void *pcs[4];
        if (getcontext(&here) == 0)
            walk_context(&here, pcs, 4);
    }
    if (!backtrace_fn) {
        backtrace_fn = (int (*)(void **, int))pi_dlsym(RTLD_DEFAULT, "backtrace");
        void *first[2];
        if (backtrace_fn)
            backtrace_fn(first, 2);
    }
}

static int walk(void **pcs, int max);

void pi_native_prepare(void)
{
    pthread_once(&once, load_unwinder);
    atomic_store(&unwinder_loaded, 1);
}

int pi_native_walk(void **pcs, int max)
{
    pi_native_prepare();
    return walk(pcs, max);
}

int pi_native_can_walk_signal(void)
{
    pi_native_prepare();
    return can_walk_signal;
}

/* From the interrupted instruction, frame by frame. Not unw_backtrace: its fast path keeps a
 * cache in thread-local storage of libunwind's own, a dlopen'ed library's, and once any
 * library with thread-local storage has been loaded since the thread last touched it, the
 * C library grows the thread's table of such storage on that touch, with malloc (seen: a
 * handler that had interrupted malloc waited for malloc's lock for ever, in `import torch`).
 * The step walk's caches are global, taken with signals blocked; the loader's list lock,
 * which a walk may take, is looked at first and never waited for (loader_lock.h). */
int pi_native_walk_signal(void *context, void **pcs, int max)
{
    if (!atomic_load(&unwinder_loaded) || !can_walk_signal || !context || max <= 0)
        return 0;
    return pi_loader_lock_taken() ? PI_NATIVE_LOADER_BUSY : walk_context(context, pcs, max);
}

static int walk_context(void *context, void **pcs, int max)
{
    unw_cursor_t cursor;
    if (init_local2_fn(&cursor, (unw_context_t *)context, UNW_INIT_SIGNAL_FRAME) < 0)
        return 0;
    int n = 0;
    do {
        unw_word_t pc;
        if (get_reg_fn(&cursor, UNW_REG_IP, &pc) < 0 || pc == 0)
            break;
        pcs[n++] = (void *)(uintptr_t)pc;
    } while (n < max && step_fn(&cursor) > 0);
    return n;
}

static int walk(void **pcs, int max)
{
    if (!backtrace_fn || max <= 0)
        return 0;
    void *frames[PI_NATIVE_FRAMES_MAX + OWN_FRAMES_MAX];
    int want = max > PI_NATIVE_FRAMES_MAX ? PI_NATIVE_FRAMES_MAX : max;
    int n = backtrace_fn(frames, want + OWN_FRAMES_MAX);
    /* how many of the top frames are ours depends on inlining: ask dladdr */
    int skip = 0;
    Dl_info info;
    while (skip < n && dladdr(frames[skip], &info) && info.dli_fbase == own_base)
        skip++;
    n -= skip;
    if (n > want)
        n = want;
    if (n > 0)
        memcpy(pcs, frames + skip, (size_t)n * sizeof(void *));
    return n > 0 ? n : 0;
}

struct build_id_search {
    const struct link_map *map;
    const unsigned char *id;
    size_t length;
};

/* The GNU build id among a module's loaded notes (they sit in a PT_LOAD). */
static void note_build_id(const struct dl_phdr_info *info, struct build_id_search *search)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *note = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = note + ph->p_memsz;
        while (note + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *h = (const ElfW(Nhdr) *)note;
            const unsigned char *name = note + sizeof(*h);
            const unsigned char *desc = name + ((h->n_namesz + 3u) & ~3u);
            if (desc + h->n_descsz > end)
                break;
            if (h->n_type == NT_GNU_BUILD_ID && h->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                h->n_descsz <= BUILD_ID_MAX) {
                search->id = desc;
                search->length = h->n_descsz;
                return;
            }
            note = desc + ((h->n_descsz + 3u) & ~3u);
        }
    }
}

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct build_id_search *search = data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *wanted = search->map->l_name ? search->map->l_name : "";
    if (info->dlpi_addr != search->map->l_addr || strcmp(name, wanted) != 0)
        return 0;
    note_build_id(info, search);
    return 1;
}

static uint32_t describe_module_named(const char *name, uintptr_t base,
                                      const struct build_id_search *search);

/* Intern the PI_REC_MODULE definition of @map. */
static uint32_t describe_module(const struct link_map *map)
{
    struct build_id_search search = {map, NULL, 0};
    dl_iterate_phdr(find_module, &search);
    return describe_module_named(map->l_name, (uintptr_t)map->l_addr, &search);
}

/* Intern the PI_REC_MODULE of the module named @name (NULL or "": the main program) loaded
 * at @base, with the build id @search found. */
static uint32_t describe_module_named(const char *name, uintptr_t base,
                                      const struct build_id_search *search)
{
    char path[PATH_MAX];
    if (!name || !name[0]) {
        /* the main program has no name in its link map */
        ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
        path[n > 0 ? n : 0] = '\0';
        name = path;
    } else if (name[0] != '/' && realpath(name, path)) {
        name = path; /* dlopen'ed by a relative path: the analyzer runs elsewhere */
    }
    size_t path_length = strlen(name);
    if (path_length > PI_MAX_STRING_LEN - sizeof(struct pi_module_def) - BUILD_ID_MAX)
        path_length = PI_MAX_STRING_LEN - sizeof(struct pi_module_def) - BUILD_ID_MAX;
    unsigned char bytes[PI_MAX_STRING_LEN];
    struct pi_module_def def = {(uint64_t)base, (uint16_t)search->length,
                                (uint16_t)path_length, 0};
    memcpy(bytes, &def, sizeof(def));
    if (search->length)
        memcpy(bytes + sizeof(def), search->id, search->length);
    memcpy(bytes + sizeof(def) + search->length, name, path_length);
    return pi_intern_kind(PI_REC_MODULE, bytes, sizeof(def) + search->length + path_length);
}

/* The executable ranges of the loaded modules, for pi_native_describe_by_range. */
#define RANGES_MAX 2048
static struct code_range {
    uintptr_t start, end, base;
    uint32_t module; /* its PI_REC_MODULE, 0 until a frame lies in it */
    char name[PATH_MAX > 512 ? 512 : PATH_MAX];
    int named; /* name holds the whole path */
} ranges[RANGES_MAX];
static size_t range_count;
static unsigned long long ranges_loads = ~0ull; /* the loader's loads + unloads they were read at */

/* The loader's count of loads and unloads so far (glibc's dlpi_adds, dlpi_subs): the ranges
 * change only when it does. */
static int loads_so_far(struct dl_phdr_info *info, size_t size, void *loads)
{
    *(unsigned long long *)loads =
        size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)
            ? info->dlpi_adds + info->dlpi_subs
            : 0;
    return 1; /* the first module says it */
}

static int add_ranges(struct dl_phdr_info *info, size_t size, void *unused)
{
    (void)size;
    (void)unused;
    for (int i = 0; i < info->dlpi_phnum && range_count < RANGES_MAX; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        struct code_range *r = &ranges[range_count++];
        r->start = info->dlpi_addr + ph->p_vaddr;
        r->end = r->start + ph->p_memsz;
        r->base = info->dlpi_addr;
        r->module = 0;
        const char *name = info->dlpi_name ? info->dlpi_name : "";
        size_t length = strlen(name);
        r->named = length < sizeof(r->name);
        memcpy(r->name, name, r->named ? length + 1 : 0);
    }
    return 0;
}

static struct code_range *range_of(uintptr_t pc)
{
    for (size_t i = 0; i < range_count; i++)
        if (pc >= ranges[i].start && pc < ranges[i].end)
            return &ranges[i];
    return NULL;
}

struct phdr_search {
    uintptr_t base;
    struct build_id_search *found;
};

static int find_module_by_base(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct phdr_search *search = data;
    if (info->dlpi_addr != search->base)
        return 0;
    note_build_id(info, search->found);
    return 1;
}

static uint32_t range_module(struct code_range *r)
{
    if (!r->module && r->named) {
        struct build_id_search found = {NULL, NULL, 0};
        struct phdr_search search = {r->base, &found};
        dl_iterate_phdr(find_module_by_base, &search);
        r->module = describe_module_named(r->name, r->base, &found);
    }
    return r->module;
}

int pi_native_describe_by_range(void *const *pcs, int n, struct pi_stack_frame *out)
{
    int written = 0, reread = 0;
    for (int i = 0; i < n; i++) {
        /* a return address points after the call: name the call itself */
        uintptr_t pc = (uintptr_t)pcs[i] - 1;
        struct code_range *r = range_of(pc);
        if (!r && !reread) { /* a module loaded since: read them again, once a stack */
            reread = 1;
            /* an address in no module (JIT code) finds the same modules loaded: keep them */
            unsigned long long loads = 0;
            dl_iterate_phdr(loads_so_far, &loads);
            if (loads != ranges_loads || !loads) {
                ranges_loads = loads;
                range_count = 0;
                dl_iterate_phdr(add_ranges, NULL);
                r = range_of(pc);
            }
        }
        uint32_t module = r ? range_module(r) : 0;
        if (!module)
            continue;
        struct pi_stack_frame *f = &out[written++];
        memset(f, 0, sizeof(*f));
        f->type = PI_FRAME_NATIVE;
        f->ref = module;
        f->offset = (uint64_t)(pc - r->base);
    }
    return written;
}

static uint32_t module_id(const struct link_map *map)
{
    unsigned slot = (unsigned)(((uintptr_t)map >> 4) * 0x9E3779B1u) % MODULE_SLOTS;
    uint32_t id = 0;
    int mine = !atomic_flag_test_and_set_explicit(&modules_busy, memory_order_acquire);
    if (mine && modules[slot].map == map && modules[slot].base == (uintptr_t)map->l_addr)
        id = modules[slot].id;
    if (!id) {
        id = describe_module(map);
        if (mine && id) {
            modules[slot].map = map;
            modules[slot].base = (uintptr_t)map->l_addr;
            modules[slot].id = id;
        }
    }
    /* never wait for the flag: a thread that finds it taken describes the module itself */
    if (mine)
        atomic_flag_clear_explicit(&modules_busy, memory_order_release);
    return id;
}

int pi_native_describe(void *const *pcs, int n, struct pi_stack_frame *out)
{
    int written = 0;
    for (int i = 0; i < n; i++) {
        /* a return address points after the call: name the call itself */
        const char *pc = (const char *)pcs[i] - 1;
        Dl_info info;
        struct link_map *map = NULL;
        if (!dladdr1(pc, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
            continue;
        struct pi_stack_frame *f = &out[written];
        memset(f, 0, sizeof(*f));
        f->type = PI_FRAME_NATIVE;
        f->ref = module_id(map);
        f->offset = (uint64_t)((uintptr_t)pc - (uintptr_t)map->l_addr);
        f->name = info.dli_sname ? pi_intern_cstr(info.dli_sname) : 0;
        if (f->ref)
            written++;
    }
    return written;
}
