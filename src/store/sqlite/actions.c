/* SPDX-License-Identifier: MIT */
/*
 * oncehook: actions (see store/sqlite/actions.h).
 *
 * The file is read once and cut into sections at the marker lines
 * (store/actfile.c), and each section's statements are prepared with
 * SQLITE_PREPARE_PERSISTENT.  The index of every named parameter is
 * looked up at load time, and a parameter we do not provide is an error
 * then, not at the first event.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sqlite3.h>

#include "pipeline/event.h"
#include "store/actfile.h"
#include "store/sqlite/actions.h"

enum param {
	PARAM_ENDPOINT,
	PARAM_KEY,
	PARAM_TYPE,
	PARAM_PAYLOAD,
	PARAM_PAYLOAD_HASH,
	PARAM_RECEIVED_AT,
	PARAM__MAX
};

static const char *const param_names[PARAM__MAX] = {
	[PARAM_ENDPOINT] = ":endpoint",
	[PARAM_KEY] = ":key",
	[PARAM_TYPE] = ":type",
	[PARAM_PAYLOAD] = ":payload",
	[PARAM_PAYLOAD_HASH] = ":payload_hash",
	[PARAM_RECEIVED_AT] = ":received_at",
};

struct stmt {
	sqlite3_stmt	*st;
	int		 line;		/* where it starts in the file */
	int		 idx[PARAM__MAX]; /* bind index; 0 if unused */
};

/* The statements of the file's section of the same index. */
struct section {
	struct stmt	*stmts;
	size_t		 nstmts;
	int		 prepared;	/* stmts hold them all */
};

struct actions {
	struct action_guard *g;		/* its connection's */
	sqlite3		*db;
	struct actfile	 f;		/* its text kept with ACTIONS_LAZY */
	struct section	*sections;	/* f.n */
};

/* 1 if name is one of oncehook's own tables (2: the outbox, which
 * actions may insert into). */
static int
own(const char *name)
{
	if (name == NULL)
		return 0;
	if (strcmp(name, "outbox") == 0)
		return 2;
	return strcmp(name, "events") == 0 || strcmp(name, "conflicts") == 0 ||
	    strcmp(name, "failures") == 0;
}

/*
 * The authorizer (see struct action_guard).  Always refused: a trigger
 * writing oncehook's tables, a trigger on them (made or dropped: the
 * outbox's own checks its rows), a table or view that
 * would shadow them, dropping or altering them or their indexes, and
 * attaching databases.  Refused in an actions file besides: ending or
 * splitting the claim transaction, PRAGMA, and writing oncehook's tables
 * directly.
 */
static int
authorize(void *arg, int op, const char *a, const char *b, const char *db,
    const char *trigger)
{
	struct action_guard	*g = arg;
	int			 loading = g->phase != GUARD_RUN;

	switch (op) {
	case SQLITE_INSERT:
		/* What to send: oncehook's own trigger checks the row. */
		if (own(a) == 2)
			return SQLITE_OK;
		/* FALLTHROUGH */
	case SQLITE_UPDATE:
		/* The outbox's own trigger draws a new row's id (migration
		 * 005); no other trigger can take its name (below). */
		if (op == SQLITE_UPDATE && own(a) == 2 && trigger != NULL &&
		    strcmp(trigger, "outbox_id") == 0)
			return SQLITE_OK;
		/* FALLTHROUGH */
	case SQLITE_DELETE:
		if (own(a) == 2 && (trigger != NULL || loading)) {
			g->why = "an action or trigger may insert into the "
			    "outbox, never update or delete its rows";
			return SQLITE_DENY;
		}
		if (own(a) && (trigger != NULL || loading)) {
			g->why = "an action or trigger may not write "
			    "oncehook's tables (events, conflicts, failures)";
			return SQLITE_DENY;
		}
		return SQLITE_OK;
	case SQLITE_CREATE_TRIGGER:
	case SQLITE_CREATE_TEMP_TRIGGER:
	case SQLITE_DROP_TRIGGER:
	case SQLITE_DROP_TEMP_TRIGGER:
	case SQLITE_ALTER_TABLE:
	case SQLITE_DROP_INDEX:
	case SQLITE_DROP_TEMP_INDEX:
		/* No trigger may take the name the outbox's own has (a temp
		 * one could, in its own schema). */
		if (own(b) || ((op == SQLITE_CREATE_TRIGGER ||
		    op == SQLITE_CREATE_TEMP_TRIGGER) && a != NULL &&
		    strcmp(a, "outbox_id") == 0)) {
			g->why = "no trigger on, and no change to, oncehook's "
			    "tables (events, conflicts, failures, outbox)";
			return SQLITE_DENY;
		}
		return SQLITE_OK;
	case SQLITE_CREATE_TABLE:
	case SQLITE_CREATE_TEMP_TABLE:
	case SQLITE_CREATE_VIEW:
	case SQLITE_CREATE_TEMP_VIEW:
	case SQLITE_DROP_TABLE:
	case SQLITE_DROP_TEMP_TABLE:
		if (own(a)) {
			g->why = "oncehook's tables (events, conflicts, failures, "
			    "outbox) may not be created, shadowed or dropped";
			return SQLITE_DENY;
		}
		return SQLITE_OK;
	case SQLITE_ATTACH:
	case SQLITE_DETACH:
		g->why = "an action may not attach or detach databases";
		return SQLITE_DENY;
	case SQLITE_TRANSACTION:
	case SQLITE_SAVEPOINT:
		if (loading) {
			g->why = "an action may not begin, commit, roll back "
			    "or split the claim transaction";
			return SQLITE_DENY;
		}
		return SQLITE_OK;
	case SQLITE_PRAGMA:
		if (loading) {
			g->why = "an action may not run PRAGMA";
			return SQLITE_DENY;
		}
		return SQLITE_OK;
	default:
		return SQLITE_OK;
	}
}

