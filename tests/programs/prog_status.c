/* prog_status STATUS MARKS: record MARKS marks with varied values, print "ok", exit STATUS. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "profinject/profinject.h"

int main(int argc, char **argv)
{
    int status = argc > 1 ? atoi(argv[1]) : 0;
    uint64_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < count; i++) {
        x ^= x << 13; /* varied values: a poorly compressible stream */
        x ^= x >> 7;
        x ^= x << 17;
        PROFINJECT_MARK(NULL, x);
    }
    printf("ok\n");
    return status;
}
