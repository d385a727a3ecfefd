/* json_text.c - JSON string escaping (see json_text.h). */
#include "json_text.h"

#include <string.h>

#include "terminal_text.h"

void pi_json_string(FILE *out, const char *text)
{
    fputc('"', out);
    const unsigned char *c = (const unsigned char *)(text ? text : "");
    size_t left = strlen((const char *)c);
    while (left) {
        int length = pi_utf8_length(c, left);
        if (length <= 0) /* not UTF-8, which JSON must be */
            fputs("\\ufffd", out);
        else if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fwrite(c, 1, (size_t)length, out);
        length = length > 0 ? length : 1;
        c += length;
        left -= (size_t)length;
    }
    fputc('"', out);
}
