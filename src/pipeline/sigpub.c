/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the public-key schemes (see pipeline/sigkit.h): discord,
 * telnyx and sendgrid, and the keys of standard's v1a.  Their keys are
 * public: decoded here from the forms the providers hand out, verified
 * through lib/pubkey.h, which opens libcrypto at the first signature.
 * Every decoded signature is tried with every key of the kind, as the
 * shared-secret schemes try every secret: rotation is two keys.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "front/req.h"
#include "lib/crypto.h"
#include "lib/pubkey.h"
#include "lib/utc.h"
#include "pipeline/certs.h"
#include "pipeline/sig.h"
#include "pipeline/sigkit.h"

#define KEY_TEXT_MAX	4096	/* bytes of a key's text, PEM included */

/* The DER SubjectPublicKeyInfo heads of the two key kinds, before the
 * key's bytes (RFC 8410, RFC 5480): the whole SPKI is head + key. */
static const unsigned char ed25519_spki[12] = {
	0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21,
	0x00,
};
static const unsigned char p256_spki[27] = {
	0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d,
	0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01,
	0x07, 0x03, 0x42, 0x00, 0x04,
};
#define P256_SPKI_LEN	(sizeof(p256_spki) + 64)

/*
 * The bytes of a key's text into out (outsz bytes): the base64 inside
 * a PEM block (label checked against want, when given), else after
 * prefix (when given and present), hex if hexlen digits, else base64.
 * Their number, or -1.
 */
static long
key_text(const char *text, const char *want, const char *prefix,
    size_t hexlen, unsigned char *out, size_t outsz)
{
	char		 b64[KEY_TEXT_MAX];
	const char	*p, *end;
	size_t		 len = strlen(text), n = 0;

	if (len > KEY_TEXT_MAX - 1)
		return -1;
	if (strncmp(text, "-----BEGIN ", 11) == 0) {
		if ((p = strstr(text, "-----\n")) == NULL &&
		    (p = strstr(text, "-----\r\n")) == NULL &&
		    (p = strstr(text + 11, "----- ")) == NULL)
			return -1;
		if (want != NULL && (strncmp(text + 11, want, strlen(want))
		    != 0 || text + 11 + strlen(want) != p))
			return -1;
		if ((end = strstr(p + 5, "-----END ")) == NULL)
			return -1;
		/* The lines between, white space dropped. */
		for (p += 5; p < end; p++)
			if (!isspace((unsigned char)*p))
				b64[n++] = *p;
		return crypto_unbase64(b64, n, out, outsz);
	}
	if (prefix != NULL && strncmp(text, prefix, strlen(prefix)) == 0) {
		text += strlen(prefix);
		len -= strlen(prefix);
	}
	if (hexlen > 0 && len == hexlen)
		return crypto_unhex(text, len, out, outsz);
	return crypto_unbase64(text, len, out, outsz);
}

