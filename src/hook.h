/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the shared vocabulary of the request pipeline.
 *
 * This header knows no library.  It names the outcome of every stage
 * (enum hook_err), the request as the front hands it over (struct req)
 * and the response the pipeline hands back (struct resp).  front/resp.c is the
 * only place that turns an outcome into HTTP.
 *
 * Ownership: functions never take ownership of their arguments.
 * Out-parameters are owned by the caller and released with the matching
 * *_clear or *_free.  Pointers into a struct req are borrowed and live
 * until the request ends.
 */
#ifndef ONCEHOOK_HOOK_H
#define ONCEHOOK_HOOK_H

#include <stddef.h>
#include <sys/types.h>

/* The outcome of one stage; front/resp.c maps each to a status and a body. */
enum hook_err {
	HOOK_OK = 0,		/* new event claimed and committed */
	HOOK_DUP,		/* known event, same payload: replay */
	HOOK_ACCEPTED,		/* deferred mode: claimed, actions to run */
	HOOK_PARKED,		/* failed too often: stored as failed, or a
				   delivery of such an event (runs nothing) */
	HOOK_HANDSHAKE,		/* a sender's check of the endpoint (Slack,
				   Zoom, Stripe): answered, never stored */
	HOOK_STATUS,		/* the status endpoint's document */
	HOOK_ENOTFOUND,		/* no endpoint of that name */
	HOOK_EMETHOD,		/* not POST */
	HOOK_EAUTH,		/* status endpoint: no or wrong token */
	HOOK_EGETONLY,		/* status endpoint: not GET or HEAD */
	HOOK_ETOOBIG,		/* body over the limit */
	HOOK_EMEDIA,		/* content type is not JSON */
	HOOK_EBODY,		/* body shorter than Content-Length */
	HOOK_ESIG,		/* signature missing, malformed or wrong */
	HOOK_ESTALE,		/* timestamp outside the tolerance */
	HOOK_EJSON,		/* body is not one valid JSON document */
	HOOK_ENOKEY,		/* no idempotency key where one is needed */
	HOOK_EBADKEY,		/* key present but unusable (type, size) */
	HOOK_ECONFLICT,		/* known key, different payload */
	HOOK_EBUSY,		/* database busy, full, read-only, I/O */
	HOOK_ECERT,		/* the sender's signing certificate could
				   not be fetched (PayPal) */
	HOOK_EACTION,		/* an action statement failed */
	HOOK_ECONF,		/* misconfiguration; detail in the log */
	HOOK_ESYSTEM,		/* our fault: memory, unexpected library error */
	HOOK__MAX
};

/* A stored key's outcomes: a duplicate, a parked event, a conflict. */
static inline int
hook_known(enum hook_err er)
{
	return er == HOOK_DUP || er == HOOK_PARKED || er == HOOK_ECONFLICT;
}

/*
 * What a handshake is answered (SPEC section 14): the members of one
 * JSON object, their values as text (front/resp.c escapes them); with
 * none, {"status":"handshake"}.
 */
#define HOOK_ANSWER_MAX	2	/* members */
#define HOOK_TOKEN_MAX	512	/* bytes of one value */
struct hook_answer {
	const char	*name[HOOK_ANSWER_MAX];	/* static */
	char		 value[HOOK_ANSWER_MAX][HOOK_TOKEN_MAX + 1];
	size_t		 n;
	unsigned	 number;	/* bit i: value[i] is a JSON number
					   oncehook wrote, sent as it is */
};

/*
 * A sender's own answer to the events it delivered (the 200 outcomes
 * but a handshake with members of its own): Adyen's "[accepted]",
 * Discord's 204 with no body.
 */
struct hook_ack {
	int		 status;	/* 200 or 204 */
	const char	*text;		/* text/plain body, or NULL: none */
};

/* One HTTP request header as CGI names it (HTTP_X_FOO), borrowed. */
struct req_header {
	const char	*name;		/* CGI name, e.g. "HTTP_STRIPE_SIGNATURE" */
	size_t		 namelen;	/* name is not NUL-terminated */
	const char	*value;
};

/*
 * Reads up to n bytes of the request body into buf.  Returns the number
 * of bytes read, 0 at the end of the body, -1 on error.
 */
typedef ssize_t	(*req_read_fn)(void *arg, char *buf, size_t n);

/*
 * A request as the front (FastCGI or CGI) hands it to the pipeline.
 * Every string is borrowed from the front and lives until the request
 * ends.  The body is not read yet: the pipeline reads it through
 * read/readarg once the method, type and announced size are accepted.
 */
struct req {
	const char		*method;	/* REQUEST_METHOD */
	const char		*path_info;	/* PATH_INFO, may be NULL */
	const char		*script_name;	/* SCRIPT_NAME, may be NULL */
	const char		*content_type;	/* CONTENT_TYPE, may be NULL */
	const char		*content_length; /* CONTENT_LENGTH, may be NULL */
	const char		*document_root;	/* DOCUMENT_ROOT, may be NULL */
	const char		*context_root;	/* CONTEXT_DOCUMENT_ROOT (Apache:
						   an Alias or ~user), or NULL */
	const struct req_header	*headers;	/* HTTP_* variables */
	size_t			 nheaders;
	req_read_fn		 read;
	void			*readarg;
	const char		*query_string;	/* QUERY_STRING, may be NULL */
};

/*
 * Why a request ended as it did: one trace per request, written by the
 * stage that ended it (why_set(), why_client() in lib/log.h), read by the
 * request's one log line and, where the outcome's row in front/resp.c lets
 * the sender see it, by the response.
 */
struct why {
	char		 log[320];	/* for the operator; never a secret */
	const char	*client;	/* static text the sender may see, or
					   NULL for the outcome's own words */
};

/* A response: what the front writes back.  Owned by the caller. */
struct resp {
	enum hook_err	 err;
	int		 status;	/* HTTP status */
	int		 replayed;	/* add Idempotent-Replayed: true */
	int		 retry_after;	/* seconds; 0 for no header */
	const char	*allow;		/* Allow header value, or NULL */
	const char	*ctype;		/* Content-Type; static */
	int		 authenticate;	/* add WWW-Authenticate */
	const char	*no_retry;	/* a header line telling the sender
					   not to retry ("Name: value"), or
					   NULL; static */
	char		*body;		/* JSON text, NUL-terminated, owned */
	size_t		 bodysz;
	int		 head_only;	/* a HEAD request: the head alone is
					   written (its Content-Length is the
					   body GET would get); the front sets
					   it, for every answer */
};

#endif
