/* SPDX-License-Identifier: MIT */
/*
 * t_log: logging (src/lib/log.c).  Values from requests reach the log only
 * through log_escape(), which must neutralise quotes, backslashes and
 * control bytes (no forged log lines) and truncate visibly; every line
 * is written whole, with the level, and levels above the threshold are
 * dropped.
 */
#include "config.h"

#include <sys/wait.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/utf8.h"
#include "tap.h"

static void
test_escape(void)
{
	char	 buf[64], small[8];

	CHECK(strcmp(log_escape(buf, sizeof(buf), "evt_1"), "evt_1") == 0,
	    "printable text unchanged");
	CHECK(strcmp(log_escape(buf, sizeof(buf), NULL), "-") == 0,
	    "NULL becomes -");
	CHECK(strcmp(log_escape(buf, sizeof(buf), "a\"b\\c"),
	    "a\\x22b\\x5cc") == 0, "quote and backslash escaped: %s", buf);
	CHECK(strcmp(log_escape(buf, sizeof(buf),
	    "x\nINFO forged\r\x7f\xff"), "x\\x0aINFO forged\\x0d\\x7f\\xff") ==
	    0, "newline, CR, DEL and high bytes escaped: %s", buf);
	log_escape(small, sizeof(small), "abcdefghijkl");
	CHECK(strcmp(small, "abcd...") == 0,
	    "truncated with ... in a small buffer: %s", small);
	log_escape(small, sizeof(small), "ab\ncdef");
	CHECK(strlen(small) < sizeof(small) && strstr(small, "...") != NULL,
	    "an escaped value too long is cut with ..., inside the buffer: %s",
	    small);
	log_escape(small, 3, "abcdef");
	CHECK(strlen(small) < 3, "a buffer too small for ... stays a string");
}

static void
test_levels(void)
{
	CHECK(log_level_parse("error") == LOG_LEVEL_ERROR &&
	    log_level_parse("warn") == LOG_LEVEL_WARN &&
	    log_level_parse("info") == LOG_LEVEL_INFO &&
	    log_level_parse("debug") == LOG_LEVEL_DEBUG,
	    "the four level names parse");
	CHECK(log_level_parse("INFO") == -1 && log_level_parse("") == -1 &&
	    log_level_parse("verbose") == -1, "other names are refused");
}

/* Run fn with stderr sent to a file; the file's text into buf. */
static void
capture(void (*fn)(void), char *buf, size_t bufsz)
{
	char	 path[] = "/tmp/oncehook-t_log-XXXXXX";
	int	 fd, saved;
	ssize_t	 n;

	if ((fd = mkstemp(path)) == -1 || (saved = dup(2)) == -1)
		BAIL("mkstemp/dup");
	dup2(fd, 2);
	fn();
	dup2(saved, 2);
	close(saved);
	lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, bufsz - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
}

static void
emit(void)
{
	log_setlevel(LOG_LEVEL_INFO);
	log_info("hello %d", 42);
	log_debug("not shown");
	log_warnx("careful");
	log_setlevel(LOG_LEVEL_DEBUG);
	log_debug("shown now");
	log_setlevel(LOG_LEVEL_INFO);
}

static void
test_lines(void)
{
	char	 out[4096], want[64];

	capture(emit, out, sizeof(out));
	snprintf(want, sizeof(want), "oncehook[%ld]: ", (long)getpid());
	CHECK(strncmp(out, want, strlen(want)) == 0,
	    "a line starts with oncehook[pid]: %.40s", out);
	CHECK(strstr(out, "Z info: hello 42\n") != NULL,
	    "time in UTC, level, message, newline");
	CHECK(strstr(out, "not shown") == NULL,
	    "debug dropped at level info");
	CHECK(strstr(out, " warn: careful\n") != NULL, "warn shown");
	CHECK(strstr(out, " debug: shown now\n") != NULL,
	    "debug shown at level debug");
}

/* Lines in one second, then in the next, then in a forked child. */
static void
emit_times(void)
{
	time_t	 t0 = time(NULL);

	log_setlevel(LOG_LEVEL_INFO);
	log_info("one");
	log_warnx("two");
	log_info("three");
	while (time(NULL) == t0)
		usleep(20000);
	log_info("four");
}

/*
 * A line's head is made again when its second, level or pid changed
 * (vlog() keeps the last one): each line has its own level, a line of
 * the next second that second's stamp, a forked child its own pid.
 */
