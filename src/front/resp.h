/* SPDX-License-Identifier: MIT */
/*
 * oncehook: responses (SPEC section 8).  The one place that turns an
 * outcome (enum hook_err) into an HTTP status, headers and a JSON body.
 */
#ifndef ONCEHOOK_RESP_H
#define ONCEHOOK_RESP_H

#include <stddef.h>

#include "hook.h"

/* What a response is made of; every pointer may be NULL. */
struct resp_in {
	enum hook_err	 err;		/* the outcome */
	const char	*key;		/* the event's key: echoed by a
					   success and a key conflict */
	const struct hook_answer *answer; /* HOOK_HANDSHAKE: what the
					   sender wants back, or NULL */
	const char	*detail;	/* what the sender can fix, for the
					   outcomes whose row allows it (400s);
					   never internal, never a secret */
	const char	*raw;		/* HOOK_STATUS: the document (copied) */
	size_t		 rawsz;
	const char	*ctype;		/* HOOK_STATUS: its media type */
	const char	*no_retry;	/* the endpoint's header telling the
					   sender not to retry ("Name: value"),
					   sent where the row says no retry
					   can change the answer; or NULL */
	const struct hook_ack *ack;	/* the sender's own answer to the
					   200 outcomes (but a handshake with
					   members of its own), or NULL */
};

/*
 * Fill r for in->err from the outcome table: status, headers, body.
 * Returns 0, or -1 if out of memory (r then holds a static 500 body).
 * Release with resp_clear().
 */
int		 resp_make(struct resp *r, const struct resp_in *in);
void		 resp_clear(struct resp *);

/*
 * Write the CGI response head (Status and the other headers, then the
 * blank line) for r into buf (size bufsz).  Returns its length, or -1
 * if it does not fit.
 */
int		 resp_head(const struct resp *r, char *buf, size_t bufsz);

/* The body to write: r's, or a static out-of-memory one; length in *sz
 * (0 bytes for a HEAD request). */
const char	*resp_body(const struct resp *r, size_t *sz);

/* The outcome's name as logs and bodies show it ("processed", ...). */
const char	*resp_outcome(enum hook_err);
/* The HTTP status of an outcome. */
int		 resp_status(enum hook_err);
/* 0 for an outcome the counters leave out (the status endpoint's). */
int		 resp_counted(enum hook_err);

#endif
