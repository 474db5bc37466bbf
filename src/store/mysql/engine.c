/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the MariaDB/MySQL store (store/store.h's contract, store/outbox.h);
 * with store/mysql/conn.c and store/mysql/actions.c, the MariaDB room.
 *
 * How each rule of the contract is kept on a server (store/store.h numbers
 * them):
 * 1. One transaction per claim batch (START TRANSACTION ... COMMIT, the
 *    actions inside); a COMMIT that fails, or whose answer never came
 *    (the connection lost), fails the batch with HOOK_EBUSY: never 200
 *    unless the server said the commit succeeded.
 * 2. The claim is INSERT ... ON DUPLICATE KEY UPDATE id = id on UNIQUE
 *    (endpoint, event_key): one affected row is ours, none is a key
 *    claimed by another transaction, whose commit InnoDB made us wait
 *    for; it is read again (READ COMMITTED sees it) and answered as the
 *    duplicate or the conflict it is.  The replay guard inserts the
 *    payload's row in {prefix}payloads, PRIMARY KEY (endpoint,
 *    payload_hash, type), in the same transaction: two keys carrying one
 *    payload at the same moment wait on each other, and the second finds
 *    the first's row.  A deadlock (the server rolled the transaction
 *    back) is tried once more; a deadlock again, or a lock wait past
 *    innodb_lock_wait_timeout (ONCEHOOK_BUSY_TIMEOUT_MS), is HOOK_EBUSY.
 * 3. Lookups are plain SELECTs at READ COMMITTED, outside any
 *    transaction of ours: they take no lock and see only committed rows.
 * 4. Several claims: a SAVEPOINT each; a claim whose actions fail, or
 *    whose own statement the server refuses (a statement's error undoes
 *    that statement only), rolls back to it alone.  A failure that ends
 *    the transaction (a deadlock, a lost connection) is the batch's: a
 *    deadlock runs the whole batch once more, then fails every claim
 *    not decided, as does a lost connection: no partial 200s.  (SQLite
 *    runs the batch again without the claim that ended it; here the
 *    claim that met the deadlock is not known to be its cause.)
 * 5. The connection's server and database are the configured ones.  A
 *    connection found lost where nothing is under way on it (a lookup,
 *    or the START TRANSACTION that begins a claim, a run or a note) is
 *    made again once (reconnect()): the server restarted, or closed it
 *    idle.  Lost later, the request fails (503) and the store is broken:
 *    the caller opens a new one; never a reconnect in the middle of a
 *    transaction.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "lib/log.h"
#include "pipeline/event.h"
#include "store/actfile.h"
#include "store/engine.h"
#include "store/migrations.h"
#include "store/mysql/actions.h"
#include "store/mysql/conn.h"
#include "store/mysql/engine.h"
#include "store/mysql/statements.h"
#include "store/outbox.h"
#include "store/store.h"


static const struct store_ops mys_ops;

#define MY(b)	((struct mystore *)(b))

/* A lost connection marks the store broken. */
static unsigned int
noted(struct mystore *s, unsigned int e)
{
	if (e != 0 && mydb_lost(s->db))
		s->broken = 1;
	s->used = (long long)time(NULL);
	return e;
}

/* Run a statement that has no value in it (transaction control, the
 * schema); the error number. */
static unsigned int
run(struct mystore *s, const char *sql)
{
	return noted(s, mydb_run(s->db, strdup(sql), NULL, NULL));
}

/* text with {prefix} and {p} replaced by p, {skip} by skip, {nowait} by
 * nowait; malloc'd. */
static char *
expand(const char *text, const char *p, const char *skip, const char *nowait)
{
	static const char *const marks[] = {
		"{prefix}", "{p}", "{skip}", "{nowait}"
	};
	const char	*with[4] = { p, p, skip, nowait };
	const char	*q;
	char		*out, *o;
	size_t		 n = strlen(text) + 1, i;

	for (i = 0; i < 4; i++)
		for (q = text; (q = strstr(q, marks[i])) != NULL;
		    q += strlen(marks[i]))
			n += strlen(with[i]);
	if ((out = malloc(n)) == NULL)
		return NULL;
	for (o = out; *text != '\0';) {
		for (i = 0; i < 4; i++)
			if (strncmp(text, marks[i], strlen(marks[i])) == 0)
				break;
		if (i < 4) {
			o = stpcpy(o, with[i]);
			text += strlen(marks[i]);
		} else
			*o++ = *text++;
	}
	*o = '\0';
	return out;
}

/*
 * Run statement w (store/mysql/statements.h) with n values, prepared on
 * this connection on its first use; its rows into *res, or the rows it
 * changed into *affected.  The error number.
 */
unsigned int
my_exec(struct mystore *s, enum myst w, const struct mybind *b, size_t n,
    struct myres **res, long long *affected)
{
	unsigned int	 e;
	char		*sql;

	if (s->st[w] == NULL) {
		if ((sql = expand(my_statements[w], s->p, s->skip_locked ?
		    " SKIP LOCKED" : "", s->skip_locked ? " SKIP LOCKED" :
		    " NOWAIT")) == NULL)
			return mydb_run(s->db, NULL, res, affected); /* OOM */
		e = mydb_prepare(s->db, sql, &s->st[w]);
		free(sql);
		if (e != 0)
			return noted(s, e);
	}
	return noted(s, mydb_query(s->db, s->st[w], b, n, res, affected));
}

