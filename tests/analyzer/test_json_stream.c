/*
 * Unit: the streamed JSON writer (reports/format/json_stream.h). Each
 * document is written through the stream and, beside it, built as one
 * cJSON tree of the same values: cJSON's parser must read the stream's
 * text back as that tree, and the text must be what cJSON_Print makes of
 * the tree, the layout the report had when it was printed whole.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/format/json_stream.h"

struct capture {
    char *text;
    size_t size;
    FILE *out;
    struct pi_json_stream stream;
};

static void capture_open(struct capture *c)
{
    c->text = NULL;
    c->size = 0;
    c->out = open_memstream(&c->text, &c->size);
    cr_assert_not_null(c->out);
    pi_json_stream_init(&c->stream, c->out);
}

static char *capture_close(struct capture *c)
{
    cr_assert_eq(fclose(c->out), 0);
    return c->text;
}

/* The stream's text read back by cJSON equals @tree, and is laid out as cJSON prints it. */
static void expect_document(struct capture *c, const cJSON *tree)
{
    cr_expect(pi_json_stream_ok(&c->stream));
    char *text = capture_close(c);
    cJSON *parsed = cJSON_Parse(text);
    cr_assert_not_null(parsed, "cJSON cannot parse: %s", text);
    cr_expect(cJSON_Compare(parsed, tree, 1), "read back differs: %s", text);
    char *printed = cJSON_Print(tree);
    cr_expect_str_eq(text, printed);
    free(printed);
    cJSON_Delete(parsed);
    free(text);
}

/* A process-like object: numbers, strings that need escaping, nested and empty containers. */
static cJSON *process(int pid)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "pid", pid);
    cJSON_AddNumberToObject(o, "share", pid / 7.0);
    cJSON_AddNumberToObject(o, "big", 1234567890123456.0);
    cJSON_AddStringToObject(o, "command", "python -c \"print('a\\tb')\"\nsecond line");
    cJSON_AddBoolToObject(o, "truncated", pid % 2);
    cJSON_AddNullToObject(o, "line");
    cJSON *end = cJSON_AddObjectToObject(o, "end");
    cJSON_AddStringToObject(end, "reason", "exit");
    cJSON_AddArrayToObject(end, "blocked");
    cJSON_AddObjectToObject(o, "spans");
    cJSON *samples = cJSON_AddArrayToObject(o, "samples");
    for (int i = 0; i < 3; i++) {
        cJSON *point = cJSON_CreateArray();
        cJSON_AddItemToArray(point, cJSON_CreateNumber(i * 1000));
        cJSON_AddItemToArray(point, cJSON_CreateNumber(pid * i));
        cJSON_AddItemToArray(samples, point);
    }
    cJSON *threads = cJSON_AddArrayToObject(o, "threads");
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "tid", pid + 1);
    cJSON_AddItemToArray(threads, t);
    cJSON_AddItemToArray(threads, cJSON_CreateObject());
    return o;
}

