/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the MariaDB actions guard's lexer
 * (src/store/mysql/rewrite.c) against the server's own, over generated
 * inputs (issue 36).
 *
 * Each input is a section's statement, SELECT 1 (or UPDATE lex_t SET
 * c = 'x') and pieces drawn by a seeded generator: quotes of every kind with their escapes ('', \',
 * ``), introducers (N'', X'', _utf8mb4''), comments of every kind
 * (slash-star, executable and versioned, #, -- with each byte after
 * it), white space, multibyte and invalid bytes, numbers run into
 * words; and somewhere among them a payload the guard refuses when it
 * reads it as code: oncehook's own table, or GET_LOCK().  Whether that
 * payload is live is the server's to say: the statement is run, and a
 * live table names itself in the error (the database has no oncehook
 * tables), a live GET_LOCK() leaves a lock.  For every input:
 *
 *  - the guard passes it, so the payload is not code to the guard: the
 *    server runs neither what oncehook sends (comments dropped) nor the
 *    text as written with the payload live;
 *  - the guard passes it: both texts fare alike on the server (one
 *    runs, with the same first value, or both fail);
 *  - the guard refuses it for the payload: the text as written does
 *    not run on the server with the payload inert.
 *
 * The connection is oncehook's own (store/mysql/conn.c: its sql_mode
 * and utf8mb4), on a server set up as a site's might be (by
 * tests/mylex.sh): a default sql_mode with NO_BACKSLASH_ESCAPES and
 * ANSI_QUOTES, and latin1 forced on every client.  The guard lexes as
 * that connection does.  The same inputs on a connection set to either
 * mode, or to latin1, find differences (the inputs can).
 *
 * The sweep runs twice: with the prefix oncehook_, and with one that
 * starts with a digit (1_, or ONCEHOOK_TEST_DIGIT_PREFIX), as a
 * prefix may; the payloads name the tables bare, quoted and qualified
 * with the database (d.1_events is a name to the server).
 *
 * tests/mylex.sh starts the server and runs this program with
 * ONCEHOOK_TEST_MYSQL and ONCEHOOK_TEST_MYSQL_PW; ONCEHOOK_TEST_SEED
 * changes the seed (printed), ONCEHOOK_TEST_CASES the count.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "store/mysql/conn.h"
#include "store/mysql/rewrite.h"
#include "tap.h"
#include "testlib.h"

#define LOCK		"oncehook_lexlock"

/* The prefix the guard is given, and the test's database: a payload's
 * {p} and {d}. */
static char	 prefix[64] = "oncehook_";
static char	 dbname[128];

static uint64_t	 rng;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* Pieces that move the lexer's state: quotes and escapes, comments,
 * whole elements, and the rest; one drawn from a class by weight. */
static const char *const quoting[] = {
	"'", "\"", "`", "\\", "\\'", "\\\"", "''", "\"\"", "``", "\\\\",
	"\\`", "'\\''", "\"\\\"\"", "N'", "X'", "B'", "n'", "x'", "b'",
	"_utf8mb4'", "_binary'", "_latin1'", "_big5'", "\\n", "\\Z", "\\%",
	"\x81\\", "\xc3\\",
};
static const char *const commenting[] = {
	"/*", "*/", "/* /* */", "/*/", "/*!", "/*!100000 ", "/*!999999 ",
	"/*!50700 ", "/*!M ", "/*M!", "/*M!100000 ", "/*M!999999 ", "/*m!",
	"/*+ ", "*", "#", "-- ", "--", "---", "-", "--\t", "--\r",
};
static const char *const whole[] = {
	" ", "\n", "\r", "\r\n", "\t", "\f", "\v", "'a'", "\"b\"", "`c`",
	"/**/", "/*x*/", "#x\n", "-- x\n", "N'x'", "X'41'", "B'1'",
	"_utf8mb4'x'", ",", "1", "a", "$", "a$", "(", ")", ".", "e1",
	"1e1", "1.5", ".5", "0x41", "0b1", "1e", "AS", "\xc3\xa9",
	"\xe2\x82\xac", "\xc2\xa0", "\x80", "\xc3", "\xff", "\xa0", "\x7f",
	"x.", "`x`.", "1_", "2e",
};
#define N(a)	(sizeof(a) / sizeof(a[0]))

