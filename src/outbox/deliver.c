/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the deliver loop (see outbox/deliver.h).  At least once is the
 * store's (a row stays pending until an attempt succeeds and says so);
 * the stable id is the row's; this file picks the target, sends, and
 * writes down what happened.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "lib/io.h"
#include "lib/log.h"
#include "outbox/deliver.h"
#include "outbox/send.h"
#include "store/outbox.h"
#include "store/store.h"

#define DELIVER_POLL_MS		1000	/* idle: look again after */
#define DELIVER_BUSY_MS		50	/* busy: try again after */
#define DELIVER_BUSY_MAX_MS	10000	/* busy this long: an error */
#define DELIVER_MARGIN		5	/* lease beyond the timeout, s */

long
deliver_lease(const struct conf *cf)
{
	return (long)cf->outbox_timeout + DELIVER_MARGIN;
}

/* What has_target() knows: the configuration, and the topics whose
 * target it has said is unusable (once each). */
#define WARNED_MAX	32
struct targets {
	const struct conf	*cf;
	char			 warned[WARNED_MAX][132];
	size_t			 nwarned;
};

/* Say, once per topic in this process, why its rows wait. */
static void
unusable(struct targets *ts, const char *topic, const char *why)
{
	size_t	 i;

	for (i = 0; i < ts->nwarned; i++)
		if (strcmp(ts->warned[i], topic) == 0)
			return;
	if (ts->nwarned < WARNED_MAX)
		snprintf(ts->warned[ts->nwarned++], sizeof(ts->warned[0]),
		    "%s", topic);
	log_error("deliver: outbox topic %s: %s: its rows wait (oncehook "
	    "check)", topic, why);
}

/* outbox_take()'s filter: rows of topics with a usable target (a URL
 * needs the secret that signs it); the others wait, counting nothing
 * (a topic with no target at all is check's warning, not an error). */
static int
has_target(void *arg, const char *topic)
{
	struct targets		*ts = arg;
	struct outbox_target	 t;
	char			 err[256];

	if (conf_outbox_target(topic, NULL, NULL, &t, err, sizeof(err)) ==
	    -1) {
		unusable(ts, topic, err);
		return 0;
	}
	if (t.kind == OUTBOX_URL && ts->cf->outbox_secret.p == NULL) {
		unusable(ts, topic, "a URL target, and ONCEHOOK_OUTBOX_SECRET "
		    "is not set");
		return 0;
	}
	return t.kind != OUTBOX_NONE;
}

static void
nap(long ms)
{
	io_nap_us(ms * 1000L);
}

/* One attempt at it: 0 sent, -1 not (why). */
static int
attempt(const struct conf *cf, const struct outbox_item *it, char *why,
    size_t whysz)
{
	struct outbox_target	 t;
	struct send_msg		 m;

	if (conf_outbox_target(it->topic, NULL, NULL, &t, why, whysz) == -1)
		return -1;
	m.id = it->id;
	m.topic = it->topic;
	m.endpoint = it->endpoint;
	m.key = it->key;
	m.payload = it->payload;
	m.payloadsz = it->payloadsz;
	switch (t.kind) {
	case OUTBOX_COMMAND:
		return send_command(t.value, &m, (long)cf->outbox_timeout,
		    why, whysz);
	case OUTBOX_URL:
		return send_http(t.value, &cf->outbox_secret, &m,
		    (long)cf->outbox_timeout, why, whysz);
	default:
		snprintf(why, whysz, "no target (its variable was unset "
		    "meanwhile)");
		return -1;
	}
}

