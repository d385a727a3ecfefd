/*
 * child_status.h - how a process's children ended, as its wait calls said
 * (PI_REC_CHILD_STATUS): the one account of a child killed where no code
 * of its own ran.
 */
#ifndef PI_CHILD_STATUS_H
#define PI_CHILD_STATUS_H

#include "analysis/model/model.h"

/* pi_child_status_add - @parent reaped @pid, which ended with wait @status, at @ns */
void pi_child_status_add(struct pi_process_info *parent, uint32_t pid, uint32_t status,
                         uint64_t ns);

/* pi_child_status_of - how @child ended by its parent's wait in @analysis, or NULL where its
 * parent is not traced or never reaped it (after @child's last record) */
const struct pi_child_status *pi_child_status_of(const struct pi_analysis *analysis,
                                                 const struct pi_process_info *child);

#endif