/* Where a piece can hide what follows, and what may end it. */
static const char *const opens[] = {
	"'", "\"", "`", "/*", "#", "-- ", "/*!", "/*M!", "/*!100000 ",
	"/*!999999 ", "/*M!999999 ", "N'", "X'", "_utf8mb4'", "'a\\'",
	"\"a\\\"", "'\\\\'", "`a\\`", "--", "'\\", "\"\\", "/*!50700 ",
};
static const char *const closes[] = {
	"'", "\"", "`", "*/", "\n", "", "\\'", "'\n", "#'", "-- '", "#\"",
	"#`", "/*'*/", "' #", "\" #", "*/'", "'/*", "\\\"", "`#",
};

/* What the guard refuses when it is code; table is 1 for a table
 * (named by the server's error when live), 0 for a lock; set 1 for a
 * payload after UPDATE lex_t SET c = 'x', 2 after UPDATE lex_t (a
 * newline and SET c = 'y' end the statement), else after SELECT 1.
 * {p} is the prefix, {d} the test's database (a table qualified with
 * it is named by the server's error; a prefix may start with a digit,
 * and the name after d. is a name to the server all the same). */
static const struct {
	const char	*text;
	int		 table, set;
} payloads[] = {
	{ " FROM {p}events ", 1, 0 },
	{ " FROM {p}events", 1, 0 },
	{ ", (SELECT 2 FROM {p}events) ", 1, 0 },
	{ " FROM `{p}events` ", 1, 0 },
	{ ", {p}events.id ", 1, 0 },
	{ ", GET_LOCK('" LOCK "', 0) ", 0, 0 },
	{ ", `GET_LOCK`('" LOCK "', 0)", 0, 0 },
	{ ", get_lock ('" LOCK "', 0) ", 0, 0 },
	{ ", mariadb_schema.GET_LOCK('" LOCK "', 0) ", 0, 0 },
	{ ", `oracle_schema` . get_lock ('" LOCK "', 0)", 0, 0 },
	{ ", c = (SELECT 2 FROM {p}events) ", 1, 1 },
	{ ", {p}events.id = 1 ", 1, 1 },
	{ " WHERE c IN (SELECT id FROM `{p}events`)", 1, 1 },
	{ ", c = GET_LOCK('" LOCK "', 0) ", 0, 1 },
	{ ", {p}events ", 1, 2 },
	{ ", `{p}events` ", 1, 2 },
	{ " JOIN {p}events", 1, 2 },
	{ " FROM {d}.{p}events ", 1, 0 },
	{ " FROM {d}.{p}events", 1, 0 },
	{ " FROM `{d}`.{p}events ", 1, 0 },
	{ " FROM {d} . {p}events ", 1, 0 },
	{ ", {d}.{p}events.id ", 1, 0 },
	{ ", (SELECT 2 FROM {d}./**/{p}events) ", 1, 0 },
	{ ", c = (SELECT 2 FROM {d}.{p}events) ", 1, 1 },
	{ ", {d}.{p}events ", 1, 2 },
	{ ", `{d}`.{p}events ", 1, 2 },
};
#define NPAYLOADS N(payloads)

/* Append s to b (of size bsz). */
static void
add(char *b, size_t bsz, const char *s)
{
	size_t	 n = strlen(b);

	snprintf(b + n, bsz - n, "%s", s);
}

/* Append s to b, its {p} the prefix and {d} the database. */
static void
expand(char *b, size_t bsz, const char *s)
{
	char	 one[2] = "";

	for (; *s != '\0'; s++)
		if (strncmp(s, "{p}", 3) == 0) {
			add(b, bsz, prefix);
			s += 2;
		} else if (strncmp(s, "{d}", 3) == 0) {
			add(b, bsz, dbname);
			s += 2;
		} else {
			one[0] = *s;
			add(b, bsz, one);
		}
}

/* A piece, or -- and a byte (1-255) now and then. */
static void
piece(char *b, size_t bsz)
{
	char		 two[4] = "--";
	uint32_t	 w = rnd(20);

	if (w < 2) {
		two[2] = (char)(1 + rnd(255));
		add(b, bsz, two);
	} else if (w < 11)
		add(b, bsz, quoting[rnd(N(quoting))]);
	else if (w < 16)
		add(b, bsz, commenting[rnd(N(commenting))]);
	else
		add(b, bsz, whole[rnd(N(whole))]);
}

/* One input into b; the payload's index into *pl. */
static void	gen_rest(char *, size_t, size_t);

