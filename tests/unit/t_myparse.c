/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: an actions file's statements for MariaDB/MySQL
 * (src/store/mysql/rewrite.c), without a server.
 *
 * Named parameters become ?s, recorded in the order they appear;
 * strings, comments and quoted names hide what is in them (:key, ;,
 * outbox); the guard refuses whatever could end or change the claim's
 * transaction, name oncehook's tables or reach the event's values
 * other than by its parameters; the outbox insert is rewritten, its
 * other forms refused; the setup part is only split.  Every refusal
 * is "line N: why".
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/mysql/rewrite.h"
#include "tap.h"

#define PREFIX	"oncehook_"

/* The parameters of s as letters: E K T P H R N. */
static const char *
letters(const struct myp_stmt *s)
{
	static char	 buf[64];
	static const char l[] = {
		[MYP_ENDPOINT] = 'E', [MYP_KEY] = 'K', [MYP_TYPE] = 'T',
		[MYP_PAYLOAD] = 'P', [MYP_PAYLOAD_HASH] = 'H',
		[MYP_RECEIVED_AT] = 'R', [MYP_NOW] = 'N',
	};
	size_t		 i;

	for (i = 0; i < s->nparams && i < sizeof(buf) - 1; i++)
		buf[i] = l[s->params[i]];
	buf[i] = '\0';
	return buf;
}

static int
split(const char *text, int flags, struct myp_stmts *out, char *err,
    size_t errsz)
{
	err[0] = '\0';
	return myp_split(text, strlen(text), 1, PREFIX, flags, out, err,
	    errsz);
}

/* A section's text must be one statement, rewritten as sql with the
 * parameters params (letters()). */
static void
one(const char *text, const char *sql, const char *params, int outbox,
    const char *what)
{
	struct myp_stmts	 st = { NULL, 0 };
	char			 err[512];
	int			 rc;

	rc = split(text, 0, &st, err, sizeof(err));
	CHECK(rc == 0 && st.n == 1 && strcmp(st.v[0].sql, sql) == 0 &&
	    strcmp(letters(&st.v[0]), params) == 0 &&
	    st.v[0].outbox == outbox, "%s (got %s [%s]%s)", what,
	    rc == 0 && st.n == 1 ? st.v[0].sql : err,
	    rc == 0 && st.n == 1 ? letters(&st.v[0]) : "",
	    rc == 0 && st.n == 1 && st.v[0].outbox ? " outbox" : "");
	myp_free(&st);
}

/* text must be refused, the reason "line N: ..." holding why. */
static void
refused(const char *text, int flags, int line, const char *why,
    const char *what)
{
	struct myp_stmts	 st = { NULL, 0 };
	char			 err[512], want[32];
	int			 rc;

	rc = split(text, flags, &st, err, sizeof(err));
	snprintf(want, sizeof(want), "line %d: ", line);
	CHECK(rc == -1 && st.n == 0 && st.v == NULL &&
	    strncmp(err, want, strlen(want)) == 0 && strstr(err, why) != NULL,
	    "refused: %s (got %s)", what, rc == -1 ? err : "accepted");
	myp_free(&st);
}

/* A section statement the guard lets through unchanged. */
static void
allowed(const char *text, const char *what)
{
	one(text, text, "", 0, what);
}

