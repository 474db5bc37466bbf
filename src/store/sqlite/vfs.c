/* SPDX-License-Identifier: MIT */
/*
 * oncehook: SQLite's log written in fewer system calls (store/sqlite/vfs.h).
 */
#include "config.h"

#include <sys/random.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/sqlite/vfs.h"

#define WAL_HDR		32	/* the log's header (SQLite's file format) */
#define FRAME_HDR	24	/* a log frame's header */

enum expect {
	EXPECT_HEADER,		/* a frame's header may be held */
	EXPECT_PAGE		/* the held header's page may follow */
};

struct dfile;

/* Both wrappers begin so: the methods that only pass a call on take
 * either (R()). */
struct shim {
	sqlite3_file	 base;		/* our methods */
	sqlite3_file	*real;		/* the system VFS's file, after us */
};

#define R(f)	(((struct shim *)(f))->real)

struct wfile {
	struct shim	 s;
	struct dfile	*db;		/* the database whose log this is */
	unsigned char	*buf;		/* SQWAL_BUFSZ, at the first hold */
	size_t		 len;		/* bytes held */
	sqlite3_int64	 off;		/* their place in the file */
	sqlite3_int64	 end;		/* furthest byte written in this
					 * write transaction, held or not */
	enum expect	 expect;
	int		 commit;	/* the held header is a commit's */
	int		 pgsz;		/* the log's page size, once seen */
	int		 synced;	/* the log synced in this write
					 * transaction: hold nothing more */
	int		 err;		/* a write-out's failure no call could
					 * return yet: the next one does */
};

/* A database file: its methods, but for the write lock's release. */
struct dfile {
	struct shim	 s;
	struct wfile	*wal;		/* its log, while open */
};

_Static_assert(sizeof(struct dfile) <= sizeof(struct wfile),
    "the real file is placed after a struct wfile");

#define WAL_WRITE_LOCK	0	/* the -shm lock slot of SQLite's writer */

static sqlite3_vfs	 wrap;		/* set up once, then read only */
static sqlite3_vfs	*sys;		/* the VFS wrapped: "unix" */
static long		 rescues;	/* sqwal_rescues() (atomic) */

/*
 * What is held, written; 0 bytes held after, whatever the result.  A
 * failure kept from a write-out no call could report (the barrier's,
 * the lock's release) is returned first, once.
 */
static int
flush(struct wfile *w)
{
	int	 rc = w->err;

	w->err = SQLITE_OK;
	if (w->len > 0 && rc == SQLITE_OK)
		rc = w->s.real->pMethods->xWrite(w->s.real, w->buf, (int)w->len,
		    w->off);
	w->len = 0;
	w->expect = EXPECT_HEADER;
	w->commit = 0;
	return rc;
}

static int
hold(struct wfile *w, const void *p, int amt, sqlite3_int64 off)
{
	if (w->buf == NULL && (w->buf = malloc(SQWAL_BUFSZ)) == NULL)
		return 0;
	if (w->len > 0 && (off != w->off + (sqlite3_int64)w->len ||
	    w->len + (size_t)amt > SQWAL_BUFSZ))
		return 0;
	if (w->len == 0)
		w->off = off;
	memcpy(w->buf + w->len, p, (size_t)amt);
	w->len += (size_t)amt;
	return 1;
}

static int
frame_write(struct wfile *w, const void *p, int amt, sqlite3_int64 off)
{
	const unsigned char	*h = p;
	int			 rc, commit;

	/* A header at the log's end so far, at a frame's place once the
	 * page size is known, before any sync of this transaction; else
	 * at once: one before the end is SQLite rewriting a checksum
	 * after the commit frame, one after a sync the last part of a
	 * frame split at the sync point (synchronous=full padding to a
	 * sector when the disk is not power-safe). */
	if (amt == FRAME_HDR && w->expect == EXPECT_HEADER && off >= w->end &&
	    !w->synced && (w->pgsz == 0 ||
	    (off - WAL_HDR) % (FRAME_HDR + w->pgsz) == 0)) {
		/* bytes 4-7: the database's size after a commit, else 0 */
		commit = (h[4] | h[5] | h[6] | h[7]) != 0;
		if (!hold(w, p, amt, off)) {
			if ((rc = flush(w)) != SQLITE_OK)
				return rc;
			if (!hold(w, p, amt, off))
				return w->s.real->pMethods->xWrite(w->s.real, p,
				    amt, off);
		}
		w->expect = EXPECT_PAGE;
		w->commit = commit;
		return SQLITE_OK;
	}
	if (w->expect == EXPECT_PAGE && amt >= 512 &&	/* a page's least */
	    off == w->off + (sqlite3_int64)w->len) {
		commit = w->commit;
		if (hold(w, p, amt, off)) {
			/* the first page held is a whole one (a frame
			 * split at a sync point comes after a commit) */
			if (w->pgsz == 0 && amt <= 65536 &&
			    (amt & (amt - 1)) == 0)
				w->pgsz = amt;
			w->expect = EXPECT_HEADER;
			w->commit = 0;
			return commit ? flush(w) : SQLITE_OK;
		}
	}
	/* Not a frame's part, or no room: in order, at once. */
	if ((rc = flush(w)) != SQLITE_OK)
		return rc;
	return w->s.real->pMethods->xWrite(w->s.real, p, amt, off);
}

