/*
 * attach_bindings.h - when the library is loaded into a running process
 * (profinject attach) rather than preloaded, calls the process already
 * bound go through its modules' GOT entries straight to libc and the CUDA
 * libraries. Binding points those entries at our hooks; unbinding puts
 * the saved values back.
 */
#ifndef PI_ATTACH_BINDINGS_H
#define PI_ATTACH_BINDINGS_H

#include <stddef.h>

#include "core/value_redirect.h"

/* pi_attach_requested - nonzero when this load came from profinject attach */
int pi_attach_requested(void);

/* pi_attach_bind - redirect the GOT entries of every module not yet seen;
 * cheap when no module was loaded since the last call. Return: entries changed. */
int pi_attach_bind(void);

/* pi_attach_modules_changed - nonzero when a module was loaded since the last bind */
int pi_attach_modules_changed(void);

/* pi_attach_redirect_values - replace every pointer-sized, aligned word
 * equal to a @from in the writable data (not RELRO) of the loaded modules,
 * except this library and the module at @owner_base (the one the values
 * point into), saving each for pi_attach_unbind; @bytes_searched, when
 * not NULL, gets how much data was read. Return: words changed. */
int pi_attach_redirect_values(const struct pi_value_redirect *redirects, size_t count,
                              const void *owner_base, size_t *bytes_searched);

/* pi_attach_unbind - restore every redirected entry; no more binding after it */
void pi_attach_unbind(void);

/* pi_attach_bound - nonzero while entries are redirected */
int pi_attach_bound(void);

#endif
