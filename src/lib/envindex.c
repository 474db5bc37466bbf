/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the process environment's ONCEHOOK_ variables, indexed (see
 * lib/envindex.h).
 *
 * Open addressing, linear probing, a table at least twice the number
 * of variables, FNV-1a over the name.  Built once, read many times,
 * never grown.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/envindex.h"

#define PREFIX		"ONCEHOOK_"
#define PREFIX_LEN	(sizeof(PREFIX) - 1)

struct envindex {
	size_t		  mask;		/* slots - 1, slots a power of 2 */
	const char	**slot;		/* "NAME=value" or NULL */
};

static uint32_t
hash(const char *s, size_t n)
{
	uint32_t	h = 2166136261u;
	size_t		i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* The slot of the name s (n bytes): where it is, or the empty one where
 * it would go. */
static const char **
find(const struct envindex *ix, const char *s, size_t n)
{
	size_t	i;

	for (i = hash(s, n) & ix->mask; ix->slot[i] != NULL;
	    i = (i + 1) & ix->mask)
		if (strncmp(ix->slot[i], s, n) == 0 && ix->slot[i][n] == '=')
			break;
	return &ix->slot[i];
}

struct envindex *
envindex_new(char *const *env)
{
	struct envindex	 *ix;
	const char	**p, *eq;
	size_t		  n, slots;
	char *const	 *e;

	for (n = 0, e = env; e != NULL && *e != NULL; e++)
		if (strncmp(*e, PREFIX, PREFIX_LEN) == 0)
			n++;
	for (slots = 16; slots < 2 * n; slots *= 2)
		continue;
	if ((ix = malloc(sizeof(*ix))) == NULL)
		return NULL;
	if ((ix->slot = calloc(slots, sizeof(*ix->slot))) == NULL) {
		free(ix);
		return NULL;
	}
	ix->mask = slots - 1;
	for (e = env; e != NULL && *e != NULL; e++) {
		if (strncmp(*e, PREFIX, PREFIX_LEN) != 0 ||
		    (eq = strchr(*e, '=')) == NULL)
			continue;
		if (*(p = find(ix, *e, (size_t)(eq - *e))) == NULL)
			*p = *e;			/* the first wins */
	}
	return ix;
}

const char *
envindex_get(const char *name, void *arg)
{
	const struct envindex	*ix = arg;
	const char		*v;
	size_t			 n;

	if (ix == NULL || strncmp(name, PREFIX, PREFIX_LEN) != 0)
		return getenv(name);
	n = strlen(name);
	if (memchr(name, '=', n) != NULL)
		return NULL;		/* no variable's name has one */
	v = *find(ix, name, n);
	return v == NULL ? NULL : v + n + 1;
}

void
envindex_free(struct envindex *ix)
{
	if (ix == NULL)
		return;
	free(ix->slot);
	free(ix);
}
