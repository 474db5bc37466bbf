/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the log's copy into the database, beside a writer (see
 * store/sqlite/copier.h).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "lib/log.h"
#include "store/sqlite/copier.h"
#include "store/sqlite/library.h"
#include "store/store.h"

/* Idle this long, the copier lets its connection go (store/sqlite/copier.h). */
#define COPIER_IDLE_MS	1000

struct copier {
	const struct conf	*cf;
	pthread_t		 thread;
	pthread_mutex_t		 mu;		/* the flags below */
	pthread_cond_t		 cv;		/* one of them changed */
	int			 asked;		/* a copy, not begun */
	int			 copying;	/* a copy, running */
	int			 late;		/* copier_wait() ran out on
						   the copy running */
	int			 stop;
};

/* now + ms on the monotonic clock (the condition variable's). */
static struct timespec
deadline(long ms)
{
	struct timespec	 t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

/*
 * The copier's thread: a copy each time it is asked, on a connection of
 * its own, opened for the first and let go after COPIER_IDLE_MS without
 * one (or once it broke: a file moved, see store/sqlite/engine.c's sq_moved()).
 * One it cannot open is logged; the writer's checkpoint then copies
 * it all.
 */
static void *
copier_run(void *arg)
{
	struct copier	*c = arg;
	struct store	*st = NULL;
	struct timespec	 until;
	char		 why[256];

	pthread_mutex_lock(&c->mu);
	for (;;) {
		until = deadline(COPIER_IDLE_MS);
		while (!c->asked && !c->stop && (pthread_cond_timedwait(
		    &c->cv, &c->mu, &until) == 0 || st == NULL))
			if (st == NULL)
				until = deadline(COPIER_IDLE_MS);
		if (c->stop)
			break;
		if (!c->asked) {		/* idle: let it go */
			pthread_mutex_unlock(&c->mu);
			store_close(st);
			st = NULL;
			pthread_mutex_lock(&c->mu);
			continue;
		}
		c->asked = 0;
		c->copying = 1;
		pthread_mutex_unlock(&c->mu);
		if (st == NULL && store_connect(c->cf, STORE_LAZY, &st, why,
		    sizeof(why)) != HOOK_OK)
			log_warnx("copier: %s", why);
		if (st != NULL) {
			store_upkeep(st, STORE_COPY);
			store_drop_broken(&st);
		}
		pthread_mutex_lock(&c->mu);
		c->copying = c->late = 0;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	store_close(st);
	return NULL;
}

struct copier *
copier_start(const struct conf *cf)
{
	struct copier		*c;
	pthread_condattr_t	 ca;
	sigset_t		 all, old;
	int			 rc;

	if (cf->my != NULL)
		return NULL;		/* MariaDB/MySQL: its own log */
	if (sqlite_threaded() == -1) {
		log_warnx("copier: SQLite cannot be used from two threads "
		    "here; the processes copy the log");
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warnx("copier: out of memory");
		return NULL;
	}
	c->cf = cf;
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* The thread takes no signal: SIGTERM and walguard's timer signal
	 * stay the writer's (the mask is inherited, then restored here). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&c->thread, NULL, copier_run, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		log_warnx("copier: cannot start it: %s; the processes copy "
		    "the log", strerror(rc));
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
		free(c);
		return NULL;
	}
	return c;
}

void
copier_ask(struct copier *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	c->asked = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

void
copier_wait(struct copier *c, long ms)
{
	struct timespec	 until;

	if (c == NULL)
		return;
	until = deadline(ms);
	pthread_mutex_lock(&c->mu);
	c->asked = 0;		/* not begun: the checkpoint copies it */
	while (c->copying && !c->late && pthread_cond_timedwait(&c->cv,
	    &c->mu, &until) == 0)
		;
	if (c->copying)
		c->late = 1;	/* not again for this copy */
	pthread_mutex_unlock(&c->mu);
}

void
copier_stop(struct copier *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	c->stop = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->thread, NULL);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
