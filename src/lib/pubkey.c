/* SPDX-License-Identifier: MIT */
/* oncehook: public-key signatures, the libcrypto room (see lib/pubkey.h). */
#define _GNU_SOURCE		/* memmem */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/pubkey.h"

#ifndef HAVE_OPENSSL

static int
none(char *why, size_t whysz)
{
	snprintf(why, whysz, "this oncehook was built without OpenSSL, "
	    "which public-key schemes need: install the Debian package "
	    "libssl-dev and build it again (configure finds it, unless "
	    "given --without-openssl)");
	return -1;
}

int
pubkey_load(char *why, size_t whysz)
{
	return none(why, whysz);
}

int
pubkey_check(enum pubkey_kind k, const unsigned char *key, size_t keysz,
    char *why, size_t whysz)
{
	(void)k, (void)key, (void)keysz;
	return none(why, whysz);
}

int
pubkey_verify(enum pubkey_kind k, const unsigned char *key, size_t keysz,
    const struct crypto_piece *p, size_t n, const unsigned char *sig,
    size_t sigsz, char *why, size_t whysz)
{
	(void)k, (void)key, (void)keysz, (void)p, (void)n, (void)sig,
	    (void)sigsz;
	return none(why, whysz);
}

long
pubkey_sign(enum pubkey_kind k, const unsigned char *priv, size_t privsz,
    const struct crypto_piece *p, size_t n, unsigned char *sig, char *why,
    size_t whysz)
{
	(void)k, (void)priv, (void)privsz, (void)p, (void)n, (void)sig;
	return none(why, whysz);
}

long
pubkey_public(enum pubkey_kind k, const unsigned char *priv, size_t privsz,
    unsigned char *out, size_t outsz, char *why, size_t whysz)
{
	(void)k, (void)priv, (void)privsz, (void)out, (void)outsz;
	return none(why, whysz);
}

long
pubkey_chain(const char *pem, size_t pemsz, const char *cafile,
    const char *name, time_t now, unsigned char *spki, size_t outsz,
    time_t *not_after, char *why, size_t whysz)
{
	(void)pem, (void)pemsz, (void)cafile, (void)name, (void)now,
	    (void)spki, (void)outsz, (void)not_after;
	return none(why, whysz);
}

#else /* HAVE_OPENSSL */

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "lib/dynlib.h"
#include "lib/utc.h"

/* Bytes Ed25519 signs in one go: MAX_BODY's top (64 MiB) and what the
 * schemes put before it (an id, a timestamp, joiners). */
#define PIECES_MAX	((1 << 26) + (1 << 12))

/* The entry points used, as OpenSSL's headers declare them
 * (lib/dynlib.h). */
/* One entry point, its member and symbol named alike. */
#define F(X, f)	X(__typeof__(f), f, #f)
#define CRYPTO_FUNCS(X) \
	F(X, EVP_PKEY_new_raw_public_key) \
	F(X, EVP_PKEY_new_raw_private_key) \
	F(X, EVP_PKEY_get_raw_public_key) F(X, d2i_PUBKEY) F(X, i2d_PUBKEY) \
	F(X, EVP_PKEY_free) F(X, EVP_PKEY_get_base_id) \
	F(X, EVP_PKEY_get_group_name) F(X, EVP_PKEY_get_bits) \
	F(X, EVP_MD_CTX_new) F(X, EVP_MD_CTX_free) \
	F(X, EVP_DigestVerifyInit) F(X, EVP_DigestVerify) \
	F(X, EVP_DigestSignInit) F(X, EVP_DigestSign) F(X, EVP_sha256) \
	/* An Ed25519 key's point (ed25519_point()). */ \
	F(X, BN_CTX_new) F(X, BN_CTX_free) F(X, BN_CTX_start) \
	F(X, BN_CTX_get) F(X, BN_CTX_end) F(X, BN_bin2bn) F(X, BN_set_word) \
	F(X, BN_lshift) F(X, BN_sub_word) F(X, BN_cmp) F(X, BN_is_zero) \
	F(X, BN_is_one) F(X, BN_value_one) F(X, BN_mod_sqr) \
	F(X, BN_mod_mul) F(X, BN_mod_add) F(X, BN_mod_sub) \
	F(X, BN_mod_inverse) F(X, BN_mod_exp) F(X, BN_rshift1) \
	F(X, BIO_new_mem_buf) F(X, BIO_free) \
	F(X, PEM_read_bio_PrivateKey) F(X, PEM_read_bio_X509) \
	F(X, X509_free) F(X, X509_get0_pubkey) F(X, X509_get0_notAfter) \
	F(X, X509_check_host) F(X, X509_STORE_new) F(X, X509_STORE_free) \
	F(X, X509_STORE_set_default_paths) F(X, X509_STORE_load_file) \
	F(X, X509_STORE_CTX_new) F(X, X509_STORE_CTX_free) \
	F(X, X509_STORE_CTX_init) F(X, X509_STORE_CTX_set_time) \
	F(X, X509_verify_cert) F(X, X509_STORE_CTX_get_error) \
	F(X, X509_verify_cert_error_string) F(X, ASN1_TIME_to_tm) \
	F(X, OPENSSL_sk_new_null) F(X, OPENSSL_sk_push) \
	F(X, OPENSSL_sk_pop) F(X, OPENSSL_sk_free) F(X, ERR_clear_error) \
	F(X, X509_STORE_CTX_get0_chain) F(X, OPENSSL_sk_num) \
	F(X, OPENSSL_sk_value)

