/* SPDX-License-Identifier: MIT */
/*
 * oncehook: public-key signatures, the libcrypto room (docs/design/
 * 031-public-keys.md).
 *
 * Shared-secret schemes are oncehook's own HMAC (lib/crypto.h); the
 * public-key ones, Ed25519, ECDSA P-256 and RSA with an X.509 chain,
 * are OpenSSL's, opened at their first use (lib/dynlib.h), so the
 * processes of the other schemes never map it.  Keys are bytes as the
 * scheme row's secret function decoded them: Ed25519's raw 32 bytes,
 * else a DER SubjectPublicKeyInfo.  Verification is libcrypto's, and
 * as strict as the signers are: OpenSSL 3.0 refuses an Ed25519 S not
 * below the group order and an ECDSA signature not in DER's one
 * encoding.  ECDSA's S and its twin n - S both verify, as every library
 * has them: SendGrid signs with either (docs/design/031-public-keys.md).
 */
#ifndef ONCEHOOK_PUBKEY_H
#define ONCEHOOK_PUBKEY_H

#include <stddef.h>
#include <time.h>

#include "lib/crypto.h"

enum pubkey_kind {
	PUBKEY_ED25519 = 1,	/* raw 32-byte key, 64-byte signature */
	PUBKEY_P256,		/* SPKI of a P-256 key; DER ECDSA-SHA256 */
	PUBKEY_RSA,		/* SPKI of an RSA key (>= 2048 bits);
				   RSASSA-PKCS1-v1_5 with SHA-256 */
};

#define PUBKEY_ED25519_LEN	32
#define PUBKEY_SIG_MAX		512	/* bytes of any signature */

/*
 * Open libcrypto (once per process): 0, or -1 with why set; a build
 * without OpenSSL says what these schemes need.
 */
int	pubkey_load(char *why, size_t whysz);

/*
 * 0 if key (keysz bytes) is a usable key of that kind: a point on
 * the curve, the named curve, enough bits; -1 with why otherwise.
 */
int	pubkey_check(enum pubkey_kind, const unsigned char *key,
	    size_t keysz, char *why, size_t whysz);

/*
 * 1 if sig is key's signature of the pieces' bytes, 0 if it is not (a
 * malformed signature included), -1 with why if it cannot be told (no
 * library, an unusable key).
 */
int	pubkey_verify(enum pubkey_kind, const unsigned char *key,
	    size_t keysz, const struct crypto_piece *, size_t npieces,
	    const unsigned char *sig, size_t sigsz, char *why, size_t whysz);

/*
 * Sign the pieces with a private key, for oncehook sign: priv is PEM
 * text (PKCS#8, or EC or RSA PRIVATE KEY), or for PUBKEY_ED25519 the
 * 32-byte seed.  The signature (an ECDSA one in DER) goes to sig
 * (PUBKEY_SIG_MAX bytes); its length, or -1 with why.
 */
long	pubkey_sign(enum pubkey_kind, const unsigned char *priv,
	    size_t privsz, const struct crypto_piece *, size_t npieces,
	    unsigned char *sig, char *why, size_t whysz);

/*
 * The public key of a private one as pubkey_sign() takes it: raw for
 * Ed25519, else DER SPKI, into out (outsz bytes); its length, or -1.
 */
long	pubkey_public(enum pubkey_kind, const unsigned char *priv,
	    size_t privsz, unsigned char *out, size_t outsz, char *why,
	    size_t whysz);

/*
 * A certificate chain in PEM (leaf first, pemsz bytes) checked as a
 * provider's signing certificate: chaining to a CA of cafile (NULL: the
 * system's store), valid at now, the leaf naming host name.  Its leaf's
 * public key (DER SPKI, kind PUBKEY_RSA) goes to spki (outsz bytes),
 * the chain's first end of validity (its leaf's, or an intermediate's
 * that ends sooner) to *not_after.  The key's length, or -1 with why.
 */
long	pubkey_chain(const char *pem, size_t pemsz, const char *cafile,
	    const char *name, time_t now, unsigned char *spki, size_t outsz,
	    time_t *not_after, char *why, size_t whysz);

#endif
