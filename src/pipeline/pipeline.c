/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the request pipeline (see pipeline/pipeline.h).
 *
 * Data flows one way: front -> pipeline -> (sig, event, store ->
 * actions) -> resp.  Each stage returns an enum hook_err; the first
 * failure stops the request.  Nothing touches the database before the
 * signature has been verified, and a retry of a known event is answered
 * from a read, before any write lock is asked for.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "front/req.h"
#include "front/resp.h"
#include "lib/io.h"
#include "lib/log.h"
#include "observe/counters.h"
#include "observe/status.h"
#include "pipeline/event.h"
#include "pipeline/pipeline.h"
#include "pipeline/route.h"
#include "pipeline/sig.h"
#include "store/store.h"

#define BODY_CHUNK	65536	/* first allocation without Content-Length */

/* What one request leaves for its log line and its response. */
struct trace {
	const struct conf_endpoint	*ep;
	const struct event		*ev;
	struct why			 why;
	struct hook_answer		 answer; /* HOOK_HANDSHAKE's */
	char				*doc;	/* HOOK_STATUS: the document */
	size_t				 docsz;
	const char			*ctype;
	int				 rooted; /* check_roots() passed */
	/* What quick_retry()'s lookup said of this key (HOOK_OK: unknown,
	 * HOOK_ECONFLICT: other bytes), for record(); peeked NULL if none. */
	char				*peeked;
	enum hook_err			 looked;
	/* A batch (pipeline/sig.h): its items and what became of each. */
	struct event			*items;
	struct store_claim		*claims;
	size_t				 nitems;
};

static enum hook_err	ensure_store(struct pipeline *, struct why *);

void
pipeline_init(struct pipeline *p, const struct conf *cf, const char *conferr)
{
	memset(p, 0, sizeof(*p));
	p->cf = cf;
	p->conferr = conferr;
}

void
pipeline_claim_through(struct pipeline *p, pipeline_claim_fn fn,
    pipeline_hands_fn hands, void *arg)
{
	p->claim = fn;
	p->hands = hands;
	p->claim_arg = arg;
}

void
pipeline_clear(struct pipeline *p)
{
	free(p->pending_key);
	p->pending_key = NULL;
	store_close(p->st);
	p->st = NULL;
	p->copy = 0;
	counters_close(p->ctr);
	p->ctr = NULL;
}

void
pipeline_leave(struct pipeline *p)
{
	if (p->st != NULL && store_leave(p->st))
		p->st = NULL;	/* the exit lets it go */
}

void
pipeline_idle(struct pipeline *p)
{
	if (p->st != NULL && store_idle(p->st))
		pipeline_clear(p);
	if (p->released)
		return;
	if (p->st != NULL)
		store_upkeep(p->st, STORE_RELEASE);
	io_trim();
	p->released = 1;
}

/* The deferred event the last request claimed: its actions, now. */
static void
run_pending(struct pipeline *p)
{
	struct store_work_item	 w;
	enum store_work		 r;
	const char		*name = p->cf->endpoints[p->pending_ep].name;
	char			 k[160], why[300];
	int			 tries;

	for (tries = 0; tries < 3; tries++)
		if ((r = store_work(p->st, name, p->pending_key,
		    (long long)time(NULL), 0, &w)) != WORK_BUSY)
			break;
	log_escape(k, sizeof(k), p->pending_key);
	log_escape(why, sizeof(why), w.why);
	switch (r) {
	case WORK_DONE:
		log_info("endpoint=%s key=\"%s\" outcome=processed "
		    "deferred attempt=%lld", name, k, w.attempts);
		if (p->ctr != NULL)
			counters_succeeded(p->ctr, name, (int64_t)time(NULL));
		break;
	case WORK_IDLE:
	case WORK_RACED:
		break;		/* run by another already */
	case WORK_FAILED:
	case WORK_DEAD:
		log_error("endpoint=%s key=\"%s\" outcome=%s deferred "
		    "attempt=%lld why=\"%s\"", name, k, r == WORK_DEAD ?
		    "dead" : "failed", w.attempts, why);
		break;
	case WORK_BUSY:
	case WORK_ERROR:
		log_warnx("endpoint=%s key=\"%s\" deferred: not run now "
		    "(%s); oncehook work runs it", name, k, why);
		break;
	}
}