static int
w_write(sqlite3_file *f, const void *p, int amt, sqlite3_int64 off)
{
	struct wfile	*w = (struct wfile *)f;
	int		 rc;

	rc = frame_write(w, p, amt, off);
	if (off + amt > w->end)
		w->end = off + amt;
	return rc;
}

static int
w_close(sqlite3_file *f)
{
	struct wfile	*w = (struct wfile *)f;
	int		 rc, rc2;

	rc = flush(w);
	if (w->db != NULL)
		w->db->wal = NULL;
	rc2 = w->s.real->pMethods->xClose(w->s.real);
	free(w->buf);
	w->buf = NULL;
	return rc != SQLITE_OK ? rc : rc2;
}

static int
w_read(sqlite3_file *f, void *p, int amt, sqlite3_int64 off)
{
	struct wfile	*w = (struct wfile *)f;
	int		 rc;

	if ((rc = flush(w)) != SQLITE_OK)
		return rc;
	return w->s.real->pMethods->xRead(w->s.real, p, amt, off);
}

static int
w_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct wfile	*w = (struct wfile *)f;
	int		 rc;

	if ((rc = flush(w)) != SQLITE_OK)
		return rc;
	return w->s.real->pMethods->xTruncate(w->s.real, size);
}

static int
w_sync(sqlite3_file *f, int flags)
{
	struct wfile	*w = (struct wfile *)f;
	int		 rc;

	if (w->end > WAL_HDR)	/* past frames: not the log's header */
		w->synced = 1;
	if ((rc = flush(w)) != SQLITE_OK)
		return rc;
	return w->s.real->pMethods->xSync(w->s.real, flags);
}

static int
w_size(sqlite3_file *f, sqlite3_int64 *size)
{
	struct wfile	*w = (struct wfile *)f;
	int		 rc;

	if ((rc = flush(w)) != SQLITE_OK)
		return rc;
	return w->s.real->pMethods->xFileSize(w->s.real, size);
}

static int
w_fcntl(sqlite3_file *f, int op, void *arg)
{
	struct wfile	*w = (struct wfile *)f;
	int		 rc;

	if ((rc = flush(w)) != SQLITE_OK)
		return rc;
	return w->s.real->pMethods->xFileControl(w->s.real, op, arg);
}

/*
 * A write-out where no error can be returned (a barrier, the lock's
 * release): it goes to the file before anyone can look for it, and a
 * failure is kept for the log's next call.  At a barrier, SQLite's own
 * flows leave nothing held (counted: t_sqwal checks); at the release,
 * a spilled transaction that rolled back may.
 */
static void
rescue(struct wfile *w, int barrier)
{
	int	 rc;

	if (w->len == 0 && w->err == SQLITE_OK)
		return;
	if (w->len > 0 && barrier)
		(void)__atomic_fetch_add(&rescues, 1, __ATOMIC_RELAXED);
	if ((rc = flush(w)) != SQLITE_OK)
		w->err = rc;
}

long
sqwal_rescues(void)
{
	return __atomic_load_n(&rescues, __ATOMIC_RELAXED);
}

/*
 * Calls passed on as they are, for either wrapper.  A database file's
 * methods are these but two (d_shmlock(), d_shmbarrier()): the release
 * of the write lock first writes out what its log held.  Only frames of
 * a transaction that did not commit can be held then (a commit writes
 * them out): written past the log's last commit, under the lock, they
 * are nothing to anyone; held on, they would be written later over the
 * frames another process committed at the same place meanwhile.
 */
static int
r_close(sqlite3_file *f)
{
	return R(f)->pMethods->xClose(R(f));
}

static int
r_read(sqlite3_file *f, void *p, int amt, sqlite3_int64 off)
{
	return R(f)->pMethods->xRead(R(f), p, amt, off);
}

