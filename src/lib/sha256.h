/* SPDX-License-Identifier: MIT */
/*
 * oncehook: SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), the only
 * cryptography oncehook needs.  Its own, so that no process maps and
 * relocates a general library for them (docs/design/001-own-sha256.md).
 * Plain C on 32-bit words: no table indexed by data, no branch on data,
 * so its time does not depend on the key or the message (only on
 * lengths).
 * Checked against the standard's and the RFC's vectors and against
 * OpenSSL on random inputs (tests/unit/t_crypto.c).
 */
#ifndef ONCEHOOK_SHA256_H
#define ONCEHOOK_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN	32
#define SHA256_BLOCK	64

struct sha256 {
	uint32_t	 h[8];
	uint64_t	 len;		/* bytes so far */
	unsigned char	 buf[SHA256_BLOCK];
	size_t		 fill;		/* bytes in buf */
};

void	sha256_init(struct sha256 *);
void	sha256_update(struct sha256 *, const void *p, size_t n);
void	sha256_final(struct sha256 *, unsigned char out[SHA256_LEN]);

/* The key's inner and outer states, made once for many MACs. */
struct hmac_sha256 {
	struct sha256	 inner, outer;
};

void	hmac_sha256_key(struct hmac_sha256 *, const void *key, size_t n);
/* A MAC's state from the keyed one: update it, then hmac_sha256_final. */
void	hmac_sha256_final(const struct hmac_sha256 *k, struct sha256 *msg,
	    unsigned char out[SHA256_LEN]);

/* For the tests: 1 forces the plain C rounds, 0 lets the processor's be
 * chosen again.  Returns 1 if the processor has SHA instructions. */
int	sha256_portable(int on);

#endif
