/*
 * output_handoff.h - the output directory given by `profinject attach` as a
 * descriptor, for a process in another mount namespace (a container), where
 * the host's path means nothing (profinject/attach_protocol.h).
 */
#ifndef PI_OUTPUT_HANDOFF_H
#define PI_OUTPUT_HANDOFF_H

struct pi_config;

/**
 * pi_output_handoff_take - when PI_OUTPUT_HANDOFF_ENV names a socket, take
 * the directory's descriptor and our pid as the attacher sees it from it
 * into @config, and remove the variable (children started with exec have
 * nothing to take). Prints why when the hand-over fails: the process then
 * records nothing rather than into its own file system.
 * Return: 0 (nothing to take, or taken), -1 when it failed.
 */
int pi_output_handoff_take(struct pi_config *config);

#endif
