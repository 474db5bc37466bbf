/* SPDX-License-Identifier: MIT */
/*
 * oncehook: actions on a MariaDB or MySQL store (see store/mysql/actions.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeline/event.h"
#include "store/actfile.h"
#include "store/mysql/actions.h"
#include "store/mysql/conn.h"
#include "store/mysql/rewrite.h"

struct mysection {
	const struct actfile_section	*sec;
	struct myp_stmts		 stmts;		/* rewritten, checked */
	size_t				 most;		/* ?s of its largest */
	struct mystmt			**prepared;	/* NULL until used */
	struct mybind			*binds;		/* most of them */
};

struct myactions {
	struct mydb		*db;
	struct actfile		 file;
	struct mysection	*v;		/* one per file section */
};

/* Close section m's statements (they are the connection's). */
static void
unprepare(struct mysection *m)
{
	size_t	 j;

	for (j = 0; m->prepared != NULL && j < m->stmts.n; j++)
		mydb_stmt_close(m->prepared[j]);
	free(m->prepared);
	m->prepared = NULL;
}

void
myactions_reset(struct myactions *a, struct mydb *db)
{
	size_t	 i;

	for (i = 0; i < a->file.n; i++)
		unprepare(&a->v[i]);
	a->db = db;
}

void
myactions_free(struct myactions *a)
{
	size_t	 i;

	if (a == NULL)
		return;
	for (i = 0; a->v != NULL && i < a->file.n; i++) {
		unprepare(&a->v[i]);
		free(a->v[i].binds);
		myp_free(&a->v[i].stmts);
	}
	free(a->v);
	actfile_free(&a->file);
	free(a);
}

