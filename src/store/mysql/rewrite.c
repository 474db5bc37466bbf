/* SPDX-License-Identifier: MIT */
/*
 * oncehook: an actions file's statements for MariaDB/MySQL (see
 * store/mysql/rewrite.h).
 *
 * A lexer cuts the text into tokens as the server's lexer would on
 * oncehook's connection (store/mysql/conn.c: its sql_mode, utf8mb4):
 * comments, strings, quoted names, numbers, named parameters.  A
 * statement ends at a ; outside them; each one of a section is judged
 * and rewritten on its tokens, never on its text.  What lies between two
 * tokens is white space and comments only: a section's comments are
 * dropped from the SQL sent (each becomes white space, and two minuses
 * go apart), so the server reads nothing the guard did not.
 * tests/unit/t_mylex.c holds the lexer to the server's.  Pure string
 * work: no server, no global state.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/buf.h"
#include "store/mysql/rewrite.h"

enum tk {
	TK_WORD,		/* a bare word: keyword, name or number */
	TK_QIDENT,		/* `a name` */
	TK_STRING,		/* '...' or "..." */
	TK_PARAM,		/* :name */
	TK_QMARK,		/* ? */
	TK_AT,			/* @ or @@, a variable's sigil */
	TK_ASSIGN,		/* := */
	TK_EXEC,		/* an executable comment, whole */
	TK_PUNCT,		/* any other byte */
};

struct tok {
	enum tk		 kind;
	size_t		 off, end;	/* text[off..end) */
	int		 line;
};

struct toks {
	struct tok	*v;
	size_t		 n;
};

/* One statement being judged: its tokens t[0..n). */
struct cx {
	const char	*text;
	const struct tok *t;
	size_t		 n;
	const char	*prefix;
	char		*err;
	size_t		 errsz;
};

/* The outbox insert's rewrite, found by outbox_plan(). */
struct plan {
	int		 outbox;
	size_t		 tbl;		/* the table's token */
	size_t		 col0, col1;	/* ( and ) of its column list */
	size_t		 ins;		/* ", ?, ?, ?" after token ins - 1 */
};

static const struct {
	const char	*name;		/* without its : */
	enum myp_param	 param;
} params[] = {
	{ "endpoint", MYP_ENDPOINT },
	{ "key", MYP_KEY },
	{ "type", MYP_TYPE },
	{ "payload", MYP_PAYLOAD },
	{ "payload_hash", MYP_PAYLOAD_HASH },
	{ "received_at", MYP_RECEIVED_AT },
};

/* oncehook's tables, after the prefix. */
static const char *const own_tables[] = {
	"events", "payloads", "conflicts", "failures", "outbox", "schema",
};

/* The outbox insert's column list, rewritten. */
#define COLUMNS		"(topic, payload, endpoint, event_key, created_at)"

#define OUTBOX_FORM	"INSERT INTO outbox (topic, payload) VALUES (...) " \
			"or SELECT ..."

