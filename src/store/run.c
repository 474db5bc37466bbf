/* SPDX-License-Identifier: MIT */
/*
 * oncehook: what happens after a claim, written once over the engine's
 * primitives (store/engine.h): a failed attempt counted and, at the
 * endpoint's PARK_AFTER, the event parked (store_failed()); a stored
 * event run again by hand (store_replay()) or by the work loop
 * (store_work()).
 *
 * A run takes its event under a lock that orders it against every other
 * run of it (SQLite's write lock, MariaDB's row lock), runs the
 * endpoint's current actions and marks it processed in the same
 * transaction, so that its effects happen once whoever else runs it at
 * the same moment.  A run whose actions fail is rolled back and noted
 * in a transaction of its own: one more attempt, its error, the next
 * run after a backoff, or dead at the endpoint's MAX_ATTEMPTS.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "pipeline/event.h"
#include "store/engine.h"
#include "store/store.h"

int
store_taken_fill(const struct conf *cf, struct store_taken *t, long long id,
    const char *name, const char *key, const char *type, const char *hash,
    const char *payload, size_t len, long long received_at,
    long long attempts, const char *status)
{
	memset(t, 0, sizeof(*t));
	t->id = id;
	t->attempts = attempts;
	snprintf(t->status, sizeof(t->status), "%s", status != NULL ? status :
	    "");
	snprintf(t->name, sizeof(t->name), "%s", name);
	if (conf_endpoint_index(cf, name, &t->endpoint) == -1)
		t->endpoint = cf->nendpoints;	/* not ours */
	if ((t->ev = calloc(1, sizeof(*t->ev))) == NULL ||
	    (t->payload = malloc(len + 1)) == NULL)
		goto fail;
	memcpy(t->payload, payload, len);
	t->payload[len] = '\0';
	if (event_stored(t->ev, key, type, hash != NULL ? hash : "",
	    t->payload, len, received_at) != HOOK_OK)
		goto fail;
	return 0;
fail:
	store_taken_clear(t);
	return -1;
}

void
store_taken_clear(struct store_taken *t)
{
	if (t->ev != NULL) {
		event_clear(t->ev);
		free(t->ev);
	}
	free(t->payload);
	memset(t, 0, sizeof(*t));
}

enum hook_err
store_failed(struct store *s, size_t endpoint, const struct event *ev,
    const char *error, int park_after, long long *attempts)
{
	const struct store_ops		*o = s->ops;
	const struct conf_endpoint	*ep = &s->cf->endpoints[endpoint];
	long long			 now = (long long)time(NULL);
	enum hook_err			 er = HOOK_EACTION;
	char				 why[200], text[ENGINE_ERROR_MAX];
	int				 rc, found = 0, parked = 0;

	*attempts = 0;
	error = utf8_text(text, sizeof(text), error);
	if (o->usable != NULL && o->usable(s) != 0)
		return HOOK_EBUSY;
	if ((rc = o->tx_begin(s)) != 0 ||
	    (rc = o->count_failure(s, endpoint, ev, error, now, attempts)) != 0)
		goto fail;
	if (park_after > 0 && *attempts >= park_after && ep->replay_guard) {
		/* Under the lock: the payload recorded under another key
		 * since is a duplicate, never parked to be run again. */
		if ((rc = o->find_payload(s, endpoint, ev, &found)) != 0)
			goto fail;
		if (found) {
			er = found == 2 ? HOOK_PARKED : HOOK_DUP;
			park_after = 0;		/* nothing to park */
		}
	}
	if (park_after > 0 && *attempts >= park_after) {
		/* work retries it in the background, after the backoff. */
		if ((rc = o->park(s, endpoint, ev, error, *attempts, now +
		    store_backoff(*attempts, STORE_BACKOFF_FIRST,
		    STORE_BACKOFF_CAP), &parked)) != 0)
			goto fail;
		/* Parked only if no process recorded the key meanwhile. */
		if (parked)
			er = HOOK_PARKED;
	}
	if ((rc = o->tx_commit(s)) != 0)
		goto fail;
	o->tx_end(s);
	return er;
fail:
	o->why(s, "counting a failed attempt", why, sizeof(why));
	log_warnx("store: %s", why);
	o->note(s, rc);
	o->tx_rollback(s);
	o->tx_end(s);
	return HOOK_EACTION;
}

/* Note a failed run in its own transaction: one more attempt (the
 * caller's count), its error, the next run after the backoff, or dead
 * at max.  Failures are logged. */
static void
run_failed(struct store *s, long long id, const char *error,
    long long attempts, long long max, long long now)
{
	const struct store_ops	*o = s->ops;
	char			 why[200], text[ENGINE_ERROR_MAX];
	int			 rc;

	error = utf8_text(text, sizeof(text), error);
	if ((rc = o->tx_begin(s)) == 0 &&
	    (rc = o->run_failed(s, id, error, max, now + store_backoff(attempts,
	    STORE_BACKOFF_FIRST, STORE_BACKOFF_CAP))) == 0 &&
	    (rc = o->tx_commit(s)) == 0) {
		o->tx_end(s);
		return;
	}
	o->why(s, "noting a failed run of its actions", why, sizeof(why));
	log_warnx("store: %s", why);
	o->note(s, rc);
	o->tx_rollback(s);
	o->tx_end(s);
}

