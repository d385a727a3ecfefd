/* json_text.h - writing JSON string values by hand (streamed outputs). */
#ifndef PI_JSON_TEXT_H
#define PI_JSON_TEXT_H

#include <stdio.h>

/* pi_json_string - write @text as a quoted, escaped JSON string */
void pi_json_string(FILE *out, const char *text);

#endif