void
pipeline_after(struct pipeline *p)
{
	struct why	 opening = { 0 };
	int		 copy;

	if (p->pending_key != NULL) {
		if (p->st != NULL)
			run_pending(p);
		free(p->pending_key);
		p->pending_key = NULL;
	}
	copy = p->copy;
	p->copy = 0;
	/* A CGI process whose event went to the writer, asked to copy the
	 * log into the database (writer/writer.h, WRITER_COPY): the copy
	 * is still its to make. */
	if (p->st == NULL && copy && ensure_store(p, &opening) != HOOK_OK)
		log_warnx("store: the log not copied after this request: %s",
		    opening.log);
	if (p->st == NULL)
		return;
	if (copy)
		store_upkeep(p->st, STORE_COPY);
	store_upkeep(p->st, STORE_MAINTAIN);
	if (store_broken(p->st))
		pipeline_clear(p);
}

/* JSON, or any media type with a +json suffix; parameters ignored. */
static int
is_json(const char *ct)
{
	size_t	 len;

	if (ct == NULL)
		return 0;
	while (*ct == ' ')
		ct++;
	len = strcspn(ct, "; ");
	if (len == 16 && strncasecmp(ct, "application/json", 16) == 0)
		return 1;
	return len > 5 && strncasecmp(ct + len - 5, "+json", 5) == 0 &&
	    memchr(ct, '/', len) != NULL;
}

/* application/x-www-form-urlencoded; parameters (charset) ignored. */
static int
is_form(const char *ct)
{
	if (ct == NULL)
		return 0;
	while (*ct == ' ')
		ct++;
	return strcspn(ct, "; ") == 33 &&
	    strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0;
}

/*
 * Read the body: at most maxbody bytes, never more than maxbody + 1
 * from the wire.  On HOOK_OK *body is a new buffer (NUL-terminated).
 */
static enum hook_err
read_body(const struct req *rq, long long cl, long long maxbody, char **body,
    size_t *bodysz, struct trace *t)
{
	char	*buf, *nb;
	size_t	 limit = (size_t)maxbody + 1, cap, len = 0;
	ssize_t	 n;

	/* cap counts the NUL; reading limit bytes means "too big". */
	cap = cl >= 0 ? (size_t)cl + 1 : BODY_CHUNK;
	if (cap > limit + 1)
		cap = limit + 1;
	if ((buf = malloc(cap)) == NULL)
		return HOOK_ESYSTEM;
	for (;;) {
		if (cl >= 0 && len == (size_t)cl)
			break;
		if (len == cap - 1) {
			if (len >= limit)
				break;
			cap = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);
				return HOOK_ESYSTEM;
			}
			buf = nb;
		}
		if ((n = rq->read(rq->readarg, buf + len, cap - 1 - len)) < 0) {
			free(buf);
			why_set(&t->why, "reading the body "
			    "failed");
			return HOOK_EBODY;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > (size_t)maxbody) {
		free(buf);
		return HOOK_ETOOBIG;
	}
	if (cl >= 0 && len != (size_t)cl) {
		free(buf);
		why_set(&t->why, "body of %zu bytes, "
		    "Content-Length %lld", len, cl);
		return HOOK_EBODY;
	}
	buf[len] = '\0';
	*body = buf;
	*bodysz = len;
	return HOOK_OK;
}

/* At debug level, the payload, escaped: it may hold anything. */
static void
log_payload(const char *body)
{
	char	 buf[1600];

	log_debug("payload: %s", log_escape(buf, sizeof(buf), body));
}

/*
 * HOOK_ECONF if the database or a secrets file lies inside a directory
 * the web server serves: DOCUMENT_ROOT, or CONTEXT_DOCUMENT_ROOT (Apache
 * sets it for an Alias or a ~user directory).  Cached by the roots.
 */
