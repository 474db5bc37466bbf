/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: public-key signatures (src/lib/pubkey.c), the room
 * that opens libcrypto.
 *
 * Ed25519 against RFC 8032 section 7.1 (tests 1 and 2): their keys,
 * messages and signatures, and what pubkey_verify() must refuse (the
 * other key, another message, a cut signature, S + L).  ECDSA P-256
 * against SendGrid's two published samples (sendgrid-nodejs
 * eventwebhook.spec.js: key, timestamp, payload and signature), whose S
 * are both high: their twins n - S are accepted too, a BER or raw r||s
 * encoding is not.  Keys of the wrong kind or curve, and a P-256 point
 * off the curve, are refused.  The values derived from these were
 * computed with Python's cryptography package (S + L, n - S, a P-384
 * and a secp256k1 key, a throwaway P-256 private key).
 *
 * pubkey_chain() is checked against certificates made here, at test
 * time, with libcrypto (linked to this test as the reference, as in
 * t_crypto), in a temporary directory: a CA, an intermediate, leaves
 * for a name; the chain, the wrong CA, the wrong name, the clock before
 * and after the validity, keys too weak or of another kind.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/dsa.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "lib/crypto.h"
#include "lib/pubkey.h"
#include "tap.h"

/* Hex text into out (outsz bytes), independently of crypto_unhex(). */
static size_t
hexb(const char *s, unsigned char *out, size_t outsz)
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

/* RFC 8032 section 7.1, TEST 1 (empty message) and TEST 2. */
#define ED1_SEED	"9d61b19deffd5a60ba844af492ec2cc4" \
			"4449c5697b326919703bac031cae7f60"
#define ED1_PUB		"d75a980182b10ab7d54bfed3c964073a" \
			"0ee172f3daa62325af021a68f707511a"
#define ED1_SIG		"e5564300c360ac729086e2cc806e828a" \
			"84877f1eb8e5d974d873e06522490155" \
			"5fb8821590a33bacc61e39701cf9b46b" \
			"d25bf5f0595bbe24655141438e7a100b"
/* ED1_SIG with L added to its S: the same point, S out of range. */
#define ED1_SIG_SL	"e5564300c360ac729086e2cc806e828a" \
			"84877f1eb8e5d974d873e06522490155" \
			"4c8c7872aa064e049dbb3013fbf29380" \
			"d25bf5f0595bbe24655141438e7a101b"
#define ED2_SEED	"4ccd089b28ff96da9db6c346ec114e0f" \
			"5b8a319f35aba624da8cf6ed4fb8a6fb"
#define ED2_PUB		"3d4017c3e843895a92b70aa74d1b7ebc" \
			"9c982ccf2ec4968cc0cd55f12af4660c"
#define ED2_MSG		"\x72"
#define ED2_SIG		"92a009a9f0d4cab8720e820b5f642540" \
			"a2b27b5416503f8fb3762223ebdb69da" \
			"085ac1e43e15996e458f3613d0f11d8c" \
			"387b2eaeb4302aeeb00d291612bb0c00"
/* y = 2: no x makes it a point of edwards25519 (Python's arithmetic). */
#define ED_NOPOINT	"02000000000000000000000000000000" \
			"00000000000000000000000000000000"
/* y = p + 1 = 2^255 - 18, little-endian: not below p. */
#define ED_P_PLUS_1	"eeffffffffffffffffffffffffffffff" \
			"ffffffffffffffffffffffffffffff7f"
/* y = 1: the neutral point (x = 0), and with x's sign bit set. */
#define ED_ONE		"01000000000000000000000000000000" \
			"00000000000000000000000000000000"
#define ED_ONE_NEG	"01000000000000000000000000000000" \
			"00000000000000000000000000000080"
/* RFC 8032's key 1 with the top bit flipped: -x, a point too. */
#define ED1_PUB_NEG	"d75a980182b10ab7d54bfed3c964073a" \
			"0ee172f3daa62325af021a68f707519a"
