/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: event extraction (src/pipeline/event.c).
 *
 * Canonical JSON and its hash, the idempotency key from headers, JSON
 * pointers and the hash in the configured order, the event type, and
 * every way a hostile body is refused.  Endpoints come from conf_load()
 * over a table of variables, as in production.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "lib/crypto.h"
#include "pipeline/event.h"
#include "lib/jsonpeek.h"
#include "hook.h"
#include "tap.h"
#include "testlib.h"

/* An unnamed endpoint of scheme with key sources key (NULL: the
 * scheme's); its secret is one the standard scheme takes, or basic's. */
static struct conf *
load_scheme(const char *scheme, const char *key)
{
	int		 basic = strcmp(scheme, "basic") == 0;
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", "/nonexistent/oncehook/t_event.db" },
		{ "ONCEHOOK_SCHEME", scheme },
		{ "ONCEHOOK_SECRET", basic ? "t-event:a-password-of-length" :
		    "whsec_dGVzdC1zZWNyZXQtb2YtMzItYnl0ZXMtb3ItbW9yZQ==" },
		{ "ONCEHOOK_KEY", key },
		{ NULL, NULL }
	};
	struct conf	*cf;
	char		 err[256];

	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load %s: %s", scheme, err);
	return cf;
}

/* An unnamed hmac-sha256 endpoint whose key sources are key (or default). */
static struct conf *
load(const char *key)
{
	return load_scheme("hmac-sha256", key);
}

/* A request carrying only the given headers (CGI names). */
static void
mkreq_h(struct req *rq, const struct req_header *h, size_t nh)
{
	memset(rq, 0, sizeof(*rq));
	rq->method = "POST";
	rq->headers = h;
	rq->nheaders = nh;
}

/* event_extract() on a NUL-terminated body without headers. */
static enum hook_err
ext(const struct conf *cf, const char *body, struct event *ev)
{
	struct req	 rq;
	struct why	 why = { "", NULL };

	mkreq_h(&rq, NULL, 0);
	return event_extract(&cf->endpoints[0], &rq, body, strlen(body), ev,
	    &why);
}

/* event_extract() on sz bytes of body. */
static enum hook_err
extn(const struct conf *cf, const char *body, size_t sz, struct event *ev,
    struct why *why)
{
	struct req	 rq;

	mkreq_h(&rq, NULL, 0);
	return event_extract(&cf->endpoints[0], &rq, body, sz, ev, why);
}

/* event_canonical() of a NUL-terminated text. */
static char *
canon(const char *text)
{
	return event_canonical(text, strlen(text));
}

/* SHA-256 hex of text into out. */
static void
sha256hex(const char *text, char out[CRYPTO_SHA256_HEXLEN + 1])
{
	unsigned char	 md[CRYPTO_SHA256_LEN];

	if (crypto_sha256(text, strlen(text), md) == -1)
		BAIL("crypto_sha256");
	crypto_hex(md, sizeof(md), out);
}

/* 1 if ev holds nothing (as after a failure). */
static int
empty(const struct event *ev)
{
	return ev->key == NULL && ev->type == NULL && ev->hash[0] == '\0' &&
	    ev->payload == NULL && ev->norm == NULL;
}

static void
test_canonical(void)
{
	struct conf	*cf = load("hash");
	struct event	 a, b, c;
	char		*t, *u;
	char		 want[CRYPTO_SHA256_HEXLEN + 1];
	enum hook_err	 er;

	t = canon("{\"b\":1, \"a\":[1, 2]}");
	CHECK(t != NULL && strcmp(t, "{\"a\":[1,2],\"b\":1}") == 0,
	    "canonical: keys sorted, white space dropped (got %s)",
	    t ? t : "NULL");
	free(t);

	t = canon(" {\"z\" : {\"y\":true,\"x\":null}, \"a\":\"s\"}\n");
	CHECK(t != NULL &&
	    strcmp(t, "{\"a\":\"s\",\"z\":{\"x\":null,\"y\":true}}") == 0,
	    "canonical: nested objects sorted too (got %s)", t ? t : "NULL");
	free(t);

	t = canon("{\"a\":\"\\u00e9\\/\"}");
	u = canon("{\"a\":\"\xc3\xa9/\"}");
	CHECK(t != NULL && u != NULL && strcmp(t, u) == 0,
	    "canonical: escaped and literal characters serialise alike");
	free(t);
	free(u);

	t = canon("{\"a\":1,\"a\":2}");
	CHECK(t == NULL, "canonical: duplicate keys refused");
	free(t);
	t = canon("{\"a\":");
	CHECK(t == NULL, "canonical: truncated text refused");
	free(t);

	er = ext(cf, "{\"b\":1, \"a\":[1, 2]}", &a);
	CHECK(er == HOOK_OK, "extract: spaced, unsorted body");
	er = ext(cf, "{\"a\":[1,2],\"b\":1}", &b);
	CHECK(er == HOOK_OK, "extract: compact, sorted body");
	if (a.key == NULL || b.key == NULL)
		BAIL("cannot go on without both events");
	CHECK(strcmp(a.hash, b.hash) == 0,
	    "re-serialised body: same payload hash");
	sha256hex("{\"a\":[1,2],\"b\":1}", want);
	CHECK(strcmp(a.hash, want) == 0,
	    "payload hash is SHA-256 of the canonical text");
	CHECK(a.key != NULL && strcmp(a.key, a.hash) == 0 &&
	    b.key != NULL && strcmp(b.key, a.key) == 0,
	    "key source hash: the key is the payload hash");
	er = ext(cf, "{\"a\":[1,2],\"b\":2}", &c);
	CHECK(er == HOOK_OK && strcmp(c.hash, a.hash) != 0 &&
	    c.key != NULL && strcmp(c.key, a.key) != 0,
	    "different value: different hash and key");
	event_clear(&c);
	er = ext(cf, "{\"a\":[2,1],\"b\":1}", &c);
	CHECK(er == HOOK_OK && strcmp(c.hash, a.hash) != 0,
	    "array order is significant");
	event_clear(&c);
	er = ext(cf, "{\"a\":[1,2],\"b\":\"1\"}", &c);
	CHECK(er == HOOK_OK && strcmp(c.hash, a.hash) != 0,
	    "string \"1\" and number 1 differ");
	event_clear(&c);

	CHECK(a.payload != NULL && a.payloadsz == 19 &&
	    memcmp(a.payload, "{\"b\":1, \"a\":[1, 2]}", 19) == 0,
	    "payload is the raw body, not the canonical form");
	event_clear(&a);
	event_clear(&b);
	CHECK(empty(&a), "event_clear empties the event");
	event_clear(&a);
	event_clear(NULL);
	CHECK(1, "event_clear twice and on NULL is harmless");
	conf_free(cf);
}

