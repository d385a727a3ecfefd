/* native_time.c - CPU time by thread and native operator (see native_time.h). */
#include "native_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/common/u64_map.h"

void pi_native_time_event(struct pi_process_info *p, const struct pi_event *ev)
{
    if (!p->native_time && !(p->native_time = calloc(1, sizeof(*p->native_time))))
        return;
    struct pi_native_time *t = p->native_time;
    uint64_t ns = ev->dur_ns, tid = ev->rec.arg[0] & 0xffffffffu, stack = ev->rec.arg[1];
    if (ev->rec.arg[2] == PI_NATIVE_LOST) {
        t->lost_ns += ns;
        return;
    }
    t->sampled_ns += ns;
    t->samples++;
    if (ev->rec.arg[2] == PI_NATIVE_IN_PROFILER) {
        t->profiler_ns += ns;
        return;
    }
    if (ev->rec.arg[2] == PI_NATIVE_IN_LOADER) {
        t->loader_ns += ns;
        return;
    }
    if (!stack || stack > 0xffffffffu) {
        t->unnamed_ns += ns;
        return;
    }
    if (!t->pending && !(t->pending = pi_u64_map_new()))
        return;
    struct pi_u64_entry *e = pi_u64_map_put(t->pending, tid << 32 | stack);
    if (e) {
        e->value[0] += ns;
        e->value[1]++;
    }
    if (t->moment_count == PI_NATIVE_MOMENTS_MAX ||
        pi_array_room(&t->moments, &t->moment_capacity, t->moment_count, sizeof(*t->moments),
                      1024) != 0) {
        t->moments_full = 1;
        return;
    }
    t->moments[t->moment_count++] = (struct pi_native_moment){ev->ts_ns, tid << 32 | stack, ns};
}

/* The samples' time from @start to @end (the steady steps) by (thread, stack id), into a new
 * map; NULL when there are none (or not every moment was kept). */
static struct pi_u64_map *steady_time(const struct pi_native_time *t, uint64_t start,
                                      uint64_t end)
{
    if (t->moments_full || end <= start)
        return NULL;
    struct pi_u64_map *steady = pi_u64_map_new();
    for (size_t i = 0; steady && i < t->moment_count; i++) {
        const struct pi_native_moment *m = &t->moments[i];
        struct pi_u64_entry *e;
        /* a sample stands for the CPU time before it */
        if (m->ns > start && m->ns <= end && (e = pi_u64_map_put(steady, m->key)))
            e->value[0] += m->dur_ns;
    }
    return steady;
}

/* "at::native::addmm_impl_cpu_" of "void at::native::(anonymous namespace)::addmm_impl_cpu_
 * (at::Tensor&, ...)::{lambda()#1}::operator()() const": no return type, anonymous
 * namespaces, template arguments or parameters. */
static void plain_name(const char *demangled, char *out, size_t size)
{
    static const char anonymous[] = "(anonymous namespace)::";
    size_t used = 0;
    int depth = 0;
    for (const char *c = demangled; *c && used + 1 < size; c++) {
        if (strncmp(c, anonymous, sizeof(anonymous) - 1) == 0) {
            c += sizeof(anonymous) - 2;
            continue;
        }
        if (*c == '<' && !(c - demangled >= 8 && strncmp(c - 8, "operator<", 9) == 0)) {
            depth++;
            continue;
        }
        if (*c == '>' && depth > 0) {
            depth--;
            continue;
        }
        if (depth)
            continue;
        if (*c == '(')
            break;
        if (*c == ' ') { /* a return type before the name: start again */
            used = 0;
            continue;
        }
        out[used++] = *c;
    }
    out[used] = '\0';
}

/* The C library, the thread runtimes and the profiler: no frame of them is an operator. */
static int runtime_module(const char *module)
{
    static const char *const runtimes[] = {"libc.so",     "libc-",      "libpthread",
                                           "libgomp",     "libiomp",    "libomp",
                                           "ld-linux",    "linux-vdso", "libunwind",
                                           "libstdc++",   "libgcc_s",   "libprofinject"};
    const char *base = pi_call_site_base_name(module);
    for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
        if (strncmp(base, runtimes[i], strlen(runtimes[i])) == 0)
            return 1;
    return 0;
}

