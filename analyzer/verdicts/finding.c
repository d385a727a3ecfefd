/*
 * finding.c - what every verdict rule shares: the numbers behind a finding.
 */
#include "verdicts/verdict.h"

void pi_finding_evidence(struct pi_finding *f, const char *name, double value, const char *unit)
{
    if (f->evidence_count < PI_MAX_EVIDENCE)
        f->evidence[f->evidence_count++] = (struct pi_evidence){name, value, unit};
}