static void
test_key_header(void)
{
	static const char	 name[] = "HTTP_X_IDEMPOTENCY_KEYTRAILING";
	struct req_header	 h[2];
	struct conf		*cf, *cf2;
	struct event		 ev;
	struct req		 rq;
	struct why		 why = { "", NULL };
	const char		*body = "{\"id\":\"from-json\"}";
	enum hook_err		 er;

	cf = load("header:X-Idempotency-Key json:/id");
	cf2 = load("header:x-idempotency-key");

	h[0].name = "HTTP_OTHER";
	h[0].namelen = 10;
	h[0].value = "other";
	h[1].name = name;
	h[1].namelen = 22;		/* "HTTP_X_IDEMPOTENCY_KEY" */
	h[1].value = "hdr-1";
	mkreq_h(&rq, h, 2);
	er = event_extract(&cf->endpoints[0], &rq, body, strlen(body), &ev,
	    &why);
	CHECK(er == HOOK_OK && ev.key != NULL && strcmp(ev.key, "hdr-1") == 0,
	    "key from header (name bounded by namelen), before json:/id");
	event_clear(&ev);

	er = event_extract(&cf2->endpoints[0], &rq, body, strlen(body), &ev,
	    &why);
	CHECK(er == HOOK_OK && ev.key != NULL && strcmp(ev.key, "hdr-1") == 0,
	    "header name matched case-insensitively");
	event_clear(&ev);

	h[1].namelen = 21;		/* "HTTP_X_IDEMPOTENCY_KE" */
	er = event_extract(&cf->endpoints[0], &rq, body, strlen(body), &ev,
	    &why);
	CHECK(er == HOOK_OK && ev.key != NULL &&
	    strcmp(ev.key, "from-json") == 0,
	    "a header name prefix does not match; falls to json:/id");
	event_clear(&ev);

	h[1].namelen = 22;
	h[1].value = "";
	er = event_extract(&cf->endpoints[0], &rq, body, strlen(body), &ev,
	    &why);
	CHECK(er == HOOK_OK && ev.key != NULL &&
	    strcmp(ev.key, "from-json") == 0,
	    "empty header skipped; next source used");
	event_clear(&ev);

	er = event_extract(&cf2->endpoints[0], &rq, body, strlen(body), &ev,
	    &why);
	CHECK(er == HOOK_ENOKEY && why.client != NULL && empty(&ev),
	    "empty header as the only source: HOOK_ENOKEY");

	h[1].value = "tab\there";
	er = event_extract(&cf->endpoints[0], &rq, body, strlen(body), &ev,
	    &why);
	CHECK(er == HOOK_EBADKEY && why.client != NULL && empty(&ev),
	    "header key with a control character: HOOK_EBADKEY");

	h[1].value = "\xc3\xa9t\xc3\xa9-42";
	er = event_extract(&cf->endpoints[0], &rq, body, strlen(body), &ev,
	    &why);
	CHECK(er == HOOK_OK && ev.key != NULL &&
	    strcmp(ev.key, "\xc3\xa9t\xc3\xa9-42") == 0,
	    "UTF-8 header key accepted as is");
	event_clear(&ev);

	conf_free(cf);
	conf_free(cf2);
}

/* Extract with key sources src from body; check the key is want. */
static void
pointer_case(const char *src, const char *body, const char *want,
    const char *what)
{
	struct conf	*cf = load(src);
	struct event	 ev;
	enum hook_err	 er;

	er = ext(cf, body, &ev);
	CHECK(er == HOOK_OK && ev.key != NULL && strcmp(ev.key, want) == 0,
	    "key %s: %s (got %s)", src, what, ev.key ? ev.key : "none");
	event_clear(&ev);
	conf_free(cf);
}

/* Extract with key sources src from body; check the outcome is want. */
static void
key_fails(const char *src, const char *body, enum hook_err want,
    const char *what)
{
	struct conf	*cf = load(src);
	struct event	 ev;
	struct why	 why = { "", NULL };
	enum hook_err	 er;

	er = extn(cf, body, strlen(body), &ev, &why);
	CHECK(er == want && why.client != NULL && empty(&ev),
	    "key %s: %s (got %d)", src, what, (int)er);
	conf_free(cf);
}

/* JSON pointer key sources: what each finds in a body. */
static const struct {
	const char	*src;
	const char	*body;
	const char	*want;
	const char	*what;
} pointers[] = {
	{ "json:/id", "{\"id\":\"evt_1\",\"x\":{}}",
	  "evt_1", "top-level string" },
	{ "json:/data/object/id",
	  "{\"data\":{\"object\":{\"id\":\"pi_3\"},\"id\":\"no\"},"
	  "\"id\":\"x\"}",
	  "pi_3", "nested pointer" },
	{ "json:/a/0", "{\"a\":[\"first\",\"second\"]}",
	  "first", "array index 0" },
	{ "json:/a/1", "{\"a\":[\"first\",\"second\"]}",
	  "second", "array index 1" },
	{ "json:/a~1b", "{\"a/b\":\"slash\",\"a\":{\"b\":\"no\"}}",
	  "slash", "~1 is a slash inside one token" },
	{ "json:/m~0n", "{\"m~n\":\"tilde\"}", "tilde", "~0 is a tilde" },
	{ "json:/~01", "{\"~1\":\"t1\",\"/\":\"no\"}",
	  "t1", "~01 is ~ then 1, not /" },
	{ "json:/id", "{\"id\":12345}",
	  "12345", "integer becomes decimal text" },
	{ "json:/id", "{\"id\":-7}",
	  "-7", "negative integer becomes decimal text" },
	{ "json:/id", "{\"id\":9007199254740993}",
	  "9007199254740993", "integer beyond double precision kept exact" },
	{ "json:/id json:/eventId", "{\"id\":\"\",\"eventId\":\"e2\"}",
	  "e2", "empty-string key skipped" },
	{ "json:/id json:/eventId", "{\"id\":null,\"eventId\":\"e3\"}",
	  "e3", "null key skipped" },
};

/* Key sources that find no usable key, and what they answer. */
static const struct {
	const char	*src;
	const char	*body;
	enum hook_err	 er;
	const char	*what;
} unusable[] = {
	{ "json:/id", "{\"type\":\"x\"}", HOOK_ENOKEY, "missing: HOOK_ENOKEY" },
	{ "json:/id", "{\"id\":\"\"}",
	  HOOK_ENOKEY, "empty string only: HOOK_ENOKEY" },
	{ "json:/a/01", "{\"a\":[\"x\",\"y\"]}",
	  HOOK_ENOKEY, "array index with a leading zero leads nowhere" },
	{ "json:/a/2", "{\"a\":[\"x\",\"y\"]}",
	  HOOK_ENOKEY, "array index out of range leads nowhere" },
	{ "json:/a/-", "{\"a\":[\"x\"]}",
	  HOOK_ENOKEY, "array index - leads nowhere" },
	{ "json:/id/x", "{\"id\":\"s\"}",
	  HOOK_ENOKEY, "pointer through a string leads nowhere" },
	{ "json:/id", "{\"id\":{\"a\":1}}",
	  HOOK_EBADKEY, "object key: HOOK_EBADKEY" },
	{ "json:/id", "{\"id\":true}",
	  HOOK_EBADKEY, "boolean key: HOOK_EBADKEY" },
	{ "json:/id", "{\"id\":[\"a\"]}",
	  HOOK_EBADKEY, "array key: HOOK_EBADKEY" },
	{ "json:/id", "{\"id\":1.5}", HOOK_EBADKEY, "real key: HOOK_EBADKEY" },
	{ "json:/id json:/eventId", "{\"id\":false,\"eventId\":\"e\"}",
	  HOOK_EBADKEY, "unusable key is not skipped for a later source" },
	{ "json:/id", "{\"id\":\"a\\u0001b\"}",
	  HOOK_EBADKEY, "key with a control character: HOOK_EBADKEY" },
	{ "json:/id", "{\"id\":\"a\\nb\"}",
	  HOOK_EBADKEY, "key with a newline: HOOK_EBADKEY" },
	{ "json:/id", "{\"id\":\"a\\u007fb\"}",
	  HOOK_EBADKEY, "key with DEL: HOOK_EBADKEY" },
};

