/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: a fault-injecting, power-cutting SQLite VFS (see
 * faultvfs.h).
 *
 * Every method forwards to the "unix" VFS.  Before it does, hit() asks
 * whether this call fails: the codes below are those the unix VFS
 * (os_unix.c) returns when the system call under that method fails with
 * that errno; 0 means that errno does not happen there.  A few calls
 * need more than the table, and say so where they are: an open that
 * fails read-write is retried read-only, as unixOpen() does; a failing
 * stat() in xAccess() reports the file absent, as unixAccess() does;
 * EACCES on shared memory is only met when it is opened, ENOSPC only
 * when it grows.  The methods are those of version 2: no xFetch, so
 * SQLite reads through xRead and never maps the database.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "faultvfs.h"

static const int codes[FOP__MAX][FAULT__MAX] = {
	/*		  EIO				ENOSPC
	 *		  EACCES			EBUSY */
	[FOP_OPEN] =	{ SQLITE_CANTOPEN,		SQLITE_CANTOPEN,
			  SQLITE_CANTOPEN,		0 },
	[FOP_READ] =	{ SQLITE_IOERR_READ,		0,
			  0,				0 },
	[FOP_WRITE] =	{ SQLITE_IOERR_WRITE,		SQLITE_FULL,
			  0,				0 },
	[FOP_SYNC] =	{ SQLITE_IOERR_FSYNC,		SQLITE_IOERR_FSYNC,
			  0,				0 },
	[FOP_TRUNCATE] = { SQLITE_IOERR_TRUNCATE,	0,
			  0,				0 },
	[FOP_FILESIZE] = { SQLITE_IOERR_FSTAT,		0,
			  0,				0 },
	[FOP_LOCK] =	{ SQLITE_IOERR_LOCK,		0,
			  SQLITE_BUSY,			SQLITE_BUSY },
	[FOP_UNLOCK] =	{ SQLITE_IOERR_UNLOCK,		0,
			  0,				0 },
	[FOP_CHECKLOCK] = { SQLITE_IOERR_CHECKRESERVEDLOCK, 0,
			  0,				0 },
	[FOP_SHMMAP] =	{ SQLITE_IOERR_SHMMAP,		SQLITE_IOERR_SHMSIZE,
			  SQLITE_CANTOPEN,		0 },
	[FOP_SHMLOCK] =	{ 0,				0,
			  0,				SQLITE_BUSY },
	[FOP_DELETE] =	{ SQLITE_IOERR_DELETE,		0,
			  SQLITE_IOERR_DELETE,		0 },
	[FOP_ACCESS] =	{ SQLITE_IOERR_ACCESS,		0,
			  SQLITE_IOERR_ACCESS,		0 },
};

static const char *const opnames[FOP__MAX] = {
	"open", "read", "write", "sync", "truncate", "filesize", "lock",
	"unlock", "checkreservedlock", "shmmap", "shmlock", "delete", "access"
};
static const char *const kindnames[FAULT__MAX] = {
	"EIO", "ENOSPC", "EACCES", "EBUSY"
};
static const char *const cutnames[CUT__MAX] = {
	"nothing unsynced kept", "torn last write", "random subset kept"
};

/* One write or truncation since the file's last sync. */
struct rec {
	long long	 seq;		/* global order */
	int		 trunc;		/* a truncation to off */
	long long	 off;
	size_t		 len;		/* of post */
	unsigned char	*pre;		/* what [off, off + prelen) held */
	size_t		 prelen;
	unsigned char	*post;		/* what was written */
};

/* A file's durable size and the changes since its last sync. */
struct pfile {
	struct pfile	*next;
	char		*path;
	long long	 synced;	/* bytes at the last sync */
	struct rec	*recs;
	size_t		 nrecs, cap;
};

struct ffile {
	sqlite3_file	 base;
	sqlite3_file	*real;		/* follows this struct */
	const char	*path;		/* SQLite's, lives until close */
	int		 nregion;	/* shm regions mapped */
	volatile unsigned char *shm0;	/* the -shm's first region */
	int		 wal;		/* a -wal file */
	int		 wlock;		/* holds the log's write lock */
};

