/* call_sites.c - call sites from stack definitions (see call_sites.h). */
#define _GNU_SOURCE
#include "call_sites.h"

#include "native_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sites/demangle.h"
#include "analysis/sites/native_names.h"
#include "analysis/sites/symbolizer.h"
#include "profinject/python_files.h"

#define NAME_SIZE 1024

static char *copy(const char *text)
{
    return strdup(text ? text : "");
}

const char *pi_call_site_base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : (path ? path : "?");
}

int pi_call_site_library_file(const char *file)
{
    return file && (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
                    strstr(file, "/lib/python3") || strncmp(file, "<frozen ", 8) == 0);
}

/* "torch/nn/modules/module.py" for a file of an installed package,
 * "threading.py" for one of the standard library, else the path as recorded */
const char *pi_call_site_short_file(const char *file)
{
    return pi_python_short_file(file);
}

void pi_call_site_frame_text(const struct pi_site_frame *f, char *out, size_t size)
{
    if (f->python)
        snprintf(out, size, "%s:%u in %s", pi_call_site_short_file(f->file), f->line, f->function);
    else if (f->symbol && f->has_symbol_offset)
        snprintf(out, size, "%s+0x%llx (%s)", f->symbol, (unsigned long long)f->symbol_offset,
                 pi_call_site_base_name(f->module));
    else if (f->symbol)
        snprintf(out, size, "%s (%s)", f->symbol, pi_call_site_base_name(f->module));
    else
        snprintf(out, size, "0x%llx (%s)", (unsigned long long)f->offset, pi_call_site_base_name(f->module));
}

void pi_call_site_frame_short_text(const struct pi_site_frame *f, char *out, size_t size)
{
    if (f->python || !f->symbol) {
        pi_call_site_frame_text(f, out, size);
        return;
    }
    char name[4 * PI_NATIVE_SHORT_CHARS];
    pi_native_short_name(f->symbol, name, sizeof(name));
    snprintf(out, size, "%s (%s)", name, pi_call_site_base_name(f->module));
}

static struct pi_site_frame *add_frame(struct pi_call_site *site)
{
    struct pi_site_frame *grown = realloc(site->frames, (site->count + 1) * sizeof(*grown));
    if (!grown)
        return NULL;
    site->frames = grown;
    struct pi_site_frame *f = &grown[site->count++];
    memset(f, 0, sizeof(*f));
    return f;
}

