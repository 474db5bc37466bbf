/* SPDX-License-Identifier: MIT */
/*
 * t_counters: the counters file (observe/counters.h) and the health it feeds
 * (observe/stats.h).  Many processes at once, windows of minutes and hours, a
 * missing, corrupt, truncated or unwritable file, and the health rules
 * with their thresholds.
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"
#include "observe/counters.h"
#include "front/front.h"
#include "lib/log.h"
#include "observe/stats.h"
#include "tap.h"
#include "testlib.h"

static char	 dir[256], db[300], path[320];
static const struct var conf_vars_test[];
static struct ctr_file	 f;

#define T0	((int64_t)1764028800)	/* 2025-11-25 00:00:00 UTC */

static const struct ctr_slot_data *
slot(const char *name)
{
	char	 err[256];
	size_t	 i;

	if (counters_read(path, &f, err, sizeof(err)) == -1)
		return NULL;
	if (*name == '\0')
		return &f.slots[0];
	for (i = 1; i < CTR_SLOTS; i++)
		if (f.slots[i].state == 2 && strcmp(f.slots[i].name, name) == 0)
			return &f.slots[i];
	return NULL;
}

static void
fresh(void)
{
	(void)unlink(path);
}

static void
test_basic(void)
{
	const struct ctr_slot_data	*s;
	struct counters			*c;
	struct stat			 sb;
	struct ctr_failure		 lf;

	fresh();
	c = counters_open(path);
	CHECK(c != NULL && stat(path, &sb) == -1, "opening maps nothing yet");
	counters_count(c, "shop", HOOK_OK, 700, T0, NULL);
	CHECK(stat(path, &sb) == 0, "the first count creates the file beside "
	    "the database");
	CHECK((sb.st_mode & 0777) == 0600, "mode 0600 (%o)",
	    (unsigned)(sb.st_mode & 0777));
	CHECK(sb.st_size == (off_t)sizeof(struct ctr_file), "fixed size %lld",
	    (long long)sb.st_size);
	counters_count(c, "shop", HOOK_OK, 30000, T0 + 1, NULL);
	counters_count(c, "shop", HOOK_DUP, 200, T0 + 2, NULL);
	counters_count(c, "shop", HOOK_ESIG, 100, T0 + 3, "no signature "
	    "matched");
	counters_count(c, "", HOOK_ENOTFOUND, 100, T0 + 4, "no endpoint x");
	counters_count(c, "shop", HOOK_STATUS, 100, T0 + 5, NULL);
	counters_count(c, "shop", HOOK_EAUTH, 100, T0 + 5, NULL);
	s = slot("shop");
	CHECK(s != NULL, "the endpoint has a slot");
	if (s == NULL)
		return;
	CHECK(s->out[HOOK_OK] == 2 && s->out[HOOK_DUP] == 1 &&
	    s->out[HOOK_ESIG] == 1, "counted by outcome");
	CHECK(s->out[HOOK_STATUS] == 0 && s->out[HOOK_EAUTH] == 0,
	    "the status endpoint's answers are not counted");
	CHECK(counters_total(s, CAT_PROCESSED) == 2 &&
	    counters_total(s, CAT_DUPLICATE) == 1 &&
	    counters_total(s, CAT_REFUSED) == 1, "totals by category");
	CHECK(s->lat[1] == 1 && s->lat[6] == 1 && s->lat[0] == 2,
	    "latency buckets (0.5 ms, 1 ms, 50 ms)");
	CHECK(s->lat_sum_us == 31000, "latency sum %llu",
	    (unsigned long long)s->lat_sum_us);
	CHECK(s->last_ok == T0 + 2, "last success");
	counters_last_fail(&f, (size_t)(s - f.slots), &lf);
	CHECK(lf.at == T0 + 3 && lf.outcome == HOOK_ESIG &&
	    strcmp(lf.why, "no signature matched") == 0,
	    "last failure with its reason");
	CHECK(f.slots[0].out[HOOK_ENOTFOUND] == 1, "an unknown endpoint "
	    "counts in slot 0");
	CHECK(f.fail_next == 2 && f.fails[1].f.outcome == HOOK_ENOTFOUND,
	    "the ring of last failures");
	{
		/* A writer killed inside a failure record left it odd. */
		int	 fd = open(path, O_RDWR);
		size_t	 i = (size_t)(s - f.slots);
		uint64_t odd = 7;
		off_t	 at = (off_t)offsetof(struct ctr_file, slots) +
			    (off_t)(i * sizeof(struct ctr_slot_data)) +
			    (off_t)offsetof(struct ctr_slot_data, fail_seq);

		if (fd == -1 || pwrite(fd, &odd, sizeof(odd), at) !=
		    (ssize_t)sizeof(odd))
			BAIL("pwrite");
		close(fd);
		counters_count(c, "shop", HOOK_EMEDIA, 100, T0 + 6, "later");
		s = slot("shop");
		counters_last_fail(&f, i, &lf);
		CHECK(s != NULL && s->fail_seq % 2 == 0 && lf.at == T0 + 6 &&
		    lf.outcome == HOOK_EMEDIA, "a failure record left "
		    "half-written is taken over by the next one");
	}
	counters_close(c);
}

