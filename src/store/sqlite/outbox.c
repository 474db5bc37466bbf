/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the outbox's rows in the store (see store/outbox.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "lib/crypto.h"
#include "lib/log.h"
#include "store/outbox.h"
#include "store/sqlite/engine.h"
#include "store/store.h"


/* The has_target() of the take in progress, as an SQL function. */
static void
sql_has_target(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct sqstore	*s = sqlite3_user_data(ctx);
	const char		*topic;

	topic = argc == 1 ? (const char *)sqlite3_value_text(argv[0]) : NULL;
	sqlite3_result_int(ctx, topic != NULL && s->has_target != NULL &&
	    s->has_target(s->has_target_arg, topic));
}

/* Copy column i, which is text, into buf. */
static void
col(sqlite3_stmt *st, int i, char *buf, size_t sz)
{
	const unsigned char	*t = sqlite3_column_text(st, i);

	snprintf(buf, sz, "%s", t != NULL ? (const char *)t : "");
}

/* The rollback of whatever transaction is open, and the write lock. */
static void
undo(struct sqstore *s, int rc)
{
	sq_note(s, rc);
	if (!sqlite3_get_autocommit(s->db))
		(void)sq_run(s, ST_ROLLBACK);
	sq_end(s);
}

/* The oldest due row, by a plain read: the rows waiting for a target
 * are passed over without the write lock (engine_ops.ob_pick). */
int
sqo_pick(struct store *b, long long now,
    int (*has_target)(void *, const char *), void *arg,
    struct outbox_item *it, int *found)
{
	struct sqstore	*s = (struct sqstore *)b;
	static const char	 pick[] = "SELECT id, topic, endpoint, key,"
	    " payload, created_at, attempts, seq FROM outbox"
	    " WHERE status = 'pending' AND next_at <= ?1"
	    " AND oncehook_has_target(topic)"
	    " ORDER BY next_at, seq LIMIT 1";
	sqlite3_stmt		*st = NULL;
	const void		*p;
	int			 rc;

	*found = 0;
	if (!s->has_target_defined) {
		if ((rc = sqlite3_create_function(s->db, "oncehook_has_target",
		    1, SQLITE_UTF8, s, sql_has_target, NULL, NULL)) !=
		    SQLITE_OK)
			return rc;
		s->has_target_defined = 1;
	}
	s->has_target = has_target;
	s->has_target_arg = arg;
	rc = sqlite3_prepare_v2(s->db, pick, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, now);
		rc = sqlite3_step(st);
	}
	s->has_target = NULL;
	s->has_target_arg = NULL;
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	col(st, 0, it->id, sizeof(it->id));
	col(st, 1, it->topic, sizeof(it->topic));
	col(st, 2, it->endpoint, sizeof(it->endpoint));
	col(st, 3, it->key, sizeof(it->key));
	p = sqlite3_column_blob(st, 4);
	it->payloadsz = (size_t)sqlite3_column_bytes(st, 4);
	if ((it->payload = malloc(it->payloadsz + 1)) == NULL) {
		sqlite3_finalize(st);
		return SQLITE_NOMEM;
	}
	if (it->payloadsz > 0)
		memcpy(it->payload, p, it->payloadsz);
	it->payload[it->payloadsz] = '\0';
	it->created_at = sqlite3_column_int64(st, 5);
	it->attempts = sqlite3_column_int64(st, 6) + 1;
	it->seq = sqlite3_column_int64(st, 7);
	sqlite3_finalize(st);
	*found = 1;
	return SQLITE_OK;
}

/* Still due, still at the attempt read: the row is ours. */
int
sqo_lease(struct store *b, struct outbox_item *it, long long now,
    long long lease, int *changed)
{
	struct sqstore	*s = (struct sqstore *)b;
	static const char	 take[] = "UPDATE outbox SET"
	    " attempts = attempts + 1, next_at = ?2, lease = ?4"
	    " WHERE seq = ?1 AND status = 'pending' AND next_at <= ?5"
	    " AND attempts = ?3";
	sqlite3_stmt	*st = NULL;
	long long	 t = (long long)time(NULL);
	int		 rc;

	if (t < now)
		t = now;
	if ((rc = sqlite3_prepare_v2(s->db, take, -1, &st, NULL)) !=
	    SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, it->seq);
	sqlite3_bind_int64(st, 2, t + lease);
	sqlite3_bind_int64(st, 3, it->attempts - 1);
	sqlite3_bind_int64(st, 4, it->lease);
	sqlite3_bind_int64(st, 5, now);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rc;
	*changed = sqlite3_changes(s->db) == 1;
	return SQLITE_OK;
}

