/*
 * oncehook: event extraction (see event.h).  The jansson room.
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
#include "event.h"
#include "log.h"
#include "req.h"
#include "sig.h"

#define CANON_FLAGS	(JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)

/*
 * Follow an RFC 6901 JSON pointer from root.  Returns the borrowed value
 * or NULL if the pointer leads nowhere.
 */
static json_t *
pointer_get(json_t *root, const char *ptr)
{
	char		 tok[256];
	json_t		*cur = root;
	const char	*p = ptr;
	size_t		 n;
	char		*end;
	unsigned long	 idx;

	while (*p == '/' && cur != NULL) {
		p++;
		for (n = 0; *p != '\0' && *p != '/'; p++) {
			if (n + 1 >= sizeof(tok))
				return NULL;
			if (*p == '~') {
				if (p[1] != '0' && p[1] != '1')
					return NULL;
				p++;
				tok[n++] = *p == '1' ? '/' : '~';
			} else
				tok[n++] = *p;
		}
		tok[n] = '\0';
		if (json_is_object(cur))
			cur = json_object_get(cur, tok);
		else if (json_is_array(cur)) {
			if (n == 0 || (n > 1 && tok[0] == '0') ||
			    tok[0] < '0' || tok[0] > '9')
				return NULL;
			errno = 0;
			idx = strtoul(tok, &end, 10);
			if (errno != 0 || *end != '\0')
				return NULL;
			cur = json_array_get(cur, idx);
		} else
			return NULL;
	}
	return cur;
}

/* 1 if s holds no control character. */
static int
printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

/*
 * The key from one source into *out (owned).  Returns HOOK_OK with
 * *out NULL if the source is absent, HOOK_OK with *out set, or an error.
 */
