/*
 * commands.h - the analyzer's subcommands, one file each.
 * Each returns the process exit status: 0 ok, 1 usage, 2 bad input.
 */
#ifndef PI_COMMANDS_H
#define PI_COMMANDS_H

#include <stdio.h>

#include "reader/trace_reader.h"

enum { PI_EXIT_OK = 0, PI_EXIT_USAGE = 1, PI_EXIT_BAD_INPUT = 2 };

int pi_cmd_dump(int argc, char **argv);
int pi_cmd_info(int argc, char **argv);
int pi_cmd_report(int argc, char **argv);
int pi_cmd_compare(int argc, char **argv);
int pi_cmd_partial(int argc, char **argv);
int pi_cmd_merge(int argc, char **argv);


/* pi_parse_count - @text as a whole number from @min to @max into @out; on
 * anything else (garbage, a sign, out of range) a message naming @option, -1 */
int pi_parse_count(const char *option, const char *text, double min, double max, double *out);

/* pi_finish_stdout - close @text (a pi_terminal_stream over stdout) and stdout itself,
 * saying so when what was written could not be: a full disk, a closed pipe
 * Return: 0, or -1 with a message printed. */
int pi_finish_stdout(FILE *text);

struct pi_analysis;

/* pi_report_written - say that @what (a "JSON report") was written to @path, or, where
 * @result is not 0, that it could not be (errno's reason)
 * Return: PI_EXIT_OK, or PI_EXIT_BAD_INPUT when it was not written. */
int pi_report_written(const char *what, const char *path, int result);

/* pi_report_print_text - the text report of @analysis on stdout
 * Return: 0, or -1 with a message when stdout could not take it (not a closed pipe). */
int pi_report_print_text(struct pi_analysis *analysis);

/* pi_print_header - the header of one trace file, as "name: value" lines */
void pi_print_header(FILE *out, const struct pi_reader *reader);

#endif
