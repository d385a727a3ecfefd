/* diagnostics.c - one-line messages on stderr (see diagnostics.h). */
#include "diagnostics.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

void pi_diag(const char *format, ...)
{
    int saved_errno = errno;
    char line[512] = "profinject: ";
    size_t prefix = 12;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(line + prefix, sizeof(line) - prefix - 1, format, args);
    va_end(args);
    size_t len = prefix + (n < 0 ? 0 : (size_t)n);
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    syscall(SYS_write, 2, line, len);
    errno = saved_errno;
}
