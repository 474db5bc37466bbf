/* SPDX-License-Identifier: MIT */
/*
 * oncehook: responses (see front/resp.h).  One table, one row per outcome: the
 * status, the word a provider's dashboard shows, and a sentence saying
 * why.  No secret and no internal detail ever reaches a body; the
 * operator gets those in the log.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/resp.h"
#include "lib/log.h"
#include "lib/utf8.h"

#define RETRY_AFTER	5	/* seconds, with a 503 */

/* The shape of a body. */
enum shape {
	SHAPE_ERROR,		/* {"error":name,"message":...} */
	SHAPE_STATUS,		/* {"status":name,"key":key} */
	SHAPE_HANDSHAKE,	/* the answer's members, or {"status":name} */
	SHAPE_RAW,		/* the caller's document and media type */
};

/* What a row adds besides its status and body. */
#define F_REPLAYED	0x01	/* Idempotent-Replayed: true */
#define F_KEY		0x02	/* an error body echoes the key */
#define F_DETAIL	0x04	/* the request's detail replaces the
				   message: the sender can fix it */
#define F_AUTH		0x08	/* WWW-Authenticate: Basic */
#define F_UNCOUNTED	0x10	/* not a delivery: left out of counters */
#define F_FINAL		0x20	/* no retry of the same bytes can change
				   it: the sender's no-retry header (never
				   a 401 or 400: a wrong secret or clock
				   is fixed, then the retry goes through) */

/*
 * One row per outcome: everything resp_make() writes for it.  A new
 * outcome is an enum value in hook.h and a row here.
 */
static const struct outcome {
	int		 status;
	const char	*reason;	/* HTTP reason phrase */
	enum shape	 shape;
	const char	*name;		/* "status" or "error" value */
	const char	*message;
	int		 flags;		/* F_* */
	const char	*allow;		/* Allow header, or NULL */
	int		 retry_after;	/* seconds, or 0 */
} table[HOOK__MAX] = {
	[HOOK_OK] = { 200, "OK", SHAPE_STATUS, "processed", NULL, 0, NULL,
	    0 },
	[HOOK_DUP] = { 200, "OK", SHAPE_STATUS, "already_processed", NULL,
	    F_REPLAYED, NULL, 0 },
	[HOOK_ACCEPTED] = { 200, "OK", SHAPE_STATUS, "accepted", NULL, 0,
	    NULL, 0 },
	[HOOK_PARKED] = { 200, "OK", SHAPE_STATUS, "parked", NULL, 0, NULL,
	    0 },
	[HOOK_HANDSHAKE] = { 200, "OK", SHAPE_HANDSHAKE, "handshake", NULL,
	    0, NULL, 0 },
	[HOOK_STATUS] = { 200, "OK", SHAPE_RAW, "status", NULL, F_UNCOUNTED,
	    NULL, 0 },
	[HOOK_ENOTFOUND] = { 404, "Not Found", SHAPE_ERROR, "unknown_endpoint",
	    "no webhook endpoint of that name", 0, NULL, 0 },
	[HOOK_EMETHOD] = { 405, "Method Not Allowed", SHAPE_ERROR,
	    "method_not_allowed", "webhooks are delivered with POST", 0,
	    "POST", 0 },
	[HOOK_EAUTH] = { 401, "Unauthorized", SHAPE_ERROR, "unauthorized",
	    "the status endpoint needs its token (Bearer, or the password "
	    "of Basic)", F_AUTH | F_UNCOUNTED, NULL, 0 },
	[HOOK_EGETONLY] = { 405, "Method Not Allowed", SHAPE_ERROR,
	    "method_not_allowed", "the status endpoint answers GET",
	    F_UNCOUNTED, "GET, HEAD", 0 },
	[HOOK_ETOOBIG] = { 413, "Payload Too Large", SHAPE_ERROR,
	    "payload_too_large",
	    "the body is larger than this endpoint accepts", F_FINAL, NULL,
	    0 },
	[HOOK_EMEDIA] = { 415, "Unsupported Media Type", SHAPE_ERROR,
	    "unsupported_media_type",
	    "the body must be JSON (Content-Type: application/json)",
	    F_DETAIL | F_FINAL, NULL, 0 },
	[HOOK_EBODY] = { 400, "Bad Request", SHAPE_ERROR, "incomplete_body",
	    "the body is shorter than its Content-Length", F_DETAIL, NULL,
	    0 },
	[HOOK_ESIG] = { 401, "Unauthorized", SHAPE_ERROR, "invalid_signature",
	    "the signature is missing or does not match", 0, NULL, 0 },
	[HOOK_ESTALE] = { 400, "Bad Request", SHAPE_ERROR, "stale_timestamp",
	    "the signed timestamp is outside the accepted tolerance",
	    F_DETAIL, NULL, 0 },
	[HOOK_EJSON] = { 400, "Bad Request", SHAPE_ERROR, "malformed_json",
	    "the body is not a valid JSON object", F_DETAIL, NULL, 0 },
	[HOOK_ENOKEY] = { 400, "Bad Request", SHAPE_ERROR, "missing_key",
	    "the event has no idempotency key", F_DETAIL, NULL, 0 },
	[HOOK_EBADKEY] = { 400, "Bad Request", SHAPE_ERROR, "invalid_key",
	    "the idempotency key is not usable", F_DETAIL, NULL, 0 },
	[HOOK_ECONFLICT] = { 422, "Unprocessable Content", SHAPE_ERROR,
	    "key_conflict",
	    "this idempotency key was already used with a different payload",
	    F_KEY | F_FINAL, NULL, 0 },
	[HOOK_EBUSY] = { 503, "Service Unavailable", SHAPE_ERROR,
	    "unavailable", "storage is temporarily unavailable; nothing was "
	    "processed; retry later", 0, NULL, RETRY_AFTER },
	[HOOK_ECERT] = { 503, "Service Unavailable", SHAPE_ERROR,
	    "certificate_unavailable", "the sender's signing certificate "
	    "could not be fetched; nothing was processed; retry later", 0,
	    NULL, RETRY_AFTER },
	[HOOK_EACTION] = { 500, "Internal Server Error", SHAPE_ERROR,
	    "action_failed",
	    "processing failed and was rolled back; retry later", 0, NULL,
	    0 },
	[HOOK_ECONF] = { 500, "Internal Server Error", SHAPE_ERROR,
	    "misconfigured",
	    "the receiver is misconfigured; its operator has the details", 0,
	    NULL, 0 },
	[HOOK_ESYSTEM] = { 500, "Internal Server Error", SHAPE_ERROR,
	    "internal_error", "an internal error occurred; nothing was "
	    "processed", 0, NULL, 0 },
};

