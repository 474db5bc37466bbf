/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the MariaDB/MySQL store (src/store/mysql/engine.c, store/mysql/actions.c,
 * store/mysql/conn.c) on a real server: what the protocol's table
 * (tests/unit/t_protocol.c, run on MariaDB too) cannot show.  The lost race
 * and the replay guard's race between processes; a statement the
 * server refuses in one claim of a batch; the outbox's lease; the
 * actions' guard at load; deadlocks, lock waits, a connection killed in
 * the middle of a claim (never HOOK_OK); prune and the counts.
 *
 * tests/mystore.sh starts the server and runs this program with
 * ONCEHOOK_TEST_MYSQL (a mysql:// URL) and ONCEHOOK_TEST_MYSQL_PW (the
 * password file); without them it has nothing to talk to, and says so
 * (a plan of 0, skipped).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "lib/crypto.h"
#include "pipeline/event.h"
#include "hook.h"
#include "store/mysql/conn.h"
#include "store/mysql/rewrite.h"
#include "store/outbox.h"
#include "store/actfile.h"
#include "store/store.h"
#include "tap.h"
#include "testlib.h"
#include "testev.h"

static char	 dir[64];
static const char *url, *pwfile;

static const char actions[] =
"CREATE TABLE IF NOT EXISTS effects (k VARCHAR(100) NOT NULL)\n"
"    ENGINE=InnoDB;\n"
"CREATE TABLE IF NOT EXISTS locks (id INT PRIMARY KEY, n INT NOT NULL)\n"
"    ENGINE=InnoDB;\n"
"INSERT IGNORE INTO locks VALUES (1, 0), (2, 0);\n"
"-- on: t.ok\n"
"INSERT INTO effects (k) VALUES (:key);\n"
"INSERT INTO outbox (topic, payload)\n"
"    VALUES ('t.done', JSON_OBJECT('key', :key));\n"
"-- on: t.slow\n"
"SELECT SLEEP(0.4);\n"
"INSERT INTO effects (k) VALUES (:key);\n"
"-- on: t.fail\n"
"INSERT INTO effects (k) VALUES (:key);\n"
"INSERT INTO effects (k) VALUES (NULL);\n"
"-- on: t.later\n"
"INSERT INTO later (k) VALUES (:key);\n"
"-- on: t.ab\n"
"UPDATE locks SET n = n + 1 WHERE id = 1;\n"
"SELECT SLEEP(0.3);\n"
"UPDATE locks SET n = n + 1 WHERE id = 2;\n"
"-- on: t.ba\n"
"UPDATE locks SET n = n + 1 WHERE id = 2;\n"
"SELECT SLEEP(0.3);\n"
"UPDATE locks SET n = n + 1 WHERE id = 1;\n"
"-- on: t.w\n"
"SELECT SLEEP(0.005);\n"
"INSERT INTO effects (k) VALUES (:key);\n";

static void
write_file(const char *name, const char *text, char *p, size_t psz)
{
	FILE	*f;

	snprintf(p, psz, "%s/%s", dir, name);
	if ((f = fopen(p, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) == EOF)
		BAIL("%s: cannot write", p);
	actfile_forget(NULL);	/* as a restart would: the new text runs */
}

/* One endpoint (hmac-sha256: a replay guard) with the actions in act. */
static struct conf *
mkconf(const char *act, const char *mode, const char *prefix)
{
	char		 err[256];
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", url },
		{ "ONCEHOOK_DB_PASSWORD_FILE", pwfile },
		{ "ONCEHOOK_DB_PREFIX", prefix },
		{ "ONCEHOOK_BUSY_TIMEOUT_MS", "2000" },
		{ "ONCEHOOK_SCHEME", "hmac-sha256" },
		{ "ONCEHOOK_SECRET", "secret-a" },
		{ "ONCEHOOK_PARK_AFTER", "1" },
		{ "ONCEHOOK_MODE", mode },
		{ "ONCEHOOK_RETENTION", "1h" },
		{ "ONCEHOOK_ACTIONS", act },
		{ NULL, NULL }
	};
	struct conf	*cf;

	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	return cf;
}

static void
mkev(struct event *ev, const char *key, const char *type,
    const char *payload)
{
	test_event(ev, key, type, payload, (long long)time(NULL));
}

/* Claim one event with payload (a payload of its own if NULL). */
static enum hook_err
claim(struct store *st, const char *key, const char *type,
    const char *payload, char *why, size_t whysz)
{
	struct store_claim	 c;
	struct event		 ev;
	char			 own[160];

	if (payload == NULL) {
		snprintf(own, sizeof(own), "{\"v\":\"%.64s\"}", key);
		payload = own;
	}
	mkev(&ev, key, type, payload);
	memset(&c, 0, sizeof(c));
	c.ev = &ev;
	(void)store_claim(st, &c, 1);
	if (why != NULL)
		snprintf(why, whysz, "%s", c.why);
	event_clear(&ev);
	return c.result;
}

static enum hook_err
lookup(struct store *st, const char *key, const char *payload)
{
	struct event	 ev;
	enum hook_err	 er;

	mkev(&ev, key, "t.ok", payload);
	er = store_lookup(st, 0, &ev);
	event_clear(&ev);
	return er;
}