int
sqo_settle(struct store *b, const struct outbox_item *it, long long now,
    const char *error, long long next_at, long long max, int *changed)
{
	struct sqstore	*s = (struct sqstore *)b;
	static const char	 delivered[] = "UPDATE outbox SET"
	    " status = 'delivered', delivered_at = ?3, last_error = NULL,"
	    " lease = NULL WHERE seq = ?1 AND status = 'pending'"
	    " AND lease = ?2";
	static const char	 failed[] = "UPDATE outbox SET"
	    " last_error = ?4, lease = NULL,"
	    " status = CASE WHEN attempts >= ?6 THEN 'dead' ELSE 'pending'"
	    " END, next_at = CASE WHEN attempts >= ?6 THEN ?3 ELSE ?5 END"
	    " WHERE seq = ?1 AND status = 'pending' AND lease = ?2";
	sqlite3_stmt	*st = NULL;
	int		 rc;

	if ((rc = sqlite3_prepare_v2(s->db, error == NULL ? delivered :
	    failed, -1, &st, NULL)) != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, it->seq);
	sqlite3_bind_int64(st, 2, it->lease);
	sqlite3_bind_int64(st, 3, now);
	if (error != NULL) {
		sqlite3_bind_text(st, 4, error, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, next_at);
		sqlite3_bind_int64(st, 6, max);
	}
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rc;
	*changed = sqlite3_changes(s->db) > 0;
	return SQLITE_OK;
}

long long
sqo_retry(struct store *b, long long now, int dead, int waiting,
    char *err, size_t errsz)
{
	struct sqstore	*s = (struct sqstore *)b;
	sqlite3_stmt	*st = NULL;
	long long	 n = -1;
	int		 rc;

	if ((rc = sq_begin(s)) == SQLITE_OK &&
	    (rc = sqlite3_prepare_v2(s->db, "UPDATE outbox SET"
	    " attempts = CASE WHEN status = 'dead' THEN 0 ELSE attempts END,"
	    " status = 'pending', next_at = ?1"
	    " WHERE (?2 AND status = 'dead')"
	    " OR (?3 AND status = 'pending' AND next_at > ?1"
	    " AND lease IS NULL)", -1, &st, NULL)) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, now);
		sqlite3_bind_int(st, 2, dead);
		sqlite3_bind_int(st, 3, waiting);
		if ((rc = sqlite3_step(st)) == SQLITE_DONE) {
			n = sqlite3_changes(s->db);
			rc = sq_commit(s);
		}
	}
	if (rc != SQLITE_OK && rc != SQLITE_DONE) {
		sq_why(s, "making outbox rows due", err, errsz);
		n = -1;
	}
	sqlite3_finalize(st);
	undo(s, rc == SQLITE_DONE ? SQLITE_OK : rc);
	return n;
}

long long
sqo_list(struct store *b, const char *id, const char *endpoint,
    const char *key, const char *status, long long limit, int with_payload,
    outbox_row_fn fn, void *arg, char *err, size_t errsz)
{
	struct sqstore	*s = (struct sqstore *)b;
	static const char	 sql[] = "SELECT id, topic,"
	    " CASE WHEN ?6 THEN payload END, endpoint, key, status,"
	    " last_error, created_at, attempts, next_at,"
	    " coalesce(delivered_at, -1) FROM outbox"
	    " WHERE (?1 IS NULL OR id = ?1)"
	    " AND (?3 IS NULL OR (endpoint = ?2 AND key = ?3))"
	    " AND (?4 IS NULL OR status = ?4)"
	    " ORDER BY seq DESC LIMIT ?5";
	sqlite3_stmt		*st;
	struct outbox_row	 r;
	long long		 n = 0;
	int			 rc;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errsz, "%s", sqlite3_errmsg(s->db));
		return -1;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, endpoint, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, status, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, limit);
	sqlite3_bind_int(st, 6, with_payload);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r.id = (const char *)sqlite3_column_text(st, 0);
		r.topic = (const char *)sqlite3_column_text(st, 1);
		r.payload = (const char *)sqlite3_column_text(st, 2);
		r.endpoint = (const char *)sqlite3_column_text(st, 3);
		r.key = (const char *)sqlite3_column_text(st, 4);
		r.status = (const char *)sqlite3_column_text(st, 5);
		r.last_error = (const char *)sqlite3_column_text(st, 6);
		r.created_at = sqlite3_column_int64(st, 7);
		r.attempts = sqlite3_column_int64(st, 8);
		r.next_at = sqlite3_column_int64(st, 9);
		r.delivered_at = sqlite3_column_int64(st, 10);
		fn(arg, &r);
		n++;
	}
	if (rc != SQLITE_DONE) {
		snprintf(err, errsz, "%s", sqlite3_errmsg(s->db));
		n = -1;
	}
	sqlite3_finalize(st);
	return n;
}

