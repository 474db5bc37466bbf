/*
 * oncehook: the OpenSSL room (see crypto.h).  HMAC goes through the
 * OpenSSL 3 EVP_MAC interface.  What does not change between requests
 * is made once and kept for the life of the process, the only state
 * this file keeps: the HMAC context with its digest set (each MAC only
 * sets the key: no fetch by name, no new context per request), the
 * fetched SHA-256, and whether OpenSSL was started (crypto_start()).  A forked worker inherits them, which is fine: no
 * thread shares them.  The last MAC's keyed state stays in the context
 * until the next one, in memory that already holds the secrets (the
 * configuration).
 */
#include "config.h"

#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "crypto.h"
#include "log.h"

static EVP_MAC_CTX	*hmac;		/* digest set; keyed per MAC */
static EVP_MD_CTX	*mdctx;		/* for crypto_sha256() */
static EVP_MD		*sha256;	/* fetched once */

/*
 * OpenSSL's start, on first use: without the legacy tables of every
 * cipher and digest by name (EVP_get_digestbyname()), which nothing
 * here uses (the fetch interface finds HMAC and SHA-256 in the
 * providers) and which cost a CGI request more than a quarter of its
 * instructions.  The system's openssl.cnf is still read.
 */
static void
crypto_start(void)
{
	static int	 started;

	if (started)
		return;
	started = 1;
	(void)OPENSSL_init_crypto(OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
	    OPENSSL_INIT_NO_ADD_ALL_DIGESTS, NULL);
}

/* The HMAC context, made on first use.  NULL if OpenSSL failed (logged). */
static EVP_MAC_CTX *
hmac_ctx(void)
{
	EVP_MAC		*mac;
	OSSL_PARAM	 params[2];

	if (hmac != NULL)
		return hmac;
	crypto_start();
	if ((mac = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL) {
		log_error("crypto: EVP_MAC_fetch(HMAC) failed");
		return NULL;
	}
	hmac = EVP_MAC_CTX_new(mac);
	EVP_MAC_free(mac);		/* the context keeps its reference */
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
	    (char *)"SHA256", 0);
	params[1] = OSSL_PARAM_construct_end();
	if (hmac == NULL || !EVP_MAC_CTX_set_params(hmac, params)) {
		log_error("crypto: HMAC-SHA256 context failed");
		EVP_MAC_CTX_free(hmac);
		hmac = NULL;
	}
	return hmac;
}

int
crypto_hmac_sha256(const void *key, size_t keysz,
    const struct crypto_piece *pieces, size_t n,
    unsigned char out[CRYPTO_SHA256_LEN])
{
	static const unsigned char	 empty[1];
	EVP_MAC_CTX			*ctx;
	size_t				 outsz = 0, i;
	int				 rc = -1;

	if ((ctx = hmac_ctx()) == NULL)
		return -1;
	/* An empty key is legal HMAC; OpenSSL wants a non-NULL pointer.
	 * A key given to init starts a new MAC: nothing of the last one
	 * is left. */
	if (!EVP_MAC_init(ctx, keysz ? key : empty, keysz, NULL))
		goto out;
	for (i = 0; i < n; i++)
		if (pieces[i].sz > 0 &&
		    !EVP_MAC_update(ctx, pieces[i].p, pieces[i].sz))
			goto out;
	if (!EVP_MAC_final(ctx, out, &outsz, CRYPTO_SHA256_LEN) ||
	    outsz != CRYPTO_SHA256_LEN)
		goto out;
	rc = 0;
out:
	if (rc == -1)
		log_error("crypto: HMAC-SHA256 failed");
	return rc;
}

int
crypto_sha256(const void *p, size_t sz, unsigned char out[CRYPTO_SHA256_LEN])
{
	unsigned int	 outsz = 0;

	if (sha256 == NULL)
		crypto_start();
	if (sha256 == NULL && (sha256 = EVP_MD_fetch(NULL, "SHA256",
	    NULL)) == NULL) {
		log_error("crypto: EVP_MD_fetch(SHA256) failed");
		return -1;
	}
	if (mdctx == NULL && (mdctx = EVP_MD_CTX_new()) == NULL) {
		log_error("crypto: SHA-256 failed");
		return -1;
	}
	if (!EVP_DigestInit_ex2(mdctx, sha256, NULL) ||
	    !EVP_DigestUpdate(mdctx, p, sz) ||
	    !EVP_DigestFinal_ex(mdctx, out, &outsz) ||
	    outsz != CRYPTO_SHA256_LEN) {
		log_error("crypto: SHA-256 failed");
		return -1;
	}
	return 0;
}

int
crypto_equal(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}

void
crypto_hex(const unsigned char *p, size_t sz, char *out)
{
	static const char	 digits[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < sz; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
	out[2 * sz] = '\0';
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long
crypto_unhex(const char *s, size_t slen, unsigned char *out, size_t outsz)
{
	size_t	 i;
	int	 hi, lo;

	if (slen % 2 != 0 || slen / 2 > outsz)
		return -1;
	for (i = 0; i < slen / 2; i++) {
		if ((hi = hexval(s[2 * i])) < 0 ||
		    (lo = hexval(s[2 * i + 1])) < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return (long)(slen / 2);
}

static int
b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long
crypto_unbase64(const char *s, size_t slen, unsigned char *out, size_t outsz)
{
	unsigned long	 acc = 0;
	size_t		 i, o = 0, bits = 0;
	int		 v;

	/* Padding, if any, completes a group of four. */
	if (memchr(s, '=', slen) != NULL && slen % 4 != 0)
		return -1;
	/* Strip up to two '=' of padding; then the length must fit. */
	if (slen % 4 == 0 && slen >= 1 && s[slen - 1] == '=')
		slen--;
	if (slen % 4 == 3 && slen >= 1 && s[slen - 1] == '=')
		slen--;
	if (slen % 4 == 1)
		return -1;
	for (i = 0; i < slen; i++) {
		if ((v = b64val(s[i])) < 0)
			return -1;
		acc = (acc << 6 | (unsigned long)v) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o >= outsz)
				return -1;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	/* Leftover bits must be zero (canonical encoding). */
	if (bits > 0 && (acc & ((1UL << bits) - 1)) != 0)
		return -1;
	return (long)o;
}

long
crypto_base64(const unsigned char *p, size_t sz, char *out, size_t outsz)
{
	size_t	 need = 4 * ((sz + 2) / 3) + 1;

	if (outsz < need || sz > 0x3fffffff)
		return -1;
	return EVP_EncodeBlock((unsigned char *)out, p, (int)sz);
}

int
crypto_random(void *p, size_t sz)
{
	crypto_start();
	if (sz > 0x7fffffff || RAND_bytes(p, (int)sz) != 1) {
		log_error("crypto: RAND_bytes failed");
		return -1;
	}
	return 0;
}

void
crypto_wipe(void *p, size_t sz)
{
	if (p != NULL && sz > 0)
		OPENSSL_cleanse(p, sz);
}
