/* terminal_text.c - control characters shown, not obeyed (see terminal_text.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fopencookie */
#endif
#include "terminal_text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

struct terminal {
    FILE *out;
    unsigned char pending[4]; /* the start of a UTF-8 character the next write completes */
    size_t pending_length;
};

int pi_utf8_length(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    int length = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                              : c >= 0xf0 && c <= 0xf4 ? 4
                                                       : 0;
    for (int i = 1; i < length; i++) {
        if ((size_t)i >= n)
            return -1;
        unsigned char lower = 0x80, upper = 0xbf;
        if (i == 1) { /* the second byte rules out overlong forms, surrogates, > U+10FFFF */
            lower = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
            upper = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
        }
        if (s[i] < lower || s[i] > upper)
            return 0;
    }
    return length;
}

static int shown(const unsigned char *s, int length)
{
    if (length == 1)
        return (s[0] >= 0x20 && s[0] != 0x7f) || s[0] == '\n' || s[0] == '\t';
    return !(length == 2 && s[0] == 0xc2 && s[1] < 0xa0); /* C1 controls */
}

/* Write @n bytes of @s escaped; with @more, keep an unfinished character for later. */
static int escape(struct terminal *t, const unsigned char *s, size_t n, int more)
{
    size_t run = 0; /* bytes at s that go out as they are */
    for (size_t i = 0; i < n;) {
        int length = pi_utf8_length(s + i, n - i);
        if (length < 0 && more) {
            memcpy(t->pending, s + i, n - i);
            t->pending_length = n - i;
            n = i;
            break;
        }
        if (length > 0 && shown(s + i, length)) {
            i += (size_t)length;
            continue;
        }
        length = length > 0 ? length : 1;
        if (fwrite(s + run, 1, i - run, t->out) != i - run)
            return -1;
        for (int k = 0; k < length; k++)
            if (fprintf(t->out, "\\x%02x", s[i + (size_t)k]) < 0)
                return -1;
        i += (size_t)length;
        run = i;
    }
    return fwrite(s + run, 1, n - run, t->out) == n - run ? 0 : -1;
}

static ssize_t terminal_write(void *cookie, const char *data, size_t size)
{
    struct terminal *t = cookie;
    const unsigned char *bytes = (const unsigned char *)data;
    size_t total = size;
    while (t->pending_length && size) { /* the character the last write began */
        unsigned char held[4];
        size_t count = t->pending_length;
        memcpy(held, t->pending, count);
        held[count++] = *bytes++;
        size--;
        t->pending_length = 0;
        if (pi_utf8_length(held, count) < 0 && count < sizeof(held)) {
            memcpy(t->pending, held, count); /* still unfinished */
            t->pending_length = count;
        } else if (escape(t, held, count, 1) != 0) {
            return -1;
        }
    }
    if (escape(t, bytes, size, 1) != 0)
        return -1;
    return (ssize_t)total;
}

static int terminal_close(void *cookie)
{
    struct terminal *t = cookie;
    int result = escape(t, t->pending, t->pending_length, 0);
    free(t);
    return result;
}

FILE *pi_terminal_stream(FILE *out)
{
    struct terminal *t = calloc(1, sizeof(*t));
    if (!t)
        return out;
    t->out = out;
    FILE *stream = fopencookie(t, "w", (cookie_io_functions_t){NULL, terminal_write, NULL,
                                                               terminal_close});
    if (!stream) {
        free(t);
        return out;
    }
    return stream;
}

int pi_terminal_stream_close(FILE *stream, FILE *out)
{
    if (stream == out)
        return fflush(out) == 0 && !ferror(out) ? 0 : -1;
    int failed = fclose(stream) != 0;
    int saved = errno;
    failed |= fflush(out) != 0 || ferror(out);
    if (failed && !errno)
        errno = saved;
    return failed ? -1 : 0;
}

int pi_is_utf8(const char *text, size_t length)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < length;) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        int l = pi_utf8_length(s + i, length - i);
        if (l <= 0)
            return 0;
        i += (size_t)l;
    }
    return 1;
}

char *pi_valid_utf8(const char *text, size_t length, size_t *out_length)
{
    char *copy = malloc(length * 3 + 1); /* each bad byte becomes 3 */
    if (!copy)
        return NULL;
    size_t n = 0;
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < length;) {
        int l = pi_utf8_length(s + i, length - i);
        if (l > 0) {
            memcpy(copy + n, s + i, (size_t)l);
            n += (size_t)l;
            i += (size_t)l;
        } else {
            memcpy(copy + n, "\xef\xbf\xbd", 3); /* U+FFFD */
            n += 3;
            i++;
        }
    }
    copy[n] = '\0';
    *out_length = n;
    return copy;
}
