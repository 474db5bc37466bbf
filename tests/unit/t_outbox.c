/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the outbox (SPEC section 13; src/store/sqlite/outbox.c, the guard in
 * src/store/sqlite/actions.c, src/outbox/sendcmd.c, the signature of src/outbox/sendhttp.c).
 *
 * What an action may write and what it may not; a row commits with its
 * event or not at all (a rolled-back action, a parked event, a replay,
 * deferred work); the lease (taken once, taken again when it ends, the
 * late one's outcome not written); backoff, dead and retry; four
 * processes taking rows at once each get each row once; prune; the
 * command target's environment, input, exit and timeout; the Standard
 * Webhooks signature against the specification's example.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
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
#include "store/outbox.h"
#include "outbox/send.h"
#include "observe/stats.h"
#include "store/store.h"
#include "tap.h"
#include "testlib.h"
#include "testev.h"
#include "pipeline/vectors.h"

static char	 dir[64];

#include "testdb.h"

static const char actions[] =
"CREATE TABLE IF NOT EXISTS effects (key TEXT NOT NULL);\n"
"CREATE TABLE IF NOT EXISTS flag (x INTEGER);\n"
"-- on: t.ok\n"
"INSERT INTO effects (key) VALUES (:key);\n"
"INSERT INTO outbox (topic, payload)\n"
"    VALUES ('t.done', json_object('key', :key));\n"
"-- on: t.two\n"
"INSERT INTO outbox (topic, payload) VALUES ('a', '1'), ('b', '2');\n"
"-- on: t.late_fail\n"
"INSERT INTO outbox (topic, payload) VALUES ('t.done', '{}');\n"
"INSERT INTO effects (key) VALUES (NULL);\n"
"-- on: t.forge\n"
"INSERT INTO outbox (topic, payload, status)\n"
"    VALUES ('t.done', '{}', 'delivered');\n"
"-- on: t.other\n"
"INSERT INTO outbox (topic, payload, key) VALUES ('t.done', '{}', 'x');\n"
"-- on: t.replace\n"
"INSERT OR REPLACE INTO outbox (seq, topic, payload)\n"
"    SELECT seq, 'a', 'x' FROM outbox WHERE key = 'k1';\n"
"-- on: t.myid\n"
"INSERT INTO outbox (id, topic, payload) VALUES\n"
"    ('ob_000000000000000000000001', 'a', 'x');\n"
"-- on: t.myseq\n"
"INSERT INTO outbox (seq, topic, payload) VALUES (1000, 'a', 'x');\n"
"-- on: t.badtopic\n"
"INSERT INTO outbox (topic, payload) VALUES ('a b', 'x');\n"
"-- on: t.blob\n"
"INSERT INTO outbox (topic, payload) VALUES ('a', x'00ff');\n"
"-- on: t.flag\n"
"INSERT INTO outbox (topic, payload) VALUES ('t.flag', '{}');\n"
"INSERT INTO effects (key) SELECT CASE WHEN EXISTS (SELECT 1 FROM flag)\n"
"    THEN NULL ELSE :key END;\n";

/* One endpoint over dbname with the actions in actname. */
static struct conf *
mkconf(const char *dbname, const char *actname, const char *mode)
{
	char		 db[sizeof(dir) + 64], act[sizeof(dir) + 64];
	char		 err[256];
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", path(db, dbname) },
		{ "ONCEHOOK_BUSY_TIMEOUT_MS", "2000" },
		{ "ONCEHOOK_SCHEME", "hmac-sha256" },
		{ "ONCEHOOK_SECRET", "secret-a" },
		{ "ONCEHOOK_PARK_AFTER", "1" },
		{ "ONCEHOOK_MODE", mode },
		{ "ONCEHOOK_ACTIONS", path(act, actname) },
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

/* Claim one new event; its result, and why in why. */
static enum hook_err
claim(struct store *st, const char *key, const char *type, char *why,
    size_t whysz)
{
	struct store_claim	 c;
	struct event		 ev;
	char			 payload[128];

	/* A payload of its own: hmac-sha256 signs no time, so one payload
	 * under two keys is a replay (store/store.h, rule 2). */
	snprintf(payload, sizeof(payload), "{\"v\":\"%.64s\"}", key);
	mkev(&ev, key, type, payload);
	memset(&c, 0, sizeof(c));
	c.endpoint = 0;
	c.ev = &ev;
	(void)store_claim(st, &c, 1);
	if (why != NULL)
		snprintf(why, whysz, "%s", c.why);
	if (c.result == HOOK_EACTION)
		(void)store_failed(st, 0, &ev, c.why, 1, &(long long){ 0 });
	event_clear(&ev);
	return c.result;
}

static sqlite3 *
peer(const char *dbname)
{
	char	 p[sizeof(dir) + 64];
	sqlite3	*db;

	if (sqlite3_open_v2(path(p, dbname), &db, SQLITE_OPEN_READWRITE,
	    NULL) != SQLITE_OK)
		BAIL("sqlite3_open %s", p);
	sqlite3_busy_timeout(db, 2000);
	return db;
}

static struct store *
open_init(const struct conf *cf)
{
	struct store	*st;
	char		 err[512];

	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	return st;
}

/* What an action may do to the outbox: the guard at load. */
static void
test_guard(void)
{
	static const struct {
		const char	*sql;
		const char	*what;
	} bad[] = {
		{ "CREATE TABLE IF NOT EXISTS x (a);\n"
		    "CREATE TEMP TRIGGER IF NOT EXISTS outbox_id AFTER INSERT ON "
		    "x BEGIN UPDATE outbox SET status = 'delivered'; END;\n"
		    "-- on: *\nSELECT 1;\n", "a trigger named as the outbox's "
		    "own" },
		{ "-- on: *\nUPDATE outbox SET status = 'delivered';\n",
		    "an action that updates outbox rows" },
		{ "-- on: *\nDELETE FROM outbox;\n",
		    "an action that deletes outbox rows" },
		{ "CREATE TRIGGER IF NOT EXISTS ob AFTER INSERT ON outbox\n"
		    "BEGIN SELECT 1; END;\n-- on: *\nSELECT 1;\n",
		    "a trigger on the outbox" },
		{ "CREATE TABLE IF NOT EXISTS x (a);\n"
		    "CREATE TRIGGER IF NOT EXISTS tx AFTER INSERT ON x\n"
		    "BEGIN DELETE FROM outbox; END;\n"
		    "-- on: *\nINSERT INTO x VALUES (1);\n",
		    "an action whose trigger deletes outbox rows" },
		{ "DROP TABLE IF EXISTS outbox;\n-- on: *\nSELECT 1;\n",
		    "a setup that drops the outbox" },
		{ "DROP TRIGGER IF EXISTS outbox_insert;\n-- on: *\n"
		    "SELECT 1;\n", "a setup that drops the outbox's trigger" },
		{ "-- on: *\nINSERT INTO outbox (topic, payload) VALUES "
		    "('a', '1') ON CONFLICT (id) DO UPDATE SET status = "
		    "'delivered';\n", "an upsert that would update a row" },
	};
	struct conf	*cf;
	struct store	*st;
	char		 name[32], db[32], err[512];
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "bad%zu.sql", i);
		snprintf(db, sizeof(db), "bad%zu.sqlite", i);
		write_file(name, bad[i].sql);
		cf = mkconf(db, name, "sync");
		st = store_open(cf, STORE_INIT, err, sizeof(err));
		CHECK(st == NULL && strstr(err, "outbox") != NULL,
		    "refused at load: %s (%s)", bad[i].what, st ? "loaded" :
		    err);
		store_close(st);
		conf_free(cf);
	}
}