/* RFC 8032's key 1 as PKCS#8 PEM. */
static const char	ed1_pem[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n"
    "-----END PRIVATE KEY-----\n";

/* Private keys encrypted with the passphrase "x" (openssl genpkey
 * -aes256; openssl ec -aes256). */
static const char	ed_enc_pem[] =
    "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
    "MIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhTTD13S7F6MQICCAAw\n"
    "DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEAqazwG7dq1rv7XMS5OCn4kEQGDK\n"
    "2ovaMB/n+ZgOwkaxr521JgPebQdEb+SIbHcVFv9GRlthEU9SpFUvHefiLpLEXkOw\n"
    "p+KcdSp3JBbr+OE0QaM=\n"
    "-----END ENCRYPTED PRIVATE KEY-----\n";
static const char	p256_enc_pem[] =
    "-----BEGIN EC PRIVATE KEY-----\n"
    "Proc-Type: 4,ENCRYPTED\n"
    "DEK-Info: AES-256-CBC,56033E3C051484C421C78C6328DBE739\n"
    "\n"
    "NptALQdHcxq8X1IrtEE++XQzSNtx3iprbtXp0Yg7ylku2Ln9kRrOupv+5atpU9zI\n"
    "heKW8yYJYZaaAT8oLjaJp6zqvfqgYefpe1bFJSzI5rrfXBCoGRncmcPOXlQbtBSi\n"
    "KiCT04DI7x1/niBOF8FK59BVnK0RLE3xSzLpkeDqGuU=\n"
    "-----END EC PRIVATE KEY-----\n";

/* SendGrid's first sample: key (SPKI), signed timestamp, payload. */
#define SG_KEY		"3059301306072a8648ce3d020106082a" \
			"8648ce3d03010703420004f374f83bf9" \
			"fce22a2d22f216e26741810ffb7407d2" \
			"9a9a8833c905f663757e5a55292dc646" \
			"a7bada0c3ed9f34d45a20d5ef5698a09" \
			"5223c78d11ceb0100dc5fa"
#define SG_TS		"1600112502"
#define SG_BODY		"[{\"email\":\"hello@world.com\",\"event\":\"dropped\"," \
	"\"reason\":\"Bounced Address\",\"sg_event_id\":\"ZHJvcC0xMDk5NDkxOS1" \
	"MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA\",\"sg_message_id\":\"LRzXl_NHStOG" \
	"hQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0\"," \
	"\"smtp-id\":\"<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid." \
	"net>\",\"timestamp\":1600112492}]\r\n"
#define SG_SIG		"3045022061d056d1a3f98dcb906f5f2d" \
			"cc5fdea7c8d74432b200d698c3959b11" \
			"b4bba654022100c818970d6cccfae39e" \
			"e56d09b86fa5b9001b3c8a8787cf4cd7" \
			"94e5b8bb4466d3"
/* Its twin (r, n - S): low S. */
#define SG_SIG_LOW	"3044022061d056d1a3f98dcb906f5f2d" \
			"cc5fdea7c8d74432b200d698c3959b11" \
			"b4bba654022037e768f19333051d611a" \
			"92f647905a46bccbbe231f8fcf381c24" \
			"e50a411ebe7e"
/* The same r and S: BER's long length form, and raw r || S. */
#define SG_SIG_BER	"308145022061d056d1a3f98dcb906f5f" \
			"2dcc5fdea7c8d74432b200d698c3959b" \
			"11b4bba654022100c818970d6cccfae3" \
			"9ee56d09b86fa5b9001b3c8a8787cf4c" \
			"d794e5b8bb4466d3"
#define SG_SIG_RAW	"61d056d1a3f98dcb906f5f2dcc5fdea7" \
			"c8d74432b200d698c3959b11b4bba654" \
			"c818970d6cccfae39ee56d09b86fa5b9" \
			"001b3c8a8787cf4cd794e5b8bb4466d3"
/* SendGrid's second sample's key (its signature is t_sig's). */
#define SG2_KEY		"3059301306072a8648ce3d020106082a" \
			"8648ce3d030107034200044382c816d5" \
			"b3b65b05eec905a8e9dc8c3d65ba7e07" \
			"e70f173a1c8e02b1d6f51708c7f15f13" \
			"3c7a722902ff23df52fc1a5ff252704e" \
			"c573d0890f669f43d3a4dd"
/* Keys of other curves. */
#define P384_KEY	"3076301006072a8648ce3d020106052b" \
			"8104002203620004411f91e1a1726d2a" \
			"e3572923f45891b58f1aa9495b69bb78" \
			"76c37fce2c2ae5eb29013ad3007cbfc0" \
			"e36e2cfde7313ab079e030e22176e867" \
			"e08fda7a66518924e68c9cb7c1b92c61" \
			"a8a9e4926bcef5bb7aa43d15556127d6" \
			"fe2aee88f97ae864"
#define K256_KEY	"3056301006072a8648ce3d020106052b" \
			"8104000a03420004e92e68c09559e1c4" \
			"15dd13743fcd0bc48ee9296813e8d445" \
			"937aa5299a5b53b66adf27edfc04317a" \
			"a9544eef3f492fcac019fe3b3da9cc6e" \
			"77771bd244c75b2d"
/* RFC 8032's key 1 as an SPKI. */
#define ED1_SPKI	"302a300506032b6570032100" ED1_PUB
/* A throwaway P-256 key, PKCS#8 and SEC 1, and its public SPKI. */
static const char	p256_pem[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQggNPRbZ2UnVIwW15i\n"
    "VtmKVXt0BuyquI5b0dnlXUnTBtihRANCAATIXwNJgAiBg5n93YD4uMuXfYksyUQx\n"
    "Rvk4xHvWSoCse2JTnvVsda/48Wdz26LSTxyV4PuovXdnwVQT4MdA80Ok\n"
    "-----END PRIVATE KEY-----\n";
static const char	p256_sec1[] =
    "-----BEGIN EC PRIVATE KEY-----\n"
    "MHcCAQEEIIDT0W2dlJ1SMFteYlbZilV7dAbsqriOW9HZ5V1J0wbYoAoGCCqGSM49\n"
    "AwEHoUQDQgAEyF8DSYAIgYOZ/d2A+LjLl32JLMlEMUb5OMR71kqArHtiU571bHWv\n"
    "+PFnc9ui0k8cleD7qL13Z8FUE+DHQPNDpA==\n"
    "-----END EC PRIVATE KEY-----\n";
#define P256_SPKI	"3059301306072a8648ce3d020106082a" \
			"8648ce3d03010703420004c85f034980" \
			"08818399fddd80f8b8cb977d892cc944" \
			"3146f938c47bd64a80ac7b62539ef56c" \
			"75aff8f16773dba2d24f1c95e0fba8bd" \
			"7767c15413e0c740f343a4"

/* pubkey_verify() of one message (hex key and signature). */
static int
verify1(enum pubkey_kind kind, const char *keyhex, const char *msg,
    size_t msgsz, const char *sighex)
{
	unsigned char		 key[256], sig[256];
	struct crypto_piece	 piece = { msg, msgsz };
	char			 why[256];
	size_t			 ksz = hexb(keyhex, key, sizeof(key));
	size_t			 ssz = hexb(sighex, sig, sizeof(sig));

	return pubkey_verify(kind, key, ksz, &piece, 1, sig, ssz, why,
	    sizeof(why));
}

/* SendGrid's first sample (timestamp, payload) under key, sig. */
static int
verify_sg(const char *keyhex, const char *body, const char *sighex)
{
	unsigned char		 key[256], sig[256];
	struct crypto_piece	 p[2] = {
		{ SG_TS, sizeof(SG_TS) - 1 }, { body, strlen(body) },
	};
	char			 why[256];
	size_t			 ksz = hexb(keyhex, key, sizeof(key));
	size_t			 ssz = hexb(sighex, sig, sizeof(sig));

	return pubkey_verify(PUBKEY_P256, key, ksz, p, 2, sig, ssz, why,
	    sizeof(why));
}

/* pubkey_check() of a hex key: its answer, the reason in why. */
static int
check(enum pubkey_kind kind, const char *keyhex, char *why, size_t whysz)
{
	unsigned char	 key[256];
	size_t		 ksz = hexb(keyhex, key, sizeof(key));

	why[0] = '\0';
	return pubkey_check(kind, key, ksz, why, whysz);
}

static void
test_ed25519(void)
{
	unsigned char		 key[32], sig[64];
	struct crypto_piece	 none = { "", 0 }, split[3] = {
		{ "", 0 }, { ED2_MSG, 1 }, { "", 0 },
	};
	char			 why[256];
	int			 rc;

	CHECK(verify1(PUBKEY_ED25519, ED1_PUB, "", 0, ED1_SIG) == 1,
	    "ed25519: RFC 8032 test 1 verifies");
	CHECK(verify1(PUBKEY_ED25519, ED2_PUB, ED2_MSG, 1, ED2_SIG) == 1,
	    "ed25519: RFC 8032 test 2 verifies");
	hexb(ED2_PUB, key, sizeof(key));
	hexb(ED2_SIG, sig, sizeof(sig));
	CHECK(pubkey_verify(PUBKEY_ED25519, key, 32, split, 3, sig, 64, why,
	    sizeof(why)) == 1, "ed25519: the message in pieces, some empty");
	CHECK(pubkey_verify(PUBKEY_ED25519, key, 32, &none, 0, sig, 64, why,
	    sizeof(why)) == 0, "ed25519: no pieces is the empty message");
	CHECK(verify1(PUBKEY_ED25519, ED2_PUB, "", 0, ED1_SIG) == 0,
	    "ed25519: the other key's signature: no match");
	CHECK(verify1(PUBKEY_ED25519, ED2_PUB, "\x73", 1, ED2_SIG) == 0,
	    "ed25519: another message: no match");
	CHECK(verify1(PUBKEY_ED25519, ED2_PUB, ED2_MSG, 1,
	    "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
	    "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c")
	    == 0, "ed25519: the signature cut by a byte: no match");
	CHECK(verify1(PUBKEY_ED25519, ED2_PUB, ED2_MSG, 1, ED2_SIG "00") == 0,
	    "ed25519: a byte after the signature: no match");
	CHECK(verify1(PUBKEY_ED25519, ED1_PUB, "", 0, ED1_SIG_SL) == 0,
	    "ed25519: S + L (malleated) refused");
	CHECK(verify1(PUBKEY_ED25519, ED1_PUB, "", 0, "") == 0,
	    "ed25519: an empty signature: no match");

	/* The key itself. */
	CHECK(check(PUBKEY_ED25519, ED1_PUB, why, sizeof(why)) == 0,
	    "ed25519: RFC 8032 key 1 is a key");
	CHECK(check(PUBKEY_ED25519, ED1_SPKI, why, sizeof(why)) == -1 &&
	    strstr(why, "Ed25519") != NULL,
	    "ed25519: an SPKI is not the raw key pubkey takes (%s)", why);
	CHECK(check(PUBKEY_ED25519, "d75a98", why, sizeof(why)) == -1,
	    "ed25519: 3 bytes are no key");
	why[0] = '\0';
	rc = verify1(PUBKEY_ED25519, "d75a98", "", 0, ED1_SIG);
	CHECK(rc == -1, "ed25519: verify with no key says it cannot tell");
	/*
	 * A y with no x: libcrypto takes any 32 bytes as a raw key, and
	 * only its verification finds them no point: the check says so.
	 */
	CHECK(check(PUBKEY_ED25519, ED_NOPOINT, why, sizeof(why)) == -1 &&
	    strstr(why, "no point") != NULL,
	    "ed25519: a y that is no point refused by the check (%s)", why);
	CHECK(verify1(PUBKEY_ED25519, ED_NOPOINT, "", 0, ED1_SIG) == 0,
	    "ed25519: and nothing verifies under it");
	CHECK(check(PUBKEY_ED25519, ED_P_PLUS_1, why, sizeof(why)) == -1,
	    "ed25519: y = p + 1 (not below p) refused (%s)", why);
	CHECK(check(PUBKEY_ED25519, ED_ONE, why, sizeof(why)) == 0,
	    "ed25519: y = 1 (the neutral point, x = 0) is a point");
	CHECK(check(PUBKEY_ED25519, ED_ONE_NEG, why, sizeof(why)) == -1,
	    "ed25519: y = 1 with x's sign bit set: no point (RFC 8032)");
	CHECK(check(PUBKEY_ED25519, ED2_PUB, why, sizeof(why)) == 0 &&
	    check(PUBKEY_ED25519, ED1_PUB_NEG, why, sizeof(why)) == 0,
	    "ed25519: key 2, and key 1 with x's sign flipped, are points");
	{
		unsigned char	 k[32];
		int		 i, points = 0;

		/* Of y = 1..64, 42 have an x (Python's arithmetic). */
		for (i = 1; i <= 64; i++) {
			memset(k, 0, sizeof(k));
			k[0] = (unsigned char)i;
			points += pubkey_check(PUBKEY_ED25519, k, 32, why,
			    sizeof(why)) == 0;
		}
		CHECK(points == 42,
		    "ed25519: %d of y = 1..64 are points", points);
	}
}

static void
test_p256(void)
{
	char	 why[256];

	CHECK(verify_sg(SG_KEY, SG_BODY, SG_SIG) == 1,
	    "p256: SendGrid's sample verifies (high S)");
	CHECK(verify_sg(SG_KEY, SG_BODY, SG_SIG_LOW) == 1,
	    "p256: its twin n - S verifies too");
	CHECK(verify_sg(SG2_KEY, SG_BODY, SG_SIG) == 0,
	    "p256: under the other sample's key: no match");
	CHECK(verify_sg(SG_KEY, "[{}]\r\n", SG_SIG) == 0,
	    "p256: another payload: no match");
	{
		char	 cut[] = SG_BODY;

		cut[strlen(cut) - 2] = '\0';
		CHECK(verify_sg(SG_KEY, cut, SG_SIG) == 0,
		    "p256: the payload without its CRLF: no match");
	}
	CHECK(verify_sg(SG_KEY, SG_BODY, "3045022061d056d1a3f98dcb906f5f2d"
	    "cc5fdea7c8d74432b200d698c3959b11b4bba654022100c818970d6cccfae39e"
	    "e56d09b86fa5b9001b3c8a8787cf4cd794e5b8bb4466") == 0,
	    "p256: the DER cut by a byte: no match");
	CHECK(verify_sg(SG_KEY, SG_BODY, SG_SIG "00") == 0,
	    "p256: a byte after the DER: no match");
	CHECK(verify_sg(SG_KEY, SG_BODY, SG_SIG_BER) == 0,
	    "p256: the same r, S in BER (long length): no match");
	CHECK(verify_sg(SG_KEY, SG_BODY, SG_SIG_RAW) == 0,
	    "p256: the same r, S raw (r || S, 64 bytes): no match");
	CHECK(verify_sg(SG_KEY, SG_BODY, "") == 0,
	    "p256: an empty signature: no match");

	CHECK(check(PUBKEY_P256, SG_KEY, why, sizeof(why)) == 0 &&
	    check(PUBKEY_P256, SG2_KEY, why, sizeof(why)) == 0,
	    "p256: SendGrid's two keys are keys");
	CHECK(check(PUBKEY_P256, P384_KEY, why, sizeof(why)) == -1 &&
	    strstr(why, "P-256") != NULL,
	    "p256: a P-384 key refused (%s)", why);
	CHECK(check(PUBKEY_P256, K256_KEY, why, sizeof(why)) == -1 &&
	    strstr(why, "P-256") != NULL,
	    "p256: a secp256k1 key refused (%s)", why);
	CHECK(check(PUBKEY_P256, ED1_SPKI, why, sizeof(why)) == -1,
	    "p256: an Ed25519 SPKI refused (%s)", why);
	CHECK(verify_sg(P384_KEY, SG_BODY, SG_SIG) == -1,
	    "p256: verify under a P-384 key says it cannot tell");
	/* The point (x, y + 1): the SPKI's head is right, the point not. */
	CHECK(check(PUBKEY_P256, "3059301306072a8648ce3d020106082a"
	    "8648ce3d03010703420004f374f83bf9fce22a2d22f216e26741810ffb7407d2"
	    "9a9a8833c905f663757e5a55292dc646a7bada0c3ed9f34d45a20d5ef5698a09"
	    "5223c78d11ceb0100dc5fb", why, sizeof(why)) == -1,
	    "p256: a point off the curve refused (%s)", why);
	CHECK(verify_sg("3059301306072a8648ce3d020106082a"
	    "8648ce3d03010703420004f374f83bf9fce22a2d22f216e26741810ffb7407d2"
	    "9a9a8833c905f663757e5a55292dc646a7bada0c3ed9f34d45a20d5ef5698a09"
	    "5223c78d11ceb0100dc5fb", SG_BODY, SG_SIG) == -1,
	    "p256: verify under it says it cannot tell");
	CHECK(check(PUBKEY_P256, SG_KEY "00", why, sizeof(why)) == -1,
	    "p256: a byte after the SPKI refused");
	CHECK(check(PUBKEY_P256, "3059", why, sizeof(why)) == -1,
	    "p256: a cut SPKI refused");
	CHECK(check(PUBKEY_RSA, SG_KEY, why, sizeof(why)) == -1 &&
	    strstr(why, "RSA") != NULL,
	    "rsa: a P-256 key is not RSA (%s)", why);
}

static void
test_sign(void)
{
	unsigned char		 seed[32], pub[256], sig[PUBKEY_SIG_MAX];
	unsigned char		 want[256];
	struct crypto_piece	 p[2] = { { "1700000000", 10 },
				    { "{\"type\":1}", 10 } };
	char			 why[256];
	long			 n, k;

	hexb(ED2_SEED, seed, sizeof(seed));
	n = pubkey_sign(PUBKEY_ED25519, seed, 32, &(struct crypto_piece){
	    ED2_MSG, 1 }, 1, sig, why, sizeof(why));
	hexb(ED2_SIG, want, sizeof(want));
	CHECK(n == 64 && memcmp(sig, want, 64) == 0,
	    "sign: ed25519 seed 2 gives RFC 8032's signature");
	k = pubkey_public(PUBKEY_ED25519, seed, 32, pub, sizeof(pub), why,
	    sizeof(why));
	hexb(ED2_PUB, want, sizeof(want));
	CHECK(k == 32 && memcmp(pub, want, 32) == 0,
	    "public: ed25519 seed 2 gives RFC 8032's public key");
	n = pubkey_sign(PUBKEY_ED25519, (const unsigned char *)ed1_pem,
	    strlen(ed1_pem), p, 2, sig, why, sizeof(why));
	k = pubkey_public(PUBKEY_ED25519, (const unsigned char *)ed1_pem,
	    strlen(ed1_pem), pub, sizeof(pub), why, sizeof(why));
	CHECK(n == 64 && k == 32 && pubkey_verify(PUBKEY_ED25519, pub, 32,
	    p, 2, sig, 64, why, sizeof(why)) == 1,
	    "sign: ed25519 from PEM, verified under its public half");
	hexb(ED1_PUB, want, sizeof(want));
	CHECK(k == 32 && memcmp(pub, want, 32) == 0,
	    "public: the PEM's public half is RFC 8032's key 1");

	n = pubkey_sign(PUBKEY_P256, (const unsigned char *)p256_pem,
	    strlen(p256_pem), p, 2, sig, why, sizeof(why));
	k = pubkey_public(PUBKEY_P256, (const unsigned char *)p256_pem,
	    strlen(p256_pem), pub, sizeof(pub), why, sizeof(why));
	hexb(P256_SPKI, want, sizeof(want));
	CHECK(k == 91 && memcmp(pub, want, 91) == 0,
	    "public: p256 PKCS#8 gives its SPKI");
	CHECK(n > 0 && pubkey_verify(PUBKEY_P256, pub, (size_t)k, p, 2, sig,
	    (size_t)n, why, sizeof(why)) == 1,
	    "sign: p256 (PKCS#8) round trip");
	p[0].p = "1700000001";
	CHECK(n > 0 && pubkey_verify(PUBKEY_P256, pub, (size_t)k, p, 2, sig,
	    (size_t)n, why, sizeof(why)) == 0,
	    "sign: p256 signature of another message: no match");
	n = pubkey_sign(PUBKEY_P256, (const unsigned char *)p256_sec1,
	    strlen(p256_sec1), p, 2, sig, why, sizeof(why));
	CHECK(n > 0 && pubkey_verify(PUBKEY_P256, pub, (size_t)k, p, 2, sig,
	    (size_t)n, why, sizeof(why)) == 1,
	    "sign: p256 (EC PRIVATE KEY) round trip");

	why[0] = '\0';
	CHECK(pubkey_sign(PUBKEY_ED25519, (const unsigned char *)p256_pem,
	    strlen(p256_pem), p, 2, sig, why, sizeof(why)) == -1 &&
	    strstr(why, "Ed25519") != NULL &&
	    strstr(why, "another kind") != NULL,
	    "sign: a P-256 key for Ed25519 refused (%s)", why);
	why[0] = '\0';
	CHECK(pubkey_sign(PUBKEY_P256, (const unsigned char *)ed1_pem,
	    strlen(ed1_pem), p, 2, sig, why, sizeof(why)) == -1 &&
	    strstr(why, "P-256") != NULL &&
	    strstr(why, "another kind") != NULL,
	    "sign: an Ed25519 key for P-256 refused (%s)", why);
	why[0] = '\0';
	CHECK(pubkey_sign(PUBKEY_ED25519, (const unsigned char *)
	    "-----BEGIN PUBLIC KEY-----\n"
	    "MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n"
	    "-----END PUBLIC KEY-----\n", 113, p, 2, sig, why,
	    sizeof(why)) == -1 && strstr(why, "a public key") != NULL,
	    "sign: a public key given to sign with is named so (%s)", why);
	/* Encrypted (passphrase x): refused as such, no prompt. */
	why[0] = '\0';
	CHECK(pubkey_sign(PUBKEY_ED25519, (const unsigned char *)ed_enc_pem,
	    strlen(ed_enc_pem), p, 2, sig, why, sizeof(why)) == -1 &&
	    strstr(why, "encrypted") != NULL,
	    "sign: an encrypted PKCS#8 key refused, saying so (%s)", why);
	why[0] = '\0';
	CHECK(pubkey_sign(PUBKEY_P256, (const unsigned char *)p256_enc_pem,
	    strlen(p256_enc_pem), p, 2, sig, why, sizeof(why)) == -1 &&
	    strstr(why, "encrypted") != NULL,
	    "sign: an encrypted EC PRIVATE KEY refused, saying so (%s)", why);
	CHECK(pubkey_sign(PUBKEY_P256, seed, 32, p, 2, sig, why,
	    sizeof(why)) == -1, "sign: p256 takes no raw seed");
	CHECK(pubkey_sign(PUBKEY_ED25519, seed, 31, p, 2, sig, why,
	    sizeof(why)) == -1, "sign: a 31-byte seed refused");
	CHECK(pubkey_public(PUBKEY_P256, (const unsigned char *)p256_pem,
	    strlen(p256_pem), pub, 90, why, sizeof(why)) == -1,
	    "public: no room for the SPKI said");
	CHECK(strstr(why, "MIGH") == NULL, "sign: the key is not in why");
}

/* ---- pubkey_chain(), over certificates made here with libcrypto. */

static char	 dir[256];

/* The file dir/name read whole (NUL-terminated); bails. */
static char *
slurp(const char *name, size_t *sz)
{
	char	 path[512], *b;
	FILE	*f;
	long	 n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "rb")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (b = malloc((size_t)n + 1)) == NULL ||
	    fread(b, 1, (size_t)n, f) != (size_t)n)
		BAIL("cannot read %s", path);
	fclose(f);
	b[n] = '\0';
	*sz = (size_t)n;
	return b;
}

