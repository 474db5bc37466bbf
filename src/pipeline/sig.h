/* SPDX-License-Identifier: MIT */
/*
 * oncehook: signature schemes (SPEC section 4).
 *
 * A scheme is one row in a table: its name, whether it carries a
 * timestamp, its default key and event-type sources, how a configured
 * secret becomes key bytes, and one verify function.  Adding a scheme is
 * a row plus that function.  This file knows HTTP headers and bytes, and
 * no database.  It reads JSON for three schemes only: linear, whose
 * timestamp is inside the body, reads that number with lib/jsonpeek.h
 * after the signature matched; mailgun, whose signature is inside the
 * body, reads it with lib/jsondoc.h, as the event's parse will read it,
 * so the token it verified is the one the key is made of; adyen, whose
 * items are each signed, reads the body with lib/jsondoc.h.
 */
#ifndef ONCEHOOK_SIG_H
#define ONCEHOOK_SIG_H

#include <stddef.h>
#include <time.h>

#include "hook.h"

struct conf_endpoint;
struct secret;

/* Why a verification failed, for the operator's log (never the client). */
struct sig_verdict {
	const char	*why;		/* static text */
	long long	 skew;		/* seconds off, for HOOK_ESTALE */
	int		 no_authorization; /* no Authorization header at
					   all: under CGI, Apache's
					   CGIPassAuth (docs/deploying.md) */
};

/* What verify sees: the request, its raw body, the clock. */
struct sig_input {
	const struct req	*rq;
	const char		*body;
	size_t			 bodysz;
	time_t			 now;
};

/* A message to sign (oncehook sign): what the sender would send. */
struct sig_msg {
	const char	*body;
	size_t		 bodysz;
	time_t		 now;
	const char	*id;	/* delivery or message id */
	int		 id_given; /* id chosen by the user, not random */
	const char	*event;	/* event type, for schemes with a type header */
	const char	*url;	/* the endpoint's public URL (URL-signed
				   schemes; sig_sign() fills it in) */
	const char	*cert_url; /* paypal: PAYPAL-CERT-URL to send */
	const char	*webhook_id; /* paypal: the endpoint's first id
				   (sig_sign() fills it in) */
};

#define SIG_OUT_MAX	6	/* headers one signature needs at most */

/* The headers a sender adds, in order. */
struct sig_out {
	struct {
		const char	*name;
		char		 value[768];
	}		 h[SIG_OUT_MAX];
	size_t		 n;
	/* The body to send instead of the message's, for a scheme that
	 * signs inside it (mailgun), or NULL: bodysz bytes, not
	 * NUL-terminated; the caller frees it. */
	char		*body;
	size_t		 bodysz;
};

/*
 * What a scheme's event types look like, judged by their shape alone:
 * for "oncehook check", which warns about an action section no
 * endpoint's sender would ever run.
 */
enum sig_types {
	SIG_TYPES_ANY,		/* the sender chooses */
	SIG_TYPES_DOTTED,	/* customer.created: lowercase words, dots */
	SIG_TYPES_WORD,		/* pull_request: one lowercase word */
	SIG_TYPES_SLASHED,	/* orders/create: lowercase words, slashes */
	SIG_TYPES_HOOK,		/* Merge Request Hook: ends in " Hook" */
};

/*
 * A sender's handshake (SPEC section 14): a signed request that checks
 * the endpoint rather than reports an event, verified like any other,
 * answered as the sender requires, never claimed nor stored.  It is the
 * request whose JSON string (or integer, written in decimal) at "at" is
 * "type".  Its answer is made from
 * the string at "token" (NULL: none), which is attacker-chosen text: at
 * most HOOK_TOKEN_MAX bytes, printable, escaped when written.
 */
struct handshake {
	const char	*at;		/* JSON pointer */
	const char	*type;
	const char	*token;		/* JSON pointer, or NULL */
	/*
	 * The answer's members for token (NULL if none) in out, for the
	 * verified request in; 0, or -1 if a MAC failed.  NULL: the
	 * answer is {"status":"handshake"}.
	 */
	int		(*answer)(const struct conf_endpoint *,
			    const struct sig_input *in, const char *token,
			    struct hook_answer *out);
	/* A JSON pointer: a body with a member there is no handshake
	 * (Discord's events share their PING's type), or NULL. */
	const char	*unless;
	/* The sender's other handshake, tried next, or NULL. */
	const struct handshake *next;
};

