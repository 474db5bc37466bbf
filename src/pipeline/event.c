/* SPDX-License-Identifier: MIT */
/*
 * oncehook: event extraction (see pipeline/event.h).  The body is read by
 * jsondoc (as jansson reads it); jansson itself is asked its version.
 *
 * The body has been verified but is still hostile: duplicate object keys
 * are refused (a duplicate would let our reading and SQLite's
 * json_extract() in an action disagree), as are NUL bytes in strings
 * and anything but an object at the top.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "conf.h"
#include "front/req.h"
#include "lib/form.h"
#include "lib/jsondoc.h"
#include "lib/jsonpeek.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "pipeline/event.h"
#include "pipeline/sig.h"

#define STR(x)		XSTR(x)
#define XSTR(x)		#x

enum event_text
event_text(const char *s, size_t max)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 n;

	for (; *p != '\0'; p += n) {
		if ((size_t)(p - (const unsigned char *)s) >= max)
			return EVENT_TEXT_LONG;
		if (*p < 0x20 || *p == 0x7f ||
		    (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return EVENT_TEXT_CONTROL;
		if ((n = utf8_len(p, (size_t)-1)) == 0)
			return EVENT_TEXT_UTF8;
	}
	return EVENT_TEXT_OK;
}

/* What a refused key or type says (enum event_text). */
static const char *const key_why[] = {
	NULL,
	"idempotency key longer than " STR(EVENT_KEY_MAX) " bytes",
	"idempotency key is not UTF-8 text",
	"idempotency key holds a control character",
};
static const char *const type_why[] = {
	NULL,
	"event type longer than " STR(EVENT_TYPE_MAX) " bytes",
	"event type is not UTF-8 text",
	"event type holds a control character",
};

/*
 * The string at node i of d copied into buf[0..bufsz) (cut short if it
 * is longer: the callers' length checks then refuse it), or NULL if the
 * node is not a string.  jsondoc strings hold no NUL.
 */
static const char *
string_at(const struct jsondoc *d, long i, char *buf, size_t bufsz)
{
	const char	*s;
	size_t		 len;

	if ((s = jsondoc_string(d, i, &len)) == NULL)
		return NULL;
	if (len >= bufsz)
		len = bufsz - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return buf;
}

/*
 * The key from one source into *out (owned).  Returns HOOK_OK with
 * *out NULL if the source is absent, HOOK_OK with *out set, or an error.
 */
static enum hook_err
key_from(const struct src *s, const struct req *rq, const struct jsondoc *d,
    const char *hash, char **out, const char **why)
{
	char		 buf[EVENT_KEY_MAX + 2];
	const char	*v = NULL;
	long		 j;
	enum event_text	 bad;

	*out = NULL;
	switch (s->kind) {
	case SRC_HEADER:
		if ((v = req_header(rq, s->arg)) == NULL || *v == '\0')
			return HOOK_OK;
		break;
	case SRC_JSON:
		if ((j = jsondoc_get(d, s->arg)) == -1 ||
		    jsondoc_kind(d, j) == JSONDOC_NULL)
			return HOOK_OK;
		if (jsondoc_kind(d, j) == JSONDOC_INTEGER) {
			snprintf(buf, sizeof(buf), "%lld",
			    jsondoc_integer(d, j));
			v = buf;
		} else if ((v = string_at(d, j, buf, sizeof(buf))) == NULL) {
			*why = "idempotency key is not a string or integer";
			return HOOK_EBADKEY;
		}
		if (*v == '\0')
			return HOOK_OK;
		break;
	case SRC_HASH:
		v = hash;
		break;
	}
	if ((bad = event_text(v, EVENT_KEY_MAX)) != EVENT_TEXT_OK) {
		*why = key_why[bad];
		return HOOK_EBADKEY;
	}
	if ((*out = strdup(v)) == NULL)
		return HOOK_ESYSTEM;
	return HOOK_OK;
}

/* The value of the endpoint's key scope header (conf.h: key_scope) in
 * rq, or NULL if it has none or the request does not carry it. */
static const char *
scope_of(const struct conf_endpoint *ep, const struct req *rq)
{
	const char	*h;

	if (ep->key_scope == NULL ||
	    (h = req_header(rq, ep->key_scope)) == NULL || *h == '\0')
		return NULL;
	return h;
}

/* The key under scope h (scope_of()): h, ':' and *key; *key as it is
 * if h is NULL. */