/* Column 0 of the first row of a statement: a count. */
unsigned int
my_count(struct mystore *s, enum myst w, const struct mybind *b, size_t n,
    long long *out)
{
	struct myres	*r = NULL;
	struct myrow	 row;
	unsigned int	 e;

	*out = 0;
	if ((e = my_exec(s, w, b, n, &r, NULL)) != 0)
		return e;
	if (mydb_next(r, &row))
		*out = mydb_int(&row, 0, 0);
	mydb_free(r);
	return 0;
}
/* The statements were the connection's: closed with it. */
static void
close_statements(struct mystore *s)
{
	size_t	 i;

	for (i = 0; i < MY__MAX; i++) {
		mydb_stmt_close(s->st[i]);
		s->st[i] = NULL;
	}
}

/*
 * A new connection in place of a lost one, before a request has done
 * anything on it (its first read): the server restarted, or closed an
 * idle connection (wait_timeout).  The actions are prepared again on
 * the new one.  0, or -1 (the store stays broken).
 */
static int
reconnect(struct mystore *s)
{
	struct mydb	*db;
	char		 err[256];
	size_t		 i;

	if (mydb_connect(s->cf, &db, err, sizeof(err)) != HOOK_OK) {
		log_warnx("store: connecting again: %s", err);
		return -1;
	}
	/* The files stay parsed; their statements were the old
	 * connection's, and are prepared again on first use. */
	for (i = 0; i < s->cf->nendpoints; i++)
		if (s->acts[i] != NULL && conf_actions_first(s->cf, i) == i)
			myactions_reset(s->acts[i], db);
	close_statements(s);
	mydb_close(s->db);
	s->db = db;
	s->broken = 0;
	s->used = (long long)time(NULL);
	return 0;
}

static void
rollback(struct mystore *s)
{
	(void)run(s, "ROLLBACK");
}

void
my_why_of(struct mystore *s, const char *step, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "%s: %s", step, s->why[0] != '\0' ? s->why :
	    mydb_error(s->db));
	s->why[0] = '\0';
}

/* A lock not waited for (NOWAIT: ER_LOCK_WAIT_TIMEOUT on MariaDB,
 * ER_LOCK_NOWAIT on MySQL), or waited for past innodb_lock_wait_timeout. */
static int
lock_held(unsigned int e)
{
	return e == 1205 || e == 3572;
}

/* The error of a value longer than oncehook's limits (ER_DATA_TOO_LONG's
 * number: not busy, a storage error); s->why says which. */
#define MY_TOO_LONG	1406

static int
mys_version(const struct store *b)
{
	(void)b;
	return (int)nmy_migrations;
}

static int
mys_broken(const struct store *b)
{
	const struct mystore	*s = (const struct mystore *)b;

	return s->broken || mydb_lost(s->db);
}

/* Idle for 30 s: is the server still there?  A connection it closed
 * (wait_timeout, a restart) is let go now, not found dead by the next
 * delivery. */
static int
mys_idle(struct store *b)
{
	struct mystore	*s = MY(b);
	long long	 now = (long long)time(NULL);

	if (now - s->used < 30)
		return 0;
	s->used = now;
	return mydb_ping(s->db) != 0;
}

/* Let go of every endpoint's actions. */
static void
free_actions(struct mystore *s)
{
	size_t	 i;

	if (s->acts == NULL)
		return;
	for (i = 0; i < s->cf->nendpoints; i++)
		if (conf_actions_first(s->cf, i) == i)
			myactions_free(s->acts[i]);
	memset(s->acts, 0, s->cf->nendpoints * sizeof(*s->acts));
}

static void
mys_close(struct store *b)
{
	struct mystore	*s = MY(b);

	if (s == NULL)
		return;
	free_actions(s);
	free(s->acts);
	close_statements(s);
	mydb_close(s->db);
	free(s->names);
	free(s);
}

/* The schema's version: *v (0: none yet).  The error number.  Once a
 * connection (each CGI request's), and with no value in it: one text
 * query, not a statement prepared, run and closed. */
static unsigned int
schema_version(struct mystore *s, int *v)
{
	struct myres	*r = NULL;
	struct myrow	 row;
	char		*sql;
	unsigned int	 e;

	*v = 0;
	if ((sql = expand(my_statements[MY_SCHEMA_VERSION], s->p, "", "")) ==
	    NULL)
		return noted(s, mydb_run(s->db, NULL, NULL, NULL)); /* OOM */
	if ((e = noted(s, mydb_run(s->db, sql, &r, NULL))) != 0)
		return e;
	if (mydb_next(r, &row))
		*v = (int)mydb_int(&row, 0, 0);
	mydb_free(r);
	return 0;
}

/* 0, or -1 with err naming a table of one of oncehook's names that is
 * the site's own (the prefix collides): nothing may be written then. */
static int
foreign(struct mystore *s, char *err, size_t errsz)
{
	struct myres	*r = NULL;
	struct myrow	 row;
	int		 rc = 0;

	if (my_exec(s, MY_FOREIGN, NULL, 0, &r, NULL) != 0) {
		my_why_of(s, s->cf->db, err, errsz);
		return -1;
	}
	if (mydb_next(r, &row) && row.v[0] != NULL) {
		snprintf(err, errsz, "%s: table %s is not oncehook's (its "
		    "columns are another's): choose an ONCEHOOK_DB_PREFIX its "
		    "tables do not collide with", s->cf->db, row.v[0]);
		rc = -1;
	}
	mydb_free(r);
	return rc;
}

/* Create or migrate oncehook's tables, then run the action setups.
 * DDL commits on its own on this engine: a named lock keeps two inits
 * apart, and each migration is recorded as soon as it is applied. */
