/*
 * oncehook: configuration (see conf.h).
 *
 * Two tables drive the parse: one row per process-wide variable and one
 * per per-endpoint variable, each with its type, bounds and default.
 * Numbers go through one bounded parser; every error is reported as
 * "ONCEHOOK_NAME: message" and nothing is guessed.  The cross-field
 * checks come after the loops.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "conf.h"
#include "crypto.h"
#include "log.h"
#include "sig.h"

#ifndef ONCEHOOK_SQLDIR
#define ONCEHOOK_SQLDIR	"/usr/local/share/oncehook/sql"
#endif

#define SECRET_FILE_MAX	65536	/* bytes */

enum conf_type {
	CONF_STRING,		/* any non-empty text */
	CONF_INT,		/* whole number within min..max */
	CONF_LEVEL,		/* log level name */
	CONF_SYNC,		/* full or normal */
};

/* Process-wide variables: ONCEHOOK_<name>. */
static const struct directive {
	const char	*name;
	enum conf_type	 type;
	long long	 min, max;
	const char	*def;	/* NULL: no default */
} globals[] = {
	{ "MAX_BODY",		CONF_INT, 1, 64LL << 20, "1048576" },
	{ "SYNCHRONOUS",	CONF_SYNC, 0, 0, "full" },
	{ "BUSY_TIMEOUT_MS",	CONF_INT, 0, 600000, "5000" },
	{ "LOG",		CONF_LEVEL, 0, 0, "info" },
	{ NULL,			0, 0, 0, NULL }
};

struct loader {
	conf_getenv_fn	 get;
	void		*arg;
	char		*err;
	size_t		 errsz;
};

