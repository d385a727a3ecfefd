/* prog_run_child PATH STATUS: posix_spawn()s PATH and exits 0 when it ended with STATUS. */
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv)
{
    if (argc != 3)
        return 64;
    char *child_argv[] = {argv[1], NULL};
    pid_t pid;
    int status;
    if (posix_spawn(&pid, argv[1], NULL, NULL, child_argv, environ) != 0 ||
        waitpid(pid, &status, 0) != pid)
        return 1;
    return WIFEXITED(status) && WEXITSTATUS(status) == atoi(argv[2]) ? 0 : 2;
}