static void
test_windows(void)
{
	const struct ctr_slot_data	*s;
	struct counters			*c;
	uint64_t			 series[CTR_HOURS];
	int				 i;

	fresh();
	c = counters_open(path);
	/* 3 in hour 0, 5 in hour 2 (one per minute), 1 two days later. */
	for (i = 0; i < 3; i++)
		counters_count(c, "w", HOOK_OK, 1, T0 + 60 * i, NULL);
	for (i = 0; i < 5; i++)
		counters_count(c, "w", HOOK_OK, 1, T0 + 7200 + 60 * i, NULL);
	counters_count(c, "w", HOOK_DUP, 1, T0 + 7200 + 600, NULL);
	s = slot("w");
	if (s == NULL) {
		CHECK(0, "slot w");
		return;
	}
	counters_series(s, s->hours, CTR_HOURS, (uint64_t)(T0 + 7200 + 700) /
	    3600, CAT_PROCESSED, series);
	CHECK(series[CTR_HOURS - 1] == 5 && series[CTR_HOURS - 2] == 0 &&
	    series[CTR_HOURS - 3] == 3, "per hour: 3, 0, 5 (%llu %llu %llu)",
	    (unsigned long long)series[CTR_HOURS - 3],
	    (unsigned long long)series[CTR_HOURS - 2],
	    (unsigned long long)series[CTR_HOURS - 1]);
	CHECK(counters_window(s, s->minutes, CTR_MINUTES,
	    (uint64_t)(T0 + 7200 + 700) / 60, 60, CAT_PROCESSED) == 5,
	    "last 60 minutes: 5");
	CHECK(counters_window(s, s->minutes, CTR_MINUTES,
	    (uint64_t)(T0 + 7200 + 700) / 60, 60, CAT_DUPLICATE) == 1,
	    "last 60 minutes: 1 duplicate");
	CHECK(counters_window(s, s->hours, CTR_HOURS,
	    (uint64_t)(T0 + 7200 + 700) / 3600, 24, CAT_PROCESSED) == 8,
	    "last 24 hours: 8");
	CHECK(counters_window(s, s->minutes, CTR_MINUTES,
	    (uint64_t)(T0 + 7200 + 3 * 3600) / 60, 60, CAT_PROCESSED) == 0,
	    "three hours later, the last 60 minutes: 0");
	counters_count(c, "w", HOOK_OK, 1, T0 + 2 * 86400 + 7200, NULL);
	s = slot("w");
	CHECK(counters_window(s, s->hours, CTR_HOURS,
	    (uint64_t)(T0 + 2 * 86400 + 7200) / 3600, 24, CAT_PROCESSED) == 1,
	    "two days later, the last 24 hours: 1");
	counters_series(s, s->hours, CTR_HOURS,
	    (uint64_t)(T0 + 2 * 86400 + 7200) / 3600, CAT_PROCESSED, series);
	CHECK(series[CTR_HOURS - 1] == 1 && series[0] == 0,
	    "the 48-hour series forgot what is older (%llu)",
	    (unsigned long long)series[0]);
	counters_close(c);
}

