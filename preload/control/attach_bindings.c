/*
 * attach_bindings.c - GOT redirection for a library loaded by attach (see
 * attach_bindings.h). For each loaded module: walk its PLT (JUMP_SLOT)
 * and GLOB_DAT relocations, and where the symbol is one this library
 * defines, write our definition into the slot, remembering the old value.
 * RELRO pages are made writable for the write and read-only again.
 *
 * Only the control thread and the constructor call these, one at a time.
 */
#include "attach_bindings.h"
#include "core/real_functions.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/diagnostics.h"
#include "core/guard.h"
#include "core/settings.h"

struct saved_slot {
    void **slot;
    void *old;
    int in_relro;
};

static struct saved_slot *saved;
static size_t saved_count, saved_capacity;
static int bound, unbound;
static unsigned long long loads_seen; /* dl_iterate_phdr's dlpi_adds at the last pass */

int pi_attach_requested(void)
{
    return pi_setting_flag("PROFINJECT_ATTACHED");
}

int pi_attach_bound(void)
{
    return bound && !unbound;
}

/* Write @value into @slot; a slot in RELRO (read-only after relocation)
 * is made writable for the write and read-only again after it. */
static int write_slot(void **slot, void *value, int in_relro)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)slot & ~(uintptr_t)(page - 1);
    if (in_relro && mprotect((void *)start, (size_t)page, PROT_READ | PROT_WRITE) != 0)
        return -1;
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    if (in_relro)
        mprotect((void *)start, (size_t)page, PROT_READ);
    return 0;
}

/* Remember @slot's value for unbinding, then write @value. Return: 1 when
 * written, 0 when the write failed, -1 when there is no room to remember. */
static int save_and_write(void **slot, void *value, int in_relro)
{
    if (saved_count == saved_capacity) {
        size_t capacity = saved_capacity ? saved_capacity * 2 : 256;
        struct saved_slot *grown = realloc(saved, capacity * sizeof(*saved));
        if (!grown)
            return -1;
        saved = grown, saved_capacity = capacity;
    }
    void *old = *slot;
    if (write_slot(slot, value, in_relro) != 0)
        return 0;
    saved[saved_count++] = (struct saved_slot){slot, old, in_relro};
    return 1;
}

static void *self_base; /* where this library is loaded */

/* Our definition of @name, or NULL when we do not hook it (dlsym on our
 * handle also searches our dependencies, libc among them). */
static void *our_definition(void *self, const char *name)
{
    Dl_info where;
    void *ours = pi_dlsym(self, name);
    return ours && dladdr(ours, &where) && where.dli_fbase == self_base ? ours : NULL;
}

struct module_tables {
    const ElfW(Sym) *symbols;
    const char *strings;
    const ElfW(Rela) *plt, *rela;
    size_t plt_bytes, rela_bytes;
    uintptr_t relro_begin, relro_end;
};

static void read_dynamic(const struct dl_phdr_info *info, struct module_tables *t)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
            t->relro_begin = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            t->relro_end = t->relro_begin + info->dlpi_phdr[i].p_memsz;
        }
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        for (const ElfW(Dyn) *d = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
             d->d_tag != DT_NULL; d++) {
            /* glibc has already relocated these to addresses */
            switch (d->d_tag) {
            case DT_SYMTAB: t->symbols = (const void *)d->d_un.d_ptr; break;
            case DT_STRTAB: t->strings = (const void *)d->d_un.d_ptr; break;
            case DT_JMPREL: t->plt = (const void *)d->d_un.d_ptr; break;
            case DT_PLTRELSZ: t->plt_bytes = d->d_un.d_val; break;
            case DT_RELA: t->rela = (const void *)d->d_un.d_ptr; break;
            case DT_RELASZ: t->rela_bytes = d->d_un.d_val; break;
            }
        }
    }
}