static int
migrate(struct mystore *s, char *err, size_t errsz)
{
	struct myres	*r = NULL;
	struct myrow	 row;
	char		*sql;
	size_t		 i;
	unsigned int	 e;
	int		 v = 0, ok = 0;

	if (noted(s, mydb_run(s->db, strdup("SELECT GET_LOCK('oncehook_init',"
	    " 60)"), &r, NULL)) != 0 || !mydb_next(r, &row) ||
	    mydb_int(&row, 0, 0) != 1) {
		mydb_free(r);
		snprintf(err, errsz, "%s: another oncehook init holds the "
		    "lock: %s", s->cf->db, mydb_error(s->db));
		return -1;
	}
	mydb_free(r);
	if (foreign(s, err, errsz) == -1)
		goto out;
	if ((sql = expand("CREATE TABLE IF NOT EXISTS `{p}schema` ("
	    " version INT NOT NULL PRIMARY KEY, name VARCHAR(64) NOT NULL,"
	    " applied_at BIGINT NOT NULL) ENGINE=InnoDB DEFAULT"
	    " CHARSET=utf8mb4 COLLATE=utf8mb4_bin", s->p, "", "")) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	e = run(s, sql);
	free(sql);
	/* One made before it said so has the server's default collation:
	 * binary like the others (a few rows, rebuilt at once). */
	if (e == 0 && (sql = expand("ALTER TABLE `{p}schema` CONVERT TO"
	    " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", s->p, "", "")) !=
	    NULL) {
		e = run(s, sql);
		free(sql);
	}
	if (e != 0 || schema_version(s, &v) != 0) {
		my_why_of(s, s->cf->db, err, errsz);
		goto out;
	}
	if (v > (int)nmy_migrations) {
		snprintf(err, errsz, "%s: schema version %d is newer than this "
		    "oncehook's (%zu): upgrade oncehook", s->cf->db, v,
		    nmy_migrations);
		goto out;
	}
	for (i = (size_t)v; i < nmy_migrations; i++) {
		if ((sql = expand(my_migrations[i].sql, s->p, "", "")) ==
		    NULL) {
			snprintf(err, errsz, "out of memory");
			goto out;
		}
		if (mydb_script(s->db, sql) != 0) {
			free(sql);
			snprintf(err, errsz, "%s: migration %s: %s", s->cf->db,
			    my_migrations[i].name, mydb_error(s->db));
			goto out;
		}
		free(sql);
		if (EXEC(s, MY_SCHEMA_ADD, NULL, NULL,
		    NUM(my_migrations[i].version), TXT(my_migrations[i].name),
		    NUM(time(NULL))) != 0) {
			my_why_of(s, s->cf->db, err, errsz);
			goto out;
		}
		log_info("%s: applied migration %s", s->cf->db,
		    my_migrations[i].name);
	}
	for (i = 0; i < s->cf->nendpoints; i++)
		if (conf_actions_first(s->cf, i) == i && myactions_setup(s->db,
		    s->cf->endpoints[i].actions, s->p, err, errsz) == -1)
			goto out;
	ok = 1;
out:
	(void)run(s, "DO RELEASE_LOCK('oncehook_init')");
	return ok ? 0 : -1;
}

/* Endpoint i's actions, loaded unless they are (shared with the first
 * endpoint that names the same file).  0, or -1 with err. */
static int
load_actions(struct mystore *s, size_t i, char *err, size_t errsz)
{
	size_t	 f = conf_actions_first(s->cf, i);

	if (s->acts[i] != NULL)
		return 0;
	if (f != i) {
		if (load_actions(s, f, err, errsz) == -1)
			return -1;
		s->acts[i] = s->acts[f];
		return 0;
	}
	s->acts[i] = myactions_load(s->db, s->cf->endpoints[i].actions, s->p,
	    err, errsz);
	if (s->acts[i] != NULL)
		return 0;
	/* No process ran that text: a fix is read at the next load. */
	actfile_forget(s->cf->endpoints[i].actions);
	return -1;
}

enum hook_err
mys_connect(const struct conf *cf, int flags, struct store **out, char *err,
    size_t errsz)
{
	struct mystore	*s;
	enum hook_err	 er;
	unsigned long	 ver;
	unsigned int	 e;
	size_t		 i, n = 3;
	int		 v = 0, mariadb;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return HOOK_ESYSTEM;
	}
	s->base.ops = &mys_ops;
	s->base.cf = cf;
	s->cf = cf;
	s->p = cf->db_prefix;		/* conf.c's default: oncehook_ */
	for (i = 0; i < cf->nendpoints; i++)
		n += strlen(cf->endpoints[i].name) + 3;
	if ((s->names = calloc(1, n)) == NULL ||
	    (s->acts = calloc(cf->nendpoints + 1, sizeof(*s->acts))) ==
	    NULL) {
		mys_close(&s->base);
		snprintf(err, errsz, "out of memory");
		return HOOK_ESYSTEM;
	}
	/* For FIND_IN_SET(): names are letters, digits, - and _. */
	for (i = 0; i < cf->nendpoints; i++)
		snprintf(s->names + strlen(s->names), n - strlen(s->names),
		    "%s%s", i ? "," : "", cf->endpoints[i].name);
	if ((er = mydb_connect(cf, &s->db, err, errsz)) != HOOK_OK) {
		mys_close(&s->base);
		return er;
	}
	s->used = (long long)time(NULL);
	ver = mydb_version(s->db, &mariadb);
	s->skip_locked = mariadb ? ver >= 100600 : ver >= 80001;
	if (flags & STORE_INIT) {
		if ((mariadb && ver < 100500) || (!mariadb && ver < 80013)) {
			snprintf(err, errsz, "%s: %s: oncehook needs MariaDB "
			    "10.5 or MySQL 8.0.13 at least", cf->db,
			    mydb_server(s->db));
			mys_close(&s->base);
			return HOOK_ECONF;
		}
		if (migrate(s, err, errsz) == -1) {
			mys_close(&s->base);
			return HOOK_ECONF;
		}
	} else if ((e = schema_version(s, &v)) != 0 || v != (int)
	    nmy_migrations) {
		if (foreign(s, err, errsz) == -1)
			;	/* a site's table of one of oncehook's names */
		else if (e == 1146)	/* ER_NO_SUCH_TABLE */
			snprintf(err, errsz, "%s: no oncehook tables (prefix "
			    "%s) in this database: run oncehook init",
			    cf->db, s->p);
		else if (e != 0)
			my_why_of(s, cf->db, err, errsz);
		else if (v > (int)nmy_migrations)
			snprintf(err, errsz, "%s: schema version %d is newer "
			    "than this oncehook's (%zu): refusing it", cf->db,
			    v, nmy_migrations);
		else
			snprintf(err, errsz, "%s: schema version %d, this "
			    "oncehook wants %zu: run oncehook init", cf->db, v,
			    nmy_migrations);
		er = e != 0 && e != 1146 ? mydb_classify(e) : HOOK_ECONF;
		mys_close(&s->base);
		return er;
	}
	for (i = 0; i < cf->nendpoints && !(flags & STORE_LAZY); i++)
		if (load_actions(s, i, err, errsz) == -1) {
			mys_close(&s->base);
			return HOOK_ECONF;
		}
	*out = &s->base;
	return HOOK_OK;
}

