/*
 * symbolizer.h - naming native frames offline: the function that holds an
 * offset of a module, from the module's symbol tables (or those of its
 * debug file) with elfutils' libdwfl. Modules are found by the path the
 * recorder saw, checked against its build id, else under
 * /usr/lib/debug/.build-id by build id. Nothing is fetched from a network.
 */
#ifndef PI_SYMBOLIZER_H
#define PI_SYMBOLIZER_H

#include <stddef.h>
#include <stdint.h>

/**
 * pi_symbolize - the mangled name of the function of a module at @offset
 * @path: where the module was when recorded
 * @build_id: its GNU build id (@build_id_length bytes; 0: none recorded)
 * @offset: an address in the module's own ELF address space
 * @name: receives the symbol's name
 * @size: size of @name
 * @symbol_offset: receives @offset minus the symbol's start
 * Return: 1 when named, 0 when the module or a symbol for @offset is not found.
 */
int pi_symbolize(const char *path, const unsigned char *build_id, size_t build_id_length,
                 uint64_t offset, char *name, size_t size, uint64_t *symbol_offset);

/* pi_symbolizer_free - close every module opened so far (also at exit: the
 * modules stay open across analyses, which name the same libraries) */
void pi_symbolizer_free(void);

#endif
