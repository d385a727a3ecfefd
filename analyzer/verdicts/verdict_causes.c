/*
 * verdict_causes.c - a cause ranks above its symptoms. Some findings are
 * waits that another finding explains: the collectives of every rank wait
 * for the straggler (and show as lock or synchronisation waits on the
 * others), and a loop that synchronises with a busy GPU waits for that GPU.
 * Scores alone would put the larger share, the wait, first; acting on it
 * changes nothing until the cause is fixed. Likewise a serving loop that
 * computes mostly in Python's garbage collector, its tokenizer, or
 * generate()'s own work between forward passes: that is the cause to act
 * on, the computing its symptom.
 */
#include <stdio.h>
#include <string.h>

#include "verdict.h"

/* Whether @cause explains @symptom: a wait that acting on @cause removes. */
static int explains(const struct pi_finding *cause, const struct pi_finding *symptom)
{
    if ((strcmp(cause->kind, "gc-bound") == 0 || strcmp(cause->kind, "token-overhead") == 0 ||
         strcmp(cause->kind, "tokenizer-bound") == 0) &&
        strcmp(symptom->kind, "compute-bound") == 0)
        return cause->pid == symptom->pid && cause->score >= symptom->score / 2;
    int wait = strcmp(symptom->kind, "lock-bound") == 0 || strcmp(symptom->kind, "sync-bound") == 0;
    if (!wait)
        return 0;
    /* the others' waits; the straggler's own waits are its own */
    if (strcmp(cause->kind, "straggler") == 0)
        return cause->pid != symptom->pid;
    return strcmp(cause->kind, "gpu-bound") == 0 && strcmp(symptom->kind, "sync-bound") == 0 &&
           cause->pid == symptom->pid;
}

/* Put @f[@i] at @out[*k], then the symptoms that it is the last cause of, in their order. */
static void place(const struct pi_finding *f, const int *cause_of, int i, struct pi_finding *out,
                  int *k)
{
    out[(*k)++] = f[i];
    for (int s = 0; s < i; s++) {
        if (cause_of[s] != i)
            continue;
        struct pi_finding *symptom = &out[*k];
        place(f, cause_of, s, out, k);
        size_t used = strlen(symptom->summary);
        snprintf(symptom->summary + used, sizeof(symptom->summary) - used,
                 strcmp(symptom->kind, "compute-bound") == 0
                     ? "; much of it explained by the %s finding of pid %d above"
                     : "; a wait behind the %s finding of pid %d above",
                 f[i].kind, f[i].pid);
    }
}

void pi_verdict_causes_first(struct pi_finding *f, int n)
{
    struct pi_finding out[PI_MAX_FINDINGS];
    int cause_of[PI_MAX_FINDINGS], moved = 0, k = 0;
    if (n > PI_MAX_FINDINGS)
        return;
    /* a symptom goes after the last finding below it that explains it */
    for (int i = 0; i < n; i++) {
        cause_of[i] = -1;
        for (int j = i + 1; j < n; j++)
            if (explains(&f[j], &f[i]))
                cause_of[i] = j;
        moved |= cause_of[i] >= 0;
    }
    if (!moved)
        return;
    for (int i = 0; i < n; i++)
        if (cause_of[i] < 0)
            place(f, cause_of, i, out, &k);
    memcpy(f, out, sizeof(*f) * (size_t)n);
}
