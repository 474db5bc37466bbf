/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the OpenSSL room (src/lib/crypto.c).
 *
 * HMAC-SHA256 against the RFC 4231 vectors, over one piece and over
 * several; SHA-256 against FIPS 180-2; SHA-1 and HMAC-SHA1 against
 * FIPS 180-2 appendix A, RFC 3174, RFC 2202 and OpenSSL; the hex and
 * base64 codecs both
 * ways, including what they must refuse; constant-time equality.  The
 * expected values are the published ones, decoded here by a helper that
 * shares no code with lib/crypto.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "lib/crypto.h"
#include "lib/sha256.h"
#include "lib/utc.h"
#include "tap.h"

/*
 * Decode the hex text s into out (size outsz) for the expectations;
 * deliberately independent of crypto_unhex().  Bails on bad input.
 */
static size_t
expect_bytes(const char *s, unsigned char *out, size_t outsz)
{
	static const char	 digits[] = "0123456789abcdef";
	const char		*hi, *lo;
	size_t			 i, n = strlen(s) / 2;

	if (strlen(s) % 2 != 0 || n > outsz)
		BAIL("bad expectation \"%s\"", s);
	for (i = 0; i < n; i++) {
		if ((hi = strchr(digits, s[2 * i])) == NULL ||
		    (lo = strchr(digits, s[2 * i + 1])) == NULL)
			BAIL("bad expectation \"%s\"", s);
		out[i] = (unsigned char)((hi - digits) << 4 | (lo - digits));
	}
	return n;
}

/* 1 if HMAC-SHA256(key, data) equals the first len bytes of want. */
static int
hmac_is(const unsigned char *key, size_t keysz, const void *data,
    size_t datasz, const char *want, size_t len)
{
	struct crypto_piece	 piece = { data, datasz };
	unsigned char		 got[CRYPTO_SHA256_LEN];
	unsigned char		 exp[CRYPTO_SHA256_LEN];

	if (expect_bytes(want, exp, sizeof(exp)) < len)
		BAIL("short expectation");
	if (crypto_hmac_sha256(key, keysz, &piece, 1, got) == -1)
		return 0;
	return memcmp(got, exp, len) == 0;
}

/* 1 if HMAC-SHA1(key, data) equals want (hex). */
static int
hmac1_is(const unsigned char *key, size_t keysz, const void *data,
    size_t datasz, const char *want, size_t len)
{
	struct crypto_piece	 piece = { data, datasz };
	unsigned char		 got[CRYPTO_SHA1_LEN];
	unsigned char		 exp[CRYPTO_SHA1_LEN];

	if (expect_bytes(want, exp, sizeof(exp)) < len)
		BAIL("short expectation");
	if (crypto_hmac_sha1(key, keysz, &piece, 1, got) == -1)
		return 0;
	return memcmp(got, exp, len) == 0;
}

