/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the request pipeline (SPEC section 2).
 *
 * pipeline_run() takes a request as the front parsed it and returns the
 * response, knowing neither FastCGI nor CGI: route, method, type, size,
 * body, signature, timestamp, event, lookup, claim.  It writes the one
 * log line of the request.
 *
 * The fast paths -- a retry of stored bytes answered before the parse
 * (quick_retry(): event_peek() and a lookup), a run of new events sent
 * straight to the writer (below), the group-commit writer itself
 * (writer/shared.h) -- answer every request exactly as the plain path
 * does: the same status, the same body, the same rows.  Only the cost
 * differs.  ONCEHOOK_FAST_PATHS=off takes the plain path alone; the
 * request cases (tests/cases/) run every case both ways and compare.
 *
 * A batch (a scheme whose requests carry several events, pipeline/sig.h:
 * struct sig_batch) takes the plain path alone, whatever the setting:
 * its items are looked up, then claimed in one transaction of the
 * process's own connection (store_claim_items()), never peeked, sent
 * straight or handed to the writer (docs/design/030-batches.md).
 */
#ifndef ONCEHOOK_PIPELINE_H
#define ONCEHOOK_PIPELINE_H

#include <time.h>

#include "hook.h"

struct conf;
struct counters;
struct store;

/*
 * What a process keeps between requests: the configuration (NULL if it
 * did not load, with the reason in conferr), the store once opened, and
 * the document roots last checked.
 */
struct store_claim;

/* How a new event is claimed: store_claim() on the pipeline's own store,
 * or through a writer (writer/writer.h, writer/shared.h).  Sets c->result and
 * c->why and returns 0; or returns -1 when it could not ask the writer,
 * which then never runs that claim: the pipeline claims it itself. */
typedef int	(*pipeline_claim_fn)(void *arg, struct store_claim *c);

/* Whether that function would hand the next claim to a writer now (a
 * NULL one: every claim). */
typedef int	(*pipeline_hands_fn)(void *arg);

/*
 * A run of new events, straight to the writer.  While a writer takes a
 * process's claims (and, for a FastCGI process, other processes' too),
 * its lookup before a new event's claim reads again, from the file,
 * the pages the writer changed since its last one (its cache is emptied
 * by every commit of another connection), to find nothing; the
 * writer, whose cache is warm, makes the same read inside the claim
 * anyway and answers a known key as the duplicate, parked event or
 * conflict it is (store/store.h).  So after PIPELINE_DIRECT_AFTER lookups in a row that
 * found nothing, a process sends the next events to the writer without
 * the lookup, until one of them was known or its claim failed: then
 * lookups come first again (a retry storm is answered by the
 * processes, without the write lock, as before).  A claim sent so that
 * failed (the writer gone or out of time, the database read-only, full
 * or failing) is followed by the lookup it skipped: a known key is
 * answered from that read, as it would have been, so a retry is still
 * 200 while nothing can be written.  Under `full` a retry in a run
 * waits for its batch's fsync, as the new events around it do.  Behind
 * a replay guard too: the claim checks the payload under the write lock
 * (a payload known under another key is the duplicate it is), and a
 * claim so sent that failed is followed by the payload's lookup as well
 * as the key's.  Never when the claim would not be handed over (hands
 * below), unless the process's own store claims a known key about as
 * cheaply as it reads it (store_claims_direct(): MariaDB, where the
 * lookup is a round trip and the claim's insert answers "new" or "known"
 * itself).  A CGI process (one request) sends its event straight
 * whenever hands says a writer takes it: then it never opens the
 * database (writer/shared.h, "Under CGI"); the store is opened only if
 * the claim comes back to it.
 */
#define PIPELINE_DIRECT_AFTER	8

struct pipeline {
	const struct conf	*cf;
	const char		*conferr;
	struct store		*st;
	struct counters		*ctr;		/* opened on first count */
	pipeline_claim_fn	 claim;		/* NULL: store_claim() here */
	pipeline_hands_fn	 hands;
	void			*claim_arg;
	unsigned		 fresh;		/* new events in a row (up to
						   PIPELINE_DIRECT_AFTER) */
	char			 roots[2048];	/* the roots last checked */
	const char		*exposed;	/* a file inside them, or NULL */
	const struct conf_endpoint *exposed_ep;	/* whose SECRET_FILE, or NULL */
	int			 opened;	/* the store was open once */
	int			 run_after;	/* run a deferred event's
						   actions after the answer
						   (FastCGI, serve; not CGI) */
	int			 one_request;	/* CGI: the process answers
						   one request only */
	size_t			 pending_ep;	/* that event, claimed by */
	char			*pending_key;	/* the last request */
	int			 released;	/* idle memory given back
						   since the last request */
	int			 copy;		/* the writer asked for
						   store_upkeep(): STORE_COPY */
};

/* Start a pipeline over cf (may be NULL; then conferr says why). */
void	pipeline_init(struct pipeline *, const struct conf *cf,
	    const char *conferr);
/* Claim new events through fn(arg, claim) instead of the own store;
 * hands(arg) as above (NULL: fn hands over every claim). */
void	pipeline_claim_through(struct pipeline *, pipeline_claim_fn fn,
	    pipeline_hands_fn hands, void *arg);
/* Close the store and unmap the counters (each opened again when next
 * needed); the configuration stays the caller's. */
void	pipeline_clear(struct pipeline *);
/*
 * A process that exits after this request (CGI): its store is left to
 * the exit when the engine says it may (store_leave()), so that
 * pipeline_clear() does not close it.
 */
void	pipeline_leave(struct pipeline *);

/*
 * Between requests (a second idle): close a store whose file moved;
 * the first time since a request, give back the memory kept for speed
 * (store_upkeep(): STORE_RELEASE, then the allocator's free pages: io_trim()).
 */
void	pipeline_idle(struct pipeline *);

/*
 * After a request is answered: the actions of the event it claimed in
 * deferred mode (if run_after; else `oncehook work` runs them), then the
 * store's upkeep (store_upkeep(): STORE_COPY if the writer asked, store_upkeep(): STORE_MAINTAIN).
 */
void	pipeline_after(struct pipeline *);

/* Run one request; fills resp (release with resp_clear()). */
void	pipeline_run(struct pipeline *, const struct req *rq, time_t now,
	    struct resp *resp);

#endif
