/*
 * elf_symbols.h - the dynamic symbols of a shared object read from its file:
 * what attach needs to call functions of a C library that is not ours (a
 * container's), where dlsym in this process would find the wrong one.
 */
#ifndef PI_LAUNCHER_ELF_SYMBOLS_H
#define PI_LAUNCHER_ELF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct pi_elf_file {
    const unsigned char *data;
    size_t size;
    uint64_t first_load_vaddr; /* p_vaddr of the first PT_LOAD, page aligned */
};

/**
 * pi_elf_open - check that @data (@size bytes) is a 64-bit x86-64 ELF file
 * with dynamic symbols; fills @elf.
 * Return: 0, or -1 when it is not one.
 */
int pi_elf_open(const unsigned char *data, size_t size, struct pi_elf_file *elf);

/**
 * pi_elf_symbol - the address (relative to the load base) of the defined
 * function @name, its default version preferred over older ones
 * (dlopen@@GLIBC_2.34 over dlopen@GLIBC_2.2.5).
 * Return: the value, or 0 when the file does not define it.
 */
uint64_t pi_elf_symbol(const struct pi_elf_file *elf, const char *name);

/**
 * pi_elf_glibc_minor - the highest GLIBC_2.N version the file defines
 * Return: N, or -1 when it defines none (not glibc).
 */
int pi_elf_glibc_minor(const struct pi_elf_file *elf);

#endif