static void
test_heads(void)
{
	char	 out[4096], want[128], stamp[32], *p;
	int	 fds[2], st;
	pid_t	 child;
	ssize_t	 n;

	capture(emit_times, out, sizeof(out));
	CHECK(strstr(out, " info: one\n") != NULL &&
	    strstr(out, " warn: two\n") != NULL &&
	    strstr(out, " info: three\n") != NULL, "lines of one second: "
	    "each its own level");
	log_utc((int64_t)time(NULL), stamp, sizeof(stamp));
	snprintf(want, sizeof(want), "oncehook[%ld]: %s info: four\n",
	    (long)getpid(), stamp);
	CHECK((p = strstr(out, "four")) != NULL && strstr(out, want) != NULL,
	    "a line of the next second has that second's stamp (%s)", want);
	if (pipe(fds) == -1)
		BAIL("pipe");
	if ((child = tap_fork()) == 0) {
		dup2(fds[1], 2);
		log_forked();
		log_info("child");
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	waitpid(child, &st, 0);
	snprintf(want, sizeof(want), "oncehook[%ld]: ", (long)child);
	CHECK(strncmp(out, want, strlen(want)) == 0, "a forked child's line "
	    "has its pid, in the second its parent logged in (%.40s)", out);
}

/* log_utc() against gmtime_r() + strftime(), the library's answer. */
static void
test_utc(void)
{
	static const long long	 fixed[] = {
		0, 59, 86399, 86400, 951782400 /* 2000-02-29 */, 951868800,
		4107542399LL /* 2100-02-28T23:59:59 */, 4107542400LL,
		1798761599 /* 2026-12-31T23:59:59 */, 253402300799LL,
		-1, -86400, -86401, -2208988800LL /* 1900 */,
	};
	char		 got[32], want[32], small[11];
	struct tm	 tm;
	time_t		 tt;
	long long	 t;
	size_t		 i, bad = 0, n = 0;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]) + 20000; i++) {
		/* The fixed instants, then a walk of 2,400 years in steps
		 * that land on every hour and day of the calendar. */
		t = i < sizeof(fixed) / sizeof(fixed[0]) ? fixed[i] :
		    -2208988800LL + (long long)(i - 14) * 3786943LL;
		tt = (time_t)t;
		if ((long long)tt != t || gmtime_r(&tt, &tm) == NULL)
			continue;	/* a 32-bit time_t cannot say it */
		strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%SZ", &tm);
		log_utc(t, got, sizeof(got));
		n++;
		if (strcmp(got, want) != 0 && bad++ == 0)
			printf("# %lld: %s, gmtime_r says %s\n", t, got, want);
	}
	CHECK(bad == 0 && n > (sizeof(time_t) >= 8 ? 20000 : 1000),
	    "log_utc() is gmtime_r()'s date and time for %zu instants from "
	    "1900 (1901 with a 32-bit time_t) to 9999 (2038) (%zu differ)", n,
	    bad);
	CHECK(strcmp(log_utc(0, small, sizeof(small)), "1970-01-01") == 0,
	    "log_utc() cuts to the buffer: %s", small);
}

/* lib/utf8.h: utf8_text(), the text a store keeps. */
static void
test_utf8_text(void)
{
	char	 b[16];

	CHECK(strcmp(utf8_text(b, sizeof(b), "\xc3\xa9" "chec \xf0\x9f\x98\x80"),
	    "\xc3\xa9" "chec \xf0\x9f\x98\x80") == 0, "utf8_text: UTF-8 kept");
	CHECK(strcmp(utf8_text(b, sizeof(b), "\xe9" "chec \xc3"), "?chec ?") ==
	    0, "utf8_text: Latin-1 and a cut sequence: '?' each");
	CHECK(strcmp(utf8_text(b, sizeof(b), "a\xed\xa0\x80z"), "a???z") == 0,
	    "utf8_text: a surrogate's bytes: '?' each");
	CHECK(strcmp(utf8_text(b, 6, "abcd\xc3\xa9"), "abcd") == 0 &&
	    strcmp(utf8_text(b, 7, "abcd\xc3\xa9"), "abcd\xc3\xa9") == 0,
	    "utf8_text: cut short at a character's end, not inside it");
	CHECK(strcmp(utf8_text(b, 1, "abc"), "") == 0,
	    "utf8_text: a buffer of one byte holds the empty string");
	/* Nothing written past bufsz: a '?' or a 4-byte character at the
	 * edge, the rest of b a sentinel. */
	memset(b, '#', sizeof(b));
	CHECK(strcmp(utf8_text(b, 3, "a\xff\xff"), "a?") == 0 &&
	    b[3] == '#', "utf8_text: a '?' that does not fit is left out, "
	    "nothing past the buffer");
	memset(b, '#', sizeof(b));
	CHECK(strcmp(utf8_text(b, 5, "\xf0\x9f\x98\x80z"),
	    "\xf0\x9f\x98\x80") == 0 && b[5] == '#', "utf8_text: a 4-byte "
	    "character kept whole when it fits");
	memset(b, '#', sizeof(b));
	CHECK(strcmp(utf8_text(b, 4, "\xf0\x9f\x98\x80"), "") == 0 &&
	    b[1] == '#', "utf8_text: ... else left out, nothing past it");
}

int
main(void)
{
	test_utf8_text();
	test_utc();
	test_escape();
	test_levels();
	test_lines();
	test_heads();
	return tap_done();
}
