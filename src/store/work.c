/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the work loop (see store/work.h).  Exactly once is the store's:
 * each event's effects and its status commit in one transaction, so any
 * number of loops, replays and handlers may run side by side.
 */
#include "config.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "lib/io.h"
#include "lib/log.h"
#include "observe/counters.h"
#include "store/store.h"
#include "store/work.h"

#define WORK_POLL_MS	1000	/* idle: look again after */
#define WORK_BUSY_MS	50	/* the database busy: try again after */
#define WORK_YIELD_MS	20	/* after a long run: the claims' turn */
#define WORK_BUSY_MAX_MS 10000	/* busy this long: an error */

static void
nap(long ms)
{
	io_nap_us(ms * 1000L);
}

int
work_loop(const struct conf *cf, int once, long max_seconds, int designated,
    volatile sig_atomic_t *stop)
{
	struct store_work_item	 w;
	struct store		*st = NULL;
	struct counters		*ctr = NULL;
	enum store_work		 r;
	enum hook_err		 er;
	time_t			 start = time(NULL);
	struct timespec		 t0;
	char			 k[160], why[300], err[512];
	int			 rc = 0, busy = 0;

	r = WORK_IDLE;
	while (stop == NULL || !*stop) {
		if (max_seconds > 0 && time(NULL) - start >= max_seconds)
			break;
		if (st == NULL && (er = store_connect(cf, STORE_LAZY, &st, err,
		    sizeof(err))) != HOOK_OK) {
			log_error("work: %s", err);
			/* No database at the path, a schema too new: the
			 * configuration's; busy, read-only: the storage's. */
			rc = er == HOOK_ECONF ? 2 : 1;
			if (once)
				break;
			nap(WORK_POLL_MS);
			continue;
		}
		io_clock(&t0);
		if (r != WORK_BUSY)
			busy = 0;
		r = store_work(st, NULL, NULL, (long long)time(NULL),
		    designated ? STORE_CLAIMER_FIRST : 0, &w);
		/* A long run held the write lock: let the claims waiting
		 * for it in before taking it again (the kernel's lock is
		 * not fair to them). */
		if (io_ms_since(&t0) > 50)
			nap(WORK_YIELD_MS);
		if (r == WORK_DONE) {
			log_info("endpoint=%s key=\"%s\" outcome=processed "
			    "work attempt=%lld", w.endpoint, log_escape(k,
			    sizeof(k), w.key), w.attempts);
			if (cf->counters && cf->counters_file != NULL &&
			    ctr == NULL)
				ctr = counters_open(cf->counters_file);
			counters_succeeded(ctr, w.endpoint,
			    (int64_t)time(NULL));
		}
		else if (r == WORK_FAILED || r == WORK_DEAD) {
			log_error("endpoint=%s key=\"%s\" outcome=%s work "
			    "attempt=%lld why=\"%s\"", w.endpoint,
			    log_escape(k, sizeof(k), w.key), r == WORK_DEAD ?
			    "dead" : "failed", w.attempts,
			    log_escape(why, sizeof(why), w.why));
			rc = 1;
		} else if (r == WORK_RACED)
			busy = 0;
		else if (r == WORK_BUSY) {
			/* Busy that lasts (a read-only file, a full disk) is
			 * an error: --once ends, the loop waits longer. */
			if (++busy * WORK_BUSY_MS >= WORK_BUSY_MAX_MS) {
				log_error("work: the database stayed busy for "
				    "%d s: %s", WORK_BUSY_MAX_MS / 1000,
				    log_escape(why, sizeof(why), w.why));
				rc = 1;
				busy = 0;
				if (once)
					break;
				nap(WORK_POLL_MS);
			} else
				nap(WORK_BUSY_MS);
		} else if (r == WORK_ERROR) {
			log_error("work: %s", log_escape(why, sizeof(why),
			    w.why));
			rc = 1;
			if (once)
				break;
			nap(WORK_POLL_MS);
		} else if (once)
			break;
		else
			nap(WORK_POLL_MS);
		/* A connection that met a read-only file or an I/O error,
		 * or whose file moved, is opened again. */
		if (store_broken(st) || store_idle(st)) {
			store_close(st);
			st = NULL;
		}
	}
	store_close(st);
	counters_close(ctr);
	return rc;
}
