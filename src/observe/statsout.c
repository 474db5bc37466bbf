/* SPDX-License-Identifier: MIT */
/*
 * oncehook: a struct stats written out as a table for a terminal, as
 * JSON (jansson) and as Prometheus text exposition format 0.0.4.  The
 * HTML page is observe/page.c's.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "conf.h"
#include "front/resp.h"
#include "lib/log.h"
#include "observe/counters.h"
#include "observe/stats.h"

static const char *const cat_names[CAT__MAX] = {
	"processed", "duplicates", "conflicts", "refused", "failed"
};

/* Unix seconds as UTC ISO 8601, or "never". */
/* Unix seconds as UTC ISO 8601, or "never". */
static const char *
when(int64_t t, char *buf, size_t sz)
{
	return stats_when(t, 1, buf, sz);
}

static uint64_t
sum(const uint64_t *v)
{
	uint64_t	 n = 0;
	int		 k;

	for (k = 0; k < CAT__MAX; k++)
		n += v[k];
	return n;
}

/* The dedup hit rate in percent, or -1 with nothing to rate. */
static double
dedup_rate(const struct stats_endpoint *e)
{
	uint64_t	 d = e->total[CAT_DUPLICATE],
			 n = d + e->total[CAT_PROCESSED];

	return n == 0 ? -1 : 100.0 * (double)d / (double)n;
}

/* The upper bound of the bucket holding quantile q, microseconds. */
static uint64_t
quantile_us(const struct stats_endpoint *e, double q)
{
	uint64_t	 n = 0, c = 0;
	int		 i;

	for (i = 0; i < CTR_LAT; i++)
		n += e->lat[i];
	if (n == 0)
		return 0;
	for (i = 0; i < CTR_LAT; i++)
		if ((c += e->lat[i]) >= (uint64_t)((double)n * q + 0.999999))
			break;
	return i < CTR_LAT ? ctr_lat_us[i] : UINT64_MAX;
}

static void
size_text(long long b, char *buf, size_t sz)
{
	if (b < 0)
		snprintf(buf, sz, "-");
	else if (b < 1024 * 1024)
		snprintf(buf, sz, "%.1f KiB", (double)b / 1024);
	else
		snprintf(buf, sz, "%.1f MiB", (double)b / (1024 * 1024));
}

static void
row_text(FILE *o, const struct stats_endpoint *e, int w)
{
	char	 rate[16];
	double	 r = dedup_rate(e);

	if (r < 0)
		snprintf(rate, sizeof(rate), "-");
	else
		snprintf(rate, sizeof(rate), "%.1f%%", r);
	fprintf(o, "%-*s %-9s %6llu %7llu %10llu %10llu %6s %9llu %8llu "
	    "%7llu\n", w, e->name, e->scheme != NULL ?
	    stats_health_name(e->health) : "-",
	    (unsigned long long)sum(e->hour), (unsigned long long)sum(e->day),
	    (unsigned long long)e->total[CAT_PROCESSED],
	    (unsigned long long)e->total[CAT_DUPLICATE], rate,
	    (unsigned long long)e->total[CAT_CONFLICT],
	    (unsigned long long)e->total[CAT_REFUSED],
	    (unsigned long long)e->total[CAT_FAILED]);
}

/* One line: the outcomes of category cat counted for e, or none. */
static void
by_reason(FILE *o, const struct stats_endpoint *e, const char *what,
    enum ctr_cat cat)
{
	const char	*sep = "";
	int		 i;

	fprintf(o, "  %-13s", what);
	for (i = 0; i < HOOK__MAX; i++)
		if (counters_cat((enum hook_err)i) == (int)cat && e->out[i] > 0) {
			fprintf(o, "%s %s %llu", sep,
			    resp_outcome((enum hook_err)i),
			    (unsigned long long)e->out[i]);
			sep = ",";
		}
	fprintf(o, "%s\n", *sep ? "" : " none");
}

