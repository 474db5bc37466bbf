/*
 * oncehook: the request pipeline (SPEC section 2).
 *
 * pipeline_run() takes a request as the front parsed it and returns the
 * response, knowing neither FastCGI nor CGI: route, method, type, size,
 * body, signature, timestamp, event, lookup, claim.  It writes the one
 * log line of the request.
 */
#ifndef ONCEHOOK_PIPELINE_H
#define ONCEHOOK_PIPELINE_H

#include <time.h>

#include "hook.h"

struct conf;
struct store;

/*
 * What a process keeps between requests: the configuration (NULL if it
 * did not load, with the reason in conferr), the store once opened, and
 * the document roots last checked.
 */
struct pipeline {
	const struct conf	*cf;
	const char		*conferr;
	struct store		*st;
	char			 roots[2048];	/* the roots last checked */
	const char		*exposed;	/* a file inside them, or NULL */
	const struct conf_endpoint *exposed_ep;	/* whose SECRET_FILE, or NULL */
	int			 opened;	/* the store was open once */
};

/* Start a pipeline over cf (may be NULL; then conferr says why). */
void	pipeline_init(struct pipeline *, const struct conf *cf,
	    const char *conferr);
/* Close the store; the configuration stays the caller's. */
void	pipeline_clear(struct pipeline *);

/* Between requests (a second idle): close a store whose file moved. */
void	pipeline_idle(struct pipeline *);

/* After a request is answered: the store's upkeep (store_maintain()). */
void	pipeline_after(struct pipeline *);

/* Run one request; fills resp (release with resp_clear()). */
void	pipeline_run(struct pipeline *, const struct req *rq, time_t now,
	    struct resp *resp);

#endif
