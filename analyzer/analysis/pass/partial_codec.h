/*
 * partial_codec.h - the values of a partial file (partial.h), each written
 * or read by the same call: one function per structure walks its fields
 * once, whichever way the codec goes, so that what is written and what is
 * read back cannot drift apart. Integers are LEB128 varints (a rank's
 * figures are mostly small), doubles their 8 bytes little-endian, strings
 * a length then the bytes: nothing depends on the machine's pointers,
 * padding or byte order.
 *
 * Reading trusts nothing: a count larger than what is left of the file,
 * a value out of its range or the file's end sets failed, and from then on
 * every value reads as zero and nothing more is allocated, so that what
 * was built so far is freed by the usual free functions.
 */
#ifndef PI_PARTIAL_CODEC_H
#define PI_PARTIAL_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pi_codec {
    FILE *file;
    int reading;       /* 1: values are read into the fields; 0: written from them */
    int failed;        /* a short read or write, a value out of range, out of memory */
    uint64_t left;     /* reading: bytes left in the file, the bound of any count */
    uint64_t bytes;    /* written or read so far */
    char why[160];     /* what failed first */
};

/* pi_codec_fail - stop the codec, keeping the first reason */
void pi_codec_fail(struct pi_codec *c, const char *why);

void pi_codec_u64(struct pi_codec *c, uint64_t *v);
void pi_codec_i64(struct pi_codec *c, int64_t *v);
void pi_codec_u32(struct pi_codec *c, uint32_t *v);
void pi_codec_i32(struct pi_codec *c, int32_t *v);
void pi_codec_uint(struct pi_codec *c, unsigned *v);
void pi_codec_int(struct pi_codec *c, int *v);
void pi_codec_long(struct pi_codec *c, long *v);
void pi_codec_size(struct pi_codec *c, size_t *v);
void pi_codec_double(struct pi_codec *c, double *v);
void pi_codec_u64s(struct pi_codec *c, uint64_t *v, size_t n);
void pi_codec_u32s(struct pi_codec *c, uint32_t *v, size_t n);
void pi_codec_doubles(struct pi_codec *c, double *v, size_t n);
/* pi_codec_chars - a fixed char array (a thread's name), NUL-terminated on reading */
void pi_codec_chars(struct pi_codec *c, char *v, size_t n);

/* pi_codec_str - a malloc'd string or NULL, which stays NULL */
void pi_codec_str(struct pi_codec *c, char **v);
/* pi_codec_text - pi_codec_str of a string the analysis always sets (a reason, a name the
 * reports print as they find it): a partial without it is refused */
void pi_codec_text(struct pi_codec *c, char **v);

/* pi_codec_interned - a string the model points at but does not own (a literal such as
 * steps_from's): read back as one kept for the life of the program */
void pi_codec_interned(struct pi_codec *c, const char **v);

/**
 * pi_codec_count - a count of elements that follow, each at least @min_bytes long
 * @most: the largest count the model allows (a fixed array's size)
 * Return: 1 while the codec is sound (the elements follow), 0 once it failed.
 */
int pi_codec_count(struct pi_codec *c, size_t *count, size_t most, size_t min_bytes);

/**
 * pi_codec_array - @count elements of @size bytes at *@array: the count, then, reading,
 * a zeroed array of that many (NULL for none) for the caller to fill element by element
 * Return: the count to walk (0 once failed).
 */
size_t pi_codec_array(struct pi_codec *c, void **array, size_t *count, size_t size);

/**
 * pi_codec_present - whether the optional structure at *@object is there; reading, a
 * zeroed one of @size bytes is allocated when it is
 * Return: 1: walk it; 0: it is absent.
 */
int pi_codec_present(struct pi_codec *c, void **object, size_t size);

#endif
