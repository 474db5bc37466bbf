/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the exactly-once protocol (store/claim.c, store/run.c)
 * as one table of cases, each run against every engine it names: the
 * in-memory fake (tests/fakestore.h), SQLite, and MariaDB when
 * tests/protocol.sh has started one (ONCEHOOK_TEST_MYSQL).  A case is a
 * few steps on a fresh store of its own (a file, a table prefix, a
 * fake); each step names what it must answer and, where it matters, how
 * many effects the actions made so far.  Cases only the fake can stage
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
	FAILED,		/* store_failed(), PARK_AFTER 2 */
	REPLAY,		/* store_replay() */
	DRY,		/* store_replay(), dry run */
	WORK,		/* store_work() of key */
	DUE,		/* store_work() of what is due a day on */
	STATUS,		/* key's status ("-": not stored) */
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
	struct step	 steps[8];
};

#define END	{ STATUS, NULL, NULL, NULL, NULL, -1 }

static const struct pcase cases[] = {
{ "a new event takes effect once", E_ALL, "sync", 0, 0, NULL, 0, 0, 0, {
	{ LOOKUP, "a", "t.ok", NULL, "OK", 0 },
	{ CLAIM, "a", "t.ok", NULL, "OK", 1 },
	{ CLAIM, "a", "t.ok", NULL, "DUP", 1 },
	{ LOOKUP, "a", "t.ok", NULL, "DUP", 1 },
	{ STATUS, "a", NULL, NULL, "processed", -1 },
	END } },
{ "a known key with another payload is a conflict, recorded", E_ALL,
    "sync", 0, 0, NULL, 0, 0, 1, {
	{ CLAIM, "a", "t.ok", "{\"v\":1}", "OK", 1 },
	{ LOOKUP, "a", "t.ok", "{\"v\":2}", "ECONFLICT", 1 },
	{ CLAIM, "a", "t.ok", "{\"v\":2}", "ECONFLICT", 1 },
	END } },
{ "a batch: the claim whose actions fail rolls back alone", E_ALL,
    "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a b c", "t.ok t.fail t.ok", NULL, "OK EACTION OK", 2 },
	{ STATUS, "b", NULL, NULL, "-", -1 },
	{ CLAIM, "a b c", "t.ok t.fail t.ok", NULL, "DUP EACTION DUP", 2 },
	END } },
{ "a batch: one key twice is one claim", E_ALL, "sync", 0, 0, NULL, 0,
    0, -1, {
	{ CLAIM, "a a", "t.ok", NULL, "OK DUP", 1 },
	END } },
{ "a failing event: counted, parked at PARK_AFTER, replayed", E_ALL,
    "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a", "t.fail", NULL, "EACTION", 0 },
	{ FAILED, "a", "t.fail", NULL, "EACTION", 0 },
	{ STATUS, "a", NULL, NULL, "-", -1 },
	{ FAILED, "a", "t.fail", NULL, "PARKED", 0 },
	{ LOOKUP, "a", "t.fail", NULL, "PARKED", 0 },
	{ DRY, "a", NULL, NULL, "WOULD", 0 },
	{ REPLAY, "a", NULL, NULL, "FAILED", 0 },
	{ STATUS, "a", NULL, NULL, "dead", -1 } } },
{ "replay: of what is processed, nothing; of no event, none", E_ALL,
    "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a", "t.ok", NULL, "OK", 1 },
	{ REPLAY, "a", NULL, NULL, "ALREADY", 1 },
	{ REPLAY, "zz", NULL, NULL, "NONE", 1 },
	END } },
{ "the replay guard: one payload under two keys is one effect", E_ALL,
    "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a", "t.ok", "{\"v\":\"same\"}", "OK", 1 },
	{ CLAIM, "b", "t.ok", "{\"v\":\"same\"}", "DUP", 1 },
	{ STATUS, "b", NULL, NULL, "-", -1 },
	{ CLAIM, "c d", "t.ok", "{\"v\":\"also\"}", "OK DUP", 2 },
	END } },
{ "deferred: accepted, run once by the claimer, then a duplicate",
    E_ALL, "deferred", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a", "t.ok", NULL, "ACCEPTED", 0 },
	{ STATUS, "a", NULL, NULL, "received", -1 },
	{ WORK, "a", NULL, NULL, "DONE", 1 },
	{ WORK, "a", NULL, NULL, "IDLE", 1 },
	{ DUE, NULL, NULL, NULL, "IDLE", 1 },
	{ CLAIM, "a", "t.ok", NULL, "DUP", 1 },
	{ STATUS, "a", NULL, NULL, "processed", -1 },
	END } },
{ "deferred: a failing run is failed, then dead at MAX_ATTEMPTS", E_ALL,
    "deferred", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a", "t.fail", NULL, "ACCEPTED", 0 },
	{ WORK, "a", NULL, NULL, "FAILED", 0 },
	{ STATUS, "a", NULL, NULL, "failed", -1 },
	{ DUE, NULL, NULL, NULL, "DEAD", 0 },
	{ STATUS, "a", NULL, NULL, "dead", -1 },
	{ DUE, NULL, NULL, NULL, "IDLE", 0 },
	END } },
{ "deferred: work takes what is due, once", E_ALL, "deferred", 0, 0,
    NULL, 0, 0, -1, {
	{ CLAIM, "a b", "t.ok", NULL, "ACCEPTED ACCEPTED", 0 },
	{ DUE, NULL, NULL, NULL, "DONE", 1 },
	{ DUE, NULL, NULL, NULL, "DONE", 2 },
	{ DUE, NULL, NULL, NULL, "IDLE", 2 },
	END } },
{ "prune: what took effect, past its retention; then it is unknown",
    E_SQLITE | E_MARIADB, "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a b", "t.ok", NULL, "OK OK", 2 },
	{ CLAIM, "c", "t.fail", NULL, "EACTION", 2 },
	{ FAILED, "c", "t.fail", NULL, "EACTION", 2 },
	{ FAILED, "c", "t.fail", NULL, "PARKED", 2 },
	{ PRUNE_DRY, NULL, NULL, NULL, "2", 2 },
	{ PRUNE, NULL, NULL, NULL, "2", 2 },
	{ LOOKUP, "a", "t.ok", NULL, "OK", 2 },
	{ STATUS, "c", NULL, NULL, "failed", -1 } } },