static sqlite3_vfs	*unixvfs;
static sqlite3_vfs	 shim;

static struct {
	int		 armed, persistent;
	enum fault_kind	 kind;
	long		 n, calls, hits;
	enum fault_op	 hit_op;
	char		 hit_file[16];
	int		 hit_rc;
} F;

static struct {
	int		 on, dead;
	long		 points, cut, wal_syncs;
	long long	 seq;
	struct pfile	*files;
} P;

static char		 dbs[8][512];	/* main databases opened */

static struct {
	int		 on;
	long		 checks, unwritten;
	int		 writers;	/* connections holding the write lock */
	long		 unlocked;	/* log writes without it */
} W;				/* faultvfs_watch_log() */

const char *
faultvfs_kind_name(enum fault_kind k)
{
	return k < FAULT__MAX ? kindnames[k] : "?";
}

const char *
faultvfs_op_name(enum fault_op op)
{
	return op < FOP__MAX ? opnames[op] : "?";
}

const char *
faultvfs_cut_name(enum cut_mode m)
{
	return m < CUT__MAX ? cutnames[m] : "?";
}

/* "db", "wal", "journal", "shm" or "other", from the path. */
static const char *
role(const char *path)
{
	size_t	 n;

	if (path == NULL)
		return "temp";
	n = strlen(path);
	if (n > 4 && strcmp(path + n - 4, "-wal") == 0)
		return "wal";
	if (n > 4 && strcmp(path + n - 4, "-shm") == 0)
		return "shm";
	if (n > 8 && strcmp(path + n - 8, "-journal") == 0)
		return "journal";
	return "db";
}

/*
 * Does this call fail?  rc is the code for the armed kind (0: does not
 * apply); with the power gone every call fails with the EIO code.
 * Returns the code to return, or SQLITE_OK.
 */
static int
hit(enum fault_op op, int rc, const char *path)
{
	if (P.dead)
		return codes[op][FAULT_EIO] ? codes[op][FAULT_EIO] :
		    SQLITE_IOERR;
	if (!F.armed || rc == 0)
		return SQLITE_OK;
	F.calls++;
	/*
	 * A lock on shared memory held elsewhere is held by a live
	 * process, one lock at a time: persistent, it would be every lock
	 * forever (which SQLite meets with 100 retries over ten seconds,
	 * then SQLITE_PROTOCOL).  It stays one-shot.
	 */
	if (F.calls < F.n || (F.calls > F.n && (!F.persistent ||
	    op == FOP_SHMLOCK)))
		return SQLITE_OK;
	if (F.hits++ == 0) {
		F.hit_op = op;
		snprintf(F.hit_file, sizeof(F.hit_file), "%s", role(path));
		F.hit_rc = rc;
	}
	return rc;
}

/* The code for op under the armed kind, or 0. */
static int
code(enum fault_op op)
{
	return F.armed ? codes[op][F.kind] : 0;
}

void
faultvfs_arm(enum fault_kind k, long n, int persistent)
{
	memset(&F, 0, sizeof(F));
	F.armed = 1;
	F.kind = k;
	F.n = n;
	F.persistent = persistent;
}

void
faultvfs_disarm(void)
{
	F.armed = 0;
}

long
faultvfs_calls(void)
{
	return F.calls;
}

long
faultvfs_hits(void)
{
	return F.hits;
}

enum fault_op
faultvfs_hit_op(void)
{
	return F.hit_op;
}

const char *
faultvfs_hit_file(void)
{
	return F.hit_file;
}

int
faultvfs_hit_rc(void)
{
	return F.hit_rc;
}

/* Power loss: the record of unsynced changes. */

static void
pfile_forget(struct pfile *pf)
{
	size_t	 i;

	for (i = 0; i < pf->nrecs; i++) {
		free(pf->recs[i].pre);
		free(pf->recs[i].post);
	}
	pf->nrecs = 0;
}