/* "line N: " and the reason into err.  Returns -1. */
static int
fail(char *err, size_t errsz, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
fail(char *err, size_t errsz, int line, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	n = snprintf(err, errsz, "line %d: ", line);
	if (n < 0 || (size_t)n >= errsz)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, errsz - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* 1 if c may be part of a bare name (the server's [0-9A-Za-z$_] and
 * any byte of a multibyte character). */
static int
namech(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '$' || c >= 0x80;
}

static int
lines(const char *p, const char *end)
{
	int	 n = 0;

	for (; p < end; p++)
		n += *p == '\n';
	return n;
}

/* 1 if text[p..len) opens an executable comment (slash, star, then !
 * or M!): code the server runs. */
static int
execcomment(const char *text, size_t len, size_t p)
{
	if (p + 2 >= len || text[p] != '/' || text[p + 1] != '*')
		return 0;
	return text[p + 2] == '!' ||
	    (p + 3 < len && text[p + 2] == 'M' && text[p + 3] == '!');
}

/*
 * The end of the white space or comment at text[p] (not an executable
 * comment), or p if there is none there; (size_t)-1 for a comment left
 * open.  A -- comment wants a space or control character, DEL too (or
 * the end of the text) after it, as the server does: a--1 is a minus
 * minus one.
 */
static size_t
blank(const char *text, size_t len, size_t p)
{
	const char	*q;

	if (p >= len)
		return p;
	switch (text[p]) {
	case ' ': case '\t': case '\n': case '\r': case '\f': case '\v':
		return p + 1;
	case '#':
		q = memchr(text + p, '\n', len - p);
		return q != NULL ? (size_t)(q - text) : len;
	case '-':
		/* The server's lexer: -- then white space or a control
		 * character (DEL among them), as my_isspace/my_iscntrl. */
		if (p + 1 >= len || text[p + 1] != '-' ||
		    (p + 2 < len && (unsigned char)text[p + 2] > ' ' &&
		    (unsigned char)text[p + 2] != 0x7f))
			return p;
		q = memchr(text + p, '\n', len - p);
		return q != NULL ? (size_t)(q - text) : len;
	case '/':
		if (p + 1 >= len || text[p + 1] != '*' ||
		    execcomment(text, len, p))
			return p;
		for (p += 2; p + 1 < len; p++)
			if (text[p] == '*' && text[p + 1] == '/')
				return p + 2;
		return (size_t)-1;
	default:
		return p;
	}
}

/* 1 for the server's [0-9], and [0-9A-Fa-f]. */
static int
digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int
hexdigit(unsigned char c)
{
	return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * The end of the number, or of the name, that starts at text[p] with a
 * digit or a . and a digit, as the server's lexer cuts it: 0x41 and 0b1
 * followed by no name byte are numbers; digits run into name bytes are
 * a name (1a), unless an exponent follows (1e1, 1e+1: the number ends
 * there); digits with a point and an exponent are a number whatever
 * follows (1.5, .5e1), so 1.5INTO is 1.5 then INTO.  *name is 1 for a
 * name.  A . right after a name is not cut here (lex(): t.5INTO is t,
 * the point, and the name 5INTO).
 */
static size_t
number(const char *text, size_t len, size_t p, int *name)
{
	size_t	 q = p, d;

#define AT(i)	((i) < len ? (unsigned char)text[i] : 0)
	*name = 0;
	if (AT(q) == '0' && (AT(q + 1) == 'x' || AT(q + 1) == 'b')) {
		for (d = q + 2; AT(q + 1) == 'x' ? hexdigit(AT(d)) :
		    AT(d) == '0' || AT(d) == '1'; d++)
			;
		if (d > q + 2 && !namech(AT(d)))
			return d;
	} else if (AT(q) != '.') {
		while (digit(AT(q)))
			q++;
		if ((AT(q) == 'e' || AT(q) == 'E') && (digit(AT(q + 1)) ||
		    ((AT(q + 1) == '+' || AT(q + 1) == '-') &&
		    digit(AT(q + 2))))) {
			for (q += 2; digit(AT(q)); q++)
				;
			return q;
		}
		if (!namech(AT(q)) && !(AT(q) == '.' && AT(q + 1) != '.'))
			return q;
	}
	if (AT(q) == '.') {
		/* A point: its digits, then an exponent if any. */
		for (q++; digit(AT(q)); q++)
			;
		if (AT(q) == 'e' || AT(q) == 'E') {
			d = q + 1;
			if (AT(d) == '+' || AT(d) == '-')
				d++;
			if (digit(AT(d)))
				for (q = d; digit(AT(q)); q++)
					;
		}
		return q;
	}
	for (q = p; namech(AT(q)); q++)
		;
	*name = 1;
	return q;
#undef AT
}

/* The end of the quoted string or name opening at text[p] (its quote
 * doubled, and for strings \ escaping), or (size_t)-1 if left open. */
static size_t
quoted(const char *text, size_t len, size_t p)
{
	char	 q = text[p];

	for (p++; p < len; p++) {
		if (text[p] == '\\' && q != '`')
			p++;
		else if (text[p] == q) {
			if (p + 1 < len && text[p + 1] == q)
				p++;
			else
				return p + 1;
		}
	}
	return (size_t)-1;
}

/*
 * Cut text[0..len) into tokens, the first on line first_line.  Returns
 * 0 with tv filled (the caller frees tv->v), or -1 with the reason.
 */
static int
lex(const char *text, size_t len, int first_line, struct toks *tv,
    char *err, size_t errsz)
{
	struct tok	*t;
	const char	*z;
	size_t		 p = 0, e, cap = 0;
	size_t		 named_end = (size_t)-1, sep_end = (size_t)-1;
	int		 line = first_line, name;
	unsigned char	 c;

	tv->v = NULL;
	tv->n = 0;
	/* What the server would read of a C string is what is checked. */
	if ((z = memchr(text, '\0', len)) != NULL)
		return fail(err, errsz, first_line + lines(text, z),
		    "a NUL byte");
	for (;;) {
		/* White space and comments. */
		while ((e = blank(text, len, p)) != p) {
			if (e == (size_t)-1) {
				fail(err, errsz, line, "unterminated comment");
				goto err;
			}
			line += lines(text + p, text + e);
			p = e;
		}
		if (p >= len)
			return 0;
		c = (unsigned char)text[p];
		name = 0;
		if (execcomment(text, len, p)) {
			for (e = p + 3; e + 1 < len &&
			    !(text[e] == '*' && text[e + 1] == '/'); e++)
				;
			if (e + 1 >= len) {
				fail(err, errsz, line, "unterminated comment");
				goto err;
			}
			e += 2;
		} else if (c == '\'' || c == '"' || c == '`') {
			if ((e = quoted(text, len, p)) == (size_t)-1) {
				fail(err, errsz, line, "unterminated %s",
				    c == '`' ? "quoted name (`)" : "string");
				goto err;
			}
		} else if (c == ':' && p + 1 < len && text[p + 1] == '=')
			e = p + 2;
		else if (c == ':' && p + 1 < len &&
		    namech((unsigned char)text[p + 1]))
			for (e = p + 1; e < len &&
			    namech((unsigned char)text[e]); e++)
				;
		else if (c == '@')
			e = p + 1 < len && text[p + 1] == '@' ? p + 2 : p + 1;
		else if (c == '.' && p == named_end && p + 1 < len &&
		    namech((unsigned char)text[p + 1])) {
			/* A . right against a name and a name byte: the
			 * server's separator, and whatever name bytes follow
			 * it are a name even from a digit (shop.1_events,
			 * t.1e1).  After a quoted name the server reads .1 as
			 * a number, and what follows can only be a syntax
			 * error: reading a name there too refuses only what
			 * would not run. */
			e = p + 1;
			sep_end = e;
		} else if (p == sep_end && namech(c)) {
			for (e = p; e < len && namech((unsigned char)text[e]);
			    e++)
				;
			name = 1;
		} else if (digit(c) || (c == '.' && p + 1 < len &&
		    digit((unsigned char)text[p + 1])))
			e = number(text, len, p, &name);
		else if (namech(c))
			for (e = p; e < len && namech((unsigned char)text[e]);
			    e++)
				;
		else
			e = p + 1;

		if (tv->n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((t = reallocarray(tv->v, cap, sizeof(*t))) ==
			    NULL) {
				snprintf(err, errsz, "out of memory");
				goto err;
			}
			tv->v = t;
		}
		t = &tv->v[tv->n++];
		t->off = p;
		t->end = e;
		t->line = line;
		if (execcomment(text, len, p))
			t->kind = TK_EXEC;
		else if (c == '\'' || c == '"')
			t->kind = TK_STRING;
		else if (c == '`')
			t->kind = TK_QIDENT;
		else if (c == ':' && e == p + 2 && text[p + 1] == '=')
			t->kind = TK_ASSIGN;
		else if (c == ':' && e > p + 1)
			t->kind = TK_PARAM;
		else if (c == '?')
			t->kind = TK_QMARK;
		else if (c == '@')
			t->kind = TK_AT;
		else if (namech(c) || (c == '.' && e > p + 1))
			t->kind = TK_WORD;	/* a number too */
		else
			t->kind = TK_PUNCT;
		/* Where a name ends: a . there may be a separator. */
		named_end = t->kind == TK_QIDENT || (t->kind == TK_STRING &&
		    c == '"') || (t->kind == TK_WORD && (name ||
		    (!digit(c) && c != '.'))) ? e : (size_t)-1;
		line += lines(text + p, text + e);
		p = e;
	}
err:
	free(tv->v);
	tv->v = NULL;
	tv->n = 0;
	return -1;
}

static int
punct(const struct cx *c, size_t i, char ch)
{
	return i < c->n && c->t[i].kind == TK_PUNCT &&
	    c->text[c->t[i].off] == ch;
}

/* 1 if token i is the bare word kw, whatever its case. */
static int
kw(const struct cx *c, size_t i, const char *kw)
{
	size_t	 n = strlen(kw);

	return i < c->n && c->t[i].kind == TK_WORD &&
	    c->t[i].end - c->t[i].off == n &&
	    strncasecmp(c->text + c->t[i].off, kw, n) == 0;
}

/*
 * 1 if token i is a name (bare, quoted with `, or with " if dq: a name
 * as the server reads it under ANSI_QUOTES) spelling a then b, whatever
 * the case; a quoted name's doubled quotes count once.
 */
static int
named(const struct cx *c, size_t i, int dq, const char *a, const char *b)
{
	const char	*p, *end;
	char		 v[256], q;
	size_t		 n = 0, la = strlen(a), lb = strlen(b);

	if (i >= c->n)
		return 0;
	p = c->text + c->t[i].off;
	end = c->text + c->t[i].end;
	q = *p;
	if (c->t[i].kind == TK_QIDENT || (dq && c->t[i].kind == TK_STRING &&
	    q == '"')) {
		p++;
		end--;
	} else if (c->t[i].kind == TK_WORD)
		q = '\0';	/* no quote to undouble */
	else
		return 0;
	for (; p < end && n < sizeof(v); p++) {
		v[n++] = *p;
		if (*p == q && p + 1 < end && p[1] == q)
			p++;		/* a doubled quote */
	}
	return p == end && n == la + lb && strncasecmp(v, a, la) == 0 &&
	    strncasecmp(v + la, b, lb) == 0;
}

/* The kind of token i, or -1 past the statement's end. */
static int
kind(const struct cx *c, size_t i)
{
	return i < c->n ? (int)c->t[i].kind : -1;
}

/* 1 if token i is a name of any kind (bare or `quoted`). */
static int
isname(const struct cx *c, size_t i)
{
	return i < c->n && (c->t[i].kind == TK_WORD ||
	    c->t[i].kind == TK_QIDENT);
}

/* Token i's text, upper case and cut short, for a message. */
static const char *
word(const struct cx *c, size_t i, char *w, size_t wsz)
{
	size_t	 k, n;

	n = c->t[i].end - c->t[i].off;
	if (n >= wsz)
		n = wsz - 1;
	for (k = 0; k < n; k++) {
		w[k] = c->text[c->t[i].off + k];
		if (w[k] >= 'a' && w[k] <= 'z')
			w[k] -= 'a' - 'A';
	}
	w[n] = '\0';
	return w;
}

static int
cfail(const struct cx *c, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* fail() at token i (the statement's end if i is past it). */
static int
cfail(const struct cx *c, size_t i, const char *fmt, ...)
{
	va_list	 ap;
	int	 n, line;

	line = c->t[i < c->n ? i : c->n - 1].line;
	n = snprintf(c->err, c->errsz, "line %d: ", line);
	if (n < 0 || (size_t)n >= c->errsz)
		return -1;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errsz - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* The token after the ( at i that closes it, or c->n. */
static size_t
closing(const struct cx *c, size_t i)
{
	size_t	 depth = 0;

	for (; i < c->n; i++)
		if (punct(c, i, '('))
			depth++;
		else if (punct(c, i, ')') && --depth == 0)
			return i;
	return c->n;
}

/*
 * INSERT INTO outbox (topic, payload) VALUES (e1, e2): the table and
 * its column list to rewrite, and the values' end, where the event's
 * three go.  i is the token after VALUES.
 */
static int
outbox_values(const struct cx *c, size_t i, struct plan *pl)
{
	size_t	 j, close, depth = 0, commas = 0;
	char	 w[32];

	if (!punct(c, i, '('))
		return cfail(c, i, "the outbox takes %s", OUTBOX_FORM);
	if ((close = closing(c, i)) == c->n)
		return cfail(c, i, "a ( without its )");
	for (j = i + 1; j < close; j++)
		if (punct(c, j, '('))
			depth++;
		else if (punct(c, j, ')'))
			depth--;
		else if (depth == 0 && punct(c, j, ','))
			commas++;
	if (commas != 1 || close == i + 1)
		return cfail(c, i, "INSERT INTO outbox (topic, payload) "
		    "takes two values, the topic and the payload");
	if (punct(c, close + 1, ','))
		return cfail(c, close + 1, "INSERT INTO outbox ... VALUES "
		    "takes one row (write one INSERT per row, or INSERT "
		    "INTO outbox (topic, payload) SELECT ...)");
	if (kw(c, close + 1, "ON"))
		return cfail(c, close + 1, "INSERT INTO outbox ... ON "
		    "DUPLICATE KEY UPDATE is refused: an action adds outbox "
		    "rows, never changes one");
	if (close + 1 < c->n)
		return cfail(c, close + 1, "%s after INSERT INTO outbox ... "
		    "VALUES (...) is not supported",
		    word(c, close + 1, w, sizeof(w)));
	pl->ins = close;
	return 0;
}

/*
 * INSERT INTO outbox (topic, payload) SELECT e1, e2 [FROM ...]: the
 * event's three go at the end of the select list, before its FROM (the
 * first one outside parentheses), or at the statement's end.  i is the
 * token after SELECT.
 */
static int
outbox_select(const struct cx *c, size_t i, struct plan *pl)
{
	static const char *const before[] = {
		"WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "WINDOW",
		"FOR", "LOCK", "INTO", "PROCEDURE", "OFFSET", "FETCH",
		"RETURNING", NULL
	};
	static const char *const sets[] = {
		"UNION", "EXCEPT", "INTERSECT", "MINUS", NULL
	};
	size_t	 j, k, depth = 0, commas = 0, from = 0;
	char	 w[32];

	for (j = i; j < c->n; j++) {
		if (punct(c, j, '(')) {
			depth++;
			continue;
		}
		if (punct(c, j, ')')) {
			if (depth == 0)
				return cfail(c, j, "a ) without its (");
			depth--;
			continue;
		}
		if (depth > 0)
			continue;
		for (k = 0; sets[k] != NULL; k++)
			if (kw(c, j, sets[k]))
				return cfail(c, j, "INSERT INTO outbox ... "
				    "SELECT with %s is not supported",
				    sets[k]);
		if (kw(c, j, "ON") && kw(c, j + 1, "DUPLICATE"))
			return cfail(c, j, "INSERT INTO outbox ... ON "
			    "DUPLICATE KEY UPDATE is refused: an action adds "
			    "outbox rows, never changes one");
		if (from)
			continue;
		if (kw(c, j, "FROM")) {
			from = j;
			continue;
		}
		for (k = 0; before[k] != NULL; k++)
			if (kw(c, j, before[k]))
				return cfail(c, j, "INSERT INTO outbox ... "
				    "SELECT with %s before FROM is not "
				    "supported", word(c, j, w, sizeof(w)));
		if (punct(c, j, ','))
			commas++;
	}
	if (commas != 1)
		return cfail(c, i, "INSERT INTO outbox (topic, payload) "
		    "takes two values, the topic and the payload");
	pl->ins = from ? from : c->n;
	return 0;
}

/*
 * If the statement (its first keyword at k) writes to an unqualified
 * outbox, check that it is the one form allowed and fill pl to rewrite
 * it.  Returns 0 (pl->outbox 0 for any other statement), or -1 with the
 * reason.
 */
static int
outbox_plan(const struct cx *c, size_t k, struct plan *pl)
{
	static const char *const mods[] = {
		"LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE", NULL
	};
	size_t	 i = k + 1, mod = 0, into = 0, m;
	char	 w[32];

	memset(pl, 0, sizeof(*pl));
	if (!kw(c, k, "INSERT") && !kw(c, k, "REPLACE"))
		return 0;
	for (;;) {
		for (m = 0; mods[m] != NULL && !kw(c, i, mods[m]); m++)
			;
		if (mods[m] == NULL)
			break;
		if (mod == 0)
			mod = i;
		i++;
	}
	if (kw(c, i, "INTO"))
		into = i++;
	if (!named(c, i, 0, "", "outbox") || punct(c, i + 1, '.'))
		return 0;
	if (kw(c, k, "REPLACE"))
		return cfail(c, k, "REPLACE INTO outbox is refused: an action "
		    "adds outbox rows with %s, never replaces one",
		    OUTBOX_FORM);
	if (mod)
		return cfail(c, mod, "INSERT %s INTO outbox is refused: write "
		    "%s", word(c, mod, w, sizeof(w)), OUTBOX_FORM);
	pl->tbl = i++;
	if (!into || !punct(c, i, '(') || !named(c, i + 1, 0, "", "topic") ||
	    !punct(c, i + 2, ',') || !named(c, i + 3, 0, "", "payload") ||
	    !punct(c, i + 4, ')'))
		return cfail(c, k, "the outbox takes %s: those two columns, "
		    "in that order (oncehook adds the event's endpoint, key "
		    "and time)", OUTBOX_FORM);
	pl->col0 = i;
	pl->col1 = i + 4;
	i += 5;
	if (kw(c, i, "VALUES") || kw(c, i, "VALUE")) {
		if (outbox_values(c, i + 1, pl) == -1)
			return -1;
	} else if (kw(c, i, "SELECT")) {
		if (outbox_select(c, i + 1, pl) == -1)
			return -1;
	} else
		return cfail(c, i, "the outbox takes %s", OUTBOX_FORM);
	pl->outbox = 1;
	return 0;
}

/* 1 if token i is part of a qualified name: db.NAME or NAME.column. */
static int
qualified(const struct cx *c, size_t i)
{
	return (i >= 2 && punct(c, i - 1, '.') && isname(c, i - 2)) ||
	    punct(c, i + 1, '.');
}

/*
 * The guard on a section's statement (see store/mysql/rewrite.h), and the outbox
 * insert's rewrite into pl.  Returns 0, or -1 with the reason.
 */
static int
guard(const struct cx *c, struct plan *pl)
{
	static const char *const ok[] = {
		"INSERT", "UPDATE", "DELETE", "REPLACE", "SELECT", "WITH",
		NULL
	};
	/* Functions whose effect a rollback does not undo. */
	static const char *const fns[] = {
		"GET_LOCK", "RELEASE_LOCK", "RELEASE_ALL_LOCKS", "LOAD_FILE",
		NULL
	};
	size_t	 i, k, j;
	int	 write;
	char	 w[32];

	for (i = 0; i < c->n; i++)
		if (c->t[i].kind == TK_EXEC)
			return cfail(c, i, "an executable comment (/*! ... "
			    "*/) is refused in a section: the server runs the "
			    "code in it, which oncehook cannot check");
	/* What it is: a leading ( only before a query. */
	for (k = 0; punct(c, k, '('); k++)
		;
	for (j = 0; ok[j] != NULL && !kw(c, k, ok[j]); j++)
		;
	if (k == c->n || ok[j] == NULL || (k > 0 && j < 4))
		return cfail(c, k, "only INSERT, UPDATE, DELETE, REPLACE, "
		    "SELECT or WITH may run in an event's transaction (%s "
		    "commits it, changes it or acts outside it; tables and "
		    "the like belong in the setup part)",
		    k < c->n ? word(c, k, w, sizeof(w)) : "this");
	write = kw(c, k, "UPDATE") || kw(c, k, "DELETE");
	if (outbox_plan(c, k, pl) == -1)
		return -1;

	for (i = 0; i < c->n; i++) {
		if (pl->outbox && i == pl->tbl)
			continue;	/* the outbox, rewritten */
		/* A call, its name bare or `quoted` (the server calls
		 * `GET_LOCK`(...) all the same), qualified or not (it
		 * calls mariadb_schema.GET_LOCK(...), oracle_schema's and
		 * maxdb_schema's the built-in too). */
		for (j = 0; fns[j] != NULL && isname(c, i) &&
		    punct(c, i + 1, '('); j++)
			if (named(c, i, 0, "", fns[j]))
				return cfail(c, i, "%s() is refused: its "
				    "effect outlives the event's transaction "
				    "(a named lock stays with the connection) "
				    "or reaches outside the database", fns[j]);
		switch (c->t[i].kind) {
		case TK_ASSIGN:
			return cfail(c, i, ":= is refused: it sets a "
			    "variable, and a statement sees the event only "
			    "through its parameters");
		case TK_AT:
			return cfail(c, i, "variables (@name, @@name) are "
			    "refused: a statement sees the event only through "
			    "its parameters");
		case TK_WORD:
			if (kw(c, i, "INTO") && (kind(c, i + 1) == TK_AT ||
			    kw(c, i + 1, "OUTFILE") ||
			    kw(c, i + 1, "DUMPFILE")))
				return cfail(c, i, "SELECT ... INTO %s is "
				    "refused: an action's results stay in the "
				    "database", kind(c, i + 1) == TK_AT ?
				    "@variable" : word(c, i + 1, w,
				    sizeof(w)));
			/* FALLTHROUGH */
		case TK_QIDENT:
		case TK_STRING:
			for (j = 0; j < sizeof(own_tables) /
			    sizeof(own_tables[0]); j++)
				if (named(c, i, 1, c->prefix, own_tables[j]))
					return cfail(c, i, "%s%s is oncehook's "
					    "own table: an action may not name "
					    "it%s", c->prefix, own_tables[j],
					    strcmp(own_tables[j], "outbox") ==
					    0 ? " (it writes the outbox with "
					    OUTBOX_FORM ")" : "");
			if (!named(c, i, 0, "", "outbox") ||
			    (pl->outbox && i == pl->tbl) || qualified(c, i))
				break;
			if (write)
				return cfail(c, i, "an action may add outbox "
				    "rows (%s), never update or delete them; "
				    "name the site's own table with its "
				    "database, shop.outbox", OUTBOX_FORM);
			return cfail(c, i, "outbox is oncehook's outbox here: "
			    "write %s, or name the site's own table with its "
			    "database, shop.outbox", OUTBOX_FORM);
		default:
			break;
		}
	}
	return 0;
}

/* Append text[p..end), white space and comments only; without its
 * comments if strip (each one a space, and its newlines). */
static int
gap(struct buf *b, const char *text, size_t p, size_t end, int strip)
{
	size_t	 e, k;
	int	 rc = 0;

	if (!strip)
		return buf_add(b, text + p, end - p);
	for (; p < end && rc == 0; p = e) {
		if ((e = blank(text, end, p)) == p || e == (size_t)-1)
			return buf_add(b, text + p, end - p); /* not seen */
		if (e == p + 1)
			rc = buf_add(b, text + p, 1);
		else {
			rc = buf_add(b, " ", 1);
			for (k = p; k < e && rc == 0; k++)
				if (text[k] == '\n')
					rc = buf_add(b, "\n", 1);
		}
	}
	return rc;
}

static int
param_add(struct myp_stmt *s, enum myp_param p)
{
	enum myp_param	*v;

	if ((v = reallocarray(s->params, s->nparams + 1, sizeof(*v))) ==
	    NULL)
		return -1;
	s->params = v;
	v[s->nparams++] = p;
	return 0;
}

/* The parameter named by token i (a TK_PARAM), or -1. */
static int
param_of(const struct cx *c, size_t i)
{
	const char	*name = c->text + c->t[i].off + 1;
	size_t		 n = c->t[i].end - c->t[i].off - 1, j;

	for (j = 0; j < sizeof(params) / sizeof(params[0]); j++)
		if (strlen(params[j].name) == n &&
		    strncmp(params[j].name, name, n) == 0)
			return (int)params[j].param;
	return -1;
}

/*
 * Write statement c into s: in a section, its comments dropped, each
 * named parameter a ? (its value recorded), and the outbox insert
 * rewritten as pl says; in the setup part, its text as written.
 * Returns 0, or -1 with s's memory the caller's to free.
 */
static int
emit(const struct cx *c, const struct plan *pl, int setup,
    struct myp_stmt *s)
{
	struct buf	 b = { NULL, 0, 0 };
	const char	*p;
	size_t		 i;
	int		 rc = 0;

	if (setup) {
		rc = buf_add(&b, c->text + c->t[0].off,
		    c->t[c->n - 1].end - c->t[0].off);
		s->sql = b.p;
		return rc;
	}
	for (i = 0; i < c->n && rc == 0; i++) {
		if (pl->outbox && i == pl->ins)
			rc = buf_add(&b, ", ?, ?, ?", 9) |
			    param_add(s, MYP_ENDPOINT) |
			    param_add(s, MYP_KEY) | param_add(s, MYP_NOW);
		if (i > 0 && rc == 0)
			rc = gap(&b, c->text, c->t[i - 1].end, c->t[i].off, 1);
		/* Two minuses go apart: once a comment after them is
		 * dropped (or at the end), -- would be one to the server. */
		if (rc == 0 && punct(c, i, '-') && b.len > 0 &&
		    b.p[b.len - 1] == '-')
			rc = buf_add(&b, " ", 1);
		if (rc != 0)
			break;
		if (c->t[i].kind == TK_PARAM) {
			rc = buf_add(&b, "?", 1) |
			    param_add(s, (enum myp_param)param_of(c, i));
		} else if (pl->outbox && i == pl->tbl) {
			/* `prefix outbox`, its backquotes doubled */
			rc = buf_add(&b, "`", 1);
			for (p = c->prefix; *p != '\0' && rc == 0; p++)
				rc = buf_add(&b, p, 1) | (*p == '`' ?
				    buf_add(&b, "`", 1) : 0);
			if (rc == 0)
				rc = buf_add(&b, "outbox`", 7);
		} else if (pl->outbox && i == pl->col0) {
			rc = buf_add(&b, COLUMNS, sizeof(COLUMNS) - 1);
			i = pl->col1;
		} else
			rc = buf_add(&b, c->text + c->t[i].off,
			    c->t[i].end - c->t[i].off);
	}
	if (rc == 0 && pl->outbox && pl->ins == c->n)
		rc = buf_add(&b, ", ?, ?, ?", 9) |
		    param_add(s, MYP_ENDPOINT) | param_add(s, MYP_KEY) |
		    param_add(s, MYP_NOW);
	s->sql = b.p;
	return rc != 0 ? -1 : 0;
}

/* Check the parameters, the only tokens judged in the setup part too. */
static int
check_params(const struct cx *c, int setup)
{
	size_t	 i, n;

	for (i = 0; i < c->n; i++) {
		n = c->t[i].end - c->t[i].off;
		if (c->t[i].kind == TK_QMARK)
			return cfail(c, i, "? is not a parameter of an "
			    "actions file: the event's values are named "
			    "(:endpoint, :key, :type, :payload, "
			    ":payload_hash, :received_at)");
		if (c->t[i].kind != TK_PARAM)
			continue;
		if (setup)
			return cfail(c, i, "the setup part takes no "
			    "parameters (%.*s): it runs at oncehook init, "
			    "with no event", (int)n, c->text + c->t[i].off);
		if (param_of(c, i) == -1)
			return cfail(c, i, "unknown parameter %.*s (have "
			    ":endpoint, :key, :type, :payload, "
			    ":payload_hash, :received_at)", (int)n,
			    c->text + c->t[i].off);
	}
	return 0;
}

static void
stmt_clear(struct myp_stmt *s)
{
	free(s->sql);
	free(s->params);
	memset(s, 0, sizeof(*s));
}

int
myp_split(const char *text, size_t len, int first_line, const char *prefix,
    int flags, struct myp_stmts *out, char *err, size_t errsz)
{
	struct toks	 tv;
	struct cx	 c;
	struct plan	 pl;
	struct myp_stmt	*v, *s;
	size_t		 i, start, n0 = out->n;
	int		 setup = (flags & MYP_SETUP) != 0;
	int		 hadv = out->v != NULL;

	if (lex(text, len, first_line, &tv, err, errsz) == -1)
		return -1;
	memset(&c, 0, sizeof(c));
	c.text = text;
	c.prefix = prefix != NULL ? prefix : "";
	c.err = err;
	c.errsz = errsz;
	for (start = i = 0; i <= tv.n; i++) {
		if (i < tv.n && !(tv.v[i].kind == TK_PUNCT &&
		    text[tv.v[i].off] == ';'))
			continue;
		c.t = tv.v + start;
		c.n = i - start;
		start = i + 1;
		if (c.n == 0)
			continue;	/* a blank statement */
		memset(&pl, 0, sizeof(pl));
		if (check_params(&c, setup) == -1 ||
		    (!setup && guard(&c, &pl) == -1))
			goto err;
		if ((v = reallocarray(out->v, out->n + 1, sizeof(*v))) ==
		    NULL)
			goto oom;
		out->v = v;
		s = &out->v[out->n++];
		memset(s, 0, sizeof(*s));
		s->line = c.t[0].line;
		s->outbox = pl.outbox;
		if (emit(&c, &pl, setup, s) == -1)
			goto oom;
	}
	free(tv.v);
	return 0;
oom:
	snprintf(err, errsz, "out of memory");
err:
	for (i = n0; i < out->n; i++)
		stmt_clear(&out->v[i]);
	out->n = n0;
	if (!hadv) {
		free(out->v);
		out->v = NULL;
	}
	free(tv.v);
	return -1;
}

void
myp_free(struct myp_stmts *st)
{
	size_t	 i;

	if (st == NULL)
		return;
	for (i = 0; i < st->n; i++)
		stmt_clear(&st->v[i]);
	free(st->v);
	st->v = NULL;
	st->n = 0;
}