/* What only the fake can stage. */
{ "an action that ends the transaction: the batch again without it",
    E_FAKE, "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a b c", "t.ok t.rollback t.ok", NULL, "OK EACTION OK", 2 },
	{ STATUS, "b", NULL, NULL, "-", -1 },
	END } },
{ "alone, an action that ends the transaction fails alone", E_FAKE,
    "sync", 0, 0, NULL, 0, 0, -1, {
	{ CLAIM, "a", "t.rollback", NULL, "EACTION", 0 },
	{ CLAIM, "b", "t.ok", NULL, "OK", 1 },
	END } },
{ "a deadlock: the whole batch runs once more", E_FAKE, "sync", 0, 1,
    NULL, 0, 0, -1, {
	{ CLAIM, "a b", "t.ok t.deadlock", NULL, "OK OK", 2 },
	END } },
{ "a deadlock twice: every claim is 503, nothing stays", E_FAKE, "sync",
    0, 2, NULL, 0, 0, -1, {
	{ CLAIM, "a b", "t.ok t.deadlock", NULL, "EBUSY EBUSY", 0 },
	{ STATUS, "a", NULL, NULL, "-", -1 },
	END } },
{ "a deadlock after a failed claim: that one stays failed", E_FAKE,
    "sync", 0, 1, NULL, 0, 0, -1, {
	{ CLAIM, "a b c", "t.fail t.ok t.deadlock", NULL, "EACTION OK OK",
	  2 },
	END } },
{ "a failed commit: nothing of the batch is 200", E_FAKE, "sync", 0, 0,
    "tx_commit", 1, FAKE_BUSY, -1, {
	{ CLAIM, "a b", "t.ok", NULL, "EBUSY EBUSY", 0 },
	{ CLAIM, "a b", "t.ok", NULL, "OK OK", 2 },
	END } },
{ "a guard's duplicate of a claim of its batch: not 200 if the commit "
    "fails", E_FAKE, "sync", 0, 0, "tx_commit", 1, FAKE_BUSY, -1, {
	{ CLAIM, "a b", "t.ok", "{\"v\":\"same\"}", "EBUSY EBUSY", 0 },
	{ CLAIM, "a b", "t.ok", "{\"v\":\"same\"}", "OK DUP", 1 },
	END } },
{ "a guard's duplicate is decided again when the batch runs without "
    "a claim", E_FAKE, "sync", 0, 0, "insert", 4, FAKE_STATEMENT, -1, {
	{ CLAIM, "a b c", "t.ok t.ok t.rollback", "{\"v\":1} {\"v\":1} "
	  "{\"v\":2}", "ESYSTEM ESYSTEM EACTION", 0 },
	END } },
{ "an undo that fails is the batch's failure: no second run", E_FAKE,
    "sync", 0, 0, "savepoint", 2, FAKE_LOST, -1, {
	{ CLAIM, "a b", "t.fail t.ok", NULL, "EBUSY EBUSY", 0 },
	END } },
{ "a lost connection: the batch fails, no second run", E_FAKE, "sync", 0,
    0, NULL, 0, 0, -1, {
	{ CLAIM, "a b", "t.ok t.lost", NULL, "EBUSY EBUSY", 0 },
	END } },
{ "a statement failing alone fails its claim alone (STATEMENT_ALONE)",
    E_FAKE, "sync", ENGINE_STATEMENT_ALONE, 0, "insert", 2,
    FAKE_STATEMENT, -1, {
	{ CLAIM, "a b c", "t.ok", NULL, "OK ESYSTEM OK", 2 },
	END } },
{ "without STATEMENT_ALONE, a failing insert fails the batch", E_FAKE,
    "sync", 0, 0, "insert", 2, FAKE_STATEMENT, -1, {
	{ CLAIM, "a b c", "t.ok", NULL, "ESYSTEM ESYSTEM ESYSTEM", 0 },
	END } },
{ "a busy insert asks a retry (503)", E_FAKE, "sync", 0, 0, "insert", 1,
    FAKE_BUSY, -1, {
	{ CLAIM, "a", "t.ok", NULL, "EBUSY", 0 },
	END } },
{ "the lost race: a key claimed meanwhile with another payload", E_FAKE,
    "sync", 0, 0, "insert", 1, FAKE_RACE, 1, {
	{ CLAIM, "a", "t.ok", NULL, "ECONFLICT", 0 },
	{ STATUS, "a", NULL, NULL, "processed", -1 },
	END } },
{ "a failed begin: 503, nothing run", E_FAKE, "sync", 0, 0, "tx_begin",
    1, FAKE_BUSY, -1, {
	{ CLAIM, "a", "t.ok", NULL, "EBUSY", 0 },
	END } },
{ "a failed count of an attempt: still the action's failure", E_FAKE,
    "sync", 0, 0, "count_failure", 1, FAKE_STATEMENT, -1, {
	{ FAILED, "a", "t.fail", NULL, "EACTION", 0 },
	{ STATUS, "a", NULL, NULL, "-", -1 },
	END } },
{ "a run whose commit fails is busy, and runs again later", E_FAKE,
    "deferred", 0, 0, "tx_commit", 2, FAKE_BUSY, -1, {
	{ CLAIM, "a", "t.ok", NULL, "ACCEPTED", 0 },
	{ WORK, "a", NULL, NULL, "BUSY", 0 },
	{ WORK, "a", NULL, NULL, "DONE", 1 },
	END } },
};

