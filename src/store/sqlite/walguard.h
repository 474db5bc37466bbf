/* SPDX-License-Identifier: MIT */
/*
 * oncehook: who may use the -wal and -shm at a database's path.
 *
 * SQLite's log files are named after the database's path, not its file.
 * When the file at the path is replaced (a backup moved over it) while
 * processes still hold the old one, the -wal and -shm at the path are
 * the old file's: a connection that opens the new file and reads them
 * takes the old file's pages for the new one's, and corrupts it.  SQLite
 * cannot tell; the file system can.
 *
 * Each connection holds a shared lock, in the lock space of the
 * database's directory, on one byte that names its file (its inode, in
 * a region kept for the database's name).  Before it reads the log, a
 * new connection takes its own byte and then looks for any other in the
 * region: another database file's users are still at work at this path,
 * and it must not open the log (503: retry).  Both sides take before
 * they look, so of two that race one at least sees the other.  The old
 * file's users let go when they notice the move (store/sqlite/engine.c, sq_moved()),
 * idle ones within a second (front/front.c), and their locks go with them; a
 * process that ends takes its lock with it.  The locks are open file
 * description locks (F_OFD_SETLK): SQLite's own open and close of the
 * directory, for fsync, cannot drop them.
 *
 * What it cannot see: a -wal left by processes that were all killed
 * (kill -9), then a backup moved over the database.  No one holds the
 * old file's byte; the next connection replays that log over the backup.
 * Restoring by hand means removing DB-wal and DB-shm with the old file
 * (docs/reliability.md, docs/design/013-walguard.md).
 */
#ifndef ONCEHOOK_WALGUARD_H
#define ONCEHOOK_WALGUARD_H

#include <stddef.h>
#include <signal.h>
#include <sys/types.h>

/* The signal that ends a wait for the write lock (a realtime one). */
#define WALGUARD_SIGNAL	(SIGRTMIN + 2)

#define WALGUARD_NONE	  (-1)	/* none taken: the directory cannot be
				 * opened or locked (the guard is off) */
#define WALGUARD_FOREIGN  (-2)	/* another file's users hold the log */

/*
 * The write lock: flock(2) on the same descriptor of the directory (a
 * directory cannot be opened for writing, which an fcntl(2) write lock
 * would need; flock and fcntl locks do not meet).  A process takes it
 * before BEGIN IMMEDIATE and lets go after COMMIT, so oncehook's
 * writers wait in the kernel and the next one wakes as the lock frees,
 * where SQLite's busy handler would sleep whole milliseconds.  SQLite's
 * lock stays the one that counts: other writers (the site's code, the
 * sqlite3 shell) are still met by its busy handler, for what is left of
 * the timeout.  Databases in one directory share the lock.
 */
struct walguard {
	int	 fd;		/* the directory; < 0 if none */
	int	 locked;	/* this process holds the write lock */
	off_t	 byte;		/* the file's byte, held while fd >= 0 */
};

/*
 * Take the byte for the file (ino) at dbpath, then look for others.
 * Returns 0 with g held (walguard_release() it), WALGUARD_NONE (g off:
 * every call below does nothing), or WALGUARD_FOREIGN with err set
 * (nothing held).
 */
int	walguard_take(struct walguard *g, const char *dbpath, ino_t ino,
	    char *err, size_t errsz);

/*
 * 1 if another open description (another oncehook connection, in this
 * process or another) holds the same file's byte: the file has other
 * users besides this connection.  0 if none, or g is off.
 */
int	walguard_shared(const struct walguard *g);

/* Let go of everything g holds; g is off afterwards. */
void	walguard_release(struct walguard *g);

/*
 * Wait up to timeout_ms for the write lock; *waited_ms is how long it
 * took.  0: held (or g is off); 1: not within the timeout.  A timer
 * signal (WALGUARD_SIGNAL, unblocked here) ends a wait that the lock
 * does not.
 */
int	walguard_lock(struct walguard *g, long timeout_ms, long *waited_ms);

/* Let go of the write lock, if held. */
void	walguard_unlock(struct walguard *g);

/* The directory of the database at dbpath, where the locks live,
 * opened (close-on-exec); -1 if it cannot be. */
int	walguard_dir(const char *dbpath);

/*
 * A CGI request of the database at dbpath, in the directory dirfd
 * (walguard_dir()): 1 if another request holds its byte now (requests
 * overlap), else 0 (or it cannot be told); then this one holds it too
 * until dirfd is closed.  Oncehook's other processes (work, deliver,
 * stats, FastCGI) never hold it.
 */
int	walguard_request(int dirfd, const char *dbpath);

/* 1 if a process holds the write lock of the directory dirfd now
 * (walguard_dir()), or the lock cannot be asked; asked without
 * waiting, nothing kept. */
int	walguard_taken(int dirfd);

#endif
