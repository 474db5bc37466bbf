/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: power loss (tests/unit/faultvfs.c).
 *
 * A run of deliveries through the real pipeline (new events, a retry, a
 * key conflict, a ping, a failing action), with the store closed now
 * and then as a CGI process or a restart closes it (which checkpoints
 * the write-ahead log).  The power goes at the K-th write, sync or
 * truncation, for every K; the disk keeps what was synced, plus none,
 * a torn prefix of the last, or a random subset of the unsynced writes;
 * the -shm file is lost.  The files are then opened with the plain unix
 * VFS, and:
 *
 *   - PRAGMA integrity_check is ok;
 *   - every claim has its effect and every effect its claim, none twice;
 *   - ONCEHOOK_SYNCHRONOUS=full: every event answered 200 processed
 *     before the cut is there;
 *   - normal: every such event whose commit a later sync of the log (or
 *     a checkpoint) made durable is there; those lost are the most
 *     recent ones (a suffix of the answered events), and nothing else;
 *   - a new pipeline over the files processes a fresh event, and the
 *     provider's retries of the whole run leave each effect once.
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

/* One delivery of the run. */
struct step {
	const char	*key;
	const char	*order;		/* NULL: a ping */
	int		 amount;
	int		 close;		/* close the store before it */
	int		 status;	/* the answer without a cut */
};

static const struct step steps[] = {
	{ "pl-0", "po-0", 100, 0, 200 },
	{ "pl-1", "po-1", 110, 0, 200 },
	{ "pl-0", "po-0", 100, 0, 200 },	/* a retry */
	{ "pl-2", "po-2", 120, 0, 200 },
	{ "pl-1", "po-1", 999, 1, 422 },	/* a key conflict */
	{ "pl-3", "po-3", 130, 0, 200 },
	{ "pl-4", "po-4", 140, 0, 200 },
	{ "pl-5", NULL, 0, 0, 200 },		/* a ping: no effect */
	{ "pl-6", "po-6", 160, 1, 200 },
	{ "pl-7", "fail", 170, 0, 500 },	/* the action fails */
	{ "pl-8", "po-8", 180, 0, 200 },
	{ "pl-9", "po-9", 190, 0, 200 },
};
#define NSTEPS	(sizeof(steps) / sizeof(steps[0]))

static char		 dir[64];
static char		 tmpl[sizeof(dir) + 32];
static char		 dbpath[sizeof(dir) + 32];
static int		 nviol;
static int		 iter;