static void
test_key_json(void)
{
	char	*big, *body;
	size_t	 i;

	for (i = 0; i < sizeof(pointers) / sizeof(pointers[0]); i++)
		pointer_case(pointers[i].src, pointers[i].body,
		    pointers[i].want, pointers[i].what);
	for (i = 0; i < sizeof(unusable) / sizeof(unusable[0]); i++)
		key_fails(unusable[i].src, unusable[i].body, unusable[i].er,
		    unusable[i].what);
	/* EVENT_KEY_MAX bytes pass; one more does not. */
	if ((big = malloc(EVENT_KEY_MAX + 2)) == NULL ||
	    (body = malloc(EVENT_KEY_MAX + 32)) == NULL)
		BAIL("out of memory");
	for (i = 0; i < EVENT_KEY_MAX; i++)
		big[i] = 'k';
	big[EVENT_KEY_MAX] = '\0';
	snprintf(body, EVENT_KEY_MAX + 32, "{\"id\":\"%s\"}", big);
	pointer_case("json:/id", body, big, "EVENT_KEY_MAX bytes accepted");
	big[EVENT_KEY_MAX] = 'k';
	big[EVENT_KEY_MAX + 1] = '\0';
	snprintf(body, EVENT_KEY_MAX + 32, "{\"id\":\"%s\"}", big);
	key_fails("json:/id", body, HOOK_EBADKEY,
	    "EVENT_KEY_MAX + 1 bytes: HOOK_EBADKEY");
	free(big);
	free(body);
}

static void
test_key_default(void)
{
	struct req_header	 h;
	struct conf		*cf = load(NULL);
	struct event		 ev;
	struct req		 rq;
	struct why		 why = { "", NULL };
	const char		*body;
	enum hook_err		 er;

	CHECK(cf->endpoints[0].key.n == 4 &&
	    cf->endpoints[0].key.v[0].kind == SRC_HEADER &&
	    cf->endpoints[0].key.v[3].kind == SRC_HASH,
	    "hmac-sha256 default: header, /id, /eventId, hash");

	h.name = "HTTP_X_IDEMPOTENCY_KEY";
	h.namelen = strlen(h.name);
	h.value = "idem-1";
	mkreq_h(&rq, &h, 1);
	body = "{\"id\":\"id-1\",\"eventId\":\"ev-1\"}";
	er = event_extract(&cf->endpoints[0], &rq, body, strlen(body), &ev,
	    &why);
	CHECK(er == HOOK_OK && strcmp(ev.key, "idem-1") == 0,
	    "default: X-Idempotency-Key header first");
	event_clear(&ev);

	er = ext(cf, body, &ev);
	CHECK(er == HOOK_OK && strcmp(ev.key, "id-1") == 0,
	    "default: no header, /id next");
	event_clear(&ev);

	er = ext(cf, "{\"eventId\":\"ev-2\",\"x\":1}", &ev);
	CHECK(er == HOOK_OK && strcmp(ev.key, "ev-2") == 0,
	    "default: no /id, /eventId next");
	event_clear(&ev);

	er = ext(cf, "{\"x\":1,\"type\":\"t\"}", &ev);
	CHECK(er == HOOK_OK && ev.key != NULL &&
	    strlen(ev.key) == CRYPTO_SHA256_HEXLEN &&
	    strcmp(ev.key, ev.hash) == 0,
	    "default: nothing else, the payload hash");
	event_clear(&ev);
	conf_free(cf);
}

static void
test_type(void)
{
	struct conf	*cf = load("json:/id");
	struct event	 ev;
	struct why	 why = { "", NULL };
	char		 body[EVENT_TYPE_MAX + 64];
	char		 t[EVENT_TYPE_MAX + 2];
	enum hook_err	 er;

	er = ext(cf, "{\"id\":\"1\",\"type\":\"payment.success\"}", &ev);
	CHECK(er == HOOK_OK && ev.type != NULL &&
	    strcmp(ev.type, "payment.success") == 0, "type from /type");
	event_clear(&ev);

	er = ext(cf, "{\"id\":\"1\",\"data\":{\"type\":\"no\"}}", &ev);
	CHECK(er == HOOK_OK && ev.type == NULL && ev.key != NULL,
	    "no /type: type NULL, event still extracted");
	event_clear(&ev);

	er = ext(cf, "{\"id\":\"1\",\"type\":\"\"}", &ev);
	CHECK(er == HOOK_OK && ev.type == NULL, "empty /type: type NULL");
	event_clear(&ev);

	er = ext(cf, "{\"id\":\"1\",\"type\":42}", &ev);
	CHECK(er == HOOK_OK && ev.type == NULL, "non-string /type: NULL");
	event_clear(&ev);

	memset(t, 'a', EVENT_TYPE_MAX);
	t[EVENT_TYPE_MAX] = '\0';
	snprintf(body, sizeof(body), "{\"id\":\"1\",\"type\":\"%s\"}", t);
	er = ext(cf, body, &ev);
	CHECK(er == HOOK_OK && ev.type != NULL &&
	    strlen(ev.type) == EVENT_TYPE_MAX,
	    "type of EVENT_TYPE_MAX bytes accepted");
	event_clear(&ev);

	t[EVENT_TYPE_MAX] = 'a';
	t[EVENT_TYPE_MAX + 1] = '\0';
	snprintf(body, sizeof(body), "{\"id\":\"1\",\"type\":\"%s\"}", t);
	er = extn(cf, body, strlen(body), &ev, &why);
	CHECK(er == HOOK_EJSON && empty(&ev),
	    "type over EVENT_TYPE_MAX refused");

	snprintf(body, sizeof(body), "%s", "{\"id\":\"1\",\"type\":"
	    "\"a\\u0000b\"}");
	er = extn(cf, body, strlen(body), &ev, &why);
	CHECK(er == HOOK_EJSON && empty(&ev),
	    "type with an escaped NUL refused");
	conf_free(cf);
}

/* The body (sz bytes) must be refused as HOOK_EJSON. */
static void
bad_jsonn(const struct conf *cf, const char *body, size_t sz,
    const char *what)
{
	struct event	 ev;
	struct why	 why = { "", NULL };
	enum hook_err	 er;

	memset(&ev, 0x5a, sizeof(ev));
	er = extn(cf, body, sz, &ev, &why);
	CHECK(er == HOOK_EJSON && why.client != NULL && empty(&ev),
	    "%s: HOOK_EJSON (got %d)", what, (int)er);
}

static void
bad_json(const struct conf *cf, const char *body, const char *what)
{
	bad_jsonn(cf, body, strlen(body), what);
}