/* "aten::addmm" for an ATen operator's entry, at::_ops::addmm::call or ::redispatch */
static int aten_entry(const char *plain, char *out, size_t size)
{
    static const char prefix[] = "at::_ops::";
    if (strncmp(plain, prefix, sizeof(prefix) - 1) != 0)
        return 0;
    const char *op = plain + sizeof(prefix) - 1, *end = strstr(op, "::");
    if (!end || (strcmp(end, "::call") != 0 && strcmp(end, "::redispatch") != 0))
        return 0;
    /* the overload is folded into the name, add__Tensor for add_.Tensor: torch.profiler
     * names the operator without it (overloads are capitalised, or "out") */
    const char *overload = end;
    for (const char *c = end - 1; c > op; c--) /* sum_IntList_out: both parts */
        if (*c == '_') {
            if (!(c[1] >= 'A' && c[1] <= 'Z') &&
                !(overload - c == 4 && strncmp(c, "_out", 4) == 0))
                break;
            overload = c;
        }
    snprintf(out, size, "aten::%.*s", (int)(overload - op), op);
    return 1;
}

/* The loops every ATen CPU kernel runs in: not the kernel's name. */
static int generic_loop(const char *name, size_t length)
{
    static const char *const loops[] = {"VectorizedLoop2d", "vectorized_loop", "basic_loop",
                                        "cpu_kernel",       "cpu_kernel_vec",  "cpu_serial_kernel",
                                        "cpu_serial_kernel_vec", "unroll_contiguous_scalar_checks",
                                        "binary_kernel_reduce", "binary_kernel_reduce_vec"};
    for (size_t i = 0; i < sizeof(loops) / sizeof(loops[0]); i++)
        if (strlen(loops[i]) == length && strncmp(name, loops[i], length) == 0)
            return 1;
    return 0;
}

/* "at::native::threshold_kernel": the first ATen CPU kernel named anywhere in @symbol (a pool
 * thread's frames name it only inside the template arguments of the loop that calls it). */
