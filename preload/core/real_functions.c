/* real_functions.c - resolution of the real functions behind the hooks. */
#include "real_functions.h"

#include <dlfcn.h>

#include "diagnostics.h"

void *(*pi_real_dlsym)(void *, const char *);

void pi_real_dlsym_resolve(void)
{
    /* dlsym moved into libc with version GLIBC_2.34; older systems have 2.2.5 */
    void *fn = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!fn)
        fn = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    pi_real_dlsym = (void *(*)(void *, const char *))fn;
}

/* Not inlined into callers in other objects: glibc reads RTLD_NEXT's
 * meaning from the return address, which stays inside this library. */
void *pi_dlsym(void *handle, const char *name)
{
    if (__builtin_expect(!pi_real_dlsym, 0))
        pi_real_dlsym_resolve();
    return pi_real_dlsym ? pi_real_dlsym(handle, name) : NULL;
}

#define PI_DEFINE_REAL(name, ret, params, required, version) ret(*pi_real_##name) params;
PI_REAL_FUNCTIONS(PI_DEFINE_REAL)
#undef PI_DEFINE_REAL

struct real_entry {
    const char *name;
    void **slot;
    int required;
    const char *version;
};

#define PI_ENTRY(name, ret, params, required, version)                                            \
    {#name, (void **)&pi_real_##name, required, version},
static const struct real_entry real_table[] = {PI_REAL_FUNCTIONS(PI_ENTRY)};
#undef PI_ENTRY

int pi_real_resolve(void)
{
    int missing = 0;
    for (size_t i = 0; i < sizeof(real_table) / sizeof(real_table[0]); i++) {
        if (*real_table[i].slot)
            continue;
        const struct real_entry *e = &real_table[i];
        /* a versioned lookup falls back to the default where that version is absent */
        *e->slot = e->version ? dlvsym(RTLD_NEXT, e->name, e->version) : NULL;
        if (!*e->slot)
            *e->slot = pi_dlsym(RTLD_NEXT, e->name);
        if (!*real_table[i].slot && real_table[i].required) {
            pi_diag("cannot find the real %s; calls to it will fail", real_table[i].name);
            missing++;
        }
    }
    return missing ? -1 : 0;
}

void *pi_real_lookup(const char *name, void **slot)
{
    for (size_t i = 0; i < sizeof(real_table) / sizeof(real_table[0]); i++) {
        const struct real_entry *e = &real_table[i];
        if (e->slot != slot)
            continue;
        void *fn = e->version ? dlvsym(RTLD_NEXT, name, e->version) : NULL;
        if (!fn)
            fn = pi_dlsym(RTLD_NEXT, name);
        *slot = fn;
        return fn;
    }
    return NULL;
}