static const char	 oom_body[] =
	"{\"error\":\"internal_error\",\"message\":\"out of memory\"}";

const char *
resp_outcome(enum hook_err er)
{
	return er < HOOK__MAX ? table[er].name : "internal_error";
}

int
resp_status(enum hook_err er)
{
	return er < HOOK__MAX ? table[er].status : 500;
}

int
resp_counted(enum hook_err er)
{
	return er < HOOK__MAX && !(table[er].flags & F_UNCOUNTED);
}

/*
 * Append s as a JSON string (with quotes) to buf at *o; -1 if full.
 * Bytes that are not UTF-8 become U+FFFD, so the body is always JSON.
 */
static int
put_string(char *buf, size_t bufsz, size_t *o, const char *s)
{
	static const char	 hex[] = "0123456789abcdef";
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 n = *o, len;

	if (n + 1 >= bufsz)
		return -1;
	buf[n++] = '"';
	while (*p != '\0') {
		if (n + 7 >= bufsz)
			return -1;
		if (*p == '"' || *p == '\\') {
			buf[n++] = '\\';
			buf[n++] = (char)*p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			memcpy(buf + n, "\\u00", 4);
			buf[n + 4] = hex[*p >> 4];
			buf[n + 5] = hex[*p & 0xf];
			n += 6;
			p++;
		} else if ((len = utf8_len(p, (size_t)-1)) == 0) {
			memcpy(buf + n, "\\ufffd", 6);
			n += 6;
			p++;
		} else {
			memcpy(buf + n, p, len);
			n += len;
			p += len;
		}
	}
	buf[n++] = '"';
	*o = n;
	return 0;
}

/* Append a literal; -1 if full. */
static int
put(char *buf, size_t bufsz, size_t *o, const char *s)
{
	size_t	 len = strlen(s);

	if (*o + len >= bufsz)
		return -1;
	memcpy(buf + *o, s, len);
	*o += len;
	return 0;
}

