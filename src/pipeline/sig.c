/* SPDX-License-Identifier: MIT */
/*
 * oncehook: signature schemes (see pipeline/sig.h).
 *
 * Every scheme computes its MAC over the raw body bytes exactly as its
 * provider documents it, once per configured secret, and compares it in
 * constant time with every signature the request offers.  A request is
 * refused with one reason for the log: header missing, header malformed,
 * no signature matched, or (once a signature matched) a timestamp
 * outside the tolerance and by how much.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "front/req.h"
#include "lib/buf.h"
#include "lib/crypto.h"
#include "lib/jsondoc.h"
#include "lib/jsonpeek.h"
#include "lib/form.h"
#include "pipeline/sig.h"
#include "pipeline/sigkit.h"


/* The signatures a request offers, decoded. */
struct candidates {
	unsigned char	 v[SIG_CANDIDATES_MAX][CRYPTO_SHA256_LEN];
	size_t		 n;
};

/*
 * 1 if the MAC of the pieces under any configured secret equals any
 * candidate, 0 if none does, -1 if the MAC failed.  Every pair is
 * compared, so the time taken does not depend on which one matched.
 */
static int
match_any(const struct conf_endpoint *ep, const struct crypto_piece *pieces,
    size_t npieces, const struct candidates *c)
{
	unsigned char	 want[CRYPTO_SHA256_LEN];
	size_t		 i, j;
	int		 found = 0;

	for (i = 0; i < ep->nsecrets; i++) {
		if (ep->secrets[i].kind != SECRET_MAC)
			continue;	/* standard's whpk_: v1a's */
		if (crypto_hmac_sha256(ep->secrets[i].p, ep->secrets[i].sz,
		    pieces, npieces, want) == -1) {
			crypto_wipe(want, sizeof(want));
			return -1;
		}
		for (j = 0; j < c->n; j++)
			found |= crypto_equal(want, c->v[j], sizeof(want));
	}
	crypto_wipe(want, sizeof(want));
	return found;
}

/* The len decimal digits at s, at most max of them, into *v: 0, or -1
 * if they are anything else. */