static enum hook_err
check_roots(struct pipeline *p, const struct req *rq, struct trace *t)
{
	const char	*roots[2] = { rq->document_root, rq->context_root };
	char		 key[sizeof(p->roots)];
	size_t		 i;

	snprintf(key, sizeof(key), "%s\n%s", roots[0] ? roots[0] : "",
	    roots[1] ? roots[1] : "");
	if (strcmp(key, p->roots) != 0) {
		p->exposed = NULL;
		for (i = 0; i < 2 && p->exposed == NULL; i++)
			if (roots[i] != NULL && *roots[i] != '\0')
				p->exposed = route_exposed(p->cf, roots[i],
				    &p->exposed_ep);
		snprintf(p->roots, sizeof(p->roots), "%s", key);
	}
	if (p->exposed != NULL) {
		why_set(&t->why, "%s%s: %s lies inside the "
		    "document root, where the web server could serve it: "
		    "refusing it", p->exposed_ep ? p->exposed_ep->prefix :
		    "ONCEHOOK_DB", p->exposed_ep ? "SECRET_FILE" : "",
		    p->exposed);
		return HOOK_ECONF;
	}
	t->rooted = 1;
	return HOOK_OK;
}

/*
 * Open the store on first use; kept for the life of the process.  An
 * endpoint's actions are prepared on its first new event (STORE_LAZY),
 * the whole file, so that a long-lived process finds a broken section
 * at once; a CGI process (one request long) prepares the
 * one section its event runs (STORE_SECTIONS), and a duplicate none.
 */
static enum hook_err
ensure_store(struct pipeline *p, struct why *why)
{
	enum hook_err	 er;
	char		 err[256];

	if (p->st != NULL)
		return HOOK_OK;
	er = store_connect(p->cf, STORE_LAZY | (p->one_request ?
	    STORE_SECTIONS : 0), &p->st, err, sizeof(err));
	if (er == HOOK_OK)
		p->opened = 1;
	else if (er == HOOK_ECONF && p->opened && p->cf->my == NULL &&
	    access(p->cf->db, F_OK) == -1
	    && errno == ENOENT) {
		/* It was there: removed under us, and may come back. */
		why_set(why, "%s is gone (removed under this process): "
		    "put it back, or run oncehook init", p->cf->db);
		er = HOOK_EBUSY;
	} else
		why_set(why, "%s", err);
	return er;
}

/*
 * An event whose actions failed (rolled back): one more failed attempt
 * of its key; at the endpoint's PARK_AFTER, stored as failed and
 * answered 200 parked, so the provider stops retrying and keeps the
 * endpoint enabled.
 */
static enum hook_err
failed(struct pipeline *p, const struct conf_endpoint *ep, size_t epi,
    const struct event *ev, const char *error, struct trace *t)
{
	struct why	 opening = { 0 };
	enum hook_err	 er;
	long long	 n;

	if ((er = ensure_store(p, &opening)) != HOOK_OK) {
		why_set(&t->why, "attempt not counted (the store: %.200s): "
		    "%s", opening.log, error);
		return er;
	}
	er = store_failed(p->st, epi, ev, error, (int)ep->park_after, &n);
	if (er == HOOK_PARKED)
		why_set(&t->why, "attempt %lld failed, parked (replay it with "
		    "oncehook replay): %s", n, error);
	else if (n > 0 && ep->park_after > 0)
		why_set(&t->why, "attempt %lld of %lld failed: %s", n,
		    ep->park_after, error);
	else if (n > 0)
		why_set(&t->why, "attempt %lld failed: %s", n, error);
	return er;
}

/* This event straight to the writer, or to a store whose claims answer
 * a known key as cheaply (store_claims_direct()), without a lookup
 * (pipeline/pipeline.h)? */
static int
straight(const struct pipeline *p)
{
	return p->cf->fast_paths && (p->fresh >= PIPELINE_DIRECT_AFTER ||
	    (p->one_request && p->claim != NULL)) &&
	    ((p->claim != NULL && (p->hands == NULL ||
	    p->hands(p->claim_arg))) ||
	    (p->st != NULL && store_claims_direct(p->st)));
}

