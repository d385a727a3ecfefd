/*
 * replay_main.c - a fuzz target without libFuzzer: runs its
 * LLVMFuzzerTestOneInput on each file named on the command line, so that
 * tools/test replays every input the fuzzers once crashed on, with any
 * compiler and under the sanitizers of the build. Prints one line per file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 2;
        }
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        rewind(f);
        uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
        if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
            fprintf(stderr, "%s: cannot read\n", argv[i]);
            return 2;
        }
        fclose(f);
        LLVMFuzzerTestOneInput(data, (size_t)size);
        free(data);
        printf("replayed %s\n", argv[i]);
    }
    return 0;
}