int
resp_make(struct resp *r, const struct resp_in *in)
{
	const struct outcome	*t;
	enum hook_err		 er = in->err;
	const struct hook_answer *a = in->answer;
	const char		*key = in->key, *msg;
	size_t			 bufsz, o = 0, i, na;
	char			*buf;
	int			 rc = 0;

	if (er >= HOOK__MAX)
		er = HOOK_ESYSTEM;
	t = &table[er];
	memset(r, 0, sizeof(*r));
	r->err = er;
	r->status = t->status;
	r->replayed = (t->flags & F_REPLAYED) != 0;
	r->retry_after = t->retry_after;
	r->allow = t->allow;
	r->authenticate = (t->flags & F_AUTH) != 0;
	r->no_retry = (t->flags & F_FINAL) != 0 ? in->no_retry : NULL;
	if (t->shape == SHAPE_RAW) {
		if ((buf = malloc(in->rawsz + 1)) == NULL)
			goto oom;
		if (in->rawsz > 0)
			memcpy(buf, in->raw, in->rawsz);
		buf[in->rawsz] = '\0';
		r->body = buf;
		r->bodysz = in->rawsz;
		r->ctype = in->ctype;
		return 0;
	}
	na = a != NULL && a->n <= HOOK_ANSWER_MAX ? a->n : 0;
	if (in->ack != NULL && t->status == 200 &&
	    (t->shape == SHAPE_STATUS || na == 0)) {
		/* The sender's own answer to what it delivered. */
		msg = in->ack->text != NULL ? in->ack->text : "";
		if ((r->body = strdup(msg)) == NULL)
			goto oom;
		r->bodysz = strlen(msg);
		r->status = in->ack->status;
		r->ctype = in->ack->text != NULL ? "text/plain" : NULL;
		return 0;
	}
	msg = in->detail != NULL && (t->flags & F_DETAIL) ? in->detail :
	    t->message;

	/* Messages are short; a key is at most 512 bytes, escaped 6x. */
	bufsz = 512 + (key ? 6 * strlen(key) : 0) +
	    (msg ? 6 * strlen(msg) : 0);
	for (i = 0; i < na; i++)
		bufsz += 16 + strlen(a->name[i]) + 6 * strlen(a->value[i]);
	if ((buf = malloc(bufsz)) == NULL)
		goto oom;
	switch (t->shape) {
	case SHAPE_HANDSHAKE:
		if (na == 0) {
			rc |= put(buf, bufsz, &o, "{\"status\":\"");
			rc |= put(buf, bufsz, &o, t->name);
			rc |= put(buf, bufsz, &o, "\"");
		}
		for (i = 0; i < na; i++) {
			rc |= put(buf, bufsz, &o, i == 0 ? "{" : ",");
			rc |= put_string(buf, bufsz, &o, a->name[i]);
			rc |= put(buf, bufsz, &o, ":");
			rc |= (a->number >> i & 1) ?
			    put(buf, bufsz, &o, a->value[i]) :
			    put_string(buf, bufsz, &o, a->value[i]);
		}
		break;
	case SHAPE_STATUS:
		rc |= put(buf, bufsz, &o, "{\"status\":\"");
		rc |= put(buf, bufsz, &o, t->name);
		rc |= put(buf, bufsz, &o, "\",\"key\":");
		rc |= put_string(buf, bufsz, &o, key ? key : "");
		break;
	case SHAPE_RAW:
		break;
	case SHAPE_ERROR:
		rc |= put(buf, bufsz, &o, "{\"error\":\"");
		rc |= put(buf, bufsz, &o, t->name);
		rc |= put(buf, bufsz, &o, "\",\"message\":");
		rc |= put_string(buf, bufsz, &o, msg);
		if ((t->flags & F_KEY) && key != NULL) {
			rc |= put(buf, bufsz, &o, ",\"key\":");
			rc |= put_string(buf, bufsz, &o, key);
		}
		break;
	}
	rc |= put(buf, bufsz, &o, "}\n");
	if (rc != 0) {
		free(buf);
		goto oom;
	}
	buf[o] = '\0';
	r->body = buf;
	r->bodysz = o;
	return 0;
oom:
	r->err = HOOK_ESYSTEM;
	r->status = 500;
	r->replayed = 0;
	r->retry_after = 0;
	r->allow = NULL;
	r->ctype = NULL;
	r->authenticate = 0;
	r->no_retry = NULL;
	r->body = NULL;
	r->bodysz = 0;
	return -1;
}

void
resp_clear(struct resp *r)
{
	if (r == NULL)
		return;
	free(r->body);
	r->body = NULL;
	r->bodysz = 0;
}

int
resp_head(const struct resp *r, char *buf, size_t bufsz)
{
	const struct outcome	*t = &table[r->err < HOOK__MAX ? r->err :
				    HOOK_ESYSTEM];
	char			 length[80];
	int			 n;

	/* A 204 has no length (RFC 9110 section 8.6); Discord wants a
	 * type all the same. */
	if (r->status == 204)
		snprintf(length, sizeof(length), "Content-Type: %s\r\n",
		    r->ctype != NULL ? r->ctype : "application/json");
	else
		snprintf(length, sizeof(length), "Content-Type: %s\r\n"
		    "Content-Length: %zu\r\n",
		    r->body && r->ctype ? r->ctype : "application/json",
		    r->body ? r->bodysz : sizeof(oom_body) - 1);
	n = snprintf(buf, bufsz,
	    "Status: %d %s\r\n"
	    "%s"
	    "Cache-Control: no-store\r\n"
	    "%s"
	    "%s%s%s"
	    "%s"
	    "%s%.0d%s"
	    "%s%s"
	    "\r\n",
	    r->status, r->status == t->status ? t->reason : r->status == 204 ?
	    "No Content" : "Error", length,
	    r->authenticate ? "WWW-Authenticate: Basic realm=\"oncehook\", "
	    "charset=\"UTF-8\"\r\n" : "",
	    r->allow ? "Allow: " : "", r->allow ? r->allow : "",
	    r->allow ? "\r\n" : "",
	    r->replayed ? "Idempotent-Replayed: true\r\n" : "",
	    r->retry_after ? "Retry-After: " : "", r->retry_after,
	    r->retry_after ? "\r\n" : "",
	    r->no_retry ? r->no_retry : "", r->no_retry ? "\r\n" : "");
	if (n < 0 || (size_t)n >= bufsz)
		return -1;
	return n;
}

const char *
resp_body(const struct resp *r, size_t *sz)
{
	if (r->head_only) {
		*sz = 0;
		return "";
	}
	if (r->body != NULL) {
		*sz = r->bodysz;
		return r->body;
	}
	*sz = sizeof(oom_body) - 1;
	return oom_body;
}