static void
detail_text(FILE *o, const struct stats_endpoint *e, int64_t now)
{
	char		 t[32];
	uint64_t	 us;

	if (e->scheme != NULL)
		fprintf(o, "\n%s (%s): %s (%s)\n", e->name, e->scheme,
		    stats_health_name(e->health), e->why);
	else
		fprintf(o, "\n%s: %s\n", e->name, e->why);
	fprintf(o, "  last success  %s\n", when(e->last_ok, t, sizeof(t)));
	fprintf(o, "  last failure  %s", when(e->last_fail.at, t, sizeof(t)));
	if (e->last_fail.at > 0)
		fprintf(o, " %s%s%s", resp_outcome((enum hook_err)
		    e->last_fail.outcome), e->last_fail.why[0] ? ": " : "",
		    e->last_fail.why);	/* escaped when counted */
	fputc('\n', o);
	by_reason(o, e, "refused", CAT_REFUSED);
	by_reason(o, e, "failed", CAT_FAILED);
	if (e->out[HOOK_HANDSHAKE] > 0)
		fprintf(o, "  handshakes    %llu (answered, never stored)\n",
		    (unsigned long long)e->out[HOOK_HANDSHAKE]);
	if (e->rows.events >= 0)
		fprintf(o, "  stored        %lld events: %lld processed, %lld "
		    "received, %lld failed, %lld dead; %lld conflicts; %lld "
		    "past retention\n", e->rows.events, e->rows.processed,
		    e->rows.received, e->rows.failed, e->rows.dead,
		    e->rows.conflicts, e->rows.expired);
	if ((us = quantile_us(e, 0.5)) > 0)
		fprintf(o, "  latency       median <= %.1f ms, 99%% <= %.1f ms "
		    "(bucket bounds)\n", (double)us / 1000,
		    quantile_us(e, 0.99) == UINT64_MAX ? 1e9 :
		    (double)quantile_us(e, 0.99) / 1000);
	(void)now;
}

static const char *const target_names[] = {
	[OUTBOX_NONE] = "none here", [OUTBOX_COMMAND] = "command",
	[OUTBOX_URL] = "url",
};

/* The outbox, by topic; nothing if it has no row. */
static void
outbox_text(FILE *o, const struct stats_outbox *b, int64_t now)
{
	char	 tp[300];
	size_t	 i;

	if (!b->counted || b->n == 0)
		return;
	fprintf(o, "\noutbox: %s (%s): %lld pending, %lld delivered, %lld "
	    "dead\n", stats_health_name(b->health), b->why, b->pending,
	    b->delivered, b->dead);
	fprintf(o, "  %-32s %-9s %8s %9s %5s %s\n", "TOPIC", "TARGET",
	    "PENDING", "DELIVERED", "DEAD", "OLDEST PENDING");
	for (i = 0; i < b->n; i++) {
		fprintf(o, "  %-32s %-9s %8lld %9lld %5lld ", log_escape(tp,
		    sizeof(tp), b->t[i].topic), target_names[b->t[i].target],
		    b->t[i].pending, b->t[i].delivered, b->t[i].dead);
		if (b->t[i].oldest > 0)
			fprintf(o, "%lld s ago\n", (long long)(now -
			    b->t[i].oldest));
		else
			fprintf(o, "-\n");
	}
}

