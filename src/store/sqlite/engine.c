/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the SQLite store (see store/store.h).  With store/sqlite/actions.c, the SQLite
 * room.
 *
 * Every statement is prepared once, in sqs_connect(), and reset after
 * each use; for a CGI process (STORE_SECTIONS: one request), each on its
 * first use instead (sq_stmt()), so that a duplicate prepares one.
 * Errors are classified once, in sq_classify(): a database that is busy
 * past the timeout, full, read-only or failing I/O is HOOK_EBUSY (the
 * provider should retry: 503); anything else is HOOK_ESYSTEM.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "conf.h"
#include "lib/log.h"
#include "pipeline/event.h"
#include "store/actfile.h"
#include "store/migrations.h"
#include "store/sqlite/actions.h"
#include "store/sqlite/engine.h"
#include "store/sqlite/library.h"
#include "store/sqlite/vfs.h"
#include "store/sqlite/walguard.h"
#include "store/store.h"

static const struct store_ops sqs_ops;
static void	sqs_close(struct store *);



/* guarded IS NOT 0: the term of the payload index's WHERE, without
 * which SQLite would not read that partial index. */
const char sq_payload[] = "SELECT status IN ('failed', 'dead') FROM events"
    " WHERE endpoint = ?1 AND payload_hash = ?2 AND type IS ?3"
    " AND key <> ?4 AND guarded IS NOT 0 LIMIT 1";

static const char *const sqls[ST__MAX] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_SAVEPOINT] = "SAVEPOINT claim",
	[ST_RELEASE] = "RELEASE claim",
	[ST_ROLLBACK_TO] = "ROLLBACK TO claim",
	/* guarded (?10): whether the payload index holds the row
	 * (sql/migrations/008-guard-index.sql). */
	[ST_INSERT] = "INSERT INTO events (endpoint, key, type, payload_hash,"
	    " payload, received_at, processed_at, expires_at, guarded)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?10)"
	    " ON CONFLICT (endpoint, key) DO NOTHING",
	/* Due for work 10 s on: the claiming process runs it first. */
	[ST_INSERT_RECEIVED] = "INSERT INTO events (endpoint, key, type,"
	    " payload_hash, payload, received_at, expires_at, status,"
	    " attempts, next_at, guarded)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?8, 'received', 0, ?7 + ?9,"
	    " ?10)"
	    " ON CONFLICT (endpoint, key) DO NOTHING",
	[ST_LOOKUP] = "SELECT payload_hash, payload = ?3,"
	    " status IN ('failed', 'dead') FROM events"
	    " WHERE endpoint = ?1 AND key = ?2",
	[ST_PAYLOAD] = sq_payload,
	/* The event stored under the key the signature covers. */
	[ST_SIGNED] = "SELECT status IN ('failed', 'dead') FROM events"
	    " WHERE endpoint = ?1 AND key = ?4 AND payload_hash = ?2"
	    " AND type IS ?3",
	[ST_CONFLICT] = "INSERT INTO conflicts (endpoint, key, payload_hash,"
	    " received_at) VALUES (?1, ?2, ?3, ?4)",
};


enum hook_err
sq_classify(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return HOOK_OK;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
	case SQLITE_FULL:
	case SQLITE_READONLY:
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
	case SQLITE_PROTOCOL:
	case SQLITE_NOLFS:
		return HOOK_EBUSY;
	default:
		return HOOK_ESYSTEM;
	}
}

/* Note in s whether error rc calls for a new connection. */
void
sq_note(struct sqstore *s, int rc)
{
	switch (rc & 0xff) {
	case SQLITE_READONLY:
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		s->broken = 1;
		break;
	default:
		break;
	}
}

static int
sqs_broken(const struct store *b)
{
	const struct sqstore	*s = (const struct sqstore *)b;
	return s->broken;
}

/*
 * Statement which into *st, prepared now if it is not yet (one
 * request's store prepares each on its first use).  An SQLite code: the
 * prepare's failure (logged), which the caller returns as it would a
 * failed step, *st untouched by anyone.
 */
int
sq_stmt(struct sqstore *s, enum st which, sqlite3_stmt **st)
{
	int	 rc;

	if (s->st[which] == NULL && (rc = sqlite3_prepare_v3(s->db,
	    sqls[which], -1, SQLITE_PREPARE_PERSISTENT, &s->st[which],
	    NULL)) != SQLITE_OK) {
		log_warnx("store: %s: preparing \"%s\": %s", s->cf->db,
		    sqls[which], sqlite3_errmsg(s->db));
		s->st[which] = NULL;
		return rc;
	}
	*st = s->st[which];
	return SQLITE_OK;
}