/* out->p from bytes (n of them), of kind: 0, or -1 with err. */
static int
keep(struct secret *out, const unsigned char *p, size_t n,
    enum secret_kind kind, char *err, size_t errsz)
{
	if ((out->p = malloc(n + 1)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	memcpy(out->p, p, n);
	out->p[n] = '\0';
	out->sz = n;
	out->kind = kind;
	return 0;
}

/*
 * The Ed25519 points of small order, their sign bit left out, y = 0 and
 * y = 1 also as p and p + 1 (libcrypto reduces y; oncehook check refuses
 * any other y >= p): under such a key one signature verifies every
 * message (the identity's R = 1, S = 0), so it is no key, whatever a
 * configuration says (a placeholder of zeros).
 */
static const unsigned char ed25519_weak[][PUBKEY_ED25519_LEN] = {
	{ 0x00 },				/* order 4 */
	{ 0x01 },				/* order 1 */
	{ 0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3,
	  0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0, 0xd5, 0xdf, 0xac, 0x05,
	  0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53,
	  0xfc, 0x05 },				/* order 8 */
	{ 0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c,
	  0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f, 0x2a, 0x20, 0x53, 0xfa,
	  0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac,
	  0x03, 0x7a },				/* order 8 */
	{ 0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0x7f },				/* order 2: p - 1 */
	{ 0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0x7f },				/* p: 0 again, order 4 */
	{ 0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0x7f },				/* p + 1: 1 again */
};

/* 1 if the key is a point of small order (ed25519_weak). */
static int
ed25519_weak_key(const unsigned char *k)
{
	size_t	 i;

	for (i = 0; i < sizeof(ed25519_weak) / sizeof(ed25519_weak[0]); i++)
		if (memcmp(k, ed25519_weak[i], PUBKEY_ED25519_LEN - 1) == 0 &&
		    (k[PUBKEY_ED25519_LEN - 1] & 0x7f) ==
		    ed25519_weak[i][PUBKEY_ED25519_LEN - 1])
			return 1;
	return 0;
}

/* An Ed25519 public key: hex (Discord), base64 (Telnyx), whpk_
 * (Standard Webhooks), or PEM. */
int
sigpub_secret_ed25519(const char *text, struct secret *out, char *err,
    size_t errsz)
{
	unsigned char	 b[64];
	long		 n;

	n = key_text(text, "PUBLIC KEY", "whpk_", 2 * PUBKEY_ED25519_LEN, b,
	    sizeof(b));
	if (n == (long)sizeof(ed25519_spki) + PUBKEY_ED25519_LEN &&
	    memcmp(b, ed25519_spki, sizeof(ed25519_spki)) == 0) {
		memmove(b, b + sizeof(ed25519_spki), PUBKEY_ED25519_LEN);
		n = PUBKEY_ED25519_LEN;
	}
	if (n == PUBKEY_ED25519_LEN && ed25519_weak_key(b)) {
		snprintf(err, errsz, "not an Ed25519 public key: a point of "
		    "small order, under which any message verifies (a "
		    "placeholder?)");
		return -1;
	}
	if (n != PUBKEY_ED25519_LEN) {
		snprintf(err, errsz, "not an Ed25519 public key (64 hex "
		    "digits, 32 bytes in base64, whpk_..., or a PEM PUBLIC "
		    "KEY)%s", strncmp(text, "whsk_", 5) == 0 ||
		    strstr(text, "PRIVATE") != NULL ? "; this is a private "
		    "key: give its public half" : "");
		return -1;
	}
	return keep(out, b, PUBKEY_ED25519_LEN, SECRET_ED25519, err, errsz);
}

/* An ECDSA P-256 public key: base64 of its DER SPKI (SendGrid), or PEM. */
int
sigpub_secret_p256(const char *text, struct secret *out, char *err,
    size_t errsz)
{
	unsigned char	 b[256];
	long		 n;

	n = key_text(text, "PUBLIC KEY", NULL, 0, b, sizeof(b));
	if (n != (long)P256_SPKI_LEN ||
	    memcmp(b, p256_spki, sizeof(p256_spki)) != 0) {
		snprintf(err, errsz, "not an ECDSA P-256 public key (base64 "
		    "of its DER, as SendGrid shows it, or a PEM PUBLIC KEY)");
		return -1;
	}
	return keep(out, b, P256_SPKI_LEN, SECRET_P256, err, errsz);
}

/* Standard Webhooks: whsec_ (HMAC, v1) or whpk_ or PEM (Ed25519, v1a). */
int
sigpub_secret_standard(const char *text, struct secret *out, char *err,
    size_t errsz)
{
	if (strncmp(text, "whpk_", 5) == 0 ||
	    strncmp(text, "-----BEGIN ", 11) == 0)
		return sigpub_secret_ed25519(text, out, err, errsz);
	if (strncmp(text, "whsk_", 5) == 0) {
		snprintf(err, errsz, "whsk_ is a private key: give its public "
		    "whpk_ key");
		return -1;
	}
	if (sig_secret_whsec(text, out, err, errsz) == -1) {
		snprintf(err, errsz, "not whsec_ followed by base64, nor an "
		    "Ed25519 public key (whpk_..., or a PEM PUBLIC KEY)");
		return -1;
	}
	out->kind = SECRET_MAC;
	return 0;
}

/* A name the signature covers (PayPal's webhook id): letters, digits,
 * '-' and '_', as the provider shows it. */
int
sigpub_secret_id(const char *text, struct secret *out, char *err,
    size_t errsz)
{
	size_t	 len = strlen(text);

	if (len == 0 || len > 64 || strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_") != len) {
		snprintf(err, errsz, "not a webhook id (letters and digits, "
		    "as the provider's dashboard shows it)");
		return -1;
	}
	return keep(out, (const unsigned char *)text, len, SECRET_ID, err,
	    errsz);
}

int
sigpub_private(const char *text, struct secret *out, char *err,
    size_t errsz)
{
	unsigned char	 b[64];
	long		 n;

	if (strncmp(text, "-----BEGIN ", 11) == 0)
		return keep(out, (const unsigned char *)text, strlen(text),
		    SECRET_PRIVATE, err, errsz);
	n = key_text(text, NULL, "whsk_", 2 * PUBKEY_ED25519_LEN, b,
	    sizeof(b));
	if (n != PUBKEY_ED25519_LEN && n != 2 * PUBKEY_ED25519_LEN) {
		crypto_wipe(b, sizeof(b));
		snprintf(err, errsz, "not a private key (PEM, or an Ed25519 "
		    "seed: whsk_, hex or base64)");
		return -1;
	}
	n = keep(out, b, PUBKEY_ED25519_LEN, SECRET_PRIVATE, err, errsz);
	crypto_wipe(b, sizeof(b));
	return (int)n;
}

int
sigpub_match(const struct conf_endpoint *ep, int kind,
    const struct crypto_piece *pieces, size_t npieces,
    const struct sig_pubsigs *sigs, struct sig_verdict *v)
{
	char		 why[256];
	size_t		 i, j;
	int		 rc, found = 0;

	for (i = 0; i < ep->nsecrets; i++) {
		if ((int)ep->secrets[i].kind != kind)
			continue;
		for (j = 0; j < sigs->n && !found; j++) {
			rc = pubkey_verify(kind == SECRET_ED25519 ?
			    PUBKEY_ED25519 : PUBKEY_P256, ep->secrets[i].p,
			    ep->secrets[i].sz, pieces, npieces, sigs->v[j],
			    sigs->len[j], why, sizeof(why));
			if (rc == -1) {
				/* The detail is oncehook check's to say. */
				v->why = pubkey_load(why, sizeof(why)) == -1 ?
				    "libcrypto cannot be loaded (oncehook check "
				    "says why)" : "a public key is unusable "
				    "(oncehook check says which)";
				return -1;
			}
			found = rc;
		}
	}
	return found;
}

/*
 * The schemes with one signature of a kind in one header, over the
 * timestamp of another, a joiner, and the body (the timestamp checked
 * once the signature matched): a row each.
 */
struct stamped {
	enum secret_kind kind;
	enum pubkey_kind alg;
	const char	*hsig;
	int		 hex;		/* the signature in hex, else base64 */
	const char	*hts;
	const char	*join;
};

static const struct stamped discord = {
	SECRET_ED25519, PUBKEY_ED25519, "X-Signature-Ed25519", 1,
	"X-Signature-Timestamp", ""
};
static const struct stamped telnyx = {
	SECRET_ED25519, PUBKEY_ED25519, "telnyx-signature-ed25519", 0,
	"telnyx-timestamp", "|"
};
static const struct stamped sendgrid = {
	SECRET_P256, PUBKEY_P256, "X-Twilio-Email-Event-Webhook-Signature", 0,
	"X-Twilio-Email-Event-Webhook-Timestamp", ""
};

static enum hook_err
verify_stamped(const struct stamped *r, const struct conf_endpoint *ep,
    const struct sig_input *in, struct sig_verdict *v)
{
	struct sig_pubsigs	 s;
	struct crypto_piece	 pieces[6];
	const char		*h, *ts;
	long long		 t;
	long			 n;
	size_t			 np;
	enum hook_err		 er;

	if ((h = sig_header(in, r->hsig, v)) == NULL)
		return HOOK_ESIG;
	if ((ts = req_header(in->rq, r->hts)) == NULL) {
		v->why = "timestamp header missing";
		return HOOK_ESIG;
	}
	n = r->hex ? crypto_unhex(h, strlen(h), s.v[0], sizeof(s.v[0])) :
	    crypto_unbase64(h, strlen(h), s.v[0], sizeof(s.v[0]));
	if (n <= 0 || (r->kind == SECRET_ED25519 && n != 64) ||
	    sig_parse_ts(ts, strlen(ts), &t) == -1) {
		v->why = "signature header malformed";
		return HOOK_ESIG;
	}
	s.len[0] = (size_t)n;
	s.n = 1;
	np = sig_signed_bytes(pieces, NULL, NULL, ts, strlen(ts), r->join,
	    in->body, in->bodysz);
	if ((er = sig_matched(sigpub_match(ep, r->kind, pieces, np, &s, v),
	    HOOK_ECONF, v)) != HOOK_OK)
		return er;
	return sig_check_time(ep, t, in->now, v);
}

/* Sign m as r's sender does with the private key k: 0, or -1. */
static int
sign_stamped(const struct stamped *r, const struct secret *k,
    const struct sig_msg *m, struct sig_out *o)
{
	unsigned char		 sig[PUBKEY_SIG_MAX];
	struct crypto_piece	 pieces[6];
	char			 ts[24], why[256], text[2 * PUBKEY_SIG_MAX + 1];
	size_t			 np;
	long			 n;

	snprintf(ts, sizeof(ts), "%lld", (long long)m->now);
	np = sig_signed_bytes(pieces, NULL, NULL, ts, strlen(ts), r->join,
	    m->body, m->bodysz);
	if (k->kind != SECRET_PRIVATE || (n = pubkey_sign(r->alg, k->p, k->sz,
	    pieces, np, sig, why, sizeof(why))) < 0) {
		fprintf(stderr, "oncehook sign: %s\n", k->kind !=
		    SECRET_PRIVATE ? "a public-key scheme signs with "
		    "--key PRIVATE-KEY-FILE" : why);
		return -1;
	}
	if (r->hex)
		crypto_hex(sig, (size_t)n, text);
	else if (crypto_base64(sig, (size_t)n, text, sizeof(text)) < 0)
		return -1;
	sig_out_add(o, r->hsig, "%s", text);
	sig_out_add(o, r->hts, "%s", ts);
	return 0;
}

enum hook_err
sigpub_verify_discord(const struct conf_endpoint *ep,
    const struct sig_input *in, struct sig_verdict *v)
{
	return verify_stamped(&discord, ep, in, v);
}

enum hook_err
sigpub_verify_telnyx(const struct conf_endpoint *ep,
    const struct sig_input *in, struct sig_verdict *v)
{
	return verify_stamped(&telnyx, ep, in, v);
}

enum hook_err
sigpub_verify_sendgrid(const struct conf_endpoint *ep,
    const struct sig_input *in, struct sig_verdict *v)
{
	return verify_stamped(&sendgrid, ep, in, v);
}

int
sigpub_sign_discord(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	return sign_stamped(&discord, k, m, o);
}

int
sigpub_sign_telnyx(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	return sign_stamped(&telnyx, k, m, o);
}

int
sigpub_sign_sendgrid(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	return sign_stamped(&sendgrid, k, m, o);
}

/*
 * PAYPAL-TRANSMISSION-TIME, ISO 8601 in UTC ("2017-03-30T20:04:05Z",
 * fractions of a second allowed), into *t: 0, or -1.
 */
static int
parse_iso(const char *s, long long *t)
{
	const char	*e;
	int		 n;

	if ((n = utc_parse_iso(s, t)) < 0)
		return -1;
	e = s + n;
	if (*e == '.')
		for (e++; *e >= '0' && *e <= '9'; e++)
			continue;
	return strcmp(e, "Z") == 0 || strcmp(e, "+00:00") == 0 ? 0 : -1;
}

/* PayPal's headers, read and checked: HOOK_OK, or HOOK_ESIG with v. */
static enum hook_err
paypal_headers(const struct sig_input *in, struct sig_verdict *v,
    const char **id, const char **ts, const char **url, long long *t,
    unsigned char *sig, size_t *sigsz)
{
	const char	*h, *algo;
	long		 n;

	if ((h = sig_header(in, "PAYPAL-TRANSMISSION-SIG", v)) == NULL)
		return HOOK_ESIG;
	if ((*id = req_header(in->rq, "PAYPAL-TRANSMISSION-ID")) == NULL ||
	    (*ts = req_header(in->rq, "PAYPAL-TRANSMISSION-TIME")) == NULL ||
	    (*url = req_header(in->rq, "PAYPAL-CERT-URL")) == NULL ||
	    (algo = req_header(in->rq, "PAYPAL-AUTH-ALGO")) == NULL) {
		v->why = "a PAYPAL-TRANSMISSION-* or PAYPAL-CERT-URL or "
		    "PAYPAL-AUTH-ALGO header missing";
		return HOOK_ESIG;
	}
	if (strcmp(algo, "SHA256withRSA") != 0) {
		v->why = "PAYPAL-AUTH-ALGO is not SHA256withRSA";
		return HOOK_ESIG;
	}
	if (**id == '\0' || strlen(*id) > 100 || strchr(*id, '|') != NULL ||
	    parse_iso(*ts, t) == -1 ||
	    (n = crypto_unbase64(h, strlen(h), sig, PUBKEY_SIG_MAX)) <= 0) {
		v->why = "signature header malformed";
		return HOOK_ESIG;
	}
	*sigsz = (size_t)n;
	return HOOK_OK;
}

/*
 * PayPal: RSA-SHA256 (PAYPAL-AUTH-ALGO SHA256withRSA) over
 * transmission id | transmission time | webhook id | CRC-32 of the body
 * in decimal, with the key of the certificate at PAYPAL-CERT-URL, for
 * each configured webhook id.
 */
enum hook_err
sigpub_verify_paypal(const struct conf_endpoint *ep,
    const struct sig_input *in, struct sig_verdict *v)
{
	unsigned char		 spki[CERTS_SPKI_MAX], sig[PUBKEY_SIG_MAX];
	const char		*id, *ts, *url;
	long long		 t;
	size_t			 spkisz, sigsz;
	enum hook_err		 er;

	if ((er = paypal_headers(in, v, &id, &ts, &url, &t, sig, &sigsz)) !=
	    HOOK_OK)
		return er;
	/* The certificate: fetched once, outside any transaction. */
	if ((er = certs_paypal(ep->certs, url, in->now, spki, &spkisz,
	    &v->why)) != HOOK_OK)
		return er;
	return sigpub_paypal_check(ep, in, spki, spkisz, v);
}

enum hook_err
sigpub_paypal_check(const struct conf_endpoint *ep,
    const struct sig_input *in, const unsigned char *spki, size_t spkisz,
    struct sig_verdict *v)
{
	unsigned char		 sig[PUBKEY_SIG_MAX];
	struct crypto_piece	 p[7];
	const char		*id, *ts, *url;
	char			 crc[16], why[256];
	long long		 t;
	size_t			 i, sigsz;
	int			 rc, found = 0;
	enum hook_err		 er;

	if ((er = paypal_headers(in, v, &id, &ts, &url, &t, sig, &sigsz)) !=
	    HOOK_OK)
		return er;
	snprintf(crc, sizeof(crc), "%lu", crypto_crc32(in->body,
	    in->bodysz));
	p[0].p = id;
	p[0].sz = strlen(id);
	p[1].p = p[3].p = p[5].p = "|";
	p[1].sz = p[3].sz = p[5].sz = 1;
	p[2].p = ts;
	p[2].sz = strlen(ts);
	p[6].p = crc;
	p[6].sz = strlen(crc);
	for (i = 0; i < ep->nsecrets && !found; i++) {
		if (ep->secrets[i].kind != SECRET_ID)
			continue;
		p[4].p = ep->secrets[i].p;
		p[4].sz = ep->secrets[i].sz;
		if ((rc = pubkey_verify(PUBKEY_RSA, spki, spkisz, p, 7, sig,
		    sigsz, why, sizeof(why))) == -1) {
			v->why = "the signing certificate's key is unusable";
			return HOOK_ECONF;
		}
		found = rc;
	}
	if (!found) {
		v->why = "no signature matched";
		return HOOK_ESIG;
	}
	return sig_check_time(ep, t, in->now, v);
}

int
sigpub_sign_v1a(const struct secret *k, const struct sig_msg *m, char *out,
    size_t outsz)
{
	unsigned char		 sig[PUBKEY_SIG_MAX];
	struct crypto_piece	 pieces[6];
	char			 ts[24], why[256];
	size_t			 np;
	long			 n;

	snprintf(ts, sizeof(ts), "%lld", (long long)m->now);
	np = sig_signed_bytes(pieces, NULL, m->id, ts, strlen(ts), ".",
	    m->body, m->bodysz);
	if ((n = pubkey_sign(PUBKEY_ED25519, k->p, k->sz, pieces, np, sig,
	    why, sizeof(why))) < 0) {
		fprintf(stderr, "oncehook sign: %s\n", why);
		return -1;
	}
	if (outsz < 5)
		return -1;
	memcpy(out, "v1a,", 4);
	return crypto_base64(sig, (size_t)n, out + 4, outsz - 4) < 0 ? -1 : 0;
}

int
sigpub_sign_paypal(const struct secret *k, const struct sig_msg *m,
    struct sig_out *o)
{
	unsigned char		 sig[PUBKEY_SIG_MAX];
	struct crypto_piece	 p[7];
	char			 ts[UTC_ISO_LEN + 1], crc[16], why[256];
	char			 b64[700];
	long			 n;

	if (m->cert_url == NULL || m->webhook_id == NULL) {
		fprintf(stderr, "oncehook sign: paypal needs --cert-url URL "
		    "and the endpoint's webhook id as its secret\n");
		return -1;
	}
	utc_format_iso((long long)m->now, ts);
	snprintf(crc, sizeof(crc), "%lu", crypto_crc32(m->body, m->bodysz));
	p[0].p = m->id;
	p[0].sz = strlen(m->id);
	p[1].p = p[3].p = p[5].p = "|";
	p[1].sz = p[3].sz = p[5].sz = 1;
	p[2].p = ts;
	p[2].sz = strlen(ts);
	p[4].p = m->webhook_id;
	p[4].sz = strlen(m->webhook_id);
	p[6].p = crc;
	p[6].sz = strlen(crc);
	if (k->kind != SECRET_PRIVATE || (n = pubkey_sign(PUBKEY_RSA, k->p,
	    k->sz, p, 7, sig, why, sizeof(why))) < 0 ||
	    crypto_base64(sig, (size_t)n, b64, sizeof(b64)) < 0) {
		fprintf(stderr, "oncehook sign: %s\n", k->kind !=
		    SECRET_PRIVATE ? "paypal signs with --key PRIVATE-KEY-FILE" :
		    why);
		return -1;
	}
	sig_out_add(o, "PAYPAL-TRANSMISSION-ID", "%s", m->id);
	sig_out_add(o, "PAYPAL-TRANSMISSION-TIME", "%s", ts);
	sig_out_add(o, "PAYPAL-TRANSMISSION-SIG", "%s", b64);
	sig_out_add(o, "PAYPAL-CERT-URL", "%s", m->cert_url);
	sig_out_add(o, "PAYPAL-AUTH-ALGO", "SHA256withRSA");
	return 0;
}