void
stats_write_text(FILE *o, const struct stats *s)
{
	char	 t[32], a[32], b[32];
	size_t	 i;
	int	 w;

	fprintf(o, "oncehook stats at %s", when(s->now, t, sizeof(t)));
	if (s->since > 0)
		fprintf(o, ", counting since %s", when(s->since, t, sizeof(t)));
	fputc('\n', o);
	if (s->counters_err[0] != '\0')
		fprintf(o, "counters: %s\n", s->counters_err);
	size_text(s->db_bytes, a, sizeof(a));
	size_text(s->wal_bytes, b, sizeof(b));
	if (s->db_bytes < 0 && s->wal_bytes < 0)
		fprintf(o, "database %s\n", s->db);	/* a server's */
	else
		fprintf(o, "database %s: %s, WAL %s\n", s->db, a, b);
	if (s->store_err[0] != '\0')
		fprintf(o, "database rows: %s\n", s->store_err);
	for (i = 0, w = 16; i < s->nep; i++)
		if ((int)strlen(s->ep[i].name) > w)
			w = (int)strlen(s->ep[i].name);
	fprintf(o, "\n%-*s %-9s %6s %7s %10s %10s %6s %9s %8s %7s\n", w,
	    "ENDPOINT", "HEALTH", "HOUR", "DAY", "PROCESSED", "DUPLICATES",
	    "DEDUP", "CONFLICTS", "REFUSED", "FAILED");
	for (i = 0; i < s->nep; i++)
		row_text(o, &s->ep[i], w);
	row_text(o, &s->unrouted, w);
	for (i = 0; i < s->nep; i++)
		detail_text(o, &s->ep[i], s->now);
	if (sum(s->unrouted.total) > 0)
		detail_text(o, &s->unrouted, s->now);
	outbox_text(o, &s->outbox, s->now);
	fprintf(o, "\n%s\n", s->verdict);
}

/* A JSON string of s; bytes that are not UTF-8 written escaped. */
static json_t *
jstr(const char *s)
{
	char	 buf[1200];
	json_t	*j;

	if ((j = json_string(s)) != NULL)
		return j;
	return json_string(log_escape(buf, sizeof(buf), s));
}

/* JSON: one object per endpoint. */
static json_t *
endpoint_json(const struct stats_endpoint *e)
{
	json_t		*j, *out, *cat, *hr, *dy, *lat, *rows, *series;
	char		 t[32], le[32];
	double		 r = dedup_rate(e);
	int		 i, k, h;

	j = json_object();
	json_object_set_new(j, "name", json_string(e->name));
	if (e->scheme != NULL) {
		json_object_set_new(j, "scheme", json_string(e->scheme));
		json_object_set_new(j, "health",
		    json_string(stats_health_name(e->health)));
	}
	json_object_set_new(j, "health_reason", json_string(e->why));
	out = json_object();
	for (i = 0; i < HOOK__MAX; i++)
		if (counters_cat((enum hook_err)i) != -1 ||
		    i == HOOK_HANDSHAKE)
			json_object_set_new(out,
			    resp_outcome((enum hook_err)i),
			    json_integer((json_int_t)e->out[i]));
	json_object_set_new(j, "outcomes", out);
	cat = json_object();
	hr = json_object();
	dy = json_object();
	series = json_object();
	for (k = 0; k < CAT__MAX; k++) {
		json_t	*a = json_array();

		json_object_set_new(cat, cat_names[k],
		    json_integer((json_int_t)e->total[k]));
		json_object_set_new(hr, cat_names[k],
		    json_integer((json_int_t)e->hour[k]));
		json_object_set_new(dy, cat_names[k],
		    json_integer((json_int_t)e->day[k]));
		for (h = 0; h < CTR_HOURS; h++)
			json_array_append_new(a,
			    json_integer((json_int_t)e->series[k][h]));
		json_object_set_new(series, cat_names[k], a);
	}
	json_object_set_new(j, "total", cat);
	json_object_set_new(j, "last_hour", hr);
	json_object_set_new(j, "last_day", dy);
	json_object_set_new(j, "hourly", series);
	json_object_set_new(j, "dedup_rate", r < 0 ? json_null() :
	    json_real(r / 100));
	json_object_set_new(j, "last_success", e->last_ok > 0 ?
	    json_string(when(e->last_ok, t, sizeof(t))) : json_null());
	if (e->last_fail.at > 0)
		json_object_set_new(j, "last_failure", json_pack("{s:s,s:s,s:s}",
		    "at", when(e->last_fail.at, t, sizeof(t)), "outcome",
		    resp_outcome((enum hook_err)e->last_fail.outcome),
		    "reason", e->last_fail.why));
	else
		json_object_set_new(j, "last_failure", json_null());
	lat = json_object();
	for (i = 0; i < CTR_LAT; i++) {
		if (i == CTR_LAT - 1)
			snprintf(le, sizeof(le), "+Inf");
		else
			snprintf(le, sizeof(le), "%g",
			    (double)ctr_lat_us[i] / 1e6);
		json_object_set_new(lat, le,
		    json_integer((json_int_t)e->lat[i]));
	}
	json_object_set_new(j, "latency_seconds", json_pack("{s:o,s:f}",
	    "buckets", lat, "sum", (double)e->lat_sum_us / 1e6));
	if (e->rows.events >= 0) {
		rows = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "events",
		    (json_int_t)e->rows.events, "processed",
		    (json_int_t)e->rows.processed, "received",
		    (json_int_t)e->rows.received, "failed",
		    (json_int_t)e->rows.failed, "dead",
		    (json_int_t)e->rows.dead, "conflicts",
		    (json_int_t)e->rows.conflicts, "past_retention",
		    (json_int_t)e->rows.expired);
		json_object_set_new(j, "stored", rows);
	}
	return j;
}

