/* SPDX-License-Identifier: MIT */
/*
 * oncehook: delivering the outbox (SPEC section 13): `oncehook deliver`,
 * and the child `serve` keeps.
 */
#ifndef ONCEHOOK_DELIVER_H
#define ONCEHOOK_DELIVER_H

#include <signal.h>

struct conf;

/*
 * Deliver due outbox rows whose topic has a target, oldest first, one
 * attempt at a time (store/outbox.h: a lease each), logging one line for
 * each.  With once, until none is due; else polling every second until
 * max_seconds have passed (0: for ever) or *stop is set.  The store is
 * opened here, and again after a read-only spell, an I/O error or a
 * moved file.  Returns 0 if every attempt succeeded, 1 if one failed or
 * the storage did, 2 if the database cannot be used as configured.
 */
int	deliver_loop(const struct conf *cf, int once, long max_seconds,
	    volatile sig_atomic_t *stop);

/* The seconds a row is leased for one attempt: the timeout and a
 * margin, so that a live attempt is never taken by another. */
long	deliver_lease(const struct conf *cf);

#endif
