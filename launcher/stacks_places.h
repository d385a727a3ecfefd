/*
 * stacks_places.h - `profinject stacks --all`: after every process's
 * answer, their main threads grouped by where they are (the same frames,
 * blocked in the same kind of wait), the smallest groups first: in a hung
 * distributed job the ranks that wait in a collective make one group, and
 * the rank that never came to it stands alone above them.
 */
#ifndef PI_LAUNCHER_STACKS_PLACES_H
#define PI_LAUNCHER_STACKS_PLACES_H

#include <stdio.h>

/* pi_stacks_place_note - keep where the main thread of @pid is, from its answer @reply */
void pi_stacks_place_note(int pid, const char *reply);

/* pi_stacks_places_print - the groups, when two processes or more answered; forgets them */
void pi_stacks_places_print(FILE *out);

#endif
