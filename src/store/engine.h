/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the store's backends, behind store/store.h and store/outbox.h.
 *
 * Each backend (store/sqlite/engine.c + store/sqlite/outbox.c: SQLite; store/mysql/engine.c: MariaDB and
 * MySQL) fills one table of operations with its own half of the
 * contract written in store/store.h, and makes its store begin with struct
 * store.  store/store.c picks the backend from ONCEHOOK_DB and calls through
 * the table: nothing else knows which engine it talks to.
 */
#ifndef ONCEHOOK_STORE_BE_H
#define ONCEHOOK_STORE_BE_H

#include <stddef.h>

#include "hook.h"
#include "store/outbox.h"
#include "store/store.h"

struct store_ops {
	const char	*engine;	/* "SQLite", "MariaDB/MySQL" */
	int		(*version)(const struct store *);
	int		(*about)(struct store *, char *, size_t);
	int		(*broken)(const struct store *);
	int		(*idle)(struct store *);
	void		(*release)(struct store *);
	void		(*maintain)(struct store *);
	enum store_copy	(*copy_due)(struct store *);
	void		(*copy)(struct store *);
	void		(*close)(struct store *);
	enum hook_err	(*lookup)(struct store *, size_t,
			    const struct event *);
	enum hook_err	(*replayed)(struct store *, size_t,
			    const struct event *);
	enum hook_err	(*claim)(struct store *, struct store_claim *,
			    size_t);
	enum hook_err	(*conflict)(struct store *, size_t,
			    const struct event *);
	long long	(*list)(struct store *, const char *, const char *,
			    const char *, long long, int, store_row_fn,
			    void *, char *, size_t);
	long long	(*prune)(struct store *, long long, int, int,
			    long long *, char *, size_t);
	int		(*rows)(struct store *, long long,
			    struct store_counts *, char *, size_t);
	enum hook_err	(*failed)(struct store *, size_t,
			    const struct event *, const char *, int,
			    long long *);
	enum store_replay (*replay)(struct store *, size_t, const char *,
			    int, char *, size_t);
	enum store_work	(*work)(struct store *, const char *, const char *,
			    long long, long long, struct store_work_item *);
	/* store/outbox.h */
	enum outbox_take (*ob_take)(struct store *, long long, long long,
			    int (*)(void *, const char *), void *,
			    struct outbox_item *, char *, size_t);
	int		(*ob_delivered)(struct store *,
			    const struct outbox_item *, long long, char *,
			    size_t);
	int		(*ob_failed)(struct store *,
			    const struct outbox_item *, const char *,
			    long long, long long, long long, char *, size_t);
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
};

/*
 * Seconds until the next run after attempts failed: first, doubling,
 * at most cap, times a random factor in [0.5, 1); at least 1 (events:
 * store_backoff(attempts, 60, 21600), 1 min doubling to 6 h).
 */
long long	 store_backoff(long long attempts, long long first,
		    long long cap);
#define OUTBOX_CAP	21600	/* an outbox row's longest wait, s */
#define STORE_BACKOFF_FIRST 60	/* an event's first wait, s */
#define STORE_BACKOFF_CAP 21600	/* ... and its longest */
#define STORE_FAILURES_TTL "2592000" /* failed attempts of keys unseen
				   for 30 days are pruned (SQL text) */

/* The backends' openers (store_connect()'s contract). */
enum hook_err	 sqs_connect(const struct conf *, int flags,
		    struct store **, char *err, size_t errsz);
enum hook_err	 mys_connect(const struct conf *, int flags,
		    struct store **, char *err, size_t errsz);

#endif
