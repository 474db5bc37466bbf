/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the store's front (store/store.h, store/outbox.h): the backend that
 * ONCEHOOK_DB names, called through its table (store/engine.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "lib/crypto.h"
#include "store/actfile.h"
#include "store/engine.h"
#include "store/outbox.h"
#include "store/store.h"

struct store *
store_open(const struct conf *cf, int flags, char *err, size_t errsz)
{
	struct store	*s;

	(void)store_connect(cf, flags, &s, err, errsz);
	return s;
}

const char *
store_engine(const struct store *s)
{
	return s->ops->engine;
}

int
store_claims_direct(const struct store *s)
{
	return (s->ops->caps & ENGINE_DIRECT_CLAIM) != 0;
}

int
store_schema(const struct store *s)
{
	return s->ops->version(s);
}

int
store_about(struct store *s, char *buf, size_t bufsz)
{
	return s->ops->about(s, buf, bufsz);
}

int
store_broken(const struct store *s)
{
	return s->ops->broken(s);
}

void
store_drop_broken(struct store **st)
{
	if (*st != NULL && store_broken(*st)) {
		store_close(*st);
		*st = NULL;
	}
}

int
store_idle(struct store *s)
{
	return s->ops->idle(s);
}

enum store_copy
store_upkeep(struct store *s, enum store_upkeep what)
{
	return s->ops->upkeep != NULL ? s->ops->upkeep(s, what) :
	    STORE_COPY_NONE;
}

void
store_process_init(void)
{
	sqs_process_init();
}

void
store_keep_actions(const struct conf *cf)
{
	size_t	 i;

	actfile_keep(1);
	for (i = 0; i < cf->nendpoints; i++)
		if (cf->endpoints[i].actions != NULL &&
		    conf_actions_first(cf, i) == i)
			actfile_preload(cf->endpoints[i].actions);
}

void
store_close(struct store *s)
{
	if (s != NULL)
		s->ops->close(s);
}

int
store_leave(struct store *s)
{
	/* Still pointed to until the exit, which lets it go: not lost
	 * (a leak checker would say so). */
	static struct store *volatile	 left;

	if (s == NULL || s->ops->leave == NULL || !s->ops->leave(s))
		return 0;
	left = s;
	return left != NULL;
}

long long
store_list(struct store *s, const char *endpoint, const char *key,
    const char *status, long long limit, int with_payload, store_row_fn fn,
    void *arg, char *err, size_t errsz)
{
	return s->ops->list(s, endpoint, key, status, limit, with_payload, fn,
	    arg, err, errsz);
}

int
store_rows(struct store *s, long long now, struct store_counts *rows,
    char *err, size_t errsz)
{
	return s->ops->rows(s, now, rows, err, errsz);
}

long long
outbox_retry(struct store *s, long long now, int dead, int waiting, char *err,
    size_t errsz)
{
	return s->ops->ob_retry(s, now, dead, waiting, err, errsz);
}

long long
outbox_list(struct store *s, const char *id, const char *endpoint,
    const char *key, const char *status, long long limit, int with_payload,
    outbox_row_fn fn, void *arg, char *err, size_t errsz)
{
	return s->ops->ob_list(s, id, endpoint, key, status, limit,
	    with_payload, fn, arg, err, errsz);
}

int
outbox_topics(struct store *s, void (*fn)(void *, const char *, const char *,
    long long, long long), void *arg, char *err, size_t errsz)
{
	return s->ops->ob_topics(s, fn, arg, err, errsz);
}

long long
outbox_prune(struct store *s, long long now, int dry_run, int dead, char *err,
    size_t errsz)
{
	return s->ops->ob_prune(s, now, dry_run, dead, err, errsz);
}

long long
store_backoff(long long attempts, long long first, long long cap)
{
	unsigned int	 r = 0;
	long long	 d = first > 0 ? first : 1;

	while (attempts-- > 1 && d < cap)
		d *= 2;
	if (d > cap)
		d = cap;
	if (crypto_random(&r, sizeof(r)) == -1)
		r = 0;
	d = d / 2 + (long long)((double)(d - d / 2) * (double)r /
	    4294967296.0);
	return d > 0 ? d : 1;		/* a retry is never at once */
}
