/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the store (SPEC section 6), and its contract.
 *
 * store_open() opens the database once per process, checks its schema
 * version, sets the pragmas and prepares every statement it will use,
 * including each endpoint's actions (with STORE_LAZY, an endpoint's
 * actions on its first claim: once per process still).  store_lookup() answers a retry
 * from a read, without the write lock.  store_claim() inserts events and
 * runs their actions in one transaction, each event in its own
 * savepoint.  The store knows no HTTP.
 *
 * THE CONTRACT.  What follows is what the pipeline relies on; a backend
 * other than SQLite (a server database) must keep every rule, by the
 * means said for each.
 *
 * 1. One transaction per claim batch.  An event's row and its actions'
 *    writes commit together or not at all; store_claim() returns HOOK_OK
 *    only once the commit is durable as ONCEHOOK_SYNCHRONOUS says (with
 *    `full`, after the fsync).  Nothing is answered 200 before that.
 *    Elsewhere: one database transaction, COMMIT acknowledged by the
 *    server; a connection lost during COMMIT is an unknown outcome and
 *    answered 503 (never 200) unless the commit can be shown to have
 *    happened.
 *
 * 2. The write lock serialises every claim: SQLite's BEGIN IMMEDIATE
 *    takes the one RESERVED lock, so between the insert and the commit
 *    no other process claims anything.  Under it, and only under it:
 *    - the insert of (endpoint, key), UNIQUE, ON CONFLICT DO NOTHING,
 *      whose "inserted or not" decides who runs the actions;
 *    - the lost race: a key that the lock-free lookup saw unknown but
 *      whose insert did nothing was claimed by another process since;
 *      it is read again under the lock and answered as the duplicate
 *      or the conflict it now is (a conflict row recorded);
 *    - the replay guard (endpoints whose scheme signs no timestamp, or
 *      whose key comes from an unsigned header): "is this payload (type
 *      and hash) recorded under any key" is asked again inside the
 *      transaction, so two keys carrying one captured payload at the
 *      same moment make one effect.  Any key stored while the endpoint
 *      had the guard (SQLite: or before schema version 8; an event
 *      stored without it is not asked about, docs/design/033).  SQLite
 *      keeps an event stored under the key its signature covers out of
 *      the payload index and asks for that key instead (docs/design/034):
 *      a replay of its body can change only an uncovered key.
 *    Elsewhere: a UNIQUE index on (endpoint, key) checked by the insert
 *    in the transaction (INSERT ... ON DUPLICATE KEY / ON CONFLICT, with
 *    the affected-row count read back); and for the replay guard, either
 *    a UNIQUE index on (endpoint, type, payload_hash) for the guarded
 *    endpoints or a lock that orders the check and the insert (a gap or
 *    row lock: SELECT ... FOR UPDATE on the index).  Deadlocks and lock
 *    waits past the timeout are HOOK_EBUSY (503, Retry-After).
 *
 * 3. A duplicate is answered without the write lock: store_lookup() and
 *    store_replayed() are plain reads of committed rows (WAL: a snapshot
 *    that never blocks, nor is blocked by, the writer).  "Known" is final
 *    (a claim is never undone, only pruned past its retention); "unknown"
 *    is only a hint: the claim decides under the lock (rule 2).  A read
 *    must never see an uncommitted claim, so a duplicate of an event in
 *    a batch not yet durable is not answered 200 before that batch is.
 *    (The pipeline sends a run of new events to a writer without the
 *    lookup: the claim answers a known key, rule 2, and a
 *    retry then waits for that transaction; pipeline/pipeline.h.)
 *    Elsewhere: a consistent read without locks (READ COMMITTED or a
 *    snapshot), on a connection that is not inside a write transaction.
 *    Except in such a run (store_claims_direct(), MariaDB/MySQL): the
 *    process claims the next event itself, without the lookup, and a
 *    duplicate in the run is answered by that claim, INSERT ... ON
 *    DUPLICATE KEY, which takes the key's row lock (waiting for a
 *    transaction that holds it).  A claim that fails there (a lock wait
 *    past its timeout, a lost connection) is answered from a read, and
 *    a conflict found so is recorded by the process (no writer will).
 *
 * 4. A batch of several claims (store_claim() with n > 1) keeps each
 *    claim independent: every claim has its own savepoint, and a claim
 *    whose actions fail rolls back alone (HOOK_EACTION, or HOOK_EBUSY if
 *    its failure was the storage's).  If a claim's failure ends the
 *    whole transaction (SQLite's own rollback: RAISE(ROLLBACK), I/O
 *    error, disk full), that claim keeps its failure and the
 *    transaction is run again without it, so the others still commit.
 *    A failure of the transaction itself (BEGIN, a savepoint, an insert,
 *    COMMIT) fails every claim not yet decided with HOOK_EBUSY or
 *    HOOK_ESYSTEM: nothing of the batch is answered 200 unless the COMMIT
 *    succeeded.  Elsewhere: SAVEPOINT / ROLLBACK TO where the server has
 *    them, and the same retry without the claim when it does not (the
 *    MariaDB store: a deadlock, which InnoDB may find in any claim, runs
 *    the whole batch once more, then fails it; store/claim.c).
 *
 * 5. The file is the database.  A process that finds ONCEHOOK_DB no
 *    longer names the file it has open (removed, renamed, replaced)
 *    commits nothing and answers 503; it opens the path again for a
 *    later request, and not before the old file's users have let go
 *    of the log at the path (store/sqlite/walguard.h); an idle process looks
 *    (store_idle()).  Elsewhere: the connection's server and database
 *    are the configured ones.
 */
#ifndef ONCEHOOK_STORE_H
#define ONCEHOOK_STORE_H

#include <stddef.h>

#include "conf.h"
#include "hook.h"
#include "pipeline/event.h"

struct conf;
struct event;
struct store;

/* What store_open() may do. */
#define STORE_INIT	0x01	/* create or migrate, run action setup */
#define STORE_LAZY	0x02	/* prepare an endpoint's actions on its
				   first claim, not at open (not with INIT) */
#define STORE_SECTIONS	0x04	/* with LAZY: each section on the first
				   claim of its types (CGI: one request) */

/* One event to claim, and what became of it. */
struct store_claim {
	size_t			 endpoint;	/* index in conf->endpoints */
	const struct event	*ev;
	enum hook_err		 result;	/* HOOK_OK, DUP, ECONFLICT, ... */
	char			 why[256];	/* for the log, if not OK */
	int			 kept;		/* result set by its own failure */
	int			 copy;		/* through a writer: it asks for
						   store_upkeep(): STORE_COPY after the answer */
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
/* If *st is broken: closed, and *st NULL (the next use opens another).
 * NULL is fine. */
void		 store_drop_broken(struct store **st);
/*
 * Between requests: 1 if the connection must be closed now (the file at
 * ONCEHOOK_DB is not the one it has open: logged, and its log let go),
 * else 0.  Cheap (a few stat(2)s): a long-lived process calls it when
 * idle, so that the users of a replaced file let go of its log.
 */
int		 store_idle(struct store *);
/*
 * The engine's upkeep between requests, which only an embedded engine
 * has (SQLite: its log and its page cache; a server keeps its own):
 *
 * STORE_RELEASE   idle for a while (no request for a second): give back
 *                 the memory the connection keeps only for speed (the
 *                 page cache), so that the processes of a quiet site
 *                 hold little; the next request reads the pages again.
 * STORE_MAINTAIN  once the answer is out: keep the log bounded (a
 *                 checkpoint that starts it over past 1,000 pages,
 *                 under the write lock).
 * STORE_COPY_DUE  the writer, after a batch (writer/writer.h,
 *                 store/sqlite/copier.h): what the log needs.
 *                 STORE_COPY_ASK each time it grew by STORE_COPY_STEP
 *                 pages since it last said so, never near the writer's
 *                 own checkpoint: the writer has the log copied into the
 *                 database beside its commits (STORE_COPY, by its copier
 *                 or by one process it answers), so that its own
 *                 checkpoint copies only what came since.
 *                 STORE_COPY_CHECKPOINT when STORE_MAINTAIN is due to
 *                 checkpoint: a copy still running would make it busy
 *                 (the copier's is let end first).
 * STORE_COPY      the writer's copier, or a process that handed its
 *                 claims to a writer, once the writer asked: copy what
 *                 the log holds into the database file (a PASSIVE
 *                 checkpoint: it waits for nobody, holds no write lock;
 *                 one process copies at a time, another returns at once).
 *
 * Returns what STORE_COPY_DUE asks, else STORE_COPY_NONE.  Failures are
 * logged; store_broken() says if the connection should go.
 */
#define STORE_COPY_STEP	256
enum store_copy {
	STORE_COPY_NONE,
	STORE_COPY_ASK,
	STORE_COPY_CHECKPOINT
};
enum store_upkeep {
	STORE_RELEASE,
	STORE_MAINTAIN,
	STORE_COPY_DUE,
	STORE_COPY
};
enum store_copy	 store_upkeep(struct store *, enum store_upkeep what);

void		 store_close(struct store *);
/*
 * A process about to exit (CGI, after its answer and its upkeep): 1 if
 * the connection may be left to the exit, its locks and files let go
 * by the kernel, without closing it: the engine says nothing is lost
 * and nothing is owed that a close would do (SQLite: no transaction
 * open, and another connection has the same file open, so this one's
 * close could not checkpoint the log anyway).  The store must not be
 * used afterwards; store_close() still frees it.  0: close it.
 */
int		 store_leave(struct store *);

/*
 * Look (endpoint, key) up without taking the write lock.  HOOK_OK if
 * unknown, HOOK_DUP if known with the same payload hash or the same raw
 * bytes (HOOK_PARKED if that event failed or is dead: it is kept for
 * replay and a delivery runs nothing), HOOK_ECONFLICT if known with
 * another (with ev->hash still
 * empty: other bytes, to be asked again with the hash), HOOK_EBUSY or
 * HOOK_ESYSTEM on failure.
 */
enum hook_err	 store_lookup(struct store *, size_t endpoint,
		    const struct event *ev);

/*
 * For an endpoint with a replay guard: HOOK_DUP if ev's payload is
 * recorded under any key (rule 2: one stored while the endpoint had
 * the guard; HOOK_PARKED if that event failed or is
 * dead), HOOK_OK if not, HOOK_EBUSY or HOOK_ESYSTEM on
 * failure.  Without the write lock.
 */
enum hook_err	 store_replayed(struct store *, size_t endpoint,
		    const struct event *ev);

/*
 * Claim n events in one transaction, each in its own savepoint when n
 * > 1 (a single claim is its transaction: no savepoint, and a failing
 * action rolls the transaction back); fills each claim's result (rules
 * 1, 2 and 4 above).  Returns HOOK_OK if the transaction committed
 * (look at each result), or HOOK_EBUSY / HOOK_ESYSTEM if it did not
 * (every result not decided by its own failure says so too).
 */
enum hook_err	 store_claim(struct store *, struct store_claim *claims,
		    size_t n);

/*
 * Claim the n items of one request (a batch: pipeline/sig.h) in one
 * transaction, each in its own savepoint when n > 1, as store_claim()
 * does, but all or nothing (docs/design/030-batches.md): an item known
 * already is answered as such (HOOK_DUP, HOOK_PARKED, HOOK_ECONFLICT
 * with its row) and the others applied; the first item that fails by
 * itself (its actions: HOOK_EACTION; the storage under it: HOOK_EBUSY,
 * HOOK_ESYSTEM) rolls every item back and is returned, each other
 * item's result set to it ("not applied").  A failure of the
 * transaction itself is store_claim()'s.  Always the process's own
 * connection: no writer takes a request's items (pipeline/pipeline.h).
 */
enum hook_err	 store_claim_items(struct store *,
		    struct store_claim *claims, size_t n);

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
	long long	 processed_at;	/* -1: not processed */
	long long	 expires_at;	/* -1: kept forever */
	long long	 attempts;	/* runs of its actions */
	const char	*last_error;	/* NULL unless the last run failed */
	long long	 next_at;	/* -1: none */
};

typedef void	(*store_row_fn)(void *arg, const struct store_row *);

/*
 * Call fn for events, newest first: all of them, or those of endpoint
 * (if not NULL), or the one event (endpoint, key) if key is not NULL,
 * of status (if not NULL); at most limit rows.  with_payload adds the
 * payload.  Returns the number of rows, or -1 with the reason in err.
 * Reads only.
 */
long long	 store_list(struct store *, const char *endpoint,
		    const char *key, const char *status, long long limit,
		    int with_payload,
		    store_row_fn fn, void *arg, char *err, size_t errsz);

/*
 * Delete the processed events whose retention ended before now (and the
 * dead ones too with dead: an event that never took effect is kept
 * until asked), the conflicts rows older than their endpoint's
 * retention, and failed attempts of keys unseen for 30 days, in short
 * transactions of at most 500 rows so deliveries keep flowing.  With
 * dry_run, count only.  Returns the number of events, or -1 with the
 * reason in err.
 */
long long	 store_prune(struct store *, long long now, int dry_run,
		    int dead, long long *nconflicts, char *err, size_t errsz);

/*
 * Count, for each endpoint of the configuration (rows[i] for
 * cf->endpoints[i]), its events, those processed, its conflicts rows
 * and its events past retention at time now.  Reads only: one read
 * transaction.  Returns 0, or -1 with the reason in err.
 */
struct store_counts {
	long long	 events;
	long long	 processed;
	long long	 received;	/* claimed, actions to run */
	long long	 failed;	/* parked or failing: replay */
	long long	 dead;		/* given up */
	long long	 overdue;	/* received, due 10 min ago: is
					   oncehook work running? */
	long long	 conflicts;
	long long	 expired;	/* past retention: prune deletes them */
};
int		 store_rows(struct store *, long long now,
		    struct store_counts *rows, char *err, size_t errsz);

/*
 * Count one more failed attempt of ev's key (its actions failed and
 * were rolled back); at park_after attempts (0: never) store the event
 * as failed, with its payload and error, for replay.  Its own short
 * transaction: the success path never pays for it.  Returns HOOK_PARKED
 * if the event is now stored, else HOOK_EACTION (also when the count
 * could not be written: logged); *attempts is the count.
 */
enum hook_err	 store_failed(struct store *, size_t endpoint,
		    const struct event *ev, const char *error, int park_after,
		    long long *attempts);

/* What became of one event given to store_replay(). */
enum store_replay {
	REPLAY_DONE,		/* its actions ran and committed */
	REPLAY_WOULD,		/* dry run: it would run (why: its status) */
	REPLAY_ALREADY,		/* processed already: never run again */
	REPLAY_NONE,		/* no event of that key */
	REPLAY_FAILED,		/* its actions failed (why); noted */
	REPLAY_ERROR,		/* the storage failed (why) */
};

/*
 * Run the endpoint's current actions for the stored event key, if it
 * has not taken effect (received, failed or dead), and mark it processed
 * in the same transaction: exactly once, whatever else runs at the same
 * moment (the status is read under the write lock).  A failure rolls
 * back and counts an attempt, with its error.
 */
enum store_replay store_replay(struct store *, size_t endpoint,
		    const char *key, int dry_run, char *why, size_t whysz);

/* Seconds an accepted event is left to the process that claimed it
 * before work takes it. */
#define STORE_CLAIMER_FIRST	10

/* What became of a store_work() call. */
enum store_work {
	WORK_IDLE,		/* nothing due (the lease: or each due one
				   held by another run, which runs it) */
	WORK_RACED,		/* the event was run by another meanwhile;
				   or (the lease) each due one tried was
				   run or leased by another, those another
				   run held passed by (only held: IDLE) */
	WORK_DONE,		/* one event's actions ran and committed */
	WORK_FAILED,		/* its actions failed: failed, a later run */
	WORK_DEAD,		/* ... for the last time: dead */
	WORK_BUSY,		/* the database was busy: nothing happened */
	WORK_ERROR,		/* the storage failed (why) */
};

/* The event store_work() took, and why it failed. */
struct store_work_item {
	char		 endpoint[CONF_NAME_MAX];
	char		 key[EVENT_KEY_MAX + 1];
	long long	 attempts;	/* counting this run */
	char		 why[256];
};

/*
 * Run one event whose actions have not taken effect: the event key of
 * endpoint if given (the process that claimed it, after its answer),
 * else the oldest due received or failed event of a configured endpoint
 * (work; a received one lead seconds before its next_at: the runner
 * serve keeps takes them at once).  Its effects and its status change
 * to processed commit in
 * one transaction, exactly once whoever else runs it at the same moment.
 * A failure rolls back and counts an attempt: failed, run again after a
 * backoff with jitter (1 min doubling to 6 h), dead at the endpoint's
 * MAX_ATTEMPTS.
 */
enum store_work	 store_work(struct store *, const char *endpoint,
		    const char *key, long long now, long long lead,
		    struct store_work_item *w);

/* The schema version the binary writes to a SQLite file (number of
 * migrations). */
int		 store_version(void);
/* The schema version of the open store's engine, and its name
 * ("SQLite", "MariaDB/MySQL"). */
int		 store_schema(const struct store *);
const char	*store_engine(const struct store *);
/* 1 if a claim of a key already recorded costs the store about what a
 * lookup would, so that a run of new events may skip the lookups
 * (pipeline/pipeline.h): row locks, the claim's insert waiting for that
 * key's row only (MariaDB/MySQL); 0 where it takes the one write lock
 * (SQLite). */
int		 store_claims_direct(const struct store *);
/*
 * Once, first thing in main(), before any store is opened: each
 * engine's library set up for a process that uses it from one thread
 * (SQLite: no mutexes, no memory statistics; a writer with a copier
 * turns them back on, store/sqlite/library.h).  Programs that skip it
 * (the tests) keep the libraries' defaults.
 */
void		 store_process_init(void);

/*
 * For a long-lived process (a FastCGI process, serve before it starts
 * its workers, the work and deliver loops): read each endpoint's
 * actions file now and run that text for the process's life, and its
 * children's, whatever happens to its connections (store/actfile.h:
 * ACTFILE_ONCE).  A file that cannot be read now, or fails to load
 * later, is read again at its next load.
 */
void		 store_keep_actions(const struct conf *cf);
/*
 * For "oncehook check": what the store is (the server's name and
 * version), after checking what only a server can say: the privileges
 * it needs, every section of the actions prepared.  0, or -1 with the
 * problem in buf.
 */
int		 store_about(struct store *, char *buf, size_t bufsz);

#endif
