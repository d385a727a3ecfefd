/*
 * fatal_site.h - where a fatal signal found the thread it was delivered
 * to: its Python and native frames, as a call site of the signal's record
 * (PI_REC_FATAL_SIGNAL), read once the rest of the trace is out.
 */
#ifndef PI_FATAL_SITE_H
#define PI_FATAL_SITE_H

/* pi_fatal_site_start - read the frames at a fatal signal from now on, and load the unwinder
 * once the process has settled (library constructor) */
void pi_fatal_site_start(void);

#endif
