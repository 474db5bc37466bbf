/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the MariaDB/MySQL store's own header, shared by its engine
 * (store/mysql/engine.c) and its outbox rows (store/mysql/outbox.c).
 */
#ifndef ONCEHOOK_MYSQL_ENGINE_H
#define ONCEHOOK_MYSQL_ENGINE_H

#include <stddef.h>
#include <string.h>

#include "store/engine.h"
#include "store/mysql/conn.h"
#include "store/mysql/statements.h"
#include "store/outbox.h"

struct mystore {
	struct store		 base;
	const struct conf	*cf;
	struct mydb		*db;
	struct myactions	**acts;	/* per endpoint; shared if same file */
	int			 broken;
	long long		 used;	/* when the connection last spoke */
	int			 skip_locked;	/* the server has SKIP LOCKED */
	char			 why[160]; /* an error of ours, not the
					      server's: my_why_of() says it,
					      once */
	const char		*p;	/* ONCEHOOK_DB_PREFIX */
	char			*names;	/* a,b: the configured endpoints */
	struct mystmt		*st[MY__MAX]; /* prepared on first use */
};

#define MY(b)	((struct mystore *)(b))

/* Values bound to a statement's ?s. */
#define TXT(v)		{ (v), (v) != NULL ? strlen(v) : 0, 0, 0, 0 }
#define BYTES(v, n)	{ (v), (n), 0, 0, 1 }
#define NUM(v)		{ NULL, 0, (long long)(v), 1, 0 }
#define NUL		{ NULL, 0, 0, 0, 0 }
#define EXEC(s, w, res, affected, ...)					\
	my_exec((s), (w), (const struct mybind[]){ __VA_ARGS__ },		\
	    sizeof((const struct mybind[]){ __VA_ARGS__ }) /		\
	    sizeof(struct mybind), (res), (affected))

#define COUNT(s, w, out, ...)						\
	my_count((s), (w), (const struct mybind[]){ __VA_ARGS__ },		\
	    sizeof((const struct mybind[]){ __VA_ARGS__ }) /		\
	    sizeof(struct mybind), (out))

/* Run statement w with n values (store/mysql/statements.h), prepared
 * on the connection on its first use: its rows into *res, or the rows
 * it changed into *affected.  The error number; a lost connection
 * marks the store broken. */
unsigned int	 my_exec(struct mystore *s, enum myst w,
		    const struct mybind *b, size_t n, struct myres **res,
		    long long *affected);
/* Column 0 of the first row of statement w: a count. */
unsigned int	 my_count(struct mystore *s, enum myst w,
		    const struct mybind *b, size_t n, long long *out);
/* "step: the server's message" into buf, or s->why's if set (then
 * cleared). */
void		 my_why_of(struct mystore *s, const char *step, char *buf,
		    size_t bufsz);

/* The outbox's primitives and operations (store/mysql/outbox.c). */
int		 my_ob_pick(struct store *, long long,
		    int (*)(void *, const char *), void *,
		    struct outbox_item *, int *);
int		 my_ob_lease(struct store *, struct outbox_item *, long long,
		    long long, int *);
int		 my_ob_settle(struct store *, const struct outbox_item *,
		    long long, const char *, long long, long long, int *);
long long	 mys_ob_retry(struct store *, long long, int, int, char *,
		    size_t);
long long	 mys_ob_list(struct store *, const char *, const char *,
		    const char *, const char *, long long, int, outbox_row_fn,
		    void *, char *, size_t);
int		 mys_ob_topics(struct store *, void (*)(void *, const char *,
		    const char *, long long, long long), void *, char *,
		    size_t);
long long	 mys_ob_prune(struct store *, long long, int, int, char *,
		    size_t);

#endif
