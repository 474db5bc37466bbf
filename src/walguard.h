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
 * file's users let go when they notice the move (store.c, moved()),
 * idle ones within a second (front.c), and their locks go with them; a
 * process that ends takes its lock with it.  The locks are open file
 * description locks (F_OFD_SETLK): SQLite's own open and close of the
 * directory, for fsync, cannot drop them.
 *
 * What it cannot see: a -wal left by processes that were all killed
 * (kill -9), then a backup moved over the database.  No one holds the
 * old file's byte; the next connection replays that log over the backup.
 * Restoring by hand means removing DB-wal and DB-shm with the old file
 * (README, "Reliability").
 */
#ifndef ONCEHOOK_WALGUARD_H
#define ONCEHOOK_WALGUARD_H

#include <stddef.h>
#include <sys/types.h>

#define WALGUARD_NONE	  (-1)	/* none taken: the directory cannot be
				 * opened or locked (the guard is off) */
#define WALGUARD_FOREIGN  (-2)	/* another file's users hold the log */

/*
 * Take the byte for the file (ino) at dbpath, then look for others.
 * Returns the descriptor that holds it (>= 0; walguard_release() it),
 * WALGUARD_NONE, or WALGUARD_FOREIGN with err set (nothing held).
 */
int	walguard_take(const char *dbpath, ino_t ino, char *err,
	    size_t errsz);

/* Let go of what walguard_take() returned (any value). */
void	walguard_release(int fd);

#endif
