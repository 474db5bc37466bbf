/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: signature schemes (src/pipeline/sig.c): hmac-sha256,
 * stripe, zoom, and the handshakes.
 *
 * Requests are built by hand the way the front builds them: headers are
 * CGI variables ("HTTP_STRIPE_SIGNATURE=...") with the name running up
 * to the '=', not NUL-terminated.  The clock is always passed in, so no
 * result depends on when the test runs.
 *
 * The expected MACs were computed at authoring time with tools that
 * share no code with oncehook:
 *
 *   printf '%s' 'Hello, World!' |
 *       openssl dgst -sha256 -hmac "It's a Secret to Everybody"
 *   (GitHub's documented example, 757107ea...; also checked with
 *   python3 hmac.new(key, msg, hashlib.sha256).hexdigest())
 *
 *   t=1492774577; body='{"id":"evt_1","type":"payment_intent.succeeded"}'
 *   printf '%s' "$t.$body" | openssl dgst -sha256 -hmac whsec_test_secret
 *
 * Stripe's secret is used as its UTF-8 bytes, "whsec_" included, as
 * Stripe's libraries do.  The header layout (t=, v1=, v0=) and the v0
 * value are those of the example in Stripe's webhook documentation.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "pipeline/sig.h"
#include "tap.h"
#include "testlib.h"

/* hmac-sha256: secrets, the body and its signatures. */
static unsigned char	 k_gh[] = "It's a Secret to Everybody";
static unsigned char	 k_other[] = "other-secret";
#define GH_BODY		"Hello, World!"
/* HMAC-SHA256("It's a Secret to Everybody", "Hello, World!") */
#define GH_SIG		"757107ea0eb2509fc211221cce984b8a" \
			"37570b6d7586c22c46f4379c8b043e17"
/* HMAC-SHA256("other-secret", "Hello, World!") */
#define GH_SIG_OTHER	"419fa898d6dcf90bda61e2c52984d03d" \
			"f7dd76984f20b5af16a5b5b90fe5dfd5"
/* HMAC-SHA256("It's a Secret to Everybody", "") */
#define GH_SIG_EMPTY	"66a0c074deaa0f489ead6537e0d32f9a" \
			"344b90bbeda705b6ed45ecd3b413fb40"

/* stripe: secrets, the body and its signatures. */
static unsigned char	 k_stripe[] = "whsec_test_secret";
static unsigned char	 k_stripe_other[] = "whsec_other";
#define ST_T		1492774577
#define ST_TS		"1492774577"
#define ST_BODY		"{\"id\":\"evt_1\"," \
			"\"type\":\"payment_intent.succeeded\"}"
/* HMAC-SHA256("whsec_test_secret", ST_TS "." ST_BODY) */
#define ST_V1		"a0b379cac7b1fb483e6424514f123cb4" \
			"f228c044797ea1d5714be1106c7bc422"
/* HMAC-SHA256("whsec_other", ST_TS "." ST_BODY) */
#define ST_V1_OTHER	"344e373aa79f69ca81484711f40d6ef9" \
			"b4bfefc26f92cde040be84a172f1a2ad"
/* Stripe's documented example values: they match nothing here. */
#define DOC_V1		"5257a869e7ecebeda32affa62cdca3fa" \
			"51cad7e77a0e56ff536d0ce8e108d8bd"
#define DOC_V0		"6ffbb59b2300aae63f272406069a9788" \
			"598b792a944a07aba816edb039989a39"


static void
endpoint(struct conf_endpoint *ep, const char *scheme, struct secret *s,
    size_t n)
{
	memset(ep, 0, sizeof(*ep));
	if ((ep->scheme = scheme_find(scheme)) == NULL)
		BAIL("no scheme %s", scheme);
	snprintf(ep->name, sizeof(ep->name), "test");
	ep->secrets = s;
	ep->nsecrets = n;
	ep->tolerance = 300;
}

/* Verify body against the headers in env at time now. */
static enum hook_err
run(const struct conf_endpoint *ep, const char *const *env,
    const char *body, time_t now, struct sig_verdict *v)
{
	struct testreq		 t;
	struct sig_input	 in;

	in.rq = mkreq(&t, env);
	in.body = body;
	in.bodysz = body != NULL ? strlen(body) : 0;
	in.now = now;
	v->why = "unset";
	v->skew = 12345;
	return sig_verify(ep, &in, v);
}

static int
why_has(const struct sig_verdict *v, const char *word)
{
	return v->why != NULL && strstr(v->why, word) != NULL;
}

