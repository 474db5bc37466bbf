/* SPDX-License-Identifier: MIT */
/*
 * oncehook: reading a struct req (see hook.h): headers, the length.
 */
#ifndef ONCEHOOK_REQ_H
#define ONCEHOOK_REQ_H

#include "hook.h"

/*
 * The value of the HTTP header name (as sent: "Stripe-Signature"),
 * matched case-insensitively with '-' and '_' alike, the way CGI names
 * it (HTTP_STRIPE_SIGNATURE).  NULL if absent.  Borrowed from rq.
 */
const char	*req_header(const struct req *rq, const char *name);

/*
 * A Content-Length value: -1 if absent or empty, -2 if malformed (not
 * all digits), else the value, capped at 2^50 (over any limit).
 */
long long	 req_content_length(const char *s);

#endif
