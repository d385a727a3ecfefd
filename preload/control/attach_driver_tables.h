/*
 * attach_driver_tables.h - the CUDA driver entry points a running process
 * resolved before attach. cudart, PyTorch's driver API, cuBLAS and Triton
 * call cuGetProcAddress once and keep what it returns in their own
 * tables, out of reach of the GOT; attach finds those pointers in the
 * modules' data and points them at our wrappers.
 */
#ifndef PI_ATTACH_DRIVER_TABLES_H
#define PI_ATTACH_DRIVER_TABLES_H

/* pi_attach_driver_tables - redirect the driver pointers held in loaded
 * modules' data, when the driver is loaded; pi_attach_unbind restores them.
 * Return: pointers changed. */
int pi_attach_driver_tables(void);

#endif