/* oncehook_event(FIELD): see actions_guard(). */
static void
event_field(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct action_guard	*g = sqlite3_user_data(ctx);
	const char			*f;

	f = argc == 1 ? (const char *)sqlite3_value_text(argv[0]) : NULL;
	if (g->ev_endpoint == NULL || f == NULL)
		sqlite3_result_null(ctx);
	else if (strcmp(f, "endpoint") == 0)
		sqlite3_result_text(ctx, g->ev_endpoint, -1, SQLITE_TRANSIENT);
	else if (strcmp(f, "key") == 0)
		sqlite3_result_text(ctx, g->ev_key, -1, SQLITE_TRANSIENT);
	else if (strcmp(f, "time") == 0)
		sqlite3_result_int64(ctx, g->ev_time);
	else
		sqlite3_result_null(ctx);
}

void
actions_guard(sqlite3 *db, struct action_guard *g)
{
	g->phase = GUARD_RUN;
	g->why = NULL;
	g->ev_endpoint = g->ev_key = NULL;
	g->ev_time = 0;
	sqlite3_set_authorizer(db, authorize, g);
	/* Innocuous: the schema's defaults and trigger call it. */
	(void)sqlite3_create_function(db, "oncehook_event", 1, SQLITE_UTF8 |
	    SQLITE_INNOCUOUS, g, event_field, NULL, NULL);
}

/*
 * 1 if the statement at sql is one an action may run: a write or a
 * query (INSERT, UPDATE, DELETE, REPLACE, SELECT, WITH, VALUES), not
 * schema changes, VACUUM or the like.
 */
static int
dml(const char *sql)
{
	static const char *const ok[] = {
		"INSERT", "UPDATE", "DELETE", "REPLACE", "SELECT", "WITH",
		"VALUES", NULL
	};
	size_t	 i, len;

	for (i = 0; ok[i] != NULL; i++) {
		len = strlen(ok[i]);
		if (strncasecmp(sql, ok[i], len) == 0 &&
		    !isalnum((unsigned char)sql[len]) && sql[len] != '_')
			return 1;
	}
	return 0;
}

/* Skip white space and SQL comments from p, up to end. */
static const char *
skip_blank(const char *p, const char *end)
{
	const char	*q;

	while (p < end) {
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		else if (end - p >= 2 && p[0] == '-' && p[1] == '-') {
			if ((q = memchr(p, '\n', (size_t)(end - p))) == NULL)
				return end;
			p = q + 1;
		} else if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
			for (q = p + 2; q + 1 < end &&
			    !(q[0] == '*' && q[1] == '/'); q++)
				;
			p = q + 1 < end ? q + 2 : end;
		} else
			break;
	}
	return p;
}

static void
section_clear(struct section *s)
{
	size_t	 i;

	for (i = 0; i < s->nstmts; i++)
		sqlite3_finalize(s->stmts[i].st);
	free(s->stmts);
}

void
actions_free(struct actions *a)
{
	size_t	 i;

	if (a == NULL)
		return;
	for (i = 0; a->sections != NULL && i < a->f.n; i++)
		section_clear(&a->sections[i]);
	free(a->sections);
	actfile_free(&a->f);
	free(a);
}