/* What a lookup said of a key (HOOK_OK: unknown), or a claim: new
 * events in a row (lookups that found nothing), or none (a known key). */
static void
count_fresh(struct pipeline *p, enum hook_err er)
{
	if (er == HOOK_OK) {
		if (p->fresh < PIPELINE_DIRECT_AFTER)
			p->fresh++;
	} else if (hook_known(er))
		p->fresh = 0;
}

/*
 * A claim sent without a lookup came back failed (the writer gone or out
 * of time; the database read-only, full or failing): lookups first
 * again, and what the lookups would have answered of a known key (or,
 * behind a replay guard, of a payload known under another key), from a
 * read of what is committed, so that a retry is still 200 while nothing
 * can be written.  An unknown key and payload keep er.
 */
static enum hook_err
known_anyway(struct pipeline *p, const struct conf_endpoint *ep, size_t epi,
    struct event *ev, struct trace *t, enum hook_err er)
{
	struct why	 opening = { 0 };
	enum hook_err	 found;
	char		 was[sizeof(t->why.log)];

	p->fresh = 0;
	if (ensure_store(p, &opening) != HOOK_OK) {
		snprintf(was, sizeof(was), "%s", t->why.log);
		why_set(&t->why, "%.300s; no read either: %.200s", was,
		    opening.log);
		return er;
	}
	if (!hook_known(found = store_lookup(p->st, epi, ev)) &&
	    (found != HOOK_OK || !ep->replay_guard ||
	    ((found = store_replayed(p->st, epi, ev)) != HOOK_DUP &&
	    found != HOOK_PARKED)))
		return er;
	snprintf(was, sizeof(was), "%s", t->why.log);
	memset(&t->why, 0, sizeof(t->why));
	/* A conflict is record()'s to record where the claim was this
	 * process's own; a writer's claim records it when the writer runs
	 * it (this process recording it too would make two rows of one). */
	why_set(&t->why, "known, answered from a read (the claim sent "
	    "without one: %.200s)", was);
	return found;
}

/*
 * The store's part, for a verified event: a retry is answered from a
 * read (by key, and by payload where the replay guard is on); a new
 * event is claimed with its actions; a collision is recorded.  direct:
 * no read first, the claim (the writer's) answers a known key, and the
 * store is opened only if the claim comes back.
 */
static enum hook_err
record(struct pipeline *p, const struct conf_endpoint *ep, struct event *ev,
    struct trace *t, int direct)
{
	struct store_claim	 c;
	enum hook_err		 er, fe;
	size_t			 epi = (size_t)(ep - p->cf->endpoints);
	int			 rehash, by_writer;

