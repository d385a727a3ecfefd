/*
 * prog_nvtx: NVTX ranges, as a training script annotates its loop:
 * "epoch" around 3 x "step" (each 10 ms, with a "forward" of 4 ms inside),
 * a mark "checkpoint", and a start/end range "io" of 5 ms.
 * prog_nvtx steps: 6 top-level "train_step" ranges of 10 ms instead.
 */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <time.h>

static void sleep_ms(int ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        for (int i = 0; i < 6; i++) {
            nvtxRangePushA("train_step");
            sleep_ms(10);
            nvtxRangePop();
        }
        printf("ok\n");
        return 0;
    }
    nvtxRangePushA("epoch");
    for (int i = 0; i < 3; i++) {
        nvtxRangePushA("step");
        nvtxRangePushA("forward");
        sleep_ms(4);
        nvtxRangePop();
        sleep_ms(6);
        nvtxRangePop();
    }
    nvtxMarkA("checkpoint");
    nvtxRangeId_t io = nvtxRangeStartA("io");
    sleep_ms(5);
    nvtxRangeEnd(io);
    nvtxRangePop();
    printf("ok\n");
    return 0;
}
