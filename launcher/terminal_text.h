/*
 * terminal_text.h - text the launcher did not write itself (a directory the
 * user named, a command, a path read from a process) as it goes to the
 * analyst's terminal: control characters never reach it raw, where an escape
 * sequence could rewrite the screen or the title, or forge a line.
 */
#ifndef PI_LAUNCHER_TERMINAL_TEXT_H
#define PI_LAUNCHER_TERMINAL_TEXT_H

#include <stddef.h>
#include <stdio.h>

/**
 * pi_shown - @text for a message: each control character (C0, DEL, and C1
 * as UTF-8) written as \xHH, the rest as is; cut with "..." when @buf is
 * too small (@size: 4 or more).
 * Return: @buf.
 */
const char *pi_shown(char *buf, size_t size, const char *text);

/**
 * pi_put_shell_word - @text as one word that any POSIX sh reads back as
 * @text, without running or expanding anything in it, and that shows no
 * control character: as is when no character in it is special to the
 * shell, else single-quoted, a quote as '\'', control characters
 * as "$(printf '\ooo')". @is_directory allows a trailing '/' that keeps
 * a trailing newline, which command substitution would drop.
 */
void pi_put_shell_word(FILE *out, const char *text, int is_directory);

#endif
