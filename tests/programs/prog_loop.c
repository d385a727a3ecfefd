/* prog_loop: records marks valued 0, 1, 2, ... until killed, pausing now and then. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "profinject/profinject.h"

int main(void)
{
    printf("started\n");
    fflush(stdout);
    for (uint64_t i = 0;; i++) {
        PROFINJECT_MARK(NULL, i);
        if (i % 1000 == 999)
            usleep(1000);
    }
}