/* Step a statement that returns no row, then reset it. */
int
sq_run(struct sqstore *s, enum st which)
{
	sqlite3_stmt	*st;
	int		 rc;

	if ((rc = sq_stmt(s, which, &st)) != SQLITE_OK)
		return rc;
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

/*
 * BEGIN IMMEDIATE, after waiting in the kernel for oncehook's write lock
 * (store/sqlite/walguard.h); SQLite's busy handler has what is left of the timeout
 * for other writers.  An SQLite code; SQLITE_BUSY with s->lock_timeout
 * set if the wait ran out.  sq_end() lets go after COMMIT or ROLLBACK.
 */
int
sq_begin(struct sqstore *s)
{
	long	 waited, busy = (long)s->cf->busy_ms;
	int	 rc;

	s->lock_timeout = 0;
	if (walguard_lock(&s->wg, busy, &waited) == 1) {
		s->lock_timeout = waited;
		return SQLITE_BUSY;
	}
	if (waited > 0)
		sqlite3_busy_timeout(s->db, waited < busy ? (int)(busy -
		    waited) : 1);
	rc = sq_run(s, ST_BEGIN);
	if (waited > 0)
		sqlite3_busy_timeout(s->db, (int)busy);
	return rc;
}

void
sq_end(struct sqstore *s)
{
	walguard_unlock(&s->wg);
}

/* COMMIT, unless the file moved (rule 5: nothing is committed into a
 * file that is no longer the database): SQLITE_IOERR then. */
int
sq_commit(struct sqstore *s)
{
	return sq_moved(s) ? SQLITE_IOERR : sq_run(s, ST_COMMIT);
}

/* The reason for a failed transaction, for a claim's why. */
void
sq_why(struct sqstore *s, const char *step, char *buf, size_t bufsz)
{
	if (s->moved)
		snprintf(buf, bufsz, "%s: the database moved", step);
	else if (s->lock_timeout > 0)
		snprintf(buf, bufsz, "%s: other oncehook processes held the "
		    "write lock for %ld ms (ONCEHOOK_BUSY_TIMEOUT_MS)", step,
		    s->lock_timeout);
	else
		snprintf(buf, bufsz, "%s: %s", step, sqlite3_errmsg(s->db));
}

int
store_version(void)
{
	return (int)nmigrations;
}

/* PRAGMA user_version into *v; an SQLite code. */
static int
user_version(sqlite3 *db, int *v)
{
	sqlite3_stmt	*st;
	int		 rc;

	if ((rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st,
	    NULL)) != SQLITE_OK)
		return rc;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*v = sqlite3_column_int(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

/* Create the file with mode 0600 if it does not exist. */
static int
create_file(const char *path, char *err, size_t errsz)
{
	int	 fd;

	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1) {
		if (errno == EEXIST)
			return 0;
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* Apply migrations past the current version and the action setups. */
static int
migrate(struct sqstore *s, char *err, size_t errsz)
{
	char	*msg = NULL;
	char	 sql[64];
	int	 v = 0, rc;
	size_t	 i, done = 0, len;

	if ((rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL,
	    NULL)) != SQLITE_OK) {
		snprintf(err, errsz, "%s: %s", s->cf->db,
		    sqlite3_errmsg(s->db));
		return -1;
	}
	if ((rc = user_version(s->db, &v)) != SQLITE_OK)
		goto fail;
	if (v > (int)nmigrations) {
		snprintf(err, errsz, "%s: schema version %d is newer than "
		    "this oncehook's (%zu): upgrade oncehook", s->cf->db, v,
		    nmigrations);
		goto out;
	}
	for (i = (size_t)v; i < nmigrations; i++) {
		if ((rc = sqlite3_exec(s->db, migrations[i].sql, NULL, NULL,
		    &msg)) != SQLITE_OK) {
			snprintf(err, errsz, "%s: migration %s: %s", s->cf->db,
			    migrations[i].name, msg ? msg : "failed");
			goto out;
		}
		log_info("%s: applied migration %s", s->cf->db,
		    migrations[i].name);
		done++;
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %zu", nmigrations);
	if ((rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL)) != SQLITE_OK)
		goto fail;
	/* Our schema is in place: from here on, the guard watches. */
	actions_guard(s->db, &s->guard);
	for (i = 0; i < s->cf->nendpoints; i++) {
		if (conf_actions_first(s->cf, i) < i)
			continue;
		if (actions_setup(s->db, &s->guard, s->cf->endpoints[i].actions,
		    err, errsz) != SQLITE_OK)
			goto out;
	}
	if ((rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL)) ==
	    SQLITE_OK)
		return 0;
fail:
	snprintf(err, errsz, "%s: %s", s->cf->db, sqlite3_errmsg(s->db));
out:
	sqlite3_free(msg);
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	/* The log said "applied": say that none of it was kept. */
	if (done > 0 && (len = strlen(err)) < errsz)
		snprintf(err + len, errsz - len, " (rolled back: the "
		    "migrations logged as applied were not kept)");
	return -1;
}

/* Set the connection's pragmas; the database must be in WAL mode. */
static int
pragmas(struct sqstore *s, char *err, size_t errsz)
{
	sqlite3_stmt	*st = NULL;
	const char	*mode;
	char		 sql[128];
	int		 rc, ok = 0;

	if ((rc = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1,
	    &st, NULL)) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    (mode = (const char *)sqlite3_column_text(st, 0)) != NULL)
		ok = strcmp(mode, "wal") == 0;
	sqlite3_finalize(st);
	if (!ok) {
		snprintf(err, errsz, "%s: cannot use WAL mode: %s", s->cf->db,
		    sqlite3_errmsg(s->db));
		return -1;
	}
	snprintf(sql, sizeof(sql), "PRAGMA synchronous = %s; "
	    "PRAGMA foreign_keys = ON%s", s->cf->synchronous_full ? "FULL" :
	    "NORMAL", s->sections ? "; PRAGMA journal_size_limit = 0" : "");
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errsz, "%s: %s", s->cf->db,
		    sqlite3_errmsg(s->db));
		return -1;
	}
	/*
	 * A CGI process is often the database's only user: SQLite would
	 * create the -wal and -shm at its open and, after the checkpoint
	 * at its close, delete them, at every request (two files made,
	 * grown and unlinked).  They are kept instead; the checkpointed
	 * log is cut to nothing (journal_size_limit 0), as deleting it
	 * did, so no page of it outlives the close that copied it into
	 * the database, and the next first user rebuilds the -shm from
	 * an empty log.  Long-lived processes keep their files open.
	 */
	if (s->sections)
		(void)sqlite3_file_control(s->db, "main",
		    SQLITE_FCNTL_PERSIST_WAL, &(int){ 1 });
	return 0;
}

/*
 * Endpoint i's actions, prepared unless they are already (shared with
 * the first endpoint that names the same file).  0, or -1 with err.
 */
static int
load_actions(struct sqstore *s, size_t i, char *err, size_t errsz)
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
	s->acts[i] = actions_load(s->db, &s->guard,
	    s->cf->endpoints[i].actions, s->sections ? ACTIONS_LAZY : 0, err,
	    errsz);
	if (s->acts[i] != NULL)
		return 0;
	/* No process ran that text: a fix is read at the next load. */
	actfile_forget(s->cf->endpoints[i].actions);
	return -1;
}

