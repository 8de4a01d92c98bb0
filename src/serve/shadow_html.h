/* shadow_html.h - the shadow report as an HTML page (shadow_html.c). */
#ifndef SM_SHADOW_HTML_H
#define SM_SHADOW_HTML_H

#include "serve/shadow_base.h"

/* Writes the page of r into b.  0, or SM_ENOMEM. */
int sh__html(const sh_report *r, sm_buf *b);

#endif /* SM_SHADOW_HTML_H */
