/*
 * attach_protocol.h - what `profinject attach` and the library agree on when
 * the process lives in other namespaces (a container): its files are not
 * ours to name, so the output directory is handed over as a descriptor.
 */
#ifndef PROFINJECT_ATTACH_PROTOCOL_H
#define PROFINJECT_ATTACH_PROTOCOL_H

#include <stdint.h>

/* An abstract unix socket (no file; in the process's network namespace) on
 * which the attacher hands over the output directory: its name, without the
 * leading NUL. The library connects once, at start, and forgets the name. */
#define PI_OUTPUT_HANDOFF_ENV "PROFINJECT_OUTPUT_HANDOFF"

/* The message that comes with the directory's descriptor (SCM_RIGHTS). */
struct pi_output_handoff {
    int32_t host_pid; /* the process's pid as the attacher sees it */
};

/* How long the library waits for the descriptor, and the attacher for the library. */
#define PI_OUTPUT_HANDOFF_TIMEOUT_MS 5000

#endif
