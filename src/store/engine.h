/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the store's engines, behind store/store.h and store/outbox.h.
 *
 * The protocol is written once (store/claim.c, store/run.c,
 * store/lease.c) against the primitives of struct store_ops; each engine
 * (store/sqlite/: SQLite; store/mysql/: MariaDB and MySQL) fills the
 * table, keeping store/store.h's contract by its own means, and makes
 * its store begin with struct store.  store/store.c picks the engine
 * from ONCEHOOK_DB: nothing else knows which engine it talks to.
 * store/README.md says what a new engine implements.
 */
#ifndef ONCEHOOK_STORE_ENGINE_H
#define ONCEHOOK_STORE_ENGINE_H

#include <stddef.h>

#include "hook.h"
#include "store/outbox.h"
#include "store/store.h"

/* A savepoint step around one claim of a batch (store/claim.c). */
enum engine_sp {
	ENGINE_SP_SET,		/* SAVEPOINT claim */
	ENGINE_SP_KEEP,		/* RELEASE it: the claim stays */
	ENGINE_SP_UNDO,		/* ROLLBACK TO it, then RELEASE */
};

/* What an engine's error left of the transaction (engine_ops.ended). */
enum engine_end {
	ENGINE_STATEMENT,	/* the statement failed alone; the
				   transaction is open */
	ENGINE_TRANSACTION,	/* the engine rolled the transaction back
				   because of this claim (SQLite's own
				   rollback): the batch runs again without it */
	ENGINE_AGAIN,		/* the server ended it for reasons of its
				   own (a deadlock): the whole batch may run
				   once more */
	ENGINE_LOST,		/* the connection is gone: nothing more */
};

/* What engine_ops.prune counts or deletes. */
enum engine_prune {
	ENGINE_PRUNE_EVENTS,	/* expired before, status processed or arg */
	ENGINE_PRUNE_GUARDS,	/* the replay guard's rows of events gone */
	ENGINE_PRUNE_FAILURES,	/* failed attempts of keys unseen for
				   STORE_FAILURES_TTL before */
	ENGINE_PRUNE_CONFLICTS,	/* conflicts rows of endpoint arg received
				   before */
};

/* Capability bits (engine_ops.caps). */
#define ENGINE_STATEMENT_ALONE	0x01	/* a statement's own error undoes
					   that statement only: in a batch,
					   its claim fails alone (else it
					   fails the batch) */
#define ENGINE_ROW_LOCKS	0x02	/* a row read FOR UPDATE in the
					   transaction is the reader's, and
					   rows others hold can be skipped
					   (outbox leases, store/lease.c) */
#define ENGINE_DIRECT_CLAIM	0x04	/* a claim of a key already
					   recorded waits for that key's row
					   only and costs a few round trips:
					   runs of new events may skip their
					   lookups (store_claims_direct()) */

/*
 * One stored event taken for a run (engine_ops.take), filled by
 * store_taken_fill(), cleared by store_taken_clear().
 */
struct store_taken {
	long long	 id;		/* the engine's row id */
	long long	 attempts;	/* its runs so far */
	char		 status[16];	/* received, processed, failed, dead */
	size_t		 endpoint;	/* its index; cf->nendpoints: not ours */
	char		 name[64];	/* its endpoint's name */
	struct event	*ev;		/* the stored event (owned) */
	char		*payload;	/* owned */
};

/*
 * The engine's table.  The first part is the primitives the protocol
 * (store/claim.c) is written against; an int they return is the
 * engine's own code, 0 for success, given back to classify, ended, note
 * and why.  The second part is still whole operations (store/store.h).
 * src/store/README says what a new engine implements.
 */
struct store_ops {
	const char	*engine;	/* "SQLite", "MariaDB/MySQL" */
	unsigned int	 caps;		/* ENGINE_* bits */

	/* -- errors -- */
	/* HOOK_EBUSY for what may pass (busy, lock wait, full, I/O, a
	 * lost connection), HOOK_ECONF for what the operator must grant or
	 * create, else HOOK_ESYSTEM. */
	enum hook_err	(*classify)(struct store *s, int code);
	/* What code left of an open transaction. */
	enum engine_end	(*ended)(struct store *s, int code);
	/* Note that code may call for a new connection (store_broken()). */
	void		(*note)(struct store *s, int code);
	/* "step: the engine's message" into buf, for a claim's why. */
	void		(*why)(struct store *s, const char *step, char *buf,
			    size_t bufsz);
	/* Before a request's reads: 0, or a code (SQLite: the file moved).
	 * NULL: nothing to check. */
	int		(*usable)(struct store *s);
	/* After a request's first statement failed with code, before
	 * anything was done: 0 if a new connection is in place (MariaDB:
	 * the old one was lost), else -1.  NULL: never. */
	int		(*revive)(struct store *s, int code);

	/* -- the write transaction -- */
	/* Begin it, holding whatever serialises claims (rule 2). */
	int		(*tx_begin)(struct store *s);
	/* Commit; 0 only once durable (rule 1). */
	int		(*tx_commit)(struct store *s);
	/* Roll back, if a transaction is open. */
	void		(*tx_rollback)(struct store *s);
	/* After the commit or the rollback: let go of the write lock. */
	void		(*tx_end)(struct store *s);
	int		(*savepoint)(struct store *s, enum engine_sp step);

