/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the event in a verified body (SPEC section 5).
 *
 * event_extract() parses the body with jsondoc (as jansson reads it:
 * lib/jsondoc.h), hashes its canonical form (keys sorted, no insignificant
 * white space), and copies out the event type and the idempotency key
 * from the endpoint's sources.  It is event_parse() then
 * event_finish(): the pipeline looks a retry up between the two, so
 * that a byte-identical retry is answered without the canonical form.
 * No struct jsondoc leaves pipeline/event.c (ev->doc is opaque).
 */
#ifndef ONCEHOOK_EVENT_H
#define ONCEHOOK_EVENT_H

#include <stddef.h>

#include "conf.h"
#include "hook.h"
#include "lib/crypto.h"

struct conf_endpoint;

#define EVENT_KEY_MAX	512	/* bytes in an idempotency key */
#define EVENT_TYPE_MAX	255	/* bytes in an event type */

/*
 * Whether s may be a key, a part of one or an event type of at most max
 * bytes: UTF-8 (lib/utf8.h) holding no control character (C0, DEL and
 * C1).  Keys and types reach JSON (answers, an engine's JSON functions
 * in actions), where bytes that are not UTF-8 have no faithful form.
 */
enum event_text {
	EVENT_TEXT_OK,
	EVENT_TEXT_LONG,	/* more than max bytes */
	EVENT_TEXT_UTF8,	/* not UTF-8 */
	EVENT_TEXT_CONTROL	/* a control character */
};
enum event_text	 event_text(const char *s, size_t max);
/*
 * Deepest nesting of arrays and objects in a body, the top-level object
 * counting 1: the endpoint's depth_max, what its store's JSON functions
 * read (conf.h: CONF_DEPTH_*; jsondoc itself reads 2048 levels, as
 * jansson does).  A body its actions could not read would fail on every
 * retry, so it is refused.  EVENT_DEPTH_MAX: an endpoint not loaded by
 * conf_load() (depth_max 0).
 */
#define EVENT_DEPTH_MAX	CONF_DEPTH_SQLITE

struct event {
	char		*key;		/* owned */
	/*
	 * Behind a replay guard (conf_endpoint's replay_guard): 1 if key is
	 * what the sources the signature covers give (a JSON source or the
	 * hash where the scheme signs the body, the scheme's signed header;
	 * no key scope put before it), so that a replay of the body under
	 * another key finds the event by signed_key; 0 otherwise, and for
	 * an event not from event_parse() (the payload index then holds it).
	 */
	int		 key_signed;
	/*
	 * When key_signed is 0: the key those signed sources give for this
	 * body (owned), or NULL if none gives one.  The guard asks for it
	 * besides the payload (store/engine.h: find_payload).
	 */
	char		*signed_key;
	char		*type;		/* owned; NULL if the body has none */
	char		 hash[CRYPTO_SHA256_HEXLEN + 1]; /* canonical JSON */
	const char	*payload;	/* borrowed: the raw body */
	size_t		 payloadsz;
	/*
	 * The body with every string written one way (escapes decoded),
	 * which actions see as :payload, so that SQLite's json_extract()
	 * and jsondoc name the same members; owned, or NULL when that is
	 * the raw body itself.
	 */
	char		*norm;
	size_t		 normsz;
	long long	 received_at;	/* Unix seconds */
	void		*doc;		/* pipeline/event.c's: the parse, until finished */
	char		*token;		/* owned; HOOK_HANDSHAKE: the string
					   its answer uses, or NULL */
	const struct handshake *handshake; /* HOOK_HANDSHAKE: which */
};

/*
 * Fill ev from the raw body of rq.  Returns HOOK_OK, HOOK_HANDSHAKE (the
 * scheme's handshake, pipeline/sig.h: ev->token holds the string its
 * answer uses, if any; no key),
 * HOOK_EJSON, HOOK_ENOKEY, HOOK_EBADKEY or HOOK_ESYSTEM; on failure why says
 * what, for the sender and the log (why_client()), and ev holds nothing
 * to free.  ev borrows
 * body, which must outlive it.  A body nested deeper than EVENT_DEPTH_MAX
 * is HOOK_EJSON.
 */