/* Prepare every statement of file section fs into s. */
static int
prepare_section(sqlite3 *db, struct action_guard *g, const struct actfile *f,
    const struct actfile_section *fs, struct section *s, char *err,
    size_t errsz)
{
	const char	*path = f->path, *text = f->text;
	const char	*sql = text + fs->sql, *end = text + fs->end;
	const char	*tail;
	sqlite3_stmt	*st;
	struct stmt	*ns;
	const char	*name;
	int		 i, j, rc, line;

	while ((sql = skip_blank(sql, end)) < end) {
		line = actfile_line(f, (size_t)(sql - text));
		g->phase = GUARD_SECTION;
		g->why = NULL;
		rc = sqlite3_prepare_v3(db, sql, (int)(end - sql),
		    SQLITE_PREPARE_PERSISTENT, &st, &tail);
		g->phase = GUARD_RUN;
		if (rc != SQLITE_OK) {
			snprintf(err, errsz, "%s:%d: %s", path, line,
			    g->why != NULL ? g->why : sqlite3_errmsg(db));
			return -1;
		}
		if (st == NULL) {	/* only white space or comments */
			sql = tail;
			continue;
		}
		if (!dml(sql)) {
			sqlite3_finalize(st);
			snprintf(err, errsz, "%s:%d: an action is INSERT, "
			    "UPDATE, DELETE, REPLACE, SELECT or WITH; schema "
			    "changes belong in the setup part", path, line);
			return -1;
		}
		if ((ns = reallocarray(s->stmts, s->nstmts + 1,
		    sizeof(*ns))) == NULL) {
			sqlite3_finalize(st);
			snprintf(err, errsz, "%s: out of memory", path);
			return -1;
		}
		s->stmts = ns;
		ns = &s->stmts[s->nstmts++];
		memset(ns, 0, sizeof(*ns));
		ns->st = st;
		ns->line = line;
		for (i = 1; i <= sqlite3_bind_parameter_count(st); i++) {
			name = sqlite3_bind_parameter_name(st, i);
			for (j = 0; j < PARAM__MAX; j++)
				if (name != NULL &&
				    strcmp(name, param_names[j]) == 0)
					break;
			if (j == PARAM__MAX) {
				snprintf(err, errsz, "%s:%d: unknown parameter "
				    "%s (have :endpoint, :key, :type, "
				    ":payload, :payload_hash, :received_at)",
				    path, ns->line, name ? name : "?");
				return -1;
			}
			ns->idx[j] = i;
		}
		sql = tail;
	}
	return 0;
}

/* The section events of type run: its own, else the catch-all, else
 * NULL. */
static struct section *
find(struct actions *a, const char *type)
{
	const struct actfile_section	*fs;

	if ((fs = actfile_find(&a->f, type)) == NULL)
		return NULL;
	return &a->sections[fs - a->f.v];
}

/* Prepare section s of a if it is not yet: 0, or -1 with the reason. */
static int
ready(struct actions *a, struct section *s, char *err, size_t errsz)
{
	size_t	 i;

	if (s->prepared)
		return 0;
	if (prepare_section(a->db, a->g, &a->f, &a->f.v[s - a->sections], s,
	    err, errsz) == -1) {
		/* None kept: the next event of its types tries again. */
		for (i = 0; i < s->nstmts; i++)
			sqlite3_finalize(s->stmts[i].st);
		free(s->stmts);
		s->stmts = NULL;
		s->nstmts = 0;
		return -1;
	}
	s->prepared = 1;
	return 0;
}

struct actions *
actions_load(sqlite3 *db, struct action_guard *g, const char *path,
    int flags, char *err, size_t errsz)
{
	struct actions	*a;
	size_t		 i;

	if ((a = calloc(1, sizeof(*a))) == NULL) {
		snprintf(err, errsz, "%s: out of memory", path);
		return NULL;
	}
	a->g = g;
	a->db = db;
	if (actfile_read(path, ACTFILE_ONCE, &a->f, err, errsz) == -1)
		goto err;
	if (a->f.n > 0 && (a->sections = calloc(a->f.n,
	    sizeof(*a->sections))) == NULL) {
		snprintf(err, errsz, "%s: out of memory", path);
		goto err;
	}
	if (!(flags & ACTIONS_LAZY)) {
		for (i = 0; i < a->f.n; i++)
			if (ready(a, &a->sections[i], err, errsz) == -1)
				goto err;
		free(a->f.text);
		a->f.text = NULL;
	}
	return a;
err:
	actions_free(a);
	return NULL;
}

int
actions_ready(struct actions *a, const char *type, char *err, size_t errsz)
{
	struct section	*s;

	if ((s = find(a, type)) == NULL)
		return 0;
	return ready(a, s, err, errsz);
}