/*
 * The stored row of (endpoint, key) compared with ev
 * (engine_ops.find_key): the same bytes are HOOK_DUP whatever the hash,
 * and without a hash other bytes are HOOK_ECONFLICT until asked again
 * with it.
 */
static int
my_find_key(struct store *b, size_t endpoint, const struct event *ev,
    enum hook_err *found)
{
	struct mystore	*s = MY(b);
	const char	*name = s->cf->endpoints[endpoint].name;
	struct myres	*r = NULL;
	struct myrow	 row;
	unsigned int	 e;

	*found = HOOK_OK;
	if (ev->hash[0] != '\0')
		e = EXEC(s, MY_FIND_HASH, &r, NULL, TXT(ev->hash), TXT(name),
		    TXT(ev->key));
	else
		e = EXEC(s, MY_FIND_BYTES, &r, NULL, BYTES(ev->payload,
		    ev->payloadsz), TXT(name), TXT(ev->key));
	if (e != 0)
		return (int)e;
	if (mydb_next(r, &row))
		*found = mydb_int(&row, 0, 0) != 1 ? HOOK_ECONFLICT :
		    mydb_int(&row, 1, 0) == 1 ? HOOK_PARKED : HOOK_DUP;
	mydb_free(r);
	return 0;
}

/* Is ev's payload recorded for endpoint with its type under another
 * key than ev's (engine_ops.find_payload)?  No type and an empty one
 * are one, as in the guard's rows. */
static int
my_find_payload(struct store *b, size_t endpoint, const struct event *ev,
    int *found)
{
	struct mystore	*s = MY(b);
	struct myres	*r = NULL;
	struct myrow	 row;
	unsigned int	 e;

	*found = 0;
	if ((e = EXEC(s, MY_FIND_PAYLOAD, &r, NULL,
	    TXT(s->cf->endpoints[endpoint].name), TXT(ev->hash),
	    TXT(ev->type != NULL ? ev->type : ""), TXT(ev->key))) != 0)
		return (int)e;
	if (mydb_next(r, &row))
		*found = mydb_int(&row, 0, 0) == 1 ? 2 : 1;
	mydb_free(r);
	return 0;
}

/* The payload's row in the guard's table: *isnew 0 if another key
 * holds it (committed: the insert waited for it). */
static unsigned int
guard_row(struct mystore *s, const char *endpoint, const struct event *ev,
    int *isnew)
{
	long long	 n = 0;
	unsigned int	 e;

	e = EXEC(s, MY_GUARD_ROW, NULL, &n, TXT(endpoint), TXT(ev->hash),
	    TXT(ev->type != NULL ? ev->type : ""), TXT(ev->key));
	*isnew = n > 0;
	return e;
}

/*
 * The replay guard (engine_ops.guard): the payload's row in
 * {prefix}payloads, PRIMARY KEY (endpoint, payload_hash, type).  Its
 * row lock orders two keys of one payload: the second waits for the
 * first's commit and finds its row, and then the events are asked
 * whether that key's event failed or is dead (parked).  A row this
 * claim made new is the answer alone: every claim and park of a guarded
 * endpoint writes the row, so only events recorded while the endpoint
 * had no guard lack one, and those were committed before the lookup
 * that precedes every guarded claim (store_replayed(): the pipeline
 * sends no guarded event without it) and found there.
 */
static int
my_guard(struct store *b, size_t endpoint, const struct event *ev, int *found)
{
	struct mystore	*s = MY(b);
	unsigned int	 e;
	int		 isnew = 0;

	*found = 0;
	if ((e = guard_row(s, s->cf->endpoints[endpoint].name, ev,
	    &isnew)) != 0)
		return (int)e;
	if (isnew)
		return 0;
	if ((e = (unsigned int)my_find_payload(b, endpoint, ev, found)) != 0)
		return (int)e;
	if (*found == 0)
		*found = 1;	/* another key holds the guard's row */
	return 0;
}