/* SHA-1 against FIPS 180-2 appendix A; HMAC-SHA1 against RFC 2202. */
static void
test_sha1(void)
{
	static const char	 two[] =
	    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	unsigned char		 got[CRYPTO_SHA1_LEN], exp[CRYPTO_SHA1_LEN];
	unsigned char		 k[80], d[50], t4[640], *big;
	struct crypto_piece	 pc[3];
	const char		*s;
	size_t			 i;

	expect_bytes("a9993e364706816aba3e25717850c26c9cd0d89d", exp,
	    sizeof(exp));
	CHECK(crypto_sha1("abc", 3, got) == 0 &&
	    memcmp(got, exp, sizeof(exp)) == 0,
	    "SHA-1(\"abc\") per FIPS 180-2 A.1");
	expect_bytes("84983e441c3bd26ebaae4aa1f95129e5e54670f1", exp,
	    sizeof(exp));
	CHECK(crypto_sha1(two, sizeof(two) - 1, got) == 0 &&
	    memcmp(got, exp, sizeof(exp)) == 0,
	    "SHA-1 of the 448-bit message per FIPS 180-2 A.2");
	if ((big = malloc(1000000)) == NULL)
		BAIL("out of memory");
	memset(big, 'a', 1000000);
	expect_bytes("34aa973cd4c4daa4f61eeb2bdbad27316534016f", exp,
	    sizeof(exp));
	CHECK(crypto_sha1(big, 1000000, got) == 0 &&
	    memcmp(got, exp, sizeof(exp)) == 0,
	    "SHA-1 of a million \"a\" per FIPS 180-2 A.3");
	free(big);
	/* RFC 3174 section 7.3, TEST4: "01234567" 80 times (ten blocks). */
	for (i = 0; i < 80; i++)
		memcpy(t4 + 8 * i, "01234567", 8);
	expect_bytes("dea356a2cddd90c7a7ecedc5ebb563934f460452", exp,
	    sizeof(exp));
	CHECK(crypto_sha1(t4, sizeof(t4), got) == 0 &&
	    memcmp(got, exp, sizeof(exp)) == 0,
	    "SHA-1 of \"01234567\" 80 times per RFC 3174 TEST4");
	expect_bytes("da39a3ee5e6b4b0d3255bfef95601890afd80709", exp,
	    sizeof(exp));
	CHECK(crypto_sha1("", 0, got) == 0 &&
	    memcmp(got, exp, sizeof(exp)) == 0, "SHA-1 of the empty message");

	/* RFC 2202 section 3, test cases 1 to 7. */
	memset(k, 0x0b, 20);
	CHECK(hmac1_is(k, 20, "Hi There", 8,
	    "b617318655057264e28bc0b6fb378c8ef146be00", 20),
	    "HMAC-SHA1 RFC 2202 test case 1");
	s = "what do ya want for nothing?";
	CHECK(hmac1_is((const unsigned char *)"Jefe", 4, s, strlen(s),
	    "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79", 20),
	    "HMAC-SHA1 RFC 2202 test case 2");
	memset(k, 0xaa, 20);
	memset(d, 0xdd, 50);
	CHECK(hmac1_is(k, 20, d, 50,
	    "125d7342b9ac11cd91a39af48aa17b4f63f175d3", 20),
	    "HMAC-SHA1 RFC 2202 test case 3");
	for (i = 0; i < 25; i++)
		k[i] = (unsigned char)(i + 1);
	memset(d, 0xcd, 50);
	CHECK(hmac1_is(k, 25, d, 50,
	    "4c9007f4026250c6bc8414f9bf50c86c2d7235da", 20),
	    "HMAC-SHA1 RFC 2202 test case 4");
	memset(k, 0x0c, 20);
	CHECK(hmac1_is(k, 20, "Test With Truncation", 20,
	    "4c1a03424b55e07fe7f27be1d58bb932", 12),
	    "HMAC-SHA1 RFC 2202 test case 5 (first 96 bits)");
	CHECK(hmac1_is(k, 20, "Test With Truncation", 20,
	    "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04", 20),
	    "HMAC-SHA1 RFC 2202 test case 5 (all 160 bits)");
	memset(k, 0xaa, 80);
	s = "Test Using Larger Than Block-Size Key - Hash Key First";
	CHECK(hmac1_is(k, 80, s, strlen(s),
	    "aa4ae5e15272d00e95705637ce8a3b55ed402112", 20),
	    "HMAC-SHA1 RFC 2202 test case 6");
	s = "Test Using Larger Than Block-Size Key and Larger Than One "
	    "Block-Size Data";
	CHECK(hmac1_is(k, 80, s, strlen(s),
	    "e8e99d0f45237d786d6bbaa7965c7808bbff1a91", 20),
	    "HMAC-SHA1 RFC 2202 test case 7");
	/* The same message in three pieces gives the same MAC. */
	pc[0].p = s;
	pc[0].sz = 5;
	pc[1].p = s + 5;
	pc[1].sz = 0;
	pc[2].p = s + 5;
	pc[2].sz = strlen(s) - 5;
	expect_bytes("e8e99d0f45237d786d6bbaa7965c7808bbff1a91", exp,
	    sizeof(exp));
	CHECK(crypto_hmac_sha1(k, 80, pc, 3, got) == 0 &&
	    memcmp(got, exp, sizeof(exp)) == 0,
	    "HMAC-SHA1 over three pieces equals the one-piece MAC");
}