static enum hook_err
scoped(const char *h, char **key, const char **why)
{
	char		*k;
	size_t		 n;
	enum event_text	 bad;

	if (h == NULL)
		return HOOK_OK;
	n = strlen(h) + 1 + strlen(*key);
	if ((bad = event_text(h, EVENT_KEY_MAX)) == EVENT_TEXT_OK &&
	    n > EVENT_KEY_MAX)
		bad = EVENT_TEXT_LONG;
	if (bad != EVENT_TEXT_OK) {
		*why = key_why[bad];
		return HOOK_EBADKEY;
	}
	if ((k = malloc(n + 1)) == NULL)
		return HOOK_ESYSTEM;
	memcpy(k, h, strlen(h));
	k[strlen(h)] = ':';
	memcpy(k + strlen(h) + 1, *key, strlen(*key) + 1);
	free(*key);
	*key = k;
	return HOOK_OK;
}

/* The event type from the first source that has one; NULL if none. */
static enum hook_err
type_from(const struct srclist *sl, const struct req *rq,
    const struct jsondoc *d, char **out, const char **why)
{
	char		 buf[EVENT_TYPE_MAX + 2];
	const char	*v = NULL;
	long		 j;
	size_t		 i;
	enum event_text	 bad;

	*out = NULL;
	for (i = 0; i < sl->n && v == NULL; i++) {
		if (sl->v[i].kind == SRC_HEADER)
			v = req_header(rq, sl->v[i].arg);
		else if (sl->v[i].kind == SRC_JSON &&
		    (j = jsondoc_get(d, sl->v[i].arg)) != -1)
			v = string_at(d, j, buf, sizeof(buf));
		if (v != NULL && *v == '\0')
			v = NULL;
	}
	if (v == NULL)
		return HOOK_OK;
	if ((bad = event_text(v, EVENT_TYPE_MAX)) != EVENT_TEXT_OK) {
		*why = type_why[bad];
		return HOOK_EJSON;
	}
	if ((*out = strdup(v)) == NULL)
		return HOOK_ESYSTEM;
	return HOOK_OK;
}

/*
 * The scheme's handshake (pipeline/sig.h: struct handshake): copy the
 * string its answer uses (if any) to ev->token and return
 * HOOK_HANDSHAKE; HOOK_OK if this is no handshake.
 */
static enum hook_err
handshake(const struct conf_endpoint *ep, const struct jsondoc *d,
    struct event *ev, const char **why)
{
	const struct handshake	*hs;
	char			 tbuf[EVENT_TYPE_MAX + 2];
	char			 cbuf[HOOK_TOKEN_MAX + 2];
	const char		*t, *c;
	long			 i;

	for (hs = ep->scheme->handshake; hs != NULL; hs = hs->next) {
		if ((i = jsondoc_get(d, hs->at)) == -1)
			continue;
		if (jsondoc_kind(d, i) == JSONDOC_INTEGER) {
			snprintf(tbuf, sizeof(tbuf), "%lld",
			    jsondoc_integer(d, i));
			t = tbuf;
		} else
			t = string_at(d, i, tbuf, sizeof(tbuf));
		if (t != NULL && strcmp(t, hs->type) == 0 &&
		    (hs->unless == NULL || jsondoc_get(d, hs->unless) == -1))
			break;
	}
	if (hs == NULL)
		return HOOK_OK;
	ev->handshake = hs;
	if (hs->token == NULL)
		return HOOK_HANDSHAKE;
	if ((i = jsondoc_get(d, hs->token)) == -1 ||
	    (c = string_at(d, i, cbuf, sizeof(cbuf))) == NULL ||
	    event_text(c, HOOK_TOKEN_MAX) != EVENT_TEXT_OK) {
		*why = "handshake token missing or not usable";
		return HOOK_EJSON;
	}
	if ((ev->token = strdup(c)) == NULL)
		return HOOK_ESYSTEM;
	return HOOK_HANDSHAKE;
}

/*
 * Leave out of the canonical form the top-level members the provider
 * may change between attempts at one event, so that a retry hashes the
 * same.  The raw body, which actions see, keeps them.
 */
static void
forget_volatile(const struct conf_endpoint *ep, struct jsondoc *d)
{
	const char *const	*m = ep->scheme->volatile_members;

	for (; m != NULL && *m != NULL; m++)
		jsondoc_forget(d, *m);
}