/* The engine a case runs on. */
struct engine {
	const char	*name;
	unsigned int	 bit;
	struct store	*(*open)(const struct pcase *, int ci,
			    struct conf **);
	long long	 (*count)(struct store *, int ci, const char *what);
	void		 (*status)(struct store *, int ci, const char *key,
			    char *buf, size_t bufsz);
};

static char	 dir[64], act[128];
static const char *url, *pwfile;
static struct mydb *side;

static const char actions[] =
"CREATE TABLE IF NOT EXISTS effects (k VARCHAR(100) NOT NULL);\n"
"-- on: t.ok\n"
"INSERT INTO effects (k) VALUES (:key);\n"
"-- on: t.fail\n"
"INSERT INTO effects (k) VALUES (:key);\n"
"INSERT INTO effects (k) VALUES (NULL);\n";

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
fake_stat(struct store *st, int ci, const char *key, char *buf, size_t bufsz)
{
	const char	*s = fake_status(st, key);

	(void)ci;
	snprintf(buf, bufsz, "%s", s != NULL ? s : "-");
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

/* The first column of sql's first row on case ci's file ("-" or -1). */
static void
sqlite_query(int ci, const char *sql, const char *arg, char *buf,
    size_t bufsz)
{
	sqlite3		*db;
	sqlite3_stmt	*st;
	char		 p[128];

	snprintf(p, sizeof(p), "%s/case%d.sqlite", dir, ci);
	if (sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
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
sqlite_stat(struct store *st, int ci, const char *key, char *buf,
    size_t bufsz)
{
	(void)st;
	sqlite_query(ci, "SELECT status FROM events WHERE key = ?", key, buf,
	    bufsz);
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
mariadb_stat(struct store *st, int ci, const char *key, char *buf,
    size_t bufsz)
{
	char	 sql[160];

	(void)st;
	snprintf(sql, sizeof(sql), "SELECT status FROM `p%d_events` WHERE"
	    " event_key = '%s'", ci, key);
	mariadb_query(sql, buf, bufsz);
}

static const struct engine engines[] = {
	{ "fake", E_FAKE, fake_for, fake_count, fake_stat },
	{ "SQLite", E_SQLITE, sqlite_for, sqlite_count, sqlite_stat },
	{ "MariaDB", E_MARIADB, mariadb_for, mariadb_count, mariadb_stat },
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
run_step(const struct engine *en, struct store *st, int ci,
    const struct step *sp, char *got, size_t gotsz)
{
	struct store_claim	 c[BATCH];
	struct event		 ev[BATCH];
	struct store_work_item	 w;
	char			 keys[BATCH][64], own[BATCH][96], k[32], t[32];
	char			 pl[BATCH][96];
	char			 why[256];
	long long		 now = (long long)time(NULL), attempts;
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
		else
			snprintf(got, gotsz, "%s", NAME(hook_names,
			    store_failed(st, 0, &ev[0], "it failed", 2,
			    &attempts)));
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
	case DUE:
		snprintf(got, gotsz, "%s", NAME(work_names, store_work(st, NULL,
		    NULL, now + 86400, 0, &w)));
		break;
	case STATUS:
		en->status(st, ci, keys[0], got, gotsz);
		break;
	case PRUNE:
	case PRUNE_DRY:
		snprintf(got, gotsz, "%lld", store_prune(st, now + 7200,
		    sp->op == PRUNE_DRY, 0, &attempts, why, sizeof(why)));
		break;
	}
}

static const char *const op_names[] = {
	"claim", "lookup", "failed", "replay", "dry run", "work", "work due",
	"status", "prune", "prune, dry run"
};

static void
run_case(const struct engine *en, const struct pcase *pc, int ci)
{
	struct conf		*cf;
	struct store		*st;
	const struct step	*sp;
	char			 got[128];
	long long		 n;
	size_t			 i;
	int			 ok = 1;

	st = en->open(pc, ci, &cf);
	for (i = 0; i < sizeof(pc->steps) / sizeof(pc->steps[0]); i++) {
		sp = &pc->steps[i];
		if (sp->want == NULL)
			break;
		run_step(en, st, ci, sp, got, sizeof(got));
		if (strcmp(got, sp->want) != 0) {
			printf("# %s: step %zu (%s %s): %s, not %s\n", en->name,
			    i + 1, op_names[sp->op], sp->keys != NULL ?
			    sp->keys : "", got, sp->want);
			ok = 0;
			break;
		}
		if (sp->effects >= 0 && (n = en->count(st, ci, "effects")) !=
		    sp->effects) {
			printf("# %s: step %zu: %lld effects, not %lld\n", en->name,
			    i + 1, n, sp->effects);
			ok = 0;
			break;
		}
	}
	if (ok && pc->conflicts >= 0 && (n = en->count(st, ci,
	    "conflicts")) != pc->conflicts) {
		printf("# %s: %lld conflicts rows, not %lld\n", en->name, n,
		    pc->conflicts);
		ok = 0;
	}
	CHECK(ok, "%s: %s", en->name, pc->name);
	store_close(st);
	conf_free(cf);
}

int
main(void)
{
	struct conf	*cf;
	FILE		*f;
	size_t		 e, i;
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
				printf("ok %d - MariaDB: %s # SKIP no server "
				    "(tests/protocol.sh starts one)\n", ++tap_n,
				    cases[i].name);
				continue;
			}
			run_case(&engines[e], &cases[i], (int)i);
		}
	if (side != NULL)
		mydb_close(side);
	tap_rmdir(dir);
	return tap_done();
}
