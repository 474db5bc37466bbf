/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: jsondoc against jansson itself, which made every
 * canonical hash stored so far.  For each text, jansson's json_loadb()
 * (JSON_REJECT_DUPLICATES) and jsondoc_read() must both take it or both
 * refuse it; when taken, the canonical forms (jansson's dump after
 * pipeline/event.c's former normalisation of whole reals) must be the same
 * bytes, the nesting depth the same, and JSON pointers into the text
 * must find the same value.  The texts: a list of hard cases, then
 * TEXTS generated ones (every kind of value, escapes, surrogates,
 * UTF-8, numbers at every edge, white space, duplicate names written
 * two ways, deep nesting) and each of them mutated (bytes inserted,
 * deleted, replaced, the text cut short).  Deterministic: a fixed seed
 * (JSONDOC_SEED, JSONDOC_TEXTS to change them).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jansson_oracle.h"
#include "lib/jsondoc.h"
#include "tap.h"

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

/* ---- a deterministic generator ---- */

static uint64_t	 rs = 0x9e3779b97f4a7c15ULL;

static uint64_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static unsigned
pick(unsigned n)
{
	return (unsigned)(rnd() % n);
}

struct buf {
	char	*p;
	size_t	 n, cap;
};

static void
add(struct buf *b, const void *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		if ((b->p = realloc(b->p, b->cap)) == NULL)
			BAIL("out of memory");
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void
adds(struct buf *b, const char *s)
{
	add(b, s, strlen(s));
}

static void
ws(struct buf *b)
{
	static const char *const w[] = { "", "", "", " ", "\n", "\t", "\r\n ",
	    "  " };

	adds(b, w[pick(8)]);
}

static void
gen_string(struct buf *b, int small)
{
	static const char *const parts[] = {
		"a", "b", "id", "type", "x", "A", "~", "/", "0", "é", "中",
		"\xf0\x9f\x98\x80", "\\\"", "\\\\", "\\/", "\\b", "\\f",
		"\\n", "\\r", "\\t", "\\u0041", "\\u0061", "\\u00e9",
		"\\u00E9", "\\u4e2d", "\\ud83d\\ude00", "\\uD83D\\uDE00",
		"\\u001f", "\\u0001", "\\u007f", "\x7f", " ", "\\u002F",
		"\\u005c", "\\u0022", "\\u2028", "\\uFFFF", "\\uffff",
		/* rare: refused by both */
		"\\u0000", "\\ud800", "\\udc00", "\\ud800\\u0041", "\\ud800x",
		"\xed\xa0\x80", "\xc0\x80", "\xf4\x90\x80\x80", "\x80",
		"\xc3", "\x01", "\\x", "\\u12", "\\U0041",
	};
	unsigned	 i, n = small ? pick(3) : pick(8);
	unsigned	 np = sizeof(parts) / sizeof(parts[0]);

	adds(b, "\"");
	for (i = 0; i < n; i++)
		adds(b, parts[pick(rnd() % 16 == 0 ? np : np - 16)]);
	adds(b, "\"");
}

static void
gen_number(struct buf *b)
{
	static const char *const fixed[] = {
		"0", "-0", "1", "-1", "42", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808",
		"-9223372036854775809", "99999999999999999999", "0.0", "-0.0",
		"1.0", "1.5", "-2.5", "1e2", "1E2", "1e+2", "1e-2", "1.0e16",
		"1e17", "1e22", "9007199254740991.0", "9007199254740992.0",
		"-9007199254740992.0", "9007199254740993", "1e308", "1e309",
		"-1e309", "1e-400", "4.9e-324", "2.2250738585072014e-308",
		"0.1", "0.30000000000000004", "123456789.123456789", "1e-7",
		"100e-2", "5e-1", "12345678901234567890e-5", "0e10", "-0e-0",
		/* refused */
		"01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "1.e5",
		"--1", "Infinity", "NaN", "1E+-2",
	};
	char		 s[64];
	double		 d;
	uint64_t	 bits;

	switch (pick(4)) {
	case 0:
		adds(b, fixed[pick(sizeof(fixed) / sizeof(fixed[0]))]);
		break;
	case 1:
		snprintf(s, sizeof(s), "%" PRId64, (int64_t)rnd() >>
		    pick(63));
		adds(b, s);
		break;
	case 2:
		do {
			bits = rnd();
			memcpy(&d, &bits, sizeof(d));
		} while (!isfinite(d));
		snprintf(s, sizeof(s), "%.*g", 1 + (int)pick(17), d);
		/* JSON has no "e+" leading zeros issue, but no "inf" */
		adds(b, s);
		break;
	default:
		snprintf(s, sizeof(s), "%d.%de%d", (int)pick(1000) - 500,
		    (int)pick(100), (int)pick(40) - 20);
		adds(b, s[0] == '-' && s[1] == '0' && s[2] != '.' ? s + 1 :
		    s);
	}
}

static void
gen_value(struct buf *b, int depth)
{
	static const char *const lit[] = { "true", "false", "null", "tru",
	    "True", "nul", "falsee" };
	unsigned	 i, n;

	switch (depth > 6 ? 2 + pick(3) : pick(7)) {
	case 0:
	case 5:
		n = pick(6);
		adds(b, "{");
		for (i = 0; i < n; i++) {
			if (i > 0)
				adds(b, ",");
			ws(b);
			gen_string(b, 1);
			ws(b);
			adds(b, ":");
			ws(b);
			gen_value(b, depth + 1);
			ws(b);
		}
		adds(b, "}");
		break;
	case 1:
	case 6:
		n = pick(6);
		adds(b, "[");
		for (i = 0; i < n; i++) {
			if (i > 0)
				adds(b, ",");
			ws(b);
			gen_value(b, depth + 1);
			ws(b);
		}
		adds(b, "]");
		break;
	case 2:
		gen_string(b, 0);
		break;
	case 3:
		gen_number(b);
		break;
	default:
		adds(b, lit[pick(rnd() % 8 == 0 ? 7 : 3)]);
	}
}

static void
mutate(struct buf *b)
{
	static const char	 bytes[] = "{}[]\",:\\0-e.+u tnf\x00\x1f\x80"
	    "\xc0\xe2\xed\xf4\xf5\xff\t";
	unsigned		 k, n = 1 + pick(3);
	size_t			 at;
	char			 c;

	for (k = 0; k < n && b->n > 0; k++) {
		at = pick((unsigned)b->n);
		c = bytes[pick(sizeof(bytes) - 1)];
		switch (pick(4)) {
		case 0:
			memmove(b->p + at, b->p + at + 1, b->n - at);
			b->n--;
			break;
		case 1:
			add(b, "", 1);	/* room */
			b->n--;
			memmove(b->p + at + 1, b->p + at, b->n - at);
			b->p[at] = c;
			b->n++;
			break;
		case 2:
			b->p[at] = c;
			break;
		default:
			b->n = at;
		}
	}
}

/* ---- the comparison ---- */

static int	 ndiff, ntaken, nrefused, nptr;
static char	 first_diff[512];

static void
differ(const char *what, const char *text, size_t sz)
{
	size_t	 i, o = 0;

	if (ndiff++ > 0)
		return;
	o = (size_t)snprintf(first_diff, sizeof(first_diff), "%s: ", what);
	for (i = 0; i < sz && o + 5 < sizeof(first_diff); i++)
		o += (size_t)snprintf(first_diff + o, sizeof(first_diff) - o,
		    (unsigned char)text[i] >= 0x20 && text[i] != 0x7f ?
		    "%c" : "\\x%02x", (unsigned char)text[i]);
}

/* A pointer to some value of j (or to nothing), built as we walk. */
static void
random_pointer(json_t *j, char *out, size_t outsz)
{
	const char	*k;
	json_t		*v = NULL;
	size_t		 o = 0, n, i;
	char		 idx[32];

	out[0] = '\0';
	while (pick(5) != 0) {
		if (json_is_object(j) && (n = json_object_size(j)) > 0) {
			i = pick((unsigned)n + 1);
			if (i == n) {
				k = "missing";
				v = NULL;
			} else
				json_object_foreach(j, k, v)
					if (i-- == 0)
						break;
			if (o + 1 >= outsz)
				return;
			out[o++] = '/';
			for (; *k != '\0' && o + 3 < outsz; k++) {
				if (*k == '~' || *k == '/') {
					out[o++] = '~';
					out[o++] = *k == '~' ? '0' : '1';
				} else
					out[o++] = *k;
			}
			out[o] = '\0';
			if (v == NULL)
				return;
			j = v;
		} else if (json_is_array(j)) {
			n = json_array_size(j);
			i = pick((unsigned)n + 2);
			snprintf(idx, sizeof(idx), pick(10) == 0 ? "/0%zu" :
			    "/%zu", i);
			if (o + strlen(idx) + 1 >= outsz)
				return;
			memcpy(out + o, idx, strlen(idx) + 1);
			o += strlen(idx);
			if ((j = json_array_get(j, i)) == NULL)
				return;
		} else
			return;
	}
}

static int
same_value(json_t *a, const struct jsondoc *d, long i)
{
	const char	*s;
	size_t		 len;

	if (a == NULL || i == -1)
		return a == NULL && i == -1;
	switch (jsondoc_kind(d, i)) {
	case JSONDOC_NULL:
		return json_is_null(a);
	case JSONDOC_TRUE:
		return json_is_true(a);
	case JSONDOC_FALSE:
		return json_is_false(a);
	case JSONDOC_INTEGER:
		return json_is_integer(a) &&
		    json_integer_value(a) == jsondoc_integer(d, i);
	case JSONDOC_REAL:
		return json_is_real(a);
	case JSONDOC_STRING:
		s = jsondoc_string(d, i, &len);
		return json_is_string(a) && json_string_length(a) == len &&
		    memcmp(json_string_value(a), s, len) == 0;
	case JSONDOC_ARRAY:
		return json_is_array(a);
	default:
		return json_is_object(a);
	}
}

/*
 * One text through both: 1 if they agree.  forget: a top-level member
 * of the text to leave out (both ways) before the canonical form.
 */
static int
compare(const char *text, size_t sz, int any, int pointers)
{
	json_t		*j;
	struct jsondoc	*d;
	enum jsondoc_err er;
	char		*want, ptr[300];
	const char	*got, *k;
	size_t		 len, n;
	int		 ok = 1, i;

	j = json_loadb(text, sz, JSON_REJECT_DUPLICATES |
	    (any ? JSON_DECODE_ANY : 0), NULL);
	er = jsondoc_read(text, sz, any ? JSONDOC_ANY : 0, &d);
	if (er == JSONDOC_ENOMEM)
		BAIL("out of memory");
	if ((j == NULL) != (er == JSONDOC_EJSON)) {
		differ(j == NULL ? "jansson refuses, jsondoc takes" :
		    "jansson takes, jsondoc refuses", text, sz);
		json_decref(j);
		jsondoc_free(d);
		return 0;
	}
	if (j == NULL) {
		nrefused++;
		return 1;
	}
	ntaken++;
	normalize(j);	/* pipeline/event.c did, before any lookup */
	if (depth(j) != jsondoc_depth(d)) {
		differ("depth", text, sz);
		ok = 0;
	}
	for (i = 0; pointers && i < 4; i++) {
		random_pointer(j, ptr, sizeof(ptr));
		nptr++;
		if (!same_value(pointer_get(j, ptr), d, jsondoc_get(d, ptr))) {
			differ("pointer", ptr, strlen(ptr));
			ok = 0;
		}
	}
	/* Sometimes leave a top-level member out, both ways. */
	if (json_is_object(j) && (n = json_object_size(j)) > 0 &&
	    pick(3) == 0) {
		n = pick((unsigned)n);
		json_t	*v;

		json_object_foreach(j, k, v)
			if (n-- == 0)
				break;
		if (k != NULL) {
			char	*name = strdup(k);

			jsondoc_forget(d, name);
			json_object_del(j, name);
			free(name);
		}
	}
	want = json_dumps(j, CANON_FLAGS);
	got = jsondoc_canonical(d, &len);
	if (want == NULL || got == NULL)
		BAIL("out of memory");
	if (strlen(want) != len || memcmp(want, got, len) != 0) {
		differ("canonical form", text, sz);
		ok = 0;
	}
	free(want);
	json_decref(j);
	jsondoc_free(d);
	return ok;
}

static void
hard_cases(void)
{
	static const struct {
		const char	*text;
		int		 any;
	} c[] = {
		{ "{}", 0 }, { "[]", 0 }, { " \t\r\n{ }\n", 0 }, { "{} x", 0 },
		{ "", 0 }, { " ", 0 }, { "{", 0 }, { "}", 0 }, { "[1,]", 0 },
		{ "{\"a\":1,}", 0 }, { "{,}", 0 }, { "[,1]", 0 },
		{ "{\"a\" 1}", 0 }, { "{\"a\":}", 0 }, { "{1:1}", 0 },
		{ "[01]", 0 }, { "[-]", 0 }, { "[-0]", 0 }, { "[1.]", 0 },
		{ "[.5]", 0 }, { "[1e]", 0 }, { "[1e+]", 0 }, { "[1E+2]", 0 },
		{ "[9223372036854775807]", 0 }, { "[9223372036854775808]", 0 },
		{ "[-9223372036854775808]", 0 },
		{ "[-9223372036854775809]", 0 }, { "[1e309]", 0 },
		{ "[-1e309]", 0 }, { "[1e-400]", 0 }, { "[-1e-400]", 0 },
		{ "[\"\\u0000\"]", 0 }, { "{\"\\u0000\":1}", 0 },
		{ "{\"a\\u0000\":1}", 0 }, { "[\"\\ud800\"]", 0 },
		{ "[\"\\udc00\"]", 0 }, { "[\"\\ud800\\u0041\"]", 0 },
		{ "[\"\\ud800\\\"]", 0 }, { "[\"\\ud83d\\ude00\"]", 0 },
		{ "[\"\xed\xa0\x80\"]", 0 }, { "[\"\xc0\x80\"]", 0 },
		{ "[\"\xc2\x80\"]", 0 }, { "[\"\xe0\x9f\xbf\"]", 0 },
		{ "[\"\xef\xbf\xbf\"]", 0 }, { "[\"\xf0\x8f\xbf\xbf\"]", 0 },
		{ "[\"\xf4\x8f\xbf\xbf\"]", 0 }, { "[\"\xf4\x90\x80\x80\"]", 0 },
		{ "[\"\xf5\x80\x80\x80\"]", 0 }, { "[\"\xe2\x82\"]", 0 },
		{ "[\"\xe2\x82", 0 }, { "{\"a\":1,\"\\u0061\":2}", 0 },
		{ "{\"a\":1,\"b\":{\"a\":2}}", 0 }, { "{\"a\":{},\"a\":[]}", 0 },
		{ "[tru]", 0 }, { "[true1]", 0 }, { "[nul]", 0 },
		{ "[True]", 0 }, { "[truefalse]", 0 }, { "\xef\xbb\xbf{}", 0 },
		{ "[\"\x7f\"]", 0 }, { "[\"a\tb\"]", 0 }, { "[\"a\nb\"]", 0 },
		{ "{\"b\":1,\"a\":[1.5,2.0,1e2,-0.0,1E-7,0.1,1e17,1e22]}", 0 },
		{ "[1.0e+16, 1.5e300, -2.5e-7, 123456789012345678.0]", 0 },
		{ "{\"\\/\":\"\\/\",\"/\":1}", 0 },
		{ "{\"b\":1,\"a\":2,\"ab\":3,\"\":4,\"\xc3\xa9\":5,\"B\":6}", 0 },
		{ "{\"k\":\"\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\"}", 0 },
		{ "[\"\\u00e9\\u00E9\\u4E2D\"]", 0 }, { "[\"\\u12\"]", 0 },
		{ "[\"\\u12G4\"]", 0 }, { "[\"\\a\"]", 0 }, { "[\"\\", 0 },
		{ "[\"", 0 }, { "[1", 0 }, { "{\"a\":1", 0 }, { "[1 2]", 0 },
		{ "42", 0 },
		{ "42", 1 }, { "\"s\"", 1 }, { "null", 1 }, { " 1.5 ", 1 },
		{ "", 1 }, { "[1e400]", 1 }, { "-", 1 }, { "1 2", 1 },
	};
	size_t	 i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int	 before = ndiff;

		ndiff = 0;
		CHECK(compare(c[i].text, strlen(c[i].text), c[i].any, 1),
		    "hard case %zu: jansson and jsondoc agree%s%s", i,
		    ndiff ? " — " : "", ndiff ? first_diff : "");
		ndiff = before;
	}
	CHECK(compare("[1]\0", 4, 0, 1) && compare("{\"a\":\"\0\"}", 9, 0, 1) &&
	    compare("{\"a\"\0:1}", 8, 0, 1) && compare("[1\0]", 5, 0, 1) &&
	    compare("[true\0,1]", 10, 0, 1) && compare("[1\0\0]", 6, 0, 1) &&
	    compare("7\0", 2, 1, 1), "texts with NUL bytes: jansson and "
	    "jsondoc take and refuse the same (one NUL after a number or a "
	    "literal is lost in jansson's reading)");
}

/* Nesting at and around jansson's limit, and pipeline/event.c's. */
static void
deep(void)
{
	static const size_t	 levels[] = { 999, 1000, 1001, 2047, 2048,
	    2049, 3000 };
	struct buf		 b = { 0 };
	size_t			 i, k;
	int			 all = 1;

	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		for (k = 0; k < 3; k++) {
			size_t	 l;

			b.n = 0;
			for (l = 0; l < levels[i]; l++)
				adds(&b, k == 1 && l % 2 ? "{\"a\":" : "[");
			if (k == 2)
				adds(&b, "1");
			for (l = levels[i]; l-- > 0;)
				adds(&b, k == 1 && l % 2 ? "}" : "]");
			all &= compare(b.p, b.n, 0, 1);
		}
	}
	CHECK(all, "nesting 999 to 3000 levels (empty, with objects, with a "
	    "number at the bottom): both take and refuse the same%s%s",
	    ndiff ? " — " : "", ndiff ? first_diff : "");
	free(b.p);
}

