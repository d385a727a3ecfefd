/* html_flame.h - flame graphs of call trees on the HTML page (html_flame.c). */
#ifndef PI_HTML_FLAME_H
#define PI_HTML_FLAME_H

#include <stdio.h>

#include "analysis/sites/call_tree.h"

/* pi_html_flame_script - the page's script that zooms every flame graph; once, before them */
void pi_html_flame_script(FILE *out);

/* pi_html_flame - @tree as a flame graph under the heading @title, weights as bytes when
 * @bytes, else as durations */
void pi_html_flame(FILE *out, const char *id, const char *title, const struct pi_call_tree *tree,
                   int bytes);

#endif