static int
fail(struct loader *l, const char *var, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail(struct loader *l, const char *var, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	n = snprintf(l->err, l->errsz, "%s: ", var);
	if (n < 0 || (size_t)n >= l->errsz)
		return -1;
	va_start(ap, fmt);
	vsnprintf(l->err + n, l->errsz - n, fmt, ap);
	va_end(ap);
	return -1;
}

/* The value of variable pfx+name, NULL if unset; empty counts as unset. */
static const char *
lookup(struct loader *l, const char *pfx, const char *name, char *var,
    size_t varsz)
{
	const char	*v;

	snprintf(var, varsz, "%s%s", pfx, name);
	v = l->get(var, l->arg);
	return v != NULL && *v != '\0' ? v : NULL;
}

/* Bounded whole number; 0 or -1. */
static int
parse_int(const char *s, long long min, long long max, long long *out)
{
	char		*end;
	long long	 v;

	if (!isdigit((unsigned char)*s) && *s != '-')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
conf_duration(const char *s, long long *out)
{
	char		*end;
	long long	 v, mul;

	if (strcmp(s, "forever") == 0) {
		*out = -1;
		return 0;
	}
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end[0] == '\0' || end[1] != '\0')
		return -1;
	switch (*end) {
	case 's': mul = 1; break;
	case 'm': mul = 60; break;
	case 'h': mul = 3600; break;
	case 'd': mul = 86400; break;
	default: return -1;
	}
	/* At most 100 years. */
	if (v < 1 || v > 36500LL * 86400 / mul)
		return -1;
	*out = v * mul;
	return 0;
}

void
srclist_clear(struct srclist *sl)
{
	size_t	 i;

	for (i = 0; i < sl->n; i++)
		free(sl->v[i].arg);
	sl->n = 0;
}

/* A JSON pointer per RFC 6901: empty, or '/' then tokens; ~ escapes. */
static int
pointer_ok(const char *p)
{
	if (*p == '\0')
		return 1;
	if (*p != '/')
		return 0;
	for (; *p != '\0'; p++)
		if (*p == '~' && p[1] != '0' && p[1] != '1')
			return 0;
	return 1;
}

/* An HTTP header name: a token of letters, digits and - _ . */
static int
header_ok(const char *h)
{
	if (*h == '\0')
		return 0;
	for (; *h != '\0'; h++)
		if (!isalnum((unsigned char)*h) && *h != '-' && *h != '_')
			return 0;
	return 1;
}

int
srclist_parse(struct srclist *sl, const char *text, int allowhash, char *err,
    size_t errsz)
{
	const char	*p = text, *w;
	size_t		 len;
	struct src	*s;
	char		 word[512];

	sl->n = 0;
	for (;;) {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		w = p;
		len = strcspn(p, " ");
		p += len;
		if (len >= sizeof(word)) {
			snprintf(err, errsz, "source too long");
			goto err;
		}
		if (sl->n == CONF_SRC_MAX) {
			snprintf(err, errsz, "more than %d sources",
			    CONF_SRC_MAX);
			goto err;
		}
		memcpy(word, w, len);
		word[len] = '\0';
		s = &sl->v[sl->n];
		s->arg = NULL;
		if (strncmp(word, "header:", 7) == 0) {
			if (!header_ok(word + 7)) {
				snprintf(err, errsz, "bad header name in "
				    "\"%.64s\"", word);
				goto err;
			}
			s->kind = SRC_HEADER;
		} else if (strncmp(word, "json:", 5) == 0) {
			if (!pointer_ok(word + 5)) {
				snprintf(err, errsz, "bad JSON pointer in "
				    "\"%.64s\" (want json:/a/b)", word);
				goto err;
			}
			s->kind = SRC_JSON;
		} else if (allowhash && strcmp(word, "hash") == 0) {
			s->kind = SRC_HASH;
		} else {
			snprintf(err, errsz, "unknown source \"%.64s\" (want "
			    "header:NAME, json:/pointer%s)", word,
			    allowhash ? " or hash" : "");
			goto err;
		}
		if (s->kind != SRC_HASH &&
		    (s->arg = strdup(strchr(word, ':') + 1)) == NULL) {
			snprintf(err, errsz, "out of memory");
			goto err;
		}
		sl->n++;
	}
	if (sl->n == 0) {
		snprintf(err, errsz, "no source given");
		return -1;
	}
	return 0;
err:
	srclist_clear(sl);
	return -1;
}

static void
secrets_free(struct conf_endpoint *ep)
{
	size_t	 i;

	for (i = 0; i < ep->nsecrets; i++) {
		crypto_wipe(ep->secrets[i].p, ep->secrets[i].sz);
		free(ep->secrets[i].p);
	}
	free(ep->secrets);
	ep->secrets = NULL;
	ep->nsecrets = 0;
}

/*
 * 1 if the secret is a shipped example's placeholder, such as
 * REPLACE_WITH_YOUR_SIGNING_SECRET: anyone who read the example could
 * sign with it, so it never becomes a key.
 */
static int
placeholder(const char *text, size_t len)
{
	char	 buf[128];
	size_t	 i;

	if (len >= sizeof(buf))
		return 0;
	for (i = 0; i < len; i++)
		buf[i] = (char)toupper((unsigned char)text[i]);
	buf[len] = '\0';
	return strstr(buf, "REPLACE") != NULL && strstr(buf, "YOUR") != NULL;
}

/*
 * Length of the UTF-8 sequence at s (n bytes left), or 0 if the bytes
 * there are not one: a stray continuation byte, a cut sequence, an
 * overlong form, a surrogate or a value past U+10FFFF.
 */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	unsigned long	 cp;
	size_t		 len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/*
 * Why text (len bytes) cannot hold a secret, or NULL if it can; *at is
 * then the offset of the first offending byte.  Secrets are UTF-8 text.
 * A NUL byte would cut the key short wherever it is read as a C string
 * (a UTF-16 file is full of them, leaving a key of a few bytes that
 * anyone can forge); a byte-order mark or bytes that are not UTF-8 mean
 * an editor saved the secret in another encoding, so the key would not
 * be the provider's secret.  The reason never quotes the bytes.
 */
static const char *
text_refused(const char *text, size_t len, size_t *at)
{
	const unsigned char	*s = (const unsigned char *)text;
	size_t			 i, n;

	*at = 0;
	if (len >= 2 && ((s[0] == 0xff && s[1] == 0xfe) ||
	    (s[0] == 0xfe && s[1] == 0xff)))
		return "starts with a UTF-16 byte-order mark (saved as "
		    "UTF-16?); save it as UTF-8 text";
	for (i = 0; i < len; i += n) {
		*at = i;
		if (s[i] == '\0')
			return "holds a NUL byte (saved as UTF-16?); save it "
			    "as UTF-8 text";
		if ((n = utf8_len(s + i, len - i)) == 0)
			return "is not valid UTF-8; save it as UTF-8 text";
		if (n == 3 && s[i] == 0xef && s[i + 1] == 0xbb &&
		    s[i + 2] == 0xbf)
			return "holds a byte-order mark (U+FEFF); save it as "
			    "UTF-8 without BOM";
	}
	return NULL;
}

/* Where a secret was written, for messages: never the secret itself. */
static void
secret_place(const struct conf_endpoint *ep, unsigned at, char *buf,
    size_t bufsz)
{
	if (ep->secret_file != NULL)
		snprintf(buf, bufsz, "%.200s: line %u", ep->secret_file, at);
	else
		snprintf(buf, bufsz, "secret %u", at);
}

/*
 * Add one secret (text of length len, written at place at: a line of
 * the file, or a place in the list) to ep, through its scheme.
 */
static int
secret_add(struct loader *l, struct conf_endpoint *ep, const char *var,
    const char *text, size_t len, unsigned at)
{
	struct secret	*s;
	char		*copy;
	char		 why[128], where[256];
	const char	*bad;
	size_t		 off;
	int		 rc;

	secret_place(ep, at, where, sizeof(where));
	if ((bad = text_refused(text, len, &off)) != NULL)
		return fail(l, var, "%s %s", where, bad);
	if (placeholder(text, len)) {
		ep->placeholder = 1;
		return 0;
	}
	if (ep->nsecrets == CONF_SECRETS_MAX)
		return fail(l, var, "more than %d secrets", CONF_SECRETS_MAX);
	if (ep->secrets == NULL &&
	    (ep->secrets = calloc(CONF_SECRETS_MAX, sizeof(*s))) == NULL)
		return fail(l, var, "out of memory");
	s = &ep->secrets[ep->nsecrets];
	if ((copy = strndup(text, len)) == NULL)
		return fail(l, var, "out of memory");
	if (ep->scheme->secret != NULL) {
		rc = ep->scheme->secret(copy, s, why, sizeof(why));
		crypto_wipe(copy, len);
		free(copy);
		if (rc == -1)
			return fail(l, var, "%s: %s", where, why);
	} else {
		s->p = (unsigned char *)copy;
		s->sz = len;
	}
	if (s->sz == 0)
		return fail(l, var, "%s is empty", where);
	ep->secret_at[ep->nsecrets++] = at;
	return 0;
}

/* Secrets from a list separated by white space (a CR or LF too). */
static int
secrets_from_text(struct loader *l, struct conf_endpoint *ep, const char *var,
    const char *text)
{
	static const char	 blank[] = " \t\r\n";
	size_t			 len;
	unsigned		 at = 0;

	for (;;) {
		text += strspn(text, blank);
		if (*text == '\0')
			return 0;
		len = strcspn(text, blank);
		if (secret_add(l, ep, var, text, len, ++at) == -1)
			return -1;
		text += len;
	}
}

/*
 * Secrets from a file of UTF-8 text, one a line; blank lines and #
 * comments skipped, blanks around a secret trimmed, and a line may end
 * in CRLF.  A file that is not UTF-8 text (see text_refused()) or holds
 * a CR inside a line (old Mac line endings, which would join secrets)
 * is refused whole.
 */
static int
secrets_from_file(struct loader *l, struct conf_endpoint *ep, const char *var,
    const char *path)
{
	char		 buf[SECRET_FILE_MAX + 1];
	FILE		*f;
	size_t		 sz, len, off, i;
	char		*p, *eol;
	const char	*bad;
	unsigned	 line, at;
	int		 rc = 0;

	if ((f = fopen(path, "r")) == NULL)
		return fail(l, var, "%s: %s", path, strerror(errno));
	sz = fread(buf, 1, sizeof(buf), f);
	if (ferror(f))
		rc = fail(l, var, "%s: read error", path);
	else if (sz > SECRET_FILE_MAX)
		rc = fail(l, var, "%s: larger than %d bytes", path,
		    SECRET_FILE_MAX);
	fclose(f);
	if (rc == 0 && (bad = text_refused(buf, sz, &off)) != NULL) {
		for (i = 0, line = 1; i < off; i++)
			line += buf[i] == '\n';
		rc = fail(l, var, "%s: line %u %s", path, line, bad);
	}
	buf[sz < sizeof(buf) ? sz : sizeof(buf) - 1] = '\0';
	for (p = buf, at = 1; rc == 0 && *p != '\0'; p = eol, at++) {
		len = strcspn(p, "\n");
		eol = p + len + (p[len] == '\n');
		while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' ' ||
		    p[len - 1] == '\t'))
			len--;
		while (len > 0 && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		if (len == 0 || *p == '#')
			continue;
		if (memchr(p, '\r', len) != NULL)
			rc = fail(l, var, "%s: line %u holds a carriage return "
			    "inside it (old Mac line endings?); end lines with "
			    "LF or CRLF", path, at);
		else
			rc = secret_add(l, ep, var, p, len, at);
	}
	crypto_wipe(buf, sizeof(buf));
	if (rc == 0 && ep->nsecrets == 0 && !ep->placeholder)
		rc = fail(l, var, "%s: no secret in the file", path);
	return rc;
}

