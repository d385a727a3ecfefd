/*
 * host_memory.h - the host memory of the whole process tree: the most RSS
 * its processes held at one moment, from each process's RSS samples (a
 * process counts from its first sample to its end). A sum of each
 * process's own peak would add up peaks that never met: 79 short
 * processes of a pyenv shim chain, one after another, read as 268 MB where
 * no moment held more than 14 MB.
 */
#ifndef PI_HOST_MEMORY_H
#define PI_HOST_MEMORY_H

#include "analysis/model/model.h"

/* pi_host_memory_finish - compute the tree's peak once every file is read */
void pi_host_memory_finish(struct pi_analysis *analysis);

#endif