/* SHA-256 hex of the canonical form of d into hash. */
static int
canonical_hash(struct jsondoc *d, char hash[CRYPTO_SHA256_HEXLEN + 1])
{
	unsigned char	 md[CRYPTO_SHA256_LEN];
	const char	*text;
	size_t		 len;

	if ((text = jsondoc_canonical(d, &len)) == NULL ||
	    crypto_sha256(text, len, md) == -1)
		return -1;
	crypto_hex(md, sizeof(md), hash);
	return 0;
}

/* key_from() for ep's key source i, the payload hash computed into
 * ev->hash first where that source is the hash. */
static enum hook_err
key_at(const struct conf_endpoint *ep, size_t i, const struct req *rq,
    struct jsondoc *d, struct event *ev, char **out, const char **why)
{
	if (ep->key.v[i].kind == SRC_HASH && ev->hash[0] == '\0' &&
	    (forget_volatile(ep, d), canonical_hash(d, ev->hash)) == -1)
		return HOOK_ESYSTEM;
	return key_from(&ep->key.v[i], rq, d, ev->hash, out, why);
}

/*
 * Behind a replay guard: ev->key_signed if the key, from source used,
 * is one the signature covers (struct src: covered) and no key scope
 * will be put before it (scope, scope_of()'s, is NULL);
 * else ev->signed_key, the key the covered sources give alone (what a
 * request of this body without the uncovered headers is keyed by), if
 * any gives one a key can be.  HOOK_OK or HOOK_ESYSTEM.
 */
static enum hook_err
sign_key(const struct conf_endpoint *ep, const struct req *rq,
    struct jsondoc *d, struct event *ev, size_t used, const char *scope)
{
	const char	*why;
	enum hook_err	 er;
	size_t		 i;

	if (!ep->replay_guard)
		return HOOK_OK;
	if (scope == NULL && ep->key.v[used].covered) {
		ev->key_signed = 1;
		return HOOK_OK;
	}
	for (i = 0; i < ep->key.n && ev->signed_key == NULL; i++) {
		if (!ep->key.v[i].covered)
			continue;
		if ((er = key_at(ep, i, rq, d, ev, &ev->signed_key, &why)) ==
		    HOOK_ESYSTEM)
			return er;
		if (er != HOOK_OK)
			break;	/* no key: no event is stored under it */
	}
	return HOOK_OK;
}

/* 1 if the six bytes at p, before end, are a \u escape. */
static int
is_u(const char *p, const char *end)
{
	return end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
	    jsondoc_hex4(p + 2) >= 0;
}

/*
 * Write code point cp at o as it stands inside a JSON string in the one
 * spelling (see event_unescape); returns the bytes written, at most 6.
 */
static size_t
put_char(char *o, unsigned long cp)
{
	static const char	 hex[] = "0123456789abcdef";
	static const char	 shortesc[] = "btn\0fr";	/* \b to \r */

	if (cp == '"' || cp == '\\') {
		o[0] = '\\';
		o[1] = (char)cp;
		return 2;
	}
	if (cp >= '\b' && cp <= '\r' && cp != 0x0b) {
		o[0] = '\\';
		o[1] = shortesc[cp - '\b'];
		return 2;
	}
	if (cp < 0x20 || (cp >= 0xd800 && cp <= 0xdfff)) {
		/* A lone surrogate stays escaped: it has no UTF-8. */
		o[0] = '\\';
		o[1] = 'u';
		o[2] = hex[(cp >> 12) & 15];
		o[3] = hex[(cp >> 8) & 15];
		o[4] = hex[(cp >> 4) & 15];
		o[5] = hex[cp & 15];
		return 6;
	}
	return jsondoc_utf8(o, cp);
}

/*
 * Every escape is at least as long as what put_char() writes for it
 * (\uXXXX is 6 bytes, a surrogate pair 12 for 4 bytes of UTF-8), so the
 * result never outgrows the text.
 */
