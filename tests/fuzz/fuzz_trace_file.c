/*
 * fuzz_trace_file - libFuzzer target: any bytes as a trace file, through
 * the reader and every report (text, JSON, HTML, Chrome trace). Bad input
 * must give an error, never a crash, a hang or a leak.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("trace", 0);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) == (ssize_t)size)
        pi_fuzz_analyse_fd(fd);
    close(fd);
    return 0;
}
