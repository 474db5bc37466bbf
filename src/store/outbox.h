/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the outbox's rows in the store (SPEC section 13), for
 * `oncehook deliver`, list, show, stats and prune.  Each backend has
 * its half (store/sqlite/outbox.c for SQLite, store/mysql/engine.c for MariaDB/MySQL); what
 * follows is said in SQLite's words, and the MariaDB store keeps it
 * with a row lock (SELECT ... FOR UPDATE, SKIP LOCKED where the server
 * has it) for the write lock, and the server's clock for the times it
 * compares and sets (the now arguments are SQLite's only): deliverers
 * on several hosts agree on a lease whatever their clocks say.
 *
 * An action inserts (topic, payload) in its event's transaction
 * (store/sqlite/actions.h: the guard lets it insert, never update or delete, and the
 * schema's trigger refuses a row that sets more).  From then on the row
 * is the deliverers': pending until a delivery succeeds (delivered), or
 * dead after the most attempts.  A deliverer takes a row by a lease: the
 * due row is found by a plain read, then one short transaction under the
 * write lock counts the attempt, gives it a random token and moves its
 * next_at past the attempt's end (counted from after the lock was
 * taken), if it is still due; no other deliverer takes it meanwhile, and
 * a deliverer killed mid-attempt leaves the row to be taken again once
 * the lease ends.  Its outcome is written only if the row still holds
 * its token: a deliverer whose lease ran out does not undo the next
 * one's work.  Each row is therefore sent at least once, and never by
 * two deliverers at the same time while an attempt ends within its lease
 * (the deliverer kills a command, and libcurl stops, at the timeout; the
 * lease is the timeout and a margin, in wall-clock seconds: a clock set
 * forward by more than the margin shortens it).
 */
#ifndef ONCEHOOK_OUTBOX_H
#define ONCEHOOK_OUTBOX_H

#include <stddef.h>

struct store;

/* A row taken for one attempt. */
struct outbox_item {
	long long	 seq;		/* its row */
	char		 id[64];	/* the stable id: webhook-id */
	char		 topic[132];
	char		 endpoint[64];
	char		 key[520];
	char		*payload;	/* malloc'd; outbox_item_clear() */
	size_t		 payloadsz;
	long long	 created_at;
	long long	 attempts;	/* counting this one */
	long long	 lease;		/* this attempt's token */
};

void		 outbox_item_clear(struct outbox_item *);

enum outbox_take {
	TAKE_NONE,		/* nothing due (with a target) */
	TAKE_ONE,		/* *item is leased for this attempt */
	TAKE_RACED,		/* another took it first: look again */
	TAKE_BUSY,		/* the database was busy: nothing happened */
	TAKE_ERROR,		/* the storage failed (why) */
};

/*
 * Take the oldest due pending row whose topic has_target() says yes to
 * (rows of topics without a target wait, untouched), counting one more
 * attempt and leasing it for lease seconds from now.
 */
enum outbox_take outbox_take(struct store *, long long now, long long lease,
		    int (*has_target)(void *arg, const char *topic),
		    void *arg, struct outbox_item *item, char *why,
		    size_t whysz);

/*
 * The attempt at item succeeded: delivered.  Returns 1, 0 if the row
 * was taken again meanwhile (the lease ran out: nothing written), -1 on
 * a storage failure (why).
 */
int		 outbox_delivered(struct store *, const struct outbox_item *,
		    long long now, char *why, size_t whysz);
/*
 * The attempt failed with error: due again after the backoff (first
 * seconds, doubling, at most 6 h, with jitter), or dead if it was the
 * max_attempts-th.  Returns 1 (2: now dead), 0 and -1 as above.
 */
int		 outbox_failed(struct store *, const struct outbox_item *,
		    const char *error, long long now, long long first,
		    long long max_attempts, char *why, size_t whysz);

/*
 * Rows back to due now: with dead, dead rows made pending, their
 * attempts from 0 (each attempt has its own token: a count used again
 * confuses nothing); with waiting, pending rows waiting out a backoff
 * (not one under way: it holds a lease).  The count, or -1 with the
 * reason in err.
 */
long long	 outbox_retry(struct store *, long long now, int dead,
		    int waiting, char *err, size_t errsz);

/* One outbox row, borrowed for the duration of a callback. */
struct outbox_row {
	const char	*id;
	const char	*topic;
	const char	*payload;	/* NULL unless asked for */
	const char	*endpoint;
	const char	*key;
	const char	*status;
	const char	*last_error;	/* NULL if none */
	long long	 created_at;
	long long	 attempts;
	long long	 next_at;
	long long	 delivered_at;	/* -1: not delivered */
};

typedef void	(*outbox_row_fn)(void *arg, const struct outbox_row *);

/*
 * Call fn for rows, newest first: the row id if not NULL, else those of
 * the event (endpoint, key) if key is not NULL, of status if not NULL;
 * at most limit.  Returns the count, or -1 with the reason in err.
 */
long long	 outbox_list(struct store *, const char *id,
		    const char *endpoint, const char *key, const char *status,
		    long long limit, int with_payload, outbox_row_fn fn,
		    void *arg, char *err, size_t errsz);

/*
 * For stats: fn(arg, topic, status, rows, oldest created_at) for each
 * (topic, status) present.  0, or -1 with the reason in err.  Reads
 * only.
 */
int		 outbox_topics(struct store *, void (*fn)(void *arg,
		    const char *topic, const char *status, long long rows,
		    long long oldest), void *arg, char *err, size_t errsz);

/*
 * For prune, after the events went: delete the delivered rows (and the
 * dead ones too with dead) whose event is gone, 500 a transaction.  With
 * dry_run, count those whose event is gone or would go (past its
 * retention at now, processed, or dead with dead).  The count, or -1
 * with the reason in err.
 */
long long	 outbox_prune(struct store *, long long now, int dry_run,
		    int dead, char *err, size_t errsz);

#endif
