/*
 * oncehook: an actions file's statements for MariaDB/MySQL, read
 * without a server (the MariaDB store's actions, myaction.c).
 *
 * The file format is SQLite's (action.h): a setup part, then sections
 * under "-- on: TYPE ..." markers, the event as the named parameters
 * :endpoint, :key, :type, :payload, :payload_hash and :received_at.
 * The server knows only positional parameters, so each statement is
 * rewritten: every named parameter becomes ?, and the statement keeps
 * which value each ? takes, in order.  Nothing is ever pasted into the
 * SQL text but a ?: values travel bound (a prepared statement).
 *
 * The guard, at load, on a section's statements (the setup part is
 * oncehook init's, and may create tables):
 * - a statement is one of INSERT, UPDATE, DELETE, REPLACE, SELECT,
 *   WITH: nothing that commits implicitly (DDL, LOCK TABLES, transaction
 *   control, SET, CALL, LOAD DATA ...), nothing that ends or changes
 *   the claim's transaction;
 * - no word of it names one of oncehook's tables (prefix + events,
 *   payloads, conflicts, failures, outbox, schema), quoted or not,
 *   qualified or not, except the outbox insert below;
 * - INSERT INTO outbox (topic, payload) VALUES (...) or SELECT ...: the
 *   one write to the outbox an action may make, rewritten to name
 *   prefix + "outbox" and to add the event's endpoint, key and the
 *   time its actions run (MYP_ENDPOINT, MYP_KEY, MYP_NOW) to the row;
 *   any other column list, ON DUPLICATE KEY, or an UPDATE or DELETE
 *   of it is refused;
 * - no SELECT ... INTO (OUTFILE, DUMPFILE, @variables), no := and no
 *   user variable (@name): a statement sees the event only through its
 *   parameters.
 * What it cannot see: what the server runs on the statement's behalf
 * (the site's triggers, stored functions called from an expression,
 * views over oncehook's tables).  The README says so.
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

struct myp_stmts {
	struct myp_stmt	*v;
	size_t		 n;
};

#define MYP_SETUP	0x01	/* the setup part: any statement, no
				   parameters, no rewriting */

/*
 * Split text[0..len) (a part of the file starting at line first_line)
 * into statements, rewrite them and check them (unless MYP_SETUP) as
 * said above; prefix is ONCEHOOK_DB_PREFIX.  Comments, quoted strings
 * ('...', "..." and `...`, with their doubled and backslash escapes)
 * and blank statements are understood; an unterminated string or
 * comment is an error.  Returns 0 with the statements appended to out,
 * or -1 with "line N: reason" in err (out as it was).
 */
int	myp_split(const char *text, size_t len, int first_line,
	    const char *prefix, int flags, struct myp_stmts *out,
	    char *err, size_t errsz);

void	myp_free(struct myp_stmts *);

#endif
