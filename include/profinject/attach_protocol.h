/*
 * attach_protocol.h - what `profinject attach` and the library agree on when
 * the process lives in other namespaces (a container): its files are not
 * ours to name, so the output directory is handed over as a descriptor.
 */
#ifndef PROFINJECT_ATTACH_PROTOCOL_H
#define PROFINJECT_ATTACH_PROTOCOL_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

/* An abstract unix socket (no file; in the process's network namespace) on
 * which the attacher hands over the output directory: its name, without the
 * leading NUL. The library connects once, at start, and forgets the name. */
#define PI_OUTPUT_HANDOFF_ENV "PROFINJECT_OUTPUT_HANDOFF"

/* The message that comes with the directory's descriptor (SCM_RIGHTS). */
struct pi_output_handoff {
    int32_t host_pid; /* the process's pid as the attacher sees it */
};

/* The message with room for the one descriptor, laid out as sendmsg and
 * recvmsg take it: both sides make theirs with pi_output_handoff_envelope. */
struct pi_output_handoff_envelope {
    struct pi_output_handoff message;
    struct iovec data;
    struct msghdr msg;
    union { /* last: some compilers see CMSG_SPACE as a run-time size */
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
};

/* pi_output_handoff_envelope - @e emptied and wired up; its msghdr, for sendmsg or recvmsg */
static inline struct msghdr *pi_output_handoff_envelope(struct pi_output_handoff_envelope *e)
{
    memset(e, 0, sizeof(*e));
    e->data = (struct iovec){&e->message, sizeof(e->message)};
    e->msg.msg_iov = &e->data;
    e->msg.msg_iovlen = 1;
    e->msg.msg_control = e->control.buf;
    e->msg.msg_controllen = sizeof(e->control.buf);
    return &e->msg;
}

/* How long the library waits for the descriptor, and the attacher for the library. */
#define PI_OUTPUT_HANDOFF_TIMEOUT_MS 5000

#endif