static void
test_params(void)
{
	one("INSERT INTO t (a, b) VALUES (:key, :payload)",
	    "INSERT INTO t (a, b) VALUES (?, ?)", "KP", 0,
	    "two parameters become ?s, in order");
	one("UPDATE t SET a = :received_at, b = :type, c = :payload_hash "
	    "WHERE e = :endpoint AND k = :key OR k2 = :key",
	    "UPDATE t SET a = ?, b = ?, c = ? "
	    "WHERE e = ? AND k = ? OR k2 = ?", "RTHEKK", 0,
	    "all six, one twice: one ? each, in textual order");
	one("SELECT a FROM t WHERE b=:key+1 AND c=(:type)",
	    "SELECT a FROM t WHERE b=?+1 AND c=(?)", "KT", 0,
	    "a parameter right against punctuation");
	one("SELECT ':key; outbox', \":type; outbox\", `a:key;outbox` "
	    "-- :payload; outbox\n FROM t /* :x ; outbox */ WHERE a = :key "
	    "# ; outbox\n",
	    "SELECT ':key; outbox', \":type; outbox\", `a:key;outbox`  \n "
	    "FROM t   WHERE a = ?", "K", 0,
	    "strings, quoted names and comments hide :key, ; and outbox; "
	    "comments are dropped, their newlines kept");
	one("SELECT 'x\\';:key', 'y'';:type', \"a\\\";:b\", `c``;:d` "
	    "FROM t WHERE k = :key",
	    "SELECT 'x\\';:key', 'y'';:type', \"a\\\";:b\", `c``;:d` "
	    "FROM t WHERE k = ?", "K", 0,
	    "backslash and doubled quotes inside strings and names");
	one("SELECT 1--1 FROM t", "SELECT 1- -1 FROM t", "", 0,
	    "-- with no space after it is two minuses, as the server reads "
	    "it, sent apart");
	one("SELECT 1 --/**/'\n, GET_LOCK('x', 0), '\n",
	    "SELECT 1 - - '\n, GET_LOCK('x', 0), '", "", 0,
	    "two minuses before a comment dropped are sent apart: never "
	    "a -- comment to the server that hides the string's quote");
	one("SELECT 1--#x\n", "SELECT 1- -", "", 0,
	    "... and at the end, where -- would be a comment too");
	one("SELECT 1 --\nFROM t --", "SELECT 1  \nFROM t", "", 0,
	    "-- at the end of a line or of the text is a comment");
	one("SELECT/**/1#x\nFROM t", "SELECT 1 \nFROM t", "", 0,
	    "a comment between two tokens still parts them");
	one("SELECT JSON_EXTRACT(:payload, '$.a:b') FROM t",
	    "SELECT JSON_EXTRACT(?, '$.a:b') FROM t", "P", 0,
	    "a : in a JSON path string is no parameter");
	refused("SELECT :foo FROM t", 0, 1, "unknown parameter :foo",
	    "an unknown parameter, named");
	refused("SELECT :Key FROM t", 0, 1, "unknown parameter :Key",
	    "parameter names are case-sensitive (as SQLite's)");
	refused("SELECT 1 FROM t WHERE a = ?", 0, 1, "? is not a parameter",
	    "a positional ?");
	refused("SELECT a := 1 FROM t", 0, 1, ":= is refused", ":=");
	refused("SELECT @v FROM t", 0, 1, "variables", "@v");
	refused("SELECT @@session.sql_mode", 0, 1, "variables",
	    "@@system variable");
	refused("UPDATE t SET a = @`x`", 0, 1, "variables",
	    "a quoted @variable");
}

static void
test_lines(void)
{
	struct myp_stmts	 st = { NULL, 0 };
	char			 err[512];
	const char		*text;
	int			 rc;

	text = "\n\nINSERT INTO t VALUES (:key);\n  \n;;\n/* a\nb */"
	    " UPDATE t\n SET a = :type;\n-- the end\n";
	rc = myp_split(text, strlen(text), 10, PREFIX, 0, &st, err,
	    sizeof(err));
	CHECK(rc == 0 && st.n == 2 && st.v[0].line == 12 &&
	    st.v[1].line == 16 && strcmp(st.v[1].sql, "UPDATE t\n SET a = ?")
	    == 0, "two statements, blank ones skipped, lines from the "
	    "first token (got %d: %d %d)", rc == 0 ? (int)st.n : -1,
	    st.n > 0 ? st.v[0].line : 0, st.n > 1 ? st.v[1].line : 0);
	myp_free(&st);

	err[0] = '\0';
	rc = myp_split("SELECT 1; SELECT 2; DROP TABLE x", 19, 5, PREFIX, 0,
	    &st, err, sizeof(err));
	CHECK(rc == 0 && st.n == 2, "only text[0..len) is read (%s)", err);
	myp_free(&st);

	text = "\n\nSELECT 1;\nSELECT\n'a\nb' FROM t\nWHERE x = :nope";
	rc = myp_split(text, strlen(text), 7, PREFIX, 0, &st, err,
	    sizeof(err));
	CHECK(rc == -1 && strncmp(err, "line 13: unknown", 16) == 0,
	    "an error's line is its token's, strings' newlines counted "
	    "(%s)", err);
	myp_free(&st);

	refused("SELECT 1;\nSELECT 'abc;\n", 0, 2, "unterminated string",
	    "an unterminated '");
	refused("SELECT 1;\n\nSELECT \"abc", 0, 3, "unterminated string",
	    "an unterminated \"");
	refused("SELECT 'a\\'", 0, 1, "unterminated string",
	    "a string whose last quote is escaped");
	refused("SELECT `abc", 0, 1, "unterminated quoted name",
	    "an unterminated `");
	refused("SELECT 1\n/* x", 0, 2, "unterminated comment",
	    "an unterminated comment");
	refused("CREATE TABLE t (a INT) /*! x", MYP_SETUP, 1,
	    "unterminated comment", "an unterminated executable comment");
	rc = myp_split("SELECT 1;\nDELETE FROM t \0WHERE a = 1", 36, 1,
	    PREFIX, 0, &st, err, sizeof(err));
	CHECK(rc == -1 && strcmp(err, "line 2: a NUL byte") == 0,
	    "a NUL byte is refused: the server would read less (%s)", err);
	refused("CREATE TABLE t (a TEXT DEFAULT 'x)", MYP_SETUP, 1,
	    "unterminated string", "an unterminated string in the setup");
}