	if (!direct && (er = ensure_store(p, &t->why)) != HOOK_OK)
		return er;
	/*
	 * A retry of the stored bytes is a duplicate before any canonical
	 * JSON (their hash would be the stored one).  Other bytes, or none
	 * stored: the canonical hash decides, as for every new event.  The
	 * lookup quick_retry() made for this key need not be made again.
	 */
	if (direct)
		er = HOOK_OK;
	else if (t->peeked != NULL && strcmp(t->peeked, ev->key) == 0)
		er = t->looked;
	else
		er = store_lookup(p->st, epi, ev);
	if (er == HOOK_OK || er == HOOK_ECONFLICT) {
		rehash = er == HOOK_ECONFLICT && ev->hash[0] == '\0';
		if ((fe = event_finish(ev)) != HOOK_OK)
			return fe;
		if (rehash)
			er = store_lookup(p->st, epi, ev);
	}
	/* Sent straight, the claim checks the payload under the write
	 * lock (store/claim.c), as the read here would. */
	if (er == HOOK_OK && ep->replay_guard && !direct &&
	    ((er = store_replayed(p->st, epi, ev)) == HOOK_DUP ||
	    er == HOOK_PARKED))
		why_set(&t->why, "payload already recorded "
		    "under another key");
	if (!direct)
		count_fresh(p, er);
	if (er == HOOK_OK) {
		memset(&c, 0, sizeof(c));
		c.endpoint = epi;
		c.ev = ev;
		by_writer = p->claim != NULL &&
		    p->claim(p->claim_arg, &c) != -1;
		if (!by_writer && (er = ensure_store(p, &t->why)) != HOOK_OK)
			return er;
		if (!by_writer)
			(void)store_claim(p->st, &c, 1);
		er = c.result;
		if (hook_known(er))
			p->fresh = 0;	/* known after all */
		p->copy |= c.copy;
		if (c.why[0] != '\0')
			why_set(&t->why, "%s", c.why);
		if (direct && (er == HOOK_EBUSY || er == HOOK_ESYSTEM ||
		    er == HOOK_ECONF) && (er = known_anyway(p, ep, epi, ev,
		    t, er)) == HOOK_ECONFLICT && !by_writer &&
		    store_conflict(p->st, epi, ev) != HOOK_OK)
			/* The failed claim was this process's (a row lock
			 * past its wait, a lost connection): no writer
			 * records the conflict the read found. */
			why_set(&t->why, "conflict not recorded");
		if (er == HOOK_EACTION)
			er = failed(p, ep, epi, ev, c.why, t);
		if (er == HOOK_ACCEPTED && p->run_after) {
			free(p->pending_key);
			p->pending_ep = epi;
			p->pending_key = strdup(ev->key);
		}
	} else if (er == HOOK_ECONFLICT &&
	    store_conflict(p->st, epi, ev) != HOOK_OK)
		why_set(&t->why, "conflict not recorded");
	return er;
}

/* What a committed batch answers: a conflict if an item met one, else
 * processed if an item took effect, accepted, or a duplicate. */
static enum hook_err
items_outcome(const struct store_claim *c, size_t n)
{
	enum hook_err	 er = HOOK_DUP;
	size_t		 i;

	for (i = 0; i < n; i++)
		if (c[i].result == HOOK_ECONFLICT)
			return HOOK_ECONFLICT;
	for (i = 0; i < n; i++)
		if (c[i].result == HOOK_OK)
			er = HOOK_OK;
		else if (c[i].result == HOOK_ACCEPTED && er != HOOK_OK)
			er = HOOK_ACCEPTED;
	return er;
}

/*
 * A batch's items (pipeline/sig.h: struct sig_batch), each an event,
 * all in one transaction (store_claim_items(); docs/design/030-
 * batches.md).  The plain path only: a retry whose every item is known
 * is answered from lookups; otherwise the process's own connection
 * claims them (no writer, no claim without a lookup: those fast paths
 * take one event; a batch is rare and the transaction must be one).
 * An item whose actions fail counts a failed attempt of its key; parked
 * at the endpoint's PARK_AFTER, it is then known, and the items are
 * claimed again without its effect; else the request fails, nothing of
 * it applied.  Deferred items are run by oncehook work.
 */
static enum hook_err
record_items(struct pipeline *p, const struct conf_endpoint *ep,
    const struct sig_batch *b, const struct req *rq, const char *body,
    size_t bodysz, time_t now, struct trace *t)
{
	enum hook_err	 er, found;
	size_t		 epi = (size_t)(ep - p->cf->endpoints);
	size_t		 i, f, tries;

	if ((er = event_items(ep, rq, b, body, bodysz, &t->items,
	    &t->nitems, &t->why)) != HOOK_OK)
		return er;
	for (i = 0; i < t->nitems; i++) {
		t->items[i].received_at = (long long)now;
		if ((er = event_finish(&t->items[i])) != HOOK_OK)
			return er;
	}
	if ((er = ensure_store(p, &t->why)) != HOOK_OK)
		return er;
	if ((t->claims = calloc(t->nitems, sizeof(*t->claims))) == NULL)
		return HOOK_ESYSTEM;
	for (i = 0; i < t->nitems; i++) {
		t->claims[i].endpoint = epi;
		t->claims[i].ev = &t->items[i];
	}
	/* A retry of the whole request is answered from reads. */
	for (i = 0; i < t->nitems; i++) {
		found = store_lookup(p->st, epi, &t->items[i]);
		if (found != HOOK_DUP && found != HOOK_PARKED)
			break;
		t->claims[i].result = found;
	}
	if (i == t->nitems)
		return HOOK_DUP;
	for (tries = 0; tries <= t->nitems; tries++) {
		er = store_claim_items(p->st, t->claims, t->nitems);
		if (er == HOOK_OK)
			return items_outcome(t->claims, t->nitems);
		if (er != HOOK_EACTION)
			break;
		for (f = 0; f < t->nitems && !t->claims[f].kept; f++)
			;
		if (f == t->nitems)
			break;
		why_set(&t->why, "item %zu: %s", f + 1, t->claims[f].why);
		if ((er = failed(p, ep, epi, &t->items[f], t->claims[f].why,
		    t)) != HOOK_PARKED)
			return er;
	}
	if (t->why.log[0] == '\0')
		for (i = 0; i < t->nitems; i++)
			if (t->claims[i].why[0] != '\0') {
				why_set(&t->why, "%s", t->claims[i].why);
				break;
			}
	return er;
}

