/* process_words.c - see process_words.h. */
#include "process_words.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/host/span_steps.h"
#include "analysis/host/steps.h"
#include "analysis/sites/call_sites.h"
#include "analysis/sites/python_lines.h"
#include "profinject/in_flight_words.h"

const char *pi_process_role(const struct pi_process_info *p,
                            const struct pi_process_info *training, char *buf, size_t size)
{
    /* a rank by its rank, the one whose figures the report shows too: among ranks, "the
     * training process" would not say which */
    if (p->rank >= 0) {
        snprintf(buf, size, "rank %ld", p->rank);
        return buf;
    }
    if (p == training) /* inference is not training */
        return p->requests ? "the serving process"
               : pi_steps_by_batches(p) ? "the inference process"
                              : "the training process";
    /* a fork child that kept the training process's image: a DataLoader worker or the like */
    if (training && p->header.ppid == training->header.pid && p->command && training->command &&
        strcmp(p->command, training->command) == 0)
        return training->requests ? "a worker of the serving process"
               : pi_steps_by_batches(training) ? "a worker of the inference process"
                                     : "a worker of the training process";
    return NULL;
}

const char *pi_loop_name(const struct pi_process_info *p)
{
    if (p && p->requests)
        return "the serving loop";
    return p && pi_steps_by_batches(p) ? "the inference loop" : "the training loop";
}

uint64_t pi_steps_done_by(const struct pi_process_info *training, uint64_t ns)
{
    uint64_t n = 0;
    while (n < training->steps.count && pi_steps_end_ns(&training->steps, n) <= ns &&
           pi_steps_end_ns(&training->steps, n) != 0)
        n++;
    return n;
}

uint64_t pi_steps_started_by(const struct pi_process_info *training, uint64_t ns)
{
    uint64_t n = 0;
    while (n < training->steps.count && pi_steps_start_ns(&training->steps, n) <= ns)
        n++;
    return n;
}

void pi_printable(char *out, size_t size, const char *text, size_t length)
{
    size_t at = 0;
    for (size_t i = 0; i < length && at + 5 < size; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20 || c == 0x7f)
            at += (size_t)snprintf(out + at, size - at, "\\x%02x", c);
        else
            out[at++] = (char)c;
    }
    out[at] = '\0';
}

void pi_blocked_words(const struct pi_blocked_thread *b, char *out, size_t size)
{
    char noun[96];
    pi_in_flight_words(b->what, noun, sizeof(noun));
    const struct pi_call_site *site = b->site;
    if (!site || !site->python_count) {
        snprintf(out, size, "%s", noun);
        return;
    }
    const struct pi_site_frame *call = &site->frames[0];
    char where[300];
    snprintf(where, sizeof(where), "%s:%u", pi_call_site_short_file(call->file), call->line);
    /* the innermost frame is the user's own: its line says it all */
    if (!pi_call_site_library_file(call->file) || !site->headline)
        snprintf(out, size, "%s at %s", noun, site->headline ? site->headline : where);
    else
        snprintf(out, size, "%s in %s (%s), called at %s", noun, call->function, where,
                 site->headline);
}

/* A main thread that did not run for this long before its process ended is said so. */
#define STILL_SAID_NS 1000000000u

void pi_process_whereabouts(const struct pi_process_info *p, const struct pi_call_site *at_signal,
                            uint32_t tid, int terse, struct pi_finding *f, char *out, size_t size)
{
    char seen[800] = "";
    const struct pi_python_lines *lines = p->python_lines;
    const struct pi_blocked_thread *blocked = pi_blocked_thread_of(p, (uint32_t)p->header.pid);
    if (blocked) {
        char what[600];
        pi_blocked_words(blocked, what, sizeof(what));
        snprintf(seen, sizeof(seen), "; its main thread was blocked for %.2f s in %s",
                 (double)blocked->for_ns / 1e9, what);
        if (blocked->site && blocked->site->headline)
            snprintf(f->line, sizeof(f->line), "%s", blocked->site->headline);
        pi_finding_evidence(f, "blocked_s", (double)blocked->for_ns / 1e9, "s");
    } else if (at_signal && at_signal->python_count && at_signal->headline) {
        snprintf(seen, sizeof(seen), "; the signal found thread %" PRIu32 " at %s", tid,
                 at_signal->headline);
        snprintf(f->line, sizeof(f->line), "%s", at_signal->headline);
    } else if (lines && lines->last.file && lines->last.function) {
        snprintf(seen, sizeof(seen), "; its main thread was last seen at %s:%u in %s",
                 lines->last.file, lines->last.line, lines->last.function);
    }
    /* a job ended by a time limit, or by hand, after it hung: the line above is where its
     * thread last ran, not where it spent its last seconds (where the blocked call is not
     * known, which says it) */
    size_t at = strlen(seen);
    if (p->main_still_ns >= STILL_SAID_NS) {
        if (!blocked)
            snprintf(seen + at, sizeof(seen) - at,
                 terse ? ", not running in its last %.2f s"
                       : "; its main thread had not run in its last %.2f s (its CPU clock stood "
                         "still: blocked, waiting or hung)",
                 (double)p->main_still_ns / 1e9);
        pi_finding_evidence(f, "main_still_s", (double)p->main_still_ns / 1e9, "s");
    }
    pi_printable(out, size, seen, strlen(seen));
}
