/*
 * prog_vector_spin SECONDS: computes for SECONDS with a known pattern held
 * in all sixteen SSE registers, checking them on every turn of a loop that
 * calls nothing, then prints "intact" or "corrupted". Started without the
 * profiler, for the attach test: a thread stopped in the middle of this
 * loop must get its vector registers back exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const unsigned char pattern[16] __attribute__((aligned(16))) = {
    0x13, 0x37, 0xc0, 0xde, 0x5a, 0xa5, 0x01, 0xfe, 0x42, 0x24, 0x99, 0x66, 0x0f, 0xf0, 0x7e, 0xe7};

#define LOAD(n) "movdqa %[p], %%xmm" #n "\n\t"
#define CHECK(n) "movdqa %[p], %%xmm0\n\tpcmpeqb %%xmm" #n ", %%xmm0\n\tpand %%xmm0, %%xmm1\n\t"

/* Return nonzero when a register lost the pattern during @turns turns. */
static int spin(unsigned long turns)
{
    int bad;
    __asm__ volatile(
        LOAD(2) LOAD(3) LOAD(4) LOAD(5) LOAD(6) LOAD(7) LOAD(8) LOAD(9) LOAD(10) LOAD(11)
        LOAD(12) LOAD(13) LOAD(14) LOAD(15)
        "xor %[bad], %[bad]\n\t"
        "1:\n\t"
        "pcmpeqb %%xmm1, %%xmm1\n\t" /* all ones, then and-ed with each comparison */
        CHECK(2) CHECK(3) CHECK(4) CHECK(5) CHECK(6) CHECK(7) CHECK(8) CHECK(9) CHECK(10)
        CHECK(11) CHECK(12) CHECK(13) CHECK(14) CHECK(15)
        "pmovmskb %%xmm1, %%eax\n\t"
        "cmp $0xffff, %%eax\n\t"
        "jne 2f\n\t"
        "dec %[n]\n\t"
        "jnz 1b\n\t"
        "jmp 3f\n\t"
        "2:\n\t"
        "mov $1, %[bad]\n\t"
        "3:\n\t"
        : [bad] "=&r"(bad), [n] "+r"(turns)
        : [p] "m"(pattern)
        : "rax", "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
          "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
    return bad;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3;
    printf("started\n");
    fflush(stdout);
    int bad = 0;
    for (double start = now(); !bad && now() - start < seconds;)
        bad = spin(10000000);
    printf("%s\n", bad ? "corrupted" : "intact");
    return 0;
}
