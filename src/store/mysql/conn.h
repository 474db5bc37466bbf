/* SPDX-License-Identifier: MIT */
/*
 * oncehook: one connection to a MariaDB or MySQL server; the MariaDB
 * Connector/C room.  store/mysql/engine.c and store/mysql/actions.c say what to run; this
 * module alone calls the client library, which it opens with dlopen()
 * on the first connection (a SQLite site never loads it).
 *
 * A connection is set up for oncehook's transactions: utf8mb4, no
 * automatic reconnection by the library (a reconnect in the middle of
 * a transaction would lose it silently: a lost connection is reported,
 * mydb_lost(), and store/mysql/engine.c decides whether a new one may be made),
 * READ COMMITTED, a strict sql_mode, UTC, and innodb_lock_wait_timeout
 * from ONCEHOOK_BUSY_TIMEOUT_MS.  The password is read from
 * ONCEHOOK_DB_PASSWORD_FILE for the connect and oncehook's copy wiped
 * at once.
 *
 * Every statement that carries a value is prepared on the server and
 * the value bound (mydb_prepare(), mydb_query(), mydb_execute()):
 * oncehook's own (store/mysql/statements.h) and the actions'.  Text
 * goes only for statements with no value in them (mydb_run()).
 */
#ifndef ONCEHOOK_MYDB_H
#define ONCEHOOK_MYDB_H

#include <stddef.h>

#include "hook.h"

struct conf;
struct mydb;
struct mystmt;

/*
 * Connect as cf says.  HOOK_OK with *out; else the reason in err:
 * HOOK_ECONF for what the operator must fix (no client library, access
 * denied, no such database), HOOK_EBUSY for what may pass (the server
 * is down or full), HOOK_ESYSTEM otherwise.
 */
enum hook_err	 mydb_connect(const struct conf *cf, struct mydb **out,
		    char *err, size_t errsz);
void		 mydb_close(struct mydb *);

/* The last error's text. */
const char	*mydb_error(const struct mydb *);
/* 1 once the connection met an error that ends it (lost, killed). */
int		 mydb_lost(const struct mydb *);
/* HOOK_EBUSY for what may pass (a deadlock, a lock wait past its
 * timeout, a lost or refused connection, a read-only server, a body
 * over max_allowed_packet), HOOK_ECONF for what the operator must
 * grant or create (a privilege, a table), else HOOK_ESYSTEM; HOOK_OK
 * for 0. */
enum hook_err	 mydb_classify(unsigned int err);
/* The error of a statement too large for the server's
 * max_allowed_packet, not sent (ER_NET_PACKET_TOO_LARGE's number). */
#define MYDB_TOO_BIG	1153
/* Out of memory on our side (CR_OUT_OF_MEMORY's number). */
#define MYDB_OOM	2008

/* 1 for a deadlock (the server rolled the whole transaction back). */
int		 mydb_deadlock(unsigned int err);
/* Ask the server whether the connection is alive: 0, or the error
 * number (the connection is then lost). */
unsigned int	 mydb_ping(struct mydb *);
/* "MariaDB 10.11.19" or the like. */
const char	*mydb_server(const struct mydb *);
/* The connection's TLS: "TLSv1.3 TLS_AES_256_GCM_SHA384 (verify-ca)",
 * its version, cipher and ONCEHOOK_DB_TLS; or "TLS off". */
const char	*mydb_tls(const struct mydb *);
/* The server's version as 100000 * major + 100 * minor + patch, and
 * whether it is MariaDB. */
unsigned long	 mydb_version(const struct mydb *, int *mariadb);

/* A result: its rows, each field as text (NULL for NULL). */
struct myrow {
	char		**v;
	unsigned long	 *len;
};
struct myres;

/*
 * Run sql, a statement in text with no value in it (malloc'd, freed
 * here: NULL is out of memory); with res, keep its rows (*res,
 * NULL if the statement made none).  *affected (if not NULL) gets the
 * rows it changed.  Returns 0, or the error number (mydb_error() says
 * it).
 */
unsigned int	 mydb_run(struct mydb *, char *sql, struct myres **res,
		    long long *affected);
/* The next row, or 0 at the end. */
int		 mydb_next(struct myres *, struct myrow *);
void		 mydb_free(struct myres *);
/* Column i of a row as a number (0 for NULL); its text or def. */
long long	 mydb_int(const struct myrow *, unsigned int i, long long def);
/* Several statements separated by ; (the schema), no values.  0, or
 * the error number. */
unsigned int	 mydb_script(struct mydb *, const char *sql);

/* A value bound to a prepared statement's ?. */
struct mybind {
	const char	*p;		/* text; NULL: NULL (or the number) */
	size_t		 len;
	long long	 num;		/* with p NULL and isnum */
	int		 isnum;
	int		 isblob;	/* p is bytes, not text */
};

/* Prepare sql on the server.  0 with *out, or the error number. */
unsigned int	 mydb_prepare(struct mydb *, const char *sql,
		    struct mystmt **out);
/* Run it with n values (its ? count); its rows, if any, are read and
 * dropped.  *affected gets the rows it changed.  0, or the error
 * number (mydb_error()). */
unsigned int	 mydb_execute(struct mydb *, struct mystmt *,
		    const struct mybind *, size_t n, long long *affected);
/* Run it with n values, keeping its rows (*res, NULL if it made none;
 * each field as text, NULL for NULL) or the rows it changed
 * (*affected).  0, or the error number (mydb_error()). */
unsigned int	 mydb_query(struct mydb *, struct mystmt *,
		    const struct mybind *, size_t n, struct myres **res,
		    long long *affected);
void		 mydb_stmt_close(struct mystmt *);

#endif