struct myactions *
myactions_load(struct mydb *db, const char *path, const char *prefix,
    char *err, size_t errsz)
{
	struct myactions		*a;
	const struct actfile_section	*s;
	char				 why[256];
	size_t				 i, j;

	if ((a = calloc(1, sizeof(*a))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	a->db = db;
	if (actfile_read(path, ACTFILE_ONCE, &a->file, err, errsz) == -1) {
		free(a);
		return NULL;
	}
	if ((a->v = calloc(a->file.n + 1, sizeof(*a->v))) == NULL) {
		snprintf(err, errsz, "out of memory");
		myactions_free(a);
		return NULL;
	}
	for (i = 0; i < a->file.n; i++) {
		s = &a->file.v[i];
		a->v[i].sec = s;
		if (myp_split(a->file.text + s->sql, s->end - s->sql,
		    actfile_line(&a->file, s->sql), prefix, 0,
		    &a->v[i].stmts, why, sizeof(why)) == -1) {
			snprintf(err, errsz, "%s:%s", path, why + (strncmp(why,
			    "line ", 5) == 0 ? 5 : 0));
			myactions_free(a);
			return NULL;
		}
		/* The values of its largest statement, bound per event. */
		a->v[i].most = 1;
		for (j = 0; j < a->v[i].stmts.n; j++)
			if (a->v[i].stmts.v[j].nparams > a->v[i].most)
				a->v[i].most = a->v[i].stmts.v[j].nparams;
		if ((a->v[i].binds = calloc(a->v[i].most,
		    sizeof(*a->v[i].binds))) == NULL) {
			snprintf(err, errsz, "out of memory");
			myactions_free(a);
			return NULL;
		}
	}
	return a;
}

/* A table or column unknown (ER_NO_SUCH_TABLE, ER_BAD_FIELD_ERROR) is
 * most often one the file's setup part makes, after a new copy of it. */
static const char *
setup_hint(unsigned int e)
{
	return e == 1146 || e == 1054 ? " (the file's setup part not run? "
	    "run oncehook init)" : "";
}

/* Prepare section m's statements unless they are.  0, or the error. */
static unsigned int
ready(struct myactions *a, struct mysection *m, char *err, size_t errsz)
{
	size_t		 j;
	unsigned int	 e;

	if (m->prepared != NULL)
		return 0;
	if ((m->prepared = calloc(m->stmts.n + 1, sizeof(*m->prepared))) ==
	    NULL) {
		snprintf(err, errsz, "out of memory");
		return MYDB_OOM;
	}
	for (j = 0; j < m->stmts.n; j++)
		if ((e = mydb_prepare(a->db, m->stmts.v[j].sql,
		    &m->prepared[j])) != 0) {
			snprintf(err, errsz, "%s:%d: %s%s", a->file.path,
			    m->stmts.v[j].line, mydb_error(a->db),
			    setup_hint(e));
			while (j-- > 0)
				mydb_stmt_close(m->prepared[j]);
			free(m->prepared);
			m->prepared = NULL;
			return e;
		}
	return 0;
}

size_t
myactions_payloads(const struct myactions *a)
{
	const struct myp_stmt	*st;
	size_t			 i, j, k, n, most = 0;

	for (i = 0; i < a->file.n; i++)
		for (j = 0; j < a->v[i].stmts.n; j++) {
			st = &a->v[i].stmts.v[j];
			for (k = n = 0; k < st->nparams; k++)
				n += st->params[k] == MYP_PAYLOAD;
			if (n > most)
				most = n;
		}
	return most;
}

int
myactions_prepare_all(struct myactions *a, char *err, size_t errsz)
{
	size_t	 i;

	for (i = 0; i < a->file.n; i++)
		if (ready(a, &a->v[i], err, errsz) != 0)
			return -1;
	return 0;
}

int
myactions_setup(struct mydb *db, const char *path, const char *prefix,
    char *err, size_t errsz)
{
	struct actfile		 f;
	struct myp_stmts	 st = { NULL, 0 };
	char			 why[256];
	size_t			 i;
	int			 rc = 0;

	if (actfile_read(path, ACTFILE_SETUP, &f, err, errsz) == -1)
		return -1;
	if (myp_split(f.text, f.setup_end, 1, prefix, MYP_SETUP, &st, why,
	    sizeof(why)) == -1) {
		snprintf(err, errsz, "%s:%s", path, why + (strncmp(why,
		    "line ", 5) == 0 ? 5 : 0));
		rc = -1;
	}
	for (i = 0; rc == 0 && i < st.n; i++)
		if (mydb_run(db, strdup(st.v[i].sql), NULL, NULL)
		    != 0) {
			snprintf(err, errsz, "%s:%d: %s", path, st.v[i].line,
			    mydb_error(db));
			rc = -1;
		}
	myp_free(&st);
	actfile_free(&f);
	return rc;
}

unsigned int
myactions_run(struct myactions *a, const char *endpoint,
    const struct event *ev, char *err, size_t errsz)
{
	const struct actfile_section	*s;
	struct mysection		*m;
	const struct myp_stmt		*st;
	struct mybind			*b;
	long long			 now = (long long)time(NULL), n;
	size_t				 i, j;
	unsigned int			 e = 0;

	if ((s = actfile_find(&a->file, ev->type)) == NULL)
		return 0;
	m = &a->v[s - a->file.v];
	if ((e = ready(a, m, err, errsz)) != 0)
		return e;
	b = m->binds;
	for (i = 0; i < m->stmts.n; i++) {
		st = &m->stmts.v[i];
		memset(b, 0, m->most * sizeof(*b));
		for (j = 0; j < st->nparams; j++)
			switch (st->params[j]) {
			case MYP_ENDPOINT:
				b[j].p = endpoint;
				b[j].len = strlen(endpoint);
				break;
			case MYP_KEY:
				b[j].p = ev->key;
				b[j].len = strlen(ev->key);
				break;
			case MYP_TYPE:
				b[j].p = ev->type;
				b[j].len = ev->type != NULL ?
				    strlen(ev->type) : 0;
				break;
			case MYP_PAYLOAD:
				b[j].p = ev->norm != NULL ? ev->norm :
				    ev->payload;
				b[j].len = ev->norm != NULL ? ev->normsz :
				    ev->payloadsz;
				break;
			case MYP_PAYLOAD_HASH:
				b[j].p = ev->hash;
				b[j].len = strlen(ev->hash);
				break;
			case MYP_RECEIVED_AT:
				b[j].num = ev->received_at;
				b[j].isnum = 1;
				break;
			case MYP_NOW:
				b[j].num = now;
				b[j].isnum = 1;
				break;
			}
		if ((e = mydb_execute(a->db, m->prepared[i], b, st->nparams,
		    &n)) != 0) {
			snprintf(err, errsz, "%s:%d: %s", a->file.path,
			    st->line, mydb_error(a->db));
			/* Prepared anew at the section's next run: a server
			 * may keep a failed statement's state (MariaDB 10.11's
			 * JSON_OBJECT() answers NULL for good once a parameter
			 * was not valid text).  Not after a deadlock or a lock
			 * wait, which Galera's conflicts make common. */
			if (mydb_classify(e) != HOOK_EBUSY)
				unprepare(m);
			break;
		}
	}
	return e;
}
