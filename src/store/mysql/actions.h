/* SPDX-License-Identifier: MIT */
/*
 * oncehook: actions on a MariaDB or MySQL store (store/sqlite/actions.h says the file
 * format; store/mysql/rewrite.h the rewriting and the guard).  With store/mysql/engine.c and
 * store/mysql/conn.c, the MariaDB room.
 *
 * A file is read and checked when it is loaded (every statement of
 * every section: a statement the guard refuses fails the load, before
 * any event); a section's statements are prepared on the server on the
 * first event of its types, once per connection, and run inside the
 * claim's transaction with the event's values bound.
 */
#ifndef ONCEHOOK_MYACTION_H
#define ONCEHOOK_MYACTION_H

#include <stddef.h>

struct event;
struct mydb;
struct myactions;

/* Load and check the file at path; NULL with "path:line: reason". */
struct myactions *myactions_load(struct mydb *, const char *path,
		    const char *prefix, char *err, size_t errsz);
/* Prepare every section now ("oncehook check", init).  0, or -1. */
int		 myactions_prepare_all(struct myactions *, char *err,
		    size_t errsz);
void		 myactions_free(struct myactions *);
/* The most times one statement of the file binds :payload (a statement
 * carries every bound value in one packet). */
size_t		 myactions_payloads(const struct myactions *);

/*
 * Run the setup part of the file at path (oncehook init), statement by
 * statement.  0, or -1 with "path:line: reason".
 */
int		 myactions_setup(struct mydb *, const char *path,
		    const char *prefix, char *err, size_t errsz);

/*
 * Run the statements for ev's type.  Returns 0, or the server's error
 * number with "path:line: reason" in err (a section that does not
 * prepare: its error).
 */
unsigned int	 myactions_run(struct myactions *, const char *endpoint,
		    const struct event *ev, char *err, size_t errsz);

/*
 * The connection the actions were prepared on is gone: let go of its
 * statements and prepare them on db from now on (the file stays read
 * and checked).
 */
void		 myactions_reset(struct myactions *, struct mydb *db);

#endif
