/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the outbox's lease, written once over the engine's
 * primitives (store/engine.h): a deliverer takes the oldest due row with
 * a target, counting one more attempt and leasing it for a while under a
 * random token; the attempt's outcome is written only if the row still
 * holds that token (store/outbox.h).
 *
 * How a row becomes one deliverer's is the engines' one difference: with
 * row locks (ENGINE_ROW_LOCKS, MariaDB), it is picked inside the
 * transaction, locked, and rows others hold are skipped; without
 * (SQLite), it is picked by a plain read before the transaction (rows
 * waiting for a target are passed over without the write lock), and the
 * lease is a conditional update: still due, still at the attempt read.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crypto.h"
#include "lib/utf8.h"
#include "store/engine.h"
#include "store/outbox.h"
#include "store/store.h"

void
outbox_item_clear(struct outbox_item *it)
{
	free(it->payload);
	memset(it, 0, sizeof(*it));
}

enum outbox_take
outbox_take(struct store *s, long long now, long long lease,
    int (*has_target)(void *, const char *), void *arg,
    struct outbox_item *it, char *why, size_t whysz)
{
	const struct store_ops	*o = s->ops;
	int			 locks = (o->caps & ENGINE_ROW_LOCKS) != 0;
	int			 rc, found = 0, changed = 0, began = 0;

	memset(it, 0, sizeof(*it));
	why[0] = '\0';
	if (o->usable != NULL && (rc = o->usable(s)) != 0) {
		o->why(s, "taking an outbox row", why, whysz);
		return TAKE_BUSY;
	}
	if (!locks && (rc = o->ob_pick(s, now, has_target, arg, it,
	    &found)) != 0)
		goto fail;
	if (!locks && !found)
		return TAKE_NONE;
	began = 1;		/* a failed begin may hold the write lock */
	if ((rc = o->tx_begin(s)) != 0)
		goto fail;
	if (locks && (rc = o->ob_pick(s, now, has_target, arg, it, &found)) !=
	    0)
		goto fail;
	if (locks && found != 1) {
		o->tx_rollback(s);
		o->tx_end(s);
		return found == 2 ? TAKE_RACED : TAKE_NONE;
	}
	if (crypto_random(&it->lease, sizeof(it->lease)) == -1) {
		snprintf(why, whysz, "no random token");
		o->tx_rollback(s);
		o->tx_end(s);
		outbox_item_clear(it);
		return TAKE_ERROR;
	}
	it->lease &= 0x7fffffffffffffffLL;
	/* The lease counts from when the row is ours (the wait for the
	 * lock may have been long). */
	if ((rc = o->ob_lease(s, it, now, lease, &changed)) != 0 ||
	    (rc = o->tx_commit(s)) != 0)
		goto fail;
	o->tx_end(s);
	if (!changed) {
		outbox_item_clear(it);
		return TAKE_RACED;
	}
	return TAKE_ONE;
fail:
	o->why(s, "taking an outbox row", why, whysz);
	o->note(s, rc);
	if (began) {
		o->tx_rollback(s);
		o->tx_end(s);
	}
	outbox_item_clear(it);
	return o->classify(s, rc) == HOOK_EBUSY ? TAKE_BUSY : TAKE_ERROR;
}

/* Write an attempt's outcome (error NULL: delivered) if the row still
 * holds its lease: 1, 0 if not (nothing written), -1 on failure. */
static int
settle(struct store *s, const struct outbox_item *it, long long now,
    const char *error, long long next_at, long long max, char *why,
    size_t whysz)
{
	const struct store_ops	*o = s->ops;
	int			 rc, changed = 0;

	if (o->usable != NULL && (rc = o->usable(s)) != 0) {
		o->why(s, "noting an outbox attempt", why, whysz);
		return -1;
	}
	if ((rc = o->tx_begin(s)) == 0 &&
	    (rc = o->ob_settle(s, it, now, error, next_at, max, &changed)) ==
	    0 && (rc = o->tx_commit(s)) == 0) {
		o->tx_end(s);
		return changed ? 1 : 0;
	}
	o->why(s, "noting an outbox attempt", why, whysz);
	o->note(s, rc);
	o->tx_rollback(s);
	o->tx_end(s);
	return -1;
}

int
outbox_delivered(struct store *s, const struct outbox_item *it, long long now,
    char *why, size_t whysz)
{
	return settle(s, it, now, NULL, 0, 0, why, whysz);
}

int
outbox_failed(struct store *s, const struct outbox_item *it,
    const char *error, long long now, long long first, long long max_attempts,
    char *why, size_t whysz)
{
	char	 text[ENGINE_ERROR_MAX];
	int	 r;

	r = settle(s, it, now, utf8_text(text, sizeof(text), error),
	    now + store_backoff(it->attempts, first, OUTBOX_CAP),
	    max_attempts, why, whysz);
	return r == 1 && it->attempts >= max_attempts ? 2 : r;
}
