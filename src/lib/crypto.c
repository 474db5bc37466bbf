/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the cryptography room (see lib/crypto.h).  SHA-256 and HMAC are
 * lib/sha256.c's; SHA-1, for HMAC-SHA1 only, is here; randomness is the
 * kernel's (getrandom(2)); wiping is explicit_bzero(3).  No state: each
 * MAC keys its own context on the stack and wipes it.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>

#include "lib/crypto.h"
#include "lib/log.h"
#include "lib/sha256.h"

int
crypto_hmac_sha256(const void *key, size_t keysz,
    const struct crypto_piece *pieces, size_t n,
    unsigned char out[CRYPTO_SHA256_LEN])
{
	struct hmac_sha256	 k;
	struct sha256		 m;
	size_t			 i;

	hmac_sha256_key(&k, key, keysz);
	m = k.inner;
	for (i = 0; i < n; i++)
		sha256_update(&m, pieces[i].p, pieces[i].sz);
	hmac_sha256_final(&k, &m, out);
	explicit_bzero(&k, sizeof(k));
	explicit_bzero(&m, sizeof(m));
	return 0;
}

int
crypto_sha256(const void *p, size_t sz, unsigned char out[CRYPTO_SHA256_LEN])
{
	struct sha256	 s;

	sha256_init(&s);
	sha256_update(&s, p, sz);
	sha256_final(&s, out);
	return 0;
}

/*
 * SHA-1 (FIPS 180-4 section 6.1), for HMAC-SHA1 only: Vercel and Twilio
 * still sign with it.  One block at a time, no table indexed by data.
 */
struct sha1 {
	uint32_t	 h[5];
	uint64_t	 len;		/* bytes so far */
	unsigned char	 buf[64];
	size_t		 fill;
};

#define ROL32(x, n)	(((x) << (n)) | ((x) >> (32 - (n))))

static void
sha1_block(struct sha1 *s, const unsigned char *p)
{
	uint32_t	 w[80], a, b, c, d, e, f, k, t;
	size_t		 i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (i = 16; i < 80; i++)
		w[i] = ROL32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = s->h[0];
	b = s->h[1];
	c = s->h[2];
	d = s->h[3];
	e = s->h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20) {
			f = (b & c) | (~b & d);
			k = 0x5a827999;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (i < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = b ^ c ^ d;
			k = 0xca62c1d6;
		}
		t = ROL32(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = ROL32(b, 30);
		b = a;
		a = t;
	}
	s->h[0] += a;
	s->h[1] += b;
	s->h[2] += c;
	s->h[3] += d;
	s->h[4] += e;
	explicit_bzero(w, sizeof(w));
}

static void
sha1_init(struct sha1 *s)
{
	static const uint32_t	 iv[5] = { 0x67452301, 0xefcdab89,
	    0x98badcfe, 0x10325476, 0xc3d2e1f0 };

	memcpy(s->h, iv, sizeof(iv));
	s->len = 0;
	s->fill = 0;
}

static void
sha1_update(struct sha1 *s, const void *data, size_t n)
{
	const unsigned char	*p = data;
	size_t			 take;

	s->len += n;
	while (n > 0) {
		take = sizeof(s->buf) - s->fill;
		if (take > n)
			take = n;
		memcpy(s->buf + s->fill, p, take);
		s->fill += take;
		p += take;
		n -= take;
		if (s->fill == sizeof(s->buf)) {
			sha1_block(s, s->buf);
			s->fill = 0;
		}
	}
}

static void
sha1_final(struct sha1 *s, unsigned char out[CRYPTO_SHA1_LEN])
{
	uint64_t	 bits = s->len * 8;
	unsigned char	 pad[72];
	size_t		 i, padn;

	/* 0x80, zeros to 56 mod 64, then the length in bits, big-endian. */
	padn = (s->fill < 56 ? 56 : 120) - s->fill;
	memset(pad, 0, sizeof(pad));
	pad[0] = 0x80;
	for (i = 0; i < 8; i++)
		pad[padn + i] = (unsigned char)(bits >> (56 - 8 * i));
	sha1_update(s, pad, padn + 8);
	for (i = 0; i < 5; i++) {
		out[4 * i] = (unsigned char)(s->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)s->h[i];
	}
	explicit_bzero(s, sizeof(*s));
}

