/* site_bytes.c - see site_bytes.h. */
#include "site_bytes.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/sites/call_sites.h"

/* Resolve @s->stack into its call site and text form. */
void pi_site_resolve(struct pi_site_bytes *s, const struct pi_reader *reader)
{
    s->site = s->stack == PI_BEFORE_WINDOW_SITE ? NULL : pi_call_site_read(reader, s->stack);
    s->text = strdup(s->stack == PI_BEFORE_WINDOW_SITE ? "(allocated before the capture window)"
                     : s->site                      ? s->site->text
                                                    : "(no call stack)");
}

const char *pi_site_headline(const struct pi_site_bytes *s)
{
    return s->site ? s->site->headline : s->text ? s->text : "";
}

void pi_site_free(struct pi_site_bytes *s)
{
    free(s->text);
    pi_call_site_free(s->site);
    s->text = NULL;
    s->site = NULL;
}
