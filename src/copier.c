/*
 * oncehook: the log's copy into the database, beside a writer (see
 * copier.h).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "copier.h"
#include "log.h"
#include "store.h"

struct copier {
	const struct conf	*cf;
	pthread_t		 thread;
	pthread_mutex_t		 mu;		/* the three flags */
	pthread_cond_t		 cv;		/* one of them changed */
	int			 asked;		/* a copy, not begun */
	int			 copying;	/* a copy, running */
	int			 stop;
};

/*
 * The copier's thread: a copy each time it is asked, on a connection it
 * opens on the first (and again after one that broke).  A connection it
 * cannot open is logged; the writer's checkpoint then copies it all.
 */
static void *
copier_run(void *arg)
{
	struct copier	*c = arg;
	struct store	*st = NULL;
	char		 why[256];

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (!c->asked && !c->stop)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->stop)
			break;
		c->asked = 0;
		c->copying = 1;
		pthread_mutex_unlock(&c->mu);
		if (st == NULL && store_connect(c->cf, STORE_LAZY, &st, why,
		    sizeof(why)) != HOOK_OK) {
			log_warnx("copier: %s", why);
			store_close(st);
			st = NULL;
		}
		if (st != NULL) {
			store_copy(st);
			if (store_broken(st)) {
				store_close(st);
				st = NULL;
			}
		}
		pthread_mutex_lock(&c->mu);
		c->copying = 0;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	store_close(st);
	return NULL;
}

struct copier *
copier_start(const struct conf *cf)
{
	struct copier	*c;
	sigset_t	 all, old;
	int		 rc;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warnx("copier: out of memory");
		return NULL;
	}
	c->cf = cf;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&c->thread, NULL, copier_run, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		log_warnx("copier: cannot start it: %s", strerror(rc));
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
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&c->mu);
	while ((c->copying || c->asked) && pthread_cond_timedwait(&c->cv,
	    &c->mu, &until) == 0)
		;
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
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c);
}
