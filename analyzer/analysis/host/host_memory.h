/*
 * host_memory.h - the host memory of the whole process tree: the most its
 * processes held at one moment, from each process's samples (a process
 * counts from its first sample to its end). A sum of each process's own
 * peak would add up peaks that never met: 79 short processes of a pyenv
 * shim chain, one after another, read as 268 MB where no moment held more
 * than 14 MB.
 *
 * Two sums: of the processes' RSS, and (format 8) of their PSS, which
 * divides each shared page among the processes that map it. RSS counts
 * the pages a DataLoader worker shares with its parent once per process:
 * the example job's tree read 2.3 times its PSS. The PSS sum is the
 * tree's figure where the trace has one.
 */
#ifndef PI_HOST_MEMORY_H
#define PI_HOST_MEMORY_H

#include "analysis/model/model.h"

/* pi_host_memory_finish - compute the tree's peak once every file is read */
void pi_host_memory_finish(struct pi_analysis *analysis);

/* What the tree held at one moment: the latest RSS sample of each process alive then. */
struct pi_tree_memory {
    uint64_t rss_bytes;
    uint32_t alive; /* processes counted */
};

/* pi_host_memory_at - the tree's RSS at @ns (a process counts from its first sample to its
 * end, @ns included) */
struct pi_tree_memory pi_host_memory_at(const struct pi_analysis *analysis, uint64_t ns);

#endif