/* Children count at once on two endpoints; nothing is lost. */
static void
test_processes(void)
{
	const struct ctr_slot_data	*a, *b;
	struct counters			*c;
	pid_t				 pid[4];
	int				 i, k, st, ok = 1, named = 0;
	size_t				 j;

	fresh();
	for (i = 0; i < 4; i++) {
		if ((pid[i] = tap_fork()) == 0) {
			c = counters_open(path);
			for (k = 0; k < 5000; k++)
				counters_count(c, k % 2 ? "alpha" : "beta",
				    k % 3 ? HOOK_OK : HOOK_DUP, 100,
				    T0 + k / 50, NULL);
			counters_close(c);
			_exit(0);
		}
	}
	for (i = 0; i < 4; i++)
		if (waitpid(pid[i], &st, 0) == -1 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			ok = 0;
	CHECK(ok, "four processes counted");
	a = slot("alpha");
	b = slot("beta");
	CHECK(a != NULL && b != NULL && a->out[HOOK_OK] + a->out[HOOK_DUP] +
	    b->out[HOOK_OK] + b->out[HOOK_DUP] == 20000,
	    "20000 counts, none lost");
	for (j = 1; j < CTR_SLOTS; j++)
		named += f.slots[j].state == 2;
	CHECK(named == 2, "each name has one slot (%d named)", named);
	CHECK(a != NULL && counters_window(a, a->hours, CTR_HOURS,
	    (uint64_t)(T0 + 100) / 3600, 24, CAT_PROCESSED) +
	    counters_window(a, a->hours, CTR_HOURS, (uint64_t)(T0 + 100) /
	    3600, 24, CAT_DUPLICATE) == 10000, "the window counts them all");
}

static void
write_file(const char *p, const void *buf, size_t n)
{
	int	 fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd == -1 || write(fd, buf, n) != (ssize_t)n)
		BAIL("write %s", p);
	close(fd);
}

static void
test_damage(void)
{
	const struct ctr_slot_data	*s;
	struct counters			*c;
	char				 junk[4096], err[256];
	struct stat			 sb;
	int				 fd, st;
	pid_t				 pid;

	/* Corrupt: the right size, the wrong bytes. */
	memset(junk, 'x', sizeof(junk));
	write_file(path, junk, sizeof(junk));
	CHECK(counters_read(path, &f, err, sizeof(err)) == -1,
	    "a foreign file is not read as counters (%s)", err);
	fresh();
	c = counters_open(path);
	counters_count(c, "d", HOOK_OK, 1, T0, NULL);
	counters_close(c);
	fd = open(path, O_RDWR);
	if (fd == -1 || pwrite(fd, "garbage!", 8, 0) != 8)
		BAIL("corrupt");
	close(fd);
	c = counters_open(path);
	counters_count(c, "d", HOOK_OK, 1, T0, NULL);
	s = slot("d");
	CHECK(s != NULL && s->out[HOOK_OK] == 1, "a corrupt header: rebuilt, "
	    "counting again from zero");
	counters_close(c);

	/* Overwritten under a process that has it mapped. */
	c = counters_open(path);
	counters_count(c, "d", HOOK_OK, 1, T0, NULL);
	fd = open(path, O_RDWR);
	if (fd == -1 || pwrite(fd, "garbage!", 8, 0) != 8)
		BAIL("corrupt");
	close(fd);
	counters_count(c, "d", HOOK_DUP, 1, T0, NULL);
	s = slot("d");
	CHECK(s != NULL && s->out[HOOK_OK] == 0 && s->out[HOOK_DUP] == 1,
	    "overwritten under the mapping: the next count rebuilds it");
	counters_close(c);

	/* Truncated at open. */
	if (truncate(path, 100) == -1)
		BAIL("truncate");
	c = counters_open(path);
	counters_count(c, "d", HOOK_OK, 1, T0, NULL);
	CHECK(stat(path, &sb) == 0 && sb.st_size ==
	    (off_t)sizeof(struct ctr_file) && (s = slot("d")) != NULL &&
	    s->out[HOOK_OK] == 1, "a truncated file: rebuilt");

	/* Truncated under the mapping: the count in flight is lost, the
	 * process lives, and a minute later it maps the file again. */
	if ((pid = tap_fork()) == 0) {
		front_explain_faults();
		if (truncate(path, 0) == -1)
			_exit(3);
		counters_count(c, "d", HOOK_OK, 1, T0 + 1, NULL);
		counters_count(c, "d", HOOK_OK, 1, T0 + 200, NULL);
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0, "truncated under the mapping: no SIGBUS "
	    "death (status %d)", st);
	s = slot("d");
	CHECK(s != NULL && s->out[HOOK_OK] == 1, "and the file was rebuilt "
	    "by the next count (%llu)", s ? (unsigned long long)
	    s->out[HOOK_OK] : 0ULL);
	counters_close(c);

	/* Removed under a long-lived process: mapped again later. */
	c = counters_open(path);
	fresh();
	counters_count(c, "d", HOOK_OK, 1, T0 + 1000, NULL);
	CHECK(slot("d") != NULL, "removed: the next look (a minute on) "
	    "makes a new file");
	counters_close(c);

	/* Nowhere to write: counting nothing, never failing. */
	c = counters_open("/nonexistent-dir/x.db-counters");
	counters_count(c, "d", HOOK_OK, 1, T0, NULL);
	CHECK(c != NULL && counters_read("/nonexistent-dir/x.db-counters", &f, err,
	    sizeof(err)) == -1 && access("/nonexistent-dir", F_OK) == -1,
	    "an unwritable place counts nothing, quietly (%s)", err);
	counters_close(c);
}