static void
test_hmac(void)
{
	struct conf_endpoint	 ep, rot;
	struct sig_verdict	 v;
	struct secret		 one[1] = { { k_gh, sizeof(k_gh) - 1 } };
	struct secret		 two[2] = {
		{ k_other, sizeof(k_other) - 1 },
		{ k_gh, sizeof(k_gh) - 1 },
	};
	char			 upper[] = GH_SIG, var[128], *p, *big;
	enum hook_err		 er;
	size_t			 len;

	endpoint(&ep, "hmac-sha256", one, 1);

	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=sha256=" GH_SIG),
	    GH_BODY, 0, &v);
	CHECK(er == HOOK_OK && v.why == NULL && v.skew == 0,
	    "hmac-sha256: valid, sha256= prefix");
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=" GH_SIG), GH_BODY, 0, &v);
	CHECK(er == HOOK_OK, "hmac-sha256: valid, bare hex");
	for (p = upper; *p != '\0'; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	snprintf(var, sizeof(var), "HTTP_X_WEBHOOK_SIGNATURE=%s", upper);
	er = run(&ep, ENV(var), GH_BODY, 0, &v);
	CHECK(er == HOOK_OK && strcmp(upper, GH_SIG) != 0,
	    "hmac-sha256: uppercase hex accepted");
	er = run(&ep, ENV("HTTP_x_Webhook_signature=" GH_SIG), GH_BODY, 0, &v);
	CHECK(er == HOOK_OK,
	    "hmac-sha256: header name matched case-insensitively");
	er = run(&ep, ENV("HTTP_ACCEPT=*/*", "HTTP_X_WEBHOOK_SIGNATURE_OLD=00",
	    "HTTP_X_WEBHOOK_SIGNATURE=" GH_SIG, "HTTP_USER_AGENT=test"),
	    GH_BODY, 0, &v);
	CHECK(er == HOOK_OK,
	    "hmac-sha256: found among other headers, longer name skipped");
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=" GH_SIG_EMPTY), "", 0,
	    &v);
	CHECK(er == HOOK_OK, "hmac-sha256: empty body signed and accepted");

	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=sha256=" GH_SIG),
	    "Hello, World?", 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "matched"),
	    "hmac-sha256: tampered body -> ESIG, no signature matched");
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=sha256=" GH_SIG),
	    GH_BODY " ", 0, &v);
	CHECK(er == HOOK_ESIG, "hmac-sha256: one byte appended -> ESIG");
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=sha256=" GH_SIG_OTHER),
	    GH_BODY, 0, &v);
	CHECK(er == HOOK_ESIG, "hmac-sha256: signed with another secret");
	er = run(&ep, ENV("HTTP_USER_AGENT=test"), GH_BODY, 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "missing"),
	    "hmac-sha256: missing header -> ESIG, header missing");
	er = run(&ep, ENV("X_WEBHOOK_SIGNATURE=" GH_SIG), GH_BODY, 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "missing"),
	    "hmac-sha256: a variable without HTTP_ is not a header");
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE="), GH_BODY, 0, &v);
	CHECK(er == HOOK_ESIG, "hmac-sha256: empty header -> ESIG");
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=sha256="), GH_BODY, 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "hmac-sha256: prefix only -> ESIG, malformed");

	/* Odd length: the signature without its last digit. */
	snprintf(var, sizeof(var), "HTTP_X_WEBHOOK_SIGNATURE=%s", GH_SIG);
	var[strlen(var) - 1] = '\0';
	er = run(&ep, ENV(var), GH_BODY, 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "hmac-sha256: odd-length hex -> ESIG, malformed");
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=" GH_SIG "00"), GH_BODY, 0,
	    &v);
	CHECK(er == HOOK_ESIG,
	    "hmac-sha256: correct MAC with a trailing byte -> ESIG");
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=sha256=zz"
	    "7107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"),
	    GH_BODY, 0, &v);
	CHECK(er == HOOK_ESIG, "hmac-sha256: non-hex digits -> ESIG");
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=sha1=" GH_SIG), GH_BODY, 0,
	    &v);
	CHECK(er == HOOK_ESIG, "hmac-sha256: another prefix -> ESIG");
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE= " GH_SIG), GH_BODY, 0,
	    &v);
	CHECK(er == HOOK_ESIG, "hmac-sha256: leading space -> ESIG");

	/* Rotation: two secrets, each signature accepted. */
	endpoint(&rot, "hmac-sha256", two, 2);
	er = run(&rot, ENV("HTTP_X_WEBHOOK_SIGNATURE=" GH_SIG), GH_BODY, 0, &v);
	CHECK(er == HOOK_OK, "hmac-sha256: second of two secrets matches");
	er = run(&rot, ENV("HTTP_X_WEBHOOK_SIGNATURE=" GH_SIG_OTHER), GH_BODY,
	    0, &v);
	CHECK(er == HOOK_OK, "hmac-sha256: first of two secrets matches");
	rot.nsecrets = 1;
	er = run(&rot, ENV("HTTP_X_WEBHOOK_SIGNATURE=" GH_SIG), GH_BODY, 0, &v);
	CHECK(er == HOOK_ESIG, "hmac-sha256: a secret not configured fails");

	/* Fail closed. */
	ep.nsecrets = 0;
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=" GH_SIG), GH_BODY, 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "secret"),
	    "hmac-sha256: endpoint without secrets fails closed, says so");
	ep.secrets = NULL;
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=" GH_SIG), GH_BODY, 0, &v);
	CHECK(er == HOOK_ESIG, "hmac-sha256: NULL secrets fail closed");

	/* A header longer than SIG_HEADER_MAX. */
	ep.secrets = one;
	ep.nsecrets = 1;
	len = strlen("HTTP_X_WEBHOOK_SIGNATURE=") + SIG_HEADER_MAX + 2;
	if ((big = malloc(len)) == NULL)
		BAIL("out of memory");
	memset(big, '0', len - 1);
	big[len - 1] = '\0';
	memcpy(big, "HTTP_X_WEBHOOK_SIGNATURE=", 25);
	er = run(&ep, ENV(big), GH_BODY, 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "long"),
	    "hmac-sha256: header over SIG_HEADER_MAX -> ESIG, too long");
	free(big);
}

