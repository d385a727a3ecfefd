/* guard.c - the re-entrancy guard's per-thread depth (see guard.h). */
#include "guard.h"

/* initial-exec: read on every hook without a call into the dynamic linker */
__thread int pi_guard_depth __attribute__((tls_model("initial-exec")));