static int
my_conflict(struct store *b, size_t endpoint, const struct event *ev)
{
	struct mystore	*s = MY(b);

	return (int)EXEC(s, MY_CONFLICT, NULL, NULL,
	    TXT(s->cf->endpoints[endpoint].name), TXT(ev->key), TXT(ev->hash),
	    NUM(ev->received_at));
}

/* When ev's row ends its retention: NULL if it is kept forever. */
static struct mybind
expires_of(const struct conf_endpoint *ep, const struct event *ev)
{
	return ep->retention < 0 ? (struct mybind)NUL :
	    (struct mybind)NUM(ev->received_at + ep->retention);
}

/* INSERT ... ON DUPLICATE KEY UPDATE id = id on UNIQUE (endpoint,
 * event_key): one affected row is ours; none is a key claimed by
 * another transaction, whose commit InnoDB made us wait for. */
static int
my_insert(struct store *b, size_t endpoint, const struct event *ev,
    long long now, int *isnew)
{
	struct mystore			*s = MY(b);
	const struct conf_endpoint	*ep = &s->cf->endpoints[endpoint];
	const struct mybind		 expires = expires_of(ep, ev);
	long long			 n = 0;
	unsigned int			 e;

	if (ep->deferred)
		e = EXEC(s, MY_INSERT_RECEIVED, NULL, &n, TXT(ep->name),
		    TXT(ev->key), TXT(ev->type), TXT(ev->hash),
		    BYTES(ev->payload, ev->payloadsz), NUM(ev->received_at),
		    expires, NUM(now + STORE_CLAIMER_FIRST));
	else
		e = EXEC(s, MY_INSERT, NULL, &n, TXT(ep->name), TXT(ev->key),
		    TXT(ev->type), TXT(ev->hash), BYTES(ev->payload,
		    ev->payloadsz), NUM(ev->received_at), NUM(now), expires);
	*isnew = n > 0;
	return (int)e;
}

static int
my_savepoint(struct store *b, enum engine_sp step)
{
	struct mystore	*s = MY(b);
	unsigned int	 e;

	switch (step) {
	case ENGINE_SP_SET:
		return (int)run(s, "SAVEPOINT claim");
	case ENGINE_SP_KEEP:
		return (int)run(s, "RELEASE SAVEPOINT claim");
	default:
		if ((e = run(s, "ROLLBACK TO SAVEPOINT claim")) != 0)
			return (int)e;
		return (int)run(s, "RELEASE SAVEPOINT claim");
	}
}

/* An actions file that does not load fails its claims alone (a
 * deferred endpoint's run later, by work). */
static enum hook_err
my_ready(struct store *b, size_t endpoint, const struct event *ev, char *why,
    size_t whysz)
{
	struct mystore	*s = MY(b);

	if ((ev != NULL && s->cf->endpoints[endpoint].deferred) ||
	    load_actions(s, endpoint, why, whysz) == 0)
		return HOOK_OK;
	return HOOK_ECONF;
}

static enum hook_err
my_actions(struct store *b, size_t endpoint, const struct event *ev,
    int *code, char *why, size_t whysz)
{
	struct mystore	*s = MY(b);

	*code = 0;
	/* Loaded again after a new connection (reconnect()). */
	if (load_actions(s, endpoint, why, whysz) == -1)
		return HOOK_ECONF;
	if ((*code = (int)myactions_run(s->acts[endpoint],
	    s->cf->endpoints[endpoint].name, ev, why, whysz)) == 0)
		return HOOK_OK;
	return mydb_classify((unsigned int)*code) == HOOK_EBUSY ? HOOK_EBUSY :
	    HOOK_EACTION;
}

/* Nothing is done yet: a connection found lost (the server restarted,
 * or closed it idle) is made again, once. */
static int
my_tx_begin(struct store *b)
{
	struct mystore	*s = MY(b);
	unsigned int	 e;

	if ((e = run(s, "START TRANSACTION")) != 0 && mydb_lost(s->db) &&
	    reconnect(s) == 0)
		e = run(s, "START TRANSACTION");
	return (int)e;
}

static int
my_tx_commit(struct store *b)
{
	return (int)run(MY(b), "COMMIT");
}

/* Never on a lost connection: a reconnect must not happen in the
 * middle of a transaction. */
static void
my_tx_rollback(struct store *b)
{
	if (!MY(b)->broken)
		rollback(MY(b));
}

static void
my_tx_end(struct store *b)
{
	(void)b;
}

static enum hook_err
my_classify(struct store *b, int code)
{
	(void)b;
	return mydb_classify((unsigned int)code);
}

/* A statement's own error (a value its column refuses, a packet too
 * large) undid that statement only; a deadlock or a lost connection
 * ended the transaction. */
static enum engine_end
my_ended(struct store *b, int code)
{
	struct mystore	*s = MY(b);

	if (mydb_lost(s->db) || s->broken)
		return ENGINE_LOST;
	return mydb_deadlock((unsigned int)code) ? ENGINE_AGAIN :
	    ENGINE_STATEMENT;
}

static void
my_note(struct store *b, int code)
{
	(void)b;
	(void)code;		/* run() marks a lost connection */
}

static void
my_why(struct store *b, const char *step, char *buf, size_t bufsz)
{
	my_why_of(MY(b), step, buf, bufsz);
}

/* A request's first statement failed on a lost connection: a new one,
 * once. */
