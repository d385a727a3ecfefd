/*
 * analyze_hint.h - the commands the launcher tells the analyst to paste next
 * ("analyse them with: ..."), such that pasted into a shell they do what they
 * say: the launcher named by a path that works from here, the directory as
 * one quoted word that runs and expands nothing.
 */
#ifndef PI_LAUNCHER_ANALYZE_HINT_H
#define PI_LAUNCHER_ANALYZE_HINT_H

#include <stdio.h>

/* pi_set_invoked_as - the launcher's argv[0], as the shell that ran it had it;
 * also takes PROFINJECT_COMMAND out of the environment: the command (shell
 * words) that the Python package's `profinject` script was run as */
void pi_set_invoked_as(const char *argv0);

/**
 * pi_print_launcher_hint - one line: @lead, the launcher's path as a shell
 * word, " @arguments" (written as is: the launcher's own words), then, when
 * @directory is not NULL, @directory as a shell word.
 *
 * The launcher is named as PROFINJECT_COMMAND said, else as invoked when
 * that name leads back to this very program (a path, or a bare name that
 * PATH resolves to it), else by its absolute path.
 */
void pi_print_launcher_hint(FILE *out, const char *lead, const char *arguments,
                            const char *directory);

#endif
