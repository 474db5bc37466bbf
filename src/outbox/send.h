/* SPDX-License-Identifier: MIT */
/*
 * oncehook: sending one outbox row to its target (SPEC section 13).
 * outbox/sendcmd.c runs a command; outbox/sendhttp.c POSTs to a URL (the libcurl
 * room).  Each returns 0 if the target took the row (exit 0, a 2xx), or
 * -1 with one line saying why in why (never the payload, never a
 * secret).  Neither retries: outbox/deliver.c decides when to try again.
 */
#ifndef ONCEHOOK_SEND_H
#define ONCEHOOK_SEND_H

#include <stddef.h>

struct secret;

/* The row, as a target sees it. */
struct send_msg {
	const char	*id;		/* stable: webhook-id, ONCEHOOK_OUTBOX_ID */
	const char	*topic;
	const char	*endpoint;
	const char	*key;
	const char	*payload;
	size_t		 payloadsz;
};

/*
 * Run command, split on spaces into argv (no shell, no quoting; a name
 * without a slash is looked up in PATH), in its own process group, with
 * the payload on its standard input and ONCEHOOK_OUTBOX_ID, _TOPIC,
 * _ENDPOINT and _KEY in its environment; no other ONCEHOOK_ variable
 * reaches it (the secrets stay here).  Killed (the group) after
 * timeout seconds, and if the deliverer dies.  Its output is read; the
 * last line says why it failed.
 */
int	send_command(const char *command, const struct send_msg *,
	    long timeout, char *why, size_t whysz);

/*
 * POST the payload to url as a Standard Webhooks sender: content-type
 * application/json, webhook-id, webhook-timestamp (now) and
 * webhook-signature v1 (HMAC-SHA256 of id.timestamp.body with the
 * secret's key).  No redirect is followed; at most timeout seconds.
 * libcurl is loaded on the first call (dlopen): the handlers that never
 * send (CGI, FastCGI) do not pay for it at start.
 */
int	send_http(const char *url, const struct secret *secret,
	    const struct send_msg *, long timeout, char *why, size_t whysz);

/* The Standard Webhooks signature of msg at time ts: "v1,<base64>"
 * into out (at least 64 bytes).  0, or -1. */
int	send_sign(const struct secret *secret, const struct send_msg *msg,
	    long long ts, char *out, size_t outsz);

#endif