	/* -- the events -- */
	/* (endpoint, ev->key) against the stored row: *found HOOK_OK
	 * (none), HOOK_DUP, HOOK_PARKED or HOOK_ECONFLICT (store_lookup()). */
	int		(*find_key)(struct store *s, size_t endpoint,
			    const struct event *ev, enum hook_err *found);
	/* ev's payload and type under another key of endpoint, among the
	 * events stored while it had the guard (rule 2), or, where the
	 * engine stores events under a signed key unguarded, under
	 * ev->signed_key (pipeline/event.h): *found 0 (none), 1 (yes), 2
	 * (yes, failed or dead). */
	int		(*find_payload)(struct store *s, size_t endpoint,
			    const struct event *ev, int *found);
	/* The replay guard inside the claim's transaction, after the
	 * claim's insert: *found as find_payload's, and a payload claimed
	 * at the same moment under another key is waited for or locked
	 * out (rule 2). */
	int		(*guard)(struct store *s, size_t endpoint,
			    const struct event *ev, int *found);
	/* Insert the claim (processed now, or received for a deferred
	 * endpoint, due STORE_CLAIMER_FIRST on); *isnew 0 if the key was
	 * there (the row untouched). */
	int		(*insert)(struct store *s, size_t endpoint,
			    const struct event *ev, long long now,
			    int *isnew);
	/* A conflicts row for ev (known key, other payload). */
	int		(*conflict)(struct store *s, size_t endpoint,
			    const struct event *ev);
	/* The endpoint's actions ready to run for ev's claim (prepared,
	 * or known not to need it: a claim's, before its transaction); with
	 * ev NULL, for a run of a stored event, every section.  HOOK_OK,
	 * HOOK_ECONF (a file or section that does not prepare) or
	 * HOOK_EBUSY (the database could not be read), with why. */
	enum hook_err	(*ready)(struct store *s, size_t endpoint,
			    const struct event *ev, char *why, size_t whysz);
	/* Run the endpoint's actions for ev in the open transaction.
	 * HOOK_OK; HOOK_EACTION (an action failed), HOOK_EBUSY (the
	 * storage's failure) or HOOK_ECONF, with the code in *code and the
	 * reason in why. */
	enum hook_err	(*actions)(struct store *s, size_t endpoint,
			    const struct event *ev, int *code, char *why,
			    size_t whysz);

	/* -- runs of stored events (store/run.c) -- */
	/* A transaction for a run that may read long before it writes:
	 * the write lock is taken at its first write, which fails busy if
	 * another commit came between (the run is then made again in
	 * tx_begin's).  NULL: tx_begin's is the only kind. */
	int		(*tx_begin_deferred)(struct store *s);
	/* In the open transaction, take the event (endpoint, key) whatever
	 * its status, locked against other runs (skip: or not taken if
	 * another run holds it); with endpoint NULL, the oldest due
	 * received or failed event of a configured endpoint (a received
	 * one lead seconds early), skipping those other runs hold.  *found
	 * 0 if none; else t filled (store_taken_fill()). */
	int		(*take)(struct store *s, const char *endpoint,
			    const char *key, long long now, long long lead,
			    int skip, struct store_taken *t, int *found);
	/* Outside any transaction: lease the oldest due received or
	 * failed event (as take's with endpoint NULL) to this runner until
	 * until, by a conditional update committed at once, so that other
	 * runners, on this server or on another node of a cluster, pass it
	 * by while this one runs it; its endpoint's name and its key into
	 * name and key.  A due event whose row another run holds (a
	 * claimer running it, a replay) is passed by, not waited for.
	 * *found 1 if leased, 0 if none is due (or each is held so), 2 if
	 * a due one was run or leased by another meanwhile.  A name or key
	 * longer than namesz or keysz is an error, not cut.  NULL: take's
	 * lock is enough (SQLite: one writer at a time). */
	int		(*lease)(struct store *s, long long now, long long lead,
			    long long until, char *name, size_t namesz,
			    char *key, size_t keysz, int *found);
	/* The taken event processed: status, processed_at now, attempts,
	 * no error nor next run; only from a status other than processed.
	 * *changed 0 if it was processed meanwhile. */
	int		(*processed)(struct store *s, long long id,
			    long long now, long long attempts, int *changed);
	/* A failed run: one more attempt and its error, failed with the
	 * next run at next_at, or dead at max attempts; only if it is not
	 * processed. */
	int		(*run_failed)(struct store *s, long long id,
			    const char *error, long long max, long long next_at);
	/* One more failed attempt of a key never stored (its claim rolled
	 * back): *attempts, counting this one. */
	int		(*count_failure)(struct store *s, size_t endpoint,
			    const struct event *ev, const char *error,
			    long long now, long long *attempts);
	/* Store ev as failed (attempts, error, next run at next_at) unless
	 * its key was stored meanwhile (*parked 0), and forget its count. */
	int		(*park)(struct store *s, size_t endpoint,
			    const struct event *ev, const char *error,
			    long long attempts, long long next_at, int *parked);

