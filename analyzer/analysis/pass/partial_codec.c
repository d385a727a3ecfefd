/* partial_codec.c - the partial file's values, written or read by one walk (see partial_codec.h). */
#include "partial_codec.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void pi_codec_fail(struct pi_codec *c, const char *why)
{
    if (!c->failed)
        snprintf(c->why, sizeof(c->why), "%s", why);
    c->failed = 1;
}

static void put_byte(struct pi_codec *c, unsigned byte)
{
    if (!c->failed && putc((int)byte, c->file) == EOF)
        pi_codec_fail(c, "cannot write");
    c->bytes++;
}

static unsigned get_byte(struct pi_codec *c)
{
    if (c->failed)
        return 0;
    int byte = c->left ? getc(c->file) : EOF;
    if (byte == EOF) {
        pi_codec_fail(c, "the file ends too early (truncated)");
        return 0;
    }
    c->left--;
    c->bytes++;
    return (unsigned)byte;
}

void pi_codec_u64(struct pi_codec *c, uint64_t *v)
{
    if (!c->reading) {
        uint64_t x = *v;
        while (x >= 0x80) {
            put_byte(c, (unsigned)(x & 0x7f) | 0x80);
            x >>= 7;
        }
        put_byte(c, (unsigned)x);
        return;
    }
    uint64_t x = 0;
    for (unsigned shift = 0;; shift += 7) {
        unsigned byte = get_byte(c);
        if (shift == 63 && byte > 1) {
            pi_codec_fail(c, "a number too large");
            break;
        }
        x |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80) || c->failed)
            break;
    }
    *v = c->failed ? 0 : x;
}

/* signed values zigzag-encoded: small negative numbers stay short */
void pi_codec_i64(struct pi_codec *c, int64_t *v)
{
    uint64_t x = ((uint64_t)*v << 1) ^ (uint64_t)(*v < 0 ? -1 : 0);
    pi_codec_u64(c, &x);
    if (c->reading)
        *v = (int64_t)(x >> 1) ^ -(int64_t)(x & 1);
}

/* a value read must fit its field: else the file is not one this analyzer wrote */
static uint64_t bounded(struct pi_codec *c, uint64_t value, uint64_t most)
{
    if (value > most) {
        pi_codec_fail(c, "a value out of range");
        return 0;
    }
    return value;
}

static int64_t bounded_signed(struct pi_codec *c, int64_t value, int64_t least, int64_t most)
{
    if (value < least || value > most) {
        pi_codec_fail(c, "a value out of range");
        return 0;
    }
    return value;
}

void pi_codec_u32(struct pi_codec *c, uint32_t *v)
{
    uint64_t x = *v;
    pi_codec_u64(c, &x);
    *v = (uint32_t)bounded(c, x, UINT32_MAX);
}

void pi_codec_uint(struct pi_codec *c, unsigned *v)
{
    uint64_t x = *v;
    pi_codec_u64(c, &x);
    *v = (unsigned)bounded(c, x, UINT32_MAX);
}

void pi_codec_size(struct pi_codec *c, size_t *v)
{
    uint64_t x = *v;
    pi_codec_u64(c, &x);
    *v = (size_t)x;
}

void pi_codec_i32(struct pi_codec *c, int32_t *v)
{
    int64_t x = *v;
    pi_codec_i64(c, &x);
    *v = (int32_t)bounded_signed(c, x, INT32_MIN, INT32_MAX);
}

void pi_codec_int(struct pi_codec *c, int *v)
{
    int64_t x = *v;
    pi_codec_i64(c, &x);
    *v = (int)bounded_signed(c, x, INT32_MIN, INT32_MAX);
}

void pi_codec_long(struct pi_codec *c, long *v)
{
    int64_t x = *v;
    pi_codec_i64(c, &x);
    *v = (long)x;
}

void pi_codec_double(struct pi_codec *c, double *v)
{
    uint64_t bits;
    memcpy(&bits, v, sizeof(bits));
    if (!c->reading) {
        for (int i = 0; i < 8; i++)
            put_byte(c, (unsigned)(bits >> (8 * i)) & 0xff);
        return;
    }
    bits = 0;
    for (int i = 0; i < 8; i++)
        bits |= (uint64_t)get_byte(c) << (8 * i);
    memcpy(v, &bits, sizeof(bits));
}

void pi_codec_u64s(struct pi_codec *c, uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pi_codec_u64(c, &v[i]);
}