/*
 * A retry of stored bytes, answered before any parse: the key read from
 * the raw body (event_peek()) and looked up, believed only if these very
 * bytes are stored under it (HOOK_DUP, or HOOK_PARKED), which then is
 * the answer, in *er, and 1.  Otherwise 0, ev empty: the body goes the
 * whole way (a parse, which refuses what jansson refuses), and an
 * unknown key or other bytes are kept for record() in t.
 */
static int
quick_retry(struct pipeline *p, const struct conf_endpoint *ep,
    const struct req *rq, const char *body, size_t bodysz, struct event *ev,
    struct trace *t, enum hook_err *er)
{
	enum hook_err	 found;

	if (!event_peek(ep, rq, body, bodysz, ev))
		return 0;
	if (ensure_store(p, &t->why) != HOOK_OK) {
		/* record() meets it again, after the parse. */
		memset(&t->why, 0, sizeof(t->why));
		event_clear(ev);
		return 0;
	}
	found = store_lookup(p->st, (size_t)(ep - p->cf->endpoints), ev);
	if (found == HOOK_DUP || found == HOOK_PARKED) {
		count_fresh(p, found);
		*er = found;
		return 1;
	}
	if (found == HOOK_OK || found == HOOK_ECONFLICT) {
		t->peeked = ev->key;
		t->looked = found;
		ev->key = NULL;
	}
	event_clear(ev);
	return 0;
}

static enum hook_err
run(struct pipeline *p, const struct req *rq, time_t now, struct event *ev,
    struct trace *t)
{
	const struct conf_endpoint	*ep;
	struct sig_input		 in;
	struct sig_verdict		 v;
	enum hook_err			 er;
	long long			 cl;
	char				*body = NULL, *json;
	char				 name[128];
	size_t				 bodysz = 0, jsonsz;
	const struct sig_batch		*batch;
	int				 direct, form;

	if (p->cf == NULL) {
		why_set(&t->why, "%s", p->conferr);
		return HOOK_ECONF;
	}
	if (status_wanted(p->cf, rq)) {
		if ((er = check_roots(p, rq, t)) != HOOK_OK)
			return er;
		if (ensure_store(p, &t->why) != HOOK_OK)
			why_set(&t->why, "status: rows not counted");
		return status_answer(p->cf, p->st, rq, now, &t->doc,
		    &t->docsz, &t->ctype, &t->why);
	}
	if ((ep = route_endpoint(p->cf, rq->path_info, rq->script_name)) == NULL) {
		/* What routing saw; escaped when the line is logged. */
		route_name(rq->path_info, rq->script_name, name,
		    sizeof(name));
		why_set(&t->why, "no endpoint %s%s%.64s "
		    "(SCRIPT_NAME=%.100s PATH_INFO=%.100s)", name[0] ? "named" :
		    "name in the path", name[0] ? " " : "", name,
		    rq->script_name != NULL ? rq->script_name : "-",
		    rq->path_info != NULL ? rq->path_info : "-");
		return HOOK_ENOTFOUND;
	}
	t->ep = ep;
	if (rq->method == NULL || strcmp(rq->method, "POST") != 0)
		return HOOK_EMETHOD;
	form = scheme_sends_form(ep->scheme) && is_form(rq->content_type);
	if (!form && !is_json(rq->content_type)) {
		if (scheme_sends_form(ep->scheme))
			why_client(&t->why, "the body must be a form (Content-"
			    "Type: application/x-www-form-urlencoded) or JSON");
		return HOOK_EMEDIA;
	}
	if ((cl = req_content_length(rq->content_length)) == -2) {
		why_set(&t->why, "malformed Content-Length");
		return HOOK_EBODY;
	}
	if (cl > p->cf->maxbody)
		return HOOK_ETOOBIG;
	if ((er = check_roots(p, rq, t)) != HOOK_OK)
		return er;
	if ((er = read_body(rq, cl, p->cf->maxbody, &body, &bodysz, t)) !=
	    HOOK_OK)
		return er;