static void
test_bad_json(void)
{
	static const char	 nul1[] = "{\"id\":\"a\0b\"}";
	static const char	 nul2[] = "{\"id\":\"ab\"}\0";
	static const char	 nul3[] = "{\"id\":\"ab\",\0\"x\":1}";
	struct conf		*cf = load(NULL);
	char			*deep, *t;
	size_t			 i, n = 100000;

	bad_json(cf, "{\"id\":", "truncated body");
	bad_json(cf, "{\"id\":\"1\"", "unclosed object");
	bad_json(cf, "{id:1}", "unquoted key");
	bad_json(cf, "{\"id\":\"1\",}", "trailing comma");
	bad_json(cf, "{\"id\":\"1\"} {}", "two documents");
	bad_json(cf, "[{\"id\":\"1\"}]", "top-level array");
	bad_json(cf, "\"id\"", "top-level string");
	bad_json(cf, "42", "top-level number");
	bad_json(cf, "null", "top-level null");
	bad_json(cf, "", "empty body");
	bad_json(cf, "{\"id\":\"1\",\"id\":\"2\"}", "duplicate object keys");
	bad_json(cf, "{\"a\":{\"x\":1,\"x\":1},\"id\":\"2\"}",
	    "duplicate keys in a nested object");
	bad_jsonn(cf, nul1, sizeof(nul1) - 1, "NUL byte inside a string");
	bad_jsonn(cf, nul2, sizeof(nul2) - 1, "NUL byte after the object");
	bad_jsonn(cf, nul3, sizeof(nul3) - 1, "NUL byte between members");
	bad_json(cf, "{\"id\":\"a\\u0000b\"}", "escaped NUL in a string");
	bad_json(cf, "{\"id\":\"\xff\xfe\"}", "invalid UTF-8");

	if ((deep = malloc(2 * n + 1)) == NULL)
		BAIL("out of memory");
	memset(deep, '[', n);
	bad_jsonn(cf, deep, n, "100000 '[' (unclosed)");
	memset(deep + n, ']', n);
	bad_jsonn(cf, deep, 2 * n, "100000 nested arrays (closed)");
	for (i = 0; i + 5 <= n; i += 5)
		memcpy(deep + i, "{\"a\":", 5);
	bad_jsonn(cf, deep, i, "20000 nested objects (unclosed)");
	deep[n] = '\0';
	memset(deep, '[', n);
	t = event_canonical(deep, n);
	CHECK(t == NULL, "event_canonical of 100000 '[': NULL, no crash");
	free(t);
	free(deep);
	conf_free(cf);
}

/*
 * A body whose arrays (or objects) nest depth levels, the top object
 * counting 1, beside a bracket-laden string that must not count; a new
 * string, its length in *sz.
 */
static char *
nested(size_t depth, int objects, size_t *sz)
{
	static const char	 head[] = "{\"id\":\"d1\",\"s\":\"[[{\\\"[\","
				    "\"a\":";
	char			*b;
	size_t			 i, o;

	if ((b = malloc(sizeof(head) + 6 * depth + 8)) == NULL)
		BAIL("out of memory");
	memcpy(b, head, sizeof(head) - 1);
	o = sizeof(head) - 1;
	for (i = 1; i < depth; i++) {
		memcpy(b + o, objects ? "{\"b\":" : "[", objects ? 5 : 1);
		o += objects ? 5 : 1;
	}
	b[o++] = '0';
	for (i = 1; i < depth; i++)
		b[o++] = objects ? '}' : ']';
	b[o++] = '}';
	b[o] = '\0';
	*sz = o;
	return b;
}

/*
 * SQLite's JSON functions refuse what nests deeper than their limit:
 * EVENT_DEPTH_MAX levels pass, one more is HOOK_EJSON, saying why.
 */
static void
test_depth(void)
{
	struct conf	*cf = load("json:/id");
	struct event	 ev;
	struct why	 why = { "", NULL };
	char		*b;
	enum hook_err	 er;
	size_t		 sz;
	int		 objects;

	for (objects = 0; objects <= 1; objects++) {
		b = nested(EVENT_DEPTH_MAX, objects, &sz);
		er = extn(cf, b, sz, &ev, &why);
		CHECK(er == HOOK_OK && ev.key != NULL,
		    "%s nested EVENT_DEPTH_MAX (%d) levels: accepted (got %d)",
		    objects ? "objects" : "arrays", EVENT_DEPTH_MAX, (int)er);
		event_clear(&ev);
		free(b);

		b = nested(EVENT_DEPTH_MAX + 1, objects, &sz);
		why.client = NULL;
		memset(&ev, 0x5a, sizeof(ev));
		er = extn(cf, b, sz, &ev, &why);
		CHECK(er == HOOK_EJSON && empty(&ev) && why.client != NULL &&
		    strstr(why.client, "1000 levels") != NULL,
		    "%s nested EVENT_DEPTH_MAX + 1 levels: HOOK_EJSON, saying "
		    "why (got %d, %s)", objects ? "objects" : "arrays",
		    (int)er, why.client ? why.client : "no reason");
		free(b);
	}
	conf_free(cf);
}

/* event_unescape() of a NUL-terminated text equals want. */
static void
unescape_case(const char *text, const char *want, const char *what)
{
	char	*t;
	size_t	 sz = 0;

	t = event_unescape(text, strlen(text), &sz);
	CHECK(t != NULL && sz == strlen(want) && strcmp(t, want) == 0,
	    "unescape: %s (got %s)", what, t ? t : "NULL");
	free(t);
}

/*
 * What actions see as :payload: every string in one spelling, so that
 * SQLite's json_extract() finds the members jansson found; numbers,
 * white space and order as sent.
 */
static void
test_norm(void)
{
	struct conf	*cf = load("json:/id");
	struct event	 ev;
	const char	*body;
	enum hook_err	 er;

	unescape_case("{\"order\\u0049d\":1}", "{\"orderId\":1}",
	    "\\u0049 in a member name decoded");
	unescape_case("{\"a\":\"caf\\u00e9 \\ud83d\\ude00\\/\"}",
	    "{\"a\":\"caf\xc3\xa9 \xf0\x9f\x98\x80/\"}",
	    "BMP character, surrogate pair and \\/ as UTF-8");
	unescape_case("{\"a\":\"\\\"\\\\\\b\\f\\n\\r\\t\"}",
	    "{\"a\":\"\\\"\\\\\\b\\f\\n\\r\\t\"}",
	    "quote, backslash and short escapes kept");
	unescape_case("{\"a\":\"\\u0022\\u005C\\u000a\\u0001\\u001F\"}",
	    "{\"a\":\"\\\"\\\\\\n\\u0001\\u001f\"}",
	    "escaped quote, backslash, newline and controls in one spelling");
	unescape_case("{ \"n\" : [1.0, 0.1, 1e2, -0, 12345678901234567] }",
	    "{ \"n\" : [1.0, 0.1, 1e2, -0, 12345678901234567] }",
	    "numbers and white space untouched");
	unescape_case("{\"\\u005b\":\"]\\\"}\"}", "{\"[\":\"]\\\"}\"}",
	    "brackets and quotes inside strings stay inside");

	body = "{\"id\":\"n1\",\"order\\u0049d\":\"o\\u002d1\"}";
	er = ext(cf, body, &ev);
	CHECK(er == HOOK_OK && ev.norm != NULL &&
	    strcmp(ev.norm, "{\"id\":\"n1\",\"orderId\":\"o-1\"}") == 0 &&
	    ev.normsz == strlen(ev.norm),
	    "extract: norm has the one spelling (got %s)",
	    ev.norm ? ev.norm : "NULL");
	CHECK(ev.payload == body && ev.payloadsz == strlen(body),
	    "extract: payload is still the raw body");
	event_clear(&ev);

	er = ext(cf, "{\"id\":\"n2\",\"a\":\"\\n\"}", &ev);
	CHECK(er == HOOK_OK && ev.norm == NULL,
	    "extract: no norm when the body is written the one way already");
	event_clear(&ev);
	er = ext(cf, "{\"id\":\"n3\"}", &ev);
	CHECK(er == HOOK_OK && ev.norm == NULL,
	    "extract: no norm for a body without escapes");
	event_clear(&ev);
	conf_free(cf);
}

/*
 * jsonpeek(): where a pointer leads in raw text, or "unsure" wherever
 * only a parse can tell.
 */
