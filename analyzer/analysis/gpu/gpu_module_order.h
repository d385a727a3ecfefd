/*
 * gpu_module_order.h - the module table's rows (gpu_modules.h) as a tree
 * is read: each path after its parent, siblings by GPU time, most first.
 */
#ifndef PI_GPU_MODULE_ORDER_H
#define PI_GPU_MODULE_ORDER_H

#include "analysis/gpu/gpu_modules.h"

/* pi_gpu_modules_sort - put @modules' rows in tree order; 0, or -1 without memory (the rows
 * are left as they were) */
int pi_gpu_modules_sort(struct pi_gpu_modules *modules);

#endif