static void
forget_all(void)
{
	struct pfile	*pf, *next;

	for (pf = P.files; pf != NULL; pf = next) {
		next = pf->next;
		pfile_forget(pf);
		free(pf->recs);
		free(pf->path);
		free(pf);
	}
	P.files = NULL;
}

static struct pfile *
pfile_find(const char *path)
{
	struct pfile	*pf;

	for (pf = P.files; pf != NULL; pf = pf->next)
		if (strcmp(pf->path, path) == 0)
			return pf;
	return NULL;
}

/* The record of path; its durable size is size if it is new. */
static struct pfile *
pfile_get(const char *path, long long size)
{
	struct pfile	*pf;

	if ((pf = pfile_find(path)) != NULL)
		return pf;
	if ((pf = calloc(1, sizeof(*pf))) == NULL ||
	    (pf->path = strdup(path)) == NULL) {
		fprintf(stderr, "faultvfs: out of memory\n");
		abort();
	}
	pf->synced = size;
	pf->next = P.files;
	P.files = pf;
	return pf;
}

static void
pfile_drop(const char *path)
{
	struct pfile	**pp, *pf;

	for (pp = &P.files; (pf = *pp) != NULL; pp = &pf->next)
		if (strcmp(pf->path, path) == 0) {
			*pp = pf->next;
			pfile_forget(pf);
			free(pf->recs);
			free(pf->path);
			free(pf);
			return;
		}
}

/*
 * Keep what a write of len bytes at off (post, or a truncation to off
 * if post is NULL) replaces in f.  Uses the real file's methods, so it
 * is neither counted nor failed.
 */
static void
keep(struct ffile *f, const void *post, size_t len, long long off)
{
	sqlite3_int64	 size = 0;
	struct pfile	*pf;
	struct rec	*r;
	long long	 end;

	if (!P.on || f->path == NULL)
		return;
	if (f->real->pMethods->xFileSize(f->real, &size) != SQLITE_OK)
		abort();
	pf = pfile_get(f->path, size);
	if (pf->nrecs == pf->cap) {
		pf->cap = pf->cap ? pf->cap * 2 : 16;
		if ((pf->recs = realloc(pf->recs, pf->cap *
		    sizeof(*pf->recs))) == NULL)
			abort();
	}
	r = &pf->recs[pf->nrecs++];
	memset(r, 0, sizeof(*r));
	r->seq = ++P.seq;
	r->off = off;
	r->trunc = post == NULL;
	end = post == NULL ? size : off + (long long)len;
	if (end > size)
		end = size;
	if (end > off) {
		r->prelen = (size_t)(end - off);
		if ((r->pre = malloc(r->prelen)) == NULL ||
		    f->real->pMethods->xRead(f->real, r->pre, (int)r->prelen,
		    off) != SQLITE_OK)
			abort();
	}
	if (post != NULL) {
		r->len = len;
		if ((r->post = malloc(len)) == NULL)
			abort();
		memcpy(r->post, post, len);
	}
}

/* A write, sync or truncation: is it the moment the power goes? */
static int
point(void)
{
	if (!P.on || P.dead)
		return P.dead;
	if (++P.points == P.cut)
		P.dead = 1;
	return P.dead;
}

void
faultvfs_record(void)
{
	forget_all();
	memset(&P, 0, sizeof(P));
	P.on = 1;
}

void
faultvfs_cut_at(long k)
{
	P.cut = k;
}

int
faultvfs_dead(void)
{
	return P.dead;
}

long
faultvfs_points(void)
{
	return P.points;
}

long
faultvfs_wal_syncs(void)
{
	return P.wal_syncs;
}