/* The n bytes at msg as three pieces, cut at random places. */
static void
split3(struct crypto_piece pc[3], const unsigned char *msg, size_t n)
{
	size_t	 cut1, cut2;

	cut1 = n ? (size_t)rand() % (n + 1) : 0;
	cut2 = cut1 + (n - cut1 ? (size_t)rand() % (n - cut1 + 1) : 0);
	pc[0].p = msg;
	pc[0].sz = cut1;
	pc[1].p = msg + cut1;
	pc[1].sz = cut2 - cut1;
	pc[2].p = msg + cut2;
	pc[2].sz = n - cut2;
}

/*
 * SHA-1 and HMAC-SHA1 equal OpenSSL's for keys and messages of many
 * lengths; the MAC's message in three pieces cut at random.
 */
static void
test_sha1_against_openssl(void)
{
	unsigned char	 msg[300], key[150], a[20], b[20];
	struct crypto_piece pc[3];
	unsigned int	 blen;
	size_t		 n, ks, bad = 0, badsha = 0;
	int		 rc = 0;

	srand(2202);
	for (n = 0; n < sizeof(msg); n++)
		msg[n] = (unsigned char)rand();
	for (n = 0; n < sizeof(key); n++)
		key[n] = (unsigned char)rand();
	for (n = 0; n <= sizeof(msg); n++) {
		rc |= crypto_sha1(msg, n, a);
		SHA1(msg, n, b);
		badsha += memcmp(a, b, 20) != 0;
		ks = (n * 7) % (sizeof(key) + 1);
		split3(pc, msg, n);
		rc |= crypto_hmac_sha1(key, ks, pc, 3, a);
		HMAC(EVP_sha1(), key, (int)ks, msg, n, b, &blen);
		bad += blen != 20 || memcmp(a, b, 20) != 0;
	}
	CHECK(rc == 0 && badsha == 0, "SHA-1 equals OpenSSL's for every "
	    "length from 0 to 300 bytes (%zu differ)", badsha);
	CHECK(bad == 0, "HMAC-SHA1 equals OpenSSL's for keys of "
	    "0 to 150 bytes over messages of 0 to 300 bytes in three random "
	    "pieces (%zu differ)", bad);
}

static void
test_hmac_rfc4231(void)
{
	unsigned char	 k[131], d[50];
	const char	*s;
	size_t		 i;

	/* RFC 4231 section 4.2, test case 1. */
	memset(k, 0x0b, 20);
	CHECK(hmac_is(k, 20, "Hi There", 8,
	    "b0344c61d8db38535ca8afceaf0bf12b"
	    "881dc200c9833da726e9376c2e32cff7", 32),
	    "HMAC-SHA256 RFC 4231 test case 1");

	/* RFC 4231 section 4.3, test case 2: a key shorter than the hash. */
	s = "what do ya want for nothing?";
	CHECK(hmac_is((const unsigned char *)"Jefe", 4, s, strlen(s),
	    "5bdcc146bf60754e6a042426089575c7"
	    "5a003f089d2739839dec58b964ec3843", 32),
	    "HMAC-SHA256 RFC 4231 test case 2");

	/* RFC 4231 section 4.4, test case 3: 50 bytes of 0xdd. */
	memset(k, 0xaa, 20);
	memset(d, 0xdd, 50);
	CHECK(hmac_is(k, 20, d, 50,
	    "773ea91e36800e46854db8ebd09181a7"
	    "2959098b3ef8c122d9635514ced565fe", 32),
	    "HMAC-SHA256 RFC 4231 test case 3");

	/* RFC 4231 section 4.5, test case 4: key 0x01..0x19. */
	for (i = 0; i < 25; i++)
		k[i] = (unsigned char)(i + 1);
	memset(d, 0xcd, 50);
	CHECK(hmac_is(k, 25, d, 50,
	    "82558a389a443c0ea4cc819899f2083a"
	    "85f0faa3e578f8077a2e3ff46729665b", 32),
	    "HMAC-SHA256 RFC 4231 test case 4");

	/* RFC 4231 section 4.6, test case 5: output truncated to 128 bits. */
	memset(k, 0x0c, 20);
	CHECK(hmac_is(k, 20, "Test With Truncation", 20,
	    "a3b6167473100ee06e0c796c2955552b", 16),
	    "HMAC-SHA256 RFC 4231 test case 5 (first 128 bits)");

	/* RFC 4231 section 4.7, test case 6: key longer than a block. */
	memset(k, 0xaa, 131);
	s = "Test Using Larger Than Block-Size Key - Hash Key First";
	CHECK(hmac_is(k, 131, s, strlen(s),
	    "60e431591ee0b67f0d8a26aacbf5b77f"
	    "8e0bc6213728c5140546040f0ee37f54", 32),
	    "HMAC-SHA256 RFC 4231 test case 6");

	/* RFC 4231 section 4.8, test case 7: key and data over a block. */
	s = "This is a test using a larger than block-size key and a "
	    "larger than block-size data. The key needs to be hashed "
	    "before being used by the HMAC algorithm.";
	CHECK(hmac_is(k, 131, s, strlen(s),
	    "9b09ffa71b942fcb27635fbcd5b0e944"
	    "bfdc63644f0713938a7f51535c3a35e2", 32),
	    "HMAC-SHA256 RFC 4231 test case 7");
}