/* Rows commit with their event, and only as an action writes them. */
static void
test_rows(void)
{
	struct conf	*cf;
	struct store	*st;
	char		 why[256], buf[64];
	sqlite3		*q;
	char		*msg = NULL;
	long long	 before;
	sqlite3_stmt	*s;

	cf = mkconf("rows.sqlite", "a.sql", "sync");
	st = open_init(cf);
	q = peer("rows.sqlite");
	before = (long long)time(NULL);
	CHECK(claim(st, "k1", "t.ok", NULL, 0) == HOOK_OK,
	    "an event whose action writes an outbox row: processed");
	CHECK(qint(q, "SELECT count(*) FROM outbox WHERE endpoint = "
	    "'default' AND key = 'k1' AND topic = 't.done' AND status = "
	    "'pending' AND attempts = 0 AND next_at = created_at AND "
	    "delivered_at IS NULL AND payload = '{\"key\":\"k1\"}'") == 1,
	    "the row: the event's endpoint and key, pending, due at once");
	CHECK(qint(q, "SELECT count(*) FROM outbox WHERE length(id) = 27 AND "
	    "id GLOB 'ob_[0-9a-f]*' AND substr(id, 4) NOT GLOB '*[^0-9a-f]*'")
	    == 1, "its id: ob_ and 24 random hex digits, drawn by oncehook's "
	    "trigger");
	if (sqlite3_prepare_v2(q, "SELECT created_at FROM outbox", -1, &s,
	    NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW)
		BAIL("created_at");
	CHECK(sqlite3_column_int64(s, 0) >= before &&
	    sqlite3_column_int64(s, 0) <= (long long)time(NULL),
	    "created_at is the time the action ran");
	sqlite3_finalize(s);
	CHECK(claim(st, "k1", "t.ok", NULL, 0) == HOOK_DUP && qint(q,
	    "SELECT count(*) FROM outbox") == 1, "its retry: a duplicate, "
	    "no second row");
	CHECK(claim(st, "k2", "t.two", NULL, 0) == HOOK_OK && qint(q,
	    "SELECT count(*) FROM outbox WHERE key = 'k2'") == 2 && qint(q,
	    "SELECT count(DISTINCT id) FROM outbox") == 3,
	    "two rows from one statement: two ids");
	CHECK(claim(st, "k3", "t.late_fail", why, sizeof(why)) ==
	    HOOK_EACTION && qint(q, "SELECT count(*) FROM outbox WHERE key = "
	    "'k3'") == 0 && qint(q, "SELECT count(*) FROM events WHERE key = "
	    "'k3' AND status = 'processed'") == 0,
	    "a later statement fails: the row rolls back with the event (%s)",
	    why);
	CHECK(claim(st, "k4", "t.forge", why, sizeof(why)) == HOOK_EACTION &&
	    strstr(why, "topic and payload only") != NULL && qint(q,
	    "SELECT count(*) FROM outbox WHERE key = 'k4'") == 0,
	    "an action that says its row was delivered: refused, rolled back "
	    "(%s)", why);
	CHECK(claim(st, "k5", "t.other", why, sizeof(why)) == HOOK_EACTION &&
	    strstr(why, "topic and payload only") != NULL,
	    "an action that names another event's key: refused (%s)", why);
	{
		static const char *const attacks[][2] = {
			{ "t.replace", "INSERT OR REPLACE over another "
			    "event's row (its seq)" },
			{ "t.myid", "an id the action chose" },
			{ "t.myseq", "a number the action chose" },
			{ "t.badtopic", "a topic no variable can name" },
			{ "t.blob", "a payload that is not text" },
		};
		size_t	 i;
		char	 key[16];

		for (i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++) {
			snprintf(key, sizeof(key), "x%zu", i);
			CHECK(claim(st, key, attacks[i][0], why, sizeof(why)) ==
			    HOOK_EACTION && qint(q, "SELECT count(*) FROM "
			    "outbox WHERE key = 'k1' AND payload = "
			    "'{\"key\":\"k1\"}'") == 1 && qint(q, "SELECT "
			    "count(*) FROM outbox") == 3, "refused, rolled "
			    "back, k1's row untouched: %s (%s)", attacks[i][1],
			    why);
		}
	}
	CHECK(sqlite3_exec(q, "INSERT INTO outbox (topic, payload) VALUES "
	    "('t.done', '{}')", NULL, NULL, &msg) != SQLITE_OK && qint(q,
	    "SELECT count(*) FROM outbox") == 3,
	    "another connection (the sqlite3 shell) cannot write a row (%s)",
	    msg ? msg : "?");
	sqlite3_free(msg);
	(void)buf;
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

/* A parked event writes no row until its replay takes effect; deferred
 * work writes it when it runs. */
static void
test_park_defer(void)
{
	struct conf		*cf;
	struct store		*st;
	struct store_work_item	 w;
	char			 why[256];
	sqlite3			*q;

	cf = mkconf("park.sqlite", "a.sql", "sync");
	st = open_init(cf);
	q = peer("park.sqlite");
	if (sqlite3_exec(q, "INSERT INTO flag VALUES (1)", NULL, NULL,
	    NULL) != SQLITE_OK)
		BAIL("flag");
	CHECK(claim(st, "p1", "t.flag", why, sizeof(why)) == HOOK_EACTION &&
	    qint(q, "SELECT count(*) FROM events WHERE key = 'p1' AND status "
	    "= 'failed'") == 1 && qint(q, "SELECT count(*) FROM outbox") == 0,
	    "a parked event: no outbox row");
	CHECK(store_replay(st, 0, "p1", 0, why, sizeof(why)) ==
	    REPLAY_FAILED && qint(q, "SELECT count(*) FROM outbox") == 0,
	    "its replay fails again: still none");
	if (sqlite3_exec(q, "DELETE FROM flag", NULL, NULL, NULL) !=
	    SQLITE_OK)
		BAIL("flag");
	CHECK(store_replay(st, 0, "p1", 0, why, sizeof(why)) == REPLAY_DONE &&
	    qint(q, "SELECT count(*) FROM outbox WHERE key = 'p1' AND topic = "
	    "'t.flag'") == 1, "its replay takes effect: one row, its key");
	CHECK(store_replay(st, 0, "p1", 0, why, sizeof(why)) ==
	    REPLAY_ALREADY && qint(q, "SELECT count(*) FROM outbox") == 1,
	    "a second replay: nothing more");
	CHECK(qint(q, "SELECT count(*) FROM outbox WHERE id IS NULL") == 0,
	    "every row has its id");
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);

	cf = mkconf("defer.sqlite", "a.sql", "deferred");
	st = open_init(cf);
	q = peer("defer.sqlite");
	CHECK(claim(st, "d1", "t.ok", NULL, 0) == HOOK_ACCEPTED && qint(q,
	    "SELECT count(*) FROM outbox") == 0, "deferred: accepted, no row "
	    "yet");
	CHECK(store_work(st, NULL, NULL, (long long)time(NULL) + 60, 0, &w) ==
	    WORK_DONE && qint(q, "SELECT count(*) FROM outbox WHERE key = "
	    "'d1'") == 1, "its work runs: one row, its key");
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

static int
only_done(void *arg, const char *topic)
{
	(void)arg;
	return strcmp(topic, "t.done") == 0;
}

static int
any_topic(void *arg, const char *topic)
{
	(void)arg;
	(void)topic;
	return 1;
}

/* The lease, its end, backoff, dead, retry, prune. */
static void
test_lease(void)
{
	struct conf		*cf;
	struct store		*st;
	struct outbox_item	 a, b;
	char			 why[256], err[256];
	long long		 now = (long long)time(NULL) + 1, n;
	sqlite3			*q;

	cf = mkconf("lease.sqlite", "a.sql", "sync");
	st = open_init(cf);
	q = peer("lease.sqlite");
	(void)claim(st, "l1", "t.two", NULL, 0);	/* topics a, b */
	(void)claim(st, "l2", "t.ok", NULL, 0);		/* t.done */
	CHECK(outbox_take(st, now, 30, only_done, NULL, &a, why,
	    sizeof(why)) == TAKE_ONE && strcmp(a.key, "l2") == 0 &&
	    a.attempts == 1 && strcmp(a.payload, "{\"key\":\"l2\"}") == 0,
	    "take: the row of a topic with a target, the others wait (%s)",
	    a.key);
	CHECK(outbox_take(st, now, 30, only_done, NULL, &b, why,
	    sizeof(why)) == TAKE_NONE, "taken: no other deliverer gets it "
	    "during its lease");
	CHECK(outbox_take(st, now + 31, 30, only_done, NULL, &b, why,
	    sizeof(why)) == TAKE_ONE && strcmp(b.id, a.id) == 0 &&
	    b.attempts == 2, "the lease over (its deliverer died): taken "
	    "again, same id, attempt 2");
	CHECK(outbox_delivered(st, &a, now, err, sizeof(err)) == 0 && qint(q,
	    "SELECT count(*) FROM outbox WHERE key = 'l2' AND status = "
	    "'pending'") == 1, "the first deliverer's late success: not "
	    "written over the second's attempt");
	CHECK(outbox_failed(st, &b, "HTTP 500", now + 31, 60, 3, err,
	    sizeof(err)) == 1 && (n = qint(q, "SELECT next_at FROM outbox "
	    "WHERE key = 'l2'")) >= now + 31 + 60 && n < now + 31 + 120 &&
	    qint(q, "SELECT count(*) FROM outbox WHERE key = 'l2' AND "
	    "last_error = 'HTTP 500'") == 1, "a failure: due again after the "
	    "backoff of attempt 2 (60 doubled, jitter: [60, 120) s), its "
	    "error kept");
	outbox_item_clear(&a);
	outbox_item_clear(&b);
	/* A row under way (leased) is left alone by --retry-now. */
	CHECK(outbox_take(st, now, 100, any_topic, NULL, &a, why,
	    sizeof(why)) == TAKE_ONE && strcmp(a.key, "l1") == 0,
	    "(a row of l1 taken, leased 100 s)");
	snprintf(why, sizeof(why), "SELECT count(*) FROM outbox WHERE key = "
	    "'l1' AND next_at = %lld", now + 100);
	CHECK(outbox_retry(st, now + 31, 0, 1, err, sizeof(err)) == 1 &&
	    qint(q, "SELECT next_at FROM outbox WHERE key = 'l2'") ==
	    now + 31 && qint(q, why) == 1, "--retry-now: the row waiting out "
	    "its backoff is due now; the one under way keeps its lease");
	CHECK(outbox_delivered(st, &a, now, err, sizeof(err)) == 1,
	    "(l1's row delivered)");
	outbox_item_clear(&a);
	CHECK(outbox_take(st, now + 200, 30, only_done, NULL, &a, why,
	    sizeof(why)) == TAKE_ONE && a.attempts == 3 && outbox_failed(st,
	    &a, "HTTP 503", now + 200, 60, 3, err, sizeof(err)) == 2 &&
	    qint(q, "SELECT count(*) FROM outbox WHERE key = 'l2' AND status "
	    "= 'dead'") == 1, "attempt 3 of 3 fails: dead");
	outbox_item_clear(&a);
	CHECK(outbox_take(st, now + 100000, 30, only_done, NULL, &a, why,
	    sizeof(why)) == TAKE_NONE, "a dead row is never taken");
	CHECK(outbox_retry(st, now, 1, 0, err, sizeof(err)) == 1 && qint(q,
	    "SELECT count(*) FROM outbox WHERE key = 'l2' AND status = "
	    "'pending' AND attempts = 0") == 1, "retry-dead: pending again, "
	    "its attempts from 0");
	CHECK(outbox_take(st, now, 30, only_done, NULL, &a, why,
	    sizeof(why)) == TAKE_ONE && outbox_delivered(st, &a, now, err,
	    sizeof(err)) == 1 && qint(q, "SELECT count(*) FROM outbox WHERE "
	    "key = 'l2' AND status = 'delivered' AND delivered_at IS NOT "
	    "NULL") == 1, "then delivered");
	outbox_item_clear(&a);
	CHECK(outbox_prune(st, now, 0, 0, err, sizeof(err)) == 0,
	    "prune: a delivered row whose event is kept stays");
	if (sqlite3_exec(q, "DELETE FROM events", NULL, NULL, NULL) !=
	    SQLITE_OK)
		BAIL("delete events");
	CHECK(outbox_prune(st, now, 1, 0, err, sizeof(err)) == 2 &&
	    outbox_prune(st, now, 0, 0, err, sizeof(err)) == 2 && qint(q,
	    "SELECT count(*) FROM outbox") == 1 && qint(q, "SELECT count(*) "
	    "FROM outbox WHERE status = 'pending'") == 1, "prune: the "
	    "delivered rows of events gone go (dry run counts them); the "
	    "pending one stays");
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

/* Four processes take rows at once: each row to exactly one. */
static void
test_concurrent(void)
{
	struct conf		*cf;
	struct store		*st;
	struct outbox_item	 it;
	char			 key[32], why[256], err[256];
	char			 line[80], *seen = NULL;
	pid_t			 pid[4];
	int			 i, k, fds[2], status, ok = 1, rows = 200;
	int			 twice = 0, missing = 0;
	FILE			*f;
	sqlite3			*q;

	cf = mkconf("conc.sqlite", "a.sql", "sync");
	st = open_init(cf);
	for (i = 0; i < rows; i++) {
		snprintf(key, sizeof(key), "c%d", i);
		(void)claim(st, key, "t.ok", NULL, 0);
	}
	store_close(st);
	if (pipe(fds) == -1)
		BAIL("pipe");
	for (k = 0; k < 4; k++) {
		if ((pid[k] = tap_fork()) == -1)
			BAIL("fork");
		if (pid[k] == 0) {
			close(fds[0]);
			if ((st = store_open(cf, 0, err, sizeof(err))) == NULL)
				_exit(3);
			for (;;) {
				enum outbox_take r = outbox_take(st,
				    (long long)time(NULL), 600, any_topic, NULL,
				    &it, why, sizeof(why));
				if (r == TAKE_NONE)
					break;
				if (r != TAKE_ONE)
					continue;
				snprintf(line, sizeof(line), "%.60s\n", it.key);
				if (write(fds[1], line, strlen(line)) < 0 ||
				    outbox_delivered(st, &it, (long long)
				    time(NULL), err, sizeof(err)) != 1)
					_exit(4);
				outbox_item_clear(&it);
			}
			store_close(st);
			_exit(0);
		}
	}
	close(fds[1]);
	if ((seen = calloc((size_t)rows, 1)) == NULL ||
	    (f = fdopen(fds[0], "r")) == NULL)
		BAIL("out of memory");
	while (fgets(line, sizeof(line), f) != NULL) {
		i = atoi(line + 1);
		if (i >= 0 && i < rows && seen[i]++)
			twice++;
	}
	fclose(f);
	for (k = 0; k < 4; k++)
		if (waitpid(pid[k], &status, 0) != pid[k] ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			ok = 0;
	for (i = 0; i < rows; i++)
		missing += !seen[i];
	q = peer("conc.sqlite");
	CHECK(ok && twice == 0 && missing == 0 && qint(q, "SELECT count(*) "
	    "FROM outbox WHERE status = 'delivered' AND attempts = 1") ==
	    rows, "four deliverers at once over %d rows: each taken once, "
	    "all delivered at attempt 1 (twice %d, missing %d)", rows, twice,
	    missing);
	sqlite3_close(q);
	free(seen);
	conf_free(cf);
}

/* The command target. */
static void
test_command(void)
{
	struct send_msg	 m = { "ob_0123", "order.paid", "shop", "evt_1",
	    "{\"a\":1}", 7 };
	char		 script[sizeof(dir) + 64], out[sizeof(dir) + 64];
	char		 cmd[512], why[256], buf[2048];
	char		*big, *c;
	FILE		*f;
	size_t		 n;
	time_t		 t0;

	path(out, "cmd.out");
	snprintf(buf, sizeof(buf), "#!/bin/sh\n"
	    "{ echo \"args=$*\"; env | grep '^ONCEHOOK' | sort; "
	    "echo \"stdin=$(wc -c)\"; } > %s\n"
	    "echo 'first line'\necho 'why it failed' >&2\n"
	    "exit ${CMD_EXIT:-0}\n", out);
	write_file("cmd.sh", buf);
	path(script, "cmd.sh");
	chmod(script, 0755);
	snprintf(cmd, sizeof(cmd), "%s  one two", script);
	setenv("ONCEHOOK_STRIPE_SECRET", "whsec_should_not_leak", 1);
	setenv("ONCEHOOK_OUTBOX_SECRET", "whsec_nor_this", 1);
	CHECK(send_command(cmd, &m, 10, why, sizeof(why)) == 0,
	    "exit 0: delivered (%s)", why);
	if ((f = fopen(out, "r")) == NULL)
		BAIL("%s", out);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	CHECK(strstr(buf, "args=one two\n") != NULL,
	    "argv split on spaces, no shell");
	for (c = buf; (c = strchr(c, '\n')) != NULL; )
		*c = '|';
	CHECK(strstr(buf, "ONCEHOOK_OUTBOX_ENDPOINT=shop|"
	    "ONCEHOOK_OUTBOX_ID=ob_0123|ONCEHOOK_OUTBOX_KEY=evt_1|"
	    "ONCEHOOK_OUTBOX_TOPIC=order.paid|stdin=7|") != NULL,
	    "its environment: the four ONCEHOOK_OUTBOX_ variables and no "
	    "other ONCEHOOK_ one (no secret); the payload on stdin (%s)", buf);
	unsetenv("ONCEHOOK_STRIPE_SECRET");
	unsetenv("ONCEHOOK_OUTBOX_SECRET");
	setenv("CMD_EXIT", "3", 1);
	CHECK(send_command(cmd, &m, 10, why, sizeof(why)) == -1 &&
	    strstr(why, "exit 3: why it failed") != NULL,
	    "exit 3: failed, with its last line of output (%s)", why);
	unsetenv("CMD_EXIT");
	signal(SIGCHLD, SIG_IGN);
	CHECK(send_command("/bin/false", &m, 10, why, sizeof(why)) == -1 &&
	    strstr(why, "exit 1") != NULL, "SIGCHLD ignored by whoever "
	    "started the deliverer: exit 1 is still a failure (%s)", why);
	signal(SIGCHLD, SIG_DFL);
	CHECK(send_command("/nonexistent/cmd", &m, 10, why, sizeof(why)) ==
	    -1 && strstr(why, "No such file or directory") != NULL,
	    "no such program: failed, and why "
	    "(%s)", why);
	/* A payload larger than a pipe holds, to a program that reads it
	 * all; and to one that reads none. */
	if ((big = malloc(1 << 20)) == NULL)
		BAIL("out of memory");
	memset(big, 'x', 1 << 20);
	m.payload = big;
	m.payloadsz = 1 << 20;
	CHECK(send_command(cmd, &m, 10, why, sizeof(why)) == 0 &&
	    (f = fopen(out, "r")) != NULL && fread(buf, 1, sizeof(buf) - 1, f)
	    > 0 && strstr(buf, "stdin=1048576") != NULL,
	    "a 1 MiB payload arrives whole (%s)", why);
	if (f != NULL)
		fclose(f);
	CHECK(send_command("/bin/true", &m, 10, why, sizeof(why)) == 0,
	    "a program that reads none of it and exits 0: delivered (%s)",
	    why);
	free(big);
	m.payload = "{}";
	m.payloadsz = 2;
	/* Exit 0 with a background child that keeps its output open (as
	 * "sendmail ... &" would): delivered, at once. */
	write_file("bg.sh", "#!/bin/sh\nsleep 5 &\necho started\nexit 0\n");
	path(script, "bg.sh");
	chmod(script, 0755);
	t0 = time(NULL);
	CHECK(send_command(script, &m, 4, why, sizeof(why)) == 0 &&
	    time(NULL) - t0 < 3, "exit 0, a background child holding its "
	    "output: delivered at its exit (%s)", why);
	t0 = time(NULL);
	CHECK(send_command("/bin/sleep 30", &m, 1, why, sizeof(why)) == -1 &&
	    strstr(why, "timed out") != NULL && time(NULL) - t0 < 5,
	    "a program past the timeout: killed, failed (%s)", why);
}

/* The outbox in stats, --check, the metrics and the page. */
static void
test_stats(void)
{
	struct conf	*cf;
	struct store	*st;
	struct stats	 s;
	sqlite3		*q;
	char		*buf = NULL;
	size_t		 sz = 0;
	FILE		*f;
	long long	 now = (long long)time(NULL);

	cf = mkconf("stats.sqlite", "a.sql", "sync");
	st = open_init(cf);
	q = peer("stats.sqlite");
	if (stats_gather(cf, st, NULL, now, &stats_limits_default, NULL,
	    &s) == -1)
		BAIL("stats_gather");
	CHECK(s.outbox.counted && s.outbox.health == HEALTH_IDLE &&
	    s.code == 0, "no row: the outbox idle, all ok (%s)", s.verdict);
	stats_clear(&s);
	(void)claim(st, "s1", "t.ok", NULL, 0);
	(void)claim(st, "s2", "t.two", NULL, 0);
	stats_gather(cf, st, NULL, now, &stats_limits_default, NULL, &s);
	CHECK(s.outbox.health == HEALTH_HEALTHY && s.outbox.pending == 3 &&
	    s.outbox.n == 3 && s.code == 0, "three fresh pending rows, three "
	    "topics: healthy (%s)", s.outbox.why);
	stats_clear(&s);
	stats_gather(cf, st, NULL, now + 700, &stats_limits_default, NULL, &s);
	CHECK(s.outbox.health == HEALTH_DEGRADED && s.code == 1 &&
	    strstr(s.verdict, "WARNING: outbox degraded") != NULL,
	    "a row pending 11 min: degraded, a warning (%s)", s.verdict);
	stats_clear(&s);
	stats_gather(cf, st, NULL, now + 3700, &stats_limits_default, NULL,
	    &s);
	CHECK(s.outbox.health == HEALTH_FAILING && s.code == 2 &&
	    strstr(s.verdict, "undeliverable") != NULL,
	    "a row pending 61 min: failing, critical (%s)", s.verdict);
	stats_clear(&s);
	if (sqlite3_exec(q, "UPDATE outbox SET status = 'delivered' WHERE "
	    "topic IN ('a', 'b'); UPDATE outbox SET status = 'dead' WHERE "
	    "topic = 't.done'", NULL, NULL, NULL) != SQLITE_OK)
		BAIL("update");
	stats_gather(cf, st, NULL, now, &stats_limits_default, NULL, &s);
	CHECK(s.outbox.health == HEALTH_FAILING && s.outbox.dead == 1 &&
	    s.outbox.delivered == 2 && s.code == 2 && strstr(s.verdict,
	    "1 dead row") != NULL, "a dead row: failing, critical (%s)",
	    s.verdict);
	if ((f = open_memstream(&buf, &sz)) == NULL)
		BAIL("open_memstream");
	stats_write_html(f, &s);
	stats_write_prom(f, &s);
	(void)stats_write_json(f, &s);
	stats_write_text(f, &s);
	fclose(f);
	CHECK(strstr(buf, "<h2>Outbox <span class=\"badge\"") != NULL &&
	    strstr(buf, "<td>t.done</td><td>0</td><td>0</td><td>1</td>") !=
	    NULL, "the page: an Outbox card, its topics");
	CHECK(strstr(buf, "oncehook_outbox_rows{topic=\"t.done\",status="
	    "\"dead\"} 1\n") != NULL && strstr(buf,
	    "oncehook_outbox_health{health=\"failing\"} 1\n") != NULL,
	    "the metrics: rows by topic and status, the health");
	CHECK(strstr(buf, "\"outbox\": {") != NULL && strstr(buf,
	    "\"dead\": 1") != NULL, "the JSON: an outbox object");
	CHECK(strstr(buf, "\noutbox: failing (1 dead row") != NULL,
	    "the table: an outbox line");
	free(buf);
	stats_clear(&s);
	sqlite3_close(q);
	store_close(st);
	conf_free(cf);
}

/* The signature, against the Standard Webhooks specification's example. */
static void
test_sign(void)
{
	struct send_msg	 m = { SW_ID, "t", "e", "k", SW_BODY,
	    sizeof(SW_BODY) - 1 };
	unsigned char	 key[64];
	struct secret	 sec;
	char		 sig[80];
	long		 n;

	n = crypto_unbase64(SW_SECRET_BARE, strlen(SW_SECRET_BARE), key,
	    sizeof(key));
	sec.p = key;
	sec.sz = (size_t)n;
	CHECK(n > 0 && send_sign(&sec, &m, SW_T, sig, sizeof(sig)) == 0 &&
	    strcmp(sig, SW_SIG) == 0, "send_sign: the specification's "
	    "example signature (%s)", sig);
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/oncehook-t_outbox-XXXXXX");
	if (mkdtemp(dir) == NULL)
		BAIL("mkdtemp: %s", strerror(errno));
	write_file("a.sql", actions);
	test_guard();
	test_rows();
	test_park_defer();
	test_lease();
	test_concurrent();
	test_command();
	test_stats();
	test_sign();
	tap_rmdir(dir);
	return tap_done();
}
