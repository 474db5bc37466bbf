/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the exactly-once protocol (store/claim.c, store/run.c)
 * as one table of cases, each run against every engine it names: the
 * in-memory fake (tests/unit/fakestore.h), SQLite, and MariaDB when
 * tests/protocol.sh has started one (ONCEHOOK_TEST_MYSQL).  A case is a
 * few steps on a fresh store of its own (a file, a table prefix, a
 * fake); each step is one check: what it must answer and, where it
 * matters, how many effects the actions made so far.  The actions are
 * the event's type: t.ok one effect, t.fail an action's error, t.later
 * an error until a FIX step removes its cause (fakestore.h has the
 * fake's own: t.rollback, t.deadlock, t.lost).  Cases only the fake can stage
 * (a deadlock, a lost connection, a failed commit, a lost race) are
 * marked for it alone; the engines' own tests (t_store, t_mystore) keep
 * what only a real engine shows.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "conf.h"
#include "lib/crypto.h"
#include "pipeline/event.h"
#include "hook.h"
#include "store/engine.h"
#include "store/mysql/conn.h"
#include "store/store.h"
#include "fakestore.h"
#include "tap.h"
#include "testlib.h"
#include "testev.h"

/* Which engines run a case. */
#define E_FAKE		0x1
#define E_SQLITE	0x2
#define E_MARIADB	0x4
#define E_ALL		(E_FAKE | E_SQLITE | E_MARIADB)

enum opk {
	CLAIM,		/* keys in one batch: results */
	LOOKUP,		/* the lock-free lookup of key */
	FAILED,		/* store_failed(): "result attempts" */
	REPLAY,		/* store_replay() */
	DRY,		/* store_replay(), dry run */
	WORK,		/* store_work() of key */
	DUE_NOW,	/* store_work() of what is due now */
	DUE_SOON,	/* ... a minute on */
	DUE,		/* ... a day on */
	STATUS,		/* key's status ("-": not stored) */
	ATTEMPTS,	/* key's attempts ("-1": not stored) */
	CONFLICTS,	/* conflicts rows */
	FIX,		/* t.later's actions of key succeed from now on */
	PRUNE,		/* store_prune() two hours on: events pruned */
	PRUNE_DRY,	/* ... counted only */
};

struct step {
	enum opk	 op;
	const char	*keys;		/* space-separated (a batch) */
	const char	*types;		/* one each, or one for all */
	const char	*payload;	/* one each, or one for all (no
					   spaces in one); NULL: each key
					   its own */
	const char	*want;		/* one result each, by name */
	long long	 effects;	/* after it; -1: not asked */
	const char	*says;		/* what it shows; NULL: the step */
};

struct pcase {
	const char	*name;
	unsigned int	 engines;
	const char	*mode;		/* sync, deferred */
	unsigned int	 caps;		/* the fake's */
	int		 deadlocks;	/* the fake's t.deadlock */
	const char	*fault_op;	/* the fake's fault */
	int		 fault_nth;
	int		 fault_code;
	long long	 conflicts;	/* at the end; -1: not asked */
	struct step	 steps[12];
	int		 park_after;	/* FAILED's; 0: 2, -1: never */
};

#define END	{ STATUS, NULL, NULL, NULL, NULL, -1, NULL }

static const struct pcase cases[] = {
{ "a new event takes effect once", E_ALL, "sync", 0, 0, NULL, 0, 0, 0, {
	{ LOOKUP, "a", "t.ok", NULL, "OK", 0, NULL },
	{ CLAIM, "a", "t.ok", NULL, "OK", 1, NULL },
	{ CLAIM, "a", "t.ok", NULL, "DUP", 1, NULL },
	{ LOOKUP, "a", "t.ok", NULL, "DUP", 1, NULL },
	{ STATUS, "a", NULL, NULL, "processed", -1, NULL },
	END }, 0 },
{ "a known key with another payload is a conflict, recorded", E_ALL,
    "sync", 0, 0, NULL, 0, 0, 1, {
	{ CLAIM, "a", "t.ok", "{\"v\":1}", "OK", 1, NULL },
	{ LOOKUP, "a", "t.ok", "{\"v\":2}", "ECONFLICT", 1, NULL },
	{ CLAIM, "a", "t.ok", "{\"v\":2}", "ECONFLICT", 1, NULL },
	END }, 0 },
{ "one event: its duplicate, its conflict, a replay, a failure", E_ALL,
    "sync", 0, 0, NULL, 0, 0, 1, {
	{ CLAIM, "k1", "t.ok", "{\"v\":1}", "OK", 1,
	  "a new event: processed" },
	{ LOOKUP, "k1", "t.ok", "{\"v\":1}", "DUP", 1,
	  "the same key and payload: a duplicate, from a read" },
	{ LOOKUP, "k1", "t.ok", "{\"v\":\"other\"}", "ECONFLICT", 1,
	  "the same key, another payload: a conflict" },
	{ CLAIM, "k1", "t.ok", "{\"v\":1}", "DUP", 1,
	  "claimed again (the lost race): a duplicate, no second effect" },
	{ CLAIM, "k1", "t.ok", "{\"v\":\"x\"}", "ECONFLICT", 1,
	  "the lost race with another payload: a conflict" },
	{ CONFLICTS, NULL, NULL, NULL, "1", -1, "... recorded" },
	{ CLAIM, "k1b", "t.ok", "{\"v\":1}", "DUP", 1,
	  "the same payload under another key: a replay" },
	{ STATUS, "k1b", NULL, NULL, "-", -1, "... nothing recorded" },
	{ CLAIM, "k2", "t.fail", NULL, "EACTION", 1,
	  "a failing action: rolled back whole" },
	{ STATUS, "k2", NULL, NULL, "-", -1, "... the claim too" },
	{ CLAIM, "k3", "t.unknown", NULL, "OK", -1,
	  "a type no section takes: OK" },
	{ STATUS, "k3", NULL, NULL, "processed", -1, "... recorded" } }, 0 },
{ "a batch: the claim whose actions fail rolls back alone", E_ALL,
    "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a b c", "t.ok t.fail t.ok", NULL, "OK EACTION OK", 2, NULL },
	{ STATUS, "b", NULL, NULL, "-", -1, NULL },
	{ CLAIM, "a b c", "t.ok t.fail t.ok", NULL, "DUP EACTION DUP", 2,
	  NULL },
	END }, 0 },
{ "a batch: one key twice is one claim", E_ALL, "sync", 0, 0, NULL, 0,
    0, -1, {
	{ CLAIM, "a a", "t.ok", NULL, "OK DUP", 1, NULL },
	END }, 0 },
{ "a failing event: counted, parked at PARK_AFTER, replayed", E_ALL,
    "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a", "t.fail", NULL, "EACTION", 0, NULL },
	{ FAILED, "a", "t.fail", NULL, "EACTION 1", 0, NULL },
	{ STATUS, "a", NULL, NULL, "-", -1, NULL },
	{ FAILED, "a", "t.fail", NULL, "PARKED 2", 0, NULL },
	{ LOOKUP, "a", "t.fail", NULL, "PARKED", 0, NULL },
	{ DRY, "a", NULL, NULL, "WOULD", 0, NULL },
	{ REPLAY, "a", NULL, NULL, "FAILED", 0, NULL },
	{ STATUS, "a", NULL, NULL, "dead", -1, NULL } }, 0 },
{ "parked at its first failure (PARK_AFTER 1), replayed after the fix",
    E_ALL, "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "p1", "t.later", NULL, "EACTION", 0,
	  "an action failing until its cause is fixed fails" },
	{ FAILED, "p1", "t.later", NULL, "PARKED 1", 0,
	  "parked at its first failure" },
	{ LOOKUP, "p1", "t.later", NULL, "PARKED", 0,
	  "a retry of it: parked, from a read" },
	{ REPLAY, "p1", NULL, NULL, "FAILED", 0,
	  "replayed before the fix: fails again" },
	{ FIX, "p1", NULL, NULL, "fixed", 0, NULL },
	{ REPLAY, "p1", NULL, NULL, "DONE", 1, "replayed after the fix: done" },
	{ REPLAY, "p1", NULL, NULL, "ALREADY", 1,
	  "replayed again: already, never run twice" },
	{ REPLAY, "nope", NULL, NULL, "NONE", 1, "an unknown key: none" },
	END }, 1 },
{ "PARK_AFTER 3: two 500s, then parked; a later delivery runs nothing",
    E_ALL, "sync", 0, 0, NULL, 0, 0, -1, {
	{ FAILED, "p1", "t.later", NULL, "EACTION 1", 0,
	  "the first attempt fails (500)" },
	{ FAILED, "p1", "t.later", NULL, "EACTION 2", 0,
	  "the second attempt fails (500)" },
	{ FAILED, "p1", "t.later", NULL, "PARKED 3", 0, "the third parks" },
	{ STATUS, "p1", NULL, NULL, "failed", -1, "... stored failed" },
	{ ATTEMPTS, "p1", NULL, NULL, "3", -1, "... with its attempts" },
	{ LOOKUP, "p1", "t.later", NULL, "PARKED", 0,
	  "a later delivery: parked, from a read" },
	{ CLAIM, "p1", "t.later", NULL, "PARKED", 0,
	  "a later delivery claimed: parked, runs nothing" },
	{ DRY, "p1", NULL, NULL, "WOULD", 0, "--dry-run runs nothing" },
	{ REPLAY, "p1", NULL, NULL, "FAILED", 0,
	  "replay while the cause stays: fails again" },
	{ ATTEMPTS, "p1", NULL, NULL, "4", -1,
	  "... one more attempt counted" },
	END }, 3 },
{ "PARK_AFTER never: every failure is a 500, nothing parked", E_ALL,
    "sync", 0, 0, NULL, 0, 0, -1, {
	{ FAILED, "p2", "t.later", NULL, "EACTION 1", 0, NULL },
	{ FAILED, "p2", "t.later", NULL, "EACTION 2", 0, NULL },
	{ STATUS, "p2", NULL, NULL, "-", -1, "nothing stored" },
	END }, -1 },
{ "replay: of what is processed, nothing; of no event, none", E_ALL,
    "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a", "t.ok", NULL, "OK", 1, NULL },
	{ REPLAY, "a", NULL, NULL, "ALREADY", 1, NULL },
	{ REPLAY, "zz", NULL, NULL, "NONE", 1, NULL },
	END }, 0 },
{ "the replay guard: one payload under two keys is one effect", E_ALL,
    "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a", "t.ok", "{\"v\":\"same\"}", "OK", 1, NULL },
	{ CLAIM, "b", "t.ok", "{\"v\":\"same\"}", "DUP", 1, NULL },
	{ STATUS, "b", NULL, NULL, "-", -1, NULL },
	{ CLAIM, "c d", "t.ok", "{\"v\":\"also\"}", "OK DUP", 2, NULL },
	END }, 0 },
{ "deferred: accepted, left to its claimer, run once, a duplicate",
    E_ALL, "deferred", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a", "t.ok", NULL, "ACCEPTED", 0,
	  "deferred: accepted, no effect yet" },
	{ STATUS, "a", NULL, NULL, "received", -1, "... stored received" },
	{ ATTEMPTS, "a", NULL, NULL, "0", -1, "... not yet attempted" },
	{ CLAIM, "a", "t.ok", NULL, "DUP", 0,
	  "a retry of a received event: already_processed" },
	{ DUE_NOW, NULL, NULL, NULL, "IDLE", 0,
	  "work leaves it to its claimer for a while" },
	{ WORK, "a", NULL, NULL, "DONE", 1, "its claimer runs it: once" },
	{ WORK, "a", NULL, NULL, "IDLE", 1, "and never again" },
	{ DUE, NULL, NULL, NULL, "IDLE", 1, NULL },
	{ STATUS, "a", NULL, NULL, "processed", -1, NULL },
	{ ATTEMPTS, "a", NULL, NULL, "1", -1, "... after one attempt" },
	END }, 0 },
{ "deferred: failed with its error, backs off, dead at MAX_ATTEMPTS",
    E_ALL, "deferred", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a", "t.fail", NULL, "ACCEPTED", 0, NULL },
	{ DUE_SOON, NULL, NULL, NULL, "FAILED", 0,
	  "a failing deferred event: failed, for a later run" },
	{ STATUS, "a", NULL, NULL, "failed", -1, NULL },
	{ ATTEMPTS, "a", NULL, NULL, "1", -1, NULL },
	{ DUE_SOON, NULL, NULL, NULL, "IDLE", 0,
	  "not due again for at least 30 s" },
	{ DUE, NULL, NULL, NULL, "DEAD", 0, "dead at MAX_ATTEMPTS (2)" },
	{ STATUS, "a", NULL, NULL, "dead", -1, NULL },
	{ ATTEMPTS, "a", NULL, NULL, "2", -1, NULL },
	{ DUE, NULL, NULL, NULL, "IDLE", 0, NULL },
	END }, 0 },
{ "deferred: work takes what is due, once", E_ALL, "deferred", 0, 0,
    NULL, 0, 0, -1, {
	{ CLAIM, "a b", "t.ok", NULL, "ACCEPTED ACCEPTED", 0, NULL },
	{ DUE_SOON, NULL, NULL, NULL, "DONE", 1,
	  "work takes what its claimer left" },
	{ DUE, NULL, NULL, NULL, "DONE", 2, NULL },
	{ DUE, NULL, NULL, NULL, "IDLE", 2, NULL },
	END }, 0 },
{ "prune: what took effect, past its retention; then it is unknown",
    E_SQLITE | E_MARIADB, "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a b", "t.ok", NULL, "OK OK", 2, NULL },
	{ CLAIM, "c", "t.fail", NULL, "EACTION", 2, NULL },
	{ FAILED, "c", "t.fail", NULL, "EACTION 1", 2, NULL },
	{ FAILED, "c", "t.fail", NULL, "PARKED 2", 2, NULL },
	{ PRUNE_DRY, NULL, NULL, NULL, "2", 2, NULL },
	{ PRUNE, NULL, NULL, NULL, "2", 2, NULL },
	{ LOOKUP, "a", "t.ok", NULL, "OK", 2, NULL },
	{ STATUS, "c", NULL, NULL, "failed", -1,
	  "prune keeps a failed event past its retention" },
	END }, 0 },
