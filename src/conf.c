/* SPDX-License-Identifier: MIT */
/*
 * oncehook: configuration (see conf.h).
 *
 * One table drives the parse (conf_vars[]): a row per variable, scoped
 * to the process or to each endpoint, with its kind (the setter that
 * checks and stores it), bounds, default and documentation; the guides'
 * table and the man page are tested against it.  Numbers go through one
 * bounded parser; every error is reported as "ONCEHOOK_NAME: message"
 * and nothing is guessed.  A check across variables is made by the
 * setter of the row read later (SECRET_FILE's, after SECRET) or after the
 * table is read (conf_load_for()).
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "conf.h"
#include "lib/crypto.h"
#include "lib/pubkey.h"
#include "lib/envindex.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "observe/counters.h"
#include "pipeline/sig.h"

#ifndef ONCEHOOK_SQLDIR
#define ONCEHOOK_SQLDIR	"/usr/local/share/oncehook/sql"
#endif

#define SECRET_FILE_MAX	65536	/* bytes */

struct conf_loader {
	conf_getenv_fn	 get;
	void		*arg;
	char		*err;
	size_t		 errsz;
	struct conf	*cf;
	struct conf_endpoint *ep;	/* the endpoint being loaded */
	int		 had_secret;	/* its _SECRET was set */
	unsigned	 skip;		/* row flags not to read */
};

