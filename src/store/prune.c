/* SPDX-License-Identifier: MIT */
/*
 * oncehook: pruning (store_prune()), written once over the engine's
 * prune primitive (store/engine.h): what took effect and is past its
 * retention, in short transactions of at most 500 rows each, so that
 * deliveries keep flowing while it runs; with dry_run, counted only.
 */
#include "config.h"

#include <stdio.h>

#include "conf.h"
#include "store/engine.h"
#include "store/store.h"

/* Count what (dry), or delete it in transactions of one batch each
 * until none is left; *total.  0, or the engine's code (err says). */
static int
step(struct store *s, enum engine_prune what, long long before,
    const char *arg, int dry_run, long long *total, char *err, size_t errsz)
{
	const struct store_ops	*o = s->ops;
	long long		 n;
	int			 rc;

	if (dry_run) {
		/* A count: a plain read, no write lock. */
		n = 0;
		if ((rc = o->prune(s, what, before, arg, 1, &n)) != 0) {
			o->why(s, "prune", err, errsz);
			o->note(s, rc);
			return rc;
		}
		*total += n;
		return 0;
	}
	do {
		n = 0;
		if ((rc = o->tx_begin(s)) != 0 ||
		    (rc = o->prune(s, what, before, arg, 0, &n)) != 0 ||
		    (rc = o->tx_commit(s)) != 0) {
			/* The reason first: the rollback would clear it. */
			o->why(s, "prune", err, errsz);
			o->note(s, rc);
			o->tx_rollback(s);
			o->tx_end(s);
			return rc;
		}
		o->tx_end(s);
		*total += n;
	} while (n > 0);
	return 0;
}

long long
store_prune(struct store *s, long long now, int dry_run, int dead,
    long long *nconflicts, char *err, size_t errsz)
{
	const struct conf_endpoint	*ep;
	long long			 events = 0, n = 0;
	size_t				 i;

	*nconflicts = 0;
	if (errsz > 0)
		err[0] = '\0';
	/* Only what took effect; dead events when asked.  Then the replay
	 * guard's rows of the events gone, and the failed attempts of
	 * keys that never came back. */
	if (step(s, ENGINE_PRUNE_EVENTS, now, dead ? "dead" : "processed",
	    dry_run, &events, err, errsz) != 0 ||
	    (!dry_run && (step(s, ENGINE_PRUNE_GUARDS, now, NULL, 0, &n, err,
	    errsz) != 0 || step(s, ENGINE_PRUNE_FAILURES, now, NULL, 0, &n,
	    err, errsz) != 0)))
		return -1;
	for (i = 0; i < s->cf->nendpoints; i++) {
		ep = &s->cf->endpoints[i];
		if (ep->retention < 0)
			continue;
		if (step(s, ENGINE_PRUNE_CONFLICTS, now - ep->retention,
		    ep->name, dry_run, nconflicts, err, errsz) != 0)
			return -1;
	}
	return events;
}
