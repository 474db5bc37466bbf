/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the SQLite store's file and its log (store/store.h's rule
 * 5, and the engine's upkeep): whether ONCEHOOK_DB still names the file
 * the connection has open, letting go of a moved file's log, and the
 * checkpoints that keep the log short between requests.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "conf.h"
#include "lib/io.h"
#include "lib/log.h"
#include "store/sqlite/engine.h"
#include "store/store.h"

static const char *const sides[SIDE__MAX] = { "-wal", "-shm" };

/* What path names now; ino 0 if nothing. */
void
sq_fileid(const char *path, struct fileid *id)
{
	struct stat	 sb;

	if (path != NULL && stat(path, &sb) == 0) {
		id->dev = sb.st_dev;
		id->ino = sb.st_ino;
		id->ctime = sb.st_ctim;
	} else
		memset(id, 0, sizeof(*id));
}

/* Remember the -wal and -shm files the connection uses; -1 if no memory. */
int
sq_sides(struct sqstore *s)
{
	size_t	 i, len = strlen(s->cf->db);

	if (s->dbid.ino == 0)
		sq_fileid(s->cf->db, &s->dbid);
	for (i = 0; i < SIDE__MAX; i++) {
		if ((s->side[i] = malloc(len + 5)) == NULL)
			return -1;
		snprintf(s->side[i], len + 5, "%s%s", s->cf->db, sides[i]);
		sq_fileid(s->side[i], &s->sideid[i]);
	}
	return 0;
}

/*
 * The database file moved (removed, renamed, or replaced by another
 * file) while this connection had it open.  Its log is not the new
 * file's: copy what it holds into the old file through our descriptor
 * (a renamed file keeps every committed event), then remove the old
 * -wal and -shm from the path if they are still the ones we used, so a
 * connection to the new file does not replay the old log over it.  The
 * connection is closed later without a checkpoint (store_close()), so
 * it never touches the path again.
 */
static void
sq_let_go(struct sqstore *s)
{
	struct fileid	 now;
	size_t		 i;
	int		 rc;

	/* Found at COMMIT: that transaction is not committed (the
	 * caller answers 503); ended here, or the checkpoint could not
	 * run and committed events would stay in the old log. */
	if (!sqlite3_get_autocommit(s->db))
		(void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	rc = sqlite3_wal_checkpoint_v2(s->db, "main",
	    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	if (rc != SQLITE_OK)
		log_warnx("store: %s: copying the old log into the moved file: "
		    "%s", s->cf->db, sqlite3_errmsg(s->db));
	for (i = 0; i < SIDE__MAX; i++) {
		sq_fileid(s->side[i], &now);
		if (now.ino != 0 && now.ino == s->sideid[i].ino &&
		    now.dev == s->sideid[i].dev && unlink(s->side[i]) == 0)
			log_warnx("store: removed the old %s, which belonged "
			    "to the file that was at %s", s->side[i],
			    s->cf->db);
	}
}

/*
 * 1 if the -shm (shm: what its path names now) cannot be written: with
 * chattr +i, SQLite's next write to its mapped memory would SIGBUS.
 * Logged once; the store is marked moved and broken (closed without a
 * checkpoint, which would write it too).  access() is asked only when
 * the file's ctime changed since it was last found writable (chattr
 * changes it), and a ctime of the last two seconds is never kept as
 * writable: with coarse time stamps a chattr in the same tick as a
 * write keeps the ctime.
 */
int
sq_shm_immutable(struct sqstore *s, const struct fileid *shm)
{
	if (shm->ctime.tv_sec == s->shm_writable.tv_sec &&
	    shm->ctime.tv_nsec == s->shm_writable.tv_nsec)
		return 0;
	if (access(s->side[SIDE_SHM], W_OK) == 0 || errno != EPERM) {
		if (shm->ctime.tv_sec < time(NULL) - 1)
			s->shm_writable = shm->ctime;
		return 0;
	}
	log_error("store: %s-shm cannot be written (immutable? chattr -i "
	    "it): answering 503", s->cf->db);
	s->moved = s->broken = 1;
	return 1;
}

/*
 * 0 if ONCEHOOK_DB still names the database this connection has open
 * (and DB-wal, DB-shm the files it uses), and the shared memory can be
 * written.  Else 1, once logged: the store is marked moved and broken,
 * nothing may be committed through it, and the pipeline opens the path
 * again for a later request (store/store.h, rule 5).
 */
int
sq_moved(struct sqstore *s)
{
	struct fileid	 now, shm = { 0 };
	const char	*what = NULL;
	int		 has_moved = 0;
	size_t		 i;

	if (s->moved)
		return 1;
	if (s->immutable)
		return 0;
	if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_HAS_MOVED,
	    &has_moved) == SQLITE_OK && has_moved)
		what = "the database file was removed, renamed or replaced";
	for (i = 0; what == NULL && i < SIDE__MAX; i++) {
		sq_fileid(s->side[i], &now);
		if (i == SIDE_SHM)
			shm = now;
		if (s->sideid[i].ino == 0) {
			s->sideid[i] = now;	/* made after we opened */
			continue;
		}
		if (now.ino != s->sideid[i].ino || now.dev != s->sideid[i].dev)
			what = i == SIDE_WAL ? "its -wal file was removed or "
			    "replaced" : "its -shm file was removed or replaced";
	}
	if (what == NULL && sq_shm_immutable(s, &shm))
		return 1;
	if (what == NULL)
		return 0;
	log_error("store: %s: %s while in use: nothing is committed through "
	    "the old one (503); the path is opened again for the next "
	    "request", s->cf->db, what);
	s->moved = s->broken = 1;
	if (has_moved)
		sq_let_go(s);
	return 1;
}