Test(json_stream, a_report_shaped_document_reads_back_as_its_tree)
{
    struct capture c;
    capture_open(&c);
    cJSON *tree = cJSON_CreateObject();

    pi_json_stream_open_object(&c.stream, NULL);
    cJSON *head = cJSON_CreateObject();
    cJSON_AddStringToObject(head, "schema", "profinject-report");
    cJSON_AddNumberToObject(head, "version", 2);
    cJSON_AddItemToObject(head, "inputs", process(1));
    pi_json_stream_members(&c.stream, head);
    cJSON_AddStringToObject(tree, "schema", "profinject-report");
    cJSON_AddNumberToObject(tree, "version", 2);
    cJSON_AddItemToObject(tree, "inputs", process(1));
    cJSON_Delete(head);

    pi_json_stream_open_array(&c.stream, "processes");
    cJSON *processes = cJSON_AddArrayToObject(tree, "processes");
    for (int pid = 100; pid < 104; pid++) {
        cJSON *p = process(pid);
        pi_json_stream_value(&c.stream, NULL, p);
        cJSON_Delete(p);
        cJSON_AddItemToArray(processes, process(pid));
    }
    pi_json_stream_close(&c.stream);

    /* an object opened in the stream, a list of entries opened in it */
    pi_json_stream_open_object(&c.stream, "ranks");
    cJSON *ranks = cJSON_AddObjectToObject(tree, "ranks");
    cJSON *none = cJSON_CreateNull();
    pi_json_stream_value(&c.stream, "straggler", none);
    cJSON_Delete(none);
    cJSON_AddNullToObject(ranks, "straggler");
    pi_json_stream_open_array(&c.stream, "list");
    cJSON *list = cJSON_AddArrayToObject(ranks, "list");
    for (int r = 0; r < 3; r++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", r);
        pi_json_stream_value(&c.stream, NULL, e);
        cJSON_Delete(e);
        cJSON *same = cJSON_CreateObject();
        cJSON_AddNumberToObject(same, "rank", r);
        cJSON_AddItemToArray(list, same);
    }
    pi_json_stream_close(&c.stream);
    pi_json_stream_close(&c.stream);

    /* containers opened in the stream and left empty */
    pi_json_stream_open_array(&c.stream, "empty_list");
    pi_json_stream_close(&c.stream);
    cJSON_AddArrayToObject(tree, "empty_list");
    pi_json_stream_open_object(&c.stream, "empty_object");
    pi_json_stream_close(&c.stream);
    cJSON_AddObjectToObject(tree, "empty_object");
    pi_json_stream_open_array(&c.stream, "nested");
    pi_json_stream_open_array(&c.stream, NULL);
    pi_json_stream_open_object(&c.stream, NULL);
    pi_json_stream_close(&c.stream);
    pi_json_stream_close(&c.stream);
    pi_json_stream_close(&c.stream);
    cJSON *nested = cJSON_AddArrayToObject(tree, "nested");
    cJSON *inner = cJSON_CreateArray();
    cJSON_AddItemToArray(inner, cJSON_CreateObject());
    cJSON_AddItemToArray(nested, inner);

    pi_json_stream_close(&c.stream);
    expect_document(&c, tree);
    cJSON_Delete(tree);
}

Test(json_stream, an_empty_document_object)
{
    struct capture c;
    capture_open(&c);
    pi_json_stream_open_object(&c.stream, NULL);
    pi_json_stream_close(&c.stream);
    cJSON *tree = cJSON_CreateObject();
    expect_document(&c, tree);
    cJSON_Delete(tree);
}

Test(json_stream, a_document_array_of_objects)
{
    struct capture c;
    capture_open(&c);
    cJSON *tree = cJSON_CreateArray();
    pi_json_stream_open_array(&c.stream, NULL);
    for (int pid = 1; pid < 3; pid++) {
        cJSON *p = process(pid);
        pi_json_stream_value(&c.stream, NULL, p);
        cJSON_Delete(p);
        cJSON_AddItemToArray(tree, process(pid));
    }
    pi_json_stream_close(&c.stream);
    expect_document(&c, tree);
    cJSON_Delete(tree);
}

Test(json_stream, bytes_that_are_not_utf8_read_back_as_replacement_characters)
{
    struct capture c;
    capture_open(&c);
    cJSON *bad = cJSON_CreateObject();
    cJSON_AddStringToObject(bad, "command", "caf\xe9 \xff\xfe ok \xc3\xa9");
    pi_json_stream_open_object(&c.stream, NULL);
    pi_json_stream_members(&c.stream, bad);
    pi_json_stream_close(&c.stream);
    cJSON_Delete(bad);
    cr_expect(pi_json_stream_ok(&c.stream));
    char *text = capture_close(&c);
    cJSON *parsed = cJSON_Parse(text);
    cr_assert_not_null(parsed);
    cr_expect_str_eq(cJSON_GetObjectItem(parsed, "command")->valuestring,
                     "caf\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd ok \xc3\xa9");
    cJSON_Delete(parsed);
    free(text);
}

Test(json_stream, containers_left_open_or_closed_twice_are_a_failure)
{
    struct capture c;
    capture_open(&c);
    pi_json_stream_open_object(&c.stream, NULL);
    pi_json_stream_open_array(&c.stream, "list");
    pi_json_stream_close(&c.stream);
    cr_expect(!pi_json_stream_ok(&c.stream), "the document's object is still open");
    pi_json_stream_close(&c.stream);
    cr_expect(pi_json_stream_ok(&c.stream));
    pi_json_stream_close(&c.stream);
    cr_expect(!pi_json_stream_ok(&c.stream), "closed once more than opened");
    free(capture_close(&c));
}

Test(json_stream, a_value_that_could_not_be_made_is_a_failure)
{
    struct capture c;
    capture_open(&c);
    pi_json_stream_open_array(&c.stream, NULL);
    pi_json_stream_value(&c.stream, NULL, NULL); /* cJSON_CreateObject out of memory */
    pi_json_stream_close(&c.stream);
    cr_expect(!pi_json_stream_ok(&c.stream));
    free(capture_close(&c));
}
