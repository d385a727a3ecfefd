/*
 * cupti_api.h - libcupti, found at run time: the functions profinject
 * calls, and whether another CUPTI client has shown itself.
 *
 * The library is never linked: the copy the process already loaded (a
 * framework's own, e.g. PyTorch's nvidia/cu13/lib) is used when there is
 * one, so that one CUPTI serves the process; else it is dlopened locally.
 */
#ifndef PI_CUPTI_API_H
#define PI_CUPTI_API_H

#include <cupti.h>
#include <stddef.h>

struct pi_cupti_api {
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*timestamp)(uint64_t *);
    CUptiResult (*describe)(CUptiResult, const char **);
    /* optional: newer CUPTI only */
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                                CUpti_SubscriberParams *);
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*timestamp_callback)(CUpti_TimestampCallbackFunc);
    CUptiResult (*runtime_api)(CUpti_CallbackId, uint8_t);
    CUptiResult (*driver_api)(CUpti_CallbackId, uint8_t);
    CUptiResult (*thread_id_type)(CUpti_ActivityThreadIdType);
    CUptiResult (*get_thread_id_type)(CUpti_ActivityThreadIdType *);
};

extern struct pi_cupti_api pi_cupti;

/**
 * pi_cupti_load - find libcupti and its activity API
 * @reason: receives why not, when it fails
 * Return: 0 when every required function is there.
 */
int pi_cupti_load(char *reason, size_t size);

/* pi_cupti_error_text - "error N (NAME)" for a CUPTI result, into @buf */
const char *pi_cupti_error_text(CUptiResult code, char *buf, size_t size);

/**
 * pi_cupti_locate - where libcupti is, found the way pi_cupti_load would
 * find it but without loading it: the process's own copy, else beside the
 * runtime at @runtime_path; the path and how it was found, into @out
 */
void pi_cupti_locate(const char *runtime_path, char *out, size_t size);

/* pi_cupti_real - the real definition of CUPTI function @name (for the client hooks) */
void *pi_cupti_real(const char *name);

/**
 * pi_cupti_note_client - another CUPTI client made call @what; remembered
 * for the first time GPU timing chooses its source
 */
void pi_cupti_note_client(const char *what);

/* pi_cupti_other_client - the call another client made, NULL if none so far */
const char *pi_cupti_other_client(void);

#endif
