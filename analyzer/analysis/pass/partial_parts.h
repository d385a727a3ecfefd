/*
 * partial_parts.h - the parts of a process record a partial file holds
 * (partial_process.h), each an optional structure the model points at:
 * written, or read into a zeroed one, by the same walk.
 */
#ifndef PI_PARTIAL_PARTS_H
#define PI_PARTIAL_PARTS_H

#include "analysis/model/model.h"
#include "analysis/pass/partial_codec.h"

/* A count kept in a field narrower than size_t, of a fixed array of @most. */
#define COUNT_OF(c, field, most)                                                                   \
    do {                                                                                           \
        size_t n_ = (size_t)(field);                                                               \
        pi_codec_count(c, &n_, most, 1);                                                           \
        (field) = n_;                                                                              \
    } while (0)

#define ARRAY(c, array, count) pi_codec_array(c, (void **)&(array), &(count), sizeof(*(array)))
#define PRESENT(c, object) pi_codec_present(c, (void **)&(object), sizeof(*(object)))
#define U64S(c, array) pi_codec_u64s(c, array, sizeof(array) / sizeof((array)[0]))

/* GPU figures (partial_gpu.c) */
void pi_partial_gpu_memory(struct pi_codec *c, struct pi_gpu_memory **memory);
void pi_partial_gpu_timeline(struct pi_codec *c, struct pi_gpu_timeline **timeline);
void pi_partial_collectives(struct pi_codec *c, struct pi_collectives **collectives);
void pi_partial_gemm(struct pi_codec *c, struct pi_gemm **gemm);

/* host and sampled figures (partial_host.c) */
void pi_partial_spans(struct pi_codec *c, struct pi_spans **spans);
void pi_partial_evaluation_loops(struct pi_codec *c, struct pi_evaluation_loops **loops);
void pi_partial_requests(struct pi_codec *c, struct pi_requests **requests);
void pi_partial_python_lines(struct pi_codec *c, struct pi_python_lines **lines);
void pi_partial_phases(struct pi_codec *c, struct pi_phases **phases);
void pi_partial_native_time(struct pi_codec *c, struct pi_native_time **native);

#endif
