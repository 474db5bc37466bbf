/*
 * oncehook: responses (SPEC section 8).  The one place that turns an
 * outcome (enum hook_err) into an HTTP status, headers and a JSON body.
 */
#ifndef ONCEHOOK_RESP_H
#define ONCEHOOK_RESP_H

#include <stddef.h>

#include "hook.h"

/*
 * Fill r for outcome er.  key (may be NULL) is echoed in the body of a
 * success or a conflict (for HOOK_CHALLENGE, it is the challenge); why (may be NULL) replaces the generic message
 * of a 400.  Returns 0, or -1 if out of memory (r then holds a static
 * 500 body).  Release with resp_clear().
 */
int		 resp_make(struct resp *r, enum hook_err er, const char *key,
		    const char *why);
void		 resp_clear(struct resp *);

/*
 * Write the CGI response head (Status and the other headers, then the
 * blank line) for r into buf (size bufsz).  Returns its length, or -1
 * if it does not fit.
 */
int		 resp_head(const struct resp *r, char *buf, size_t bufsz);

/* The body to write: r's, or a static out-of-memory one; length in *sz. */
const char	*resp_body(const struct resp *r, size_t *sz);

/* The outcome's name as logs and bodies show it ("processed", ...). */
const char	*resp_outcome(enum hook_err);
/* The HTTP status of an outcome. */
int		 resp_status(enum hook_err);

#endif