static const struct var conf_vars_test[] = {
	{ "ONCEHOOK_ENDPOINTS", "shop" },
	{ "ONCEHOOK_SHOP_SCHEME", "hmac-sha256" },
	{ "ONCEHOOK_SHOP_SECRET", "0123456789abcdef0123" },
	{ NULL, NULL },
};

/* The health of shop after fn counted into a fresh file. */
static enum stats_health
health_later(void (*fn)(struct counters *, int64_t), int64_t at,
    int64_t now, const struct stats_limits *lim, int *code)
{
	struct var	 v[8];
	struct conf	*cf;
	struct counters	*c;
	struct stats	 s;
	char		 err[256];
	enum stats_health h;

	memcpy(v, conf_vars_test, sizeof(conf_vars_test));
	v[3].name = "ONCEHOOK_DB";
	v[3].value = db;
	v[4].name = NULL;
	if ((cf = conf_load(var_get, v, err, sizeof(err))) == NULL)
		BAIL("conf: %s", err);
	fresh();
	c = counters_open(path);
	fn(c, at);
	counters_close(c);
	{
		/* Counting began two days before: the file says when. */
		int64_t	 created = at - 2 * 86400;
		int	 fd = open(path, O_RDWR);

		if (fd != -1 && pwrite(fd, &created, sizeof(created),
		    (off_t)offsetof(struct ctr_file, created)) !=
		    (ssize_t)sizeof(created))
			BAIL("pwrite created");
		if (fd != -1)
			close(fd);
	}
	if (stats_gather(cf, NULL, NULL, now, lim, NULL, &s) == -1)
		BAIL("gather");
	h = s.ep[0].health;
	if (getenv("T_COUNTERS_DEBUG"))
		printf("# %s: %s\n", stats_health_name(h), s.ep[0].why);
	*code = s.code;
	stats_clear(&s);
	conf_free(cf);
	return h;
}

/* The health of shop at now after fn counted at now. */
static enum stats_health
health_after(void (*fn)(struct counters *, int64_t), int64_t now,
    const struct stats_limits *lim, int *code)
{
	return health_later(fn, now, now, lim, code);
}

static void
none(struct counters *c, int64_t now)
{
	(void)c;
	(void)now;
}

