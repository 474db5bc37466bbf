/*
 * oncehook: the SQLite store (SPEC section 6).
 *
 * store_open() opens the database once per process, checks its schema
 * version, sets the pragmas and prepares every statement it will use,
 * including each endpoint's actions.  store_lookup() answers a retry
 * from a read, without the write lock.  store_claim() inserts events and
 * runs their actions in one BEGIN IMMEDIATE transaction, each event in
 * its own savepoint, so one failing event rolls back alone.  For an
 * endpoint with a replay guard, a payload already recorded under
 * another key is a duplicate too.  The store
 * knows no HTTP.
 */
#ifndef ONCEHOOK_STORE_H
#define ONCEHOOK_STORE_H

#include <stddef.h>

#include "hook.h"

struct conf;
struct event;
struct store;

/* What store_open() may do. */
#define STORE_INIT	0x01	/* create or migrate, run action setup */

/* One event to claim, and what became of it. */
struct store_claim {
	size_t			 endpoint;	/* index in conf->endpoints */
	const struct event	*ev;
	enum hook_err		 result;	/* HOOK_OK, DUP, ECONFLICT, ... */
	char			 why[256];	/* for the log, if not OK */
	int			 kept;		/* result set by its own failure */
};

/*
 * Open the database of cf.  With STORE_INIT, create it (mode 0600) or
 * migrate it forward and run every endpoint's action setup; without, it
 * must exist at the current version.  Returns the store, or NULL with
 * the reason in err.
 */
struct store	*store_open(const struct conf *cf, int flags, char *err,
		    size_t errsz);
/*
 * store_open() that says what kind of failure it met: HOOK_ECONF for
 * what the operator must fix (no database, wrong schema version, a bad
 * actions file), HOOK_EBUSY for what may pass (busy, read-only, I/O),
 * HOOK_ESYSTEM otherwise.  On HOOK_OK *out is the store.
 */
enum hook_err	 store_connect(const struct conf *cf, int flags,
		    struct store **out, char *err, size_t errsz);
/*
 * 1 if the connection met an error a new connection may not have
 * (read-only file since fixed, I/O error): the caller should close it
 * and open again for the next request.
 */
int		 store_broken(const struct store *);
void		 store_close(struct store *);

/*
 * Look (endpoint, key) up without taking the write lock.  HOOK_OK if
 * unknown, HOOK_DUP if known with the same payload hash, HOOK_ECONFLICT
 * if known with another, HOOK_EBUSY or HOOK_ESYSTEM on failure.
 */
enum hook_err	 store_lookup(struct store *, size_t endpoint,
		    const struct event *ev);

/*
 * For an endpoint with a replay guard: HOOK_DUP if ev's payload is
 * recorded under any key, HOOK_OK if not, HOOK_EBUSY or HOOK_ESYSTEM on
 * failure.  Without the write lock.
 */
enum hook_err	 store_replayed(struct store *, size_t endpoint,
		    const struct event *ev);

/*
 * Claim n events in one transaction, each in its own savepoint; fills
 * each claim's result.  A new event's actions run in its savepoint.
 * Returns HOOK_OK if the transaction committed (look at each result), or
 * HOOK_EBUSY / HOOK_ESYSTEM if it did not (every result says so too).
 */
enum hook_err	 store_claim(struct store *, struct store_claim *claims,
		    size_t n);

/*
 * Record a key collision (known key, other payload) outside a claim.
 * Best effort: returns HOOK_OK or the failure, which the caller logs.
 */
enum hook_err	 store_conflict(struct store *, size_t endpoint,
		    const struct event *ev);

/* One events row, borrowed for the duration of a callback. */
struct store_row {
	const char	*endpoint;
	const char	*key;
	const char	*type;		/* may be NULL */
	const char	*payload_hash;
	const char	*status;
	const char	*payload;	/* NULL unless asked for */
	long long	 received_at;
	long long	 processed_at;
	long long	 expires_at;	/* -1: kept forever */
};

typedef void	(*store_row_fn)(void *arg, const struct store_row *);

/*
 * Call fn for events, newest first: all of them, or those of endpoint
 * (if not NULL), or the one event (endpoint, key) if key is not NULL;
 * at most limit rows.  with_payload adds the payload.  Returns the
 * number of rows, or -1 with the reason in err.  Reads only.
 */
long long	 store_list(struct store *, const char *endpoint,
		    const char *key, long long limit, int with_payload,
		    store_row_fn fn, void *arg, char *err, size_t errsz);

/*
 * Delete the events whose retention ended before now, and the conflicts
 * rows older than their endpoint's retention, in short transactions of
 * at most 500 rows so deliveries keep flowing.  With dry_run, count
 * only.  Returns the number of events, or -1 with the reason in err.
 */
long long	 store_prune(struct store *, long long now, int dry_run,
		    long long *nconflicts, char *err, size_t errsz);

/* The schema version the binary writes (number of migrations). */
int		 store_version(void);

#endif