static int
my_revive(struct store *b, int code)
{
	(void)code;
	return mydb_lost(MY(b)->db) ? reconnect(MY(b)) : -1;
}

static long long
mys_list(struct store *b, const char *endpoint, const char *key,
    const char *status, long long limit, int with_payload, store_row_fn fn,
    void *arg, char *err, size_t errsz)
{
	struct mystore		*s = MY(b);
	struct myres		*r = NULL;
	struct myrow		 row;
	struct store_row	 sr;
	long long		 n = 0;

	if (EXEC(s, MY_LIST, &r, NULL, NUM(with_payload), TXT(endpoint),
	    TXT(endpoint), TXT(key), TXT(key), TXT(status), TXT(status),
	    NUM(limit)) != 0) {
		snprintf(err, errsz, "%s", mydb_error(s->db));
		return -1;
	}
	while (mydb_next(r, &row)) {
		sr.endpoint = row.v[0];
		sr.key = row.v[1];
		sr.type = row.v[2];
		sr.payload_hash = row.v[3];
		sr.status = row.v[4];
		sr.payload = row.v[5];
		sr.received_at = mydb_int(&row, 6, 0);
		sr.processed_at = mydb_int(&row, 7, -1);
		sr.expires_at = mydb_int(&row, 8, -1);
		sr.attempts = mydb_int(&row, 9, 0);
		sr.last_error = row.v[10];
		sr.next_at = mydb_int(&row, 11, -1);
		fn(arg, &sr);
		n++;
	}
	mydb_free(r);
	return n;
}

/* engine_ops.prune. */
static int
my_prune(struct store *b, enum engine_prune what, long long before,
    const char *arg, int count_only, long long *n)
{
	static const enum myst	 w[][2] = {
		[ENGINE_PRUNE_EVENTS] = { MY_PRUNE, MY_PRUNE_COUNT },
		[ENGINE_PRUNE_GUARDS] = { MY_PRUNE_GUARDS, MY__MAX },
		[ENGINE_PRUNE_FAILURES] = { MY_PRUNE_FAILURES, MY__MAX },
		[ENGINE_PRUNE_CONFLICTS] = { MY_PRUNE_CONFLICTS,
		    MY_PRUNE_CONFLICTS_COUNT },
	};
	const struct mybind	 v[] = { NUM(before), TXT(arg) };
	enum myst		 q = w[what][count_only != 0];
	size_t			 nv = what == ENGINE_PRUNE_GUARDS ? 0 :
				     what == ENGINE_PRUNE_FAILURES ? 1 : 2;

	*n = 0;
	if (q == MY__MAX)
		return 0;
	return (int)(count_only ? my_count(MY(b), q, v, nv, n) : my_exec(MY(b), q,
	    v, nv, NULL, n));
}

static int
mys_rows(struct store *b, long long now, struct store_counts *rows,
    char *err, size_t errsz)
{
	struct mystore	*s = MY(b);
	struct myres	*r = NULL;
	struct myrow	 row;
	unsigned int	 e;
	size_t		 i;
	int		 pass;

	memset(rows, 0, s->cf->nendpoints * sizeof(*rows));
	for (pass = 0; pass < 2; pass++) {
		e = pass == 0 ? EXEC(s, MY_ROWS, &r, NULL, NUM(now - 600),
		    NUM(now)) : my_exec(s, MY_ROWS_CONFLICTS, NULL, 0, &r, NULL);
		if (e != 0) {
			snprintf(err, errsz, "counting rows: %s",
			    mydb_error(s->db));
			return -1;
		}
		while (mydb_next(r, &row))
			for (i = 0; i < s->cf->nendpoints; i++) {
				if (row.v[0] == NULL ||
				    strcmp(s->cf->endpoints[i].name,
				    row.v[0]) != 0)
					continue;
				if (pass == 1) {
					rows[i].conflicts += mydb_int(&row, 1,
					    0);
					continue;
				}
				rows[i].events += mydb_int(&row, 1, 0);
				rows[i].processed += mydb_int(&row, 2, 0);
				rows[i].received += mydb_int(&row, 3, 0);
				rows[i].failed += mydb_int(&row, 4, 0);
				rows[i].dead += mydb_int(&row, 5, 0);
				rows[i].overdue += mydb_int(&row, 6, 0);
				rows[i].expired += mydb_int(&row, 7, 0);
			}
		mydb_free(r);
		r = NULL;
	}
	return 0;
}


static int
my_count_failure(struct store *b, size_t endpoint, const struct event *ev,
    const char *error, long long now, long long *attempts)
{
	struct mystore	*s = MY(b);
	const char	*name = s->cf->endpoints[endpoint].name;
	unsigned int	 e;

	if ((e = EXEC(s, MY_COUNT_FAILURE, NULL, NULL, TXT(name), TXT(ev->key),
	    TXT(error), NUM(now), NUM(now))) != 0)
		return (int)e;
	return (int)COUNT(s, MY_FAILURES_OF, attempts, TXT(name),
	    TXT(ev->key));
}

/* With the replay guard's row, as a claim's: a later key of the same
 * payload finds it. */
