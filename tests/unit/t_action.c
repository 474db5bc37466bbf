/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: actions (src/store/sqlite/actions.c).
 *
 * The "-- on:" line: bare types as before, quoted types holding spaces
 * (GitLab's "Push Hook"), commas, and every malformed line reported as
 * file:line.  actions_types() as "oncehook check" reads it, with the
 * schemes' type shapes it judges by.  And :payload as statements see
 * it: SQLite's json_extract() finds the member jansson found however
 * its name was escaped, numbers and strings read back as sent, and a
 * body of EVENT_DEPTH_MAX levels is one the linked SQLite can read.
 * Each file is loaded on an in-memory database, as production loads it.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/sqlite/actions.h"
#include "store/actfile.h"
#include "conf.h"
#include "pipeline/event.h"
#include "hook.h"
#include "pipeline/sig.h"
#include "tap.h"

#define SETUP	"CREATE TABLE IF NOT EXISTS ran (type TEXT, section);\n"

static char		 dir[64];
static char		 path[128];
static sqlite3		*db;
static struct action_guard guard;

/* Write text to the test's actions file. */
static void
put(const char *text)
{
	FILE	*f;

	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) == EOF)
		BAIL("%s: %s", path, strerror(errno));
	actfile_forget(NULL);	/* as a restart would: the new text runs */
}

/* Load text as an actions file; NULL with the reason in err. */
static struct actions *
load(const char *text, char *err, size_t errsz)
{
	put(text);
	err[0] = '\0';
	return actions_load(db, &guard, path, 0, err, errsz);
}

/* An event of type with key "k" and an empty object as its payload. */
static void
bare_event(struct event *ev, const char *type)
{
	memset(ev, 0, sizeof(*ev));
	ev->key = (char *)"k";
	ev->type = (char *)type;
	ev->payload = "{}";
	ev->payloadsz = 2;
}

/* The section (its "section" text) that ran for type, or "(none)". */
static const char *
ran_for(struct actions *a, const char *type)
{
	static char	 buf[64];
	struct event	 ev;
	sqlite3_stmt	*s;
	char		 err[256];
	const char	*t;

	if (sqlite3_exec(db, "DELETE FROM ran", NULL, NULL, NULL) !=
	    SQLITE_OK)
		BAIL("DELETE: %s", sqlite3_errmsg(db));
	bare_event(&ev, type);
	if (actions_run(a, "ep", &ev, err, sizeof(err)) != SQLITE_OK)
		BAIL("actions_run: %s", err);
	snprintf(buf, sizeof(buf), "(none)");
	if (sqlite3_prepare_v2(db, "SELECT group_concat(section, '+') "
	    "FROM ran WHERE type = ?1", -1, &s, NULL) != SQLITE_OK)
		BAIL("SELECT: %s", sqlite3_errmsg(db));
	sqlite3_bind_text(s, 1, type, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW &&
	    (t = (const char *)sqlite3_column_text(s, 0)) != NULL)
		snprintf(buf, sizeof(buf), "%s", t);
	sqlite3_finalize(s);
	return buf;
}

