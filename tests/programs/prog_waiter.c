/*
 * prog_waiter: prints "started", then waits for SECONDS (argv[1]) and prints
 * "done". Built three ways for the attach errors: with glibc (where
 * "no-memfd" as argv[2] first installs a seccomp filter that refuses
 * memfd_create, as a container runtime's profile may), statically, and with
 * musl when musl-gcc is present.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static int refuse_memfd_create(void)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_create, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {sizeof(filter) / sizeof(filter[0]), filter};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
           prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0;
}
#endif

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3;
#ifdef __GLIBC__
    if (argc > 2 && strcmp(argv[2], "no-memfd") == 0 && refuse_memfd_create() != 0) {
        perror("seccomp");
        return 2;
    }
#endif
    printf("started\n");
    fflush(stdout);
    struct timespec pause = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    while (nanosleep(&pause, &pause) != 0)
        ;
    printf("done\n");
    return 0;
}