static void
test_hmac_pieces(void)
{
	static const char	 msg[] = "This is a test using a larger than "
	    "block-size key and a larger than block-size data. The key "
	    "needs to be hashed before being used by the HMAC algorithm.";
	struct crypto_piece	 pc[4];
	unsigned char		 k[131];
	unsigned char		 whole[CRYPTO_SHA256_LEN];
	unsigned char		 split[CRYPTO_SHA256_LEN];
	unsigned char		 exp[CRYPTO_SHA256_LEN];
	size_t			 len = sizeof(msg) - 1;
	int			 rc;

	memset(k, 0xaa, sizeof(k));
	pc[0].p = msg;
	pc[0].sz = len;
	rc = crypto_hmac_sha256(k, sizeof(k), pc, 1, whole);
	CHECK(rc == 0, "HMAC over one piece succeeds");

	/* Three uneven pieces with an empty one in the middle. */
	pc[0].p = msg;
	pc[0].sz = 7;
	pc[1].p = "";
	pc[1].sz = 0;
	pc[2].p = msg + 7;
	pc[2].sz = 90;
	pc[3].p = msg + 97;
	pc[3].sz = len - 97;
	memset(split, 0, sizeof(split));
	rc = crypto_hmac_sha256(k, sizeof(k), pc, 4, split);
	CHECK(rc == 0 && memcmp(whole, split, sizeof(whole)) == 0,
	    "HMAC over split pieces equals HMAC over the concatenation");

	/* One byte per piece would also be a concatenation: a split at 1. */
	pc[0].sz = 1;
	pc[1].p = msg + 1;
	pc[1].sz = len - 1;
	rc = crypto_hmac_sha256(k, sizeof(k), pc, 2, split);
	CHECK(rc == 0 && memcmp(whole, split, sizeof(whole)) == 0,
	    "HMAC over a 1-byte first piece equals the concatenation");

	/* Moving a byte across the boundary is not the same message. */
	pc[0].p = msg;
	pc[0].sz = 7;
	pc[1].p = msg + 8;
	pc[1].sz = len - 8;
	rc = crypto_hmac_sha256(k, sizeof(k), pc, 2, split);
	CHECK(rc == 0 && memcmp(whole, split, sizeof(whole)) != 0,
	    "HMAC over pieces missing a byte differs");

	/*
	 * HMAC-SHA256 with an empty key and no data, computed at authoring
	 * time with python3: hmac.new(b"", b"", hashlib.sha256).
	 */
	expect_bytes("b613679a0814d9ec772f95d778c35fc5"
	    "ff1697c493715653c6c712144292c5ad", exp, sizeof(exp));
	rc = crypto_hmac_sha256("", 0, NULL, 0, split);
	CHECK(rc == 0 && memcmp(split, exp, sizeof(exp)) == 0,
	    "HMAC with an empty key over zero pieces");

	/*
	 * GitHub's documented example: secret "It's a Secret to
	 * Everybody", payload "Hello, World!" (also checked with
	 * openssl dgst -sha256 -hmac).
	 */
	expect_bytes("757107ea0eb2509fc211221cce984b8a"
	    "37570b6d7586c22c46f4379c8b043e17", exp, sizeof(exp));
	pc[0].p = "Hello, ";
	pc[0].sz = 7;
	pc[1].p = "World!";
	pc[1].sz = 6;
	rc = crypto_hmac_sha256("It's a Secret to Everybody", 26, pc, 2,
	    split);
	CHECK(rc == 0 && memcmp(split, exp, sizeof(exp)) == 0,
	    "HMAC of GitHub's documented example over two pieces");
}

