/* SPDX-License-Identifier: MIT */
/*
 * oncehook: a JSON text read as jansson reads it (see lib/jsondoc.h).
 *
 * One pass over the text, recursive descent, one frame a level (at
 * most JSONDOC_MAX_DEPTH, as jansson recurses).  Nodes live in one
 * array and name each other by index (the array grows); node 0 is the
 * top, so 0 also means "none" as a child or a sibling.  A string
 * without a backslash is the text's own bytes (it cannot hold a quote
 * or a control character, so the canonical form writes it as it is);
 * one with escapes is decoded into the side buffer, which is never
 * longer than the text.  Each object's members are sorted by name
 * (bytes, then length, as jansson's JSON_SORT_KEYS) when it closes,
 * which also finds duplicate names, and linked in that order.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/jsondoc.h"
#include "lib/utf8.h"

struct node {
	const char	*s;	/* a string's bytes */
	size_t		 len;
	const char	*name;	/* an object member's name */
	size_t		 namelen;
	union {
		long long	 i;
		double		 d;
	}		 v;
	uint32_t	 first;	/* a container's first child, 0 if none */
	uint32_t	 next;	/* the next child of its parent, 0 if last */
	unsigned char	 kind;	/* enum jsondoc_kind */
	unsigned char	 esc;	/* s has bytes the canonical form escapes */
	unsigned char	 nameesc;
	unsigned char	 gone;	/* forgotten (jsondoc_forget()) */
};

struct jsondoc {
	struct node	*n;
	size_t		 nn, ncap;
	char		*dec;		/* decoded strings */
	size_t		 decn, deccap;
	size_t		 depth;
	char		*out;		/* the canonical form */
	size_t		 outn, outcap;
};

struct member {
	const char	*name;
	size_t		 len;
	uint32_t	 node;
};

struct rd {
	const unsigned char	*p, *end, *text;
	struct jsondoc		*d;
	struct member		*m;	/* members of the open objects */
	size_t			 nm, mcap;
	int			 nomem;
};

