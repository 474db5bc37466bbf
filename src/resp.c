/*
 * oncehook: responses (see resp.h).  One table, one row per outcome: the
 * status, the word a provider's dashboard shows, and a sentence saying
 * why.  No secret and no internal detail ever reaches a body; the
 * operator gets those in the log.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp.h"

static const struct outcome {
	int		 status;
	const char	*reason;	/* HTTP reason phrase */
	const char	*name;		/* "status" or "error" value */
	const char	*message;
} table[HOOK__MAX] = {
	[HOOK_OK] = { 200, "OK", "processed", NULL },
	[HOOK_DUP] = { 200, "OK", "already_processed", NULL },
	[HOOK_CHALLENGE] = { 200, "OK", "challenge", NULL },
	[HOOK_ENOTFOUND] = { 404, "Not Found", "unknown_endpoint",
	    "no webhook endpoint of that name" },
	[HOOK_EMETHOD] = { 405, "Method Not Allowed", "method_not_allowed",
	    "webhooks are delivered with POST" },
	[HOOK_ETOOBIG] = { 413, "Payload Too Large", "payload_too_large",
	    "the body is larger than this endpoint accepts" },
	[HOOK_EMEDIA] = { 415, "Unsupported Media Type",
	    "unsupported_media_type",
	    "the body must be JSON (Content-Type: application/json)" },
	[HOOK_EBODY] = { 400, "Bad Request", "incomplete_body",
	    "the body is shorter than its Content-Length" },
	[HOOK_ESIG] = { 401, "Unauthorized", "invalid_signature",
	    "the signature is missing or does not match" },
	[HOOK_ESTALE] = { 400, "Bad Request", "stale_timestamp",
	    "the signed timestamp is outside the accepted tolerance" },
	[HOOK_EJSON] = { 400, "Bad Request", "malformed_json",
	    "the body is not a valid JSON object" },
	[HOOK_ENOKEY] = { 400, "Bad Request", "missing_key",
	    "the event has no idempotency key" },
	[HOOK_EBADKEY] = { 400, "Bad Request", "invalid_key",
	    "the idempotency key is not usable" },
	[HOOK_ECONFLICT] = { 422, "Unprocessable Content", "key_conflict",
	    "this idempotency key was already used with a different payload" },
	[HOOK_EBUSY] = { 503, "Service Unavailable", "unavailable",
	    "storage is temporarily unavailable; nothing was processed; "
	    "retry later" },
	[HOOK_EACTION] = { 500, "Internal Server Error", "action_failed",
	    "processing failed and was rolled back; retry later" },
	[HOOK_ECONF] = { 500, "Internal Server Error", "misconfigured",
	    "the receiver is misconfigured; its operator has the details" },
	[HOOK_ESYSTEM] = { 500, "Internal Server Error", "internal_error",
	    "an internal error occurred; nothing was processed" },
};

#define RETRY_AFTER	5	/* seconds, with a 503 */

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

/*
 * Length of the valid UTF-8 sequence at s (1 to 4), or 0 if the bytes
 * there are not one (overlong forms, surrogates and values past U+10FFFF
 * included).
 */
static size_t
utf8_len(const unsigned char *s)
{
	unsigned long	 cp;
	size_t		 n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
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
		} else if ((len = utf8_len(p)) == 0) {
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
resp_make(struct resp *r, enum hook_err er, const char *key, const char *why)
{
	const struct outcome	*t;
	size_t			 bufsz, o = 0;
	char			*buf;
	int			 rc = 0;

	if (er >= HOOK__MAX)
		er = HOOK_ESYSTEM;
	t = &table[er];
	memset(r, 0, sizeof(*r));
	r->err = er;
	r->status = t->status;
	r->replayed = er == HOOK_DUP;
	r->retry_after = t->status == 503 ? RETRY_AFTER : 0;
	r->allow = er == HOOK_EMETHOD ? "POST" : NULL;

	/* Messages are short; a key is at most 512 bytes, escaped 6x. */
	bufsz = 512 + (key ? 6 * strlen(key) : 0) + (why ? 6 * strlen(why) : 0);
	if ((buf = malloc(bufsz)) == NULL)
		goto oom;
	if (er == HOOK_CHALLENGE) {
		/* Slack wants the value back as "challenge". */
		rc |= put(buf, bufsz, &o, "{\"challenge\":");
		rc |= put_string(buf, bufsz, &o, key ? key : "");
	} else if (t->message == NULL) {
		rc |= put(buf, bufsz, &o, "{\"status\":\"");
		rc |= put(buf, bufsz, &o, t->name);
		rc |= put(buf, bufsz, &o, "\",\"key\":");
		rc |= put_string(buf, bufsz, &o, key ? key : "");
	} else {
		rc |= put(buf, bufsz, &o, "{\"error\":\"");
		rc |= put(buf, bufsz, &o, t->name);
		rc |= put(buf, bufsz, &o, "\",\"message\":");
		rc |= put_string(buf, bufsz, &o,
		    why != NULL && t->status == 400 ? why : t->message);
		if (er == HOOK_ECONFLICT && key != NULL) {
			rc |= put(buf, bufsz, &o, ",\"key\":");
			rc |= put_string(buf, bufsz, &o, key);
		}
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
	int			 n;

	n = snprintf(buf, bufsz,
	    "Status: %d %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: %zu\r\n"
	    "Cache-Control: no-store\r\n"
	    "%s%s%s"
	    "%s"
	    "%s%.0d%s"
	    "\r\n",
	    r->status, r->status == t->status ? t->reason : "Error",
	    r->body ? r->bodysz : sizeof(oom_body) - 1,
	    r->allow ? "Allow: " : "", r->allow ? r->allow : "",
	    r->allow ? "\r\n" : "",
	    r->replayed ? "Idempotent-Replayed: true\r\n" : "",
	    r->retry_after ? "Retry-After: " : "", r->retry_after,
	    r->retry_after ? "\r\n" : "");
	if (n < 0 || (size_t)n >= bufsz)
		return -1;
	return n;
}

const char *
resp_body(const struct resp *r, size_t *sz)
{
	if (r->body != NULL) {
		*sz = r->bodysz;
		return r->body;
	}
	*sz = sizeof(oom_body) - 1;
	return oom_body;
}