struct sig_batch;
struct sig_plain;

struct scheme {
	const char	*name;
	int		 timestamped;
	const char	*key;	/* default key sources (srclist syntax) */
	const char	*type;	/* default event-type sources */
	enum sig_types	 types;	/* what those types look like */
	/* The sender's handshake, or NULL (struct handshake). */
	const struct handshake *handshake;
	/*
	 * Top-level members a provider may change between attempts at the
	 * same event, left out of the payload hash; NULL-terminated, or
	 * NULL.  Stripe recounts "pending_webhooks" on each attempt.
	 */
	const char *const *volatile_members;
	/* The one request header the signature covers (the message id of
	 * Standard Webhooks and Svix), or NULL. */
	const char	*signed_header;
	/*
	 * Turn one configured secret into key bytes in out (owned by the
	 * caller, freed with crypto_wipe and free).  Returns 0 or -1 with
	 * a reason in err.
	 */
	int		(*secret)(const char *text, struct secret *out,
			    char *err, size_t errsz);
	/* The one MAC header of the schemes verify_plain_row() checks
	 * (its header, prefix, hex or base64), or NULL. */
	const struct sig_plain *plain;
	/* HOOK_OK, HOOK_ESIG, HOOK_ESTALE or HOOK_ESYSTEM; HOOK_ECONF
	 * where the endpoint lacks what the scheme signs (its URL). */
	enum hook_err	(*verify)(const struct conf_endpoint *,
			    const struct sig_input *, struct sig_verdict *);
	/*
	 * Sign m with one secret as the provider does: fill out with the
	 * headers to send.  Returns 0, or -1 if the MAC fails.
	 */
	int		(*sign)(const struct secret *, const struct sig_msg *m,
			    struct sig_out *out);
	/*
	 * The default of ONCEHOOK_<NAME>_PARK_AFTER: the attempt of a
	 * failing event that parks it.  1 where the provider never retries
	 * (GitHub) or disables a hook after a few failed events of any key
	 * (GitLab: 4); 3 elsewhere (docs/operations.md).
	 */
	int		 park_after;
	/* Seconds of clock skew accepted by default, or 0: 300. */
	long long	 tolerance;
	unsigned	 flags;		/* SCHEME_* below */
	/*
	 * The header whose value, with ':', is put before the default
	 * key when the request carries it (GitHub's hook id), or NULL.
	 */
	const char	*key_scope;
	/* One event per item of the body (struct sig_batch), or NULL. */
	const struct sig_batch *batch;
	/*
	 * The response header ("Name: value") by which the sender is told
	 * not to retry, sent with the answers a retry cannot change (the
	 * rows front/resp.c marks F_FINAL), or NULL: Slack's
	 * X-Slack-No-Retry.
	 */
	const char	*no_retry;
	/* The sender's own answer to its delivered events, or NULL:
	 * oncehook's JSON (struct hook_ack). */
	const struct hook_ack *ack;
};

#define SCHEME_UNSIGNED_DATA	0x01	/* signature covers no event data */
#define SCHEME_AUTHORIZATION	0x02	/* credentials in Authorization */
#define SCHEME_SIGNS_URL	0x04	/* signs ONCEHOOK_<NAME>_URL */
#define SCHEME_SENDS_FORM	0x08	/* bodies may be forms */
#define SCHEME_PUBLIC_KEY	0x10	/* keys are public (lib/pubkey.h):
					   signed with oncehook sign --key */
#define SCHEME_FETCHES_CERTS	0x20	/* its certificates fetched by URL
					   (pipeline/certs.h): libcurl */
#define SCHEME_SENDS_SECRET	0x40	/* the secret itself travels with
					   each request: nothing is signed */

/* The scheme of that name, or NULL. */
const struct scheme	*scheme_find(const char *name);
/* The names of all schemes, space separated, for error messages. */
const char		*scheme_names(void);
/*
 * 1 if the scheme's sender could send an event of that type (by its
 * shape), 0 if it never does.
 */
int			 scheme_sends_type(const struct scheme *,
			    const char *type);
/*
 * 1 if the scheme signs the public URL the provider posts to (twilio,
 * square): the endpoint needs ONCEHOOK_<NAME>_URL.
 */