int
actions_setup(sqlite3 *db, struct action_guard *g, const char *path,
    char *err, size_t errsz)
{
	struct actfile	 f;
	sqlite3_stmt	*st;
	const char	*sql, *end, *tail;
	int		 rc = SQLITE_OK;

	if (actfile_read(path, ACTFILE_SETUP, &f, err, errsz) == -1)
		return SQLITE_CANTOPEN;
	end = f.text + f.setup_end;
	for (sql = f.text; rc == SQLITE_OK &&
	    (sql = skip_blank(sql, end)) < end; sql = tail) {
		g->phase = GUARD_SETUP;
		g->why = NULL;
		rc = sqlite3_prepare_v2(db, sql, (int)(end - sql), &st, &tail);
		g->phase = GUARD_RUN;
		if (rc == SQLITE_OK && st != NULL) {
			while ((rc = sqlite3_step(st)) == SQLITE_ROW)
				;
			if (rc == SQLITE_DONE)
				rc = SQLITE_OK;
		}
		if (rc != SQLITE_OK)
			snprintf(err, errsz, "%s:%d: setup: %s", path,
			    actfile_line(&f, (size_t)(sql - f.text)),
			    g->why != NULL ? g->why : sqlite3_errmsg(db));
		sqlite3_finalize(st);
		if (st == NULL && rc == SQLITE_OK)
			break;		/* nothing but a trailing comment */
	}
	actfile_free(&f);
	return rc;
}

/*
 * Bind the event to st.  Texts are bound SQLITE_STATIC: the event and
 * the endpoint outlive the statement's run, and actions_run() clears
 * the bindings before it returns.
 */
static int
bind(const struct stmt *s, const char *endpoint, const struct event *ev)
{
	sqlite3_stmt	*st = s->st;
	int		 rc = SQLITE_OK;

	if (s->idx[PARAM_ENDPOINT])
		rc |= sqlite3_bind_text(st, s->idx[PARAM_ENDPOINT], endpoint,
		    -1, SQLITE_STATIC);
	if (s->idx[PARAM_KEY])
		rc |= sqlite3_bind_text(st, s->idx[PARAM_KEY], ev->key, -1,
		    SQLITE_STATIC);
	if (s->idx[PARAM_TYPE])
		rc |= ev->type != NULL ? sqlite3_bind_text(st,
		    s->idx[PARAM_TYPE], ev->type, -1, SQLITE_STATIC) :
		    sqlite3_bind_null(st, s->idx[PARAM_TYPE]);
	if (s->idx[PARAM_PAYLOAD])
		rc |= ev->norm != NULL ? sqlite3_bind_text(st,
		    s->idx[PARAM_PAYLOAD], ev->norm, (int)ev->normsz,
		    SQLITE_STATIC) : sqlite3_bind_text(st,
		    s->idx[PARAM_PAYLOAD], ev->payload, (int)ev->payloadsz,
		    SQLITE_STATIC);
	if (s->idx[PARAM_PAYLOAD_HASH])
		rc |= sqlite3_bind_text(st, s->idx[PARAM_PAYLOAD_HASH],
		    ev->hash, -1, SQLITE_STATIC);
	if (s->idx[PARAM_RECEIVED_AT])
		rc |= sqlite3_bind_int64(st, s->idx[PARAM_RECEIVED_AT],
		    ev->received_at);
	return rc;
}

int
actions_run(struct actions *a, const char *endpoint, const struct event *ev,
    char *err, size_t errsz)
{
	struct section		*s;
	const struct stmt	*st;
	size_t			 i;
	int			 rc = SQLITE_OK;

	if ((s = find(a, ev->type)) == NULL)
		return SQLITE_OK;
	if (!s->prepared && ready(a, s, err, errsz) == -1)
		return sqlite3_errcode(a->db) != SQLITE_OK ?
		    sqlite3_errcode(a->db) : SQLITE_ERROR;
	/* The outbox rows its statements write are the event's. */
	a->g->ev_endpoint = endpoint;
	a->g->ev_key = ev->key;
	a->g->ev_time = (long long)time(NULL);
	for (i = 0; i < s->nstmts && rc == SQLITE_OK; i++) {
		st = &s->stmts[i];
		if ((rc = bind(st, endpoint, ev)) != SQLITE_OK) {
			snprintf(err, errsz, "%s:%d: bind failed", a->f.path,
			    st->line);
			rc = SQLITE_ERROR;
		} else {
			while ((rc = sqlite3_step(st->st)) == SQLITE_ROW)
				;
			if (rc == SQLITE_DONE)
				rc = SQLITE_OK;
			else
				snprintf(err, errsz, "%s:%d: %s", a->f.path,
				    st->line, sqlite3_errmsg(
				    sqlite3_db_handle(st->st)));
		}
		sqlite3_reset(st->st);
		sqlite3_clear_bindings(st->st);
	}
	a->g->ev_endpoint = a->g->ev_key = NULL;
	return rc;
}

const char *
actions_path(const struct actions *a)
{
	return a->f.path;
}
