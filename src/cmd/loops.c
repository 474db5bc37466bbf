/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the commands that run until nothing is due: `work` (the
 * actions of deferred and failed events) and `deliver` (the outbox).
 */
#include "config.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd/admin.h"
#include "cmd/common.h"
#include "conf.h"
#include "outbox/deliver.h"
#include "store/outbox.h"
#include "store/store.h"
#include "store/work.h"

static const char work_usage[] =
"usage: oncehook work [--once] [--max-seconds N]\n"
"\n"
"Run the actions of due events that have not taken effect: received\n"
"(deferred mode, when the process that claimed one did not run it, as\n"
"under CGI) and failed ones whose next attempt is due (parked included),\n"
"oldest first, each exactly once: any number of work processes, replays\n"
"and live deliveries may run at the same time.  A failure counts an\n"
"attempt and waits (1 minute doubling to 6 hours, with jitter); at\n"
"ONCEHOOK_<NAME>_MAX_ATTEMPTS the event is dead.  One log line per event\n"
"on stderr.  --once: until none is due (cron, every minute); else\n"
"polling every second until --max-seconds have passed, or SIGTERM.  Exit\n"
"0 when nothing failed (nothing to do included), 1 when an event failed\n"
"or the database could not be used, 2 on a usage or configuration\n"
"error.\n";

static volatile sig_atomic_t	 work_stop;

static void
on_work_stop(int sig)
{
	(void)sig;
	work_stop = 1;
}

/*
 * work's and deliver's shared options: 1 if argv[*i] was --once or
 * --max-seconds N (*i moved past N), 0 if it is not one of them, -1 if
 * N is not a number from 1 to a year of seconds.
 */
static int
loop_option(int argc, char **argv, int *i, int *once, long long *max)
{
	if (strcmp(argv[*i], "--once") == 0) {
		*once = 1;
		return 1;
	}
	if (strcmp(argv[*i], "--max-seconds") != 0 || *i + 1 >= argc)
		return 0;
	*max = cmd_number(argv[++*i], 86400LL * 365);
	return *max < 1 ? -1 : 1;
}

/* SIGTERM and SIGINT end a loop (work_stop) after the item in hand. */
static void
catch_stop(void)
{
	struct sigaction	 sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_work_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

int
admin_work(int argc, char **argv)
{
	struct conf		*cf;
	long long		 max = 0;
	int			 i, once = 0, rc;

	if (cmd_helped(argc, argv, work_usage))
		return 0;
	for (i = 1; i < argc; i++)
		if (loop_option(argc, argv, &i, &once, &max) != 1) {
			fputs(work_usage, stderr);
			return 2;
		}
	if ((cf = cmd_load("work", CONF_NEEDS_DB)) == NULL)
		return 2;
	catch_stop();
	store_keep_actions(cf);
	rc = work_loop(cf, once, (long)max, 0, &work_stop);
	conf_free(cf);
	return rc;
}

static const char deliver_usage[] =
"usage: oncehook deliver [--once] [--max-seconds N] [--retry-dead]\n"
"                        [--retry-now]\n"
"\n"
"Send the outbox's due rows (what actions wrote into the outbox table)\n"
"to their targets, oldest first: ONCEHOOK_OUTBOX_<TOPIC>_COMMAND (run,\n"
"the payload on stdin, exit 0 = done) or ONCEHOOK_OUTBOX_<TOPIC>_URL\n"
"(POSTed, signed as a Standard Webhooks sender with\n"
"ONCEHOOK_OUTBOX_SECRET; a 2xx = done).  At least once, with a stable id\n"
"(webhook-id, ONCEHOOK_OUTBOX_ID) the receiver deduplicates on.  Each\n"
"attempt leases its row for ONCEHOOK_OUTBOX_TIMEOUT + 5 s: deliverers may\n"
"run side by side, and a row whose deliverer died is sent again after\n"
"that.  A failure waits ONCEHOOK_OUTBOX_BACKOFF seconds, doubling to 6\n"
"hours, with jitter; at ONCEHOOK_OUTBOX_MAX_ATTEMPTS the row is dead.\n"
"Rows of a topic without a target wait (oncehook check names them).  One\n"
"log line per attempt on stderr.  --once: until none is due (cron,\n"
"every minute); else polling every second until --max-seconds have\n"
"passed, or SIGTERM.  --retry-dead: dead rows are made pending again,\n"
"due now, with their attempts from 0; --retry-now: pending rows waiting\n"
"out a backoff are made due now (a receiver fixed).  Then, with --once\n"
"or --max-seconds, delivered; alone, nothing more.  Exit 0 when nothing\n"
"failed (nothing to do included), 1 when an attempt failed or the\n"
"database could not be used, 2 on a usage or configuration error.\n";

int
admin_deliver(int argc, char **argv)
{
	struct conf		*cf;
	struct store		*st;
	long long		 max = 0, n;
	char			 err[512];
	int			 i, r, once = 0, dead = 0, now = 0, rc;

	if (cmd_helped(argc, argv, deliver_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if ((r = loop_option(argc, argv, &i, &once, &max)) == 1)
			continue;
		if (r == 0 && strcmp(argv[i], "--retry-dead") == 0)
			dead = 1;
		else if (r == 0 && strcmp(argv[i], "--retry-now") == 0)
			now = 1;
		else {
			fputs(deliver_usage, stderr);
			return 2;
		}
	}
	if ((cf = cmd_load("deliver", CONF_NEEDS_DB)) == NULL)
		return 2;
	if (cf->outbox_err[0] != '\0') {
		fprintf(stderr, "oncehook deliver: %s\n", cf->outbox_err);
		conf_free(cf);
		return 2;
	}
	if (dead || now) {
		if ((st = store_open(cf, 0, err, sizeof(err))) == NULL ||
		    (n = outbox_retry(st, (long long)time(NULL), dead, now, err,
		    sizeof(err))) < 0) {
			fprintf(stderr, "oncehook deliver: %s\n", err);
			store_close(st);
			conf_free(cf);
			return 1;
		}
		store_close(st);
		printf("%lld %soutbox row%s made due now\n", n, dead && !now ?
		    "dead " : now && !dead ? "waiting " : "", n == 1 ? "" :
		    "s");
		fflush(stdout);
		if (!once && max == 0) {
			conf_free(cf);
			return 0;
		}
	}
	catch_stop();
	rc = deliver_loop(cf, once, (long)max, &work_stop);
	conf_free(cf);
	return rc;
}