/* Run the stripe endpoint with one Stripe-Signature header. */
static enum hook_err
stripe(const struct conf_endpoint *ep, const char *hdr, const char *body,
    time_t now, struct sig_verdict *v)
{
	char			*var;
	enum hook_err		 er;
	size_t			 len;

	len = strlen("HTTP_STRIPE_SIGNATURE=") + strlen(hdr) + 1;
	if ((var = malloc(len)) == NULL)
		BAIL("out of memory");
	snprintf(var, len, "HTTP_STRIPE_SIGNATURE=%s", hdr);
	er = run(ep, ENV(var), body, now, v);
	free(var);
	return er;
}

/* A header of t=, nwrong wrong v1 entries, then the right one if ok. */
static char *
many(size_t nwrong, int ok)
{
	char	*h;
	size_t	 i, len;

	len = 16 + (nwrong + 1) * (4 + 64) + 1;
	if ((h = malloc(len)) == NULL)
		BAIL("out of memory");
	snprintf(h, len, "t=%s", ST_TS);
	for (i = 0; i < nwrong; i++)
		strcat(h, ",v1=" ST_V1_OTHER);
	if (ok)
		strcat(h, ",v1=" ST_V1);
	return h;
}

/* "t=..,v1=..", then ",x=aaa..." up to exactly total bytes. */
static char *
padded(size_t total)
{
	const char	*base = "t=" ST_TS ",v1=" ST_V1 ",x=";
	char		*h;
	size_t		 blen = strlen(base);

	if (total < blen + 1 || (h = malloc(total + 1)) == NULL)
		BAIL("bad padding");
	memcpy(h, base, blen);
	memset(h + blen, 'a', total - blen);
	h[total] = '\0';
	return h;
}

