/*
 * section_verdict.c - the verdict, first in every report: the ranked
 * findings about the training process (verdicts/verdict.h), each with its
 * evidence and what to try.
 */
#include "section_verdict.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "reports/format/call_site_format.h"
#include "reports/format/format.h"
#include "verdicts/verdict.h"

/* One piece of evidence as the text shows it: a duration in the unit that fits its size
 * (1.6 us, not 0.00159 ms), named without its unit; other figures as they are. */
static size_t evidence_item(char *out, size_t size, const char *separator,
                            const struct pi_evidence *e)
{
    size_t name = strlen(e->name);
    if (strcmp(e->unit, "ms") == 0) {
        if (name > 3 && strcmp(e->name + name - 3, "_ms") == 0)
            name -= 3;
        return (size_t)snprintf(out, size, "%s%.*s=%s", separator, (int)name, e->name,
                                pi_format_ns(e->value * 1e6));
    }
    return (size_t)snprintf(out, size, "%s%s=%.3g%s", separator, e->name, e->value, e->unit);
}

void pi_report_verdict_text(FILE *out, const struct pi_analysis *a)
{
    struct pi_finding findings[PI_MAX_FINDINGS];
    int n = pi_verdict(a, findings);
    fprintf(out, "VERDICT\n");
    for (int i = 0; i < n; i++) {
        const struct pi_finding *f = &findings[i];
        char prefix[64], evidence[1024];
        snprintf(prefix, sizeof(prefix), "  %d. %s: ", i + 1, f->kind);
        pi_print_wrapped(out, prefix, f->summary, 5, PI_SCREEN_WIDTH);
        size_t used = 0;
        evidence[0] = '\0';
        for (int e = 0; e < f->evidence_count && used < sizeof(evidence); e++)
            used += evidence_item(evidence + used, sizeof(evidence) - used, e ? ", " : "",
                                  &f->evidence[e]);
        pi_print_wrapped(out, "     evidence: ", evidence, 7, PI_SCREEN_WIDTH);
        pi_print_wrapped(out, "     try: ", f->advice, 7, PI_SCREEN_WIDTH);
    }
}

void pi_report_verdict_json(cJSON *root, const struct pi_analysis *a)
{
    struct pi_finding findings[PI_MAX_FINDINGS];
    int n = pi_verdict(a, findings);
    /* a pid names several images of an exec chain: the command says which one */
    const struct pi_process_info *subject = pi_training_process(a);
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "kind", findings[i].kind);
        cJSON_AddNumberToObject(f, "score", findings[i].score);
        cJSON_AddNumberToObject(f, "pid", findings[i].pid);
        if (subject && subject->header.pid == findings[i].pid && subject->command)
            cJSON_AddStringToObject(f, "command", subject->command);
        cJSON_AddStringToObject(f, "summary", findings[i].summary);
        cJSON_AddStringToObject(f, "advice", findings[i].advice);
        if (findings[i].cause)
            cJSON_AddStringToObject(f, "cause", findings[i].cause);
        if (findings[i].line[0])
            cJSON_AddStringToObject(f, "line", findings[i].line);
        if (findings[i].frames) { /* in full: the summary's names are short */
            cJSON *frames = cJSON_AddArrayToObject(f, "frames");
            for (size_t k = 0; k < findings[i].frames->count; k++) {
                char frame[4096];
                pi_call_site_frame_text(&findings[i].frames->frames[k], frame, sizeof(frame));
                cJSON_AddItemToArray(frames, cJSON_CreateString(frame));
            }
        }
        cJSON *evidence = cJSON_AddObjectToObject(f, "evidence");
        for (int e = 0; e < findings[i].evidence_count; e++)
            cJSON_AddNumberToObject(evidence, findings[i].evidence[e].name,
                                    findings[i].evidence[e].value);
        if (findings[i].sites)
            cJSON_AddItemToObject(evidence, "call_sites",
                                  pi_site_bytes_json(findings[i].sites, findings[i].site_count));
        cJSON_AddItemToArray(list, f);
    }
    cJSON_AddItemToObject(root, "verdict", list);
}

void pi_report_verdict_html(FILE *out, const struct pi_analysis *a)
{
    struct pi_finding findings[PI_MAX_FINDINGS];
    int n = pi_verdict(a, findings);
    fputs("<h2>Verdict</h2>\n<ol id=\"verdict\">\n", out);
    for (int i = 0; i < n; i++) {
        fprintf(out, "<li><b>%s</b>: ", findings[i].kind);
        pi_html_text(out, findings[i].summary);
        fputs("<br><i>try:</i> ", out);
        pi_html_text(out, findings[i].advice);
        fputs("</li>\n", out);
    }
    fputs("</ol>\n", out);
}
