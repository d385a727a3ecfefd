/* prog_own_handler: a C program's own SIGTERM handler (sigaction, SA_SIGINFO), then a vfork
 * child that resets SIGTERM to its default before its exec, as a launcher's does; then
 * SIGTERM to itself. Says "handled SIG from PID" (the handler's own siginfo) and exits 0
 * when its handler ran, 1 when it did not. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got, from;

static void on_term(int sig, siginfo_t *info, void *context)
{
    (void)context;
    got = sig;
    from = info->si_pid;
}

int main(void)
{
    struct sigaction own;
    memset(&own, 0, sizeof(own));
    own.sa_sigaction = on_term;
    own.sa_flags = SA_SIGINFO;
    sigemptyset(&own.sa_mask);
    sigaction(SIGTERM, &own, NULL);
    pid_t child = vfork();
    if (child == 0) {
        struct sigaction reset;
        memset(&reset, 0, sizeof(reset));
        reset.sa_handler = SIG_DFL;
        sigaction(SIGTERM, &reset, NULL);
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    waitpid(child, NULL, 0);
    kill(getpid(), SIGTERM);
    printf("handled %d from %d (self %d)\n", (int)got, (int)from, (int)getpid());
    return got == SIGTERM ? 0 : 1;
}
