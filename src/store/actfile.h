/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the actions file's format, whatever runs it (the SQLite
 * actions, store/sqlite/actions.c; the MariaDB ones, store/mysql/actions.c).
 *
 * An actions file is plain SQL in sections.  Everything before the first
 * marker line is the setup (tables, triggers), run by "oncehook init".
 * Each marker line
 *
 *	-- on: TYPE [TYPE ...]
 *
 * (at the start of a line) starts the statements run for events of those
 * types; "-- on: *" is the catch-all, run for a type no section names.
 * Types are separated by white space or commas; a type holding either is
 * written in double quotes (-- on: "Push Hook", "Merge Request Hook").
 * An event type has one section at most.
 *
 * This file knows the text and its markers, never the SQL: cutting a
 * part into statements is the runner's (SQLite's own parser, or
 * store/mysql/rewrite.c).  Functions never take ownership of their arguments; a
 * struct actfile is the caller's, emptied by actfile_free().
 */
#ifndef ONCEHOOK_ACTFILE_H
#define ONCEHOOK_ACTFILE_H

#include <stddef.h>

#define ACTIONS_FILE_MAX	(1 << 20)	/* bytes */

/* One "-- on:" section. */
struct actfile_section {
	int		 line;		/* of its marker */
	char		**types;	/* NULL-terminated; {"*"} catch-all */
	size_t		 sql, end;	/* its statements: text[sql..end),
					   from the marker line's newline */
};

struct actfile {
	char		*path;
	char		*text;		/* the file, NUL-terminated; its
					   owner may free it and set NULL
					   once it has read what it needs */
	size_t		 len;		/* of text, up to a NUL byte */
	size_t		 setup_end;	/* setup: text[0..setup_end) */
	struct actfile_section *v;	/* in the file's order */
	size_t		 n;
	size_t		*nl;		/* offsets of the text's newlines, */
	size_t		 nnl;		/* for actfile_line() */
	const struct actfile_section *catchall;	/* "*", or NULL */
};

/*
 * Read the file at path (at most ACTIONS_FILE_MAX bytes) into af and
 * find its sections, their types (each type in one section only) and
 * the catch-all.  With ACTFILE_SETUP, only the text and the setup's
 * extent: the markers are not read (oncehook init runs the setup of a
 * file whose sections it does not judge).  Returns 0, or -1 with
 * "path:line: reason" (or "path: reason") in err and af empty.
 */
#define ACTFILE_SETUP	0x01
/*
 * ACTFILE_ONCE: in a process that keeps texts (actfile_keep()), the
 * text it first read at path, whatever the file holds now.  A store's
 * actions are loaded again whenever it connects again (a connection
 * the server closed while idle, a database file moved); a long-lived
 * process still runs the text it started with until it is restarted
 * (docs/actions.md).  A file that could not be read is read again.
 */
#define ACTFILE_ONCE	0x02
/* Whether this process keeps ACTFILE_ONCE's texts: on for the
 * long-lived ones (store_keep_actions()); off, every read reads the
 * file (one-shot commands, tests). */
void		 actfile_keep(int on);
/* With texts kept, read path's now (not parsed; nothing if it cannot
 * be read: its first load reads it and says why). */
void		 actfile_preload(const char *path);
/* Drop the text kept for path (NULL: every one): read again at its
 * next load.  For a text that failed to load (no process ran it), a
 * test that writes one path twice, a reload. */
void		 actfile_forget(const char *path);
/* The text this process runs for path: with texts kept, the kept one
 * (read and kept now if none is; owned by the cache, valid until
 * actfile_forget()); else NULL.  Its length into *len.  NULL too if it
 * cannot be read. */
const char	*actfile_kept(const char *path, size_t *len);
/* What the file at path holds now, read (not kept): a new buffer, its
 * owner's, and its length into *len; NULL if it cannot be read. */
char		*actfile_now(const char *path, size_t *len);
int		 actfile_read(const char *path, int flags, struct actfile *af,
		    char *err, size_t errsz);

/* The section events of type run: its own, else the catch-all, else
 * NULL.  A NULL type (an event without one) gets the catch-all. */
const struct actfile_section *
		 actfile_find(const struct actfile *, const char *type);

/* The line (from 1) of the byte at offset off of the file's text (a
 * binary search: a CGI request asks it for each statement it prepares);
 * text need not be there any more. */
int		 actfile_line(const struct actfile *, size_t off);

/* Free what af holds and empty it; an empty af is fine. */
void		 actfile_free(struct actfile *af);

/*
 * Read only the marker lines of the actions file at path and call
 * fn(arg, type, line) for each event type a section names (not "*"),
 * for "oncehook check".  Returns 0, or -1 with "path:line: reason" in
 * err (fn not called then).
 */
int		 actions_types(const char *path, void (*fn)(void *arg,
		    const char *type, int line), void *arg, char *err,
		    size_t errsz);

/*
 * Call fn(arg, topic, line) for each outbox topic the file at path
 * writes as a literal (INSERT INTO outbox ... SELECT 'topic', ... or
 * VALUES ('topic', ...)), for "oncehook check".  A topic computed by the
 * SQL is not seen.  Returns 0, or -1 with the reason in err.
 */
int		 actions_topics(const char *path, void (*fn)(void *arg,
		    const char *topic, int line), void *arg, char *err,
		    size_t errsz);

#endif
