/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: I/O faults on the request path, as SQLite tests
 * itself (tests/unit/faultvfs.c).
 *
 * For each scenario (a new event, a duplicate, a key conflict, an event
 * whose action fails, a prune), each kind of error (EIO, ENOSPC,
 * EACCES, EBUSY), one-shot and persistent, with the store opened by the
 * request (CGI) or already open (FastCGI, serve): fail the N-th
 * applicable I/O call, for N = 1, 2, ... until the delivery runs without
 * meeting it.  After every N, with the fault cleared:
 *
 *   - the answer is never 200 unless the event is committed with its
 *     effect, and never another 2xx/4xx than the scenario's own;
 *   - no claim without its effect, no effect without its claim, no
 *     effect twice (a ledger trigger counts each effect);
 *   - the process serves the next request: a fresh event is processed
 *     by the same pipeline, and the provider's retry gets the answer
 *     of a fault-free delivery;
 *   - PRAGMA integrity_check is ok.
 *
 * Each (scenario, kind, mode, start) is one TAP line that says how many
 * I/O points were failed; the violations, if any, are printed under it.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "conf.h"
#include "deliver.h"
#include "faultvfs.h"
#include "hook.h"
#include "pipeline/pipeline.h"
#include "front/resp.h"
#include "store/store.h"
#include "tap.h"

#define NOW		((time_t)1700000000)
#define NEXPIRED	60		/* expired pings to prune */
#define MAXN		5000		/* a delivery never needs as many */

enum scenario {
	SC_NEW,
	SC_DUP,
	SC_CONFLICT,
	SC_ACTION,
	SC_PRUNE,
	SC__MAX
};

static const char *const scnames[SC__MAX] = {
	"new event", "duplicate", "key conflict", "failing action", "prune"
};

static char		 dir[64];
static char		 tmpl[sizeof(dir) + 32];
static char		 dbpath[sizeof(dir) + 32];
static struct conf	*cf;
static long		 points[SC__MAX][FAULT__MAX];	/* I/O points failed */
static long		 violations;
static int		 nviol;		/* in the current group */
static int		 iter;		/* fresh events so far */