int			 scheme_signs_url(const struct scheme *);
/*
 * 1 if the scheme's sender posts application/x-www-form-urlencoded
 * bodies (twilio): verified as sent, then read as the JSON object
 * lib/form.h's form_json() makes of them.
 */
int			 scheme_sends_form(const struct scheme *);
/* One of the scheme's event types, for messages; NULL if any goes. */
const char		*scheme_type_example(const struct scheme *);
/*
 * A request header whose value, when present, and ':' prefix the key
 * the scheme's default sources give, or NULL: GitHub's
 * X-GitHub-Hook-ID, as one event reaches every hook subscribed to it
 * with one X-GitHub-Delivery.  A key configured with
 * ONCEHOOK_<NAME>_KEY is taken as it is.
 */
const char		*scheme_key_scope(const struct scheme *);

/*
 * What the row says beyond its functions, read through these:
 *
 * The default of ONCEHOOK_<NAME>_TOLERANCE, seconds: 300, but 32400
 * (9 h) for mailgun, whose retries over 8 hours may carry the first
 * attempt's signature.
 */
long long		 scheme_tolerance(const struct scheme *);
/*
 * 1 if the signature covers no event data (mailgun signs a timestamp
 * and a token only): a known payload is a duplicate whatever its key
 * (conf_endpoint's replay_guard).
 */
int			 scheme_unsigned_data(const struct scheme *);
/*
 * 1 if what the sender signs covers the body (not mailgun's token alone,
 * nor a secret sent as it is: basic, gitlab), so that a key read from
 * the body is one a replay cannot change.
 */
int			 scheme_signs_body(const struct scheme *);
/*
 * 1 if the credential is the Authorization header (basic), which Apache
 * gives a CGI program only with CGIPassAuth On (mod_fcgid's: with
 * FcgidPassHeader Authorization).
 */
int			 scheme_authorization(const struct scheme *);

/*
 * A sender that puts several events in one request (SPEC section 14;
 * docs/design/030-batches.md): each item of the array at "items" is an
 * event of its own, whose object is the member "item" of the array's
 * element ("" for the element itself).  The item's object is what its
 * key and type sources, its payload and its actions see, as a whole
 * body would be.  Where the endpoint keeps the scheme's default key,
 * the item's strings (or true/false) at the pointers of "key_more" are
 * appended to it, each after a ':'.  A request whose items all stood
 * (applied, or known) is answered 200, or as the scheme's ack says.
 * The array at "items" may be the body itself ("": SendGrid's).
 */
/* Items in one request; more is 400 malformed_json.  SendGrid does not
 * say how many it sends in one: room for its largest seen, with margin. */
#define SIG_BATCH_MAX	1000
struct sig_batch {
	const char		*items;	/* JSON pointer */
	const char		*item;	/* JSON pointer in an element */
	const char *const	*key_more; /* NULL-terminated */
};

/* The scheme's batch, or NULL: one event per request. */
const struct sig_batch	*scheme_batch(const struct scheme *);

/*
 * Verify the request's signature with the endpoint's scheme against
 * every configured secret, then its timestamp.  On failure v says why.
 */
enum hook_err	sig_verify(const struct conf_endpoint *,
		    const struct sig_input *, struct sig_verdict *v)
		    __attribute__((warn_unused_result));

/*
 * The answer to the handshake hs (the one event_parse() found; NULL:
 * the scheme's first) in the verified request in, made from token
 * (NULL if its handshake takes none): 0 with out filled, or -1 if a
 * MAC failed.
 */
int		sig_answer(const struct conf_endpoint *,
		    const struct handshake *, const struct sig_input *in,
		    const char *token,
		    struct hook_answer *out)
		    __attribute__((warn_unused_result));

/*
 * Sign m with key, or where key is NULL the endpoint's first secret
 * (oncehook sign; a public-key scheme's key is a private one,
 * SECRET_PRIVATE).  Returns 0, or -1 if there is no key or the MAC
 * fails.
 */
int		sig_sign(const struct conf_endpoint *, const struct secret *key,
		    const struct sig_msg *m, struct sig_out *out)
		    __attribute__((warn_unused_result));

/* Longest signature header accepted, bytes; longer is malformed. */
#define SIG_HEADER_MAX	8192

#endif