static void
gen(char *b, size_t bsz, size_t *pl)
{
	static const char *const starts[] = {
		"SELECT 1", "UPDATE lex_t SET c = 'x'", "UPDATE lex_t"
	};
	uint32_t	 set = rnd(8);

	set = set < 5 ? 0 : set < 7 ? 1 : 2;
	do
		*pl = rnd(NPAYLOADS);
	while ((uint32_t)payloads[*pl].set != set);
	snprintf(b, bsz, "%s%s", starts[set], rnd(2) ? " " : "");
	gen_rest(b, bsz, *pl);
	if (set == 2)
		add(b, bsz, "\nSET c = 'y'");
}

/* The pieces and payload pl after the statement's start. */
static void
gen_rest(char *b, size_t bsz, size_t pl)
{
	uint32_t	 i, n;

	if (rnd(4) == 0) {
		/* Pieces at random, the payload among them. */
		n = 1 + rnd(6);
		for (i = 0; i < n; i++) {
			if (i == n / 2)
				expand(b, bsz, payloads[pl].text);
			piece(b, bsz);
		}
		return;
	}
	/* An opener, pieces, the payload, pieces, a closer, pieces. */
	add(b, bsz, opens[rnd(N(opens))]);
	for (n = rnd(3); n > 0; n--)
		piece(b, bsz);
	expand(b, bsz, payloads[pl].text);
	for (n = rnd(2) ? 0 : 1 + rnd(2); n > 0; n--)
		piece(b, bsz);
	add(b, bsz, closes[rnd(N(closes))]);
	for (n = rnd(2) ? 0 : 1 + rnd(2); n > 0; n--)
		piece(b, bsz);
}

/* What the server made of a statement. */
enum fate {
	RAN,		/* it ran, the payload inert */
	LIVE,		/* the payload was code */
	SYNTAX,		/* not parsed: nothing ran */
	OTHER,		/* parsed, and failed otherwise: undecided */
};

static const char *const fates[] = { "ran", "live", "syntax", "other" };

/* Run sql on db: its fate, and its first value into v. */
static enum fate
run(struct mydb *db, const char *sql, int table, char *v, size_t vsz)
{
	struct myres	*r = NULL;
	struct myrow	 row;
	const char	*m;
	unsigned int	 e;
	long long	 locks;
	enum fate	 f;
	char		 n1[80], n2[80], n3[80], n4[80];

	snprintf(n1, sizeof(n1), "'%sevents'", prefix);
	snprintf(n2, sizeof(n2), ".%sevents'", prefix);
	snprintf(n3, sizeof(n3), "'%sevents.", prefix);
	snprintf(n4, sizeof(n4), ".%sevents.", prefix);
	v[0] = '\0';
	e = mydb_run(db, strdup(sql), &r, NULL);
	if (e == 0 && mydb_next(r, &row))
		snprintf(v, vsz, "%s", row.v[0] != NULL ? row.v[0] : "NULL");
	mydb_free(r);
	m = mydb_error(db);
	if (e == 0)
		f = RAN;
	else if (e == 1064)
		f = SYNTAX;
	else if (table && (strstr(m, n1) != NULL || strstr(m, n2) != NULL ||
	    strstr(m, n3) != NULL || strstr(m, n4) != NULL))
		f = LIVE;
	else
		f = OTHER;
	if (mydb_lost(db))
		BAIL("the connection was lost on %s: %s", sql, m);
	if (!table) {
		r = NULL;
		if (mydb_run(db, strdup("SELECT RELEASE_ALL_LOCKS()"), &r,
		    NULL) != 0 || !mydb_next(r, &row))
			BAIL("RELEASE_ALL_LOCKS(): %s", mydb_error(db));
		locks = mydb_int(&row, 0, -1);
		mydb_free(r);
		if (locks != 0)
			f = LIVE;
	}
	return f;
}

/* The input for a message: control bytes and others as \xNN. */
static const char *
shown(const char *s)
{
	static char	 b[1024];
	size_t		 n = 0;

	for (; *s != '\0' && n + 5 < sizeof(b); s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f ||
		    *s == '\\')
			n += (size_t)snprintf(b + n, sizeof(b) - n, "\\x%02x",
			    (unsigned char)*s);
		else
			b[n++] = *s;
	b[n] = '\0';
	return b;
}

struct tally {
	size_t	 cases, passed, refused;
	size_t	 live, inert, ran;	/* decided by the server, as written */
	size_t	 hole, hidden, differ, over;
	char	 first[4][1400];	/* the first of each, to show */
};