	/* -- pruning (store/prune.c) -- */
	/* In the open transaction, delete at most 500 rows of what (or,
	 * with count_only, count them all): *n. */
	int		(*prune)(struct store *s, enum engine_prune what,
			    long long before, const char *arg, int count_only,
			    long long *n);

	/* -- the outbox's lease (store/lease.c) -- */
	/* The oldest due pending row whose topic has_target() says yes to
	 * into it (its attempts counting this one); *found 1, or 0 if none
	 * is due.  With ENGINE_ROW_LOCKS, in the transaction, locked,
	 * skipping rows others hold (*found 2 if they hold every due one);
	 * else by a plain read before it. */
	int		(*ob_pick)(struct store *s, long long now,
			    int (*has_target)(void *, const char *),
			    void *arg, struct outbox_item *it, int *found);
	/* Lease it: one more attempt, it->lease the token, due again lease
	 * seconds after the lock was had (so another may take it if this
	 * deliverer dies); without row locks, only if it is still due at
	 * now and at the attempt read.  *changed 0 if not. */
	int		(*ob_lease)(struct store *s, struct outbox_item *it,
			    long long now, long long lease, int *changed);
	/* The attempt's outcome, if the row still holds it->lease: error
	 * NULL, delivered; else failed, pending again at next_at, or dead
	 * at max attempts.  *changed 0 if the lease was lost. */
	int		(*ob_settle)(struct store *s,
			    const struct outbox_item *it, long long now,
			    const char *error, long long next_at,
			    long long max, int *changed);

	/* -- whole operations -- */
	int		(*version)(const struct store *);
	int		(*about)(struct store *, char *, size_t);
	int		(*broken)(const struct store *);
	int		(*idle)(struct store *);
	/* store_upkeep(): the engine's work between requests.  NULL:
	 * none (STORE_COPY_NONE). */
	enum store_copy	(*upkeep)(struct store *, enum store_upkeep);
	void		(*close)(struct store *);
	/* store_leave(): 1 if the connection may be left to the
	 * process's exit.  NULL: never (store_close() it). */
	int		(*leave)(struct store *);
	long long	(*list)(struct store *, const char *, const char *,
			    const char *, long long, int, store_row_fn,
			    void *, char *, size_t);
	int		(*rows)(struct store *, long long,
			    struct store_counts *, char *, size_t);
	/* store/outbox.h */
	long long	(*ob_retry)(struct store *, long long, int, int,
			    char *, size_t);
	long long	(*ob_list)(struct store *, const char *,
			    const char *, const char *, const char *,
			    long long, int, outbox_row_fn, void *, char *,
			    size_t);
	int		(*ob_topics)(struct store *, void (*)(void *,
			    const char *, const char *, long long,
			    long long), void *, char *, size_t);
	long long	(*ob_prune)(struct store *, long long, int, int,
			    char *, size_t);
};

/* Every backend's store begins with this. */
struct store {
	const struct store_ops	*ops;
	const struct conf	*cf;	/* the configuration it serves */
};

/*
 * Seconds until the next run after attempts failed: first, doubling,
 * at most cap, times a random factor in [0.5, 1); at least 1 (events:
 * store_backoff(attempts, 60, 21600), 1 min doubling to 6 h).
 */
long long	 store_backoff(long long attempts, long long first,
		    long long cap);
#define OUTBOX_CAP	21600	/* an outbox row's longest wait, s */
/* An error kept (run_failed, count_failure, park, ob_settle): at most
 * this many bytes, UTF-8 (lib/utf8.h: utf8_text()), as every engine's
 * text column takes. */
#define ENGINE_ERROR_MAX	1024
#define STORE_RUN_LEASE 60	/* a work runner's lease of an event, s:
				   due again after if the runner died; a
				   received one STORE_RUN_LEASE - lead after
				   for a runner with a lead (the claimer's
				   runner: 60 - STORE_CLAIMER_FIRST) */
#define STORE_BACKOFF_FIRST 60	/* an event's first wait, s */
#define STORE_BACKOFF_CAP 21600	/* ... and its longest */
#define STORE_FAILURES_TTL "2592000" /* failed attempts of keys unseen
				   for 30 days are pruned (SQL text) */

/*
 * For an engine's take: fill t (name, key, type, hash copied; payload
 * copied, len bytes; the endpoint's index looked up).  0, or -1 (out
 * of memory; t cleared).
 */
int		 store_taken_fill(const struct conf *cf, struct store_taken *t,
		    long long id, const char *name, const char *key,
		    const char *type, const char *hash, const char *payload,
		    size_t len, long long received_at, long long attempts,
		    const char *status);
void		 store_taken_clear(struct store_taken *t);

/* Once per process (store_process_init()): SQLite's library. */
void		 sqs_process_init(void);

/* The backends' openers (store_connect()'s contract). */
enum hook_err	 sqs_connect(const struct conf *, int flags,
		    struct store **, char *err, size_t errsz);
enum hook_err	 mys_connect(const struct conf *, int flags,
		    struct store **, char *err, size_t errsz);

#endif