static void
test_stripe(void)
{
	struct conf_endpoint	 ep, rot;
	struct sig_verdict	 v;
	struct secret		 one[1] = {
		{ k_stripe, sizeof(k_stripe) - 1 },
	};
	struct secret		 two[2] = {
		{ k_stripe_other, sizeof(k_stripe_other) - 1 },
		{ k_stripe, sizeof(k_stripe) - 1 },
	};
	enum hook_err		 er;
	char			*h;

	endpoint(&ep, "stripe", one, 1);

	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1 ",v0=" DOC_V0, ST_BODY,
	    ST_T, &v);
	CHECK(er == HOOK_OK && v.why == NULL && v.skew == 0,
	    "stripe: valid, in the documented t=,v1=,v0= layout");
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_OK, "stripe: valid, t and one v1");
	er = stripe(&ep, "v1=" ST_V1 ",t=" ST_TS, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_OK, "stripe: v1 before t");
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1_OTHER ",v1=" ST_V1, ST_BODY,
	    ST_T, &v);
	CHECK(er == HOOK_OK, "stripe: several v1, the second matches");
	er = stripe(&ep, "t=" ST_TS ",v1=zz-not-hex,v1=" ST_V1, ST_BODY,
	    ST_T, &v);
	CHECK(er == HOOK_OK, "stripe: a malformed v1 beside a valid one is "
	    "skipped, as Stripe's libraries do");
	er = stripe(&ep, "t=" ST_TS ",v1=" DOC_V1 ",v0=" ST_V1, ST_BODY, ST_T,
	    &v);
	CHECK(er == HOOK_ESIG,
	    "stripe: v0 ignored, even when it holds the right MAC");
	er = stripe(&ep, "t=" ST_TS ",v0=" ST_V1, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: only v0 -> ESIG");
	er = stripe(&ep, "t=" ST_TS ", v1=" ST_V1 ", v0=" DOC_V0, ST_BODY,
	    ST_T, &v);
	CHECK(er == HOOK_OK, "stripe: spaces after commas");
	er = stripe(&ep, "t=" ST_TS ",v1=" DOC_V1, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "matched"),
	    "stripe: Stripe's example v1 does not match our secret");
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1_OTHER, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: signed with another secret");
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1, ST_BODY " ", ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: tampered body -> ESIG");
	er = stripe(&ep, "t=1492774578,v1=" ST_V1, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: tampered timestamp -> ESIG");

	/* Malformed headers. */
	er = stripe(&ep, "v1=" ST_V1, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "stripe: missing t -> ESIG, malformed");
	er = stripe(&ep, "t=" ST_TS ",t=" ST_TS ",v1=" ST_V1, ST_BODY, ST_T,
	    &v);
	CHECK(er == HOOK_ESIG, "stripe: two t -> ESIG");
	er = stripe(&ep, "t=abc,v1=" ST_V1, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: non-numeric t -> ESIG");
	er = stripe(&ep, "t=" ST_TS "x,v1=" ST_V1, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: t with trailing garbage -> ESIG");
	er = stripe(&ep, "t=-1,v1=" ST_V1, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: negative t -> ESIG");
	er = stripe(&ep, "t=,v1=" ST_V1, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: empty t -> ESIG");
	er = stripe(&ep, "t=" ST_TS, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: no v1 -> ESIG");
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1 "0", ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: v1 of 65 digits -> ESIG");
	er = stripe(&ep, "t=" ST_TS ",v1=", ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: empty v1 -> ESIG");
	er = stripe(&ep, ",,,", ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: only commas -> ESIG");
	er = run(&ep, ENV("HTTP_X_WEBHOOK_SIGNATURE=" ST_V1), ST_BODY, ST_T,
	    &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "missing"),
	    "stripe: no Stripe-Signature header -> ESIG, missing");

	/* The timestamp, checked both ways once the signature matched. */
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1, ST_BODY, ST_T + 301, &v);
	CHECK(er == HOOK_ESTALE && v.skew == 301 && v.why != NULL,
	    "stripe: 301 s old -> ESTALE, skew +301");
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1, ST_BODY, ST_T - 301, &v);
	CHECK(er == HOOK_ESTALE && v.skew == -301 && v.why != NULL,
	    "stripe: 301 s in the future -> ESTALE, skew -301");
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1, ST_BODY, ST_T + 300, &v);
	CHECK(er == HOOK_OK, "stripe: exactly the tolerance old is accepted");
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1, ST_BODY, ST_T - 300, &v);
	CHECK(er == HOOK_OK,
	    "stripe: exactly the tolerance ahead is accepted");
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1, ST_BODY, ST_T + 86400, &v);
	CHECK(er == HOOK_ESTALE && v.skew == 86400,
	    "stripe: a day old -> ESTALE, skew +86400");
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1, ST_BODY, 0, &v);
	CHECK(er == HOOK_ESTALE && v.skew == -(long long)ST_T,
	    "stripe: clock at 0 -> ESTALE, large negative skew");
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1_OTHER, ST_BODY, ST_T + 10000,
	    &v);
	CHECK(er == HOOK_ESIG && v.skew == 0,
	    "stripe: wrong signature and stale -> ESIG (signature first)");
	ep.tolerance = 10;
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1, ST_BODY, ST_T + 11, &v);
	CHECK(er == HOOK_ESTALE && v.skew == 11,
	    "stripe: the endpoint's own tolerance is used");
	ep.tolerance = 300;

	/* Rotation. */
	endpoint(&rot, "stripe", two, 2);
	er = stripe(&rot, "t=" ST_TS ",v1=" ST_V1, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_OK, "stripe: second of two secrets matches");
	er = stripe(&rot, "t=" ST_TS ",v1=" ST_V1_OTHER, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_OK, "stripe: first of two secrets matches");

	/* Many candidates: at the limit, and over it. */
	h = many(15, 1);
	er = stripe(&ep, h, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_OK, "stripe: 16 v1 entries, the last matches");
	free(h);
	h = many(16, 1);
	er = stripe(&ep, h, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: 17 v1 entries -> ESIG, no crash");
	free(h);
	h = many(40, 0);
	er = stripe(&ep, h, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: 40 wrong v1 entries -> ESIG");
	free(h);

	/* Header length: exactly SIG_HEADER_MAX, and one byte more. */
	h = padded(SIG_HEADER_MAX);
	er = stripe(&ep, h, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_OK, "stripe: header of SIG_HEADER_MAX bytes ok");
	free(h);
	h = padded(SIG_HEADER_MAX + 1);
	er = stripe(&ep, h, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "long"),
	    "stripe: header over SIG_HEADER_MAX -> ESIG, too long");
	free(h);

	/* Fail closed. */
	ep.nsecrets = 0;
	er = stripe(&ep, "t=" ST_TS ",v1=" ST_V1, ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "secret"),
	    "stripe: endpoint without secrets fails closed, says so");
}

