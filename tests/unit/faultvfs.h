/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: a fault-injecting, power-cutting SQLite VFS.
 *
 * faultvfs_install() registers a shim over the "unix" VFS as the
 * default, so store_open() uses it with no change to the product.  It
 * does two things, both off until asked:
 *
 * Faults.  faultvfs_arm(kind, n, persistent) fails the n-th I/O call to
 * which that kind of error applies (counted from the arm) with the code
 * the unix VFS returns for that errno on that call: EIO on a write is
 * SQLITE_IOERR_WRITE, ENOSPC on a write SQLITE_FULL, EBUSY on a lock
 * SQLITE_BUSY, EACCES on an open a read-only fallback, and so on (see
 * the table in faultvfs.c).  One-shot fails that call only (a transient
 * error); persistent fails it and every applicable call after it (a
 * dead disk, a full disk, a lost permission, a lock never released).
 *
 * Power loss.  Every write and truncation is done on the real file, and
 * its pre-image and post-image are kept until the file is synced.
 * faultvfs_cut_at(k) makes the k-th write, sync or truncation the
 * moment the power goes: it and every I/O call after it fail.
 * faultvfs_powerloss() then puts the files back as a disk may have
 * left them: the synced content, plus none, a torn prefix of the last,
 * or a random subset of the writes since the last sync; the -shm file
 * (memory, not storage) is deleted.  Only call it once every connection
 * on those files is closed.
 *
 * Real fsync is skipped: durability is the model's, and the tests stay
 * fast.  Calls made with the plain "unix" VFS (the tests' own checks)
 * are neither counted nor failed.
 */
#ifndef ONCEHOOK_FAULTVFS_H
#define ONCEHOOK_FAULTVFS_H

/* The errors injected, as the errno a system call would have set. */
enum fault_kind {
	FAULT_EIO,		/* failing disk */
	FAULT_ENOSPC,		/* full disk */
	FAULT_EACCES,		/* permission lost */
	FAULT_EBUSY,		/* lock held elsewhere */
	FAULT__MAX
};

/* The calls counted, for reports. */
enum fault_op {
	FOP_OPEN,
	FOP_READ,
	FOP_WRITE,
	FOP_SYNC,
	FOP_TRUNCATE,
	FOP_FILESIZE,
	FOP_LOCK,
	FOP_UNLOCK,
	FOP_CHECKLOCK,
	FOP_SHMMAP,
	FOP_SHMLOCK,
	FOP_DELETE,
	FOP_ACCESS,
	FOP__MAX
};

/* What the disk kept of the writes since the last sync. */
enum cut_mode {
	CUT_NONE,		/* none of them */
	CUT_TORN,		/* all but the last, and a prefix of the last */
	CUT_SUBSET,		/* a random subset, in any order */
	CUT__MAX
};

/* Register the shim as the default VFS; 0 or an SQLite code. */
int		 faultvfs_install(void);

/* Fail the n-th (from 1) applicable call from now on. */
void		 faultvfs_arm(enum fault_kind, long n, int persistent);
/* Stop failing and counting. */
void		 faultvfs_disarm(void);
/* Applicable calls seen since the arm; faults injected. */
long		 faultvfs_calls(void);
long		 faultvfs_hits(void);
/* The first fault injected: its call, its file ("db", "wal", ...), its
 * SQLite code. */
enum fault_op	 faultvfs_hit_op(void);
const char	*faultvfs_hit_file(void);
int		 faultvfs_hit_rc(void);

const char	*faultvfs_kind_name(enum fault_kind);
const char	*faultvfs_op_name(enum fault_op);
const char	*faultvfs_cut_name(enum cut_mode);

/* Start recording writes since the last sync (forgetting any kept),
 * taking every file's present content as durable. */
void		 faultvfs_record(void);
/* The power goes at the k-th (from 1) write, sync or truncation after
 * faultvfs_record(); 0: never. */
void		 faultvfs_cut_at(long k);
/* 1 once the power is gone. */
int		 faultvfs_dead(void);
/* Writes, syncs and truncations since faultvfs_record(). */
long		 faultvfs_points(void);
/* Completed syncs of write-ahead logs since faultvfs_record(). */
long		 faultvfs_wal_syncs(void);
/*
 * Put the files as the disk left them (see above), delete the -shm
 * files, stop recording and bring the power back.  seed drives
 * CUT_SUBSET.  Returns the number of writes lost (in whole or part), or
 * -1 if a file could not be restored.
 */
long		 faultvfs_powerloss(enum cut_mode, unsigned seed);

/*
 * Watch the log (on: 1): at each barrier of a -shm, is every frame its
 * index names as committed in the -wal file, whole, with a checksum
 * chain that holds (as recovery would keep it)?  Checks made, and how
 * many found it otherwise, since the watch began.
 */
void		 faultvfs_watch_log(int on);
long		 faultvfs_log_checks(void);
long		 faultvfs_log_unwritten(void);
/* Writes to a -wal file while no connection through this VFS held the
 * log's write lock (the -shm's slot 0), since the watch began. */
long		 faultvfs_log_unlocked(void);

#endif