/* Endpoint names: letters, digits, - and _, at most CONF_NAME_MAX-1. */
static int
name_ok(const char *n, size_t len)
{
	size_t	 i;

	if (len == 0 || len >= CONF_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)n[i]) && n[i] != '-' &&
		    n[i] != '_')
			return 0;
	return 1;
}

static int
load_endpoint(struct loader *l, struct conf_endpoint *ep)
{
	char		 var[CONF_NAME_MAX + 64];
	char		 why[160];
	const char	*v, *secret, *file;
	size_t		 i;

	if ((v = lookup(l, ep->prefix, "SCHEME", var, sizeof(var))) == NULL)
		return fail(l, var, "required (one of: %s)", scheme_names());
	if ((ep->scheme = scheme_find(v)) == NULL)
		return fail(l, var, "unknown scheme \"%.64s\" (one of: %s)", v,
		    scheme_names());

	secret = lookup(l, ep->prefix, "SECRET", var, sizeof(var));
	file = lookup(l, ep->prefix, "SECRET_FILE", var, sizeof(var));
	if (secret != NULL && file != NULL)
		return fail(l, var, "set either %sSECRET or %sSECRET_FILE, "
		    "not both", ep->prefix, ep->prefix);
	if (file != NULL) {
		if ((ep->secret_file = strdup(file)) == NULL)
			return fail(l, var, "out of memory");
		if (secrets_from_file(l, ep, var, file) == -1)
			return -1;
	} else if (secret != NULL) {
		snprintf(var, sizeof(var), "%sSECRET", ep->prefix);
		if (secrets_from_text(l, ep, var, secret) == -1)
			return -1;
	}
	/* Only placeholders: the endpoint loads but refuses everything. */
	if (ep->nsecrets == 0 && !ep->placeholder)
		return fail(l, var, "required: %sSECRET or %sSECRET_FILE",
		    ep->prefix, ep->prefix);

	ep->tolerance = 300;
	if ((v = lookup(l, ep->prefix, "TOLERANCE", var, sizeof(var))) &&
	    parse_int(v, 1, 7 * 86400, &ep->tolerance) == -1)
		return fail(l, var, "want whole seconds from 1 to 604800 "
		    "(got \"%.64s\")", v);

	v = lookup(l, ep->prefix, "KEY", var, sizeof(var));
	if (srclist_parse(&ep->key, v != NULL ? v : ep->scheme->key, 1,
	    why, sizeof(why)) == -1)
		return fail(l, var, "%s", why);
	if (srclist_parse(&ep->type, ep->scheme->type, 0, why,
	    sizeof(why)) == -1)
		return fail(l, var, "scheme default: %s", why);
	for (i = 0; i + 1 < ep->key.n; i++)
		if (ep->key.v[i].kind == SRC_HASH)
			return fail(l, var, "hash must be the last source");
	/*
	 * Without a signed timestamp a captured request can be replayed at
	 * will; a key from a header the signature does not cover can be
	 * changed at will.  Either way the payload must stand for the event
	 * too.
	 */
	ep->replay_guard = !ep->scheme->timestamped;
	for (i = 0; i < ep->key.n; i++)
		if (ep->key.v[i].kind == SRC_HEADER &&
		    (ep->scheme->signed_header == NULL ||
		    strcasecmp(ep->key.v[i].arg,
		    ep->scheme->signed_header) != 0))
			ep->replay_guard = 1;

	/* 30 days: beyond every supported provider's retry horizon. */
	ep->retention = 30 * 86400;
	if ((v = lookup(l, ep->prefix, "RETENTION", var, sizeof(var))) &&
	    conf_duration(v, &ep->retention) == -1)
		return fail(l, var, "want a duration such as 72h, 30d or "
		    "forever (got \"%.64s\")", v);

	v = lookup(l, ep->prefix, "ACTIONS", var, sizeof(var));
	if (v != NULL && *v != '/')
		return fail(l, var, "must be an absolute path (got "
		    "\"%.200s\")", v);
	if ((ep->actions = strdup(v != NULL ? v :
	    ONCEHOOK_SQLDIR "/actions/orders.sql")) == NULL)
		return fail(l, var, "out of memory");
	return 0;
}

