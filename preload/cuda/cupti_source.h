/*
 * cupti_source.h - the CUPTI activity source of GPU time (cupti_source.c).
 */
#ifndef PI_CUPTI_SOURCE_H
#define PI_CUPTI_SOURCE_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

/**
 * pi_cupti_start - load libcupti and start activity recording
 * @reason: receives what happened, for the GPU_TIMING record
 * Return: 0 when recording, else CUPTI's error code (-1 when not loadable).
 */
int pi_cupti_start(char *reason, size_t size);

/* pi_cupti_push, pi_cupti_pop - our correlation id around one launch or copy */
void pi_cupti_push(uint64_t correlation);
void pi_cupti_pop(void);

/* pi_cupti_flush - have CUPTI hand over the records it holds */
void pi_cupti_flush(void);

/* CUPTI's buffer callbacks. */
void pi_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void pi_cupti_buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid);

#endif