	in.rq = rq;
	in.body = body;
	in.bodysz = bodysz;
	in.now = now;
	if ((er = sig_verify(ep, &in, &v)) != HOOK_OK) {
		if (er == HOOK_ESTALE)
			why_set(&t->why, "%s by %llds "
			    "(tolerance %llds)", v.why, v.skew < 0 ? -v.skew :
			    v.skew, ep->tolerance);
		else if (v.why != NULL)
			/* Apache hides Authorization from CGI programs. */
			why_set(&t->why, "%s%s", v.why, v.no_authorization &&
			    p->one_request ? " (a CGI request: Apache passes "
			    "it on only with CGIPassAuth On, see "
			    "docs/deploying.md)" : "");
		goto out;
	}
	/* A form, verified as sent, is read as a JSON object from here on
	 * (event_form()): the one body every later stage sees. */
	if (form) {
		if ((er = event_form(body, bodysz, &json, &jsonsz, &t->why)) !=
		    HOOK_OK)
			goto out;
		free(body);
		body = json;
		bodysz = jsonsz;
	}
	/* A batch's body is JSON (a form scheme sends one event): its
	 * items, each verified above, are claimed in one transaction. */
	if ((batch = scheme_batch(ep->scheme)) != NULL) {
		if (log_enabled(LOG_LEVEL_DEBUG))
			log_payload(body);
		er = record_items(p, ep, batch, rq, body, bodysz, now, t);
		goto out;
	}
	/* A CGI process looks for a writer only with its event parsed
	 * (bad input and handshakes reach none), and reads nothing before
	 * the parse: its duplicates go to the writer too (writer/shared.h,
	 * "Under CGI"). */
	direct = !p->one_request && straight(p);
	if (!direct && !p->one_request && p->cf->fast_paths &&
	    quick_retry(p, ep, rq, body, bodysz, ev, t, &er)) {
		t->ev = ev;
		if (log_enabled(LOG_LEVEL_DEBUG))
			log_payload(body);
		goto out;
	}
	if ((er = event_parse(ep, rq, body, bodysz, ev, &t->why)) ==
	    HOOK_HANDSHAKE) {
		/* Answered, never claimed: nothing touches the store. */
		if (sig_answer(ep, ev->handshake, &in, ev->token,
		    &t->answer) == -1) {
			why_set(&t->why, "handshake: the answer's MAC failed");
			er = HOOK_ESYSTEM;
		}
		goto out;
	}
	if (er != HOOK_OK)
		goto out;
	ev->received_at = (long long)now;
	t->ev = ev;
	if (log_enabled(LOG_LEVEL_DEBUG))
		log_payload(body);
	if (p->one_request)
		direct = straight(p);
	er = record(p, ep, ev, t, direct);
out:
	/* A connection that met a read-only file or an I/O error is not
	 * kept: the next request opens a new one. */
	store_drop_broken(&p->st);
	/* The event borrows the body; it is not used past this point. */
	if (ev->payload != NULL) {
		ev->payload = NULL;
		ev->payloadsz = 0;
	}
	free(body);
	return er;
}