/* A statement of kind stmt must be refused in a section, naming it. */
static void
kind_refused(const char *stmt, const char *name)
{
	char	 why[128], text[256];

	snprintf(text, sizeof(text), "SELECT 1;\n%s", stmt);
	snprintf(why, sizeof(why), "only INSERT, UPDATE, DELETE, REPLACE, "
	    "SELECT or WITH may run in an event's transaction (%s ", name);
	refused(text, 0, 2, why, stmt);
}

static void
test_kinds(void)
{
	kind_refused("CREATE TABLE x (a INT)", "CREATE");
	kind_refused("DROP TABLE x", "DROP");
	kind_refused("ALTER TABLE x ADD b INT", "ALTER");
	kind_refused("TRUNCATE x", "TRUNCATE");
	kind_refused("LOCK TABLES x WRITE", "LOCK");
	kind_refused("UNLOCK TABLES", "UNLOCK");
	kind_refused("START TRANSACTION", "START");
	kind_refused("BEGIN", "BEGIN");
	kind_refused("commit", "COMMIT");
	kind_refused("ROLLBACK", "ROLLBACK");
	kind_refused("SAVEPOINT s", "SAVEPOINT");
	kind_refused("RELEASE SAVEPOINT s", "RELEASE");
	kind_refused("SET autocommit = 1", "SET");
	kind_refused("CALL p(:key)", "CALL");
	kind_refused("LOAD DATA INFILE 'f' INTO TABLE x", "LOAD");
	kind_refused("GRANT ALL ON *.* TO u", "GRANT");
	kind_refused("RENAME TABLE a TO b", "RENAME");
	kind_refused("HANDLER x OPEN", "HANDLER");
	kind_refused("DO SLEEP(1)", "DO");
	kind_refused("XA START 'x'", "XA");
	kind_refused("PREPARE s FROM 'DROP TABLE x'", "PREPARE");
	kind_refused("EXECUTE s", "EXECUTE");
	kind_refused("FLUSH TABLES", "FLUSH");
	kind_refused("VALUES (1)", "VALUES");
	kind_refused("(INSERT INTO t VALUES (1))", "INSERT");
	kind_refused("'SELECT'", "'SELECT'");

	allowed("INSERT INTO t VALUES (1)", "INSERT");
	allowed("insert into t values (1)", "insert, lower case");
	allowed("UPDATE t SET a = 1", "UPDATE");
	allowed("DELETE FROM t WHERE a = 1", "DELETE");
	allowed("REPLACE INTO t VALUES (1)", "REPLACE");
	allowed("SELECT a FROM t FOR UPDATE", "SELECT ... FOR UPDATE");
	allowed("WITH x AS (SELECT 1) SELECT * FROM x", "WITH");
	allowed("((SELECT 1)) UNION (SELECT 2)", "a query in parentheses");
	allowed("INSERT INTO t SELECT a FROM u ON DUPLICATE KEY UPDATE b = 1",
	    "ON DUPLICATE KEY on a table of the site's");

	refused("SELECT a INTO OUTFILE '/tmp/x' FROM t", 0, 1,
	    "INTO OUTFILE is refused", "INTO OUTFILE");
	refused("SELECT a FROM t INTO DUMPFILE '/tmp/x'", 0, 1,
	    "INTO DUMPFILE is refused", "INTO DUMPFILE");
	refused("SELECT a FROM t INTO @v", 0, 1, "INTO @variable is refused",
	    "INTO @v");
	refused("SELECT a FROM t into\n outfile 'x'", 0, 1,
	    "INTO OUTFILE is refused", "into outfile, lower case");
	refused("SELECT 1 /*!50000 , SLEEP(9) */ FROM t", 0, 1,
	    "executable comment", "/*! in a section");
	refused("SELECT 1 /*M!100100 , SLEEP(9) */ FROM t", 0, 1,
	    "executable comment", "/*M! in a section");
	allowed("SELECT 'INTO OUTFILE', \"@v\", `:=` FROM t",
	    "INTO OUTFILE, @v and := in strings and names");
	/* Numbers end where the server ends them (tests/unit/t_mylex.c
	 * found these passing). */
	refused("SELECT 1.5INTO OUTFILE '/tmp/x'", 0, 1,
	    "INTO OUTFILE is refused", "1.5INTO: the number 1.5, then INTO");
	refused("SELECT 1e1INTO DUMPFILE '/tmp/x'", 0, 1,
	    "INTO DUMPFILE is refused", "1e1INTO: an exponent ends it");
	refused("SELECT .5e-1into outfile '/tmp/x'", 0, 1,
	    "INTO OUTFILE is refused", ".5e-1into");
	refused("SELECT 1 FROM t WHERE a = 1.e1oncehook_events.id", 0, 1,
	    "oncehook_events is oncehook's own table", "1.e1, then a name");
	allowed("SELECT 1aINTO, 0x1INTO, 0b1e1, 1e FROM t",
	    "digits run into a name are a name (1aINTO, 0x1INTO), as to "
	    "the server");
	one("SELECT 0x41, 1.5, .5e1, 12e+3 FROM t",
	    "SELECT 0x41, 1.5, .5e1, 12e+3 FROM t", "", 0,
	    "numbers sent as written");
}