/* zoom: secrets, an event, a url_validation, their signatures. */
static unsigned char	 k_zoom[] = "zoom-secret-token-0123";
static unsigned char	 k_zoom_other[] = "zoom-other-token-4567";
#define ZM_T		1658940994
#define ZM_TS		"1658940994"
#define ZM_BODY		"{\"event\":\"meeting.started\",\"event_ts\":" \
			"1626230691572,\"payload\":{\"account_id\":" \
			"\"AAAAAABBBB\",\"object\":{\"id\":\"1234567890\"}}}"
/* HMAC-SHA256(k_zoom, "v0:" ZM_TS ":" ZM_BODY), python3 hmac */
#define ZM_SIG		"669cc6fe131e925a8f6e8eb499d0a984" \
			"f559ae1648364a27fbce40d35bd1193e"
#define ZM_CHECK	"{\"payload\":{\"plainToken\":" \
			"\"qgg8vlvZRS6UYooatFL8Aw\"},\"event_ts\":" \
			"1654503849680,\"event\":\"endpoint.url_validation\"}"
/* HMAC-SHA256(k_zoom_other, "v0:" ZM_TS ":" ZM_CHECK) */
#define ZM_CHECK_SIG_OTHER "30cb4a2fdc258d5638e9e0d1871ed84d" \
			"67e1cf29de5aa42663f501730080a913"
/* HMAC-SHA256(k_zoom_other, "qgg8vlvZRS6UYooatFL8Aw"): the answer */
#define ZM_ENCRYPTED_OTHER "17e8452544ce02dbfb3c3d61dc0e4d56" \
			"a49e726b3950190f095ca0954970655d"

/*
 * zoom: x-zm-signature v0=HEX over "v0:" ts ":" body, ts from
 * x-zm-request-timestamp (seconds); its handshake answered with the
 * secret that signed it.
 */