int
sqo_topics(struct store *b, void (*fn)(void *, const char *, const char *,
    long long, long long), void *arg, char *err, size_t errsz)
{
	struct sqstore	*s = (struct sqstore *)b;
	sqlite3_stmt	*st;
	int		 rc;

	if (sqlite3_prepare_v2(s->db, "SELECT topic, status, count(*),"
	    " min(created_at) FROM outbox GROUP BY topic, status"
	    " ORDER BY topic, status", -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errsz, "%s", sqlite3_errmsg(s->db));
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		fn(arg, (const char *)sqlite3_column_text(st, 0),
		    (const char *)sqlite3_column_text(st, 1),
		    sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
	if (rc != SQLITE_DONE)
		snprintf(err, errsz, "%s", sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

long long
sqo_prune(struct store *b, long long now, int dry_run, int dead,
    char *err, size_t errsz)
{
	struct sqstore	*s = (struct sqstore *)b;
	/* The rows to go: delivered (or dead, asked), their event gone. */
	static const char	 gone[] = "SELECT seq FROM outbox"
	    " WHERE seq > ?1 AND status IN ('delivered', ?2)"
	    " AND NOT EXISTS (SELECT 1 FROM events e"
	    " WHERE e.endpoint = outbox.endpoint AND e.key = outbox.key)"
	    " ORDER BY seq LIMIT 500";
	/* ... or going: past retention, as store_prune() takes them. */
	static const char	 count[] = "SELECT count(*) FROM outbox"
	    " WHERE status IN ('delivered', ?2)"
	    " AND NOT EXISTS (SELECT 1 FROM events e"
	    " WHERE e.endpoint = outbox.endpoint AND e.key = outbox.key"
	    " AND (e.expires_at IS NULL OR e.expires_at >= ?1"
	    " OR e.status NOT IN ('processed', ?2)))";
	sqlite3_stmt		*st = NULL, *del = NULL;
	long long		 seqs[500], cursor = 0, total = 0;
	size_t			 n, i;
	int			 rc;

	if (dry_run) {
		if ((rc = sqlite3_prepare_v2(s->db, count, -1, &st, NULL)) !=
		    SQLITE_OK)
			goto fail;
		sqlite3_bind_int64(st, 1, now);
		sqlite3_bind_text(st, 2, dead ? "dead" : "delivered", -1,
		    SQLITE_STATIC);
		if ((rc = sqlite3_step(st)) != SQLITE_ROW)
			goto fail;
		total = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		return total;
	}
	/* A batch found by a read past the last one (no rescan from the
	 * start), then deleted in a short transaction. */
	for (;;) {
		if ((rc = sqlite3_prepare_v2(s->db, gone, -1, &st, NULL)) !=
		    SQLITE_OK)
			goto fail;
		sqlite3_bind_int64(st, 1, cursor);
		sqlite3_bind_text(st, 2, dead ? "dead" : "delivered", -1,
		    SQLITE_STATIC);
		for (n = 0; n < 500 && (rc = sqlite3_step(st)) == SQLITE_ROW; )
			seqs[n++] = sqlite3_column_int64(st, 0);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			goto fail;
		sqlite3_finalize(st);
		st = NULL;
		if (n == 0)
			break;
		if ((rc = sq_begin(s)) != SQLITE_OK ||
		    (rc = sqlite3_prepare_v2(s->db, "DELETE FROM outbox"
		    " WHERE seq = ?1 AND status IN ('delivered', ?2)", -1,
		    &del, NULL)) != SQLITE_OK)
			goto fail;
		for (i = 0; i < n; i++) {
			sqlite3_bind_int64(del, 1, seqs[i]);
			sqlite3_bind_text(del, 2, dead ? "dead" : "delivered",
			    -1, SQLITE_STATIC);
			if ((rc = sqlite3_step(del)) != SQLITE_DONE)
				goto fail;
			total += sqlite3_changes(s->db);
			sqlite3_reset(del);
		}
		sqlite3_finalize(del);
		del = NULL;
		if ((rc = sq_commit(s)) != SQLITE_OK)
			goto fail;
		sq_end(s);
		cursor = seqs[n - 1];
	}
	return total;
fail:
	sq_why(s, "pruning the outbox", err, errsz);
	sqlite3_finalize(st);
	sqlite3_finalize(del);
	undo(s, rc);
	return -1;
}
