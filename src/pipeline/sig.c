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
#include "lib/crypto.h"
#include "lib/form.h"
#include "pipeline/sig.h"

#define SIG_CANDIDATES_MAX	16	/* signatures one header may offer */

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

/*
 * Parse a decimal Unix timestamp of at most 12 digits into *ts.
 * Returns 0, or -1 if it is anything else.
 */
static int
parse_ts(const char *s, size_t len, long long *ts)
{
	long long	 v = 0;
	size_t		 i;

	if (len == 0 || len > 12)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*ts = v;
	return 0;
}

/* HOOK_OK if ts lies within the tolerance of now, both ways. */
static enum hook_err
check_time(const struct conf_endpoint *ep, long long ts, time_t now,
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
static const char *
header(const struct sig_input *in, const char *name, struct sig_verdict *v)
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
static size_t
signed_bytes(struct crypto_piece *p, const char *prefix, const char *id,
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

/* Map match_any()'s answer to an outcome. */
static enum hook_err
matched(int rc, struct sig_verdict *v)
{
	if (rc < 0)
		return HOOK_ESYSTEM;
	if (rc == 0) {
		v->why = "no signature matched";
		return HOOK_ESIG;
	}
	return HOOK_OK;
}

/*
 * Verification, in three shapes.
 */

/*
 * One header holding one MAC of the body, after prefix (optional unless
 * required), in hex or base64: hmac-sha256, github, shopify.
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
	if ((h = header(in, name, v)) == NULL)
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
	if ((h = header(in, name, v)) == NULL)
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
	if (ts == NULL || parse_ts(ts, tslen, &t) == -1 || c.n == 0)
		goto malformed;
	n = signed_bytes(pieces, NULL, NULL, ts, tslen, join, in->body,
	    in->bodysz);
	if ((er = matched(match_any(ep, pieces, n, &c), v)) != HOOK_OK)
		return er;
	return check_time(ep, t, in->now, v);
malformed:
	v->why = "signature header malformed";
	return HOOK_ESIG;
}

static enum hook_err
verify_hmac_sha256(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	return verify_plain(ep, in, v, "X-Webhook-Signature", "sha256=", 0, 0);
}

static enum hook_err
verify_github(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	return verify_plain(ep, in, v, "X-Hub-Signature-256", "sha256=", 1, 0);
}

static enum hook_err
verify_shopify(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	return verify_plain(ep, in, v, "X-Shopify-Hmac-Sha256", NULL, 0, 1);
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
 * slack: X-Slack-Signature: v0=HEX over "v0:" TS ":" body, TS from
 * X-Slack-Request-Timestamp.
 */
static enum hook_err
verify_slack(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	struct candidates	 c;
	struct crypto_piece	 pieces[6];
	const char		*h, *ts;
	long long		 t;
	size_t			 n;
	enum hook_err		 er;

	c.n = 0;
	if ((h = header(in, "X-Slack-Signature", v)) == NULL)
		return HOOK_ESIG;
	if ((ts = req_header(in->rq, "X-Slack-Request-Timestamp")) == NULL) {
		v->why = "timestamp header missing";
		return HOOK_ESIG;
	}
	if (strncmp(h, "v0=", 3) != 0 || add_hex(&c, h + 3,
	    strlen(h + 3)) == -1 || parse_ts(ts, strlen(ts), &t) == -1) {
		v->why = "signature header malformed";
		return HOOK_ESIG;
	}
	n = signed_bytes(pieces, "v0:", NULL, ts, strlen(ts), ":", in->body,
	    in->bodysz);
	if ((er = matched(match_any(ep, pieces, n, &c), v)) != HOOK_OK)
		return er;
	return check_time(ep, t, in->now, v);
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
	struct crypto_piece	 pieces[6];
	const char		*id, *ts, *h, *item;
	size_t			 len, n;
	long long		 t;
	enum hook_err		 er;

	c.n = 0;
	if ((h = header(in, hsig, v)) == NULL)
		return HOOK_ESIG;
	if ((id = req_header(in->rq, hid)) == NULL || *id == '\0' ||
	    (ts = req_header(in->rq, hts)) == NULL) {
		v->why = "id or timestamp header missing";
		return HOOK_ESIG;
	}
	if (strlen(id) > 256 || parse_ts(ts, strlen(ts), &t) == -1)
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
	}
	if (c.n == 0)
		goto malformed;
	n = signed_bytes(pieces, NULL, id, ts, strlen(ts), ".", in->body,
	    in->bodysz);
	if ((er = matched(match_any(ep, pieces, n, &c), v)) != HOOK_OK)
		return er;
	return check_time(ep, t, in->now, v);
malformed:
	v->why = "signature header malformed";
	return HOOK_ESIG;
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

	if ((h = header(in, "X-Gitlab-Token", v)) == NULL)
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
	if ((h = header(in, "X-Twilio-Signature", v)) == NULL)
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
	if ((h = header(in, "x-square-hmacsha256-signature", v)) == NULL)
		return HOOK_ESIG;
	if (add_b64(&c, h, strlen(h)) == -1) {
		v->why = "signature header malformed";
		return HOOK_ESIG;
	}
	n = signed_bytes(pieces, ep->url, NULL, NULL, 0, "", in->body,
	    in->bodysz);
	return matched(match_any(ep, pieces, n, &c), v);
}

/*
 * Standard Webhooks and Svix secrets: "whsec_" (optional) and then the
 * key in base64, padded or not.
 */
static int
secret_whsec(const char *text, struct secret *out, char *err, size_t errsz)
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

static void
out_add(struct sig_out *o, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
out_add(struct sig_out *o, const char *name, const char *fmt, ...)
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
 * The MAC of m's signed bytes (see signed_bytes()) as hex (65 bytes) or
 * base64 (45 bytes) text in out; ts receives m's time as text.
 */
static int
mac_text(const struct secret *k, const struct sig_msg *m, const char *prefix,
    const char *id, int timed, const char *join, int base64, char ts[24],
    char *out)
{
	struct crypto_piece	 pieces[6];
	unsigned char		 md[CRYPTO_SHA256_LEN];
	size_t			 n;

	snprintf(ts, 24, "%lld", (long long)m->now);
	n = signed_bytes(pieces, prefix, id, timed ? ts : NULL, strlen(ts),
	    join, m->body, m->bodysz);
	if (crypto_hmac_sha256(k->p, k->sz, pieces, n, md) == -1)
		return -1;
	if (base64)
		(void)crypto_base64(md, sizeof(md), out, 45);
	else
		crypto_hex(md, sizeof(md), out);
	crypto_wipe(md, sizeof(md));
	return 0;
}

static int
sign_hmac_sha256(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	char	 ts[24], mac[65];

	if (mac_text(k, m, NULL, NULL, 0, "", 0, ts, mac) == -1)
		return -1;
	out_add(o, "X-Webhook-Signature", "sha256=%s", mac);
	/* The body's id or hash is the key unless one was asked for. */
	if (m->id_given)
		out_add(o, "X-Idempotency-Key", "%s", m->id);
	return 0;
}

static int
sign_github(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	char	 ts[24], mac[65];

	if (mac_text(k, m, NULL, NULL, 0, "", 0, ts, mac) == -1)
		return -1;
	out_add(o, "X-GitHub-Event", "%s", m->event ? m->event : "ping");
	out_add(o, "X-GitHub-Delivery", "%s", m->id);
	out_add(o, "X-Hub-Signature-256", "sha256=%s", mac);
	return 0;
}

static int
sign_shopify(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	char	 ts[24], mac[45];

	if (mac_text(k, m, NULL, NULL, 0, "", 1, ts, mac) == -1)
		return -1;
	out_add(o, "X-Shopify-Topic", "%s",
	    m->event ? m->event : "orders/create");
	out_add(o, "X-Shopify-Event-Id", "%s", m->id);
	out_add(o, "X-Shopify-Webhook-Id", "%s", m->id);
	out_add(o, "X-Shopify-Hmac-Sha256", "%s", mac);
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
	out_add(o, name, "%s=%s%c%s=%s", tkey, ts, sep, skey, mac);
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

static int
sign_slack(const struct secret *k, const struct sig_msg *m, struct sig_out *o)
{
	char	 ts[24], mac[65];

	if (mac_text(k, m, "v0:", NULL, 1, ":", 0, ts, mac) == -1)
		return -1;
	out_add(o, "X-Slack-Request-Timestamp", "%s", ts);
	out_add(o, "X-Slack-Signature", "v0=%s", mac);
	return 0;
}

static int
sign_standard_as(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o, const char *hid, const char *hts, const char *hsig)
{
	char	 ts[24], mac[45];

	if (mac_text(k, m, NULL, m->id, 1, ".", 1, ts, mac) == -1)
		return -1;
	out_add(o, hid, "%s", m->id);
	out_add(o, hts, "%s", ts);
	out_add(o, hsig, "v1,%s", mac);
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
	out_add(o, "X-Gitlab-Event", "%s",
	    m->event ? m->event : "System Hook");
	out_add(o, "X-Gitlab-Event-UUID", "%s", m->id);
	out_add(o, "X-Gitlab-Token", "%.*s", (int)k->sz,
	    (const char *)k->p);
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
	out_add(o, "Content-Type", "application/x-www-form-urlencoded");
	out_add(o, "I-Twilio-Idempotency-Token", "%s", m->id);
	out_add(o, "X-Twilio-Signature", "%s", mac);
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
	n = signed_bytes(pieces, m->url, NULL, NULL, 0, "", m->body,
	    m->bodysz);
	if (crypto_hmac_sha256(k->p, k->sz, pieces, n, md) == -1)
		return -1;
	(void)crypto_base64(md, sizeof(md), mac, sizeof(mac));
	crypto_wipe(md, sizeof(md));
	out_add(o, "x-square-hmacsha256-signature", "%s", mac);
	return 0;
}

/* Stripe recounts pending_webhooks on each attempt at an event. */
static const char *const stripe_volatile[] = { "pending_webhooks", NULL };

/*
 * The schemes.  Defaults for the key and the event type use the source
 * syntax of ONCEHOOK_<NAME>_KEY (conf.h): alternatives, first wins.
 */
static const struct scheme schemes[] = {
	{ "hmac-sha256", 0,
	  "header:X-Idempotency-Key json:/id json:/eventId hash",
	  "json:/type", SIG_TYPES_ANY,
	  NULL, NULL, NULL,
	  NULL, verify_hmac_sha256,
	  sign_hmac_sha256, 3 },
	{ "stripe", 1,
	  "json:/id",
	  "json:/type", SIG_TYPES_DOTTED,
	  NULL, stripe_volatile, NULL,
	  NULL, verify_stripe,
	  sign_stripe, 3 },
	{ "github", 0,
	  "header:X-GitHub-Delivery",
	  "header:X-GitHub-Event", SIG_TYPES_WORD,
	  NULL, NULL, NULL,
	  NULL, verify_github,
	  sign_github, 1 },
	{ "standard", 1,
	  "header:webhook-id",
	  "json:/type", SIG_TYPES_ANY,
	  NULL, NULL, "webhook-id",
	  secret_whsec, verify_standard,
	  sign_standard, 3 },
	{ "svix", 1,
	  "header:svix-id",
	  "json:/type", SIG_TYPES_ANY,
	  NULL, NULL, "svix-id",
	  secret_whsec, verify_svix,
	  sign_svix, 3 },
	{ "shopify", 0,
	  "header:X-Shopify-Event-Id header:X-Shopify-Webhook-Id",
	  "header:X-Shopify-Topic", SIG_TYPES_SLASHED,
	  NULL, NULL, NULL,
	  NULL, verify_shopify,
	  sign_shopify, 3 },
	{ "slack", 1,
	  "json:/event_id",
	  "json:/event/type json:/type", SIG_TYPES_WORD,
	  "url_verification", NULL, NULL,
	  NULL, verify_slack,
	  sign_slack, 3 },
	{ "paddle", 1,
	  "json:/event_id",
	  "json:/event_type", SIG_TYPES_DOTTED,
	  NULL, NULL, NULL,
	  NULL, verify_paddle,
	  sign_paddle, 3 },
	{ "gitlab", 0,
	  "header:Idempotency-Key header:X-Gitlab-Event-UUID",
	  "header:X-Gitlab-Event", SIG_TYPES_HOOK,
	  NULL, NULL, NULL,
	  NULL, verify_gitlab,
	  sign_gitlab, 1 },
	{ "twilio", 0,
	  "header:I-Twilio-Idempotency-Token hash",
	  "json:/EventType json:/MessageStatus json:/CallStatus "
	  "json:/SmsStatus", SIG_TYPES_ANY,
	  NULL, NULL, NULL,
	  NULL, verify_twilio,
	  sign_twilio, 1 },
	{ "square", 0,
	  "json:/event_id",
	  "json:/type", SIG_TYPES_DOTTED,
	  NULL, NULL, NULL,
	  NULL, verify_square,
	  sign_square, 3 },
};

#define NSCHEMES	(sizeof(schemes) / sizeof(schemes[0]))

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

/*
 * Which schemes sign the URL, which send forms: lists beside the table,
 * so that its rows keep their shape.
 */
static int
named(const struct scheme *sc, const char *const *names)
{
	for (; *names != NULL; names++)
		if (strcmp(sc->name, *names) == 0)
			return 1;
	return 0;
}

int
scheme_signs_url(const struct scheme *sc)
{
	static const char *const url_signed[] = { "twilio", "square", NULL };

	return sc != NULL && named(sc, url_signed);
}

int
scheme_sends_form(const struct scheme *sc)
{
	static const char *const form[] = { "twilio", NULL };

	return sc != NULL && named(sc, form);
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

enum hook_err
sig_verify(const struct conf_endpoint *ep, const struct sig_input *in,
    struct sig_verdict *v)
{
	v->why = NULL;
	v->skew = 0;
	if (ep->nsecrets == 0) {
		/* Fail closed: an endpoint without a secret accepts nothing. */
		v->why = ep->placeholder ? "endpoint still has the example's "
		    "placeholder secret" : "endpoint has no usable secret";
		return HOOK_ESIG;
	}
	return ep->scheme->verify(ep, in, v);
}

int
sig_sign(const struct conf_endpoint *ep, const struct sig_msg *m,
    struct sig_out *out)
{
	struct sig_msg	 mu = *m;

	out->n = 0;
	if (ep->nsecrets == 0)
		return -1;
	mu.url = ep->url;
	return ep->scheme->sign(&ep->secrets[0], &mu, out);
}
