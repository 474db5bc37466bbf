/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the SQLite store's own header, for its modules only
 * (store/sqlite/engine.c: events and claims; store/sqlite/outbox.c: the outbox).  Nothing outside
 * the SQLite room includes it: the rest of the program sees store/store.h.
 */
#ifndef ONCEHOOK_SQSTORE_H
#define ONCEHOOK_SQSTORE_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include <sqlite3.h>

#include "hook.h"
#include "store/engine.h"
#include "store/outbox.h"
#include "store/sqlite/actions.h"
#include "store/sqlite/walguard.h"

/* The query of the work loop's next event (sqs_work()); t_store checks
 * that it reads only the events not processed. */
extern const char sq_work_pick[];

/* The replay guard's query (ST_PAYLOAD); t_store checks that it reads
 * the payload index (sql/migrations/008-guard-index.sql). */
extern const char sq_payload[];

/* The statements prepared once, in sqs_connect(). */
enum st {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_SAVEPOINT,
	ST_RELEASE,
	ST_ROLLBACK_TO,
	ST_INSERT,
	ST_INSERT_RECEIVED,
	ST_LOOKUP,
	ST_PAYLOAD,
	ST_SIGNED,
	ST_CONFLICT,
	ST__MAX
};

/* A file's identity: what a path named when we looked (ino 0: none). */
struct fileid {
	dev_t		 dev;
	ino_t		 ino;
	struct timespec	 ctime;	/* its inode's last change */
};

/* The files besides the database, by suffix. */
enum side { SIDE_WAL, SIDE_SHM, SIDE__MAX };

struct sqstore {
	struct store		 base;	/* first: the contract's (store/engine.h) */
	sqlite3			*db;
	const struct conf	*cf;
	sqlite3_stmt		*st[ST__MAX];
	struct actions		**acts;	/* per endpoint; shared if same file */
	int			 broken; /* see store_broken() */
	int			 moved;	/* the path names other files now */
	int			 immutable; /* read-only, no -wal: see open_ro() */
	int			 lazy;	/* STORE_LAZY: actions on first claim */
	int			 sections; /* STORE_SECTIONS: a section at a time */
	struct action_guard	 guard;	/* the connection's authorizer */
	char			*names;	/* ["a","b"]: the configured endpoints */
	char			*side[SIDE__MAX];	/* their paths */
	struct fileid		 sideid[SIDE__MAX];	/* as opened */
	struct fileid		 dbid;			/* as opened */
	struct timespec		 shm_writable;	/* -shm's ctime when last
						   found writable */
	struct walguard		 wg;	/* the log's users; the write lock */
	int			 wal_frames; /* the log's size at our last commit */
	int			 copy_said; /* wal_frames when store_upkeep(): STORE_COPY_DUE
					       last said STORE_COPY_ASK */
	long			 lock_timeout; /* ms waited in vain, or 0 */
	/* outbox_take()'s filter, as SQL's oncehook_has_target(): defined
	 * on the connection once, pointing here. */
	int			 has_target_defined;
	int			(*has_target)(void *, const char *);
	void			*has_target_arg;
};


/* HOOK_EBUSY for what may pass (busy, full, read-only, I/O), else
 * HOOK_ESYSTEM (HOOK_OK for SQLITE_OK, DONE, ROW). */
enum hook_err	 sq_classify(int rc);
/* Note in s whether error rc calls for a new connection. */
void		 sq_note(struct sqstore *s, int rc);
/* store/sqlite/file.c: the file and its log. */
/* 1 if ONCEHOOK_DB no longer names the open file (logged once). */
int		 sq_moved(struct sqstore *s);
/* What path names now; ino 0 if nothing. */
void		 sq_fileid(const char *path, struct fileid *id);
/* Remember the -wal and -shm the connection uses; -1 if no memory. */
int		 sq_sides(struct sqstore *s);
/* 1 if the -shm cannot be written (logged; the store moved, broken). */
int		 sq_shm_immutable(struct sqstore *s, const struct fileid *shm);
/* The log's size after each commit (sqlite3_wal_hook()). */
int		 sq_on_wal(void *arg, sqlite3 *db, const char *name,
		    int frames);
/* engine_ops.idle and engine_ops.upkeep. */
int		 sq_idle(struct store *b);
enum store_copy	 sq_upkeep(struct store *b, enum store_upkeep what);
/* Statement which into *st (prepared on its first use for one request:
 * STORE_SECTIONS); an SQLite code, the prepare's failure logged. */
int		 sq_stmt(struct sqstore *s, enum st which, sqlite3_stmt **st);
/* Step a prepared statement that returns no row, then reset it. */
int		 sq_run(struct sqstore *s, enum st which);
/* BEGIN IMMEDIATE after oncehook's write lock; sq_end() lets go. */
int		 sq_begin(struct sqstore *s);
void		 sq_end(struct sqstore *s);
/* COMMIT, unless the file moved (SQLITE_IOERR then). */
int		 sq_commit(struct sqstore *s);
/* The reason a transaction failed at step, into buf. */
void		 sq_why(struct sqstore *s, const char *step, char *buf,
		    size_t bufsz);


/* The outbox's operations, in store/sqlite/outbox.c (store/outbox.h says what each does;
 * store/sqlite/engine.c's table names them). */
int		 sqo_pick(struct store *, long long,
		    int (*)(void *, const char *), void *,
		    struct outbox_item *, int *);
int		 sqo_lease(struct store *, struct outbox_item *, long long,
		    long long, int *);
int		 sqo_settle(struct store *, const struct outbox_item *,
		    long long, const char *, long long, long long, int *);
long long	 sqo_retry(struct store *, long long, int, int, char *,
		    size_t);
long long	 sqo_list(struct store *, const char *, const char *,
		    const char *, const char *, long long, int, outbox_row_fn,
		    void *, char *, size_t);
int		 sqo_topics(struct store *, void (*)(void *, const char *,
		    const char *, long long, long long), void *, char *,
		    size_t);
long long	 sqo_prune(struct store *, long long, int, int, char *,
		    size_t);

#endif