static int aten_kernel(const char *symbol, char *out, size_t size)
{
    static const char prefix[] = "at::native::", anonymous[] = "(anonymous namespace)::";
    for (const char *at = strstr(symbol, prefix); at; at = strstr(at + 1, prefix)) {
        const char *c = at + sizeof(prefix) - 1, *last = c;
        for (;;) {
            if (strncmp(c, anonymous, sizeof(anonymous) - 1) == 0) {
                c += sizeof(anonymous) - 1;
                last = c;
                continue;
            }
            size_t n = strspn(c, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
            if (n && strncmp(c + n, "::", 2) == 0 && c[n + 2] != '{' && c[n + 2] != '(') {
                c += n + 2;
                last = c;
                continue;
            }
            size_t length = n;
            if (length && !generic_loop(last, length) &&
                strncmp(last, "AVX", 3) != 0 && strncmp(last, "DEFAULT", 7) != 0) {
                snprintf(out, size, "at::native::%.*s", (int)length, last);
                return 1;
            }
            break;
        }
    }
    return 0;
}

/* "sgemm (MKL)" for a BLAS library's matrix product kernel (its hand-written code has no
 * unwind tables: the walk ends in it, short of the operator that called it). */
static int blas_kernel(const struct pi_site_frame *f, char *out, size_t size)
{
    const char *gemm = strstr(f->symbol, "gemm");
    if (!gemm)
        return 0;
    const char *type = gemm;
    while (type > f->symbol && strchr("sdczhbf16", type[-1]))
        type--;
    const char *library = strncmp(f->symbol, "mkl_", 4) == 0 ? "MKL"
                          : f->module && strstr(f->module, "openblas")
                              ? "OpenBLAS"
                              : pi_call_site_base_name(f->module);
    snprintf(out, size, "%.*sgemm (%s)", (int)(gemm - type), type, library);
    return 1;
}

/* The interpreter itself: its collector or its evaluation loop. */
static int interpreter_frame(const struct pi_site_frame *f, char *out, size_t size)
{
    const char *base = pi_call_site_base_name(f->module);
    if (strncmp(base, "libpython", 9) != 0 && strncmp(base, "python", 6) != 0)
        return 0;
    int collecting = strncmp(f->symbol, "gc_", 3) == 0 || strncmp(f->symbol, "visit_", 6) == 0 ||
                     strstr(f->symbol, "collect") || strstr(f->symbol, "traverse");
    snprintf(out, size, "%s", collecting ? "Python's garbage collector" : "Python interpreter");
    return 1;
}

/* The interpreter importing a module, or the loader running a library's initialisers (a
 * dlopen: PyTorch registers its operators then). */
static int import_frame(const char *symbol)
{
    static const char *const imports[] = {"PyImport_", "import_find_and_load", "_imp_",
                                          "builtin___import__", "_dl_init", "dl_open_worker",
                                          "_dl_catch_exception", "_dl_map_object"};
    for (size_t i = 0; i < sizeof(imports) / sizeof(imports[0]); i++)
        if (strncmp(symbol, imports[i], strlen(imports[i])) == 0)
            return 1;
    return 0;
}

/* A thread pool's worker between tasks: OpenMP's spins at its barrier before it sleeps
 * (OMP_WAIT_POLICY), OpenBLAS's server thread polls for work. CPU, but no work. */
static int pool_waiting(const struct pi_site_frame *f, int runtime_only, char *out, size_t size)
{
    const char *base = pi_call_site_base_name(f->module);
    int openmp = runtime_only && (strncmp(base, "libgomp", 7) == 0 ||
                                  strncmp(base, "libiomp", 7) == 0 ||
                                  strncmp(base, "libomp", 6) == 0);
    if (openmp)
        snprintf(out, size, "OpenMP threads" PI_NATIVE_SPINNING);
    else if (strcmp(f->symbol, "blas_thread_server") == 0)
        snprintf(out, size, "OpenBLAS threads" PI_NATIVE_SPINNING);
    return openmp || strcmp(f->symbol, "blas_thread_server") == 0;
}

int pi_native_operator_is_spinning(const char *name)
{
    size_t n = strlen(name), m = sizeof(PI_NATIVE_SPINNING) - 1;
    return n >= m && strcmp(name + n - m, PI_NATIVE_SPINNING) == 0;
}

void pi_native_operator_of(const struct pi_call_site *site, char *out, size_t size)
{
    char plain[512];
    const struct pi_site_frame *own = NULL, *any = NULL;
    /* time under an import is the import's, whatever it ran (as in Python time) */
    for (size_t i = site->python_count; i < site->count; i++)
        if (site->frames[i].symbol && import_frame(site->frames[i].symbol)) {
            snprintf(out, size, "%s", PI_NATIVE_IMPORTS);
            return;
        }
    for (size_t i = site->python_count; i < site->count; i++) {
        const struct pi_site_frame *f = &site->frames[i];
        if (!f->symbol)
            continue;
        plain_name(f->symbol, plain, sizeof(plain));
        if (aten_entry(plain, out, size))
            return;
        if (!own && !runtime_module(f->module))
            own = f;
        if (!any)
            any = f;
    }
    /* no operator's entry among the frames: a pool thread, or a walk cut short */
    for (size_t i = site->python_count; i < site->count; i++)
        if (site->frames[i].symbol && aten_kernel(site->frames[i].symbol, out, size))
            return;
    const struct pi_site_frame *f = own ? own : any;
    if (f && (blas_kernel(f, out, size) || interpreter_frame(f, out, size) ||
              pool_waiting(f, !own, out, size)))
        return;
    if (f) {
        plain_name(f->symbol, out, size);
        return;
    }
    const char *module = site->count > site->python_count
                             ? site->frames[site->python_count].module : NULL;
    snprintf(out, size, "unnamed code in %s", pi_call_site_base_name(module));
}

static struct pi_native_operator *operator_of(struct pi_native_time *t, uint32_t tid,
                                              const char *name)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->operators[i].tid == tid && strcmp(t->operators[i].name, name) == 0)
            return &t->operators[i];
    if (pi_array_room(&t->operators, &t->capacity, t->count, sizeof(*t->operators), 32) != 0)
        return NULL;
    struct pi_native_operator *o = &t->operators[t->count];
    memset(o, 0, sizeof(*o));
    if (!(o->name = strdup(name)))
        return NULL;
    o->tid = tid;
    t->count++;
    return o;
}

