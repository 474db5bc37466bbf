/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the log's frames gathered into one write (store/sqlite/vfs.h).
 *
 * The product's VFS over the tests' fault-injecting one (faultvfs.h),
 * which counts the writes that reach it.  A second connection opened
 * with the plain "unix" VFS reads the files as another process would.
 *
 *   - a transaction's frames reach the file in one write (two with the
 *     log's own header), where SQLite makes two per frame;
 *   - what a commit wrote is in the file when the commit returns: the
 *     other connection sees every committed row at once, under
 *     synchronous normal (no sync to flush it) and full, through small
 *     transactions, ones larger than the buffer, ones that spill pages
 *     to the log before their commit, and rollbacks; the files stay
 *     sound (integrity_check); and at every moment the log's index names
 *     a commit, its frames are in the -wal file (tests/unit/faultvfs.c
 *     watches the -shm's header);
 *   - a transaction that spilled and rolled back leaves nothing to be
 *     written later over another connection's commit;
 *   - a write that fails (a full disk) fails the commit, whose rows no
 *     one sees; the next commit succeeds and is seen;
 *   - the log then checkpointed and read back whole;
 *   - a frame held when the write lock is released (no flow of SQLite
 *     leaves one: the calls are made by hand) is written out then, and
 *     a failure of that write-out is returned by the log's next call.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "deliver.h"
#include "faultvfs.h"
#include "store/sqlite/vfs.h"
#include "tap.h"

static char	 dir[64], path[128], path2[128];

static sqlite3 *
open_as(const char *vfs, const char *sync, int psow)
{
	sqlite3	*db;
	char	 sql[320];

	/* psow=0: the disk is not power-safe; under full, SQLite pads a
	 * commit to a sector and splits a frame at the sync point */
	snprintf(sql, sizeof(sql), "file:%s%s", psow ? path : path2,
	    psow ? "" : "?psow=0");
	if (sqlite3_open_v2(sql, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, vfs) != SQLITE_OK)
		BAIL("open %s: %s", path, sqlite3_errmsg(db));
	/* its own file, of 512-byte pages: 8 frames a sector, so a
	 * commit's padding splits a frame at the sync point often */
	snprintf(sql, sizeof(sql), "PRAGMA page_size = %d; "
	    "PRAGMA journal_mode = WAL; PRAGMA synchronous = %s; "
	    "PRAGMA wal_autocheckpoint = 0; CREATE TABLE IF NOT EXISTS t "
	    "(k TEXT UNIQUE, v BLOB)", psow ? 4096 : 512, sync);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		BAIL("pragmas: %s", sqlite3_errmsg(db));
	sqlite3_busy_timeout(db, 1000);
	return db;
}

static sqlite3 *
open_db(const char *vfs, const char *sync)
{
	return open_as(vfs, sync, 1);
}

/* n rows of size bytes each in one transaction; SQLite's code. */
static int
insert(sqlite3 *db, int n, int size, int commit)
{
	sqlite3_stmt	*st;
	int		 i, rc;

	if ((rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL,
	    NULL)) != SQLITE_OK)
		return rc;
	if ((rc = sqlite3_prepare_v2(db, "INSERT INTO t (k, v) "
	    "VALUES (lower(hex(randomblob(16))), zeroblob(?))", -1, &st,
	    NULL)) != SQLITE_OK)
		return rc;
	for (i = 0; i < n && rc == SQLITE_OK; i++) {
		sqlite3_bind_int(st, 1, size);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK :
		    sqlite3_errcode(db);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, commit ? "COMMIT" : "ROLLBACK", NULL,
		    NULL, NULL);
	if (rc != SQLITE_OK)
		(void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* The size of the -wal of the database at db; -1 if none. */
static long long
wal_size(const char *db)
{
	char		 p[200];
	struct stat	 sb;

	snprintf(p, sizeof(p), "%.160s-wal", db);
	return stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
}

static void
gathered(void)
{
	sqlite3		*db;
	long long	 before, frames;
	long		 writes;

	db = open_db(NULL, "normal");
	if (sqlite3_exec(db, "CREATE INDEX t_v ON t (length(v))", NULL, NULL,
	    NULL) != SQLITE_OK)
		BAIL("create: %s", sqlite3_errmsg(db));
	(void)insert(db, 1, 10, 1);
	before = wal_size(path);	/* no checkpoint since: the log grows */
	faultvfs_record();
	/* Eight pages or more: rows on new leaves, and the indexes. */
	if (insert(db, 8, 3000, 1) != SQLITE_OK)
		BAIL("insert: %s", sqlite3_errmsg(db));
	writes = faultvfs_points();
	frames = (wal_size(path) - before) / (4096 + 24);
	CHECK(frames >= 8 && writes == 1,
	    "a commit of %lld frames: %ld write reached the file (SQLite "
	    "makes two a frame)", frames, writes);
	sqlite3_close(db);
}

static void
visible(const char *sync, int psow)
{
	sqlite3		*db, *peer;
	long long	 want, got;
	long		 rescued;
	const char	*how = psow ? "" : ", a disk not power-safe";
	int		 i, bad = 0, badcheck = 0, rc, fails = 0;
	static const struct { int n, size, commit; } shape[] = {
		{ 1, 50, 1 },		/* a claim's size */
		{ 3, 1500, 1 },
		{ 40, 3000, 1 },	/* more than the buffer holds */
		{ 2, 100, 0 },		/* rolled back */
		{ 300, 400, 1 },	/* spills before its commit */
		{ 1, 70000, 1 },	/* overflow pages */
	};

	rescued = sqwal_rescues();
	db = open_as(NULL, sync, psow);
	/* A page cache of 10 pages: large transactions spill frames to the
	 * log before their commit, and rewrite some of them in place. */
	(void)sqlite3_exec(db, "PRAGMA cache_size = 10", NULL, NULL, NULL);
	peer = open_as("unix", sync, psow);
	want = dl_count(db, "SELECT count(*) FROM t");
	faultvfs_watch_log(1);
	for (i = 0; i < 120; i++) {
		int	 s = i % (int)(sizeof(shape) / sizeof(shape[0]));

		rc = insert(db, shape[s].n, shape[s].size, shape[s].commit);
		if (rc != SQLITE_OK) {
			fails++;
			continue;
		}
		if (shape[s].commit)
			want += shape[s].n;
		if ((got = dl_count(peer, "SELECT count(*) FROM t")) != want)
			bad++;
		if (i % 20 == 19 && !dl_integrity(peer))
			badcheck++;
	}
	CHECK(fails == 0 && bad == 0 && badcheck == 0,
	    "synchronous %s%s: each of 120 commits (1 to 300 rows, spilled, "
	    "rolled back) seen at once by another connection: %d unseen, "
	    "%d failed, %d integrity_check not ok", sync, how, bad, fails,
	    badcheck);
	CHECK(faultvfs_log_checks() >= 100 && faultvfs_log_unwritten() == 0,
	    "synchronous %s%s: every frame the log's index named as "
	    "committed was in the -wal file as it was named, checksums and "
	    "all (%ld looks, %ld not)", sync, how, faultvfs_log_checks(),
	    faultvfs_log_unwritten());
	CHECK(faultvfs_log_unlocked() == 0 && sqwal_rescues() == rescued,
	    "synchronous %s%s: no write of the log without the write lock "
	    "(%ld), nothing left held for a commit's publication (%ld)",
	    sync, how, faultvfs_log_unlocked(),
	    sqwal_rescues() - rescued);
	faultvfs_watch_log(0);
	sqlite3_close(peer);
	sqlite3_close(db);
}

/*
 * A transaction that spilled frames to the log and rolled back, then
 * another connection's commit over the same place in the log, then the
 * first connection's next calls: what it held of its spilled frames
 * must not land over the other's (written out at the write lock's
 * release, store/sqlite/vfs.h).
 */
/* n rows of size bytes at the end of table s (no index): once spilled,
 * a page is not read again before the ROLLBACK. */
static int
append(sqlite3 *db, int n, int size, int commit)
{
	char	 sql[320];
	int	 rc;

	snprintf(sql, sizeof(sql), "BEGIN IMMEDIATE; WITH RECURSIVE c(i) "
	    "AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
	    "INSERT INTO s (v) SELECT zeroblob(%d) FROM c", n, size);
	if ((rc = sqlite3_exec(db, sql, NULL, NULL, NULL)) == SQLITE_OK)
		rc = sqlite3_exec(db, commit ? "COMMIT" : "ROLLBACK", NULL,
		    NULL, NULL);
	if (rc != SQLITE_OK)
		(void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static void
spilled_rollback(void)
{
	sqlite3		*db, *peer;
	long long	 n1;
	int		 i, rc;

	db = open_db(NULL, "normal");
	(void)sqlite3_exec(db, "PRAGMA cache_size = 10", NULL, NULL, NULL);
	if ((rc = sqlite3_exec(db, "CREATE TABLE s (v BLOB)", NULL, NULL,
	    NULL)) != SQLITE_OK)
		BAIL("create s: %s", sqlite3_errmsg(db));
	peer = open_db("unix", "normal");
	faultvfs_watch_log(1);
	for (i = 0; i < 8 && rc == SQLITE_OK; i++) {
		/* spills, rolls back; then the other's commit over the
		 * same frames, then this connection reads the log */
		if ((rc = append(db, 500 + 100 * i, 400, 0)) == SQLITE_OK &&
		    (rc = append(peer, 600, 400, 1)) == SQLITE_OK &&
		    dl_count(db, "SELECT count(*) FROM s") != 600 * (i + 1))
			rc = SQLITE_CORRUPT;
	}
	n1 = dl_count(peer, "SELECT count(*) FROM s");
	CHECK(rc == SQLITE_OK && n1 == 600 * 8 && dl_integrity(peer) &&
	    dl_integrity(db) && faultvfs_log_unlocked() == 0,
	    "8 transactions spilled and rolled back, each followed by "
	    "another connection's commit over its frames: no write of the "
	    "log without the write lock (%ld), every row seen, the files "
	    "sound (%lld rows; %s)", faultvfs_log_unlocked(), n1,
	    sqlite3_errstr(rc));
	faultvfs_watch_log(0);
	sqlite3_close(peer);
	sqlite3_close(db);
}

static void
full_disk(void)
{
	sqlite3		*db, *peer;
	long long	 n0, n1, n2;
	int		 rc;

	db = open_db(NULL, "normal");
	peer = open_db("unix", "normal");
	if (append(db, 1, 100, 1) != SQLITE_OK)	/* the log begun */
		BAIL("append: %s", sqlite3_errmsg(db));
	n0 = dl_count(peer, "SELECT count(*) FROM s");
	faultvfs_arm(FAULT_ENOSPC, 1, 0);
	rc = append(db, 5, 100, 1);	/* a leaf: nothing read back */
	faultvfs_disarm();
	n1 = dl_count(peer, "SELECT count(*) FROM s");
	CHECK(rc == SQLITE_FULL && n1 == n0 && faultvfs_hits() == 1 &&
	    faultvfs_hit_op() == FOP_WRITE &&
	    strcmp(faultvfs_hit_file(), "wal") == 0,
	    "a full disk at the log's write (%s, %s): the commit fails (%s), "
	    "its rows unseen (%lld, %lld before)",
	    faultvfs_op_name(faultvfs_hit_op()), faultvfs_hit_file(),
	    sqlite3_errstr(rc), n1, n0);
	rc = append(db, 5, 100, 1);
	n2 = dl_count(peer, "SELECT count(*) FROM s");
	CHECK(rc == SQLITE_OK && n2 == n0 + 5 && dl_integrity(peer) &&
	    dl_count(peer, "SELECT count(*) FROM s") == n2,
	    "the next commit succeeds and is seen (%lld rows)", n2);
	sqlite3_close(peer);
	/* The whole log into the database, then read back alone. */
	CHECK(dl_count(db, "PRAGMA wal_checkpoint(TRUNCATE)") == 0 && dl_integrity(db) && dl_count(db, "SELECT count(*) FROM s") == n2,
	    "the log checkpointed whole; %lld rows read back", n2);
	sqlite3_close(db);
}

/* The bytes of the -wal of path p at off, into buf: 0, or -1. */
static int
wal_bytes(const char *p, long long off, unsigned char *buf, size_t n)
{
	char	 w[200];
	FILE	*f;
	size_t	 got;

	snprintf(w, sizeof(w), "%.160s-wal", p);
	if ((f = fopen(w, "rb")) == NULL)
		return -1;
	got = fseek(f, (long)off, SEEK_SET) == 0 ? fread(buf, 1, n, f) : 0;
	fclose(f);
	return got == n ? 0 : -1;
}

/*
 * By hand, as SQLite writes a frame: the log's write lock taken (on the
 * database file d), then a frame's header and page written at off of
 * the log w, where sqwal holds them.  SQLite's code.
 */
static int
write_frame_locked(sqlite3_file *d, sqlite3_file *w, const void *hdr,
    int hdrsz, const void *page, int pagesz, long long off)
{
	int	 rc;

	if ((rc = d->pMethods->xShmLock(d, 0, 1, SQLITE_SHM_LOCK |
	    SQLITE_SHM_EXCLUSIVE)) == SQLITE_OK &&
	    (rc = w->pMethods->xWrite(w, hdr, hdrsz, off)) == SQLITE_OK)
		rc = w->pMethods->xWrite(w, page, pagesz, off + hdrsz);
	return rc;
}

/* The log's write lock released, by hand. */
static int
unlock_log(sqlite3_file *d)
{
	return d->pMethods->xShmLock(d, 0, 1, SQLITE_SHM_UNLOCK |
	    SQLITE_SHM_EXCLUSIVE);
}

/*
 * A frame held when the write lock is released: SQLite's flows leave
 * none (a commit writes its frames out; a rollback that spilled reads
 * them back), so the calls are made here by hand, on the files of a
 * live connection.  Written out under the lock, it is past the log's
 * last commit and nothing to anyone; held on, it would be written at
 * the log's next call, over what another process committed at that
 * place meanwhile.  A failure of that write-out is returned by the
 * log's next call, once.
 */
static void
unlock_writeout(void)
{
	sqlite3			*db, *peer = NULL;
	sqlite3_file		*d = NULL, *w = NULL;
	unsigned char		 hdr[24], page[4096], back[24 + 4096];
	char			 p3[160];
	long long		 s0, s1;
	long			 unlocked;
	int			 rc, rc2, rc3, held;

	snprintf(p3, sizeof(p3), "%s/u.sqlite", dir);
	if (sqlite3_open_v2(p3, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA page_size = 4096; "
	    "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
	    "PRAGMA wal_autocheckpoint = 0; "
	    "CREATE TABLE t (k TEXT UNIQUE, v BLOB)", NULL, NULL,
	    NULL) != SQLITE_OK || insert(db, 3, 100, 1) != SQLITE_OK ||
	    sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER,
	    &d) != SQLITE_OK || sqlite3_file_control(db, "main",
	    SQLITE_FCNTL_JOURNAL_POINTER, &w) != SQLITE_OK || d == NULL ||
	    w == NULL || w->pMethods == NULL)
		BAIL("u.sqlite: %s", sqlite3_errmsg(db));
	if ((s0 = wal_size(p3)) < 32 || (s0 - 32) % 4120 != 0)
		BAIL("u.sqlite-wal: not whole 4096-byte frames");
	memset(hdr, 0xab, sizeof(hdr));
	memset(hdr, 0, 8);		/* page 0 (none), not a commit */
	memset(page, 0xcd, sizeof(page));
	/* Held at the write, then written out at the release, before
	 * it (the watch counts a write of the log without the lock). */
	faultvfs_watch_log(1);
	rc = write_frame_locked(d, w, hdr, sizeof(hdr), page, sizeof(page),
	    s0);
	held = wal_size(p3) == s0;
	rc2 = unlock_log(d);
	unlocked = faultvfs_log_unlocked();	/* the next call zeroes it */
	faultvfs_watch_log(0);
	memset(back, 0, sizeof(back));
	CHECK(rc == SQLITE_OK && rc2 == SQLITE_OK && held && unlocked == 0 &&
	    wal_bytes(p3, s0, back, sizeof(back)) == 0 &&
	    memcmp(back, hdr, sizeof(hdr)) == 0 &&
	    memcmp(back + sizeof(hdr), page, sizeof(page)) == 0,
	    "a frame held when the write lock is released is written out "
	    "whole, before the release (held before: %d; writes without "
	    "the lock: %ld; %s, %s)", held, unlocked,
	    sqlite3_errstr(rc), sqlite3_errstr(rc2));
	/* Its write-out fails: the log's next call says so, once. */
	s1 = s0 + (long long)sizeof(back);
	rc = write_frame_locked(d, w, hdr, sizeof(hdr), page, sizeof(page),
	    s1);
	faultvfs_arm(FAULT_ENOSPC, 1, 0);
	rc2 = unlock_log(d);
	faultvfs_disarm();
	rc3 = w->pMethods->xSync(w, SQLITE_SYNC_NORMAL);
	CHECK(rc == SQLITE_OK && rc2 == SQLITE_OK && rc3 != SQLITE_OK &&
	    w->pMethods->xSync(w, SQLITE_SYNC_NORMAL) == SQLITE_OK,
	    "a full disk at that write-out: the log's next call fails "
	    "(%s), the one after succeeds", sqlite3_errstr(rc3));
	/* The connection goes on over those frames past its last commit;
	 * another (the plain unix VFS) reads it all. */
	rc = insert(db, 3, 100, 1);
	rc2 = sqlite3_open_v2(p3, &peer, SQLITE_OPEN_READONLY, "unix");
	CHECK(rc == SQLITE_OK && rc2 == SQLITE_OK && dl_integrity(db) &&
	    dl_integrity(peer) && dl_count(peer, "SELECT count(*) FROM t") == 6 &&
	    sqlite3_close(peer) == SQLITE_OK && sqlite3_close(db) ==
	    SQLITE_OK, "the connection commits on over them, another reads "
	    "every row, both close (%s)", sqlite3_errstr(rc));
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/oncehook-sqwal-XXXXXX");
	if (mkdtemp(dir) == NULL)
		BAIL("mkdtemp");
	snprintf(path, sizeof(path), "%s/t.sqlite", dir);
	snprintf(path2, sizeof(path2), "%s/p.sqlite", dir);
	if (faultvfs_install() != SQLITE_OK || sqwal_register() != 0)
		BAIL("the VFSs");
	CHECK(strcmp(sqlite3_vfs_find(NULL)->zName, SQWAL_VFS) == 0,
	    "the product's VFS is the default, over the tests'");
	gathered();
	visible("normal", 1);
	visible("full", 1);
	visible("full", 0);
	spilled_rollback();
	full_disk();
	unlock_writeout();
	tap_rmdir(dir);
	return tap_done();
}