char *
event_unescape(const char *text, size_t sz, size_t *outsz)
{
	const char	*p = text, *end = text + sz;
	char		*out, *o;
	unsigned long	 cp, lo;
	int		 instr = 0;

	if ((out = malloc(sz + 1)) == NULL)
		return NULL;
	o = out;
	while (p < end) {
		if (*p == '"')
			instr = !instr;
		if (!instr || *p != '\\' || end - p < 2) {
			*o++ = *p++;
			continue;
		}
		switch (p[1]) {
		case 'u':
			if (!is_u(p, end)) {
				*o++ = *p++;	/* not JSON: as it is */
				continue;
			}
			cp = (unsigned long)jsondoc_hex4(p + 2);
			p += 6;
			if (cp >= 0xd800 && cp <= 0xdbff && is_u(p, end) &&
			    (lo = (unsigned long)jsondoc_hex4(p + 2)) >=
			    0xdc00 && lo <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				    (lo - 0xdc00);
				p += 6;
			}
			break;
		case 'b':
			cp = '\b';
			p += 2;
			break;
		case 'f':
			cp = '\f';
			p += 2;
			break;
		case 'n':
			cp = '\n';
			p += 2;
			break;
		case 'r':
			cp = '\r';
			p += 2;
			break;
		case 't':
			cp = '\t';
			p += 2;
			break;
		default:		/* \" \\ \/ */
			cp = (unsigned char)p[1];
			p += 2;
			break;
		}
		o += put_char(o, cp);
	}
	*o = '\0';
	*outsz = (size_t)(o - out);
	return out;
}

/*
 * The body as actions see it (see struct event): set ev->norm unless
 * the body already writes every string the one way.  -1 if out of
 * memory.
 */
static int
normalize_strings(struct event *ev, const char *body, size_t bodysz)
{
	if (memchr(body, '\\', bodysz) == NULL)
		return 0;
	if ((ev->norm = event_unescape(body, bodysz, &ev->normsz)) == NULL)
		return -1;
	if (ev->normsz == bodysz && memcmp(ev->norm, body, bodysz) == 0) {
		free(ev->norm);
		ev->norm = NULL;
		ev->normsz = 0;
	}
	return 0;
}

static enum hook_err	extract(const struct conf_endpoint *,
			    const struct req *, const char *, size_t,
			    struct event *, const char **);
static enum hook_err	finish(struct event *);

enum hook_err
event_parse(const struct conf_endpoint *ep, const struct req *rq,
    const char *body, size_t bodysz, struct event *ev, struct why *trace)
{
	const char	*msg = NULL, **why = &msg;
	enum hook_err	 er;

	er = extract(ep, rq, body, bodysz, ev, why);
	if (er != HOOK_OK && er != HOOK_HANDSHAKE && msg != NULL)
		why_client(trace, msg);
	return er;
}

enum hook_err
event_finish(struct event *ev)
{
	enum hook_err	 er;

	if ((er = finish(ev)) != HOOK_OK)
		event_clear(ev);
	return er;
}

enum hook_err
event_extract(const struct conf_endpoint *ep, const struct req *rq,
    const char *body, size_t bodysz, struct event *ev, struct why *trace)
{
	enum hook_err	 er;

	if ((er = event_parse(ep, rq, body, bodysz, ev, trace)) != HOOK_OK)
		return er;
	return event_finish(ev);
}

/*
 * The canonical hash (unless a key source needed it already) and the
 * normalised body, then the parsed document is let go.
 */
static enum hook_err
finish(struct event *ev)
{
	struct jsondoc	*d = ev->doc;

	if (d == NULL)
		return HOOK_OK;
	if ((ev->hash[0] == '\0' && canonical_hash(d, ev->hash) == -1) ||
	    normalize_strings(ev, ev->payload, ev->payloadsz) == -1)
		return HOOK_ESYSTEM;
	jsondoc_free(d);
	ev->doc = NULL;
	return HOOK_OK;
}

/*
 * event_parse(), with the sender's reason as static text in *why.  The
 * canonical hash is computed here only if a key source is the hash.
 */
