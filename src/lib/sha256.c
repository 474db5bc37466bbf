/* SPDX-License-Identifier: MIT */
/*
 * oncehook: SHA-256 and HMAC-SHA256 (see lib/sha256.h), from FIPS 180-4
 * section 6.2 and RFC 2104.
 */
#include "config.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#ifdef HAVE_CPU_FEATURE_ACTIVE
#include <sys/platform/x86.h>
#endif
#include <immintrin.h>
#define HAVE_SHA_NI	1
#endif

#include "lib/sha256.h"

static const uint32_t	 K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n)	(((x) >> (n)) | ((x) << (32 - (n))))
#define CH(x, y, z)	(((x) & (y)) ^ (~(x) & (z)))
#define MAJ(x, y, z)	(((x) & (y)) ^ ((x) & (z)) ^ ((y) & (z)))
#define S0(x)		(ROR(x, 2) ^ ROR(x, 13) ^ ROR(x, 22))
#define S1(x)		(ROR(x, 6) ^ ROR(x, 11) ^ ROR(x, 25))
#define s0(x)		(ROR(x, 7) ^ ROR(x, 18) ^ ((x) >> 3))
#define s1(x)		(ROR(x, 17) ^ ROR(x, 19) ^ ((x) >> 10))

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void
put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* One 64-byte block into the state, in plain C. */
static void
compress_c(uint32_t h[8], const unsigned char *blk)
{
	uint32_t	 w[64], a, b, c, d, e, f, g, k, t1, t2;
	int		 i;

	for (i = 0; i < 16; i++)
		w[i] = be32(blk + 4 * i);
	for (i = 16; i < 64; i++)
		w[i] = s1(w[i - 2]) + w[i - 7] + s0(w[i - 15]) + w[i - 16];
	a = h[0]; b = h[1]; c = h[2]; d = h[3];
	e = h[4]; f = h[5]; g = h[6]; k = h[7];
	for (i = 0; i < 64; i++) {
		t1 = k + S1(e) + CH(e, f, g) + K[i] + w[i];
		t2 = S0(a) + MAJ(a, b, c);
		k = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

#ifdef HAVE_SHA_NI
/*
 * The same with the x86 SHA extensions (Intel's SHA-NI: 4 rounds per
 * two instructions), where the processor has them.  The state lives as
 * ABEF and CDGH; each group of 4 rounds takes the next 4 words of the
 * schedule, W[i] = msg2(msg1(W[i-4], W[i-3]) + (W[i-1]:W[i-2] >> 32),
 * W[i-1]), plus their 4 constants.
 */
__attribute__((target("sha,sse4.1,ssse3")))
static void
compress_ni(uint32_t h[8], const unsigned char *blk)
{
	const __m128i	 bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL,
			    0x0405060700010203ULL);
	__m128i		 st0, st1, tmp, msg, save0, save1, w[4];
	int		 i;

	tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]),
	    0xb1);					/* CDAB */
	st1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]),
	    0x1b);					/* EFGH */
	st0 = _mm_alignr_epi8(tmp, st1, 8);		/* ABEF */
	st1 = _mm_blend_epi16(st1, tmp, 0xf0);		/* CDGH */
	save0 = st0;
	save1 = st1;
	for (i = 0; i < 16; i++) {
		if (i < 4)
			w[i] = _mm_shuffle_epi8(_mm_loadu_si128(
			    (const __m128i *)(blk + 16 * i)), bswap);
		else
			w[i & 3] = _mm_sha256msg2_epu32(_mm_add_epi32(
			    _mm_sha256msg1_epu32(w[i & 3], w[(i + 1) & 3]),
			    _mm_alignr_epi8(w[(i + 3) & 3], w[(i + 2) & 3], 4)),
			    w[(i + 3) & 3]);
		msg = _mm_add_epi32(w[i & 3],
		    _mm_loadu_si128((const __m128i *)&K[4 * i]));
		st1 = _mm_sha256rnds2_epu32(st1, st0, msg);
		st0 = _mm_sha256rnds2_epu32(st0, st1,
		    _mm_shuffle_epi32(msg, 0x0e));
	}
	st0 = _mm_add_epi32(st0, save0);
	st1 = _mm_add_epi32(st1, save1);
	tmp = _mm_shuffle_epi32(st0, 0x1b);		/* FEBA */
	st1 = _mm_shuffle_epi32(st1, 0xb1);		/* DCHG */
	_mm_storeu_si128((__m128i *)&h[0],
	    _mm_blend_epi16(tmp, st1, 0xf0));		/* DCBA */
	_mm_storeu_si128((__m128i *)&h[4],
	    _mm_alignr_epi8(st1, tmp, 8));		/* HGFE */
}
#endif