static void
test_zoom(void)
{
	struct secret		 s[2] = {
		{ k_zoom, sizeof(k_zoom) - 1 },
		{ k_zoom_other, sizeof(k_zoom_other) - 1 },
	};
	struct conf_endpoint	 ep, one;
	struct sig_verdict	 v;
	struct sig_msg		 m;
	struct sig_out		 o;
	struct hook_answer	 a;
	struct testreq		 t;
	struct sig_input	 in;
	const char		*env[3];

	endpoint(&ep, "zoom", s, 2);
	endpoint(&one, "zoom", s, 1);
	CHECK(run(&one, ENV("HTTP_X_ZM_SIGNATURE=v0=" ZM_SIG,
	    "HTTP_X_ZM_REQUEST_TIMESTAMP=" ZM_TS), ZM_BODY, ZM_T, &v) ==
	    HOOK_OK, "zoom: the event verifies");
	CHECK(run(&one, ENV("HTTP_X_ZM_SIGNATURE=v0=" ZM_SIG,
	    "HTTP_X_ZM_REQUEST_TIMESTAMP=" ZM_TS), ZM_BODY "x", ZM_T, &v) ==
	    HOOK_ESIG && why_has(&v, "matched"), "zoom: a changed body is "
	    "refused");
	CHECK(run(&one, ENV("HTTP_X_ZM_SIGNATURE=v0=" ZM_SIG,
	    "HTTP_X_ZM_REQUEST_TIMESTAMP=1658940995"), ZM_BODY, ZM_T, &v) ==
	    HOOK_ESIG, "zoom: the timestamp is signed");
	CHECK(run(&one, ENV("HTTP_X_ZM_SIGNATURE=v0=" ZM_SIG,
	    "HTTP_X_ZM_REQUEST_TIMESTAMP=" ZM_TS), ZM_BODY, ZM_T + 301, &v) ==
	    HOOK_ESTALE && v.skew == 301, "zoom: 301 s late is stale");
	CHECK(run(&one, ENV("HTTP_X_ZM_SIGNATURE=v0=" ZM_SIG,
	    "HTTP_X_ZM_REQUEST_TIMESTAMP=" ZM_TS), ZM_BODY, ZM_T - 301, &v) ==
	    HOOK_ESTALE, "zoom: 301 s early is stale");
	CHECK(run(&one, ENV("HTTP_X_ZM_SIGNATURE=" ZM_SIG,
	    "HTTP_X_ZM_REQUEST_TIMESTAMP=" ZM_TS), ZM_BODY, ZM_T, &v) ==
	    HOOK_ESIG && why_has(&v, "malformed"), "zoom: no v0= is malformed");
	CHECK(run(&one, ENV("HTTP_X_ZM_SIGNATURE=v0=" ZM_SIG), ZM_BODY, ZM_T,
	    &v) == HOOK_ESIG && why_has(&v, "timestamp"),
	    "zoom: no timestamp header, refused");
	CHECK(run(&one, ENV("HTTP_X_SLACK_SIGNATURE=v0=" ZM_SIG,
	    "HTTP_X_SLACK_REQUEST_TIMESTAMP=" ZM_TS), ZM_BODY, ZM_T, &v) ==
	    HOOK_ESIG && why_has(&v, "missing"),
	    "zoom: Slack's header names are not Zoom's");
	CHECK(run(&ep, ENV("HTTP_X_ZM_SIGNATURE=v0=" ZM_CHECK_SIG_OTHER,
	    "HTTP_X_ZM_REQUEST_TIMESTAMP=" ZM_TS), ZM_CHECK, ZM_T, &v) ==
	    HOOK_OK && run(&one, ENV("HTTP_X_ZM_SIGNATURE=v0="
	    ZM_CHECK_SIG_OTHER, "HTTP_X_ZM_REQUEST_TIMESTAMP=" ZM_TS),
	    ZM_CHECK, ZM_T, &v) == HOOK_ESIG,
	    "zoom: the validation is signed, by the second secret here");

	/* The answer: the token under the secret that signed it. */
	env[0] = "HTTP_X_ZM_SIGNATURE=v0=" ZM_CHECK_SIG_OTHER;
	env[1] = "HTTP_X_ZM_REQUEST_TIMESTAMP=" ZM_TS;
	env[2] = NULL;
	in.rq = mkreq(&t, env);
	in.body = ZM_CHECK;
	in.bodysz = strlen(ZM_CHECK);
	in.now = ZM_T;
	CHECK(ep.scheme->handshake != NULL &&
	    strcmp(ep.scheme->handshake->at, "/event") == 0 &&
	    strcmp(ep.scheme->handshake->type, "endpoint.url_validation") ==
	    0 && strcmp(ep.scheme->handshake->token, "/payload/plainToken") ==
	    0, "zoom: its handshake is /event endpoint.url_validation");
	CHECK(sig_answer(&ep, &in, "qgg8vlvZRS6UYooatFL8Aw", &a) == 0 &&
	    a.n == 2 && strcmp(a.name[0], "plainToken") == 0 &&
	    strcmp(a.value[0], "qgg8vlvZRS6UYooatFL8Aw") == 0 &&
	    strcmp(a.name[1], "encryptedToken") == 0 &&
	    strcmp(a.value[1], ZM_ENCRYPTED_OTHER) == 0,
	    "zoom: encryptedToken = hex HMAC-SHA256(signing secret, "
	    "plainToken) (%s)", a.value[1]);
	CHECK(sig_answer(&one, &in, "qgg8vlvZRS6UYooatFL8Aw", &a) == -1,
	    "zoom: no answer for a request no secret signed");
	CHECK(sig_answer(&ep, &in, NULL, &a) == -1,
	    "zoom: no answer without a token");

	/* oncehook sign: what verify accepts. */
	memset(&m, 0, sizeof(m));
	m.body = ZM_BODY;
	m.bodysz = strlen(ZM_BODY);
	m.now = ZM_T;
	m.id = "unused";
	CHECK(sig_sign(&ep, &m, &o) == 0 && o.n == 2 &&
	    strcmp(o.h[0].name, "x-zm-request-timestamp") == 0 &&
	    strcmp(o.h[0].value, ZM_TS) == 0 &&
	    strcmp(o.h[1].name, "x-zm-signature") == 0 &&
	    strcmp(o.h[1].value, "v0=" ZM_SIG) == 0,
	    "zoom: sign writes x-zm-request-timestamp and x-zm-signature "
	    "v0=" ZM_SIG);
}