static enum hook_err
extract(const struct conf_endpoint *ep, const struct req *rq,
    const char *body, size_t bodysz, struct event *ev, const char **why)
{
	struct jsondoc	*d;
	const char	*scope;
	enum hook_err	 er;
	size_t		 i;

	memset(ev, 0, sizeof(*ev));
	*why = NULL;
	switch (jsondoc_read(body, bodysz, 0, &d)) {
	case JSONDOC_OK:
		break;
	case JSONDOC_EJSON:
		*why = "body is not valid JSON";
		return HOOK_EJSON;
	default:
		return HOOK_ESYSTEM;
	}
	if (jsondoc_kind(d, 0) != JSONDOC_OBJECT) {
		*why = "body is not a JSON object";
		er = HOOK_EJSON;
		goto out;
	}
	if (jsondoc_depth(d) > (ep->depth_max != 0 ? ep->depth_max :
	    EVENT_DEPTH_MAX)) {
		*why = ep->depth_max == CONF_DEPTH_MYSQL ? "body nests arrays "
		    "and objects more than " STR(CONF_DEPTH_MYSQL) " levels "
		    "deep, more than MariaDB's JSON functions read" : "body "
		    "nests arrays and objects more than " STR(CONF_DEPTH_SQLITE)
		    " levels deep, more than SQLite's JSON functions read";
		er = HOOK_EJSON;
		goto out;
	}
	if ((er = type_from(&ep->type, rq, d, &ev->type, why)) != HOOK_OK)
		goto out;
	if ((er = handshake(ep, d, ev, why)) != HOOK_OK)
		goto out;
	for (i = 0; i < ep->key.n && ev->key == NULL; i++)
		if ((er = key_at(ep, i, rq, d, ev, &ev->key, why)) != HOOK_OK)
			goto out;
	scope = scope_of(ep, rq);
	if (ev->key != NULL &&
	    (er = sign_key(ep, rq, d, ev, i - 1, scope)) != HOOK_OK)
		goto out;
	/* The key and the type may come from inside a volatile member
	 * (mailgun's token); the payload hash leaves it out. */
	forget_volatile(ep, d);
	if (ev->key == NULL) {
		*why = "idempotency key missing";
		er = HOOK_ENOKEY;
		goto out;
	}
	if ((er = scoped(scope, &ev->key, why)) != HOOK_OK)
		goto out;
	ev->payload = body;
	ev->payloadsz = bodysz;
	ev->doc = d;
	return HOOK_OK;
out:
	jsondoc_free(d);
	if (er != HOOK_OK && er != HOOK_HANDSHAKE)
		event_clear(ev);
	if (er == HOOK_ESYSTEM)
		*why = NULL;
	return er;
}

/*
 * event_peek()'s look at one JSON source: 1 with the string in *out (or
 * NULL: absent, or a value of another kind unless strings_only), 0
 * where only a parse can tell.  A member the scheme forgets
 * (forget_volatile()) and the whole document (json:) are the parse's.
 */
static int
peek_json(const struct conf_endpoint *ep, const char *body, size_t bodysz,
    const char *ptr, int strings_only, char **out)
{
	const char *const	*m = ep->scheme->volatile_members;
	const char		*v;
	size_t			 n, vlen;

	*out = NULL;
	if (*ptr != '/')
		return 0;
	n = strcspn(ptr + 1, "/~");
	for (; m != NULL && *m != NULL; m++)
		if (strlen(*m) == n && strncmp(ptr + 1, *m, n) == 0)
			return 0;
	switch (jsonpeek(body, bodysz, ptr, &v, &vlen)) {
	case JSONPEEK_STRING:
		if (memchr(v, '\0', vlen) != NULL ||
		    (*out = strndup(v, vlen)) == NULL)
			return 0;
		return 1;
	case JSONPEEK_ABSENT:
		return 1;
	case JSONPEEK_OTHER:
		return !strings_only;
	default:
		return 0;
	}
}

/*
 * One key or type source for event_peek(): 1 with its value in *out
 * (owned; NULL if absent or empty), 0 where only the parse can tell (a
 * hash key; for a key, a value that is not a string).  Types of another
 * kind are absent, as in type_from().
 */
static int
peek_source(const struct conf_endpoint *ep, const struct req *rq,
    const char *body, size_t bodysz, const struct src *s, int is_key,
    char **out)
{
	const char	*h;

	*out = NULL;
	switch (s->kind) {
	case SRC_HEADER:
		return (h = req_header(rq, s->arg)) == NULL || *h == '\0' ||
		    (*out = strdup(h)) != NULL;
	case SRC_JSON:
		if (!peek_json(ep, body, bodysz, s->arg, is_key, out))
			return 0;
		if (*out != NULL && **out == '\0') {
			free(*out);
			*out = NULL;
		}
		return 1;
	default:
		return !is_key;	/* a key from the canonical hash */
	}
}

/*
 * The key and the type of a body as extract() would find them, read
 * without a parse (lib/jsonpeek.h), so that a retry of stored bytes is
 * answered without one.  1 with ev->key, ev->type and the payload set
 * (no hash, no document), or 0 with ev empty wherever only the parse
 * can tell (an escape, a number, an index, a hash key, an unusable
 * value, a possible handshake).  The caller may believe it only where a
 * lookup finds these very bytes stored under that key: the parse took
 * them then, and found that key.
 */
