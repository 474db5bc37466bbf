/* SPDX-License-Identifier: MIT */
/*
 * oncehook: a growable byte buffer (see buf.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"

/* The first allocation; then the capacity doubles. */
#define BUF_FIRST	256

int
buf_room(struct buf *b, size_t more)
{
	char	*p;
	size_t	 cap;

	if (more > (size_t)-1 - b->len - 1)
		return -1;
	if (b->len + more + 1 <= b->cap)
		return 0;
	for (cap = b->cap ? b->cap : BUF_FIRST; cap < b->len + more + 1;
	    cap *= 2)
		if (cap > (size_t)-1 / 2)
			return -1;
	if ((p = realloc(b->p, cap)) == NULL)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

int
buf_add(struct buf *b, const void *s, size_t n)
{
	if (buf_room(b, n) == -1)
		return -1;
	if (n > 0)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}