static void
good(struct counters *c, int64_t now)
{
	int	 i;

	for (i = 0; i < 20; i++)
		counters_count(c, "shop", i % 4 ? HOOK_OK : HOOK_DUP, 1,
		    now - 1200 + i, NULL);
	counters_count(c, "shop", HOOK_ESIG, 1, now - 10, "one forged");
}

static void
failing(struct counters *c, int64_t now)
{
	counters_count(c, "shop", HOOK_OK, 1, now - 600, NULL);
	counters_count(c, "shop", HOOK_EACTION, 1, now - 300, "boom");
}

static void
recovered(struct counters *c, int64_t now)
{
	failing(c, now);
	counters_count(c, "shop", HOOK_OK, 1, now - 100, NULL);
}

static void
replayed(struct counters *c, int64_t now)
{
	failing(c, now);
	counters_count(c, "shop", HOOK_PARKED, 1, now - 200, "parked");
	counters_succeeded(c, "shop", now - 100);
}

static void
wrong_secret(struct counters *c, int64_t now)
{
	int	 i;

	for (i = 0; i < 12; i++)
		counters_count(c, "shop", HOOK_ESIG, 1, now - 500 + i, "no "
		    "signature matched");
}

static void
storm(struct counters *c, int64_t now)
{
	int	 i;

	for (i = 0; i < 200; i++)
		counters_count(c, "shop", i < 5 ? HOOK_OK : HOOK_DUP, 1,
		    now - 1000 + i, NULL);
}

static void
test_health(void)
{
	struct stats_limits	 lim = stats_limits_default;
	int64_t			 now = T0 + 86400 * 3;
	int			 code;

	CHECK(health_after(none, now, &lim, &code) == HEALTH_IDLE &&
	    code == 0, "nothing counted: idle, ok");
	CHECK(health_after(good, now, &lim, &code) == HEALTH_HEALTHY &&
	    code == 0, "deliveries, duplicates and a lone forged request: "
	    "healthy, ok");
	CHECK(health_after(failing, now, &lim, &code) == HEALTH_FAILING &&
	    code == 2, "a failure with no success since: failing, critical");
	CHECK(health_after(recovered, now, &lim, &code) == HEALTH_DEGRADED &&
	    code == 1, "a failure then a success: degraded, warning");
	CHECK(health_after(replayed, now, &lim, &code) == HEALTH_DEGRADED &&
	    code == 1, "parked, then replayed (a success outside a request): "
	    "no longer failing");
	CHECK(health_after(wrong_secret, now, &lim, &code) ==
	    HEALTH_DEGRADED && code == 1, "12 refusals, all of the hour's "
	    "deliveries: degraded, warning");
	lim.refused = 20;
	CHECK(health_after(wrong_secret, now, &lim, &code) == HEALTH_HEALTHY,
	    "... not with the limit raised to 20");
	lim = stats_limits_default;
	CHECK(health_after(storm, now, &lim, &code) == HEALTH_DEGRADED,
	    "195 duplicates of 200: a retry storm, degraded");
	lim.dup_pct = 99;
	CHECK(health_after(storm, now, &lim, &code) == HEALTH_HEALTHY,
	    "... not at 99%%");
	lim = stats_limits_default;
	CHECK(health_later(failing, now, now + 7200, &lim, &code) ==
	    HEALTH_HEALTHY,
	    "a failure over an hour old no longer counts");
	lim.idle_hours = 1;
	CHECK(health_later(failing, now, now + 7200, &lim, &code) ==
	    HEALTH_DEGRADED && code == 1, "no success in 1 hour, with --idle "
	    "1: warning");
}

/* The four outputs of stats, written to a string. */
static char *
written(const struct stats *s, int which)
{
	char	*buf = NULL;
	size_t	 sz = 0;
	FILE	*o;

	if ((o = open_memstream(&buf, &sz)) == NULL)
		BAIL("open_memstream");
	if (which == 0)
		stats_write_text(o, s);
	else if (which == 1)
		(void)stats_write_json(o, s);
	else if (which == 2)
		stats_write_prom(o, s);
	else
		stats_write_html(o, s);
	fclose(o);
	return buf;
}