static void
test_own(void)
{
	refused("SELECT * FROM oncehook_events", 0, 1,
	    "oncehook_events is oncehook's own table", "events, bare");
	refused("DELETE FROM `oncehook_payloads`", 0, 1,
	    "oncehook_payloads is oncehook's own table", "payloads, quoted");
	refused("SELECT 1 FROM shop.oncehook_conflicts", 0, 1,
	    "oncehook_conflicts", "conflicts, qualified");
	refused("UPDATE `shop` . `ONCEHOOK_FAILURES` SET a = 1", 0, 1,
	    "oncehook_failures", "failures, quoted, qualified, upper case");
	refused("SELECT 1;\nINSERT INTO t SELECT * FROM Oncehook_Schema", 0,
	    2, "oncehook_schema", "schema, mixed case");
	refused("INSERT INTO oncehook_outbox (topic, payload) VALUES "
	    "('a', 'b')", 0, 1, "oncehook_outbox is oncehook's own table",
	    "the outbox by its real name");
	refused("SELECT oncehook_events.id FROM t", 0, 1, "oncehook_events",
	    "a column qualified by an own table");
	refused("SELECT * FROM \"oncehook_events\"", 0, 1, "oncehook_events",
	    "a double-quoted name (ANSI_QUOTES)");
	/* The server ends a line at -- then DEL (a control character):
	 * the guard too, or what follows the comment hides in a string
	 * the guard believed open (found attacking it, issue 36). */
	refused("UPDATE wp_wc_orders --\x7f '\n, oncehook_events SET "
	    "oncehook_events.last_error = 'x' -- '\nWHERE wp_wc_orders.id = 42",
	    0, 2, "oncehook_events is oncehook's own table",
	    "an own table after a -- comment ended by DEL");
	refused("SELECT GET_LOCK('k', 0)", 0, 1, "GET_LOCK() is refused",
	    "a named lock");
	refused("SELECT `get_lock`('k', 0)", 0, 1, "GET_LOCK() is refused",
	    "a named lock, its name `quoted` (the server calls it alike)");
	refused("SELECT `RELEASE_ALL_LOCKS` ()", 0, 1,
	    "RELEASE_ALL_LOCKS() is refused", "`quoted`, a space before (");
	allowed("SELECT `get_lock`, t.get_lock FROM t",
	    "a column so named");
	/* The server's own schemas call the built-in (found by
	 * tests/unit/t_mylex.c): any qualified call of those names is
	 * refused. */
	refused("SELECT mariadb_schema.GET_LOCK('k', 0)", 0, 1,
	    "GET_LOCK() is refused", "mariadb_schema.GET_LOCK");
	refused("SELECT `oracle_schema` . release_lock ('k')", 0, 1,
	    "RELEASE_LOCK() is refused", "`oracle_schema` . release_lock");
	refused("SELECT maxdb_schema.LOAD_FILE('/etc/passwd')", 0, 1,
	    "LOAD_FILE() is refused", "maxdb_schema.LOAD_FILE");
	refused("SELECT shop.GET_LOCK(1)", 0, 1, "GET_LOCK() is refused",
	    "a site's own function of that name too: write another");
	one("SELECT 1 --x", "SELECT 1 - -x", "", 0,
	    "--x is minus minus x, not a comment");
	one("SELECT 1 --2", "SELECT 1 - -2", "", 0,
	    "--2 is minus minus two, not a comment");
	allowed("SELECT * FROM `oncehook_ev``ents`, oncehook_events_old, "
	    "shop.events, `oncehook_`",
	    "names that only look like an own table's");
	allowed("SELECT 'oncehook_events', `x`.`y`",
	    "an own table's name in a single-quoted string");
	{
		struct myp_stmts	 st = { NULL, 0 };
		char			 err[256];
		const char		*t = "SELECT * FROM oncehook_events, "
		    "hk_Events";

		CHECK(myp_split(t, strlen(t), 1, "hk_", 0, &st, err,
		    sizeof(err)) == -1 && strcmp(err, "line 1: hk_events is "
		    "oncehook's own table: an action may not name it") == 0,
		    "another prefix: its tables, not the default's (%s)", err);
		myp_free(&st);
	}
}