/* The configured endpoints as a JSON array, for work's pick (json_each):
 * another's events are not ours.  Names are letters, digits, - and _. */
static char *
endpoint_names(const struct conf *cf)
{
	size_t	 i, n = 3, o = 0;
	char	*p;

	for (i = 0; i < cf->nendpoints; i++)
		n += strlen(cf->endpoints[i].name) + 3;
	if ((p = malloc(n)) == NULL)
		return NULL;
	o += (size_t)snprintf(p, n, "[");
	for (i = 0; i < cf->nendpoints; i++)
		o += (size_t)snprintf(p + o, n - o, "%s\"%s\"", i ? "," : "",
		    cf->endpoints[i].name);
	snprintf(p + o, n - o, "]");
	return p;
}

/* Prepare our statements (unless one request's: sq_stmt()) and every
 * endpoint's actions (unless lazy). */
static int
prepare(struct sqstore *s, char *err, size_t errsz)
{
	size_t	 i;

	for (i = 0; i < ST__MAX && !s->sections; i++)
		if (sqlite3_prepare_v3(s->db, sqls[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) != SQLITE_OK) {
			snprintf(err, errsz, "%s: %s", s->cf->db,
			    sqlite3_errmsg(s->db));
			return -1;
		}
	if ((s->acts = calloc(s->cf->nendpoints, sizeof(*s->acts))) == NULL ||
	    (s->names = endpoint_names(s->cf)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	for (i = 0; i < s->cf->nendpoints && !s->lazy; i++)
		if (load_actions(s, i, err, errsz) == -1)
			return -1;
	return 0;
}

/*
 * A WAL database on a read-only file system whose -wal and -shm files
 * are gone (the last connection removed them on close) cannot be read
 * the usual way: SQLite would have to create them.  Every committed
 * transaction is then in the database file itself, so it is opened
 * immutable and read-only: retries are still answered from a read, and
 * a claim fails read-only (503).  Returns 0 if it did; -1 leaves s as it
 * was.
 */
static int
open_ro(struct sqstore *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	const unsigned char	*p;
	sqlite3			*db = NULL;
	char			*uri, *o;
	int			 v;

	if (sqlite3_db_readonly(s->db, "main") != 1 &&
	    access(s->cf->db, W_OK) == 0)
		return -1;
	if ((uri = malloc(strlen(s->cf->db) * 3 + 32)) == NULL)
		return -1;
	o = uri + sprintf(uri, "file:");
	for (p = (const unsigned char *)s->cf->db; *p != '\0'; p++)
		if (*p == '%' || *p == '?' || *p == '#' || *p < 0x21 ||
		    *p >= 0x7f) {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 0xf];
		} else
			*o++ = (char)*p;
	strcpy(o, "?immutable=1");
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
	    user_version(db, &v) != SQLITE_OK) {
		sqlite3_close(db);
		free(uri);
		return -1;
	}
	free(uri);
	sqlite3_close(s->db);
	s->db = db;
	sqlite3_extended_result_codes(s->db, 1);
	s->immutable = 1;
	s->broken = 1;		/* the next request tries read-write */
	return 0;
}

/*
 * Take the database file's byte before SQLite reads the -wal at its path
 * (store/sqlite/walguard.h): HOOK_EBUSY while another file's users still hold it.
 * s->dbid is the file guarded.
 */
static enum hook_err
guard(struct sqstore *s, char *err, size_t errsz)
{
	sq_fileid(s->cf->db, &s->dbid);
	if (s->dbid.ino == 0)
		return HOOK_OK;		/* SQLite says why */
	return walguard_take(&s->wg, s->cf->db, s->dbid.ino, err, errsz) ==
	    WALGUARD_FOREIGN ? HOOK_EBUSY : HOOK_OK;
}

enum hook_err
sqs_connect(const struct conf *cf, int flags, struct store **out, char *err,
    size_t errsz)
{
	struct sqstore	*s;
	struct fileid	 now;
	enum hook_err	 er = HOOK_ECONF;
	int		 v = 0, rc;

	*out = NULL;
	/* SQLite starts here, at the first store: a CGI request whose
	 * event goes to the writer never starts it (sqs_process_init()).
	 * Again at each store: a start since made "unix" the default. */
	(void)sqwal_register();		/* else SQLite's own, as it was */
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return HOOK_ESYSTEM;
	}
	s->base.ops = &sqs_ops;
	s->base.cf = cf;
	s->cf = cf;
	s->wg.fd = -1;
	s->lazy = (flags & STORE_LAZY) && !(flags & STORE_INIT);
	s->sections = s->lazy && (flags & STORE_SECTIONS);
	if (flags & STORE_INIT) {
		if (create_file(cf->db, err, errsz) == -1)
			goto err;
	} else if (access(cf->db, F_OK) == -1 && errno == ENOENT) {
		snprintf(err, errsz, "%s: no such database (run oncehook "
		    "init)", cf->db);
		goto err;
	}
	if ((er = guard(s, err, errsz)) != HOOK_OK)
		goto err;
	er = HOOK_ECONF;
	rc = sqlite3_open_v2(cf->db, &s->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errsz, "%s: %s", cf->db, s->db ?
		    sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		er = sq_classify(rc);
		goto err;
	}
	/* The file SQLite opened is the one guarded, before the log is read. */
	sq_fileid(cf->db, &now);
	if (s->wg.fd >= 0 && (now.ino != s->dbid.ino ||
	    now.dev != s->dbid.dev)) {
		snprintf(err, errsz, "%s: replaced while it was being opened",
		    cf->db);
		er = HOOK_EBUSY;
		goto err;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, (int)cf->busy_ms);
	/* The schema's version, read once (the file read-only without a
	 * -wal: read again through the immutable connection). */
	if (!(flags & STORE_INIT) && (rc = user_version(s->db, &v)) !=
	    SQLITE_OK && open_ro(s) == 0) {
		log_warnx("store: %s: read-only, with no -wal file: opened "
		    "as immutable; retries are answered, new events get 503",
		    cf->db);
		rc = user_version(s->db, &v);
	}
	if (flags & STORE_INIT) {
		if (pragmas(s, err, errsz) == -1 ||
		    migrate(s, err, errsz) == -1)
			goto err;
	} else {
		if (rc != SQLITE_OK) {
			snprintf(err, errsz, "%s: %s", cf->db,
			    sqlite3_errmsg(s->db));
			er = sq_classify(rc);
			goto err;
		}
		if (v > (int)nmigrations) {
			snprintf(err, errsz, "%s: schema version %d is newer "
			    "than this oncehook's (%zu): refusing it", cf->db,
			    v, nmigrations);
			goto err;
		}
		if (v < (int)nmigrations) {
			snprintf(err, errsz, "%s: schema version %d, this "
			    "oncehook wants %zu: run oncehook init", cf->db, v,
			    nmigrations);
			goto err;
		}
		/*
		 * SQLite falls back to read-only when it cannot write.  Such
		 * a connection still answers retries from a read, but must
		 * not be kept: the file may be writable by the next request.
		 */
		if (sqlite3_db_readonly(s->db, "main") == 1)
			s->broken = 1;
		if (!s->immutable && pragmas(s, err, errsz) == -1)
			goto err;
		actions_guard(s->db, &s->guard);
	}
	if (prepare(s, err, errsz) == -1)
		goto err;
	if (!s->immutable)
		sqlite3_wal_hook(s->db, sq_on_wal, s);
	if (sq_sides(s) == -1) {
		snprintf(err, errsz, "out of memory");
		er = HOOK_ESYSTEM;
		goto err;
	}
	*out = &s->base;
	return HOOK_OK;
err:
	sqs_close(&s->base);
	return er;
}

