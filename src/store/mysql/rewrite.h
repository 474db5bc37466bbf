/* SPDX-License-Identifier: MIT */
/*
 * oncehook: an actions file's statements for MariaDB/MySQL, read
 * without a server (the MariaDB store's actions, store/mysql/actions.c).
 *
 * The file format is the SQLite store's (store/actfile.h): a setup part, then
 * sections under "-- on: TYPE ..." markers, the event as the named parameters
 * :endpoint, :key, :type, :payload, :payload_hash and :received_at.
 * The server knows only positional parameters, so each statement is
 * rewritten: every named parameter becomes ?, and the statement keeps
 * which value each ? takes, in order.  Nothing is ever pasted into the
 * SQL text but a ?: values travel bound (a prepared statement).
 *
 * The guard, at load, on a section's statements (the setup part is
 * oncehook init's, and may create tables):
 * - a statement is one of INSERT, UPDATE, DELETE, REPLACE, SELECT,
 *   WITH (a leading ( only before SELECT or WITH): nothing that commits
 *   implicitly (DDL, LOCK TABLES, transaction control, SET, CALL, LOAD
 *   DATA ...), nothing that ends or changes the claim's transaction;
 * - no word of it names one of oncehook's tables (prefix + events,
 *   payloads, conflicts, failures, outbox, schema), bare, `quoted` or
 *   "quoted" (a name under ANSI_QUOTES), qualified or not, whatever its
 *   case, except the outbox insert below;
 * - INSERT INTO outbox (topic, payload) VALUES (e1, e2) or SELECT e1,
 *   e2 [FROM ...]: the one write to the outbox an action may make,
 *   rewritten to name `prefix + outbox` and to add the event's
 *   endpoint, key and the time its actions run (MYP_ENDPOINT, MYP_KEY,
 *   MYP_NOW) to the row: after the two values, or at the end of the
 *   select list (before its top-level FROM), so these three ?s come
 *   before a WHERE's.  Any other column list, INSERT IGNORE (or another
 *   modifier), REPLACE, SET, more than one row, ON DUPLICATE KEY, a
 *   UNION, a clause before FROM, or an UPDATE or DELETE of it is
 *   refused.  outbox anywhere else must be qualified by its database
 *   (shop.outbox: the site's own table) or qualify a column
 *   (outbox.id);
 * - no GET_LOCK(), RELEASE_LOCK(), RELEASE_ALL_LOCKS() or LOAD_FILE():
 *   a named lock outlives the transaction (it is the connection's), a
 *   file is outside the database;
 * - no SELECT ... INTO (OUTFILE, DUMPFILE, @variables), no := and no
 *   variable (@name, @@name): a statement sees the event only through
 *   its parameters; no positional ? (the file names its values);
 * - no executable comment (slash-star-! or slash-star-M!): the server
 *   runs what is in it.
 * A section's comments are dropped from the SQL (each becomes white
 * space), so the server reads nothing the guard did not.
 * What it cannot see: what the server runs on the statement's behalf
 * (the site's triggers, stored functions called from an expression,
 * views over oncehook's tables).  docs/stores.md says so.
 *
 * The text is read as the server reads it when sql_mode has neither
 * ANSI_QUOTES nor NO_BACKSLASH_ESCAPES ("..." a string, \ an escape in
 * strings): the connection that runs the statements must not set those.
 */
#ifndef ONCEHOOK_MYPARSE_H
#define ONCEHOOK_MYPARSE_H

#include <stddef.h>

/* The value a ? takes. */
enum myp_param {
	MYP_ENDPOINT,
	MYP_KEY,
	MYP_TYPE,
	MYP_PAYLOAD,
	MYP_PAYLOAD_HASH,
	MYP_RECEIVED_AT,
	MYP_NOW,		/* the time the actions run (outbox rows) */
};

/* One statement, rewritten. */
struct myp_stmt {
	char		*sql;		/* NUL-terminated, no trailing ; */
	int		 line;		/* of its first token in the file */
	enum myp_param	*params;	/* the value of each ?, in order */
	size_t		 nparams;
	int		 outbox;	/* writes outbox rows */
};

/* Zeroed before the first myp_split(); emptied by myp_free(). */
struct myp_stmts {
	struct myp_stmt	*v;
	size_t		 n;
};

#define MYP_SETUP	0x01	/* the setup part: any statement, no
				   parameters, no rewriting */

/*
 * Split text[0..len) (a part of the file starting at line first_line)
 * into statements at each ; outside comments, quoted strings ('...',
 * "..." and `...`, with their doubled and backslash escapes) and quoted
 * names; blank statements are skipped.  In a section, rewrite and check
 * them as said above; prefix is ONCEHOOK_DB_PREFIX.  With MYP_SETUP,
 * each statement is its text from its first token to its last, as
 * written (an executable comment is a statement's token), and only a
 * parameter (named or ?) is refused; a compound statement (BEGIN ...
 * END) is cut at its ;s like any other.  An unterminated string,
 * quoted name or comment, or a NUL byte, is an error.  Returns 0 with
 * the statements appended to out, or -1 with "line N: reason" in err
 * (N: the line of the token at fault) and out as it was.
 */
int	myp_split(const char *text, size_t len, int first_line,
	    const char *prefix, int flags, struct myp_stmts *out,
	    char *err, size_t errsz);

void	myp_free(struct myp_stmts *);

#endif