static int
r_write(sqlite3_file *f, const void *p, int amt, sqlite3_int64 off)
{
	return R(f)->pMethods->xWrite(R(f), p, amt, off);
}

static int
r_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return R(f)->pMethods->xTruncate(R(f), size);
}

static int
r_sync(sqlite3_file *f, int flags)
{
	return R(f)->pMethods->xSync(R(f), flags);
}

static int
r_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return R(f)->pMethods->xFileSize(R(f), size);
}

static int
r_lock(sqlite3_file *f, int lk)
{
	return R(f)->pMethods->xLock(R(f), lk);
}

static int
r_unlock(sqlite3_file *f, int lk)
{
	return R(f)->pMethods->xUnlock(R(f), lk);
}

static int
r_reserved(sqlite3_file *f, int *out)
{
	return R(f)->pMethods->xCheckReservedLock(R(f), out);
}

static int
r_fcntl(sqlite3_file *f, int op, void *arg)
{
	return R(f)->pMethods->xFileControl(R(f), op, arg);
}

static int
r_sector(sqlite3_file *f)
{
	return R(f)->pMethods->xSectorSize(R(f));
}

static int
r_devchar(sqlite3_file *f)
{
	return R(f)->pMethods->xDeviceCharacteristics(R(f));
}

static int
r_shmmap(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
	if (R(f)->pMethods->iVersion < 2)
		return SQLITE_IOERR;
	return R(f)->pMethods->xShmMap(R(f), pg, pgsz, extend, pp);
}

static int
d_shmlock(sqlite3_file *f, int offset, int n, int flags)
{
	struct dfile	*d = (struct dfile *)f;

	if (R(f)->pMethods->iVersion < 2)
		return SQLITE_IOERR;
	if ((flags & SQLITE_SHM_UNLOCK) && d->wal != NULL &&
	    offset <= WAL_WRITE_LOCK && offset + n > WAL_WRITE_LOCK) {
		rescue(d->wal, 0);
		d->wal->end = 0;	/* the next writer's log may restart */
		d->wal->synced = 0;
	}
	return R(f)->pMethods->xShmLock(R(f), offset, n, flags);
}

/*
 * SQLite publishes a commit by writing the log index's header in the
 * -shm around a barrier.  A commit's frames were written out with its
 * commit frame, and a header SQLite rewrites after it (a checksum, when
 * a transaction wrote a page twice) is never held (frame_write()); so
 * what can be held here is frames of a transaction still open.  Written
 * out all the same: whatever a later SQLite does, no one reads, and no
 * recovery checks, a frame that is not in the file.
 */
static void
d_shmbarrier(sqlite3_file *f)
{
	struct dfile	*d = (struct dfile *)f;

	if (d->wal != NULL)
		rescue(d->wal, 1);
	if (R(f)->pMethods->iVersion >= 2)
		R(f)->pMethods->xShmBarrier(R(f));
}

static int
r_shmunmap(sqlite3_file *f, int del)
{
	if (R(f)->pMethods->iVersion < 2)
		return SQLITE_OK;
	return R(f)->pMethods->xShmUnmap(R(f), del);
}

static int
r_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
	*pp = NULL;
	if (R(f)->pMethods->iVersion < 3)
		return SQLITE_OK;
	return R(f)->pMethods->xFetch(R(f), off, amt, pp);
}

static int
r_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	if (R(f)->pMethods->iVersion < 3)
		return SQLITE_OK;
	return R(f)->pMethods->xUnfetch(R(f), off, p);
}

static const sqlite3_io_methods db_methods = {
	3,
	r_close, r_read, r_write, r_truncate, r_sync, r_size,
	r_lock, r_unlock, r_reserved, r_fcntl, r_sector, r_devchar,
	r_shmmap, d_shmlock, d_shmbarrier, r_shmunmap,
	r_fetch, r_unfetch
};

/* A log: no -shm of its own, never mapped (SQLite calls those on the
 * database's file), hence version 1. */
static const sqlite3_io_methods wal_methods = {
	1,
	w_close, w_read, w_write, w_truncate, w_sync, w_size,
	r_lock, r_unlock, r_reserved, w_fcntl, r_sector, r_devchar,
	NULL, NULL, NULL, NULL, NULL, NULL
};

/*
 * A database and its log are ours; every other file (a temporary one, a
 * rollback journal) is the system VFS's object in our space, with its
 * methods: it never passes through here again.
 */