static void
test_jsonpeek(void)
{
	static const struct {
		const char	*text, *ptr;
		enum jsonpeek	 want;
		const char	*value;
	} c[] = {
		{ "{\"id\":\"evt_1\"}", "/id", JSONPEEK_STRING, "evt_1" },
		{ " {\n\t\"a\" : 1 , \"id\" :\r \"x y\" } ", "/id",
		    JSONPEEK_STRING, "x y" },
		{ "{\"a\":{\"id\":\"no\"},\"b\":[\"}\",{\"id\":1}],"
		    "\"s\":\"\\\"id\\\":\\\"no\\\"\",\"id\":\"yes\"}", "/id",
		    JSONPEEK_STRING, "yes" },
		{ "{\"data\":{\"object\":{\"id\":\"pi_1\"}}}",
		    "/data/object/id", JSONPEEK_STRING, "pi_1" },
		{ "{\"a/b\":{\"m~n\":\"v\"}}", "/a~1b/m~0n", JSONPEEK_STRING,
		    "v" },
		{ "{\"id\":\"\"}", "/id", JSONPEEK_STRING, "" },
		{ "{\"other\":\"x\"}", "/id", JSONPEEK_ABSENT, NULL },
		{ "{}", "/id", JSONPEEK_ABSENT, NULL },
		{ "{\"id\":null}", "/id", JSONPEEK_ABSENT, NULL },
		{ "{\"data\":\"str\"}", "/data/id", JSONPEEK_ABSENT, NULL },
		{ "{\"data\":7}", "/data/id", JSONPEEK_ABSENT, NULL },
		{ "{\"id\":42}", "/id", JSONPEEK_OTHER, "42" },
		{ "{\"id\":true}", "/id", JSONPEEK_OTHER, "true" },
		{ "{\"webhookTimestamp\": 1676056940508 ,\"a\":1}",
		    "/webhookTimestamp", JSONPEEK_OTHER, "1676056940508" },
		{ "{\"t\":-1.5e3}", "/t", JSONPEEK_OTHER, "-1.5e3" },
		{ "{\"id\":{\"a\":1}}", "/id", JSONPEEK_OTHER, NULL },
		{ "{\"id\":[1]}", "/id", JSONPEEK_OTHER, NULL },
		{ "{\"id\":\"e\\u0041\"}", "/id", JSONPEEK_UNSURE, NULL },
		{ "{\"i\\u0064\":\"x\"}", "/id", JSONPEEK_UNSURE, NULL },
		{ "{\"list\":[{\"id\":\"x\"}]}", "/list/0/id", JSONPEEK_UNSURE,
		    NULL },
		{ "[{\"id\":\"x\"}]", "/0/id", JSONPEEK_UNSURE, NULL },
		{ "{\"id\":\"unterminated", "/id", JSONPEEK_UNSURE, NULL },
		{ "{\"a\":[[[[", "/id", JSONPEEK_UNSURE, NULL },
		{ "{\"a\" 1}", "/id", JSONPEEK_UNSURE, NULL },
		{ "", "/id", JSONPEEK_UNSURE, NULL },
		{ "{\"id\":\"x\"}", "id", JSONPEEK_UNSURE, NULL },
		{ "{\"id\":nul", "/id", JSONPEEK_UNSURE, NULL },
	};
	const char	*v;
	size_t		 i, vlen;
	enum jsonpeek	 got;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		v = NULL;
		vlen = 0;
		got = jsonpeek(c[i].text, strlen(c[i].text), c[i].ptr, &v,
		    &vlen);
		CHECK(got == c[i].want && (c[i].value == NULL ||
		    (vlen == strlen(c[i].value) &&
		    memcmp(v, c[i].value, vlen) == 0)),
		    "jsonpeek %s in %s: %d, want %d", c[i].ptr, c[i].text,
		    (int)got, (int)c[i].want);
	}
	/* Nothing past the end: a text cut inside a string it skips. */
	CHECK(jsonpeek("{\"a\":\"x\",\"id\":\"y\"}", 6, "/id", &v, &vlen) ==
	    JSONPEEK_UNSURE, "jsonpeek stops at the end of the text it is "
	    "given");
}

/*
 * event_peek() finds what event_extract() finds, or nothing: over key
 * sources and bodies, every answer it gives is the parse's.
 */
static void
peek_case(const char *src, const char *body, int want_peek,
    const char *what)
{
	struct conf	*cf = load(src);
	struct req	 rq;
	struct event	 ev, pk;
	struct req_header h = { "HTTP_X_ID", 9, "hdr-1" };
	enum hook_err	 er;
	struct why	 why = { "", NULL };
	int		 peeked;

	mkreq_h(&rq, &h, 1);
	er = event_extract(&cf->endpoints[0], &rq, body, strlen(body), &ev,
	    &why);
	peeked = event_peek(&cf->endpoints[0], &rq, body, strlen(body), &pk);
	CHECK(peeked == want_peek && (!peeked || (er == HOOK_OK &&
	    strcmp(pk.key, ev.key) == 0 && pk.payload == body &&
	    pk.hash[0] == '\0')),
	    "event_peek, key %s: %s (peeked %d, key %s, parse %d key %s)",
	    src, what, peeked, peeked ? pk.key : "-", (int)er,
	    ev.key ? ev.key : "-");
	if (peeked)
		event_clear(&pk);
	CHECK(peeked || empty(&pk), "event_peek, key %s: %s: nothing left "
	    "when it cannot tell", src, what);
	event_clear(&ev);
	conf_free(cf);
}

static void
test_peek(void)
{
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", "/nonexistent/oncehook/t_event.db" },
		{ "ONCEHOOK_SCHEME", "stripe" },
		{ "ONCEHOOK_SECRET", "whsec_t_event" },
		{ "ONCEHOOK_KEY", "json:/pending_webhooks json:/id" },
		{ NULL, NULL }
	};
	struct conf	*cf;
	struct req	 rq;
	struct event	 ev, pk;
	struct why	 why = { "", NULL };
	const char	*body;
	char		 err[256];

	peek_case("json:/id", "{\"id\":\"evt_1\",\"n\":1.5}", 1, "a plain string");
	peek_case("json:/data/id", "{\"x\":[1,{\"id\":\"no\"}],\"data\":"
	    "{\"id\":\"d1\"}}", 1, "a nested string past an array");
	peek_case("json:/missing json:/id", "{\"id\":\"evt_2\"}", 1,
	    "the first source absent, the second found");
	peek_case("json:/id json:/alt", "{\"id\":\"\",\"alt\":\"a1\"}", 1,
	    "an empty string counts as absent");
	peek_case("json:/id json:/alt", "{\"id\":null,\"alt\":\"a2\"}", 1,
	    "null counts as absent");
	peek_case("header:X-Id", "{\"id\":\"evt_3\"}", 1, "a header key");
	peek_case("json:/id", "{\"id\":42}", 0, "an integer key: the parse's");
	peek_case("json:/id", "{\"id\":\"evt\\u0031\"}", 0, "an escaped key");
	peek_case("json:/list/0", "{\"list\":[\"a\"]}", 0, "an index");
	peek_case("hash", "{\"id\":\"evt_4\"}", 0, "the hash as key");
	peek_case("json:/id", "{\"id\":\"x\\u0001\"}", 0, "an unprintable key");
	peek_case("json:/id", "{\"id\":{\"a\":1}}", 0, "a key of the wrong kind");
	peek_case("json:/id", "{\"other\":1}", 0, "no key at all");
	peek_case("json:", "{\"id\":\"x\"}", 0,
	    "the whole document as the pointer (read nowhere past it)");

	/*
	 * A member the scheme forgets is left out of the payload hash
	 * only: a key source still reads it (mailgun's token is inside
	 * its volatile signature block), and event_peek leaves it to the
	 * parse.
	 */
	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	body = "{\"pending_webhooks\":\"pw\",\"id\":\"evt_5\",\"type\":\"t.x\"}";
	mkreq_h(&rq, NULL, 0);
	if (event_extract(&cf->endpoints[0], &rq, body, strlen(body), &ev,
	    &why) != HOOK_OK)
		BAIL("event_extract on a stripe event");
	CHECK(strcmp(ev.key, "pw") == 0 &&
	    !event_peek(&cf->endpoints[0], &rq, body, strlen(body), &pk),
	    "event_peek leaves a member the scheme forgets to the parse, "
	    "which reads the key in it");
	event_clear(&ev);
	conf_free(cf);
	vars[3].name = NULL;	/* stripe's own key: json:/id */
	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	body = "{\"id\":\"evt_6\",\"type\":\"payment_intent.succeeded\"}";
	CHECK(event_peek(&cf->endpoints[0], &rq, body, strlen(body), &pk) &&
	    strcmp(pk.key, "evt_6") == 0 && pk.type != NULL &&
	    strcmp(pk.type, "payment_intent.succeeded") == 0,
	    "event_peek: stripe's key and type");
	event_clear(&pk);
	conf_free(cf);
}

