/* python_capi.c - see python_capi.h. */
#include "python_capi.h"

#include <pthread.h>
#include <stddef.h>

#include "core/real_functions.h"

static struct pi_python_capi api;
static const struct pi_python *looked_in;
static int usable;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Each of @count functions named in @names into the table at @offsets: 1 when all are found. */
static int look_up(const char *const *names, const size_t *offsets, size_t count)
{
    int all = 1;
    for (size_t i = 0; i < count; i++) {
        void *found = pi_dlsym(looked_in->handle, names[i]);
        *(void **)((char *)&api + offsets[i]) = found;
        all &= found != NULL;
    }
    return all;
}

static void look_up_all(void)
{
#define AT(field) offsetof(struct pi_python_capi, field)
    static const char *const object_names[] = {
        "PyImport_GetModuleDict", "PyDict_GetItemString", "PyDict_GetItem", "PyDict_Next",
        "PyObject_GetAttrString", "PyLong_AsUnsignedLong", "PyUnicode_AsUTF8", "PyErr_Clear",
        "Py_DecRef"};
    static const size_t object_fields[] = {AT(modules),  AT(dict_item),        AT(dict_get),
                                           AT(dict_next), AT(get_attr),        AT(as_unsigned_long),
                                           AT(as_utf8),   AT(err_clear),       AT(dec_ref)};
    static const char *const frame_names[] = {
        "PyGILState_Ensure", "PyGILState_Release", "_PyThread_CurrentFrames", "PyFrame_GetBack",
        "PyFrame_GetCode",   "PyFrame_GetLineNumber"};
    static const size_t frame_fields[] = {AT(gil_ensure), AT(gil_release), AT(current_frames),
                                          AT(frame_back), AT(frame_code),  AT(frame_line)};
#undef AT
    usable = look_up(object_names, object_fields, sizeof(object_fields) / sizeof(size_t));
    api.has_frames = look_up(frame_names, frame_fields, sizeof(frame_fields) / sizeof(size_t));
}

const struct pi_python_capi *pi_python_capi(const struct pi_python *py)
{
    if (!py)
        return NULL;
    looked_in = py; /* one interpreter a process: every caller passes the same */
    pthread_once(&once, look_up_all);
    return usable ? &api : NULL;
}