static int
v_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags,
    int *outflags)
{
	struct wfile	*w = (struct wfile *)f;
	struct dfile	*d = (struct dfile *)f;
	sqlite3_file	*df;
	int		 rc;

	(void)v;
	if (flags & SQLITE_OPEN_MAIN_DB) {
		memset(d, 0, sizeof(*d));
		d->s.real = (sqlite3_file *)(w + 1);
		rc = sys->xOpen(sys, name, d->s.real, flags, outflags);
		/* SQLite calls xClose after a failed xOpen that set
		 * pMethods. */
		d->s.base.pMethods = d->s.real->pMethods != NULL ? &db_methods :
		    NULL;
		return rc;
	}
	if (!(flags & SQLITE_OPEN_WAL))
		return sys->xOpen(sys, name, f, flags, outflags);
	memset(w, 0, sizeof(*w));
	w->s.real = (sqlite3_file *)(w + 1);
	rc = sys->xOpen(sys, name, w->s.real, flags, outflags);
	w->s.base.pMethods = w->s.real->pMethods != NULL ? &wal_methods : NULL;
	if (rc == SQLITE_OK && name != NULL &&
	    (df = sqlite3_database_file_object(name)) != NULL &&
	    df->pMethods == &db_methods) {
		w->db = (struct dfile *)df;
		w->db->wal = w;
	}
	return rc;
}

static int
v_delete(sqlite3_vfs *v, const char *name, int syncdir)
{
	(void)v;
	return sys->xDelete(sys, name, syncdir);
}

static int
v_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
	(void)v;
	return sys->xAccess(sys, name, flags, out);
}

static int
v_fullpath(sqlite3_vfs *v, const char *name, int n, char *out)
{
	(void)v;
	return sys->xFullPathname(sys, name, n, out);
}

static void *
v_dlopen(sqlite3_vfs *v, const char *name)
{
	(void)v;
	return sys->xDlOpen(sys, name);
}

static void
v_dlerror(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	sys->xDlError(sys, n, out);
}

static void
(*v_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
	(void)v;
	return sys->xDlSym(sys, h, sym);
}

static void
v_dlclose(sqlite3_vfs *v, void *h)
{
	(void)v;
	sys->xDlClose(sys, h);
}

/*
 * The seed of SQLite's generator (randomblob(), the log's salts): the
 * kernel's, in one getrandom(2), where the unix VFS opens, reads and
 * closes /dev/urandom in every process that needs one (every CGI
 * request writing an outbox row).  Its own if getrandom fails.
 */
static int
v_random(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	if (n > 0 && getrandom(out, (size_t)n, GRND_NONBLOCK) == n)
		return n;
	return sys->xRandomness(sys, n, out);
}

static int
v_sleep(sqlite3_vfs *v, int us)
{
	(void)v;
	return sys->xSleep(sys, us);
}

static int
v_time(sqlite3_vfs *v, double *out)
{
	(void)v;
	return sys->xCurrentTime(sys, out);
}

static int
v_lasterror(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return sys->xGetLastError(sys, n, out);
}

static int
v_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	(void)v;
	return sys->xCurrentTimeInt64(sys, out);
}

int
sqwal_register(void)
{
	sqlite3_vfs	*u;

	if (sys == NULL) {
		/* The default: "unix", or a test's VFS over it. */
		if ((u = sqlite3_vfs_find(NULL)) == NULL || u == &wrap ||
		    u->iVersion < 2 || u->szOsFile < 0)
			return -1;
		sys = u;
		wrap.iVersion = 2;
		/* the real file after either wrapper (struct wfile is the
		 * larger) */
		wrap.szOsFile = (int)sizeof(struct wfile) + u->szOsFile;
		wrap.mxPathname = u->mxPathname;
		wrap.zName = SQWAL_VFS;
		wrap.xOpen = v_open;
		wrap.xDelete = v_delete;
		wrap.xAccess = v_access;
		wrap.xFullPathname = v_fullpath;
		wrap.xDlOpen = v_dlopen;
		wrap.xDlError = v_dlerror;
		wrap.xDlSym = v_dlsym;
		wrap.xDlClose = v_dlclose;
		wrap.xRandomness = v_random;
		wrap.xSleep = v_sleep;
		wrap.xCurrentTime = v_time;
		wrap.xGetLastError = v_lasterror;
		wrap.xCurrentTimeInt64 = v_time64;
	} else if (sqlite3_vfs_find(sys->zName) != sys)
		return -1;
	return sqlite3_vfs_register(&wrap, 1) == SQLITE_OK ? 0 : -1;
}