/* Put one file back: the synced content, then the writes kept. */
static long
restore(struct pfile *pf, enum cut_mode mode, long long last,
    unsigned *seed)
{
	struct rec	*r;
	size_t		 i, n;
	long		 lost = 0;
	int		 fd, ok = 1, *kept;

	if ((fd = open(pf->path, O_RDWR | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;
	if ((kept = calloc(pf->nrecs + 1, sizeof(*kept))) == NULL)
		abort();
	for (i = pf->nrecs; i-- > 0; ) {
		r = &pf->recs[i];
		if (r->prelen > 0 && pwrite(fd, r->pre, r->prelen, r->off) !=
		    (ssize_t)r->prelen)
			ok = 0;
	}
	if (ftruncate(fd, pf->synced) == -1)
		ok = 0;
	for (i = 0; i < pf->nrecs; i++) {
		r = &pf->recs[i];
		n = r->len;
		switch (mode) {
		case CUT_NONE:
			kept[i] = 0;
			break;
		case CUT_TORN:
			kept[i] = 1;
			if (r->seq == last && !r->trunc)
				/* A sector-aligned prefix, or half. */
				n = r->len > 512 ? (r->len / 2) & ~(size_t)511 :
				    r->len / 2;
			break;
		default:
			kept[i] = rand_r(seed) % 2;
			break;
		}
		if (!kept[i] || n < r->len)
			lost++;
		if (!kept[i])
			continue;
		if (r->trunc) {
			if (ftruncate(fd, r->off) == -1)
				ok = 0;
		} else if (n > 0 && pwrite(fd, r->post, n, r->off) !=
		    (ssize_t)n)
			ok = 0;
	}
	free(kept);
	if (close(fd) == -1)
		ok = 0;
	return ok ? lost : -1;
}

long
faultvfs_powerloss(enum cut_mode mode, unsigned seed)
{
	struct pfile	*pf;
	char		 shm[sizeof(dbs[0]) + 8];
	long		 lost = 0, n;
	size_t		 i;
	int		 ok = 1;

	for (pf = P.files; pf != NULL; pf = pf->next) {
		if ((n = restore(pf, mode, P.seq, &seed)) == -1)
			ok = 0;
		else
			lost += n;
	}
	for (i = 0; i < sizeof(dbs) / sizeof(dbs[0]); i++) {
		if (dbs[i][0] == '\0')
			continue;
		memcpy(shm, dbs[i], sizeof(dbs[i]));
		shm[sizeof(dbs[i]) - 1] = '\0';
		strcat(shm, "-shm");
		if (unlink(shm) == -1 && errno != ENOENT)
			ok = 0;
	}
	forget_all();
	memset(&P, 0, sizeof(P));
	return ok ? lost : -1;
}

/* The file methods. */

static int
f_close(sqlite3_file *pf)
{
	struct ffile	*f = (struct ffile *)pf;

	return f->real->pMethods->xClose(f->real);
}

static int
f_read(sqlite3_file *pf, void *buf, int amt, sqlite3_int64 off)
{
	struct ffile	*f = (struct ffile *)pf;
	int		 rc;

	if ((rc = hit(FOP_READ, code(FOP_READ), f->path)) != SQLITE_OK)
		return rc;
	return f->real->pMethods->xRead(f->real, buf, amt, off);
}

static int
f_write(sqlite3_file *pf, const void *buf, int amt, sqlite3_int64 off)
{
	struct ffile	*f = (struct ffile *)pf;
	int		 rc;

	if (point())
		return SQLITE_IOERR_WRITE;
	if ((rc = hit(FOP_WRITE, code(FOP_WRITE), f->path)) != SQLITE_OK)
		return rc;
	keep(f, buf, (size_t)amt, off);
	if (W.on && f->wal && W.writers == 0)
		W.unlocked++;
	return f->real->pMethods->xWrite(f->real, buf, amt, off);
}

static int
f_truncate(sqlite3_file *pf, sqlite3_int64 size)
{
	struct ffile	*f = (struct ffile *)pf;
	int		 rc;

	if (point())
		return SQLITE_IOERR_TRUNCATE;
	if ((rc = hit(FOP_TRUNCATE, code(FOP_TRUNCATE), f->path)) !=
	    SQLITE_OK)
		return rc;
	keep(f, NULL, 0, size);
	return f->real->pMethods->xTruncate(f->real, size);
}

/* Real fsync is skipped (see faultvfs.h); the model marks it durable. */
static int
f_sync(sqlite3_file *pf, int flags)
{
	struct ffile	*f = (struct ffile *)pf;
	struct pfile	*p;
	sqlite3_int64	 size = 0;
	int		 rc;

	if (point())
		return SQLITE_IOERR_FSYNC;
	if ((rc = hit(FOP_SYNC, code(FOP_SYNC), f->path)) != SQLITE_OK)
		return rc;
	if (P.on && f->path != NULL) {
		if ((p = pfile_find(f->path)) != NULL) {
			pfile_forget(p);
			if (f->real->pMethods->xFileSize(f->real, &size) !=
			    SQLITE_OK)
				abort();
			p->synced = size;
		}
		if (strcmp(role(f->path), "wal") == 0)
			P.wal_syncs++;
	}
	return SQLITE_OK;
}

static int
f_filesize(sqlite3_file *pf, sqlite3_int64 *size)
{
	struct ffile	*f = (struct ffile *)pf;
	int		 rc;

	if ((rc = hit(FOP_FILESIZE, code(FOP_FILESIZE), f->path)) !=
	    SQLITE_OK)
		return rc;
	return f->real->pMethods->xFileSize(f->real, size);
}

static int
f_lock(sqlite3_file *pf, int lock)
{
	struct ffile	*f = (struct ffile *)pf;
	int		 rc;

	if ((rc = hit(FOP_LOCK, code(FOP_LOCK), f->path)) != SQLITE_OK)
		return rc;
	return f->real->pMethods->xLock(f->real, lock);
}

static int
f_unlock(sqlite3_file *pf, int lock)
{
	struct ffile	*f = (struct ffile *)pf;
	int		 rc;

	/* With the power gone, locks still go: nothing is written. */
	if (!P.dead && (rc = hit(FOP_UNLOCK, code(FOP_UNLOCK), f->path)) !=
	    SQLITE_OK)
		return rc;
	return f->real->pMethods->xUnlock(f->real, lock);
}

static int
f_checklock(sqlite3_file *pf, int *out)
{
	struct ffile	*f = (struct ffile *)pf;
	int		 rc;

	if ((rc = hit(FOP_CHECKLOCK, code(FOP_CHECKLOCK), f->path)) !=
	    SQLITE_OK)
		return rc;
	return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int
f_control(sqlite3_file *pf, int op, void *arg)
{
	struct ffile	*f = (struct ffile *)pf;

	return f->real->pMethods->xFileControl(f->real, op, arg);
}

static int
f_sectorsize(sqlite3_file *pf)
{
	struct ffile	*f = (struct ffile *)pf;

	return f->real->pMethods->xSectorSize(f->real);
}

static int
f_devchar(sqlite3_file *pf)
{
	struct ffile	*f = (struct ffile *)pf;

	return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int
f_shmmap(sqlite3_file *pf, int region, int size, int extend,
    void volatile **pp)
{
	struct ffile	*f = (struct ffile *)pf;
	int		 rc, c = code(FOP_SHMMAP);

	/* EACCES is met opening the -shm file, ENOSPC growing it. */
	if ((F.kind == FAULT_EACCES && f->nregion > 0) ||
	    (F.kind == FAULT_ENOSPC && (!extend || region < f->nregion)))
		c = 0;
	if ((rc = hit(FOP_SHMMAP, c, f->path)) != SQLITE_OK)
		return rc;
	rc = f->real->pMethods->xShmMap(f->real, region, size, extend, pp);
	if (rc == SQLITE_OK && *pp != NULL && region >= f->nregion)
		f->nregion = region + 1;
	if (rc == SQLITE_OK && *pp != NULL && region == 0)
		f->shm0 = *pp;
	return rc;
}

static int
f_shmlock(sqlite3_file *pf, int offset, int n, int flags)
{
	struct ffile	*f = (struct ffile *)pf;
	int		 rc;

	/* Releasing a lock does not fail; taking one may. */
	if ((flags & SQLITE_SHM_LOCK) && (rc = hit(FOP_SHMLOCK,
	    code(FOP_SHMLOCK), f->path)) != SQLITE_OK)
		return P.dead ? SQLITE_IOERR_SHMLOCK : rc;
	rc = f->real->pMethods->xShmLock(f->real, offset, n, flags);
	/* Slot 0 is the log's write lock (faultvfs_log_unlocked()). */
	if (rc == SQLITE_OK && offset == 0 && n >= 1) {
		if ((flags & SQLITE_SHM_LOCK) && (flags & SQLITE_SHM_EXCLUSIVE)
		    && !f->wlock) {
			f->wlock = 1;
			W.writers++;
		} else if ((flags & SQLITE_SHM_UNLOCK) && f->wlock) {
			f->wlock = 0;
			W.writers--;
		}
	}
	return rc;
}

/*
 * The log's index (the -shm) names its last committed frame in the
 * header's second copy (48 bytes in; mxFrame at 16), which SQLite
 * writes before a barrier and then the first copy: every frame it
 * names must then be in the -wal file whole, with the log's salts and
 * a checksum chain that holds from the log's header on, as recovery
 * reads it (it keeps frames up to the first that fails).  Verified
 * once per frame: the chain is kept up to the last frame checked.
 */
static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* SQLite's walChecksumBytes(): n a multiple of 8. */
static void
wal_cksum(int native, const unsigned char *p, size_t n, uint32_t s[2])
{
	uint32_t	 x0, x1;
	size_t		 i;

	for (i = 0; i < n; i += 8) {
		if (native) {
			memcpy(&x0, p + i, 4);
			memcpy(&x1, p + i + 4, 4);
		} else {
			x0 = be32(p + i);
			x1 = be32(p + i + 4);
		}
		s[0] += x0 + s[1];
		s[1] += x1 + s[0];
	}
}

static int
log_sound(const char *path, uint32_t mx)
{
	static struct {
		char		 path[560];
		uint32_t	 salt[2], frames, s[2];
	} K;				/* the chain verified so far */
	unsigned char	 hdr[32], *fr = NULL;
	uint32_t	 pgsz, s[2] = { 0, 0 }, i;
	int		 fd, native, ok = 0;
	const uint32_t	 one = 1;

	if (mx == 0)
		return 1;
	if ((fd = open(path, O_RDONLY)) == -1)
		return 0;
	if (pread(fd, hdr, 32, 0) != 32)
		goto out;
	/* checksums in the machine's order when the magic's low bit
	 * says big-endian and the machine is, or says little and is */
	native = (be32(hdr) & 1) == (*(const unsigned char *)&one == 0);
	pgsz = be32(hdr + 8);
	if (pgsz < 512 || pgsz > 65536 || (fr = malloc(24 + pgsz)) == NULL)
		goto out;
	wal_cksum(native, hdr, 24, s);
	if (s[0] != be32(hdr + 24) || s[1] != be32(hdr + 28))
		goto out;
	i = 0;
	if (strcmp(K.path, path) == 0 && K.salt[0] == be32(hdr + 16) &&
	    K.salt[1] == be32(hdr + 20) && K.frames <= mx) {
		i = K.frames;		/* the same log: on from there */
		s[0] = K.s[0];
		s[1] = K.s[1];
	}
	for (; i < mx; i++) {
		if (pread(fd, fr, 24 + pgsz, 32 + (off_t)i * (24 + pgsz)) !=
		    (ssize_t)(24 + pgsz) || be32(fr + 8) != be32(hdr + 16) ||
		    be32(fr + 12) != be32(hdr + 20))
			goto out;
		wal_cksum(native, fr, 8, s);
		wal_cksum(native, fr + 24, pgsz, s);
		if (s[0] != be32(fr + 16) || s[1] != be32(fr + 20))
			goto out;
	}
	snprintf(K.path, sizeof(K.path), "%s", path);
	K.salt[0] = be32(hdr + 16);
	K.salt[1] = be32(hdr + 20);
	K.frames = mx;
	K.s[0] = s[0];
	K.s[1] = s[1];
	ok = 1;
out:
	free(fr);
	close(fd);
	return ok;
}

static void
watch_log(struct ffile *f)
{
	char		 wal[560];
	uint32_t	 mx;

	memcpy(&mx, (const unsigned char *)f->shm0 + 48 + 16, sizeof(mx));
	snprintf(wal, sizeof(wal), "%s-wal", f->path);
	W.checks++;
	if (!log_sound(wal, mx))
		W.unwritten++;
}

static void
f_shmbarrier(sqlite3_file *pf)
{
	struct ffile	*f = (struct ffile *)pf;

	f->real->pMethods->xShmBarrier(f->real);
	if (W.on && f->shm0 != NULL)
		watch_log(f);
}

void
faultvfs_watch_log(int on)
{
	W.on = on;
	W.checks = W.unwritten = W.unlocked = 0;
}

long
faultvfs_log_unlocked(void)
{
	return W.unlocked;
}

long
faultvfs_log_checks(void)
{
	return W.checks;
}

long
faultvfs_log_unwritten(void)
{
	return W.unwritten;
}

static int
f_shmunmap(sqlite3_file *pf, int del)
{
	struct ffile	*f = (struct ffile *)pf;

	f->nregion = 0;
	return f->real->pMethods->xShmUnmap(f->real, del);
}

static const sqlite3_io_methods methods = {
	2,
	f_close, f_read, f_write, f_truncate, f_sync, f_filesize, f_lock,
	f_unlock, f_checklock, f_control, f_sectorsize, f_devchar,
	f_shmmap, f_shmlock, f_shmbarrier, f_shmunmap,
	NULL, NULL
};

/* The VFS methods. */

static int
v_open(sqlite3_vfs *vfs, const char *path, sqlite3_file *pf, int flags,
    int *outflags)
{
	struct ffile	*f = (struct ffile *)pf;
	struct stat	 sb;
	size_t		 i;
	int		 rc, c, exists, journal;

	(void)vfs;
	memset(f, 0, sizeof(*f));
	f->real = (sqlite3_file *)(f + 1);
	f->path = path;
	f->wal = (flags & SQLITE_OPEN_WAL) != 0;
	exists = path != NULL && stat(path, &sb) == 0;
	journal = (flags & (SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL |
	    SQLITE_OPEN_SUPER_JOURNAL)) != 0;
	c = code(FOP_OPEN);
	/* A full disk refuses to create a file, not to open one. */
	if (F.kind == FAULT_ENOSPC && (exists || !(flags & SQLITE_OPEN_CREATE)))
		c = 0;
	if (path == NULL)
		c = 0;			/* temporary files: not our point */
	if ((rc = hit(FOP_OPEN, c, path)) != SQLITE_OK) {
		/* As unixOpen(): a journal the directory refuses, then a
		 * read-write open retried read-only (which a persistent
		 * EIO or EACCES fails too). */
		if (P.dead)
			return SQLITE_CANTOPEN;
		if (F.kind == FAULT_EACCES && journal && !exists &&
		    (flags & SQLITE_OPEN_CREATE))
			return SQLITE_READONLY_DIRECTORY;
		if (!(flags & SQLITE_OPEN_READWRITE) || !exists ||
		    (F.persistent && F.kind != FAULT_ENOSPC))
			return SQLITE_CANTOPEN;
		flags &= ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
		flags |= SQLITE_OPEN_READONLY;
	}
	rc = unixvfs->xOpen(unixvfs, path, f->real, flags, outflags);
	if (rc != SQLITE_OK) {
		/* The unix VFS leaves no methods on failure; neither do we. */
		return rc;
	}
	f->base.pMethods = &methods;
	if (path != NULL && (flags & SQLITE_OPEN_MAIN_DB)) {
		for (i = 0; i < sizeof(dbs) / sizeof(dbs[0]); i++)
			if (strcmp(dbs[i], path) == 0)
				break;
		for (i = i < sizeof(dbs) / sizeof(dbs[0]) ? i : 0;
		    i < sizeof(dbs) / sizeof(dbs[0]); i++)
			if (dbs[i][0] == '\0' ||
			    strcmp(dbs[i], path) == 0) {
				snprintf(dbs[i], sizeof(dbs[i]), "%s",
				    path);
				break;
			}
	}
	return SQLITE_OK;
}

static int
v_delete(sqlite3_vfs *vfs, const char *path, int dirsync)
{
	int	 rc;

	(void)vfs;
	if ((rc = hit(FOP_DELETE, code(FOP_DELETE), path)) != SQLITE_OK)
		return rc;
	if ((rc = unixvfs->xDelete(unixvfs, path, dirsync)) == SQLITE_OK)
		pfile_drop(path);
	return rc;
}

static int
v_access(sqlite3_vfs *vfs, const char *path, int flags, int *out)
{
	(void)vfs;
	/* As unixAccess(): a failing stat() or access() says "no". */
	if (hit(FOP_ACCESS, code(FOP_ACCESS), path) != SQLITE_OK) {
		*out = 0;
		return SQLITE_OK;
	}
	return unixvfs->xAccess(unixvfs, path, flags, out);
}

static int
v_fullpathname(sqlite3_vfs *vfs, const char *path, int n, char *out)
{
	(void)vfs;
	return unixvfs->xFullPathname(unixvfs, path, n, out);
}

static void *
v_dlopen(sqlite3_vfs *vfs, const char *path)
{
	(void)vfs;
	return unixvfs->xDlOpen(unixvfs, path);
}

static void
v_dlerror(sqlite3_vfs *vfs, int n, char *msg)
{
	(void)vfs;
	unixvfs->xDlError(unixvfs, n, msg);
}

static void (*
v_dlsym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	(void)vfs;
	return unixvfs->xDlSym(unixvfs, h, sym);
}

static void
v_dlclose(sqlite3_vfs *vfs, void *h)
{
	(void)vfs;
	unixvfs->xDlClose(unixvfs, h);
}

static int
v_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return unixvfs->xRandomness(unixvfs, n, out);
}

static int
v_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return unixvfs->xSleep(unixvfs, us);
}

static int
v_currenttime(sqlite3_vfs *vfs, double *t)
{
	(void)vfs;
	return unixvfs->xCurrentTime(unixvfs, t);
}

static int
v_lasterror(sqlite3_vfs *vfs, int n, char *msg)
{
	(void)vfs;
	return unixvfs->xGetLastError(unixvfs, n, msg);
}

static int
v_currenttime64(sqlite3_vfs *vfs, sqlite3_int64 *t)
{
	(void)vfs;
	return unixvfs->xCurrentTimeInt64(unixvfs, t);
}

int
faultvfs_install(void)
{
	if (unixvfs != NULL)
		return SQLITE_OK;
	if ((unixvfs = sqlite3_vfs_find("unix")) == NULL)
		return SQLITE_ERROR;
	shim.iVersion = 2;
	shim.szOsFile = (int)sizeof(struct ffile) + unixvfs->szOsFile;
	shim.mxPathname = unixvfs->mxPathname;
	shim.zName = "faultvfs";
	shim.xOpen = v_open;
	shim.xDelete = v_delete;
	shim.xAccess = v_access;
	shim.xFullPathname = v_fullpathname;
	shim.xDlOpen = v_dlopen;
	shim.xDlError = v_dlerror;
	shim.xDlSym = v_dlsym;
	shim.xDlClose = v_dlclose;
	shim.xRandomness = v_randomness;
	shim.xSleep = v_sleep;
	shim.xCurrentTime = v_currenttime;
	shim.xGetLastError = v_lasterror;
	shim.xCurrentTimeInt64 = v_currenttime64;
	return sqlite3_vfs_register(&shim, 1);
}