#ifdef HAVE_SHA_NI
/* The processor has the SHA extensions, and SSSE3 and SSE4.1 (cpuid:
 * leaf 7 EBX bit 29; leaf 1 ECX bits 9 and 19).  Asked of what glibc
 * (2.34 on) read at start-up where it can: under a hypervisor each
 * cpuid instruction traps, four of them at every CGI request. */
static int
cpu_has_sha(void)
{
#ifdef HAVE_CPU_FEATURE_ACTIVE
	return CPU_FEATURE_ACTIVE(SHA) && CPU_FEATURE_ACTIVE(SSSE3) &&
	    CPU_FEATURE_ACTIVE(SSE4_1);
#else
	unsigned int	 a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) ||
	    !(c & (1u << 19)))
		return 0;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (b & (1u << 29)) != 0;
#endif
}
#endif

/* Which of the two: chosen on first use (a per-process cache). */
static void	(*compress_fn)(uint32_t[8], const unsigned char *);

static void
compress(uint32_t h[8], const unsigned char *blk)
{
	if (compress_fn == NULL) {
		compress_fn = compress_c;
#ifdef HAVE_SHA_NI
		if (cpu_has_sha())
			compress_fn = compress_ni;
#endif
	}
	compress_fn(h, blk);
}

int
sha256_portable(int on)
{
	compress_fn = on ? compress_c : NULL;	/* NULL: chosen again */
#ifdef HAVE_SHA_NI
	return cpu_has_sha();
#else
	return 0;
#endif
}

void
sha256_init(struct sha256 *s)
{
	static const uint32_t	 iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, iv, sizeof(iv));
	s->len = 0;
	s->fill = 0;
}

void
sha256_update(struct sha256 *s, const void *data, size_t n)
{
	const unsigned char	*p = data;
	size_t			 take;

	if (n == 0)
		return;			/* data may be NULL then */
	s->len += n;
	if (s->fill > 0) {
		take = SHA256_BLOCK - s->fill;
		if (take > n)
			take = n;
		memcpy(s->buf + s->fill, p, take);
		s->fill += take;
		p += take;
		n -= take;
		if (s->fill < SHA256_BLOCK)
			return;
		compress(s->h, s->buf);
		s->fill = 0;
	}
	for (; n >= SHA256_BLOCK; p += SHA256_BLOCK, n -= SHA256_BLOCK)
		compress(s->h, p);
	if (n > 0) {
		memcpy(s->buf, p, n);
		s->fill = n;
	}
}

void
sha256_final(struct sha256 *s, unsigned char out[SHA256_LEN])
{
	uint64_t	 bits = s->len * 8;
	int		 i;

	s->buf[s->fill++] = 0x80;
	if (s->fill > SHA256_BLOCK - 8) {
		memset(s->buf + s->fill, 0, SHA256_BLOCK - s->fill);
		compress(s->h, s->buf);
		s->fill = 0;
	}
	memset(s->buf + s->fill, 0, SHA256_BLOCK - 8 - s->fill);
	put_be32(s->buf + 56, (uint32_t)(bits >> 32));
	put_be32(s->buf + 60, (uint32_t)bits);
	compress(s->h, s->buf);
	for (i = 0; i < 8; i++)
		put_be32(out + 4 * i, s->h[i]);
}

void
hmac_sha256_key(struct hmac_sha256 *k, const void *key, size_t n)
{
	unsigned char	 pad[SHA256_BLOCK];
	unsigned char	 kh[SHA256_LEN];
	const unsigned char *kp = key;
	size_t		 i;

	/* A key longer than a block is its digest (RFC 2104, section 2). */
	if (n > SHA256_BLOCK) {
		sha256_init(&k->inner);
		sha256_update(&k->inner, key, n);
		sha256_final(&k->inner, kh);
		kp = kh;
		n = SHA256_LEN;
	}
	memset(pad, 0x36, sizeof(pad));
	for (i = 0; i < n; i++)
		pad[i] ^= kp[i];
	sha256_init(&k->inner);
	sha256_update(&k->inner, pad, sizeof(pad));
	memset(pad, 0x5c, sizeof(pad));
	for (i = 0; i < n; i++)
		pad[i] ^= kp[i];
	sha256_init(&k->outer);
	sha256_update(&k->outer, pad, sizeof(pad));
	/* The key's traces on the stack. */
	explicit_bzero(pad, sizeof(pad));
	explicit_bzero(kh, sizeof(kh));
}

void
hmac_sha256_final(const struct hmac_sha256 *k, struct sha256 *msg,
    unsigned char out[SHA256_LEN])
{
	struct sha256	 o = k->outer;
	unsigned char	 ih[SHA256_LEN];

	sha256_final(msg, ih);
	sha256_update(&o, ih, sizeof(ih));
	sha256_final(&o, out);
	explicit_bzero(&o, sizeof(o));
	explicit_bzero(ih, sizeof(ih));
}
