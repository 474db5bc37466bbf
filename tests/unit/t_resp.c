/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: responses (src/front/resp.c) against SPEC section 8.
 *
 * Every outcome has a row; the statuses are the contract's; every body
 * is one valid JSON object (parsed back with jansson) saying "status"
 * and "key" on success, "error" and "message" otherwise; keys are
 * escaped so that they come back byte for byte; the head carries the
 * headers the contract names and a Content-Length equal to the body.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "front/resp.h"
#include "tap.h"

/* SPEC section 8: the status and the word of each outcome. */
static const struct {
	enum hook_err	 er;
	int		 status;
	const char	*name;	/* NULL: any word */
} spec[] = {
	{ HOOK_OK,		200, "processed" },
	{ HOOK_DUP,		200, "already_processed" },
	{ HOOK_ACCEPTED,	200, "accepted" },
	{ HOOK_PARKED,		200, "parked" },
	{ HOOK_HANDSHAKE,	200, "handshake" },
	{ HOOK_STATUS,		200, NULL },
	{ HOOK_ENOTFOUND,	404, NULL },
	{ HOOK_EMETHOD,		405, NULL },
	{ HOOK_EAUTH,		401, "unauthorized" },
	{ HOOK_EGETONLY,	405, NULL },
	{ HOOK_ETOOBIG,		413, NULL },
	{ HOOK_EMEDIA,		415, NULL },
	{ HOOK_EBODY,		400, NULL },
	{ HOOK_ESIG,		401, "invalid_signature" },
	{ HOOK_ESTALE,		400, "stale_timestamp" },
	{ HOOK_EJSON,		400, NULL },
	{ HOOK_ENOKEY,		400, NULL },
	{ HOOK_EBADKEY,		400, NULL },
	{ HOOK_ECONFLICT,	422, "key_conflict" },
	{ HOOK_EBUSY,		503, NULL },
	{ HOOK_ECERT,		503, "certificate_unavailable" },
	{ HOOK_EACTION,		500, "action_failed" },
	{ HOOK_ECONF,		500, "misconfigured" },
	{ HOOK_ESYSTEM,		500, NULL },
};

/* The JSON string member name of o, or NULL. */
static const char *
member(json_t *o, const char *name)
{
	json_t	*v;

	if ((v = json_object_get(o, name)) == NULL || !json_is_string(v))
		return NULL;
	return json_string_value(v);
}

