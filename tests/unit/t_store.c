/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the SQLite store and actions (src/store/sqlite/engine.c, src/store/sqlite/actions.c).
 *
 * Creation and migration, the schema version guard, claims with their
 * savepoints (one failing event rolls back alone), duplicates and
 * conflicts, the write lock held by another connection, and the errors
 * of an actions file.  Each database lives in a temporary directory; a
 * second sqlite3 connection looks at what the store wrote.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "conf.h"
#include "lib/crypto.h"
#include "pipeline/event.h"
#include "hook.h"
#include "store/store.h"
#include "store/sqlite/engine.h"	/* sq_work_pick: its plan */
#include "tap.h"
#include "testlib.h"
#include "testev.h"
#include "store/sqlite/walguard.h"

#define RECEIVED	1700000000LL	/* received_at of the test events */

static char	 dir[64];	/* the temporary directory */

#include "testdb.h"

/*
 * Endpoint a: catch-all, 72h retention.  Line numbers matter: the
 * second statement of "t.fail" (line 18) fails on NOT NULL.
 */
static const char actions_a[] =
"-- t_store actions: effects of events.\n"			/* 1 */
"CREATE TABLE IF NOT EXISTS effects (\n"			/* 2 */
"\tkey\t\tTEXT NOT NULL,\n"					/* 3 */
"\ttype\t\tTEXT,\n"						/* 4 */
"\tendpoint\tTEXT,\n"						/* 5 */
"\treceived_at\tINTEGER,\n"					/* 6 */
"\tpayload_hash\tTEXT,\n"					/* 7 */
"\tv\t\tTEXT\n"							/* 8 */
");\n"								/* 9 */
"\n"								/* 10 */
"-- on: t.ok t.also\n"						/* 11 */
"INSERT INTO effects (key, type, endpoint, received_at, payload_hash, v)\n"
"VALUES (:key, :type, :endpoint, :received_at, :payload_hash,\n" /* 13 */
"    json_extract(:payload, '$.v'));\n"				/* 14 */
"\n"								/* 15 */
"-- on: t.fail\n"						/* 16 */
"INSERT INTO effects (key, type) VALUES (:key, :type);\n"	/* 17 */
"INSERT INTO effects (key, type) VALUES (NULL, :type);\n"	/* 18 */
"\n"								/* 19 */
"-- on: *\n"							/* 20 */
"INSERT INTO effects (key, type, v) VALUES (:key, :type, 'catchall');\n";

/* Endpoint b: no catch-all, kept forever. */
static const char actions_b[] =
"CREATE TABLE IF NOT EXISTS effects_b (key TEXT NOT NULL);\n"
"-- on: t.ok\n"
"INSERT INTO effects_b (key) VALUES (:key);\n";

/* Endpoints a and b over database dbname; a's actions from actname. */
static struct conf *
mkconf(const char *dbname, const char *actname)
{
	char		 db[sizeof(dir) + 64], acta[sizeof(dir) + 64];
	char		 actb[sizeof(dir) + 64], err[256];
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", path(db, dbname) },
		{ "ONCEHOOK_ENDPOINTS", "a,b" },
		{ "ONCEHOOK_BUSY_TIMEOUT_MS", "100" },
		{ "ONCEHOOK_A_SCHEME", "hmac-sha256" },
		{ "ONCEHOOK_A_SECRET", "secret-a" },
		{ "ONCEHOOK_A_RETENTION", "72h" },
		{ "ONCEHOOK_A_ACTIONS", path(acta, actname) },
		{ "ONCEHOOK_B_SCHEME", "hmac-sha256" },
		{ "ONCEHOOK_B_SECRET", "secret-b" },
		{ "ONCEHOOK_B_RETENTION", "forever" },
		{ "ONCEHOOK_B_ACTIONS", path(actb, "b.sql") },
		{ NULL, NULL }
	};
	struct conf	*cf;

	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	return cf;
}

/* A hand-made event; its hash is SHA-256 of the payload text. */
static void
mkev(struct event *ev, const char *key, const char *type,
    const char *payload)
{
	test_event(ev, key, type, payload, RECEIVED);
}

/* Claim one event on endpoint epi; returns its result. */
static enum hook_err
claim1(struct store *st, size_t epi, const struct event *ev,
    enum hook_err *txn)
{
	struct store_claim	 c;
	enum hook_err		 er;

	memset(&c, 0, sizeof(c));
	c.endpoint = epi;
	c.ev = ev;
	er = store_claim(st, &c, 1);
	if (txn != NULL)
		*txn = er;
	return c.result;
}

/* Claim a hand-made event (mkev()) on endpoint epi; its result. */
static enum hook_err
claim_new(struct store *st, size_t epi, const char *key, const char *type,
    const char *payload)
{
	struct event	 ev;
	enum hook_err	 er;

	mkev(&ev, key, type, payload);
	er = claim1(st, epi, &ev, NULL);
	event_clear(&ev);
	return er;
}

/* A second connection onto dbname. */
static sqlite3 *
peer(const char *dbname)
{
	char	 p[sizeof(dir) + 64];
	sqlite3	*db;

	if (sqlite3_open_v2(path(p, dbname), &db, SQLITE_OPEN_READWRITE,
	    NULL) != SQLITE_OK)
		BAIL("sqlite3_open %s: %s", p, sqlite3_errmsg(db));
	return db;
}

/* The store of cf (dbname) opened with init, and a peer connection
 * onto it in *q. */
static struct store *
open_peer(const struct conf *cf, const char *dbname, sqlite3 **q)
{
	struct store	*st;
	char		 err[512];

	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	*q = peer(dbname);
	return st;
}

/* The first column of the first row as text into buf; "(none)"/"(null)". */
static const char *
qtext(sqlite3 *db, const char *sql, char *buf, size_t bufsz)
{
	sqlite3_stmt	*st;
	const char	*t;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		BAIL("%s: %s", sql, sqlite3_errmsg(db));
	snprintf(buf, bufsz, "(none)");
	if (sqlite3_step(st) == SQLITE_ROW) {
		t = (const char *)sqlite3_column_text(st, 0);
		snprintf(buf, bufsz, "%s", t != NULL ? t : "(null)");
	}
	sqlite3_finalize(st);
	return buf;
}

static void
exec(sqlite3 *db, const char *sql)
{
	char	*msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		BAIL("%s: %s", sql, msg ? msg : "?");
}

static long long
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
rmtree(void)
{
	tap_rmdir(dir);
}

static void
test_init(void)
{
	char		 p[sizeof(dir) + 64], err[512], buf[64];
	struct conf	*cf = mkconf("db.sqlite", "a.sql");
	struct store	*st;
	struct stat	 sb;
	sqlite3		*q;
	int		 rc;

	CHECK(stat(path(p, "db.sqlite"), &sb) == -1 && errno == ENOENT,
	    "no database before init");
	st = store_open(cf, 0, err, sizeof(err));
	CHECK(st == NULL && strstr(err, "oncehook init") != NULL,
	    "open without init on a missing file fails: %s", err);
	CHECK(stat(p, &sb) == -1 && errno == ENOENT,
	    "open without init creates no file");
	store_close(st);

	st = store_open(cf, STORE_INIT, err, sizeof(err));
	CHECK(st != NULL, "init creates the database%s%s", st ? "" : ": ",
	    st ? "" : err);
	if (st == NULL)
		BAIL("cannot go on without a database");
	rc = stat(p, &sb);
	CHECK(rc == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & 07777) == 0600,
	    "database file has mode 0600 (got %o)",
	    rc == 0 ? (unsigned)(sb.st_mode & 07777) : 0);
	rc = stat(path(p, "db.sqlite-wal"), &sb);
	CHECK(rc == 0 && (sb.st_mode & 07777) == 0600,
	    "its WAL file has mode 0600 too (got %o)",
	    rc == 0 ? (unsigned)(sb.st_mode & 07777) : 0);

	q = peer("db.sqlite");
	CHECK(strcmp(qtext(q, "PRAGMA journal_mode", buf, sizeof(buf)),
	    "wal") == 0, "journal mode is WAL (got %s)", buf);
	CHECK(store_version() >= 1 &&
	    qint(q, "PRAGMA user_version") == store_version(),
	    "user_version is store_version() (%d)", store_version());
	CHECK(qint(q, "SELECT count(*) FROM sqlite_master WHERE type = "
	    "'table' AND name IN ('events', 'conflicts', 'effects', "
	    "'effects_b')") == 4,
	    "init made events, conflicts and both endpoints' setup tables");
	exec(q, "INSERT INTO effects (key, v) VALUES ('marker', 'kept')");
	store_close(st);

	st = store_open(cf, STORE_INIT, err, sizeof(err));
	CHECK(st != NULL, "init twice is fine%s%s", st ? "" : ": ",
	    st ? "" : err);
	CHECK(qint(q, "PRAGMA user_version") == store_version() &&
	    qint(q, "SELECT count(*) FROM effects WHERE key = 'marker'") == 1,
	    "second init keeps the version and the data");
	store_close(st);

	st = store_open(cf, 0, err, sizeof(err));
	CHECK(st != NULL, "open without init after init%s%s", st ? "" : ": ",
	    st ? "" : err);
	store_close(st);
	sqlite3_close(q);
	conf_free(cf);
}

static void
test_versions(void)
{
	char		 p[sizeof(dir) + 64], err[512], sql[64];
	struct conf	*cf;
	struct store	*st;
	sqlite3		*q;
	FILE		*f;

	/* An empty file, as left by touch(1): not initialised. */
	if ((f = fopen(path(p, "empty.sqlite"), "w")) == NULL)
		BAIL("%s: %s", p, strerror(errno));
	fclose(f);
	cf = mkconf("empty.sqlite", "a.sql");
	st = store_open(cf, 0, err, sizeof(err));
	CHECK(st == NULL && strstr(err, "oncehook init") != NULL,
	    "open without init on an empty file fails: %s", err);
	store_close(st);
	conf_free(cf);

	cf = mkconf("newer.sqlite", "a.sql");
	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("init newer.sqlite: %s", err);
	store_close(st);
	q = peer("newer.sqlite");
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
	    store_version() + 1);
	exec(q, sql);
	st = store_open(cf, 0, err, sizeof(err));
	CHECK(st == NULL && strstr(err, "newer") != NULL,
	    "a newer schema version is refused: %s", err);
	store_close(st);
	st = store_open(cf, STORE_INIT, err, sizeof(err));
	CHECK(st == NULL && strstr(err, "newer") != NULL,
	    "init refuses to touch a newer schema: %s", err);
	store_close(st);
	CHECK(qint(q, "PRAGMA user_version") == store_version() + 1,
	    "the newer version is left as it was");
	sqlite3_close(q);
	conf_free(cf);
}