static void
note(char *first, size_t sz, const char *what, const char *text,
    const char *more)
{
	if (first[0] == '\0')
		snprintf(first, sz, "%s: \"%s\"%s", what, shown(text), more);
}

/* n inputs from seed, the server's reading on db. */
static void
sweep(struct mydb *db, uint64_t seed, size_t n, struct tally *t)
{
	struct myp_stmts	 st;
	char			 text[512], err[512], vt[256], vs[256];
	char			 more[700], own[96];
	const char		*sent;
	size_t			 k, pl;
	enum fate		 ft, fs;
	int			 passed, ours;

	memset(t, 0, sizeof(*t));
	rng = seed != 0 ? seed : 1;
	for (k = 0; k < n; k++) {
		gen(text, sizeof(text), &pl);
		t->cases++;
		memset(&st, 0, sizeof(st));
		err[0] = '\0';
		passed = myp_split(text, strlen(text), 1, prefix, 0, &st, err,
		    sizeof(err)) == 0 && st.n == 1;
		/* Refused for the payload, as code, not for another cause. */
		snprintf(own, sizeof(own), "%sevents is oncehook's", prefix);
		ours = !passed && (strstr(err, own) != NULL ||
		    strstr(err, "GET_LOCK() is refused") != NULL);
		sent = passed ? st.v[0].sql : NULL;
		ft = run(db, text, payloads[pl].table, vt, sizeof(vt));
		if (ft == LIVE)
			t->live++;
		else if (ft == RAN || ft == SYNTAX)
			t->inert++;
		t->ran += ft == RAN;
		if (passed) {
			t->passed++;
			fs = run(db, sent, payloads[pl].table, vs, sizeof(vs));
			snprintf(more, sizeof(more), " sent as \"%s\" (%s, %s)",
			    shown(sent), fates[ft], fates[fs]);
			if (fs == LIVE) {
				t->hole++;
				note(t->first[0], sizeof(t->first[0]),
				    "payload live as sent", text, more);
			}
			if (ft == LIVE) {
				t->hidden++;
				note(t->first[1], sizeof(t->first[1]),
				    "payload live as written", text, more);
			}
			if ((ft == RAN) != (fs == RAN) ||
			    (ft == RAN && strcmp(vt, vs) != 0)) {
				t->differ++;
				note(t->first[2], sizeof(t->first[2]),
				    "read otherwise once comments are dropped",
				    text, more);
			}
		} else {
			t->refused++;
			if (ours && ft == RAN) {
				t->over++;
				snprintf(more, sizeof(more), " (%s)", err);
				note(t->first[3], sizeof(t->first[3]),
				    "refused, the payload inert", text, more);
			}
		}
		myp_free(&st);
	}
}

/*
 * Numbers run into a word: where the server ends a number (1e1INTO is
 * 1e1 then INTO; 1a is a name), the guard must too, or SELECT ...
 * INTO OUTFILE passes its refusal.  A live INTO OUTFILE is refused by
 * the server for the user's want of the FILE privilege, or fails to
 * write into a directory that is not there.
 */
static void
test_numbers(struct mydb *db)
{
	static const char *const nums[] = {
		"1", "12", "1e1", "1E1", "1e+1", "1e-1", "1e", "1e+", "1.5",
		"1.", ".5", ".5e1", "1.5e1", "1.5e+1", "1.e1", "0x41", "0x",
		"0x4g", "0b1", "0b", "0b12", "01", "1.5.5", "1..5", "1a",
		"a1", "'s'", "`c`", "1.5e", "0x1e1", "1e1e1",
	};
	static const char *const words[] = { "INTO", "into", "INTO/**/" };
	struct myp_stmts	 st;
	struct myres		*r;
	char			 text[256], err[512], bad[1024] = "";
	const char		*m;
	size_t			 i, j, n = 0, live = 0;
	unsigned int		 e;
	int			 guard, server;

	for (i = 0; i < N(nums); i++)
		for (j = 0; j < N(words); j++) {
			snprintf(text, sizeof(text), "SELECT %s%s OUTFILE "
			    "'/nonexistent/oncehook-lex'", nums[i], words[j]);
			memset(&st, 0, sizeof(st));
			guard = myp_split(text, strlen(text), 1, prefix, 0,
			    &st, err, sizeof(err)) == 0;
			myp_free(&st);
			r = NULL;
			e = mydb_run(db, strdup(text), &r, NULL);
			mydb_free(r);
			m = mydb_error(db);
			server = e != 0 && e != 1064 && (strstr(m, "FILE") !=
			    NULL || strstr(m, "nonexistent") != NULL);
			live += server;
			if (guard && server) {
				n++;
				snprintf(bad + strlen(bad), sizeof(bad) -
				    strlen(bad), " %s%s", nums[i], words[j]);
			}
		}
	CHECK(n == 0 && live >= N(nums), "a number run into INTO: never "
	    "passed when the server writes the file (%zu passed, %zu live:%s)",
	    n, live, bad);
}