static void
test_sha256(void)
{
	static const char	 two[] =
	    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	unsigned char		 got[CRYPTO_SHA256_LEN];
	unsigned char		 exp[CRYPTO_SHA256_LEN];
	int			 rc;

	/* FIPS 180-2 appendix B.1: one block, "abc". */
	expect_bytes("ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad", exp, sizeof(exp));
	rc = crypto_sha256("abc", 3, got);
	CHECK(rc == 0 && memcmp(got, exp, sizeof(exp)) == 0,
	    "SHA-256(\"abc\") per FIPS 180-2 B.1");

	/* FIPS 180-2 appendix B.2: two blocks. */
	expect_bytes("248d6a61d20638b8e5c026930c3e6039"
	    "a33ce45964ff2167f6ecedd419db06c1", exp, sizeof(exp));
	rc = crypto_sha256(two, sizeof(two) - 1, got);
	CHECK(rc == 0 && memcmp(got, exp, sizeof(exp)) == 0,
	    "SHA-256 of the 448-bit message per FIPS 180-2 B.2");

	/* The empty message (FIPS 180-4 examples; sha256sum </dev/null). */
	expect_bytes("e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855", exp, sizeof(exp));
	rc = crypto_sha256("", 0, got);
	CHECK(rc == 0 && memcmp(got, exp, sizeof(exp)) == 0,
	    "SHA-256 of the empty message");
}

static void
test_hex(void)
{
	unsigned char	 all[256], back[256], small[3];
	char		 text[2 * 256 + 1];
	size_t		 i;
	long		 n;

	for (i = 0; i < sizeof(all); i++)
		all[i] = (unsigned char)i;
	crypto_hex(all, sizeof(all), text);
	CHECK(strlen(text) == 512 && strncmp(text, "000102", 6) == 0 &&
	    strcmp(text + 506, "fdfeff") == 0,
	    "crypto_hex writes lowercase digits and a NUL");
	CHECK(strspn(text, "0123456789abcdef") == 512,
	    "crypto_hex uses only lowercase hex digits");

	memset(back, 0, sizeof(back));
	n = crypto_unhex(text, strlen(text), back, sizeof(back));
	CHECK(n == 256 && memcmp(all, back, sizeof(all)) == 0,
	    "hex round trip of every byte value");

	n = crypto_unhex("DEADbeef", 8, back, sizeof(back));
	CHECK(n == 4 && back[0] == 0xde && back[1] == 0xad &&
	    back[2] == 0xbe && back[3] == 0xef,
	    "crypto_unhex accepts either case");

	crypto_hex(all, 0, text);
	CHECK(text[0] == '\0', "crypto_hex of nothing is the empty string");
	CHECK(crypto_unhex("", 0, back, sizeof(back)) == 0,
	    "crypto_unhex of the empty string is 0 bytes");

	CHECK(crypto_unhex("abc", 3, back, sizeof(back)) == -1,
	    "crypto_unhex rejects an odd length");
	CHECK(crypto_unhex("0g", 2, back, sizeof(back)) == -1,
	    "crypto_unhex rejects a non-hex digit (g)");
	CHECK(crypto_unhex("zz00", 4, back, sizeof(back)) == -1,
	    "crypto_unhex rejects a non-hex first digit");
	CHECK(crypto_unhex("00 1", 4, back, sizeof(back)) == -1,
	    "crypto_unhex rejects white space");
	CHECK(crypto_unhex("0x00", 4, back, sizeof(back)) == -1,
	    "crypto_unhex rejects a 0x prefix");
	CHECK(crypto_unhex("00112233", 8, small, sizeof(small)) == -1,
	    "crypto_unhex rejects output that does not fit");
	CHECK(crypto_unhex("001122", 6, small, sizeof(small)) == 3,
	    "crypto_unhex fills an output of exactly the right size");
	/* slen counts: a longer string is read only up to slen. */
	CHECK(crypto_unhex("0011zz", 4, small, sizeof(small)) == 2,
	    "crypto_unhex reads only slen characters");
}