static int
load_globals(struct loader *l, struct conf *cf)
{
	const struct directive	*d;
	char			 var[128];
	const char		*v;
	long long		 n;
	int			 lv;

	for (d = globals; d->name != NULL; d++) {
		if ((v = lookup(l, "ONCEHOOK_", d->name, var,
		    sizeof(var))) == NULL)
			v = d->def;
		switch (d->type) {
		case CONF_INT:
			if (parse_int(v, d->min, d->max, &n) == -1)
				return fail(l, var, "want a whole number from "
				    "%lld to %lld (got \"%.64s\")", d->min,
				    d->max, v);
			if (strcmp(d->name, "MAX_BODY") == 0)
				cf->maxbody = n;
			else
				cf->busy_ms = n;
			break;
		case CONF_SYNC:
			if (strcmp(v, "full") != 0 && strcmp(v, "normal") != 0)
				return fail(l, var, "want full or normal "
				    "(got \"%.64s\")", v);
			cf->synchronous_full = strcmp(v, "full") == 0;
			break;
		case CONF_LEVEL:
			if ((lv = log_level_parse(v)) < 0)
				return fail(l, var, "want error, warn, info or "
				    "debug (got \"%.64s\")", v);
			cf->loglevel = lv;
			break;
		case CONF_STRING:
			break;
		}
	}

	if ((v = lookup(l, "ONCEHOOK_", "DB", var, sizeof(var))) == NULL)
		return fail(l, var, "required: the path of the SQLite "
		    "database");
	if (*v != '/')
		return fail(l, var, "must be an absolute path (got "
		    "\"%.200s\")", v);
	if ((cf->db = strdup(v)) == NULL)
		return fail(l, var, "out of memory");

	if ((v = lookup(l, "ONCEHOOK_", "STATUS_TOKEN", var,
	    sizeof(var))) != NULL) {
		if (strlen(v) < 16)
			return fail(l, var, "too short: use at least 16 "
			    "characters");
		if ((cf->status_token = strdup(v)) == NULL)
			return fail(l, var, "out of memory");
	}
	return 0;
}

