/*
 * prog_cuda_phases MODE: 10 kernels of 1 ms ("_Z5phasev") on the default
 * stream, then, by MODE:
 *
 *   exit        synchronise and return from main at once
 *   exec        synchronise and exec /bin/true (argv[2] when given)
 *   unfinished  one more kernel of 300 ms, then exit without waiting for it
 *   wait        synchronise, print "launched", and wait for a line on stdin
 *   window      print "ready"; at each line: "go" launches the 10 kernels and
 *               synchronises, "end" ends; "done" answers each go
 *
 * The GPU times must reach the trace however the program goes on.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);
void phase_stub(void) __asm__("_Z5phasev");
void phase_stub(void) {}

static int launch(uint64_t ns)
{
    void *args[] = {&ns};
    dim3 one = {1, 1, 1};
    return cudaLaunchKernel((const void *)phase_stub, one, one, args, 0, 0) != cudaSuccess;
}

static int ten(void)
{
    int failures = 0;
    for (int i = 0; i < 10; i++)
        failures += launch(1000000);
    return failures + (cudaDeviceSynchronize() != cudaSuccess);
}

int main(int argc, char **argv)
{
    void **module = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(module, (const char *)phase_stub, "_Z5phasev", "_Z5phasev", -1, NULL,
                           NULL, NULL, NULL, NULL);
    const char *mode = argc > 1 ? argv[1] : "exit";
    char line[64];
    if (cudaDeviceSynchronize() != cudaSuccess) /* the runtime and driver are up */
        return 1;
    if (strcmp(mode, "window") == 0) {
        printf("ready\n");
        fflush(stdout);
        while (fgets(line, sizeof(line), stdin) && strncmp(line, "go", 2) == 0) {
            if (ten())
                return 1;
            printf("done\n");
            fflush(stdout);
        }
        return 0;
    }
    if (ten())
        return 1;
    if (strcmp(mode, "exec") == 0) {
        const char *program = argc > 2 ? argv[2] : "/bin/true";
        execl(program, program, (char *)NULL);
        return 2;
    }
    if (strcmp(mode, "unfinished") == 0)
        return launch(300000000);
    if (strcmp(mode, "wait") == 0) {
        printf("launched\n");
        fflush(stdout);
        return fgets(line, sizeof(line), stdin) ? 0 : 3;
    }
    return 0;
}