static void
test_quoted(void)
{
	struct actions	*a;
	char		 err[512];
	const char	*got;

	a = load("-- on: \"Push Hook\"\n"
	    "INSERT INTO ran VALUES (:type, 'push');\n"
	    "-- on: \"Merge Request Hook\", \"Tag Push Hook\" Note\n"
	    "INSERT INTO ran VALUES (:type, 'mr');\n"
	    "-- on:\tpayment.success  invoice.paid\n"
	    "INSERT INTO ran VALUES (:type, 'bare');\n"
	    "-- on: a.b,c.d , e.f,\"g, h\"\n"
	    "INSERT INTO ran VALUES (:type, 'commas');\n"
	    "-- on: *\n"
	    "INSERT INTO ran VALUES (:type, 'catchall');\n", err,
	    sizeof(err));
	CHECK(a != NULL, "quoted, bare and comma-separated types load (%s)",
	    err);
	if (a == NULL)
		return;
	got = ran_for(a, "Push Hook");
	CHECK(strcmp(got, "push") == 0,
	    "\"Push Hook\" runs its section (got %s)", got);
	got = ran_for(a, "Push");
	CHECK(strcmp(got, "catchall") == 0,
	    "\"Push\" alone is no type of that section (got %s)", got);
	got = ran_for(a, "Hook");
	CHECK(strcmp(got, "catchall") == 0,
	    "nor is \"Hook\" (got %s)", got);
	got = ran_for(a, "Merge Request Hook");
	CHECK(strcmp(got, "mr") == 0, "first of a quoted list (got %s)",
	    got);
	got = ran_for(a, "Tag Push Hook");
	CHECK(strcmp(got, "mr") == 0,
	    "quoted type after a comma (got %s)", got);
	got = ran_for(a, "Note");
	CHECK(strcmp(got, "mr") == 0,
	    "bare type after a quoted one (got %s)", got);
	got = ran_for(a, "invoice.paid");
	CHECK(strcmp(got, "bare") == 0,
	    "bare types separated by tabs and spaces, as before (got %s)",
	    got);
	got = ran_for(a, "c.d");
	CHECK(strcmp(got, "commas") == 0 &&
	    strcmp(ran_for(a, "e.f"), "commas") == 0 &&
	    strcmp(ran_for(a, "a.b"), "commas") == 0,
	    "commas separate bare types (got %s)", got);
	got = ran_for(a, "g, h");
	CHECK(strcmp(got, "commas") == 0,
	    "a quoted type may hold a comma (got %s)", got);
	actions_free(a);
}

/* text must be refused, the reason naming the file and line and why. */
static void
bad(const char *text, int line, const char *why, const char *what)
{
	struct actions	*a;
	char		 err[512], want[256];

	a = load(text, err, sizeof(err));
	snprintf(want, sizeof(want), "%s:%d: ", path, line);
	CHECK(a == NULL && strncmp(err, want, strlen(want)) == 0 &&
	    strstr(err, why) != NULL, "%s: refused as file:%d (got %s)",
	    what, line, err);
	actions_free(a);
}

static void
test_bad(void)
{
	bad("-- on: t.ok\nSELECT 1;\n-- on: \"Push Hook\nSELECT 2;\n", 3,
	    "unterminated quote", "an unterminated quote");
	bad("-- on: \"Push Hook\" \"Note Hook\nSELECT 1;\n", 1,
	    "unterminated quote", "an unterminated second quote");
	bad("-- on: \"\"\nSELECT 1;\n", 1, "empty", "an empty quoted type");
	bad("-- on: \"Push Hook\"x\nSELECT 1;\n", 1, "closing quote",
	    "text right after a closing quote");
	bad("-- on: Push\"Hook\"\nSELECT 1;\n", 1, "quote inside",
	    "a quote inside a bare type");
	bad("SELECT 1;\n-- on: ,\nSELECT 1;\n", 2, "one or more",
	    "only a comma");
	bad("-- on: \"x.y\"\nSELECT 1;\n-- on: x.y\nSELECT 2;\n", 3,
	    "\"x.y\" has more than one section",
	    "a quoted and a bare spelling of one type");
	bad("-- on: \"Push Hook\", \"Push Hook\"\nSELECT 1;\n", 1,
	    "more than one section", "one quoted type twice on a line");
}

struct seen {
	char	 v[8][64];
	int	 line[8];
	int	 n;
};

static void
collect(void *arg, const char *type, int line)
{
	struct seen	*s = arg;

	if (s->n < 8) {
		snprintf(s->v[s->n], sizeof(s->v[0]), "%s", type);
		s->line[s->n++] = line;
	}
}