/* What only the fake can stage. */
{ "an action that ends the transaction: the batch again without it",
    E_FAKE, "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a b c", "t.ok t.rollback t.ok", NULL, "OK EACTION OK", 2, NULL },
	{ STATUS, "b", NULL, NULL, "-", -1, NULL },
	END }, 0 },
{ "alone, an action that ends the transaction fails alone", E_FAKE,
    "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a", "t.rollback", NULL, "EACTION", 0, NULL },
	{ CLAIM, "b", "t.ok", NULL, "OK", 1, NULL },
	END }, 0 },
{ "a deadlock: the whole batch runs once more", E_FAKE, "sync", 0, 1,
    NULL, 0, 0, -1, {
	{ CLAIM, "a b", "t.ok t.deadlock", NULL, "OK OK", 2, NULL },
	END }, 0 },
{ "a deadlock twice: every claim is 503, nothing stays", E_FAKE, "sync",
    0, 2, NULL, 0, 0, -1, {
	{ CLAIM, "a b", "t.ok t.deadlock", NULL, "EBUSY EBUSY", 0, NULL },
	{ STATUS, "a", NULL, NULL, "-", -1, NULL },
	END }, 0 },
{ "a deadlock after a failed claim: that one stays failed", E_FAKE,
    "sync", 0, 1, NULL, 0, 0, -1, {
	{ CLAIM, "a b c", "t.fail t.ok t.deadlock", NULL, "EACTION OK OK",
	  2, NULL },
	END }, 0 },
{ "a replay whose commit the server ended (a deadlock, a Galera "
    "certification conflict) runs once more", E_FAKE, "sync", 0, 0,
    "tx_commit", 2, FAKE_DEADLOCK, -1, {
	{ CLAIM, "p1", "t.later", NULL, "EACTION", 0, NULL },
	{ FAILED, "p1", "t.later", NULL, "PARKED 1", 0, NULL },
	{ FIX, "p1", NULL, NULL, "fixed", 0, NULL },
	{ REPLAY, "p1", NULL, NULL, "DONE", 1,
	  "its commit ended by the server: run again, done, one effect" },
	{ REPLAY, "p1", NULL, NULL, "ALREADY", 1, NULL },
	END }, 1 },
{ "a failed commit: nothing of the batch is 200", E_FAKE, "sync", 0, 0,
    "tx_commit", 1, FAKE_BUSY, -1, {
	{ CLAIM, "a b", "t.ok", NULL, "EBUSY EBUSY", 0, NULL },
	{ CLAIM, "a b", "t.ok", NULL, "OK OK", 2, NULL },
	END }, 0 },
{ "a guard's duplicate of a claim of its batch: not 200 if the commit "
    "fails", E_FAKE, "sync", 0, 0, "tx_commit", 1, FAKE_BUSY, -1, {
	{ CLAIM, "a b", "t.ok", "{\"v\":\"same\"}", "EBUSY EBUSY", 0, NULL },
	{ CLAIM, "a b", "t.ok", "{\"v\":\"same\"}", "OK DUP", 1, NULL },
	END }, 0 },
{ "a guard's duplicate is decided again when the batch runs without "
    "a claim", E_FAKE, "sync", 0, 0, "insert", 4, FAKE_STATEMENT, -1, {
	{ CLAIM, "a b c", "t.ok t.ok t.rollback", "{\"v\":1} {\"v\":1} "
	  "{\"v\":2}", "ESYSTEM ESYSTEM EACTION", 0, NULL },
	END }, 0 },
{ "an undo that fails is the batch's failure: no second run", E_FAKE,
    "sync", 0, 0, "savepoint", 2, FAKE_LOST, -1, {
	{ CLAIM, "a b", "t.fail t.ok", NULL, "EBUSY EBUSY", 0, NULL },
	END }, 0 },
{ "a lost connection: the batch fails, no second run", E_FAKE, "sync", 0,
    0, NULL, 0, 0, -1, {
	{ CLAIM, "a b", "t.ok t.lost", NULL, "EBUSY EBUSY", 0, NULL },
	END }, 0 },
{ "a statement failing alone fails its claim alone (STATEMENT_ALONE)",
    E_FAKE, "sync", ENGINE_STATEMENT_ALONE, 0, "insert", 2,
    FAKE_STATEMENT, -1, {
	{ CLAIM, "a b c", "t.ok", NULL, "OK ESYSTEM OK", 2, NULL },
	END }, 0 },
{ "without STATEMENT_ALONE, a failing insert fails the batch", E_FAKE,
    "sync", 0, 0, "insert", 2, FAKE_STATEMENT, -1, {
	{ CLAIM, "a b c", "t.ok", NULL, "ESYSTEM ESYSTEM ESYSTEM", 0, NULL },
	END }, 0 },
{ "a busy insert asks a retry (503)", E_FAKE, "sync", 0, 0, "insert", 1,
    FAKE_BUSY, -1, {
	{ CLAIM, "a", "t.ok", NULL, "EBUSY", 0, NULL },
	END }, 0 },
{ "the lost race: a key claimed meanwhile with another payload", E_FAKE,
    "sync", 0, 0, "insert", 1, FAKE_RACE, 1, {
	{ CLAIM, "a", "t.ok", NULL, "ECONFLICT", 0, NULL },
	{ STATUS, "a", NULL, NULL, "processed", -1, NULL },
	END }, 0 },
{ "a failed begin: 503, nothing run", E_FAKE, "sync", 0, 0, "tx_begin",
    1, FAKE_BUSY, -1, {
	{ CLAIM, "a", "t.ok", NULL, "EBUSY", 0, NULL },
	END }, 0 },
{ "a failed count of an attempt: still the action's failure", E_FAKE,
    "sync", 0, 0, "count_failure", 1, FAKE_STATEMENT, -1, {
	{ FAILED, "a", "t.fail", NULL, "EACTION 0", 0, NULL },
	{ STATUS, "a", NULL, NULL, "-", -1, NULL },
	END }, 0 },
{ "a run whose commit fails is busy, and runs again later", E_FAKE,
    "deferred", 0, 0, "tx_commit", 2, FAKE_BUSY, -1, {
	{ CLAIM, "a", "t.ok", NULL, "ACCEPTED", 0, NULL },
	{ WORK, "a", NULL, NULL, "BUSY", 0, NULL },
	{ WORK, "a", NULL, NULL, "DONE", 1, NULL },
	END }, 0 },
};