/*
 * Each byte (1-255) right after a name, and right before one: where
 * the server ends the name, the guard must too.  The bytes for which
 * the server reads oncehook's table and the guard passed the statement
 * into bad; their count.
 */
static size_t
name_bytes(struct mydb *db, char *bad, size_t badsz)
{
	static const struct {
		const char	*a, *z;		/* the byte between */
	} forms[] = {
		{ "SELECT 1 FROM {p}events", "" },
		{ "SELECT 1 FROM ", "{p}events" },
		{ "SELECT 1 FROM {p}events", "1" },
		{ "SELECT 1 FROM {d}", "{p}events" },
		{ "SELECT 1 FROM {d}.", "{p}events" },
		{ "SELECT 1 FROM `{d}`", "{p}events" },
	};
	struct myp_stmts	 st;
	char			 text[256], err[512], v[64], one[2] = "";
	size_t			 f, n = 0;
	int			 b, guard;

	bad[0] = '\0';
	for (f = 0; f < N(forms); f++)
		for (b = 1; b < 256; b++) {
			text[0] = '\0';
			one[0] = (char)b;
			expand(text, sizeof(text), forms[f].a);
			add(text, sizeof(text), one);
			expand(text, sizeof(text), forms[f].z);
			memset(&st, 0, sizeof(st));
			guard = myp_split(text, strlen(text), 1, prefix, 0,
			    &st, err, sizeof(err)) == 0;
			myp_free(&st);
			if (guard && run(db, text, 1, v, sizeof(v)) == LIVE) {
				n++;
				snprintf(bad + strlen(bad), badsz - strlen(bad),
				    " %zu:0x%02x", f, b);
			}
		}
	return n;
}

static struct mydb *
connect_db(void)
{
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", getenv("ONCEHOOK_TEST_MYSQL") },
		{ "ONCEHOOK_DB_PASSWORD_FILE", getenv("ONCEHOOK_TEST_MYSQL_PW") },
		{ "ONCEHOOK_DB_PREFIX", "oncehook_" },
		{ "ONCEHOOK_SCHEME", "hmac-sha256" },
		{ "ONCEHOOK_SECRET", "secret-a" },
		{ NULL, NULL }
	};
	struct conf	*cf;
	struct mydb	*db;
	char		 err[512];

	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	if (mydb_connect(cf, &db, err, sizeof(err)) != HOOK_OK)
		BAIL("connect: %s", err);
	conf_free(cf);
	return db;
}

static void
text_of(struct mydb *db, const char *sql, char *v, size_t vsz)
{
	struct myres	*r = NULL;
	struct myrow	 row;

	if (mydb_run(db, strdup(sql), &r, NULL) != 0 || !mydb_next(r, &row))
		BAIL("%s: %s", sql, mydb_error(db));
	snprintf(v, vsz, "%s", row.v[0] != NULL ? row.v[0] : "");
	mydb_free(r);
}

/* The sweep of n inputs from seed on db, and each byte about a name,
 * with the prefix set: the guard never passes a live payload. */
static void
sweep_checks(struct mydb *db, uint64_t seed, size_t n)
{
	struct tally	 t;
	char		 bad[2048];

	sweep(db, seed, n, &t);
	printf("# prefix %s, seed %llu: %zu inputs, %zu passed, %zu "
	    "refused; as written the payload live in %zu, inert in %zu (%zu "
	    "ran)\n", prefix, (unsigned long long)seed, t.cases, t.passed,
	    t.refused, t.live, t.inert, t.ran);
	CHECK(t.hole == 0, "prefix %s: no input passed whose payload the "
	    "server runs as sent (%zu) %s", prefix, t.hole, t.first[0]);
	CHECK(t.hidden == 0, "prefix %s: no input passed whose payload the "
	    "server runs as written (%zu) %s", prefix, t.hidden, t.first[1]);
	CHECK(t.differ == 0, "prefix %s: every input passed runs alike as "
	    "written and as sent (%zu differ) %s", prefix, t.differ,
	    t.first[2]);
	CHECK(t.over == 0, "prefix %s: no input refused for its payload "
	    "that the server runs with the payload inert (%zu) %s", prefix,
	    t.over, t.first[3]);
	CHECK(t.live >= n / 100 && t.ran >= n / 20 && t.passed >= n / 20,
	    "prefix %s: the inputs decide: payload live in %zu, %zu ran with "
	    "it inert, %zu passed", prefix, t.live, t.ran, t.passed);
	CHECK(name_bytes(db, bad, sizeof(bad)) == 0, "prefix %s: each byte "
	    "after or before %sevents, or about the point of %s.%sevents: "
	    "never passed when the server reads the table (%s)", prefix,
	    prefix, dbname, prefix, bad);
}

