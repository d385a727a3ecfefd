/*
 * json_stream.c - a JSON document streamed in cJSON_Print's layout (see
 * json_stream.h). That layout: an object is "{", a line break, each member
 * on its own line indented by one tab per container open ("key":<tab>value,
 * a comma before the break of all but the last), then the indent of the
 * container around it and "}"; an array is "[", its values separated by
 * ", ", then "]". A value printed alone by cJSON is laid out as if no
 * container were open: a tab per container open after each of its line
 * breaks puts it in place (cJSON escapes the line breaks inside strings,
 * so every break it writes is layout).
 */
#include "json_stream.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "terminal_text.h"

void pi_json_stream_init(struct pi_json_stream *s, FILE *out)
{
    memset(s, 0, sizeof(*s));
    s->out = out;
}

/* @length bytes of @text, every byte that is not UTF-8 as U+FFFD. */
static void put(struct pi_json_stream *s, const char *text, size_t length)
{
    if (pi_is_utf8(text, length)) {
        s->failed |= fwrite(text, 1, length, s->out) != length;
        return;
    }
    char *valid = pi_valid_utf8(text, length, &length);
    s->failed |= !valid || fwrite(valid, 1, length, s->out) != length;
    free(valid);
}

static void put_text(struct pi_json_stream *s, const char *text)
{
    put(s, text, strlen(text));
}

static void put_tabs(struct pi_json_stream *s, unsigned count)
{
    static const char tabs[PI_JSON_STREAM_DEPTH + 1] = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t";
    put(s, tabs, count < PI_JSON_STREAM_DEPTH ? count : PI_JSON_STREAM_DEPTH);
}

/* What cJSON prints alone, indented by the containers open. */
static void put_printed(struct pi_json_stream *s, char *printed)
{
    if (!printed) {
        s->failed = 1;
        return;
    }
    const char *at = printed;
    for (const char *end; (end = strchr(at, '\n')); at = end + 1) {
        put(s, at, (size_t)(end + 1 - at));
        put_tabs(s, s->depth);
    }
    put_text(s, at);
    free(printed);
}

/* What comes before a value: in an array, the separator from the one before; in an object,
 * the end of the member before, the indent and @key. */
static void before_value(struct pi_json_stream *s, const char *key)
{
    if (s->depth == 0)
        return; /* the document itself */
    unsigned inner = s->depth - 1;
    int first = !s->filled[inner];
    s->filled[inner] = 1;
    if (s->array[inner]) {
        if (!first)
            put_text(s, ", ");
        return;
    }
    if (!first)
        put_text(s, ",\n");
    put_tabs(s, s->depth);
    /* the key as cJSON escapes a string */
    cJSON *name = cJSON_CreateStringReference(key ? key : "");
    put_printed(s, name ? cJSON_PrintUnformatted(name) : NULL);
    cJSON_Delete(name);
    put_text(s, ":\t");
}

static void open_container(struct pi_json_stream *s, const char *key, int array)
{
    before_value(s, key);
    put_text(s, array ? "[" : "{\n");
    if (s->depth == PI_JSON_STREAM_DEPTH) {
        s->failed = 1;
        return;
    }
    s->array[s->depth] = (unsigned char)array;
    s->filled[s->depth] = 0;
    s->depth++;
}

void pi_json_stream_open_object(struct pi_json_stream *s, const char *key)
{
    open_container(s, key, 0);
}

void pi_json_stream_open_array(struct pi_json_stream *s, const char *key)
{
    open_container(s, key, 1);
}

void pi_json_stream_close(struct pi_json_stream *s)
{
    if (s->depth == 0) {
        s->failed = 1;
        return;
    }
    unsigned inner = --s->depth;
    if (s->array[inner]) {
        put_text(s, "]");
        return;
    }
    if (s->filled[inner])
        put_text(s, "\n");
    put_tabs(s, inner);
    put_text(s, "}");
}

void pi_json_stream_value(struct pi_json_stream *s, const char *key, const cJSON *value)
{
    before_value(s, key);
    put_printed(s, value ? cJSON_Print(value) : NULL);
}

void pi_json_stream_members(struct pi_json_stream *s, const cJSON *object)
{
    if (!object) {
        s->failed = 1;
        return;
    }
    for (const cJSON *member = object->child; member; member = member->next)
        pi_json_stream_value(s, member->string, member);
}

int pi_json_stream_ok(const struct pi_json_stream *s)
{
    return !s->failed && s->depth == 0;
}