/*
 * Handshakes (Slack's, Zoom's validation, Stripe's ping) are counted as
 * their own outcome and shown in every output: not deliveries (no
 * category: neither processed nor refused), yet a sign of life.
 */
static void
test_handshake(void)
{
	static const char *const want[] = {
		"handshakes    3", "\"handshake\": 3",
		"oncehook_requests_total{endpoint=\"shop\",outcome="
		"\"handshake\"} 3", "<b>3</b><span>handshakes</span>",
	};
	struct var	 v[8];
	struct conf	*cf;
	struct counters	*c;
	struct stats	 st;
	char		 err[256], *out;
	int64_t		 now = T0 + 3 * 86400;
	int		 i;

	memcpy(v, conf_vars_test, sizeof(conf_vars_test));
	v[3].name = "ONCEHOOK_DB";
	v[3].value = db;
	v[4].name = NULL;
	if ((cf = conf_load(var_get, v, err, sizeof(err))) == NULL)
		BAIL("conf: %s", err);
	fresh();
	c = counters_open(path);
	for (i = 0; i < 3; i++)
		counters_count(c, "shop", HOOK_HANDSHAKE, 1, now - 100 + i,
		    NULL);
	counters_close(c);
	CHECK(slot("shop") != NULL &&
	    slot("shop")->out[HOOK_HANDSHAKE] == 3 &&
	    counters_cat(HOOK_HANDSHAKE) == -1 &&
	    counters_total(slot("shop"), CAT_PROCESSED) == 0 &&
	    counters_total(slot("shop"), CAT_REFUSED) == 0,
	    "handshakes counted as their own outcome, in no category");
	if (stats_gather(cf, NULL, NULL, now, &stats_limits_default, NULL,
	    &st) == -1)
		BAIL("gather");
	for (i = 0; i < 4; i++) {
		out = written(&st, i);
		CHECK(out != NULL && strstr(out, want[i]) != NULL,
		    "handshakes shown by stats %s", (const char *[]){ "text",
		    "--json", "Prometheus", "page" }[i]);
		if (out != NULL && strstr(out, want[i]) == NULL)
			printf("# %s\n", out);
		free(out);
	}
	stats_clear(&st);
	conf_free(cf);
}

/* More names than slots: the others are shown as not counted. */
static void
test_full(void)
{
	struct var	 v[8];
	struct counters	*c;
	struct conf	*cf;
	struct stats	 st;
	char		 nm[16], err[256];
	size_t		 i;

	fresh();
	c = counters_open(path);
	for (i = 0; i < CTR_SLOTS + 1; i++) {
		snprintf(nm, sizeof(nm), "e%zu", i);
		counters_count(c, nm, HOOK_OK, 1, T0 + 3 * 86400, NULL);
	}
	counters_close(c);
	CHECK(slot("e63") != NULL && slot("e64") == NULL && slot("e65") ==
	    NULL, "64 names get a slot, the 65th and 66th none");
	memcpy(v, conf_vars_test, 4 * sizeof(v[0]));
	v[0].value = "e1,e64";
	v[1].name = "ONCEHOOK_E1_SCHEME";
	v[2].name = "ONCEHOOK_E1_SECRET";
	v[3].name = "ONCEHOOK_E64_SCHEME";
	v[3].value = "hmac-sha256";
	v[4].name = "ONCEHOOK_E64_SECRET";
	v[4].value = "0123456789abcdef0123";
	v[5].name = "ONCEHOOK_DB";
	v[5].value = db;
	v[6].name = NULL;
	if ((cf = conf_load(var_get, v, err, sizeof(err))) == NULL)
		BAIL("conf: %s", err);
	if (stats_gather(cf, NULL, NULL, T0 + 3 * 86400, &stats_limits_default,
	    NULL, &st) == -1)
		BAIL("gather");
	CHECK(st.nep == 2 && st.ep[0].health == HEALTH_HEALTHY &&
	    st.ep[1].health == HEALTH_DEGRADED && st.ep[1].uncounted &&
	    strstr(st.ep[1].why, "not counted") != NULL && st.code == 1,
	    "an endpoint with no slot is degraded, \"not counted\", not "
	    "idle (%s)", st.nep == 2 ? st.ep[1].why : "");
	stats_clear(&st);
	conf_free(cf);
}