/*
 * Stripe recounts pending_webhooks on each attempt at an event: a retry
 * whose count changed hashes the same; any other change does not.
 */
static void
test_volatile(void)
{
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", "/nonexistent/oncehook/t_event.db" },
		{ "ONCEHOOK_SCHEME", "stripe" },
		{ "ONCEHOOK_SECRET", "whsec_t_event" },
		{ NULL, NULL }
	};
	struct conf	*cf;
	struct event	 a, b, c;
	char		 err[256];

	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	if (ext(cf, "{\"id\":\"evt_1\",\"type\":\"x\",\"pending_webhooks\":2,"
	    "\"data\":{\"v\":1}}", &a) != HOOK_OK ||
	    ext(cf, "{\"id\":\"evt_1\",\"type\":\"x\",\"pending_webhooks\":1,"
	    "\"data\":{\"v\":1}}", &b) != HOOK_OK ||
	    ext(cf, "{\"id\":\"evt_1\",\"type\":\"x\",\"pending_webhooks\":1,"
	    "\"data\":{\"v\":2}}", &c) != HOOK_OK)
		BAIL("event_extract on a stripe event");
	CHECK(strcmp(a.hash, b.hash) == 0,
	    "stripe: pending_webhooks left out of the payload hash");
	CHECK(strcmp(b.hash, c.hash) != 0,
	    "stripe: any other change still changes the hash");
	CHECK(strstr(a.payload, "pending_webhooks") != NULL,
	    "stripe: the raw payload keeps pending_webhooks");
	event_clear(&a);
	event_clear(&b);
	event_clear(&c);
	conf_free(cf);
}

/*
 * mailgun: the key is the token, inside the signature block the payload
 * hash leaves out; so does the hash key after it (ONCEHOOK_KEY=
 * "json:/signature/token hash", for a block without a token).
 */
static void
test_volatile_key(void)
{
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", "/nonexistent/oncehook/t_event.db" },
		{ "ONCEHOOK_SCHEME", "mailgun" },
		{ "ONCEHOOK_SECRET", "key-t-event-0123456789" },
		{ NULL, NULL },
		{ NULL, NULL }
	};
	struct conf	*cf;
	struct event	 a, b, c;
	char		 err[256];

#define MG_EV(tok, ev) "{\"signature\":{\"timestamp\":\"1\",\"token\":\"" \
	tok "\",\"signature\":\"00\"},\"event-data\":{\"id\":\"" ev "\"," \
	"\"event\":\"delivered\"}}"
	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	if (ext(cf, MG_EV("tok-a", "e1"), &a) != HOOK_OK ||
	    ext(cf, MG_EV("tok-b", "e1"), &b) != HOOK_OK ||
	    ext(cf, MG_EV("tok-a", "e2"), &c) != HOOK_OK)
		BAIL("event_extract on a mailgun event");
	CHECK(strcmp(a.key, "tok-a") == 0 && strcmp(b.key, "tok-b") == 0 &&
	    a.type != NULL && strcmp(a.type, "delivered") == 0,
	    "mailgun: the key is the token, read inside the signature block");
	CHECK(strcmp(a.hash, b.hash) == 0 && strcmp(a.hash, c.hash) != 0,
	    "mailgun: the signature block left out of the payload hash, the "
	    "event data in it");
	event_clear(&a);
	event_clear(&b);
	event_clear(&c);
	conf_free(cf);
	/* A key must start with the token (conf.c); hash after it is
	 * what a block without one gets. */
	vars[3].name = "ONCEHOOK_KEY";
	vars[3].value = "json:/signature/token hash";
	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
#define MG_NOTOK(ts) "{\"signature\":{\"timestamp\":\"" ts "\"," \
	"\"signature\":\"00\"},\"event-data\":{\"id\":\"e1\"," \
	"\"event\":\"delivered\"}}"
	if (ext(cf, MG_NOTOK("1"), &a) != HOOK_OK ||
	    ext(cf, MG_NOTOK("2"), &b) != HOOK_OK)
		BAIL("event_extract on a mailgun event");
	CHECK(strcmp(a.key, b.key) == 0 && strcmp(a.key, a.hash) == 0,
	    "mailgun, KEY=json:/signature/token hash: the hash key leaves "
	    "the signature block out");
#undef MG_NOTOK
	event_clear(&a);
	event_clear(&b);
	conf_free(cf);
#undef MG_EV
}

/* event_form(body) is want (NULL: refused as HOOK_EJSON, why set). */
static void
form_is(const char *body, size_t sz, const char *want, const char *what)
{
	struct why	 why;
	char		*json = NULL;
	size_t		 n = 0;
	enum hook_err	 er;

	memset(&why, 0, sizeof(why));
	er = event_form(body, sz, &json, &n, &why);
	if (want != NULL)
		CHECK(er == HOOK_OK && json != NULL && n == strlen(want) &&
		    strcmp(json, want) == 0, "form: %s: %s (got %s)", what,
		    want, json != NULL ? json : "nothing");
	else
		CHECK(er == HOOK_EJSON && json == NULL && why.client != NULL,
		    "form: %s: refused (%s)", what,
		    why.client != NULL ? why.client : "no reason");
	free(json);
}

/*
 * A form body read as a JSON object: members in the order of their
 * first pair, decoded, a name sent twice an array; what JSON cannot
 * hold refused.  The result reads back through event_parse() with a
 * key and a type from json: sources.
 */
