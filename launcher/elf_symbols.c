/* elf_symbols.c - see elf_symbols.h. Every offset read from the file is
 * checked against its size: the file is another process's, not trusted. */
#include "elf_symbols.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

/* @count entries of @entry_size bytes at @offset, inside the file and
 * aligned for their type (the file is mapped at a page boundary) */
static const void *table_of(const struct pi_elf_file *elf, uint64_t offset, uint64_t count,
                            uint64_t entry_size, uint64_t alignment)
{
    if (entry_size == 0 || count > elf->size / entry_size || offset > elf->size ||
        count * entry_size > elf->size - offset ||
        (uintptr_t)(elf->data + offset) % alignment != 0)
        return NULL;
    return elf->data + offset;
}
#define table(elf, offset, count, type) \
    ((const type *)table_of(elf, offset, count, sizeof(type), _Alignof(type)))

static const Elf64_Shdr *section_of_type(const struct pi_elf_file *elf, uint32_t type)
{
    const Elf64_Ehdr *h = (const Elf64_Ehdr *)elf->data;
    const Elf64_Shdr *s = table(elf, h->e_shoff, h->e_shnum, Elf64_Shdr);
    for (unsigned i = 0; s && i < h->e_shnum; i++)
        if (s[i].sh_type == type)
            return &s[i];
    return NULL;
}

static const Elf64_Shdr *section_at(const struct pi_elf_file *elf, uint32_t index)
{
    const Elf64_Ehdr *h = (const Elf64_Ehdr *)elf->data;
    const Elf64_Shdr *s = table(elf, h->e_shoff, h->e_shnum, Elf64_Shdr);
    return s && index < h->e_shnum ? &s[index] : NULL;
}

/* the NUL-terminated string at @offset of string table @strings, or NULL */
static const char *string_at(const struct pi_elf_file *elf, const Elf64_Shdr *strings,
                             uint64_t offset)
{
    if (!strings || offset >= strings->sh_size ||
        !table(elf, strings->sh_offset, strings->sh_size, char))
        return NULL;
    const char *s = (const char *)elf->data + strings->sh_offset + offset;
    return memchr(s, '\0', strings->sh_size - offset) ? s : NULL;
}

int pi_elf_open(const unsigned char *data, size_t size, struct pi_elf_file *elf)
{
    const Elf64_Ehdr *h = (const Elf64_Ehdr *)data;
    if (size < sizeof(*h) || (uintptr_t)data % _Alignof(Elf64_Ehdr) != 0 ||
        memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 ||
        h->e_ident[EI_CLASS] != ELFCLASS64 || h->e_machine != EM_X86_64)
        return -1;
    *elf = (struct pi_elf_file){data, size, 0};
    const Elf64_Phdr *p = table(elf, h->e_phoff, h->e_phnum, Elf64_Phdr);
    for (unsigned i = 0; p && i < h->e_phnum; i++)
        if (p[i].p_type == PT_LOAD) {
            elf->first_load_vaddr = p[i].p_vaddr & ~(uint64_t)0xfff;
            break;
        }
    return section_of_type(elf, SHT_DYNSYM) ? 0 : -1;
}

uint64_t pi_elf_symbol(const struct pi_elf_file *elf, const char *name)
{
    const Elf64_Shdr *dynsym = section_of_type(elf, SHT_DYNSYM);
    const Elf64_Shdr *versym = section_of_type(elf, SHT_GNU_versym);
    const Elf64_Shdr *strings = dynsym ? section_at(elf, dynsym->sh_link) : NULL;
    uint64_t count = dynsym ? dynsym->sh_size / sizeof(Elf64_Sym) : 0;
    const Elf64_Sym *symbols = dynsym ? table(elf, dynsym->sh_offset, count, Elf64_Sym)
                                      : NULL;
    const Elf64_Half *versions =
        versym ? table(elf, versym->sh_offset, count, Elf64_Half) : NULL;
    uint64_t found = 0;
    for (uint64_t i = 0; symbols && i < count; i++) {
        const Elf64_Sym *s = &symbols[i];
        if (s->st_shndx == SHN_UNDEF || s->st_value == 0 || ELF64_ST_TYPE(s->st_info) != STT_FUNC)
            continue;
        const char *symbol_name = string_at(elf, strings, s->st_name);
        if (!symbol_name || strcmp(symbol_name, name) != 0)
            continue;
        found = s->st_value;
        if (!versions || !(versions[i] & 0x8000))
            break; /* the default version; a hidden (older) one is kept only if none is */
    }
    return found ? found - elf->first_load_vaddr : 0;
}

int pi_elf_glibc_minor(const struct pi_elf_file *elf)
{
    const Elf64_Shdr *verdef = section_of_type(elf, SHT_GNU_verdef);
    const Elf64_Shdr *strings = verdef ? section_at(elf, verdef->sh_link) : NULL;
    int highest = -1;
    uint64_t offset = verdef ? verdef->sh_offset : 0;
    for (uint64_t n = 0; verdef && n < verdef->sh_info && n < 4096; n++) {
        const Elf64_Verdef *d = table(elf, offset, 1, Elf64_Verdef);
        if (!d)
            break;
        const Elf64_Verdaux *aux = table(elf, offset + d->vd_aux, 1, Elf64_Verdaux);
        const char *version = aux ? string_at(elf, strings, aux->vda_name) : NULL;
        int minor;
        if (version && strncmp(version, "GLIBC_2.", 8) == 0 &&
            (minor = atoi(version + 8)) > highest)
            highest = minor;
        if (d->vd_next == 0)
            break;
        offset += d->vd_next;
    }
    return highest;
}
