/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: an in-memory engine behind store/engine.h's
 * primitives, so that the protocol (store/claim.c, store/run.c) can be
 * read and tested without a database.  Its transactions and savepoints
 * are copies of its state; its actions are the event's type:
 *
 *   t.ok        one effect (counted by fake_effects());
 *   t.fail      an action's own error: the statement fails alone;
 *   t.rollback  an action whose failure makes the engine roll the whole
 *               transaction back (SQLite's RAISE(ROLLBACK));
 *   t.deadlock  the server ends the transaction (a deadlock), as many
 *               times as fake_deadlocks() says, then one effect;
 *   t.lost      the connection is lost;
 *   t.later     an action's own error until fake_fix() of its key, then
 *               one effect (a cause the operator fixes).
 *
 * fake_fault() makes the nth next call of a primitive fail with a code.
 */
#ifndef ONCEHOOK_TEST_FAKESTORE_H
#define ONCEHOOK_TEST_FAKESTORE_H

struct conf;
struct store;

/* The fake's codes (0: success). */
#define FAKE_STATEMENT	1	/* a statement failed, alone */
#define FAKE_BUSY	2	/* a lock wait ran out (alone, busy) */
#define FAKE_ROLLBACK	3	/* the engine rolled the transaction back */
#define FAKE_DEADLOCK	4	/* the server ended the transaction */
#define FAKE_LOST	5	/* the connection is gone */
#define FAKE_RACE	100	/* on "insert": another process claimed
				   the key a moment ago, other payload */

/* caps: the engine_ops capability bits to claim. */
struct store	*fake_open(const struct conf *cf, unsigned int caps);
/*
 * The fake for the processes of a binary (tests/unit/fakeconnect.c):
 * its state kept in the file cf->db between them, loaded before each
 * transaction and each read outside one, saved at each commit, with
 * the rows as JSON beside it (cf->db.json) for the request cases.
 * init: create the file if it is missing.  NULL with err on failure.
 */
struct store	*fake_open_file(const struct conf *cf, int init, char *err,
		    size_t errsz);
long long	 fake_effects(const struct store *);
long long	 fake_conflicts(const struct store *);
/* The next n runs of t.deadlock's actions end their transaction. */
void		 fake_deadlocks(struct store *, int n);
/* The nth next call (1: the next) of primitive op ("insert",
 * "tx_commit", "guard", ...) fails with code. */
void		 fake_fault(struct store *, const char *op, int nth, int code);
/* The status of (endpoint 0, key), or NULL if not stored. */
const char	*fake_status(const struct store *, const char *key);
/* The attempts of (endpoint 0, key), or -1 if not stored. */
long long	 fake_attempts(const struct store *, const char *key);
/* From now on, t.later's actions of key succeed. */
void		 fake_fix(struct store *, const char *key);

#endif