void
pipeline_run(struct pipeline *p, const struct req *rq, time_t now,
    struct resp *resp)
{
	struct timespec	 t0, t1;
	struct trace	 t;
	struct event	 ev;
	enum hook_err	 er;
	struct trace	 seen;
	char		 ekey[160], etype[96], ewhy[400];
	double		 ms;
	size_t		 i;

	p->released = 0;
	memset(&t, 0, sizeof(t));
	memset(&ev, 0, sizeof(ev));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	er = run(p, rq, now, &ev, &t);
	resp_make(resp, &(struct resp_in){ .err = er, .key = ev.key,
	    .answer = &t.answer, .detail = t.why.client,
	    .raw = t.doc, .rawsz = t.docsz, .ctype = t.ctype,
	    .no_retry = t.ep != NULL ? t.ep->scheme->no_retry : NULL,
	    .ack = t.ep != NULL ? t.ep->scheme->ack : NULL });
	/* A 401 names its scheme where the credential is HTTP Basic's
	 * (RFC 7235 section 3.1). */
	if (er == HOOK_ESIG && t.ep != NULL &&
	    scheme_authorization(t.ep->scheme))
		resp->authenticate = 1;
	free(t.doc);
	free(t.peeked);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;

	log_escape(ekey, sizeof(ekey), ev.key);
	log_escape(etype, sizeof(etype), ev.type);
	log_escape(ewhy, sizeof(ewhy), t.why.log);
	(resp->status >= 500 ? log_error : log_info)(
	    "endpoint=%s key=\"%s\" type=\"%s\" outcome=%s status=%d "
	    "ms=%.2f%s%s%s",
	    t.ep != NULL ? t.ep->name : "-", ekey, etype,
	    resp_outcome(resp->err), resp->status, ms,
	    t.why.log[0] ? " why=\"" : "", t.why.log[0] ? ewhy : "",
	    t.why.log[0] ? "\"" : "");
	/* A batch: one line per item, after the request's. */
	for (i = 0; t.claims != NULL && i < t.nitems; i++) {
		log_escape(ekey, sizeof(ekey), t.items[i].key);
		log_escape(etype, sizeof(etype), t.items[i].type);
		log_escape(ewhy, sizeof(ewhy), t.claims[i].why);
		log_info("endpoint=%s key=\"%s\" type=\"%s\" outcome=%s "
		    "item=%zu/%zu%s%s%s", t.ep->name, ekey, etype,
		    resp_outcome(t.claims[i].result), i + 1, t.nitems,
		    ewhy[0] ? " why=\"" : "", ewhy, ewhy[0] ? "\"" : "");
	}

	/* Counted where the database may lie (never in a served root):
	 * the request checked the roots already, unless it ended first
	 * (an unknown endpoint, a wrong method). */
	memset(&seen, 0, sizeof(seen));
	if (p->cf != NULL && p->cf->counters &&
	    p->cf->counters_file != NULL && resp_counted(resp->err) &&
	    (t.rooted || check_roots(p, rq, &seen) == HOOK_OK)) {
		if (p->ctr == NULL)
			p->ctr = counters_open(p->cf->counters_file);
		/* A batch's items are counted each, by its outcome. */
		for (i = 0; t.claims != NULL && i < t.nitems; i++)
			counters_count(p->ctr, t.ep->name, t.claims[i].result,
			    (uint64_t)(ms * 1000 / (double)t.nitems),
			    (int64_t)now, t.claims[i].why[0] ?
			    log_escape(ewhy, sizeof(ewhy), t.claims[i].why) :
			    resp_outcome(t.claims[i].result));
		if (t.claims == NULL)
			counters_count(p->ctr, t.ep != NULL ? t.ep->name :
			    "", resp->err, (uint64_t)(ms * 1000),
			    (int64_t)now, t.why.log[0] ? ewhy :
			    resp_outcome(resp->err));
	}
	event_items_free(t.items, t.nitems);
	free(t.claims);
	event_clear(&ev);
}