void pi_codec_u32s(struct pi_codec *c, uint32_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pi_codec_u32(c, &v[i]);
}

void pi_codec_doubles(struct pi_codec *c, double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pi_codec_double(c, &v[i]);
}

void pi_codec_chars(struct pi_codec *c, char *v, size_t n)
{
    /* at most n - 1 characters either way: read back, the array ends with its NUL */
    size_t length = c->reading ? 0 : strnlen(v, n - 1);
    if (!pi_codec_count(c, &length, n - 1, 1))
        return;
    for (size_t i = 0; i < length; i++) {
        unsigned byte = c->reading ? get_byte(c) : (unsigned char)v[i];
        if (c->reading)
            v[i] = (char)byte;
        else
            put_byte(c, byte);
    }
    if (c->reading)
        v[length] = 0;
}

/* a string as 0 for NULL, else its length + 1, then its bytes */
static char *string(struct pi_codec *c, const char *text)
{
    uint64_t mark = text ? strlen(text) + 1 : 0;
    pi_codec_u64(c, &mark);
    if (!c->reading) {
        for (uint64_t i = 0; i + 1 < mark; i++)
            put_byte(c, (unsigned char)text[i]);
        return NULL;
    }
    if (!mark || c->failed)
        return NULL;
    if (mark - 1 > c->left) {
        pi_codec_fail(c, "a string longer than the file");
        return NULL;
    }
    char *copy = malloc(mark);
    if (!copy) {
        pi_codec_fail(c, "out of memory");
        return NULL;
    }
    for (uint64_t i = 0; i + 1 < mark; i++)
        copy[i] = (char)get_byte(c);
    copy[mark - 1] = 0;
    return copy;
}

void pi_codec_str(struct pi_codec *c, char **v)
{
    char *read = string(c, *v);
    if (c->reading)
        *v = read;
}

void pi_codec_text(struct pi_codec *c, char **v)
{
    pi_codec_str(c, v);
    if (c->reading && !c->failed && !*v)
        pi_codec_fail(c, "a text that is never absent, absent");
}

/* Literals the model points at, read back once each and kept: a handful in all. */
static struct {
    pthread_mutex_t lock;
    char **texts;
    size_t count;
} interned = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

static const char *intern(struct pi_codec *c, char *text)
{
    pthread_mutex_lock(&interned.lock);
    const char *found = NULL;
    for (size_t i = 0; i < interned.count && !found; i++)
        if (strcmp(interned.texts[i], text) == 0)
            found = interned.texts[i];
    if (!found) {
        char **grown = realloc(interned.texts, (interned.count + 1) * sizeof(*grown));
        if (grown) {
            interned.texts = grown;
            found = grown[interned.count++] = text;
            text = NULL;
        } else {
            pi_codec_fail(c, "out of memory");
        }
    }
    pthread_mutex_unlock(&interned.lock);
    free(text);
    return found;
}

void pi_codec_interned(struct pi_codec *c, const char **v)
{
    char *read = string(c, *v);
    if (c->reading)
        *v = read ? intern(c, read) : NULL;
}

int pi_codec_count(struct pi_codec *c, size_t *count, size_t most, size_t min_bytes)
{
    uint64_t n = *count;
    pi_codec_u64(c, &n);
    if (c->reading && (n > most || (min_bytes && n > c->left / min_bytes)))
        pi_codec_fail(c, "a count larger than the file or the model allows");
    *count = c->failed && c->reading ? 0 : (size_t)n;
    return !c->failed;
}

size_t pi_codec_array(struct pi_codec *c, void **array, size_t *count, size_t size)
{
    if (!pi_codec_count(c, count, SIZE_MAX / size, 1))
        return 0;
    if (!c->reading || !*count) {
        if (c->reading)
            *array = NULL;
        return *count;
    }
    *array = calloc(*count, size);
    if (!*array) {
        pi_codec_fail(c, "out of memory");
        *count = 0;
    }
    return *count;
}

int pi_codec_present(struct pi_codec *c, void **object, size_t size)
{
    uint64_t present = *object != NULL;
    pi_codec_u64(c, &present);
    if (!c->reading)
        return present != 0;
    *object = NULL;
    if (bounded(c, present, 1) == 0)
        return 0;
    *object = calloc(1, size);
    if (!*object)
        pi_codec_fail(c, "out of memory");
    return *object != NULL;
}