static int
my_park(struct store *b, size_t endpoint, const struct event *ev,
    const char *error, long long attempts, long long next_at, int *parked)
{
	struct mystore			*s = MY(b);
	const struct conf_endpoint	*ep = &s->cf->endpoints[endpoint];
	const struct mybind		 expires = expires_of(ep, ev);
	long long			 n = 0;
	unsigned int			 e;
	int				 isnew;

	if ((e = EXEC(s, MY_PARK, NULL, &n, TXT(ep->name), TXT(ev->key),
	    TXT(ev->type), TXT(ev->hash), BYTES(ev->payload, ev->payloadsz),
	    NUM(ev->received_at), expires, NUM(attempts), TXT(error),
	    NUM(next_at))) != 0)
		return (int)e;
	*parked = n > 0;
	if (*parked && ep->replay_guard &&
	    (e = guard_row(s, ep->name, ev, &isnew)) != 0)
		return (int)e;
	return (int)EXEC(s, MY_FORGET_FAILURES, NULL, NULL, TXT(ep->name),
	    TXT(ev->key));
}

static int
my_run_failed(struct store *b, long long id, const char *error,
    long long max, long long next_at)
{
	return (int)EXEC(MY(b), MY_RUN_FAILED, NULL, NULL, TXT(error),
	    NUM(max), NUM(next_at), NUM(max), NUM(id));
}

static int
my_processed(struct store *b, long long id, long long now, long long attempts,
    int *changed)
{
	long long	 n = 0;
	unsigned int	 e;

	e = EXEC(MY(b), MY_PROCESSED, NULL, &n, NUM(now), NUM(attempts),
	    NUM(id));
	*changed = n == 1;
	return (int)e;
}

/*
 * The row is taken under its lock (FOR UPDATE), skipping rows another
 * runner holds (SKIP LOCKED, where the server has it): runners on
 * several hosts share the events, each run once.
 */
static int
my_take(struct store *b, const char *endpoint, const char *key,
    long long now, long long lead, int skip, struct store_taken *t,
    int *found)
{
	struct mystore	*s = MY(b);
	struct myres	*r = NULL;
	struct myrow	 row;
	unsigned int	 e;

	*found = 0;
	if (endpoint != NULL)
		e = EXEC(s, skip ? MY_TAKE_KEY_SKIP : MY_TAKE_KEY, &r, NULL,
		    TXT(endpoint), TXT(key));
	else
		e = EXEC(s, MY_TAKE_DUE, &r, NULL, NUM(now), NUM(lead),
		    TXT(s->names));
	if (e != 0)
		return (int)e;
	if (mydb_next(r, &row)) {
		if (store_taken_fill(s->cf, t, mydb_int(&row, 0, 0), row.v[1],
		    row.v[2], row.v[3], row.v[4], row.v[5], row.len[5],
		    mydb_int(&row, 6, 0), mydb_int(&row, 7, 0), row.v[8]) == -1)
			e = MYDB_OOM;
		else
			*found = 1;
	}
	mydb_free(r);
	return (int)e;
}

/*
 * A work runner's lease (engine_ops.lease), outside any transaction: the
 * oldest due events by a plain read, each then leased in a transaction
 * of its own: its row locked without waiting (SKIP LOCKED, or NOWAIT),
 * so that one another run holds (a claimer running it, a replay) is
 * passed by, not waited for past innodb_lock_wait_timeout; then an
 * update that holds only if it is still due.  No row is locked beyond
 * that one, so runners on one server, and on several nodes of a Galera
 * cluster (where SKIP LOCKED sees only its own node's locks), take
 * different events; two updates of one row on two nodes meet at
 * certification, and the loser (a deadlock) passes to the next.
 */
static int
my_lease(struct store *b, long long now, long long lead, long long until,
    char *name, size_t namesz, char *key, size_t keysz, int *found)
{
	struct mystore	*s = MY(b);
	struct myres	*r = NULL;
	struct myrow	 row;
	struct {
		long long	 id;
		char		 name[CONF_NAME_MAX];
		char		 key[EVENT_KEY_MAX + 1];
	}		 c[8];
	long long	 n;
	size_t		 nc = 0, i;
	unsigned int	 e;
	int		 raced = 0, locked;

	*found = 0;
	if ((e = EXEC(s, MY_DUE, &r, NULL, NUM(now), NUM(lead),
	    TXT(s->names))) != 0)
		return (int)e;
	while (nc < sizeof(c) / sizeof(c[0]) && mydb_next(r, &row)) {
		c[nc].id = mydb_int(&row, 0, 0);
		/* Longer than the limits (conf.c's, the claim's): never
		 * found by its key; an error, not a lease of another. */
		if (row.v[1] == NULL || row.v[2] == NULL ||
		    row.len[1] >= sizeof(c[nc].name) ||
		    row.len[2] >= sizeof(c[nc].key)) {
			snprintf(s->why, sizeof(s->why), "event id %lld: its "
			    "endpoint or key is longer than oncehook's limits",
			    c[nc].id);
			mydb_free(r);
			return MY_TOO_LONG;
		}
		memcpy(c[nc].name, row.v[1], row.len[1] + 1);
		memcpy(c[nc].key, row.v[2], row.len[2] + 1);
		nc++;
	}
	mydb_free(r);
	for (i = 0; i < nc; i++) {
		if (strlen(c[i].name) >= namesz || strlen(c[i].key) >= keysz) {
			snprintf(s->why, sizeof(s->why), "event id %lld: its "
			    "endpoint or key is longer than the lease's room",
			    c[i].id);
			return MY_TOO_LONG;
		}
		n = 0;
		locked = 0;
		if ((e = run(s, "START TRANSACTION")) != 0)
			return (int)e;
		r = NULL;
		if ((e = EXEC(s, MY_LEASE_LOCK, &r, NULL,
		    NUM(c[i].id))) == 0) {
			locked = !mydb_next(r, &row);	/* skipped */
			mydb_free(r);
		}
		if (e == 0 && !locked)
			e = EXEC(s, MY_LEASE_RUN, NULL, &n, NUM(until),
			    NUM(c[i].id), NUM(now), NUM(lead));
		if (e == 0 && n == 1)
			e = run(s, "COMMIT");
		if (e != 0 || n != 1)
			my_tx_rollback(b);
		if (e != 0 && lock_held(e))
			continue;	/* another run's (NOWAIT) */
		if (e != 0 && mydb_deadlock(e)) {
			raced = 1;	/* another runner's, on another node */
			continue;
		}
		if (e != 0)
			return (int)e;
		if (n == 1) {
			memcpy(name, c[i].name, strlen(c[i].name) + 1);
			memcpy(key, c[i].key, strlen(c[i].key) + 1);
			*found = 1;
			return 0;
		}
		if (!locked)
			raced = 1;	/* run, or leased, by another */
	}
	*found = raced ? 2 : 0;
	return 0;
}

