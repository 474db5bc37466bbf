/*
 * oncehook: the event in a verified body (SPEC section 5).
 *
 * event_extract() parses the body with jansson, hashes its canonical
 * form (keys sorted, no insignificant white space), and copies out the
 * event type and the idempotency key from the endpoint's sources.  No
 * json_t leaves event.c.
 */
#ifndef ONCEHOOK_EVENT_H
#define ONCEHOOK_EVENT_H

#include <stddef.h>

#include "crypto.h"
#include "hook.h"

struct conf_endpoint;

#define EVENT_KEY_MAX	512	/* bytes in an idempotency key */
#define EVENT_TYPE_MAX	255	/* bytes in an event type */

struct event {
	char		*key;		/* owned */
	char		*type;		/* owned; NULL if the body has none */
	char		 hash[CRYPTO_SHA256_HEXLEN + 1]; /* canonical JSON */
	const char	*payload;	/* borrowed: the raw body */
	size_t		 payloadsz;
	long long	 received_at;	/* Unix seconds */
	char		*challenge;	/* owned; set for HOOK_CHALLENGE */
};

/*
 * Fill ev from the raw body of rq.  Returns HOOK_OK, HOOK_CHALLENGE (a
 * sender's URL check: ev->challenge holds the value to echo, no key),
 * HOOK_EJSON, HOOK_ENOKEY, HOOK_EBADKEY or HOOK_ESYSTEM; on failure *why says what
 * for the client (static text) and ev holds nothing to free.  ev borrows
 * body, which must outlive it.
 */
enum hook_err	 event_extract(const struct conf_endpoint *,
		    const struct req *, const char *body, size_t bodysz,
		    struct event *ev, const char **why);
void		 event_clear(struct event *);

/*
 * Canonical JSON of the text (keys sorted, compact), as a new string
 * the caller frees; NULL if the text is not one JSON value.
 */
char		*event_canonical(const char *text, size_t sz);

#endif