/* The concatenation of up to two files, dir/a then dir/b. */
static char *
pems(const char *a, const char *b, size_t *sz)
{
	size_t	 na, nb = 0;
	char	*x = slurp(a, &na), *y = b != NULL ? slurp(b, &nb) : NULL;

	if ((x = realloc(x, na + nb + 1)) == NULL)
		BAIL("out of memory");
	if (y != NULL)
		memcpy(x + na, y, nb + 1);
	free(y);
	*sz = na + nb;
	return x;
}

/*
 * A private key: RSA of alg bits, "leaf" (one RSA key of 2048 bits
 * shared by every leaf that asks, a new reference each: each CA keeps a
 * key of its own), "ec" (P-256), "dsa" (1024: any DSA key is refused).
 * Making keys was most of this program's time under valgrind.
 */
static EVP_PKEY *
mkkey(const char *alg)
{
	static EVP_PKEY	*leaf;
	EVP_PKEY_CTX	*c = NULL;
	EVP_PKEY	*params = NULL, *k = NULL;

	if (strcmp(alg, "leaf") == 0) {
		if (leaf == NULL && (leaf = EVP_RSA_gen(2048)) == NULL)
			BAIL("no leaf key");
		if (EVP_PKEY_up_ref(leaf) != 1)
			BAIL("EVP_PKEY_up_ref");
		return leaf;
	}
	if (strcmp(alg, "ec") == 0)
		k = EVP_EC_gen("P-256");
	else if (strcmp(alg, "dsa") == 0) {
		if ((c = EVP_PKEY_CTX_new_from_name(NULL, "DSA", NULL)) ==
		    NULL || EVP_PKEY_paramgen_init(c) != 1 ||
		    EVP_PKEY_CTX_set_dsa_paramgen_bits(c, 1024) != 1 ||
		    EVP_PKEY_paramgen(c, &params) != 1)
			BAIL("DSA parameters");
		EVP_PKEY_CTX_free(c);
		if ((c = EVP_PKEY_CTX_new_from_pkey(NULL, params, NULL)) ==
		    NULL || EVP_PKEY_keygen_init(c) != 1 ||
		    EVP_PKEY_keygen(c, &k) != 1)
			BAIL("DSA key");
		EVP_PKEY_CTX_free(c);
		EVP_PKEY_free(params);
	} else
		k = EVP_RSA_gen((unsigned)atoi(alg));
	if (k == NULL)
		BAIL("no %s key", alg);
	return k;
}

