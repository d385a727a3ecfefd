/*
 * prog_exec: records 10 marks, forks; the child records 20 marks and execs
 * itself as "prog_exec after", which records 30 marks and exits 5.
 * The parent exits with the child's status.
 */
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profinject/profinject.h"

static void marks(const char *name, int count)
{
    for (int i = 0; i < count; i++)
        PROFINJECT_MARK(name, (uint64_t)i);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "after") == 0) {
        marks("after-exec", 30);
        return 5;
    }
    marks("parent", 10);
    pid_t pid = fork();
    if (pid == 0) {
        marks("child-before-exec", 20);
        execl("/proc/self/exe", argv[0], "after", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}
