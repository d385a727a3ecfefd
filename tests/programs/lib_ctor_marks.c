/* A library whose constructor records marks: it may run before the profiler's own constructor. */
#include <stdint.h>

#include "profinject/profinject.h"

__attribute__((constructor)) static void record_early(void)
{
    for (uint64_t i = 0; i < 25; i++)
        PROFINJECT_MARK("ctor", i);
}

int ctor_marks_linked(void)
{
    return 1;
}