/* Format 1: "symbol+0xoff (library)" or "0xoff (library)", joined by ';'. */
static void parse_text(struct pi_call_site *site, const char *text)
{
    char *all = copy(text), *save = NULL;
    for (char *part = strtok_r(all, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
        struct pi_site_frame *f = add_frame(site);
        if (!f)
            break;
        char *open = strrchr(part, '(');
        if (open && open > part && open[-1] == ' ') {
            open[-1] = '\0';
            char *close = strchr(open, ')');
            if (close)
                *close = '\0';
            f->module = copy(open + 1);
        } else {
            f->module = copy("?");
        }
        f->build_id = copy("");
        char *plus = strstr(part, "+0x");
        if (strncmp(part, "0x", 2) == 0) {
            f->offset = strtoull(part, NULL, 16);
            f->has_offset = 1;
        } else {
            if (plus) {
                *plus = '\0';
                f->symbol_offset = strtoull(plus + 1, NULL, 16);
                f->has_symbol_offset = 1;
            }
            char name[NAME_SIZE];
            f->symbol = copy(pi_demangle(part, name, sizeof(name)));
        }
    }
    free(all);
}

static void python_frame(struct pi_site_frame *f, const struct pi_reader *reader,
                         const struct pi_stack_frame *raw)
{
    const char *file = pi_reader_string(reader, raw->ref);
    const char *function = pi_reader_string(reader, raw->name);
    f->python = 1;
    f->file = copy(file ? file : "?");
    f->function = copy(function ? function : "?");
    f->line = raw->line;
}

static void native_frame(struct pi_site_frame *f, const struct pi_reader *reader,
                         const struct pi_stack_frame *raw)
{
    unsigned kind = 0;
    uint32_t length = 0;
    const unsigned char *bytes = pi_reader_definition(reader, raw->ref, &kind, &length);
    struct pi_module_def def = {0, 0, 0, 0};
    if (bytes && kind == PI_REC_MODULE && length >= sizeof(def))
        memcpy(&def, bytes, sizeof(def));
    if (!bytes || kind != PI_REC_MODULE ||
        length < sizeof(def) + (size_t)def.build_id_length + def.path_length) {
        def.build_id_length = def.path_length = 0; /* a damaged definition: no module */
        bytes = NULL;
    }
    const unsigned char *build_id = bytes ? bytes + sizeof(def) : NULL;
    char *path =
        bytes ? strndup((const char *)build_id + def.build_id_length, def.path_length) : copy("?");
    char hex[2 * 64 + 1] = "";
    for (unsigned i = 0; build_id && i < def.build_id_length && i < 64; i++)
        snprintf(hex + 2 * i, 3, "%02x", build_id[i]);
    f->module = path ? path : copy("?");
    f->build_id = copy(hex);
    f->offset = raw->offset;
    f->has_offset = 1;
    char mangled[NAME_SIZE], name[NAME_SIZE];
    uint64_t symbol_offset = 0;
    if (bytes && pi_symbolize(f->module, build_id, def.build_id_length, raw->offset, mangled,
                              sizeof(mangled), &symbol_offset)) {
        f->symbol = copy(pi_demangle(mangled, name, sizeof(name)));
        f->symbol_offset = symbol_offset;
        f->has_symbol_offset = 1;
    } else if (raw->name && pi_reader_string(reader, raw->name)) {
        /* the dynamic symbol the recorder saw, without its offset */
        f->symbol = copy(pi_demangle(pi_reader_string(reader, raw->name), name, sizeof(name)));
    }
}

/* Format 2: struct pi_stack_frame entries, Python ones first. */
static void parse_frames(struct pi_call_site *site, const struct pi_reader *reader,
                         const unsigned char *bytes, uint32_t length)
{
    for (int python = 1; python >= 0; python--)
        for (uint32_t at = 0; at + sizeof(struct pi_stack_frame) <= length;
             at += sizeof(struct pi_stack_frame)) {
            struct pi_stack_frame raw;
            memcpy(&raw, bytes + at, sizeof(raw));
            if ((raw.type == PI_FRAME_PYTHON) != python ||
                (raw.type != PI_FRAME_PYTHON && raw.type != PI_FRAME_NATIVE))
                continue;
            struct pi_site_frame *f = add_frame(site);
            if (!f)
                return;
            if (python)
                python_frame(f, reader, &raw);
            else
                native_frame(f, reader, &raw);
        }
}

/* The line to act on: the innermost Python frame outside installed
 * libraries, else the innermost Python frame, else the first named one. */
static void finish(struct pi_call_site *site)
{
    const struct pi_site_frame *best = NULL;
    for (size_t i = 0; i < site->count; i++)
        site->python_count += site->frames[i].python;
    for (size_t i = 0; i < site->python_count && !best; i++)
        if (!pi_call_site_library_file(site->frames[i].file))
            best = &site->frames[i];
    if (!best && site->python_count)
        best = &site->frames[0];
    for (size_t i = 0; i < site->count && !best; i++)
        if (site->frames[i].symbol)
            best = &site->frames[i];
    if (!best && site->count)
        best = &site->frames[0];
    char line[NAME_SIZE + 64];
    if (best)
        pi_call_site_frame_text(best, line, sizeof(line));
    site->headline = copy(best ? line : "(no call stack)");
    size_t size = 1;
    char *text = calloc(1, size);
    for (size_t i = 0; text && i < site->count; i++) {
        pi_call_site_frame_text(&site->frames[i], line, sizeof(line));
        size_t more = strlen(line) + 1;
        char *grown = realloc(text, size + more);
        if (!grown)
            break;
        text = grown;
        if (i)
            strcat(text, ";");
        strcat(text, line);
        size += more;
    }
    site->text = text ? text : copy("");
}

struct pi_call_site *pi_call_site_read(const struct pi_reader *reader, uint64_t id)
{
    unsigned kind = 0;
    uint32_t length = 0;
    const unsigned char *bytes = id ? pi_reader_definition(reader, id, &kind, &length) : NULL;
    /* format 1 names a text stack, format 2 a stack definition */
    unsigned wanted = pi_reader_info(reader)->header.version < 2 ? PI_REC_STRING : PI_REC_STACK;
    if (!bytes || kind != wanted)
        return NULL;
    struct pi_call_site *site = calloc(1, sizeof(*site));
    if (!site)
        return NULL;
    if (kind == PI_REC_STRING)
        parse_text(site, (const char *)bytes);
    else
        parse_frames(site, reader, bytes, length);
    finish(site);
    return site;
}

static char *copy_or_null(const char *text)
{
    return text ? strdup(text) : NULL;
}

struct pi_call_site *pi_call_site_copy(const struct pi_call_site *site)
{
    if (!site)
        return NULL;
    struct pi_call_site *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->frames = calloc(site->count ? site->count : 1, sizeof(*c->frames));
    for (size_t i = 0; c->frames && i < site->count; i++) {
        const struct pi_site_frame *f = &site->frames[i];
        c->frames[i] = *f;
        c->frames[i].file = copy_or_null(f->file);
        c->frames[i].function = copy_or_null(f->function);
        c->frames[i].module = copy_or_null(f->module);
        c->frames[i].build_id = copy_or_null(f->build_id);
        c->frames[i].symbol = copy_or_null(f->symbol);
        c->count++;
    }
    c->python_count = site->python_count < c->count ? site->python_count : c->count;
    c->headline = copy(site->headline);
    c->text = copy(site->text);
    return c;
}

void pi_call_site_free(struct pi_call_site *site)
{
    if (!site)
        return;
    for (size_t i = 0; i < site->count; i++) {
        free(site->frames[i].file);
        free(site->frames[i].function);
        free(site->frames[i].module);
        free(site->frames[i].build_id);
        free(site->frames[i].symbol);
    }
    free(site->frames);
    free(site->headline);
    free(site->text);
    free(site);
}