enum hook_err	 event_extract(const struct conf_endpoint *,
		    const struct req *, const char *body, size_t bodysz,
		    struct event *ev, struct why *why);
/*
 * event_extract() in two steps.  event_parse() validates the body (the
 * same refusals) and fills the key, the type, the token and the
 * payload; ev->hash stays empty unless a key source is the hash.
 * event_finish() then fills ev->hash and ev->norm: HOOK_OK, or
 * HOOK_ESYSTEM (ev cleared).  Finishing a finished event does nothing.
 */
enum hook_err	 event_parse(const struct conf_endpoint *,
		    const struct req *, const char *body, size_t bodysz,
		    struct event *ev, struct why *why);
enum hook_err	 event_finish(struct event *ev);
/*
 * The key and the type read from the raw body without a parse
 * (lib/jsonpeek.h), for answering a retry of stored bytes: 1 with ev->key,
 * ev->type and the payload set (ev->hash empty, nothing to finish), or
 * 0 with ev empty where only event_parse() can tell.  What it finds may
 * be believed only where a lookup finds these very bytes stored under
 * that key (store_lookup(): HOOK_DUP or HOOK_PARKED with no hash).
 */
int		 event_peek(const struct conf_endpoint *,
		    const struct req *, const char *body, size_t bodysz,
		    struct event *ev);
/*
 * The items of a batch (pipeline/sig.h: struct sig_batch) in the
 * verified body: *n events in *items (freed with event_items_free()),
 * each parsed from its item's object as event_parse() parses a body
 * (its key, type and payload; the same refusals), its key extended by
 * the batch's key_more where the endpoint keeps the scheme's key.  The
 * payloads borrow body.  HOOK_OK, or a refusal of the whole request
 * (a body without items, one item that is not an object or has no key:
 * HOOK_EJSON, HOOK_ENOKEY, HOOK_EBADKEY) with why set.  Each item is
 * then finished (event_finish()) by the caller.
 */
struct sig_batch;
enum hook_err	 event_items(const struct conf_endpoint *,
		    const struct req *, const struct sig_batch *,
		    const char *body, size_t bodysz, struct event **items,
		    size_t *n, struct why *why);
void		 event_items_free(struct event *items, size_t n);
void		 event_clear(struct event *);
/* The jansson version in use ("2.14"): the one linked in or loaded. */
const char	*event_jansson_version(void);

/*
 * Fill ev from an event as stored (its key, type and hash copied, its
 * payload borrowed and seen by actions as :payload exactly as the
 * pipeline made it), for running its actions again (replay).  HOOK_OK
 * or HOOK_ESYSTEM (ev cleared).
 */
enum hook_err	 event_stored(struct event *ev, const char *key,
		    const char *type, const char *hash, const char *payload,
		    size_t sz, long long received_at);

/*
 * A verified application/x-www-form-urlencoded body (a scheme that sends
 * forms: sig.h's scheme_sends_form()) as the JSON object the rest of
 * the pipeline reads in its place (lib/form.h's form_json(): a member
 * per name, a string, or an array of the values of a name sent more
 * than once).  The signature was checked over the raw form; from here
 * on the event is this document: keys, types, actions, the stored
 * payload and its hash.  HOOK_OK with *json a new text (NUL-terminated,
 * its length in *jsonsz) the caller frees; HOOK_EJSON (why says what)
 * or HOOK_ESYSTEM.
 */
enum hook_err	 event_form(const char *body, size_t bodysz, char **json,
		    size_t *jsonsz, struct why *why);

/*
 * Canonical JSON of the text (keys sorted, compact), as a new string
 * the caller frees; NULL if the text is not one JSON value.
 */
char		*event_canonical(const char *text, size_t sz);

/*
 * The JSON text (valid, as jsondoc_read() takes it) with every string
 * written one way: escapes decoded, then only '"', '\\' and control
 * characters escaped (\b \f \n \r \t, else \u00XX); numbers, white
 * space and member order untouched.  Returns a new string (its length
 * in *outsz) the caller frees, or NULL if out of memory.
 */
char		*event_unescape(const char *text, size_t sz, size_t *outsz);

#endif
