/* SPDX-License-Identifier: MIT */
/*
 * oncehook: gathering what stats and the status endpoint show, and each
 * endpoint's health (see observe/stats.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "conf.h"
#include "front/resp.h"
#include "lib/log.h"
#include "observe/counters.h"
#include "observe/stats.h"
#include "pipeline/sig.h"
#include "store/outbox.h"
#include "store/store.h"

const struct stats_limits	stats_limits_default = { 10, 50, 100, 90, 0,
    600, 3600 };

static const char *const health_names[HEALTH__MAX] = {
	[HEALTH_IDLE] = "idle",
	[HEALTH_HEALTHY] = "healthy",
	[HEALTH_DEGRADED] = "degraded",
	[HEALTH_FAILING] = "failing",
};

const char *
stats_when(int64_t t, int iso, char *buf, size_t sz)
{
	char	 u[32];

	if (t <= 0)
		snprintf(buf, sz, "never");
	else if (iso)
		log_utc(t, buf, sz);
	else {
		/* "YYYY-MM-DD HH:MM:SS UTC" */
		log_utc(t, u, sizeof(u));
		snprintf(buf, sz, "%.10s %.8s UTC", u, u + 11);
	}
	return buf;
}

const char *
stats_health_name(enum stats_health h)
{
	return h < HEALTH__MAX ? health_names[h] : "unknown";
}

static long long
file_size(const char *path, const char *suffix)
{
	struct stat	 sb;
	char		 p[4096];

	if ((size_t)snprintf(p, sizeof(p), "%s%s", path, suffix) >= sizeof(p)
	    || stat(p, &sb) == -1)
		return -1;
	return (long long)sb.st_size;
}

/* The refusal (4xx outcome) counted most often, for a reason. */
static enum hook_err
top_refusal(const struct stats_endpoint *e)
{
	enum hook_err	 top = HOOK_ESIG;
	int		 i;

	for (i = 0; i < HOOK__MAX; i++)
		if (counters_cat((enum hook_err)i) == CAT_REFUSED &&
		    e->out[i] > e->out[top])
			top = (enum hook_err)i;
	return top;
}

static void
judge(struct stats_endpoint *e, const struct stats_limits *lim, int64_t now,
    int64_t since)
{
	uint64_t	 hour = 0, day = 0, seen;
	int		 k;

	for (k = 0; k < CAT__MAX; k++) {
		hour += e->hour[k];
		day += e->day[k];
	}
	seen = e->hour[CAT_PROCESSED] + e->hour[CAT_DUPLICATE];
	if (e->rows.failed > 0 || e->rows.dead > 0) {
		e->health = HEALTH_FAILING;
		snprintf(e->why, sizeof(e->why), "%lld failed (parked or "
		    "failing) and %lld dead events: oncehook list --status "
		    "failed (or dead); oncehook replay --failed (--dead) once "
		    "the cause is fixed", e->rows.failed, e->rows.dead);
	} else if (e->rows.overdue > 0) {
		e->health = HEALTH_DEGRADED;
		snprintf(e->why, sizeof(e->why), "%lld accepted events wait "
		    "for more than 10 minutes: is oncehook work running (a "
		    "timer, cron, or serve's child)?", e->rows.overdue);
	} else if (e->uncounted) {
		e->health = HEALTH_DEGRADED;
		snprintf(e->why, sizeof(e->why), "not counted: the counters "
		    "file has no room for another endpoint (remove it to "
		    "start again)");
	} else if (e->last_error > 0 && e->last_error >= now - 3600 &&
	    e->last_error > e->last_ok) {
		e->health = HEALTH_FAILING;
		snprintf(e->why, sizeof(e->why), "%s %llds ago, no success "
		    "since", resp_outcome(e->last_error_outcome),
		    (long long)(now - e->last_error));
	} else if (e->hour[CAT_FAILED] > 0) {
		e->health = HEALTH_DEGRADED;
		snprintf(e->why, sizeof(e->why), "%llu failed in the last "
		    "hour (last: %s), succeeding since",
		    (unsigned long long)e->hour[CAT_FAILED],
		    resp_outcome(e->last_error_outcome));
	} else if (e->hour[CAT_REFUSED] > 0 &&
	    e->hour[CAT_REFUSED] >= lim->refused &&
	    e->hour[CAT_REFUSED] * 100 >= (uint64_t)lim->refused_pct * hour) {
		e->health = HEALTH_DEGRADED;
		snprintf(e->why, sizeof(e->why), "%llu of %llu deliveries "
		    "refused in the last hour (most often: %s)",
		    (unsigned long long)e->hour[CAT_REFUSED],
		    (unsigned long long)hour, resp_outcome(top_refusal(e)));
	} else if (e->hour[CAT_CONFLICT] > 0) {
		e->health = HEALTH_DEGRADED;
		snprintf(e->why, sizeof(e->why), "%llu key conflict%s in the "
		    "last hour", (unsigned long long)e->hour[CAT_CONFLICT],
		    e->hour[CAT_CONFLICT] == 1 ? "" : "s");
	} else if (seen > 0 && seen >= lim->dup_min &&
	    e->hour[CAT_DUPLICATE] * 100 >=
	    (uint64_t)lim->dup_pct * seen) {
		e->health = HEALTH_DEGRADED;
		snprintf(e->why, sizeof(e->why), "%llu of %llu deliveries in "
		    "the last hour were duplicates (a retry storm?)",
		    (unsigned long long)e->hour[CAT_DUPLICATE],
		    (unsigned long long)seen);
	} else if (lim->idle_hours > 0 &&
	    e->last_ok < now - 3600LL * lim->idle_hours &&
	    since > 0 && since < now - 3600LL * lim->idle_hours) {
		e->health = HEALTH_DEGRADED;
		snprintf(e->why, sizeof(e->why), "no success in %u hours",
		    lim->idle_hours);
	} else if (day == 0) {
		e->health = HEALTH_IDLE;
		snprintf(e->why, sizeof(e->why), "no delivery in the last "
		    "24 hours");
	} else {
		e->health = HEALTH_HEALTHY;
		snprintf(e->why, sizeof(e->why), "%llu deliver%s in the last "
		    "hour (%llu refused), none failed", (unsigned long long)hour,
		    hour == 1 ? "y" : "ies",
		    (unsigned long long)(e->hour[CAT_REFUSED] +
		    e->hour[CAT_CONFLICT]));
	}
}