static void
test_claim(void)
{
	char			 buf[512], sql[256], err[512];
	struct conf		*cf = mkconf("db.sqlite", "a.sql");
	struct store		*st;
	struct event		 e1, e1b, e1other, eb, ebx, enull, ecat;
	enum hook_err		 txn, er;
	long long		 t0, t1, v;
	sqlite3			*q;

	if ((st = store_open(cf, 0, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	q = peer("db.sqlite");
	mkev(&e1, "k1", "t.ok", "{\"v\":\"one\",\"id\":\"k1\"}");
	mkev(&e1b, "k1", "t.ok", "{\"v\":\"one\",\"id\":\"k1\"}");
	mkev(&e1other, "k1", "t.ok", "{\"v\":\"two\",\"id\":\"k1\"}");
	mkev(&eb, "k1", "t.ok", "{\"v\":\"b\"}");
	mkev(&ebx, "kb2", "t.unknown", "{\"v\":\"bx\"}");
	mkev(&enull, "knull", NULL, "{\"v\":\"untyped\"}");
	mkev(&ecat, "kcat", "t.other", "{\"v\":\"other\"}");

	t0 = (long long)time(NULL);
	er = claim1(st, 0, &e1, &txn);
	t1 = (long long)time(NULL);
	CHECK(txn == HOOK_OK && er == HOOK_OK, "claim of a new event: OK");
	CHECK(qint(q, "SELECT count(*) FROM events") == 1,
	    "one events row");
	CHECK(strcmp(qtext(q, "SELECT endpoint || '|' || key || '|' || type "
	    "|| '|' || status FROM events", buf, sizeof(buf)),
	    "a|k1|t.ok|processed") == 0,
	    "row: endpoint, key, type, status processed (%s)", buf);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM events WHERE "
	    "payload_hash = '%s' AND payload = '%s'", e1.hash, e1.payload);
	CHECK(qint(q, sql) == 1, "row: payload_hash and raw payload");
	CHECK(qint(q, "SELECT received_at FROM events") == RECEIVED,
	    "row: received_at is the event's");
	v = qint(q, "SELECT processed_at FROM events");
	CHECK(v >= t0 && v <= t1, "row: processed_at is the claim time");
	CHECK(qint(q, "SELECT expires_at FROM events") ==
	    RECEIVED + 72 * 3600, "row: expires_at = received_at + 72h");
	snprintf(sql, sizeof(sql), "SELECT endpoint || '|' || type || '|' || "
	    "received_at || '|' || payload_hash || '|' || v FROM effects "
	    "WHERE key = 'k1'");
	snprintf(err, sizeof(err), "a|t.ok|%lld|%s|one", RECEIVED, e1.hash);
	CHECK(strcmp(qtext(q, sql, buf, sizeof(buf)), err) == 0,
	    "action ran with :endpoint :type :received_at :payload_hash "
	    ":payload bound (%s)", buf);

	CHECK(store_lookup(st, 1, &eb) == HOOK_OK,
	    "lookup of the same key on another endpoint: OK");

	er = claim1(st, 0, &e1other, &txn);
	CHECK(txn == HOOK_OK && er == HOOK_ECONFLICT,
	    "claim of a present key, other hash: HOOK_ECONFLICT");
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM conflicts WHERE "
	    "endpoint = 'a' AND key = 'k1' AND payload_hash = '%s' AND "
	    "received_at = %lld", e1other.hash, RECEIVED);
	CHECK(qint(q, sql) == 1, "the conflict is recorded in conflicts");
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM events WHERE "
	    "payload_hash = '%s'", e1.hash);
	CHECK(qint(q, sql) == 1 &&
	    qint(q, "SELECT count(*) FROM events") == 1 &&
	    qint(q, "SELECT count(*) FROM effects WHERE key = 'k1'") == 1,
	    "a conflict changes neither the event nor its effects");
	er = store_conflict(st, 0, &e1other);
	CHECK(er == HOOK_OK &&
	    qint(q, "SELECT count(*) FROM conflicts") == 2,
	    "store_conflict adds a conflicts row");

	er = claim1(st, 1, &eb, &txn);
	CHECK(txn == HOOK_OK && er == HOOK_OK &&
	    qint(q, "SELECT count(*) FROM events WHERE key = 'k1'") == 2,
	    "the same key on another endpoint is another event");
	CHECK(qint(q, "SELECT count(*) FROM effects_b WHERE key = 'k1'") == 1,
	    "endpoint b ran its own actions file");
	CHECK(qint(q, "SELECT expires_at FROM events WHERE endpoint = 'b'") ==
	    -2, "retention forever: expires_at NULL");

	er = claim1(st, 1, &ebx, &txn);
	CHECK(txn == HOOK_OK && er == HOOK_OK &&
	    qint(q, "SELECT count(*) FROM events WHERE key = 'kb2' AND "
	    "type = 't.unknown'") == 1,
	    "type with no section and no catch-all: recorded, OK");
	CHECK(qint(q, "SELECT count(*) FROM effects_b") == 1 &&
	    qint(q, "SELECT count(*) FROM effects WHERE key = 'kb2'") == 0,
	    "... and no action ran");

	er = claim1(st, 0, &ecat, &txn);
	CHECK(txn == HOOK_OK && er == HOOK_OK &&
	    strcmp(qtext(q, "SELECT type || '|' || v FROM effects WHERE "
	    "key = 'kcat'", buf, sizeof(buf)), "t.other|catchall") == 0,
	    "catch-all runs for an unknown type (%s)", buf);
	er = claim1(st, 0, &enull, &txn);
	CHECK(txn == HOOK_OK && er == HOOK_OK &&
	    qint(q, "SELECT count(*) FROM events WHERE key = 'knull' AND "
	    "type IS NULL") == 1 &&
	    strcmp(qtext(q, "SELECT ifnull(type, 'NULL') || '|' || v FROM "
	    "effects WHERE key = 'knull'", buf, sizeof(buf)),
	    "NULL|catchall") == 0,
	    "event without a type: type NULL, catch-all ran (%s)", buf);

	event_clear(&e1);
	event_clear(&e1b);
	event_clear(&e1other);
	event_clear(&eb);
	event_clear(&ebx);
	event_clear(&enull);
	event_clear(&ecat);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

static void
test_savepoints(void)
{
	char			 err[512], p[sizeof(dir) + 64];
	char			 want[sizeof(dir) + 80];
	struct conf		*cf = mkconf("db.sqlite", "a.sql");
	struct store		*st;
	struct event		 ev[3], again;
	struct store_claim	 c[3];
	enum hook_err		 er, txn;
	sqlite3			*q;
	size_t			 i;

	if ((st = store_open(cf, 0, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	q = peer("db.sqlite");
	mkev(&ev[0], "m1", "t.ok", "{\"v\":\"m1\"}");
	mkev(&ev[1], "m2", "t.fail", "{\"v\":\"m2\"}");
	mkev(&ev[2], "m3", "t.ok", "{\"v\":\"m3\"}");
	memset(c, 0, sizeof(c));
	for (i = 0; i < 3; i++)
		c[i].ev = &ev[i];
	er = store_claim(st, c, 3);
	CHECK(er == HOOK_OK, "batch with a failing action commits");
	CHECK(c[0].result == HOOK_OK && c[1].result == HOOK_EACTION &&
	    c[2].result == HOOK_OK,
	    "results: OK, HOOK_EACTION, OK (got %d %d %d)", (int)c[0].result,
	    (int)c[1].result, (int)c[2].result);
	CHECK(qint(q, "SELECT count(*) FROM events WHERE key IN ('m1', "
	    "'m3')") == 2 && qint(q, "SELECT count(*) FROM effects WHERE "
	    "key IN ('m1', 'm3')") == 2,
	    "first and third events and their effects committed");
	CHECK(qint(q, "SELECT count(*) FROM events WHERE key = 'm2'") == 0,
	    "the failed event has no row");
	CHECK(qint(q, "SELECT count(*) FROM effects WHERE key = 'm2'") == 0,
	    "the failed event's first statement was rolled back too");
	snprintf(want, sizeof(want), "%s:18:", path(p, "a.sql"));
	CHECK(strstr(c[1].why, want) != NULL &&
	    strstr(c[1].why, "NOT NULL") != NULL,
	    "why names path:line and the reason: %s", c[1].why);

	mkev(&again, "m2", "t.fail", "{\"v\":\"m2\"}");
	er = claim1(st, 0, &again, &txn);
	CHECK(txn == HOOK_OK && er == HOOK_EACTION &&
	    qint(q, "SELECT count(*) FROM events WHERE key = 'm2'") == 0,
	    "retry of the failed event fails again, still no row");
	event_clear(&again);
	mkev(&again, "m4", "t.ok", "{\"v\":\"m4\"}");
	er = claim1(st, 0, &again, &txn);
	CHECK(txn == HOOK_OK && er == HOOK_OK &&
	    qint(q, "SELECT count(*) FROM effects WHERE key = 'm4'") == 1,
	    "the store claims normally after a failed action");
	CHECK(qint(q, "SELECT count(*) FROM effects WHERE key IS NULL") == 0,
	    "no stray effect anywhere");
	event_clear(&again);

	for (i = 0; i < 3; i++)
		event_clear(&ev[i]);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

static void
test_busy(void)
{
	char			 err[512];
	struct conf		*cf = mkconf("db.sqlite", "a.sql");
	struct store		*st;
	struct event		 known, fresh;
	struct store_claim	 c;
	enum hook_err		 er;
	long long		 t0, ms;
	sqlite3			*lock, *q;

	if ((st = store_open(cf, 0, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	q = peer("db.sqlite");
	lock = peer("db.sqlite");
	mkev(&known, "m1", "t.ok", "{\"v\":\"m1\"}");
	mkev(&fresh, "busy1", "t.ok", "{\"v\":\"busy\"}");
	CHECK(store_lookup(st, 0, &known) == HOOK_DUP,
	    "known event before the lock: HOOK_DUP");

	exec(lock, "BEGIN IMMEDIATE");
	memset(&c, 0, sizeof(c));
	c.ev = &fresh;
	t0 = now_ms();
	er = store_claim(st, &c, 1);
	ms = now_ms() - t0;
	CHECK(er == HOOK_EBUSY && c.result == HOOK_EBUSY,
	    "write lock held elsewhere: HOOK_EBUSY (got %d, %d)", (int)er,
	    (int)c.result);
	CHECK(ms >= 50 && ms < 2000,
	    "... after waiting the busy timeout of 100 ms (%lld ms)", ms);
	CHECK(store_lookup(st, 0, &known) == HOOK_DUP,
	    "lookup of a known event still works under the lock");
	CHECK(store_lookup(st, 0, &fresh) == HOOK_OK,
	    "lookup of a new event still works under the lock");
	er = store_conflict(st, 0, &fresh);
	CHECK(er == HOOK_EBUSY,
	    "store_conflict under the lock: HOOK_EBUSY");
	exec(lock, "ROLLBACK");

	CHECK(qint(q, "SELECT count(*) FROM events WHERE key = 'busy1'") ==
	    0 && qint(q, "SELECT count(*) FROM effects WHERE key = "
	    "'busy1'") == 0 && qint(q, "SELECT count(*) FROM conflicts "
	    "WHERE key = 'busy1'") == 0,
	    "nothing was written while busy");
	memset(&c, 0, sizeof(c));
	c.ev = &fresh;
	er = store_claim(st, &c, 1);
	CHECK(er == HOOK_OK && c.result == HOOK_OK &&
	    qint(q, "SELECT count(*) FROM effects WHERE key = 'busy1'") == 1,
	    "once the lock is gone the claim succeeds");

	event_clear(&known);
	event_clear(&fresh);
	sqlite3_close(lock);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

/*
 * Open the initialised database with actions text as a's file; the
 * open must fail with err holding every string of want.
 */
static void
bad_actions(const char *text, const char *want1, const char *want2,
    const char *what)
{
	char		 err[512], p[sizeof(dir) + 64], loc[sizeof(dir) + 80];
	struct conf	*cf = mkconf("db.sqlite", "bad.sql");
	struct store	*st;

	write_file("bad.sql", text);
	err[0] = '\0';
	st = store_open(cf, 0, err, sizeof(err));
	snprintf(loc, sizeof(loc), "%s%s", path(p, "bad.sql"), want1);
	CHECK(st == NULL && strstr(err, loc) != NULL &&
	    (want2 == NULL || strstr(err, want2) != NULL),
	    "%s: reported as %s... (got %s)", what, loc, err);
	store_close(st);
	conf_free(cf);
}

/* 1 if cf's store opens (err says why not) and processes a t.ok event
 * under key with payload; closed again. */
static int
opened_claims(const struct conf *cf, const char *key, const char *payload,
    char *err, size_t errsz)
{
	struct store	*st;
	int		 ok;

	err[0] = '\0';
	if ((st = store_open(cf, 0, err, errsz)) == NULL)
		return 0;
	ok = claim_new(st, 0, key, "t.ok", payload) == HOOK_OK;
	store_close(st);
	return ok;
}

/*
 * A long-lived process (actfile_keep()) runs the actions file it first
 * read: a store connected again (a connection the server closed while
 * idle, a moved database) after the file was edited in place still
 * runs the first text, until a restart (here actfile_forget()); a file
 * missing at first is read once it exists; a text that failed to load
 * is not kept, so its fix in place is read.
 */
static void
test_actions_once(void)
{
	char		 err[512];
	struct conf	*cf = mkconf("once.sqlite", "once.sql");
	struct store	*st;
	sqlite3		*q;

	actfile_keep(1);
	CHECK(store_open(cf, STORE_INIT, err, sizeof(err)) == NULL &&
	    strstr(err, "once.sql: ") != NULL, "a missing file: the store "
	    "does not open (%s)", err);
	write_file("once.sql", "CREATE TABLE IF NOT EXISTS once (k TEXT);\n"
	    "-- on: t.ok\nINSERT INTO once VALUES (:key);\n");
	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	CHECK(claim_new(st, 0, "o1", "t.ok", "{\"n\":1}") == HOOK_OK,
	    "once the file exists it is read: t.ok processed");
	store_close(st);
	/* Edited in place, as an operator would, with no restart. */
	edit_file("once.sql", "-- on: t.ok\nINSERT INTO gone VALUES (:key);\n");
	CHECK(opened_claims(cf, "o2", "{\"n\":2}", err, sizeof(err)),
	    "connected again after an edit: the first text still runs (%s)",
	    err);
	q = peer("once.sqlite");
	CHECK(qint(q, "SELECT COUNT(*) FROM once") == 2, "... both events "
	    "in the first text's table");
	sqlite3_close(q);
	actfile_forget(NULL);
	CHECK(store_open(cf, 0, err, sizeof(err)) == NULL &&
	    strstr(err, "gone") != NULL, "after a restart the edit is read "
	    "(%s)", err);
	/* That failed load kept nothing: fixed in place, it is read. */
	edit_file("once.sql", "-- on: t.ok\n"
	    "INSERT INTO once VALUES ('fixed');\n");
	CHECK(opened_claims(cf, "o3", "{\"n\":3}", err, sizeof(err)),
	    "a text that failed to load is not kept: its fix in place runs "
	    "(%s)", err);
	actfile_keep(0);
	actfile_forget(NULL);
	conf_free(cf);
}

/*
 * Setup parts may not put a trigger on oncehook's tables, nor a trigger
 * elsewhere that writes them (it is refused when an action would fire
 * it): either could drop a claim and let an event run twice.
 */
static void
test_guard_setup(void)
{
	struct conf	*cf;
	struct store	*st;
	char		 err[512];

	write_file("g1.sql", "CREATE TABLE IF NOT EXISTS n (k TEXT);\n"
	    "CREATE TRIGGER IF NOT EXISTS gone AFTER INSERT ON events\n"
	    "BEGIN DELETE FROM events WHERE id = NEW.id; END;\n"
	    "-- on: t.ok\nINSERT INTO n VALUES (:key);\n");
	cf = mkconf("g1.sqlite", "g1.sql");
	st = store_open(cf, STORE_INIT, err, sizeof(err));
	CHECK(st == NULL && strstr(err, "g1.sql:2:") != NULL,
	    "setup: a trigger on events is refused (%s)", err);
	store_close(st);
	conf_free(cf);

	write_file("g2.sql", "CREATE TABLE IF NOT EXISTS n (k TEXT);\n"
	    "CREATE TRIGGER IF NOT EXISTS sneak AFTER INSERT ON n\n"
	    "BEGIN DELETE FROM events; END;\n"
	    "-- on: t.ok\nINSERT INTO n VALUES (:key);\n");
	cf = mkconf("g2.sqlite", "g2.sql");
	st = store_open(cf, STORE_INIT, err, sizeof(err));
	CHECK(st == NULL && strstr(err, "events") != NULL,
	    "an action firing a trigger that writes events is refused (%s)",
	    err);
	store_close(st);
	conf_free(cf);
}

/*
 * A trigger that rolls the whole transaction back (RAISE(ROLLBACK)):
 * the event is an action failure, not an internal error, and leaves
 * nothing behind.
 */
static void
test_auto_rollback(void)
{
	struct conf	*cf;
	struct store	*st;
	struct event	 ev;
	enum hook_err	 er, txn;
	char		 err[512];
	sqlite3		*q;

	write_file("rb.sql", "CREATE TABLE IF NOT EXISTS rb (k TEXT);\n"
	    "CREATE TRIGGER IF NOT EXISTS rb_no BEFORE INSERT ON rb\n"
	    "BEGIN SELECT RAISE(ROLLBACK, 'refused'); END;\n"
	    "-- on: t.ok\n"
	    "INSERT INTO rb (k) VALUES (:key);\n");
	cf = mkconf("rb.sqlite", "rb.sql");
	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	mkev(&ev, "rb1", "t.ok", "{\"v\":1}");
	er = claim1(st, 0, &ev, &txn);
	CHECK(er == HOOK_EACTION, "RAISE(ROLLBACK) in an action: "
	    "action_failed (got %d)", er);
	q = peer("rb.sqlite");
	CHECK(qint(q, "SELECT count(*) FROM events") == 0 &&
	    qint(q, "SELECT count(*) FROM rb") == 0,
	    "RAISE(ROLLBACK): no event row, no effect");
	sqlite3_close(q);
	event_clear(&ev);
	store_close(st);
	conf_free(cf);
}

/*
 * The batch rule (store/store.h, rule 4): in one store_claim() of several
 * events, a claim whose action fails -- a statement error, RAISE(ABORT)
 * or RAISE(FAIL), or a trigger's RAISE(ROLLBACK) that ends the whole
 * transaction -- fails alone and the others commit; a COMMIT that fails
 * (here a deferred foreign key) fails them all with 503.
 */
static void
test_batch_rule(void)
{
	static const struct {
		const char	*types[4];
		enum hook_err	 want[4];
		enum hook_err	 txn;
		const char	*what;
	} cases[] = {
		{ { "t.ok", "t.rollback", "t.ok", NULL },
		  { HOOK_OK, HOOK_EACTION, HOOK_OK }, HOOK_OK,
		  "RAISE(ROLLBACK) in the middle" },
		{ { "t.rollback", "t.ok", "t.ok", NULL },
		  { HOOK_EACTION, HOOK_OK, HOOK_OK }, HOOK_OK,
		  "RAISE(ROLLBACK) first" },
		{ { "t.ok", "t.ok", "t.rollback", NULL },
		  { HOOK_OK, HOOK_OK, HOOK_EACTION }, HOOK_OK,
		  "RAISE(ROLLBACK) last" },
		{ { "t.ok", "t.stmt", "t.rollback", "t.ok" },
		  { HOOK_OK, HOOK_EACTION, HOOK_EACTION, HOOK_OK }, HOOK_OK,
		  "a statement error and RAISE(ROLLBACK)" },
		{ { "t.abort", "t.ok", "t.fail", NULL },
		  { HOOK_EACTION, HOOK_OK, HOOK_EACTION }, HOOK_OK,
		  "RAISE(ABORT) and RAISE(FAIL)" },
		{ { "t.rollback", "t.rollback", NULL, NULL },
		  { HOOK_EACTION, HOOK_EACTION }, HOOK_OK,
		  "every claim rolls the transaction back" },
		{ { "t.ok", "t.defer", "t.ok", NULL },
		  { HOOK_EBUSY, HOOK_EBUSY, HOOK_EBUSY }, HOOK_EBUSY,
		  "a COMMIT that fails (deferred foreign key)" },
	};
	struct conf		*cf;
	struct store		*st;
	struct event		 ev[4];
	struct store_claim	 c[4];
	enum hook_err		 txn;
	char			 key[32], sql[256], body[4][64];
	sqlite3			*q;
	size_t			 i, j, n;
	int			 ok, rows, effects, want_rows;

	write_file("batch.sql",
	    "CREATE TABLE IF NOT EXISTS fx (k TEXT NOT NULL);\n"
	    "CREATE TABLE IF NOT EXISTS rbt (k TEXT);\n"
	    "CREATE TRIGGER IF NOT EXISTS rbt_no BEFORE INSERT ON rbt\n"
	    "BEGIN SELECT RAISE(ROLLBACK, 'refused'); END;\n"
	    "CREATE TABLE IF NOT EXISTS abt (k TEXT);\n"
	    "CREATE TRIGGER IF NOT EXISTS abt_no BEFORE INSERT ON abt\n"
	    "BEGIN SELECT RAISE(ABORT, 'no'); END;\n"
	    "CREATE TABLE IF NOT EXISTS flt (k TEXT);\n"
	    "CREATE TRIGGER IF NOT EXISTS flt_no BEFORE INSERT ON flt\n"
	    "BEGIN SELECT RAISE(FAIL, 'no'); END;\n"
	    "CREATE TABLE IF NOT EXISTS parent (id INTEGER PRIMARY KEY);\n"
	    "CREATE TABLE IF NOT EXISTS child (pid INTEGER REFERENCES "
	    "parent (id) DEFERRABLE INITIALLY DEFERRED);\n"
	    "-- on: t.ok\n"
	    "INSERT INTO fx (k) VALUES (:key);\n"
	    "-- on: t.stmt\n"
	    "INSERT INTO fx (k) VALUES (:key);\n"
	    "INSERT INTO fx (k) VALUES (NULL);\n"
	    "-- on: t.rollback\n"
	    "INSERT INTO fx (k) VALUES (:key);\n"
	    "INSERT INTO rbt (k) VALUES (:key);\n"
	    "-- on: t.abort\n"
	    "INSERT INTO fx (k) VALUES (:key);\n"
	    "INSERT INTO abt (k) VALUES (:key);\n"
	    "-- on: t.fail\n"
	    "INSERT INTO fx (k) VALUES (:key);\n"
	    "INSERT INTO flt (k) VALUES (:key);\n"
	    "-- on: t.defer\n"
	    "INSERT INTO fx (k) VALUES (:key);\n"
	    "INSERT INTO child (pid) VALUES (999);\n");
	cf = mkconf("batch.sqlite", "batch.sql");
	st = open_peer(cf, "batch.sqlite", &q);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(c, 0, sizeof(c));
		for (n = 0; n < 4 && cases[i].types[n] != NULL; n++) {
			/* Distinct payloads: endpoint a has the replay guard. */
			snprintf(key, sizeof(key), "b%zu-%zu", i, n);
			snprintf(body[n], sizeof(body[n]), "{\"v\":\"%s\"}",
			    key);
			mkev(&ev[n], key, cases[i].types[n], body[n]);
			c[n].ev = &ev[n];
		}
		txn = store_claim(st, c, n);
		ok = txn == cases[i].txn;
		want_rows = 0;
		for (j = 0; j < n; j++) {
			ok &= c[j].result == cases[i].want[j];
			want_rows += cases[i].want[j] == HOOK_OK;
		}
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM events WHERE "
		    "key LIKE 'b%zu-%%'", i);
		rows = (int)qint(q, sql);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM fx WHERE "
		    "k LIKE 'b%zu-%%'", i);
		effects = (int)qint(q, sql);
		CHECK(ok && rows == want_rows && effects == want_rows,
		    "batch, %s: each claim as its own failure says, the others "
		    "committed with their effects (txn %d, results %d %d %d "
		    "%d, rows %d, effects %d, want %d)", cases[i].what,
		    (int)txn, (int)c[0].result, (int)c[1].result,
		    (int)c[2].result, (int)c[3].result, rows, effects,
		    want_rows);
		for (j = 0; j < n; j++)
			event_clear(&ev[j]);
	}
	/* The store goes on after all that. */
	mkev(&ev[0], "b-after", "t.ok", "{\"v\":1}");
	CHECK(claim1(st, 0, &ev[0], &txn) == HOOK_OK && txn == HOOK_OK &&
	    qint(q, "SELECT count(*) FROM fx WHERE k = 'b-after'") == 1,
	    "batch: the next claim commits");
	event_clear(&ev[0]);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

static void
test_actions_errors(void)
{
	char		 err[512];
	struct conf	*cf;
	struct store	*st;
	sqlite3		*q;

	bad_actions("-- on: t.ok\n"
	    "INSERT INTO effects (key) VALUES (:key);\n"
	    "INSERT INTO effects (key, v) VALUES (:key, :foo);\n",
	    ":3:", ":foo", "unknown parameter :foo");
	bad_actions("-- on: t.ok\n"
	    "INSERT INTO effects (key) VALUES (:key);\n"
	    "INSERTT INTO effects (key) VALUES (:key);\n",
	    ":3:", "syntax error", "SQL syntax error in a second statement");
	bad_actions("-- on: t.ok\n"
	    "INSERT INTO effects (key) VALUES (:key) ,;\n",
	    ":2:", "syntax error", "SQL syntax error in a first statement");
	bad_actions("-- on: t.ok\n"
	    "INSERT INTO nosuch (key) VALUES (:key);\n",
	    ":2:", "no such table", "missing table");
	bad_actions("-- on: t.ok\n"
	    "INSERT INTO effects (key) VALUES (:key);\n"
	    "\n"
	    "-- on: t.other t.ok\n"
	    "INSERT INTO effects (key) VALUES (:key);\n",
	    ":4:", "t.ok", "the same type in two sections");
	bad_actions("-- on: t.ok t.ok\n"
	    "INSERT INTO effects (key) VALUES (:key);\n",
	    ":1:", "t.ok", "the same type twice on one line");
	bad_actions("-- on: *\n"
	    "INSERT INTO effects (key) VALUES (:key);\n"
	    "-- on: *\n"
	    "INSERT INTO effects (key) VALUES (:key);\n",
	    ":3:", "*", "two catch-all sections");
	bad_actions("-- on: t.ok\n"
	    "INSERT INTO effects (key) VALUES (:key);\n"
	    "COMMIT;\n",
	    ":3:", "transaction", "COMMIT in an action is refused");
	bad_actions("-- on: t.ok\n"
	    "SAVEPOINT x;\n",
	    ":2:", "transaction", "SAVEPOINT in an action is refused");
	bad_actions("-- on: t.ok\n"
	    "ATTACH DATABASE '/tmp/x.db' AS x;\n",
	    ":2:", "attach", "ATTACH in an action is refused");
	bad_actions("-- on: t.ok\n"
	    "PRAGMA foreign_keys = OFF;\n",
	    ":2:", "PRAGMA", "PRAGMA in an action is refused");
	bad_actions("-- on: t.ok\n"
	    "DELETE FROM events WHERE key = :key;\n",
	    ":2:", "events", "writing events in an action is refused");
	bad_actions("-- on: t.ok\n"
	    "CREATE TEMP TRIGGER wipe AFTER INSERT ON effects BEGIN\n"
	    "  DELETE FROM events; END;\n",
	    ":2:", "setup part", "a trigger created by an action is refused");
	bad_actions("-- on: t.ok\n"
	    "ALTER TABLE events RENAME TO events_old;\n",
	    ":2:", NULL, "ALTER TABLE events in an action is refused");
	bad_actions("-- on: t.ok\n"
	    "VACUUM;\n",
	    ":2:", "setup part", "VACUUM in an action is refused");
	bad_actions("-- on: t.ok\n"
	    "DROP INDEX events_endpoint_payload;\n",
	    ":2:", NULL, "DROP INDEX on events in an action is refused");
	bad_actions("-- on: t.ok\n"
	    "INSERT INTO effects (key) VALUES (:key);\n"
	    "-- on:\n"
	    "INSERT INTO effects (key) VALUES (:key);\n",
	    ":3:", NULL, "a marker without a type");

	/* A missing actions file. */
	cf = mkconf("db.sqlite", "nosuch.sql");
	st = store_open(cf, 0, err, sizeof(err));
	CHECK(st == NULL && strstr(err, "nosuch.sql") != NULL,
	    "missing actions file names it: %s", err);
	store_close(st);
	conf_free(cf);

	/* A failing setup leaves a new database uninitialised. */
	write_file("setupbad.sql", "CREATE TABLE IF NOT EXISTS ok1 (a);\n"
	    "CREATE TABLE broken (;\n-- on: t.ok\nSELECT 1;\n");
	cf = mkconf("setupfail.sqlite", "setupbad.sql");
	st = store_open(cf, STORE_INIT, err, sizeof(err));
	CHECK(st == NULL && strstr(err, "setupbad.sql") != NULL,
	    "failing setup: init fails naming the file: %s", err);
	store_close(st);
	q = peer("setupfail.sqlite");
	CHECK(qint(q, "PRAGMA user_version") == 0 &&
	    qint(q, "SELECT count(*) FROM sqlite_master WHERE name IN "
	    "('events', 'ok1')") == 0,
	    "failing setup: the whole init rolled back");
	sqlite3_close(q);
	conf_free(cf);
}

/*
 * A backup moved over the database while a connection holds the old
 * file: a new connection must not read the old file's -wal at the path
 * (store/sqlite/walguard.h); it is refused (HOOK_EBUSY) until the old one lets go,
 * which an idle check does.  Two connections to the same file are not
 * in each other's way.
 */
static void
test_replaced(void)
{
	struct conf	*cf = mkconf("r.sqlite", "a.sql");
	struct store	*old, *same, *st;
	enum hook_err	 er;
	char		 err[512], p[sizeof(dir) + 64], bak[sizeof(dir) + 64];
	char		 sql[sizeof(dir) + 96], buf[64];
	sqlite3		*q;

	if ((old = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	er = store_connect(cf, 0, &same, err, sizeof(err));
	CHECK(er == HOOK_OK, "a second connection to the same file: %d (%s)",
	    er, er == HOOK_OK ? "" : err);
	store_close(same);
	CHECK(claim_new(old, 0, "r1", "t.ok", "{\"n\":1}") ==
	    HOOK_OK, "r1 claimed");
	q = peer("r.sqlite");
	snprintf(sql, sizeof(sql), "VACUUM INTO '%s'", path(bak, "r.bak"));
	exec(q, sql);
	sqlite3_close(q);
	CHECK(claim_new(old, 0, "r2", "t.ok", "{\"n\":2}") ==
	    HOOK_OK, "r2 claimed after the "
	    "backup");
	if (rename(bak, path(p, "r.sqlite")) == -1)
		BAIL("rename: %s", strerror(errno));

	st = NULL;
	err[0] = '\0';
	er = store_connect(cf, 0, &st, err, sizeof(err));
	CHECK(er == HOOK_EBUSY && st == NULL && strstr(err, "replaced") !=
	    NULL, "backup moved over a database in use: a new connection is "
	    "refused, busy (%d: %s)", er, err);
	store_close(st);
	CHECK(store_idle(old) == 1, "the old connection notices when idle");
	store_close(old);
	er = store_connect(cf, 0, &st, err, sizeof(err));
	CHECK(er == HOOK_OK, "once it let go, the new file opens (%d: %s)", er,
	    er == HOOK_OK ? "" : err);
	if (st != NULL) {
		CHECK(claim_new(st, 0, "r3", "t.ok", "{\"n\":3}") ==
		    HOOK_OK, "r3 claimed in the "
		    "restored file");
		CHECK(store_idle(st) == 0, "an idle check of a file in place");
		store_close(st);
	}
	q = peer("r.sqlite");
	CHECK(strcmp(qtext(q, "PRAGMA integrity_check", buf, sizeof(buf)),
	    "ok") == 0, "integrity_check of the restored file: %s", buf);
	CHECK(qint(q, "SELECT group_concat(key) FROM events") != -1 &&
	    strcmp(qtext(q, "SELECT group_concat(key, ',') FROM (SELECT key "
	    "FROM events ORDER BY key)", buf, sizeof(buf)), "r1,r3") == 0,
	    "the restored file has the backup's events and the new one: %s",
	    buf);
	sqlite3_close(q);
	conf_free(cf);
}

/*
 * A -shm made immutable (chattr +i) under an open connection: a claim
 * that comes with no lookup before it, as the shared writer's do, is
 * refused busy before BEGIN writes SQLite's mapping of the file (which
 * would be SIGBUS), and the connection is marked broken; once the
 * attribute is gone a new connection claims.  Needs root and chattr on
 * the file system of /tmp.
 */
static void
test_immutable_shm(void)
{
	struct conf	*cf = mkconf("i.sqlite", "a.sql");
	struct store	*st;
	char		 err[512], p[sizeof(dir) + 64], cmd[sizeof(p) + 64];

	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	CHECK(claim_new(st, 0, "i1", "t.ok", "{\"n\":1}") == HOOK_OK,
	    "i1 claimed");
	snprintf(cmd, sizeof(cmd), "chattr +i '%s-shm' 2>/dev/null",
	    path(p, "i.sqlite"));
	if (geteuid() != 0 || system(cmd) != 0) {
		printf("ok %d # SKIP immutable -shm: needs root and chattr\n",
		    ++tap_n);
		printf("ok %d # SKIP immutable -shm: needs root and chattr\n",
		    ++tap_n);
		store_close(st);
		conf_free(cf);
		return;
	}
	CHECK(claim_new(st, 0, "i2", "t.ok", "{\"n\":2}") == HOOK_EBUSY &&
	    store_broken(st), "immutable -shm: a claim with no lookup before "
	    "it is busy (503) before BEGIN, the connection broken, no SIGBUS");
	snprintf(cmd, sizeof(cmd), "chattr -i '%s-shm'", p);
	if (system(cmd) != 0)
		BAIL("%s failed", cmd);
	store_close(st);
	if ((st = store_open(cf, 0, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	CHECK(claim_new(st, 0, "i2", "t.ok", "{\"n\":2}") == HOOK_OK,
	    "-shm writable again: i2 claimed by a new connection");
	store_close(st);
	conf_free(cf);
}

/*
 * Another process holds oncehook's write lock for hold_ms (store/sqlite/walguard.h):
 * fork it, and return once it holds the lock.
 */
static pid_t
hold_write_lock(const char *dbname, long hold_ms)
{
	struct walguard	 g;
	struct stat	 sb;
	char		 p[sizeof(dir) + 64], err[256], c = 'x';
	long		 waited;
	int		 fds[2];
	pid_t		 pid;

	if (pipe(fds) == -1 || stat(path(p, dbname), &sb) == -1)
		BAIL("pipe/stat: %s", strerror(errno));
	if ((pid = tap_fork()) == -1)
		BAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		if (walguard_take(&g, p, sb.st_ino, err, sizeof(err)) != 0 ||
		    walguard_lock(&g, 1000, &waited) != 0 || !g.locked)
			_exit(1);
		(void)write(fds[1], &c, 1);
		usleep((useconds_t)hold_ms * 1000);
		walguard_unlock(&g);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1)
		BAIL("the lock holder did not start");
	close(fds[0]);
	return pid;
}

/*
 * oncehook's writers wait for each other in the kernel: a claim waits
 * while another process holds the write lock, goes on as it frees, and
 * is busy (503) if it is held past the busy timeout (100 ms here).
 */
static void
test_write_lock(void)
{
	struct conf	*cf = mkconf("w.sqlite", "a.sql");
	struct store	*st;
	struct store_claim c;
	struct event	 ev;
	enum hook_err	 er;
	long long	 t0, took;
	char		 err[512];
	int		 status;
	pid_t		 pid;

	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	pid = hold_write_lock("w.sqlite", 60);
	mkev(&ev, "w1", "t.ok", "{\"n\":1}");
	t0 = now_ms();
	er = claim1(st, 0, &ev, NULL);
	took = now_ms() - t0;
	event_clear(&ev);
	waitpid(pid, &status, 0);
	/* Went on when it freed: a claim still waiting at the busy
	 * timeout (100 ms) would be busy.  No upper bound on the time: the
	 * claim's own work, under valgrind on a loaded machine, is not. */
	CHECK(er == HOOK_OK && took >= 50, "write lock held 60 ms elsewhere: "
	    "the claim waited for it and went on when it freed (%d after "
	    "%lld ms)", er, took);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "the holder held the lock");

	pid = hold_write_lock("w.sqlite", 400);
	mkev(&ev, "w2", "t.ok", "{\"n\":2}");
	memset(&c, 0, sizeof(c));
	c.endpoint = 0;
	c.ev = &ev;
	t0 = now_ms();
	er = store_claim(st, &c, 1);
	took = now_ms() - t0;
	event_clear(&ev);
	waitpid(pid, &status, 0);
	/* Busy at the timeout, not after the whole 400 ms hold: a claim
	 * that had waited that long would have had the lock. */
	CHECK(er == HOOK_EBUSY && c.result == HOOK_EBUSY && took >= 90 &&
	    strstr(c.why, "write lock") != NULL,
	    "write lock held past the busy timeout: busy after it (%d, %d "
	    "after %lld ms: %s)", er, c.result, took, c.why);
	CHECK(claim_new(st, 0, "w2", "t.ok", "{\"n\":2}") ==
	    HOOK_OK, "once it is free the "
	    "claim goes through");
	store_close(st);
	conf_free(cf);
}

/* Claim the i-th filler event (key prefix and i, a body of some length)
 * on endpoint 0: it must be new. */
static void
claim_filler(struct store *st, const char *prefix, int i)
{
	struct event	 ev;
	char		 key[32], body[96];

	snprintf(key, sizeof(key), "%s%d", prefix, i);
	snprintf(body, sizeof(body), "{\"v\":\"%d, a value of some "
	    "length, to fill pages a little\"}", i);
	mkev(&ev, key, "t.ok", body);
	if (claim1(st, 0, &ev, NULL) != HOOK_OK)
		BAIL("claim %s", key);
	event_clear(&ev);
}

/* The largest size DB-wal reaches over n claims; maintain after each? */
static long long
wal_peak(const char *dbname, int n, int maintain)
{
	struct conf	*cf = mkconf(dbname, "a.sql");
	struct store	*st;
	struct stat	 sb;
	char		 err[512], p[sizeof(dir) + 64];
	long long	 peak = 0;
	int		 i;

	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	snprintf(p, sizeof(p), "%s/%s-wal", dir, dbname);
	for (i = 0; i < n; i++) {
		claim_filler(st, "k", i);
		if (maintain)
			store_upkeep(st, STORE_MAINTAIN);
		if (stat(p, &sb) == 0 && sb.st_size > peak)
			peak = sb.st_size;
	}
	store_close(st);
	conf_free(cf);
	return peak;
}

/*
 * The log stays bounded: store_upkeep(): STORE_MAINTAIN starts it over past 1,000
 * pages (about 4 MB), where without it the log only grows.
 */
static void
test_checkpoint(void)
{
	long long	 with, without;

	with = wal_peak("c1.sqlite", 700, 1);
	without = wal_peak("c2.sqlite", 700, 0);
	CHECK(with > 0 && with < 4700000, "700 claims, store_upkeep(): STORE_MAINTAIN "
	    "after each: the log peaks at %lld bytes (under 4.5 MB)", with);
	CHECK(without > 2 * with, "without it the log grows (%lld bytes)",
	    without);
}

/* The log's size in pages, from the -shm (SQLite's WAL-index header). */
static unsigned int
wal_pages(const char *dbname)
{
	char		 p[sizeof(dir) + 64];
	unsigned char	 h[20];
	unsigned int	 mx;
	FILE		*f;

	snprintf(p, sizeof(p), "%s/%s-shm", dir, dbname);
	if ((f = fopen(p, "rb")) == NULL || fread(h, 1, sizeof(h), f) !=
	    sizeof(h))
		BAIL("%s: cannot read the WAL-index", p);
	fclose(f);
	memcpy(&mx, h + 16, sizeof(mx));
	return mx;
}

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* SQLite's plan for sql on q, its steps joined by "; ", into plan. */
static void
query_plan(sqlite3 *q, const char *sql, char *plan, size_t plansz)
{
	sqlite3_stmt	*ep;
	char		 text[2048];
	size_t		 n = 0;

	snprintf(text, sizeof(text), "EXPLAIN QUERY PLAN %s", sql);
	if (sqlite3_prepare_v2(q, text, -1, &ep, NULL) != SQLITE_OK)
		BAIL("explain: %s", sqlite3_errmsg(q));
	plan[0] = '\0';
	while (sqlite3_step(ep) == SQLITE_ROW && n < plansz)
		n += (size_t)snprintf(plan + n, plansz - n, "%s; ",
		    (const char *)sqlite3_column_text(ep, 3));
	sqlite3_finalize(ep);
}

/*
 * The work loop's poll (each second of `oncehook work`, and of serve's
 * work child) reads only the events not processed, through the partial
 * index events_pending: not every event of the endpoints, which took
 * tens of milliseconds a poll at some 30,000 events, in a read
 * transaction that kept the writer's checkpoint from starting the log
 * over.
 */
static void
test_work_plan(void)
{
	struct conf	*cf = mkconf("wp.sqlite", "a.sql");
	struct store	*st;
	sqlite3		*q;
	char		 plan[1024];

	st = open_peer(cf, "wp.sqlite", &q);
	query_plan(q, sq_work_pick, plan, sizeof(plan));
	CHECK(strstr(plan, "USING INDEX events_pending") != NULL &&
	    strstr(plan, "SCAN events") == NULL, "work's poll reads the "
	    "events not processed only (plan: %s)", plan);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

#define HELD_CLAIMS	500

/*
 * A reader that stays in the log (a report, a backup) keeps it from
 * starting over.  Past 2,000 pages store_upkeep(): STORE_MAINTAIN then waits for the
 * readers in naps of 100 µs, at most 20 (some 2 ms; a claim waiting
 * behind the checkpoint waits that long), not for the busy timeout (100
 * ms here): the log grows, and each call still returns.  Once the reader
 * is gone, the next call starts the log over.
 */
static void
test_checkpoint_reader(void)
{
	struct conf	*cf = mkconf("c3.sqlite", "a.sql");
	struct store	*st;
	struct timespec	 t0, t1;
	double		 ms[HELD_CLAIMS], median;
	char		 err[512], buf[32];
	unsigned int	 most = 0, after = 0;
	int		 i, n = 0;
	sqlite3		*q;

	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	CHECK(claim_new(st, 0, "held-0", "t.ok", "{\"v\":0}") == HOOK_OK,
	    "reader: a first event");
	q = peer("c3.sqlite");
	exec(q, "BEGIN");
	qtext(q, "SELECT count(*) FROM events", buf, sizeof(buf));
	for (i = 1; i <= HELD_CLAIMS; i++) {
		claim_filler(st, "held-", i);
		if (wal_pages("c3.sqlite") >= 2000) {
			clock_gettime(CLOCK_MONOTONIC, &t0);
			store_upkeep(st, STORE_MAINTAIN);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ms[n++] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
			    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		} else
			store_upkeep(st, STORE_MAINTAIN);
		if (wal_pages("c3.sqlite") > most)
			most = wal_pages("c3.sqlite");
	}
	qsort(ms, (size_t)n, sizeof(ms[0]), cmp_double);
	median = n > 0 ? ms[n / 2] : 0;
	CHECK(n >= 50 && most > 2000, "reader: held in the log, it grew to "
	    "%u pages; %d calls past 2,000", most, n);
	CHECK(median >= 2.0 && median < 50.0, "reader: each of those waited "
	    "for it in naps, not for the busy timeout (median %.2f ms: at "
	    "least 20 naps of 100 µs, far below 100 ms)", median);
	exec(q, "COMMIT");
	sqlite3_close(q);
	CHECK(claim_new(st, 0, "held-last", "t.ok", "{\"v\":1}") == HOOK_OK,
	    "reader gone: a claim");
	store_upkeep(st, STORE_MAINTAIN);
	CHECK(claim_new(st, 0, "held-after", "t.ok", "{\"v\":2}") ==
	    HOOK_OK && (after = wal_pages("c3.sqlite")) < 50,
	    "reader gone: the next checkpoint starts the log over (%u pages "
	    "after one more claim)", after);
	store_close(st);
	conf_free(cf);
}

/*
 * Migration 3 on a database of version 2 with events in it: the rows
 * stay, the index only "list" used is gone, and claims go on.
 */
static void
test_migrate_v2(void)
{
	struct conf	*cf = mkconf("m2.sqlite", "a.sql");
	struct store	*st;
	char		 err[512];
	sqlite3		*q;

	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	CHECK(claim_new(st, 0, "m2a", "t.ok", "{\"v\":\"m2a\"}") ==
	    HOOK_OK, "v2: an event claimed");
	store_close(st);
	/* Back to what version 2 had. */
	q = peer("m2.sqlite");
	exec(q, "CREATE INDEX events_received_at ON events (received_at); "
	    "DROP TABLE outbox; PRAGMA user_version = 2");
	sqlite3_close(q);
	st = open_peer(cf, "m2.sqlite", &q);
	CHECK(qint(q, "PRAGMA user_version") == store_version() &&
	    store_version() >= 3 && qint(q, "SELECT count(*) FROM "
	    "sqlite_master WHERE name = 'events_received_at'") == 0 &&
	    qint(q, "SELECT count(*) FROM events WHERE key = 'm2a'") == 1,
	    "v2 -> current: the event stays, events_received_at is gone");
	sqlite3_close(q);
	CHECK(claim_new(st, 0, "m2b", "t.ok", "{\"v\":\"m2b\"}") ==
	    HOOK_OK, "after the migration a "
	    "claim goes on");
	CHECK(claim_new(st, 0, "m2a", "t.ok", "{\"v\":\"m2a\"}") ==
	    HOOK_DUP, "and the old event is a "
	    "duplicate");
	store_close(st);
	conf_free(cf);
}


/* An action that fails while a flag row exists (NOT NULL refused). */
static const char actions_flag[] =
"CREATE TABLE IF NOT EXISTS flag (x INTEGER);\n"
"CREATE TABLE IF NOT EXISTS done (key TEXT NOT NULL);\n"
"-- on: *\n"
"INSERT INTO done (key) SELECT CASE WHEN EXISTS (SELECT 1 FROM flag)\n"
"    THEN NULL ELSE :key END;\n";

/*
 * cf's store on dbname, made (STORE_INIT) with cf's actions
 * actions_flag (written to flag.sql before cf was loaded), and a peer
 * connection in *q with the flag set: every claim's actions fail until
 * the flag row goes.
 */
static struct store *
open_flagged(const struct conf *cf, const char *dbname, sqlite3 **q)
{
	struct store	*st = open_peer(cf, dbname, q);

	exec(*q, "INSERT INTO flag VALUES (1)");
	return st;
}

/* A claim as the pipeline makes it: an action failure is counted. */
static enum hook_err
claim_counted(struct store *st, const struct event *ev, int park_after,
    long long *attempts)
{
	struct store_claim	 c;

	memset(&c, 0, sizeof(c));
	c.endpoint = 0;
	c.ev = ev;
	(void)store_claim(st, &c, 1);
	*attempts = 0;
	if (c.result != HOOK_EACTION)
		return c.result;
	return store_failed(st, 0, ev, c.why, park_after, attempts);
}

/*
 * Parking and replay (SPEC section 12): the Nth failed attempt of a key
 * stores it as failed and answers parked; a later delivery runs nothing;
 * replay by four processes at once runs it once; prune keeps it until
 * it took effect.
 */
static void
test_park_replay(void)
{
	struct conf	*cf;
	struct store	*st;
	struct event	 ev;
	enum hook_err	 er[4];
	long long	 n[4], nc;
	char		 err[512], why[256], buf[256];
	sqlite3		*q;
	pid_t		 pid[4];
	int		 i, wst, done = 0, already = 0, other = 0, fds[2];

	write_file("flag.sql", actions_flag);
	cf = mkconf("park.sqlite", "flag.sql");
	st = open_flagged(cf, "park.sqlite", &q);
	mkev(&ev, "p1", "t.ok", "{\"v\":\"p1\"}");
	/* The answers are the protocol's table's (tests/unit/t_protocol.c);
	 * here, the row SQLite keeps. */
	for (i = 0; i < 3; i++)
		er[i] = claim_counted(st, &ev, 3, &n[i]);
	if (er[2] != HOOK_PARKED)
		BAIL("parking p1: %d", er[2]);
	CHECK(qint(q, "SELECT count(*) FROM events WHERE key = 'p1' AND "
	    "status = 'failed' AND attempts = 3 AND processed_at IS NULL AND "
	    "last_error LIKE '%NOT NULL%'") == 1 && qint(q, "SELECT count(*) "
	    "FROM failures") == 0 && qint(q, "SELECT count(*) FROM done") == 0,
	    "parked: stored failed with its attempts and error, the count "
	    "forgotten, no effect (%s)", qtext(q, "SELECT last_error FROM "
	    "events WHERE key = 'p1'", buf, sizeof(buf)));
	CHECK(store_prune(st, RECEIVED + 10 * 86400, 0, 0, &nc, err,
	    sizeof(err)) == 0 && qint(q, "SELECT count(*) FROM events WHERE "
	    "key = 'p1'") == 1, "prune keeps a failed event past its "
	    "retention");
	exec(q, "DELETE FROM flag");
	store_close(st);
	/* Each child says what it saw through a pipe, not its exit
	 * status (valgrind's own status would stand in for it). */
	if (pipe(fds) == -1)
		BAIL("pipe");
	for (i = 0; i < 4; i++) {
		if ((pid[i] = tap_fork()) == 0) {
			struct store	*s2;
			enum store_replay r;
			char		 c = 'x';

			close(fds[0]);
			if ((s2 = store_open(cf, 0, err, sizeof(err))) != NULL) {
				r = store_replay(s2, 0, "p1", 0, why,
				    sizeof(why));
				store_close(s2);
				c = r == REPLAY_DONE ? 'd' : r ==
				    REPLAY_ALREADY ? 'a' : 'x';
			}
			(void)write(fds[1], &c, 1);
			_exit(0);
		}
	}
	close(fds[1]);
	for (i = 0; i < 4; i++) {
		char	 c;

		if (read(fds[0], &c, 1) != 1)
			other++;
		else if (c == 'd')
			done++;
		else if (c == 'a')
			already++;
		else
			other++;
	}
	close(fds[0]);
	for (i = 0; i < 4; i++)
		(void)waitpid(pid[i], &wst, 0);
	CHECK(done == 1 && already == 3 && other == 0 && qint(q, "SELECT "
	    "count(*) FROM done WHERE key = 'p1'") == 1 && qint(q, "SELECT "
	    "count(*) FROM events WHERE key = 'p1' AND status = 'processed' "
	    "AND processed_at IS NOT NULL AND last_error IS NULL") == 1,
	    "four replays at once after the fix: one runs it, three find it "
	    "processed; one effect (%d %d %d)", done, already, other);
	if ((st = store_open(cf, 0, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	CHECK(store_lookup(st, 0, &ev) == HOOK_DUP && store_replay(st, 0, "p1",
	    0, why, sizeof(why)) == REPLAY_ALREADY && store_replay(st, 0,
	    "nope", 0, why, sizeof(why)) == REPLAY_NONE, "then a delivery is "
	    "already_processed; replay says processed, or not found");
	event_clear(&ev);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

/* Runs the migration file name (sql/migrations) on q. */
static void
exec_file(sqlite3 *q, const char *name)
{
	char		 fp[4096], *text;
	FILE		*f;
	long		 sz;

	snprintf(fp, sizeof(fp), "%s/sql/migrations/%s", tap_srcdir(), name);
	if ((f = fopen(fp, "r")) == NULL || fseek(f, 0, SEEK_END) ||
	    (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    (text = calloc(1, (size_t)sz + 1)) == NULL ||
	    fread(text, 1, (size_t)sz, f) != (size_t)sz)
		BAIL("reading %s", fp);
	fclose(f);
	exec(q, text);
	free(text);
}

/* oncehook_event() as an action's run defines it: event a/k1 at 100. */
static void
fake_event_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char	*what = (const char *)sqlite3_value_text(argv[0]);

	(void)argc;
	if (what != NULL && strcmp(what, "endpoint") == 0)
		sqlite3_result_text(ctx, "a", -1, SQLITE_STATIC);
	else if (what != NULL && strcmp(what, "key") == 0)
		sqlite3_result_text(ctx, "k1", -1, SQLITE_STATIC);
	else if (what != NULL && strcmp(what, "time") == 0)
		sqlite3_result_int64(ctx, 100);
	else
		sqlite3_result_null(ctx);
}

static void
fake_event(sqlite3 *q)
{
	if (sqlite3_create_function(q, "oncehook_event", 1, SQLITE_UTF8, NULL,
	    fake_event_fn, NULL, NULL) != SQLITE_OK)
		BAIL("oncehook_event: %s", sqlite3_errmsg(q));
}

/*
 * A database name at schema version v, made by the first v migration
 * files themselves, in WAL mode (with oncehook_event() for the
 * triggers of the outbox's migrations).
 */
static sqlite3 *
old_db(const char *name, int v)
{
	static const char *const files[] = { "001-events.sql",
	    "002-payload-index.sql", "003-list-order.sql", "004-statuses.sql",
	    "005-outbox.sql", "006-status-check.sql", "007-outbox-check.sql",
	    "008-guard-index.sql" };
	char		 p[sizeof(dir) + 64], pragmas[128];
	sqlite3		*q;
	int		 i;

	if (v > (int)(sizeof(files) / sizeof(files[0])))
		BAIL("old_db: no version %d here", v);
	if (sqlite3_open(path(p, name), &q) != SQLITE_OK)
		BAIL("open %s", name);
	fake_event(q);
	for (i = 0; i < v; i++)
		exec_file(q, files[i]);
	snprintf(pragmas, sizeof(pragmas), "PRAGMA journal_mode = WAL;"
	    " PRAGMA user_version = %d;", v);
	exec(q, pragmas);
	return q;
}

/* After a migration: a key stored before it is still claimed, a new
 * one is claimed. */
static void
old_keys_claimed(struct store *st)
{
	enum hook_err	 a = claim_new(st, 0, "old1", "t.ok", "{\"v\":1}"),
			 b = claim_new(st, 0, "new1", "t.ok", "{\"v\":\"n\"}");

	CHECK(a == HOOK_DUP && b == HOOK_OK, "the old keys stay claimed, new "
	    "ones are claimed (%d %d)", a, b);
}

/*
 * A database made by the previous release (schema version 3, from the
 * migration files themselves) with real rows: init keeps every row, as
 * processed after one attempt, and the new statuses work on it.
 */
static void
test_migrate_v3(void)
{
	struct conf	*cf = mkconf("m3.sqlite", "a.sql");
	struct store	*st;
	sqlite3		*q = old_db("m3.sqlite", 3);

	exec(q, "INSERT INTO events (endpoint, key, type, payload_hash, payload,"
	    " received_at, processed_at, expires_at) VALUES"
	    " ('a', 'old1', 't.ok', 'h1', '{\"v\":1}', 100, 101, 1000),"
	    " ('a', 'old2', NULL, 'h2', '{\"v\":2}', 200, 201, NULL),"
	    " ('b', 'old3', 't.ok', 'h3', '{\"v\":3}', 300, 301, NULL);"
	    "INSERT INTO conflicts (endpoint, key, payload_hash, received_at)"
	    " VALUES ('a', 'old1', 'hx', 150)");
	sqlite3_close(q);
	st = open_peer(cf, "m3.sqlite", &q);
	CHECK(qint(q, "PRAGMA user_version") == store_version() &&
	    qint(q, "SELECT count(*) FROM events") == 3 && qint(q, "SELECT "
	    "count(*) FROM events WHERE status = 'processed' AND attempts = 1 "
	    "AND last_error IS NULL AND next_at IS NULL") == 3 && qint(q,
	    "SELECT count(*) FROM events WHERE key = 'old1' AND type = 't.ok' "
	    "AND payload_hash = 'h1' AND received_at = 100 AND processed_at = "
	    "101 AND expires_at = 1000") == 1 && qint(q, "SELECT count(*) FROM "
	    "conflicts") == 1 && qint(q, "SELECT count(*) FROM failures") == 0,
	    "v3 -> v4: every row kept, as processed after one attempt");
	CHECK(qint(q, "PRAGMA integrity_check = 1") == -1 ||
	    qint(q, "SELECT count(*) FROM pragma_integrity_check WHERE "
	    "integrity_check = 'ok'") == 1, "integrity_check ok after the "
	    "migration");
	old_keys_claimed(st);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

/* The temporary b-trees (OpenEphemeral) sql's program opens. */
static int
ephemerals(sqlite3 *q, const char *sql)
{
	sqlite3_stmt	*st;
	char		 ex[1024];
	const char	*op;
	int		 n = 0;

	snprintf(ex, sizeof(ex), "EXPLAIN %s", sql);
	if (sqlite3_prepare_v2(q, ex, -1, &st, NULL) != SQLITE_OK)
		BAIL("%s: %s", ex, sqlite3_errmsg(q));
	while (sqlite3_step(st) == SQLITE_ROW)
		if ((op = (const char *)sqlite3_column_text(st, 1)) != NULL &&
		    strcmp(op, "OpenEphemeral") == 0)
			n++;
	sqlite3_finalize(st);
	return n;
}

/* What the store writes to events on the way of a new event, and of a
 * deferred one's run. */
static const char *const event_writes[] = {
	"INSERT INTO events (endpoint, key, type, payload_hash, payload,"
	" received_at, processed_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5,"
	" ?6, ?7, ?8) ON CONFLICT (endpoint, key) DO NOTHING",
	"INSERT INTO events (endpoint, key, type, payload_hash, payload,"
	" received_at, expires_at, status, attempts, next_at) VALUES (?1, ?2,"
	" ?3, ?4, ?5, ?6, ?8, 'received', 0, ?7 + ?9) ON CONFLICT (endpoint,"
	" key) DO NOTHING",
	"UPDATE events SET status = 'processed', processed_at = ?1 WHERE"
	" id = ?2",
};

static int
event_ephemerals(sqlite3 *q)
{
	size_t	 i;
	int	 n = 0;

	for (i = 0; i < sizeof(event_writes) / sizeof(event_writes[0]); i++)
		n += ephemerals(q, event_writes[i]);
	return n;
}

/* Every column of every event, as one text (the rows, compared). */
#define EVENTS_TEXT "SELECT group_concat(quote(id) || quote(endpoint) || " \
	"quote(key) || quote(type) || quote(payload_hash) || quote(payload) " \
	"|| quote(status) || quote(received_at) || quote(processed_at) || " \
	"quote(expires_at) || quote(attempts) || quote(last_error) || " \
	"quote(next_at), '|') FROM (SELECT * FROM events ORDER BY id)"

/*
 * Migration 6 on a database of version 5 (from the migration files),
 * with events of every status in it: init keeps every row as it was,
 * the status rule still holds, and an event's insert or update no longer
 * builds a temporary b-tree for the CHECK.
 */
static void
test_migrate_v5(void)
{
	struct conf	*cf = mkconf("m5.sqlite", "a.sql");
	struct store	*st;
	char		 before[2048], after[2048];
	sqlite3		*q = old_db("m5.sqlite", 5);
	int		 eph5, eph6;

	exec(q, "INSERT INTO events (endpoint, key, type, payload_hash, payload,"
	    " status, received_at, processed_at, expires_at, attempts,"
	    " last_error, next_at) VALUES"
	    " ('a', 'old1', 't.ok', 'h1', '{\"v\":1}', 'processed', 100, 101,"
	    " 1000, 1, NULL, NULL),"
	    " ('a', 'old2', NULL, 'h2', '{\"v\":2}', 'received', 200, NULL,"
	    " NULL, 0, NULL, 210),"
	    " ('a', 'old3', 't.ok', 'h3', '{\"v\":3}', 'failed', 300, NULL,"
	    " NULL, 3, 'boom', 400),"
	    " ('b', 'old4', 't.ok', 'h4', '{\"v\":4}', 'dead', 400, NULL,"
	    " 5000, 9, 'gone', NULL);"
	    "INSERT INTO conflicts (endpoint, key, payload_hash, received_at)"
	    " VALUES ('a', 'old1', 'hx', 150)");
	qtext(q, EVENTS_TEXT, before, sizeof(before));
	eph5 = event_ephemerals(q);
	sqlite3_close(q);
	st = open_peer(cf, "m5.sqlite", &q);
	qtext(q, EVENTS_TEXT, after, sizeof(after));
	eph6 = event_ephemerals(q);
	CHECK(qint(q, "PRAGMA user_version") == store_version() &&
	    store_version() >= 6 && strcmp(before, after) == 0 &&
	    qint(q, "SELECT count(*) FROM conflicts") == 1,
	    "v5 -> current: every event kept, column for column (%s)", after);
	CHECK(eph5 > 0 && eph6 == 0, "an event's insert and status update "
	    "built %d temporary b-trees at v5, %d after", eph5, eph6);
	CHECK(qint(q, "SELECT count(*) FROM sqlite_master WHERE type = "
	    "'index' AND tbl_name = 'events' AND name IN ('events_expires_at',"
	    " 'events_endpoint_payload', 'events_pending')") == 3 &&
	    qint(q, "SELECT count(*) FROM pragma_integrity_check WHERE "
	    "integrity_check = 'ok'") == 1, "the indexes are back, "
	    "integrity_check ok");
	CHECK(sqlite3_exec(q, "UPDATE events SET status = 'done' WHERE key = "
	    "'old1'", NULL, NULL, NULL) == SQLITE_CONSTRAINT &&
	    sqlite3_exec(q, "UPDATE events SET status = 'dead' WHERE key = "
	    "'old3'", NULL, NULL, NULL) == SQLITE_OK, "the status rule holds: "
	    "an unknown status refused, a known one taken");
	old_keys_claimed(st);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

#define OUTBOX_TEXT "SELECT group_concat(quote(seq) || quote(id) || " \
	"quote(topic) || quote(payload) || quote(endpoint) || quote(key) || " \
	"quote(created_at) || quote(status) || quote(attempts) || " \
	"quote(next_at) || quote(delivered_at) || quote(last_error) || " \
	"quote(lease), '|') FROM (SELECT * FROM outbox ORDER BY seq)"

static int
outbox_ephemerals(sqlite3 *q)
{
	return ephemerals(q, "INSERT INTO outbox (topic, payload) VALUES "
	    "(?1, ?2)") + ephemerals(q, "UPDATE outbox SET status = "
	    "'delivered', delivered_at = ?2 WHERE seq = ?1");
}

/*
 * Migration 7 on a database of version 6 (from the migration files) with
 * outbox rows, one delivered: init keeps every row as it was, id and
 * seq too; the index and both triggers are back (a row gets its id, a
 * row that chooses one is refused); an action's outbox row and its
 * delivery no longer build a temporary b-tree for the status CHECK.
 */
static void
test_migrate_v6(void)
{
	struct conf	*cf = mkconf("m6.sqlite", "a.sql");
	struct store	*st;
	char		 before[2048], after[2048], id[64];
	sqlite3		*q = old_db("m6.sqlite", 6);
	int		 eph6, eph7;

	exec(q, "INSERT INTO outbox (topic, payload) VALUES ('order.paid',"
	    " '{\"n\":1}'), ('order.paid', '{\"n\":2}');"
	    "UPDATE outbox SET status = 'delivered', delivered_at = 150,"
	    " attempts = 1 WHERE seq = 1");
	qtext(q, OUTBOX_TEXT, before, sizeof(before));
	eph6 = outbox_ephemerals(q);
	sqlite3_close(q);
	st = open_peer(cf, "m6.sqlite", &q);
	fake_event(q);
	qtext(q, OUTBOX_TEXT, after, sizeof(after));
	eph7 = outbox_ephemerals(q);
	CHECK(qint(q, "PRAGMA user_version") == store_version() &&
	    store_version() >= 7 && strcmp(before, after) == 0 &&
	    strstr(after, "'ob_") != NULL, "v6 -> current: every outbox row "
	    "kept, column for column (%s)", after);
	CHECK(eph6 > 0 && eph7 == 0, "an outbox row's insert and delivery "
	    "built %d temporary b-trees at v6, %d after", eph6, eph7);
	exec(q, "INSERT INTO outbox (topic, payload) VALUES ('order.paid',"
	    " '{\"n\":3}')");
	CHECK(qint(q, "SELECT count(*) FROM sqlite_master WHERE tbl_name = "
	    "'outbox' AND name IN ('outbox_due', 'outbox_insert', "
	    "'outbox_id')") == 3 && strncmp(qtext(q, "SELECT id FROM outbox "
	    "WHERE seq = 3", id, sizeof(id)), "ob_", 3) == 0 &&
	    sqlite3_exec(q, "INSERT INTO outbox (id, topic, payload) VALUES "
	    "('mine', 'order.paid', '{}')", NULL, NULL, NULL) ==
	    SQLITE_CONSTRAINT && sqlite3_exec(q, "UPDATE outbox SET status = "
	    "'gone' WHERE seq = 2", NULL, NULL, NULL) == SQLITE_CONSTRAINT &&
	    qint(q, "SELECT count(*) FROM pragma_integrity_check WHERE "
	    "integrity_check = 'ok'") == 1, "the index and both triggers are "
	    "back: a new row gets its id (%s), one that chooses it is refused, "
	    "an unknown status too; integrity_check ok", id);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

/* The events the replay guard's index holds (a partial index). */
#define GUARD_INDEXED "SELECT count(*) FROM events INDEXED BY " \
	"events_endpoint_payload WHERE guarded IS NOT 0"

/*
 * Migration 8 on a database of version 7 with events of a guarded
 * endpoint (a, hmac-sha256) and an unguarded one (s, stripe: a signed
 * timestamp, the key from the signed body): every row kept and still in
 * the payload index, so the guard still finds an old payload under a
 * new key; a new event of a is indexed, one of s is not (the page it
 * wrote into the index for nothing).
 */
/*
 * Endpoints a (hmac-sha256: the replay guard) and s (stripe: a signed
 * timestamp, the key from the signed body: no guard), both running
 * actname, on dbname.
 */
static struct conf *
guardconf(const char *dbname, const char *actname)
{
	char		 db[sizeof(dir) + 64], act[sizeof(dir) + 64];
	char		 err[256];
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", path(db, dbname) },
		{ "ONCEHOOK_ENDPOINTS", "a,s" },
		{ "ONCEHOOK_BUSY_TIMEOUT_MS", "100" },
		{ "ONCEHOOK_A_SCHEME", "hmac-sha256" },
		{ "ONCEHOOK_A_SECRET", "secret-a" },
		{ "ONCEHOOK_A_ACTIONS", path(act, actname) },
		{ "ONCEHOOK_S_SCHEME", "stripe" },
		{ "ONCEHOOK_S_SECRET", "whsec_secret-s" },
		{ "ONCEHOOK_S_ACTIONS", act },
		{ NULL, NULL }
	};
	struct conf	*cf;

	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	if (!cf->endpoints[0].replay_guard || cf->endpoints[1].replay_guard)
		BAIL("a is to have the replay guard, s not");
	return cf;
}

/*
 * One processed event of type t.ok in the old database q, its payload's
 * hash as a claim stores it; guarded: that column's value, or NULL to
 * leave the column out (before version 8).
 */
static void
old_event(sqlite3 *q, const char *ep, const char *key, const char *payload,
    const char *guarded)
{
	struct event	 ev;
	char		 sql[512];

	mkev(&ev, key, "t.ok", payload);
	snprintf(sql, sizeof(sql), "INSERT INTO events (endpoint, key, type,"
	    " payload_hash, payload, received_at, processed_at%s) VALUES"
	    " ('%s', '%s', 't.ok', '%s', '%s', 100, 101%s%s)",
	    guarded ? ", guarded" : "", ep, key, ev.hash, payload,
	    guarded ? ", " : "", guarded ? guarded : "");
	exec(q, sql);
	event_clear(&ev);
}

static void
test_migrate_v7(void)
{
	struct conf	*cf = guardconf("m7.sqlite", "a.sql");
	struct store	*st;
	sqlite3		*q = old_db("m7.sqlite", 7);
	enum hook_err	 ra, rs, rr;

	old_event(q, "a", "old1", "{\"v\":1}", NULL);
	old_event(q, "s", "old2", "{\"v\":2}", NULL);
	sqlite3_close(q);
	st = open_peer(cf, "m7.sqlite", &q);
	CHECK(qint(q, "PRAGMA user_version") == store_version() &&
	    store_version() >= 8 && qint(q, "SELECT count(*) FROM events "
	    "WHERE guarded IS NULL") == 2 && qint(q, GUARD_INDEXED) == 2,
	    "v7 -> current: both events kept, both still in the payload "
	    "index (%lld)", qint(q, GUARD_INDEXED));
	ra = claim_new(st, 0, "new-a", "t.ok", "{\"v\":\"a\"}");
	rs = claim_new(st, 1, "new-s", "t.ok", "{\"v\":\"s\"}");
	CHECK(ra == HOOK_OK && rs == HOOK_OK && qint(q, "SELECT guarded FROM "
	    "events WHERE key = 'new-a'") == 1 && qint(q, "SELECT count(*) "
	    "FROM events WHERE key = 'new-s' AND guarded = 0") == 1 &&
	    qint(q, GUARD_INDEXED) == 3, "a new event of the guarded endpoint "
	    "is in the payload index, the unguarded one's is not (%lld "
	    "indexed)", qint(q, GUARD_INDEXED));
	rr = claim_new(st, 0, "replayed", "t.ok", "{\"v\":1}");
	CHECK(rr == HOOK_DUP && qint(q, "SELECT count(*) FROM events WHERE "
	    "key = 'replayed'") == 0, "the guard finds a payload stored "
	    "before the migration under a new key: a duplicate (%d)", rr);
	CHECK(qint(q, "SELECT count(*) FROM pragma_integrity_check WHERE "
	    "integrity_check = 'ok'") == 1, "integrity_check ok (the index "
	    "holds exactly the rows its WHERE names)");
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

/* mkev(), keyed as said (pipeline/event.h: key_signed, signed_key:
 * NULL for none). */
static void
mkev_keyed(struct event *ev, const char *key, int key_signed,
    const char *signed_key, const char *type, const char *payload)
{
	mkev(ev, key, type, payload);
	ev->key_signed = key_signed;
	if (signed_key != NULL && (ev->signed_key = strdup(signed_key)) ==
	    NULL)
		BAIL("strdup");
}

/* Claim an event of endpoint 0 keyed as said (mkev_keyed()); *read (if
 * not NULL): the lock-free read's answer of its payload before the
 * claim. */
static enum hook_err
claim_keyed(struct store *st, const char *key, int key_signed,
    const char *signed_key, const char *type, const char *payload,
    enum hook_err *read)
{
	struct event	 ev;
	enum hook_err	 er;

	mkev_keyed(&ev, key, key_signed, signed_key, type, payload);
	if (read != NULL)
		*read = store_replayed(st, 0, &ev);
	er = claim1(st, 0, &ev, NULL);
	event_clear(&ev);
	return er;
}

/*
 * Migration 9 on a database of version 8: a version and no statement
 * (docs/design/034: a binary of version 8 refuses the file rather than
 * miss the events stored out of the index).  Every row kept as it was,
 * in the payload index as before; a body stored before it, keyed by a
 * header (guarded 1) or before version 8 (NULL), is still a duplicate
 * under a signed key.
 */
static void
test_migrate_v8(void)
{
	struct conf	*cf = guardconf("m8.sqlite", "a.sql");
	struct store	*st;
	sqlite3		*q = old_db("m8.sqlite", 8);
	enum hook_err	 r1, r2;

	old_event(q, "a", "hdr-1", "{\"id\":\"e1\"}", "1");
	old_event(q, "a", "old-2", "{\"id\":\"e2\"}", "NULL");
	sqlite3_close(q);
	st = open_peer(cf, "m8.sqlite", &q);
	CHECK(qint(q, "PRAGMA user_version") == 9 && store_version() == 9 &&
	    qint(q, GUARD_INDEXED) == 2, "v8 -> 9: both events kept, both "
	    "in the payload index (%lld)", qint(q, GUARD_INDEXED));
	r1 = claim_keyed(st, "e1", 1, NULL, "t.ok", "{\"id\":\"e1\"}", NULL);
	r2 = claim_keyed(st, "e2", 1, NULL, "t.ok", "{\"id\":\"e2\"}", NULL);
	CHECK(r1 == HOOK_DUP && r2 == HOOK_DUP && qint(q, "SELECT count(*) "
	    "FROM events WHERE key IN ('e1', 'e2')") == 0, "their bodies "
	    "under their signed keys: duplicates (%d %d)", r1, r2);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

/* guardconf() over dbname with actions that fail until the flag row
 * goes (open_flagged()); its conf in *cf, a peer in *q. */
static struct store *
guard_flagged(const char *dbname, struct conf **cf, sqlite3 **q)
{
	write_file("flag.sql", actions_flag);
	*cf = guardconf(dbname, "flag.sql");
	return open_flagged(*cf, dbname, q);
}

/* An event of endpoint 0 (type t.ok) claimed until its failing actions
 * park it (PARK_AFTER 3); the last claim's result. */
static enum hook_err
park_guarded(struct store *st, const char *key, int key_signed,
    const char *payload)
{
	struct event	 ev;
	long long	 att;
	enum hook_err	 er = HOOK_OK;
	int		 i;

	mkev_keyed(&ev, key, key_signed, NULL, "t.ok", payload);
	for (i = 0; i < 3; i++)
		er = claim_counted(st, &ev, 3, &att);
	event_clear(&ev);
	return er;
}

/*
 * The payload index on a new database, and the two other inserts: the
 * index is partial and the guard's query reads it (EXPLAIN QUERY PLAN);
 * a deferred event and a parked one of the guarded endpoint are stored
 * guarded and found by the guard under a new key (a duplicate, and
 * parked), the unguarded endpoint's deferred event is stored unguarded.
 */
static void
test_guard_paths(void)
{
	struct conf	*cf = guardconf("gp.sqlite", "a.sql");
	struct store	*st;
	sqlite3		*q;
	char		 plan[1024];
	enum hook_err	 ra, rs, rr, er = HOOK_OK;

	cf->endpoints[0].deferred = cf->endpoints[1].deferred = 1;
	st = open_peer(cf, "gp.sqlite", &q);
	query_plan(q, sq_payload, plan, sizeof(plan));
	CHECK(qint(q, "SELECT partial FROM pragma_index_list('events') WHERE "
	    "name = 'events_endpoint_payload'") == 1 && strstr(plan,
	    "USING INDEX events_endpoint_payload (endpoint=? AND "
	    "payload_hash=?)") != NULL, "the payload index is partial, and "
	    "the guard's query reads it (plan: %s)", plan);
	ra = claim_new(st, 0, "d-a", "t.ok", "{\"v\":\"da\"}");
	rs = claim_new(st, 1, "d-s", "t.ok", "{\"v\":\"ds\"}");
	rr = claim_new(st, 0, "d-a2", "t.ok", "{\"v\":\"da\"}");
	CHECK(ra == HOOK_ACCEPTED && rs == HOOK_ACCEPTED && qint(q, "SELECT "
	    "guarded FROM events WHERE key = 'd-a' AND status = 'received'")
	    == 1 && qint(q, "SELECT count(*) FROM events WHERE key = 'd-s' "
	    "AND guarded = 0") == 1 && rr == HOOK_DUP && qint(q, "SELECT "
	    "count(*) FROM events WHERE key = 'd-a2'") == 0, "deferred: the "
	    "guarded endpoint's event stored guarded, found under a new key "
	    "(%d %d %d), the other's not indexed", ra, rs, rr);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);

	st = guard_flagged("gp2.sqlite", &cf, &q);
	er = park_guarded(st, "pk1", 0, "{\"v\":\"pk\"}");
	rr = claim_new(st, 0, "pk2", "t.ok", "{\"v\":\"pk\"}");
	CHECK(er == HOOK_PARKED && qint(q, "SELECT guarded FROM events WHERE "
	    "key = 'pk1' AND status = 'failed'") == 1 && rr == HOOK_PARKED &&
	    qint(q, "SELECT count(*) FROM events WHERE key = 'pk2'") == 0,
	    "parked: the guarded endpoint's event stored guarded; its payload "
	    "under a new key is the parked event's (%d %d)", er, rr);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

/*
 * An event under the key its signature covers (key_signed: the hmac
 * endpoint's body id) is stored out of the payload index; the guard
 * finds its body under another key through the signed key the replay
 * carries (signed_key), in the claim and in the lock-free read, and a
 * parked one as parked.  Not a replay: another body or another type
 * under that signed key, and a signed key that is the claim's own key.
 * An event keyed by an uncovered header is indexed as before.
 */
static void
test_guard_signed(void)
{
	struct conf	*cf = guardconf("gs.sqlite", "a.sql");
	struct store	*st;
	sqlite3		*q;
	enum hook_err	 r1, r2, rd, r3, r4, r5, r6, rd6, r7;

	st = open_peer(cf, "gs.sqlite", &q);
	r1 = claim_keyed(st, "evt_1", 1, NULL, "t.ok", "{\"id\":\"evt_1\"}",
	    NULL);
	CHECK(r1 == HOOK_OK && qint(q, "SELECT count(*) FROM events WHERE "
	    "key = 'evt_1' AND guarded = 0") == 1 && qint(q, GUARD_INDEXED)
	    == 0, "an event under its signed key is stored out of the "
	    "payload index (%d, %lld indexed)", r1, qint(q, GUARD_INDEXED));
	r2 = claim_keyed(st, "hdr-2", 0, "evt_1", "t.ok",
	    "{\"id\":\"evt_1\"}", &rd);
	CHECK(r2 == HOOK_DUP && rd == HOOK_DUP && qint(q, "SELECT count(*) "
	    "FROM events WHERE key = 'hdr-2'") == 0, "its body under a "
	    "header's key is a duplicate, by the claim and by the read "
	    "(%d %d), nothing stored", r2, rd);
	r3 = claim_keyed(st, "hdr-3", 0, "evt_1", "t.ok",
	    "{\"id\":\"evt_1\",\"x\":1}", NULL);
	r4 = claim_keyed(st, "hdr-4", 0, "evt_1", "t.other",
	    "{\"id\":\"evt_1\"}", NULL);
	r5 = claim_keyed(st, "hdr-5", 0, "hdr-5", "t.ok",
	    "{\"id\":\"hdr-5\"}", NULL);
	CHECK(r3 == HOOK_OK && r4 == HOOK_OK && r5 == HOOK_OK && qint(q,
	    "SELECT count(*) FROM events WHERE key IN ('hdr-3', 'hdr-4', "
	    "'hdr-5') AND guarded = 1") == 3 && qint(q, GUARD_INDEXED) == 3,
	    "another body, another type, a signed key that is the claim's "
	    "own: new events (%d %d %d), each in the payload index", r3, r4,
	    r5);
	r6 = claim_keyed(st, "hdr-7", 0, "evt_7", "t.ok",
	    "{\"id\":\"evt_7\"}", NULL);
	r7 = claim_keyed(st, "evt_7", 1, NULL, "t.ok", "{\"id\":\"evt_7\"}",
	    &rd6);
	CHECK(r6 == HOOK_OK && r7 == HOOK_DUP && rd6 == HOOK_DUP && qint(q,
	    "SELECT count(*) FROM events WHERE key = 'evt_7'") == 0, "a "
	    "header-keyed event's body under its signed key: found in the "
	    "payload index (%d %d %d)", r6, r7, rd6);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);

	st = guard_flagged("gs2.sqlite", &cf, &q);
	r1 = park_guarded(st, "evt_p", 1, "{\"id\":\"evt_p\"}");
	r7 = claim_keyed(st, "hdr-p", 0, "evt_p", "t.ok",
	    "{\"id\":\"evt_p\"}", &rd);
	CHECK(r1 == HOOK_PARKED && qint(q, "SELECT guarded FROM events WHERE "
	    "key = 'evt_p' AND status = 'failed'") == 0 && r7 == HOOK_PARKED
	    && rd == HOOK_PARKED, "parked under its signed key, out of the "
	    "index; its body under a header's key is the parked event's (%d "
	    "%d %d)", r1, r7, rd);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

/*
 * A deferred endpoint's event under its signed key (stored received,
 * its actions for work) is kept out of the payload index too, and its
 * body under a header's key is still the guard's duplicate.
 */
static void
test_guard_signed_deferred(void)
{
	struct conf	*cf = guardconf("gsd.sqlite", "a.sql");
	struct store	*st;
	sqlite3		*q;
	enum hook_err	 r1, r2, rd;

	cf->endpoints[0].deferred = 1;
	st = open_peer(cf, "gsd.sqlite", &q);
	r1 = claim_keyed(st, "evt_d", 1, NULL, "t.ok", "{\"id\":\"evt_d\"}",
	    NULL);
	r2 = claim_keyed(st, "hdr-d", 0, "evt_d", "t.ok",
	    "{\"id\":\"evt_d\"}", &rd);
	CHECK(r1 == HOOK_ACCEPTED && qint(q, "SELECT count(*) FROM events "
	    "WHERE key = 'evt_d' AND status = 'received' AND guarded = 0") ==
	    1 && r2 == HOOK_DUP && rd == HOOK_DUP && qint(q, "SELECT count(*) "
	    "FROM events WHERE key = 'hdr-d'") == 0, "deferred: stored "
	    "received out of the index (%d); its body under a header's key a "
	    "duplicate, by the claim and the read (%d %d)", r1, r2, rd);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

/* Work until nothing is due at now (0: the clock's, past the 10 s a
 * claimer has first); the number of events this process ran. */
static int
work_all(struct store *st, long long now)
{
	struct store_work_item	 w;
	enum store_work		 r;
	int			 n = 0, idle = 0;

	while (idle < 3) {
		r = store_work(st, NULL, NULL, now > 0 ? now :
		    (long long)time(NULL) + 11, 0, &w);
		if (r == WORK_DONE)
			n++;
		if (r == WORK_IDLE || r == WORK_RACED)
			idle++;
		else
			idle = 0;
		if (r == WORK_BUSY || r == WORK_IDLE)
			usleep(2000);
		if (r == WORK_ERROR)
			return -1000;
	}
	return n;
}

/*
 * Deferred mode (SPEC section 12): accepted then run once; a failing
 * event backs off and dies at MAX_ATTEMPTS; 1,000 events accepted while
 * four work processes, the claiming process and duplicate deliveries
 * race: each processed exactly once; a worker killed mid-action leaves
 * its event received, run once later.
 */
static void
test_deferred(void)
{
	struct conf		*cf;
	struct store		*st;
	struct store_work_item	 w;
	char			 err[512], key[32], pl[64];
	sqlite3			*q;
	pid_t			 pid[6];
	int			 i, k, wst, ok, ran = 0;
	long long		 now = (long long)time(NULL) + 11;

	write_file("slow.sql", "CREATE TABLE IF NOT EXISTS effects (key TEXT "
	    "NOT NULL, type TEXT, endpoint TEXT, received_at INTEGER,\n"
	    "    payload_hash TEXT, v TEXT);\n"
	    /* t.slow is slow until the test lowers slowness. */
	    "CREATE TABLE IF NOT EXISTS slowness (n INTEGER);\n"
	    "INSERT INTO slowness SELECT 30000000\n"
	    "    WHERE NOT EXISTS (SELECT 1 FROM slowness);\n"
	    "-- on: t.slow\n"
	    "SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL"
	    " SELECT x + 1 FROM c WHERE x < (SELECT n FROM slowness))"
	    " SELECT x FROM c);\n"
	    "INSERT INTO effects (key, type) VALUES (:key, :type);\n"
	    "-- on: t.fail\n"
	    "INSERT INTO effects (key, type) VALUES (NULL, :type);\n"
	    "-- on: *\n"
	    "INSERT INTO effects (key, type) VALUES (:key, :type);\n");
	cf = mkconf("deferred.sqlite", "slow.sql");
	cf->endpoints[0].deferred = 1;
	cf->endpoints[0].max_attempts = 2;
	cf->busy_ms = 5000;
	st = open_peer(cf, "deferred.sqlite", &q);
	/* One event accepted, run, failed and dead is the protocol's table's
	 * (tests/unit/t_protocol.c); here, what takes processes. */
	/* 1,000 events, four workers, the claimer, duplicates. */
	for (i = 0; i < 4; i++)
		if ((pid[i] = tap_fork()) == 0) {
			struct store	*s2;
			sqlite3		*cq = peer("deferred.sqlite");
			int		 n = 0, rounds;

			if ((s2 = store_open(cf, 0, err, sizeof(err))) == NULL)
				_exit(99);
			for (rounds = 0; rounds < 400; rounds++) {
				if ((k = work_all(s2, 0)) < 0)
					_exit(98);
				n += k;
				if (qint(cq, "SELECT count(*) FROM events WHERE"
				    " key LIKE 'c%' AND status = 'processed'") ==
				    1000)
					break;
				usleep(5000);
			}
			sqlite3_close(cq);
			store_close(s2);
			(void)n;
			_exit(0);
		}
	if ((pid[4] = tap_fork()) == 0) {
		struct store	*s2;
		enum hook_err	 e;

		if ((s2 = store_open(cf, 0, err, sizeof(err))) == NULL)
			_exit(99);
		for (i = 0; i < 3000; i++) {
			snprintf(key, sizeof(key), "c%d", i % 1000);
			snprintf(pl, sizeof(pl), "{\"v\":\"%s\"}", key);
			e = claim_new(s2, 0, key, "t.ok", pl);
			if (e != HOOK_DUP && e != HOOK_OK &&
			    e != HOOK_ACCEPTED && e != HOOK_EBUSY)
				_exit(97);
		}
		store_close(s2);
		_exit(0);
	}
	for (i = 0; i < 1000; i++) {
		enum hook_err	 e;

		snprintf(key, sizeof(key), "c%d", i);
		snprintf(pl, sizeof(pl), "{\"v\":\"%s\"}", key);
		while ((e = claim_new(st, 0, key, "t.ok", pl)) == HOOK_EBUSY)
			;
		if (e == HOOK_ACCEPTED && i % 3 == 0 && store_work(st, "a",
		    key, now, 0, &w) == WORK_DONE)
			ran++;
	}
	ok = 1;
	for (i = 0; i < 5; i++)
		if (waitpid(pid[i], &wst, 0) != pid[i] || !WIFEXITED(wst) ||
		    WEXITSTATUS(wst) >= 97) {
			printf("# child %d: status %d\n", i, wst);
			ok = 0;
		}
	ran += work_all(st, 0);
	CHECK(ok && qint(q, "SELECT count(*) FROM events WHERE key LIKE 'c%' "
	    "AND status = 'processed' AND attempts = 1") == 1000 && qint(q,
	    "SELECT count(*) FROM effects WHERE key LIKE 'c%'") == 1000 &&
	    qint(q, "SELECT count(DISTINCT key) FROM effects WHERE key LIKE "
	    "'c%'") == 1000, "1,000 events, four work processes, the claimer "
	    "and 2,000 duplicate deliveries at once: each processed exactly "
	    "once (%lld effects; the claimer ran %d)", qint(q, "SELECT "
	    "count(*) FROM effects WHERE key LIKE 'c%'"), ran);

	/* An endpoint whose actions no longer prepare: its event fails
	 * (counted), the other endpoint's event still runs. */
	cf->endpoints[1].deferred = 1;
	CHECK(claim_new(st, 1, "bx", "t.ok", "{\"v\":\"bx\"}") ==
	    HOOK_ACCEPTED && claim_new(st, 0, "ax", "t.ok",
	    "{\"v\":\"ax\"}") == HOOK_ACCEPTED, "two endpoints' events "
	    "accepted");
	store_close(st);
	exec(q, "DROP TABLE effects_b");
	if ((st = store_open(cf, STORE_LAZY, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	(void)work_all(st, 0);
	CHECK(qint(q, "SELECT count(*) FROM events WHERE key = 'bx' AND "
	    "status = 'failed' AND attempts = 1 AND last_error LIKE "
	    "'%effects_b%'") == 1 && qint(q, "SELECT count(*) FROM events "
	    "WHERE key = 'ax' AND status = 'processed'") == 1, "an endpoint "
	    "whose actions no longer prepare: its event failed (counted, with "
	    "the reason), the other endpoint's processed");
	cf->endpoints[1].deferred = 0;
	exec(q, "CREATE TABLE effects_b (key TEXT NOT NULL)");

	/* kill -9 of a worker in the middle of a slow action. */
	CHECK(claim_new(st, 0, "s1", "t.slow", "{\"v\":\"s1\"}") ==
	    HOOK_ACCEPTED, "a slow event accepted");
	if ((pid[5] = tap_fork()) == 0) {
		struct store	*s2;

		if ((s2 = store_open(cf, 0, err, sizeof(err))) == NULL)
			_exit(99);
		(void)store_work(s2, "a", "s1", now, 0, &w);
		_exit(0);
	}
	usleep(300000);
	kill(pid[5], SIGKILL);
	waitpid(pid[5], &wst, 0);
	exec(q, "UPDATE slowness SET n = 1");	/* the later run: at once */
	CHECK(WIFSIGNALED(wst) && qint(q, "SELECT count(*) FROM events WHERE "
	    "key = 's1' AND status = 'received' AND attempts = 0") == 1 &&
	    qint(q, "SELECT count(*) FROM effects WHERE key = 's1'") == 0,
	    "kill -9 mid-action: the event stays received, no effect");
	CHECK(store_work(st, NULL, NULL, (long long)time(NULL) + 11, 0, &w) ==
	    WORK_DONE && qint(q,
	    "SELECT count(*) FROM effects WHERE key = 's1'") == 1 && qint(q,
	    "SELECT count(*) FROM events WHERE key = 's1' AND status = "
	    "'processed'") == 1, "... and work runs it later, once");
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

int
main(void)
{
	mode_t	 old;

	old = umask(022);
	snprintf(dir, sizeof(dir), "/tmp/oncehook-t_store-XXXXXX");
	if (mkdtemp(dir) == NULL)
		BAIL("mkdtemp: %s", strerror(errno));
	write_file("a.sql", actions_a);
	write_file("b.sql", actions_b);

	test_init();
	test_versions();
	test_claim();
	test_savepoints();
	test_busy();
	test_actions_errors();
	test_auto_rollback();
	test_batch_rule();
	test_guard_setup();
	test_actions_once();
	test_replaced();
	test_immutable_shm();
	test_write_lock();
	test_checkpoint();
	test_checkpoint_reader();
	test_work_plan();
	test_migrate_v2();
	test_migrate_v3();
	test_migrate_v5();
	test_migrate_v6();
	test_migrate_v7();
	test_migrate_v8();
	test_guard_paths();
	test_guard_signed();
	test_guard_signed_deferred();
	test_park_replay();
	test_deferred();

	rmtree();
	umask(old);
	return tap_done();
}