static void
sqs_close(struct store *b)
{
	struct sqstore	*s = (struct sqstore *)b;
	size_t	 i;

	if (s == NULL)
		return;
	if (s->acts != NULL) {
		for (i = 0; i < s->cf->nendpoints; i++)
			if (conf_actions_first(s->cf, i) == i)
				actions_free(s->acts[i]);
		free(s->acts);
	}
	for (i = 0; i < ST__MAX; i++)
		sqlite3_finalize(s->st[i]);
	/* A moved store's paths are another file's now: hands off. */
	if (s->moved && s->db != NULL)
		(void)sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
		    1, NULL);
	sqlite3_close(s->db);
	walguard_release(&s->wg);	/* after the log is let go */
	for (i = 0; i < SIDE__MAX; i++)
		free(s->side[i]);
	free(s->names);
	free(s);
}

/*
 * store_leave(): a CGI process's connection, when another connection
 * has the same file open (its walguard byte), no transaction is open
 * and the file has not moved.  Then SQLite's close could not take the
 * file for itself to checkpoint the log (the other still reads it);
 * what it would do is free the parsed schema and statements and let go
 * of locks and files, which the exit does.  The last user closes, so
 * the log is still copied and cut at the last close (006-wal-files-kept).
 */
static int
sqs_leave(struct store *b)
{
	struct sqstore	*s = (struct sqstore *)b;

	return s->sections && !s->moved && !s->immutable && s->db != NULL &&
	    sqlite3_get_autocommit(s->db) && walguard_shared(&s->wg);
}

/*
 * The stored payload hash for (endpoint, key) compared with ev's
 * (engine_ops.find_key): the same bytes as the stored payload are
 * HOOK_DUP whatever the hash (they hash the same); without a hash
 * (ev->hash empty), other bytes are HOOK_ECONFLICT until asked again
 * with it (see event_parse()).
 */
static int
sq_find_key(struct store *b, size_t endpoint, const struct event *ev,
    enum hook_err *found)
{
	struct sqstore	*s = (struct sqstore *)b;
	sqlite3_stmt	*st;
	const char	*hash;
	int		 rc;