/* One attempt at store_replay(); *again 1 if it failed because the
 * server ended its transaction for reasons of its own (a deadlock, a
 * Galera certification conflict with another node's run of the key). */
static enum store_replay
replay_once(struct store *s, size_t endpoint, const char *key, int dry_run,
    char *why, size_t whysz, int *again)
{
	const struct store_ops		*o = s->ops;
	const struct conf_endpoint	*ep = &s->cf->endpoints[endpoint];
	struct store_taken		 t;
	enum store_replay		 res = REPLAY_ERROR;
	enum hook_err			 er;
	long long			 now = (long long)time(NULL);
	int				 rc, found = 0, changed = 0;

	memset(&t, 0, sizeof(t));
	why[0] = '\0';
	*again = 0;
	if (o->ready(s, endpoint, NULL, why, whysz) != HOOK_OK)
		return REPLAY_ERROR;
	if (o->usable != NULL && (rc = o->usable(s)) != 0) {
		o->why(s, "replay", why, whysz);
		return REPLAY_ERROR;
	}
	/* The status is read under the lock: two replays, work and a
	 * live delivery of the key cannot both run its actions. */
	if ((rc = o->tx_begin(s)) != 0 ||
	    (rc = o->take(s, ep->name, key, now, 0, 0, &t, &found)) != 0)
		goto fail;
	if (!found) {
		res = REPLAY_NONE;
		goto out;
	}
	if (strcmp(t.status, "processed") == 0) {
		res = REPLAY_ALREADY;
		goto out;
	}
	snprintf(why, whysz, "%s", t.status);
	if (dry_run) {
		res = REPLAY_WOULD;
		goto out;
	}
	if ((er = o->actions(s, endpoint, t.ev, &rc, why, whysz)) != HOOK_OK) {
		if (er == HOOK_EBUSY)
			goto fail;	/* the storage's: not an attempt */
		o->note(s, rc);
		o->tx_rollback(s);
		o->tx_end(s);
		run_failed(s, t.id, why, t.attempts + 1, ep->max_attempts, now);
		res = REPLAY_FAILED;
		goto done;
	}
	if ((rc = o->processed(s, t.id, now, t.attempts + 1, &changed)) !=
	    0 || (rc = o->tx_commit(s)) != 0)
		goto fail;
	o->tx_end(s);
	why[0] = '\0';
	res = REPLAY_DONE;
	goto done;
fail:
	*again = o->ended(s, rc) == ENGINE_AGAIN;
	o->why(s, "replay", why, whysz);
	o->note(s, rc);
out:
	o->tx_rollback(s);
	o->tx_end(s);
done:
	store_taken_clear(&t);
	return res;
}

/*
 * A replay that lost its transaction to another run of the key (on
 * another node of a cluster: its commit failed certification) is made
 * again, and then finds the key processed, as a replay waiting for the
 * other's lock on one server does: 3 attempts in all (2 reruns), the
 * last one's answer kept.
 */
enum store_replay
store_replay(struct store *s, size_t endpoint, const char *key, int dry_run,
    char *why, size_t whysz)
{
	enum store_replay	 r;
	char			 k[160], w[300];
	int			 again = 0, tries = 0;

	while ((r = replay_once(s, endpoint, key, dry_run, why, whysz,
	    &again)) == REPLAY_ERROR && again && ++tries < 3)
		log_info("store: replay of key=\"%s\": %s (the server ended "
		    "the transaction): running it again", log_escape(k,
		    sizeof(k), key), log_escape(w, sizeof(w), why));
	return r;
}

/*
 * One attempt at store_work(): in a deferred transaction (where the
 * engine has one), or in tx_begin's, which the second attempt uses
 * when the first found the database changed under its reads.  The
 * event's row is taken even if another run holds it (wait: waited
 * for, up to the lock wait), else passed by.
 */