/* text, with prefix, refused for the own table own, on line 1. */
static void
refused_as(const char *prefix, const char *text, const char *own,
    const char *what)
{
	struct myp_stmts	 st = { NULL, 0 };
	char			 err[512], want[128];
	int			 rc;

	err[0] = '\0';
	rc = myp_split(text, strlen(text), 1, prefix, 0, &st, err,
	    sizeof(err));
	snprintf(want, sizeof(want), "line 1: %s is oncehook's own table",
	    own);
	CHECK(rc == -1 && strncmp(err, want, strlen(want)) == 0,
	    "prefix %s: %s (got %s)", prefix, what, rc == -1 ? err :
	    "accepted");
	myp_free(&st);
}

/*
 * A prefix may start with a digit (conf.c).  The server reads the name
 * right after name. as a name even from a digit (shop.1_events,
 * shop.1e1); the guard too, or a qualified own table passes it
 * (tests/unit/t_mylex.c holds it to the server).
 */
static void
test_digit_prefix(void)
{
	struct myp_stmts	 st = { NULL, 0 };
	char			 err[256];
	const char		*t;

	refused_as("1_", "DELETE FROM shop.1_events", "1_events",
	    "shop.1_events: the name after shop. from a digit");
	refused_as("1_", "DELETE FROM `shop`.1_events", "1_events",
	    "`shop`.1_events: after a quoted name too");
	refused_as("1_", "DELETE FROM \"shop\".1_events", "1_events",
	    "\"shop\".1_events: after a double-quoted name too");
	refused_as("2024_", "UPDATE shop.2024_events SET status = 'failed'",
	    "2024_events", "shop.2024_events, a prefix of digits");
	refused_as("1_", "DELETE FROM shop . 1_events", "1_events",
	    "shop . 1_events, spaces around the point");
	refused_as("1_", "DELETE FROM shop./**/1_events", "1_events",
	    "a comment after the point");
	refused_as("1_", "SELECT shop.1_events.id FROM t", "1_events",
	    "a column qualified by shop.1_events");
	refused_as("1_", "SELECT a.1b.1_payloads.c FROM t", "1_payloads",
	    "a chain of names from digits");
	refused_as("1e1_", "SELECT 1 FROM shop.1e1_events", "1e1_events",
	    "shop.1e1_events: no exponent after the point");
	refused_as("0x1_", "SELECT 1 FROM shop.0x1_schema", "0x1_schema",
	    "shop.0x1_schema: no hex number after the point");
	refused_as("1_", "SELECT 1 FROM t WHERE shop.`1_outbox`.a = 1",
	    "1_outbox", "shop.`1_outbox`, quoted");
	/* Read as the server reads them: no own table named. */
	t = "SELECT t.1e1, t.5INTO, t.0x41, 1.5, .5e1, 1a.2b FROM t";
	CHECK(myp_split(t, strlen(t), 1, "1_", 0, &st, err, sizeof(err)) ==
	    0 && st.n == 1 && strcmp(st.v[0].sql, t) == 0,
	    "names after a point from a digit, numbers, sent as written "
	    "(%s)", st.n == 1 ? st.v[0].sql : err);
	myp_free(&st);
	/* A point with a space before it, then digits: the server's
	 * number .1, then a name; no own table. */
	t = "SELECT 1 FROM shop .1_events";
	err[0] = '\0';		/* written only on failure */
	CHECK(myp_split(t, strlen(t), 1, "1_", 0, &st, err, sizeof(err)) ==
	    0, "shop .1_events: .1 and _events, as the server reads it "
	    "(%s)", err);
	myp_free(&st);
}