/* Fill e from counters slot sd (NULL: nothing counted). */
static void
from_slot(struct stats_endpoint *e, const struct ctr_file *f, size_t slot,
    int64_t now)
{
	const struct ctr_slot_data	*sd = slot < CTR_SLOTS ?
					    &f->slots[slot] : NULL;
	uint64_t			 min = (uint64_t)now / 60,
					 hr = (uint64_t)now / 3600;
	int				 k;

	if (sd == NULL)
		return;
	for (k = 0; k < HOOK__MAX; k++)
		e->out[k] = sd->out[k];
	for (k = 0; k < CAT__MAX; k++) {
		e->total[k] = counters_total(sd, (enum ctr_cat)k);
		e->hour[k] = counters_window(sd, sd->minutes, CTR_MINUTES,
		    min, 60, (enum ctr_cat)k);
		e->day[k] = counters_window(sd, sd->hours, CTR_HOURS, hr, 24,
		    (enum ctr_cat)k);
		counters_series(sd, sd->hours, CTR_HOURS, hr, (enum ctr_cat)k,
		    e->series[k]);
	}
	memcpy(e->lat, sd->lat, sizeof(e->lat));
	e->lat_sum_us = sd->lat_sum_us;
	e->last_ok = sd->last_ok;
	e->last_error = sd->last_error;
	e->last_error_outcome = sd->last_error_outcome < HOOK__MAX ?
	    (enum hook_err)sd->last_error_outcome : HOOK_ESYSTEM;
	counters_last_fail(f, slot, &e->last_fail);
}

/* The slot named name in f, or CTR_SLOTS. */
static size_t
find_slot(const struct ctr_file *f, const char *name)
{
	size_t	 i;

	if (*name == '\0')
		return 0;
	for (i = 1; i < CTR_SLOTS; i++)
		if (f->slots[i].state == 2 &&
		    strncmp(f->slots[i].name, name, CTR_NAME) == 0)
			return i;
	return CTR_SLOTS;
}

/* The ring of the last failures, newest first, named by endpoint. */
static void
recent(struct stats *s, const struct ctr_file *f)
{
	const struct ctr_failure	*r;
	uint64_t			 n = f->fail_next, i;
	struct stats_failure		*o;

	for (i = 0; i < CTR_FAILS && i < n; i++) {
		r = &f->fails[(n - 1 - i) % CTR_FAILS].f;
		if (f->fails[(n - 1 - i) % CTR_FAILS].seq & 1 || r->at == 0)
			continue;
		o = &s->recent[s->nrecent++];
		o->f = *r;
		o->f.why[sizeof(o->f.why) - 1] = '\0';
		if (r->slot == 0 || r->slot >= CTR_SLOTS)
			snprintf(o->endpoint, sizeof(o->endpoint), "(none)");
		else
			snprintf(o->endpoint, sizeof(o->endpoint), "%.*s",
			    CTR_NAME - 1, f->slots[r->slot].name);
	}
}

