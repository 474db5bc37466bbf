/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the cryptography room.  HMAC-SHA256 over several pieces,
 * SHA-256 (both lib/sha256.c's), HMAC-SHA1 (its own), constant-time
 * comparison, hex and base64 codecs, randomness and wiping.  No library:
 * see lib/sha256.h for why.
 */
#ifndef ONCEHOOK_CRYPTO_H
#define ONCEHOOK_CRYPTO_H

#include <stddef.h>

#define CRYPTO_SHA256_LEN	32
#define CRYPTO_SHA256_HEXLEN	64
#define CRYPTO_SHA1_LEN		20

/* A piece of the bytes to authenticate: the MAC covers all in order. */
struct crypto_piece {
	const void	*p;
	size_t		 sz;
};

/*
 * out = HMAC-SHA256(key, pieces[0] || ... || pieces[n-1]).
 * Returns 0 (-1 is kept for an implementation that can fail).
 */
int	crypto_hmac_sha256(const void *key, size_t keysz,
	    const struct crypto_piece *pieces, size_t n,
	    unsigned char out[CRYPTO_SHA256_LEN])
	    __attribute__((warn_unused_result));

/*
 * out = HMAC-SHA1(key, pieces...), for the providers that still sign
 * with it (Vercel, Twilio).  SHA-1 (FIPS 180-4) is this file's own,
 * plain C on 32-bit words with no branch on data.  Returns 0.
 */
int	crypto_hmac_sha1(const void *key, size_t keysz,
	    const struct crypto_piece *pieces, size_t n,
	    unsigned char out[CRYPTO_SHA1_LEN])
	    __attribute__((warn_unused_result));

/* out = SHA-1(p).  Returns 0. */
/* The CRC-32 of p (ISO-HDLC, as zlib's crc32()): PayPal's body check. */
unsigned long	crypto_crc32(const void *p, size_t sz);

int	crypto_sha1(const void *p, size_t sz,
	    unsigned char out[CRYPTO_SHA1_LEN])
	    __attribute__((warn_unused_result));

/* out = SHA-256(p).  Returns 0 (as crypto_hmac_sha256()). */
int	crypto_sha256(const void *p, size_t sz,
	    unsigned char out[CRYPTO_SHA256_LEN])
	    __attribute__((warn_unused_result));

/* 1 if the n bytes at a and b are equal; time depends on n alone. */
int	crypto_equal(const void *a, const void *b, size_t n)
	    __attribute__((warn_unused_result));

/* Write 2*sz lowercase hex digits and a NUL to out. */
void	crypto_hex(const unsigned char *p, size_t sz, char *out);

/*
 * Decode hex digits (either case) from s (length slen) into out (size
 * outsz).  Returns the number of bytes, or -1 if s has an odd length,
 * a non-hex character or does not fit.
 */
long	crypto_unhex(const char *s, size_t slen, unsigned char *out,
	    size_t outsz);

/*
 * Decode base64 (standard alphabet; padding optional; no white space)
 * from s (length slen) into out (size outsz).  Returns the number of
 * bytes, or -1 if s is malformed or does not fit.
 */
long	crypto_unbase64(const char *s, size_t slen, unsigned char *out,
	    size_t outsz);

/*
 * Encode sz bytes of p as padded standard base64 into out (size
 * outsz, at least 4*((sz+2)/3)+1).  Returns the length, or -1.
 */
long	crypto_base64(const unsigned char *p, size_t sz, char *out,
	    size_t outsz);

/* Fill p with sz random bytes.  Returns 0, or -1 (logged). */
int	crypto_random(void *p, size_t sz) __attribute__((warn_unused_result));

/* Overwrite sz bytes at p with zeros in a way the compiler keeps. */
void	crypto_wipe(void *p, size_t sz);

#endif