int
crypto_sha1(const void *p, size_t sz, unsigned char out[CRYPTO_SHA1_LEN])
{
	struct sha1	 s;

	sha1_init(&s);
	sha1_update(&s, p, sz);
	sha1_final(&s, out);
	return 0;
}

/* RFC 2104 over SHA-1: a key longer than a block is hashed first. */
int
crypto_hmac_sha1(const void *key, size_t keysz,
    const struct crypto_piece *pieces, size_t n,
    unsigned char out[CRYPTO_SHA1_LEN])
{
	unsigned char	 k[64], pad[64], inner[CRYPTO_SHA1_LEN];
	struct sha1	 s;
	size_t		 i;

	memset(k, 0, sizeof(k));
	if (keysz > sizeof(k)) {
		if (crypto_sha1(key, keysz, k) == -1)
			return -1;
	} else if (keysz > 0)
		memcpy(k, key, keysz);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x36;
	sha1_init(&s);
	sha1_update(&s, pad, sizeof(pad));
	for (i = 0; i < n; i++)
		sha1_update(&s, pieces[i].p, pieces[i].sz);
	sha1_final(&s, inner);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x5c;
	sha1_init(&s);
	sha1_update(&s, pad, sizeof(pad));
	sha1_update(&s, inner, sizeof(inner));
	sha1_final(&s, out);
	explicit_bzero(k, sizeof(k));
	explicit_bzero(pad, sizeof(pad));
	explicit_bzero(inner, sizeof(inner));
	return 0;
}

int
crypto_equal(const void *a, const void *b, size_t n)
{
	const volatile unsigned char	*x = a, *y = b;
	unsigned char			 d = 0;
	size_t				 i;

	/* Every byte, whatever the first difference: no early exit. */
	for (i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
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
	static const char	 abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t			 need = 4 * ((sz + 2) / 3) + 1, i, o = 0;
	unsigned long		 v;

	if (outsz < need || sz > 0x3fffffff)
		return -1;
	for (i = 0; i + 2 < sz; i += 3) {
		v = (unsigned long)p[i] << 16 | (unsigned long)p[i + 1] << 8 |
		    p[i + 2];
		out[o++] = abc[v >> 18 & 63];
		out[o++] = abc[v >> 12 & 63];
		out[o++] = abc[v >> 6 & 63];
		out[o++] = abc[v & 63];
	}
	if (i < sz) {
		v = (unsigned long)p[i] << 16;
		if (i + 1 < sz)
			v |= (unsigned long)p[i + 1] << 8;
		out[o++] = abc[v >> 18 & 63];
		out[o++] = abc[v >> 12 & 63];
		out[o++] = i + 1 < sz ? abc[v >> 6 & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
	return (long)o;
}

int
crypto_random(void *p, size_t sz)
{
	unsigned char	*q = p;
	ssize_t		 r;

	while (sz > 0) {
		if ((r = getrandom(q, sz, 0)) == -1) {
			if (errno == EINTR)
				continue;
			log_error("crypto: getrandom: %s", strerror(errno));
			return -1;
		}
		q += r;
		sz -= (size_t)r;
	}
	return 0;
}

void
crypto_wipe(void *p, size_t sz)
{
	if (p != NULL && sz > 0)
		explicit_bzero(p, sz);
}

unsigned long
crypto_crc32(const void *p, size_t sz)
{
	const unsigned char	*b = p;
	uint32_t		 c = 0xffffffffu;
	int			 k;

	while (sz-- > 0) {
		c ^= *b++;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return (unsigned long)(c ^ 0xffffffffu);
}