/* actions_types() and the schemes' type shapes, as check uses them. */
static void
test_types(void)
{
	static const struct {
		const char	*scheme, *type;
		int		 sends;
	} shapes[] = {
		{ "gitlab", "Push Hook", 1 },
		{ "gitlab", "Merge Request Hook", 1 },
		{ "gitlab", "Push", 0 },
		{ "gitlab", "Hook", 0 },
		{ "gitlab", "push", 0 },
		{ "stripe", "customer.created", 1 },
		{ "stripe", "v1.billing.meter.error_report_triggered", 1 },
		{ "stripe", "Push Hook", 0 },
		{ "stripe", "ping", 0 },
		{ "stripe", "a..b", 0 },
		{ "paddle", "transaction.payment_failed", 1 },
		{ "github", "pull_request", 1 },
		{ "github", "pull_request.opened", 0 },
		{ "slack", "app_mention", 1 },
		{ "shopify", "orders/create", 1 },
		{ "shopify", "orders.create", 0 },
		{ "hmac-sha256", "Anything at all", 1 },
		{ "standard", "x", 1 },
		{ "svix", "Push Hook", 1 },
	};
	const struct scheme	*sc;
	struct seen		 s;
	char			 err[512];
	size_t			 i;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		if ((sc = scheme_find(shapes[i].scheme)) == NULL)
			BAIL("no scheme %s", shapes[i].scheme);
		CHECK(scheme_sends_type(sc, shapes[i].type) == shapes[i].sends,
		    "%s %s \"%s\"", shapes[i].scheme, shapes[i].sends ?
		    "may send" : "never sends", shapes[i].type);
	}
	CHECK(scheme_type_example(scheme_find("gitlab")) != NULL &&
	    scheme_sends_type(scheme_find("gitlab"),
	    scheme_type_example(scheme_find("gitlab"))) &&
	    scheme_type_example(scheme_find("hmac-sha256")) == NULL,
	    "a scheme's example is one of its types; none where any goes");

	memset(&s, 0, sizeof(s));
	put(SETUP "-- on: Push Hook\nSELECT 1;\n-- on: *\nSELECT 2;\n"
	    "-- on: \"Note Hook\"\nSELECT 3;\n");
	CHECK(actions_types(path, collect, &s, err, sizeof(err)) == 0 &&
	    s.n == 3 && strcmp(s.v[0], "Push") == 0 && s.line[0] == 2 &&
	    strcmp(s.v[1], "Hook") == 0 && s.line[1] == 2 &&
	    strcmp(s.v[2], "Note Hook") == 0 && s.line[2] == 6,
	    "actions_types: each type with its line, no catch-all");
	put("-- on: \"Note Hook\nSELECT 3;\n");
	CHECK(actions_types(path, collect, &s, err, sizeof(err)) == -1 &&
	    strstr(err, ":1: ") != NULL &&
	    strstr(err, "unterminated quote") != NULL,
	    "actions_types: an unterminated quote is file:line (%s)", err);
}

static const char *
getvar(const char *name, void *arg)
{
	static const char *const vars[][2] = {
		{ "ONCEHOOK_DB", "/nonexistent/oncehook/t_action.db" },
		{ "ONCEHOOK_SCHEME", "hmac-sha256" },
		{ "ONCEHOOK_SECRET", "t_action-secret" },
		{ "ONCEHOOK_KEY", "json:/id" },
	};
	size_t	 i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (strcmp(vars[i][0], name) == 0)
			return vars[i][1];
	return NULL;
}

/* Run a's section for body (via event_extract); 0, or -1 and err. */
static int
run_body(const struct conf *cf, struct actions *a, const char *body,
    size_t sz, char *err, size_t errsz)
{
	struct event	 ev;
	struct req	 rq;
	struct why	 why = { "", NULL };
	int		 rc;

	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	if (event_extract(&cf->endpoints[0], &rq, body, sz, &ev, &why) !=
	    HOOK_OK)
		BAIL("event_extract: %s", why.log);
	if (sqlite3_exec(db, "DELETE FROM got", NULL, NULL, NULL) !=
	    SQLITE_OK)
		BAIL("DELETE: %s", sqlite3_errmsg(db));
	rc = actions_run(a, "ep", &ev, err, errsz);
	event_clear(&ev);
	return rc == SQLITE_OK ? 0 : -1;
}

/*
 * quote() of what the action read for name (a newline as \n), or
 * "(none)".
 */