static struct {
	CRYPTO_FUNCS(DYNLIB_MEMBER)
} api;
static void	*lib;

int
pubkey_load(char *why, size_t whysz)
{
	static const char	 names[] = CRYPTO_FUNCS(DYNLIB_NAME);

	return dynlib_open(&lib, LIBCRYPTO_SONAME, "libssl3", names,
	    (void **)&api, sizeof(api) / sizeof(void *), why, whysz);
}

/*
 * 1 if key is an Ed25519 point (RFC 8032 section 5.1.3): y below p, and
 * x^2 = (y^2 - 1) / (d y^2 + 1) a square mod p, x = 0 only with its sign
 * bit clear; 0 if not, -1 if memory is short.  libcrypto takes any 32
 * bytes as a raw key and only its verification finds them no point,
 * each signature then refused: oncehook check should say so instead.
 */
static int
ed25519_point(const unsigned char *key)
{
	unsigned char	 be[PUBKEY_ED25519_LEN];
	BN_CTX		*c;
	BIGNUM		*p, *d, *y, *u, *v, *t;
	int		 i, rc = -1;

	for (i = 0; i < PUBKEY_ED25519_LEN; i++)
		be[i] = key[PUBKEY_ED25519_LEN - 1 - i];
	be[0] &= 0x7f;				/* x's sign bit */
	if ((c = api.BN_CTX_new()) == NULL)
		return -1;
	api.BN_CTX_start(c);
	p = api.BN_CTX_get(c);
	d = api.BN_CTX_get(c);
	y = api.BN_CTX_get(c);
	u = api.BN_CTX_get(c);
	v = api.BN_CTX_get(c);
	if ((t = api.BN_CTX_get(c)) == NULL ||
	    /* p = 2^255 - 19, d = -121665 / 121666 */
	    api.BN_set_word(t, 1) != 1 || api.BN_lshift(p, t, 255) != 1 ||
	    api.BN_sub_word(p, 19) != 1 || api.BN_set_word(t, 121666) != 1 ||
	    api.BN_mod_inverse(d, t, p, c) == NULL ||
	    api.BN_set_word(t, 121665) != 1 ||
	    api.BN_mod_mul(d, d, t, p, c) != 1 ||
	    api.BN_mod_sub(d, p, d, p, c) != 1 ||
	    api.BN_bin2bn(be, sizeof(be), y) == NULL)
		goto out;
	if (api.BN_cmp(y, p) >= 0) {
		rc = 0;
		goto out;
	}
	if (api.BN_mod_sqr(t, y, p, c) != 1 ||
	    api.BN_mod_sub(u, t, api.BN_value_one(), p, c) != 1 ||
	    api.BN_mod_mul(v, d, t, p, c) != 1 ||
	    api.BN_mod_add(v, v, api.BN_value_one(), p, c) != 1 ||
	    api.BN_mod_inverse(v, v, p, c) == NULL ||
	    api.BN_mod_mul(u, u, v, p, c) != 1)		/* x^2 */
		goto out;
	if (api.BN_is_zero(u)) {
		rc = (key[PUBKEY_ED25519_LEN - 1] & 0x80) == 0;
		goto out;
	}
	/* Euler's criterion: a square iff u^((p - 1) / 2) = 1, p odd. */
	if (api.BN_rshift1(v, p) != 1 || api.BN_mod_exp(t, u, v, p, c) != 1)
		goto out;
	rc = api.BN_is_one(t);
out:
	api.BN_CTX_end(c);
	api.BN_CTX_free(c);
	return rc;
}