/* Reals written as jansson writes them, for doubles of every kind. */
static void
reals(unsigned n)
{
	char		*a, text[64];
	struct buf	 b = { 0 };
	double		 d;
	uint64_t	 bits;
	unsigned	 i, bad = 0;
	json_t		*r = json_real(0.1);

	a = json_dumps(r, JSON_ENCODE_ANY);
	json_decref(r);
	if (a == NULL || strcmp(a, "0.10000000000000001") != 0) {
		/* A jansson that writes shortest forms hashes otherwise. */
		printf("# jansson writes 0.1 as %s: its reals are not "
		    "compared\n", a != NULL ? a : "(null)");
		free(a);
		return;
	}
	free(a);
	for (i = 0; i < n; i++) {
		do {
			bits = rnd();
			memcpy(&d, &bits, sizeof(d));
		} while (!isfinite(d));
		if (i % 3 == 0)
			d = (double)(int64_t)(rnd() >> pick(64)) /
			    (double)(1 + pick(1000));
		snprintf(text, sizeof(text), "[%.17g]", d);
		b.n = 0;
		adds(&b, text);
		if (!compare(b.p, b.n, 0, 0))
			bad++;
	}
	CHECK(bad == 0, "%u random doubles: jsondoc writes each as jansson "
	    "does (%u differ)%s%s", n, bad, ndiff ? " — " : "",
	    ndiff ? first_diff : "");
	free(b.p);
}