	if ((rc = sq_stmt(s, ST_LOOKUP, &st)) != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, s->cf->endpoints[endpoint].name, -1,
	    SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ev->key, -1, SQLITE_STATIC);
	if (ev->payload != NULL)
		sqlite3_bind_text(st, 3, ev->payload, (int)ev->payloadsz,
		    SQLITE_STATIC);
	rc = sqlite3_step(st);
	*found = HOOK_OK;
	if (rc == SQLITE_ROW) {
		hash = (const char *)sqlite3_column_text(st, 0);
		*found = sqlite3_column_int(st, 1) == 1 || (hash != NULL &&
		    strcmp(hash, ev->hash) == 0) ? HOOK_DUP : HOOK_ECONFLICT;
		if (*found == HOOK_DUP && sqlite3_column_int(st, 2) == 1)
			*found = HOOK_PARKED;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/*
 * Statement which (ST_PAYLOAD or ST_SIGNED) for endpoint name, ev's hash
 * and type, and key: *found 0 (no row), 1, or 2 (failed or dead).
 */
static int
sq_find_by(struct sqstore *s, enum st which, const char *name,
    const struct event *ev, const char *key, int *found)
{
	sqlite3_stmt	*st;
	int		 rc;

	*found = 0;
	if ((rc = sq_stmt(s, which, &st)) != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ev->hash, -1, SQLITE_STATIC);
	if (ev->type != NULL)
		sqlite3_bind_text(st, 3, ev->type, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_text(st, 4, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	*found = rc != SQLITE_ROW ? 0 : sqlite3_column_int(st, 0) ? 2 : 1;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/*
 * Is ev's payload recorded for endpoint with the same type, under
 * another key (engine_ops.find_payload)?  The type counts: Shopify
 * sends one order body as orders/create, orders/paid, orders/updated,
 * told apart by a header.  Under the write lock, it is also the replay
 * guard (engine_ops.guard): the lock serialises every claim.  The
 * payload index holds the events stored guarded (or before version 8);
 * one stored under the key its signature covers (struct event:
 * key_signed, stored unguarded) is found under ev->signed_key.
 */
static int
sq_find_payload(struct store *b, size_t endpoint, const struct event *ev,
    int *found)
{
	struct sqstore	*s = (struct sqstore *)b;
	const char	*name = s->cf->endpoints[endpoint].name;
	int		 rc;

	if ((rc = sq_find_by(s, ST_PAYLOAD, name, ev, ev->key, found)) !=
	    SQLITE_OK || *found)
		return rc;
	/* ev's own key is the claim's row, not another's. */
	if (ev->signed_key == NULL || strcmp(ev->signed_key, ev->key) == 0)
		return SQLITE_OK;
	return sq_find_by(s, ST_SIGNED, name, ev, ev->signed_key, found);
}

/* events.guarded for ev: 1 if the payload index is to hold it (the
 * guard would find it by no key its body's replay carries). */
static int
sq_indexed(const struct conf_endpoint *ep, const struct event *ev)
{
	return ep->replay_guard && !ev->key_signed;
}

static int
sq_conflict(struct store *b, size_t endpoint, const struct event *ev)
{
	struct sqstore	*s = (struct sqstore *)b;
	sqlite3_stmt	*st;
	int		 rc;

	if ((rc = sq_stmt(s, ST_CONFLICT, &st)) != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, s->cf->endpoints[endpoint].name, -1,
	    SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ev->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, ev->hash, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, ev->received_at);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Insert the event row (received, for a deferred endpoint: its actions
 * run later). */
static int
sq_insert(struct store *b, size_t endpoint, const struct event *ev,
    long long now, int *isnew)
{
	struct sqstore			*s = (struct sqstore *)b;
	const struct conf_endpoint	*ep = &s->cf->endpoints[endpoint];
	sqlite3_stmt			*st;
	int				 rc;

	if ((rc = sq_stmt(s, ep->deferred ? ST_INSERT_RECEIVED : ST_INSERT,
	    &st)) != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, ep->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ev->key, -1, SQLITE_STATIC);
	if (ev->type != NULL)
		sqlite3_bind_text(st, 3, ev->type, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_text(st, 4, ev->hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, ev->payload, (int)ev->payloadsz,
	    SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, ev->received_at);
	sqlite3_bind_int64(st, 7, now);
	if (ep->retention < 0)
		sqlite3_bind_null(st, 8);
	else
		sqlite3_bind_int64(st, 8, ev->received_at + ep->retention);
	if (ep->deferred)
		sqlite3_bind_int(st, 9, STORE_CLAIMER_FIRST);
	sqlite3_bind_int(st, 10, sq_indexed(ep, ev));
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return rc;
	*isnew = sqlite3_changes(s->db) > 0;
	return SQLITE_OK;
}

static int
sq_savepoint(struct store *b, enum engine_sp step)
{
	struct sqstore	*s = (struct sqstore *)b;
	int		 rc;

	switch (step) {
	case ENGINE_SP_SET:
		return sq_run(s, ST_SAVEPOINT);
	case ENGINE_SP_KEEP:
		return sq_run(s, ST_RELEASE);
	default:
		if ((rc = sq_run(s, ST_ROLLBACK_TO)) != SQLITE_OK)
			return rc;
		return sq_run(s, ST_RELEASE);
	}
}

/*
 * STORE_LAZY: an endpoint's actions on its first claim; with
 * STORE_SECTIONS (CGI), each section on the first event of its types,
 * none for a deferred endpoint (work runs them).  A database that could
 * not be read asks a retry (503).
 */
static enum hook_err
sq_ready(struct store *b, size_t endpoint, const struct event *ev, char *why,
    size_t whysz)
{
	struct sqstore	*s = (struct sqstore *)b;
	int		 rc;

	if (load_actions(s, endpoint, why, whysz) == 0 && (ev == NULL ||
	    !s->sections || s->cf->endpoints[endpoint].deferred ||
	    actions_ready(s->acts[endpoint], ev->type, why, whysz) == 0))
		return HOOK_OK;
	rc = sqlite3_errcode(s->db);
	sq_note(s, rc);
	return sq_classify(rc) == HOOK_EBUSY ? HOOK_EBUSY : HOOK_ECONF;
}

static enum hook_err
sq_actions(struct store *b, size_t endpoint, const struct event *ev,
    int *code, char *why, size_t whysz)
{
	struct sqstore	*s = (struct sqstore *)b;

	if ((*code = actions_run(s->acts[endpoint],
	    s->cf->endpoints[endpoint].name, ev, why, whysz)) == SQLITE_OK)
		return HOOK_OK;
	return sq_classify(*code) == HOOK_EBUSY ? HOOK_EBUSY : HOOK_EACTION;
}

/* Whether the file moved is asked at COMMIT (sq_commit()), where it
 * decides; a -shm that cannot be written, before BEGIN writes it (the
 * shared writer's claims come with no lookup first). */
static int
sq_tx_begin(struct store *b)
{
	struct sqstore	*s = (struct sqstore *)b;
	struct fileid	 shm;

	if (s->moved)
		return SQLITE_IOERR;
	if (!s->immutable && s->side[SIDE_SHM] != NULL) {
		sq_fileid(s->side[SIDE_SHM], &shm);
		if (sq_shm_immutable(s, &shm))
			return SQLITE_IOERR;
	}
	return sq_begin(s);
}

static int
sq_tx_commit(struct store *b)
{
	return sq_commit((struct sqstore *)b);
}

static void
sq_tx_rollback(struct store *b)
{
	struct sqstore	*s = (struct sqstore *)b;

	if (!sqlite3_get_autocommit(s->db))
		(void)sq_run(s, ST_ROLLBACK);
}

static void
sq_tx_end(struct store *b)
{
	sq_end((struct sqstore *)b);
}

static enum hook_err
sq_classify_b(struct store *b, int code)
{
	(void)b;
	return sq_classify(code);
}

/* SQLite rolls the whole transaction back itself on RAISE(ROLLBACK),
 * and after I/O errors, a full disk, out of memory. */
static enum engine_end
sq_ended(struct store *b, int code)
{
	(void)code;
	return sqlite3_get_autocommit(((struct sqstore *)b)->db) ?
	    ENGINE_TRANSACTION : ENGINE_STATEMENT;
}

static void
sq_note_b(struct store *b, int code)
{
	sq_note((struct sqstore *)b, code);
}

static void
sq_why_b(struct store *b, const char *step, char *buf, size_t bufsz)
{
	sq_why((struct sqstore *)b, step, buf, bufsz);
}

static int
sq_usable(struct store *b)
{
	return sq_moved((struct sqstore *)b) ? SQLITE_IOERR : SQLITE_OK;
}

static long long
sqs_list(struct store *b, const char *endpoint, const char *key,
    const char *status, long long limit, int with_payload, store_row_fn fn,
    void *arg, char *err, size_t errsz)
{
	struct sqstore	*s = (struct sqstore *)b;
	static const char	 sql[] = "SELECT endpoint, key, type,"
	    " payload_hash, status, CASE WHEN ?4 THEN payload END,"
	    " received_at, coalesce(processed_at, -1),"
	    " coalesce(expires_at, -1), attempts, last_error,"
	    " coalesce(next_at, -1)"
	    " FROM events WHERE (?1 IS NULL OR endpoint = ?1)"
	    " AND (?2 IS NULL OR key = ?2) AND (?5 IS NULL OR status = ?5)"
	    " ORDER BY id DESC LIMIT ?3";
	sqlite3_stmt		*st;
	struct store_row	 r;
	long long		 n = 0;
	int			 rc;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errsz, "%s", sqlite3_errmsg(s->db));
		return -1;
	}
	sqlite3_bind_text(st, 1, endpoint, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, limit);
	sqlite3_bind_int(st, 4, with_payload);
	sqlite3_bind_text(st, 5, status, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r.endpoint = (const char *)sqlite3_column_text(st, 0);
		r.key = (const char *)sqlite3_column_text(st, 1);
		r.type = (const char *)sqlite3_column_text(st, 2);
		r.payload_hash = (const char *)sqlite3_column_text(st, 3);
		r.status = (const char *)sqlite3_column_text(st, 4);
		r.payload = (const char *)sqlite3_column_text(st, 5);
		r.received_at = sqlite3_column_int64(st, 6);
		r.processed_at = sqlite3_column_int64(st, 7);
		r.expires_at = sqlite3_column_int64(st, 8);
		r.attempts = sqlite3_column_int64(st, 9);
		r.last_error = (const char *)sqlite3_column_text(st, 10);
		r.next_at = sqlite3_column_int64(st, 11);
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

/* Run sql (one statement, binding ?1 = a, ?2 = b) and step it once;
 * *out gets column 0 of a row, or the changes of a write.  SQLite code. */
static int
once(struct sqstore *s, const char *sql, long long a, const char *b,
    long long *out)
{
	sqlite3_stmt	*st;
	int		 rc;

	if ((rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL)) != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, a);
	if (b != NULL)
		sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	} else if (rc == SQLITE_DONE) {
		*out = sqlite3_changes(s->db);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

/* engine_ops.prune: SQLite has no guard rows (its guard is the write
 * lock). */
static int
sq_prune(struct store *b, enum engine_prune what, long long before,
    const char *arg, int count_only, long long *n)
{
	static const char *const sql[][2] = {
		[ENGINE_PRUNE_EVENTS] = { "DELETE FROM events WHERE id IN"
		    " (SELECT id FROM events WHERE expires_at < ?1"
		    " AND status IN ('processed', ?2) LIMIT 500)",
		    "SELECT count(*) FROM events"
		    " WHERE expires_at < ?1 AND status IN ('processed', ?2)" },
		[ENGINE_PRUNE_GUARDS] = { NULL, NULL },
		[ENGINE_PRUNE_FAILURES] = { "DELETE FROM failures WHERE"
		    " last_at < ?1 - " STORE_FAILURES_TTL, NULL },
		[ENGINE_PRUNE_CONFLICTS] = { "DELETE FROM conflicts WHERE id"
		    " IN (SELECT id FROM conflicts WHERE received_at < ?1"
		    " AND endpoint = ?2 LIMIT 500)",
		    "SELECT count(*) FROM conflicts WHERE"
		    " received_at < ?1 AND endpoint = ?2" },
	};
	const char	*q = sql[what][count_only != 0];

	*n = 0;
	return q != NULL ? once((struct sqstore *)b, q, before, arg, n) :
	    SQLITE_OK;
}

/* Add columns 1..n of each (endpoint, ...) row of sql to rows at the
 * offsets off[0..n). */
static int
rows_by_endpoint(struct sqstore *s, const char *sql, long long now,
    struct store_counts *rows, const size_t *off, size_t n)
{
	sqlite3_stmt	*st;
	const char	*name;
	size_t		 i, k;
	int		 rc;

	if ((rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL)) != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, now);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((name = (const char *)sqlite3_column_text(st, 0)) == NULL)
			continue;
		for (i = 0; i < s->cf->nendpoints; i++)
			if (strcmp(s->cf->endpoints[i].name, name) == 0)
				for (k = 0; k < n; k++)
					*(long long *)((char *)&rows[i] +
					    off[k]) += sqlite3_column_int64(st,
					    (int)k + 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int
sqs_rows(struct store *b, long long now, struct store_counts *rows,
    char *err, size_t errsz)
{
	struct sqstore	*s = (struct sqstore *)b;
	/* One scan of events for every count, one of conflicts. */
	static const char	 ev[] = "SELECT endpoint, count(*),"
	    " sum(status = 'processed'), sum(status = 'received'),"
	    " sum(status = 'failed'), sum(status = 'dead'),"
	    " sum(status = 'received' AND coalesce(next_at, 0) < ?1 - 600),"
	    " sum(status = 'processed' AND expires_at < ?1)"
	    " FROM events GROUP BY endpoint";
	static const size_t	 evoff[] = {
		offsetof(struct store_counts, events),
		offsetof(struct store_counts, processed),
		offsetof(struct store_counts, received),
		offsetof(struct store_counts, failed),
		offsetof(struct store_counts, dead),
		offsetof(struct store_counts, overdue),
		offsetof(struct store_counts, expired),
	};
	static const size_t	 cfoff[] = {
		offsetof(struct store_counts, conflicts),
	};
	int	 rc;

	memset(rows, 0, s->cf->nendpoints * sizeof(*rows));
	rc = sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = rows_by_endpoint(s, ev, now, rows, evoff,
		    sizeof(evoff) / sizeof(evoff[0]));
	if (rc == SQLITE_OK)
		rc = rows_by_endpoint(s, "SELECT endpoint, count(*) FROM"
		    " conflicts WHERE ?1 = ?1 GROUP BY endpoint", now, rows,
		    cfoff, 1);
	if (rc != SQLITE_OK) {
		snprintf(err, errsz, "counting rows: %s",
		    sqlite3_errmsg(s->db));
		sq_note(s, rc);
	}
	(void)sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : -1;
}


/* One more failed attempt of a key never stored (engine_ops). */
static int
sq_count_failure(struct store *b, size_t endpoint, const struct event *ev,
    const char *error, long long now, long long *attempts)
{
	struct sqstore	*s = (struct sqstore *)b;
	static const char	 count[] = "INSERT INTO failures (endpoint,"
	    " key, attempts, last_error, first_at, last_at)"
	    " VALUES (?1, ?2, 1, ?3, ?4, ?4)"
	    " ON CONFLICT (endpoint, key) DO UPDATE SET"
	    " attempts = attempts + 1, last_error = excluded.last_error,"
	    " last_at = excluded.last_at RETURNING attempts";
	sqlite3_stmt	*st = NULL;
	int		 rc;

	if ((rc = sqlite3_prepare_v2(s->db, count, -1, &st, NULL)) !=
	    SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, s->cf->endpoints[endpoint].name, -1,
	    SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ev->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, error, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, now);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*attempts = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

static int
sq_park(struct store *b, size_t endpoint, const struct event *ev,
    const char *error, long long attempts, long long next_at, int *parked)
{
	struct sqstore	*s = (struct sqstore *)b;
	static const char	 park[] = "INSERT INTO events (endpoint, key,"
	    " type, payload_hash, payload, status, received_at, expires_at,"
	    " attempts, last_error, next_at, guarded)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, 'failed', ?6, ?7, ?8, ?9, ?10, ?11)"
	    " ON CONFLICT (endpoint, key) DO NOTHING";
	const struct conf_endpoint	*ep = &s->cf->endpoints[endpoint];
	sqlite3_stmt			*st = NULL;
	int				 rc;

	if ((rc = sqlite3_prepare_v2(s->db, park, -1, &st, NULL)) !=
	    SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, ep->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ev->key, -1, SQLITE_STATIC);
	if (ev->type != NULL)
		sqlite3_bind_text(st, 3, ev->type, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, ev->hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, ev->payload, (int)ev->payloadsz,
	    SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, ev->received_at);
	if (ep->retention >= 0)
		sqlite3_bind_int64(st, 7, ev->received_at + ep->retention);
	sqlite3_bind_int64(st, 8, attempts);
	sqlite3_bind_text(st, 9, error, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 10, next_at);
	sqlite3_bind_int(st, 11, sq_indexed(ep, ev));
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		return rc;
	*parked = sqlite3_changes(s->db) > 0;
	if ((rc = sqlite3_prepare_v2(s->db, "DELETE FROM failures"
	    " WHERE endpoint = ?1 AND key = ?2", -1, &st, NULL)) != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, ep->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ev->key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int
sq_run_failed(struct store *b, long long id, const char *error,
    long long max, long long next_at)
{
	struct sqstore	*s = (struct sqstore *)b;
	sqlite3_stmt	*st = NULL;
	int		 rc;

	if ((rc = sqlite3_prepare_v2(s->db, "UPDATE events SET"
	    " attempts = attempts + 1, last_error = ?3,"
	    " next_at = CASE WHEN attempts + 1 >= ?5 THEN NULL ELSE ?4 END,"
	    " status = CASE WHEN attempts + 1 >= ?5 THEN 'dead'"
	    " ELSE 'failed' END"
	    " WHERE id = ?1 AND status <> 'processed'", -1, &st,
	    NULL)) != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 3, error, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, next_at);
	sqlite3_bind_int64(st, 5, max);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int
sq_processed(struct store *b, long long id, long long now, long long attempts,
    int *changed)
{
	struct sqstore	*s = (struct sqstore *)b;
	sqlite3_stmt	*st = NULL;
	int		 rc;

	if ((rc = sqlite3_prepare_v2(s->db, "UPDATE events SET status ="
	    " 'processed', processed_at = ?2, attempts = ?3,"
	    " last_error = NULL, next_at = NULL"
	    " WHERE id = ?1 AND status <> 'processed'", -1, &st,
	    NULL)) != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, now);
	sqlite3_bind_int64(st, 3, attempts);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rc;
	*changed = sqlite3_changes(s->db) == 1;
	return SQLITE_OK;
}

/*
 * The next event to run (work).  `status <> 'processed'` is the
 * condition of the partial index events_pending: with it SQLite reads
 * only the events not processed; with `IN ('received', 'failed')`
 * alone it cannot tell the index applies, and would read every event
 * of the endpoints, each second of `oncehook work`, in a read
 * transaction that keeps the writer's checkpoint from starting the log
 * over.  t_store checks the plan.
 */
const char sq_work_pick[] = "SELECT id, endpoint, key, type,"
    " payload_hash, payload, received_at, attempts, status FROM events"
    " WHERE status IN ('received', 'failed') AND status <> 'processed'"
    " AND (?1 IS NULL OR (endpoint = ?1 AND key = ?2))"
    " AND (?1 IS NOT NULL OR coalesce(next_at, 0) <= ?3"
    " + CASE WHEN status = 'received' THEN ?5 ELSE 0 END)"
    " AND endpoint IN (SELECT value FROM json_each(?4))"
    " ORDER BY coalesce(next_at, 0), id LIMIT 1";

/* Under the write lock (replay), or at the first write (work's
 * deferred transaction, whose commit fails if another came between):
 * SQLite locks no rows, so skip changes nothing. */
static int
sq_take(struct store *b, const char *endpoint, const char *key,
    long long now, long long lead, int skip, struct store_taken *t,
    int *found)
{
	struct sqstore	*s = (struct sqstore *)b;
	static const char	 bykey[] = "SELECT id, endpoint, key, type,"
	    " payload_hash, payload, received_at, attempts, status"
	    " FROM events WHERE endpoint = ?1 AND key = ?2";
	sqlite3_stmt	*st = NULL;
	int		 rc;

	(void)skip;
	*found = 0;
	rc = sqlite3_prepare_v2(s->db, endpoint != NULL ? bykey : sq_work_pick,
	    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if (endpoint != NULL) {
		sqlite3_bind_text(st, 1, endpoint, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	} else {
		sqlite3_bind_int64(st, 3, now);
		sqlite3_bind_text(st, 4, s->names, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, lead);
	}
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		rc = SQLITE_OK;
		if (store_taken_fill(s->cf, t, sqlite3_column_int64(st, 0),
		    (const char *)sqlite3_column_text(st, 1),
		    (const char *)sqlite3_column_text(st, 2),
		    (const char *)sqlite3_column_text(st, 3),
		    (const char *)sqlite3_column_text(st, 4),
		    (const char *)sqlite3_column_text(st, 5),
		    (size_t)sqlite3_column_bytes(st, 5),
		    sqlite3_column_int64(st, 6), sqlite3_column_int64(st, 7),
		    (const char *)sqlite3_column_text(st, 8)) == -1)
			rc = SQLITE_NOMEM;
		else
			*found = 1;
	} else if (rc == SQLITE_DONE)
		rc = SQLITE_OK;
	sqlite3_finalize(st);
	return rc;
}

/* BEGIN (deferred): the write lock at the first write. */
static int
sq_tx_begin_deferred(struct store *b)
{
	struct sqstore	*s = (struct sqstore *)b;

	return sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL);
}

static int
sqs_version(const struct store *b)
{
	(void)b;
	return (int)nmigrations;
}

const char *
sqlite_library_version(void)
{
	return sqlite3_libversion();
}

void
sqs_process_init(void)
{
	/*
	 * One thread needs neither SQLite's mutexes around its
	 * allocations nor its memory statistics, which every request
	 * would pay for.  Refused (SQLITE_MISUSE) if SQLite started
	 * already: then its defaults stay.
	 */
	(void)sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/*
	 * No bulk of pages set up at a cache's first page: SQLite's
	 * default allocates room for 20 and writes a header into each,
	 * 20 fresh pages of memory faulted in per cache whatever is used;
	 * each page comes from malloc() when it is first needed.
	 *
	 * Nothing here starts SQLite (finding a VFS would, and a start
	 * refuses these settings): the product's VFS is registered at the
	 * first store (sqs_connect()), so that a process that opens none,
	 * a CGI request whose event goes to the writer, never pays for
	 * SQLite's start (its function tables, their pages).
	 */
	(void)sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0);
}

int
sqlite_threaded(void)
{
	/* Allowed only with SQLite shut down, which it may not be yet
	 * (nothing opened: a no-op); no connection is open. */
	if (sqlite3_shutdown() != SQLITE_OK ||
	    sqlite3_config(SQLITE_CONFIG_MULTITHREAD) != SQLITE_OK ||
	    sqlite3_initialize() != SQLITE_OK || !sqlite3_threadsafe())
		return -1;
	/* The start made "unix" the default.  Here, before the copier's
	 * thread exists: sqwal_register()'s first call sets up its VFS
	 * without a lock, and both threads' connects call it again. */
	(void)sqwal_register();
	return 0;
}

static int
sqs_about(struct store *b, char *buf, size_t bufsz)
{
	(void)b;
	snprintf(buf, bufsz, "SQLite %s", sqlite3_libversion());
	return 0;
}

static const struct store_ops sqs_ops = {
	.engine = "SQLite",
	.caps = 0,
	.classify = sq_classify_b,
	.ended = sq_ended,
	.note = sq_note_b,
	.why = sq_why_b,
	.usable = sq_usable,
	.revive = NULL,
	.tx_begin = sq_tx_begin,
	.tx_commit = sq_tx_commit,
	.tx_rollback = sq_tx_rollback,
	.tx_end = sq_tx_end,
	.savepoint = sq_savepoint,
	.find_key = sq_find_key,
	.find_payload = sq_find_payload,
	.guard = sq_find_payload,
	.insert = sq_insert,
	.conflict = sq_conflict,
	.ready = sq_ready,
	.actions = sq_actions,
	.tx_begin_deferred = sq_tx_begin_deferred,
	.take = sq_take,
	.processed = sq_processed,
	.run_failed = sq_run_failed,
	.count_failure = sq_count_failure,
	.park = sq_park,
	.ob_pick = sqo_pick,
	.ob_lease = sqo_lease,
	.ob_settle = sqo_settle,
	.version = sqs_version,
	.about = sqs_about,
	.broken = sqs_broken,
	.idle = sq_idle,
	.upkeep = sq_upkeep,
	.close = sqs_close,
	.leave = sqs_leave,
	.list = sqs_list,
	.prune = sq_prune,
	.rows = sqs_rows,
	.ob_retry = sqo_retry,
	.ob_list = sqo_list,
	.ob_topics = sqo_topics,
	.ob_prune = sqo_prune,
};