/* The key as an EVP_PKEY of that kind, or NULL with why set. */
static EVP_PKEY *
key_of(enum pubkey_kind kind, const unsigned char *key, size_t keysz,
    char *why, size_t whysz)
{
	const unsigned char	*p = key;
	EVP_PKEY		*k;
	char			 group[32];
	size_t			 glen;

	if (pubkey_load(why, whysz) == -1)
		return NULL;
	if (kind == PUBKEY_ED25519) {
		if (keysz != PUBKEY_ED25519_LEN ||
		    (k = api.EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519,
		    NULL, key, keysz)) == NULL) {
			snprintf(why, whysz, "not an Ed25519 public key");
			return NULL;
		}
		return k;
	}
	k = keysz > (1 << 16) ? NULL : api.d2i_PUBKEY(NULL, &p, (long)keysz);
	if (k == NULL || p != key + keysz) {
		if (k != NULL)
			api.EVP_PKEY_free(k);
		api.ERR_clear_error();
		snprintf(why, whysz, "not a public key (DER SubjectPublicKeyInfo)");
		return NULL;
	}
	if (kind == PUBKEY_P256 && (api.EVP_PKEY_get_base_id(k) != EVP_PKEY_EC ||
	    api.EVP_PKEY_get_group_name(k, group, sizeof(group), &glen) != 1 ||
	    strcmp(group, "prime256v1") != 0)) {
		snprintf(why, whysz, "not an ECDSA P-256 public key");
		goto bad;
	}
	if (kind == PUBKEY_RSA && (api.EVP_PKEY_get_base_id(k) != EVP_PKEY_RSA ||
	    api.EVP_PKEY_get_bits(k) < 2048)) {
		snprintf(why, whysz, "not an RSA public key of 2048 bits or more");
		goto bad;
	}
	return k;
bad:
	api.EVP_PKEY_free(k);
	return NULL;
}

int
pubkey_check(enum pubkey_kind kind, const unsigned char *key, size_t keysz,
    char *why, size_t whysz)
{
	EVP_PKEY	*k;
	int		 rc;

	if ((k = key_of(kind, key, keysz, why, whysz)) == NULL)
		return -1;
	api.EVP_PKEY_free(k);
	if (kind == PUBKEY_ED25519 && (rc = ed25519_point(key)) != 1) {
		snprintf(why, whysz, rc == 0 ? "not an Ed25519 public key: "
		    "no point of the curve (a mistyped key?)" :
		    "out of memory");
		return -1;
	}
	return 0;
}

/* The pieces in one buffer (Ed25519 signs its message whole); NULL if
 * they are too large or memory is short. */
static unsigned char *
joined(const struct crypto_piece *p, size_t n, size_t *sz)
{
	unsigned char	*b;
	size_t		 i, len = 0;

	for (i = 0; i < n; i++) {
		if (p[i].sz > PIECES_MAX - len)
			return NULL;
		len += p[i].sz;
	}
	if ((b = malloc(len + 1)) == NULL)
		return NULL;
	for (*sz = 0, i = 0; i < n; i++) {
		if (p[i].sz > 0)
			memcpy(b + *sz, p[i].p, p[i].sz);
		*sz += p[i].sz;
	}
	return b;
}

int
pubkey_verify(enum pubkey_kind kind, const unsigned char *key, size_t keysz,
    const struct crypto_piece *pieces, size_t npieces,
    const unsigned char *sig, size_t sigsz, char *why, size_t whysz)
{
	EVP_PKEY	*k;
	EVP_MD_CTX	*ctx = NULL;
	unsigned char	*msg = NULL;
	size_t		 msgsz = 0;
	int		 rc = -1;

	if ((k = key_of(kind, key, keysz, why, whysz)) == NULL)
		return -1;
	if ((msg = joined(pieces, npieces, &msgsz)) == NULL ||
	    (ctx = api.EVP_MD_CTX_new()) == NULL) {
		snprintf(why, whysz, "out of memory");
		goto out;
	}
	if (api.EVP_DigestVerifyInit(ctx, NULL, kind == PUBKEY_ED25519 ?
	    NULL : api.EVP_sha256(), NULL, k) != 1) {
		snprintf(why, whysz, "cannot verify with this key");
		goto out;
	}
	rc = api.EVP_DigestVerify(ctx, sig, sigsz, msg, msgsz) == 1;
out:
	api.ERR_clear_error();
	api.EVP_MD_CTX_free(ctx);
	api.EVP_PKEY_free(k);
	free(msg);
	return rc;
}