static int
parse_digits(const char *s, size_t len, size_t max, long long *v)
{
	size_t	 i;

	if (len == 0 || len > max)
		return -1;
	for (*v = 0, i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

/*
 * Parse a decimal Unix timestamp of at most 12 digits into *ts.
 * Returns 0, or -1 if it is anything else.
 */
int
sig_parse_ts(const char *s, size_t len, long long *ts)
{
	return parse_digits(s, len, 12, ts);
}

/* HOOK_OK if ts lies within the tolerance of now, both ways. */
enum hook_err
sig_check_time(const struct conf_endpoint *ep, long long ts, time_t now,
    struct sig_verdict *v)
{
	long long	 skew = (long long)now - ts;

	if (skew > ep->tolerance || -skew > ep->tolerance) {
		v->why = skew > 0 ? "timestamp too old" :
		    "timestamp in the future";
		v->skew = skew;
		return HOOK_ESTALE;
	}
	return HOOK_OK;
}

/* Add one hex signature to c; -1 if malformed or too many. */
static int
add_hex(struct candidates *c, const char *s, size_t len)
{
	if (c->n >= SIG_CANDIDATES_MAX)
		return -1;
	if (len != 2 * CRYPTO_SHA256_LEN ||
	    crypto_unhex(s, len, c->v[c->n], CRYPTO_SHA256_LEN) !=
	    CRYPTO_SHA256_LEN)
		return -1;
	c->n++;
	return 0;
}

/* The header's value, or NULL with v->why set. */
const char *
sig_header(const struct sig_input *in, const char *name, struct sig_verdict *v)
{
	const char	*h;

	if ((h = req_header(in->rq, name)) == NULL || *h == '\0') {
		v->why = "signature header missing";
		return NULL;
	}
	if (strlen(h) > SIG_HEADER_MAX) {
		v->why = "signature header too long";
		return NULL;
	}
	return h;
}

/* Add one base64 signature to c; -1 if malformed or too many. */
static int
add_b64(struct candidates *c, const char *s, size_t len)
{
	if (c->n >= SIG_CANDIDATES_MAX)
		return -1;
	if (crypto_unbase64(s, len, c->v[c->n], CRYPTO_SHA256_LEN) !=
	    CRYPTO_SHA256_LEN)
		return -1;
	c->n++;
	return 0;
}

/*
 * The signed bytes of every scheme have one shape: an optional literal
 * prefix, an optional message id, an optional timestamp, each of the two
 * followed by the joiner, then the body.  Fills p (room for 6) and
 * returns the number of pieces.
 */
size_t
sig_signed_bytes(struct crypto_piece *p, const char *prefix, const char *id,
    const char *ts, size_t tslen, const char *join, const char *body,
    size_t bodysz)
{
	size_t	 n = 0;

	if (prefix != NULL) {
		p[n].p = prefix;
		p[n++].sz = strlen(prefix);
	}
	if (id != NULL) {
		p[n].p = id;
		p[n++].sz = strlen(id);
		p[n].p = join;
		p[n++].sz = strlen(join);
	}
	if (ts != NULL) {
		p[n].p = ts;
		p[n++].sz = tslen;
		p[n].p = join;
		p[n++].sz = strlen(join);
	}
	p[n].p = body;
	p[n++].sz = bodysz;
	return n;
}

enum hook_err
sig_matched(int rc, enum hook_err failed, struct sig_verdict *v)
{
	if (rc < 0)
		return failed;
	if (rc == 0) {
		v->why = "no signature matched";
		return HOOK_ESIG;
	}
	return HOOK_OK;
}

/* Map match_any()'s answer to an outcome: -1 is a MAC that failed. */
static enum hook_err
matched(int rc, struct sig_verdict *v)
{
	return sig_matched(rc, HOOK_ESYSTEM, v);
}

/*
 * Verification, in three shapes.
 */

/*
 * One header holding one MAC of the body, after prefix (optional unless
 * required), in hex or base64: hmac-sha256, github, shopify, razorpay,
 * woocommerce, mollie, linear.
 */
static enum hook_err
verify_plain(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v, const char *name, const char *prefix,
    int required, int base64)
{
	struct candidates	 c;
	struct crypto_piece	 body = { in->body, in->bodysz };
	const char		*h;
	size_t			 pl = prefix ? strlen(prefix) : 0;

	c.n = 0;
	if ((h = sig_header(in, name, v)) == NULL)
		return HOOK_ESIG;
	if (pl > 0 && strncmp(h, prefix, pl) == 0)
		h += pl;
	else if (required)
		goto malformed;
	if ((base64 ? add_b64(&c, h, strlen(h)) :
	    add_hex(&c, h, strlen(h))) == -1)
		goto malformed;
	return matched(match_any(ep, &body, 1, &c), v);
malformed:
	v->why = "signature header malformed";
	return HOOK_ESIG;
}

/*
 * The schemes of one MAC header (verify_plain()'s shape), a row each:
 * the header, its prefix and whether it is required, base64 or hex.
 */
struct sig_plain {
	const char	*header;
	const char	*prefix;
	int		 required;
	int		 base64;
};

static const struct sig_plain
	plain_hmac_sha256 = { "X-Webhook-Signature", "sha256=", 0, 0 },
	plain_github = { "X-Hub-Signature-256", "sha256=", 1, 0 },
	plain_shopify = { "X-Shopify-Hmac-Sha256", NULL, 0, 1 },
	plain_razorpay = { "X-Razorpay-Signature", NULL, 0, 0 },
	plain_woocommerce = { "X-WC-Webhook-Signature", NULL, 0, 1 },
	/* Mollie's own validator takes the hex with or without
	 * "sha256=". */
	plain_mollie = { "X-Mollie-Signature", "sha256=", 0, 0 };

static enum hook_err
verify_plain_row(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	const struct sig_plain	*pl = ep->scheme->plain;

	return verify_plain(ep, in, v, pl->header, pl->prefix, pl->required,
	    pl->base64);
}

/*
 * One header of tagged fields separated by sep, holding the timestamp
 * (tag tkey) and hex MACs (tag skey, several allowed; other tags,
 * malformed MACs and those past SIG_CANDIDATES_MAX ignored), over
 * timestamp, joiner, body: stripe, paddle.  As the
 * providers' libraries do, the timestamp is checked once a signature
 * matched.
 */
static enum hook_err
verify_tagged(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v, const char *name, char sep, const char *tkey,
    const char *skey, const char *join)
{
	struct candidates	 c;
	struct crypto_piece	 pieces[6];
	const char		*h, *item, *ts = NULL;
	size_t			 len, tl = strlen(tkey), sl = strlen(skey);
	size_t			 tslen = 0, n;
	long long		 t;
	enum hook_err		 er;
	char			 seps[2] = { sep, '\0' };

	c.n = 0;
	if ((h = sig_header(in, name, v)) == NULL)
		return HOOK_ESIG;
	for (item = h; *item != '\0'; item += len + (item[len] == sep)) {
		while (*item == ' ')
			item++;
		len = strcspn(item, seps);
		if (len > tl && strncmp(item, tkey, tl) == 0 &&
		    item[tl] == '=') {
			if (ts != NULL)
				goto malformed;
			ts = item + tl + 1;
			tslen = len - tl - 1;
		} else if (len > sl && strncmp(item, skey, sl) == 0 &&
		    item[sl] == '=')
			/* As the providers' libraries: a malformed entry
			 * matches nothing; past the limit, none is read. */
			(void)add_hex(&c, item + sl + 1, len - sl - 1);
	}
	if (ts == NULL || sig_parse_ts(ts, tslen, &t) == -1 || c.n == 0)
		goto malformed;
	n = sig_signed_bytes(pieces, NULL, NULL, ts, tslen, join, in->body,
	    in->bodysz);
	if ((er = matched(match_any(ep, pieces, n, &c), v)) != HOOK_OK)
		return er;
	return sig_check_time(ep, t, in->now, v);
malformed:
	v->why = "signature header malformed";
	return HOOK_ESIG;
}

static enum hook_err
verify_stripe(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	return verify_tagged(ep, in, v, "Stripe-Signature", ',', "t", "v1",
	    ".");
}

static enum hook_err
verify_paddle(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	return verify_tagged(ep, in, v, "Paddle-Signature", ';', "ts", "h1",
	    ":");
}

/*
 * One header "v0=HEX" over "v0:" TS ":" body, TS from another header:
 * slack (X-Slack-Signature, X-Slack-Request-Timestamp), zoom
 * (x-zm-signature, x-zm-request-timestamp).
 */
static enum hook_err
verify_v0(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v, const char *hsig, const char *hts)
{
	struct candidates	 c;
	struct crypto_piece	 pieces[6];
	const char		*h, *ts;
	long long		 t;
	size_t			 n;
	enum hook_err		 er;

	c.n = 0;
	if ((h = sig_header(in, hsig, v)) == NULL)
		return HOOK_ESIG;
	if ((ts = req_header(in->rq, hts)) == NULL) {
		v->why = "timestamp header missing";
		return HOOK_ESIG;
	}
	if (strncmp(h, "v0=", 3) != 0 || add_hex(&c, h + 3,
	    strlen(h + 3)) == -1 || sig_parse_ts(ts, strlen(ts), &t) == -1) {
		v->why = "signature header malformed";
		return HOOK_ESIG;
	}
	n = sig_signed_bytes(pieces, "v0:", NULL, ts, strlen(ts), ":", in->body,
	    in->bodysz);
	if ((er = matched(match_any(ep, pieces, n, &c), v)) != HOOK_OK)
		return er;
	return sig_check_time(ep, t, in->now, v);
}

static enum hook_err
verify_slack(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	return verify_v0(ep, in, v, "X-Slack-Signature",
	    "X-Slack-Request-Timestamp");
}

static enum hook_err
verify_zoom(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	return verify_v0(ep, in, v, "x-zm-signature", "x-zm-request-timestamp");
}

/*
 * Standard Webhooks, and Svix under its own header names: the
 * signature header holds space-separated "VERSION,BASE64" entries (only
 * well-formed v1 ones are checked, the first SIG_CANDIDATES_MAX) over
 * ID "." TS "." body, with the secret's base64
 * after "whsec_" as the key.
 */
static enum hook_err
verify_standard_as(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v, const char *hid, const char *hts, const char *hsig)
{
	struct candidates	 c;
	struct sig_pubsigs	*a = NULL;
	struct crypto_piece	 pieces[6];
	const char		*id, *ts, *h, *item;
	size_t			 len, n;
	long long		 t;
	long			 sz;
	enum hook_err		 er = HOOK_ESIG;
	int			 rc;

	c.n = 0;
	if ((h = sig_header(in, hsig, v)) == NULL)
		return HOOK_ESIG;
	if ((id = req_header(in->rq, hid)) == NULL || *id == '\0' ||
	    (ts = req_header(in->rq, hts)) == NULL) {
		v->why = "id or timestamp header missing";
		return HOOK_ESIG;
	}
	if (strlen(id) > 256 || sig_parse_ts(ts, strlen(ts), &t) == -1)
		goto malformed;
	for (item = h; *item != '\0'; item += len) {
		while (*item == ' ')
			item++;
		if ((len = strcspn(item, " ")) == 0)
			break;
		if (memchr(item, ',', len) == NULL)
			goto malformed;
		if (len > 3 && strncmp(item, "v1,", 3) == 0)
			(void)add_b64(&c, item + 3, len - 3);
		else if (len > 4 && strncmp(item, "v1a,", 4) == 0) {
			/* Ed25519 (whpk_ keys), tried once v1's failed. */
			if (a == NULL && (a = calloc(1, sizeof(*a))) == NULL)
				return HOOK_ESYSTEM;
			if (a->n < SIG_V1A_MAX && (sz = crypto_unbase64(
			    item + 4, len - 4, a->v[a->n], 64 + 1)) == 64)
				a->len[a->n++] = 64;
		}
	}
	if (c.n == 0 && (a == NULL || a->n == 0))
		goto malformed;
	n = sig_signed_bytes(pieces, NULL, id, ts, strlen(ts), ".", in->body,
	    in->bodysz);
	if ((rc = match_any(ep, pieces, n, &c)) == 0 && a != NULL) {
		if ((rc = sigpub_match(ep, SECRET_ED25519, pieces, n, a, v)) ==
		    -1) {
			er = HOOK_ECONF;
			goto out;
		}
	}
	if ((er = matched(rc, v)) == HOOK_OK)
		er = sig_check_time(ep, t, in->now, v);
	goto out;
malformed:
	v->why = "signature header malformed";
	er = HOOK_ESIG;
out:
	free(a);
	return er;
}

static enum hook_err
verify_standard(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	return verify_standard_as(ep, in, v, "webhook-id",
	    "webhook-timestamp", "webhook-signature");
}

static enum hook_err
verify_svix(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	return verify_standard_as(ep, in, v, "svix-id", "svix-timestamp",
	    "svix-signature");
}

/*
 * A decimal Unix time in milliseconds (at most 15 digits) into whole
 * seconds in *ts.  Returns 0, or -1 if it is anything else.
 */
static int
parse_ms(const char *s, size_t len, long long *ts)
{
	long long	 v;

	if (parse_digits(s, len, 15, &v) == -1)
		return -1;
	*ts = v / 1000;
	return 0;
}

/*
 * linear: Linear-Signature, hex over the body; the time is the body's
 * webhookTimestamp (Unix milliseconds), read once the signature matched.
 * A body without one that jsonpeek can read is refused as malformed.
 */
static enum hook_err
verify_linear(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	const char	*ts = NULL;
	size_t		 tslen = 0;
	long long	 t;
	enum hook_err	 er;

	if ((er = verify_plain(ep, in, v, "Linear-Signature", NULL, 0, 0)) !=
	    HOOK_OK)
		return er;
	if (jsonpeek(in->body, in->bodysz, "/webhookTimestamp", &ts,
	    &tslen) != JSONPEEK_OTHER || ts == NULL ||
	    parse_ms(ts, tslen, &t) == -1) {
		v->why = "webhookTimestamp missing or not milliseconds";
		return HOOK_ESIG;
	}
	return sig_check_time(ep, t, in->now, v);
}

/*
 * One header holding one MAC (hex or base64) of the timestamp header's
 * text (Unix milliseconds), the joiner and the body: webflow (":", hex),
 * cashfree ("", base64).
 */
static enum hook_err
verify_stamped_ms(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v, const char *name, const char *tsname,
    const char *join, int base64)
{
	struct candidates	 c;
	struct crypto_piece	 pieces[6];
	const char		*h, *ts;
	long long		 t;
	size_t			 n;
	enum hook_err		 er;

	c.n = 0;
	if ((h = sig_header(in, name, v)) == NULL)
		return HOOK_ESIG;
	if ((ts = req_header(in->rq, tsname)) == NULL) {
		v->why = "timestamp header missing";
		return HOOK_ESIG;
	}
	if ((base64 ? add_b64(&c, h, strlen(h)) : add_hex(&c, h,
	    strlen(h))) == -1 || parse_ms(ts, strlen(ts), &t) == -1) {
		v->why = "signature header malformed";
		return HOOK_ESIG;
	}
	n = sig_signed_bytes(pieces, NULL, NULL, ts, strlen(ts), join, in->body,
	    in->bodysz);
	if ((er = matched(match_any(ep, pieces, n, &c), v)) != HOOK_OK)
		return er;
	return sig_check_time(ep, t, in->now, v);
}

static enum hook_err
verify_webflow(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	return verify_stamped_ms(ep, in, v, "x-webflow-signature",
	    "x-webflow-timestamp", ":", 0);
}

static enum hook_err
verify_cashfree(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	return verify_stamped_ms(ep, in, v, "x-webhook-signature",
	    "x-webhook-timestamp", "", 1);
}

/*
 * vercel: x-vercel-signature, hex HMAC-SHA1 over the body, compared
 * with every secret's MAC whatever matched first.
 */
static enum hook_err
verify_vercel(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	struct crypto_piece	 body = { in->body, in->bodysz };
	unsigned char		 got[CRYPTO_SHA1_LEN];
	unsigned char		 want[CRYPTO_SHA1_LEN];
	const char		*h;
	size_t			 i;
	int			 found = 0;

	if ((h = sig_header(in, "x-vercel-signature", v)) == NULL)
		return HOOK_ESIG;
	if (strlen(h) != 2 * CRYPTO_SHA1_LEN ||
	    crypto_unhex(h, strlen(h), got, sizeof(got)) != CRYPTO_SHA1_LEN) {
		v->why = "signature header malformed";
		return HOOK_ESIG;
	}
	for (i = 0; i < ep->nsecrets; i++) {
		if (crypto_hmac_sha1(ep->secrets[i].p, ep->secrets[i].sz,
		    &body, 1, want) == -1) {
			crypto_wipe(want, sizeof(want));
			return HOOK_ESYSTEM;
		}
		found |= crypto_equal(got, want, sizeof(got));
	}
	crypto_wipe(want, sizeof(want));
	return matched(found, v);
}

/*
 * gitlab: X-Gitlab-Token carries the secret itself.  Both sides are
 * hashed first so the comparison takes the same time whatever their
 * lengths.
 */
static enum hook_err
verify_gitlab(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	unsigned char	 got[CRYPTO_SHA256_LEN], want[CRYPTO_SHA256_LEN];
	const char	*h;
	size_t		 i;
	int		 found = 0;

	if ((h = sig_header(in, "X-Gitlab-Token", v)) == NULL)
		return HOOK_ESIG;
	if (crypto_sha256(h, strlen(h), got) == -1)
		return HOOK_ESYSTEM;
	for (i = 0; i < ep->nsecrets; i++) {
		if (crypto_sha256(ep->secrets[i].p, ep->secrets[i].sz,
		    want) == -1)
			return HOOK_ESYSTEM;
		found |= crypto_equal(got, want, sizeof(got));
	}
	crypto_wipe(want, sizeof(want));
	return matched(found, v);
}

/*
 * basic: Authorization: Basic BASE64(user ":" password) (RFC 7617), each
 * secret being "user:password".  The credential and every secret are
 * hashed and all the digests compared, so the time taken depends neither
 * on where the two differ (user name or password) nor on which secret
 * matched; only on the credential's length in SHA-256 blocks, which its
 * sender knows.
 */
static enum hook_err
verify_basic(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	unsigned char	 got[CRYPTO_SHA256_LEN], want[CRYPTO_SHA256_LEN];
	unsigned char	 cred[SIG_HEADER_MAX];
	const char	*h;
	size_t		 len, i;
	long		 n;
	int		 found = 0;

	if ((h = req_header(in->rq, "Authorization")) == NULL || *h == '\0') {
		v->why = "Authorization header missing";
		v->no_authorization = 1;
		return HOOK_ESIG;
	}
	if ((len = strlen(h)) > SIG_HEADER_MAX) {
		v->why = "Authorization header too long";
		return HOOK_ESIG;
	}
	/* The scheme's name is case-insensitive (RFC 7235 section 2.1). */
	if (len < 6 || strncasecmp(h, "Basic ", 6) != 0) {
		v->why = "Authorization header is not Basic";
		return HOOK_ESIG;
	}
	for (h += 6; *h == ' '; h++)
		continue;
	for (len = strlen(h); len > 0 && h[len - 1] == ' '; len--)
		continue;
	if ((n = crypto_unbase64(h, len, cred, sizeof(cred))) <= 0 ||
	    memchr(cred, ':', (size_t)n) == NULL) {
		crypto_wipe(cred, sizeof(cred));
		v->why = "Authorization header malformed (not the base64 of "
		    "user:password)";
		return HOOK_ESIG;
	}
	i = (size_t)n;
	n = crypto_sha256(cred, i, got);
	crypto_wipe(cred, sizeof(cred));
	if (n == -1)
		return HOOK_ESYSTEM;
	for (i = 0; i < ep->nsecrets; i++) {
		if (crypto_sha256(ep->secrets[i].p, ep->secrets[i].sz,
		    want) == -1) {
			crypto_wipe(got, sizeof(got));
			return HOOK_ESYSTEM;
		}
		found |= crypto_equal(got, want, sizeof(got));
	}
	crypto_wipe(got, sizeof(got));
	crypto_wipe(want, sizeof(want));
	if (!found) {
		v->why = "user name or password wrong";
		return HOOK_ESIG;
	}
	return HOOK_OK;
}

/* A basic secret: "user:password", the user name without a colon. */
static int
secret_basic(const char *text, struct secret *out, char *err, size_t errsz)
{
	size_t	 len = strlen(text);

	/* A user name alone is no secret: the provider shows it. */
	if (strchr(text, ':') == NULL || text[0] == ':' ||
	    strchr(text, ':')[1] == '\0') {
		snprintf(err, errsz, "not user:password (a user name, a "
		    "colon, the password, neither empty)");
		return -1;
	}
	if ((out->p = malloc(len + 1)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	memcpy(out->p, text, len + 1);
	out->sz = len;
	return 0;
}

#define MAILGUN_TOKEN_MAX	256	/* bytes; Mailgun's are 50 */

/*
 * mailgun: the signature is inside the JSON body,
 * {"signature": {"timestamp": "T", "token": "K", "signature": "HEX"},
 * "event-data": {...}}, HEX being the HMAC-SHA256 of T then K (no
 * separator) with the webhook signing key.  It covers no event data:
 * the key is the token, so a captured block sent again with other data
 * is a key conflict, never a second effect; and the payload, the
 * signature left out of its hash, stands for the event whatever its
 * token (the scheme's unsigned_data).  The body is read with
 * lib/jsondoc.h, as the event's parse reads it (duplicate names
 * refused), so the token verified is the token the key is made of.
 * T may be a string or an integer.  A subaccount's event also carries
 * "parent-signature", the same HMAC with the primary account's key: it
 * is tried too (a malformed one matches nothing), so either key may be
 * configured.
 */
static enum hook_err
verify_mailgun(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	struct jsondoc		*d = NULL;
	struct candidates	 c;
	struct crypto_piece	 pieces[2];
	const char		*ts, *tok, *mac;
	char			 tsbuf[24];
	size_t			 tslen, toklen, maclen;
	long			 node;
	long long		 t;
	enum hook_err		 er;

	c.n = 0;
	switch (jsondoc_read(in->body, in->bodysz, 0, &d)) {
	case JSONDOC_OK:
		break;
	case JSONDOC_ENOMEM:
		return HOOK_ESYSTEM;
	default:
		v->why = "body is not JSON (the signature is inside it)";
		return HOOK_ESIG;
	}
	if ((node = jsondoc_get(d, "/signature")) == -1 ||
	    jsondoc_kind(d, node) != JSONDOC_OBJECT) {
		v->why = "signature member missing";
		er = HOOK_ESIG;
		goto out;
	}
	node = jsondoc_get(d, "/signature/timestamp");
	if (node != -1 && jsondoc_kind(d, node) == JSONDOC_INTEGER) {
		snprintf(tsbuf, sizeof(tsbuf), "%lld",
		    jsondoc_integer(d, node));
		ts = tsbuf;
		tslen = strlen(tsbuf);
	} else if (node == -1 ||
	    (ts = jsondoc_string(d, node, &tslen)) == NULL)
		goto malformed;
	if ((node = jsondoc_get(d, "/signature/token")) == -1 ||
	    (tok = jsondoc_string(d, node, &toklen)) == NULL ||
	    toklen == 0 || toklen > MAILGUN_TOKEN_MAX ||
	    (node = jsondoc_get(d, "/signature/signature")) == -1 ||
	    (mac = jsondoc_string(d, node, &maclen)) == NULL ||
	    sig_parse_ts(ts, tslen, &t) == -1 || add_hex(&c, mac, maclen) == -1)
		goto malformed;
	if ((node = jsondoc_get(d, "/signature/parent-signature")) != -1 &&
	    (mac = jsondoc_string(d, node, &maclen)) != NULL)
		(void)add_hex(&c, mac, maclen);
	pieces[0].p = ts;
	pieces[0].sz = tslen;
	pieces[1].p = tok;
	pieces[1].sz = toklen;
	if ((er = matched(match_any(ep, pieces, 2, &c), v)) == HOOK_OK)
		er = sig_check_time(ep, t, in->now, v);
	goto out;
malformed:
	v->why = "signature member malformed";
	er = HOOK_ESIG;
out:
	jsondoc_free(d);
	return er;
}

/*
 * The pieces Twilio signs for a form body: the URL, then each
 * parameter's name and value, sorted by name and then by value, a
 * parameter sent twice with one value counted once (as twilio-node's
 * validateRequest does).  f is sorted here; *np the number of pieces.
 * Returns a new array the caller frees, or NULL if out of memory.
 */
static struct crypto_piece *
twilio_pieces(const char *url, const char *body, size_t bodysz,
    struct form *f, size_t *np)
{
	struct crypto_piece	*p;
	size_t			 i, n = 0;

	if (form_parse(body, bodysz, f) == -1)
		return NULL;
	form_sort(f);
	if ((p = calloc(1 + 2 * f->n, sizeof(*p))) == NULL) {
		form_clear(f);
		return NULL;
	}
	p[n].p = url;
	p[n++].sz = strlen(url);
	for (i = 0; i < f->n; i++) {
		if (i > 0 && f->v[i].namesz == f->v[i - 1].namesz &&
		    f->v[i].valuesz == f->v[i - 1].valuesz &&
		    memcmp(f->v[i].name, f->v[i - 1].name,
		    f->v[i].namesz) == 0 && memcmp(f->v[i].value,
		    f->v[i - 1].value, f->v[i].valuesz) == 0)
			continue;
		p[n].p = f->v[i].name;
		p[n++].sz = f->v[i].namesz;
		p[n].p = f->v[i].value;
		p[n++].sz = f->v[i].valuesz;
	}
	*np = n;
	return p;
}

/*
 * 1 if X-Twilio-Webhooks-Signature-Settings names HMAC_SHA256 (a
 * Webhooks Rule's SharedKey signs then), 0 if it is absent or names
 * HMAC_SHA1, -1 for any other algorithm.
 */
static int
twilio_sha256(const struct sig_input *in)
{
	const char	*h, *p, *a;
	size_t		 len;

	if ((h = req_header(in->rq, "X-Twilio-Webhooks-Signature-Settings")) ==
	    NULL)
		return 0;
	for (p = h; *p != '\0'; p += len + (p[len] == ',')) {
		while (*p == ' ')
			p++;
		len = strcspn(p, ",");
		if (len < 10 || strncmp(p, "algorithm=", 10) != 0)
			continue;
		a = p + 10;
		len -= 10;
		while (len > 0 && a[len - 1] == ' ')
			len--;
		if (len == 11 && strncasecmp(a, "HMAC_SHA256", 11) == 0)
			return 1;
		if (len == 9 && strncasecmp(a, "HMAC_SHA1", 9) == 0)
			return 0;
		return -1;
	}
	return 0;
}

/*
 * The value of bodySHA256 in the request's query string (Twilio's JSON
 * bodies), its length in *len; NULL if there is none.
 */
static const char *
body_sha256_param(const struct req *rq, size_t *len)
{
	const char	*p;
	size_t		 n;

	if (rq->query_string == NULL)
		return NULL;
	for (p = rq->query_string; *p != '\0'; p += n + (p[n] == '&')) {
		n = strcspn(p, "&");
		if (n >= 11 && strncmp(p, "bodySHA256=", 11) == 0) {
			*len = n - 11;
			return p + 11;
		}
	}
	return NULL;
}

/*
 * Twilio's JSON bodies: the URL it called, the configured one with
 * bodySHA256=HEX appended to its query string, is signed alone (no
 * parameters), and HEX must be the SHA-256 of the body.  Fills p (room
 * for 4) and returns the number of pieces; 0 with v->why set if HEX is
 * not the body's.
 */
static size_t
twilio_json_pieces(const char *url, const char *hex, size_t hexlen,
    const struct sig_input *in, struct crypto_piece *p,
    struct sig_verdict *v)
{
	unsigned char	 want[CRYPTO_SHA256_LEN], got[CRYPTO_SHA256_LEN];

	if (crypto_unhex(hex, hexlen, got, sizeof(got)) != CRYPTO_SHA256_LEN ||
	    crypto_sha256(in->body, in->bodysz, want) == -1 ||
	    !crypto_equal(want, got, sizeof(want))) {
		v->why = "body does not hash to the signed bodySHA256";
		return 0;
	}
	p[0].p = url;
	p[0].sz = strlen(url);
	p[1].p = strchr(url, '?') != NULL ? "&" : "?";
	p[1].sz = 1;
	p[2].p = "bodySHA256=";
	p[2].sz = 11;
	p[3].p = hex;
	p[3].sz = hexlen;
	return 4;
}

/*
 * twilio: X-Twilio-Signature: base64 HMAC-SHA1(auth token, URL + the
 * form's parameters, see twilio_pieces()), or HMAC-SHA256 where
 * X-Twilio-Webhooks-Signature-Settings says so; where the query string
 * has bodySHA256 (a JSON body), over the URL with it alone
 * (twilio_json_pieces()).  The URL is the endpoint's, never the
 * request's Host.
 */
static enum hook_err
verify_twilio(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	unsigned char		 got[CRYPTO_SHA256_LEN];
	unsigned char		 want[CRYPTO_SHA256_LEN];
	struct crypto_piece	*pieces, jp[4];
	struct form		 f;
	const char		*h, *hex;
	size_t			 i, n, mdlen, hexlen;
	int			 sha256, found = 0;

	if (ep->url == NULL) {
		v->why = "no public URL configured (ONCEHOOK_<NAME>_URL)";
		return HOOK_ECONF;
	}
	if ((h = sig_header(in, "X-Twilio-Signature", v)) == NULL)
		return HOOK_ESIG;
	if ((sha256 = twilio_sha256(in)) == -1) {
		v->why = "signature algorithm not supported";
		return HOOK_ESIG;
	}
	mdlen = sha256 ? CRYPTO_SHA256_LEN : CRYPTO_SHA1_LEN;
	if (crypto_unbase64(h, strlen(h), got, sizeof(got)) != (long)mdlen) {
		v->why = "signature header malformed";
		return HOOK_ESIG;
	}
	memset(&f, 0, sizeof(f));
	if ((hex = body_sha256_param(in->rq, &hexlen)) != NULL) {
		if ((n = twilio_json_pieces(ep->url, hex, hexlen, in, jp,
		    v)) == 0)
			return HOOK_ESIG;
		pieces = jp;
	} else if ((pieces = twilio_pieces(ep->url, in->body, in->bodysz, &f,
	    &n)) == NULL)
		return HOOK_ESYSTEM;
	for (i = 0; i < ep->nsecrets; i++) {
		if ((sha256 ? crypto_hmac_sha256(ep->secrets[i].p,
		    ep->secrets[i].sz, pieces, n, want) :
		    crypto_hmac_sha1(ep->secrets[i].p, ep->secrets[i].sz,
		    pieces, n, want)) == -1) {
			found = -1;
			break;
		}
		found |= crypto_equal(want, got, mdlen);
	}
	crypto_wipe(want, sizeof(want));
	if (pieces != jp)
		free(pieces);
	form_clear(&f);
	return matched(found, v);
}

/*
 * square: x-square-hmacsha256-signature: base64 HMAC-SHA256(signature
 * key, notification URL + body).
 */
static enum hook_err
verify_square(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	struct candidates	 c;
	struct crypto_piece	 pieces[6];
	const char		*h;
	size_t			 n;

	c.n = 0;
	if (ep->url == NULL) {
		v->why = "no notification URL configured (ONCEHOOK_<NAME>_URL)";
		return HOOK_ECONF;
	}
	if ((h = sig_header(in, "x-square-hmacsha256-signature", v)) == NULL)
		return HOOK_ESIG;
	if (add_b64(&c, h, strlen(h)) == -1) {
		v->why = "signature header malformed";
		return HOOK_ESIG;
	}
	n = sig_signed_bytes(pieces, ep->url, NULL, NULL, 0, "", in->body,
	    in->bodysz);
	return matched(match_any(ep, pieces, n, &c), v);
}

/*
 * adyen: a batch (scheme_batch()) whose every item carries its own
 * signature, base64 HMAC-SHA256 in additionalData.hmacSignature, over
 * the item's pspReference, originalReference, merchantAccountCode,
 * merchantReference, amount.value, amount.currency, eventCode and
 * success joined by ':', each as it is (no escaping), "" when absent
 * or null: Adyen's "Verify HMAC signatures" and @adyen/api-library's
 * HmacValidator.getDataToSign().  The request stands only if every
 * item does; its items' texts are jsondoc's (the body is parsed here,
 * as for mailgun: the signatures are inside it).
 */
static const char *const adyen_fields[] = {
	"/pspReference", "/originalReference", "/merchantAccountCode",
	"/merchantReference", "/amount/value", "/amount/currency",
	"/eventCode", "/success",
};
#define ADYEN_NFIELDS	(sizeof(adyen_fields) / sizeof(adyen_fields[0]))

static const char *const adyen_key[] = { "/eventCode", "/success", NULL };
static const struct sig_batch adyen_batch = {
	"/notificationItems", "/NotificationRequestItem", adyen_key
};
/* Adyen's answer to a batch it delivered. */
static const struct hook_ack adyen_ack = { 200, "[accepted]" };

/*
 * The value at item + field as HmacValidator writes it into the signed
 * text: a string's bytes, an integer in decimal (in num), true or false;
 * "" if absent or null.  0, or -1 for a value of another kind.
 */
static int
adyen_field(const struct jsondoc *d, const char *item, const char *field,
    char num[24], const char **v, size_t *len)
{
	char	 ptr[128];
	long	 n;

	snprintf(ptr, sizeof(ptr), "%s%s", item, field);
	*v = "";
	*len = 0;
	if ((n = jsondoc_get(d, ptr)) == -1)
		return 0;
	switch (jsondoc_kind(d, n)) {
	case JSONDOC_NULL:
		return 0;
	case JSONDOC_STRING:
		*v = jsondoc_string(d, n, len);
		return 0;
	case JSONDOC_INTEGER:
		snprintf(num, 24, "%lld", jsondoc_integer(d, n));
		break;
	case JSONDOC_TRUE:
		snprintf(num, 24, "true");
		break;
	case JSONDOC_FALSE:
		snprintf(num, 24, "false");
		break;
	default:
		return -1;
	}
	*v = num;
	*len = strlen(num);
	return 0;
}

/*
 * The signed text of the item at pointer item, as pieces (2 *
 * ADYEN_NFIELDS - 1 of them); num holds its numbers.  0, or -1 if a
 * field is of a kind HmacValidator would not write as Adyen does.
 */
static int
adyen_signed(const struct jsondoc *d, const char *item,
    struct crypto_piece *p, char num[][24])
{
	const char	*v;
	size_t		 i, n = 0;

	for (i = 0; i < ADYEN_NFIELDS; i++) {
		if (i > 0) {
			p[n].p = ":";
			p[n++].sz = 1;
		}
		if (adyen_field(d, item, adyen_fields[i], num[i], &v,
		    &p[n].sz) == -1)
			return -1;
		p[n++].p = v;
	}
	return 0;
}

static enum hook_err
verify_adyen(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	struct crypto_piece	 p[2 * ADYEN_NFIELDS];
	struct candidates	 c;
	struct jsondoc		*d;
	char			 item[96], ptr[128], num[ADYEN_NFIELDS][24];
	const char		*sig;
	enum hook_err		 er = HOOK_OK;
	size_t			 i, len;
	long			 n;

	switch (jsondoc_read(in->body, in->bodysz, 0, &d)) {
	case JSONDOC_OK:
		break;
	case JSONDOC_ENOMEM:
		return HOOK_ESYSTEM;
	default:
		v->why = "body is not JSON: no item signatures";
		return HOOK_ESIG;
	}
	for (i = 0; er == HOOK_OK; i++) {
		snprintf(item, sizeof(item), "%s/%zu%s", adyen_batch.items, i,
		    adyen_batch.item);
		if (jsondoc_get(d, item) == -1) {
			if (i == 0) {
				v->why = "no notificationItems";
				er = HOOK_ESIG;
			}
			break;
		}
		if (i == SIG_BATCH_MAX) {
			v->why = "more notificationItems than a batch holds";
			er = HOOK_ESIG;
			break;
		}
		snprintf(ptr, sizeof(ptr), "%s/additionalData/hmacSignature",
		    item);
		c.n = 0;
		if ((n = jsondoc_get(d, ptr)) == -1 ||
		    (sig = jsondoc_string(d, n, &len)) == NULL) {
			v->why = "an item has no additionalData.hmacSignature";
			er = HOOK_ESIG;
		} else if (add_b64(&c, sig, len) == -1 ||
		    adyen_signed(d, item, p, num) == -1) {
			v->why = "an item's signature or fields malformed";
			er = HOOK_ESIG;
		} else if ((er = matched(match_any(ep, p, 2 * ADYEN_NFIELDS - 1,
		    &c), v)) == HOOK_ESIG)
			v->why = "an item's signature matched no key";
	}
	jsondoc_free(d);
	return er;
}

/* Adyen's HMAC key: hex, as the Customer Area shows it. */
static int
secret_hex(const char *text, struct secret *out, char *err, size_t errsz)
{
	size_t	 len = strlen(text);
	long	 n;

	if ((out->p = malloc(len / 2 + 1)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	if (len == 0 || len % 2 != 0 ||
	    (n = crypto_unhex(text, len, out->p, len / 2 + 1)) <= 0) {
		free(out->p);
		out->p = NULL;
		snprintf(err, errsz, "not a key in hex (Adyen's HMAC key)");
		return -1;
	}
	out->sz = (size_t)n;
	return 0;
}

/*
 * Standard Webhooks and Svix secrets: "whsec_" (optional) and then the
 * key in base64, padded or not.
 */
int
sig_secret_whsec(const char *text, struct secret *out, char *err,
    size_t errsz)
{
	size_t	 len;
	long	 n;

	if (strncmp(text, "whsec_", 6) == 0)
		text += 6;
	len = strlen(text);
	if ((out->p = malloc(len + 1)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	if ((n = crypto_unbase64(text, len, out->p, len + 1)) <= 0) {
		free(out->p);
		out->p = NULL;
		snprintf(err, errsz, "not whsec_ followed by base64");
		return -1;
	}
	out->sz = (size_t)n;
	return 0;
}

/*
 * Signing, for oncehook sign: each scheme's sender side, built from the
 * same signed bytes its verify function checks.
 */

void
sig_out_add(struct sig_out *o, const char *name, const char *fmt, ...)
{
	va_list	 ap;

	if (o->n == SIG_OUT_MAX)
		return;
	o->h[o->n].name = name;
	va_start(ap, fmt);
	vsnprintf(o->h[o->n].value, sizeof(o->h[o->n].value), fmt, ap);
	va_end(ap);
	o->n++;
}

/*
 * The MAC of pieces as hex (65 bytes) or base64 (45 bytes) text in out.
 */
static int
mac_pieces(const struct secret *k, const struct crypto_piece *pieces,
    size_t n, int base64, char *out)
{
	unsigned char	 md[CRYPTO_SHA256_LEN];

	if (crypto_hmac_sha256(k->p, k->sz, pieces, n, md) == -1)
		return -1;
	if (base64)
		(void)crypto_base64(md, sizeof(md), out, 45);
	else
		crypto_hex(md, sizeof(md), out);
	crypto_wipe(md, sizeof(md));
	return 0;
}

/*
 * The MAC of m's signed bytes (see sig_signed_bytes()) as hex (65 bytes) or
 * base64 (45 bytes) text in out; ts receives m's time as text.
 */
static int
mac_text(const struct secret *k, const struct sig_msg *m, const char *prefix,
    const char *id, int timed, const char *join, int base64, char ts[24],
    char *out)
{
	struct crypto_piece	 pieces[6];
	size_t			 n;

	snprintf(ts, 24, "%lld", (long long)m->now);
	n = sig_signed_bytes(pieces, prefix, id, timed ? ts : NULL, strlen(ts),
	    join, m->body, m->bodysz);
	return mac_pieces(k, pieces, n, base64, out);
}

/* The MAC header of a plain row, as its sender writes it. */
static void
plain_out(struct sig_out *o, const struct sig_plain *pl, const char *mac)
{
	sig_out_add(o, pl->header, "%s%s", pl->prefix != NULL ? pl->prefix :
	    "", mac);
}

static int
sign_hmac_sha256(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	char	 ts[24], mac[65];

	if (mac_text(k, m, NULL, NULL, 0, "", 0, ts, mac) == -1)
		return -1;
	plain_out(o, &plain_hmac_sha256, mac);
	/* The body's id or hash is the key unless one was asked for. */
	if (m->id_given)
		sig_out_add(o, "X-Idempotency-Key", "%s", m->id);
	return 0;
}

static int
sign_github(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	char	 ts[24], mac[65];

	if (mac_text(k, m, NULL, NULL, 0, "", 0, ts, mac) == -1)
		return -1;
	sig_out_add(o, "X-GitHub-Event", "%s", m->event ? m->event : "ping");
	sig_out_add(o, "X-GitHub-Delivery", "%s", m->id);
	plain_out(o, &plain_github, mac);
	return 0;
}

static int
sign_shopify(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	char	 ts[24], mac[45];

	if (mac_text(k, m, NULL, NULL, 0, "", 1, ts, mac) == -1)
		return -1;
	sig_out_add(o, "X-Shopify-Topic", "%s",
	    m->event ? m->event : "orders/create");
	sig_out_add(o, "X-Shopify-Event-Id", "%s", m->id);
	sig_out_add(o, "X-Shopify-Webhook-Id", "%s", m->id);
	plain_out(o, &plain_shopify, mac);
	return 0;
}

/*
 * The sender side of verify_tagged(): header NAME: TKEY=TS SEP SKEY=HEX,
 * the MAC over TS, joiner, body.
 */
static int
sign_tagged(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o, const char *name, char sep, const char *tkey,
    const char *skey, const char *join)
{
	char	 ts[24], mac[65];

	if (mac_text(k, m, NULL, NULL, 1, join, 0, ts, mac) == -1)
		return -1;
	sig_out_add(o, name, "%s=%s%c%s=%s", tkey, ts, sep, skey, mac);
	return 0;
}

static int
sign_stripe(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	return sign_tagged(k, m, o, "Stripe-Signature", ',', "t", "v1", ".");
}

static int
sign_paddle(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	return sign_tagged(k, m, o, "Paddle-Signature", ';', "ts", "h1", ":");
}

/* The sender side of verify_v0(). */
static int
sign_v0(const struct secret *k, const struct sig_msg *m, struct sig_out *o,
    const char *hsig, const char *hts)
{
	char	 ts[24], mac[65];

	if (mac_text(k, m, "v0:", NULL, 1, ":", 0, ts, mac) == -1)
		return -1;
	sig_out_add(o, hts, "%s", ts);
	sig_out_add(o, hsig, "v0=%s", mac);
	return 0;
}

static int
sign_slack(const struct secret *k, const struct sig_msg *m, struct sig_out *o)
{
	return sign_v0(k, m, o, "X-Slack-Signature",
	    "X-Slack-Request-Timestamp");
}

static int
sign_zoom(const struct secret *k, const struct sig_msg *m, struct sig_out *o)
{
	return sign_v0(k, m, o, "x-zm-signature", "x-zm-request-timestamp");
}

static int
sign_standard_as(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o, const char *hid, const char *hts, const char *hsig)
{
	char	 ts[24], mac[100];

	if (k->kind == SECRET_ED25519) {
		fprintf(stderr, "oncehook sign: the endpoint's first secret is "
		    "a public key (whpk_): sign v1a with --key, or put a "
		    "whsec_ secret first\n");
		return -1;
	}
	if (k->kind == SECRET_PRIVATE) {
		/* Ed25519: Standard Webhooks' v1a. */
		if (sigpub_sign_v1a(k, m, mac, sizeof(mac)) == -1)
			return -1;
		snprintf(ts, sizeof(ts), "%lld", (long long)m->now);
	} else if (mac_text(k, m, NULL, m->id, 1, ".", 1, ts, mac + 3) == -1)
		return -1;
	else
		memcpy(mac, "v1,", 3);
	sig_out_add(o, hid, "%s", m->id);
	sig_out_add(o, hts, "%s", ts);
	sig_out_add(o, hsig, "%s", mac);
	return 0;
}

static int
sign_standard(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	return sign_standard_as(k, m, o, "webhook-id", "webhook-timestamp",
	    "webhook-signature");
}

static int
sign_svix(const struct secret *k, const struct sig_msg *m, struct sig_out *o)
{
	return sign_standard_as(k, m, o, "svix-id", "svix-timestamp",
	    "svix-signature");
}

/* gitlab sends the secret itself: sign prints it, as GitLab would. */
static int
sign_gitlab(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	sig_out_add(o, "X-Gitlab-Event", "%s",
	    m->event ? m->event : "System Hook");
	sig_out_add(o, "X-Gitlab-Event-UUID", "%s", m->id);
	sig_out_add(o, "X-Gitlab-Token", "%.*s", (int)k->sz,
	    (const char *)k->p);
	return 0;
}

/*
 * Handshakes (struct handshake in sig.h).
 */

/* Slack's url_verification wants {"challenge": the body's challenge}. */
static int
answer_slack(const struct conf_endpoint *ep, const struct sig_input *in,
    const char *token, struct hook_answer *out)
{
	out->name[0] = "challenge";
	snprintf(out->value[0], sizeof(out->value[0]), "%s", token);
	out->n = 1;
	return 0;
}

/*
 * The index of the secret that signed the verified request (its v0
 * signature in hsig over "v0:" TS ":" body), or -1 if none did or a
 * MAC failed.  Each secret is tried in turn, in constant time each.
 */
static long
v0_signer(const struct conf_endpoint *ep, const struct sig_input *in,
    const char *hsig, const char *hts)
{
	struct candidates	 c;
	struct crypto_piece	 pieces[6];
	unsigned char		 want[CRYPTO_SHA256_LEN];
	const char		*h, *ts;
	size_t			 i, n;
	long			 found = -1;

	c.n = 0;
	if ((h = req_header(in->rq, hsig)) == NULL ||
	    (ts = req_header(in->rq, hts)) == NULL ||
	    strncmp(h, "v0=", 3) != 0 || add_hex(&c, h + 3,
	    strlen(h + 3)) == -1)
		return -1;
	n = sig_signed_bytes(pieces, "v0:", NULL, ts, strlen(ts), ":", in->body,
	    in->bodysz);
	for (i = 0; i < ep->nsecrets && found == -1; i++) {
		if (crypto_hmac_sha256(ep->secrets[i].p, ep->secrets[i].sz,
		    pieces, n, want) == -1)
			break;
		if (crypto_equal(want, c.v[0], sizeof(want)))
			found = (long)i;
	}
	crypto_wipe(want, sizeof(want));
	return found;
}

/*
 * Zoom's endpoint.url_validation wants {"plainToken": the token,
 * "encryptedToken": hex HMAC-SHA256(secret, token)}, with the secret
 * that signed the request (several are configured while one rotates).
 */
static int
answer_zoom(const struct conf_endpoint *ep, const struct sig_input *in,
    const char *token, struct hook_answer *out)
{
	struct crypto_piece	 p = { token, strlen(token) };
	unsigned char		 md[CRYPTO_SHA256_LEN];
	long			 k;

	if ((k = v0_signer(ep, in, "x-zm-signature",
	    "x-zm-request-timestamp")) == -1 ||
	    crypto_hmac_sha256(ep->secrets[k].p, ep->secrets[k].sz, &p, 1,
	    md) == -1) {
		crypto_wipe(md, sizeof(md));
		return -1;
	}
	out->name[0] = "plainToken";
	snprintf(out->value[0], sizeof(out->value[0]), "%s", token);
	out->name[1] = "encryptedToken";
	crypto_hex(md, sizeof(md), out->value[1]);
	out->n = 2;
	crypto_wipe(md, sizeof(md));
	return 0;
}

/* Slack: a Request URL's check (Events API, interactivity). */
static const struct handshake slack_handshake = {
	"/type", "url_verification", "/challenge", answer_slack, NULL, NULL
};

/*
 * Discord: its interactions endpoint's PING ({"type":1}, answered
 * {"type":1}), and its webhook events' (type 0, answered 204 as every
 * event is: discord_ack).  A webhook event is type 1 too, with an
 * "event" member.
 */
static int
answer_discord(const struct conf_endpoint *ep, const struct sig_input *in,
    const char *token, struct hook_answer *out)
{
	(void)ep, (void)in, (void)token;
	out->name[0] = "type";
	memcpy(out->value[0], "1", 2);
	out->number = 1;
	out->n = 1;
	return 0;
}

static const struct handshake discord_events_ping = {
	"/type", "0", NULL, NULL, NULL, NULL
};
static const struct handshake discord_handshake = {
	"/type", "1", NULL, answer_discord, "/event", &discord_events_ping
};
/* Discord's webhook events expect 204, no body. */
static const struct hook_ack discord_ack = { 204, NULL };

/* SendGrid: an array of events, each with its sg_event_id. */
static const struct sig_batch sendgrid_batch = { "", "", NULL };

/* Zoom: the endpoint's validation, at set-up and every 72 hours. */
static const struct handshake zoom_handshake = {
	"/event", "endpoint.url_validation", "/payload/plainToken",
	answer_zoom, NULL, NULL
};

/* Stripe: an event destination's ping (a thin event); any 2xx will do. */
static const struct handshake stripe_handshake = {
	"/type", "v2.core.event_destination.ping", NULL, NULL, NULL, NULL
};


static int
sign_razorpay(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	char	 ts[24], mac[65];

	if (mac_text(k, m, NULL, NULL, 0, "", 0, ts, mac) == -1)
		return -1;
	sig_out_add(o, "X-Razorpay-Event-Id", "%s", m->id);
	plain_out(o, &plain_razorpay, mac);
	return 0;
}

static int
sign_woocommerce(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	char	 ts[24], mac[45];
	const char *topic = m->event ? m->event : "order.created";

	if (mac_text(k, m, NULL, NULL, 0, "", 1, ts, mac) == -1)
		return -1;
	sig_out_add(o, "X-WC-Webhook-Topic", "%s", topic);
	sig_out_add(o, "X-WC-Webhook-Resource", "%.*s",
	    (int)strcspn(topic, "."), topic);
	sig_out_add(o, "X-WC-Webhook-Delivery-ID", "%s", m->id);
	plain_out(o, &plain_woocommerce, mac);
	return 0;
}

static int
sign_mollie(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	char	 ts[24], mac[65];

	if (mac_text(k, m, NULL, NULL, 0, "", 0, ts, mac) == -1)
		return -1;
	plain_out(o, &plain_mollie, mac);
	return 0;
}

/* The body carries its own webhookTimestamp: sign adds none. */
static int
sign_linear(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	char	 ts[24], mac[65];

	if (mac_text(k, m, NULL, NULL, 0, "", 0, ts, mac) == -1)
		return -1;
	sig_out_add(o, "Linear-Delivery", "%s", m->id);
	sig_out_add(o, "Linear-Event", "%s", m->event ? m->event : "Issue");
	sig_out_add(o, "Linear-Signature", "%s", mac);
	return 0;
}

/* The sender side of verify_stamped_ms(): m's time in milliseconds. */
static int
sign_stamped_ms(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o, const char *name, const char *tsname,
    const char *join, int base64)
{
	struct crypto_piece	 pieces[6];
	char			 ts[32], mac[65];
	size_t			 n;

	snprintf(ts, sizeof(ts), "%lld000", (long long)m->now);
	n = sig_signed_bytes(pieces, NULL, NULL, ts, strlen(ts), join, m->body,
	    m->bodysz);
	if (mac_pieces(k, pieces, n, base64, mac) == -1)
		return -1;
	sig_out_add(o, tsname, "%s", ts);
	sig_out_add(o, name, "%s", mac);
	return 0;
}

static int
sign_webflow(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	return sign_stamped_ms(k, m, o, "x-webflow-signature",
	    "x-webflow-timestamp", ":", 0);
}

static int
sign_cashfree(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	return sign_stamped_ms(k, m, o, "x-webhook-signature",
	    "x-webhook-timestamp", "", 1);
}

static int
sign_vercel(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	struct crypto_piece	 body = { m->body, m->bodysz };
	unsigned char		 md[CRYPTO_SHA1_LEN];
	char			 mac[2 * CRYPTO_SHA1_LEN + 1];

	if (crypto_hmac_sha1(k->p, k->sz, &body, 1, md) == -1)
		return -1;
	crypto_hex(md, sizeof(md), mac);
	crypto_wipe(md, sizeof(md));
	sig_out_add(o, "x-vercel-signature", "%s", mac);
	return 0;
}

/*
 * adyen: m's body is a batch whose every item has an additionalData
 * object without an hmacSignature; the body to send is that body with
 * "hmacSignature":"<base64>" put first in each item's additionalData,
 * the rest byte for byte.  -1 if the body is not such a batch, or memory
 * runs out.
 */
static int
sign_adyen(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	struct crypto_piece	 p[2 * ADYEN_NFIELDS];
	struct jsondoc		*d = NULL;
	struct buf		 b = { NULL, 0, 0 };
	char			 item[96], ptr[128], num[ADYEN_NFIELDS][24];
	char			 mac[45];
	const char		*raw, *q;
	size_t			 i, len, at, from = 0;
	long			 node;

	if (jsondoc_read(m->body, m->bodysz, 0, &d) != JSONDOC_OK)
		goto fail;
	for (i = 0;; i++) {
		snprintf(item, sizeof(item), "%s/%zu%s", adyen_batch.items, i,
		    adyen_batch.item);
		if (jsondoc_get(d, item) == -1) {
			if (i == 0)
				goto fail;
			break;
		}
		snprintf(ptr, sizeof(ptr), "%s/additionalData", item);
		if (i == SIG_BATCH_MAX || (node = jsondoc_get(d, ptr)) == -1 ||
		    jsondoc_kind(d, node) != JSONDOC_OBJECT ||
		    (raw = jsondoc_raw(d, node, &len)) == NULL)
			goto fail;
		snprintf(ptr, sizeof(ptr), "%s/additionalData/hmacSignature",
		    item);
		if (jsondoc_get(d, ptr) != -1 ||
		    adyen_signed(d, item, p, num) == -1 ||
		    mac_pieces(k, p, 2 * ADYEN_NFIELDS - 1, 1, mac) == -1)
			goto fail;
		/* Right after the object's '{'; a ',' if a member follows. */
		at = (size_t)(raw - m->body) + 1;
		for (q = raw + 1; q < raw + len && strchr(" \t\r\n", *q); q++)
			continue;
		if (buf_add(&b, m->body + from, at - from) == -1 ||
		    buf_add(&b, "\"hmacSignature\":\"", 17) == -1 ||
		    buf_add(&b, mac, strlen(mac)) == -1 ||
		    buf_add(&b, *q == '}' ? "\"" : "\",", *q == '}' ? 1 : 2)
		    == -1)
			goto fail;
		from = at;
	}
	if (buf_add(&b, m->body + from, m->bodysz - from) == -1)
		goto fail;
	jsondoc_free(d);
	o->body = b.p;
	o->bodysz = b.len;
	return 0;
fail:
	jsondoc_free(d);
	free(b.p);
	return -1;
}

/* Linear stamps each attempt anew (its time is in the body). */
static const char *const linear_volatile[] = { "webhookTimestamp", NULL };
/* Telnyx counts its attempts in meta.attempt. */
static const char *const telnyx_volatile[] = { "meta", NULL };

/* basic: the Authorization header itself, as the sender's URL makes it. */
static int
sign_basic(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	char	 b64[sizeof(o->h[0].value) - 6];

	(void)m;
	if (4 * ((k->sz + 2) / 3) + 1 > sizeof(b64) ||
	    crypto_base64(k->p, k->sz, b64, sizeof(b64)) == -1)
		return -1;
	sig_out_add(o, "Authorization", "Basic %s", b64);
	crypto_wipe(b64, sizeof(b64));
	return 0;
}

/*
 * mailgun: the body given (a JSON object without a "signature" member)
 * with {"signature": {"timestamp", "token", "signature"}} put first, the
 * token being m's id.  Returns -1 if the body is not such an object, the
 * id holds a character JSON would escape, or memory runs out.
 */
static int
sign_mailgun(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	struct jsondoc		*d = NULL;
	struct crypto_piece	 pieces[2];
	unsigned char		 md[CRYPTO_SHA256_LEN];
	char			 ts[24], mac[2 * CRYPTO_SHA256_LEN + 1], *b;
	const char		*rest, *end = m->body + m->bodysz;
	size_t			 i, n;
	int			 ok;

	ok = jsondoc_read(m->body, m->bodysz, 0, &d) == JSONDOC_OK &&
	    jsondoc_kind(d, 0) == JSONDOC_OBJECT &&
	    jsondoc_get(d, "/signature") == -1;
	jsondoc_free(d);
	if (!ok)
		return -1;
	for (i = 0; m->id[i] != '\0'; i++)
		if (m->id[i] == '"' || m->id[i] == '\\' ||
		    (unsigned char)m->id[i] < 0x20)
			return -1;
	snprintf(ts, sizeof(ts), "%lld", (long long)m->now);
	pieces[0].p = ts;
	pieces[0].sz = strlen(ts);
	pieces[1].p = m->id;
	pieces[1].sz = strlen(m->id);
	if (crypto_hmac_sha256(k->p, k->sz, pieces, 2, md) == -1)
		return -1;
	crypto_hex(md, sizeof(md), mac);
	crypto_wipe(md, sizeof(md));
	/* What follows the object's "{", and whether it is empty. */
	if ((rest = memchr(m->body, '{', m->bodysz)) == NULL)
		return -1;
	rest++;
	for (i = 0; rest + i < end && strchr(" \t\r\n", rest[i]) != NULL; i++)
		continue;
	n = 64 + strlen(ts) + strlen(m->id) + sizeof(mac) +
	    (size_t)(end - rest);
	if ((b = malloc(n)) == NULL)
		return -1;
	i = (size_t)snprintf(b, n, "{\"signature\":{\"timestamp\":\"%s\","
	    "\"token\":\"%s\",\"signature\":\"%s\"}%s", ts, m->id, mac,
	    rest[i] == '}' ? "" : ",");
	memcpy(b + i, rest, (size_t)(end - rest));
	o->body = b;
	o->bodysz = i + (size_t)(end - rest);
	return 0;
}

/*
 * The sender side of verify_twilio(): the form in m's body signed with
 * HMAC-SHA1 over the URL and its sorted parameters; m's id as Twilio's
 * idempotency token.
 */
static int
sign_twilio(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	unsigned char		 md[CRYPTO_SHA1_LEN];
	char			 mac[32];
	struct crypto_piece	*pieces;
	struct form		 f;
	size_t			 n;
	int			 rc;

	if (m->url == NULL || (pieces = twilio_pieces(m->url, m->body,
	    m->bodysz, &f, &n)) == NULL)
		return -1;
	rc = crypto_hmac_sha1(k->p, k->sz, pieces, n, md);
	free(pieces);
	form_clear(&f);
	if (rc == -1)
		return -1;
	(void)crypto_base64(md, sizeof(md), mac, sizeof(mac));
	crypto_wipe(md, sizeof(md));
	sig_out_add(o, "Content-Type", "application/x-www-form-urlencoded");
	sig_out_add(o, "I-Twilio-Idempotency-Token", "%s", m->id);
	sig_out_add(o, "X-Twilio-Signature", "%s", mac);
	return 0;
}

/* The sender side of verify_square(): the URL, then the body. */
static int
sign_square(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	struct crypto_piece	 pieces[6];
	unsigned char		 md[CRYPTO_SHA256_LEN];
	char			 mac[45];
	size_t			 n;

	if (m->url == NULL)
		return -1;
	n = sig_signed_bytes(pieces, m->url, NULL, NULL, 0, "", m->body,
	    m->bodysz);
	if (crypto_hmac_sha256(k->p, k->sz, pieces, n, md) == -1)
		return -1;
	(void)crypto_base64(md, sizeof(md), mac, sizeof(mac));
	crypto_wipe(md, sizeof(md));
	sig_out_add(o, "x-square-hmacsha256-signature", "%s", mac);
	return 0;
}

/* Stripe recounts pending_webhooks on each attempt at an event. */
static const char *const stripe_volatile[] = { "pending_webhooks", NULL };
/* Mailgun's signature block may be made anew for each attempt. */
static const char *const mailgun_volatile[] = { "signature", NULL };
/*
 * Zoom's recording events carry a download_token minted for each
 * notification, which a retry of the same event may carry anew.
 */
static const char *const zoom_volatile[] = { "download_token", NULL };

/*
 * The schemes.  Defaults for the key and the event type use the source
 * syntax of ONCEHOOK_<NAME>_KEY (conf.h): alternatives, first wins.
 */
static const struct scheme schemes[] = {
	{ .name = "hmac-sha256", .timestamped = 0,
	  .key = "header:X-Idempotency-Key json:/id json:/eventId hash",
	  .type = "json:/type", .types = SIG_TYPES_ANY,
	  .plain = &plain_hmac_sha256, .verify = verify_plain_row,
	  .sign = sign_hmac_sha256, .park_after = 3 },
	{ .name = "stripe", .timestamped = 1,
	  .key = "json:/id",
	  .type = "json:/type", .types = SIG_TYPES_DOTTED,
	  .handshake = &stripe_handshake, .volatile_members = stripe_volatile,
	  .verify = verify_stripe, .sign = sign_stripe, .park_after = 3 },
	{ .name = "github", .timestamped = 0,
	  .key = "header:X-GitHub-Delivery",
	  .type = "header:X-GitHub-Event", .types = SIG_TYPES_WORD,
	  .key_scope = "X-GitHub-Hook-ID",
	  .plain = &plain_github, .verify = verify_plain_row,
	  .sign = sign_github, .park_after = 1 },
	{ .name = "standard", .timestamped = 1,
	  .key = "header:webhook-id",
	  .type = "json:/type", .types = SIG_TYPES_ANY,
	  .signed_header = "webhook-id", .secret = sigpub_secret_standard,
	  .verify = verify_standard, .sign = sign_standard, .park_after = 3 },
	{ .name = "svix", .timestamped = 1,
	  .key = "header:svix-id",
	  .type = "json:/type", .types = SIG_TYPES_ANY,
	  .signed_header = "svix-id", .secret = sig_secret_whsec,
	  .verify = verify_svix, .sign = sign_svix, .park_after = 3 },
	{ .name = "shopify", .timestamped = 0,
	  .key = "header:X-Shopify-Event-Id header:X-Shopify-Webhook-Id",
	  .type = "header:X-Shopify-Topic", .types = SIG_TYPES_SLASHED,
	  .plain = &plain_shopify, .verify = verify_plain_row,
	  .sign = sign_shopify, .park_after = 3 },
	{ .name = "slack", .timestamped = 1,
	  .key = "json:/event_id",
	  .type = "json:/event/type json:/type", .types = SIG_TYPES_WORD,
	  .handshake = &slack_handshake, .no_retry = "X-Slack-No-Retry: 1",
	  .verify = verify_slack, .sign = sign_slack, .park_after = 3 },
	{ .name = "paddle", .timestamped = 1,
	  .key = "json:/event_id",
	  .type = "json:/event_type", .types = SIG_TYPES_DOTTED,
	  .verify = verify_paddle, .sign = sign_paddle, .park_after = 3 },
	{ .name = "gitlab", .timestamped = 0,
	  .key = "header:Idempotency-Key header:X-Gitlab-Event-UUID",
	  .type = "header:X-Gitlab-Event", .types = SIG_TYPES_HOOK,
	  .flags = SCHEME_SENDS_SECRET,
	  .verify = verify_gitlab, .sign = sign_gitlab, .park_after = 1 },
	{ .name = "zoom", .timestamped = 1,
	  .key = "hash",
	  .type = "json:/event", .types = SIG_TYPES_ANY,
	  .handshake = &zoom_handshake, .volatile_members = zoom_volatile,
	  .verify = verify_zoom, .sign = sign_zoom, .park_after = 3 },
	/* Retries for 24 hours, then disables the webhook. */
	{ .name = "razorpay", .timestamped = 0,
	  .key = "header:X-Razorpay-Event-Id hash",
	  .type = "json:/event", .types = SIG_TYPES_DOTTED,
	  .plain = &plain_razorpay, .verify = verify_plain_row,
	  .sign = sign_razorpay, .park_after = 3 },
	/* Never retries; disables a hook after 5 failures in a row. */
	{ .name = "woocommerce", .timestamped = 0,
	  .key = "header:X-WC-Webhook-Delivery-ID",
	  .type = "header:X-WC-Webhook-Topic", .types = SIG_TYPES_DOTTED,
	  .plain = &plain_woocommerce, .verify = verify_plain_row,
	  .sign = sign_woocommerce, .park_after = 1 },
	{ .name = "mollie", .timestamped = 0,
	  .key = "json:/id",
	  .type = "json:/type", .types = SIG_TYPES_ANY,
	  .plain = &plain_mollie, .verify = verify_plain_row,
	  .sign = sign_mollie, .park_after = 3 },
	{ .name = "linear", .timestamped = 1,
	  .key = "header:Linear-Delivery",
	  .type = "json:/type", .types = SIG_TYPES_ANY,
	  .volatile_members = linear_volatile,
	  .verify = verify_linear, .sign = sign_linear, .park_after = 3 },
	/* Retries 3 times, 10 minutes apart: the same bytes, so the hash. */
	{ .name = "webflow", .timestamped = 1,
	  .key = "hash",
	  .type = "json:/triggerType", .types = SIG_TYPES_WORD,
	  .verify = verify_webflow, .sign = sign_webflow, .park_after = 3 },
	{ .name = "vercel", .timestamped = 0,
	  .key = "json:/id",
	  .type = "json:/type", .types = SIG_TYPES_ANY,
	  .verify = verify_vercel, .sign = sign_vercel, .park_after = 3 },
	{ .name = "cashfree", .timestamped = 1,
	  .key = "hash",
	  .type = "json:/type", .types = SIG_TYPES_ANY,
	  .verify = verify_cashfree, .sign = sign_cashfree, .park_after = 3 },
	/*
	 * Postmark has no id member (its ID and MessageID are shared by the
	 * events of one message: a delivery, each open, each click), so
	 * its key is the hash; Chargebee's is /id.
	 */
	{ .name = "basic", .timestamped = 0,
	  .key = "json:/id hash",
	  .type = "json:/event_type json:/RecordType", .types = SIG_TYPES_ANY,
	  .secret = secret_basic,
	  .flags = SCHEME_AUTHORIZATION | SCHEME_SENDS_SECRET,
	  .verify = verify_basic, .sign = sign_basic, .park_after = 3 },
	/*
	 * Parked at the first failure: a retry may come with a new token,
	 * a key of its own, so failures of one event cannot be counted
	 * across attempts; parked, the event is kept and `work` runs it.
	 */
	{ .name = "mailgun", .timestamped = 1,
	  .key = "json:/signature/token",
	  .type = "json:/event-data/event", .types = SIG_TYPES_WORD,
	  .volatile_members = mailgun_volatile, .tolerance = 32400,
	  .flags = SCHEME_UNSIGNED_DATA,
	  .verify = verify_mailgun, .sign = sign_mailgun, .park_after = 1 },
	{ .name = "twilio", .timestamped = 0,
	  .key = "header:I-Twilio-Idempotency-Token hash",
	  .type = "json:/EventType json:/MessageStatus json:/CallStatus "
	      "json:/SmsStatus", .types = SIG_TYPES_ANY,
	  .flags = SCHEME_SIGNS_URL | SCHEME_SENDS_FORM,
	  .verify = verify_twilio, .sign = sign_twilio, .park_after = 1 },
	{ .name = "square", .timestamped = 0,
	  .key = "json:/event_id",
	  .type = "json:/type", .types = SIG_TYPES_DOTTED,
	  .flags = SCHEME_SIGNS_URL,
	  .verify = verify_square, .sign = sign_square, .park_after = 3 },
	/* A batch, each item signed (adyen_batch); retries for 30 days. */
	{ .name = "adyen", .timestamped = 0,
	  .key = "json:/pspReference",
	  .type = "json:/eventCode", .types = SIG_TYPES_ANY,
	  .secret = secret_hex, .batch = &adyen_batch, .ack = &adyen_ack,
	  .verify = verify_adyen, .sign = sign_adyen, .park_after = 3 },
	/*
	 * The public-key schemes (pipeline/sigpub.c).  Discord's webhook
	 * events carry no id: the key is the hash; its interactions' is
	 * their id.
	 */
	{ .name = "discord", .timestamped = 1,
	  .key = "json:/id hash",
	  .type = "json:/event/type json:/type", .types = SIG_TYPES_ANY,
	  .handshake = &discord_handshake, .ack = &discord_ack,
	  .secret = sigpub_secret_ed25519, .flags = SCHEME_PUBLIC_KEY,
	  .verify = sigpub_verify_discord, .sign = sigpub_sign_discord,
	  .park_after = 3 },
	{ .name = "telnyx", .timestamped = 1,
	  .key = "json:/data/id",
	  .type = "json:/data/event_type", .types = SIG_TYPES_DOTTED,
	  .volatile_members = telnyx_volatile,
	  .secret = sigpub_secret_ed25519, .flags = SCHEME_PUBLIC_KEY,
	  .verify = sigpub_verify_telnyx, .sign = sigpub_sign_telnyx,
	  .park_after = 3 },
	/* A batch: an array of events, each its own (sendgrid_batch). */
	{ .name = "sendgrid", .timestamped = 1,
	  .key = "json:/sg_event_id",
	  .type = "json:/event", .types = SIG_TYPES_WORD,
	  .batch = &sendgrid_batch,
	  .secret = sigpub_secret_p256, .flags = SCHEME_PUBLIC_KEY,
	  .verify = sigpub_verify_sendgrid, .sign = sigpub_sign_sendgrid,
	  .park_after = 3 },
	/*
	 * Signed with the certificate at PAYPAL-CERT-URL (pipeline/certs.h);
	 * retries up to 25 times over 3 days, perhaps with the first
	 * transmission's time: 3 days of tolerance.
	 */
	{ .name = "paypal", .timestamped = 1,
	  .key = "json:/id",
	  .type = "json:/event_type", .types = SIG_TYPES_ANY,
	  .tolerance = 3 * 86400,
	  .secret = sigpub_secret_id,
	  .flags = SCHEME_PUBLIC_KEY | SCHEME_FETCHES_CERTS,
	  .verify = sigpub_verify_paypal, .sign = sigpub_sign_paypal,
	  .park_after = 3 },
};

#define NSCHEMES	(sizeof(schemes) / sizeof(schemes[0]))

long long
scheme_tolerance(const struct scheme *sc)
{
	return sc->tolerance > 0 ? sc->tolerance : 300;
}

int
scheme_unsigned_data(const struct scheme *sc)
{
	return (sc->flags & SCHEME_UNSIGNED_DATA) != 0;
}

int
scheme_signs_body(const struct scheme *sc)
{
	return (sc->flags & (SCHEME_UNSIGNED_DATA | SCHEME_SENDS_SECRET)) ==
	    0;
}

int
scheme_authorization(const struct scheme *sc)
{
	return (sc->flags & SCHEME_AUTHORIZATION) != 0;
}

const struct scheme *
scheme_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < NSCHEMES; i++)
		if (strcmp(schemes[i].name, name) == 0)
			return &schemes[i];
	return NULL;
}

const char *
scheme_names(void)
{
	static char	 names[256];	/* built once from the table */
	size_t		 i, o = 0;

	if (names[0] != '\0')
		return names;
	for (i = 0; i < NSCHEMES && o < sizeof(names); i++)
		o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s",
		    i ? " " : "", schemes[i].name);
	return names;
}

/* 1 if s is words of [a-z0-9_] joined by c, at least min of them. */
static int
words(const char *s, int c, int min)
{
	int	 n = 0, len = 0;

	for (;; s++) {
		if (*s == '\0' || *s == c) {
			if (len == 0)
				return 0;
			n++;
			len = 0;
			if (*s == '\0')
				return n >= min;
		} else if ((*s >= 'a' && *s <= 'z') ||
		    (*s >= '0' && *s <= '9') || *s == '_')
			len++;
		else
			return 0;
	}
}

int
scheme_sends_type(const struct scheme *sc, const char *type)
{
	size_t	 len = strlen(type);

	switch (sc->types) {
	case SIG_TYPES_DOTTED:
		return words(type, '.', 2);
	case SIG_TYPES_WORD:
		return words(type, '\0', 1);
	case SIG_TYPES_SLASHED:
		return words(type, '/', 2);
	case SIG_TYPES_HOOK:
		return len > 5 && type[0] != ' ' &&
		    strcmp(type + len - 5, " Hook") == 0;
	case SIG_TYPES_ANY:
	default:
		return 1;
	}
}

int
scheme_signs_url(const struct scheme *sc)
{
	return sc != NULL && (sc->flags & SCHEME_SIGNS_URL) != 0;
}

int
scheme_sends_form(const struct scheme *sc)
{
	return sc != NULL && (sc->flags & SCHEME_SENDS_FORM) != 0;
}

const char *
scheme_type_example(const struct scheme *sc)
{
	static const char *const example[] = {
		[SIG_TYPES_ANY] = NULL,
		[SIG_TYPES_DOTTED] = "customer.created",
		[SIG_TYPES_WORD] = "pull_request",
		[SIG_TYPES_SLASHED] = "orders/create",
		[SIG_TYPES_HOOK] = "Merge Request Hook",
	};

	return example[sc->types];
}

const char *
scheme_key_scope(const struct scheme *sc)
{
	return sc->key_scope;
}

const struct sig_batch *
scheme_batch(const struct scheme *sc)
{
	return sc->batch;
}

enum hook_err
sig_verify(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	v->why = NULL;
	v->skew = 0;
	v->no_authorization = 0;
	if (ep->nsecrets == 0) {
		/* Fail closed: an endpoint without a secret accepts nothing. */
		v->why = ep->placeholder ? "endpoint still has the example's "
		    "placeholder secret" : "endpoint has no usable secret";
		return HOOK_ESIG;
	}
	return ep->scheme->verify(ep, in, v);
}

int
sig_answer(const struct conf_endpoint *ep, const struct handshake *hs,
    const struct sig_input *in, const char *token, struct hook_answer *out)
{
	if (hs == NULL)
		hs = ep->scheme->handshake;
	memset(out, 0, sizeof(*out));
	if (hs == NULL || hs->answer == NULL)
		return 0;
	if (hs->token != NULL && token == NULL)
		return -1;
	return hs->answer(ep, in, token, out);
}

int
sig_sign(const struct conf_endpoint *ep, const struct secret *key,
    const struct sig_msg *m, struct sig_out *out)
{
	struct sig_msg	 mu = *m;

	out->n = 0;
	out->body = NULL;
	out->bodysz = 0;
	if (key == NULL && ep->nsecrets == 0)
		return -1;
	mu.url = ep->url;
	if (ep->nsecrets > 0 && ep->secrets[0].kind == SECRET_ID)
		mu.webhook_id = (const char *)ep->secrets[0].p;
	return ep->scheme->sign(key != NULL ? key : &ep->secrets[0], &mu,
	    out);
}
