/*
 * fuzz_elf_symbols - libFuzzer target: any bytes as the C library file of a
 * process attach enters. The file is the container's: whoever controls the
 * container controls it, and the launcher reading it runs as root.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the launcher maps the file: page aligned, as malloc's 16 bytes are enough for */
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    struct pi_elf_file elf;
    if (pi_elf_open(copy, size, &elf) == 0) {
        (void)pi_elf_symbol(&elf, "dlopen");
        (void)pi_elf_symbol(&elf, "setenv");
        (void)pi_elf_glibc_minor(&elf);
    }
    free(copy);
    return 0;
}
