/* format.c - human-readable durations and sizes (see format.h). */
#include "format.h"

#include <stdio.h>

#define RING 16

static char *next_buffer(void)
{
    static char ring[RING][32];
    static unsigned next;
    return ring[next++ % RING];
}

const char *pi_format_ns(double ns)
{
    char *out = next_buffer();
    if (ns < 1e3)
        snprintf(out, 32, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(out, 32, "%.1f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(out, 32, "%.1f ms", ns / 1e6);
    else
        snprintf(out, 32, "%.2f s", ns / 1e9);
    return out;
}

const char *pi_format_bytes(double bytes)
{
    char *out = next_buffer();
    if (bytes < 1024)
        snprintf(out, 32, "%.0f B", bytes);
    else if (bytes < 1024.0 * 1024)
        snprintf(out, 32, "%.1f KiB", bytes / 1024);
    else if (bytes < 1024.0 * 1024 * 1024)
        snprintf(out, 32, "%.1f MiB", bytes / (1024.0 * 1024));
    else
        snprintf(out, 32, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
    return out;
}
