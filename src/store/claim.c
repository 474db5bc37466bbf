/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the claim, written once (store/store.h's rules 1 to 4), over
 * the engine's primitives (store/engine.h): the lock-free lookups, the
 * conflict row, one claim in its savepoint, a batch in one transaction
 * and its retry rule.
 *
 * One claim, in the open transaction (and its savepoint when it shares
 * the transaction with others):
 *
 *   insert (endpoint, key) --not new--> find the row again under the
 *      |                                lock: duplicate, parked, or a
 *      | new                            conflict (its row recorded)
 *      v
 *   replay guard (if the endpoint has one) --payload known--> undo: DUP
 *      |
 *   deferred endpoint? --yes--> ACCEPTED (work runs the actions)
 *      |
 *   run the actions --failed--> undo this claim alone: EACTION / EBUSY
 *      |
 *     OK
 *
 * A claim that must not stay is "kept" (its result decided by its own
 * failure): rolled back to its savepoint, or, alone in its transaction,
 * with the transaction.  What an engine error leaves of the transaction
 * (engine_ops.ended) decides the rest: a statement that failed alone
 * fails its claim alone where the engine undoes statements alone
 * (ENGINE_STATEMENT_ALONE), else the batch; a transaction the engine
 * rolled back because of one claim runs again without that claim; one
 * the server ended for reasons of its own (a deadlock) runs once more
 * whole; a lost connection ends it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "lib/log.h"
#include "pipeline/event.h"
#include "store/engine.h"
#include "store/store.h"

/*
 * kept: a claim decided by its own failure before any transaction
 * (ready failed) or in one (its actions failed; the claim not recorded),
 * whose result stands whatever the batch meets; or one undone because
 * the replay guard found its payload under another key, whose DUP stands
 * only if the transaction commits (the row it found may be another
 * claim's of the same batch, not yet durable).
 */
#define KEPT_IN_TX	1
#define KEPT_BEFORE	2
#define KEPT_IF_COMMIT	3

/* What one attempt at a batch came to. */
enum batch {
	BATCH_DONE,		/* committed, or nothing left to commit */
	BATCH_WITHOUT,		/* a claim's failure ended the transaction:
				   again without it */
	BATCH_FAILED,		/* the transaction failed (the code) */
	BATCH_ITEM,		/* whole: a claim failed, nothing stays */
};

enum hook_err
store_lookup(struct store *s, size_t endpoint, const struct event *ev)
{
	const struct store_ops	*o = s->ops;
	enum hook_err		 found = HOOK_ESYSTEM;
	char			 why[200];
	int			 rc;

	if (o->usable != NULL && (rc = o->usable(s)) != 0)
		return o->classify(s, rc);
	/* A request's first statement: on a connection found lost, once
	 * more on a new one (a read; nothing was done). */
	if ((rc = o->find_key(s, endpoint, ev, &found)) != 0 &&
	    o->revive != NULL && o->revive(s, rc) == 0)
		rc = o->find_key(s, endpoint, ev, &found);
	if (rc == 0)
		return found;
	o->why(s, "lookup", why, sizeof(why));
	log_warnx("store: %s", why);
	o->note(s, rc);
	return o->classify(s, rc);
}

enum hook_err
store_replayed(struct store *s, size_t endpoint, const struct event *ev)
{
	const struct store_ops	*o = s->ops;
	char			 why[200];
	int			 rc, found = 0;

	if ((rc = o->find_payload(s, endpoint, ev, &found)) != 0) {
		o->why(s, "payload lookup", why, sizeof(why));
		log_warnx("store: %s", why);
		o->note(s, rc);
		return o->classify(s, rc);
	}
	return found == 2 ? HOOK_PARKED : found ? HOOK_DUP : HOOK_OK;
}

enum hook_err
store_conflict(struct store *s, size_t endpoint, const struct event *ev)
{
	const struct store_ops	*o = s->ops;
	char			 why[200];
	int			 rc;

	if ((rc = o->tx_begin(s)) == 0 &&
	    (rc = o->conflict(s, endpoint, ev)) == 0 &&
	    (rc = o->tx_commit(s)) == 0) {
		o->tx_end(s);
		return HOOK_OK;
	}
	o->why(s, "recording a key conflict", why, sizeof(why));
	log_warnx("store: %s", why);
	o->note(s, rc);
	o->tx_rollback(s);
	o->tx_end(s);
	return o->classify(s, rc);
}

/* Undo c (back to its savepoint; alone, the caller rolls back), kept
 * as said.  A failed undo is the batch's failure, not c's. */
static int
undo(struct store *s, struct store_claim *c, int sp, int kept)
{
	int	 rc;

	c->kept = kept;
	if (sp && (rc = s->ops->savepoint(s, ENGINE_SP_UNDO)) != 0) {
		c->kept = 0;
		return rc;
	}
	return 0;
}

/*
 * Claim one event inside the open transaction.  Returns 0 with
 * c->result set (c->kept if the claim must not stay: undone to its
 * savepoint, or, alone (!sp), for the caller to roll back), or the code
 * that ends the whole attempt (c->kept if the claim's own failure ended
 * the transaction).
 */
static int
claim_one(struct store *s, struct store_claim *c, long long now, int sp)
{
	const struct store_ops		*o = s->ops;
	const struct conf_endpoint	*ep = &s->cf->endpoints[c->endpoint];
	const char			*step = "savepoint";
	enum hook_err			 er;
	int				 rc, isnew = 0, found = 0;

	if (sp && (rc = o->savepoint(s, ENGINE_SP_SET)) != 0)
		goto fail;
	step = "insert";
	if ((rc = o->insert(s, c->endpoint, c->ev, now, &isnew)) != 0)
		goto fail;
	if (!isnew) {
		/* Claimed by another process since our lookup (and
		 * committed: the insert waited for it). */
		step = "lookup";
		if ((rc = o->find_key(s, c->endpoint, c->ev, &c->result)) !=
		    0)
			goto fail;
		if (c->result == HOOK_OK) {
			/* No row, yet none inserted: never "processed". */
			snprintf(c->why, sizeof(c->why), "the claim was not "
			    "recorded");
			c->result = HOOK_ESYSTEM;
			return undo(s, c, sp, KEPT_IN_TX);
		}
		if (c->result == HOOK_ECONFLICT &&
		    (rc = o->conflict(s, c->endpoint, c->ev)) != 0)
			goto fail;
		goto keep;
	}
	if (ep->replay_guard) {
		step = "payload lookup";
		if ((rc = o->guard(s, c->endpoint, c->ev, &found)) != 0)
			goto fail;
		if (found) {
			c->result = found == 2 ? HOOK_PARKED : HOOK_DUP;
			snprintf(c->why, sizeof(c->why), "payload already "
			    "recorded under another key");
			return undo(s, c, sp, KEPT_IF_COMMIT);
		}
	}
	if (ep->deferred) {
		/* Claimed durably; the actions run after the answer. */
		c->result = HOOK_ACCEPTED;
		goto keep;
	}
	if ((er = o->actions(s, c->endpoint, c->ev, &rc, c->why,
	    sizeof(c->why))) != HOOK_OK) {
		/* Only this event rolls back; the busy kinds ask a retry. */
		c->result = er;
		switch (o->ended(s, rc)) {
		case ENGINE_STATEMENT:
			return undo(s, c, sp, KEPT_IN_TX);
		case ENGINE_TRANSACTION:
			o->note(s, rc);
			c->kept = KEPT_IN_TX;
			return rc;
		default:
			return rc;	/* the batch's, not the claim's */
		}
	}
	c->result = HOOK_OK;
keep:
	step = "savepoint";
	if (sp && (rc = o->savepoint(s, ENGINE_SP_KEEP)) != 0)
		goto fail;
	return 0;
fail:
	o->why(s, step, c->why, sizeof(c->why));
	c->result = o->classify(s, rc);
	/* A statement's error that undid that statement only: in a batch,
	 * this claim fails alone, back to its savepoint. */
	if (sp && (o->caps & ENGINE_STATEMENT_ALONE) &&
	    o->ended(s, rc) == ENGINE_STATEMENT) {
		if ((rc = undo(s, c, sp, KEPT_IN_TX)) == 0)
			return 0;
		o->why(s, "savepoint", c->why, sizeof(c->why));
	}
	return rc;
}

/*
 * One attempt at the batch: begin, each claim not yet decided by its
 * own failure, commit.  *rc is the code of a failed transaction, and
 * *step where it failed.
 */
static enum batch
claim_batch(struct store *s, struct store_claim *claims, size_t n,
    long long now, const char **step, int *rc, int whole)
{
	const struct store_ops	*o = s->ops;
	size_t			 i, stay = 0;

	*step = "begin";
	if ((*rc = o->tx_begin(s)) != 0)
		return BATCH_FAILED;
	for (i = 0; i < n; i++) {
		if (claims[i].kept)
			continue;
		claims[i].result = HOOK_ESYSTEM;
		claims[i].why[0] = '\0';
		*step = "claim";
		if ((*rc = claim_one(s, &claims[i], now, n > 1)) != 0) {
			/* A request's items stand or fall together. */
			if (whole && claims[i].kept == KEPT_IN_TX &&
			    o->ended(s, *rc) == ENGINE_TRANSACTION) {
				o->tx_rollback(s);
				*rc = 0;
				return BATCH_ITEM;
			}
			/* The engine rolled back because of this claim:
			 * again without it. */
			if (claims[i].kept == KEPT_IN_TX && n > 1 &&
			    o->ended(s, *rc) == ENGINE_TRANSACTION) {
				o->tx_rollback(s);
				return BATCH_WITHOUT;
			}
			return BATCH_FAILED;
		}
		if (whole && claims[i].kept == KEPT_IN_TX) {
			o->tx_rollback(s);
			return BATCH_ITEM;
		}
		if (!claims[i].kept)
			stay++;
	}
	*step = "commit";
	if (stay == 0) {
		/* Nothing is to stay (a single claim undone). */
		o->tx_rollback(s);
		return BATCH_DONE;
	}
	return (*rc = o->tx_commit(s)) == 0 ? BATCH_DONE : BATCH_FAILED;
}

/* The transaction did not commit: a guard's DUP may have found a claim
 * of this batch; it is decided again (or fails with the batch). */
static void
unguard(struct store_claim *claims, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (claims[i].kept == KEPT_IF_COMMIT) {
			claims[i].kept = 0;
			claims[i].why[0] = '\0';
		}
}

/*
 * Item f of a request failed by itself (its actions, its section not
 * preparing, its storage), nothing committed: every other item is
 * rolled back with it, its result f's (the request's outcome), its why
 * saying so.  Returns f's result.
 */
static enum hook_err
items_failed(struct store *s, struct store_claim *claims, size_t n,
    size_t f)
{
	size_t	 i;

	(void)s;
	for (i = 0; i < n; i++) {
		if (i == f)
			continue;
		claims[i].result = claims[f].result;
		claims[i].kept = 0;
		snprintf(claims[i].why, sizeof(claims[i].why), "not applied: "
		    "item %zu of the request failed", f + 1);
	}
	return claims[f].result;
}

/*
 * whole: the claims are one request's items (store_claim_items()): the
 * first that fails by itself fails them all, nothing of them stays.
 */
static enum hook_err
claim_all(struct store *s, struct store_claim *claims, size_t n, int whole)
{
	const struct store_ops	*o = s->ops;
	long long		 now = (long long)time(NULL);
	const char		*step = "begin";
	enum hook_err		 er;
	enum batch		 b = BATCH_FAILED;
	size_t			 i, tries;
	int			 rc = 0, again = 0;
	char			 w[sizeof(claims->why)];

	for (i = 0; i < n; i++) {
		claims[i].result = HOOK_ESYSTEM;
		claims[i].why[0] = '\0';
		claims[i].kept = 0;
		/* An actions file or section that does not prepare fails
		 * its claims alone, before the transaction (its preparing
		 * would hold the lock). */
		if ((er = o->ready(s, claims[i].endpoint, claims[i].ev,
		    claims[i].why, sizeof(claims[i].why))) != HOOK_OK) {
			claims[i].result = er;
			claims[i].kept = KEPT_BEFORE;
		}
	}
	if (n == 0)
		return HOOK_OK;
	for (i = 0; whole && i < n; i++)
		if (claims[i].kept)
			return items_failed(s, claims, n, i);
	/* Each attempt without a claim leaves one more out: at most n + 1,
	 * and one more for a transaction the server ended. */
	for (tries = 0; tries <= n + 1; tries++) {
		if ((b = claim_batch(s, claims, n, now, &step, &rc,
		    whole)) == BATCH_DONE) {
			o->tx_end(s);
			return HOOK_OK;
		}
		if (b == BATCH_ITEM) {
			o->tx_end(s);
			for (i = 0; i < n && claims[i].kept != KEPT_IN_TX; i++)
				;
			return items_failed(s, claims, n, i);
		}
		if (b == BATCH_WITHOUT) {
			unguard(claims, n);
			continue;
		}
		if (again || o->ended(s, rc) != ENGINE_AGAIN)
			break;
		o->why(s, step, w, sizeof(w));
		log_info("store: %s (the server ended the transaction): "
		    "running the claims again", w);
		o->tx_rollback(s);
		again = 1;
		/* Decided in the transaction rolled back: again. */
		for (i = 0; i < n; i++)
			if (claims[i].kept == KEPT_IN_TX ||
			    claims[i].kept == KEPT_IF_COMMIT)
				claims[i].kept = 0;
	}
	/* Rule 4: a COMMIT that failed (or whose answer was lost) is the
	 * storage's: 503 for all, never 200. */
	er = strcmp(step, "commit") == 0 ? HOOK_EBUSY : o->classify(s, rc);
	o->why(s, step, w, sizeof(w));
	if (again && o->ended(s, rc) == ENGINE_AGAIN)
		strncat(w, " (twice)", sizeof(w) - strlen(w) - 1);
	o->note(s, rc);
	o->tx_rollback(s);
	o->tx_end(s);
	unguard(claims, n);
	for (i = 0; i < n; i++) {
		/* A result its own failure set stays; the others failed with
		 * the transaction. */
		if (claims[i].kept)
			continue;
		claims[i].result = er;
		if (claims[i].why[0] == '\0')
			snprintf(claims[i].why, sizeof(claims[i].why), "%s",
			    w);
	}
	return er;
}

enum hook_err
store_claim(struct store *s, struct store_claim *claims, size_t n)
{
	return claim_all(s, claims, n, 0);
}

enum hook_err
store_claim_items(struct store *s, struct store_claim *claims, size_t n)
{
	return claim_all(s, claims, n, 1);
}
