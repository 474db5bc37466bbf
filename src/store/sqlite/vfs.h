/* SPDX-License-Identifier: MIT */
/*
 * oncehook: SQLite's log written in fewer system calls.
 *
 * SQLite writes each frame of its write-ahead log with two pwrite(2)
 * calls, the frame's 24-byte header and then its page, each a trip into
 * the file system with its locks (docs/design/012-sqwal-vfs.md).
 * sqwal_register() makes a VFS that wraps the system's ("unix") the
 * default: a log gathers the frames of a transaction in a buffer and
 * writes them in one call; a database file is the system's but for one
 * thing (below); every other file is the system VFS's own object, with
 * its own methods.
 *
 * When the bytes must be in the file.  A log's frames become visible
 * to other connections (other processes) when the committing one
 * writes the log's index in the -shm, which is no call on the log: so
 * the buffer is written out with the write of the commit frame's page
 * (its header says so: the database's size after the commit, bytes 4-7,
 * is not zero), before that write returns, and before any other call
 * on the file (read, sync, size, truncate, close, file control) or any
 * write that does not follow the buffered bytes.  A failed write is
 * returned by the call that found it (the commit's at the latest), so
 * SQLite rolls back; nothing of a transaction that was not committed
 * is visible to anyone, as with the system's VFS.
 *
 * Only what is recognised is held: a 24-byte write at the log's end so
 * far, at a frame's place (once the page size is seen), before any sync
 * of the log in this write transaction; then the page that follows it.
 * Anything else is written at once, after what was held: the log's own
 * 32-byte header, a page rewritten in place, a header whose checksum
 * SQLite rewrites after the commit frame (before the end), the part of
 * a frame split at a sync point (synchronous=full on a disk that is not
 * power-safe pads the commit to a sector), a whole frame in one write
 * should a later SQLite do that.  So a SQLite that writes its log some
 * other way gets no gathering, never a late byte.
 *
 * Two moments that are no call on the log are watched through the
 * database file: the -shm barrier around which SQLite writes the index
 * header (a commit's publication), and the release of the write lock.
 * What is held then (nothing, in SQLite's own flows; frames of a
 * spilled transaction that rolled back, at the release) is written out
 * first: past the log's last commit, under the lock, such frames are
 * nothing to anyone, where held on they would be written later over
 * what another process committed there.  A failure there has no call
 * to be returned by: the log's next call returns it.
 */
#ifndef ONCEHOOK_SQWAL_H
#define ONCEHOOK_SQWAL_H

#define SQWAL_VFS	"oncehook"
#define SQWAL_BUFSZ	(64 * 1024)	/* held at most, per open log */

/*
 * Registers the wrapping VFS as SQLite's default, over the default of
 * the first call ("unix"; the tests' fault-injecting VFS, tests/
 * faultvfs.h, in theirs); again after a sqlite3_shutdown() and
 * sqlite3_initialize(), which make "unix" the default.  Called at each
 * store's connect, not at the process's start: finding the default
 * starts SQLite.  0, or -1: the default stays what it was.
 */
int	sqwal_register(void);

/*
 * How many times, in this process, bytes were still held at such a
 * barrier (a commit's publication), and written out there.  SQLite's
 * own ways of writing the log leave none (tests/unit/t_sqwal.c); a count
 * means one that was not foreseen.
 */
long	sqwal_rescues(void);

#endif
