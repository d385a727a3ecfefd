/* call_site_format.c - a call site as text, JSON and HTML (see call_site_format.h). */
#include "call_site_format.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>

#define TEXT_PYTHON_FRAMES 6
#define TEXT_NATIVE_FRAMES 3

void pi_html_text(FILE *out, const char *text)
{
    for (const char *c = text ? text : ""; *c; c++) {
        if (*c == '<')
            fputs("&lt;", out);
        else if (*c == '>')
            fputs("&gt;", out);
        else if (*c == '&')
            fputs("&amp;", out);
        else if (*c == '"')
            fputs("&quot;", out);
        else if (*c == '\'')
            fputs("&#39;", out);
        else
            fputc(*c, out);
    }
}

void pi_call_site_text(FILE *out, const struct pi_call_site *site, const char *fallback,
                       const char *indent)
{
    if (!site || site->count == 0) {
        fprintf(out, "%s%s\n", indent, site ? site->headline : fallback);
        return;
    }
    char frame[1200];
    for (size_t i = 0; i < site->python_count && i < TEXT_PYTHON_FRAMES; i++) {
        pi_call_site_frame_text(&site->frames[i], frame, sizeof(frame));
        fprintf(out, "%s%s\n", indent, frame);
    }
    if (site->python_count > TEXT_PYTHON_FRAMES)
        fprintf(out, "%s... %zu more Python frames\n", indent,
                site->python_count - TEXT_PYTHON_FRAMES);
    /* the first named native frames say which library; unnamed ones only when none is */
    int named = 0;
    for (size_t i = site->python_count; i < site->count; i++)
        named += site->frames[i].symbol != NULL;
    int shown = 0;
    for (size_t i = site->python_count; i < site->count && shown < TEXT_NATIVE_FRAMES; i++) {
        if (named && !site->frames[i].symbol)
            continue;
        pi_call_site_frame_text(&site->frames[i], frame, sizeof(frame));
        fprintf(out, "%s%s%s\n", indent, shown ? "        " : "native: ", frame);
        shown++;
    }
}

struct cJSON *pi_call_site_json(const struct pi_call_site *site, const char *fallback)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "text", site ? site->text : fallback);
    cJSON_AddStringToObject(o, "headline", site ? site->headline : fallback);
    cJSON *python = cJSON_AddArrayToObject(o, "python");
    cJSON *native = cJSON_AddArrayToObject(o, "native");
    for (size_t i = 0; site && i < site->count; i++) {
        const struct pi_site_frame *f = &site->frames[i];
        cJSON *frame = cJSON_CreateObject();
        if (f->python) {
            cJSON_AddStringToObject(frame, "file", f->file);
            cJSON_AddNumberToObject(frame, "line", f->line);
            cJSON_AddStringToObject(frame, "function", f->function);
            cJSON_AddItemToArray(python, frame);
            continue;
        }
        cJSON_AddStringToObject(frame, "module", f->module);
        cJSON_AddStringToObject(frame, "build_id", f->build_id ? f->build_id : "");
        if (f->has_offset)
            cJSON_AddNumberToObject(frame, "offset", (double)f->offset);
        else
            cJSON_AddNullToObject(frame, "offset");
        if (f->symbol)
            cJSON_AddStringToObject(frame, "symbol", f->symbol);
        else
            cJSON_AddNullToObject(frame, "symbol");
        if (f->has_symbol_offset)
            cJSON_AddNumberToObject(frame, "symbol_offset", (double)f->symbol_offset);
        else
            cJSON_AddNullToObject(frame, "symbol_offset");
        cJSON_AddItemToArray(native, frame);
    }
    return o;
}

void pi_call_site_html(FILE *out, const struct pi_call_site *site, const char *fallback,
                       const char *summary_html)
{
    fprintf(out, "<details class=\"site\"><summary>%s <code class=\"headline\">", summary_html);
    pi_html_text(out, site ? site->headline : fallback);
    fputs("</code></summary>\n", out);
    char frame[1200];
    if (site && site->python_count) {
        fputs("<ol class=\"python\">", out);
        for (size_t i = 0; i < site->python_count; i++) {
            pi_call_site_frame_text(&site->frames[i], frame, sizeof(frame));
            fputs("<li><code>", out);
            pi_html_text(out, frame);
            fputs("</code></li>", out);
        }
        fputs("</ol>\n", out);
    }
    if (site && site->count > site->python_count) {
        fprintf(out, "<details class=\"native\"><summary>%zu native frames</summary><ol>",
                site->count - site->python_count);
        for (size_t i = site->python_count; i < site->count; i++) {
            pi_call_site_frame_text(&site->frames[i], frame, sizeof(frame));
            fputs("<li><code>", out);
            pi_html_text(out, frame);
            fputs("</code></li>", out);
        }
        fputs("</ol></details>\n", out);
    }
    fputs("</details>\n", out);
}

cJSON *pi_site_bytes_json(const struct pi_site_bytes *sites, size_t n)
{
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *site = cJSON_CreateObject();
        cJSON_AddNumberToObject(site, "bytes", (double)sites[i].bytes);
        cJSON_AddNumberToObject(site, "count", (double)sites[i].count);
        cJSON_AddItemToObject(site, "stack",
                              pi_call_site_json(sites[i].site, sites[i].text ? sites[i].text : ""));
        cJSON_AddItemToArray(list, site);
    }
    return list;
}