/* The engine a case runs on. */
struct engine {
	const char	*name;
	unsigned int	 bit;
	struct store	*(*open)(const struct pcase *, int ci,
			    struct conf **);
	long long	 (*count)(struct store *, int ci, const char *what);
	/* The column (status, attempts) of key's row; "-" if none. */
	void		 (*column)(struct store *, int ci, const char *key,
			    const char *col, char *buf, size_t bufsz);
	void		 (*fix)(struct store *, int ci, const char *key);
};

static char	 dir[64], act[128];
static const char *url, *pwfile;
static struct mydb *side;

static const char actions[] =
"CREATE TABLE IF NOT EXISTS effects (k VARCHAR(100) NOT NULL);\n"
"CREATE TABLE IF NOT EXISTS fixed (k VARCHAR(100) NOT NULL);\n"
"-- on: t.ok\n"
"INSERT INTO effects (k) VALUES (:key);\n"
"-- on: t.fail\n"
"INSERT INTO effects (k) VALUES (:key);\n"
"INSERT INTO effects (k) VALUES (NULL);\n"
"-- on: t.later\n"
"INSERT INTO effects (k) VALUES (:key);\n"
"INSERT INTO effects (k) SELECT NULL FROM (SELECT 1 AS one) AS o\n"
"    WHERE NOT EXISTS (SELECT 1 FROM fixed WHERE fixed.k = :key);\n";