/*
 * The server, and what the connection's user may do in the database:
 * the privileges shown to it (its own, through a role or a wildcard
 * database grant too), at least SELECT, INSERT, UPDATE and DELETE;
 * every section of the actions prepared.
 */
static int
mys_about(struct store *b, char *buf, size_t bufsz)
{
	static const char *const need[] = {
		"SELECT", "INSERT", "UPDATE", "DELETE", NULL
	};
	struct mystore	*s = MY(b);
	struct myres	*r = NULL;
	struct myrow	 row;
	char		 have[512] = " ", missing[64] = "";
	long long	 packet = 0, room;
	size_t		 i, copies = 1;

	/* A table of oncehook's replaced by a site's after init. */
	if (foreign(s, buf, bufsz) == -1)
		return -1;
	if (EXEC(s, MY_PRIVILEGES, &r, NULL, TXT(s->p)) != 0) {
		snprintf(buf, bufsz, "%s: reading its privileges: %s",
		    mydb_server(s->db), mydb_error(s->db));
		return -1;
	}
	while (mydb_next(r, &row))
		if (row.v[0] != NULL && strlen(have) + strlen(row.v[0]) + 2 <
		    sizeof(have)) {
			strcat(have, row.v[0]);
			strcat(have, " ");
		}
	mydb_free(r);
	for (i = 0; need[i] != NULL; i++)
		if (strstr(have, need[i]) == NULL && strstr(have,
		    "ALL PRIVILEGES") == NULL)
			snprintf(missing + strlen(missing), sizeof(missing) -
			    strlen(missing), "%s%s", missing[0] ? ", " : "",
			    need[i]);
	if (missing[0] != '\0') {
		snprintf(buf, bufsz, "%s: the user lacks %s on this database "
		    "(docs/stores.md)", mydb_server(s->db),
		    missing);
		return -1;
	}
	for (i = 0; i < s->cf->nendpoints; i++) {
		if (load_actions(s, i, buf, bufsz) == -1 ||
		    myactions_prepare_all(s->acts[i], buf, bufsz) == -1)
			return -1;
		if (myactions_payloads(s->acts[i]) > copies)
			copies = myactions_payloads(s->acts[i]);
	}
	/* A body must fit in one packet as many times as one statement
	 * binds :payload (the claim's insert: once; an action's: as
	 * often as it names it). */
	room = (long long)copies * s->cf->maxbody + 65536;
	if (my_count(s, MY_PACKET, NULL, 0, &packet) == 0 && packet < room) {
		snprintf(buf, bufsz, "%s: max_allowed_packet is %lld bytes; "
		    "a body of ONCEHOOK_MAX_BODY (%lld) bound %zu times by "
		    "one action's statement needs %lld: raise it on the "
		    "server, or lower ONCEHOOK_MAX_BODY", mydb_server(s->db),
		    packet, s->cf->maxbody, copies, room);
		return -1;
	}
	snprintf(buf, bufsz, "%s, %s, tables %s*", mydb_server(s->db),
	    mydb_tls(s->db), s->p);
	return 0;
}

static const struct store_ops mys_ops = {
	.engine = "MariaDB/MySQL",
	.caps = ENGINE_STATEMENT_ALONE | ENGINE_ROW_LOCKS |
	    ENGINE_DIRECT_CLAIM,
	.classify = my_classify,
	.ended = my_ended,
	.note = my_note,
	.why = my_why,
	.usable = NULL,
	.revive = my_revive,
	.tx_begin = my_tx_begin,
	.tx_commit = my_tx_commit,
	.tx_rollback = my_tx_rollback,
	.tx_end = my_tx_end,
	.savepoint = my_savepoint,
	.find_key = my_find_key,
	.find_payload = my_find_payload,
	.guard = my_guard,
	.insert = my_insert,
	.conflict = my_conflict,
	.ready = my_ready,
	.actions = my_actions,
	.tx_begin_deferred = NULL,
	.take = my_take,
	.lease = my_lease,
	.processed = my_processed,
	.run_failed = my_run_failed,
	.count_failure = my_count_failure,
	.park = my_park,
	.ob_pick = my_ob_pick,
	.ob_lease = my_ob_lease,
	.ob_settle = my_ob_settle,
	.version = mys_version,
	.about = mys_about,
	.broken = mys_broken,
	.idle = mys_idle,
	.upkeep = NULL,		/* the server keeps its own caches and log */
	.close = mys_close,
	.list = mys_list,
	.prune = my_prune,
	.rows = mys_rows,
	.ob_retry = mys_ob_retry,
	.ob_list = mys_ob_list,
	.ob_topics = mys_ob_topics,
	.ob_prune = mys_ob_prune,
};
