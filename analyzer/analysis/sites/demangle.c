/* demangle.c - the C++ runtime's demangler, from C (see demangle.h). */
#include "demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);

const char *pi_demangle(const char *name, char *out, size_t size)
{
    int status = -1;
    char *readable = name && name[0] == '_' && name[1] == 'Z'
                         ? __cxa_demangle(name, NULL, NULL, &status)
                         : NULL;
    snprintf(out, size, "%s", status == 0 && readable ? readable : (name ? name : "?"));
    free(readable);
    return out;
}