static void
test_outbox(void)
{
	one("INSERT INTO outbox (topic, payload) VALUES ('order.paid', "
	    "JSON_OBJECT('id', :key, 'n', CONCAT(:type, ',', (1))))",
	    "INSERT INTO `oncehook_outbox` (topic, payload, endpoint, "
	    "event_key, created_at) VALUES ('order.paid', JSON_OBJECT('id', "
	    "?, 'n', CONCAT(?, ',', (1))), ?, ?, ?)", "KTEKN", 1,
	    "VALUES: the table named, the columns added, the event's three "
	    "values after the two, nested parentheses and commas");
	one("insert /* c */ into `outbox`(`topic`,`Payload`) values\n"
	    "('t', :payload\n)",
	    "insert   into `oncehook_outbox`(topic, payload, endpoint, "
	    "event_key, created_at) values\n('t', ?, ?, ?, ?\n)", "PEKN", 1,
	    "VALUES: lower case, quoted names, comments and newlines");
	one("INSERT INTO outbox (topic, payload)\n"
	    "SELECT 'order.paid', JSON_OBJECT('id', o.id, 'n', (SELECT "
	    "COUNT(*) FROM items i WHERE i.o = o.id), 'y', EXTRACT(YEAR "
	    "FROM o.at))\nFROM orders o WHERE o.id = :key AND o.t = :type",
	    "INSERT INTO `oncehook_outbox` (topic, payload, endpoint, "
	    "event_key, created_at)\n"
	    "SELECT 'order.paid', JSON_OBJECT('id', o.id, 'n', (SELECT "
	    "COUNT(*) FROM items i WHERE i.o = o.id), 'y', EXTRACT(YEAR "
	    "FROM o.at)), ?, ?, ?\nFROM orders o WHERE o.id = ? AND o.t = ?",
	    "EKNKT", 1, "SELECT: the three before the top-level FROM (not a "
	    "subquery's, not EXTRACT's), so before the WHERE's parameters");
	one("INSERT INTO outbox (topic, payload) SELECT :type, :payload "
	    "FROM t JOIN u ON u.a = t.a WHERE k = :key",
	    "INSERT INTO `oncehook_outbox` (topic, payload, endpoint, "
	    "event_key, created_at) SELECT ?, ?, ?, ?, ? FROM t JOIN u ON "
	    "u.a = t.a WHERE k = ?", "TPEKNK", 1,
	    "SELECT: parameters before and after the three");
	one("INSERT INTO outbox (topic, payload) SELECT DISTINCT 't', "
	    ":payload",
	    "INSERT INTO `oncehook_outbox` (topic, payload, endpoint, "
	    "event_key, created_at) SELECT DISTINCT 't', ?, ?, ?, ?",
	    "PEKN", 1, "SELECT without FROM: the three at the end");
	one("INSERT INTO outbox (topic, payload) SELECT 'a', b FROM "
	    "shop.outbox",
	    "INSERT INTO `oncehook_outbox` (topic, payload, endpoint, "
	    "event_key, created_at) SELECT 'a', b, ?, ?, ? FROM shop.outbox",
	    "EKN", 1, "the site's own outbox, qualified, read into ours");

	allowed("INSERT INTO shop.outbox (a) VALUES (1)",
	    "INSERT INTO the site's own db.outbox");
	allowed("UPDATE shop.outbox SET a = 1", "UPDATE of shop.outbox");
	allowed("DELETE FROM `shop`.`outbox`", "DELETE of `shop`.`outbox`");
	allowed("SELECT outbox.id FROM shop.outbox",
	    "outbox qualifying a column");
	allowed("INSERT INTO outbox.t (a) VALUES (1)",
	    "a database named outbox");
	allowed("SELECT 'outbox', `outbox_x` FROM t",
	    "outbox in a string, and a longer name");

#define FORM	"INSERT INTO outbox (topic, payload) VALUES (...) or SELECT"
	refused("INSERT INTO outbox (topic, payload) VALUES ('a', 'b'), "
	    "('c', 'd')", 0, 1, "takes one row", "multi-row VALUES");
	refused("INSERT IGNORE INTO outbox (topic, payload) VALUES "
	    "('a', 'b')", 0, 1, "INSERT IGNORE INTO outbox is refused",
	    "INSERT IGNORE");
	refused("INSERT LOW_PRIORITY INTO outbox (topic, payload) VALUES "
	    "('a', 'b')", 0, 1, "INSERT LOW_PRIORITY INTO outbox",
	    "INSERT LOW_PRIORITY");
	refused("REPLACE INTO outbox (topic, payload) VALUES ('a', 'b')", 0,
	    1, "REPLACE INTO outbox is refused", "REPLACE INTO outbox");
	refused("INSERT INTO outbox (topic, payload) VALUES ('a', 'b') ON "
	    "DUPLICATE KEY UPDATE payload = 'c'", 0, 1,
	    "ON DUPLICATE KEY UPDATE is refused", "VALUES ... ON DUPLICATE");
	refused("INSERT INTO outbox (topic, payload) SELECT 'a', b FROM t "
	    "ON DUPLICATE KEY UPDATE payload = 'c'", 0, 1,
	    "ON DUPLICATE KEY UPDATE is refused", "SELECT ... ON DUPLICATE");
	refused("INSERT INTO outbox (payload, topic) VALUES ('a', 'b')", 0, 1,
	    FORM, "the columns in another order");
	refused("INSERT INTO outbox (topic, payload, endpoint) VALUES "
	    "('a', 'b', 'c')", 0, 1, FORM, "a column of oncehook's");
	refused("INSERT INTO outbox (topic) VALUES ('a')", 0, 1, FORM,
	    "one column");
	refused("INSERT INTO outbox VALUES ('a', 'b')", 0, 1, FORM,
	    "no column list");
	refused("INSERT INTO outbox SET topic = 'a', payload = 'b'", 0, 1,
	    FORM, "INSERT ... SET");
	refused("INSERT outbox (topic, payload) VALUES ('a', 'b')", 0, 1,
	    FORM, "INSERT without INTO");
	refused("INSERT INTO outbox (topic, payload) VALUES ('a', 'b', 'c')",
	    0, 1, "takes two values", "three values");
	refused("INSERT INTO outbox (topic, payload) VALUES (CONCAT('a', "
	    "'b'))", 0, 1, "takes two values", "one value with a comma "
	    "inside it");
	refused("INSERT INTO outbox (topic, payload) SELECT 'a', 'b', 'c' "
	    "FROM t", 0, 1, "takes two values", "SELECT of three");
	refused("INSERT INTO outbox (topic, payload) VALUES ('a', 'b') AS n",
	    0, 1, "AS after INSERT INTO outbox", "a row alias");
	refused("INSERT INTO outbox (topic, payload) SELECT 'a', b FROM t "
	    "UNION SELECT 'c', d FROM u", 0, 1,
	    "SELECT with UNION is not supported", "UNION");
	refused("INSERT INTO outbox (topic, payload) SELECT 'a', 'b' LIMIT 1",
	    0, 1, "SELECT with LIMIT before FROM", "LIMIT with no FROM");
	refused("INSERT INTO outbox (topic, payload) (SELECT 'a', 'b')", 0, 1,
	    FORM, "a SELECT in parentheses");
	refused("UPDATE outbox SET payload = 'x'", 0, 1,
	    "never update or delete them", "UPDATE outbox");
	refused("DELETE FROM `outbox` WHERE 1", 0, 1,
	    "never update or delete them", "DELETE FROM `outbox`");
	refused("SELECT * FROM outbox", 0, 1,
	    "outbox is oncehook's outbox here", "reading outbox, unqualified");
	refused("INSERT INTO outbox (topic, payload) SELECT 'a', b FROM "
	    "Outbox", 0, 1, "outbox is oncehook's outbox here",
	    "the outbox insert reading an unqualified outbox");
	refused("INSERT INTO t SELECT * FROM outbox", 0, 1, "shop.outbox",
	    "another insert reading outbox");
#undef FORM

	{
		struct myp_stmts	 st = { NULL, 0 };
		char			 err[256];

		CHECK(myp_split("INSERT INTO outbox (topic, payload) VALUES "
		    "(1, 2)", 49, 1, "my`db_", 0, &st, err, sizeof(err)) ==
		    0 && st.n == 1 && strncmp(st.v[0].sql, "INSERT INTO "
		    "`my``db_outbox` (", 28) == 0,
		    "another prefix, its backquote doubled (%s)",
		    st.n ? st.v[0].sql : err);
		myp_free(&st);
	}
}

