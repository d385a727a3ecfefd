/*
 * kernel_labels.h - the name each kernel goes by in every report: its
 * short name (analysis/sites/kernel_names.h), made once over all the
 * kernels of the analysis (their launches' names and their GPU times'),
 * so that the text, HTML and JSON reports call a kernel alike and no two
 * kernels the same.
 */
#ifndef PI_KERNEL_LABELS_H
#define PI_KERNEL_LABELS_H

#include <stddef.h>

#include "analysis/model/model.h"
#include "analysis/sites/kernel_names.h"

struct pi_kernel_labels {
    const char **full;                       /* the demangled names, borrowed */
    char (*short_names)[PI_KERNEL_SHORT_NAME]; /* one each */
    size_t count;
};

/* pi_kernel_entry - whether @entry is a kernel's: its launches (group "kernel") or, under
 * the name the GPU ran it by, its GPU times (group "gpu", class "kernel") */
int pi_kernel_entry(const struct pi_latency_entry *entry);

/* pi_kernel_labels_make - the labels of every kernel of @analysis into @labels (none without
 * memory: the full names are used then) */
void pi_kernel_labels_make(const struct pi_analysis *analysis, struct pi_kernel_labels *labels);

/* pi_kernel_label - the short name of the kernel @full, or @full itself where it has none */
const char *pi_kernel_label(const struct pi_kernel_labels *labels, const char *full);

void pi_kernel_labels_free(struct pi_kernel_labels *labels);

#endif
