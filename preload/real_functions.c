/* real_functions.c - resolution of the real functions behind the hooks. */
#include "real_functions.h"

#include <dlfcn.h>

#include "diagnostics.h"

#define PI_DEFINE_REAL(name, ret, params, required) ret(*pi_real_##name) params;
PI_REAL_FUNCTIONS(PI_DEFINE_REAL)
#undef PI_DEFINE_REAL

struct real_entry {
    const char *name;
    void **slot;
    int required;
};

#define PI_ENTRY(name, ret, params, required) {#name, (void **)&pi_real_##name, required},
static const struct real_entry real_table[] = {PI_REAL_FUNCTIONS(PI_ENTRY)};
#undef PI_ENTRY

int pi_real_resolve(void)
{
    int missing = 0;
    for (size_t i = 0; i < sizeof(real_table) / sizeof(real_table[0]); i++) {
        if (*real_table[i].slot)
            continue;
        *real_table[i].slot = dlsym(RTLD_NEXT, real_table[i].name);
        if (!*real_table[i].slot && real_table[i].required) {
            pi_diag("cannot find the real %s; calls to it will fail", real_table[i].name);
            missing++;
        }
    }
    return missing ? -1 : 0;
}