static enum hook_err
key_from(const struct src *s, const struct req *rq, json_t *root,
    const char *hash, char **out, const char **why)
{
	char		 num[32];
	const char	*v = NULL;
	json_t		*j;

	*out = NULL;
	switch (s->kind) {
	case SRC_HEADER:
		if ((v = req_header(rq, s->arg)) == NULL || *v == '\0')
			return HOOK_OK;
		break;
	case SRC_JSON:
		if ((j = pointer_get(root, s->arg)) == NULL ||
		    json_is_null(j))
			return HOOK_OK;
		if (json_is_string(j))
			v = json_string_value(j);
		else if (json_is_integer(j)) {
			snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			    json_integer_value(j));
			v = num;
		} else {
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
	if (strlen(v) > EVENT_KEY_MAX || !printable(v)) {
		*why = "idempotency key too long or not printable";
		return HOOK_EBADKEY;
	}
	if ((*out = strdup(v)) == NULL)
		return HOOK_ESYSTEM;
	return HOOK_OK;
}

/* The event type from the first source that has one; NULL if none. */
static enum hook_err
type_from(const struct srclist *sl, const struct req *rq, json_t *root,
    char **out, const char **why)
{
	const char	*v = NULL;
	json_t		*j;
	size_t		 i;

	*out = NULL;
	for (i = 0; i < sl->n && v == NULL; i++) {
		if (sl->v[i].kind == SRC_HEADER)
			v = req_header(rq, sl->v[i].arg);
		else if (sl->v[i].kind == SRC_JSON &&
		    (j = pointer_get(root, sl->v[i].arg)) != NULL)
			v = json_string_value(j);
		if (v != NULL && *v == '\0')
			v = NULL;
	}
	if (v == NULL)
		return HOOK_OK;
	if (strlen(v) > EVENT_TYPE_MAX || !printable(v)) {
		*why = "event type too long or not printable";
		return HOOK_EJSON;
	}
	if ((*out = strdup(v)) == NULL)
		return HOOK_ESYSTEM;
	return HOOK_OK;
}

/* 1 if v is a real holding a whole number below 2^53, put in *w. */
static int
whole(const json_t *v, json_int_t *w)
{
	double	 d;

	if (!json_is_real(v))
		return 0;
	d = json_real_value(v);
	if (d <= -9007199254740992.0 || d >= 9007199254740992.0 ||
	    (double)(json_int_t)d != d)
		return 0;
	*w = (json_int_t)d;
	return 1;
}

/*
 * Write every real that holds a whole number below 2^53 as an integer,
 * so 1, 1.0 and 1e0 are one number in the canonical form, as in RFC
 * 8785.  Other reals keep jansson's round-trip formatting.  Returns 0,
 * or -1 if out of memory.
 */
static int
normalize(json_t *j)
{
	const char	*k;
	json_t		*v;
	json_int_t	 w;
	size_t		 i;

	if (json_is_object(j)) {
		json_object_foreach(j, k, v)
			if (whole(v, &w) ?
			    json_object_set_new(j, k, json_integer(w)) != 0 :
			    normalize(v) == -1)
				return -1;
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			if (whole(v, &w) ?
			    json_array_set_new(j, i, json_integer(w)) != 0 :
			    normalize(v) == -1)
				return -1;
	}
	return 0;
}

/*
 * A sender's URL check (the scheme's challenge type at /type): copy the
 * string at /challenge and return HOOK_CHALLENGE; HOOK_OK if this is
 * no such check.
 */
static enum hook_err
challenge(const struct conf_endpoint *ep, json_t *root, struct event *ev,
    const char **why)
{
	const char	*t, *c;

	if (ep->scheme->challenge == NULL ||
	    (t = json_string_value(json_object_get(root, "type"))) == NULL ||
	    strcmp(t, ep->scheme->challenge) != 0)
		return HOOK_OK;
	if ((c = json_string_value(json_object_get(root, "challenge"))) ==
	    NULL || strlen(c) > EVENT_KEY_MAX || !printable(c)) {
		*why = "challenge missing or not usable";
		return HOOK_EJSON;
	}
	if ((ev->challenge = strdup(c)) == NULL)
		return HOOK_ESYSTEM;
	return HOOK_CHALLENGE;
}

/*
 * Remove the top-level members the provider may change between attempts
 * at one event, so that a retry hashes the same.  The raw body, which
 * actions see, keeps them.
 */
static void
forget_volatile(const struct conf_endpoint *ep, json_t *root)
{
	const char *const	*m = ep->scheme->volatile_members;

	for (; m != NULL && *m != NULL; m++)
		(void)json_object_del(root, *m);
}

/* SHA-256 hex of the canonical form of root into hash. */
static int
canonical_hash(json_t *root, char hash[CRYPTO_SHA256_HEXLEN + 1])
{
	unsigned char	 md[CRYPTO_SHA256_LEN];
	char		*text;
	int		 rc;

	if (normalize(root) == -1 ||
	    (text = json_dumps(root, CANON_FLAGS)) == NULL)
		return -1;
	rc = crypto_sha256(text, strlen(text), md);
	free(text);
	if (rc == 0)
		crypto_hex(md, sizeof(md), hash);
	return rc;
}

enum hook_err
event_extract(const struct conf_endpoint *ep, const struct req *rq,
    const char *body, size_t bodysz, struct event *ev, const char **why)
{
	json_error_t	 jerr;
	json_t		*root;
	enum hook_err	 er;
	size_t		 i;
	char		 etext[4 * JSON_ERROR_TEXT_LENGTH];

	memset(ev, 0, sizeof(*ev));
	*why = NULL;
	if ((root = json_loadb(body, bodysz, JSON_REJECT_DUPLICATES,
	    &jerr)) == NULL) {
		if (log_enabled(LOG_LEVEL_DEBUG))
			log_debug("json: line %d column %d: %s", jerr.line,
			    jerr.column, log_escape(etext, sizeof(etext),
			    jerr.text));
		*why = "body is not valid JSON";
		return HOOK_EJSON;
	}
	if (!json_is_object(root)) {
		*why = "body is not a JSON object";
		er = HOOK_EJSON;
		goto out;
	}
	forget_volatile(ep, root);
	if (canonical_hash(root, ev->hash) == -1) {
		er = HOOK_ESYSTEM;
		goto out;
	}
	if ((er = type_from(&ep->type, rq, root, &ev->type, why)) != HOOK_OK)
		goto out;
	if ((er = challenge(ep, root, ev, why)) != HOOK_OK)
		goto out;
	for (i = 0; i < ep->key.n && ev->key == NULL; i++)
		if ((er = key_from(&ep->key.v[i], rq, root, ev->hash,
		    &ev->key, why)) != HOOK_OK)
			goto out;
	if (ev->key == NULL) {
		*why = "idempotency key missing";
		er = HOOK_ENOKEY;
		goto out;
	}
	ev->payload = body;
	ev->payloadsz = bodysz;
	er = HOOK_OK;
out:
	json_decref(root);
	if (er != HOOK_OK && er != HOOK_CHALLENGE)
		event_clear(ev);
	if (er == HOOK_ESYSTEM)
		*why = NULL;
	return er;
}

void
event_clear(struct event *ev)
{
	if (ev == NULL)
		return;
	free(ev->key);
	free(ev->type);
	free(ev->challenge);
	memset(ev, 0, sizeof(*ev));
}

char *
event_canonical(const char *text, size_t sz)
{
	json_t	*root;
	char	*out;

	if ((root = json_loadb(text, sz, JSON_REJECT_DUPLICATES |
	    JSON_DECODE_ANY, NULL)) == NULL)
		return NULL;
	out = normalize(root) == 0 ? json_dumps(root, CANON_FLAGS) : NULL;
	json_decref(root);
	return out;
}
