/* prog_spawn: posix_spawn()s prog_status (exit 4) and system()s "true"; says "spawned" on
 * stdout (a record of its own: a process that records nothing and ends at once leaves no
 * file); exits 0 if both worked. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
    (void)argc;
    char path[4096];
    snprintf(path, sizeof(path), "%s", argv[0]);
    char *slash = strrchr(path, '/');
    snprintf(slash ? slash + 1 : path, sizeof(path) - (size_t)(slash ? slash + 1 - path : 0),
             "prog_status");
    char *child_argv[] = {path, "4", "100", NULL};
    pid_t pid;
    int status;
    if (posix_spawn(&pid, path, NULL, NULL, child_argv, environ) != 0 ||
        waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 4)
        return 1;
    if (system("true") != 0)
        return 2;
    return write(STDOUT_FILENO, "spawned\n", 8) == 8 ? 0 : 3;
}