static void
test_base64(void)
{
	/* RFC 4648 section 10, test vectors. */
	static const struct {
		const char	*plain;
		const char	*enc;
	} v[] = {
		{ "", "" },
		{ "f", "Zg==" },
		{ "fo", "Zm8=" },
		{ "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" },
		{ "foobar", "Zm9vYmFy" },
	};
	unsigned char	 out[64], bin[3] = { 0xfb, 0xff, 0xbf };
	char		 text[64];
	size_t		 i, plen;
	long		 n;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		plen = strlen(v[i].plain);
		memset(text, 'X', sizeof(text));
		n = crypto_base64((const unsigned char *)v[i].plain, plen,
		    text, sizeof(text));
		CHECK(n == (long)strlen(v[i].enc) &&
		    strcmp(text, v[i].enc) == 0,
		    "base64 of \"%s\" is \"%s\" (RFC 4648 section 10)",
		    v[i].plain, v[i].enc);
		memset(out, 0, sizeof(out));
		n = crypto_unbase64(v[i].enc, strlen(v[i].enc), out,
		    sizeof(out));
		CHECK(n == (long)plen && memcmp(out, v[i].plain, plen) == 0,
		    "unbase64 of \"%s\" is \"%s\" (RFC 4648 section 10)",
		    v[i].enc, v[i].plain);
	}

	/* The same vectors without padding. */
	n = crypto_unbase64("Zg", 2, out, sizeof(out));
	CHECK(n == 1 && out[0] == 'f', "unbase64 accepts unpadded \"Zg\"");
	n = crypto_unbase64("Zm9vYmE", 7, out, sizeof(out));
	CHECK(n == 5 && memcmp(out, "fooba", 5) == 0,
	    "unbase64 accepts unpadded \"Zm9vYmE\"");

	/* The characters 62 and 63 of the standard alphabet. */
	n = crypto_base64(bin, sizeof(bin), text, sizeof(text));
	CHECK(n == 4 && strcmp(text, "+/+/") == 0,
	    "base64 uses + and / for 62 and 63");
	n = crypto_unbase64("+/+/", 4, out, sizeof(out));
	CHECK(n == 3 && memcmp(out, bin, 3) == 0,
	    "unbase64 decodes + and /");

	CHECK(crypto_unbase64("Zm9v!", 5, out, sizeof(out)) == -1,
	    "unbase64 rejects a bad character");
	CHECK(crypto_unbase64("-_-_", 4, out, sizeof(out)) == -1,
	    "unbase64 rejects the URL-safe alphabet");
	CHECK(crypto_unbase64("Zm9v Zm9v", 9, out, sizeof(out)) == -1,
	    "unbase64 rejects white space");
	CHECK(crypto_unbase64("Zg==Zg==", 8, out, sizeof(out)) == -1,
	    "unbase64 rejects padding in the middle");
	CHECK(crypto_unbase64("Zm9vY", 5, out, sizeof(out)) == -1,
	    "unbase64 rejects a length of 1 mod 4");
	CHECK(crypto_unbase64("Z", 1, out, sizeof(out)) == -1,
	    "unbase64 rejects a single character");
	/* 'A' carries six zero bits: only the length can refuse these. */
	CHECK(crypto_unbase64("A", 1, out, sizeof(out)) == -1,
	    "unbase64 rejects a single zero-valued character");
	CHECK(crypto_unbase64("Zm9vA", 5, out, sizeof(out)) == -1,
	    "unbase64 rejects 1 mod 4 even with zero trailing bits");
	CHECK(crypto_unbase64("Zm9v===", 7, out, sizeof(out)) == -1,
	    "unbase64 rejects three padding characters");
	/* "Zh==": 'h' leaves the bits 0001 after the byte 'f'. */
	CHECK(crypto_unbase64("Zh==", 4, out, sizeof(out)) == -1,
	    "unbase64 rejects non-zero trailing bits (Zh==)");
	CHECK(crypto_unbase64("Zm9=", 4, out, sizeof(out)) == -1,
	    "unbase64 rejects non-zero trailing bits (Zm9=)");
	CHECK(crypto_unbase64("Zh", 2, out, sizeof(out)) == -1,
	    "unbase64 rejects non-zero trailing bits unpadded (Zh)");
	CHECK(crypto_unbase64("Zm9vYmFy", 8, out, 5) == -1,
	    "unbase64 rejects output that does not fit");
	CHECK(crypto_unbase64("Zm9vYmFy", 8, out, 6) == 6,
	    "unbase64 fills an output of exactly the right size");
	CHECK(crypto_base64((const unsigned char *)"foobar", 6, text, 8) ==
	    -1, "base64 rejects an output without room for the NUL");
	CHECK(crypto_base64((const unsigned char *)"foobar", 6, text, 9) ==
	    8 && strcmp(text, "Zm9vYmFy") == 0,
	    "base64 fills an output of exactly the right size");
}