/* jsondoc_raw(): an object's or an array's text as read, nothing else. */
static void
raw(void)
{
	static const char	 text[] = " {\"a\": [1, {\"b\" : \"}\"} ],"
				     " \"c\":{}, \"d\":\"x\"} ";
	struct jsondoc		*d;
	const char		*r;
	size_t			 len = 0;
	int			 ok;

	if (jsondoc_read(text, sizeof(text) - 1, 0, &d) != JSONDOC_OK)
		BAIL("jsondoc_read");
	r = jsondoc_raw(d, jsondoc_get(d, ""), &len);
	ok = r == text + 1 && len == sizeof(text) - 3;
	r = jsondoc_raw(d, jsondoc_get(d, "/a"), &len);
	ok &= r != NULL && len == strlen("[1, {\"b\" : \"}\"} ]") &&
	    memcmp(r, "[1, {\"b\" : \"}\"} ]", len) == 0;
	r = jsondoc_raw(d, jsondoc_get(d, "/a/1"), &len);
	ok &= r != NULL && len == strlen("{\"b\" : \"}\"}") &&
	    memcmp(r, "{\"b\" : \"}\"}", len) == 0;
	r = jsondoc_raw(d, jsondoc_get(d, "/c"), &len);
	ok &= r != NULL && len == 2 && memcmp(r, "{}", 2) == 0;
	ok &= jsondoc_raw(d, jsondoc_get(d, "/d"), &len) == NULL &&
	    jsondoc_raw(d, jsondoc_get(d, "/a/0"), &len) == NULL;
	CHECK(ok, "jsondoc_raw: containers' texts as read, scalars none");
	jsondoc_free(d);
}