/* No passphrase: an encrypted key is refused, never prompted for on
 * the terminal (libcrypto's default). */
static int
no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

/* 1 if the n bytes at p hold the text w. */
static int
holds(const unsigned char *p, size_t n, const char *w)
{
	return memmem(p, n, w, strlen(w)) != NULL;
}

/* The private key, or NULL with why set. */
static EVP_PKEY *
private_of(enum pubkey_kind kind, const unsigned char *priv, size_t privsz,
    char *why, size_t whysz)
{
	EVP_PKEY	*k = NULL;
	BIO		*b;

	if (pubkey_load(why, whysz) == -1)
		return NULL;
	if (kind == PUBKEY_ED25519 && privsz == PUBKEY_ED25519_LEN)
		k = api.EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL,
		    priv, privsz);
	else if (privsz < (1 << 16) &&
	    (b = api.BIO_new_mem_buf(priv, (int)privsz)) != NULL) {
		k = api.PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
		api.BIO_free(b);
	}
	api.ERR_clear_error();
	if (k == NULL && holds(priv, privsz, "ENCRYPTED")) {
		snprintf(why, whysz, "an encrypted private key: write it out "
		    "unencrypted first (openssl pkey -in KEY -out test.key)");
		return NULL;
	}
	if (k == NULL || api.EVP_PKEY_get_base_id(k) != (kind ==
	    PUBKEY_ED25519 ? EVP_PKEY_ED25519 : kind == PUBKEY_P256 ?
	    EVP_PKEY_EC : EVP_PKEY_RSA)) {
		snprintf(why, whysz, "%s (this scheme signs with %s)",
		    k != NULL ? "a private key of another kind" :
		    holds(priv, privsz, "PUBLIC KEY") ? "a public key, not "
		    "its private half" : "not a private key",
		    kind == PUBKEY_ED25519 ? "Ed25519: "
		    "PEM, or a 32-byte seed" : kind == PUBKEY_P256 ?
		    "ECDSA P-256: PEM" : "RSA: PEM");
		if (k != NULL)
			api.EVP_PKEY_free(k);
		return NULL;
	}
	return k;
}

long
pubkey_sign(enum pubkey_kind kind, const unsigned char *priv, size_t privsz,
    const struct crypto_piece *pieces, size_t npieces, unsigned char *sig,
    char *why, size_t whysz)
{
	EVP_PKEY	*k;
	EVP_MD_CTX	*ctx = NULL;
	unsigned char	*msg = NULL;
	size_t		 msgsz = 0, len;
	long		 rc = -1;

	if ((k = private_of(kind, priv, privsz, why, whysz)) == NULL)
		return -1;
	if ((msg = joined(pieces, npieces, &msgsz)) == NULL) {
		snprintf(why, whysz, "out of memory");
		goto out;
	}
	len = PUBKEY_SIG_MAX;
	if ((ctx = api.EVP_MD_CTX_new()) == NULL ||
	    api.EVP_DigestSignInit(ctx, NULL, kind == PUBKEY_ED25519 ? NULL :
	    api.EVP_sha256(), NULL, k) != 1 ||
	    api.EVP_DigestSign(ctx, NULL, &len, msg, msgsz) != 1 ||
	    len > PUBKEY_SIG_MAX ||
	    api.EVP_DigestSign(ctx, sig, &len, msg, msgsz) != 1)
		snprintf(why, whysz, "signing failed");
	else
		rc = (long)len;
out:
	api.ERR_clear_error();
	api.EVP_MD_CTX_free(ctx);
	api.EVP_PKEY_free(k);
	free(msg);
	return rc;
}

long
pubkey_public(enum pubkey_kind kind, const unsigned char *priv,
    size_t privsz, unsigned char *out, size_t outsz, char *why, size_t whysz)
{
	EVP_PKEY	*k;
	unsigned char	*p = out;
	size_t		 len = outsz;
	long		 rc = -1;
	int		 n;

	if ((k = private_of(kind, priv, privsz, why, whysz)) == NULL)
		return -1;
	if (kind == PUBKEY_ED25519) {
		if (api.EVP_PKEY_get_raw_public_key(k, out, &len) == 1)
			rc = (long)len;
	} else if ((n = api.i2d_PUBKEY(k, NULL)) > 0 && (size_t)n <= outsz &&
	    api.i2d_PUBKEY(k, &p) == n)
		rc = n;
	if (rc == -1)
		snprintf(why, whysz, "no room for the public key");
	api.ERR_clear_error();
	api.EVP_PKEY_free(k);
	return rc;
}

