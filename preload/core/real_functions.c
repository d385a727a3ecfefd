/* real_functions.c - resolution of the real functions behind the hooks. */
#include "real_functions.h"

#include <dlfcn.h>

#include "diagnostics.h"

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
            *e->slot = dlsym(RTLD_NEXT, e->name);
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
            fn = dlsym(RTLD_NEXT, name);
        *slot = fn;
        return fn;
    }
    return NULL;
}
