/* demangle.h - readable C++ names for kernels ("_Z5scalePfi" -> "scale(float*, int)"). */
#ifndef PI_DEMANGLE_H
#define PI_DEMANGLE_H

#include <stddef.h>

/* pi_demangle - @name demangled into @out, or copied as it is when it is not mangled */
const char *pi_demangle(const char *name, char *out, size_t size);

#endif