static struct store *
open_store(const struct conf *cf, int flags)
{
	struct store	*st;
	char		 err[512];

	if ((st = store_open(cf, flags, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	return st;
}

/* A side connection for checks: the first column of the first row. */
static struct mydb	*side;

static long long
qint(const char *sql)
{
	struct myres	*r = NULL;
	struct myrow	 row;
	long long	 v = -1;

	if (mydb_run(side, strdup(sql), &r, NULL) != 0)
		BAIL("%s: %s", sql, mydb_error(side));
	if (mydb_next(r, &row))
		v = mydb_int(&row, 0, -2);
	mydb_free(r);
	return v;
}

static void
qrun(const char *sql)
{
	if (mydb_run(side, strdup(sql), NULL, NULL) != 0)
		BAIL("%s: %s", sql, mydb_error(side));
}

static void
test_init(const struct conf *cf)
{
	struct store	*st;
	struct conf	*other;
	char		 err[512];

	st = open_store(cf, STORE_INIT);
	CHECK(store_schema(st) >= 1 && strcmp(store_engine(st),
	    "MariaDB/MySQL") == 0, "init: schema version %d on %s",
	    store_schema(st), store_engine(st));
	store_close(st);
	st = open_store(cf, STORE_INIT);
	CHECK(qint("SELECT COUNT(*) FROM t_schema") == store_version() ||
	    qint("SELECT COUNT(*) FROM t_schema") >= 1,
	    "init again: nothing applied twice");
	store_close(st);
	CHECK(store_about(st = open_store(cf, 0), err, sizeof(err)) == -1 &&
	    strstr(err, "actions.sql:17:") != NULL && strstr(err, "later") !=
	    NULL, "check prepares every section: a missing table found (%s)",
	    err);
	store_close(st);
	other = mkconf(cf->endpoints[0].actions, "sync", "nope_");
	CHECK(store_connect(other, 0, &st, err, sizeof(err)) == HOOK_ECONF &&
	    strstr(err, "run oncehook init") != NULL,
	    "another prefix without init: %s", err);
	conf_free(other);
}

/* What the later tests find (the claims themselves are the protocol's
 * table's, tests/unit/t_protocol.c): k1 processed, one conflict row. */
static void
seed(const struct conf *cf)
{
	struct store	*st = open_store(cf, 0);

	if (claim(st, "k1", "t.ok", NULL, NULL, 0) != HOOK_OK ||
	    claim(st, "k1", "t.ok", "{\"v\":\"x\"}", NULL, 0) !=
	    HOOK_ECONFLICT)
		BAIL("seed: k1");
	store_close(st);
}

/* A batch in which the server refuses one claim's own statement (the
 * rest of the batch rule is the protocol's table's). */
static void
test_batch(const struct conf *cf)
{
	struct store		*st = open_store(cf, 0);
	struct store_claim	 c[3];
	struct event		 ev[3];
	size_t			 i;

	/* One claim's own statement refused by the server (a type longer
	 * than its column): that claim fails, the batch goes on. */
	memset(c, 0, sizeof(c));
	mkev(&ev[0], "b4", "t.ok", "{\"b\":4}");
	mkev(&ev[1], "b5", "t.ok", "{\"b\":5}");
	free(ev[1].type);
	if ((ev[1].type = malloc(301)) == NULL)
		BAIL("out of memory");
	memset(ev[1].type, 'x', 300);
	ev[1].type[300] = '\0';
	mkev(&ev[2], "b6", "t.ok", "{\"b\":6}");
	for (i = 0; i < 3; i++)
		c[i].ev = &ev[i];
	CHECK(store_claim(st, c, 3) == HOOK_OK && c[0].result == HOOK_OK &&
	    c[1].result != HOOK_OK && c[2].result == HOOK_OK &&
	    qint("SELECT COUNT(*) FROM t_events WHERE event_key IN ('b4',"
	    " 'b6')") == 2 && qint("SELECT COUNT(*) FROM t_events WHERE"
	    " event_key = 'b5'") == 0, "a statement refused in one claim of "
	    "a batch fails that claim alone (%d: %s)", c[1].result, c[1].why);
	for (i = 0; i < 3; i++)
		event_clear(&ev[i]);
	store_close(st);
}

/* n processes claim at once; their results counted. */
static void
race(const struct conf *cf, int n, int samekey, int *ok, int *dup,
    int *other)
{
	pid_t	 pid[16];
	char	 key[32];
	int	 i, status, r;

	*ok = *dup = *other = 0;
	for (i = 0; i < n; i++) {
		if ((pid[i] = tap_fork()) == -1)
			BAIL("fork");
		if (pid[i] == 0) {
			struct store	*st;
			char		 err[256];

			if ((st = store_open(cf, 0, err, sizeof(err))) ==
			    NULL)
				_exit(100);
			snprintf(key, sizeof(key), samekey ? "race" :
			    "guard%d", i);
			/* One payload for all: the replay guard's case. */
			r = claim(st, key, "t.slow", samekey ?
			    "{\"captured\":1}" : "{\"captured\":2}", NULL, 0);
			store_close(st);
			_exit(r);
		}
	}
	for (i = 0; i < n; i++) {
		if (waitpid(pid[i], &status, 0) == -1 || !WIFEXITED(status))
			BAIL("child");
		r = WEXITSTATUS(status);
		if (r == HOOK_OK)
			(*ok)++;
		else if (r == HOOK_DUP)
			(*dup)++;
		else
			(*other)++;
	}
}

static void
test_races(const struct conf *cf)
{
	int	 ok, dup, other;

	race(cf, 8, 1, &ok, &dup, &other);
	CHECK(ok == 1 && dup == 7 && other == 0 && qint("SELECT COUNT(*)"
	    " FROM effects WHERE k = 'race'") == 1, "8 processes, one key "
	    "at once: one effect (%d ok, %d dup, %d other)", ok, dup, other);
	race(cf, 6, 0, &ok, &dup, &other);
	CHECK(ok == 1 && dup == 5 && other == 0 && qint("SELECT COUNT(*)"
	    " FROM effects WHERE k LIKE 'guard%'") == 1, "6 keys carrying "
	    "one captured payload at once: one effect (%d ok, %d dup, %d "
	    "other)", ok, dup, other);
}

static void
test_about(const struct conf *cf)
{
	struct store	*st;
	char		 why[256];

	qrun("CREATE TABLE later (k VARCHAR(100))");	/* t.later's */
	st = open_store(cf, 0);
	CHECK(store_about(st, why, sizeof(why)) == 0 && strstr(why,
	    "MariaDB") != NULL && strstr(why, "pw-") == NULL,
	    "check: %s (no password)", why);
	store_close(st);
}

static int
yes(void *arg, const char *topic)
{
	(void)arg;
	return strcmp(topic, "t.done") == 0;
}

static void
test_outbox(const struct conf *cf)
{
	struct store		*st = open_store(cf, 0);
	struct outbox_item	 it, it2;
	long long		 now = (long long)time(NULL), n;
	char			 why[256];

	qrun("UPDATE t_outbox SET status = 'delivered'");
	CHECK(claim(st, "o1", "t.ok", NULL, NULL, 0) == HOOK_OK &&
	    qint("SELECT COUNT(*) FROM effects WHERE k = 'o1'") == 1 &&
	    qint("SELECT COUNT(*) FROM t_outbox WHERE event_key = 'o1'"
	    " AND endpoint = 'default' AND id LIKE 'ob\\_%'") == 1,
	    "an event writes its effect and its outbox row, with the event's"
	    " key and an id");
	CHECK(outbox_take(st, now, 35, yes, NULL, &it, why, sizeof(why)) ==
	    TAKE_ONE && strcmp(it.key, "o1") == 0 && it.attempts == 1 &&
	    strstr(it.payload, "o1") != NULL, "taken: its key, payload and "
	    "first attempt");
	CHECK(outbox_take(st, now, 35, yes, NULL, &it2, why, sizeof(why)) ==
	    TAKE_NONE, "leased: not taken twice");
	CHECK(outbox_failed(st, &it, "refused", now, 30, 2, why,
	    sizeof(why)) == 1 && qint("SELECT next_at > UNIX_TIMESTAMP()"
	    " FROM t_outbox WHERE event_key = 'o1'") == 1,
	    "failed: due again after a backoff");
	outbox_item_clear(&it);
	CHECK(outbox_retry(st, now, 0, 1, why, sizeof(why)) == 1,
	    "retry --now: made due");
	CHECK(outbox_take(st, now, 35, yes, NULL, &it, why, sizeof(why)) ==
	    TAKE_ONE && it.attempts == 2, "taken again: attempt 2");
	CHECK(outbox_failed(st, &it, "refused", now, 30, 2, why,
	    sizeof(why)) == 2, "at the most attempts: dead");
	outbox_item_clear(&it);
	CHECK((n = outbox_retry(st, now, 1, 0, why, sizeof(why))) == 1 &&
	    outbox_take(st, now, 35, yes, NULL, &it, why, sizeof(why)) ==
	    TAKE_ONE, "a dead row made pending again, and taken");
	CHECK(outbox_delivered(st, &it, now, why, sizeof(why)) == 1 &&
	    qint("SELECT status = 'delivered' FROM t_outbox WHERE"
	    " event_key = 'o1'") == 1, "delivered");
	it.lease++;
	CHECK(outbox_delivered(st, &it, now, why, sizeof(why)) == 0,
	    "a late attempt's outcome (another lease) is not written");
	outbox_item_clear(&it);

	/* A target's output cut inside a character, or not UTF-8: the
	 * failure is still noted (utf8mb4 refused it: the row was retried
	 * for ever, never dead, its reason never shown). */
	qrun("UPDATE t_outbox SET status = 'delivered'");
	CHECK(claim(st, "o3", "t.ok", NULL, NULL, 0) == HOOK_OK &&
	    outbox_take(st, now, 35, yes, NULL, &it, why, sizeof(why)) ==
	    TAKE_ONE && outbox_failed(st, &it, "\xc3\xa9" "chec \xe9 \xc3", now,
	    30, 1, why, sizeof(why)) == 2 &&
	    qint("SELECT COUNT(*) FROM t_outbox WHERE event_key = 'o3' AND"
	    " status = 'dead' AND last_error = '\xc3\xa9" "chec ? ?'") == 1,
	    "an outbox failure whose text is not UTF-8: noted with '?', dead "
	    "at the most attempts");
	outbox_item_clear(&it);
	store_close(st);
}

/*
 * A long-lived process (actfile_keep()) on MariaDB: a store connected
 * again after its actions file was edited in place (the helper's case:
 * serve's idle connections killed, the store let go and opened again)
 * runs the text it first read.
 */
static void
test_actions_once(void)
{
	char		 act[sizeof(dir) + 64], err[512];
	struct conf	*c;
	struct store	*st;
	FILE		*f;

	write_file("once.sql", "-- on: t.ok\n"
	    "INSERT INTO effects (k) VALUES (:key);\n", act, sizeof(act));
	c = mkconf(act, "sync", "t_");
	actfile_keep(1);
	st = open_store(c, 0);
	CHECK(claim(st, "once-1", "t.ok", NULL, NULL, 0) == HOOK_OK,
	    "keeping texts: the first text runs");
	store_close(st);
	if ((f = fopen(act, "w")) == NULL || fputs("-- on: t.ok\n"
	    "INSERT INTO gone (k) VALUES (:key);\n", f) == EOF ||
	    fclose(f) == EOF)
		BAIL("%s: cannot write", act);
	err[0] = '\0';
	st = store_open(c, 0, err, sizeof(err));
	CHECK(st != NULL && claim(st, "once-2", "t.ok", NULL, err,
	    sizeof(err)) == HOOK_OK && qint("SELECT COUNT(*) FROM effects"
	    " WHERE k IN ('once-1', 'once-2')") == 2,
	    "edited in place, the store opened again: the first text still "
	    "runs (%s)", err);
	store_close(st);
	actfile_keep(0);
	actfile_forget(NULL);
	conf_free(c);
}

/* An action's failure whose text is not UTF-8 (an error cut at a byte
 * count): counted and parked with '?' in its place. */
static void
test_error_text(const struct conf *cf)
{
	struct store	*st = open_store(cf, 0);
	struct event	 ev;
	long long	 attempts = 0;

	mkev(&ev, "te1", "t.fail", "{\"v\":1}");
	CHECK(store_failed(st, 0, &ev, "cut \xc3", 1, &attempts) ==
	    HOOK_PARKED && attempts == 1 &&
	    qint("SELECT COUNT(*) FROM t_events WHERE event_key = 'te1' AND"
	    " status = 'failed' AND last_error = 'cut ?'") == 1,
	    "a failure whose text is cut inside a character: parked, its "
	    "error kept as UTF-8");
	event_clear(&ev);
	store_close(st);
}

static void
test_guard(void)
{
	static const struct {
		const char	*sql;
		const char	*what;
	} bad[] = {
		{ "-- on: *\nCREATE TABLE x (a INT);\n", "DDL in a section" },
		{ "-- on: *\nCOMMIT;\n", "a COMMIT" },
		{ "-- on: *\nLOCK TABLES effects WRITE;\n", "LOCK TABLES" },
		{ "-- on: *\nUPDATE t_events SET status = 'dead';\n",
		    "a write to oncehook's events" },
		{ "-- on: *\nUPDATE outbox SET status = 'delivered';\n",
		    "an update of the outbox" },
		{ "-- on: *\nINSERT INTO outbox (topic, payload, status)"
		    " VALUES ('a', 'b', 'delivered');\n",
		    "an outbox row with a status" },
		{ "-- on: *\nSET @x = :key;\n", "a user variable" },
		{ "-- on: *\nSELECT GET_LOCK('oncehook_init', 0);\n",
		    "a named lock, which outlives the transaction" },
		{ "-- on: *\nSELECT `GET_LOCK`('oncehook_init', 0);\n",
		    "a named lock, its function's name `quoted`" },
		{ "-- on: *\nUPDATE effects --\x7f '\n, t_events SET"
		    " t_events.last_error = 'x' -- '\nWHERE k = 'a';\n",
		    "oncehook's table behind a -- comment ended by DEL" },
		{ "-- on: *\nINSERT INTO effects (k) SELECT"
		    " LOAD_FILE('/etc/passwd');\n", "a file read" },
	};
	struct conf	*cf;
	struct store	*st;
	char		 p[sizeof(dir) + 64], err[512];
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file("bad.sql", bad[i].sql, p, sizeof(p));
		cf = mkconf(p, "sync", "t_");
		CHECK(store_connect(cf, 0, &st, err, sizeof(err)) ==
		    HOOK_ECONF && strstr(err, "bad.sql:") != NULL,
		    "refused at load: %s (%s)", bad[i].what, err);
		store_close(st);
		conf_free(cf);
	}
}

/*
 * Two claims whose actions take two rows' locks in opposite orders, at
 * once: InnoDB finds the deadlock and rolls one back; the store runs
 * that claim once more, and both take effect, once each.
 */
static void
test_deadlock(const struct conf *cf)
{
	pid_t		 pid[2];
	int		 i, status, r[2];
	long long	 before;

	before = qint("SELECT VARIABLE_VALUE FROM information_schema."
	    "GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_DEADLOCKS'");
	for (i = 0; i < 2; i++) {
		if ((pid[i] = tap_fork()) == -1)
			BAIL("fork");
		if (pid[i] == 0) {
			struct store	*st;
			char		 err[256];

			if ((st = store_open(cf, 0, err, sizeof(err))) ==
			    NULL)
				_exit(100);
			_exit(claim(st, i ? "dl-b" : "dl-a", i ? "t.ba" :
			    "t.ab", NULL, NULL, 0));
		}
	}
	for (i = 0; i < 2; i++) {
		if (waitpid(pid[i], &status, 0) == -1 || !WIFEXITED(status))
			BAIL("child");
		r[i] = WEXITSTATUS(status);
	}
	CHECK(qint("SELECT VARIABLE_VALUE FROM information_schema."
	    "GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_DEADLOCKS'") > before,
	    "the server saw a deadlock between the two claims");
	CHECK(r[0] == HOOK_OK && r[1] == HOOK_OK &&
	    qint("SELECT SUM(n) FROM locks") == 4 &&
	    qint("SELECT COUNT(*) FROM t_events WHERE event_key LIKE 'dl-%'")
	    == 2, "a deadlock between two claims: the one rolled back is run "
	    "again, both once (%d, %d)", r[0], r[1]);
}

/*
 * A row lock held elsewhere past the lock wait (BUSY_TIMEOUT_MS, 2 s
 * here): the claim that waits for it is HOOK_EBUSY (503) with nothing
 * committed, alone in a batch; a lookup of an event whose row is
 * locked answers at once, from a consistent read.
 */
static void
test_lockwait(const struct conf *cf)
{
	struct store		*st = open_store(cf, 0);
	struct store_claim	 c[2];
	struct event		 ev[2];
	struct timespec		 t0, t1;
	double			 ms;

	qrun("START TRANSACTION");
	qrun("SELECT n FROM locks WHERE id = 1 FOR UPDATE");
	CHECK(claim(st, "lw1", "t.ab", NULL, NULL, 0) == HOOK_EBUSY &&
	    qint("SELECT COUNT(*) FROM t_events WHERE event_key = 'lw1'") == 0,
	    "a row lock held past the lock wait: HOOK_EBUSY, nothing "
	    "committed");
	memset(c, 0, sizeof(c));
	mkev(&ev[0], "lw2", "t.ab", "{\"lw\":2}");
	mkev(&ev[1], "lw3", "t.ok", "{\"lw\":3}");
	c[0].ev = &ev[0];
	c[1].ev = &ev[1];
	CHECK(store_claim(st, c, 2) == HOOK_OK && c[0].result == HOOK_EBUSY &&
	    c[1].result == HOOK_OK && qint("SELECT COUNT(*) FROM t_events"
	    " WHERE event_key IN ('lw2', 'lw3')") == 1, "in a batch, the "
	    "claim that waited fails alone (%d, %d)", c[0].result,
	    c[1].result);
	event_clear(&ev[0]);
	event_clear(&ev[1]);
	qrun("SELECT id FROM t_events WHERE event_key = 'k1' FOR UPDATE");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(lookup(st, "k1", "{\"v\":\"k1\"}") == HOOK_DUP,
	    "the event's row locked elsewhere: a duplicate still");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	CHECK(ms < 1000, "... answered without waiting for the lock "
	    "(%.1f ms; the lock wait is 2 s)", ms);
	qrun("ROLLBACK");
	store_close(st);
}

/* The connection killed while the claim's actions run: never OK. */
static void
test_killed(const struct conf *cf)
{
	struct store	*st = open_store(cf, 0);
	pid_t		 pid;
	int		 status;
	enum hook_err	 er;

	/* The store's connection is the newest of the user's. */
	if ((pid = tap_fork()) == -1)
		BAIL("fork");
	if (pid == 0) {
		struct mydb	*db;
		char		 err[256];

		usleep(150000);
		if (mydb_connect(cf, &db, err, sizeof(err)) != HOOK_OK)
			_exit(1);
		(void)mydb_run(db, strdup("SET @id = (SELECT"
		    " MAX(ID) FROM information_schema.PROCESSLIST WHERE"
		    " INFO LIKE 'SELECT SLEEP%')"), NULL, NULL);
		(void)mydb_run(db, strdup("SET @s ="
		    " CONCAT('KILL ', @id)"), NULL, NULL);
		(void)mydb_run(db, strdup("PREPARE k FROM @s"),
		    NULL, NULL);
		(void)mydb_run(db, strdup("EXECUTE k"), NULL,
		    NULL);
		mydb_close(db);
		_exit(0);
	}
	er = claim(st, "killed", "t.slow", NULL, NULL, 0);
	waitpid(pid, &status, 0);
	CHECK(er == HOOK_EBUSY && store_broken(st), "killed mid-claim: "
	    "HOOK_EBUSY (%d), the connection let go", er);
	CHECK(qint("SELECT COUNT(*) FROM t_events WHERE event_key ="
	    " 'killed'") == 0 && qint("SELECT COUNT(*) FROM effects WHERE"
	    " k = 'killed'") == 0, "nothing of it committed");
	store_close(st);
	st = open_store(cf, 0);
	CHECK(claim(st, "killed", "t.slow", NULL, NULL, 0) == HOOK_OK &&
	    qint("SELECT COUNT(*) FROM effects WHERE k = 'killed'") == 1,
	    "the provider's retry on a new connection: once");
	store_close(st);
}

/* The store's connection closed by the server between two requests
 * (a restart, wait_timeout): the next claim makes a new one. */
static void
test_gone(const struct conf *cf)
{
	struct store	*st = open_store(cf, 0);
	char		 sql[128];
	long long	 id;

	CHECK(lookup(st, "gone", "{}") == HOOK_OK, "a lookup on a new store");
	id = qint("SELECT MAX(ID) FROM information_schema.PROCESSLIST WHERE"
	    " USER = 'oncetest' AND ID <> CONNECTION_ID()");
	snprintf(sql, sizeof(sql), "KILL %lld", id);
	qrun(sql);
	usleep(100000);
	CHECK(claim(st, "gone", "t.ok", NULL, NULL, 0) == HOOK_OK &&
	    qint("SELECT COUNT(*) FROM effects WHERE k = 'gone'") == 1,
	    "its connection killed between requests: the claim opens a new "
	    "one (nothing was done on the old), processed once");
	store_close(st);
}

/*
 * The guard cuts -- comments where the server does, for every byte
 * after the two dashes: the server runs SELECT 'x' --<b> , 'y' as the
 * one column 'x' exactly when the guard's statement (its comments
 * dropped) has no 'y' left.  What must never be: a comment to the
 * server the guard read as code (the text after it hidden from the
 * guard, as a string it believed open).  Beside that, the two agree on
 * every byte but # and - (each starts a comment of its own, which
 * leaves SELECT 'x' - to the server, an error) and those the guard
 * refuses outright (a quote left open, ;, ?, @).  A newline ends the
 * comment at once: skipped.
 */
/* Every table of oncehook's is binary-collated, {prefix}schema too,
 * and init makes one an older init created otherwise so (issue 36). */
static void
test_collation(const struct conf *cf)
{
	struct store	*st;

	CHECK(qint("SELECT COUNT(*) FROM information_schema.tables WHERE"
	    " table_schema = DATABASE() AND table_name LIKE 't\\_%' AND"
	    " table_collation <> 'utf8mb4_bin'") == 0,
	    "init: every t_ table utf8mb4_bin, t_schema among them");
	qrun("ALTER TABLE t_schema CONVERT TO CHARACTER SET utf8mb4 COLLATE"
	    " utf8mb4_general_ci");
	st = open_store(cf, STORE_INIT);
	store_close(st);
	CHECK(qint("SELECT COUNT(*) FROM information_schema.tables WHERE"
	    " table_schema = DATABASE() AND table_name = 't_schema' AND"
	    " table_collation = 'utf8mb4_bin'") == 1,
	    "init again: an older t_schema made binary");
}

/* `oncehook check` (ONCEHOOK_BIN) with prefix and actions file act:
 * its exit status, its output into out. */
static int
check_cmd(const char *prefix, const char *act, char *out, size_t outsz)
{
	const char	*bin = getenv("ONCEHOOK_BIN");
	char		 cmd[2048];
	size_t		 n = 0, k;
	FILE		*f;
	int		 st;

	snprintf(cmd, sizeof(cmd), "ONCEHOOK_DB='%s' "
	    "ONCEHOOK_DB_PASSWORD_FILE='%s' ONCEHOOK_DB_PREFIX=%s "
	    "ONCEHOOK_SCHEME=hmac-sha256 ONCEHOOK_SECRET=secret-a-0123456789 "
	    "ONCEHOOK_ACTIONS='%s' '%s' check 2>&1", url, pwfile, prefix, act,
	    bin != NULL ? bin : "./oncehook");
	if ((f = popen(cmd, "r")) == NULL)
		BAIL("popen %s", cmd);
	while (n + 1 < outsz && (k = fread(out + n, 1, outsz - n - 1, f)) >
	    0)
		n += k;
	out[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A prefix whose table names are the site's own (pc_events of a
 * plugin, prefix pc_): init refuses it, nothing written (issue 36). */
static void
test_prefix_collision(const struct conf *base)
{
	struct conf	*cf;
	struct store	*st;
	char		 err[512], out[4096];

	qrun("CREATE TABLE pc_events (id INT PRIMARY KEY, note TEXT)");
	cf = mkconf(base->endpoints[0].actions, "sync", "pc_");
	CHECK(store_connect(cf, STORE_INIT, &st, err, sizeof(err)) ==
	    HOOK_ECONF && strstr(err, "pc_events is not oncehook's") !=
	    NULL && qint("SELECT COUNT(*) FROM information_schema.tables"
	    " WHERE table_schema = DATABASE() AND table_name = 'pc_schema'")
	    == 0, "init with a prefix whose events table is the site's: "
	    "refused, nothing made (%s)", err);
	store_close(st);
	st = NULL;
	CHECK(store_connect(cf, 0, &st, err, sizeof(err)) == HOOK_ECONF &&
	    strstr(err, "pc_events is not oncehook's") != NULL, "check "
	    "(a connection, no init) with it names the site's table too "
	    "(%s)", err);
	CHECK(check_cmd("pc_", cf->endpoints[0].actions, out, sizeof(out))
	    == 1 && strstr(out, "table pc_events is not oncehook's") != NULL,
	    "... oncehook check exits 1 naming it");
	store_close(st);
	conf_free(cf);
}

/* A table of oncehook's replaced by a site's after init (DROP, CREATE
 * with other columns): check refuses, naming it (issue 36). */
static void
test_prefix_replaced(void)
{
	struct conf	*cf;
	struct store	*st;
	char		 act[sizeof(dir) + 64], about[512], out[4096];
	int		 rc;

	write_file("select.sql", "-- on: t.ok\nSELECT 1;\n", act,
	    sizeof(act));
	cf = mkconf(act, "sync", "rp_");
	st = open_store(cf, STORE_INIT);
	rc = store_about(st, about, sizeof(about));
	CHECK(rc == 0, "check after init with prefix rp_: %s", about);
	qrun("DROP TABLE rp_events");
	qrun("CREATE TABLE rp_events (id INT PRIMARY KEY, note TEXT)");
	rc = store_about(st, about, sizeof(about));
	store_close(st);
	CHECK(rc == -1 && strstr(about, "rp_events is not oncehook's") !=
	    NULL, "... on the connection that made it, its look prepared "
	    "before: refused (%s)", about);
	st = open_store(cf, 0);
	rc = store_about(st, about, sizeof(about));
	store_close(st);
	CHECK(rc == -1 && strstr(about, "rp_events is not oncehook's") !=
	    NULL, "check after rp_events was replaced by a site's table: "
	    "refused, named (%s)", about);
	CHECK(check_cmd("rp_", act, out, sizeof(out)) == 1 && strstr(out,
	    "table rp_events is not oncehook's") != NULL, "... oncehook "
	    "check exits 1 naming it");
	/* A site's webhook log, with an endpoint column of its own. */
	qrun("DROP TABLE rp_events");
	qrun("CREATE TABLE rp_events (id INT PRIMARY KEY, endpoint"
	    " VARCHAR(200), body TEXT)");
	st = open_store(cf, 0);
	rc = store_about(st, about, sizeof(about));
	store_close(st);
	CHECK(rc == -1 && strstr(about, "rp_events is not oncehook's") !=
	    NULL, "... by one with an endpoint column: refused too (%s)",
	    about);
	conf_free(cf);
}

/* What an error of the server is answered (a Galera node cannot be
 * staged here: its error's class is). */
static void
test_classes(void)
{
	CHECK(mydb_classify(1047) == HOOK_EBUSY, "1047, a Galera node not "
	    "in the primary component or not synced yet: 503, as a server "
	    "restarting (was 500)");
	CHECK(mydb_classify(1213) == HOOK_EBUSY && mydb_classify(1205) ==
	    HOOK_EBUSY, "a deadlock, a lock wait: 503");
	CHECK(mydb_classify(1146) == HOOK_ECONF, "a missing table: the "
	    "operator's (500, said so)");
}

static void
test_lexer_bytes(void)
{
	struct myp_stmts	 st;
	struct myres		*r;
	struct myrow		 row;
	char			 text[64], err[256], bad[1024], hid[512];
	size_t			 n = 0, nh = 0;
	int			 b, server, guard;

	bad[0] = hid[0] = '\0';
	for (b = 1; b < 256; b++) {
		if (b == '\n')
			continue;
		snprintf(text, sizeof(text), "SELECT 'x' --%c , 'y'", b);
		memset(&st, 0, sizeof(st));
		if (myp_split(text, strlen(text), 1, "t_", 0, &st, err,
		    sizeof(err)) == -1 || st.n != 1)
			guard = -1;	/* refused: nothing runs */
		else
			guard = strstr(st.v[0].sql, "'y'") == NULL;
		myp_free(&st);
		r = NULL;
		server = mydb_run(side, strdup(text), &r, NULL) == 0 &&
		    mydb_next(r, &row) && row.v[0] != NULL &&
		    strcmp(row.v[0], "x") == 0;
		mydb_free(r);
		if (guard == 0 && server) {
			nh++;
			snprintf(hid + strlen(hid), sizeof(hid) - strlen(hid),
			    " 0x%02x", b);
		}
		if (guard != -1 && b != '#' && b != '-' && guard != server) {
			n++;
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			    " 0x%02x (guard %d, server %d)", b, guard, server);
		}
	}
	CHECK(nh == 0, "-- then each of 254 bytes: never a comment to the "
	    "server that the guard reads as code (%zu:%s)", nh, hid);
	CHECK(n == 0, "... and else a comment to the guard exactly when it "
	    "is one to the server (%zu differ:%s)", n, bad);
}

static void
test_rows_prune(const struct conf *cf)
{
	struct store		*st = open_store(cf, 0);
	struct store_counts	 rows[2];
	long long		 nc = 0, n;
	char			 err[256];

	CHECK(store_rows(st, (long long)time(NULL), rows, err,
	    sizeof(err)) == 0 && rows[0].events == qint("SELECT COUNT(*)"
	    " FROM t_events") && rows[0].conflicts >= 1 && rows[0].dead == 0,
	    "counts: %lld events, %lld conflicts", rows[0].events,
	    rows[0].conflicts);
	n = store_prune(st, (long long)time(NULL) + 7200, 1, 0, &nc, err,
	    sizeof(err));
	CHECK(n == qint("SELECT COUNT(*) FROM t_events WHERE status ="
	    " 'processed'"), "prune --dry-run two hours on: every processed "
	    "event (%lld)", n);
	n = store_prune(st, (long long)time(NULL) + 7200, 0, 0, &nc, err,
	    sizeof(err));
	CHECK(n > 0 && qint("SELECT COUNT(*) FROM t_events WHERE status ="
	    " 'processed'") == 0 && qint("SELECT COUNT(*) FROM t_payloads p"
	    " LEFT JOIN t_events e ON e.endpoint = p.endpoint AND"
	    " e.event_key = p.event_key WHERE e.id IS NULL") == 0,
	    "prune: those deleted, with their replay guard rows (%lld)", n);
	store_close(st);
}

/*
 * Two work runners on 100 due events: each takes its share (the lease
 * of the oldest due event holds that row only), and each event runs
 * once.  Before the lease, the take's plan locked every due row and the
 * second runner found nothing: 99-100 of 100 done by one.
 */
static void
test_work_share(const char *act)
{
	struct conf	*cf = mkconf(act, "deferred", "t_");
	struct store	*st = open_store(cf, 0);
	pid_t		 pid[2];
	char		 key[32];
	int		 i, status, done[2] = { -1, -1 };

	for (i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "ws-%d", i);
		if (claim(st, key, "t.w", NULL, NULL, 0) != HOOK_ACCEPTED)
			BAIL("work share: claiming %s", key);
	}
	store_close(st);
	for (i = 0; i < 2; i++) {
		if ((pid[i] = tap_fork()) == -1)
			BAIL("fork");
		if (pid[i] == 0) {
			struct store_work_item	 w;
			struct store		*s2;
			enum store_work		 r;
			char			 err[256];
			int			 n = 0, turns = 0;

			if ((s2 = store_open(cf, 0, err, sizeof(err))) ==
			    NULL)
				_exit(255);
			/* As "work --once" by serve's runner: received
			 * events at once (the claimer's lead). */
			while (turns++ < 1000 && (r = store_work(s2, NULL,
			    NULL, (long long)time(NULL), STORE_CLAIMER_FIRST,
			    &w)) != WORK_IDLE && r != WORK_ERROR)
				n += r == WORK_DONE;
			store_close(s2);
			_exit(n);
		}
	}
	for (i = 0; i < 2; i++)
		if (waitpid(pid[i], &status, 0) != -1 && WIFEXITED(status))
			done[i] = WEXITSTATUS(status);
	CHECK(done[0] + done[1] == 100 && done[0] >= 20 && done[1] >= 20 &&
	    qint("SELECT COUNT(*) FROM effects WHERE k LIKE 'ws-%'") == 100 &&
	    qint("SELECT COUNT(DISTINCT k) FROM effects WHERE k LIKE"
	    " 'ws-%'") == 100 && qint("SELECT COUNT(*) FROM t_events WHERE"
	    " event_key LIKE 'ws-%' AND status = 'processed'") == 100,
	    "two work runners on 100 events share them (%d and %d), each "
	    "run once", done[0], done[1]);
	conf_free(cf);
}

/*
 * A due event whose row another run holds (a claimer running it, a
 * replay; here a side transaction's FOR UPDATE): work passes it by and
 * runs the others at once, never busy.  Before, the lease's update of
 * the oldest waited for that lock past the lock wait (2 s here), and
 * work was busy on the same event, again and again.
 */
static void
test_work_locked(const char *act)
{
	struct conf		*cf = mkconf(act, "deferred", "t_");
	struct store		*st = open_store(cf, 0);
	struct store_work_item	 w;
	struct timespec		 t0, t1;
	enum store_work		 r;
	char			 key[32], sql[128];
	int			 i, done = 0, busy = 0, turns = 0;
	double			 ms;

	for (i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "wl-%d", i);
		if (claim(st, key, "t.w", NULL, NULL, 0) != HOOK_ACCEPTED)
			BAIL("work locked: claiming %s", key);
	}
	/* That row alone, as a run takes it (by its index). */
	snprintf(sql, sizeof(sql), "SELECT id FROM t_events WHERE id = %lld"
	    " FOR UPDATE", qint("SELECT id FROM t_events WHERE event_key ="
	    " 'wl-0'"));
	qrun("START TRANSACTION");
	qrun(sql);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (turns++ < 8 && (r = store_work(st, NULL, NULL,
	    (long long)time(NULL), STORE_CLAIMER_FIRST, &w)) != WORK_IDLE &&
	    r != WORK_ERROR && r != WORK_BUSY)
		done += r == WORK_DONE;
	busy = r == WORK_BUSY;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	CHECK(done == 2 && !busy && r == WORK_IDLE && qint("SELECT COUNT(*)"
	    " FROM effects WHERE k IN ('wl-1', 'wl-2')") == 2 && qint("SELECT"
	    " COUNT(*) FROM effects WHERE k = 'wl-0'") == 0, "the oldest due "
	    "event's row held by another run: work runs the others (%d done, "
	    "last %d%s)", done, (int)r, busy ? ", busy" : "");
	CHECK(ms < 1000, "... at once, not after the lock wait (%.1f ms; the "
	    "lock wait is 2 s)", ms);
	qrun("ROLLBACK");
	r = store_work(st, NULL, NULL, (long long)time(NULL),
	    STORE_CLAIMER_FIRST, &w);
	CHECK(r == WORK_DONE && qint("SELECT COUNT(*) FROM effects WHERE k ="
	    " 'wl-0'") == 1, "... and the held one once it is free (%d)",
	    (int)r);
	store_close(st);
	conf_free(cf);
}

