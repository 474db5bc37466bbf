/* SPDX-License-Identifier: MIT */
/*
 * oncehook: one member of a JSON text, found without parsing the text
 * (see lib/jsonpeek.h).
 */
#include "config.h"

#include <string.h>

#include "lib/jsonpeek.h"

static const char *
skip_ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/*
 * p at a string's opening quote: past its closing quote, or NULL if the
 * text ends first; *esc set if it holds a backslash.
 */
static const char *
string_end(const char *p, const char *e, int *esc)
{
	for (p++; p < e; p++) {
		if (*p == '"')
			return p + 1;
		if (*p == '\\') {
			*esc = 1;
			if (++p == e)
				return NULL;
		}
	}
	return NULL;
}

/* Past the value at p (no white space before it), or NULL. */
static const char *
skip_value(const char *p, const char *e)
{
	size_t	 depth = 0;
	int	 esc = 0;

	if (p >= e)
		return NULL;
	if (*p == '"')
		return string_end(p, e, &esc);
	if (*p != '{' && *p != '[') {
		/* A number or a literal: up to what ends it. */
		while (p < e && *p != ',' && *p != '}' && *p != ']' &&
		    *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
		return p;
	}
	while (p < e) {
		if (*p == '"') {
			if ((p = string_end(p, e, &esc)) == NULL)
				return NULL;
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if ((*p == '}' || *p == ']') && --depth == 0)
			return p + 1;
		p++;
	}
	return NULL;
}

/*
 * The next reference token of *ptr (past its '/'), decoded (~0 ~1) into
 * tok; *ptr moves past it.  0, -1 if it is longer than tok (unsure), -2
 * if it holds a '~' that is no escape (jsondoc_get(): nothing).
 */
static int
next_token(const char **ptr, char *tok, size_t toksz, size_t *n)
{
	const char	*q = *ptr + 1;

	for (*n = 0; *q != '\0' && *q != '/'; q++) {
		if (*n + 1 >= toksz)
			return -1;
		if (*q == '~') {
			if (q[1] != '0' && q[1] != '1')
				return -2;
			q++;
			tok[(*n)++] = *q == '1' ? '/' : '~';
		} else
			tok[(*n)++] = *q;
	}
	*ptr = q;
	return 0;
}

enum jsonpeek
jsonpeek(const char *text, size_t sz, const char *pointer, const char **v,
    size_t *vlen)
{
	const char	*p, *e = text + sz, *ptr = pointer, *name, *q;
	char		 tok[256];
	size_t		 n;
	int		 esc, match, rc;

	if (*ptr != '\0' && *ptr != '/')
		return JSONPEEK_UNSURE;
	p = skip_ws(text, e);
	while (*ptr == '/') {
		if ((rc = next_token(&ptr, tok, sizeof(tok), &n)) != 0)
			return rc == -2 ? JSONPEEK_ABSENT : JSONPEEK_UNSURE;
		if (p >= e || *p == '[')
			return JSONPEEK_UNSURE;	/* an index: the parse's */
		if (*p != '{')
			return JSONPEEK_ABSENT;	/* a scalar on the way */
		p = skip_ws(p + 1, e);
		if (p < e && *p == '}')
			return JSONPEEK_ABSENT;
		for (;;) {
			if (p >= e || *p != '"')
				return JSONPEEK_UNSURE;
			esc = 0;
			name = p + 1;
			if ((q = string_end(p, e, &esc)) == NULL || esc)
				return JSONPEEK_UNSURE;
			match = (size_t)(q - 1 - name) == n &&
			    memcmp(name, tok, n) == 0;
			p = skip_ws(q, e);
			if (p >= e || *p != ':')
				return JSONPEEK_UNSURE;
			p = skip_ws(p + 1, e);
			if (match)
				break;
			if ((p = skip_value(p, e)) == NULL)
				return JSONPEEK_UNSURE;
			p = skip_ws(p, e);
			if (p < e && *p == ',') {
				p = skip_ws(p + 1, e);
				continue;
			}
			return p < e && *p == '}' ? JSONPEEK_ABSENT :
			    JSONPEEK_UNSURE;
		}
	}
	if (p >= e)
		return JSONPEEK_UNSURE;
	if (*p == '"') {
		esc = 0;
		if ((q = string_end(p, e, &esc)) == NULL || esc)
			return JSONPEEK_UNSURE;
		*v = p + 1;
		*vlen = (size_t)(q - 1 - (p + 1));
		return JSONPEEK_STRING;
	}
	if (*p == 'n')
		return e - p >= 4 && memcmp(p, "null", 4) == 0 ?
		    JSONPEEK_ABSENT : JSONPEEK_UNSURE;
	*v = NULL;
	*vlen = 0;
	if (*p != '{' && *p != '[' && (q = skip_value(p, e)) != NULL) {
		*v = p;
		*vlen = (size_t)(q - p);
	}
	return JSONPEEK_OTHER;
}