static struct conf *
mkconf(const char *db, const char *prefix, const char *mode)
{
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", db },
		{ "ONCEHOOK_DB_PASSWORD_FILE", pwfile },
		{ "ONCEHOOK_DB_PREFIX", prefix },
		{ "ONCEHOOK_BUSY_TIMEOUT_MS", "2000" },
		{ "ONCEHOOK_SCHEME", "hmac-sha256" },	/* a replay guard */
		{ "ONCEHOOK_SECRET", "secret-a" },
		{ "ONCEHOOK_PARK_AFTER", "2" },
		{ "ONCEHOOK_MAX_ATTEMPTS", "2" },
		{ "ONCEHOOK_MODE", mode },
		{ "ONCEHOOK_RETENTION", "1h" },
		{ "ONCEHOOK_ACTIONS", act },
		{ NULL, NULL }
	};
	struct conf	*cf;
	char		 err[256];

	if (pwfile == NULL)
		vars[1].value = NULL;
	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	return cf;
}

static struct store *
open_real(struct conf *cf)
{
	struct store	*st;
	char		 err[512];

	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	return st;
}

/* -- the fake -- */

static struct store *
fake_for(const struct pcase *pc, int ci, struct conf **cf)
{
	struct store	*st;
	char		 db[128];

	snprintf(db, sizeof(db), "%s/fake%d.sqlite", dir, ci);
	*cf = mkconf(db, "", pc->mode);
	if ((st = fake_open(*cf, pc->caps)) == NULL)
		BAIL("fake_open");
	fake_deadlocks(st, pc->deadlocks);
	if (pc->fault_op != NULL)
		fake_fault(st, pc->fault_op, pc->fault_nth, pc->fault_code);
	return st;
}

