/* SPDX-License-Identifier: MIT */
/*
 * oncehook: what `oncehook stats` and the status endpoint show (SPEC
 * section 10), gathered once into a struct stats and then written out
 * as a table for a terminal, JSON, Prometheus text or an HTML page.
 *
 * Gathering reads the counters file (observe/counters.h) and, if a store is
 * given, counts rows in the database; it never writes either.
 *
 * Health, per endpoint, over the last hour (the thresholds are a struct
 * stats_limits; the defaults are documented in docs/operations.md):
 * - failing: failed (parked) or dead events stored; or a 5xx (an action failed, storage unavailable, a
 *   misconfiguration) in the last hour, and no success since;
 * - degraded: accepted (received) events due more than 10 minutes ago
 *   (nothing runs oncehook work); a 5xx in the last hour with a success
 *   after it; or at
 *   least `refused` refusals making at least `refused_pct` percent of
 *   the deliveries (a wrong secret, a clock off); or a key conflict; or
 *   at least `dup_min` deliveries of which at least `dup_pct` percent
 *   were duplicates (a retry storm); or, if `idle_hours` is set, no
 *   success in that many hours;
 * - idle: no delivery in the last 24 hours;
 * - healthy: none of these.
 * Requests that named no endpoint (shown as "(none)") are shown, never judged: a
 * scanner's 404s are not the site's problem.
 *
 * The outbox is judged beside the endpoints, from the database alone
 * (the status endpoint's process may not have the deliverer's
 * variables): failing if a row is dead, or a row has been pending for
 * `outbox_crit` seconds (undeliverable: no target, a receiver down, no
 * deliver running); degraded if for `outbox_warn` seconds; else
 * healthy, or idle when it has no row.
 */
#ifndef ONCEHOOK_STATS_H
#define ONCEHOOK_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "hook.h"
#include "observe/counters.h"
#include "store/store.h"

struct conf;

enum stats_health {
	HEALTH_IDLE,
	HEALTH_HEALTHY,
	HEALTH_DEGRADED,
	HEALTH_FAILING,
	HEALTH__MAX
};

struct stats_limits {
	uint64_t	 refused;	/* refusals in the last hour ... */
	unsigned	 refused_pct;	/* ... and this share of deliveries */
	uint64_t	 dup_min;	/* deliveries in the last hour ... */
	unsigned	 dup_pct;	/* ... and this share duplicates */
	unsigned	 idle_hours;	/* no success for this long; 0: off */
	unsigned	 outbox_warn;	/* seconds a row may wait: degraded */
	unsigned	 outbox_crit;	/* ... failing */
};

/* The defaults: 10 and 50%, 100 and 90%, off, 600 s, 3600 s. */
extern const struct stats_limits	stats_limits_default;

struct stats_endpoint {
	char			 name[CTR_NAME];	/* "(none)": unrouted */
	const char		*scheme;	/* NULL for "-" */
	enum stats_health	 health;
	char			 why[256];	/* why that health */
	uint64_t		 out[HOOK__MAX];	/* by outcome */
	uint64_t		 total[CAT__MAX];
	uint64_t		 hour[CAT__MAX];	/* the last 60 min */
	uint64_t		 day[CAT__MAX];		/* the last 24 h */
	uint64_t		 series[CAT__MAX][CTR_HOURS]; /* per hour,
						   oldest first */
	uint64_t		 lat[CTR_LAT];
	uint64_t		 lat_sum_us;
	int64_t			 last_ok;
	int64_t			 last_error;
	enum hook_err		 last_error_outcome;
	struct ctr_failure	 last_fail;
	struct store_counts	 rows;	/* all -1: not counted */
	int			 uncounted;	/* no room in the counters */
};

/* The outbox's rows of one topic. */
struct stats_topic {
	char			 topic[132];
	long long		 pending, delivered, dead;
	long long		 oldest;	/* created_at of the oldest
						   pending; 0: none */
	int			 target;	/* enum outbox_kind, here */
};

struct stats_outbox {
	int			 counted;	/* 0: not read */
	struct stats_topic	*t;
	size_t			 n;
	long long		 pending, delivered, dead;
	long long		 oldest;	/* as above, over all */
	enum stats_health	 health;
	char			 why[256];
};

struct stats_failure {
	struct ctr_failure	 f;
	char			 endpoint[CTR_NAME];
};

struct stats {
	int64_t			 now;
	int64_t			 since;		/* counting since; 0: never */
	char			 counters_err[300]; /* "" if read */
	int			 counting_off;	/* ONCEHOOK_COUNTERS=off */
	int			 counting_nofile; /* ... for want of a file */
	char			 store_err[300];    /* "" if counted */
	const char		*db;
	long long		 db_bytes;	/* -1 if unknown */
	long long		 wal_bytes;
	struct stats_endpoint	*ep;		/* the endpoints shown */
	size_t			 nep;
	struct stats_endpoint	 unrouted;	/* "(none)": named none */
	struct stats_failure	 recent[CTR_FAILS]; /* newest first */
	size_t			 nrecent;
	struct stats_outbox	 outbox;
	enum stats_health	 worst;		/* over the endpoints */
	int			 code;		/* 0 ok, 1 warning, 2 critical */
	char			 verdict[512];	/* one line: why code */
};

/*
 * Gather everything for cf at time now: the counters file of cf->db,
 * and the database's rows through st (NULL: not counted; then
 * store_err, if not NULL, says why the database could not be opened,
 * which is critical).  only, if
 * not NULL, keeps one endpoint.  Returns 0, or -1 (out of memory, or
 * no endpoint named only: *s says why in verdict).  Release with
 * stats_clear().
 */
int	stats_gather(const struct conf *cf, struct store *st,
	    const char *store_err, int64_t now,
	    const struct stats_limits *lim, const char *only,
	    struct stats *s);
void	stats_clear(struct stats *);

/*
 * Unix seconds t as UTC into buf: ISO 8601 (iso), else as a person
 * reads it ("2026-11-25 09:21:22 UTC"); "never" for 0.  Returns buf.
 */
const char	*stats_when(int64_t t, int iso, char *buf, size_t sz);

/* The word for a health ("healthy", ...). */
const char	*stats_health_name(enum stats_health);

/* Write s out: a table for a person, JSON, Prometheus text 0.0.4. */
void	stats_write_text(FILE *, const struct stats *);
int	stats_write_json(FILE *, const struct stats *);
void	stats_write_prom(FILE *, const struct stats *);
/* One self-contained HTML page (observe/page.c). */
void	stats_write_html(FILE *, const struct stats *);

#endif
