/* options.c - command-line values the subcommands share (see commands.h). */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "reports/format/terminal_text.h"

int pi_parse_count(const char *option, const char *text, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double value = text[0] >= '0' && text[0] <= '9' ? strtod(text, &end) : -1;
    if (value < 0 || errno || *end || value != (double)(long long)value || value < min ||
        value > max) {
        fprintf(stderr, "profinject-analyze: %s takes a whole number from %.0f to %.0f, not '%s'\n",
                option, min, max, text);
        return -1;
    }
    *out = value;
    return 0;
}

int pi_finish_stdout(FILE *text)
{
    errno = 0;
    if (pi_terminal_stream_close(text, stdout) == 0 && fclose(stdout) == 0)
        return 0;
    fprintf(stderr, "profinject-analyze: cannot write to stdout: %s\n",
            errno ? strerror(errno) : "write error");
    return -1;
}
