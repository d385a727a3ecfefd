/*
 * control_channel.h - opening and closing capture windows in a running
 * process: a unix socket per process in a directory only its user can
 * use, and a real-time signal as the fallback where that directory is not
 * shared (another mount namespace).
 */
#ifndef PI_CONTROL_CHANNEL_H
#define PI_CONTROL_CHANNEL_H

#include "profinject/control_protocol.h"

/* pi_control_start - create this process's socket and its listening thread */
void pi_control_start(void);

/* pi_control_after_fork - the child gets a socket of its own */
void pi_control_after_fork(void);

/* pi_control_stop - remove the socket at the end of the process */
void pi_control_stop(void);

/* pi_capture_set - open (1) or close (0) the capture window; closing writes everything out */
void pi_capture_set(int on);

#endif