static void
violation(const char *sync, long k, enum cut_mode m, const char *fmt, ...)
{
	va_list	 ap;

	if (nviol++ >= 8)
		return;
	printf("# synchronous=%s, cut at %ld, %s: ", sync, k,
	    faultvfs_cut_name(m));
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void
body(const struct step *s, char *buf, size_t sz)
{
	if (s->order == NULL)
		snprintf(buf, sz, "{\"id\":\"%s\",\"type\":\"webhook.ping\"}",
		    s->key);
	else
		dl_payment(buf, sz, s->key, s->order, s->amount);
}

/* The template: an initialised store with the ledger and the refusal
 * of order "fail" (as in t_fault.c), made durable. */
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
	    "  SELECT RAISE(ABORT, 'refused by the test'); END;"
	    "PRAGMA wal_checkpoint(TRUNCATE)";
	struct store		*st;
	struct conf		*tc;
	sqlite3			*q;
	char			 err[512];

	tc = dl_conf(tmpl, "full");
	if ((st = store_open(tc, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	store_close(st);
	q = dl_open(tmpl);
	if (sqlite3_exec(q, setup, NULL, NULL, NULL) != SQLITE_OK)
		BAIL("setup: %s", sqlite3_errmsg(q));
	sqlite3_close(q);
	conf_free(tc);
}

/* Is the event of step i there, with its effect if it has one? */
static int
present(sqlite3 *q, size_t i)
{
	char	 sql[256];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM events WHERE key = "
	    "'%s'", steps[i].key);
	if (dl_count(q, sql) != 1)
		return 0;
	if (steps[i].order == NULL)
		return 1;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM ledger WHERE "
	    "order_id = '%s'", steps[i].order);
	return dl_count(q, sql) == 1;
}

/*
 * One run with the power going at the k-th point (0: never), the disk
 * keeping what m says.  Adds to *acked the events answered 200
 * processed, to *lost those of them the cut took.  Returns the number
 * of points the run went through.
 */
static long
run(struct conf *cf, const char *sync, long k, enum cut_mode m,
    long *acked, long *lost)
{
	struct pipeline	 p;
	struct resp	 r;
	sqlite3		*q;
	char		 b[256];
	long		 ack[NSTEPS], syncs, points, first_lost = -1;
	size_t		 i;
	long long	 v;
	int		 ok[NSTEPS], full = strcmp(sync, "full") == 0;

	dl_copy(tmpl, dbpath);
	faultvfs_record();
	faultvfs_cut_at(k);
	pipeline_init(&p, cf, NULL);
	memset(ok, 0, sizeof(ok));
	memset(ack, 0, sizeof(ack));
	for (i = 0; i < NSTEPS && !faultvfs_dead(); i++) {
		if (steps[i].close)
			pipeline_clear(&p);
		body(&steps[i], b, sizeof(b));
		dl_post(&p, b, NOW, &r);
		if (r.status == 200 && r.err == HOOK_OK) {
			ok[i] = 1;
			ack[i] = faultvfs_wal_syncs();
		}
		if (!faultvfs_dead() && r.status != steps[i].status)
			violation(sync, k, m, "step %zu answered %d, not %d",
			    i, r.status, steps[i].status);
		if (r.status == 200 && !(r.err == HOOK_OK ||
		    r.err == HOOK_DUP))
			violation(sync, k, m, "step %zu: 200 %s", i,
			    resp_outcome(r.err));
		resp_clear(&r);
	}
	/* Past the last answer, the power goes before the store closes. */
	if (!faultvfs_dead())
		faultvfs_cut_at(faultvfs_points() + 1);
	pipeline_clear(&p);
	syncs = faultvfs_wal_syncs();
	points = faultvfs_points();
	if (faultvfs_powerloss(m, (unsigned)k) < 0)
		BAIL("powerloss: %s", strerror(errno));

	q = dl_open(dbpath);
	if (!dl_integrity(q))
		violation(sync, k, m, "integrity_check failed");
	for (i = 0; i < NSTEPS; i++) {
		if (!ok[i])
			continue;
		(*acked)++;
		if (present(q, i)) {
			if (first_lost >= 0)
				violation(sync, k, m, "%s survived, the "
				    "earlier %s was lost", steps[i].key,
				    steps[first_lost].key);
			continue;
		}
		(*lost)++;
		if (first_lost < 0)
			first_lost = (long)i;
		if (full)
			violation(sync, k, m, "%s answered 200, lost",
			    steps[i].key);
		else if (syncs > ack[i])
			violation(sync, k, m, "%s answered 200 and synced "
			    "since, lost", steps[i].key);
	}
	if ((v = dl_count(q, "SELECT count(*) FROM events e WHERE e.type = "
	    "'payment.success' AND NOT EXISTS (SELECT 1 FROM orders o WHERE "
	    "o.id = json_extract(e.payload, '$.metadata.orderId') AND "
	    "o.paid_at IS NOT NULL)")) != 0)
		violation(sync, k, m, "%lld claims without their effect", v);
	if ((v = dl_count(q, "SELECT count(*) FROM ledger l WHERE NOT EXISTS "
	    "(SELECT 1 FROM events e WHERE json_extract(e.payload, "
	    "'$.metadata.orderId') = l.order_id)")) != 0)
		violation(sync, k, m, "%lld effects without their claim", v);
	if ((v = dl_count(q, "SELECT count(*) FROM (SELECT order_id FROM "
	    "ledger GROUP BY order_id HAVING count(*) > 1)")) != 0)
		violation(sync, k, m, "%lld effects doubled", v);

	/* The power is back: the provider retries everything. */
	pipeline_init(&p, cf, NULL);
	snprintf(b, sizeof(b), "fresh-%d", ++iter);
	dl_payment(b + 64, sizeof(b) - 64, b, b, 1);
	dl_post(&p, b + 64, NOW, &r);
	if (r.status != 200 || r.err != HOOK_OK)
		violation(sync, k, m, "after the cut, a fresh event: %d %s",
		    r.status, resp_outcome(r.err));
	resp_clear(&r);
	for (i = 0; i < NSTEPS; i++) {
		body(&steps[i], b, sizeof(b));
		dl_post(&p, b, NOW, &r);
		if (r.status != steps[i].status)
			violation(sync, k, m, "after the cut, the retry of "
			    "step %zu: %d", i, r.status);
		resp_clear(&r);
	}
	pipeline_clear(&p);
	if (dl_count(q, "SELECT count(*) FROM (SELECT order_id FROM ledger "
	    "GROUP BY order_id HAVING count(*) <> 1)") != 0 ||
	    dl_count(q, "SELECT count(DISTINCT order_id) FROM ledger") != 9)
		violation(sync, k, m, "after the retries, effects not once "
		    "each");
	if (!dl_integrity(q))
		violation(sync, k, m, "integrity_check failed after the "
		    "retries");
	sqlite3_close(q);
	return points;
}

static void
suite(const char *sync, long *cuts)
{
	struct conf	*cf;
	enum cut_mode	 m;
	long		 k, n, total, acked, lost, dummy_a = 0, dummy_l = 0;
	/* ONCEHOOK_TEST_QUICK (the valgrind pass, the package's build):
	 * every 4th cut (a run is ~50 points since the log's frames go in
	 * one write: every 16th missed each loss under normal). */
	long		 step = getenv("ONCEHOOK_TEST_QUICK") ? 4 : 1;

	cf = dl_conf(dbpath, sync);
	total = run(cf, sync, 0, CUT_NONE, &dummy_a, &dummy_l);
	CHECK(nviol == 0, "synchronous=%s: the run without a cut (%ld "
	    "writes, syncs and truncations)", sync, total);
	for (m = 0; m < CUT__MAX; m++) {
		nviol = 0;
		acked = lost = n = 0;
		for (k = 1; k <= total; k += step, n++)
			run(cf, sync, k, m, &acked, &lost);
		*cuts += n;
		CHECK(nviol == 0, "synchronous=%s, %s: %ld power cuts, %ld "
		    "acknowledged events lost of %ld", sync,
		    faultvfs_cut_name(m), n, lost, acked);
		if (strcmp(sync, "normal") == 0 && m == CUT_NONE)
			CHECK(lost > 0, "synchronous=normal does lose recent "
			    "commits (%ld), as SQLite documents", lost);
	}
	conf_free(cf);
}

int
main(void)
{
	long	 cuts = 0;

	dl_workdir("t_powerloss", dir, sizeof(dir), tmpl, dbpath, sizeof(tmpl));
	mktemplate();

	suite("full", &cuts);
	suite("normal", &cuts);
	printf("# %ld power cuts in all\n", cuts);
	tap_rmdir(dir);
	return tap_done();
}