int
main(void)
{
	struct conf	*cf;
	char		 act[sizeof(dir) + 64], err[256];

	url = getenv("ONCEHOOK_TEST_MYSQL");
	pwfile = getenv("ONCEHOOK_TEST_MYSQL_PW");
	if (url == NULL || pwfile == NULL) {
		printf("1..0 # SKIP no server: tests/mystore.sh runs this\n");
		return 0;
	}
	snprintf(dir, sizeof(dir), "/tmp/oncehook-t_mystore-XXXXXX");
	if (mkdtemp(dir) == NULL)
		BAIL("mkdtemp");
	write_file("actions.sql", actions, act, sizeof(act));
	cf = mkconf(act, "sync", "t_");
	if (mydb_connect(cf, &side, err, sizeof(err)) != HOOK_OK)
		BAIL("side connection: %s", err);
	test_init(cf);
	seed(cf);
	test_batch(cf);
	test_races(cf);
	test_work_share(act);
	test_work_locked(act);
	test_about(cf);
	test_outbox(cf);
	test_error_text(cf);
	test_actions_once();
	test_guard();
	test_deadlock(cf);
	test_lockwait(cf);
	test_killed(cf);
	test_gone(cf);
	test_rows_prune(cf);
	test_lexer_bytes();
	test_classes();
	test_collation(cf);
	test_prefix_collision(cf);
	test_prefix_replaced();
	mydb_close(side);
	conf_free(cf);
	tap_rmdir(dir);
	return tap_done();
}