static long long
fake_count(struct store *st, int ci, const char *what)
{
	(void)ci;
	return strcmp(what, "effects") == 0 ? fake_effects(st) :
	    fake_conflicts(st);
}

static void
fake_column(struct store *st, int ci, const char *key, const char *col,
    char *buf, size_t bufsz)
{
	const char	*s = fake_status(st, key);

	(void)ci;
	if (s == NULL)
		snprintf(buf, bufsz, "-");
	else if (strcmp(col, "status") == 0)
		snprintf(buf, bufsz, "%s", s);
	else
		snprintf(buf, bufsz, "%lld", fake_attempts(st, key));
}

static void
fake_fixed(struct store *st, int ci, const char *key)
{
	(void)ci;
	fake_fix(st, key);
}

/* -- SQLite -- */

static struct store *
sqlite_for(const struct pcase *pc, int ci, struct conf **cf)
{
	char	 db[128];

	snprintf(db, sizeof(db), "%s/case%d.sqlite", dir, ci);
	*cf = mkconf(db, "", pc->mode);
	return open_real(*cf);
}

/* The first column of sql's first row on case ci's file ("-" if
 * none), or sql run (a write). */
static void
sqlite_query(int ci, const char *sql, const char *arg, char *buf,
    size_t bufsz)
{
	sqlite3		*db;
	sqlite3_stmt	*st;
	char		 p[128];

	snprintf(p, sizeof(p), "%s/case%d.sqlite", dir, ci);
	if (sqlite3_open_v2(p, &db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK || sqlite3_busy_timeout(db, 2000) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		BAIL("%s: %s", sql, sqlite3_errmsg(db));
	if (arg != NULL)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	snprintf(buf, bufsz, "-");
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_text(st, 0) != NULL)
		snprintf(buf, bufsz, "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static long long
sqlite_count(struct store *st, int ci, const char *what)
{
	char	 sql[64], v[32];

	(void)st;
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s", what);
	sqlite_query(ci, sql, NULL, v, sizeof(v));
	return strtoll(v, NULL, 10);
}

static void
sqlite_column(struct store *st, int ci, const char *key, const char *col,
    char *buf, size_t bufsz)
{
	char	 sql[96];

	(void)st;
	snprintf(sql, sizeof(sql), "SELECT %s FROM events WHERE key = ?", col);
	sqlite_query(ci, sql, key, buf, bufsz);
}

static void
sqlite_fix(struct store *st, int ci, const char *key)
{
	char	 v[8];

	(void)st;
	sqlite_query(ci, "INSERT INTO fixed (k) VALUES (?)", key, v, sizeof(v));
}

/* -- MariaDB: a table prefix per case -- */

static struct store *
mariadb_for(const struct pcase *pc, int ci, struct conf **cf)
{
	char	 prefix[16];

	snprintf(prefix, sizeof(prefix), "p%d_", ci);
	*cf = mkconf(url, prefix, pc->mode);
	return open_real(*cf);
}

/* The test's own names and keys (letters, digits, -): text is safe. */
static void
mariadb_query(const char *sql, char *buf, size_t bufsz)
{
	struct myres	*r = NULL;
	struct myrow	 row;

	if (mydb_run(side, strdup(sql), &r, NULL) != 0)
		BAIL("side query: %s", mydb_error(side));
	snprintf(buf, bufsz, "-");
	if (mydb_next(r, &row) && row.v[0] != NULL)
		snprintf(buf, bufsz, "%s", row.v[0]);
	mydb_free(r);
}

static long long
mariadb_count(struct store *st, int ci, const char *what)
{
	char	 v[32], sql[128];

	(void)st;
	/* The effects table is the actions' own (no prefix): the case's
	 * keys are its own. */
	if (strcmp(what, "effects") == 0)
		snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM effects"
		    " WHERE k LIKE 'c%d-%%'", ci);
	else
		snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM `p%d_%s`",
		    ci, what);
	mariadb_query(sql, v, sizeof(v));
	return strtoll(v, NULL, 10);
}

static void
mariadb_column(struct store *st, int ci, const char *key, const char *col,
    char *buf, size_t bufsz)
{
	char	 sql[160];

	(void)st;
	snprintf(sql, sizeof(sql), "SELECT %s FROM `p%d_events` WHERE"
	    " event_key = '%s'", col, ci, key);
	mariadb_query(sql, buf, bufsz);
}

static void
mariadb_fix(struct store *st, int ci, const char *key)
{
	char	 sql[160];

	(void)st;
	(void)ci;
	snprintf(sql, sizeof(sql), "INSERT INTO fixed (k) VALUES ('%s')", key);
	if (mydb_run(side, strdup(sql), NULL, NULL) != 0)
		BAIL("side query: %s", mydb_error(side));
}

static const struct engine engines[] = {
	{ "fake", E_FAKE, fake_for, fake_count, fake_column, fake_fixed },
	{ "SQLite", E_SQLITE, sqlite_for, sqlite_count, sqlite_column,
	  sqlite_fix },
	{ "MariaDB", E_MARIADB, mariadb_for, mariadb_count, mariadb_column,
	  mariadb_fix },
};

/* -- the cases -- */

static const char *const hook_names[] = {
	[HOOK_OK] = "OK", [HOOK_DUP] = "DUP", [HOOK_PARKED] = "PARKED",
	[HOOK_ACCEPTED] = "ACCEPTED", [HOOK_ECONFLICT] = "ECONFLICT",
	[HOOK_EACTION] = "EACTION", [HOOK_EBUSY] = "EBUSY",
	[HOOK_ESYSTEM] = "ESYSTEM", [HOOK_ECONF] = "ECONF",
};
static const char *const replay_names[] = {
	[REPLAY_DONE] = "DONE", [REPLAY_WOULD] = "WOULD",
	[REPLAY_ALREADY] = "ALREADY", [REPLAY_NONE] = "NONE",
	[REPLAY_FAILED] = "FAILED", [REPLAY_ERROR] = "ERROR",
};
static const char *const work_names[] = {
	[WORK_IDLE] = "IDLE", [WORK_RACED] = "RACED", [WORK_DONE] = "DONE",
	[WORK_FAILED] = "FAILED", [WORK_DEAD] = "DEAD", [WORK_BUSY] = "BUSY",
	[WORK_ERROR] = "ERROR",
};

static const char *
name_of(const char *const *names, size_t n, int v)
{
	return v >= 0 && (size_t)v < n && names[v] != NULL ? names[v] : "?";
}
#define NAME(t, v)	name_of((t), sizeof(t) / sizeof((t)[0]), (int)(v))

/* The nth word of s (the last if s has fewer) into buf. */
static const char *
word(const char *s, size_t n, char *buf, size_t bufsz)
{
	const char	*p = s, *e;
	size_t		 i;

	for (i = 0; i < n; i++) {
		e = strchr(p, ' ');
		if (e == NULL)
			break;
		p = e + 1;
	}
	snprintf(buf, bufsz, "%.*s", (int)strcspn(p, " "), p);
	return buf;
}

static size_t
words(const char *s)
{
	size_t	 n = 1;

	for (; *s != '\0'; s++)
		n += *s == ' ';
	return n;
}

#define BATCH	4

/* Run step sp of case ci; its answer, one name per claim, into got. */
static void
run_step(const struct engine *en, const struct pcase *pc, struct store *st,
    int ci, const struct step *sp, char *got, size_t gotsz)
{
	struct store_claim	 c[BATCH];
	struct event		 ev[BATCH];
	struct store_work_item	 w;
	char			 keys[BATCH][64], own[BATCH][96], k[32], t[32];
	char			 pl[BATCH][96];
	char			 why[256];
	long long		 now = (long long)time(NULL), attempts;
	enum hook_err		 er;
	size_t			 i, n = sp->keys != NULL ? words(sp->keys) : 0;

	got[0] = '\0';
	if (n > BATCH)
		BAIL("a batch of %zu", n);
	for (i = 0; i < n; i++) {
		snprintf(keys[i], sizeof(keys[i]), "c%d-%s", ci,
		    word(sp->keys, i, k, sizeof(k)));
		snprintf(own[i], sizeof(own[i]), "{\"v\":\"%s\"}", keys[i]);
		if (sp->payload != NULL)
			(void)word(sp->payload, i, pl[i], sizeof(pl[i]));
	}
	switch (sp->op) {
	case CLAIM:
	case LOOKUP:
	case FAILED:
		for (i = 0; i < n; i++) {
			test_event(&ev[i], keys[i], word(sp->types, i, t,
			    sizeof(t)), sp->payload != NULL ? pl[i] : own[i],
			    now);
			memset(&c[i], 0, sizeof(c[i]));
			c[i].ev = &ev[i];
		}
		if (sp->op == CLAIM) {
			(void)store_claim(st, c, n);
			for (i = 0; i < n; i++)
				snprintf(got + strlen(got), gotsz - strlen(got),
				    "%s%s", i ? " " : "",
				    NAME(hook_names, c[i].result));
		} else if (sp->op == LOOKUP)
			snprintf(got, gotsz, "%s", NAME(hook_names,
			    store_lookup(st, 0, &ev[0])));
		else {
			er = store_failed(st, 0, &ev[0], "it failed",
			    pc->park_after == 0 ? 2 : pc->park_after < 0 ? 0 :
			    pc->park_after, &attempts);
			snprintf(got, gotsz, "%s %lld", NAME(hook_names, er),
			    attempts);
		}
		for (i = 0; i < n; i++)
			event_clear(&ev[i]);
		break;
	case REPLAY:
	case DRY:
		snprintf(got, gotsz, "%s", NAME(replay_names, store_replay(st,
		    0, keys[0], sp->op == DRY, why, sizeof(why))));
		break;
	case WORK:
		snprintf(got, gotsz, "%s", NAME(work_names, store_work(st,
		    st->cf->endpoints[0].name, keys[0], now, 0, &w)));
		break;
	case DUE_NOW:
	case DUE_SOON:
	case DUE:
		snprintf(got, gotsz, "%s", NAME(work_names, store_work(st, NULL,
		    NULL, now + (sp->op == DUE ? 86400 : sp->op == DUE_SOON ?
		    60 : 0), 0, &w)));
		break;
	case STATUS:
		en->column(st, ci, keys[0], "status", got, gotsz);
		break;
	case ATTEMPTS:
		en->column(st, ci, keys[0], "attempts", got, gotsz);
		break;
	case CONFLICTS:
		snprintf(got, gotsz, "%lld", en->count(st, ci, "conflicts"));
		break;
	case FIX:
		en->fix(st, ci, keys[0]);
		snprintf(got, gotsz, "fixed");
		break;
	case PRUNE:
	case PRUNE_DRY:
		snprintf(got, gotsz, "%lld", store_prune(st, now + 7200,
		    sp->op == PRUNE_DRY, 0, &attempts, why, sizeof(why)));
		break;
	}
}

static const char *const op_names[] = {
	"claim", "lookup", "failed", "replay", "dry run", "work",
	"work due now", "work due in a minute", "work due in a day", "status",
	"attempts", "conflicts", "fix", "prune", "prune, dry run"
};

/* What step sp shows, for its check. */
static const char *
step_says(const struct step *sp, char *buf, size_t bufsz)
{
	if (sp->says != NULL)
		return sp->says;
	snprintf(buf, bufsz, "%s%s%s: %s", op_names[sp->op], sp->keys !=
	    NULL ? " " : "", sp->keys != NULL ? sp->keys : "", sp->want);
	return buf;
}

/* Each step of case pc on en is one check, and the conflicts it ends
 * with one more; after a step that failed, the rest fail unrun. */
static void
run_case(const struct engine *en, const struct pcase *pc, int ci)
{
	struct conf		*cf;
	struct store		*st;
	const struct step	*sp;
	char			 got[128], says[128];
	long long		 n;
	size_t			 i;
	int			 ok = 1;

	st = en->open(pc, ci, &cf);
	for (i = 0; i < sizeof(pc->steps) / sizeof(pc->steps[0]); i++) {
		sp = &pc->steps[i];
		if (sp->want == NULL)
			break;
		if (!ok) {
			CHECK(0, "%s: %s: %s (not run: a step before failed)",
			    en->name, pc->name, step_says(sp, says,
			    sizeof(says)));
			continue;
		}
		run_step(en, pc, st, ci, sp, got, sizeof(got));
		if (strcmp(got, sp->want) != 0) {
			printf("# %s: step %zu (%s %s): %s, not %s\n", en->name,
			    i + 1, op_names[sp->op], sp->keys != NULL ?
			    sp->keys : "", got, sp->want);
			ok = 0;
		} else if (sp->effects >= 0 && (n = en->count(st, ci,
		    "effects")) != sp->effects) {
			printf("# %s: step %zu: %lld effects, not %lld\n",
			    en->name, i + 1, n, sp->effects);
			ok = 0;
		}
		CHECK(ok, "%s: %s: %s", en->name, pc->name, step_says(sp, says,
		    sizeof(says)));
	}
	if (pc->conflicts >= 0) {
		n = ok ? en->count(st, ci, "conflicts") : -1;
		CHECK(n == pc->conflicts, "%s: %s: %lld conflicts rows in the "
		    "end (%lld)", en->name, pc->name, pc->conflicts, n);
	}
	store_close(st);
	conf_free(cf);
}

/* The checks case pc makes on one engine. */
static size_t
case_checks(const struct pcase *pc)
{
	size_t	 i, n = pc->conflicts >= 0;

	for (i = 0; i < sizeof(pc->steps) / sizeof(pc->steps[0]); i++)
		n += pc->steps[i].want != NULL;
	return n;
}

int
main(void)
{
	struct conf	*cf;
	FILE		*f;
	size_t		 e, i, k;
	char		 err[256];

	url = getenv("ONCEHOOK_TEST_MYSQL");
	pwfile = getenv("ONCEHOOK_TEST_MYSQL_PW");
	snprintf(dir, sizeof(dir), "/tmp/oncehook-t_protocol-XXXXXX");
	if (mkdtemp(dir) == NULL)
		BAIL("mkdtemp");
	snprintf(act, sizeof(act), "%s/actions.sql", dir);
	if ((f = fopen(act, "w")) == NULL || fputs(actions, f) == EOF ||
	    fclose(f) == EOF)
		BAIL("%s", act);
	if (url != NULL && pwfile != NULL) {
		cf = mkconf(url, "p_", "sync");
		if (mydb_connect(cf, &side, err, sizeof(err)) != HOOK_OK)
			BAIL("side connection: %s", err);
		conf_free(cf);
	}
	for (e = 0; e < sizeof(engines) / sizeof(engines[0]); e++)
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			if (!(cases[i].engines & engines[e].bit))
				continue;
			if (engines[e].bit == E_MARIADB && side == NULL) {
				for (k = 0; k < case_checks(&cases[i]); k++)
					printf("ok %d - MariaDB: %s # SKIP no "
					    "server (tests/protocol.sh starts "
					    "one)\n", ++tap_n, cases[i].name);
				continue;
			}
			run_case(&engines[e], &cases[i], (int)i);
		}
	if (side != NULL)
		mydb_close(side);
	tap_rmdir(dir);
	return tap_done();
}