/* Print one violation of the current group (the first few). */
static void
violation(enum scenario sc, long n, const char *fmt, ...)
{
	va_list	 ap;

	violations++;
	if (nviol++ >= 8)
		return;
	printf("# %s, N=%ld (%s on %s, rc %d): ", scnames[sc], n,
	    faultvfs_op_name(faultvfs_hit_op()), faultvfs_hit_file(),
	    faultvfs_hit_rc());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/*
 * The template: an initialised store, a ledger counting effects, a
 * trigger that fails the action for order "fail", one event already
 * processed (evt-old, order o-old) and NEXPIRED expired pings.
 */
static void
mktemplate(void)
{
	static const char	 setup[] =
	    "CREATE TABLE ledger (order_id TEXT NOT NULL);"
	    "CREATE TRIGGER ledger_insert AFTER INSERT ON orders BEGIN"
	    "  INSERT INTO ledger VALUES (NEW.id); END;"
	    "CREATE TRIGGER ledger_update AFTER UPDATE OF paid_at ON orders"
	    "  BEGIN INSERT INTO ledger VALUES (NEW.id); END;"
	    "CREATE TRIGGER refuse BEFORE INSERT ON orders"
	    "  WHEN NEW.id = 'fail' BEGIN"
	    "  SELECT RAISE(ABORT, 'refused by the test'); END;";
	struct pipeline		 p;
	struct store		*st;
	struct resp		 r;
	struct conf		*tc;
	sqlite3			*q;
	char			 err[512], body[256], sql[512];
	int			 i;

	tc = dl_conf(tmpl, "full");
	if ((st = store_open(tc, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	store_close(st);
	q = dl_open(tmpl);
	if (sqlite3_exec(q, setup, NULL, NULL, NULL) != SQLITE_OK)
		BAIL("setup: %s", sqlite3_errmsg(q));
	pipeline_init(&p, tc, NULL);
	dl_payment(body, sizeof(body), "evt-old", "o-old", 100);
	dl_post(&p, body, NOW, &r);
	if (r.status != 200)
		BAIL("template delivery: %d", r.status);
	resp_clear(&r);
	pipeline_clear(&p);
	sqlite3_exec(q, "BEGIN", NULL, NULL, NULL);
	for (i = 0; i < NEXPIRED; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO events (endpoint, key,"
		    " type, payload_hash, payload, received_at, processed_at,"
		    " expires_at) VALUES ('generic', 'old-%d', 'webhook.ping',"
		    " '%064d', '{\"id\":\"old-%d\",\"type\":\"webhook.ping\","
		    "\"pad\":\"%0100d\"}', 1000, 1000, 2000)", i, i, i, i);
		if (sqlite3_exec(q, sql, NULL, NULL, NULL) != SQLITE_OK)
			BAIL("%s: %s", sql, sqlite3_errmsg(q));
	}
	if (sqlite3_exec(q, "INSERT INTO conflicts (endpoint, key, "
	    "payload_hash, received_at) VALUES ('generic', 'old-0', 'x', "
	    "1000); COMMIT; PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL,
	    NULL) != SQLITE_OK)
		BAIL("template: %s", sqlite3_errmsg(q));
	sqlite3_close(q);
	conf_free(tc);
}

/* The invariants that hold whatever happened. */
static void
invariants(sqlite3 *q, enum scenario sc, long n)
{
	long long	 v;

	if ((v = dl_count(q, "SELECT count(*) FROM events e WHERE e.type = "
	    "'payment.success' AND NOT EXISTS (SELECT 1 FROM orders o WHERE "
	    "o.id = json_extract(e.payload, '$.metadata.orderId') AND "
	    "o.paid_at IS NOT NULL)")) != 0)
		violation(sc, n, "%lld claims without their effect", v);
	if ((v = dl_count(q, "SELECT count(*) FROM ledger l WHERE NOT EXISTS "
	    "(SELECT 1 FROM events e WHERE json_extract(e.payload, "
	    "'$.metadata.orderId') = l.order_id)")) != 0)
		violation(sc, n, "%lld effects without their claim", v);
	if ((v = dl_count(q, "SELECT count(*) FROM (SELECT order_id FROM "
	    "ledger GROUP BY order_id HAVING count(*) > 1)")) != 0)
		violation(sc, n, "%lld effects doubled", v);
	if (dl_count(q, "SELECT count(*) FROM events WHERE key = 'evt-old' "
	    "AND payload LIKE '%\"amount\":100,%'") != 1)
		violation(sc, n, "the known event changed or vanished");
	if (dl_count(q, "SELECT count(*) FROM orders WHERE id = 'fail'") != 0)
		violation(sc, n, "the refused order exists");
}

/* The body of the scenario's delivery. */
static void
scenario_body(enum scenario sc, char *body, size_t sz)
{
	switch (sc) {
	case SC_NEW:
		dl_payment(body, sz, "evt-new", "o-new", 250);
		break;
	case SC_DUP:
		dl_payment(body, sz, "evt-old", "o-old", 100);
		break;
	case SC_CONFLICT:
		dl_payment(body, sz, "evt-old", "o-old", 999);
		break;
	default:
		dl_payment(body, sz, "evt-fail", "fail", 100);
		break;
	}
}

/* Is r the answer of a fault-free delivery in scenario sc? */
static int
clean_answer(enum scenario sc, const struct resp *r)
{
	switch (sc) {
	case SC_NEW:
		return r->status == 200 && r->err == HOOK_OK;
	case SC_DUP:
		return r->status == 200 && r->err == HOOK_DUP;
	case SC_CONFLICT:
		return r->status == 422 && r->err == HOOK_ECONFLICT;
	default:
		return r->status == 500 && r->err == HOOK_EACTION;
	}
}

/* After the fault: a fresh event on p is processed with its effect. */
static void
serves_next(struct pipeline *p, sqlite3 *q, enum scenario sc, long n)
{
	struct resp	 r;
	char		 body[256], key[32], sql[160];

	snprintf(key, sizeof(key), "fresh-%d", ++iter);
	dl_payment(body, sizeof(body), key, key, 7);
	dl_post(p, body, NOW, &r);
	if (r.status != 200 || r.err != HOOK_OK)
		violation(sc, n, "next request after the fault: %d %s",
		    r.status, resp_outcome(r.err));
	resp_clear(&r);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM ledger WHERE "
	    "order_id = '%s'", key);
	if (dl_count(q, sql) != 1)
		violation(sc, n, "next request after the fault: no effect");
}

/*
 * One delivery with the N-th call failing.  Returns 1 if the fault was
 * met (try N + 1), 0 if the delivery ran without meeting it.
 */
static int
deliver_once(enum scenario sc, enum fault_kind k, long n, int persistent,
    int warm)
{
	struct pipeline	 p;
	struct resp	 r;
	sqlite3		*q;
	char		 body[256], warmup[128];
	long		 hits;
	int		 committed;

	dl_copy(tmpl, dbpath);
	pipeline_init(&p, cf, NULL);
	/* Cold: as the CGI front opens it (each statement prepared on its
	 * first use, the -wal kept at close). */
	p.one_request = !warm;
	if (warm) {
		snprintf(warmup, sizeof(warmup), "{\"id\":\"warm-%d\","
		    "\"type\":\"webhook.ping\"}", ++iter);
		dl_post(&p, warmup, NOW, &r);
		if (r.status != 200)
			BAIL("warm-up delivery: %d", r.status);
		resp_clear(&r);
	}
	scenario_body(sc, body, sizeof(body));
	faultvfs_arm(k, n, persistent);
	dl_post(&p, body, NOW, &r);
	hits = faultvfs_hits();
	faultvfs_disarm();

	q = dl_open(dbpath);
	committed = dl_count(q, "SELECT count(*) FROM events WHERE key = "
	    "'evt-new'") == 1 && dl_count(q, "SELECT count(*) FROM ledger "
	    "WHERE order_id = 'o-new'") == 1;
	if (hits == 0 && !clean_answer(sc, &r))
		violation(sc, n, "no fault met, yet %d %s", r.status,
		    resp_outcome(r.err));
	if (r.status == 200 && sc == SC_NEW && !committed)
		violation(sc, n, "200 without the event and its effect");
	if (r.status == 200 && (sc == SC_CONFLICT || sc == SC_ACTION))
		violation(sc, n, "200 for a %s", scnames[sc]);
	if (r.status < 500 && !clean_answer(sc, &r))
		violation(sc, n, "answer %d %s", r.status,
		    resp_outcome(r.err));
	if (r.status >= 500 && r.status != 500 && r.status != 503)
		violation(sc, n, "answer %d", r.status);
	resp_clear(&r);
	invariants(q, sc, n);

	serves_next(&p, q, sc, n);
	/* The provider's retry gets the fault-free answer. */
	dl_post(&p, body, NOW, &r);
	if (!(clean_answer(sc, &r) || (sc == SC_NEW && r.status == 200 &&
	    r.err == HOOK_DUP)))
		violation(sc, n, "the retry: %d %s", r.status,
		    resp_outcome(r.err));
	resp_clear(&r);
	invariants(q, sc, n);
	if (sc == SC_NEW && dl_count(q, "SELECT count(*) FROM ledger WHERE "
	    "order_id = 'o-new'") != 1)
		violation(sc, n, "after the retry, the effect is not there "
		    "exactly once");
	if (!dl_integrity(q))
		violation(sc, n, "integrity_check failed");
	sqlite3_close(q);
	pipeline_clear(&p);
	return hits > 0;
}

/* The prune, as "oncehook prune" runs it, with the N-th call failing. */
static int
prune_once(enum fault_kind k, long n, int persistent, int warm)
{
	struct pipeline	 p;
	struct store	*st = NULL;
	sqlite3		*q;
	char		 err[512];
	long long	 pruned = -1, nc;
	long		 hits;

	dl_copy(tmpl, dbpath);
	if (warm && (st = store_open(cf, 0, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	faultvfs_arm(k, n, persistent);
	if (st == NULL)
		st = store_open(cf, 0, err, sizeof(err));
	if (st != NULL)
		pruned = store_prune(st, (long long)NOW, 0, 0, &nc, err,
		    sizeof(err));
	store_close(st);
	hits = faultvfs_hits();
	faultvfs_disarm();

	q = dl_open(dbpath);
	if (hits == 0 && pruned != NEXPIRED)
		violation(SC_PRUNE, n, "no fault met, yet %lld pruned", pruned);
	if (pruned >= 0 && dl_count(q, "SELECT count(*) FROM events WHERE "
	    "expires_at < 1700000000") != 0)
		violation(SC_PRUNE, n, "prune said done, expired events left");
	invariants(q, SC_PRUNE, n);
	/* The next prune finishes the work; deliveries go on. */
	if ((st = store_open(cf, 0, err, sizeof(err))) == NULL ||
	    store_prune(st, (long long)NOW, 0, 0, &nc, err, sizeof(err)) < 0)
		violation(SC_PRUNE, n, "the next prune: %s", err);
	store_close(st);
	if (dl_count(q, "SELECT count(*) FROM events WHERE expires_at < "
	    "1700000000") != 0 || dl_count(q, "SELECT count(*) FROM "
	    "conflicts") != 0)
		violation(SC_PRUNE, n, "expired rows left after the next prune");
	pipeline_init(&p, cf, NULL);
	serves_next(&p, q, SC_PRUNE, n);
	pipeline_clear(&p);
	invariants(q, SC_PRUNE, n);
	if (!dl_integrity(q))
		violation(SC_PRUNE, n, "integrity_check failed");
	sqlite3_close(q);
	return hits > 0;
}

static void
group(enum scenario sc, enum fault_kind k, int persistent, int warm)
{
	long	 n;
	int	 met;

	nviol = 0;
	for (n = 1; n < MAXN; n++) {
		if (sc == SC_PRUNE)
			met = prune_once(k, n, persistent, warm);
		else
			met = deliver_once(sc, k, n, persistent, warm);
		if (!met)
			break;
	}
	points[sc][k] += n - 1;
	CHECK(nviol == 0 && n < MAXN, "%s, %s %s, store %s: %ld I/O points "
	    "failed, %d violations", scnames[sc], faultvfs_kind_name(k),
	    persistent ? "persistent" : "one-shot", warm ? "open" :
	    "opened by the request", n - 1, nviol);
}

int
main(int argc, char **argv)
{
	enum scenario	 sc;
	enum fault_kind	 k;
	long		 total = 0;
	int		 persistent, warm, quick;

	(void)argc;
	(void)argv;
	dl_workdir("t_fault", dir, sizeof(dir), tmpl, dbpath, sizeof(tmpl));
	mktemplate();
	cf = dl_conf(dbpath, "full");

	/* ONCEHOOK_TEST_QUICK (the valgrind pass): EIO, one-shot, warm. */
	quick = getenv("ONCEHOOK_TEST_QUICK") != NULL;
	for (sc = 0; sc < SC__MAX; sc++)
		for (k = 0; k < FAULT__MAX; k++)
			for (persistent = 0; persistent < 2; persistent++)
				for (warm = 0; warm < 2; warm++)
					if (!quick || (k == FAULT_EIO &&
					    !persistent && warm))
						group(sc, k, persistent, warm);

	for (sc = 0; sc < SC__MAX; sc++) {
		printf("# %-14s", scnames[sc]);
		for (k = 0; k < FAULT__MAX; k++) {
			printf(" %s %ld", faultvfs_kind_name(k),
			    points[sc][k]);
			total += points[sc][k];
		}
		printf("\n");
	}
	printf("# %ld I/O points failed in all, %ld violations\n", total,
	    violations);
	conf_free(cf);
	tap_rmdir(dir);
	return tap_done();
}