long
pubkey_chain(const char *pem, size_t pemsz, const char *cafile,
    const char *name, time_t now, unsigned char *spki, size_t outsz,
    time_t *not_after, char *why, size_t whysz)
{
	BIO		*b = NULL;
	X509		*leaf = NULL, *x;
	OPENSSL_STACK	*more = NULL, *chain;
	X509_STORE	*store = NULL;
	X509_STORE_CTX	*ctx = NULL;
	EVP_PKEY	*k;
	struct tm	 tm;
	unsigned char	*p = spki;
	time_t		 t;
	long		 rc = -1;
	int		 i, n;

	if (pubkey_load(why, whysz) == -1)
		return -1;
	if (pemsz > (1 << 20) ||
	    (b = api.BIO_new_mem_buf(pem, (int)pemsz)) == NULL ||
	    (more = api.OPENSSL_sk_new_null()) == NULL ||
	    (store = api.X509_STORE_new()) == NULL ||
	    (ctx = api.X509_STORE_CTX_new()) == NULL) {
		snprintf(why, whysz, "out of memory");
		goto out;
	}
	if ((leaf = api.PEM_read_bio_X509(b, NULL, NULL, NULL)) == NULL) {
		snprintf(why, whysz, "no certificate in PEM");
		goto out;
	}
	while ((x = api.PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL)
		if (api.OPENSSL_sk_push(more, x) <= 0) {
			api.X509_free(x);
			snprintf(why, whysz, "out of memory");
			goto out;
		}
	if ((cafile != NULL ? api.X509_STORE_load_file(store, cafile) :
	    api.X509_STORE_set_default_paths(store)) != 1) {
		snprintf(why, whysz, "cannot read the CA certificates%s%.200s",
		    cafile != NULL ? " of " : "", cafile != NULL ? cafile : "");
		goto out;
	}
	if (api.X509_STORE_CTX_init(ctx, store, leaf,
	    (STACK_OF(X509) *)more) != 1) {
		snprintf(why, whysz, "out of memory");
		goto out;
	}
	api.X509_STORE_CTX_set_time(ctx, 0, now);
	if (api.X509_verify_cert(ctx) != 1) {
		snprintf(why, whysz, "certificate not trusted: %s",
		    api.X509_verify_cert_error_string(
		    api.X509_STORE_CTX_get_error(ctx)));
		goto out;
	}
	if (api.X509_check_host(leaf, name, strlen(name),
	    X509_CHECK_FLAG_NO_WILDCARDS, NULL) != 1) {
		snprintf(why, whysz, "certificate not issued to %.100s", name);
		goto out;
	}
	/* The chain is as good as its first certificate to expire. */
	chain = (OPENSSL_STACK *)api.X509_STORE_CTX_get0_chain(ctx);
	for (i = 0; chain != NULL && i < api.OPENSSL_sk_num(chain); i++) {
		x = api.OPENSSL_sk_value(chain, i);
		if (api.ASN1_TIME_to_tm(api.X509_get0_notAfter(x), &tm) != 1) {
			snprintf(why, whysz, "certificate without an end of "
			    "validity");
			goto out;
		}
		t = (time_t)utc_seconds(tm.tm_year + 1900, tm.tm_mon + 1,
		    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		if (i == 0 || t < *not_after)
			*not_after = t;
	}
	if (chain == NULL || i == 0) {
		snprintf(why, whysz, "certificate chain not built");
		goto out;
	}
	if ((k = api.X509_get0_pubkey(leaf)) == NULL ||
	    api.EVP_PKEY_get_base_id(k) != EVP_PKEY_RSA ||
	    api.EVP_PKEY_get_bits(k) < 2048 ||
	    (n = api.i2d_PUBKEY(k, NULL)) <= 0 || (size_t)n > outsz ||
	    api.i2d_PUBKEY(k, &p) != n) {
		snprintf(why, whysz, "certificate key not RSA of 2048 bits "
		    "or more");
		goto out;
	}
	rc = n;
out:
	api.ERR_clear_error();
	if (more != NULL) {
		while ((x = api.OPENSSL_sk_pop(more)) != NULL)
			api.X509_free(x);
		api.OPENSSL_sk_free(more);
	}
	if (leaf != NULL)
		api.X509_free(leaf);
	if (ctx != NULL)
		api.X509_STORE_CTX_free(ctx);
	if (store != NULL)
		api.X509_STORE_free(store);
	if (b != NULL)
		api.BIO_free(b);
	return rc;
}

#endif /* HAVE_OPENSSL */