int
event_peek(const struct conf_endpoint *ep, const struct req *rq,
    const char *body, size_t bodysz, struct event *ev)
{
	const struct handshake	*hs;
	char			*v = NULL;
	const char		*why = NULL;
	size_t			 i;

	memset(ev, 0, sizeof(*ev));
	for (hs = ep->scheme->handshake; hs != NULL; hs = hs->next) {
		if (!peek_json(ep, body, bodysz, hs->at, 0, &v) ||
		    (v != NULL && strcmp(v, hs->type) == 0))
			goto no;
		free(v);
		v = NULL;
	}
	for (i = 0; i < ep->type.n && ev->type == NULL; i++)
		if (!peek_source(ep, rq, body, bodysz, &ep->type.v[i], 0,
		    &ev->type))
			goto no;
	if (ev->type != NULL &&
	    event_text(ev->type, EVENT_TYPE_MAX) != EVENT_TEXT_OK)
		goto no;
	for (i = 0; i < ep->key.n && ev->key == NULL; i++)
		if (!peek_source(ep, rq, body, bodysz, &ep->key.v[i], 1,
		    &ev->key))
			goto no;
	if (ev->key == NULL ||
	    event_text(ev->key, EVENT_KEY_MAX) != EVENT_TEXT_OK)
		goto no;
	if (scoped(scope_of(ep, rq), &ev->key, &why) != HOOK_OK)
		goto no;
	ev->payload = body;
	ev->payloadsz = bodysz;
	return 1;
no:
	free(v);
	event_clear(ev);
	return 0;
}

/*
 * The key more_key() appends: ':' and the item's string, true or false
 * at each pointer ("" if absent or null).  HOOK_OK, HOOK_EBADKEY (too
 * long, not text, another kind) or HOOK_ESYSTEM.
 */
static enum hook_err
more_key(const char *const *more, struct event *ev, const char **why)
{
	const struct jsondoc	*d = ev->doc;
	char			 buf[EVENT_KEY_MAX + 2], *k;
	const char		*v;
	size_t			 o, len;
	long			 j;
	enum event_text	 bad;

	o = (size_t)snprintf(buf, sizeof(buf), "%s", ev->key);
	for (; *more != NULL && o < sizeof(buf); more++) {
		v = "";
		len = 0;
		if ((j = jsondoc_get(d, *more)) != -1)
			switch (jsondoc_kind(d, j)) {
			case JSONDOC_NULL:
				break;
			case JSONDOC_STRING:
				v = jsondoc_string(d, j, &len);
				break;
			case JSONDOC_TRUE:
				v = "true";
				len = 4;
				break;
			case JSONDOC_FALSE:
				v = "false";
				len = 5;
				break;
			default:
				*why = "idempotency key part is not a string";
				return HOOK_EBADKEY;
			}
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, ":%.*s",
		    (int)(len > sizeof(buf) ? sizeof(buf) : len), v);
	}
	if ((bad = o > EVENT_KEY_MAX ? EVENT_TEXT_LONG :
	    event_text(buf, EVENT_KEY_MAX)) != EVENT_TEXT_OK) {
		*why = key_why[bad];
		return HOOK_EBADKEY;
	}
	if ((k = strdup(buf)) == NULL)
		return HOOK_ESYSTEM;
	free(ev->key);
	ev->key = k;
	return HOOK_OK;
}

enum hook_err
event_items(const struct conf_endpoint *ep, const struct req *rq,
    const struct sig_batch *b, const char *body, size_t bodysz,
    struct event **items, size_t *n, struct why *trace)
{
	struct jsondoc	*d;
	struct event	*ev = NULL;
	const char	*raw, *msg = NULL;
	char		 ptr[128];
	enum hook_err	 er = HOOK_OK;
	size_t		 i, len;
	long		 j;