static void
test_form(void)
{
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", "/nonexistent/oncehook/t_event.db" },
		{ "ONCEHOOK_SCHEME", "twilio" },
		{ "ONCEHOOK_SECRET", "t_event-secret-0123" },
		{ "ONCEHOOK_URL", "https://example.com/sms" },
		{ "ONCEHOOK_KEY", "json:/MessageSid" },
		{ NULL, NULL }
	};
	static const char	 body[] = "MessageSid=SM1&MessageStatus="
	    "delivered&Body=caf%C3%A9+%22ok%22%5C%0A&Media=b&Media=a&"
	    "Flag&Empty=&x=%zz";
	struct conf		*cf;
	struct event		 ev;
	struct testreq		 t;
	struct why		 why;
	char			*json, err[256];
	size_t			 n;

	form_is(body, sizeof(body) - 1, "{\"MessageSid\":\"SM1\","
	    "\"MessageStatus\":\"delivered\",\"Body\":\"caf\xc3\xa9 "
	    "\\\"ok\\\"\\\\\\n\",\"Media\":[\"b\",\"a\"],\"Flag\":\"\","
	    "\"Empty\":\"\",\"x\":\"%zz\"}", "decoded, in order, a repeated "
	    "name an array, a bad escape kept");
	form_is("", 0, "{}", "an empty body");
	form_is("a=%01%1f%7f", 11, "{\"a\":\"\\u0001\\u001f\x7f\"}",
	    "control characters escaped as event.c writes them");
	form_is("a=1&b=2&a=3&a=1", 15, "{\"a\":[\"1\",\"3\",\"1\"],"
	    "\"b\":\"2\"}", "a name's values in the order sent, repeats kept");
	form_is("a=%00", 5, NULL, "a NUL byte");
	form_is("a=%C3", 5, NULL, "a cut UTF-8 sequence");
	form_is("%FF=1", 5, NULL, "a name that is not UTF-8");
	form_is("a=%C0%AF", 8, NULL, "an overlong form");
	form_is("a=%ED%A0%80", 11, NULL, "a surrogate");

	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load twilio: %s", err);
	memset(&why, 0, sizeof(why));
	if (event_form(body, sizeof(body) - 1, &json, &n, &why) != HOOK_OK)
		BAIL("event_form");
	CHECK(event_extract(&cf->endpoints[0], mkreq(&t, NULL), json, n, &ev,
	    &why) == HOOK_OK && strcmp(ev.key, "SM1") == 0 &&
	    ev.type != NULL && strcmp(ev.type, "delivered") == 0,
	    "form: the object gives json:/MessageSid as the key and "
	    "MessageStatus as twilio's type");
	event_clear(&ev);
	free(json);
	conf_free(cf);
}

/*
 * key_signed and signed_key (pipeline/event.h) for one request of body
 * with headers h (CGI names, value NULL: absent) on cf's endpoint:
 * 1 if the key, key_signed and signed_key (NULL: none) are as given.
 */
static int
signed_as(const struct conf *cf, const char *body, const char *h1,
    const char *v1, const char *h2, const char *v2, const char *key,
    int key_signed, const char *signed_key)
{
	struct req_header	 h[2];
	struct req		 rq;
	struct event		 ev;
	struct why		 why = { "", NULL };
	size_t			 n = 0;
	int			 ok;

	if (v1 != NULL) {
		h[n].name = h1;
		h[n].namelen = strlen(h1);
		h[n++].value = v1;
	}
	if (v2 != NULL) {
		h[n].name = h2;
		h[n].namelen = strlen(h2);
		h[n++].value = v2;
	}
	mkreq_h(&rq, h, n);
	if (event_extract(&cf->endpoints[0], &rq, body, strlen(body), &ev,
	    &why) != HOOK_OK)
		return 0;
	ok = strcmp(ev.key, key) == 0 && ev.key_signed == key_signed &&
	    (signed_key == NULL ? ev.signed_key == NULL :
	    ev.signed_key != NULL && strcmp(ev.signed_key, signed_key) == 0);
	if (!ok)
		printf("# key %s, key_signed %d, signed_key %s\n", ev.key,
		    ev.key_signed, ev.signed_key ? ev.signed_key : "(none)");
	event_clear(&ev);
	return ok;
}

/*
 * Behind a replay guard, which keys the signature covers: a JSON source
 * or the hash where the scheme signs the body, the scheme's signed
 * header; not a header it does not cover, a key scope, a body that is
 * not signed (mailgun's token alone) or a secret sent as it is (basic).
 * For a key it does not cover, the key the covered sources give alone.
 */
static void
test_key_signed(void)
{
	static const char	 idem[] = "HTTP_X_IDEMPOTENCY_KEY";
	struct conf		*cf = load(NULL);
	struct event		 ev;
	char			 hash[CRYPTO_SHA256_HEXLEN + 1];
	const char		*body = "{\"id\":\"e1\",\"type\":\"t\"}";

	CHECK(cf->endpoints[0].replay_guard && signed_as(cf, body, idem, NULL,
	    NULL, NULL, "e1", 1, NULL), "hmac-sha256, no header: keyed by "
	    "the signed /id, key_signed");
	CHECK(signed_as(cf, body, idem, "h1", NULL, NULL, "h1", 0, "e1"),
	    "hmac-sha256, X-Idempotency-Key: not covered; signed_key is "
	    "the /id");
	CHECK(signed_as(cf, body, idem, "e1", NULL, NULL, "e1", 0, "e1"),
	    "a header equal to the /id is still the header's key");
	if (ext(cf, "{\"x\":1}", &ev) != HOOK_OK)
		BAIL("ext");
	snprintf(hash, sizeof(hash), "%s", ev.hash);
	CHECK(ev.key_signed && strcmp(ev.key, hash) == 0, "no header, no "
	    "id: keyed by the hash, key_signed");
	event_clear(&ev);
	CHECK(signed_as(cf, "{\"x\":1}", idem, "h2", NULL, NULL, "h2", 0,
	    hash), "under a header, its signed_key is that hash");
	conf_free(cf);

	cf = load_scheme("github", NULL);
	CHECK(cf->endpoints[0].replay_guard && signed_as(cf, "{\"id\":1}",
	    "HTTP_X_GITHUB_DELIVERY", "d1", "HTTP_X_GITHUB_HOOK_ID", "7",
	    "7:d1", 0, NULL), "github: a delivery header, scoped: not "
	    "covered, no signed source");
	conf_free(cf);
	cf = load_scheme("github", "json:/id");
	CHECK(signed_as(cf, "{\"id\":\"g1\"}", "HTTP_X_GITHUB_HOOK_ID", "7",
	    NULL, NULL, "g1", 1, NULL), "github keyed by json:/id (no "
	    "scope): key_signed");
	conf_free(cf);

	cf = load_scheme("basic", NULL);
	CHECK(cf->endpoints[0].replay_guard && signed_as(cf, body, idem,
	    NULL, NULL, NULL, "e1", 0, NULL), "basic: the body is not signed "
	    "(the secret travels): not key_signed");
	conf_free(cf);
	cf = load_scheme("mailgun", NULL);
	CHECK(cf->endpoints[0].replay_guard && signed_as(cf, "{\"signature\":"
	    "{\"token\":\"tok1\",\"timestamp\":\"1\",\"signature\":\"s\"},"
	    "\"event-data\":{\"event\":\"delivered\"}}", idem, NULL, NULL,
	    NULL, "tok1", 0, NULL), "mailgun: its token is signed, the body "
	    "not: not key_signed");
	conf_free(cf);

	cf = load_scheme("standard", "header:X-Mine header:webhook-id");
	CHECK(cf->endpoints[0].replay_guard && signed_as(cf, body,
	    "HTTP_WEBHOOK_ID", "msg_1", NULL, NULL, "msg_1", 1, NULL),
	    "standard keyed by its signed webhook-id: key_signed");
	CHECK(signed_as(cf, body, "HTTP_WEBHOOK_ID", "msg_1", "HTTP_X_MINE",
	    "m1", "m1", 0, "msg_1"), "keyed by an uncovered header first: "
	    "signed_key is the webhook-id");
	conf_free(cf);

	cf = load_scheme("stripe", NULL);
	CHECK(!cf->endpoints[0].replay_guard && signed_as(cf, body, idem,
	    NULL, NULL, NULL, "e1", 0, NULL), "stripe (no guard): neither");
	conf_free(cf);
}

