/*
 * prog_fork_names NAMES [at-once]: the parent records one mark under each
 * of NAMES distinct names ("name-00000" ...), then forks a child that
 * records one mark under every tenth of those names, valued with the
 * name's number, and leaves with _exit(0). The names were all made before
 * the fork: the parent's file defines them, the child's refers to it. With
 * "at-once" the fork comes before the parent's writer has written anything
 * (its file is not made yet); else 300 ms later.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profinject/profinject.h"

int main(int argc, char **argv)
{
    int names = argc > 1 ? atoi(argv[1]) : 3000;
    char name[64];
    for (int i = 0; i < names; i++) {
        snprintf(name, sizeof(name), "name-%05d-long-enough-to-fill-definition-frames", i);
        PROFINJECT_MARK(name, (uint64_t)i);
    }
    if (argc < 3 || strcmp(argv[2], "at-once") != 0)
        usleep(300000); /* the parent's writer has written them */
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < names; i += 10) {
            snprintf(name, sizeof(name), "name-%05d-long-enough-to-fill-definition-frames", i);
            PROFINJECT_MARK(name, (uint64_t)i);
        }
        _exit(0);
    }
    int status;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                   WEXITSTATUS(status) == 0
               ? 0
               : 1;
}