static int by_time(const void *a, const void *b)
{
    const struct pi_native_operator *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void pi_native_time_finish_file(struct pi_process_info *p, const struct pi_reader *reader,
                                uint64_t steady_start_ns, uint64_t steady_end_ns)
{
    struct pi_native_time *t = p->native_time;
    struct pi_u64_map *pending = t ? t->pending : NULL;
    if (!pending)
        return;
    struct pi_u64_map *steady = steady_time(t, steady_start_ns, steady_end_ns);
    t->steady_known = steady != NULL;
    for (size_t i = 0; i < pending->capacity; i++) {
        const struct pi_u64_entry *e = &pending->slots[i];
        if (!e->key)
            continue;
        struct pi_call_site *site = pi_call_site_read(reader, e->key & 0xffffffffu);
        struct pi_native_operator *o = NULL;
        if (site) {
            char name[512];
            pi_native_operator_of(site, name, sizeof(name));
            o = operator_of(t, (uint32_t)(e->key >> 32), name);
        }
        if (o) {
            const struct pi_u64_entry *in_steps = steady ? pi_u64_map_get(steady, e->key) : NULL;
            o->ns += e->value[0];
            o->samples += e->value[1];
            o->steady_ns += in_steps ? in_steps->value[0] : 0;
        } else {
            t->unnamed_ns += e->value[0];
        }
        pi_call_site_free(site);
    }
    pi_u64_map_free(pending);
    pi_u64_map_free(steady);
    t->pending = NULL;
    free(t->moments);
    t->moments = NULL;
    t->moment_count = t->moment_capacity = 0;
    if (t->count > 1)
        qsort(t->operators, t->count, sizeof(*t->operators), by_time);
}

void pi_native_time_free(struct pi_process_info *p)
{
    struct pi_native_time *t = p->native_time;
    if (!t)
        return;
    for (size_t i = 0; i < t->count; i++)
        free(t->operators[i].name);
    free(t->operators);
    pi_u64_map_free(t->pending);
    free(t->moments);
    free(t);
    p->native_time = NULL;
}

static int by_operator_time(const void *a, const void *b)
{
    const struct pi_native_operator *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : strcmp(x->name, y->name);
}

size_t pi_native_time_by_operator(const struct pi_native_time *t,
                                  int (*keep)(const struct pi_native_operator *row,
                                              const void *context),
                                  const void *context, int steady,
                                  struct pi_native_operator **sums, uint64_t *total_ns)
{
    *sums = NULL;
    *total_ns = 0;
    if (!t || !t->count || !(*sums = calloc(t->count, sizeof(**sums))))
        return 0;
    size_t count = 0;
    for (size_t i = 0; i < t->count; i++) {
        const struct pi_native_operator *o = &t->operators[i];
        uint64_t ns = steady ? o->steady_ns : o->ns;
        if ((keep && !keep(o, context)) || (steady && !ns))
            continue;
        *total_ns += ns;
        size_t k = 0;
        while (k < count && strcmp((*sums)[k].name, o->name) != 0)
            k++;
        if (k == count)
            (*sums)[count++].name = o->name;
        (*sums)[k].ns += ns;
        (*sums)[k].samples += o->samples;
        (*sums)[k].tid++;
    }
    if (count > 1)
        qsort(*sums, count, sizeof(**sums), by_operator_time);
    return count;
}