static void
test_setup(void)
{
	struct myp_stmts	 st = { NULL, 0 };
	char			 err[512];
	const char		*text =
	    "/*!40101 SET NAMES utf8mb4 */;\n"
	    "CREATE TABLE a (x TEXT DEFAULT ';', `b;` INT);\n"
	    "-- a comment; with a ;\n"
	    "CREATE TABLE oncehook_mine (y INT) COMMENT 'a '';'' b \\';';\n"
	    "SET @v := 1;\n\n";
	int			 rc;

	rc = split(text, MYP_SETUP, &st, err, sizeof(err));
	CHECK(rc == 0 && st.n == 4, "setup: four statements (%s)", err);
	if (rc == 0 && st.n == 4) {
		CHECK(strcmp(st.v[0].sql, "/*!40101 SET NAMES utf8mb4 */") ==
		    0 && st.v[0].line == 1,
		    "setup: an executable comment is a statement (%s)",
		    st.v[0].sql);
		CHECK(strcmp(st.v[1].sql, "CREATE TABLE a (x TEXT DEFAULT "
		    "';', `b;` INT)") == 0 && st.v[1].line == 2,
		    "setup: ; inside a string and a name (%s)", st.v[1].sql);
		CHECK(strcmp(st.v[2].sql, "CREATE TABLE oncehook_mine (y INT) "
		    "COMMENT 'a '';'' b \\';'") == 0 && st.v[2].line == 4 &&
		    st.v[2].nparams == 0 && !st.v[2].outbox,
		    "setup: its text as written, a comment before it left out "
		    "(%s)", st.v[2].sql);
		CHECK(strcmp(st.v[3].sql, "SET @v := 1") == 0,
		    "setup: SET, @v and := are not judged (%s)", st.v[3].sql);
	}
	myp_free(&st);

	rc = split("CREATE TABLE t (a INT);\nDROP TABLE x;\n"
	    "CREATE TABLE u (a INT COMMENT '-- :key' /* :payload */)\n"
	    "/* :type */ # :key\n",
	    MYP_SETUP, &st, err, sizeof(err));
	CHECK(rc == 0 && st.n == 3 && strcmp(st.v[2].sql, "CREATE TABLE u "
	    "(a INT COMMENT '-- :key' /* :payload */)") == 0,
	    "setup: a comment inside a statement kept, one after it not "
	    "(%s)",
	    rc == 0 && st.n == 3 ? st.v[2].sql : err);
	myp_free(&st);

	refused("CREATE TABLE t (a INT);\nINSERT INTO t VALUES (:key)",
	    MYP_SETUP, 2, "the setup part takes no parameters (:key)",
	    "a named parameter in the setup");
	refused("INSERT INTO t VALUES (?)", MYP_SETUP, 1,
	    "? is not a parameter", "a ? in the setup");
}