static json_t *
outbox_json(const struct stats_outbox *b, int64_t now)
{
	json_t	*t = json_array();
	size_t	 i;

	for (i = 0; i < b->n; i++)
		json_array_append_new(t, json_pack("{s:o,s:s,s:I,s:I,s:I,s:I}",
		    "topic", jstr(b->t[i].topic), "target",
		    b->t[i].target == OUTBOX_NONE ? "none" :
		    target_names[b->t[i].target], "pending",
		    (json_int_t)b->t[i].pending, "delivered",
		    (json_int_t)b->t[i].delivered, "dead",
		    (json_int_t)b->t[i].dead, "oldest_pending_seconds",
		    (json_int_t)(b->t[i].oldest > 0 ? now - b->t[i].oldest :
		    0)));
	return json_pack("{s:s,s:o,s:I,s:I,s:I,s:I,s:o}", "health",
	    stats_health_name(b->health), "why", jstr(b->why), "pending",
	    (json_int_t)b->pending, "delivered", (json_int_t)b->delivered,
	    "dead", (json_int_t)b->dead, "oldest_pending_seconds",
	    (json_int_t)(b->oldest > 0 ? now - b->oldest : 0), "topics", t);
}

int
stats_write_json(FILE *o, const struct stats *s)
{
	json_t		*j, *eps, *rec;
	char		 t[32];
	size_t		 i;
	int		 rc;

	j = json_object();
	json_object_set_new(j, "now", json_string(when(s->now, t, sizeof(t))));
	json_object_set_new(j, "counting_since", s->since > 0 ?
	    json_string(when(s->since, t, sizeof(t))) : json_null());
	json_object_set_new(j, "status", json_string(s->code == 0 ? "ok" :
	    s->code == 1 ? "warning" : "critical"));
	json_object_set_new(j, "verdict", jstr(s->verdict));
	json_object_set_new(j, "database", json_pack("{s:o,s:I,s:I}",
	    "path", jstr(s->db), "bytes", (json_int_t)s->db_bytes,
	    "wal_bytes", (json_int_t)s->wal_bytes));
	json_object_set_new(j, "counting", json_boolean(!s->counting_off));
	if (s->counters_err[0] != '\0')
		json_object_set_new(j, "counters_error",
		    jstr(s->counters_err));
	if (s->store_err[0] != '\0')
		json_object_set_new(j, "database_error",
		    jstr(s->store_err));
	eps = json_array();
	for (i = 0; i < s->nep; i++)
		json_array_append_new(eps, endpoint_json(&s->ep[i]));
	json_object_set_new(j, "endpoints", eps);
	json_object_set_new(j, "unrouted", endpoint_json(&s->unrouted));
	rec = json_array();
	for (i = 0; i < s->nrecent; i++)
		json_array_append_new(rec, json_pack("{s:s,s:s,s:s,s:s}",
		    "at", when(s->recent[i].f.at, t, sizeof(t)), "endpoint",
		    s->recent[i].endpoint, "outcome",
		    resp_outcome((enum hook_err)s->recent[i].f.outcome),
		    "reason", s->recent[i].f.why));
	json_object_set_new(j, "recent_failures", rec);
	if (s->outbox.counted)
		json_object_set_new(j, "outbox", outbox_json(&s->outbox,
		    s->now));
	rc = json_dumpf(j, o, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	fputc('\n', o);
	json_decref(j);
	return rc;
}

/* Prometheus: a metric's HELP and TYPE lines. */
static void
head(FILE *o, const char *name, const char *type, const char *help)
{
	fprintf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A Prometheus label value: \\, " and newline escaped. */
static const char *
label(const char *v, char *buf, size_t sz)
{
	size_t	 o = 0;

	for (; *v != '\0' && o + 3 < sz; v++) {
		if (*v == '\\' || *v == '"') {
			buf[o++] = '\\';
			buf[o++] = *v;
		} else if (*v == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else
			buf[o++] = *v;
	}
	buf[o] = '\0';
	return buf;
}

static void
outbox_prom(FILE *o, const struct stats_outbox *b, int64_t now)
{
	static const char *const st[] = { "pending", "delivered", "dead" };
	long long	 v[3];
	char		 tp[300];
	size_t		 i;
	int		 k, h;

	head(o, "oncehook_outbox_rows", "gauge",
	    "Outbox rows, by topic and status.");
	for (i = 0; i < b->n; i++) {
		v[0] = b->t[i].pending;
		v[1] = b->t[i].delivered;
		v[2] = b->t[i].dead;
		for (k = 0; k < 3; k++)
			fprintf(o, "oncehook_outbox_rows{topic=\"%s\",status="
			    "\"%s\"} %lld\n", label(b->t[i].topic, tp,
			    sizeof(tp)), st[k], v[k]);
	}
	head(o, "oncehook_outbox_oldest_pending_seconds", "gauge",
	    "Age of the oldest pending outbox row (0: none).");
	fprintf(o, "oncehook_outbox_oldest_pending_seconds %lld\n",
	    b->oldest > 0 ? (long long)(now - b->oldest) : 0LL);
	head(o, "oncehook_outbox_health", "gauge",
	    "1 for the outbox's health now, 0 for the others.");
	for (h = 0; h < HEALTH__MAX; h++)
		fprintf(o, "oncehook_outbox_health{health=\"%s\"} %d\n",
		    stats_health_name((enum stats_health)h),
		    b->health == (enum stats_health)h);
}

void
stats_write_prom(FILE *o, const struct stats *s)
{
	const struct stats_endpoint	*e;
	uint64_t			 c;
	size_t				 i, n = s->nep + 1;
	int				 k, h;

#define EACH(e)	for (i = 0; i < n && ((e) = i < s->nep ? &s->ep[i] : \
		    &s->unrouted) != NULL; i++)
	head(o, "oncehook_requests_total", "counter",
	    "Requests answered, by endpoint (\"(none)\": none named) and outcome.");
	EACH(e)
		for (k = 0; k < HOOK__MAX; k++)
			if (counters_cat((enum hook_err)k) != -1 ||
			    k == HOOK_HANDSHAKE)
				fprintf(o, "oncehook_requests_total{endpoint="
				    "\"%s\",outcome=\"%s\"} %llu\n", e->name,
				    resp_outcome((enum hook_err)k),
				    (unsigned long long)e->out[k]);
	head(o, "oncehook_request_duration_seconds", "histogram",
	    "Time from the request's start to its answer.");
	EACH(e) {
		c = 0;
		for (k = 0; k < CTR_LAT; k++) {
			c += e->lat[k];
			if (k == CTR_LAT - 1)
				fprintf(o, "oncehook_request_duration_seconds_"
				    "bucket{endpoint=\"%s\",le=\"+Inf\"} %llu\n",
				    e->name, (unsigned long long)c);
			else
				fprintf(o, "oncehook_request_duration_seconds_"
				    "bucket{endpoint=\"%s\",le=\"%g\"} %llu\n",
				    e->name, (double)ctr_lat_us[k] / 1e6,
				    (unsigned long long)c);
		}
		fprintf(o, "oncehook_request_duration_seconds_sum{endpoint="
		    "\"%s\"} %.6f\n", e->name, (double)e->lat_sum_us / 1e6);
		fprintf(o, "oncehook_request_duration_seconds_count{endpoint="
		    "\"%s\"} %llu\n", e->name, (unsigned long long)c);
	}
	head(o, "oncehook_last_success_timestamp_seconds", "gauge",
	    "When the endpoint last answered a delivery 200 (0: never).");
	for (i = 0; i < s->nep; i++)
		fprintf(o, "oncehook_last_success_timestamp_seconds{endpoint="
		    "\"%s\"} %lld\n", s->ep[i].name,
		    (long long)s->ep[i].last_ok);
	head(o, "oncehook_last_failure_timestamp_seconds", "gauge",
	    "When the endpoint last refused or failed a request (0: never).");
	for (i = 0; i < s->nep; i++)
		fprintf(o, "oncehook_last_failure_timestamp_seconds{endpoint="
		    "\"%s\"} %lld\n", s->ep[i].name,
		    (long long)s->ep[i].last_fail.at);
	head(o, "oncehook_endpoint_health", "gauge",
	    "1 for the endpoint's health now (idle, healthy, degraded, "
	    "failing), 0 for the others.");
	for (i = 0; i < s->nep; i++)
		for (h = 0; h < HEALTH__MAX; h++)
			fprintf(o, "oncehook_endpoint_health{endpoint=\"%s\","
			    "health=\"%s\"} %d\n", s->ep[i].name,
			    stats_health_name((enum stats_health)h),
			    s->ep[i].health == (enum stats_health)h);
	if (s->store_err[0] == '\0') {
		head(o, "oncehook_events", "gauge",
		    "Events stored in the database, by endpoint and status.");
		for (i = 0; i < s->nep; i++) {
			e = &s->ep[i];
			fprintf(o, "oncehook_events{endpoint=\"%s\",status="
			    "\"processed\"} %lld\n", e->name,
			    e->rows.processed);
			fprintf(o, "oncehook_events{endpoint=\"%s\",status="
			    "\"received\"} %lld\n", e->name, e->rows.received);
			fprintf(o, "oncehook_events{endpoint=\"%s\",status="
			    "\"failed\"} %lld\n", e->name, e->rows.failed);
			fprintf(o, "oncehook_events{endpoint=\"%s\",status="
			    "\"dead\"} %lld\n", e->name, e->rows.dead);
		}
		head(o, "oncehook_events_past_retention", "gauge",
		    "Events past their retention, left for prune.");
		for (i = 0; i < s->nep; i++)
			fprintf(o, "oncehook_events_past_retention{endpoint="
			    "\"%s\"} %lld\n", s->ep[i].name,
			    s->ep[i].rows.expired);
	}
	if (s->outbox.counted)
		outbox_prom(o, &s->outbox, s->now);
	/* A file's: a server's database has none to measure here. */
	if (s->db_bytes >= 0 || s->wal_bytes >= 0) {
		head(o, "oncehook_database_size_bytes", "gauge",
		    "Size of the database file and of its write-ahead log.");
		fprintf(o, "oncehook_database_size_bytes{file=\"db\"} "
		    "%lld\n", s->db_bytes < 0 ? 0 : s->db_bytes);
		fprintf(o, "oncehook_database_size_bytes{file=\"wal\"} "
		    "%lld\n", s->wal_bytes < 0 ? 0 : s->wal_bytes);
	}
	head(o, "oncehook_counters_since_timestamp_seconds", "gauge",
	    "When the counters started (0: nothing counted yet).");
	fprintf(o, "oncehook_counters_since_timestamp_seconds %lld\n",
	    (long long)s->since);
#undef EACH
}
