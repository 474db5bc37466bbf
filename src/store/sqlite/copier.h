/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the log's copy into the database, beside a writer.
 *
 * A writer that claims for other processes (writer/writer.h) commits all the
 * while; its checkpoint (store_upkeep(): STORE_MAINTAIN) copies the log into the
 * database under the write lock, every claim queued behind it.  Under
 * ONCEHOOK_SYNCHRONOUS=normal the processes are what is busy (each
 * commit is a write, no fsync): a process that copied the log between
 * two requests (the way under `full`, writer/writer.h) would keep the requests
 * queued on it waiting for the copy and its two fsyncs.  There the
 * writer has a copier: a thread of its own process with a connection of
 * its own, asked (copier_ask()) each time store_upkeep(): STORE_COPY_DUE says so, that
 * copies what the log holds (store_upkeep(): STORE_COPY: a PASSIVE checkpoint, no
 * write lock, never waiting for a reader) while the writer goes on
 * committing.  When its own checkpoint is due (STORE_COPY_CHECKPOINT),
 * the writer lets a copy still running end first (copier_wait(): it
 * would make the checkpoint busy), then copies only what came since.
 * Under `full` the writer is what is busy (each batch waits for its
 * fsync) and the processes wait for it: the copy is theirs.
 *
 * The two threads share the configuration (read only), this struct's
 * flags (under its mutex) and SQLite, which the writer's process then
 * runs with its mutexes on (sqlite_threaded(): each thread uses only its
 * own connections).  The copier takes no signal, and lets its
 * connection go when it has not been asked for a second, so that a
 * database file replaced meanwhile is not held (store/sqlite/walguard.h).  Not on
 * MariaDB/MySQL (its server keeps its own log).
 */
#ifndef ONCEHOOK_COPIER_H
#define ONCEHOOK_COPIER_H

struct conf;
struct copier;

/* How long the writer lets a copy end before its checkpoint, at most. */
#define COPIER_WAIT_MS	20

/* A copier for cf's database, started; NULL if it cannot be (logged):
 * then the processes are asked to copy, as under `full`. */
struct copier	*copier_start(const struct conf *);

/* Ask for a copy; never blocks (one asked and not begun is enough). */
void		 copier_ask(struct copier *);

/*
 * The writer's checkpoint is due: a copy asked but not begun is not
 * made (the checkpoint copies it), and one running is waited for, at
 * most ms, once (if it runs longer, the next calls return at once until
 * it ends).  NULL returns.
 */
void		 copier_wait(struct copier *, long ms);

/* Stop it (after the copy it is in, if one) and free it; NULL is fine. */
void		 copier_stop(struct copier *);

#endif
