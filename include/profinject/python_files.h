/*
 * python_files.h - how a Python file is named wherever profinject shows
 * one (the reports' call sites, `profinject stacks`): below site-packages
 * for an installed package ("torch/nn/modules/module.py"), below the
 * library directory for the standard library ("threading.py"), else as
 * the interpreter has it.
 */
#ifndef PROFINJECT_PYTHON_FILES_H
#define PROFINJECT_PYTHON_FILES_H

#include <string.h>

/* The file of the spans' wrappers (preload/callsite/python_spans.py), as a frame of the job
 * shows it: the profiler's own frame, passed over where a call's line is told. */
#define PI_SPANS_PYTHON_FILE "<profinject>"

/* pi_python_short_file - @file as shown: a pointer into @file */
static inline const char *pi_python_short_file(const char *file)
{
    const char *markers[] = {"/site-packages/", "/dist-packages/"};
    const char *best = NULL;
    for (size_t i = 0; i < 2; i++)
        for (const char *at = strstr(file, markers[i]); at; at = strstr(at + 1, markers[i]))
            best = at + strlen(markers[i]);
    if (best)
        return best;
    const char *lib = strstr(file, "/lib/python3");
    const char *after = lib ? strchr(lib + 12, '/') : NULL;
    return after ? after + 1 : file;
}

#endif
