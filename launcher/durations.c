/* durations.c - see durations.h. */
#include "durations.h"

#include <stdlib.h>
#include <string.h>

long pi_parse_ms(const char *text)
{
    char *end;
    double value = strtod(text, &end);
    if (end == text || value < 0)
        return -1;
    if (strcmp(end, "ms") == 0)
        return (long)value;
    if (strcmp(end, "s") == 0 || *end == '\0')
        return (long)(value * 1000);
    if (strcmp(end, "m") == 0)
        return (long)(value * 60000);
    return -1;
}

