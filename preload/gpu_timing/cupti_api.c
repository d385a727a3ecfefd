/*
 * cupti_api.c - libcupti, found at run time (see cupti_api.h).
 */
#include "cupti_api.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/guard.h"
#include "core/loaded_symbols.h"
#include "core/real_functions.h"

struct pi_cupti_api pi_cupti;
static void *library;
static const char *_Atomic other_client;

struct found_path {
    const char *needle;
    char path[4096];
};

/* The path of a loaded object whose name contains @needle. */
static int match_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct found_path *f = data;
    if (!info->dlpi_name || !strstr(info->dlpi_name, f->needle))
        return 0;
    snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
    return 1;
}

static int loaded_path(const char *needle, char *path, size_t size)
{
    struct found_path f = {needle, ""};
    if (!dl_iterate_phdr(match_object, &f))
        return 0;
    snprintf(path, size, "%s", f.path);
    return 1;
}

/* Where libcupti may be: the process's own copy, the loader's path, and
 * beside the CUDA runtime the process loaded (the toolkit's lib directory
 * and PyTorch's nvidia/cu13/lib hold both). */
static void *open_library(void)
{
    char path[4096];
    if (loaded_path("/libcupti.so", path, sizeof(path))) {
        void *handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        if (handle)
            return handle;
    }
    static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (handle)
            return handle;
    }
    char runtime[4096];
    if (loaded_path("/libcudart.so", runtime, sizeof(runtime)) && strrchr(runtime, '/')) {
        snprintf(strrchr(runtime, '/'), sizeof(runtime) - (size_t)(strrchr(runtime, '/') - runtime),
                 "/libcupti.so.13");
        return dlopen(runtime, RTLD_NOW | RTLD_LOCAL);
    }
    return NULL;
}

int pi_cupti_load(char *reason, size_t size)
{
    int guard = pi_guard_enter();
    if (!library)
        library = open_library();
    pi_guard_restore(guard);
    if (!library) {
        snprintf(reason, size, "libcupti not found");
        return -1;
    }
#define LOOK(field, name) pi_cupti.field = (__typeof__(pi_cupti.field))pi_dlsym(library, name)
    LOOK(enable, "cuptiActivityEnable");
    LOOK(disable, "cuptiActivityDisable");
    LOOK(register_callbacks, "cuptiActivityRegisterCallbacks");
    LOOK(flush_all, "cuptiActivityFlushAll");
    LOOK(next_record, "cuptiActivityGetNextRecord");
    LOOK(dropped, "cuptiActivityGetNumDroppedRecords");
    LOOK(timestamp, "cuptiGetTimestamp");
    LOOK(describe, "cuptiGetResultString");
    LOOK(subscribe, "cuptiSubscribe");
    LOOK(subscribe_v2, "cuptiSubscribe_v2");
    LOOK(unsubscribe, "cuptiUnsubscribe");
    LOOK(timestamp_callback, "cuptiActivityRegisterTimestampCallback");
    LOOK(runtime_api, "cuptiActivityEnableRuntimeApi");
    LOOK(driver_api, "cuptiActivityEnableDriverApi");
    LOOK(thread_id_type, "cuptiSetThreadIdType");
    LOOK(get_thread_id_type, "cuptiGetThreadIdType");
#undef LOOK
    if (!pi_cupti.enable || !pi_cupti.disable || !pi_cupti.register_callbacks ||
        !pi_cupti.flush_all || !pi_cupti.next_record || !pi_cupti.dropped || !pi_cupti.timestamp) {
        snprintf(reason, size, "libcupti lacks part of the activity API");
        return -1;
    }
    return 0;
}

void pi_cupti_locate(const char *runtime_path, char *out, size_t size)
{
    char path[4096], resolved[PATH_MAX];
    if (loaded_path("/libcupti.so", path, sizeof(path))) {
        snprintf(out, size, "%s (loaded)", realpath(path, resolved) ? resolved : path);
        return;
    }
    const char *slash = strrchr(runtime_path, '/');
    if (slash) {
        snprintf(path, sizeof(path), "%.*s/libcupti.so.13", (int)(slash - runtime_path),
                 runtime_path);
        if (access(path, F_OK) == 0) {
            snprintf(out, size, "%s (beside the runtime, not loaded)", path);
            return;
        }
    }
    snprintf(out, size, "not loaded, not beside the runtime");
}

const char *pi_cupti_error_text(CUptiResult code, char *buf, size_t size)
{
    const char *text = NULL;
    if (pi_cupti.describe)
        pi_cupti.describe(code, &text);
    snprintf(buf, size, "error %d (%s)", (int)code, text ? text : "?");
    return buf;
}

void *pi_cupti_real(const char *name)
{
    void *found = library ? pi_dlsym(library, name) : NULL;
    return found ? found : pi_loaded_symbol(name);
}

void pi_cupti_note_client(const char *what)
{
    const char *expected = NULL;
    atomic_compare_exchange_strong(&other_client, &expected, what);
}

const char *pi_cupti_other_client(void)
{
    return atomic_load(&other_client);
}
