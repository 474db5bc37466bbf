/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: an event built by hand for the store tests (t_store,
 * t_outbox, t_mystore), as event_parse() would leave it: its key and
 * type copied, the payload borrowed and hashed.
 */
#ifndef ONCEHOOK_TESTEV_H
#define ONCEHOOK_TESTEV_H

#include <string.h>

#include "lib/crypto.h"
#include "pipeline/event.h"
#include "tap.h"

/* ev for key, type (NULL: none) and payload, received at at; release
 * it with event_clear() (the payload stays the caller's). */
static void
test_event(struct event *ev, const char *key, const char *type,
    const char *payload, long long at)
{
	unsigned char	 md[CRYPTO_SHA256_LEN];

	memset(ev, 0, sizeof(*ev));
	if ((ev->key = strdup(key)) == NULL ||
	    (type != NULL && (ev->type = strdup(type)) == NULL))
		BAIL("out of memory");
	if (crypto_sha256(payload, strlen(payload), md) == -1)
		BAIL("crypto_sha256");
	crypto_hex(md, sizeof(md), ev->hash);
	ev->payload = payload;
	ev->payloadsz = strlen(payload);
	ev->received_at = at;
}

#endif