static void
test_equal(void)
{
	unsigned char	 a[32], b[32];

	memset(a, 0x5a, sizeof(a));
	memset(b, 0x5a, sizeof(b));
	CHECK(crypto_equal(a, b, sizeof(a)) == 1,
	    "crypto_equal: equal buffers");
	b[31] ^= 0x01;
	CHECK(crypto_equal(a, b, sizeof(a)) == 0,
	    "crypto_equal: last bit differs");
	b[31] = a[31];
	b[0] ^= 0x80;
	CHECK(crypto_equal(a, b, sizeof(a)) == 0,
	    "crypto_equal: first bit differs");
	CHECK(crypto_equal(a, b + 1, 0) == 1,
	    "crypto_equal: zero bytes are equal");
	CHECK(crypto_equal(a, b, 31) == 0 && crypto_equal(a + 1, b + 1, 31),
	    "crypto_equal compares exactly n bytes");
}

static void
test_wipe(void)
{
	unsigned char	 buf[16];
	size_t		 i;
	int		 zero = 1;

	memset(buf, 0xff, sizeof(buf));
	crypto_wipe(buf, sizeof(buf));
	for (i = 0; i < sizeof(buf); i++)
		zero &= buf[i] == 0;
	CHECK(zero, "crypto_wipe zeroes the buffer");
	crypto_wipe(NULL, 10);
	CHECK(1, "crypto_wipe accepts NULL");
}

/*
 * oncehook's SHA-256, HMAC and base64 are its own (lib/sha256.h): real
 * OpenSSL is the reference here, on every length around the block and
 * padding boundaries, random bytes, random keys (short, a block, longer
 * than a block) and messages split into random pieces.
 */
static void
test_against_openssl(const char *rounds)
{
	unsigned char	 msg[700], key[150], a[32], b[32];
	char		 e1[1000], e2[1000];
	struct crypto_piece pc[3];
	unsigned int	 blen;
	size_t		 n, ks, bad = 0, badmac = 0, bad64 = 0;
	long		 l1;
	int		 rc = 0;

	srand(4231);
	for (n = 0; n < sizeof(msg); n++)
		msg[n] = (unsigned char)rand();
	for (n = 0; n < sizeof(key); n++)
		key[n] = (unsigned char)rand();
	for (n = 0; n <= sizeof(msg); n++) {
		rc |= crypto_sha256(msg, n, a);
		SHA256(msg, n, b);
		bad += memcmp(a, b, 32) != 0;
		ks = (n * 7) % (sizeof(key) + 1);
		split3(pc, msg, n);
		rc |= crypto_hmac_sha256(key, ks, pc, 3, a);
		HMAC(EVP_sha256(), key, (int)ks, msg, n, b, &blen);
		badmac += blen != 32 || memcmp(a, b, 32) != 0;
		if (n <= 600) {
			l1 = crypto_base64(msg, n, e1, sizeof(e1));
			EVP_EncodeBlock((unsigned char *)e2, msg, (int)n);
			bad64 += l1 < 0 || strcmp(e1, e2) != 0;
		}
	}
	CHECK(rc == 0 && bad == 0, "%s: SHA-256 equals OpenSSL's for every "
	    "length from 0 to 700 bytes (%zu differ)", rounds, bad);
	CHECK(badmac == 0, "%s: HMAC-SHA256 equals OpenSSL's for keys of 0 "
	    "to 150 bytes over 701 messages in three random pieces (%zu "
	    "differ)", rounds, badmac);
	CHECK(bad64 == 0, "base64 equals OpenSSL's for 0 to 600 bytes (%zu "
	    "differ)", bad64);
}

