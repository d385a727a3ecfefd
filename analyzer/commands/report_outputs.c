/*
 * report_outputs.c - what report and merge both write once the analysis is
 * done, and how they say it: a file written or not, and the text report on
 * stdout.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "reports/format/terminal_text.h"
#include "reports/report.h"

int pi_report_written(const char *what, const char *path, int result)
{
    if (result != 0) {
        fprintf(stderr, "profinject-analyze: cannot write %s %s: %s\n", what, path,
                strerror(errno));
        return PI_EXIT_BAD_INPUT;
    }
    fprintf(stderr, "profinject-analyze: wrote %s %s\n", what, path);
    return PI_EXIT_OK;
}

/* A reader that stopped reading (`| head`) ends the text quietly: SIGPIPE is ignored and
 * EPIPE is no error; other write errors (a full disk) are. */
int pi_report_print_text(struct pi_analysis *analysis)
{
    signal(SIGPIPE, SIG_IGN); /* for good: stdout is flushed again at exit */
    errno = 0;
    FILE *text = pi_terminal_stream(stdout);
    pi_report_text(text, analysis);
    int failed = pi_terminal_stream_close(text, stdout) != 0;
    if (failed && errno != EPIPE) {
        fprintf(stderr, "profinject-analyze: cannot write the report to stdout: %s\n",
                strerror(errno));
        return -1;
    }
    return 0;
}
