/*
 * oncehook: the outbox's rows in the store (see outbox.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "log.h"
#include "outbox.h"
#include "store.h"
#include "store_int.h"

#define OUTBOX_CAP	21600	/* the longest wait between attempts, s */

void
outbox_item_clear(struct outbox_item *it)
{
	free(it->payload);
	memset(it, 0, sizeof(*it));
}

/* The has_target() of the take in progress, as an SQL function. */
struct target_fn {
	int	(*fn)(void *, const char *);
	void	*arg;
};

static void
sql_has_target(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct target_fn	*t = sqlite3_user_data(ctx);
	const char		*topic;

	topic = argc == 1 ? (const char *)sqlite3_value_text(argv[0]) : NULL;
	sqlite3_result_int(ctx, topic != NULL && t->fn(t->arg, topic));
}

/* Copy column i, which is text, into buf. */
static void
col(sqlite3_stmt *st, int i, char *buf, size_t sz)
{
	const unsigned char	*t = sqlite3_column_text(st, i);

	snprintf(buf, sz, "%s", t != NULL ? (const char *)t : "");
}

enum outbox_take
outbox_take(struct store *s, long long now, long long lease,
    int (*has_target)(void *, const char *), void *arg,
    struct outbox_item *it, char *why, size_t whysz)
{
	static const char	 pick[] = "SELECT id, topic, endpoint, key,"
	    " payload, created_at, attempts, seq FROM outbox"
	    " WHERE status = 'pending' AND next_at <= ?1"
	    " AND oncehook_has_target(topic)"
	    " ORDER BY next_at, seq LIMIT 1";
	static const char	 take[] = "UPDATE outbox SET"
	    " attempts = attempts + 1, next_at = ?2"
	    " WHERE seq = ?1 AND status = 'pending'";
	struct target_fn	 t = { has_target, arg };
	sqlite3_stmt		*st = NULL;
	const unsigned char	*p;
	int			 rc;

