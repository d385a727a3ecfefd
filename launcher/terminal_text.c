/* terminal_text.c - see terminal_text.h. */
#include "terminal_text.h"

#include <string.h>

/* How many bytes of a control character start at @p: 0 when none does. */
static size_t control_length(const unsigned char *p)
{
    if (*p && (*p < 0x20 || *p == 0x7f))
        return 1;
    if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
        return 2; /* U+0080..U+009F: CSI and the other C1 controls */
    return 0;
}

const char *pi_shown(char *buf, size_t size, const char *text)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)text;
    size_t used = 0;
    while (*p) {
        size_t control = control_length(p), need = control ? 4 * control : 1;
        if (used + need + 4 > size) { /* room is kept for "...\0" */
            memcpy(buf + used, "...", 4);
            return buf;
        }
        if (!control) {
            buf[used++] = (char)*p++;
            continue;
        }
        for (size_t i = 0; i < control; i++, p++) {
            buf[used++] = '\\';
            buf[used++] = 'x';
            buf[used++] = hex[*p >> 4];
            buf[used++] = hex[*p & 15];
        }
    }
    buf[used] = '\0';
    return buf;
}

/* A run of control characters at @p, outside quotes: its length. */
static size_t put_control_run(FILE *out, const unsigned char *p, int is_directory)
{
    size_t length = 0;
    fputs("\"$(printf '", out);
    for (size_t n; (n = control_length(p + length)) != 0; length += n)
        for (size_t i = 0; i < n; i++)
            fprintf(out, "\\%03o", p[length + i]);
    /* $(...) drops trailing newlines; "dir\n/" names the same directory */
    if (is_directory && p[length] == '\0' && p[length - 1] == '\n')
        fputc('/', out);
    fputs("')\"", out);
    return length;
}

/* Whether sh reads @text back as itself unquoted: no character it treats specially. */
static int plain_word(const char *text)
{
    return *text && strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789_-./+,:@%") == strlen(text);
}

void pi_put_shell_word(FILE *out, const char *text, int is_directory)
{
    const unsigned char *p = (const unsigned char *)text;
    int quoted = 0;
    if (plain_word(text)) {
        fputs(text, out);
        return;
    }
    if (!*p)
        fputs("''", out);
    while (*p) {
        if (control_length(p)) {
            if (quoted)
                fputc('\'', out);
            quoted = 0;
            p += put_control_run(out, p, is_directory);
            continue;
        }
        if (!quoted)
            fputc('\'', out);
        quoted = 1;
        if (*p == '\'')
            fputs("'\\''", out);
        else
            fputc(*p, out);
        p++;
    }
    if (quoted)
        fputc('\'', out);
}
