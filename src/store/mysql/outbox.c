/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the MariaDB/MySQL store's outbox rows: the lease's
 * primitives (store/lease.c) and the outbox's listings, retry and
 * pruning (store/outbox.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/mysql/engine.h"
#include "store/outbox.h"
#include "store/store.h"

/*
 * The outbox's times are the server's clock (UNIX_TIMESTAMP()):
 * deliverers on several hosts share its rows, and a lease must mean the
 * same to all of them, whatever their clocks say.  The due topics, by a
 * plain read, those with a target; then the oldest of their due rows,
 * locked, skipping those another deliverer holds (engine_ops.ob_pick).
 */
int
my_ob_pick(struct store *b, long long now,
    int (*has_target)(void *, const char *), void *arg,
    struct outbox_item *it, int *found)
{
	struct mystore	*s = MY(b);
	struct myres	*r = NULL;
	struct myrow	 row;
	char		*gate, *p;
	size_t		 cap = 1, len = 0;
	unsigned int	 e;

	(void)now;
	*found = 0;
	if ((e = my_exec(s, MY_OB_TOPICS_DUE, NULL, 0, &r, NULL)) != 0)
		return (int)e;
	if ((gate = calloc(1, cap)) == NULL)
		goto oom;
	/* For FIND_IN_SET(): topics are letters, digits, . - _ (the
	 * table's CHECK). */
	while (mydb_next(r, &row)) {
		if (row.v[0] == NULL || !has_target(arg, row.v[0]) ||
		    strchr(row.v[0], ',') != NULL)
			continue;
		if (len + strlen(row.v[0]) + 2 > cap) {
			cap = 2 * (len + strlen(row.v[0]) + 2);
			if ((p = realloc(gate, cap)) == NULL) {
				free(gate);
				goto oom;
			}
			gate = p;
		}
		len += (size_t)snprintf(gate + len, cap - len, "%s%s",
		    len ? "," : "", row.v[0]);
	}
	mydb_free(r);
	r = NULL;
	if (len == 0) {
		free(gate);
		return 0;
	}
	e = EXEC(s, MY_OB_PICK, &r, NULL, TXT(gate));
	free(gate);
	if (e != 0)
		return (int)e;
	*found = 2;		/* due, but held by others */
	if (mydb_next(r, &row)) {
		snprintf(it->id, sizeof(it->id), "%s", row.v[0]);
		snprintf(it->topic, sizeof(it->topic), "%s", row.v[1]);
		snprintf(it->endpoint, sizeof(it->endpoint), "%s", row.v[2]);
		snprintf(it->key, sizeof(it->key), "%s", row.v[3]);
		if ((it->payload = malloc(row.len[4] + 1)) == NULL)
			goto oom;
		memcpy(it->payload, row.v[4], row.len[4]);
		it->payload[row.len[4]] = '\0';
		it->payloadsz = row.len[4];
		it->created_at = mydb_int(&row, 5, 0);
		it->attempts = mydb_int(&row, 6, 0) + 1;
		it->seq = mydb_int(&row, 7, 0);
		*found = 1;
	}
	mydb_free(r);
	return 0;
oom:
	mydb_free(r);
	*found = 0;
	return MYDB_OOM;
}

/* The lease counts from now: after the row lock was taken. */
int
my_ob_lease(struct store *b, struct outbox_item *it, long long now,
    long long lease, int *changed)
{
	long long	 n = 0;
	unsigned int	 e;

	(void)now;
	e = EXEC(MY(b), MY_OB_LEASE, NULL, &n, NUM(lease), NUM(it->lease),
	    NUM(it->seq));
	*changed = n > 0;
	return (int)e;
}

int
my_ob_settle(struct store *b, const struct outbox_item *it, long long now,
    const char *error, long long next_at, long long max, int *changed)
{
	long long	 n = 0;
	unsigned int	 e;

	/* The server's clock (my_ob_pick()): the wait, not the time. */
	if (error == NULL)
		e = EXEC(MY(b), MY_OB_DELIVERED, NULL, &n, NUM(it->seq),
		    NUM(it->lease));
	else
		e = EXEC(MY(b), MY_OB_FAILED, NULL, &n, TXT(error), NUM(max),
		    NUM(next_at - now), NUM(max), NUM(it->seq),
		    NUM(it->lease));
	*changed = n > 0;
	return (int)e;
}

long long
mys_ob_retry(struct store *b, long long now, int dead, int waiting, char *err,
    size_t errsz)
{
	struct mystore	*s = MY(b);
	long long	 n = 0;

	(void)now;
	if (EXEC(s, MY_OB_RETRY, NULL, &n, NUM(dead), NUM(waiting)) != 0) {
		my_why_of(s, "making outbox rows due", err, errsz);
		return -1;
	}
	return n;
}

long long
mys_ob_list(struct store *b, const char *id, const char *endpoint,
    const char *key, const char *status, long long limit, int with_payload,
    outbox_row_fn fn, void *arg, char *err, size_t errsz)
{
	struct mystore		*s = MY(b);
	struct myres		*r = NULL;
	struct myrow		 row;
	struct outbox_row	 o;
	long long		 n = 0;

	if (EXEC(s, MY_OB_LIST, &r, NULL, NUM(with_payload), TXT(id), TXT(id),
	    TXT(key), TXT(endpoint), TXT(key), TXT(status), TXT(status),
	    NUM(limit)) != 0) {
		snprintf(err, errsz, "%s", mydb_error(s->db));
		return -1;
	}
	while (mydb_next(r, &row)) {
		o.id = row.v[0];
		o.topic = row.v[1];
		o.payload = row.v[2];
		o.endpoint = row.v[3];
		o.key = row.v[4];
		o.status = row.v[5];
		o.last_error = row.v[6];
		o.created_at = mydb_int(&row, 7, 0);
		o.attempts = mydb_int(&row, 8, 0);
		o.next_at = mydb_int(&row, 9, 0);
		o.delivered_at = mydb_int(&row, 10, -1);
		fn(arg, &o);
		n++;
	}
	mydb_free(r);
	return n;
}

int
mys_ob_topics(struct store *b, void (*fn)(void *, const char *, const char *,
    long long, long long), void *arg, char *err, size_t errsz)
{
	struct mystore	*s = MY(b);
	struct myres	*r = NULL;
	struct myrow	 row;

	if (my_exec(s, MY_OB_TOPICS, NULL, 0, &r, NULL) != 0) {
		snprintf(err, errsz, "%s", mydb_error(s->db));
		return -1;
	}
	while (mydb_next(r, &row))
		fn(arg, row.v[0], row.v[1], mydb_int(&row, 2, 0),
		    mydb_int(&row, 3, 0));
	mydb_free(r);
	return 0;
}

long long
mys_ob_prune(struct store *b, long long now, int dry_run, int dead, char *err,
    size_t errsz)
{
	struct mystore	*s = MY(b);
	const char	*st = dead ? "dead" : "delivered";
	long long	 total = 0;
	unsigned int	 e;

	if (dry_run)
		e = COUNT(s, MY_OB_PRUNE_COUNT, &total, TXT(st), NUM(now),
		    TXT(st));
	else {
		const struct mybind	 v[] = { TXT(st) };
		long long		 n;

		do {
			if ((e = my_exec(s, MY_OB_PRUNE, v, 1, NULL, &n)) == 0)
				total += n;
		} while (e == 0 && n > 0);
	}
	if (e != 0) {
		snprintf(err, errsz, "%s", mydb_error(s->db));
		return -1;
	}
	return total;
}

