/*
 * exec_images.h - the images of one process that went on in execs: the
 * same pid in the same PID namespace on the same host, a file each. The
 * text report marks each "[exec 2/4]".
 */
#ifndef PI_EXEC_IMAGES_H
#define PI_EXEC_IMAGES_H

#include <stddef.h>

#include "analysis/model/model.h"

/* The place of a process's image in its chain: images 0 when it is alone. */
struct pi_exec_image {
    size_t index;  /* from 0: the images of the chain that started before it */
    size_t images; /* in the chain */
};

/**
 * pi_exec_images - the place of each of @analysis's processes in its chain, in process order,
 * found by one sort (a scan of every process for each was 10^8 comparisons for 10,000 ranks)
 * Return: an array of process_count places for the caller to free, or NULL (out of memory).
 */
struct pi_exec_image *pi_exec_images(const struct pi_analysis *analysis);

#endif
