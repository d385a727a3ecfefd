/*
 * cupti_clients.c - another CUPTI client in the process (torch.profiler's
 * Kineto, a tool of the application's own) gets CUPTI as if profinject
 * were not there: CUPTI takes one subscriber and one pair of buffer
 * callbacks (cupti_callbacks.h, cupti_activity.h), so when such a client
 * subscribes or registers its callbacks, our session hands everything
 * over first and GPU time goes on with event pairs (gpu_timing.h). Its
 * call then reaches CUPTI unchanged.
 */
#include <cupti.h>

#include "core/hook.h"
#include "cupti_api.h"
#include "gpu_timing.h"

PI_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
                                              CUpti_CallbackFunc callback, void *userdata)
{
    pi_gpu_timing_yield_cupti("cuptiSubscribe");
    CUptiResult (*real)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *) =
        (CUptiResult(*)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))pi_cupti_real(
            "cuptiSubscribe");
    return real ? real(subscriber, callback, userdata) : CUPTI_ERROR_NOT_INITIALIZED;
}

PI_EXPORT CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber,
                                                 CUpti_CallbackFunc callback, void *userdata,
                                                 CUpti_SubscriberParams *params)
{
    pi_gpu_timing_yield_cupti("cuptiSubscribe_v2");
    CUptiResult (*real)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                        CUpti_SubscriberParams *) =
        (CUptiResult(*)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                        CUpti_SubscriberParams *))pi_cupti_real("cuptiSubscribe_v2");
    return real ? real(subscriber, callback, userdata, params) : CUPTI_ERROR_NOT_INITIALIZED;
}

PI_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed)
{
    pi_gpu_timing_yield_cupti("cuptiActivityRegisterCallbacks");
    CUptiResult (*real)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) =
        (CUptiResult(*)(CUpti_BuffersCallbackRequestFunc,
                        CUpti_BuffersCallbackCompleteFunc))pi_cupti_real(
            "cuptiActivityRegisterCallbacks");
    return real ? real(requested, completed) : CUPTI_ERROR_NOT_INITIALIZED;
}
