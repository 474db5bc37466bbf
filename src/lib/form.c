/* SPDX-License-Identifier: MIT */
/*
 * oncehook: application/x-www-form-urlencoded bodies (see lib/form.h).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crypto.h"
#include "lib/form.h"
#include "lib/utf8.h"

/* Decode s[0..len) into o ('+' a space, %XX a byte); returns the size. */
static size_t
decode(const char *s, size_t len, char *o)
{
	size_t		 i, n = 0;
	unsigned char	 b;

	for (i = 0; i < len; i++) {
		if (s[i] == '+')
			o[n++] = ' ';
		else if (s[i] == '%' && len - i >= 3 &&
		    crypto_unhex(s + i + 1, 2, &b, 1) == 1) {
			o[n++] = (char)b;
			i += 2;
		} else
			o[n++] = s[i];
	}
	o[n] = '\0';
	return n;
}

int
form_parse(const char *body, size_t sz, struct form *f)
{
	const char	*p = body, *end = body + sz, *amp, *eq;
	size_t		 pairs = 1, i, len, o = 0;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < sz; i++)
		pairs += body[i] == '&';
	/* Each pair decodes to at most its own bytes, plus two NULs. */
	if ((f->v = calloc(pairs, sizeof(*f->v))) == NULL ||
	    (f->buf = malloc(sz + 2 * pairs + 1)) == NULL) {
		form_clear(f);
		return -1;
	}
	for (; p < end; p = amp + 1) {
		if ((amp = memchr(p, '&', (size_t)(end - p))) == NULL)
			amp = end;
		if ((len = (size_t)(amp - p)) == 0)
			continue;
		if ((eq = memchr(p, '=', len)) == NULL)
			eq = amp;
		f->v[f->n].name = f->buf + o;
		f->v[f->n].namesz = decode(p, (size_t)(eq - p), f->buf + o);
		o += f->v[f->n].namesz + 1;
		f->v[f->n].value = f->buf + o;
		f->v[f->n].valuesz = eq < amp ? decode(eq + 1,
		    (size_t)(amp - eq - 1), f->buf + o) : 0;
		if (eq == amp)
			f->buf[o] = '\0';
		o += f->v[f->n].valuesz + 1;
		f->v[f->n].pos = f->n;
		f->n++;
		if (amp == end)
			break;
	}
	return 0;
}

void
form_clear(struct form *f)
{
	if (f == NULL)
		return;
	free(f->v);
	free(f->buf);
	memset(f, 0, sizeof(*f));
}

/* Bytes a[0..an) against b[0..bn), shorter first on a common prefix. */
static int
bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	int	 c;

	if ((c = memcmp(a, b, an < bn ? an : bn)) != 0)
		return c;
	return an < bn ? -1 : an > bn;
}

static int
by_name_value(const void *x, const void *y)
{
	const struct form_param	*a = x, *b = y;
	int			 c;

	if ((c = bytes_cmp(a->name, a->namesz, b->name, b->namesz)) != 0)
		return c;
	return bytes_cmp(a->value, a->valuesz, b->value, b->valuesz);
}

void
form_sort(struct form *f)
{
	if (f->n > 1)
		qsort(f->v, f->n, sizeof(*f->v), by_name_value);
}

/* Pairs by name, then by place: each name's pairs together, in order. */
static int
by_name_pos(const void *x, const void *y)
{
	const struct form_param	*a = *(const struct form_param *const *)x;
	const struct form_param	*b = *(const struct form_param *const *)y;
	int			 c;

	if ((c = bytes_cmp(a->name, a->namesz, b->name, b->namesz)) != 0)
		return c;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* A name's pairs: where they start in the sorted index, how many. */
struct group {
	size_t	 first;		/* pos of its first pair */
	size_t	 at, n;
};

static int
by_first(const void *x, const void *y)
{
	const struct group	*a = x, *b = y;

	return a->first < b->first ? -1 : a->first > b->first;
}

/* Write s[0..n) as a JSON string at o; returns the bytes written. */
static size_t
put_string(char *o, const char *s, size_t n)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 i, w = 0;
	unsigned char		 c;

	o[w++] = '"';
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			o[w++] = '\\';
			o[w++] = (char)c;
		} else if (c == '\b' || c == '\f' || c == '\n' || c == '\r' ||
		    c == '\t') {
			o[w++] = '\\';
			o[w++] = c == '\b' ? 'b' : c == '\f' ? 'f' :
			    c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else if (c < 0x20) {
			o[w++] = '\\';
			o[w++] = 'u';
			o[w++] = '0';
			o[w++] = '0';
			o[w++] = hex[c >> 4];
			o[w++] = hex[c & 15];
		} else
			o[w++] = (char)c;
	}
	o[w++] = '"';
	return w;
}

char *
form_json(const struct form *f, size_t *outsz, const char **why)
{
	const struct form_param	**ix = NULL;
	struct group		*g = NULL;
	char			*out = NULL;
	size_t			 i, j, ng = 0, cap = 3, w = 0;

	*why = NULL;
	for (i = 0; i < f->n; i++) {
		if (!utf8_valid(f->v[i].name, f->v[i].namesz) ||
		    !utf8_valid(f->v[i].value, f->v[i].valuesz)) {
			*why = "a form parameter is not UTF-8 text";
			return NULL;
		}
		/* Six bytes at most per byte (\u00XX), quotes, separators. */
		cap += 6 * (f->v[i].namesz + f->v[i].valuesz) + 8;
	}
	if ((ix = calloc(f->n + 1, sizeof(*ix))) == NULL ||
	    (g = calloc(f->n + 1, sizeof(*g))) == NULL ||
	    (out = malloc(cap)) == NULL)
		goto fail;
	for (i = 0; i < f->n; i++)
		ix[i] = &f->v[i];
	if (f->n > 1)
		qsort(ix, f->n, sizeof(*ix), by_name_pos);
	for (i = 0; i < f->n; i++) {
		if (i == 0 || bytes_cmp(ix[i]->name, ix[i]->namesz,
		    ix[i - 1]->name, ix[i - 1]->namesz) != 0) {
			g[ng].first = ix[i]->pos;
			g[ng].at = i;
			ng++;
		}
		g[ng - 1].n++;
	}
	if (ng > 1)
		qsort(g, ng, sizeof(*g), by_first);
	out[w++] = '{';
	for (i = 0; i < ng; i++) {
		if (i > 0)
			out[w++] = ',';
		w += put_string(out + w, ix[g[i].at]->name,
		    ix[g[i].at]->namesz);
		out[w++] = ':';
		if (g[i].n > 1)
			out[w++] = '[';
		for (j = 0; j < g[i].n; j++) {
			if (j > 0)
				out[w++] = ',';
			w += put_string(out + w, ix[g[i].at + j]->value,
			    ix[g[i].at + j]->valuesz);
		}
		if (g[i].n > 1)
			out[w++] = ']';
	}
	out[w++] = '}';
	out[w] = '\0';
	*outsz = w;
	free(ix);
	free(g);
	return out;
fail:
	free(ix);
	free(g);
	free(out);
	return NULL;
}