static enum store_work
work_once(struct store *s, const char *endpoint, const char *key,
    long long now, long long lead, struct store_work_item *w, int deferred,
    int wait)
{
	const struct store_ops		*o = s->ops;
	const struct conf_endpoint	*ep;
	struct store_taken		 t;
	enum store_work			 res = WORK_ERROR;
	enum hook_err			 er;
	int				 rc, found = 0, changed = 0;

	memset(&t, 0, sizeof(t));
	memset(w, 0, sizeof(*w));
	if (o->usable != NULL && (rc = o->usable(s)) != 0) {
		o->why(s, "work", w->why, sizeof(w->why));
		return WORK_BUSY;
	}
	if ((rc = deferred ? o->tx_begin_deferred(s) : o->tx_begin(s)) != 0)
		goto fail;
	if ((rc = o->take(s, endpoint, key, now, lead, !wait, &t, &found)) !=
	    0)
		goto fail;
	/* By key: only an event whose actions are still to run. */
	if (!found || (endpoint != NULL && strcmp(t.status, "received") != 0 &&
	    strcmp(t.status, "failed") != 0)) {
		res = WORK_IDLE;
		goto out;
	}
	snprintf(w->endpoint, sizeof(w->endpoint), "%s", t.name);
	snprintf(w->key, sizeof(w->key), "%s", t.ev->key);
	w->attempts = t.attempts + 1;
	if (t.endpoint == s->cf->nendpoints) {
		snprintf(w->why, sizeof(w->why), "endpoint %s is not "
		    "configured here", t.name);
		goto out;
	}
	ep = &s->cf->endpoints[t.endpoint];
	/*
	 * An actions file that no longer prepares fails its event like a
	 * failing action: counted, not run again at once, so the other
	 * endpoints' events go on.
	 */
	rc = 0;
	if ((er = o->ready(s, t.endpoint, NULL, w->why, sizeof(w->why))) ==
	    HOOK_OK)
		er = o->actions(s, t.endpoint, t.ev, &rc, w->why,
		    sizeof(w->why));
	if (er != HOOK_OK) {
		if (er == HOOK_EBUSY) {
			res = WORK_BUSY;	/* the storage's, not the
						   action's */
			o->note(s, rc);
			goto out;
		}
		o->note(s, rc);
		o->tx_rollback(s);
		o->tx_end(s);
		run_failed(s, t.id, w->why, w->attempts, ep->max_attempts, now);
		res = w->attempts >= ep->max_attempts ? WORK_DEAD :
		    WORK_FAILED;
		goto done;
	}
	/* From received or failed only: whoever else ran it at the same
	 * moment (work, a replay, the claimer) commits nothing. */
	if ((rc = o->processed(s, t.id, now, w->attempts, &changed)) != 0)
		goto fail;
	if (!changed) {
		res = WORK_RACED;
		goto out;
	}
	if ((rc = o->tx_commit(s)) != 0)
		goto fail;
	res = WORK_DONE;
	o->tx_end(s);
	goto done;
fail:
	o->why(s, "work", w->why, sizeof(w->why));
	res = o->classify(s, rc) == HOOK_EBUSY ? WORK_BUSY : WORK_ERROR;
	o->note(s, rc);
out:
	o->tx_rollback(s);
	o->tx_end(s);
done:
	store_taken_clear(&t);
	return res;
}

enum store_work
store_work(struct store *s, const char *endpoint, const char *key,
    long long now, long long lead, struct store_work_item *w)
{
	const struct store_ops	*o = s->ops;
	enum store_work		 r;
	char			 name[CONF_NAME_MAX], lkey[EVENT_KEY_MAX + 1];
	int			 rc, found = 0;

	/*
	 * The oldest due event, where the engine leases it first: in a
	 * transaction of its own, so that runners on one server or on
	 * several nodes take different events, and the run, by its key,
	 * takes it under its lock as a run by key does.  A due event whose
	 * row another run holds (a claimer running it, a replay) is passed
	 * by; *found 0 when each due one is held: nothing to do here.  What
	 * another run made of the leased one meanwhile (processed) is a
	 * race lost, not the end of the work.
	 */
	if (endpoint == NULL && o->lease != NULL) {
		memset(w, 0, sizeof(*w));
		if ((o->usable != NULL && (rc = o->usable(s)) != 0) ||
		    (rc = o->lease(s, now, lead, now + STORE_RUN_LEASE, name,
		    sizeof(name), lkey, sizeof(lkey), &found)) != 0) {
			o->why(s, "work", w->why, sizeof(w->why));
			r = o->classify(s, rc) == HOOK_EBUSY ? WORK_BUSY :
			    WORK_ERROR;
			o->note(s, rc);
			return r;
		}
		if (found != 1)
			return found == 2 ? WORK_RACED : WORK_IDLE;
		/* Ours now: waited for if another's lease step holds it
		 * for a moment (passing it by would leave it leased, not
		 * run, until the lease ends). */
		r = work_once(s, name, lkey, now, lead, w, 0, 1);
		return r == WORK_IDLE ? WORK_RACED : r;
	}
	/*
	 * Reads first, without the lock; if a commit came between, once
	 * more holding it from the start (no starving under steady
	 * claims).  Always read-first: while a run holds the lock, claims
	 * wait, and answering them fast is what deferred mode is for (a
	 * run that must be made twice costs the work loop, not them).
	 */
	if (o->tx_begin_deferred == NULL)
		return work_once(s, endpoint, key, now, lead, w, 0, 0);
	if ((r = work_once(s, endpoint, key, now, lead, w, 1, 0)) ==
	    WORK_BUSY)
		r = work_once(s, endpoint, key, now, lead, w, 0, 0);
	return r;
}