int
main(void)
{
	static const char *const others[] = {
		"SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'",
		"SET SESSION sql_mode = 'ANSI_QUOTES'",
		"SET NAMES latin1",
	};
	struct mydb	*db, *other;
	struct tally	 t;
	const char	*s, *digits = "1_";
	char		 global[256], session[256], bad[2048];
	uint64_t	 seed = 36;
	size_t		 n = 8000, i, nb;

	if (getenv("ONCEHOOK_TEST_MYSQL") == NULL ||
	    getenv("ONCEHOOK_TEST_MYSQL_PW") == NULL) {
		printf("1..0 # SKIP no server: tests/mylex.sh runs this\n");
		return 0;
	}
	if ((s = getenv("ONCEHOOK_TEST_SEED")) != NULL)
		seed = strtoull(s, NULL, 10);
	if ((s = getenv("ONCEHOOK_TEST_CASES")) != NULL)
		n = strtoul(s, NULL, 10);
	if ((s = getenv("ONCEHOOK_TEST_DIGIT_PREFIX")) != NULL)
		digits = s;
	db = connect_db();
	text_of(db, "SELECT DATABASE()", dbname, sizeof(dbname));
	if (mydb_run(db, strdup("CREATE TABLE lex_t (c TEXT)"), NULL, NULL)
	    != 0 || mydb_run(db, strdup("INSERT INTO lex_t VALUES ('x')"),
	    NULL, NULL) != 0)
		BAIL("lex_t: %s", mydb_error(db));
	text_of(db, "SELECT @@GLOBAL.sql_mode", global, sizeof(global));
	text_of(db, "SELECT CONCAT(@@SESSION.sql_mode, ' ',"
	    " @@character_set_client, ' ', @@character_set_connection)",
	    session, sizeof(session));
	CHECK(strstr(global, "NO_BACKSLASH_ESCAPES") != NULL &&
	    strstr(global, "ANSI_QUOTES") != NULL &&
	    strstr(session, "NO_BACKSLASH_ESCAPES") == NULL &&
	    strstr(session, "ANSI_QUOTES") == NULL &&
	    strstr(session, " utf8mb4 utf8mb4") != NULL, "the server's "
	    "default sql_mode (%s) and its forced latin1 are not oncehook's "
	    "connection's (%s)", global, session);

	sweep_checks(db, seed, n);
	test_numbers(db);
	/* A prefix may start with a digit (conf.c): the same inputs, the
	 * payloads' tables named from a digit. */
	if (strlen(digits) >= sizeof(prefix) || (digits[0] < '0' ||
	    digits[0] > '9'))
		BAIL("ONCEHOOK_TEST_DIGIT_PREFIX %s: a digit first", digits);
	snprintf(prefix, sizeof(prefix), "%s", digits);
	sweep_checks(db, seed, n);
	snprintf(prefix, sizeof(prefix), "oncehook_");

	/* The same inputs where the connection lexes otherwise. */
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		other = connect_db();
		if (mydb_run(other, strdup(others[i]), NULL, NULL) != 0)
			BAIL("%s: %s", others[i], mydb_error(other));
		sweep(other, seed, n, &t);
		nb = name_bytes(other, bad, sizeof(bad));
		mydb_close(other);
		CHECK(t.hole + t.hidden + t.differ + nb > 0, "after %s the "
		    "guard would read otherwise, and the inputs show it (%zu, "
		    "%zu, %zu; bytes:%s) %s", others[i], t.hole, t.hidden,
		    t.differ, bad, t.first[0][0] ? t.first[0] :
		    t.first[1][0] ? t.first[1] : t.first[2]);
	}
	mydb_close(db);
	return tap_done();
}
