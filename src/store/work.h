/* SPDX-License-Identifier: MIT */
/*
 * oncehook: running the actions of events that have not taken effect
 * (SPEC section 12): `oncehook work`, and the child `serve` keeps.
 */
#ifndef ONCEHOOK_WORK_H
#define ONCEHOOK_WORK_H

#include <signal.h>

struct conf;

/*
 * Run due received and failed events of cf's endpoints, oldest first,
 * one transaction each (store_work()), logging one line for each.  With
 * once, until none is due; else polling every second until max_seconds
 * have passed (0: for ever) or *stop is set.  The store is opened here,
 * and again after a read-only spell, an I/O error or a moved file.
 * designated: the one runner of accepted events (serve's child): it
 * takes them at once, not 10 s after their claim (the time a process
 * under a web server has to run its own).  Returns 0 if every event
 * ran, 1 if one failed or the storage did.
 */
int	work_loop(const struct conf *cf, int once, long max_seconds,
	    int designated, volatile sig_atomic_t *stop);

#endif