	*items = NULL;
	*n = 0;
	switch (jsondoc_read(body, bodysz, 0, &d)) {
	case JSONDOC_OK:
		break;
	case JSONDOC_EJSON:
		why_client(trace, "body is not valid JSON");
		return HOOK_EJSON;
	default:
		return HOOK_ESYSTEM;
	}
	/* The items are an array's elements: "/0" also names an object's
	 * member "0". */
	if ((j = jsondoc_get(d, b->items)) == -1 ||
	    jsondoc_kind(d, j) != JSONDOC_ARRAY) {
		msg = "the batch is not a JSON array";
		er = HOOK_EJSON;
		goto out;
	}
	if ((ev = calloc(SIG_BATCH_MAX, sizeof(*ev))) == NULL) {
		er = HOOK_ESYSTEM;
		goto out;
	}
	for (i = 0; ; i++) {
		snprintf(ptr, sizeof(ptr), "%s/%zu%s", b->items, i, b->item);
		if ((j = jsondoc_get(d, ptr)) == -1)
			break;
		if (i == SIG_BATCH_MAX) {
			msg = "more items than one request may hold";
			er = HOOK_EJSON;
			break;
		}
		if ((raw = jsondoc_raw(d, j, &len)) == NULL ||
		    jsondoc_kind(d, j) != JSONDOC_OBJECT) {
			msg = "an item is not a JSON object";
			er = HOOK_EJSON;
			break;
		}
		/* Each item is a body of its own: its sources, its
		 * refusals. */
		if ((er = event_parse(ep, rq, raw, len, &ev[i], trace)) !=
		    HOOK_OK)
			break;
		*n = i + 1;
		if (ep->key_default && b->key_more != NULL &&
		    (er = more_key(b->key_more, &ev[i], &msg)) != HOOK_OK)
			break;
	}
	if (er == HOOK_HANDSHAKE)
		er = HOOK_EJSON;	/* no batch scheme has one */
	if (er == HOOK_OK && *n == 0) {
		msg = "no items in the batch";
		er = HOOK_EJSON;
	}
out:
	jsondoc_free(d);
	if (er != HOOK_OK) {
		if (msg != NULL)
			why_client(trace, msg);
		event_items_free(ev, *n);
		*n = 0;
		return er;
	}
	*items = ev;
	return HOOK_OK;
}

void
event_items_free(struct event *items, size_t n)
{
	size_t	 i;

	if (items == NULL)
		return;
	for (i = 0; i < n; i++)
		event_clear(&items[i]);
	free(items);
}

void
event_clear(struct event *ev)
{
	if (ev == NULL)
		return;
	free(ev->key);
	free(ev->signed_key);
	free(ev->type);
	free(ev->token);
	free(ev->norm);
	jsondoc_free(ev->doc);
	memset(ev, 0, sizeof(*ev));
}

char *
event_canonical(const char *text, size_t sz)
{
	struct jsondoc	*d;
	const char	*c;
	char		*out = NULL;
	size_t		 len;

	if (jsondoc_read(text, sz, JSONDOC_ANY, &d) != JSONDOC_OK)
		return NULL;
	if ((c = jsondoc_canonical(d, &len)) != NULL)
		out = strndup(c, len);
	jsondoc_free(d);
	return out;
}

enum hook_err
event_form(const char *body, size_t bodysz, char **json, size_t *jsonsz,
    struct why *trace)
{
	struct form	 f;
	const char	*why;

	*json = NULL;
	if (form_parse(body, bodysz, &f) == -1)
		return HOOK_ESYSTEM;
	*json = form_json(&f, jsonsz, &why);
	form_clear(&f);
	if (*json != NULL)
		return HOOK_OK;
	if (why == NULL)
		return HOOK_ESYSTEM;
	why_client(trace, why);
	return HOOK_EJSON;
}

enum hook_err
event_stored(struct event *ev, const char *key, const char *type,
    const char *hash, const char *payload, size_t sz, long long received_at)
{
	memset(ev, 0, sizeof(*ev));
	ev->payload = payload;
	ev->payloadsz = sz;
	ev->received_at = received_at;
	snprintf(ev->hash, sizeof(ev->hash), "%s", hash != NULL ? hash : "");
	if ((ev->key = strdup(key)) == NULL ||
	    (type != NULL && (ev->type = strdup(type)) == NULL) ||
	    (ev->norm = event_unescape(payload, sz, &ev->normsz)) == NULL) {
		event_clear(ev);
		return HOOK_ESYSTEM;
	}
	return HOOK_OK;
}

const char *
event_jansson_version(void)
{
#if JANSSON_VERSION_HEX >= 0x020d00
	return jansson_version_str();	/* the one loaded, if shared */
#else
	return JANSSON_VERSION;
#endif
}
