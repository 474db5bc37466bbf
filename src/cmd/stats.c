/* SPDX-License-Identifier: MIT */
/*
 * oncehook: `oncehook stats`: counts, health, and a check for cron.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd/admin.h"
#include "cmd/common.h"
#include "conf.h"
#include "observe/stats.h"
#include "store/outbox.h"
#include "store/store.h"

static const char stats_usage[] =
"usage: oncehook stats [--endpoint NAME] [--json | --prometheus]\n"
"                      [--check [LIMITS]]\n"
"\n"
"What the counters (ONCEHOOK_DB-counters) and the database say: per\n"
"endpoint its health, deliveries in the last hour and day, processed,\n"
"duplicates and the dedup rate, key conflicts, refusals and failures by\n"
"reason, the last success and the last failure with its reason, stored\n"
"events; the outbox's rows by topic; the database and WAL sizes.\n"
"--json and --prometheus print the\n"
"same as the status endpoint.  --check prints one line and exits 0 (ok),\n"
"1 (warning: an endpoint or the outbox degraded) or 2 (critical: one\n"
"failing, or the database unreadable).  LIMITS (the defaults in brackets):\n"
"  --refused N      refusals in the last hour for a warning [10]\n"
"  --refused-pct P  ... if they are at least P% of deliveries [50]\n"
"  --storm N        deliveries in the last hour to judge duplicates [100]\n"
"  --storm-pct P    ... a warning if at least P% are duplicates [90]\n"
"  --idle H         a warning if an endpoint had no success in H hours\n"
"                   [off]\n"
"  --outbox-warn S  a warning if an outbox row is pending S seconds [600]\n"
"  --outbox-crit S  critical if one is pending S seconds [3600]; a dead\n"
"                   outbox row is always critical\n";


int
admin_stats(int argc, char **argv)
{
	static const struct {
		const char	*opt;
		long long	 max;
		size_t		 off;
		int		 wide;	/* uint64_t, else unsigned */
	} lims[] = {
		{ "--refused", 1LL << 40,
		    offsetof(struct stats_limits, refused), 1 },
		{ "--refused-pct", 100,
		    offsetof(struct stats_limits, refused_pct), 0 },
		{ "--storm", 1LL << 40,
		    offsetof(struct stats_limits, dup_min), 1 },
		{ "--storm-pct", 100,
		    offsetof(struct stats_limits, dup_pct), 0 },
		{ "--idle", 24 * 365,
		    offsetof(struct stats_limits, idle_hours), 0 },
		{ "--outbox-warn", 86400 * 30,
		    offsetof(struct stats_limits, outbox_warn), 0 },
		{ "--outbox-crit", 86400 * 30,
		    offsetof(struct stats_limits, outbox_crit), 0 },
	};
	struct stats_limits	 lim = stats_limits_default;
	struct conf		*cf;
	struct store		*st;
	struct stats		 s;
	const char		*only = NULL;
	char			 err[512];
	long long		 v;
	size_t			 k;
	int			 i, json = 0, prom = 0, check = 0, rc;

	if (cmd_helped(argc, argv, stats_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		for (k = 0; k < sizeof(lims) / sizeof(lims[0]); k++)
			if (strcmp(argv[i], lims[k].opt) == 0)
				break;
		if (k < sizeof(lims) / sizeof(lims[0]) && i + 1 < argc) {
			if ((v = cmd_number(argv[++i], lims[k].max)) < 0) {
				fprintf(stderr, "oncehook stats: %s: a whole "
				    "number from 0 to %lld\n", lims[k].opt,
				    lims[k].max);
				return 2;
			}
			if (lims[k].wide)
				*(uint64_t *)((char *)&lim + lims[k].off) =
				    (uint64_t)v;
			else
				*(unsigned *)((char *)&lim + lims[k].off) =
				    (unsigned)v;
		} else if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
			only = argv[++i];
		else if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--prometheus") == 0)
			prom = 1;
		else if (strcmp(argv[i], "--check") == 0)
			check = 1;
		else {
			fputs(stats_usage, stderr);
			return 2;
		}
	}
	if (json && prom) {
		fputs(stats_usage, stderr);
		return 2;
	}
	if ((cf = cmd_load("stats", CONF_NEEDS_DB)) == NULL)
		return check ? 2 : 1;
	if ((st = store_open(cf, 0, err, sizeof(err))) == NULL)
		fprintf(stderr, "oncehook stats: %s\n", err);
	if (stats_gather(cf, st, st == NULL ? err : NULL,
	    (int64_t)time(NULL), &lim, only, &s) == -1) {
		if (check)
			printf("CRITICAL: %s\n", s.verdict);
		fprintf(stderr, "oncehook stats: %s\n", s.verdict);
		store_close(st);
		conf_free(cf);
		return 2;
	}
	if (json)
		(void)stats_write_json(stdout, &s);
	else if (prom)
		stats_write_prom(stdout, &s);
	else if (check)
		printf("%s\n", s.verdict);
	else
		stats_write_text(stdout, &s);
	rc = check ? s.code : 0;
	stats_clear(&s);
	store_close(st);
	conf_free(cf);
	return rc;
}
