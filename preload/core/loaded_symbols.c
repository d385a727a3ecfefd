/* loaded_symbols.c - functions of the loaded libraries (see loaded_symbols.h). */
#include "loaded_symbols.h"

#include <dlfcn.h>
#include <link.h>

#include "guard.h"
#include "real_functions.h"

int pi_in_self(const void *address)
{
    Dl_info self, other;
    return dladdr((const void *)pi_in_self, &self) && dladdr(address, &other) &&
           self.dli_fbase == other.dli_fbase;
}

struct symbol_search {
    const char *name;
    void *found;
};

static int search_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct symbol_search *search = data;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0;
    void *handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
        return 0;
    void *found = pi_dlsym(handle, search->name);
    dlclose(handle);
    if (found && !pi_in_self(found)) {
        search->found = found;
        return 1;
    }
    return 0;
}

void *pi_loaded_symbol(const char *name)
{
    int guard = pi_guard_enter();
    void *found = pi_dlsym(RTLD_NEXT, name);
    if (!found || pi_in_self(found)) {
        struct symbol_search search = {name, NULL};
        dl_iterate_phdr(search_object, &search);
        found = search.found;
    }
    pi_guard_restore(guard);
    return found;
}