/* One extension of x, as openssl's configuration writes it. */
static void
ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX	 ctx;
	X509_EXTENSION	*e;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	if ((e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)) == NULL ||
	    X509_add_ext(x, e, -1) != 1)
		BAIL("extension %s", value);
	X509_EXTENSION_free(e);
}

/* A PEM file dir/name.ext of a key or a certificate. */
static FILE *
pemfile(const char *name, const char *ext, const char *mode)
{
	char	 path[512];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext);
	if ((f = fopen(path, mode)) == NULL)
		BAIL("cannot open %s", path);
	return f;
}

/*
 * A key (see mkkey()) in dir/out.key and its certificate in dir/out.pem,
 * for cn with a DNS name san (NULL: none), a CA or not, valid from now
 * for days, signed by the certificate and key of dir/issuer (NULL: by
 * itself), as openssl x509 -req would make them.
 */
static void
mkcert(const char *out, const char *alg, const char *issuer,
    const char *cn, const char *san, int ca, int days)
{
	static long	 serial = 1;
	EVP_PKEY	*k = mkkey(alg), *ik = k;
	X509		*x, *ix;
	X509_NAME	*n;
	FILE		*f;
	char		 dns[256];

	if ((x = X509_new()) == NULL || X509_set_version(x, 2) != 1 ||
	    ASN1_INTEGER_set(X509_get_serialNumber(x), serial++) != 1 ||
	    X509_gmtime_adj(X509_getm_notBefore(x), 0) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), 86400L * days) == NULL ||
	    X509_set_pubkey(x, k) != 1 || (n = X509_get_subject_name(x)) ==
	    NULL || X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	    (const unsigned char *)cn, -1, -1, 0) != 1)
		BAIL("certificate for %s", cn);
	ix = x;
	if (issuer != NULL) {
		f = pemfile(issuer, "pem", "r");
		ix = PEM_read_X509(f, NULL, NULL, NULL);
		fclose(f);
		f = pemfile(issuer, "key", "r");
		ik = PEM_read_PrivateKey(f, NULL, NULL, NULL);
		fclose(f);
		if (ix == NULL || ik == NULL)
			BAIL("issuer %s", issuer);
	}
	if (X509_set_issuer_name(x, X509_get_subject_name(ix)) != 1)
		BAIL("issuer name");
	ext(x, ix, NID_basic_constraints, ca ? "critical,CA:TRUE" :
	    "critical,CA:FALSE");
	ext(x, ix, NID_key_usage, ca ? "critical,keyCertSign,cRLSign" :
	    "critical,digitalSignature");
	ext(x, ix, NID_subject_key_identifier, "hash");
	if (issuer != NULL)
		ext(x, ix, NID_authority_key_identifier, "keyid");
	if (san != NULL) {
		snprintf(dns, sizeof(dns), "DNS:%s", san);
		ext(x, ix, NID_subject_alt_name, dns);
	}
	if (X509_sign(x, ik, EVP_sha256()) <= 0)
		BAIL("signing %s", cn);
	f = pemfile(out, "pem", "w");
	if (PEM_write_X509(f, x) != 1)
		BAIL("writing %s.pem", out);
	fclose(f);
	f = pemfile(out, "key", "w");
	if (PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) != 1)
		BAIL("writing %s.key", out);
	fclose(f);
	if (issuer != NULL) {
		X509_free(ix);
		EVP_PKEY_free(ik);
	}
	X509_free(x);
	EVP_PKEY_free(k);
}