static const char *
got(const char *name)
{
	static char	 buf[256];
	sqlite3_stmt	*s;
	const char	*t;

	snprintf(buf, sizeof(buf), "(none)");
	if (sqlite3_prepare_v2(db, "SELECT quote(CASE typeof(v) WHEN 'text' "
	    "THEN replace(v, char(10), '\\n') ELSE v END) FROM got "
	    "WHERE k = ?1", -1, &s, NULL) != SQLITE_OK)
		BAIL("SELECT: %s", sqlite3_errmsg(db));
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW &&
	    (t = (const char *)sqlite3_column_text(s, 0)) != NULL)
		snprintf(buf, sizeof(buf), "%s", t);
	sqlite3_finalize(s);
	return buf;
}

/*
 * What statements read from :payload: the member jansson found, however
 * its name was escaped; numbers and strings as sent.
 */
static void
test_payload(void)
{
	static const struct {
		const char	*name, *want;
	} cases[] = {
		{ "orderId", "'o-1'" },
		{ "big", "9007199254740993" },
		{ "neg", "-12345678901234567" },
		{ "one", "'real'" },
		{ "tenth", "0.1" },
		{ "e", "100.0" },
		{ "s", "'caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" \\ / \\n'" },
		{ "raw", "'caf\xc3\xa9'" },
		{ "path", "'v'" },
	};
	static const char body[] = "{\"id\":\"p1\",\"type\":\"t.ok\","
	    "\"metadata\":{\"order\\u0049d\":\"o-1\"},"
	    "\"big\":9007199254740993,\"neg\":-12345678901234567,"
	    "\"one\":1.0,\"tenth\":0.1,\"e\":1e2,"
	    "\"s\":\"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\" \\\\ \\/ \\n\","
	    "\"raw\":\"caf\xc3\xa9\","
	    "\"d\":{\"k\\u0065y\":[{\"x\\/y\":\"v\"}]}}";
	struct conf	*cf;
	struct actions	*a;
	char		 err[512], *deep;
	size_t		 i, o;

	if ((cf = conf_load(getvar, NULL, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	a = load("-- on: t.ok\n"
	    "INSERT INTO got VALUES ('orderId', "
	    "json_extract(:payload, '$.metadata.orderId'));\n"
	    "INSERT INTO got VALUES ('big', json_extract(:payload, '$.big'));\n"
	    "INSERT INTO got VALUES ('neg', json_extract(:payload, '$.neg'));\n"
	    "INSERT INTO got VALUES ('one', json_type(:payload, '$.one'));\n"
	    "INSERT INTO got VALUES ('tenth', "
	    "json_extract(:payload, '$.tenth'));\n"
	    "INSERT INTO got VALUES ('e', json_extract(:payload, '$.e'));\n"
	    "INSERT INTO got VALUES ('s', json_extract(:payload, '$.s'));\n"
	    "INSERT INTO got VALUES ('raw', json_extract(:payload, '$.raw'));\n"
	    "INSERT INTO got VALUES ('path', "
	    "json_extract(:payload, '$.d.key[0].\"x/y\"'));\n"
	    "INSERT INTO got VALUES ('id', json_extract(:payload, '$.id'));\n",
	    err, sizeof(err));
	if (a == NULL)
		BAIL("actions_load: %s", err);
	CHECK(run_body(cf, a, body, sizeof(body) - 1, err, sizeof(err)) ==
	    0, "the action ran (%s)", err);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(strcmp(got(cases[i].name), cases[i].want) == 0,
		    ":payload '$.%s' reads %s (got %s)", cases[i].name,
		    cases[i].want, got(cases[i].name));

	/* EVENT_DEPTH_MAX levels: readable by the SQLite linked here. */
	if ((deep = malloc(2 * EVENT_DEPTH_MAX + 64)) == NULL)
		BAIL("out of memory");
	o = (size_t)snprintf(deep, 64, "{\"id\":\"d1\",\"type\":\"t.ok\","
	    "\"a\":");
	for (i = 1; i < EVENT_DEPTH_MAX; i++)
		deep[o++] = '[';
	for (i = 1; i < EVENT_DEPTH_MAX; i++)
		deep[o++] = ']';
	deep[o++] = '}';
	CHECK(run_body(cf, a, deep, o, err, sizeof(err)) == 0 &&
	    strcmp(got("id"), "'d1'") == 0,
	    "a body nested EVENT_DEPTH_MAX (%d) levels: json_extract reads "
	    "it (SQLite %s) (%s)", EVENT_DEPTH_MAX, sqlite3_libversion(),
	    err);
	free(deep);
	actions_free(a);
	conf_free(cf);
}

/*
 * ACTIONS_LAZY: each section prepared on the first event of its types;
 * a section that does not prepare fails its types alone, says where,
 * and is tried again; loaded whole (check, init), the file fails.
 */
static void
test_lazy(void)
{
	static const char	 text[] =
	    "-- on: a.ok\n"
	    "INSERT INTO ran VALUES (:type, 'ok');\n"
	    "-- on: b.bad\n"
	    "INSERT INTO no_such_table VALUES (1);\n";
	struct actions		*a;
	struct event		 ev;
	char			 err[512];

	CHECK(load(text, err, sizeof(err)) == NULL && strstr(err, ":4: "
	    "no such table") != NULL, "loaded whole, a bad section fails "
	    "the file (%s)", err);
	put(text);
	a = actions_load(db, &guard, path, ACTIONS_LAZY, err, sizeof(err));
	CHECK(a != NULL, "lazily: the file loads (%s)", a ? "" : err);
	if (a == NULL)
		return;
	CHECK(actions_ready(a, "a.ok", err, sizeof(err)) == 0 &&
	    strcmp(ran_for(a, "a.ok"), "ok") == 0, "its good section "
	    "prepares and runs");
	CHECK(actions_ready(a, "b.bad", err, sizeof(err)) == -1 &&
	    strstr(err, "actions.sql:4: no such table: no_such_table") !=
	    NULL, "its bad section fails, with file and line (%s)", err);
	bare_event(&ev, "b.bad");
	err[0] = '\0';
	CHECK(actions_run(a, "ep", &ev, err, sizeof(err)) == SQLITE_ERROR &&
	    strstr(err, ":4: ") != NULL, "run anyway, it fails again: tried "
	    "again, never half prepared (%s)", err);
	CHECK(actions_ready(a, "nobody.sends.this", err, sizeof(err)) == 0,
	    "a type no section takes: nothing to prepare");
	if (sqlite3_exec(db, "CREATE TABLE no_such_table (x)", NULL, NULL,
	    NULL) != SQLITE_OK)
		BAIL("CREATE: %s", sqlite3_errmsg(db));
	CHECK(actions_ready(a, "b.bad", err, sizeof(err)) == 0,
	    "the table made: the section prepares now");
	actions_free(a);
}

/*
 * SQLite's math functions in an action, each once: where sqlite3 is
 * linked in they are src/store/sqlite/libm.c's, which opens libm at the first of
 * them (tests/admin.sh: the program does not load it at its start).
 * Values other than 0 and 1, so that two functions swapped would show.
 */
static void
test_math(void)
{
	static const struct {
		const char	*expr;
		double		 want;	/* Python's math module's */
	} fn[] = {
		{ "acos(0.5)", 1.0471975511965979 },
		{ "acosh(1.5)", 0.9624236501192069 },
		{ "asin(0.5)", 0.5235987755982989 },
		{ "asinh(0.5)", 0.48121182505960347 },
		{ "atan(0.5)", 0.4636476090008061 },
		{ "atan2(2, 1)", 1.1071487177940904 },
		{ "atanh(0.5)", 0.5493061443340548 },
		{ "cos(0.5)", 0.8775825618903728 },
		{ "cosh(0.5)", 1.1276259652063807 },
		{ "exp(0.5)", 1.6487212707001282 },
		{ "mod(7.5, 2)", 1.5 },
		{ "ln(0.5)", -0.6931471805599453 },
		{ "log10(1000)", 3.0 },
		{ "pow(2, 0.5)", 1.4142135623730951 },
		{ "sin(0.5)", 0.479425538604203 },
		{ "sinh(0.5)", 0.5210953054937474 },
		{ "sqrt(0.5)", 0.7071067811865476 },
		{ "tan(0.5)", 0.5463024898437905 },
		{ "tanh(0.5)", 0.46211715726000974 },
		{ "trunc(-2.5)", -2.0 },
	};
	const size_t	 n = sizeof(fn) / sizeof(fn[0]);
	struct actions	*a;
	struct event	 ev;
	sqlite3_stmt	*s;
	char		 text[4096], err[512] = "", line[512];
	size_t		 i, off, bad = 0;
	double		 v;
	FILE		*f;
	int		 mapped = 0;

	off = (size_t)snprintf(text, sizeof(text), "-- on: math\n");
	for (i = 0; i < n && off < sizeof(text); i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off,
		    "INSERT INTO got VALUES ('%s', %s);\n", fn[i].expr,
		    fn[i].expr);
	if (off >= sizeof(text))
		BAIL("test_math: the actions file does not fit");
	if ((a = load(text, err, sizeof(err))) == NULL)
		BAIL("test_math: %s", err);
	if (sqlite3_exec(db, "DELETE FROM got", NULL, NULL, NULL) !=
	    SQLITE_OK)
		BAIL("DELETE: %s", sqlite3_errmsg(db));
	bare_event(&ev, "math");
	CHECK(actions_run(a, "ep", &ev, err, sizeof(err)) == SQLITE_OK,
	    "an action calling SQLite's %zu math functions runs (%s)", n,
	    err);
	if (sqlite3_prepare_v2(db, "SELECT v FROM got WHERE k = ?1", -1, &s,
	    NULL) != SQLITE_OK)
		BAIL("SELECT: %s", sqlite3_errmsg(db));
	for (i = 0; i < n; i++) {
		sqlite3_bind_text(s, 1, fn[i].expr, -1, SQLITE_STATIC);
		v = sqlite3_step(s) == SQLITE_ROW &&
		    sqlite3_column_type(s, 0) == SQLITE_FLOAT ?
		    sqlite3_column_double(s, 0) : -1e300;
		if (!(v - fn[i].want < 1e-12 && fn[i].want - v < 1e-12)) {
			printf("# %s = %.17g, want %.17g\n", fn[i].expr, v,
			    fn[i].want);
			bad++;
		}
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	CHECK(bad == 0, "each gives its value (%zu wrong)", bad);
	if ((f = fopen("/proc/self/maps", "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strstr(line, "/libm.so") != NULL)
				mapped = 1;
		fclose(f);
	}
	CHECK(mapped, "libm is mapped once they ran");
	actions_free(a);
}

static pid_t	fifo_pid;

/*
 * A child that writes total bytes into the pipe fifo, 7 at a time:
 * a comment line of x's, then sec (the file's last section).
 */
static void
fifo_writer(const char *fifo, size_t total, const char *sec)
{
	size_t	 slen = strlen(sec), off = 0, k;
	char	 piece[7];
	int	 fd;

	if ((fifo_pid = tap_fork()) == -1)
		BAIL("fork: %s", strerror(errno));
	if (fifo_pid != 0)
		return;
	signal(SIGPIPE, SIG_IGN);
	if ((fd = open(fifo, O_WRONLY)) == -1)
		_exit(2);
	while (off < total) {
		for (k = 0; k < sizeof(piece) && off < total; k++, off++)
			piece[k] = off < 2 ? '-' :
			    off < total - slen - 1 ? 'x' :
			    off == total - slen - 1 ? '\n' :
			    sec[off - (total - slen)];
		if (write(fd, piece, k) != (ssize_t)k)
			_exit(1);
	}
	_exit(0);
}

/* 1 if the pipe's writer wrote everything and exited 0. */
static int
fifo_reaped(void)
{
	int	 st;

	return waitpid(fifo_pid, &st, 0) == fifo_pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0;
}

/*
 * The file is read whole, sized by its length: exactly ACTIONS_FILE_MAX
 * bytes load (the last byte is read), one more is refused, as are a
 * missing file and a directory; a file of nothing is a setup alone.
 */
static void
test_read(void)
{
	struct actfile	 af;
	char		 err[512], *text, sub[600];
	const char	*sec =
	    "-- on: t.last\nINSERT INTO got VALUES ('last', 1);\n";
	size_t		 n = ACTIONS_FILE_MAX, slen = strlen(sec);

	if ((text = malloc(n + 2)) == NULL)
		BAIL("out of memory");
	/* A comment line filling all but the section, which ends it. */
	text[0] = '-';
	text[1] = '-';
	memset(text + 2, 'x', n - slen - 3);
	text[n - slen - 1] = '\n';
	memcpy(text + n - slen, sec, slen + 1);
	put(text);
	memset(&af, 0, sizeof(af));
	CHECK(actfile_read(path, 0, &af, err, sizeof(err)) == 0 &&
	    af.len == n && af.n == 1 && actfile_find(&af, "t.last") != NULL,
	    "a file of exactly 1 MiB is read whole (%zu bytes, %zu "
	    "sections)", af.len, af.n);
	actfile_free(&af);

	memmove(text + 1, text, n + 1);	/* one byte more, before it */
	text[0] = ' ';
	put(text);
	CHECK(actfile_read(path, 0, &af, err, sizeof(err)) == -1 &&
	    strstr(err, "larger than 1 MiB") != NULL,
	    "one byte over 1 MiB is refused (%s)", err);
	free(text);

	put("");
	CHECK(actfile_read(path, 0, &af, err, sizeof(err)) == 0 &&
	    af.len == 0 && af.n == 0, "an empty file: no sections");
	actfile_free(&af);

	snprintf(sub, sizeof(sub), "%s/missing.sql", dir);
	CHECK(actfile_read(sub, 0, &af, err, sizeof(err)) == -1 &&
	    strstr(err, "No such file") != NULL && strstr(err, sub) == err,
	    "a missing file is refused by name (%s)", err);
	CHECK(actfile_read(dir, 0, &af, err, sizeof(err)) == -1 &&
	    strstr(err, "directory") != NULL,
	    "a directory is refused (%s)", err);

	/* No size to go by: a pipe, read as it comes, the buffer grown. */
	snprintf(sub, sizeof(sub), "%s/pipe.sql", dir);
	if (mkfifo(sub, 0600) == -1)
		BAIL("mkfifo: %s", strerror(errno));
	fifo_writer(sub, 300000, sec);
	err[0] = '\0';
	CHECK(actfile_read(sub, 0, &af, err, sizeof(err)) == 0 &&
	    af.len == 300000 && af.n == 1 &&
	    actfile_find(&af, "t.last") != NULL,
	    "a pipe of 300,000 bytes in pieces is read whole (%zu bytes; %s)",
	    af.len, err);
	actfile_free(&af);
	CHECK(fifo_reaped(), "its writer wrote it all");
	fifo_writer(sub, n + 1, sec);
	CHECK(actfile_read(sub, 0, &af, err, sizeof(err)) == -1 &&
	    strstr(err, "larger than 1 MiB") != NULL,
	    "a pipe of one byte over 1 MiB is refused (%s)", err);
	(void)fifo_reaped();
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/oncehook-t_action-XXXXXX");
	if (mkdtemp(dir) == NULL)
		BAIL("mkdtemp: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/actions.sql", dir);
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_exec(db, SETUP "CREATE TABLE got (k TEXT, v);", NULL,
	    NULL, NULL) != SQLITE_OK)
		BAIL("sqlite3: %s", sqlite3_errmsg(db));
	actions_guard(db, &guard);

	test_quoted();
	test_bad();
	test_types();
	test_payload();
	test_lazy();
	test_math();
	test_read();

	sqlite3_close(db);
	tap_rmdir(dir);
	return tap_done();
}
