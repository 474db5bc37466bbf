/* SPDX-License-Identifier: MIT */
/*
 * oncehook: actions, the business write (SPEC section 7).
 *
 * An actions file is plain SQL in sections (its format: store/actfile.h): a
 * setup part run by "oncehook init", then the statements run for events
 * of the types each "-- on:" marker names.  Statements see the event
 * as named parameters :endpoint, :key, :type, :payload, :payload_hash and
 * :received_at.  They are prepared once, when the file is loaded, and
 * run inside the claim transaction: one failing statement rolls the
 * event back.  With store/sqlite/actions.c, store/sqlite/engine.c is the other half of the SQLite
 * room.
 */
#ifndef ONCEHOOK_ACTION_H
#define ONCEHOOK_ACTION_H

#include <stddef.h>

#include <sqlite3.h>

#include "store/actfile.h"	/* the file's format; actions_types(), _topics() */

struct actions;
struct event;

/*
 * The guard: SQLite's authorizer, installed on a connection for its
 * life, so that no action, no trigger and no statement re-prepared after
 * a schema change can part an effect from its claim.  The outbox is
 * half oncehook's: an action or a trigger may insert into it (what to
 * send), never update or delete (whether it was sent).  phase says what is
 * being prepared; why receives the reason of a refusal.
 */
enum guard_phase {
	GUARD_RUN,		/* oncehook's own statements, re-prepares */
	GUARD_SETUP,		/* the setup part of an actions file */
	GUARD_SECTION,		/* an action */
};

struct action_guard {
	enum guard_phase	 phase;
	const char		*why;	/* static text, or NULL */
	/* The event whose actions run now (actions_run()), for the
	 * outbox rows they write; NULL otherwise. */
	const char		*ev_endpoint;
	const char		*ev_key;
	long long		 ev_time;
};

/*
 * Install g as db's authorizer, and define oncehook_event(FIELD) on db:
 * the endpoint, key or time ('endpoint', 'key', 'time') of the event
 * whose actions run now, else NULL; the outbox table's defaults and its
 * trigger use it (sql/migrations/005-outbox.sql).  g must outlive the
 * connection.
 */
void		 actions_guard(sqlite3 *db, struct action_guard *g);

/*
 * Load the file at path and prepare its statements on db; with
 * ACTIONS_LAZY, each section's on the first event of its types
 * (actions_ready(), or actions_run()): a CGI run prepares the one section
 * its event needs.  Returns the actions, or NULL with "path:line:
 * reason" in err (with ACTIONS_LAZY, only for what the markers say).
 */
#define ACTIONS_LAZY	0x01
struct actions	*actions_load(sqlite3 *db, struct action_guard *g,
		    const char *path, int flags, char *err, size_t errsz);
/*
 * Prepare the section that events of type run, if it is not yet (none
 * for a type no section takes).  Returns 0, or -1 with "path:line:
 * reason" in err; a section that failed is tried again next time.
 */
int		 actions_ready(struct actions *, const char *type, char *err,
		    size_t errsz);
void		 actions_free(struct actions *);

/*
 * Run the setup part of the file at path on db (inside the caller's
 * transaction).  Returns SQLITE_OK, or an error code with the reason
 * in err.
 */
int		 actions_setup(sqlite3 *db, struct action_guard *g,
		    const char *path, char *err, size_t errsz);

/*
 * Run the statements for ev's type, binding the event.  Returns
 * SQLITE_OK or the failing statement's code with "path:line: reason" in
 * err.  Bindings are cleared before it returns.
 */
int		 actions_run(struct actions *, const char *endpoint,
		    const struct event *ev, char *err, size_t errsz);

/* The path the actions were loaded from. */
const char	*actions_path(const struct actions *);

#endif