int
deliver_loop(const struct conf *cf, int once, long max_seconds,
    volatile sig_atomic_t *stop)
{
	struct outbox_item	 it;
	struct targets		 ts;
	struct store		*st = NULL;
	enum outbox_take	 r;
	enum hook_err		 er;
	time_t			 start = time(NULL);
	struct timespec		 t0;
	char			 why[300], sw[300], k[160], err[512];
	long			 ms;
	int			 rc = 0, busy = 0, s;

	memset(&it, 0, sizeof(it));
	memset(&ts, 0, sizeof(ts));
	ts.cf = cf;
	if (cf->outbox_err[0] != '\0') {
		/* serve's child: say it once, then wait to be stopped. */
		log_error("deliver: %s: nothing is delivered", cf->outbox_err);
		while (!once && (stop == NULL || !*stop))
			nap(DELIVER_POLL_MS);
		return 2;
	}
	while (stop == NULL || !*stop) {
		if (max_seconds > 0 && time(NULL) - start >= max_seconds)
			break;
		if (st == NULL && (er = store_connect(cf, STORE_LAZY, &st, err,
		    sizeof(err))) != HOOK_OK) {
			log_error("deliver: %s", err);
			rc = er == HOOK_ECONF ? 2 : 1;
			if (once)
				break;
			nap(DELIVER_POLL_MS);
			continue;
		}
		r = outbox_take(st, (long long)time(NULL), deliver_lease(cf),
		    has_target, &ts, &it, why, sizeof(why));
		if (r == TAKE_BUSY) {
			if (++busy * DELIVER_BUSY_MS >= DELIVER_BUSY_MAX_MS) {
				log_error("deliver: the database stayed busy "
				    "for %d s: %s", DELIVER_BUSY_MAX_MS / 1000,
				    log_escape(sw, sizeof(sw), why));
				rc = 1;
				busy = 0;
				if (once)
					break;
				nap(DELIVER_POLL_MS);
			} else
				nap(DELIVER_BUSY_MS);
		} else if (r == TAKE_ERROR) {
			log_error("deliver: %s", log_escape(sw, sizeof(sw),
			    why));
			rc = 1;
			if (once)
				break;
			nap(DELIVER_POLL_MS);
		} else if (r == TAKE_RACED)
			busy = 0;	/* another took it: the next one */
		else if (r == TAKE_NONE) {
			busy = 0;
			if (once)
				break;
			nap(DELIVER_POLL_MS);
		} else {
			busy = 0;
			io_clock(&t0);
			why[0] = '\0';
			s = attempt(cf, &it, why, sizeof(why));
			ms = io_ms_since(&t0);
			if (s == 0)
				s = outbox_delivered(st, &it, (long long)
				    time(NULL), err, sizeof(err));
			else {
				s = outbox_failed(st, &it, why, (long long)
				    time(NULL), (long long)cf->outbox_backoff,
				    (long long)cf->outbox_max_attempts, err,
				    sizeof(err));
				rc = 1;
			}
			if (s == -1) {
				log_error("deliver: id=%s: %s", it.id,
				    log_escape(sw, sizeof(sw), err));
				rc = 1;
			} else if (s == 0)
				log_warnx("deliver: id=%s topic=%s: taken "
				    "again by another deliverer (its lease of "
				    "%ld s ran out); outcome not recorded",
				    it.id, it.topic, deliver_lease(cf));
			else if (why[0] == '\0')
				log_info("outbox id=%s topic=%s endpoint=%s "
				    "key=\"%s\" outcome=delivered attempt=%lld "
				    "ms=%ld", it.id, it.topic, it.endpoint,
				    log_escape(k, sizeof(k), it.key),
				    it.attempts, ms);
			else
				log_error("outbox id=%s topic=%s endpoint=%s "
				    "key=\"%s\" outcome=%s attempt=%lld ms=%ld "
				    "why=\"%s\"", it.id, it.topic, it.endpoint,
				    log_escape(k, sizeof(k), it.key),
				    s == 2 ? "dead" : "failed", it.attempts,
				    ms, log_escape(sw, sizeof(sw), why));
			outbox_item_clear(&it);
		}
		if (store_broken(st) || store_idle(st)) {
			store_close(st);
			st = NULL;
		}
	}
	store_close(st);
	return rc;
}
