/*
 * lineage.h - where a fork child's inherited ids are defined: its parent's
 * file (PI_HDR_INHERITED names it), found among the inputs or beside the
 * child's file, read once as far as the children need and shared by them.
 * A parent that is itself a fork child is resolved the same way. A child
 * whose parent's file is missing or unreadable is still read; its
 * inherited ids stay unresolved and the reason is kept for the report.
 *
 * Safe to use from several threads: the parents are loaded under a lock,
 * and what they defined is only read afterwards.
 */
#ifndef PI_LINEAGE_H
#define PI_LINEAGE_H

#include <stddef.h>

struct pi_lineage;
struct pi_reader;

/* pi_lineage_new - for the files @paths (the inputs, where parents are looked for first) */
struct pi_lineage *pi_lineage_new(char *const *paths, size_t count);

void pi_lineage_free(struct pi_lineage *lineage);

/**
 * pi_lineage_want - before any pi_lineage_attach: @child (opened, nothing read yet) will
 * need its parent's ids below its bound, so that each parent is read once, as far as its
 * last child needs
 */
void pi_lineage_want(struct pi_lineage *lineage, const struct pi_reader *child);

/**
 * pi_lineage_attach - hand @child its parent's definitions (pi_reader_inherit)
 * @why: receives why they cannot be, on failure
 * Return: 0 (also for a file that inherits nothing), or -1: its inherited ids stay
 * unresolved.
 */
int pi_lineage_attach(struct pi_lineage *lineage, struct pi_reader *child, char *why,
                      size_t why_size);

#endif