/* A failing call leaves out as it was; myp_free empties. */
static void
test_memory(void)
{
	struct myp_stmts	 st = { NULL, 0 };
	char			 err[256];

	CHECK(split("SELECT :key FROM t", 0, &st, err, sizeof(err)) == 0 &&
	    st.n == 1, "a first statement");
	CHECK(split("SELECT 1; INSERT INTO outbox (topic, payload) VALUES "
	    "(1, 2); SELECT :type; DROP TABLE t", 0, &st, err,
	    sizeof(err)) == -1 && st.n == 1 && strcmp(st.v[0].sql,
	    "SELECT ? FROM t") == 0 && st.v[0].nparams == 1,
	    "a refused file leaves out as it was (%s)", err);
	CHECK(split("SELECT 2", 0, &st, err, sizeof(err)) == 0 && st.n == 2 &&
	    strcmp(st.v[1].sql, "SELECT 2") == 0, "appended after it");
	myp_free(&st);
	CHECK(st.v == NULL && st.n == 0, "myp_free empties");
	myp_free(&st);
	myp_free(NULL);
	CHECK(split("  -- nothing\n;;\n", 0, &st, err, sizeof(err)) == 0 &&
	    st.n == 0 && st.v == NULL, "only comments: no statement");
	CHECK(myp_split("", 0, 1, PREFIX, 0, &st, err, sizeof(err)) == 0 &&
	    st.n == 0, "empty text: no statement");
}

int
main(void)
{
	test_params();
	test_lines();
	test_kinds();
	test_own();
	test_digit_prefix();
	test_outbox();
	test_setup();
	test_memory();
	return tap_done();
}
