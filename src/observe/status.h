/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the status endpoint (SPEC section 10).  With
 * ONCEHOOK_STATUS_TOKEN set, GET (or HEAD) on a path whose last segment
 * is "status" answers what `oncehook stats` shows: JSON by default,
 * Prometheus text for Accept: text/plain, the HTML page for
 * Accept: text/html.  The token comes as Authorization: Bearer, or as
 * the password of HTTP Basic (any user name), and is compared in
 * constant time.
 */
#ifndef ONCEHOOK_STATUS_H
#define ONCEHOOK_STATUS_H

#include <stddef.h>
#include <time.h>

#include "hook.h"

struct conf;
struct store;

/* 1 if rq asks for the status endpoint of cf (token set, "status"). */
int		 status_wanted(const struct conf *cf, const struct req *rq);

/*
 * Answer a status request: HOOK_STATUS with the document in *body
 * (malloc'd, length *bodysz) and its media type in *ctype; HOOK_EAUTH
 * without or with a wrong token; HOOK_EGETONLY for another method;
 * HOOK_ESYSTEM if out of memory.  st may be NULL (rows not counted).
 * why says what went wrong for the log.
 */
enum hook_err	 status_answer(const struct conf *cf, struct store *st,
		    const struct req *rq, time_t now, char **body,
		    size_t *bodysz, const char **ctype, struct why *why);

#endif
