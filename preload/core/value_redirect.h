/*
 * value_redirect.h - one pointer value to replace by another wherever a
 * module keeps it: a CUDA driver entry point and the wrapper that stands in
 * for it (cuda/entry_points.h lists them, control/attach_bindings.h writes
 * them over the copies a process took before attach).
 */
#ifndef PI_VALUE_REDIRECT_H
#define PI_VALUE_REDIRECT_H

struct pi_value_redirect {
    void *from;
    void *to;
};

#endif