/* Slack's and Stripe's handshakes, from their rows. */
static void
test_handshakes(void)
{
	const struct scheme	*sc;
	struct conf_endpoint	 ep;
	struct secret		 s = { k_stripe, sizeof(k_stripe) - 1 };
	struct hook_answer	 a;
	struct sig_input	 in;
	struct testreq		 t;
	static const char *const none[] = { NULL };

	sc = scheme_find("slack");
	CHECK(sc != NULL && sc->handshake != NULL &&
	    strcmp(sc->handshake->at, "/type") == 0 &&
	    strcmp(sc->handshake->type, "url_verification") == 0 &&
	    strcmp(sc->handshake->token, "/challenge") == 0,
	    "slack: its handshake is url_verification, token /challenge");
	endpoint(&ep, "slack", &s, 1);
	in.rq = mkreq(&t, none);
	in.body = "{}";
	in.bodysz = 2;
	in.now = 0;
	CHECK(sig_answer(&ep, &in, "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMm", &a)
	    == 0 && a.n == 1 && strcmp(a.name[0], "challenge") == 0 &&
	    strcmp(a.value[0], "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMm") == 0,
	    "slack: answered {\"challenge\": the token}");
	sc = scheme_find("stripe");
	CHECK(sc != NULL && sc->handshake != NULL &&
	    strcmp(sc->handshake->at, "/type") == 0 &&
	    strcmp(sc->handshake->type, "v2.core.event_destination.ping") ==
	    0 && sc->handshake->token == NULL,
	    "stripe: its handshake is v2.core.event_destination.ping");
	endpoint(&ep, "stripe", &s, 1);
	CHECK(sig_answer(&ep, &in, NULL, &a) == 0 && a.n == 0,
	    "stripe: the ping's answer has no member");
	CHECK(scheme_find("github")->handshake == NULL &&
	    scheme_find("hmac-sha256")->handshake == NULL,
	    "github, hmac-sha256: no handshake");
}