/* outbox_topics()'s callback: one (topic, status) into s->outbox. */
static void
topic_row(void *arg, const char *topic, const char *status, long long rows,
    long long oldest)
{
	struct stats_outbox	*o = arg;
	struct stats_topic	*t, *nt;
	struct outbox_target	 tg;
	char			 err[256];

	if (topic == NULL || status == NULL)
		return;
	if (o->n == 0 || strcmp(o->t[o->n - 1].topic, topic) != 0) {
		if ((nt = reallocarray(o->t, o->n + 1, sizeof(*nt))) == NULL)
			return;
		o->t = nt;
		t = &o->t[o->n++];
		memset(t, 0, sizeof(*t));
		snprintf(t->topic, sizeof(t->topic), "%s", topic);
		t->target = conf_outbox_target(topic, NULL, NULL, &tg, err,
		    sizeof(err)) == 0 ? (int)tg.kind : OUTBOX_NONE;
	}
	t = &o->t[o->n - 1];
	if (strcmp(status, "pending") == 0) {
		t->pending += rows;
		t->oldest = oldest;
		o->pending += rows;
		if (o->oldest == 0 || oldest < o->oldest)
			o->oldest = oldest;
	} else if (strcmp(status, "delivered") == 0) {
		t->delivered += rows;
		o->delivered += rows;
	} else {
		t->dead += rows;
		o->dead += rows;
	}
}

/* Count the outbox's rows and judge them (observe/stats.h). */
static void
outbox_judge(struct stats *s, struct store *st,
    const struct stats_limits *lim)
{
	struct stats_outbox	*o = &s->outbox;
	char			 err[300];
	long long		 age;

	if (st == NULL || s->store_err[0] != '\0')
		return;
	if (outbox_topics(st, topic_row, o, err, sizeof(err)) == -1) {
		snprintf(s->store_err, sizeof(s->store_err), "outbox: %.280s",
		    err);
		return;
	}
	o->counted = 1;
	age = o->oldest > 0 ? s->now - o->oldest : 0;
	if (o->dead > 0) {
		o->health = HEALTH_FAILING;
		snprintf(o->why, sizeof(o->why), "%lld dead row%s: see oncehook "
		    "list --outbox --status dead; oncehook deliver "
		    "--retry-dead", o->dead, o->dead == 1 ? "" : "s");
	} else if (o->pending > 0 && age >= (long long)lim->outbox_crit) {
		o->health = HEALTH_FAILING;
		snprintf(o->why, sizeof(o->why), "a row pending for %lld s: "
		    "undeliverable (is oncehook deliver running? does its "
		    "topic have a target? is the receiver up?)", age);
	} else if (o->pending > 0 && age >= (long long)lim->outbox_warn) {
		o->health = HEALTH_DEGRADED;
		snprintf(o->why, sizeof(o->why), "a row pending for %lld s "
		    "(is oncehook deliver running?)", age);
	} else if (o->pending + o->delivered > 0) {
		o->health = HEALTH_HEALTHY;
		snprintf(o->why, sizeof(o->why), "%lld pending, none late",
		    o->pending);
	} else {
		o->health = HEALTH_IDLE;
		snprintf(o->why, sizeof(o->why), "no row");
	}
}

static void
verdict(struct stats *s)
{
	const struct stats_endpoint	*e, *worst = NULL;
	size_t				 i, bad = 0;

	s->worst = HEALTH_IDLE;
	for (i = 0; i < s->nep; i++) {
		e = &s->ep[i];
		if (e->health > s->worst) {
			s->worst = e->health;
			worst = e;
		}
		if (e->health >= HEALTH_DEGRADED)
			bad++;
	}
	if (s->store_err[0] != '\0') {
		s->code = 2;
		snprintf(s->verdict, sizeof(s->verdict), "CRITICAL: the "
		    "database: %s", s->store_err);
	} else if (s->outbox.health >= HEALTH_DEGRADED &&
	    s->outbox.health > s->worst) {
		s->worst = s->outbox.health;
		s->code = s->worst == HEALTH_FAILING ? 2 : 1;
		snprintf(s->verdict, sizeof(s->verdict), "%s: outbox %s: %s%s",
		    s->code == 2 ? "CRITICAL" : "WARNING",
		    stats_health_name(s->outbox.health), s->outbox.why,
		    bad > 0 ? " (and endpoints)" : "");
	} else if (worst != NULL && s->worst >= HEALTH_DEGRADED) {
		s->code = s->worst == HEALTH_FAILING ? 2 : 1;
		snprintf(s->verdict, sizeof(s->verdict), "%s: %s %s: %s%s",
		    s->code == 2 ? "CRITICAL" : "WARNING", worst->name,
		    stats_health_name(worst->health), worst->why,
		    bad > 1 ? " (and others)" : "");
	} else {
		s->code = 0;
		snprintf(s->verdict, sizeof(s->verdict), "OK: %zu endpoint%s, "
		    "none failing or degraded%s", s->nep,
		    s->nep == 1 ? "" : "s", s->counting_nofile ?
		    " (nothing is counted: ONCEHOOK_COUNTERS_FILE is unset)" :
		    s->counting_off ? " (counting is off: ONCEHOOK_COUNTERS=off)" :
		    "");
	}
}