/*
 * github's delivery key, key scope and event type, each from a header,
 * as values that are not UTF-8 text: the key or scope is refused as
 * HOOK_EBADKEY, the type as HOOK_EJSON, and event_peek takes none of
 * them (keys and types reach JSON: pipeline/event.c's printable()).
 */
static enum hook_err
github_with(const struct conf *cf, const char *delivery, const char *hook,
    const char *type, int *peeked, char **key)
{
	struct req_header	 h[3] = {
		{ "HTTP_X_GITHUB_DELIVERY", 22, delivery },
		{ "HTTP_X_GITHUB_HOOK_ID", 21, hook },
		{ "HTTP_X_GITHUB_EVENT", 19, type },
	};
	struct req		 rq;
	struct event		 ev;
	struct why		 why = { "", NULL };
	const char		*body = "{\"zen\":\"x\"}";
	enum hook_err		 er;

	mkreq_h(&rq, h, 3);
	*peeked = event_peek(&cf->endpoints[0], &rq, body, strlen(body), &ev);
	if (*peeked)
		event_clear(&ev);
	er = event_extract(&cf->endpoints[0], &rq, body, strlen(body), &ev,
	    &why);
	*key = er == HOOK_OK ? strdup(ev.key) : NULL;
	if (er == HOOK_OK)
		event_clear(&ev);
	else
		CHECK(why.client != NULL && empty(&ev), "refused with a why, "
		    "nothing kept");
	return er;
}

static void
test_not_utf8(void)
{
	static const struct {
		const char	*bytes;
		const char	*what;
	} bad[] = {
		{ "d\xe9", "Latin-1 e-acute" },
		{ "d\xc0\xaf", "an overlong '/'" },
		{ "d\xed\xa0\x80", "a surrogate" },
		{ "d\xf4\x90\x80\x80", "past U+10FFFF" },
		{ "d\xe2\x82", "a cut sequence" },
		{ "\x80x", "a lone continuation byte" },
		{ "d\xe0\x80\xaf", "a 3-byte overlong '/'" },
		{ "d\xf0\x80\x80\xaf", "a 4-byte overlong '/'" },
		{ "d\xf0\x9f\x98", "a cut 4-byte sequence" },
		{ "d\xc2\x85", "C1 control NEL (U+0085)" },
		{ "d\xc2\x9f", "C1 control U+009F" },
	};
	static const char *const good[] = {
		"d\xc2\xa0",		/* U+00A0, past C1 */
		"d\xed\x9f\xbf",	/* U+D7FF, before the surrogates */
		"d\xee\x80\x80",	/* U+E000, after them */
		"d\xef\xbf\xbf",	/* U+FFFF */
		"d\xf4\x8f\xbf\xbf",	/* U+10FFFF */
	};
	struct conf	*cf = load_scheme("github", NULL);
	char		*key;
	size_t		 i;
	int		 peeked;

	CHECK(github_with(cf, "d-\xc3\xa9-\xf0\x9f\x98\x80", "7", "push",
	    &peeked, &key) == HOOK_OK && peeked && key != NULL &&
	    strcmp(key, "7:d-\xc3\xa9-\xf0\x9f\x98\x80") == 0,
	    "github: a UTF-8 delivery key is taken and peeked");
	free(key);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(github_with(cf, bad[i].bytes, "7", "push", &peeked,
		    &key) == HOOK_EBADKEY && !peeked,
		    "github: a delivery key with %s: HOOK_EBADKEY, not "
		    "peeked", bad[i].what);
		CHECK(github_with(cf, "d1", bad[i].bytes, "push", &peeked,
		    &key) == HOOK_EBADKEY && !peeked,
		    "github: a hook id (key scope) with %s: HOOK_EBADKEY, "
		    "not peeked", bad[i].what);
		CHECK(github_with(cf, "d1", "7", bad[i].bytes, &peeked,
		    &key) == HOOK_EJSON && !peeked,
		    "github: an event type with %s: HOOK_EJSON, not peeked",
		    bad[i].what);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK(github_with(cf, good[i], "7", "push", &peeked, &key) ==
		    HOOK_OK && peeked && key != NULL && strcmp(key + 2,
		    good[i]) == 0, "github: a delivery key ending in the "
		    "code point at the edge %zu: taken as it is", i);
		free(key);
	}
	conf_free(cf);
}

/* hmac-sha256's X-Idempotency-Key: what each refusal says. */
static void
test_text_why(void)
{
	static const struct {
		const char	*value;
		const char	*why;
	} cases[] = {
		{ "k\xe9", "idempotency key is not UTF-8 text" },
		{ "k\x01", "idempotency key holds a control character" },
		{ "k\xc2\x85", "idempotency key holds a control character" },
	};
	struct conf		*cf = load(NULL);
	struct req_header	 h = { "HTTP_X_IDEMPOTENCY_KEY", 22, NULL };
	struct req		 rq;
	struct event		 ev;
	struct why		 why = { "", NULL };
	char			 longkey[EVENT_KEY_MAX + 2];
	const char		*body = "{\"id\":\"e1\"}";
	size_t			 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		h.value = cases[i].value;
		mkreq_h(&rq, &h, 1);
		CHECK(event_extract(&cf->endpoints[0], &rq, body, strlen(body),
		    &ev, &why) == HOOK_EBADKEY && why.client != NULL &&
		    strcmp(why.client, cases[i].why) == 0,
		    "X-Idempotency-Key case %zu: HOOK_EBADKEY, \"%s\" (got "
		    "\"%s\")", i, cases[i].why, why.client ? why.client : "");
	}
	memset(longkey, 'k', EVENT_KEY_MAX + 1);
	longkey[EVENT_KEY_MAX + 1] = '\0';
	h.value = longkey;
	mkreq_h(&rq, &h, 1);
	CHECK(event_extract(&cf->endpoints[0], &rq, body, strlen(body), &ev,
	    &why) == HOOK_EBADKEY && why.client != NULL &&
	    strcmp(why.client, "idempotency key longer than 512 bytes") == 0,
	    "X-Idempotency-Key of 513 bytes: says longer than 512 bytes");
	longkey[EVENT_KEY_MAX] = '\0';
	CHECK(event_extract(&cf->endpoints[0], &rq, body, strlen(body), &ev,
	    &why) == HOOK_OK && strlen(ev.key) == EVENT_KEY_MAX,
	    "X-Idempotency-Key of 512 bytes: taken");
	event_clear(&ev);
	CHECK(event_text("ab", 1) == EVENT_TEXT_LONG &&
	    event_text("a", 1) == EVENT_TEXT_OK &&
	    event_text("", 0) == EVENT_TEXT_OK,
	    "event_text: the length bound is inclusive");
	conf_free(cf);
}

int
main(void)
{
	test_canonical();
	test_key_header();
	test_key_json();
	test_key_default();
	test_key_signed();
	test_not_utf8();
	test_text_why();
	test_type();
	test_bad_json();
	test_depth();
	test_norm();
	test_volatile();
	test_volatile_key();
	test_jsonpeek();
	test_peek();
	test_form();
	return tap_done();
}