int
sq_idle(struct store *b)
{
	struct sqstore	*s = (struct sqstore *)b;
	return sq_moved(s);
}


/*
 * The log's size after each commit of this connection.  Setting it
 * turns SQLite's automatic checkpoint off: store_upkeep(): STORE_MAINTAIN does it.
 */
int
sq_on_wal(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct sqstore	*s = arg;

	(void)db;
	(void)name;
	if (frames < s->wal_frames)	/* the log started over */
		s->copy_said = 0;
	s->wal_frames = frames;
	return SQLITE_OK;
}

/*
 * SQLite's own checkpoint, after a commit past 1,000 pages, is PASSIVE:
 * it copies what no reader still needs, and the log starts over only
 * when a writer finds it all copied and no reader in it.  With several
 * processes looking up events all the time that is never, and the log
 * grows without end.  Here, between requests (the
 * answer is out), past CKPT_FRAMES: take the write lock, so oncehook's
 * writers queue in the kernel rather than extend the log meanwhile, and
 * RESTART: copy everything, then start the log over if no reader is in
 * it.  Busy if a reader is (a lookup, short: the copy stops at the
 * oldest snapshot a reader holds) or another connection is
 * copying (store_upkeep(): STORE_COPY): the next call tries again, and the next
 * commit starts the log over if it finds it all copied.  Past
 * CKPT_FRAMES_LONG (busy that often) it waits for the readers, in naps
 * of CKPT_NAP_US, at most CKPT_NAPS of them: not with SQLite's busy
 * handler, which sleeps whole milliseconds while every claim of a
 * writer waits behind this checkpoint.
 *
 * The copy is most of a checkpoint's cost (a read and a write of each
 * page, then an fdatasync of the database's scattered pages, and
 * every claim queued behind it).  A
 * writer that claims for other processes (writer/writer.h) therefore has the
 * log copied every STORE_COPY_STEP pages (store_upkeep(): STORE_COPY_DUE) on another
 * connection, beside its commits (store_upkeep(): STORE_COPY: a PASSIVE checkpoint),
 * by its copier or one of the processes (store/sqlite/copier.h says which when).
 * Under load the writer
 * commits all the while, so the log is never all copied when it begins
 * a transaction and still reaches CKPT_FRAMES; its own checkpoint then
 * copies only what came since the last copy.  When the load pauses, a
 * whole copy lets the next commit start the log over (SQLite does, if
 * no reader is in it).  Why: docs/design/016-copier.md.
 */
#define CKPT_FRAMES	1000
#define CKPT_FRAMES_LONG 2000
#define CKPT_NAP_US	100
#define CKPT_NAPS	20

/* A checkpoint in mode; a failure but busy logged (what: doing what)
 * and noted (sq_note()).  Returns SQLite's code. */
static int
checkpoint(struct sqstore *s, int mode, const char *what)
{
	int	 rc;

	rc = sqlite3_wal_checkpoint_v2(s->db, "main", mode, NULL, NULL);
	if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY) {
		log_warnx("store: %s: %s: %s", s->cf->db, what,
		    sqlite3_errmsg(s->db));
		sq_note(s, rc);
	}
	return rc;
}

static int
ckpt_nap(void *arg, int n)
{
	(void)arg;
	if (n >= CKPT_NAPS)
		return 0;
	io_nap_us(CKPT_NAP_US);
	return 1;
}

static void
maintain(struct sqstore *s)
{
	long	 waited;
	int	 rc;

	if (s->wal_frames < CKPT_FRAMES || s->immutable || sq_moved(s))
		return;
	if (walguard_lock(&s->wg, (long)s->cf->busy_ms, &waited) == 1)
		return;
	if (s->wal_frames >= CKPT_FRAMES_LONG)
		sqlite3_busy_handler(s->db, ckpt_nap, NULL);
	else
		sqlite3_busy_timeout(s->db, 0);
	rc = checkpoint(s, SQLITE_CHECKPOINT_RESTART, "checkpoint");
	sqlite3_busy_timeout(s->db, (int)s->cf->busy_ms);
	walguard_unlock(&s->wg);
	if (rc == SQLITE_OK)
		s->wal_frames = s->copy_said = 0;
}

static enum store_copy
copy_due(struct sqstore *s)
{
	if (s->wal_frames >= CKPT_FRAMES)
		return STORE_COPY_CHECKPOINT;
	/* Not near CKPT_FRAMES: a copy running then would make the
	 * writer's own checkpoint busy, and the log grow past it. */
	if (s->wal_frames - s->copy_said < STORE_COPY_STEP ||
	    s->wal_frames > CKPT_FRAMES - STORE_COPY_STEP / 2)
		return STORE_COPY_NONE;
	s->copy_said = s->wal_frames;
	return STORE_COPY_ASK;
}

/* store_upkeep(): the page cache, the log's checkpoints. */
enum store_copy
sq_upkeep(struct store *b, enum store_upkeep what)
{
	struct sqstore	*s = (struct sqstore *)b;

	switch (what) {
	case STORE_RELEASE:
		(void)sqlite3_db_release_memory(s->db);
		break;
	case STORE_MAINTAIN:
		maintain(s);
		break;
	case STORE_COPY_DUE:
		return copy_due(s);
	case STORE_COPY:
		if (!s->immutable && !sq_moved(s))
			(void)checkpoint(s, SQLITE_CHECKPOINT_PASSIVE,
			    "copying the log");
		break;
	}
	return STORE_COPY_NONE;
}