static int redirect(void *self, uintptr_t base, const struct module_tables *t,
                    const ElfW(Rela) *relocations, size_t bytes)
{
    int changed = 0;
    for (size_t i = 0; relocations && i < bytes / sizeof(ElfW(Rela)); i++) {
        const ElfW(Rela) *r = &relocations[i];
        unsigned type = ELF64_R_TYPE(r->r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
            continue;
        const ElfW(Sym) *symbol = &t->symbols[ELF64_R_SYM(r->r_info)];
        const char *name = t->strings + symbol->st_name;
        if (!symbol->st_name || ELF64_ST_TYPE(symbol->st_info) != STT_FUNC ||
            symbol->st_shndx != SHN_UNDEF)
            continue;
        void **slot = (void **)(base + r->r_offset);
        void *ours = our_definition(self, name);
        /* a slot pointing at us is done; one changed since is saved again,
         * and unbinding in reverse order still ends with the first value */
        if (!ours || *slot == ours)
            continue;
        int in_relro = (uintptr_t)slot >= t->relro_begin && (uintptr_t)slot < t->relro_end;
        int done = save_and_write(slot, ours, in_relro);
        if (done < 0)
            return changed;
        changed += done;
    }
    return changed;
}

struct pass {
    void *self;
    int changed;
    unsigned long long adds;
};

/* Where this library is loaded, into self_base; 0 when it cannot be told. */
static int locate_self(Dl_info *self_info)
{
    if (!dladdr((void *)locate_self, self_info))
        return 0;
    self_base = self_info->dli_fbase;
    return 1;
}

/* Modules no pass touches: this library, the vDSO and the loader. */
static int left_alone(const struct dl_phdr_info *info)
{
    return (void *)info->dlpi_addr == self_base || !info->dlpi_phnum ||
           (info->dlpi_name && (strstr(info->dlpi_name, "linux-vdso") ||
                                strstr(info->dlpi_name, "/ld-linux")));
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct pass *pass = data;
    pass->adds = info->dlpi_adds;
    if (left_alone(info))
        return 0;
    struct module_tables t;
    read_dynamic(info, &t);
    if (!t.symbols || !t.strings)
        return 0;
    pass->changed += redirect(pass->self, info->dlpi_addr, &t, t.plt, t.plt_bytes);
    pass->changed += redirect(pass->self, info->dlpi_addr, &t, t.rela, t.rela_bytes);
    return 0;
}

int pi_attach_bind(void)
{
    if (unbound)
        return 0;
    struct pass pass = {NULL, 0, 0};
    Dl_info self_info;
    if (!locate_self(&self_info) ||
        !(pass.self = dlopen(self_info.dli_fname, RTLD_NOW | RTLD_NOLOAD)))
        return 0;
    int guard = pi_guard_enter(); /* our own calls are not the application's */
    dl_iterate_phdr(visit, &pass);
    pi_guard_restore(guard);
    loads_seen = pass.adds;
    dlclose(pass.self);
    if (!bound && pass.changed)
        pi_diag("attached: %d call sites of the running process redirected", pass.changed);
    bound = 1;
    return pass.changed;
}

/* ---- pointers kept in data: driver tables filled before attach ---- */

struct value_pass {
    const struct pi_value_redirect *redirects;
    size_t count;
    uintptr_t lowest, highest; /* every @from lies in between: one compare rejects most words */
    const void *owner_base;
    int changed;
    size_t bytes_searched;
};

static void *replacement(const struct value_pass *pass, uintptr_t word)
{
    if (word < pass->lowest || word > pass->highest)
        return NULL;
    for (size_t i = 0; i < pass->count; i++)
        if ((uintptr_t)pass->redirects[i].from == word)
            return pass->redirects[i].to;
    return NULL;
}

static void redirect_range(struct value_pass *pass, uintptr_t begin, uintptr_t end,
                           const struct module_tables *t)
{
    begin = (begin + sizeof(void *) - 1) & ~(uintptr_t)(sizeof(void *) - 1);
    pass->bytes_searched += end > begin ? end - begin : 0;
    for (uintptr_t at = begin; at + sizeof(void *) <= end; at += sizeof(void *)) {
        if (at >= t->relro_begin && at < t->relro_end)
            continue; /* read-only since relocation: GOT and constants, the bind pass's */
        void **slot = (void **)at;
        void *to = replacement(pass, (uintptr_t)__atomic_load_n(slot, __ATOMIC_RELAXED));
        if (to && save_and_write(slot, to, 0) > 0)
            pass->changed++;
    }
}

static int visit_data(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct value_pass *pass = data;
    /* CUPTI's calls are ours, not the program's */
    if (left_alone(info) || (void *)info->dlpi_addr == pass->owner_base ||
        (info->dlpi_name && strstr(info->dlpi_name, "libcupti")))
        return 0;
    struct module_tables t;
    read_dynamic(info, &t);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_W))
            continue;
        uintptr_t begin = info->dlpi_addr + segment->p_vaddr;
        redirect_range(pass, begin, begin + segment->p_memsz, &t);
    }
    return 0;
}

int pi_attach_redirect_values(const struct pi_value_redirect *redirects, size_t count,
                              const void *owner_base, size_t *bytes_searched)
{
    if (unbound || !count)
        return 0;
    Dl_info self_info;
    if (!locate_self(&self_info))
        return 0;
    struct value_pass pass = {redirects, count, UINTPTR_MAX, 0, owner_base, 0, 0};
    for (size_t i = 0; i < count; i++) {
        uintptr_t from = (uintptr_t)redirects[i].from;
        pass.lowest = from < pass.lowest ? from : pass.lowest;
        pass.highest = from > pass.highest ? from : pass.highest;
    }
    int guard = pi_guard_enter();
    dl_iterate_phdr(visit_data, &pass);
    pi_guard_restore(guard);
    if (bytes_searched)
        *bytes_searched = pass.bytes_searched;
    return pass.changed;
}

static int count_loads(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_adds;
    return 1;
}

int pi_attach_modules_changed(void)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(count_loads, &adds);
    return adds != loads_seen;
}

void pi_attach_unbind(void)
{
    for (size_t i = saved_count; i-- > 0;)
        write_slot(saved[i].slot, saved[i].old, saved[i].in_relro);
    saved_count = 0;
    unbound = 1;
}