/* Fill cf->endpoints from ONCEHOOK_ENDPOINTS, or one unnamed endpoint. */
static int
load_endpoints(struct loader *l, struct conf *cf)
{
	char			 var[128];
	const char		*list, *p;
	size_t			 len, rawlen, i, j, n = 0;
	struct conf_endpoint	*ep;

	list = lookup(l, "ONCEHOOK_", "ENDPOINTS", var, sizeof(var));
	cf->named = list != NULL;
	if (list != NULL)
		for (p = list, n = 1; *p != '\0'; p++)
			n += *p == ',';
	else
		n = 1;
	if ((cf->endpoints = calloc(n, sizeof(*ep))) == NULL)
		return fail(l, var, "out of memory");

	if (list == NULL) {
		ep = &cf->endpoints[cf->nendpoints++];
		/* Stored as "default", so naming it so later keeps its keys. */
		snprintf(ep->name, sizeof(ep->name), "default");
		snprintf(ep->prefix, sizeof(ep->prefix), "ONCEHOOK_");
		return load_endpoint(l, ep);
	}
	for (p = list; ; p++) {
		while (*p == ' ')
			p++;
		rawlen = strcspn(p, ",");
		len = rawlen;
		while (len > 0 && p[len - 1] == ' ')
			len--;
		if (!name_ok(p, len))
			return fail(l, var, "bad endpoint name \"%.*s\" "
			    "(letters, digits, - and _; at most %d)",
			    (int)(len > 64 ? 64 : len), p, CONF_NAME_MAX - 1);
		ep = &cf->endpoints[cf->nendpoints++];
		memcpy(ep->name, p, len);
		ep->name[len] = '\0';
		snprintf(ep->prefix, sizeof(ep->prefix), "ONCEHOOK_%s_",
		    ep->name);
		for (i = 9; ep->prefix[i] != '\0'; i++)
			ep->prefix[i] = ep->prefix[i] == '-' ? '_' :
			    (char)toupper((unsigned char)ep->prefix[i]);
		for (j = 0; j + 1 < cf->nendpoints; j++)
			if (strcmp(cf->endpoints[j].prefix, ep->prefix) == 0)
				return fail(l, var, "endpoints \"%s\" and "
				    "\"%s\" share the variables %s*",
				    cf->endpoints[j].name, ep->name,
				    ep->prefix);
		if (load_endpoint(l, ep) == -1)
			return -1;
		p += rawlen;
		if (*p == '\0')
			break;
	}
	return 0;
}