	memset(it, 0, sizeof(*it));
	why[0] = '\0';
	if (sq_moved(s)) {
		snprintf(why, whysz, "the database moved");
		return TAKE_BUSY;
	}
	if (sqlite3_create_function(s->db, "oncehook_has_target", 1,
	    SQLITE_UTF8, &t, sql_has_target, NULL, NULL) != SQLITE_OK) {
		snprintf(why, whysz, "%s", sqlite3_errmsg(s->db));
		return TAKE_ERROR;
	}
	/* A look without the write lock first: an idle deliverer polls. */
	if ((rc = sqlite3_prepare_v2(s->db, pick, -1, &st, NULL)) !=
	    SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(st, 1, now);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	st = NULL;
	if (rc == SQLITE_DONE)
		return TAKE_NONE;
	if (rc != SQLITE_ROW)
		goto fail;
	if ((rc = sq_begin(s)) != SQLITE_OK) {
		sq_why(s, "taking an outbox row", why, whysz);
		sq_end(s);
		sq_note(s, rc);
		return sq_classify(rc) == HOOK_EBUSY ? TAKE_BUSY : TAKE_ERROR;
	}
	if ((rc = sqlite3_prepare_v2(s->db, pick, -1, &st, NULL)) !=
	    SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(st, 1, now);
	if ((rc = sqlite3_step(st)) == SQLITE_DONE) {
		sqlite3_finalize(st);
		(void)sq_run(s, ST_ROLLBACK);
		sq_end(s);
		return TAKE_NONE;
	}
	if (rc != SQLITE_ROW)
		goto fail;
	col(st, 0, it->id, sizeof(it->id));
	col(st, 1, it->topic, sizeof(it->topic));
	col(st, 2, it->endpoint, sizeof(it->endpoint));
	col(st, 3, it->key, sizeof(it->key));
	p = sqlite3_column_text(st, 4);
	if ((it->payload = strdup(p != NULL ? (const char *)p : "")) ==
	    NULL) {
		snprintf(why, whysz, "out of memory");
		sqlite3_finalize(st);
		(void)sq_run(s, ST_ROLLBACK);
		sq_end(s);
		return TAKE_ERROR;
	}
	it->created_at = sqlite3_column_int64(st, 5);
	it->attempts = sqlite3_column_int64(st, 6) + 1;
	it->seq = sqlite3_column_int64(st, 7);
	sqlite3_finalize(st);
	st = NULL;
	if ((rc = sqlite3_prepare_v2(s->db, take, -1, &st, NULL)) !=
	    SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(st, 1, it->seq);
	sqlite3_bind_int64(st, 2, now + lease);
	if ((rc = sqlite3_step(st)) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	st = NULL;
	if ((rc = sq_commit(s)) != SQLITE_OK)
		goto fail;
	sq_end(s);
	return TAKE_ONE;
fail:
	sq_why(s, "taking an outbox row", why, whysz);
	sqlite3_finalize(st);
	sq_note(s, rc);
	if (!sqlite3_get_autocommit(s->db))
		(void)sq_run(s, ST_ROLLBACK);
	sq_end(s);
	outbox_item_clear(it);
	return sq_classify(rc) == HOOK_EBUSY ? TAKE_BUSY : TAKE_ERROR;
}

/* Run the one-row update sql on item's row in its own transaction:
 * ?1 seq, ?7 id, ?2 attempts, ?3 now, ?4 error, ?5 next, ?6 max.  1 if the row
 * changed, 0 if not, -1 on failure. */
static int
settle(struct store *s, const char *sql, const struct outbox_item *it,
    long long now, const char *error, long long next, long long max,
    char *why, size_t whysz)
{
	sqlite3_stmt	*st = NULL;
	int		 rc, changed;

	if (sq_moved(s)) {
		snprintf(why, whysz, "the database moved");
		return -1;
	}
	if ((rc = sq_begin(s)) != SQLITE_OK)
		goto fail;
	if ((rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL)) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(st, 1, it->seq);
	sqlite3_bind_int64(st, 2, it->attempts);
	sqlite3_bind_text(st, 7, it->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, now);
	sqlite3_bind_text(st, 4, error, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, next);
	sqlite3_bind_int64(st, 6, max);
	if ((rc = sqlite3_step(st)) != SQLITE_DONE)
		goto fail;
	changed = sqlite3_changes(s->db) > 0;
	sqlite3_finalize(st);
	st = NULL;
	if ((rc = sq_commit(s)) != SQLITE_OK)
		goto fail;
	sq_end(s);
	return changed;
fail:
	sq_why(s, "noting an outbox attempt", why, whysz);
	sqlite3_finalize(st);
	sq_note(s, rc);
	if (!sqlite3_get_autocommit(s->db))
		(void)sq_run(s, ST_ROLLBACK);
	sq_end(s);
	return -1;
}

int
outbox_delivered(struct store *s, const struct outbox_item *it, long long now,
    char *why, size_t whysz)
{
	return settle(s, "UPDATE outbox SET status = 'delivered',"
	    " delivered_at = ?3, last_error = NULL"
	    " WHERE seq = ?1 AND id = ?7 AND status = 'pending' AND attempts = ?2",
	    it, now, NULL, 0, 0, why, whysz);
}

int
outbox_failed(struct store *s, const struct outbox_item *it,
    const char *error, long long now, long long first, long long max,
    char *why, size_t whysz)
{
	int	 r;

	r = settle(s, "UPDATE outbox SET last_error = ?4,"
	    " status = CASE WHEN attempts >= ?6 THEN 'dead' ELSE 'pending'"
	    " END, next_at = CASE WHEN attempts >= ?6 THEN ?3 ELSE ?5 END"
	    " WHERE seq = ?1 AND id = ?7 AND status = 'pending' AND attempts = ?2",
	    it, now, error, now + sq_backoff(it->attempts, first,
	    OUTBOX_CAP), max, why, whysz);
	return r == 1 && it->attempts >= max ? 2 : r;
}

long long
outbox_retry_dead(struct store *s, long long now, char *err, size_t errsz)
{
	sqlite3_stmt	*st = NULL;
	long long	 n = -1;
	int		 rc;

	if ((rc = sq_begin(s)) == SQLITE_OK &&
	    (rc = sqlite3_prepare_v2(s->db, "UPDATE outbox SET status ="
	    " 'pending', attempts = 0, next_at = ?1 WHERE status = 'dead'",
	    -1, &st, NULL)) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, now);
		if ((rc = sqlite3_step(st)) == SQLITE_DONE) {
			n = sqlite3_changes(s->db);
			rc = sq_commit(s);
		}
	}
	if (rc != SQLITE_OK && rc != SQLITE_DONE) {
		sq_why(s, "retrying dead outbox rows", err, errsz);
		sq_note(s, rc);
		n = -1;
	}
	sqlite3_finalize(st);
	if (!sqlite3_get_autocommit(s->db))
		(void)sq_run(s, ST_ROLLBACK);
	sq_end(s);
	return n;
}

long long
outbox_list(struct store *s, const char *id, const char *endpoint,
    const char *key, const char *status, long long limit, int with_payload,
    outbox_row_fn fn, void *arg, char *err, size_t errsz)
{
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
outbox_topics(struct store *s, void (*fn)(void *, const char *, const char *,
    long long, long long), void *arg, char *err, size_t errsz)
{
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
outbox_prune(struct store *s, int dry_run, int dead, char *err, size_t errsz)
{
	static const char	 gone[] = " FROM outbox WHERE status IN"
	    " ('delivered', ?1) AND NOT EXISTS (SELECT 1 FROM events e"
	    " WHERE e.endpoint = outbox.endpoint AND e.key = outbox.key)";
	char			 sql[512];
	sqlite3_stmt		*st = NULL;
	long long		 total = 0, n;
	int			 rc;

	do {
		if (dry_run)
			snprintf(sql, sizeof(sql), "SELECT count(*)%s", gone);
		else
			snprintf(sql, sizeof(sql), "DELETE FROM outbox WHERE"
			    " seq IN (SELECT seq%s LIMIT 500)", gone);
		if (!dry_run && (rc = sq_begin(s)) != SQLITE_OK)
			goto fail;
		if ((rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL)) !=
		    SQLITE_OK)
			goto fail;
		sqlite3_bind_text(st, 1, dead ? "dead" : "delivered", -1,
		    SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			goto fail;
		n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) :
		    sqlite3_changes(s->db);
		sqlite3_finalize(st);
		st = NULL;
		if (!dry_run) {
			if ((rc = sq_commit(s)) != SQLITE_OK)
				goto fail;
			sq_end(s);
		}
		total += n;
	} while (!dry_run && n > 0);
	return total;
fail:
	sq_why(s, "pruning the outbox", err, errsz);
	sqlite3_finalize(st);
	sq_note(s, rc);
	if (!sqlite3_get_autocommit(s->db))
		(void)sq_run(s, ST_ROLLBACK);
	sq_end(s);
	return -1;
}