#define MEMBERS_SORT_SMALL	12

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long
jsondoc_hex4(const char *p)
{
	long	 v = 0;
	int	 i, h;

	for (i = 0; i < 4; i++) {
		if ((h = hexval((unsigned char)p[i])) < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

size_t
jsondoc_utf8(char *o, unsigned long cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

static void
skip_ws(struct rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' ||
	    *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

/* A new node of kind k: its index, or -1 (out of memory). */
static long
new_node(struct rd *r, enum jsondoc_kind k)
{
	struct jsondoc	*d = r->d;
	struct node	*n;
	size_t		 cap;

	if (d->nn == d->ncap) {
		cap = d->ncap == 0 ? 64 : d->ncap * 2;
		if (cap > UINT32_MAX || (n = reallocarray(d->n, cap,
		    sizeof(*n))) == NULL) {
			r->nomem = 1;
			return -1;
		}
		d->n = n;
		d->ncap = cap;
	}
	n = &d->n[d->nn];
	memset(n, 0, sizeof(*n));
	n->kind = (unsigned char)k;
	return (long)d->nn++;
}

/*
 * The escapes of raw[0..sz) (checked: each is complete) decoded into
 * the side buffer: 0 with *s, *len and *esc set, -1 for what jansson
 * refuses (a lone or wrongly paired surrogate, a NUL).
 */
static int
decode(struct rd *r, const unsigned char *raw, size_t sz, const char **s,
    size_t *len, unsigned char *esc)
{
	struct jsondoc		*d = r->d;
	const unsigned char	*q = raw, *end = raw + sz;
	char			*o;
	unsigned long		 cp, lo;

	if (d->dec == NULL) {
		d->deccap = (size_t)(r->end - r->text);
		if ((d->dec = malloc(d->deccap)) == NULL) {
			r->nomem = 1;
			return -1;
		}
	}
	o = d->dec + d->decn;
	*s = o;
	*esc = 0;
	while (q < end) {
		if (*q != '\\') {
			*o++ = (char)*q++;
			continue;
		}
		q++;
		switch (*q++) {
		case 'b': *o++ = '\b'; *esc = 1; continue;
		case 'f': *o++ = '\f'; *esc = 1; continue;
		case 'n': *o++ = '\n'; *esc = 1; continue;
		case 'r': *o++ = '\r'; *esc = 1; continue;
		case 't': *o++ = '\t'; *esc = 1; continue;
		case 'u': break;
		default:	/* '"', '\\' or '/' */
			if (q[-1] != '/')
				*esc = 1;
			*o++ = (char)q[-1];
			continue;
		}
		cp = (unsigned long)jsondoc_hex4((const char *)q);
		q += 4;
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			if (end - q < 6 || q[0] != '\\' || q[1] != 'u')
				return -1;
			lo = (unsigned long)jsondoc_hex4((const char *)q + 2);
			if (lo < 0xDC00 || lo > 0xDFFF)
				return -1;
			cp = ((cp - 0xD800) << 10) + (lo - 0xDC00) + 0x10000;
			q += 6;
		} else if ((cp >= 0xDC00 && cp <= 0xDFFF) || cp == 0)
			return -1;
		if (cp < 0x20 || cp == '"' || cp == '\\')
			*esc = 1;
		o += jsondoc_utf8(o, cp);
	}
	*len = (size_t)(o - *s);
	d->decn += *len;
	return 0;
}

/* The string at r->p (its opening quote): 0 with its bytes, or -1. */
static int
read_string(struct rd *r, const char **s, size_t *len, unsigned char *esc)
{
	const unsigned char	*p = r->p + 1, *start = p, *end = r->end;
	int			 bs = 0;
	size_t			 n;

	for (;;) {
		while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' &&
		    *p != '\\')
			p++;
		if (p >= end)
			return -1;
		if (*p == '"')
			break;
		if (*p == '\\') {
			bs = 1;
			if (++p >= end)
				return -1;
			switch (*p) {
			case '"': case '\\': case '/': case 'b': case 'f':
			case 'n': case 'r': case 't':
				p++;
				continue;
			case 'u':
				if (end - p < 5 ||
				    jsondoc_hex4((const char *)p + 1) < 0)
					return -1;
				p += 5;
				continue;
			default:
				return -1;
			}
		}
		if (*p < 0x20 || (n = utf8_len(p, (size_t)(end - p))) == 0)
			return -1;
		p += n;
	}
	r->p = p + 1;
	if (!bs) {
		*s = (const char *)start;
		*len = (size_t)(p - start);
		*esc = 0;
		return 0;
	}
	return decode(r, start, (size_t)(p - start), s, len, esc);
}

/*
 * The number at r->p into nd: an integer (strtoll's range, else refused
 * as jansson does), or a real (refused if it overflows) kept as an
 * integer if it holds a whole number below 2^53, unless it is the top
 * value (pipeline/event.c's normalisation changed members and elements only).
 * 0 or -1.
 */
static int
read_number(struct rd *r, struct node *nd, int top)
{
	const unsigned char	*p = r->p, *b = p, *digits, *end = r->end;
	unsigned long long	 u = 0, lim;
	char			 small[64], *buf = small;
	double			 v;
	int			 neg = 0, real = 0, ok;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	digits = p;
	if (p < end && *p == '0') {
		if (++p < end && is_digit(*p))
			return -1;
	} else if (p < end && is_digit(*p)) {
		while (p < end && is_digit(*p))
			p++;
	} else
		return -1;
	if (p < end && *p == '.') {
		if (++p >= end || !is_digit(*p))
			return -1;
		while (p < end && is_digit(*p))
			p++;
		real = 1;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		if (++p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || !is_digit(*p))
			return -1;
		while (p < end && is_digit(*p))
			p++;
		real = 1;
	}
	r->p = p;
	nd->kind = JSONDOC_INTEGER;
	if (!real) {
		lim = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
		for (; digits < p; digits++) {
			if (u > (lim - (unsigned)(*digits - '0')) / 10)
				return -1;	/* too big an integer */
			u = u * 10 + (unsigned)(*digits - '0');
		}
		nd->v.i = !neg ? (long long)u : u == lim ? LLONG_MIN :
		    -(long long)u;
		return 0;
	}
	if ((size_t)(p - b) >= sizeof(small) &&
	    (buf = malloc((size_t)(p - b) + 1)) == NULL) {
		r->nomem = 1;
		return -1;
	}
	memcpy(buf, b, (size_t)(p - b));
	buf[p - b] = '\0';
	errno = 0;
	v = strtod(buf, NULL);
	ok = !((v == HUGE_VAL || v == -HUGE_VAL) && errno == ERANGE);
	if (buf != small)
		free(buf);
	if (!ok)
		return -1;		/* real number overflow */
	if (!top && v > -9007199254740992.0 && v < 9007199254740992.0 &&
	    (double)(long long)v == v)
		nd->v.i = (long long)v;
	else {
		nd->kind = JSONDOC_REAL;
		nd->v.d = v;
	}
	return 0;
}

static int
member_cmp(const void *a, const void *b)
{
	const struct member	*x = a, *y = b;
	int			 c;

	c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
	if (c != 0)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/*
 * Sort the closing object's members m[0..n) by name and link them to
 * node obj in that order: 0, or -1 if two names are the same.
 */
static int
close_object(struct rd *r, long obj, struct member *m, size_t n)
{
	struct member	 t;
	size_t		 i, j;

	if (n <= MEMBERS_SORT_SMALL) {
		for (i = 1; i < n; i++) {
			t = m[i];
			for (j = i; j > 0 && member_cmp(&m[j - 1], &t) > 0; j--)
				m[j] = m[j - 1];
			m[j] = t;
		}
	} else
		qsort(m, n, sizeof(*m), member_cmp);
	for (i = 0; i < n; i++) {
		if (i + 1 < n && member_cmp(&m[i], &m[i + 1]) == 0)
			return -1;	/* duplicate object key */
		r->d->n[m[i].node].next = i + 1 < n ? m[i + 1].node : 0;
	}
	r->d->n[obj].first = n > 0 ? m[0].node : 0;
	return 0;
}

static int
push_member(struct rd *r, const char *name, size_t len, long node)
{
	struct member	*m;
	size_t		 cap;

	if (r->nm == r->mcap) {
		cap = r->mcap == 0 ? 32 : r->mcap * 2;
		if ((m = reallocarray(r->m, cap, sizeof(*m))) == NULL) {
			r->nomem = 1;
			return -1;
		}
		r->m = m;
		r->mcap = cap;
	}
	r->m[r->nm].name = name;
	r->m[r->nm].len = len;
	r->m[r->nm].node = (uint32_t)node;
	r->nm++;
	return 0;
}

static long	read_value(struct rd *, size_t);

/*
 * After a member or an element: 1 past a ',' (another follows), 0 past
 * the closing byte, -1 for anything else.
 */
static int
after_item(struct rd *r, char close)
{
	skip_ws(r);
	if (r->p < r->end && *r->p == ',') {
		r->p++;
		skip_ws(r);
		return 1;
	}
	if (r->p < r->end && *r->p == (unsigned char)close) {
		r->p++;
		return 0;
	}
	return -1;
}

/* The object at r->p (its '{'), at level: its node, or -1. */
static long
read_object(struct rd *r, size_t level)
{
	const char	*name;
	size_t		 len, base = r->nm;
	unsigned char	 esc;
	long		 obj, child;
	int		 more;

	if ((obj = new_node(r, JSONDOC_OBJECT)) == -1)
		return -1;
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == '}') {
		r->p++;
		return obj;
	}
	for (;;) {
		if (r->p >= r->end || *r->p != '"' ||
		    read_string(r, &name, &len, &esc) == -1)
			return -1;
		skip_ws(r);
		if (r->p >= r->end || *r->p != ':')
			return -1;
		r->p++;
		skip_ws(r);
		if ((child = read_value(r, level + 1)) == -1)
			return -1;
		r->d->n[child].name = name;
		r->d->n[child].namelen = len;
		r->d->n[child].nameesc = esc;
		if (push_member(r, name, len, child) == -1)
			return -1;
		if ((more = after_item(r, '}')) != 1)
			break;
	}
	if (more == -1 ||
	    close_object(r, obj, r->m + base, r->nm - base) == -1)
		return -1;
	r->nm = base;
	return obj;
}

/* The array at r->p (its '['), at level: its node, or -1. */
static long
read_array(struct rd *r, size_t level)
{
	long	 arr, child, prev = 0;
	int	 more;

	if ((arr = new_node(r, JSONDOC_ARRAY)) == -1)
		return -1;
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == ']') {
		r->p++;
		return arr;
	}
	for (;;) {
		if ((child = read_value(r, level + 1)) == -1)
			return -1;
		if (prev == 0)
			r->d->n[arr].first = (uint32_t)child;
		else
			r->d->n[prev].next = (uint32_t)child;
		prev = child;
		if ((more = after_item(r, ']')) != 1)
			break;
	}
	return more == 0 ? arr : -1;
}

/* A literal: jansson reads the whole run of letters, then compares. */
static long
read_literal(struct rd *r)
{
	static const struct {
		const char		*word;
		enum jsondoc_kind	 kind;
	} lit[] = {
		{ "true", JSONDOC_TRUE },
		{ "false", JSONDOC_FALSE },
		{ "null", JSONDOC_NULL },
	};
	const unsigned char	*b = r->p;
	size_t			 i, n;

	while (r->p < r->end && ((*r->p >= 'a' && *r->p <= 'z') ||
	    (*r->p >= 'A' && *r->p <= 'Z')))
		r->p++;
	n = (size_t)(r->p - b);
	for (i = 0; i < sizeof(lit) / sizeof(lit[0]); i++)
		if (strlen(lit[i].word) == n && memcmp(b, lit[i].word, n) == 0)
			return new_node(r, lit[i].kind);
	return -1;
}

/*
 * The string, number or literal at r->p: its node, or -1.  Apart from
 * read_value(), so that the frames of the recursion stay small.
 */
static long __attribute__((noinline))
read_scalar(struct rd *r, size_t level)
{
	const char	*s;
	size_t		 len;
	unsigned char	 esc, c = *r->p;
	long		 i;
	struct node	 nd;

	if (c == '"') {
		/* A NUL can only come of "\u0000", which decode() refuses. */
		if (read_string(r, &s, &len, &esc) == -1 ||
		    (i = new_node(r, JSONDOC_STRING)) == -1)
			return -1;
		r->d->n[i].s = s;
		r->d->n[i].len = len;
		r->d->n[i].esc = esc;
		return i;
	}
	if (c == '-' || is_digit(c)) {
		memset(&nd, 0, sizeof(nd));
		if (read_number(r, &nd, level == 1) == -1 ||
		    (i = new_node(r, (enum jsondoc_kind)nd.kind)) == -1)
			return -1;
		r->d->n[i].v = nd.v;
	} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
		if ((i = read_literal(r)) == -1)
			return -1;
	} else
		return -1;
	/*
	 * jansson reads one byte past a number or a literal and gives it
	 * back; a NUL byte given back is lost (its stream takes a NUL in
	 * its buffer for "empty").  So "[1\0]" is taken: skip it too.
	 */
	if (r->p < r->end && *r->p == '\0')
		r->p++;
	return i;
}

/* The value at r->p (no white space before it), at level: node or -1. */
static long
read_value(struct rd *r, size_t level)
{
	const unsigned char	*start = r->p;
	long			 i;

	if (level > JSONDOC_MAX_DEPTH || r->p >= r->end)
		return -1;
	if (*r->p != '{' && *r->p != '[')
		return read_scalar(r, level);

	if (level > r->d->depth)
		r->d->depth = level;
	i = *r->p == '{' ? read_object(r, level) : read_array(r, level);
	if (i != -1) {
		/* Its text, for jsondoc_raw(). */
		r->d->n[i].s = (const char *)start;
		r->d->n[i].len = (size_t)(r->p - start);
	}
	return i;
}

enum jsondoc_err
jsondoc_read(const char *text, size_t sz, int flags, struct jsondoc **out)
{
	struct rd	 r;
	long		 top;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	if ((r.d = calloc(1, sizeof(*r.d))) == NULL)
		return JSONDOC_ENOMEM;
	r.text = r.p = (const unsigned char *)text;
	r.end = r.p + sz;
	skip_ws(&r);
	if (!(flags & JSONDOC_ANY) && (r.p >= r.end ||
	    (*r.p != '{' && *r.p != '[')))
		top = -1;
	else if ((top = read_value(&r, 1)) != -1) {
		skip_ws(&r);
		if (r.p != r.end)
			top = -1;
	}
	free(r.m);
	if (top == -1) {
		jsondoc_free(r.d);
		return r.nomem ? JSONDOC_ENOMEM : JSONDOC_EJSON;
	}
	*out = r.d;
	return JSONDOC_OK;
}

void
jsondoc_free(struct jsondoc *d)
{
	if (d == NULL)
		return;
	free(d->n);
	free(d->dec);
	free(d->out);
	free(d);
}

size_t
jsondoc_depth(const struct jsondoc *d)
{
	return d->depth;
}

/* Child i of array node a, or -1. */
static long
array_at(const struct jsondoc *d, long a, unsigned long i)
{
	uint32_t	 c;

	for (c = d->n[a].first; c != 0 && i > 0; c = d->n[c].next)
		i--;
	return c == 0 ? -1 : (long)c;
}

/* Member name[0..len) of object node o (not forgotten), or -1. */
static long
member_of(const struct jsondoc *d, long o, const char *name, size_t len)
{
	uint32_t	 c;

	for (c = d->n[o].first; c != 0; c = d->n[c].next)
		if (!d->n[c].gone && d->n[c].namelen == len &&
		    memcmp(d->n[c].name, name, len) == 0)
			return (long)c;
	return -1;
}

long
jsondoc_get(const struct jsondoc *d, const char *ptr)
{
	char		 tok[256], *end;
	const char	*p = ptr;
	long		 cur = 0;
	size_t		 n;
	unsigned long	 idx;

	while (*p == '/' && cur != -1) {
		p++;
		for (n = 0; *p != '\0' && *p != '/'; p++) {
			if (n + 1 >= sizeof(tok))
				return -1;
			if (*p == '~') {
				if (p[1] != '0' && p[1] != '1')
					return -1;
				p++;
				tok[n++] = *p == '1' ? '/' : '~';
			} else
				tok[n++] = *p;
		}
		tok[n] = '\0';
		if (d->n[cur].kind == JSONDOC_OBJECT)
			cur = member_of(d, cur, tok, n);
		else if (d->n[cur].kind == JSONDOC_ARRAY) {
			if (n == 0 || (n > 1 && tok[0] == '0') ||
			    tok[0] < '0' || tok[0] > '9')
				return -1;
			errno = 0;
			idx = strtoul(tok, &end, 10);
			if (errno != 0 || *end != '\0')
				return -1;
			cur = array_at(d, cur, idx);
		} else
			return -1;
	}
	return cur;
}

enum jsondoc_kind
jsondoc_kind(const struct jsondoc *d, long i)
{
	return (enum jsondoc_kind)d->n[i].kind;
}

const char *
jsondoc_string(const struct jsondoc *d, long i, size_t *len)
{
	if (d->n[i].kind != JSONDOC_STRING)
		return NULL;
	*len = d->n[i].len;
	return d->n[i].s;
}

const char *
jsondoc_raw(const struct jsondoc *d, long i, size_t *len)
{
	if (d->n[i].kind != JSONDOC_OBJECT && d->n[i].kind != JSONDOC_ARRAY)
		return NULL;
	*len = d->n[i].len;
	return d->n[i].s;
}

long long
jsondoc_integer(const struct jsondoc *d, long i)
{
	return d->n[i].kind == JSONDOC_INTEGER ? d->n[i].v.i : 0;
}

void
jsondoc_forget(struct jsondoc *d, const char *name)
{
	long	 i;

	if (d->n[0].kind == JSONDOC_OBJECT &&
	    (i = member_of(d, 0, name, strlen(name))) != -1)
		d->n[i].gone = 1;
}

/* Room for n more bytes of the canonical form: 0 or -1. */
static int
room(struct jsondoc *d, size_t n)
{
	char	*o;
	size_t	 cap;

	if (d->outcap - d->outn >= n)
		return 0;
	cap = d->outcap;
	while (cap - d->outn < n)
		cap = cap < 256 ? 256 : cap * 2;
	if ((o = realloc(d->out, cap)) == NULL)
		return -1;
	d->out = o;
	d->outcap = cap;
	return 0;
}

static int
put(struct jsondoc *d, const void *p, size_t n)
{
	if (room(d, n) == -1)
		return -1;
	memcpy(d->out + d->outn, p, n);
	d->outn += n;
	return 0;
}

/* A string as jansson writes it: '"', '\\' and controls escaped. */
static int
put_string(struct jsondoc *d, const char *s, size_t len, int esc)
{
	static const char	 hex[] = "0123456789ABCDEF";
	char			*o;
	unsigned char		 c;
	size_t			 i;

	if (room(d, (esc ? 6 * len : len) + 2) == -1)
		return -1;
	o = d->out + d->outn;
	*o++ = '"';
	if (!esc) {
		memcpy(o, s, len);
		o += len;
	} else
		for (i = 0; i < len; i++) {
			c = (unsigned char)s[i];
			if (c >= 0x20 && c != '"' && c != '\\') {
				*o++ = (char)c;
				continue;
			}
			*o++ = '\\';
			switch (c) {
			case '"': *o++ = '"'; break;
			case '\\': *o++ = '\\'; break;
			case '\b': *o++ = 'b'; break;
			case '\f': *o++ = 'f'; break;
			case '\n': *o++ = 'n'; break;
			case '\r': *o++ = 'r'; break;
			case '\t': *o++ = 't'; break;
			default:
				*o++ = 'u';
				*o++ = '0';
				*o++ = '0';
				*o++ = hex[c >> 4];
				*o++ = hex[c & 0xF];
			}
		}
	*o++ = '"';
	d->outn = (size_t)(o - d->out);
	return 0;
}

/*
 * A real as jansson 2.14 writes it: "%.17g", ".0" added if that has
 * neither '.' nor 'e', no '+' and no leading zeros in the exponent.
 */
static size_t
real_text(double v, char *buf, size_t bufsz)
{
	char	*e, *q;
	int	 n;

	n = snprintf(buf, bufsz, "%.17g", v);
	if (n < 0 || (size_t)n + 3 > bufsz)
		return 0;
	if ((e = strchr(buf, 'e')) == NULL) {
		if (strchr(buf, '.') == NULL) {
			memcpy(buf + n, ".0", 3);
			n += 2;
		}
		return (size_t)n;
	}
	q = ++e;
	if (*q == '+')
		q++;
	else if (*q == '-')
		e++, q++;
	while (*q == '0' && q[1] != '\0')
		q++;
	memmove(e, q, strlen(q) + 1);
	return strlen(buf);
}

static int
put_value(struct jsondoc *d, uint32_t i)
{
	const struct node	*nd = &d->n[i];
	char			 num[64];
	uint32_t		 c;
	size_t			 n;
	int			 any = 0;

	switch (nd->kind) {
	case JSONDOC_NULL:
		return put(d, "null", 4);
	case JSONDOC_TRUE:
		return put(d, "true", 4);
	case JSONDOC_FALSE:
		return put(d, "false", 5);
	case JSONDOC_INTEGER:
		n = (size_t)snprintf(num, sizeof(num), "%lld", nd->v.i);
		return put(d, num, n);
	case JSONDOC_REAL:
		if ((n = real_text(nd->v.d, num, sizeof(num))) == 0)
			return -1;
		return put(d, num, n);
	case JSONDOC_STRING:
		return put_string(d, nd->s, nd->len, nd->esc);
	case JSONDOC_ARRAY:
		if (put(d, "[", 1) == -1)
			return -1;
		for (c = nd->first; c != 0; c = d->n[c].next, any = 1)
			if ((any && put(d, ",", 1) == -1) ||
			    put_value(d, c) == -1)
				return -1;
		return put(d, "]", 1);
	default:
		if (put(d, "{", 1) == -1)
			return -1;
		for (c = nd->first; c != 0; c = d->n[c].next) {
			if (d->n[c].gone)
				continue;
			if ((any && put(d, ",", 1) == -1) ||
			    put_string(d, d->n[c].name, d->n[c].namelen,
			    d->n[c].nameesc) == -1 || put(d, ":", 1) == -1 ||
			    put_value(d, c) == -1)
				return -1;
			any = 1;
		}
		return put(d, "}", 1);
	}
}

const char *
jsondoc_canonical(struct jsondoc *d, size_t *len)
{
	d->outn = 0;
	if (put_value(d, 0) == -1 || put(d, "", 1) == -1)
		return NULL;
	*len = d->outn - 1;
	return d->out;
}
