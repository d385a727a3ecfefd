/* prog_reader FILE: opens, reads and closes FILE every 2 ms until killed;
 * started without the profiler, for the attach tests. */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 1;
    printf("started\n");
    fflush(stdout);
    for (;;) {
        char buf[4096];
        int fd = open(argv[1], O_RDONLY);
        if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
            return 2;
        close(fd);
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
    }
}
