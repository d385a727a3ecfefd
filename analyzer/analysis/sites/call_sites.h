/*
 * call_sites.h - a call site as the reports show it: Python frames first
 * (file, line, function), native frames below (module, offset, symbol
 * demangled), a headline (the innermost Python line outside installed
 * libraries: the line a user would change) and a text form.
 *
 * Read from a stack id of a trace file: a PI_REC_STACK of format 2, or the
 * text stack of a format 1 file ("symbol+0xoff (library);...").
 */
#ifndef PI_ANALYSIS_CALL_SITES_H
#define PI_ANALYSIS_CALL_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "reader/trace_reader.h"

struct pi_site_frame {
    int python; /* 1: file, line, function; 0: native */
    char *file, *function;
    uint32_t line;
    char *module;    /* path as recorded (format 1: the file name only) */
    char *build_id;  /* hex, "" when unknown */
    uint64_t offset; /* in the module's address space; valid when has_offset */
    int has_offset;
    char *symbol; /* demangled, NULL when unknown */
    uint64_t symbol_offset;
    int has_symbol_offset;
};

struct pi_call_site {
    struct pi_site_frame *frames; /* Python frames first, innermost first */
    size_t count, python_count;
    char *headline;
    char *text; /* frames joined by ';' */
};

/**
 * pi_call_site_read - the call site of stack @id of the file @reader reads
 * (all definitions seen so far; stacks are defined before use)
 * Return: a new call site (pi_call_site_free), or NULL when @id names none.
 */
struct pi_call_site *pi_call_site_read(const struct pi_reader *reader, uint64_t id);

/* pi_call_site_copy - a deep copy of @site, NULL for NULL */
struct pi_call_site *pi_call_site_copy(const struct pi_call_site *site);

void pi_call_site_free(struct pi_call_site *site);

/* pi_call_site_frame_text - one frame as text: "file:line in function",
 * "symbol+0xoff (module)" or "0xoff (module)"; the path shortened below
 * site-packages and the Python library directory */
void pi_call_site_frame_text(const struct pi_site_frame *frame, char *out, size_t size);

/* pi_call_site_frame_short_text - the same with a native function's name short
 * (native_names.h) and no offset: "addmm_impl_cpu_() (libtorch_cpu.so)", for a sentence */
void pi_call_site_frame_short_text(const struct pi_site_frame *frame, char *out, size_t size);

/* pi_call_site_base_name - a path's file name without its directory; "?" for none */
const char *pi_call_site_base_name(const char *path);

/* pi_call_site_short_file - "torch/nn/modules/module.py" for a file of an installed package,
 * "threading.py" for one of the standard library, else @file as recorded */
const char *pi_call_site_short_file(const char *file);

/* pi_call_site_library_file - nonzero for a Python file of an installed package or the standard
 * library */
int pi_call_site_library_file(const char *file);

#endif
