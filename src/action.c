/*
 * oncehook: actions (see action.h).
 *
 * The file is read once, cut into sections at the marker lines, and each
 * section's statements are prepared with SQLITE_PREPARE_PERSISTENT.  The
 * index of every named parameter is looked up at load time, and a
 * parameter we do not provide is an error then, not at the first event.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sqlite3.h>

#include "action.h"
#include "event.h"

#define ACTIONS_FILE_MAX	(1 << 20)	/* bytes */
#define MARKER			"-- on:"

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

struct section {
	int		 line;		/* of its marker */
	char		**types;	/* NULL-terminated; {"*"} catch-all */
	struct stmt	*stmts;
	size_t		 nstmts;
	size_t		 sql, end;	/* its statements in the file's text */
	int		 prepared;	/* stmts hold them all */
};

struct actions {
	char		*path;
	struct action_guard *g;		/* its connection's */
	sqlite3		*db;
	char		*text;		/* ACTIONS_LAZY: the file, kept */
	struct section	*sections;
	size_t		 nsections;
	const struct section *catchall;
};

/* Read the whole file into a new NUL-terminated buffer. */
static char *
slurp(const char *path, char *err, size_t errsz)
{
	FILE	*f;
	char	*buf, *p;
	size_t	 sz;

	if ((f = fopen(path, "r")) == NULL) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if ((buf = malloc(ACTIONS_FILE_MAX + 1)) == NULL) {
		fclose(f);
		snprintf(err, errsz, "%s: out of memory", path);
		return NULL;
	}
	sz = fread(buf, 1, ACTIONS_FILE_MAX + 1, f);
	if (ferror(f) || sz > ACTIONS_FILE_MAX) {
		snprintf(err, errsz, "%s: %s", path, ferror(f) ?
		    "read error" : "larger than 1 MiB");
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[sz] = '\0';
	/* Kept for the process's life when lazy: its size, not 1 MiB. */
	if ((p = realloc(buf, sz + 1)) != NULL)
		buf = p;
	return buf;
}

/* Line number of p within text. */
static int
lineof(const char *text, const char *p)
{
	int	 n = 1;

	for (; text < p; text++)
		n += *text == '\n';
	return n;
}

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

/* The start of the next marker line at or after p, or NULL. */
static const char *
next_marker(const char *p)
{
	for (;;) {
		if (strncmp(p, MARKER, sizeof(MARKER) - 1) == 0)
			return p;
		if ((p = strchr(p, '\n')) == NULL)
			return NULL;
		p++;
	}
}

static void
section_clear(struct section *s)
{
	size_t	 i;

	for (i = 0; s->types != NULL && s->types[i] != NULL; i++)
		free(s->types[i]);
	free(s->types);
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
	for (i = 0; i < a->nsections; i++)
		section_clear(&a->sections[i]);
	free(a->sections);
	free(a->path);
	free(a->text);
	free(a);
}

/* 1 if c separates the types of a marker line. */
static int
sep(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == ',';
}

/*
 * Split the marker line's types (the len bytes at p, after "-- on:")
 * into s->types: separated by white space or commas, each written bare
 * or in double quotes, which may hold spaces and commas ("Push Hook").
 * Returns 0, or -1 with *why static text (NULL if out of memory).
 */
static int
parse_types(struct section *s, const char *p, size_t len, const char **why)
{
	const char	*end = p + len, *q;
	size_t		 n = 0;
	char		**v;

	*why = NULL;
	if ((v = calloc(len / 2 + 2, sizeof(*v))) == NULL)
		return -1;
	s->types = v;
	for (;;) {
		while (p < end && sep(*p))
			p++;
		if (p == end)
			break;
		if (*p == '"') {
			if ((q = memchr(p + 1, '"', (size_t)(end - p - 1))) ==
			    NULL) {
				*why = "unterminated quote";
				return -1;
			}
			if (q == p + 1) {
				*why = "an empty quoted type";
				return -1;
			}
			if (q + 1 < end && !sep(q[1])) {
				*why = "text right after a closing quote";
				return -1;
			}
			if ((v[n++] = strndup(p + 1, (size_t)(q - p - 1))) ==
			    NULL)
				return -1;
			p = q + 1;
			continue;
		}
		for (q = p; q < end && !sep(*q); q++)
			if (*q == '"') {
				*why = "a quote inside a type (quote the whole "
				    "type: \"Push Hook\")";
				return -1;
			}
		if ((v[n++] = strndup(p, (size_t)(q - p))) == NULL)
			return -1;
		p = q;
	}
	if (n == 0) {
		*why = "wants one or more event types, or *";
		return -1;
	}
	return 0;
}

/* Prepare every statement of sql (the text up to end) into s. */
static int
prepare_section(sqlite3 *db, struct action_guard *g, const char *path,
    const char *text, struct section *s, const char *sql, const char *end,
    char *err, size_t errsz)
{
	const char	*tail;
	sqlite3_stmt	*st;
	struct stmt	*ns;
	const char	*name;
	int		 i, j, rc;

	while ((sql = skip_blank(sql, end)) < end) {
		g->phase = GUARD_SECTION;
		g->why = NULL;
		rc = sqlite3_prepare_v3(db, sql, (int)(end - sql),
		    SQLITE_PREPARE_PERSISTENT, &st, &tail);
		g->phase = GUARD_RUN;
		if (rc != SQLITE_OK) {
			snprintf(err, errsz, "%s:%d: %s", path,
			    lineof(text, sql), g->why != NULL ? g->why :
			    sqlite3_errmsg(db));
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
			    "changes belong in the setup part", path,
			    lineof(text, sql));
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
		ns->line = lineof(text, sql);
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
	size_t	 i, j;

	if (type != NULL)
		for (i = 0; i < a->nsections; i++)
			for (j = 0; a->sections[i].types[j] != NULL; j++)
				if (strcmp(a->sections[i].types[j], type) == 0)
					return &a->sections[i];
	return (struct section *)a->catchall;
}

/* Prepare section s of a if it is not yet: 0, or -1 with the reason. */
static int
ready(struct actions *a, struct section *s, char *err, size_t errsz)
{
	size_t	 i;

	if (s->prepared)
		return 0;
	if (prepare_section(a->db, a->g, a->path, a->text, s,
	    a->text + s->sql, a->text + s->end, err, errsz) == -1) {
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
	struct section	*s;
	char		*text;
	const char	*m, *eol, *next, *why;
	size_t		 i, j, k, l;

	if ((text = slurp(path, err, errsz)) == NULL)
		return NULL;
	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    (a->path = strdup(path)) == NULL)
		goto oom;
	a->g = g;
	a->db = db;
	a->text = text;

	for (m = next_marker(text); m != NULL; m = next) {
		eol = m + strcspn(m, "\n");
		next = *eol != '\0' ? next_marker(eol + 1) : NULL;
		if ((s = reallocarray(a->sections, a->nsections + 1,
		    sizeof(*s))) == NULL)
			goto oom;
		a->sections = s;
		s = &a->sections[a->nsections++];
		memset(s, 0, sizeof(*s));
		s->line = lineof(text, m);
		if (parse_types(s, m + sizeof(MARKER) - 1,
		    (size_t)(eol - m) - (sizeof(MARKER) - 1), &why) == -1) {
			if (why == NULL)
				goto oom;
			snprintf(err, errsz, "%s:%d: \"-- on:\" %s", path,
			    s->line, why);
			goto err;
		}
		s->sql = (size_t)(eol - text);
		s->end = next != NULL ? (size_t)(next - text) :
		    (size_t)(eol - text) + strlen(eol);
		if (!(flags & ACTIONS_LAZY) && ready(a, s, err, errsz) == -1)
			goto err;
	}

	/* Each type in one section only; find the catch-all. */
	for (i = 0; i < a->nsections; i++)
		for (j = 0; a->sections[i].types[j] != NULL; j++) {
			if (strcmp(a->sections[i].types[j], "*") == 0) {
				if (a->catchall != NULL) {
					k = i;
					goto twice;
				}
				a->catchall = &a->sections[i];
			}
			for (k = i; k < a->nsections; k++)
				for (l = k == i ? j + 1 : 0;
				    a->sections[k].types[l] != NULL; l++)
					if (strcmp(a->sections[i].types[j],
					    a->sections[k].types[l]) == 0)
						goto twice;
			continue;
twice:
			snprintf(err, errsz, "%s:%d: event type \"%s\" has "
			    "more than one section", path, a->sections[k].line,
			    a->sections[i].types[j]);
			goto err;
		}
	if (!(flags & ACTIONS_LAZY)) {
		free(text);
		a->text = NULL;
	}
	return a;
oom:
	snprintf(err, errsz, "%s: out of memory", path);
err:
	if (a == NULL || a->text == NULL)
		free(text);
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
actions_types(const char *path, void (*fn)(void *arg, const char *type,
    int line), void *arg, char *err, size_t errsz)
{
	struct section	 s;
	char		*text;
	const char	*m, *eol, *why;
	size_t		 j;
	int		 rc = 0;

	if ((text = slurp(path, err, errsz)) == NULL)
		return -1;
	for (m = next_marker(text); m != NULL && rc == 0;
	    m = *eol != '\0' ? next_marker(eol + 1) : NULL) {
		eol = m + strcspn(m, "\n");
		memset(&s, 0, sizeof(s));
		if (parse_types(&s, m + sizeof(MARKER) - 1,
		    (size_t)(eol - m) - (sizeof(MARKER) - 1), &why) == -1) {
			snprintf(err, errsz, "%s:%d: %s%s", path,
			    lineof(text, m), why != NULL ? "\"-- on:\" " : "",
			    why != NULL ? why : "out of memory");
			rc = -1;
		} else
			for (j = 0; s.types[j] != NULL; j++)
				if (strcmp(s.types[j], "*") != 0)
					fn(arg, s.types[j], lineof(text, m));
		section_clear(&s);
	}
	free(text);
	return rc;
}

/* The first place needle (lower case) is in s, whatever the case. */
static const char *
find_ci(const char *s, const char *needle)
{
	size_t	 n = strlen(needle);

	for (; *s != '\0'; s++)
		if (strncasecmp(s, needle, n) == 0)
			return s;
	return NULL;
}

int
actions_topics(const char *path, void (*fn)(void *arg, const char *topic,
    int line), void *arg, char *err, size_t errsz)
{
	char		*text, topic[132];
	const char	*p, *q, *kw;
	size_t		 n;

	if ((text = slurp(path, err, errsz)) == NULL)
		return -1;
	for (p = text; (p = find_ci(p, "into outbox")) != NULL; p += 11) {
		/* The first value of its SELECT or VALUES, if a literal. */
		q = p + 11;
		kw = find_ci(q, "select");
		if ((q = find_ci(q, "values")) == NULL || (kw != NULL &&
		    kw < q))
			q = kw;
		if (q == NULL || q - p > 200)
			continue;
		q += 6;
		q += strspn(q, " \t\r\n(");
		if (*q != '\'' || (n = strcspn(q + 1, "'\n")) == 0 ||
		    q[1 + n] != '\'' || n >= sizeof(topic))
			continue;
		memcpy(topic, q + 1, n);
		topic[n] = '\0';
		fn(arg, topic, lineof(text, p));
	}
	free(text);
	return 0;
}

int
actions_setup(sqlite3 *db, struct action_guard *g, const char *path,
    char *err, size_t errsz)
{
	sqlite3_stmt	*st;
	char		*text, *m;
	const char	*sql, *end, *tail;
	int		 rc = SQLITE_OK;

	if ((text = slurp(path, err, errsz)) == NULL)
		return SQLITE_CANTOPEN;
	if ((m = (char *)next_marker(text)) != NULL)
		*m = '\0';
	end = text + strlen(text);
	for (sql = text; rc == SQLITE_OK &&
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
			    lineof(text, sql), g->why != NULL ? g->why :
			    sqlite3_errmsg(db));
		sqlite3_finalize(st);
		if (st == NULL && rc == SQLITE_OK)
			break;		/* nothing but a trailing comment */
	}
	free(text);
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
			snprintf(err, errsz, "%s:%d: bind failed", a->path,
			    st->line);
			rc = SQLITE_ERROR;
		} else {
			while ((rc = sqlite3_step(st->st)) == SQLITE_ROW)
				;
			if (rc == SQLITE_DONE)
				rc = SQLITE_OK;
			else
				snprintf(err, errsz, "%s:%d: %s", a->path,
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
	return a->path;
}