static int
fail(struct conf_loader *l, const char *var, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail(struct conf_loader *l, const char *var, const char *fmt, ...)
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
lookup(struct conf_loader *l, const char *pfx, const char *name, char *var,
    size_t varsz)
{
	const char	*v;
	size_t		 a = strlen(pfx), b = strlen(name);

	/* snprintf(var, varsz, "%s%s", pfx, name), without its cost: the
	 * loader builds a hundred names a CGI request. */
	if (a >= varsz)
		a = varsz - 1;
	if (b >= varsz - a)
		b = varsz - a - 1;
	memcpy(var, pfx, a);
	memcpy(var + a, name, b);
	var[a + b] = '\0';
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
secret_add(struct conf_loader *l, struct conf_endpoint *ep, const char *var,
    const char *text, size_t len, unsigned at)
{
	struct secret	*s;
	char		*copy;
	char		 why[256], where[256];
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

/*
 * The length of the PEM block at p ("-----BEGIN ..." to the end of its
 * "-----END ...-----" line), which white space does not split: one key
 * whatever its lines; 0 if p holds none.
 */
static size_t
pem_span(const char *p)
{
	const char	*e, *close;

	if (strncmp(p, "-----BEGIN ", 11) != 0 ||
	    (e = strstr(p, "-----END ")) == NULL ||
	    (close = strstr(e + 9, "-----")) == NULL)
		return 0;
	return (size_t)(close + 5 - p);
}

/* Secrets from a list separated by white space (a CR or LF too), a
 * PEM block one of them. */
static int
secrets_from_text(struct conf_loader *l, struct conf_endpoint *ep, const char *var,
    const char *text)
{
	static const char	 blank[] = " \t\r\n";
	size_t			 len;
	unsigned		 at = 0;

	for (;;) {
		text += strspn(text, blank);
		if (*text == '\0')
			return 0;
		if ((len = pem_span(text)) == 0)
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
secrets_from_file(struct conf_loader *l, struct conf_endpoint *ep, const char *var,
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
		if ((len = pem_span(p)) > 0) {
			/* A PEM block: one secret, at its first line. */
			rc = secret_add(l, ep, var, p, len, at);
			for (i = 0; i < len; i++)
				at += p[i] == '\n';
			eol = p + len + strcspn(p + len, "\n");
			eol += *eol == '\n';
			continue;
		}
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

/*
 * The setters: each validates one value and stores it at dst, the
 * row's place in struct conf or struct conf_endpoint.  v is the value,
 * or the row's default; NULL only for rows marked CONF_UNSET_TOO.
 */

static int
set_int(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	if (parse_int(v, cv->min, cv->max, dst) == -1)
		return fail(l, var, "want %s from %lld to %lld (got \"%.64s\")",
		    cv->flags & CONF_SECONDS ? "whole seconds" :
		    "a whole number", cv->min, cv->max, v);
	return 0;
}

/* Seconds of tolerance; unset: the scheme's default, else 300. */
static int
set_tolerance(struct conf_loader *l, const struct conf_var *cv,
    const char *var, const char *v, void *dst)
{
	if (v == NULL) {
		*(long long *)dst = l->ep != NULL && l->ep->scheme != NULL ?
		    scheme_tolerance(l->ep->scheme) : 300;
		return 0;
	}
	return set_int(l, cv, var, v, dst);
}

/* A number of attempts, or "never" (0); unset: the scheme's default. */
static int
set_attempts(struct conf_loader *l, const struct conf_var *cv,
    const char *var, const char *v, void *dst)
{
	if (v == NULL) {
		*(long long *)dst = l->ep != NULL && l->ep->scheme != NULL ?
		    l->ep->scheme->park_after : 3;
		return 0;
	}
	if (strcmp(v, "never") == 0) {
		*(long long *)dst = 0;
		return 0;
	}
	if (parse_int(v, cv->min, cv->max, dst) == -1)
		return fail(l, var, "want a number of attempts from %lld to "
		    "%lld, or never (got \"%.64s\")", cv->min, cv->max, v);
	return 0;
}

static int
set_duration(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	(void)cv;
	if (conf_duration(v, dst) == -1)
		return fail(l, var, "want a duration such as 72h, 30d or "
		    "forever (got \"%.64s\")", v);
	return 0;
}

static int
set_path(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	(void)cv;
	if (*v != '/')
		return fail(l, var, "must be an absolute path (got "
		    "\"%.200s\")", v);
	if ((*(char **)dst = strdup(v)) == NULL)
		return fail(l, var, "out of memory");
	return 0;
}

/* A list of host[:port], separated by spaces (ONCEHOOK_TEST_CERT_HOSTS). */
static int
set_hosts(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst);

/* Letters, digits and those of extra, at least one, at most max. */
static int
word_ok(const char *p, size_t len, const char *extra, size_t max)
{
	size_t	 i;

	if (len == 0 || len > max)
		return 0;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)p[i]) && strchr(extra, p[i]) ==
		    NULL)
			return 0;
	return 1;
}

static int
set_hosts(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	const char	*p;
	size_t		 len;

	(void)cv;
	for (p = v; *p != '\0'; p += len) {
		p += strspn(p, " ");
		if ((len = strcspn(p, " ")) > 0 && !word_ok(p, len, ".-:", 255))
			return fail(l, var, "not a list of host[:port] "
			    "separated by spaces (got \"%.200s\")", v);
	}
	if ((*(char **)dst = strdup(v)) == NULL)
		return fail(l, var, "out of memory");
	return 0;
}

static void
mysql_free(struct conf_mysql *m)
{
	if (m == NULL)
		return;
	free(m->user);
	free(m->host);
	free(m->database);
	free(m->socket);
	free(m);
}

/*
 * mysql://user@host[:port]/database[?socket=/path]: every part checked
 * here, so that what reaches the client library is what was meant.  A
 * password in the URL is refused (it would be in the environment of
 * every process and in ps): DB_PASSWORD_FILE holds it.
 */
static int
set_mysql(struct conf_loader *l, const char *var, const char *v,
    struct conf_mysql **out)
{
	struct conf_mysql	*m;
	const char		*p = v + 8, *at = NULL, *slash, *q, *colon, *e;
	const char		*why;
	char			*end;
	unsigned long		 port;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		return fail(l, var, "out of memory");
	/* The host starts after the last @ before the path: a password
	 * written in the URL (which may hold an @) is then seen as one. */
	if ((slash = strchr(p, '/')) != NULL)
		for (q = p; q < slash; q++)
			if (*q == '@')
				at = q;
	why = "write mysql://user@host[:port]/database or "
	    "mysql://user@localhost/database?socket=/path";
	if (at == NULL || slash == NULL)
		goto bad;
	why = "no password in the URL: put it in the file named by "
	    "ONCEHOOK_DB_PASSWORD_FILE";
	if (memchr(p, ':', (size_t)(at - p)) != NULL)
		goto bad;
	why = "user: letters, digits, _ . - $ (1 to 80)";
	if (!word_ok(p, (size_t)(at - p), "_.-$", 80))
		goto bad;
	colon = memchr(at + 1, ':', (size_t)(slash - at - 1));
	e = colon != NULL ? colon : slash;
	why = "host: a name or an IPv4 address";
	if (!word_ok(at + 1, (size_t)(e - at - 1), ".-", 253))
		goto bad;
	why = "out of memory";
	if ((m->user = strndup(p, (size_t)(at - p))) == NULL ||
	    (m->host = strndup(at + 1, (size_t)(e - at - 1))) == NULL)
		goto bad;
	if (colon != NULL) {
		errno = 0;
		port = strtoul(colon + 1, &end, 10);
		why = "port: 1 to 65535";
		if (end != slash || colon + 1 == slash || errno != 0 ||
		    port == 0 || port > 65535)
			goto bad;
		m->port = (unsigned int)port;
	}
	q = strchr(slash + 1, '?');
	e = q != NULL ? q : slash + strlen(slash);
	why = "database: letters, digits, _ and $ (1 to 64)";
	if (!word_ok(slash + 1, (size_t)(e - slash - 1), "_$", 64))
		goto bad;
	why = "out of memory";
	if ((m->database = strndup(slash + 1, (size_t)(e - slash - 1))) ==
	    NULL)
		goto bad;
	if (q != NULL) {
		why = "the one option is ?socket=/path";
		if (strncmp(q, "?socket=/", 9) != 0 || strchr(q + 8, '?') !=
		    NULL || strchr(q + 8, '&') != NULL)
			goto bad;
		why = "a socket is reached through localhost: "
		    "mysql://user@localhost/...?socket=...";
		if (strcmp(m->host, "localhost") != 0)
			goto bad;
		why = "out of memory";
		if ((m->socket = strdup(q + 8)) == NULL)
			goto bad;
	}
	*out = m;
	return 0;
bad:
	mysql_free(m);
	return fail(l, var, "%s", why);
}

/* ONCEHOOK_DB: the SQLite file's absolute path, or a mysql:// URL. */
static int
set_db(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	if (strncmp(v, "mysql://", 8) != 0) {
		if (strstr(v, "://") != NULL)
			return fail(l, var, "an absolute path (SQLite) or "
			    "mysql://user@host/database");
		return set_path(l, cv, var, v, dst);
	}
	if (set_mysql(l, var, v, &l->cf->my) == -1)
		return -1;
	if ((*(char **)dst = strdup(v)) == NULL)
		return fail(l, var, "out of memory");
	return 0;
}

/* An endpoint's ACTIONS: a path, or the installed orders.sql for the
 * store's engine. */
static int
set_actions(struct conf_loader *l, const struct conf_var *cv,
    const char *var, const char *v, void *dst)
{
	if (v == NULL)
		v = l->cf->my != NULL ? ONCEHOOK_SQLDIR
		    "/actions/mysql/orders.sql" : ONCEHOOK_SQLDIR
		    "/actions/orders.sql";
	return set_path(l, cv, var, v, dst);
}

/* ONCEHOOK_DB_PREFIX: letters, digits and _, at most 32 (may be empty). */
static int
set_prefix(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	(void)cv;
	if (*v != '\0' && !word_ok(v, strlen(v), "_", 32))
		return fail(l, var, "letters, digits and _, at most 32");
	if ((*(char **)dst = strdup(v)) == NULL)
		return fail(l, var, "out of memory");
	return 0;
}

static int
set_token(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	const char	*c;

	if ((long long)strlen(v) < cv->min)
		return fail(l, var, "too short: use at least %lld characters",
		    cv->min);
	if (cv->max > 0 && (long long)strlen(v) > cv->max)
		return fail(l, var, "too long: use at most %lld characters",
		    cv->max);
	for (c = v; *c != '\0'; c++)
		if (*c <= ' ' || *c > '~')
			return fail(l, var, "printable ASCII without spaces "
			    "only (it is sent in an Authorization header)");
	/* An example's placeholder is public: the endpoint stays off. */
	if (strstr(v, "REPLACE_WITH") != NULL) {
		l->cf->status_placeholder = 1;
		return 0;
	}
	if ((*(char **)dst = strdup(v)) == NULL)
		return fail(l, var, "out of memory");
	return 0;
}

/*
 * ONCEHOOK_OUTBOX_SECRET: a Standard Webhooks signing secret, whsec_
 * and base64 (padded or not), 24 to 64 bytes of key once decoded, as the
 * Standard Webhooks libraries make and read them.
 */
static int
set_outbox_secret(struct conf_loader *l, const struct conf_var *cv,
    const char *var, const char *v, void *dst)
{
	struct secret	*sec = dst;
	unsigned char	 key[96];
	long		 n;

	(void)cv;
	if (strncmp(v, "whsec_", 6) == 0)
		v += 6;
	n = crypto_unbase64(v, strlen(v), key, sizeof(key));
	if (n < 24 || n > 64) {
		crypto_wipe(key, sizeof(key));
		return fail(l, var, "want whsec_ and the base64 of 24 to 64 "
		    "random bytes (make one with: echo whsec_$(openssl rand "
		    "-base64 32))");
	}
	if ((sec->p = malloc((size_t)n)) == NULL) {
		crypto_wipe(key, sizeof(key));
		return fail(l, var, "out of memory");
	}
	memcpy(sec->p, key, (size_t)n);
	sec->sz = (size_t)n;
	crypto_wipe(key, sizeof(key));
	return 0;
}

/* One of cv->choices; its index lands at dst (an int). */
static int
set_choice(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	char	 want[128];
	size_t	 i, n = 0;

	for (i = 0; cv->choices[i] != NULL; i++)
		if (strcmp(v, cv->choices[i]) == 0) {
			*(int *)dst = (int)i;
			return 0;
		}
	want[0] = '\0';
	for (i = 0; cv->choices[i] != NULL && n < sizeof(want); i++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%s%s",
		    i == 0 ? "" : cv->choices[i + 1] == NULL ? " or " : ", ",
		    cv->choices[i]);
	return fail(l, var, "want %s (got \"%.64s\")", want, v);
}

/*
 * 1 if the connection to m never leaves the machine: localhost (the
 * client library takes it to mean the server's unix socket, which
 * carries no TLS) or an IPv4 loopback address (127.0.0.0/8).
 */
static int
db_local(const struct conf_mysql *m, int *sock)
{
	struct in_addr	 a;

	*sock = m->socket != NULL || strcmp(m->host, "localhost") == 0;
	return *sock || (inet_pton(AF_INET, m->host, &a) == 1 &&
	    (ntohl(a.s_addr) >> 24) == 127);
}

/*
 * ONCEHOOK_DB_TLS: one of the row's words; unset, off for the socket
 * and the loopback, verify-identity for any other host.  TLS is asked
 * for on the socket by no one who means it: refused there, not ignored.
 */
static int
set_db_tls(struct conf_loader *l, const struct conf_var *cv,
    const char *var, const char *v, void *dst)
{
	const struct conf_mysql	*m = l->cf->my;
	int			 sock, local;

	*(int *)dst = CONF_TLS_OFF;
	if (v != NULL && set_choice(l, cv, var, v, dst) == -1)
		return -1;
	if (m == NULL)			/* SQLite: no connection */
		return 0;
	local = db_local(m, &sock);
	if (v == NULL)
		*(int *)dst = local ? CONF_TLS_OFF : CONF_TLS_VERIFY_IDENTITY;
	else if (sock && *(int *)dst != CONF_TLS_OFF)
		return fail(l, var, "%s: mysql://...@localhost connects "
		    "through the server's unix socket, which carries no TLS: "
		    "leave ONCEHOOK_DB_TLS unset (or off), or connect to "
		    "127.0.0.1 (TCP)", v);
	return 0;
}

/*
 * ONCEHOOK_DB_TLS_KEY, the last of the TLS rows: its path, then what
 * the four say together.  A file that would be ignored is refused: its
 * writer expects it to be used.
 */
static int
set_db_tls_key(struct conf_loader *l, const struct conf_var *cv,
    const char *var, const char *v, void *dst)
{
	struct conf	*cf = l->cf;
	int		 sock;

	if (v != NULL && set_path(l, cv, var, v, dst) == -1)
		return -1;
	if (cf->my == NULL)		/* SQLite: no connection */
		return 0;
	if ((cf->db_tls_cert == NULL) != (cf->db_tls_key == NULL))
		return fail(l, cf->db_tls_key == NULL ?
		    "ONCEHOOK_DB_TLS_CERT" : "ONCEHOOK_DB_TLS_KEY", "the "
		    "client certificate and its key go together: set both "
		    "ONCEHOOK_DB_TLS_CERT and ONCEHOOK_DB_TLS_KEY, or neither");
	var = cf->db_tls_ca != NULL ? "ONCEHOOK_DB_TLS_CA" :
	    "ONCEHOOK_DB_TLS_CERT";
	if (cf->db_tls == CONF_TLS_OFF && (cf->db_tls_ca != NULL ||
	    cf->db_tls_cert != NULL)) {
		if (db_local(cf->my, &sock) && sock)
			return fail(l, var, "set, but the server's unix "
			    "socket (localhost) carries no TLS: unset it, or "
			    "connect to 127.0.0.1 (TCP)");
		return fail(l, var, "set while ONCEHOOK_DB_TLS is off (its "
		    "default for 127.x.x.x): set ONCEHOOK_DB_TLS=verify-"
		    "identity (or verify-ca, required), or unset it");
	}
	if (cf->db_tls == CONF_TLS_REQUIRED && cf->db_tls_ca != NULL)
		return fail(l, "ONCEHOOK_DB_TLS_CA", "set with "
		    "ONCEHOOK_DB_TLS=required, which checks no certificate: "
		    "use verify-ca or verify-identity to check the server's "
		    "against it");
	if (cf->db_tls == CONF_TLS_VERIFY_CA && cf->db_tls_ca == NULL)
		return fail(l, "ONCEHOOK_DB_TLS", "verify-ca needs "
		    "ONCEHOOK_DB_TLS_CA, the file of the CA that signed the "
		    "server's certificate");
	return 0;
}

static int
set_level(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	int	 lv;

	(void)cv;
	if ((lv = log_level_parse(v)) < 0)
		return fail(l, var, "want error, warn, info or debug (got "
		    "\"%.64s\")", v);
	*(int *)dst = lv;
	return 0;
}

static int
set_scheme(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	(void)cv;
	if ((*(const struct scheme **)dst = scheme_find(v)) == NULL)
		return fail(l, var, "unknown scheme \"%.64s\" (one of: %s)", v,
		    scheme_names());
	return 0;
}

static int
set_secret(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	(void)cv;
	(void)dst;
	l->had_secret = 1;
	return secrets_from_text(l, l->ep, var, v);
}

/* After SECRET: the file instead, and one of the two is required. */
static int
set_secret_file(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	struct conf_endpoint	*ep = l->ep;

	(void)cv;
	if (v != NULL && l->had_secret)
		return fail(l, var, "set either %sSECRET or %sSECRET_FILE, "
		    "not both", ep->prefix, ep->prefix);
	if (v != NULL) {
		if ((*(char **)dst = strdup(v)) == NULL)
			return fail(l, var, "out of memory");
		if (secrets_from_file(l, ep, var, v) == -1)
			return -1;
	}
	/* Only placeholders: the endpoint loads but refuses everything. */
	if (ep->nsecrets == 0 && !ep->placeholder)
		return fail(l, var, "required: %sSECRET or %sSECRET_FILE",
		    ep->prefix, ep->prefix);
	return 0;
}

/* The key sources (the scheme's if unset), the type's, the guard. */
static int
set_key(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	struct conf_endpoint	*ep = l->ep;
	struct srclist		*key = dst;
	char			 why[160];
	size_t			 i;

	(void)cv;
	if (srclist_parse(key, v != NULL ? v : ep->scheme->key, 1, why,
	    sizeof(why)) == -1)
		return fail(l, var, "%s", why);
	ep->key_scope = v == NULL ? scheme_key_scope(ep->scheme) : NULL;
	ep->key_default = v == NULL;
	if (srclist_parse(&ep->type, ep->scheme->type, 0, why,
	    sizeof(why)) == -1)
		return fail(l, var, "scheme default: %s", why);
	for (i = 0; i + 1 < key->n; i++)
		if (key->v[i].kind == SRC_HASH)
			return fail(l, var, "hash must be the last source");
	/*
	 * Without a signed timestamp a captured request can be replayed at
	 * will; a key from a header the signature does not cover can be
	 * changed at will; a signature over no event data (mailgun) is
	 * made again for each attempt at one event.  Each way the payload
	 * must stand for the event too.
	 */
	ep->replay_guard = !ep->scheme->timestamped ||
	    scheme_unsigned_data(ep->scheme);
	for (i = 0; i < key->n; i++) {
		key->v[i].covered = key->v[i].kind != SRC_HEADER ?
		    scheme_signs_body(ep->scheme) :
		    ep->scheme->signed_header != NULL &&
		    strcasecmp(key->v[i].arg, ep->scheme->signed_header) == 0;
		if (key->v[i].kind == SRC_HEADER && !key->v[i].covered)
			ep->replay_guard = 1;
	}
	/*
	 * A signature over no event data (mailgun) binds its token only:
	 * keyed by anything else first, one captured block would carry
	 * any number of events within the tolerance.
	 */
	if (v != NULL && scheme_unsigned_data(ep->scheme) &&
	    (key->n == 0 || key->v[0].kind != SRC_JSON ||
	    strcmp(key->v[0].arg, "/signature/token") != 0))
		return fail(l, var, "%s signs no event data, only its token: "
		    "the key must start with json:/signature/token",
		    ep->scheme->name);
	return 0;
}

/*
 * An endpoint's URL: the public URL a URL-signing provider posts to and
 * signs, as entered in its console.  Required by those schemes (never
 * guessed from Host or X-Forwarded-*), refused by the others.
 */
static int
set_url(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *v, void *dst)
{
	const struct scheme	*sc = l->ep->scheme;
	const char		*c, *host;

	(void)cv;
	if (v == NULL) {
		if (scheme_signs_url(sc))
			return fail(l, var, "required by the %s scheme: the "
			    "public URL the provider posts to, exactly as "
			    "entered in its console (it is signed)", sc->name);
		return 0;
	}
	if (!scheme_signs_url(sc))
		return fail(l, var, "the %s scheme signs no URL: unset it",
		    sc != NULL ? sc->name : "endpoint's");
	host = strncmp(v, "https://", 8) == 0 ? v + 8 :
	    strncmp(v, "http://", 7) == 0 ? v + 7 : NULL;
	if (host == NULL || *host == '\0' || *host == '/' ||
	    strlen(v) > 2048)
		return fail(l, var, "want the full http:// or https:// URL, "
		    "at most 2048 characters (got \"%.64s\")", v);
	for (c = v; *c != '\0'; c++)
		if (*c <= ' ' || *c == 0x7f)
			return fail(l, var, "a URL has no spaces or control "
			    "characters: write it as the provider's console "
			    "shows it, percent-encoded");
	if ((*(char **)dst = strdup(v)) == NULL)
		return fail(l, var, "out of memory");
	return 0;
}

static int	load_scope(struct conf_loader *, enum conf_scope, const char *prefix,
		    void *base);

/*
 * A signed request is taken again until its timestamp leaves the
 * tolerance: up to twice the tolerance after it first came (the
 * sender's clock ahead).  Its key must be kept that long.
 */
static int
check_horizon(struct conf_loader *l, const struct conf_endpoint *ep)
{
	char	 var[CONF_NAME_MAX + 64];

	if (ep->scheme == NULL || !ep->scheme->timestamped ||
	    ep->retention < 0 || ep->retention >= 2 * ep->tolerance)
		return 0;
	snprintf(var, sizeof(var), "%sRETENTION", ep->prefix);
	return fail(l, var, "%llds is less than %llds, twice the tolerance "
	    "(%llds): a signed request sent again after its key is pruned "
	    "would be taken again", ep->retention, 2 * ep->tolerance,
	    ep->tolerance);
}

/* The endpoints of ONCEHOOK_ENDPOINTS, or one unnamed endpoint. */
static int
set_endpoints(struct conf_loader *l, const struct conf_var *cv, const char *var,
    const char *list, void *dst)
{
	struct conf		*cf = l->cf;
	struct conf_endpoint	*ep;
	const char		*p;
	size_t			 len, rawlen, i, j, n = 1;

	(void)cv;
	(void)dst;
	cf->named = list != NULL;
	for (p = list; p != NULL && *p != '\0'; p++)
		n += *p == ',';
	if ((cf->endpoints = calloc(n, sizeof(*ep))) == NULL)
		return fail(l, var, "out of memory");
	if (list == NULL) {
		ep = &cf->endpoints[cf->nendpoints++];
		/* Stored as "default", so naming it so later keeps its keys. */
		snprintf(ep->name, sizeof(ep->name), "default");
		snprintf(ep->prefix, sizeof(ep->prefix), "ONCEHOOK_");
		l->ep = ep;
		if (load_scope(l, CONF_ENDPOINT, ep->prefix, ep) == -1)
			return -1;
		return check_horizon(l, ep);
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
		if (len == 6 && strncasecmp(p, "outbox", 6) == 0)
			return fail(l, var, "an endpoint may not be named "
			    "outbox (its variables would be the outbox's, "
			    "ONCEHOOK_OUTBOX_*)");
		if (cf->status_token != NULL && len == 6 &&
		    strncasecmp(p, "status", 6) == 0)
			return fail(l, var, "an endpoint may not be named "
			    "status while ONCEHOOK_STATUS_TOKEN is set (the "
			    "status endpoint answers that path)");
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
		l->ep = ep;
		l->had_secret = 0;
		if (load_scope(l, CONF_ENDPOINT, ep->prefix, ep) == -1 ||
		    check_horizon(l, ep) == -1)
			return -1;
		p += rawlen;
		if (*p == '\0')
			break;
	}
	return 0;
}

/*
 * The showers: each writes the value at src as `check` lists it; a
 * secret is counted, never shown.
 */

static void
show_int(const struct conf_var *cv, const void *src, char *buf, size_t sz)
{
	(void)cv;
	snprintf(buf, sz, "%lld", *(const long long *)src);
}

static void
show_attempts(const struct conf_var *cv, const void *src, char *buf,
    size_t sz)
{
	(void)cv;
	if (*(const long long *)src == 0)
		snprintf(buf, sz, "never");
	else
		snprintf(buf, sz, "%lld", *(const long long *)src);
}

static void
show_duration(const struct conf_var *cv, const void *src, char *buf, size_t sz)
{
	(void)cv;
	long long	 v = *(const long long *)src;

	if (v < 0)
		snprintf(buf, sz, "forever");
	else if (v % 86400 == 0)
		snprintf(buf, sz, "%lldd", v / 86400);
	else if (v % 3600 == 0)
		snprintf(buf, sz, "%lldh", v / 3600);
	else
		snprintf(buf, sz, "%llds", v);
}

static void
show_text(const struct conf_var *cv, const void *src, char *buf, size_t sz)
{
	(void)cv;
	const char	*v = *(char *const *)src;

	snprintf(buf, sz, "%s", v != NULL ? v : "-");
}

static void
show_set(const struct conf_var *cv, const void *src, char *buf, size_t sz)
{
	(void)cv;
	snprintf(buf, sz, "%s", *(char *const *)src != NULL ? "set" : "-");
}

static void
show_choice(const struct conf_var *cv, const void *src, char *buf, size_t sz)
{
	int	 i = *(const int *)src, n;

	for (n = 0; cv->choices[n] != NULL; n++)
		;
	snprintf(buf, sz, "%s", i >= 0 && i < n ? cv->choices[i] : "?");
}

static void
show_level(const struct conf_var *cv, const void *src, char *buf, size_t sz)
{
	(void)cv;
	static const char *const names[] = { "error", "warn", "info",
	    "debug" };
	int	 lv = *(const int *)src;

	snprintf(buf, sz, "%s", lv >= 0 && lv < 4 ? names[lv] : "?");
}

static void
show_scheme(const struct conf_var *cv, const void *src, char *buf, size_t sz)
{
	(void)cv;
	const struct scheme	*sc = *(const struct scheme *const *)src;

	snprintf(buf, sz, "%s", sc != NULL ? sc->name : "-");
}

/* src is ep->secrets; nsecrets follows it in struct conf_endpoint. */
static void
show_secrets(const struct conf_var *cv, const void *src, char *buf, size_t sz)
{
	(void)cv;
	const struct conf_endpoint *ep = (const struct conf_endpoint *)
	    ((const char *)src - offsetof(struct conf_endpoint, secrets));

	snprintf(buf, sz, "%zu secret%s%s", ep->nsecrets,
	    ep->nsecrets == 1 ? "" : "s", ep->placeholder ? " (and the "
	    "example's placeholder, ignored)" : "");
}

static void
show_sources(const struct conf_var *cv, const void *src, char *buf, size_t sz)
{
	(void)cv;
	const struct srclist	*sl = src;
	size_t			 i, n = 0;
	int			 k;

	buf[0] = '\0';
	for (i = 0; i < sl->n && n < sz; i++) {
		k = snprintf(buf + n, sz - n, "%s%s%s", i ? " " : "",
		    sl->v[i].kind == SRC_HEADER ? "header:" :
		    sl->v[i].kind == SRC_JSON ? "json:" : "hash",
		    sl->v[i].arg != NULL ? sl->v[i].arg : "");
		if (k < 0)
			break;
		n += (size_t)k;
	}
}

/* src is an endpoint's key: its sources, and the scope put before them
 * when the request carries its header (GitHub's hook id). */
static void
show_key(const struct conf_var *cv, const void *src, char *buf, size_t sz)
{
	const struct conf_endpoint *ep = (const struct conf_endpoint *)
	    ((const char *)src - offsetof(struct conf_endpoint, key));
	size_t	 n;

	const struct sig_batch *b;
	const char *const *more;

	show_sources(cv, src, buf, sz);
	if (ep->key_scope != NULL && (n = strlen(buf)) < sz)
		snprintf(buf + n, sz - n, ", after header:%s and ':' when "
		    "sent", ep->key_scope);
	/* A batch's items: the scheme's pointers put after, each after
	 * ':' (Adyen: pspReference:eventCode:success). */
	if (ep->key_default && ep->scheme != NULL &&
	    (b = scheme_batch(ep->scheme)) != NULL && b->key_more != NULL)
		for (more = b->key_more; *more != NULL &&
		    (n = strlen(buf)) < sz; more++)
			snprintf(buf + n, sz - n, " ':' json:%s", *more);
}

/* src is cf->endpoints. */
static void
show_endpoints(const struct conf_var *cv, const void *src, char *buf, size_t sz)
{
	(void)cv;
	const struct conf	*cf = (const struct conf *)
	    ((const char *)src - offsetof(struct conf, endpoints));
	size_t			 i, n = 0;
	int			 k;

	if (!cf->named) {
		snprintf(buf, sz, "- (one unnamed endpoint)");
		return;
	}
	buf[0] = '\0';
	for (i = 0; i < cf->nendpoints && n < sz; i++) {
		k = snprintf(buf + n, sz - n, "%s%s", i ? "," : "",
		    cf->endpoints[i].name);
		if (k < 0)
			break;
		n += (size_t)k;
	}
}

/* The kinds of value: how each is checked and stored, and shown. */
static const struct conf_kind
	kind_int = { set_int, show_int },
	kind_duration = { set_duration, show_duration },
	kind_attempts = { set_attempts, show_attempts },
	kind_tolerance = { set_tolerance, show_int },
	kind_path = { set_path, show_text },
	kind_db = { set_db, show_text },
	kind_prefix = { set_prefix, show_text },
	kind_db_tls = { set_db_tls, show_choice },
	kind_db_tls_key = { set_db_tls_key, show_text },
	kind_actions = { set_actions, show_text },
	kind_token = { set_token, show_set },
	kind_outbox_secret = { set_outbox_secret, show_set },
	kind_level = { set_level, show_level },
	kind_scheme = { set_scheme, show_scheme },
	kind_secret = { set_secret, show_secrets },
	kind_secret_file = { set_secret_file, show_text },
	kind_key = { set_key, show_key },
	kind_url = { set_url, show_text },
	kind_hosts = { set_hosts, show_text },
	kind_endpoints = { set_endpoints, show_endpoints };

const struct conf_kind	conf_kind_choice = { set_choice, show_choice };

static const char *const synchronous[] = { "normal", "full", NULL };
static const char *const onoff[] = { "off", "on", NULL };
static const char *const modes[] = { "sync", "deferred", NULL };
static const char *const db_tls[] = { "off", "required", "verify-ca",
    "verify-identity", NULL };	/* enum conf_tls */

#define G(f)	offsetof(struct conf, f)
#define E(f)	offsetof(struct conf_endpoint, f)

/*
 * Every variable oncehook reads, one row each, in the order they are
 * read: within an endpoint SCHEME comes first (the secrets and the key
 * go through it).  Parsing, the typo warnings, `check`'s listing and
 * the documentation's tables (tests/docs.sh) follow this table; nothing
 * reads a variable it does not list.
 */
const struct conf_var conf_vars[] = {
	{ "MAX_BODY", CONF_GLOBAL, 0, 1, 64LL << 20, "1048576", "1048576",
	    G(maxbody), &kind_int,
	    "largest body, bytes (1 to 64 MiB)", NULL },
	{ "SYNCHRONOUS", CONF_GLOBAL, 0, 0, 0, "full", "`full`",
	    G(synchronous_full), &conf_kind_choice,
	    "`full` (an acknowledged event survives power loss) or "
	    "`normal`", synchronous },
	{ "GROUP_COMMIT", CONF_GLOBAL, 0, 0, 0, "on", "`on`",
	    G(group_commit), &conf_kind_choice,
	    "`on`: `serve`'s workers, and the FastCGI processes a web "
	    "server started (under `ONCEHOOK_SYNCHRONOUS=normal` only when "
	    "another is writing), hand their new events to one writer "
	    "process, which commits several at once; a CGI request hands "
	    "its event to a writer while requests overlap, and then does "
	    "not open the database for it (see docs/reliability.md); "
	    "`off`: each process commits its own",
	    onoff },
	{ "FAST_PATHS", CONF_GLOBAL, 0, 0, 0, "on", "`on`",
	    G(fast_paths), &conf_kind_choice,
	    "`on`: a retry of stored bytes is answered before its body is "
	    "parsed, and a run of new events goes to the writer without a "
	    "lookup; `off`: every request takes the plain path, and no "
	    "writer (`GROUP_COMMIT`) runs: the answers are the same, "
	    "slower (to rule the fast paths out)",
	    onoff },
	{ "BUSY_TIMEOUT_MS", CONF_GLOBAL, 0, 0, 600000, "5000", "5000",
	    G(busy_ms), &kind_int,
	    "wait for the write lock before answering 503", NULL },
	{ "LOG", CONF_GLOBAL, 0, 0, 0, "info", "`info`",
	    G(loglevel), &kind_level,
	    "`error`, `warn`, `info`, `debug`", NULL },
	{ "DB", CONF_GLOBAL, CONF_REQUIRED | CONF_STORE, 0, 0, NULL, "required",
	    G(db), &kind_db,
	    "absolute path of the SQLite database (refused inside "
	    "`DOCUMENT_ROOT`), or `mysql://user@host[:port]/database` "
	    "(`?socket=/path` with `localhost`, see docs/stores.md)",
	    NULL },
	{ "DB_PASSWORD_FILE", CONF_GLOBAL, CONF_STORE, 0, 0, NULL, "— (none)",
	    G(db_password_file), &kind_path,
	    "MariaDB/MySQL: absolute path of a file holding the password "
	    "(its first line), read at each connection", NULL },
	{ "DB_PREFIX", CONF_GLOBAL, CONF_EMPTY, 0, 32, "oncehook_",
	    "`oncehook_`",
	    G(db_prefix), &kind_prefix,
	    "MariaDB/MySQL: the prefix of oncehook's tables", NULL },
	{ "DB_TLS", CONF_GLOBAL, CONF_STORE | CONF_UNSET_TOO, 0, 0, NULL,
	    "`verify-identity`; `off` for `localhost` (the socket) and "
	    "`127.x.x.x`", G(db_tls), &kind_db_tls,
	    "MariaDB/MySQL over TCP: `off`, `required` (encrypted, the "
	    "server's certificate not checked), `verify-ca` (signed by "
	    "`DB_TLS_CA`), `verify-identity` (and issued to the host "
	    "connected to; see docs/stores.md)", db_tls },
	{ "DB_TLS_CA", CONF_GLOBAL, CONF_STORE, 0, 0, NULL,
	    "— (the system's CAs)", G(db_tls_ca), &kind_path,
	    "MariaDB/MySQL: absolute path of the CA certificate file (PEM) "
	    "the server's certificate is checked against", NULL },
	{ "DB_TLS_CERT", CONF_GLOBAL, CONF_STORE, 0, 0, NULL, "— (none)",
	    G(db_tls_cert), &kind_path,
	    "MariaDB/MySQL: absolute path of oncehook's client certificate "
	    "(PEM), with `DB_TLS_KEY`", NULL },
	{ "DB_TLS_KEY", CONF_GLOBAL, CONF_STORE | CONF_UNSET_TOO, 0, 0, NULL,
	    "— (none)", G(db_tls_key), &kind_db_tls_key,
	    "MariaDB/MySQL: absolute path of the client certificate's "
	    "private key (PEM, unencrypted), with `DB_TLS_CERT`", NULL },
	{ "STATUS_TOKEN", CONF_GLOBAL, CONF_HIDDEN | CONF_SIGNING, 16, 256,
	    NULL, "off",
	    G(status_token), &kind_token,
	    "turns the status endpoint on (`GET .../status`, see "
	    "docs/operations.md): its token, 16 to 256 printable characters",
	    NULL },
	{ "COUNTERS", CONF_GLOBAL, 0, 0, 0, "on", "`on`",
	    G(counters), &conf_kind_choice,
	    "`on`: count every request in the counters file "
	    "(see docs/operations.md); `off`: count nothing", onoff },
	{ "COUNTERS_FILE", CONF_GLOBAL, 0, 0, 0, NULL,
	    "`ONCEHOOK_DB`-counters (SQLite); none (MariaDB/MySQL)",
	    G(counters_file), &kind_path,
	    "absolute path of the counters file, one per web host (a "
	    "MariaDB/MySQL store counts nothing without it)", NULL },
	{ "CERT_CACHE", CONF_GLOBAL, 0, 0, 0, NULL,
	    "`ONCEHOOK_DB`-certs (SQLite); none (MariaDB/MySQL)",
	    G(certs.cache), &kind_path,
	    "absolute path of the directory PayPal's certificates are kept "
	    "in, mode 0700 (a MariaDB/MySQL store with a `paypal` endpoint "
	    "needs it; see docs/providers.md)", NULL },
	{ "TEST_CERT_HOSTS", CONF_GLOBAL, 0, 0, 0, NULL, "— (PayPal's)",
	    G(certs.hosts), &kind_hosts,
	    "for tests only: the `host:port` list (separated by spaces) a "
	    "`paypal` endpoint fetches certificates from instead of "
	    "PayPal's hosts", NULL },
	{ "TEST_CERT_CA", CONF_GLOBAL, 0, 0, 0, NULL, "— (the system's CAs)",
	    G(certs.ca), &kind_path,
	    "for tests only: absolute path of the CA file that fetched "
	    "certificates and their host are checked against instead of "
	    "the system's", NULL },
	{ "OUTBOX_SECRET", CONF_GLOBAL, CONF_HIDDEN | CONF_OUTBOX, 0, 0, NULL,
	    "— (URL targets need it)", G(outbox_secret), &kind_outbox_secret,
	    "the outbox's Standard Webhooks signing secret (`whsec_` and "
	    "the base64 of 24 to 64 bytes; see docs/operations.md)", NULL },
	{ "OUTBOX_TIMEOUT", CONF_GLOBAL, CONF_SECONDS | CONF_OUTBOX, 1, 3600,
	    "30", "30",
	    G(outbox_timeout), &kind_int,
	    "seconds one delivery of an outbox row may take", NULL },
	{ "OUTBOX_BACKOFF", CONF_GLOBAL, CONF_SECONDS | CONF_OUTBOX, 1, 21600,
	    "30", "30",
	    G(outbox_backoff), &kind_int,
	    "seconds before an outbox row's first retry (doubling, at most "
	    "6 h, with jitter)", NULL },
	{ "OUTBOX_MAX_ATTEMPTS", CONF_GLOBAL, CONF_OUTBOX, 1, 1000, "16", "16",
	    G(outbox_max_attempts), &kind_int,
	    "attempts at an outbox row before it is `dead`", NULL },
	{ "ENDPOINTS", CONF_GLOBAL, CONF_UNSET_TOO, 0, 0, NULL,
	    "one unnamed endpoint", G(endpoints), &kind_endpoints,
	    "comma list of endpoint names, e.g. `stripe,shop`", NULL },

	{ "SCHEME", CONF_ENDPOINT, CONF_REQUIRED, 0, 0, NULL, "required",
	    E(scheme), &kind_scheme,
	    "`stripe`, `github`, `standard`, `svix`, `shopify`, `slack`, "
	    "`paddle`, `gitlab`, `razorpay`, `woocommerce`, `mollie`, "
	    "`linear`, `webflow`, `vercel`, `cashfree`, `zoom`, "
	    "`hmac-sha256`, `basic`, `mailgun`, `twilio`, `square`, "
	    "`adyen`, `discord`, `telnyx`, `sendgrid`, `paypal`", NULL },
	{ "SECRET", CONF_ENDPOINT, CONF_HIDDEN | CONF_SIGNING, 0, 0, NULL,
	    "required unless `_SECRET_FILE`", E(secrets), &kind_secret,
	    "one or more secrets, separated by white space (space, tab, CR, "
	    "LF) (rotation: each is tried); a secret with a space in it goes "
	    "in `_SECRET_FILE`", NULL },
	{ "SECRET_FILE", CONF_ENDPOINT, CONF_UNSET_TOO | CONF_SIGNING, 0, 0,
	    NULL, "—",
	    E(secret_file), &kind_secret_file,
	    "UTF-8 text file with one secret a line (blank lines and `#` "
	    "comments skipped; see **Secret files** below)", NULL },
	{ "TOLERANCE", CONF_ENDPOINT, CONF_SECONDS | CONF_UNSET_TOO, 1,
	    7 * 86400, NULL, "per scheme: 32400 (9 h) for `mailgun`; "
	    "259200 (3 days) for `paypal`; 300 for the others",
	    E(tolerance), &kind_tolerance,
	    "seconds of clock skew accepted, both ways, for timestamped "
	    "schemes", NULL },
	{ "KEY", CONF_ENDPOINT, CONF_UNSET_TOO, 0, 0, NULL, "per scheme",
	    E(key), &kind_key,
	    "key sources, tried in order: `header:Name`, `json:/pointer`, "
	    "`hash`", NULL },
	/* 30 days: beyond every supported provider's retry horizon. */
	{ "RETENTION", CONF_ENDPOINT, 0, 0, 0, "30d", "`30d`",
	    E(retention), &kind_duration,
	    "how long a key is kept: `72h`, `30d`, `forever`", NULL },
	{ "PARK_AFTER", CONF_ENDPOINT, CONF_UNSET_TOO, 1, 1000, NULL,
	    "per scheme: 1 for `github`, `gitlab`, `woocommerce`, `mailgun`, "
	    "`twilio`; 3 for the others",
	    E(park_after), &kind_attempts,
	    "the failed attempt of an event that parks it (stored as "
	    "`failed`, answered 200 `parked`; see docs/operations.md), or "
	    "`never`",
	    NULL },
	{ "MODE", CONF_ENDPOINT, 0, 0, 0, "sync", "`sync`",
	    E(deferred), &conf_kind_choice,
	    "`sync`: the actions run before the answer; `deferred`: the "
	    "event is claimed and answered 200 `accepted`, its actions run "
	    "after (see docs/operations.md)", modes },
	{ "MAX_ATTEMPTS", CONF_ENDPOINT, 0, 1, 1000, "12", "12",
	    E(max_attempts), &kind_int,
	    "runs of an event's actions in all (deliveries, `work`, "
	    "`replay`) before it is `dead`", NULL },
	{ "ACTIONS", CONF_ENDPOINT, CONF_UNSET_TOO, 0, 0, NULL,
	    "the installed `sql/actions/orders.sql` (`sql/actions/mysql/"
	    "orders.sql` for MariaDB/MySQL)", E(actions), &kind_actions,
	    "absolute path of the SQL actions file", NULL },
	{ "URL", CONF_ENDPOINT, CONF_UNSET_TOO | CONF_SIGNING, 0, 0, NULL,
	    "required for `twilio`, `square`", E(url), &kind_url,
	    "the public URL a URL-signing provider (`twilio`, `square`) "
	    "posts to and signs, exactly as entered in its console; never "
	    "taken from `Host` or `X-Forwarded-*`", NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL, NULL }
};

#undef G
#undef E

/* Read every row of scope, prefix before each name, into base. */
static int
load_scope(struct conf_loader *l, enum conf_scope scope, const char *prefix,
    void *base)
{
	const struct conf_var	*cv;
	char			 var[CONF_NAME_MAX + 64];
	const char		*v;

	for (cv = conf_vars; cv->name != NULL; cv++) {
		if (cv->scope != scope || (cv->flags & l->skip))
			continue;
		if ((v = lookup(l, prefix, cv->name, var, sizeof(var))) ==
		    NULL && (cv->flags & CONF_EMPTY))
			v = l->get(var, l->arg);	/* "" or NULL */
		if (v == NULL)
			v = cv->def;
		if (v == NULL && (cv->flags & CONF_REQUIRED)) {
			if (strcmp(cv->name, "SCHEME") == 0)
				return fail(l, var, "required (one of: %s)",
				    scheme_names());
			return fail(l, var, "required: %.*s",
			    (int)strcspn(cv->doc, ";"), cv->doc);
		}
		if (v == NULL && !(cv->flags & CONF_UNSET_TOO))
			continue;
		if (cv->kind->set(l, cv, var, v, (char *)base + cv->off) ==
		    -1) {
			if (!(cv->flags & CONF_OUTBOX))
				return -1;
			/* Webhooks keep flowing; deliver and check say it
			 * (the first one), with the default in its place. */
			if (l->cf->outbox_err[0] == '\0')
				snprintf(l->cf->outbox_err,
				    sizeof(l->cf->outbox_err), "%s", l->err);
			l->err[0] = '\0';
			if (cv->def != NULL && cv->kind->set(l, cv, var,
			    cv->def, (char *)base + cv->off) == -1)
				return -1;
		}
	}
	return 0;
}

struct conf *
conf_load(conf_getenv_fn get, void *arg, char *err, size_t errsz)
{
	return conf_load_for(get, arg, CONF_NEEDS_ALL, err, errsz);
}

/* The SQLite database's path with suffix, a new string; NULL if out of
 * memory. */
static char *
beside_db(const struct conf *cf, const char *suffix)
{
	size_t	 n = strlen(cf->db) + strlen(suffix) + 1;
	char	*p;

	if ((p = malloc(n)) != NULL)
		snprintf(p, n, "%s%s", cf->db, suffix);
	return p;
}

struct conf *
conf_load_for(conf_getenv_fn get, void *arg, unsigned needs, char *err,
    size_t errsz)
{
	struct conf_loader	 l = { get, arg, err, errsz, NULL, NULL, 0, 0 };
	size_t		 i;
	struct conf	*cf;

	if (!(needs & CONF_NEEDS_DB))
		l.skip |= CONF_STORE;
	if (!(needs & CONF_NEEDS_SECRETS))
		l.skip |= CONF_SIGNING;

	if ((cf = calloc(1, sizeof(*cf))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	l.cf = cf;
	if (load_scope(&l, CONF_GLOBAL, "ONCEHOOK_", cf) == -1) {
		conf_free(cf);
		return NULL;
	}
	for (i = 0; i < cf->nendpoints; i++) {
		cf->endpoints[i].depth_max = cf->my != NULL ?
		    CONF_DEPTH_MYSQL : CONF_DEPTH_SQLITE;
		cf->endpoints[i].certs = &cf->certs;
	}
	/* PayPal's certificates are kept beside a SQLite file; a server's
	 * store has none here: its sites name a directory.  Named only
	 * where an endpoint fetches some: a CGI run pays for nothing. */
	for (i = 0; i < cf->nendpoints; i++)
		if (cf->endpoints[i].scheme != NULL &&
		    (cf->endpoints[i].scheme->flags & SCHEME_FETCHES_CERTS))
			break;
	if (i < cf->nendpoints && cf->certs.cache == NULL) {
		if (cf->my == NULL && cf->db != NULL) {
			if ((cf->certs.cache = beside_db(cf, "-certs")) == NULL)
				goto oom;
		} else if (needs & CONF_NEEDS_DB) {
			snprintf(err, errsz, "ONCEHOOK_CERT_CACHE: endpoint "
			    "%s (%s) keeps its sender's certificates there, "
			    "and a MariaDB/MySQL store has no file to keep "
			    "them beside: set it (an absolute path)",
			    cf->endpoints[i].name,
			    cf->endpoints[i].scheme->name);
			conf_free(cf);
			return NULL;
		}
	}
	/* The counters live beside a SQLite file; a server's store has no
	 * file here to be beside: counted only where one is named. */
	if (cf->counters_file == NULL && cf->my == NULL && cf->db != NULL &&
	    (cf->counters_file = beside_db(cf, CTR_SUFFIX)) == NULL)
		goto oom;
	return cf;
oom:
	snprintf(err, errsz, "out of memory");
	conf_free(cf);
	return NULL;
}

struct conf *
conf_load_env(char *err, size_t errsz)
{
	return conf_load_env_for(CONF_NEEDS_ALL, err, errsz);
}

struct conf *
conf_load_env_for(unsigned needs, char *err, size_t errsz)
{
	extern char	**environ;
	struct envindex	 *ix;
	struct conf	 *cf;

	/* Out of memory for the index: getenv() answers instead. */
	ix = envindex_new(environ);
	cf = conf_load_for(envindex_get, ix, needs, err, errsz);
	envindex_free(ix);
	return cf;
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
		free(cf->endpoints[i].url);
	}
	free(cf->endpoints);
	if (cf->outbox_secret.p != NULL) {
		crypto_wipe(cf->outbox_secret.p, cf->outbox_secret.sz);
		free(cf->outbox_secret.p);
	}
	if (cf->status_token != NULL) {
		crypto_wipe(cf->status_token, strlen(cf->status_token));
		free(cf->status_token);
	}
	free(cf->db);
	mysql_free(cf->my);
	free(cf->db_password_file);
	free(cf->db_prefix);
	free(cf->db_tls_ca);
	free(cf->db_tls_cert);
	free(cf->db_tls_key);
	free(cf->counters_file);
	free(cf->certs.cache);
	free(cf->certs.hosts);
	free(cf->certs.ca);
	free(cf);
}

/* 1 if name (length len) is word after prefix. */
static int
is_var(const char *name, size_t len, const char *prefix, const char *word)
{
	size_t	 pl = strlen(prefix), wl = strlen(word);

	return len == pl + wl && strncmp(name, prefix, pl) == 0 &&
	    strncmp(name + pl, word, wl) == 0;
}

const struct conf_var *
conf_var_of(const struct conf *cf, const char *name, size_t len,
    const struct conf_endpoint **ep)
{
	const struct conf_var	*cv;
	size_t			 i;

	*ep = NULL;
	for (cv = conf_vars; cv->name != NULL; cv++) {
		if (cv->scope == CONF_GLOBAL) {
			if (is_var(name, len, "ONCEHOOK_", cv->name))
				return cv;
			continue;
		}
		for (i = 0; i < cf->nendpoints; i++)
			if (is_var(name, len, cf->endpoints[i].prefix,
			    cv->name)) {
				*ep = &cf->endpoints[i];
				return cv;
			}
	}
	return NULL;
}

void
conf_show(const struct conf *cf, const struct conf_endpoint *ep,
    const struct conf_var *cv, char *buf, size_t bufsz)
{
	const void	*base = cv->scope == CONF_GLOBAL ? (const void *)cf :
			    (const void *)ep;

	cv->kind->show(cv, (const char *)base + cv->off, buf, bufsz);
}

/*
 * The bytes of a secret that are secret: a basic secret's password
 * (its user name is in the URL the provider is given), else all.
 */
static size_t
guessable(const struct conf_endpoint *ep, const struct secret *s)
{
	const unsigned char	*c;

	if (!scheme_authorization(ep->scheme) ||
	    (c = memchr(s->p, ':', s->sz)) == NULL)
		return s->sz;
	return s->sz - (size_t)(c + 1 - s->p);
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
		if (ep->secrets[i].kind != SECRET_MAC ||
		    guessable(ep, &ep->secrets[i]) >= CONF_SECRET_MIN)
			continue;	/* a public key is not guessed */
		secret_place(ep, ep->secret_at[i], where, sizeof(where));
		snprintf(msg, sizeof(msg), "%s%s: %s is shorter than %d "
		    "bytes%s; a short key can be guessed: use the provider's "
		    "secret, or at least %d random bytes", ep->prefix,
		    ep->secret_file != NULL ? "SECRET_FILE" : "SECRET", where,
		    CONF_SECRET_MIN, scheme_authorization(ep->scheme) ?
		    " in its password" : ep->scheme->secret != NULL ?
		    " once decoded" : "", CONF_SECRET_MIN);
		say(arg, msg);
		n++;
	}
	return n;
}

/*
 * Say which of ep's public keys libcrypto refuses (a point off the
 * curve), or that it cannot be loaded: each request of the endpoint
 * would be answered 500.  Returns the count.
 */
static int
unusable_keys(const struct conf_endpoint *ep,
    void (*say)(void *arg, const char *message), void *arg)
{
	const struct secret	*s;
	char			 where[256], why[256], msg[700];
	size_t			 i;
	int			 n = 0;

	for (i = 0; i < ep->nsecrets; i++) {
		s = &ep->secrets[i];
		if (s->kind != SECRET_ED25519 && s->kind != SECRET_P256)
			continue;
		if (pubkey_check(s->kind == SECRET_ED25519 ? PUBKEY_ED25519 :
		    PUBKEY_P256, s->p, s->sz, why, sizeof(why)) == 0)
			continue;
		secret_place(ep, ep->secret_at[i], where, sizeof(where));
		snprintf(msg, sizeof(msg), "%s%s: %s: %s", ep->prefix,
		    ep->secret_file != NULL ? "SECRET_FILE" : "SECRET", where,
		    why);
		say(arg, msg);
		n++;
	}
	return n;
}

int
conf_warnings(const struct conf *cf, const char *const *envp,
    void (*say)(void *arg, const char *message), void *arg)
{
	const struct conf_endpoint *ep;
	const struct conf_var	*cv;
	const char		*eq;
	char			 msg[512];
	size_t			 len, i;
	int			 n = 0;

	for (; *envp != NULL; envp++) {
		if (strncmp(*envp, "ONCEHOOK_", 9) != 0 ||
		    (eq = strchr(*envp, '=')) == NULL)
			continue;
		len = (size_t)(eq - *envp);
		cv = conf_var_of(cf, *envp, len, &ep);
		/* Read, but of no use: a scheme that signs no time. */
		if (cv != NULL && strcmp(cv->name, "TOLERANCE") == 0 &&
		    ep != NULL && ep->scheme != NULL &&
		    !ep->scheme->timestamped) {
			snprintf(msg, sizeof(msg), "%.*s is set, but %s signs "
			    "no timestamp: it changes nothing",
			    (int)(len > 200 ? 200 : len), *envp,
			    ep->scheme->name);
			say(arg, msg);
			n++;
		}
		if (cv != NULL || conf_outbox_var(*envp, len))
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
	for (i = 0; i < cf->nendpoints; i++) {
		n += short_secrets(&cf->endpoints[i], say, arg);
		n += unusable_keys(&cf->endpoints[i], say, arg);
	}
	if (cf->nendpoints > CONF_COUNTED_MAX) {
		snprintf(msg, sizeof(msg), "ONCEHOOK_ENDPOINTS: %zu endpoints; "
		    "the counters have room for %d, the others are shown as "
		    "not counted", cf->nendpoints, CONF_COUNTED_MAX);
		say(arg, msg);
		n++;
	}
	if (cf->certs.hosts != NULL || cf->certs.ca != NULL) {
		say(arg, "ONCEHOOK_TEST_CERT_HOSTS or ONCEHOOK_TEST_CERT_CA "
		    "is set: certificates are taken from hosts or CAs other "
		    "than PayPal's and the system's; for tests only");
		n++;
	}
	if (cf->status_placeholder) {
		say(arg, "ONCEHOOK_STATUS_TOKEN holds the example's "
		    "placeholder: the status endpoint stays off");
		n++;
	}
	return n;
}

int
conf_endpoint_index(const struct conf *cf, const char *name, size_t *i)
{
	for (*i = 0; *i < cf->nendpoints; (*i)++)
		if (strcmp(cf->endpoints[*i].name, name) == 0)
			return 0;
	return -1;
}

size_t
conf_actions_first(const struct conf *cf, size_t i)
{
	size_t	 j;

	for (j = 0; j < i; j++)
		if (strcmp(cf->endpoints[j].actions,
		    cf->endpoints[i].actions) == 0)
			return j;
	return i;
}

int
conf_outbox_var(const char *name, size_t len)
{
	static const char *const ends[] = { "_COMMAND", "_URL" };
	size_t			 i, el, k;

	if (len < 16 || strncmp(name, "ONCEHOOK_OUTBOX_", 16) != 0)
		return 0;
	for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		el = strlen(ends[i]);
		if (len <= 16 + el || strncmp(name + len - el, ends[i], el) != 0)
			continue;
		for (k = 16; k < len - el; k++)
			if (!isupper((unsigned char)name[k]) &&
			    !isdigit((unsigned char)name[k]) && name[k] != '_')
				break;
		if (k == len - el)
			return 1;
	}
	return 0;
}

int
conf_outbox_target(const char *topic, conf_getenv_fn get, void *arg,
    struct outbox_target *t, char *err, size_t errsz)
{
	char		 cmd[160];
	const char	*c, *u;
	size_t		 i, n;

	memset(t, 0, sizeof(*t));
	n = strlen(topic);
	if (n == 0 || n > 128 || strspn(topic, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != n) {
		snprintf(err, errsz, "topic \"%.64s\": no variable can name "
		    "its target (letters, digits, ., - and _, at most 128)",
		    topic);
		return -1;
	}
	if (get == NULL) {
		get = envindex_get;	/* with no index: getenv() */
		arg = NULL;
	}
	snprintf(cmd, sizeof(cmd), "ONCEHOOK_OUTBOX_");
	for (i = 0; i < n; i++)
		cmd[16 + i] = topic[i] == '.' || topic[i] == '-' ? '_' :
		    (char)toupper((unsigned char)topic[i]);
	cmd[16 + n] = '\0';
	snprintf(t->var, sizeof(t->var), "%s_URL", cmd);
	u = get(t->var, arg);
	snprintf(cmd + 16 + n, sizeof(cmd) - 16 - n, "_COMMAND");
	c = get(cmd, arg);
	if (c != NULL && u != NULL) {
		snprintf(err, errsz, "%s and %s are both set: one target a "
		    "topic", cmd, t->var);
		return -1;
	}
	if (u != NULL) {
		t->kind = OUTBOX_URL;
		t->value = u;
		if (strncmp(u, "http://", 7) != 0 &&
		    strncmp(u, "https://", 8) != 0) {
			snprintf(err, errsz, "%s: want an http:// or https:// "
			    "URL", t->var);
			return -1;
		}
		return 0;
	}
	if (c != NULL) {
		t->kind = OUTBOX_COMMAND;
		t->value = c;
		snprintf(t->var, sizeof(t->var), "%s", cmd);
		if (c[strspn(c, " ")] == '\0') {
			snprintf(err, errsz, "%s: empty command", t->var);
			return -1;
		}
		return 0;
	}
	/* None: its name is the stem, for the warnings. */
	cmd[16 + n] = '\0';
	snprintf(t->var, sizeof(t->var), "%s", cmd);
	return 0;
}