/* The counters file's pages this process holds (smaps Rss, KB), and
 * in how many mappings. */
static long
mapped_kb(int *maps)
{
	FILE	*sf;
	char	 line[1024], name[400];
	long	 kb, sum = 0;
	int	 ours = 0;

	*maps = 0;
	if ((sf = fopen("/proc/self/smaps", "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), sf) != NULL) {
		if (sscanf(line, "%*x-%*x %*s %*s %*s %*s %399s", name) == 1 &&
		    strchr(line, '-') < strchr(line, ' '))
			ours = strcmp(name, path) == 0 && ++*maps > 0;
		else if (strchr(line, '-') != NULL &&
		    strchr(line, '-') < strchr(line, ' '))
			ours = 0;	/* a mapping without a name */
		else if (ours && sscanf(line, "Rss: %ld kB", &kb) == 1)
			sum += kb;
	}
	fclose(sf);
	return sum;
}

/* KB of the pages that cover [off, off + len), for this page size. */
static long
pages_kb(size_t off, size_t len)
{
	size_t	 ps = (size_t)getpagesize();

	return (long)(((off + len + ps - 1) / ps - off / ps) * ps / 1024);
}

/* The header's pages and those of slots a and b. */
static long
most_kb(size_t a, size_t b)
{
	size_t	 head = offsetof(struct ctr_file, slots);
	size_t	 sz = sizeof(struct ctr_slot_data);

	return pages_kb(0, head) + pages_kb(head + a * sz, sz) +
	    pages_kb(head + b * sz, sz);
}

/*
 * A counting process holds the pages it counts in, not the file: the
 * kernel maps 64 KB around a first read, or a whole page-cache folio,
 * within a mapping, and the file is 374 KB.  Here 20 endpoints are
 * named by another process first, so the lookup passes 19 slots.
 */
static void
test_memory(void)
{
	struct counters	*c;
	char		 name[16];
	long		 kb;
	int		 i, maps;

	fresh();
	if (tap_fork() == 0) {
		c = counters_open(path);
		for (i = 0; i < 20; i++) {
			snprintf(name, sizeof(name), "e%d", i);
			counters_count(c, name, HOOK_OK, 1, T0, NULL);
		}
		counters_close(c);
		_exit(0);
	}
	(void)wait(NULL);
	c = counters_open(path);
	for (i = 0; i < 50; i++) {
		counters_count(c, "e19", i % 2 ? HOOK_OK : HOOK_ESIG, 1,
		    T0 + 60 * i, "forged");
		counters_count(c, "", HOOK_ENOTFOUND, 1, T0 + 60 * i, "none");
	}
	kb = mapped_kb(&maps);
	CHECK(kb >= 0 && kb <= most_kb(0, 20) && maps <= 3, "a process "
	    "counting in two slots of a %zu KB file holds %ld KB of it (at "
	    "most %ld: the pages of its header and of the two slots), in %d "
	    "mappings", sizeof(struct ctr_file) / 1024, kb, most_kb(0, 20),
	    maps);
	CHECK(slot("e19") != NULL && slot("e19")->out[HOOK_OK] == 26 &&
	    slot("")->out[HOOK_ENOTFOUND] == 50, "and counted in them");
	counters_close(c);
	CHECK(mapped_kb(&maps) == 0 && maps == 0, "closed: nothing mapped");
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/t_counters.%d", (int)getpid());
	if (mkdir(dir, 0700) == -1)
		BAIL("mkdir %s", dir);
	snprintf(db, sizeof(db), "%s/hooks.db", dir);
	if (counters_path(db, path, sizeof(path)) == -1)
		BAIL("path");
	log_setlevel(LOG_LEVEL_ERROR);
	test_basic();
	test_windows();
	test_processes();
	test_damage();
	test_full();
	test_health();
	test_handshake();
	test_memory();
	tap_rmdir(dir);
	return tap_done();
}