struct conf *
conf_load(conf_getenv_fn get, void *arg, char *err, size_t errsz)
{
	struct loader	 l = { get, arg, err, errsz };
	struct conf	*cf;

	if ((cf = calloc(1, sizeof(*cf))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	if (load_globals(&l, cf) == -1 || load_endpoints(&l, cf) == -1) {
		conf_free(cf);
		return NULL;
	}
	return cf;
}

static const char *
env_get(const char *name, void *arg)
{
	return getenv(name);
}

struct conf *
conf_load_env(char *err, size_t errsz)
{
	return conf_load(env_get, NULL, err, errsz);
}

void
conf_free(struct conf *cf)
{
	size_t	 i;

	if (cf == NULL)
		return;
	for (i = 0; i < cf->nendpoints; i++) {
		secrets_free(&cf->endpoints[i]);
		srclist_clear(&cf->endpoints[i].key);
		srclist_clear(&cf->endpoints[i].type);
		free(cf->endpoints[i].actions);
		free(cf->endpoints[i].secret_file);
	}
	free(cf->endpoints);
	if (cf->status_token != NULL) {
		crypto_wipe(cf->status_token, strlen(cf->status_token));
		free(cf->status_token);
	}
	free(cf->db);
	free(cf);
}

/* The variables an endpoint reads, after its prefix. */
static const char *const endpoint_vars[] = {
	"SCHEME", "SECRET", "SECRET_FILE", "TOLERANCE", "KEY", "RETENTION",
	"ACTIONS", NULL
};

/* The process-wide variables read besides the table's. */
static const char *const other_vars[] = {
	"DB", "ENDPOINTS", "STATUS_TOKEN", NULL
};

/* 1 if name (length len) is word after prefix. */
static int
is_var(const char *name, size_t len, const char *prefix, const char *word)
{
	size_t	 pl = strlen(prefix), wl = strlen(word);

	return len == pl + wl && strncmp(name, prefix, pl) == 0 &&
	    strncmp(name + pl, word, wl) == 0;
}

/*
 * Say which of ep's keys are shorter than CONF_SECRET_MIN bytes (after
 * whsec_ decoding where the scheme decodes): one guessed in a few
 * thousand tries forges every request.  Returns the count.
 */
static int
short_secrets(const struct conf_endpoint *ep,
    void (*say)(void *arg, const char *message), void *arg)
{
	char	 where[256], msg[512];
	size_t	 i;
	int	 n = 0;

	for (i = 0; i < ep->nsecrets; i++) {
		if (ep->secrets[i].sz >= CONF_SECRET_MIN)
			continue;
		secret_place(ep, ep->secret_at[i], where, sizeof(where));
		snprintf(msg, sizeof(msg), "%s%s: %s is shorter than %d "
		    "bytes%s; a short key can be guessed: use the provider's "
		    "secret, or at least %d random bytes", ep->prefix,
		    ep->secret_file != NULL ? "SECRET_FILE" : "SECRET", where,
		    CONF_SECRET_MIN, ep->scheme->secret != NULL ? " once "
		    "decoded" : "", CONF_SECRET_MIN);
		say(arg, msg);
		n++;
	}
	return n;
}

int
conf_warnings(const struct conf *cf, const char *const *envp,
    void (*say)(void *arg, const char *message), void *arg)
{
	const struct directive	*d;
	const char		*eq;
	char			 msg[512];
	size_t			 len, i, j;
	int			 known, n = 0;

	for (; *envp != NULL; envp++) {
		if (strncmp(*envp, "ONCEHOOK_", 9) != 0 ||
		    (eq = strchr(*envp, '=')) == NULL)
			continue;
		len = (size_t)(eq - *envp);
		known = 0;
		for (d = globals; d->name != NULL && !known; d++)
			known = is_var(*envp, len, "ONCEHOOK_", d->name);
		for (i = 0; other_vars[i] != NULL && !known; i++)
			known = is_var(*envp, len, "ONCEHOOK_", other_vars[i]);
		for (i = 0; i < cf->nendpoints && !known; i++)
			for (j = 0; endpoint_vars[j] != NULL && !known; j++)
				known = is_var(*envp, len,
				    cf->endpoints[i].prefix, endpoint_vars[j]);
		if (known)
			continue;
		snprintf(msg, sizeof(msg), "%.*s is not read (a typo, or an "
		    "endpoint missing from ONCEHOOK_ENDPOINTS?)",
		    (int)(len > 200 ? 200 : len), *envp);
		say(arg, msg);
		n++;
	}
	for (i = 0; i < cf->nendpoints; i++)
		if (cf->endpoints[i].placeholder) {
			snprintf(msg, sizeof(msg), "%sSECRET holds the "
			    "example's placeholder, ignored%s",
			    cf->endpoints[i].prefix,
			    cf->endpoints[i].nsecrets == 0 ? ": endpoint "
			    "refuses every request" : "");
			say(arg, msg);
			n++;
		}
	for (i = 0; i < cf->nendpoints; i++)
		n += short_secrets(&cf->endpoints[i], say, arg);
	if (cf->status_token != NULL) {
		say(arg, "ONCEHOOK_STATUS_TOKEN: the status endpoint is not "
		    "built yet; the token is ignored");
		n++;
	}
	return n;
}

/*
 * The last non-empty segment of path into buf ("" if it does not fit);
 * returns its length, 0 if path has none.
 */
static size_t
last_segment(const char *path, char *buf, size_t bufsz)
{
	const char	*end, *start;
	size_t		 len;

	buf[0] = '\0';
	if (path == NULL)
		return 0;
	end = path + strlen(path);
	while (end > path && end[-1] == '/')
		end--;
	start = end;
	while (start > path && start[-1] != '/')
		start--;
	len = (size_t)(end - start);
	if (len > 0 && len < bufsz) {
		memcpy(buf, start, len);
		buf[len] = '\0';
	}
	return len;
}

void
conf_route_name(const char *path_info, const char *script_name, char *buf,
    size_t bufsz)
{
	if (last_segment(path_info, buf, bufsz) == 0)
		(void)last_segment(script_name, buf, bufsz);
}

const struct conf_endpoint *
conf_route(const struct conf *cf, const char *path_info,
    const char *script_name)
{
	char	 seg[CONF_NAME_MAX];
	size_t	 i;

	if (!cf->named)
		return &cf->endpoints[0];
	conf_route_name(path_info, script_name, seg, sizeof(seg));
	if (seg[0] == '\0')
		return NULL;
	for (i = 0; i < cf->nendpoints; i++)
		if (strcmp(cf->endpoints[i].name, seg) == 0)
			return &cf->endpoints[i];
	return NULL;
}

/*
 * Resolve path: the file itself if it exists, else its directory plus
 * its last component.  Returns 0, or -1 if neither resolves.
 */
static int
resolve(const char *path, char *out)
{
	char	 dir[PATH_MAX];
	char	*slash;

	if (realpath(path, out) != NULL)
		return 0;
	if (strlen(path) >= sizeof(dir))
		return -1;
	strcpy(dir, path);
	if ((slash = strrchr(dir, '/')) == NULL)
		return -1;
	*slash = '\0';
	if (realpath(*dir ? dir : "/", out) == NULL)
		return -1;
	if (strlen(out) + strlen(slash + 1) + 2 > PATH_MAX)
		return -1;
	strcat(out, "/");
	strcat(out, slash + 1);
	return 0;
}

/* 1 if the resolved path p lies in the resolved directory d. */
static int
under(const char *p, const char *d)
{
	size_t	 dl = strlen(d);

	if (dl == 1)		/* the directory is "/" */
		return 1;
	return strncmp(p, d, dl) == 0 && (p[dl] == '/' || p[dl] == '\0');
}

/*
 * A database is inside the document root if it is so as written (even
 * in a directory that does not exist yet), with
 * its directories resolved, or with its last component followed too: a
 * symbolic link in the document root that points elsewhere still lets
 * the web server serve the file.
 */
int
conf_path_inside(const char *path, const char *dir)
{
	char	 p[PATH_MAX], d[PATH_MAX], parent[PATH_MAX];
	char	*slash;

	/* As written, when no "." or ".." component can lead out. */
	if (strstr(path, "/./") == NULL && strstr(path, "/../") == NULL &&
	    under(path, dir))
		return 1;
	if (realpath(dir, d) == NULL)
		return -1;
	if (strstr(path, "/./") == NULL && strstr(path, "/../") == NULL &&
	    under(path, d))
		return 1;
	if (strlen(path) < sizeof(parent)) {
		strcpy(parent, path);
		if ((slash = strrchr(parent, '/')) != NULL && slash != parent) {
			*slash = '\0';
			if (realpath(parent, p) != NULL &&
			    strlen(p) + strlen(slash + 1) + 2 <= sizeof(p)) {
				strcat(p, "/");
				strcat(p, slash + 1);
				if (under(p, d))
					return 1;
			}
		}
	}
	if (resolve(path, p) == -1)
		return -1;
	return under(p, d);
}

const char *
conf_exposed(const struct conf *cf, const char *root,
    const struct conf_endpoint **ep)
{
	size_t	 i;

	*ep = NULL;
	if (conf_path_inside(cf->db, root) == 1)
		return cf->db;
	for (i = 0; i < cf->nendpoints; i++)
		if (cf->endpoints[i].secret_file != NULL &&
		    conf_path_inside(cf->endpoints[i].secret_file, root) == 1) {
			*ep = &cf->endpoints[i];
			return cf->endpoints[i].secret_file;
		}
	return NULL;
}