/* Parse r's body; NULL if it is not one JSON object. */
static json_t *
body_json(const struct resp *r)
{
	json_error_t	 jerr;
	json_t		*o;

	if (r->body == NULL || strlen(r->body) != r->bodysz)
		return NULL;
	o = json_loadb(r->body, r->bodysz, JSON_REJECT_DUPLICATES, &jerr);
	if (o != NULL && !json_is_object(o)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/*
 * resp_make() as the pipeline calls it: key is the value of the one
 * member of HOOK_HANDSHAKE's answer (Slack's challenge), why the
 * sender's detail.
 */
static int
mkresp(struct resp *r, enum hook_err er, const char *key, const char *why)
{
	struct hook_answer	 a;

	memset(&a, 0, sizeof(a));
	if (er == HOOK_HANDSHAKE && key != NULL) {
		a.name[0] = "challenge";
		snprintf(a.value[0], sizeof(a.value[0]), "%s", key);
		a.n = 1;
	}
	return resp_make(r, &(struct resp_in){ .err = er,
	    .key = er == HOOK_HANDSHAKE ? NULL : key,
	    .answer = er == HOOK_HANDSHAKE ? &a : NULL, .detail = why });
}

/* resp_make() and its body parsed; NULL if either fails. */
static json_t *
make(struct resp *r, enum hook_err er, const char *key, const char *why)
{
	if (mkresp(r, er, key, why) == -1)
		return NULL;
	return body_json(r);
}

/* 1 if o's member name is the string want; want NULL: no such member. */
static int
str_is(json_t *o, const char *name, const char *want)
{
	const char	*v;

	if (o == NULL)
		return 0;
	if (want == NULL)
		return json_object_get(o, name) == NULL;
	return (v = member(o, name)) != NULL && strcmp(v, want) == 0;
}

/* The value of header name in head ("Name: value\r\n"), copied. */
static int
head_value(const char *head, const char *name, char *out, size_t outsz)
{
	const char	*p, *end;
	size_t		 n = strlen(name);

	for (p = head; *p != '\0'; p = end + 2) {
		if ((end = strstr(p, "\r\n")) == NULL)
			return 0;
		if (end == p)
			return 0;		/* the blank line */
		if ((size_t)(end - p) > n + 2 && strncmp(p, name, n) == 0 &&
		    p[n] == ':' && p[n + 1] == ' ') {
			if ((size_t)(end - p) - n - 2 >= outsz)
				return 0;
			memcpy(out, p + n + 2, (size_t)(end - p) - n - 2);
			out[(size_t)(end - p) - n - 2] = '\0';
			return 1;
		}
	}
	return 0;
}

static void
test_table(void)
{
	struct resp	 r;
	json_t		*o;
	size_t		 i;
	int		 er, rc, seen[HOOK__MAX];
	int		 all_named = 1, all_status = 1, all_json = 1;
	int		 no410 = 1, words = 1;

	/* Every enum value has a row: a status and a name. */
	for (er = 0; er < HOOK__MAX; er++) {
		if (resp_status(er) < 200 || resp_status(er) > 599) {
			all_status = 0;
			printf("# outcome %d has status %d\n", er,
			    resp_status(er));
		}
		if (resp_outcome(er) == NULL || *resp_outcome(er) == '\0') {
			all_named = 0;
			printf("# outcome %d has no name\n", er);
		}
		if (resp_status(er) == 410)
			no410 = 0;
		if (er == HOOK_STATUS)
			continue;	/* the caller's document: below */
		if (mkresp(&r, er, "k", NULL) == -1 ||
		    r.status != resp_status(er) || r.status == 410 ||
		    (o = body_json(&r)) == NULL) {
			all_json = 0;
			printf("# outcome %d: no valid JSON body\n", er);
		} else {
			/* A handshake's answer carries its members alone. */
			if (er == HOOK_HANDSHAKE) {
				if (member(o, "challenge") == NULL ||
				    strcmp(member(o, "challenge"), "k") != 0) {
					words = 0;
					printf("# challenge not echoed\n");
				}
			} else if (member(o, resp_status(er) < 300 ? "status" :
			    "error") == NULL || strcmp(member(o,
			    resp_status(er) < 300 ? "status" : "error"),
			    resp_outcome(er)) != 0) {
				words = 0;
				printf("# outcome %d: body word differs\n", er);
			}
			json_decref(o);
		}
		resp_clear(&r);
	}
	CHECK(all_status, "every outcome 0..HOOK__MAX-1 has an HTTP status");
	CHECK(all_named, "every outcome 0..HOOK__MAX-1 has a name");
	CHECK(all_json, "every outcome has a JSON object body");
	CHECK(words, "every body carries the outcome's name");
	CHECK(no410, "no outcome answers 410 (Standard Webhooks disables)");

	/* The contract's statuses, one check each. */
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < sizeof(spec) / sizeof(spec[0]); i++) {
		seen[spec[i].er] = 1;
		CHECK(resp_status(spec[i].er) == spec[i].status &&
		    (spec[i].name == NULL ||
		    strcmp(resp_outcome(spec[i].er), spec[i].name) == 0),
		    "outcome %d (%s): status %d%s%s", (int)spec[i].er,
		    resp_outcome(spec[i].er), spec[i].status,
		    spec[i].name ? ", name " : "",
		    spec[i].name ? spec[i].name : "");
	}
	for (er = 0, i = 1; er < HOOK__MAX; er++)
		i &= seen[er];
	CHECK(i == 1, "this test knows the status of every outcome");

	CHECK(resp_status(HOOK__MAX) == 500 && resp_outcome(HOOK__MAX) != NULL,
	    "an outcome out of range is a 500");
	rc = mkresp(&r, HOOK__MAX, NULL, NULL);
	CHECK(rc == 0 && r.status == 500 && r.err == HOOK_ESYSTEM,
	    "resp_make out of range -> internal 500");
	resp_clear(&r);
}

static void
test_bodies(void)
{
	struct resp	 r;
	json_t		*o;
	const char	*m;
	int		 er, ok;

	o = make(&r, HOOK_OK, "evt_1", NULL);
	CHECK(o != NULL && json_object_size(o) == 2 &&
	    str_is(o, "status", "processed") && str_is(o, "key", "evt_1"),
	    "OK body is {\"status\":\"processed\",\"key\":\"evt_1\"}");
	CHECK(r.replayed == 0 && r.retry_after == 0 && r.allow == NULL,
	    "OK: no replay, Retry-After or Allow");
	json_decref(o);
	resp_clear(&r);

	o = make(&r, HOOK_DUP, "evt_1", NULL);
	CHECK(o != NULL && json_object_size(o) == 2 &&
	    str_is(o, "status", "already_processed") &&
	    str_is(o, "key", "evt_1"),
	    "DUP body is {\"status\":\"already_processed\",\"key\":...}");
	CHECK(r.status == 200 && r.replayed == 1, "DUP: 200 and replayed");
	json_decref(o);
	resp_clear(&r);

	o = make(&r, HOOK_ECONFLICT, "evt_1", NULL);
	CHECK(str_is(o, "error", "key_conflict") &&
	    (m = member(o, "message")) != NULL && *m != '\0' &&
	    str_is(o, "key", "evt_1") && str_is(o, "status", NULL),
	    "conflict body names key_conflict, a message and the key");
	json_decref(o);
	resp_clear(&r);

	o = make(&r, HOOK_ESIG, "evt_1", NULL);
	CHECK(str_is(o, "error", "invalid_signature") &&
	    str_is(o, "status", NULL) && str_is(o, "key", NULL),
	    "ESIG body: error invalid_signature, no status, no key");
	json_decref(o);
	resp_clear(&r);

	o = make(&r, HOOK_ESTALE, NULL, NULL);
	CHECK(str_is(o, "error", "stale_timestamp"),
	    "ESTALE body: error stale_timestamp");
	json_decref(o);
	resp_clear(&r);

	/* Every 4xx and 5xx says why, in words. */
	ok = 1;
	for (er = 0; er < HOOK__MAX; er++) {
		if (resp_status(er) < 400)
			continue;
		o = make(&r, er, NULL, NULL);
		if (o == NULL || member(o, "error") == NULL ||
		    (m = member(o, "message")) == NULL || strlen(m) < 10) {
			ok = 0;
			printf("# outcome %d says no why\n", er);
		}
		json_decref(o);
		resp_clear(&r);
	}
	CHECK(ok, "every 4xx and 5xx has \"error\" and a \"message\"");

	/* why replaces the generic message of a 400 only. */
	o = make(&r, HOOK_EJSON, NULL, "line 1: unexpected end");
	CHECK(str_is(o, "message", "line 1: unexpected end"),
	    "a 400 says why in its message");
	json_decref(o);
	resp_clear(&r);
	o = make(&r, HOOK_ESIG, NULL, "no signature matched");
	CHECK(o != NULL && !str_is(o, "message", "no signature matched"),
	    "a 401 keeps its generic message (no detail for an attacker)");
	json_decref(o);
	resp_clear(&r);
	o = make(&r, HOOK_ECONF, NULL, "/etc/secret: denied");
	CHECK(o != NULL && strstr(r.body, "/etc/secret") == NULL,
	    "a 500 misconfiguration keeps its detail out of the body");
	json_decref(o);
	resp_clear(&r);
}

static void
test_escaping(void)
{
	static const char	 key[] = "a\"b\\c/d\n\r\t\b\f\x01\x1f\x7f"
	    " \xc3\xa9 end";
	static const char	 why[] = "bad \"x\"\\\n";
	struct resp		 r;
	json_t			*o;
	char			*lng;
	size_t			 i;

	o = make(&r, HOOK_OK, key, NULL);
	CHECK(str_is(o, "key", key),
	    "quotes, backslashes and control characters in a key round-trip");
	CHECK(r.body != NULL && strchr(r.body, '\n') == r.body + r.bodysz - 1,
	    "no raw newline inside the body");
	CHECK(r.body != NULL && strstr(r.body, "\\u0001") != NULL &&
	    strstr(r.body, "\\\"") != NULL && strstr(r.body, "\\\\") != NULL,
	    "control characters written as \\u00XX, \\\" and \\\\ escaped");
	json_decref(o);
	resp_clear(&r);

	o = make(&r, HOOK_ECONFLICT, key, NULL);
	CHECK(str_is(o, "key", key), "conflict key round-trips");
	json_decref(o);
	resp_clear(&r);

	o = make(&r, HOOK_ENOKEY, NULL, why);
	CHECK(str_is(o, "message", why), "a 400's why is escaped too");
	json_decref(o);
	resp_clear(&r);

	o = make(&r, HOOK_OK, "", NULL);
	CHECK(str_is(o, "key", ""), "an empty key is \"\"");
	json_decref(o);
	resp_clear(&r);
	o = make(&r, HOOK_OK, NULL, NULL);
	CHECK(o != NULL && str_is(o, "status", "processed"),
	    "a NULL key still gives JSON");
	json_decref(o);
	resp_clear(&r);

	/*
	 * A key that is not UTF-8: a header key can carry any byte, and
	 * a signed "X-Idempotency-Key: k\xff\xfe" once produced a body
	 * that was not JSON.  The body must stay JSON (RFC 8259 section
	 * 8.1: UTF-8) whatever the key holds.
	 */
	o = make(&r, HOOK_OK, "k\xff\xfe", NULL);
	CHECK(o != NULL && str_is(o, "status", "processed"),
	    "a key that is not UTF-8 still gives a valid JSON body");
	json_decref(o);
	resp_clear(&r);
	/* Overlong '/', a UTF-16 surrogate, past U+10FFFF, cut short. */
	o = make(&r, HOOK_ECONFLICT, "a\xc0\xaf b\xed\xa0\x80 c\xf4\x90\x80"
	    "\x80 d\xe2\x82", NULL);
	CHECK(o != NULL && str_is(o, "error", "key_conflict"),
	    "malformed UTF-8 sequences in a key still give valid JSON");
	json_decref(o);
	resp_clear(&r);

	/* A long key made only of characters that need escaping. */
	if ((lng = malloc(4001)) == NULL)
		BAIL("out of memory");
	for (i = 0; i < 4000; i++)
		lng[i] = i % 2 ? '"' : '\x01';
	lng[4000] = '\0';
	o = make(&r, HOOK_DUP, lng, NULL);
	CHECK(str_is(o, "key", lng), "a 4000-byte key of escapes round-trips");
	json_decref(o);
	resp_clear(&r);
	free(lng);
}

/*
 * A handshake's answer (SPEC section 14): its members and nothing else,
 * values escaped whatever the sender put in them; with no member,
 * {"status":"handshake"}.
 */
static void
test_handshake(void)
{
	static const char	 tok[] = "p\"l\\a\n\x01in\xff</x>";
	struct hook_answer	 a;
	struct resp		 r;
	json_t			*o;
	size_t			 i;

	memset(&a, 0, sizeof(a));
	a.name[0] = "plainToken";
	snprintf(a.value[0], sizeof(a.value[0]), "%s", tok);
	a.name[1] = "encryptedToken";
	snprintf(a.value[1], sizeof(a.value[1]), "%064d", 7);
	a.n = 2;
	o = resp_make(&r, &(struct resp_in){ .err = HOOK_HANDSHAKE,
	    .key = "k", .answer = &a }) == 0 ? body_json(&r) : NULL;
	CHECK(r.status == 200 && o != NULL && json_object_size(o) == 2 &&
	    str_is(o, "encryptedToken", a.value[1]) &&
	    member(o, "plainToken") != NULL &&
	    strncmp(member(o, "plainToken"), "p\"l\\a\n\x01in", 9) == 0,
	    "zoom's answer: plainToken (escaped) and encryptedToken alone");
	CHECK(r.body != NULL && strstr(r.body, "\\u0001") != NULL &&
	    strstr(r.body, "\xff") == NULL,
	    "a token's control and non-UTF-8 bytes are escaped");
	json_decref(o);
	resp_clear(&r);

	/* The longest token, every byte escaped six-fold. */
	for (i = 0; i < HOOK_TOKEN_MAX; i++)
		a.value[0][i] = '\x01';
	a.value[0][HOOK_TOKEN_MAX] = '\0';
	o = resp_make(&r, &(struct resp_in){ .err = HOOK_HANDSHAKE,
	    .answer = &a }) == 0 ? body_json(&r) : NULL;
	CHECK(o != NULL && str_is(o, "plainToken", a.value[0]),
	    "a %d-byte token of escapes round-trips", HOOK_TOKEN_MAX);
	json_decref(o);
	resp_clear(&r);

	a.n = 0;
	o = resp_make(&r, &(struct resp_in){ .err = HOOK_HANDSHAKE,
	    .answer = &a }) == 0 ? body_json(&r) : NULL;
	CHECK(r.status == 200 && str_is(o, "status", "handshake") &&
	    json_object_size(o) == 1,
	    "a handshake without members (Stripe's ping): "
	    "{\"status\":\"handshake\"}");
	json_decref(o);
	resp_clear(&r);
	o = resp_make(&r, &(struct resp_in){ .err = HOOK_HANDSHAKE }) == 0 ?
	    body_json(&r) : NULL;
	CHECK(str_is(o, "status", "handshake"), "no answer at all: the same");
	json_decref(o);
	resp_clear(&r);
}

static void
test_head(void)
{
	struct resp	 r;
	char		 head[1024], v[256], want[32], ct[64], cl[64];
	json_error_t	 jerr;
	json_t		*o;
	const char	*b;
	size_t		 sz;
	int		 n, er, ok, rc;

	/* Every outcome: Status, type, a true Content-Length, blank line. */
	ok = 1;
	for (er = 0; er < HOOK__MAX; er++) {
		if (mkresp(&r, er, "evt_1", NULL) == -1 ||
		    (n = resp_head(&r, head, sizeof(head))) <= 0 ||
		    (size_t)n != strlen(head)) {
			ok = 0;
			resp_clear(&r);
			continue;
		}
		snprintf(want, sizeof(want), "Status: %d ", r.status);
		b = resp_body(&r, &sz);
		snprintf(v, sizeof(v), "%zu", sz);
		if (strncmp(head, want, strlen(want)) != 0 ||
		    !head_value(head, "Content-Type", ct, sizeof(ct)) ||
		    strcmp(ct, "application/json") != 0 ||
		    !head_value(head, "Content-Length", cl, sizeof(cl)) ||
		    strcmp(cl, v) != 0 || sz != r.bodysz ||
		    b != r.body || n < 4 ||
		    strcmp(head + n - 4, "\r\n\r\n") != 0 ||
		    strstr(head, "\r\n\r\n") != head + n - 4) {
			ok = 0;
			printf("# outcome %d: bad head\n%s", er, head);
		}
		resp_clear(&r);
	}
	CHECK(ok, "every head: Status first, Content-Type: application/json, "
	    "Content-Length equal to the body, one blank line at the end");

	rc = mkresp(&r, HOOK_DUP, "evt_1", NULL);
	n = rc == 0 ? resp_head(&r, head, sizeof(head)) : -1;
	CHECK(n > 0 && strncmp(head, "Status: 200 ", 12) == 0 &&
	    head_value(head, "Idempotent-Replayed", v, sizeof(v)) &&
	    strcmp(v, "true") == 0,
	    "DUP head: 200 with Idempotent-Replayed: true");
	resp_clear(&r);

	rc = mkresp(&r, HOOK_OK, "evt_1", NULL);
	n = rc == 0 ? resp_head(&r, head, sizeof(head)) : -1;
	CHECK(n > 0 && strstr(head, "Idempotent-Replayed") == NULL &&
	    strstr(head, "Retry-After") == NULL && strstr(head, "Allow") ==
	    NULL, "OK head: no Idempotent-Replayed, Retry-After or Allow");
	resp_clear(&r);

	rc = mkresp(&r, HOOK_EMETHOD, NULL, NULL);
	n = rc == 0 ? resp_head(&r, head, sizeof(head)) : -1;
	CHECK(n > 0 && strncmp(head, "Status: 405 ", 12) == 0 &&
	    head_value(head, "Allow", v, sizeof(v)) && strcmp(v, "POST") == 0,
	    "405 head carries Allow: POST");
	resp_clear(&r);

	rc = mkresp(&r, HOOK_EBUSY, NULL, NULL);
	n = rc == 0 ? resp_head(&r, head, sizeof(head)) : -1;
	CHECK(n > 0 && strncmp(head, "Status: 503 ", 12) == 0 &&
	    head_value(head, "Retry-After", v, sizeof(v)) &&
	    strspn(v, "0123456789") == strlen(v) && atoi(v) > 0,
	    "503 head carries Retry-After with a positive number of seconds");
	resp_clear(&r);
	rc = mkresp(&r, HOOK_ECERT, NULL, NULL);
	n = rc == 0 ? resp_head(&r, head, sizeof(head)) : -1;
	CHECK(n > 0 && strncmp(head, "Status: 503 ", 12) == 0 &&
	    head_value(head, "Retry-After", v, sizeof(v)) && atoi(v) > 0 &&
	    strstr(r.body, "certificate") != NULL,
	    "a certificate not fetched: 503 with Retry-After, the sender "
	    "retries");
	resp_clear(&r);

	ok = 1;
	for (er = 0; er < HOOK__MAX; er++) {
		if (mkresp(&r, er, NULL, NULL) == -1 ||
		    resp_head(&r, head, sizeof(head)) <= 0)
			ok = 0;
		else if ((strstr(head, "Allow:") != NULL) !=
		    (r.status == 405) ||
		    (strstr(head, "Retry-After:") != NULL) !=
		    (r.status == 503) ||
		    (strstr(head, "Idempotent-Replayed:") != NULL) !=
		    (er == HOOK_DUP) ||
		    strstr(head, " 410 ") != NULL)
			ok = 0;
		resp_clear(&r);
	}
	CHECK(ok, "Allow only on 405, Retry-After only on 503, "
	    "Idempotent-Replayed only on DUP");

	rc = resp_make(&r, &(struct resp_in){ .err = HOOK_STATUS,
	    .raw = "# HELP x\n", .rawsz = 9,
	    .ctype = "text/plain; version=0.0.4" });
	n = rc == 0 ? resp_head(&r, head, sizeof(head)) : -1;
	b = resp_body(&r, &sz);
	CHECK(n > 0 && strncmp(head, "Status: 200 ", 12) == 0 &&
	    head_value(head, "Content-Type", v, sizeof(v)) &&
	    strcmp(v, "text/plain; version=0.0.4") == 0 && sz == 9 &&
	    memcmp(b, "# HELP x\n", 9) == 0,
	    "the status document: its own Content-Type, its bytes copied");
	resp_clear(&r);

	rc = mkresp(&r, HOOK_EAUTH, NULL, NULL);
	n = rc == 0 ? resp_head(&r, head, sizeof(head)) : -1;
	CHECK(n > 0 && strncmp(head, "Status: 401 ", 12) == 0 &&
	    head_value(head, "WWW-Authenticate", v, sizeof(v)) &&
	    strncmp(v, "Basic realm=\"oncehook\"", 22) == 0,
	    "the status endpoint's 401 asks for Basic (a browser prompts)");
	resp_clear(&r);
	rc = mkresp(&r, HOOK_ESIG, NULL, NULL);
	n = rc == 0 ? resp_head(&r, head, sizeof(head)) : -1;
	CHECK(n > 0 && strstr(head, "WWW-Authenticate") == NULL,
	    "a webhook's 401 does not");
	resp_clear(&r);
	rc = mkresp(&r, HOOK_EGETONLY, NULL, NULL);
	n = rc == 0 ? resp_head(&r, head, sizeof(head)) : -1;
	CHECK(n > 0 && head_value(head, "Allow", v, sizeof(v)) &&
	    strcmp(v, "GET, HEAD") == 0, "the status endpoint's 405 allows "
	    "GET, HEAD");
	resp_clear(&r);

	rc = mkresp(&r, HOOK_OK, "evt_1", NULL);
	n = rc == 0 ? resp_head(&r, head, 20) : 0;
	CHECK(n == -1,
	    "resp_head refuses a buffer too small");
	resp_clear(&r);

	/* The out-of-memory fallback is consistent too. */
	memset(&r, 0, sizeof(r));
	r.err = HOOK_ESYSTEM;
	r.status = 500;
	b = resp_body(&r, &sz);
	n = resp_head(&r, head, sizeof(head));
	CHECK(b != NULL && sz == strlen(b) && n > 0 &&
	    head_value(head, "Content-Length", v, sizeof(v)) &&
	    (size_t)atoi(v) == sz,
	    "static out-of-memory body: Content-Length matches");
	o = json_loadb(b, sz, 0, &jerr);
	CHECK(o != NULL && json_is_object(o) && member(o, "error") != NULL,
	    "static out-of-memory body is JSON with \"error\"");
	json_decref(o);

	resp_clear(&r);
	resp_clear(&r);
	resp_clear(NULL);
	CHECK(r.body == NULL && r.bodysz == 0,
	    "resp_clear twice and on NULL is harmless");
}

/*
 * A scheme's ack (struct hook_ack): Discord's 204 without a body, and
 * without Content-Type or Content-Length (RFC 9110 section 8.6), for
 * every 200 outcome; its interactions PING answered {"type":1}, the 1 a
 * number; Adyen's [accepted] as text; an error as without an ack.
 */
static void
test_ack(void)
{
	static const struct hook_ack	 discord = { 204, NULL };
	static const struct hook_ack	 adyen = { 200, "[accepted]" };
	struct hook_answer		 a;
	struct resp			 r, r0;
	char				 head[1024], v[64];
	int				 er, n, ok = 1, n204 = 0;

	for (er = 0; er < HOOK__MAX; er++) {
		if (er == HOOK_STATUS)
			continue;	/* the status document, not a delivery */
		if (resp_make(&r0, &(struct resp_in){ .err = er,
		    .key = "k" }) == -1 || resp_make(&r, &(struct resp_in){
		    .err = er, .key = "k", .ack = &discord }) == -1 ||
		    (n = resp_head(&r, head, sizeof(head))) <= 0) {
			ok = 0;
			continue;
		}
		if (r0.status == 200) {
			n204++;
			if (r.status != 204 || r.bodysz != 0 ||
			    strncmp(head, "Status: 204 No Content\r\n", 24)
			    != 0 || !head_value(head, "Content-Type", v,
			    sizeof(v)) || strcmp(v, "application/json") != 0 ||
			    strstr(head, "Content-Length") != NULL ||
			    strcmp(head + n - 4, "\r\n\r\n") != 0) {
				ok = 0;
				printf("# outcome %d with discord's ack:\n%s",
				    er, head);
			}
		} else if (r.status != r0.status || r.bodysz != r0.bodysz ||
		    !head_value(head, "Content-Type", v, sizeof(v)) ||
		    strcmp(v, "application/json") != 0) {
			ok = 0;
			printf("# outcome %d changed by an ack\n", er);
		}
		resp_clear(&r0);
		resp_clear(&r);
	}
	CHECK(ok && n204 >= 3, "discord's ack: each of the %d 200 outcomes "
	    "a 204, no body nor Content-Length, Content-Type JSON (Discord's "
	    "PING wants one); the others as they "
	    "are", n204);

	memset(&a, 0, sizeof(a));
	a.name[0] = "type";
	memcpy(a.value[0], "1", 2);
	a.number = 1;
	a.n = 1;
	n = resp_make(&r, &(struct resp_in){ .err = HOOK_HANDSHAKE,
	    .answer = &a, .ack = &discord }) == 0 ?
	    resp_head(&r, head, sizeof(head)) : -1;
	CHECK(n > 0 && r.status == 200 && r.bodysz == 11 &&
	    memcmp(r.body, "{\"type\":1}\n", 11) == 0 &&
	    head_value(head, "Content-Length", v, sizeof(v)) &&
	    strcmp(v, "11") == 0,
	    "discord's PING: 200 {\"type\":1}, the 1 a number");
	resp_clear(&r);
	a.number = 0;
	CHECK(resp_make(&r, &(struct resp_in){ .err = HOOK_HANDSHAKE,
	    .answer = &a }) == 0 && r.bodysz == 13 &&
	    memcmp(r.body, "{\"type\":\"1\"}\n", 13) == 0,
	    "without the number bit, the same value is a string");
	resp_clear(&r);
	a.n = 0;
	CHECK(resp_make(&r, &(struct resp_in){ .err = HOOK_HANDSHAKE,
	    .answer = &a, .ack = &discord }) == 0 && r.status == 204 &&
	    r.bodysz == 0,
	    "discord's webhook events PING (no members): 204");
	resp_clear(&r);

	n = resp_make(&r, &(struct resp_in){ .err = HOOK_DUP, .key = "k",
	    .ack = &adyen }) == 0 ? resp_head(&r, head, sizeof(head)) : -1;
	CHECK(n > 0 && r.status == 200 && r.bodysz == 10 &&
	    memcmp(r.body, "[accepted]", 10) == 0 &&
	    head_value(head, "Content-Type", v, sizeof(v)) &&
	    strcmp(v, "text/plain") == 0,
	    "adyen's ack: a replay answered [accepted] as text/plain");
	resp_clear(&r);
}

int
main(void)
{
	test_table();
	test_bodies();
	test_escaping();
	test_handshake();
	test_head();
	test_ack();
	return tap_done();
}