/* The same stripe vector through conf_load(): the secret as-is. */
static const char *
env_get(const char *name, void *arg)
{
	const char *const	*e;
	size_t			 len = strlen(name);

	for (e = arg; *e != NULL; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

static void
test_from_conf(void)
{
	static const char *const env[] = {
		"ONCEHOOK_DB=/var/lib/oncehook/hooks.db",
		"ONCEHOOK_ENDPOINTS=stripe",
		"ONCEHOOK_STRIPE_SCHEME=stripe",
		"ONCEHOOK_STRIPE_SECRET=whsec_other whsec_test_secret",
		NULL
	};
	struct sig_verdict	 v;
	struct conf		*cf;
	char			 err[256];
	enum hook_err		 er;

	if ((cf = conf_load(env_get, (void *)env, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	er = stripe(&cf->endpoints[0], "t=" ST_TS ",v1=" ST_V1, ST_BODY,
	    ST_T, &v);
	CHECK(er == HOOK_OK,
	    "stripe: endpoint from conf_load verifies (whsec_ kept)");
	er = stripe(&cf->endpoints[0], "t=" ST_TS ",v1=" DOC_V1, ST_BODY,
	    ST_T, &v);
	CHECK(er == HOOK_ESIG, "stripe: endpoint from conf_load refuses");
	conf_free(cf);
}

/* adyen: a key in hex (as Adyen shows it), its batch, sign refuses. */
static void
test_adyen(void)
{
	static const char *const good[] = {
		"ONCEHOOK_DB=/var/lib/oncehook/hooks.db",
		"ONCEHOOK_SCHEME=adyen",
		"ONCEHOOK_SECRET=44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C05"
		    "7550C48EC2ACF6BA056",
		NULL
	}, *const odd[] = {
		"ONCEHOOK_DB=/var/lib/oncehook/hooks.db",
		"ONCEHOOK_SCHEME=adyen",
		"ONCEHOOK_SECRET=44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C05"
		    "7550C48EC2ACF6BA05",
		NULL
	}, *const text[] = {
		"ONCEHOOK_DB=/var/lib/oncehook/hooks.db",
		"ONCEHOOK_SCHEME=adyen",
		"ONCEHOOK_SECRET=not-a-hex-key-but-long-enough",
		NULL
	};
	const struct sig_batch	*b;
	struct sig_msg		 m;
	struct sig_out		 out;
	struct conf		*cf;
	char			 err[256];

	cf = conf_load(env_get, (void *)good, err, sizeof(err));
	CHECK(cf != NULL && cf->endpoints[0].nsecrets == 1 &&
	    cf->endpoints[0].secrets[0].sz == 32 &&
	    cf->endpoints[0].secrets[0].p[0] == 0x44 &&
	    cf->endpoints[0].secrets[0].p[31] == 0x56,
	    "adyen: the hex key is its 32 bytes");
	memset(&m, 0, sizeof(m));
	m.body = "{}";
	m.bodysz = 2;
	CHECK(cf != NULL && sig_sign(&cf->endpoints[0], &m, &out) == -1,
	    "adyen: oncehook sign refuses (the signature is in the body)");
	conf_free(cf);
	cf = conf_load(env_get, (void *)odd, err, sizeof(err));
	CHECK(cf == NULL || cf->endpoints[0].nsecrets == 0,
	    "adyen: a key of an odd number of hex digits refused");
	conf_free(cf);
	cf = conf_load(env_get, (void *)text, err, sizeof(err));
	CHECK(cf == NULL || cf->endpoints[0].nsecrets == 0,
	    "adyen: a key that is not hex refused");
	conf_free(cf);
	b = scheme_batch(scheme_find("adyen"));
	CHECK(b != NULL && strcmp(b->items, "/notificationItems") == 0 &&
	    strcmp(b->item, "/NotificationRequestItem") == 0 &&
	    strcmp(b->answer, "[accepted]") == 0 && b->key_more != NULL &&
	    strcmp(b->key_more[0], "/eventCode") == 0 &&
	    strcmp(b->key_more[1], "/success") == 0 && b->key_more[2] == NULL,
	    "adyen: a batch of notificationItems, keyed pspReference:"
	    "eventCode:success, answered [accepted]");
	CHECK(scheme_batch(scheme_find("stripe")) == NULL &&
	    scheme_batch(scheme_find("hmac-sha256")) == NULL,
	    "other schemes send one event a request");
}

static void
test_schemes(void)
{
	/* SPEC section 4: every scheme, timestamped or not, default key. */
	static const struct {
		const char	*name;
		int		 ts;
		const char	*key;
	} spec[] = {
		{ "hmac-sha256", 0,
		  "header:X-Idempotency-Key json:/id json:/eventId hash" },
		{ "stripe", 1, "json:/id" },
		{ "github", 0, "header:X-GitHub-Delivery" },
		{ "standard", 1, "header:webhook-id" },
		{ "svix", 1, "header:svix-id" },
		{ "shopify", 0,
		  "header:X-Shopify-Event-Id header:X-Shopify-Webhook-Id" },
		{ "slack", 1, "json:/event_id" },
		{ "paddle", 1, "json:/event_id" },
		{ "gitlab", 0,
		  "header:Idempotency-Key header:X-Gitlab-Event-UUID" },
		{ "zoom", 1, "hash" },
		{ "adyen", 0, "json:/pspReference" },
	};
	const struct scheme	*s;
	size_t			 i;

	for (i = 0; i < sizeof(spec) / sizeof(spec[0]); i++) {
		s = scheme_find(spec[i].name);
		CHECK(s != NULL && strcmp(s->name, spec[i].name) == 0 &&
		    s->verify != NULL && s->timestamped == spec[i].ts &&
		    s->key != NULL && strcmp(s->key, spec[i].key) == 0 &&
		    strstr(scheme_names(), spec[i].name) != NULL,
		    "scheme_find(\"%s\"): known, timestamped %d, key %s",
		    spec[i].name, spec[i].ts, spec[i].key);
	}
	CHECK(scheme_find("nope") == NULL, "scheme_find(\"nope\") is NULL");
	CHECK(scheme_find("") == NULL, "scheme_find(\"\") is NULL");
	CHECK(scheme_find("hmac") == NULL && scheme_find("stripe ") == NULL,
	    "scheme_find matches whole names only");
}

int
main(void)
{
	test_hmac();
	test_stripe();
	test_from_conf();
	test_adyen();
	test_zoom();
	test_handshakes();
	test_schemes();
	return tap_done();
}
