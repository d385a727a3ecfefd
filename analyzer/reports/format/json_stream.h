/*
 * json_stream.h - a JSON document written to a stream as it is made, laid
 * out byte for byte as cJSON_Print lays out the whole tree: the report of
 * thousands of ranks then never holds its per-process and per-rank
 * objects all at once (a tree of them was 21 KB a rank, its printed text
 * as much again). Containers are opened and closed here; what goes in them
 * is written a cJSON value at a time (a process's object, a section's
 * keys), each freed by its caller once written.
 *
 * As the report's text was, every byte that is not UTF-8 is written as
 * U+FFFD; a value's bytes never straddle two writes, so the result is the
 * same.
 */
#ifndef PI_JSON_STREAM_H
#define PI_JSON_STREAM_H

#include <stdio.h>

struct cJSON;

#define PI_JSON_STREAM_DEPTH 16 /* containers open at once */

struct pi_json_stream {
    FILE *out;
    unsigned depth; /* containers open */
    /* of each open container, outermost first: an array (not an object); holds a value */
    unsigned char array[PI_JSON_STREAM_DEPTH], filled[PI_JSON_STREAM_DEPTH];
    int failed; /* a write, a print or an allocation failed, or containers were misnested */
};

/* pi_json_stream_init - @stream writes to @out */
void pi_json_stream_init(struct pi_json_stream *stream, FILE *out);

/* pi_json_stream_open_object, pi_json_stream_open_array - a container, as the value of @key in
 * the object open (NULL in an array, or for the document itself) */
void pi_json_stream_open_object(struct pi_json_stream *stream, const char *key);
void pi_json_stream_open_array(struct pi_json_stream *stream, const char *key);

/* pi_json_stream_close - the innermost container open */
void pi_json_stream_close(struct pi_json_stream *stream);

/* pi_json_stream_value - @value (any cJSON item, NULL: out of memory), as the value of @key
 * in the object open (NULL in an array) */
void pi_json_stream_value(struct pi_json_stream *stream, const char *key,
                          const struct cJSON *value);

/* pi_json_stream_members - each key of the cJSON object @object, in its order, into the
 * object open (NULL: out of memory) */
void pi_json_stream_members(struct pi_json_stream *stream, const struct cJSON *object);

/* pi_json_stream_ok - every container closed and nothing failed: 1, else 0 */
int pi_json_stream_ok(const struct pi_json_stream *stream);

#endif