/* FIPS 180-2 appendix B.3: a million "a", in uneven updates. */
static void
test_sha256_million(void)
{
	struct sha256	 s;
	unsigned char	 chunk[1000], got[32], exp[32];
	size_t		 done = 0, step = 1;

	memset(chunk, 'a', sizeof(chunk));
	sha256_init(&s);
	while (done < 1000000) {
		if (step > 1000000 - done)
			step = 1000000 - done;
		sha256_update(&s, chunk, step);
		done += step;
		step = step % 987 + 13;	/* at most 999 */
	}
	sha256_final(&s, got);
	expect_bytes("cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0", exp, sizeof(exp));
	CHECK(memcmp(got, exp, sizeof(exp)) == 0,
	    "SHA-256 of a million \"a\" in uneven pieces per FIPS 180-2 B.3");
}

/* PayPal's body check: the CRC-32 "check" value of "123456789". */
static void
test_crc32(void)
{
	CHECK(crypto_crc32("123456789", 9) == 0xcbf43926UL,
	    "crc32 of \"123456789\" is 0xcbf43926 (the CRC catalogue's "
	    "check value)");
	CHECK(crypto_crc32("", 0) == 0, "crc32 of nothing is 0");
}

/* lib/utc.c against libc's timegm() and gmtime_r() over 1901-2399. */
static void
test_utc(void)
{
	struct tm	 tm;
	char		 want[32], got[UTC_ISO_LEN + 1];
	long long	 t, back;
	time_t		 tt;
	int		 ok = 1, n = 0;

	for (t = -2147483648LL; t < 13569465600LL; t += 86400LL * 37 + 3607) {
		tt = (time_t)t;
		gmtime_r(&tt, &tm);
		strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%SZ", &tm);
		utc_format_iso(t, got);
		if (strcmp(want, got) != 0 || utc_parse_iso(got, &back) != 19 ||
		    back != t || utc_seconds(tm.tm_year + 1900, tm.tm_mon + 1,
		    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec) != t)
			ok = 0;
		n++;
	}
	CHECK(ok && n > 1000, "utc: %d times from 1901 to 2399 formatted, "
	    "parsed and computed as libc's gmtime_r() and timegm()", n);
	CHECK(utc_parse_iso("2017-03-30T20:04:05Z", &t) == 19 &&
	    t == 1490904245LL, "utc: PayPal's 2017-03-30T20:04:05Z is "
	    "1490904245");
	CHECK(utc_parse_iso("2017-3-30T20:04:05Z", &t) == -1 &&
	    utc_parse_iso("2017-03-30 20:04:05Z", &t) == -1 &&
	    utc_parse_iso("2017-13-30T20:04:05Z", &t) == -1 &&
	    utc_parse_iso("2017-03-30T24:04:05Z", &t) == -1 &&
	    utc_parse_iso("2017-03-30T-1:04:05Z", &t) == -1 &&
	    utc_parse_iso("2017-03-30T20:04", &t) == -1,
	    "utc: a date not in that form refused");
}

int
main(void)
{
	int	 native;

	/* Both ways of running the rounds, where the processor has both. */
	native = sha256_portable(1);
	test_against_openssl("plain C rounds");
	test_sha256_million();
	test_hmac_rfc4231();
	sha256_portable(0);
	if (native) {
		test_against_openssl("the processor's SHA instructions");
		test_sha256_million();
	} else
		printf("# no SHA instructions here: the plain C rounds only\n");
	test_hmac_rfc4231();
	test_hmac_pieces();
	test_sha256();
	test_sha1();
	test_sha1_against_openssl();
	test_hex();
	test_base64();
	test_equal();
	test_wipe();
	test_crc32();
	test_utc();
	return tap_done();
}