int
stats_gather(const struct conf *cf, struct store *st, const char *store_err,
    int64_t now,
    const struct stats_limits *lim, const char *only, struct stats *s)
{
	struct ctr_file		*f;
	struct store_counts	*rows = NULL;
	struct stats_endpoint	*e;
	const struct store_counts none = { -1, -1, -1, -1, -1, -1, -1, -1 };
	size_t			 i, slot, n = 0;
	int			 full;

	memset(s, 0, sizeof(*s));
	s->now = now;
	s->db = cf->db;
	s->db_bytes = cf->my == NULL ? file_size(cf->db, "") : -1;
	s->wal_bytes = cf->my == NULL ? file_size(cf->db, "-wal") : -1;
	if ((f = malloc(sizeof(*f))) == NULL ||
	    (s->ep = calloc(cf->nendpoints + 1, sizeof(*s->ep))) == NULL ||
	    (rows = calloc(cf->nendpoints + 1, sizeof(*rows))) == NULL) {
		free(f);
		free(rows);
		stats_clear(s);
		snprintf(s->verdict, sizeof(s->verdict), "out of memory");
		return -1;
	}
	if (!cf->counters) {
		memset(f, 0, sizeof(*f));
		s->counting_off = 1;
		snprintf(s->counters_err, sizeof(s->counters_err), "counting "
		    "is off (ONCEHOOK_COUNTERS=off): nothing below is counted");
	} else if (cf->counters_file == NULL) {
		memset(f, 0, sizeof(*f));
		s->counting_off = s->counting_nofile = 1;
		snprintf(s->counters_err, sizeof(s->counters_err), "nothing "
		    "is counted: a MariaDB/MySQL store counts in the file "
		    "ONCEHOOK_COUNTERS_FILE names, and it is unset");
	} else if (counters_read(cf->counters_file, f, s->counters_err,
	    sizeof(s->counters_err)) == 0)
		s->since = f->created;
	for (i = 1, full = 1; i < CTR_SLOTS; i++)
		full &= f->slots[i].state == 2;
	if (st == NULL && store_err != NULL)
		snprintf(s->store_err, sizeof(s->store_err), "%s", store_err);
	else if (st != NULL)
		(void)store_rows(st, now, rows, s->store_err,
		    sizeof(s->store_err));
	for (i = 0; i < cf->nendpoints; i++) {
		if (only != NULL && strcmp(cf->endpoints[i].name, only) != 0)
			continue;
		e = &s->ep[n++];
		snprintf(e->name, sizeof(e->name), "%s",
		    cf->endpoints[i].name);
		e->scheme = cf->endpoints[i].scheme->name;
		e->rows = rows[i];
		if (st == NULL || s->store_err[0] != '\0')
			e->rows = none;
		slot = find_slot(f, e->name);
		e->uncounted = slot == CTR_SLOTS && full;
		from_slot(e, f, slot, now);
		judge(e, lim, now, s->since);
	}
	s->nep = n;
	e = &s->unrouted;
	snprintf(e->name, sizeof(e->name), "(none)");
	e->rows = none;
	from_slot(e, f, 0, now);
	snprintf(e->why, sizeof(e->why), "requests that named no endpoint, "
	    "never judged");
	if (only != NULL && n == 0) {
		snprintf(s->verdict, sizeof(s->verdict), "no endpoint named "
		    "%s", only);
		free(f);
		free(rows);
		stats_clear(s);
		return -1;
	}
	recent(s, f);
	if (only == NULL)
		outbox_judge(s, st, lim);
	verdict(s);
	free(f);
	free(rows);
	return 0;
}

void
stats_clear(struct stats *s)
{
	free(s->outbox.t);
	s->outbox.t = NULL;
	s->outbox.n = 0;
	free(s->ep);
	s->ep = NULL;
	s->nep = 0;
}
