/* format.c - human-readable durations and sizes (see format.h). */
#include "format.h"

#include <stdio.h>
#include <string.h>

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

const char *pi_format_fit(const char *text, size_t width, char *out, size_t size)
{
    size_t length = strlen(text);
    if (length <= width || width < 8 || size <= width) {
        snprintf(out, size, "%s", text);
        return out;
    }
    /* the start (where it is) and the end kept, the whole file name if it fits beside a
     * few characters of the start, the middle gone */
    const char *base = strrchr(text, '/');
    size_t tail = (width - 3) * 2 / 3, name = base ? strlen(base) : 0;
    if (name > tail)
        tail = name < width - 3 - 4 ? name : width - 3 - 4;
    size_t head = width - 3 - tail;
    snprintf(out, size, "%.*s...%s", (int)head, text, text + length - tail);
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

void pi_print_wrapped(FILE *out, const char *prefix, const char *text, int indent, int width)
{
    int column = fprintf(out, "%s", prefix);
    const char *word = text;
    while (*word) {
        while (*word == ' ')
            word++;
        size_t length = strcspn(word, " ");
        if (!length)
            break;
        if (column > indent && column + 1 + (int)length > width)
            column = fprintf(out, "\n%*s", indent, "") - 1;
        else if (word != text && column > 0 && word[-1] == ' ')
            column += fprintf(out, " ");
        column += fprintf(out, "%.*s", (int)length, word);
        word += length;
    }
    fputc('\n', out);
}