int
main(void)
{
	struct buf	 b = { 0 };
	const char	*e;
	unsigned	 texts = 20000, i, bad = 0, badm = 0;

	if ((e = getenv("JSONDOC_SEED")) != NULL)
		rs = strtoull(e, NULL, 0) | 1;
	if ((e = getenv("JSONDOC_TEXTS")) != NULL)
		texts = (unsigned)strtoul(e, NULL, 10);
	hard_cases();
	raw();
	deep();
	reals(texts);

	ndiff = ntaken = nrefused = 0;
	for (i = 0; i < texts; i++) {
		b.n = 0;
		gen_value(&b, 0);
		if (!compare(b.p, b.n, pick(8) == 0, 1))
			bad++;
	}
	CHECK(bad == 0, "%u generated texts: jansson and jsondoc agree "
	    "(%u differ; %d taken, %d refused)%s%s", texts, bad, ntaken,
	    nrefused, ndiff ? " — first: " : "", ndiff ? first_diff : "");
	CHECK(ntaken > (int)texts / 4 && nrefused > (int)texts / 10,
	    "the generated texts are both taken and refused (%d, %d)",
	    ntaken, nrefused);

	ndiff = ntaken = nrefused = 0;
	for (i = 0; i < texts; i++) {
		b.n = 0;
		gen_value(&b, 0);
		mutate(&b);
		if (!compare(b.p, b.n, pick(8) == 0, 1))
			badm++;
	}
	CHECK(badm == 0, "%u mutated texts: jansson and jsondoc agree "
	    "(%u differ; %d taken, %d refused)%s%s", texts, badm, ntaken,
	    nrefused, ndiff ? " — first: " : "", ndiff ? first_diff : "");
	CHECK(nptr > (int)texts, "%d pointers looked up both ways", nptr);
	free(b.p);
	return tap_done();
}
