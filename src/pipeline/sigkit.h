/* SPDX-License-Identifier: MIT */
/*
 * oncehook: what the files of the scheme table share (pipeline/sig.h is
 * the table's contract): the request's pieces as every scheme reads
 * them (pipeline/sig.c), and the public-key schemes' functions
 * (pipeline/sigpub.c) that the table's rows name.
 */
#ifndef ONCEHOOK_SIGKIT_H
#define ONCEHOOK_SIGKIT_H

#include <stddef.h>
#include <time.h>

#include "hook.h"
#include "lib/crypto.h"

struct conf_endpoint;
struct secret;
struct sig_input;
struct sig_msg;
struct sig_out;
struct sig_verdict;

/* The header's value, or NULL with v->why set (missing, too long). */
const char	*sig_header(const struct sig_input *, const char *name,
		    struct sig_verdict *v);
/* A decimal Unix time of at most 12 digits into *ts: 0, or -1. */
int		 sig_parse_ts(const char *s, size_t len, long long *ts);
/* HOOK_OK if ts lies within the endpoint's tolerance of now, both ways;
 * else HOOK_ESTALE with v saying by how much. */
enum hook_err	 sig_check_time(const struct conf_endpoint *, long long ts,
		    time_t now, struct sig_verdict *v);
/*
 * The signed bytes of most schemes: an optional literal prefix, an
 * optional message id, an optional timestamp, each of the two followed
 * by the joiner, then the body.  Fills p (room for 6); their number.
 */
size_t		 sig_signed_bytes(struct crypto_piece *p, const char *prefix,
		    const char *id, const char *ts, size_t tslen,
		    const char *join, const char *body, size_t bodysz);
/* A match's answer as an outcome: 1 HOOK_OK; 0 HOOK_ESIG, no signature
 * matched; -1 failed (v->why set by the matcher, where it can). */
enum hook_err	 sig_matched(int rc, enum hook_err failed,
		    struct sig_verdict *v);
/* A Standard Webhooks or Svix secret: "whsec_" (optional) and its key
 * in base64, padded or not (the table's .secret). */
int		 sig_secret_whsec(const char *text, struct secret *out,
		    char *err, size_t errsz);
/* Add a header to a signer's output (at most SIG_OUT_MAX). */
void		 sig_out_add(struct sig_out *, const char *name,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Public-key signatures a request offers, decoded (at most
 * SIG_CANDIDATES_MAX; the rest are ignored).
 */
#define SIG_CANDIDATES_MAX	16	/* signatures one header may offer */
/* Of them, Ed25519 signatures tried: each a verification of the whole
 * body per key, where a MAC is one per key for all.  A sender signs
 * once per key it holds (two while it rotates). */
#define SIG_V1A_MAX		4
#define SIG_PUBSIG_MAX		512	/* bytes of one */
struct sig_pubsigs {
	unsigned char	 v[SIG_CANDIDATES_MAX][SIG_PUBSIG_MAX];
	size_t		 len[SIG_CANDIDATES_MAX];
	size_t		 n;
};

/*
 * 1 if a signature of sigs verifies the pieces under one of the
 * endpoint's keys of kind (enum secret_kind), 0 if none does, -1 with
 * v->why if that cannot be told (no libcrypto, an unusable key).
 */
int	sigpub_match(const struct conf_endpoint *, int kind,
	    const struct crypto_piece *, size_t npieces,
	    const struct sig_pubsigs *sigs, struct sig_verdict *v);

/* The public-key schemes' keys (the table's .secret). */
int	sigpub_secret_ed25519(const char *text, struct secret *out,
	    char *err, size_t errsz);
int	sigpub_secret_p256(const char *text, struct secret *out, char *err,
	    size_t errsz);
int	sigpub_secret_standard(const char *text, struct secret *out,
	    char *err, size_t errsz);
int	sigpub_secret_id(const char *text, struct secret *out, char *err,
	    size_t errsz);
/*
 * A private key from its text for oncehook sign --key: PEM, or an
 * Ed25519 seed as whsk_, hex or base64 (32 bytes, or 64 with the public
 * half).  0, or -1 with err.
 */
int	sigpub_private(const char *text, struct secret *out, char *err,
	    size_t errsz);

enum hook_err	sigpub_verify_discord(const struct conf_endpoint *,
		    const struct sig_input *, struct sig_verdict *);
enum hook_err	sigpub_verify_telnyx(const struct conf_endpoint *,
		    const struct sig_input *, struct sig_verdict *);
enum hook_err	sigpub_verify_sendgrid(const struct conf_endpoint *,
		    const struct sig_input *, struct sig_verdict *);
enum hook_err	sigpub_verify_paypal(const struct conf_endpoint *,
		    const struct sig_input *, struct sig_verdict *);
/* PayPal's signature checked with its certificate's key (DER SPKI)
 * given, as sigpub_verify_paypal() does once it has the certificate. */
enum hook_err	sigpub_paypal_check(const struct conf_endpoint *,
		    const struct sig_input *, const unsigned char *spki,
		    size_t spkisz, struct sig_verdict *);
int		sigpub_sign_paypal(const struct secret *,
		    const struct sig_msg *, struct sig_out *);
int		sigpub_sign_discord(const struct secret *,
		    const struct sig_msg *, struct sig_out *);
int		sigpub_sign_telnyx(const struct secret *,
		    const struct sig_msg *, struct sig_out *);
int		sigpub_sign_sendgrid(const struct secret *,
		    const struct sig_msg *, struct sig_out *);
/* Standard Webhooks' v1a entry ("v1a,BASE64") of m's signed bytes, with
 * a private Ed25519 key: 0, or -1. */
int		sigpub_sign_v1a(const struct secret *, const struct sig_msg *,
		    char *out, size_t outsz);

#endif