static void
test_chain(void)
{
	unsigned char		 spki[1024], pub[1024], sig[PUBKEY_SIG_MAX];
	struct crypto_piece	 msg = { "transmission|time|id|crc", 24 };
	char			 why[256], path[512], ca[512], other[512];
	char			*pem, *key;
	size_t			 sz, ksz;
	time_t			 now, na = 0;
	long			 n, k, s;
	const char		*tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/t_pubkey.XXXXXX", tmp != NULL &&
	    *tmp != '\0' ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		BAIL("mkdtemp failed");
	/* The CAs sign with P-256 keys (made at once; RSA keys took most of
	 * this program's time under valgrind): the chains are mixed here,
	 * all RSA in tests/paypal.sh, made by openssl. */
	mkcert("ca", "ec", NULL, "Test Root CA", NULL, 1, 3650);
	mkcert("other", "ec", NULL, "Other Root CA", NULL, 1, 3650);
	mkcert("inter", "ec", "ca", "Test Intermediate", NULL, 1, 365);
	mkcert("leaf", "leaf", "inter", "messageverificationcerts.example.com",
	    "messageverificationcerts.example.com", 0, 30);
	mkcert("direct", "leaf", "ca", "direct.example.com",
	    "direct.example.com", 0, 30);
	mkcert("weak", "1024", "ca", "weak.example.com",
	    "weak.example.com", 0, 30);
	mkcert("ecleaf", "ec", "ca", "ec.example.com", "ec.example.com", 0,
	    30);
	mkcert("dsaleaf", "dsa", "ca", "dsa.example.com", "dsa.example.com",
	    0, 30);
	mkcert("wild", "leaf", "ca", "*.example.com", "*.example.com", 0,
	    30);
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	now = time(NULL) + 1;	/* the certificates start a second before */
	snprintf(other, sizeof(other), "%s/other.pem", dir);

	pem = pems("leaf.pem", "inter.pem", &sz);
	n = pubkey_chain(pem, sz, ca, "messageverificationcerts.example.com",
	    now, spki, sizeof(spki), &na, why, sizeof(why));
	CHECK(n > 0, "chain: leaf + intermediate to the CA (%s)",
	    n > 0 ? "ok" : why);
	CHECK(na > now + 29 * 86400 && na < now + 31 * 86400,
	    "chain: the leaf's end of validity (30 days) given");
	key = slurp("leaf.key", &ksz);
	k = pubkey_public(PUBKEY_RSA, (unsigned char *)key, ksz, pub,
	    sizeof(pub), why, sizeof(why));
	CHECK(n > 0 && k == n && memcmp(pub, spki, (size_t)n) == 0,
	    "chain: the key given is the leaf's");
	s = pubkey_sign(PUBKEY_RSA, (unsigned char *)key, ksz, &msg, 1, sig,
	    why, sizeof(why));
	CHECK(s == 256 && pubkey_verify(PUBKEY_RSA, spki, (size_t)n, &msg, 1,
	    sig, (size_t)s, why, sizeof(why)) == 1,
	    "chain: a signature of the leaf's key verifies under it (RSA)");
	sig[10] ^= 1;
	CHECK(s == 256 && pubkey_verify(PUBKEY_RSA, spki, (size_t)n, &msg, 1,
	    sig, (size_t)s, why, sizeof(why)) == 0,
	    "chain: a changed RSA signature: no match");
	free(key);

	CHECK(pubkey_chain(pem, sz, ca, "messageverificationcerts.example.com",
	    na - 60, spki, sizeof(spki), &na, why, sizeof(why)) > 0,
	    "chain: a minute before its end, valid");
	why[0] = '\0';
	CHECK(pubkey_chain(pem, sz, ca, "messageverificationcerts.example.com",
	    na + 60, spki, sizeof(spki), &na, why, sizeof(why)) == -1 &&
	    strstr(why, "expired") != NULL,
	    "chain: a minute after its end, refused (%s)", why);
	why[0] = '\0';
	CHECK(pubkey_chain(pem, sz, ca, "messageverificationcerts.example.com",
	    now - 86400, spki, sizeof(spki), &na, why, sizeof(why)) == -1 &&
	    strstr(why, "not yet valid") != NULL,
	    "chain: a day before its start, refused (%s)", why);
	why[0] = '\0';
	CHECK(pubkey_chain(pem, sz, other,
	    "messageverificationcerts.example.com", now, spki, sizeof(spki),
	    &na, why, sizeof(why)) == -1 && strstr(why, "not trusted") != NULL,
	    "chain: another CA, refused (%s)", why);
	why[0] = '\0';
	CHECK(pubkey_chain(pem, sz, ca, "messageverificationcerts.example.org",
	    now, spki, sizeof(spki), &na, why, sizeof(why)) == -1 &&
	    strstr(why, "not issued to") != NULL,
	    "chain: another name, refused (%s)", why);
	CHECK(pubkey_chain(pem, sz, ca, "example.com", now, spki,
	    sizeof(spki), &na, why, sizeof(why)) == -1,
	    "chain: the name's parent, refused");
	CHECK(pubkey_chain(pem, sz, ca, "messageverificationcerts.example.com",
	    now, spki, 100, &na, why, sizeof(why)) == -1,
	    "chain: no room for the key, refused");
	free(pem);

	pem = pems("leaf.pem", NULL, &sz);
	why[0] = '\0';
	CHECK(pubkey_chain(pem, sz, ca, "messageverificationcerts.example.com",
	    now, spki, sizeof(spki), &na, why, sizeof(why)) == -1 &&
	    strstr(why, "not trusted") != NULL,
	    "chain: the leaf without its intermediate, refused (%s)", why);
	free(pem);
	pem = pems("inter.pem", "leaf.pem", &sz);
	CHECK(pubkey_chain(pem, sz, ca, "messageverificationcerts.example.com",
	    now, spki, sizeof(spki), &na, why, sizeof(why)) == -1,
	    "chain: the intermediate first is the leaf, refused");
	free(pem);

	pem = pems("direct.pem", NULL, &sz);
	CHECK(pubkey_chain(pem, sz, ca, "direct.example.com", now, spki,
	    sizeof(spki), &na, why, sizeof(why)) > 0,
	    "chain: a leaf the root signed, alone");
	CHECK(pubkey_chain(pem, sz, other, "direct.example.com", now, spki,
	    sizeof(spki), &na, why, sizeof(why)) == -1,
	    "chain: and not under another root");
	snprintf(path, sizeof(path), "%s/nonexistent.pem", dir);
	why[0] = '\0';
	CHECK(pubkey_chain(pem, sz, path, "direct.example.com", now, spki,
	    sizeof(spki), &na, why, sizeof(why)) == -1 &&
	    strstr(why, "cannot read") != NULL,
	    "chain: a CA file that is not there, said (%s)", why);
	free(pem);

	pem = pems("ca.pem", NULL, &sz);
	CHECK(pubkey_chain(pem, sz, ca, "messageverificationcerts.example.com",
	    now, spki, sizeof(spki), &na, why, sizeof(why)) == -1,
	    "chain: the root itself is not the leaf, refused");
	free(pem);

	pem = pems("wild.pem", NULL, &sz);
	CHECK(pubkey_chain(pem, sz, ca, "a.example.com", now, spki,
	    sizeof(spki), &na, why, sizeof(why)) == -1,
	    "chain: a wildcard certificate names no host, refused");
	free(pem);

	pem = pems("weak.pem", NULL, &sz);
	why[0] = '\0';
	CHECK(pubkey_chain(pem, sz, ca, "weak.example.com", now, spki,
	    sizeof(spki), &na, why, sizeof(why)) == -1 &&
	    strstr(why, "2048") != NULL,
	    "chain: an RSA key of 1024 bits, refused (%s)", why);
	free(pem);
	pem = pems("ecleaf.pem", NULL, &sz);
	why[0] = '\0';
	CHECK(pubkey_chain(pem, sz, ca, "ec.example.com", now, spki,
	    sizeof(spki), &na, why, sizeof(why)) == -1 &&
	    strstr(why, "RSA") != NULL,
	    "chain: an EC key, refused (%s)", why);
	free(pem);
	pem = pems("dsaleaf.pem", NULL, &sz);
	why[0] = '\0';
	CHECK(pubkey_chain(pem, sz, ca, "dsa.example.com", now, spki,
	    sizeof(spki), &na, why, sizeof(why)) == -1 &&
	    strstr(why, "RSA") != NULL,
	    "chain: a DSA key, refused (%s)", why);
	free(pem);

	why[0] = '\0';
	CHECK(pubkey_chain("not a certificate", 17, ca, "x.example.com", now,
	    spki, sizeof(spki), &na, why, sizeof(why)) == -1 &&
	    strstr(why, "no certificate") != NULL,
	    "chain: text that is no PEM, refused (%s)", why);
	tap_rmdir(dir);
}

