/*
 * oncehook: looking things up in a struct req (see hook.h).
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

#endif