/* The largest body MAX_BODY allows, behind a timestamp: signed and
 * verified whole, not refused as too large (a 500 for any sender). */
static void
test_largest(void)
{
	unsigned char		 seed[32], pub[32], sig[PUBKEY_SIG_MAX];
	struct crypto_piece	 p[2];
	char			 why[256], *body;
	size_t			 sz = (size_t)64 << 20;	/* MAX_BODY's top */
	long			 n, k;

	if ((body = malloc(sz)) == NULL)
		BAIL("out of memory");
	memset(body, 'a', sz);
	p[0].p = "1700000000";
	p[0].sz = 10;
	p[1].p = body;
	p[1].sz = sz;
	hexb(ED2_SEED, seed, sizeof(seed));
	n = pubkey_sign(PUBKEY_ED25519, seed, 32, p, 2, sig, why,
	    sizeof(why));
	k = pubkey_public(PUBKEY_ED25519, seed, 32, pub, sizeof(pub), why,
	    sizeof(why));
	CHECK(n == 64 && k == 32 && pubkey_verify(PUBKEY_ED25519, pub, 32,
	    p, 2, sig, 64, why, sizeof(why)) == 1,
	    "sign, verify: a 64 MiB body behind its timestamp");
	sig[0] ^= 1;
	CHECK(pubkey_verify(PUBKEY_ED25519, pub, 32, p, 2, sig, 64, why,
	    sizeof(why)) == 0,
	    "verify: a 64 MiB body, another signature: no match, not -1");
	free(body);
}

int
main(void)
{
	char	 why[256];

	if (pubkey_load(why, sizeof(why)) == -1)
		BAIL("libcrypto: %s", why);
	test_ed25519();
	test_p256();
	test_sign();
	test_largest();
	test_chain();
	return tap_done();
}
