/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: signature schemes (src/pipeline/sig.c): hmac-sha256,
 * stripe, zoom, the handshakes, basic, mailgun, and the URL-signed twilio
 * and square.
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
#include <strings.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"
#include "lib/pubkey.h"
#include "pipeline/certs.h"
#include "pipeline/event.h"
#include "pipeline/sig.h"
#include "pipeline/sigkit.h"
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
	struct secret		 one[1] = { { k_gh, sizeof(k_gh) - 1, SECRET_MAC } };
	struct secret		 two[2] = {
		{ k_other, sizeof(k_other) - 1, SECRET_MAC },
		{ k_gh, sizeof(k_gh) - 1, SECRET_MAC },
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
		{ k_stripe, sizeof(k_stripe) - 1, SECRET_MAC },
	};
	struct secret		 two[2] = {
		{ k_stripe_other, sizeof(k_stripe_other) - 1, SECRET_MAC },
		{ k_stripe, sizeof(k_stripe) - 1, SECRET_MAC },
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
		{ k_zoom, sizeof(k_zoom) - 1, SECRET_MAC },
		{ k_zoom_other, sizeof(k_zoom_other) - 1, SECRET_MAC },
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
	CHECK(sig_answer(&ep, NULL, &in, "qgg8vlvZRS6UYooatFL8Aw", &a) == 0 &&
	    a.n == 2 && strcmp(a.name[0], "plainToken") == 0 &&
	    strcmp(a.value[0], "qgg8vlvZRS6UYooatFL8Aw") == 0 &&
	    strcmp(a.name[1], "encryptedToken") == 0 &&
	    strcmp(a.value[1], ZM_ENCRYPTED_OTHER) == 0,
	    "zoom: encryptedToken = hex HMAC-SHA256(signing secret, "
	    "plainToken) (%s)", a.value[1]);
	CHECK(sig_answer(&one, NULL, &in, "qgg8vlvZRS6UYooatFL8Aw", &a) == -1,
	    "zoom: no answer for a request no secret signed");
	CHECK(sig_answer(&ep, NULL, &in, NULL, &a) == -1,
	    "zoom: no answer without a token");

	/* oncehook sign: what verify accepts. */
	memset(&m, 0, sizeof(m));
	m.body = ZM_BODY;
	m.bodysz = strlen(ZM_BODY);
	m.now = ZM_T;
	m.id = "unused";
	CHECK(sig_sign(&ep, NULL, &m, &o) == 0 && o.n == 2 &&
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
	struct secret		 s = { k_stripe, sizeof(k_stripe) - 1, SECRET_MAC };
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
	CHECK(sig_answer(&ep, NULL, &in, "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMm", &a)
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
	CHECK(sig_answer(&ep, NULL, &in, NULL, &a) == 0 && a.n == 0,
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

/*
 * basic: RFC 7617's example credential (section 2: Aladdin, "open
 * sesame") and one of the tests' own; base64 by python3's base64.
 */
static unsigned char	 k_aladdin[] = "Aladdin:open sesame";
static unsigned char	 k_postmark[] = "postmark:unit-password-0123456789";
#define BA_ALADDIN	"QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
#define BA_POSTMARK	"cG9zdG1hcms6dW5pdC1wYXNzd29yZC0wMTIzNDU2Nzg5"

static void
test_basic(void)
{
	struct conf_endpoint	 ep, rot;
	struct sig_verdict	 v;
	struct secret		 one[1] = {
		{ k_aladdin, sizeof(k_aladdin) - 1, SECRET_MAC },
	};
	struct secret		 two[2] = {
		{ k_postmark, sizeof(k_postmark) - 1, SECRET_MAC },
		{ k_aladdin, sizeof(k_aladdin) - 1, SECRET_MAC },
	};
	struct sig_msg		 m;
	struct sig_out		 out;
	char			 var[SIG_HEADER_MAX + 64];
	enum hook_err		 er;

	endpoint(&ep, "basic", one, 1);
	CHECK(!ep.scheme->timestamped && scheme_authorization(ep.scheme) &&
	    !scheme_authorization(scheme_find("stripe")),
	    "basic: untimed, its credential in Authorization (check's hint)");
	er = run(&ep, ENV("HTTP_AUTHORIZATION=Basic " BA_ALADDIN), "{}", 0,
	    &v);
	CHECK(er == HOOK_OK && v.why == NULL,
	    "basic: RFC 7617's example credential accepted");
	er = run(&ep, ENV("HTTP_AUTHORIZATION=BASIC  " BA_ALADDIN " "), "{}",
	    0, &v);
	CHECK(er == HOOK_OK,
	    "basic: scheme name in any case, blanks around the token");
	/* "Aladdin:open sesamE", "aladdin:open sesame", "Aladdin:open
	 * sesame " and "Aladdin" by python3 base64. */
	er = run(&ep, ENV("HTTP_AUTHORIZATION=Basic "
	    "QWxhZGRpbjpvcGVuIHNlc2FtRQ=="), "{}", 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "wrong"),
	    "basic: wrong password -> ESIG");
	er = run(&ep, ENV("HTTP_AUTHORIZATION=Basic "
	    "YWxhZGRpbjpvcGVuIHNlc2FtZQ=="), "{}", 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "wrong"),
	    "basic: wrong user name, right password -> ESIG");
	er = run(&ep, ENV("HTTP_AUTHORIZATION=Basic "
	    "QWxhZGRpbjpvcGVuIHNlc2FtZSA="), "{}", 0, &v);
	CHECK(er == HOOK_ESIG, "basic: password with a byte appended -> ESIG");
	er = run(&ep, ENV("HTTP_AUTHORIZATION=Basic QWxhZGRpbg=="), "{}", 0,
	    &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "basic: no colon in the credential -> ESIG, malformed");
	er = run(&ep, ENV("HTTP_AUTHORIZATION=Basic !!!!"), "{}", 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "basic: not base64 -> ESIG, malformed");
	er = run(&ep, ENV("HTTP_AUTHORIZATION=Basic "), "{}", 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "basic: no credential -> ESIG, malformed");
	er = run(&ep, ENV("HTTP_AUTHORIZATION=Bearer " BA_ALADDIN), "{}", 0,
	    &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "not Basic") &&
	    !v.no_authorization, "basic: another scheme -> ESIG, not Basic");
	er = run(&ep, ENV("HTTP_AUTHORIZATION=Aladdin:open sesame"), "{}", 0,
	    &v);
	CHECK(er == HOOK_ESIG, "basic: the secret itself, unencoded -> ESIG");
	er = run(&ep, ENV("HTTP_USER_AGENT=test"), "{}", 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "missing") &&
	    v.no_authorization, "basic: no Authorization -> ESIG, flagged "
	    "for the CGIPassAuth hint");
	er = run(&ep, ENV("HTTP_AUTHORIZATION="), "{}", 0, &v);
	CHECK(er == HOOK_ESIG && v.no_authorization,
	    "basic: empty Authorization (Apache's rewrite, nothing sent) -> "
	    "missing");
	snprintf(var, sizeof(var), "HTTP_AUTHORIZATION=Basic %0*d",
	    SIG_HEADER_MAX, 0);
	er = run(&ep, ENV(var), "{}", 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "long"),
	    "basic: Authorization over SIG_HEADER_MAX -> ESIG, too long");
	CHECK(v.why != NULL && strstr(v.why, "sesame") == NULL,
	    "basic: the reason never holds the password");

	endpoint(&rot, "basic", two, 2);
	er = run(&rot, ENV("HTTP_AUTHORIZATION=Basic " BA_ALADDIN), "{}", 0,
	    &v);
	CHECK(er == HOOK_OK, "basic: second of two credentials matches");
	er = run(&rot, ENV("HTTP_AUTHORIZATION=Basic " BA_POSTMARK), "{}", 0,
	    &v);
	CHECK(er == HOOK_OK, "basic: first of two credentials matches");

	memset(&m, 0, sizeof(m));
	m.body = "{}";
	m.bodysz = 2;
	m.id = "unused";
	CHECK(sig_sign(&rot, NULL, &m, &out) == 0 && out.n == 1 &&
	    strcmp(out.h[0].name, "Authorization") == 0 &&
	    strcmp(out.h[0].value, "Basic " BA_POSTMARK) == 0 &&
	    out.body == NULL,
	    "basic: sig_sign gives the first credential's header");

	ep.nsecrets = 0;
	er = run(&ep, ENV("HTTP_AUTHORIZATION=Basic " BA_ALADDIN), "{}", 0,
	    &v);
	CHECK(er == HOOK_ESIG, "basic: endpoint without secrets fails closed");
}

/*
 * mailgun: the token and timestamp of Mailgun's "Securing Webhooks"
 * page, a key of the tests' own; the signatures by python3:
 * hmac.new(key, b"1770920772" + token, sha256).hexdigest().
 */
static unsigned char	 k_mailgun[] = "key-mailgun-unit-0123456789";
static unsigned char	 k_mailgun_other[] = "key-other-unit-0123456789";
#define MG_T		1770920772
#define MG_TS		"1770920772"
#define MG_TOKEN	"e0b5477167110d68991efc6b9f89f0a11066af27834600e123"
#define MG_SIG		"5760fb08cdf1f43b47eb80d9b4e77977" \
			"9404a8bbd0b7340b7abc096d106dd793"
#define MG_SIG_OTHER	"585161c6a12bd58fa382bf8173ac5b90" \
			"5045fe5f0e3581249f7da9f9a66a0b28"
/* The same with the primary account's key, a subaccount's parent. */
static unsigned char	 k_mailgun_parent[] = "key-parent-unit-0123456789";
#define MG_SIG_PARENT	"6bda4d2e0f33f0264070ce4ce61e9d9f" \
			"c968c75594e2a8bb17a424037992979b"
#define MG_PARENT(sig, parent) \
	"{\"signature\":{\"timestamp\":\"" MG_TS "\",\"token\":\"" \
	MG_TOKEN "\",\"signature\":\"" sig "\",\"parent-signature\":\"" \
	parent "\"},\"event-data\":{\"id\":\"ev1\"}}"
#define MG_BLOCK(ts, tok, sig) \
	"{\"signature\":{\"timestamp\":" ts ",\"token\":\"" tok "\"," \
	"\"signature\":\"" sig "\"},\"event-data\":{\"id\":\"ev1\"," \
	"\"event\":\"delivered\"}}"

static void
test_mailgun(void)
{
	struct conf_endpoint	 ep, rot, par;
	struct sig_verdict	 v;
	struct secret		 parent;
	struct secret		 one[1] = {
		{ k_mailgun, sizeof(k_mailgun) - 1, SECRET_MAC },
	};
	struct secret		 two[2] = {
		{ k_mailgun_other, sizeof(k_mailgun_other) - 1, SECRET_MAC },
		{ k_mailgun, sizeof(k_mailgun) - 1, SECRET_MAC },
	};
	struct sig_msg		 m;
	struct sig_out		 out;
	enum hook_err		 er;
	char			*body;

	endpoint(&ep, "mailgun", one, 1);
	ep.tolerance = scheme_tolerance(ep.scheme);
	CHECK(ep.scheme->timestamped && scheme_unsigned_data(ep.scheme) &&
	    scheme_tolerance(ep.scheme) == 32400 &&
	    scheme_tolerance(scheme_find("stripe")) == 300 &&
	    !scheme_unsigned_data(scheme_find("stripe")) &&
	    strcmp(ep.scheme->key, "json:/signature/token") == 0 &&
	    ep.scheme->park_after == 1,
	    "mailgun: timestamped, 9 h tolerance, data unsigned, keyed by "
	    "the token, parked at the first failure");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"" MG_TS "\"", MG_TOKEN, MG_SIG), MG_T, &v);
	CHECK(er == HOOK_OK && v.why == NULL,
	    "mailgun: valid, timestamp as a string");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK(MG_TS, MG_TOKEN, MG_SIG), MG_T, &v);
	CHECK(er == HOOK_OK, "mailgun: valid, timestamp as an integer");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    "{\"event-data\":{\"id\":\"other\"},\"signature\":{\"signature\":"
	    "\"" MG_SIG "\",\"token\":\"" MG_TOKEN "\",\"timestamp\":\"" MG_TS
	    "\"}}", MG_T, &v);
	CHECK(er == HOOK_OK, "mailgun: members in another order, other event "
	    "data: still valid (the signature covers no event data)");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"" MG_TS "\"", MG_TOKEN, MG_SIG), MG_T + 32400, &v);
	CHECK(er == HOOK_OK, "mailgun: 9 h old: within the tolerance");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"" MG_TS "\"", MG_TOKEN, MG_SIG), MG_T + 32401, &v);
	CHECK(er == HOOK_ESTALE && v.skew == 32401,
	    "mailgun: 9 h and 1 s old -> ESTALE, skew 32401");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"" MG_TS "\"", MG_TOKEN, MG_SIG), MG_T - 32401, &v);
	CHECK(er == HOOK_ESTALE && v.skew == -32401,
	    "mailgun: 9 h and 1 s ahead -> ESTALE");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"" MG_TS "\"", MG_TOKEN, MG_SIG_OTHER), MG_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "matched"),
	    "mailgun: signed with another key -> ESIG");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"1770920773\"", MG_TOKEN, MG_SIG), MG_T, &v);
	CHECK(er == HOOK_ESIG, "mailgun: timestamp changed -> ESIG");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"" MG_TS "\"", "f0b5477167110d68991efc6b9f89f0a11066af"
	    "27834600e123", MG_SIG), MG_T, &v);
	CHECK(er == HOOK_ESIG, "mailgun: token changed -> ESIG");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"" MG_TS "\"", MG_TOKEN, "zz"), MG_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "mailgun: signature not 64 hex digits -> ESIG, malformed");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"" MG_TS "\"", "", MG_SIG), MG_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "mailgun: empty token -> ESIG, malformed");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"17709x0772\"", MG_TOKEN, MG_SIG), MG_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "mailgun: timestamp not digits -> ESIG, malformed");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    "{\"event-data\":{\"id\":\"ev1\"}}", MG_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "missing"),
	    "mailgun: no signature member -> ESIG, missing");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    "{\"signature\":\"" MG_SIG "\"}", MG_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "missing"),
	    "mailgun: signature not an object -> ESIG");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"), "not json", MG_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "JSON"),
	    "mailgun: body not JSON -> ESIG, says so");
	/* Two signature members: the event's parse refuses the body, so
	 * verify does too; the token verified is the token keyed. */
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    "{\"signature\":{\"timestamp\":\"" MG_TS "\",\"token\":\"" MG_TOKEN
	    "\",\"signature\":\"" MG_SIG "\"},\"signature\":{\"timestamp\":\""
	    MG_TS "\",\"token\":\"chosen\",\"signature\":\"" MG_SIG "\"}}",
	    MG_T, &v);
	CHECK(er == HOOK_ESIG, "mailgun: duplicate signature members -> ESIG");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    "{\"signature\":{\"timestamp\":\"" MG_TS "\",\"token\":\"" MG_TOKEN
	    "\",\"token\":\"chosen\",\"signature\":\"" MG_SIG "\"}}", MG_T,
	    &v);
	CHECK(er == HOOK_ESIG, "mailgun: duplicate token members -> ESIG");

	endpoint(&rot, "mailgun", two, 2);
	er = run(&rot, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"" MG_TS "\"", MG_TOKEN, MG_SIG), MG_T, &v);
	CHECK(er == HOOK_OK, "mailgun: second of two keys matches");

	/* A subaccount's event: parent-signature, made with the primary
	 * account's key, accepted with that key configured. */
	parent.p = k_mailgun_parent;
	parent.sz = sizeof(k_mailgun_parent) - 1;
	parent.kind = SECRET_MAC;
	endpoint(&par, "mailgun", &parent, 1);
	er = run(&par, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_PARENT(MG_SIG, MG_SIG_PARENT), MG_T, &v);
	CHECK(er == HOOK_OK, "mailgun: parent-signature, the primary "
	    "account's key configured");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_PARENT(MG_SIG, MG_SIG_PARENT), MG_T, &v);
	CHECK(er == HOOK_OK, "mailgun: the same event, the subaccount's key "
	    "configured");
	er = run(&par, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_PARENT(MG_SIG, MG_SIG_OTHER), MG_T, &v);
	CHECK(er == HOOK_ESIG, "mailgun: a parent-signature of another key "
	    "-> ESIG");
	er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"),
	    MG_PARENT(MG_SIG, "zz"), MG_T, &v);
	CHECK(er == HOOK_OK, "mailgun: a malformed parent-signature matches "
	    "nothing, the signature still does");

	/* sig_sign: the body with the signature block put first. */
	memset(&m, 0, sizeof(m));
	m.body = "{\"event-data\":{\"id\":\"ev1\",\"event\":\"delivered\"}}";
	m.bodysz = strlen(m.body);
	m.id = MG_TOKEN;
	m.now = MG_T;
	CHECK(sig_sign(&ep, NULL, &m, &out) == 0 && out.n == 0 &&
	    out.body != NULL && out.bodysz == strlen(MG_BLOCK("\"" MG_TS "\"",
	    MG_TOKEN, MG_SIG)) && memcmp(out.body, MG_BLOCK("\"" MG_TS "\"",
	    MG_TOKEN, MG_SIG), out.bodysz) == 0,
	    "mailgun: sig_sign puts the documented signature in the body");
	free(out.body);
	m.body = " { } ";
	m.bodysz = 5;
	if (sig_sign(&ep, NULL, &m, &out) == 0 &&
	    (body = strndup(out.body, out.bodysz)) != NULL) {
		er = run(&ep, ENV("HTTP_USER_AGENT=mailgun"), body, MG_T, &v);
		CHECK(er == HOOK_OK && strstr(body, "\"},") == NULL,
		    "mailgun: sig_sign of an empty object verifies, no comma "
		    "added");
		free(body);
	} else
		CHECK(0, "mailgun: sig_sign of an empty object verifies");
	free(out.body);
	m.body = "{\"signature\":{}}";
	m.bodysz = strlen(m.body);
	CHECK(sig_sign(&ep, NULL, &m, &out) == -1,
	    "mailgun: sig_sign refuses a body that has a signature");
	m.body = "[1]";
	m.bodysz = 3;
	CHECK(sig_sign(&ep, NULL, &m, &out) == -1,
	    "mailgun: sig_sign refuses a body that is not an object");
	m.body = "{}";
	m.bodysz = 2;
	m.id = "a\"b";
	CHECK(sig_sign(&ep, NULL, &m, &out) == -1,
	    "mailgun: sig_sign refuses a token JSON would escape");
}

/* basic and mailgun through conf_load(): secrets, defaults, guard. */
static void
test_new_conf(void)
{
	static const char *const env[] = {
		"ONCEHOOK_DB=/var/lib/oncehook/hooks.db",
		"ONCEHOOK_ENDPOINTS=pm,mg,mg2",
		"ONCEHOOK_PM_SCHEME=basic",
		"ONCEHOOK_PM_SECRET=postmark:unit-password-0123456789",
		"ONCEHOOK_MG_SCHEME=mailgun",
		"ONCEHOOK_MG_SECRET=key-mailgun-unit-0123456789",
		"ONCEHOOK_MG2_SCHEME=mailgun",
		"ONCEHOOK_MG2_SECRET=key-mailgun-unit-0123456789",
		"ONCEHOOK_MG2_TOLERANCE=600",
		NULL
	};
	static const char *const bad[] = {
		"ONCEHOOK_DB=/var/lib/oncehook/hooks.db",
		"ONCEHOOK_SCHEME=basic",
		"ONCEHOOK_SECRET=no-colon-in-this-secret",
		NULL
	};
	struct sig_verdict	 v;
	struct conf		*cf;
	char			 err[256];
	enum hook_err		 er;

	if ((cf = conf_load(env_get, (void *)env, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	er = run(&cf->endpoints[0], ENV("HTTP_AUTHORIZATION=Basic "
	    BA_POSTMARK), "{}", 0, &v);
	CHECK(er == HOOK_OK && cf->endpoints[0].replay_guard &&
	    cf->endpoints[0].park_after == 3,
	    "basic: endpoint from conf_load verifies; replay guard on, "
	    "PARK_AFTER 3");
	er = run(&cf->endpoints[1], ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"" MG_TS "\"", MG_TOKEN, MG_SIG), MG_T + 30000, &v);
	CHECK(er == HOOK_OK && cf->endpoints[1].tolerance == 32400 &&
	    cf->endpoints[1].replay_guard &&
	    cf->endpoints[1].park_after == 1,
	    "mailgun: from conf_load: TOLERANCE 32400, replay guard on "
	    "though timestamped, PARK_AFTER 1");
	er = run(&cf->endpoints[2], ENV("HTTP_USER_AGENT=mailgun"),
	    MG_BLOCK("\"" MG_TS "\"", MG_TOKEN, MG_SIG), MG_T + 601, &v);
	CHECK(er == HOOK_ESTALE && cf->endpoints[2].tolerance == 600,
	    "mailgun: ONCEHOOK_<NAME>_TOLERANCE overrides the default");
	conf_free(cf);
	cf = conf_load(env_get, (void *)bad, err, sizeof(err));
	CHECK(cf == NULL && strstr(err, "user:password") != NULL &&
	    strstr(err, "no-colon-in-this-secret") == NULL,
	    "basic: a secret without a colon refused, named, never quoted "
	    "(%s)", err);
	conf_free(cf);
}

/* adyen: a key in hex (as Adyen shows it), its batch; sign puts each
 * item's signature in its additionalData, and refuses what is not a
 * batch of such items. */
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
	CHECK(cf != NULL && sig_sign(&cf->endpoints[0], NULL, &m, &out) == -1,
	    "adyen: oncehook sign refuses a body that is no batch");
	{
		/* Adyen's "Verify HMAC signatures" example item and key, and
		 * a second item whose additionalData has a member. */
		static const char batch[] = "{\"live\":\"false\","
		    "\"notificationItems\":[{\"NotificationRequestItem\":"
		    "{\"additionalData\":{},\"amount\":{\"currency\":\"EUR\","
		    "\"value\":1130},\"eventCode\":\"AUTHORISATION\","
		    "\"merchantAccountCode\":\"TestMerchant\","
		    "\"merchantReference\":\"TestPayment-1407325143704\","
		    "\"pspReference\":\"7914073381342284\",\"success\":"
		    "\"true\"}},{\"NotificationRequestItem\":{"
		    "\"additionalData\":{ \"a\":\"b\"},\"amount\":{"
		    "\"currency\":\"EUR\",\"value\":1},\"eventCode\":"
		    "\"CAPTURE\",\"merchantAccountCode\":\"TestMerchant\","
		    "\"merchantReference\":\"x\",\"pspReference\":\"1\","
		    "\"success\":\"true\"}}]}";
		static const char first[] = "{\"additionalData\":{"
		    "\"hmacSignature\":\"coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8U"
		    "U+iCWo0=\"},";
		static const char second[] = "=\", \"a\":\"b\"}";
		struct sig_input	 in;
		struct sig_verdict	 v;
		struct req		 rq;
		char			*txt = NULL;
		int			 ok;

		memset(&m, 0, sizeof(m));
		m.body = batch;
		m.bodysz = sizeof(batch) - 1;
		memset(&out, 0, sizeof(out));
		ok = cf != NULL && sig_sign(&cf->endpoints[0], NULL, &m, &out) == 0 &&
		    out.body != NULL && (txt = malloc(out.bodysz + 1)) != NULL;
		if (ok) {
			memcpy(txt, out.body, out.bodysz);
			txt[out.bodysz] = '\0';
		}
		CHECK(ok && strstr(txt, first) != NULL &&
		    strstr(txt, second) != NULL,
		    "adyen: sign puts each item's signature first in its "
		    "additionalData (Adyen's documented one for their example)");
		memset(&rq, 0, sizeof(rq));
		in.rq = &rq;
		in.body = out.body;
		in.bodysz = out.bodysz;
		in.now = 0;
		CHECK(ok && sig_verify(&cf->endpoints[0], &in, &v) == HOOK_OK,
		    "adyen: the body sign printed verifies, both items");
		free(txt);
		free(out.body);
		m.body = out.body = NULL;
		{
			static const char twice[] = "{\"notificationItems\":[{"
			    "\"NotificationRequestItem\":{\"additionalData\":{"
			    "\"hmacSignature\":\"x\"},\"pspReference\":\"1\"}}]}";

			m.body = twice;
			m.bodysz = sizeof(twice) - 1;
			CHECK(cf != NULL &&
			    sig_sign(&cf->endpoints[0], NULL, &m, &out) == -1,
			    "adyen: sign refuses an item already signed");
		}
	}
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
	    scheme_find("adyen")->ack != NULL &&
	    scheme_find("adyen")->ack->status == 200 &&
	    strcmp(scheme_find("adyen")->ack->text, "[accepted]") == 0 &&
	    b->key_more != NULL &&
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
		{ "basic", 0, "json:/id hash" },
		{ "mailgun", 1, "json:/signature/token" },
		{ "twilio", 0, "header:I-Twilio-Idempotency-Token hash" },
		{ "square", 0, "json:/event_id" },
		{ "adyen", 0, "json:/pspReference" },
	};
	const struct scheme	*s;
	char			 names[512], *w, *save;
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
	/* The pipeline reads a batch as JSON and a form as one event. */
	snprintf(names, sizeof(names), "%s", scheme_names());
	for (i = 0, w = strtok_r(names, " ", &save); w != NULL;
	    w = strtok_r(NULL, " ", &save)) {
		s = scheme_find(w);
		if (s == NULL || (scheme_batch(s) != NULL &&
		    scheme_sends_form(s)))
			break;
		i += scheme_batch(s) != NULL || scheme_sends_form(s);
	}
	CHECK(w == NULL && i >= 2, "no scheme both sends forms and batches "
	    "(%zu of either)", i);
	CHECK(scheme_find("nope") == NULL, "scheme_find(\"nope\") is NULL");
	CHECK(scheme_find("") == NULL, "scheme_find(\"\") is NULL");
	CHECK(scheme_find("hmac") == NULL && scheme_find("stripe ") == NULL,
	    "scheme_find matches whole names only");
}

/*
 * twilio: the example of Twilio's request-validation documentation
 * (twilio-php's "Validate Incoming Requests", twilio-node's tests): auth
 * token 12345, URL and parameters below, X-Twilio-Signature
 * RSOYDt4T1cUTdK1PDd93/VVr8B8= (twilio 6.3.1's validateRequest agrees).
 * The other values were computed with python3 hmac (sha1, sha256) and
 * base64, and checked with twilio-node's getExpectedTwilioSignature.
 */
static unsigned char	 k_tw[] = "12345";
static unsigned char	 k_tw_other[] = "other-token-000";
#define TW_URL		"https://mycompany.com/myapp.php?foo=1&bar=2"
#define TW_BODY		"CallSid=CA1234567890ABCDE&Caller=%2B14158675309&" \
			"Digits=1234&From=%2B14158675309&To=%2B18005551212"
#define TW_SIG		"RSOYDt4T1cUTdK1PDd93/VVr8B8="
/* The same parameters, another order, '+' written %2b: one signature. */
#define TW_BODY_SHUFFLED "To=%2b18005551212&Digits=1234&CallSid=" \
			"CA1234567890ABCDE&From=%2b14158675309&" \
			"Caller=%2B14158675309"
/* HMAC-SHA1("other-token-000", the same string) */
#define TW_SIG_OTHER	"ERzqpp55O37CzKlmjoR593r/lJI="
/* HMAC-SHA256("12345", the same string): a Webhooks Rule's SharedKey */
#define TW_SIG_256	"033hgUJA9M/hXIZsYjwkerEP/DBm35nEri5FhCYjA5s="
/* "https://x.test/h" + "a1b1b2": b sent three times, 2 twice. */
#define TW_SIG_REPEAT	"u9rWw2Q/p/5MDU9+dv+q48I91BA="
/* "https://x.test/h" + "Bodyhello world!": '+' and %21 decoded. */
#define TW_SIG_PLUS	"rQ9HRqNBv3z4N6rpbccf/lxbtv8="

static enum hook_err
twilio(const struct conf_endpoint *ep, const char *sig, const char *body,
    struct sig_verdict *v)
{
	const char	*env[] = { NULL, NULL };
	char		 h[128];

	snprintf(h, sizeof(h), "HTTP_X_TWILIO_SIGNATURE=%s", sig);
	env[0] = sig != NULL ? h : NULL;
	return run(ep, env, body, 1700000000, v);
}

/*
 * Twilio's JSON bodies: the URL with bodySHA256 appended is signed, the
 * body must hash to it.  TWJ_SIG: twilio 6.3.1's
 * getExpectedTwilioSignature("12345", TW_URL "&bodySHA256=" TWJ_HEX, {})
 * (validateRequestWithBody accepts it); TWJ_HEX: SHA-256 of TWJ_BODY.
 */
#define TWJ_BODY	"{\"MessageSid\":\"SM1\",\"MessageStatus\":\"delivered\"}"
#define TWJ_HEX		"ce8c3c8da52a17f7dd3e526b3b67d41402b438513f6b2faf" \
			"55189573f2873f02"
#define TWJ_SIG		"XwaFzbt/24iPEqc74BO2N1Tj4fM="

static enum hook_err
twilio_query(const struct conf_endpoint *ep, const char *sig,
    const char *query, const char *body, struct sig_verdict *v)
{
	struct testreq		 t;
	struct sig_input	 in;
	const char		*env[] = { NULL, NULL };
	char			 h[128];

	snprintf(h, sizeof(h), "HTTP_X_TWILIO_SIGNATURE=%s", sig);
	env[0] = h;
	in.rq = mkreq(&t, env);
	t.rq.query_string = query;
	in.body = body;
	in.bodysz = strlen(body);
	in.now = 1700000000;
	v->why = "unset";
	return sig_verify(ep, &in, v);
}

static void
test_twilio_json(struct conf_endpoint *ep)
{
	struct sig_verdict	 v;
	enum hook_err		 er;

	ep->url = (char *)TW_URL;
	CHECK(twilio_query(ep, TWJ_SIG, "bodySHA256=" TWJ_HEX, TWJ_BODY,
	    &v) == HOOK_OK, "twilio: a JSON body with bodySHA256, signed as "
	    "twilio-node's validateRequestWithBody checks it: verifies");
	CHECK(twilio_query(ep, TWJ_SIG, "x=1&bodySHA256=" TWJ_HEX, TWJ_BODY,
	    &v) == HOOK_OK, "twilio: bodySHA256 found among other query "
	    "parameters (the signed URL is the configured one's)");
	er = twilio_query(ep, TWJ_SIG, "bodySHA256=" TWJ_HEX,
	    "{\"MessageSid\":\"SM1\",\"MessageStatus\":\"failed\"}", &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "bodySHA256"),
	    "twilio: a JSON body that does not hash to bodySHA256: refused");
	er = twilio_query(ep, TWJ_SIG, "bodySHA256="
	    "0000000000000000000000000000000000000000000000000000000000000000",
	    TWJ_BODY, &v);
	CHECK(er == HOOK_ESIG, "twilio: another bodySHA256: refused");
	er = twilio_query(ep, TWJ_SIG, NULL, TWJ_BODY, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "matched"),
	    "twilio: the JSON body without bodySHA256 (read as a form): "
	    "refused");
	ep->url = (char *)"https://mycompany.com/myapp.php";
	CHECK(twilio_query(ep, TWJ_SIG, "bodySHA256=" TWJ_HEX, TWJ_BODY,
	    &v) == HOOK_ESIG, "twilio: the JSON body, URL configured without "
	    "its query string: refused");
	ep->url = (char *)TW_URL;
}

static void
test_twilio(void)
{
	struct conf_endpoint	 ep;
	struct sig_verdict	 v;
	struct secret		 one[1] = { { k_tw, sizeof(k_tw) - 1, SECRET_MAC } };
	struct secret		 two[2] = {
		{ k_tw_other, sizeof(k_tw_other) - 1, SECRET_MAC },
		{ k_tw, sizeof(k_tw) - 1, SECRET_MAC },
	};
	const char		*env256[] = {
		"HTTP_X_TWILIO_SIGNATURE=" TW_SIG_256,
		"HTTP_X_TWILIO_WEBHOOKS_SIGNATURE_SETTINGS=key=webhooks_"
		"sharedkey_x,algorithm=HMAC_SHA256", NULL };
	const char		*envbad[] = {
		"HTTP_X_TWILIO_SIGNATURE=" TW_SIG,
		"HTTP_X_TWILIO_WEBHOOKS_SIGNATURE_SETTINGS=algorithm=HMAC_MD5",
		NULL };
	const char		*env1[] = {
		"HTTP_X_TWILIO_SIGNATURE=" TW_SIG,
		"HTTP_X_TWILIO_WEBHOOKS_SIGNATURE_SETTINGS=algorithm=HMAC_SHA1",
		NULL };
	enum hook_err		 er;

	endpoint(&ep, "twilio", one, 1);
	ep.url = (char *)TW_URL;
	CHECK(twilio(&ep, TW_SIG, TW_BODY, &v) == HOOK_OK,
	    "twilio: Twilio's documented example verifies");
	CHECK(twilio(&ep, TW_SIG, TW_BODY_SHUFFLED, &v) == HOOK_OK,
	    "twilio: the parameters in another order, %%2b for '+': "
	    "verifies (sorted by name, decoded)");
	er = twilio(&ep, TW_SIG, "CallSid=CA1234567890ABCDE&Caller=%2B1415"
	    "8675309&Digits=1235&From=%2B14158675309&To=%2B18005551212", &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "matched"),
	    "twilio: one digit of one parameter changed: refused");
	er = twilio(&ep, TW_SIG, TW_BODY "&Extra=1", &v);
	CHECK(er == HOOK_ESIG, "twilio: a parameter added: refused");
	er = twilio(&ep, TW_SIG, "CallSid=CA1234567890ABCDE&Caller=+1415867"
	    "5309&Digits=1234&From=%2B14158675309&To=%2B18005551212", &v);
	CHECK(er == HOOK_ESIG,
	    "twilio: a raw '+' (a space) where %%2B was signed: refused");
	CHECK(twilio(&ep, TW_SIG_OTHER, TW_BODY, &v) == HOOK_ESIG,
	    "twilio: signed with another auth token: refused");
	ep.url = (char *)"http://mycompany.com/myapp.php?foo=1&bar=2";
	CHECK(twilio(&ep, TW_SIG, TW_BODY, &v) == HOOK_ESIG,
	    "twilio: URL configured as http:// where Twilio signed "
	    "https://: refused");
	ep.url = (char *)"https://mycompany.com/myapp.php";
	CHECK(twilio(&ep, TW_SIG, TW_BODY, &v) == HOOK_ESIG,
	    "twilio: URL configured without its query string: refused");
	ep.url = NULL;
	er = twilio(&ep, TW_SIG, TW_BODY, &v);
	CHECK(er == HOOK_ECONF && why_has(&v, "URL"),
	    "twilio: no URL configured: misconfigured, never guessed");
	ep.url = (char *)TW_URL;
	er = twilio(&ep, NULL, TW_BODY, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "missing"),
	    "twilio: no X-Twilio-Signature: refused, header missing");
	er = twilio(&ep, "RSOYDt4T1cUTdK1PDd93/VVr8B8", TW_BODY, &v);
	CHECK(er == HOOK_OK, "twilio: the signature unpadded: verifies");
	er = twilio(&ep, "not base64!", TW_BODY, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "twilio: signature not base64: malformed");
	er = twilio(&ep, TW_SIG_256, TW_BODY, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "twilio: a 32-byte signature without the settings header: "
	    "malformed");
	CHECK(run(&ep, env256, TW_BODY, 1700000000, &v) == HOOK_OK,
	    "twilio: HMAC-SHA256 where X-Twilio-Webhooks-Signature-Settings "
	    "says algorithm=HMAC_SHA256: verifies");
	er = run(&ep, envbad, TW_BODY, 1700000000, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "algorithm"),
	    "twilio: an unknown algorithm in the settings header: refused");
	CHECK(run(&ep, env1, TW_BODY, 1700000000, &v) == HOOK_OK,
	    "twilio: algorithm=HMAC_SHA1 named: verifies");

	ep.url = (char *)"https://x.test/h";
	CHECK(twilio(&ep, TW_SIG_REPEAT, "b=2&a=1&b=1&b=2", &v) == HOOK_OK,
	    "twilio: a name sent three times, one value twice: its values "
	    "deduplicated and sorted, as twilio-node signs them");
	CHECK(twilio(&ep, TW_SIG_REPEAT, "b=2&a=1&b=1", &v) == HOOK_OK,
	    "twilio: the same without the repeated value: one signature");
	CHECK(twilio(&ep, TW_SIG_REPEAT, "b=2&a=1&b=3", &v) == HOOK_ESIG,
	    "twilio: another value of the repeated name: refused");
	CHECK(twilio(&ep, TW_SIG_PLUS, "Body=hello+world%21", &v) == HOOK_OK,
	    "twilio: '+' is a space, %%21 a '!'");
	CHECK(twilio(&ep, TW_SIG_PLUS, "&&Body=hello%20world!&", &v) ==
	    HOOK_OK, "twilio: empty pairs skipped, %%20 a space");

	test_twilio_json(&ep);

	endpoint(&ep, "twilio", two, 2);
	ep.url = (char *)TW_URL;
	CHECK(twilio(&ep, TW_SIG, TW_BODY, &v) == HOOK_OK &&
	    twilio(&ep, TW_SIG_OTHER, TW_BODY, &v) == HOOK_OK,
	    "twilio: two auth tokens (rotation): both verify");
}

/*
 * square: the vector of Square's SDK tests (WebhooksHelper), checked
 * with square 46.0.0's WebhooksHelper.verifySignature and python3 hmac.
 */
static unsigned char	 k_sq[] = "Ibxx_5AKakO-3qeNVR61Dw";
static unsigned char	 k_sq_other[] = "another-square-key";
#define SQ_URL		"https://webhook.site/679a4f3a-dcfa-49ee-bac5-" \
			"9d0edad886b9"
#define SQ_BODY		"{\"merchant_id\":\"MLEFBHHSJGVHD\",\"type\":" \
    "\"webhooks.test_notification\",\"event_id\":\"ac3ac95b-f97d-458c-" \
    "a6e6-18981597e05f\",\"created_at\":\"2022-07-13T20:30:59.037339943Z\"" \
    ",\"data\":{\"type\":\"webhooks\",\"id\":\"bc368e64-01aa-407e-b46e-" \
    "3231809b1129\"}}"
#define SQ_SIG		"GF4YkrJgGBDZ9NIYbNXBnMzqb2HoL4RW/S6vkZ9/2N4="

static enum hook_err
square(const struct conf_endpoint *ep, const char *sig, const char *body,
    struct sig_verdict *v)
{
	const char	*env[] = { NULL, NULL };
	char		 h[128];

	snprintf(h, sizeof(h), "HTTP_X_SQUARE_HMACSHA256_SIGNATURE=%s", sig);
	env[0] = sig != NULL ? h : NULL;
	return run(ep, env, body, 1700000000, v);
}

static void
test_square(void)
{
	struct conf_endpoint	 ep;
	struct sig_verdict	 v;
	struct secret		 one[1] = { { k_sq, sizeof(k_sq) - 1, SECRET_MAC } };
	struct secret		 other[1] = {
		{ k_sq_other, sizeof(k_sq_other) - 1, SECRET_MAC } };
	char			 body[] = SQ_BODY;
	enum hook_err		 er;

	endpoint(&ep, "square", one, 1);
	ep.url = (char *)SQ_URL;
	CHECK(square(&ep, SQ_SIG, SQ_BODY, &v) == HOOK_OK,
	    "square: the SDK's example verifies (URL + body)");
	body[sizeof(body) - 3] ^= 1;
	CHECK(square(&ep, SQ_SIG, body, &v) == HOOK_ESIG,
	    "square: one byte of the body changed: refused");
	ep.url = (char *)SQ_URL "/";
	CHECK(square(&ep, SQ_SIG, SQ_BODY, &v) == HOOK_ESIG,
	    "square: a URL one trailing slash off: refused");
	ep.url = NULL;
	CHECK(square(&ep, SQ_SIG, SQ_BODY, &v) == HOOK_ECONF,
	    "square: no URL configured: misconfigured");
	ep.url = (char *)SQ_URL;
	er = square(&ep, NULL, SQ_BODY, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "missing"),
	    "square: no signature header: refused, missing");
	er = square(&ep, "GF4YkrJgGBDZ9NIYbNXBnMzqb2HoL4RW", SQ_BODY, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "square: a signature of the wrong length: malformed");
	endpoint(&ep, "square", other, 1);
	ep.url = (char *)SQ_URL;
	CHECK(square(&ep, SQ_SIG, SQ_BODY, &v) == HOOK_ESIG,
	    "square: another signature key: refused");
}

/* What oncehook sign makes, the verifier takes; the URL is the endpoint's. */
static void
test_url_sign(void)
{
	struct conf_endpoint	 ep;
	struct sig_verdict	 v;
	struct sig_msg		 m;
	struct sig_out		 out;
	struct secret		 tw[1] = { { k_tw, sizeof(k_tw) - 1, SECRET_MAC } };
	struct secret		 sq[1] = { { k_sq, sizeof(k_sq) - 1, SECRET_MAC } };
	size_t			 i;
	const char		*sig = NULL, *ct = NULL, *tok = NULL;

	memset(&m, 0, sizeof(m));
	m.body = TW_BODY;
	m.bodysz = strlen(TW_BODY);
	m.id = "tok_1";
	endpoint(&ep, "twilio", tw, 1);
	ep.url = (char *)TW_URL;
	CHECK(sig_sign(&ep, NULL, &m, &out) == 0, "twilio: sig_sign succeeds");
	for (i = 0; i < out.n; i++) {
		if (strcmp(out.h[i].name, "X-Twilio-Signature") == 0)
			sig = out.h[i].value;
		if (strcmp(out.h[i].name, "Content-Type") == 0)
			ct = out.h[i].value;
		if (strcmp(out.h[i].name, "I-Twilio-Idempotency-Token") == 0)
			tok = out.h[i].value;
	}
	CHECK(sig != NULL && strcmp(sig, TW_SIG) == 0,
	    "twilio: signing the documented example gives its signature");
	CHECK(ct != NULL && strcmp(ct,
	    "application/x-www-form-urlencoded") == 0 && tok != NULL &&
	    strcmp(tok, "tok_1") == 0,
	    "twilio: sign sends a form, the id as I-Twilio-Idempotency-Token");
	ep.url = NULL;
	CHECK(sig_sign(&ep, NULL, &m, &out) == -1,
	    "twilio: no URL, nothing signed");

	m.body = SQ_BODY;
	m.bodysz = strlen(SQ_BODY);
	endpoint(&ep, "square", sq, 1);
	ep.url = (char *)SQ_URL;
	sig = NULL;
	CHECK(sig_sign(&ep, NULL, &m, &out) == 0 && out.n == 1 &&
	    strcmp(out.h[0].name, "x-square-hmacsha256-signature") == 0 &&
	    strcmp(out.h[0].value, SQ_SIG) == 0,
	    "square: signing the SDK's example gives its signature");
	CHECK(square(&ep, out.h[0].value, SQ_BODY, &v) == HOOK_OK,
	    "square: what sign prints verifies");
	CHECK(scheme_signs_url(scheme_find("twilio")) &&
	    scheme_signs_url(scheme_find("square")) &&
	    !scheme_signs_url(scheme_find("stripe")) &&
	    scheme_sends_form(scheme_find("twilio")) &&
	    !scheme_sends_form(scheme_find("square")),
	    "twilio and square sign the URL; twilio alone sends forms");
}

/*
 * The public-key schemes (src/pipeline/sigpub.c): discord, telnyx,
 * sendgrid, and standard's v1a.  SendGrid's are its two published
 * samples (sendgrid-nodejs eventwebhook.spec.js).  Discord, Telnyx and
 * Standard Webhooks publish no vector: these are signed with RFC 8032's
 * test keys 1 and 2 (seeds 9d61b19d... and 4ccd089b...), with Python's
 * cryptography package; the first of each was also accepted by the
 * provider's own library (/work/brief/research39.md: discord-interactions
 * verifyKey, telnyx TelnyxWebhook.verify).
 */
#define PK1_HEX		"d75a980182b10ab7d54bfed3c964073a" \
			"0ee172f3daa62325af021a68f707511a"
#define PK1_B64		"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="
#define PK1_PEM		"-----BEGIN PUBLIC KEY-----\n" \
	"MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n" \
	"-----END PUBLIC KEY-----\n"
#define PK2_HEX		"3d4017c3e843895a92b70aa74d1b7ebc" \
			"9c982ccf2ec4968cc0cd55f12af4660c"
#define PK2_B64		"PUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw="
#define PK2_PEM		"-----BEGIN PUBLIC KEY-----\n" \
	"MCowBQYDK2VwAyEAPUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw=\n" \
	"-----END PUBLIC KEY-----\n"
#define PK_T		1700000000
#define PK_TS		"1700000000"
/* Discord: the interactions PING, and a webhook event, signed ts+body. */
#define DC_PING		"{\"type\":1}"
#define DC_PING_SIG	"1695961a47c91a1ec033b819b7e87e3d" \
			"bc583dd0cee6d1fd0216f58ac87b6228" \
			"ae531ddbf91fb7bc28d7edf7f08604da" \
			"16f54624f38a6bc0614e4dc13cd47f0f"
#define DC_EV		"{\"version\":1,\"application_id\":" \
	"\"1234560123453231555\",\"type\":1,\"event\":{\"type\":" \
	"\"APPLICATION_DEAUTHORIZED\",\"timestamp\":" \
	"\"2024-10-18T14:42:53.064834\",\"data\":{\"user\":{\"id\":\"1\"}}}}"
#define DC_EV_SIG	"3a89533bfaf6d8c548ab7dea4346468e" \
			"07fa19e6fca7fcf4a8a9e3a1b15d1022" \
			"5da60802bdeabbb3d7c470206dcd583f" \
			"a236fef71b4f6243d5013a0f4910c60d"
#define DC_EV_SIG2	"9828f63dba7bb3f5a7cc43f9a29645e4" \
			"16d8dee4e07e177a997770aaef6b5ca1" \
			"08f38cd09e43211e150fb6d9d47b8d2e" \
			"c184b30ed660ee8152ba747fe145590a"
/* Telnyx: base64 over ts|body. */
#define TX_BODY		"{\"data\":{\"event_type\":\"message.received\"," \
	"\"id\":\"0ccc7b54-4df3-4bca-a65a-3da1ecc777f0\",\"occurred_at\":" \
	"\"2023-11-14T22:13:20.000+00:00\",\"payload\":{},\"record_type\":" \
	"\"event\"},\"meta\":{\"attempt\":1,\"delivered_to\":" \
	"\"https://example.com/webhooks\"}}"
#define TX_SIG		"lxjtJnvdgGzsPowQZ+C+mmZ/Jdcjy1hRswkwdfTL+jB53iNxWlUF" \
			"UnFlLZmHEvNMMKRihy60fhGsVrp7JjABBA=="
#define TX_SIG2		"rVPShDE26EWS1vd0MvjTqPM0IBmdhOpID3n88EIq8jiYLX8JAQgp" \
			"e94KXbOLGSPssCRm8Nu+4353lP7ecY6XAQ=="
/* SendGrid's two samples: key, timestamp, payload (CRLFs), signature. */
#define SG_KEY		"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW" \
	"4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g=="
#define SG_PEM		"-----BEGIN PUBLIC KEY-----\n" \
	"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfS\n" \
	"mpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g==\n" \
	"-----END PUBLIC KEY-----\n"
#define SG_T		1600112502
#define SG_TS		"1600112502"
#define SG_BODY		"[{\"email\":\"hello@world.com\",\"event\":\"dropped\"," \
	"\"reason\":\"Bounced Address\",\"sg_event_id\":\"ZHJvcC0xMDk5NDkxOS1" \
	"MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA\",\"sg_message_id\":\"LRzXl_NHStOG" \
	"hQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0\"," \
	"\"smtp-id\":\"<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid." \
	"net>\",\"timestamp\":1600112492}]\r\n"
#define SG_SIG		"MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEA" \
	"yBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15TluLtEZtM="
#define SG2_KEY		"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEQ4LIFtWztlsF7skF" \
	"qOncjD1lun4H5w8XOhyOArHW9RcIx/FfEzx6cikC/yPfUvwaX/JScE7Fc9CJD2afQ9Ok3Q=="
#define SG2_PEM		"-----BEGIN PUBLIC KEY-----\n" \
	"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEQ4LIFtWztlsF7skFqOncjD1lun4H\n" \
	"5w8XOhyOArHW9RcIx/FfEzx6cikC/yPfUvwaX/JScE7Fc9CJD2afQ9Ok3Q==\n" \
	"-----END PUBLIC KEY-----\n"
#define SG2_T		1619651159
#define SG2_TS		"1619651159"
#define SG2_BODY	"[{\"email\":\"invalid@gmail.com\",\"event\":" \
	"\"processed\",\"send_at\":0,\"sg_event_id\":\"cHJvY2Vzc2VkLTE5OTQyMTE" \
	"yLXFOd0JMZ1BRUWpXNkRKdktRd1NBYnctMA\",\"sg_message_id\":\"qNwBLgPQQ" \
	"jW6DJvKQwSAbw.filterdrecv-canary-547b64655b-cw6zx-1-6089EA4A-56.0\"," \
	"\"smtp-id\":\"<qNwBLgPQQjW6DJvKQwSAbw@ismtpd0178p1mdw1.sendgrid.net>" \
	"\",\"timestamp\":1619651146},\r\n{\"email\":\"invalid@gmail.com\"," \
	"\"event\":\"bounce\",\"ip\":\"167.89.101.76\",\"reason\":\"552 5.2.2 " \
	"The email account that you tried to reach is over quota and " \
	"inactive. Please direct the recipient to https://support.google." \
	"com/mail/?p=OverQuotaPerm c17si1130468pgv.34 - gsmtp\",\"sg_event_" \
	"id\":\"Ym91bmNlLTAtMTk5NDIxMTItcU53QkxnUFFRalc2REp2S1F3U0Fidy0w\"," \
	"\"sg_message_id\":\"qNwBLgPQQjW6DJvKQwSAbw.filterdrecv-canary-547b646" \
	"55b-cw6zx-1-6089EA4A-56.0\",\"smtp-id\":\"<qNwBLgPQQjW6DJvKQwSAbw@" \
	"ismtpd0178p1mdw1.sendgrid.net>\",\"status\":\"5.2.2\",\"timestamp\":" \
	"1619651147,\"tls\":1,\"type\":\"blocked\"}]\r\n"
#define SG2_SIG		"MEYCIQC/I4o6vCgqRYrTljjoVWB/GRWNtxeePlLMHr3x9ETeRQIh" \
	"AIpV+03nREPTTHWSW0wIOA0EoMPdcNgXa70yCaqDJlu5"
/* Standard Webhooks v1a: id.ts.body; and v1 (HMAC) with the spec's
 * example secret over the same bytes (python3 hmac). */
#define V1A_ID		"msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
#define V1A_T		1674087231
#define V1A_TS		"1674087231"
#define V1A_BODY	"{\"type\":\"contact.created\",\"timestamp\":" \
	"\"2022-11-03T20:26:10.344522Z\",\"data\":{\"id\":" \
	"\"1f81eb52-5198-4599-803e-771906343485\"}}"
#define V1A_SIG		"v1a,pbpYBMlty2hExn4zt0UTGb6BaP2Vq5AfyzjB9GGV3x/wCJKd" \
	"8UjOCf8Qhaji6TKY9C5eNMnlF0GG4udaO6B7Ag=="
#define V1A_SIG2	"v1a,Mtwy18SPEqMi1mTMod/6kxjak6Rb1R2BqICvygQlzsGFc7AC" \
	"D4m3cKE5Cpn3lUx7SuLI0FZ1xwdkQ/wSILgZAA=="
#define V1_SECRET	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define V1_SIG		"v1,ARw42xaAApl/nxRo+iPGYwSaMQaOwMo2eyH5JBRA+bQ="

static char	 pk_file[256];

static const char *const pk_env[] = {
	"ONCEHOOK_DB=/var/lib/oncehook/hooks.db",
	"ONCEHOOK_ENDPOINTS=dc,dcrot,dcpem,dcfile,tx,txrot,sg,sgrot,sgpem,"
	    "sw,swboth,swrot",
	"ONCEHOOK_DC_SCHEME=discord",
	"ONCEHOOK_DC_SECRET=" PK1_HEX,
	"ONCEHOOK_DCROT_SCHEME=discord",
	"ONCEHOOK_DCROT_SECRET=" PK2_HEX " " PK1_B64,
	/* A PEM block, its line breaks and all, then a hex key. */
	"ONCEHOOK_DCPEM_SCHEME=discord",
	"ONCEHOOK_DCPEM_SECRET=" PK2_PEM " " PK1_HEX,
	"ONCEHOOK_DCFILE_SCHEME=discord",
	/* ONCEHOOK_DCFILE_SECRET_FILE: pk_file, two PEM blocks (pk_get) */
	"ONCEHOOK_TX_SCHEME=telnyx",
	"ONCEHOOK_TX_SECRET=" PK1_B64,
	"ONCEHOOK_TXROT_SCHEME=telnyx",
	"ONCEHOOK_TXROT_SECRET=" PK1_PEM "\n" PK2_B64,
	"ONCEHOOK_SG_SCHEME=sendgrid",
	"ONCEHOOK_SG_SECRET=" SG_KEY,
	"ONCEHOOK_SGROT_SCHEME=sendgrid",
	"ONCEHOOK_SGROT_SECRET=" SG2_KEY " " SG_KEY,
	"ONCEHOOK_SGPEM_SCHEME=sendgrid",
	"ONCEHOOK_SGPEM_SECRET=" SG_PEM,
	"ONCEHOOK_SW_SCHEME=standard",
	"ONCEHOOK_SW_SECRET=whpk_" PK1_B64,
	"ONCEHOOK_SWBOTH_SCHEME=standard",
	"ONCEHOOK_SWBOTH_SECRET=" V1_SECRET " whpk_" PK2_B64,
	"ONCEHOOK_SWROT_SCHEME=standard",
	"ONCEHOOK_SWROT_SECRET=whpk_" PK2_B64 " whpk_" PK1_B64,
	NULL
};

static const char *
pk_get(const char *name, void *arg)
{
	if (strcmp(name, "ONCEHOOK_DCFILE_SECRET_FILE") == 0)
		return pk_file;
	return env_get(name, arg);
}

static const struct conf_endpoint *
pk_ep(const struct conf *cf, const char *name)
{
	size_t	 i;

	for (i = 0; i < cf->nendpoints; i++)
		if (strcasecmp(cf->endpoints[i].name, name) == 0)
			return &cf->endpoints[i];
	BAIL("no endpoint %s", name);
}

#define DC_H(sig, ts)	"HTTP_X_SIGNATURE_ED25519=" sig, \
			"HTTP_X_SIGNATURE_TIMESTAMP=" ts
#define TX_H(sig, ts)	"HTTP_TELNYX_SIGNATURE_ED25519=" sig, \
			"HTTP_TELNYX_TIMESTAMP=" ts
#define SG_H(sig, ts)	"HTTP_X_TWILIO_EMAIL_EVENT_WEBHOOK_SIGNATURE=" sig, \
			"HTTP_X_TWILIO_EMAIL_EVENT_WEBHOOK_TIMESTAMP=" ts
#define SW_H(sig)	"HTTP_WEBHOOK_ID=" V1A_ID, \
			"HTTP_WEBHOOK_TIMESTAMP=" V1A_TS, \
			"HTTP_WEBHOOK_SIGNATURE=" sig

/* body with its byte at i changed. */
static const char *
tampered(const char *body, size_t i)
{
	static char	 b[2048];

	snprintf(b, sizeof(b), "%s", body);
	b[i] ^= 1;
	return b;
}

static void
test_discord(const struct conf *cf)
{
	const struct conf_endpoint	*dc = pk_ep(cf, "dc");
	struct sig_verdict		 v;
	enum hook_err			 er;

	CHECK(dc->nsecrets == 1 && dc->secrets[0].kind == SECRET_ED25519 &&
	    dc->secrets[0].sz == 32, "discord: a hex key is 32 raw bytes");
	er = run(dc, ENV(DC_H(DC_PING_SIG, PK_TS)), DC_PING, PK_T, &v);
	CHECK(er == HOOK_OK, "discord: the PING verifies (RFC 8032 key 1)");
	er = run(dc, ENV(DC_H(DC_EV_SIG, PK_TS)), DC_EV, PK_T, &v);
	CHECK(er == HOOK_OK, "discord: a webhook event verifies");
	er = run(dc, ENV(DC_H(DC_EV_SIG2, PK_TS)), DC_EV, PK_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "no signature matched"),
	    "discord: key 2's signature refused (%s)", v.why);
	er = run(dc, ENV(DC_H(DC_EV_SIG, PK_TS)), tampered(DC_EV, 40), PK_T,
	    &v);
	CHECK(er == HOOK_ESIG, "discord: a body byte changed, refused");
	er = run(dc, ENV(DC_H(DC_EV_SIG, "1700000001")), DC_EV, PK_T, &v);
	CHECK(er == HOOK_ESIG, "discord: the timestamp is signed");
	er = run(dc, ENV(DC_H(DC_EV_SIG, PK_TS)), DC_EV, PK_T + 301, &v);
	CHECK(er == HOOK_ESTALE && v.skew == 301,
	    "discord: 301 s late, stale (%s)", v.why);
	er = run(dc, ENV(DC_H(DC_EV_SIG, PK_TS)), DC_EV, PK_T - 300, &v);
	CHECK(er == HOOK_OK, "discord: 300 s early, within tolerance");
	er = run(dc, ENV("HTTP_X_SIGNATURE_TIMESTAMP=" PK_TS), DC_EV, PK_T,
	    &v);
	CHECK(er == HOOK_ESIG, "discord: no signature header, refused (%s)",
	    v.why);
	er = run(dc, ENV("HTTP_X_SIGNATURE_ED25519=" DC_EV_SIG), DC_EV, PK_T,
	    &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "timestamp"),
	    "discord: no timestamp header, refused (%s)", v.why);
	er = run(dc, ENV(DC_H(DC_EV_SIG, "17000000x0")), DC_EV, PK_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "discord: a timestamp not a number, malformed");
	er = run(dc, ENV(DC_H("3a89533bfaf6d8c548ab7dea4346468e07fa19e6fca7"
	    "fcf4a8a9e3a1b15d10225da60802bdeabbb3d7c470206dcd583fa236fef71b4f"
	    "6243d5013a0f4910c6", PK_TS)), DC_EV, PK_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "discord: a 63-byte signature, malformed");
	er = run(dc, ENV(DC_H("zz89533bfaf6d8c548ab7dea4346468e07fa19e6fca7"
	    "fcf4a8a9e3a1b15d10225da60802bdeabbb3d7c470206dcd583fa236fef71b4f"
	    "6243d5013a0f4910c60d", PK_TS)), DC_EV, PK_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "discord: a signature not hex, malformed");
	er = run(dc, ENV(DC_H(DC_EV_SIG "00", PK_TS)), DC_EV, PK_T, &v);
	CHECK(er == HOOK_ESIG, "discord: 65 bytes of signature, refused");
	/* DC_EV_SIG with L added to S: malleated, the same R. */
	er = run(dc, ENV(DC_H("3a89533bfaf6d8c548ab7dea4346468e07fa19e6fca7"
	    "fcf4a8a9e3a1b15d10224a7afe5ed74dce0bae6168c34bc73754a236fef71b4f"
	    "6243d5013a0f4910c61d", PK_TS)), DC_EV, PK_T, &v);
	CHECK(er == HOOK_ESIG, "discord: S + L (malleated), refused");

	er = run(pk_ep(cf, "dcrot"), ENV(DC_H(DC_EV_SIG, PK_TS)), DC_EV, PK_T,
	    &v);
	CHECK(er == HOOK_OK, "discord: rotation, the second key (base64)");
	er = run(pk_ep(cf, "dcrot"), ENV(DC_H(DC_EV_SIG2, PK_TS)), DC_EV,
	    PK_T, &v);
	CHECK(er == HOOK_OK, "discord: rotation, the first key (hex)");
	CHECK(pk_ep(cf, "dcpem")->nsecrets == 2,
	    "discord: a PEM block in _SECRET is one key, the hex another");
	er = run(pk_ep(cf, "dcpem"), ENV(DC_H(DC_EV_SIG2, PK_TS)), DC_EV,
	    PK_T, &v);
	CHECK(er == HOOK_OK, "discord: the PEM key in _SECRET verifies");
	er = run(pk_ep(cf, "dcpem"), ENV(DC_H(DC_EV_SIG, PK_TS)), DC_EV,
	    PK_T, &v);
	CHECK(er == HOOK_OK, "discord: and the hex key after it");
	CHECK(pk_ep(cf, "dcfile")->nsecrets == 2,
	    "discord: a _SECRET_FILE of two PEM blocks is two keys");
	er = run(pk_ep(cf, "dcfile"), ENV(DC_H(DC_EV_SIG, PK_TS)), DC_EV,
	    PK_T, &v);
	CHECK(er == HOOK_OK, "discord: its first PEM key verifies");
	er = run(pk_ep(cf, "dcfile"), ENV(DC_H(DC_EV_SIG2, PK_TS)), DC_EV,
	    PK_T, &v);
	CHECK(er == HOOK_OK, "discord: its second PEM key verifies");
}

static void
test_telnyx(const struct conf *cf)
{
	const struct conf_endpoint	*tx = pk_ep(cf, "tx");
	struct sig_verdict		 v;
	enum hook_err			 er;

	er = run(tx, ENV(TX_H(TX_SIG, PK_TS)), TX_BODY, PK_T, &v);
	CHECK(er == HOOK_OK, "telnyx: ts|body verifies (RFC 8032 key 1)");
	er = run(tx, ENV(TX_H(TX_SIG2, PK_TS)), TX_BODY, PK_T, &v);
	CHECK(er == HOOK_ESIG, "telnyx: key 2's signature refused");
	er = run(tx, ENV(TX_H(TX_SIG, PK_TS)), tampered(TX_BODY, 50), PK_T,
	    &v);
	CHECK(er == HOOK_ESIG, "telnyx: a body byte changed, refused");
	er = run(tx, ENV(TX_H(TX_SIG, "1700000002")), TX_BODY, PK_T, &v);
	CHECK(er == HOOK_ESIG, "telnyx: the timestamp is signed");
	er = run(tx, ENV(TX_H(TX_SIG, PK_TS)), TX_BODY, PK_T - 301, &v);
	CHECK(er == HOOK_ESTALE, "telnyx: 301 s ahead of the clock, stale");
	er = run(tx, ENV("HTTP_TELNYX_TIMESTAMP=" PK_TS), TX_BODY, PK_T, &v);
	CHECK(er == HOOK_ESIG, "telnyx: no signature header, refused");
	er = run(tx, ENV("HTTP_TELNYX_SIGNATURE_ED25519=" TX_SIG), TX_BODY,
	    PK_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "timestamp"),
	    "telnyx: no timestamp header, refused");
	er = run(tx, ENV(TX_H("lxjtJnvdgGzsPowQZ+C+mmZ/Jdcjy1hRswkwdfTL+jB53i"
	    "NxWlUFUnFlLZmHEvNMMKRihy60fhGsVrp7JjAB", PK_TS)), TX_BODY, PK_T,
	    &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "telnyx: a 62-byte signature, malformed");
	er = run(tx, ENV(TX_H("not*base64", PK_TS)), TX_BODY, PK_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "telnyx: a signature not base64, malformed");
	er = run(tx, ENV(TX_H(DC_EV_SIG, PK_TS)), TX_BODY, PK_T, &v);
	CHECK(er == HOOK_ESIG, "telnyx: a hex signature, refused");
	er = run(pk_ep(cf, "txrot"), ENV(TX_H(TX_SIG, PK_TS)), TX_BODY, PK_T,
	    &v);
	CHECK(er == HOOK_OK, "telnyx: rotation, the PEM key");
	er = run(pk_ep(cf, "txrot"), ENV(TX_H(TX_SIG2, PK_TS)), TX_BODY,
	    PK_T, &v);
	CHECK(er == HOOK_OK, "telnyx: rotation, the base64 key after it");
}

static void
test_sendgrid(const struct conf *cf)
{
	const struct conf_endpoint	*sg = pk_ep(cf, "sg");
	struct sig_verdict		 v;
	enum hook_err			 er;
	char				 cut[sizeof(SG_BODY)];

	CHECK(sg->nsecrets == 1 && sg->secrets[0].kind == SECRET_P256 &&
	    sg->secrets[0].sz == 91, "sendgrid: the key is its 91-byte SPKI");
	er = run(sg, ENV(SG_H(SG_SIG, SG_TS)), SG_BODY, SG_T, &v);
	CHECK(er == HOOK_OK, "sendgrid: its published sample verifies");
	er = run(sg, ENV(SG_H(SG2_SIG, SG2_TS)), SG2_BODY, SG2_T, &v);
	CHECK(er == HOOK_ESIG, "sendgrid: the other sample's signature, "
	    "refused under this key");
	er = run(pk_ep(cf, "sgrot"), ENV(SG_H(SG2_SIG, SG2_TS)), SG2_BODY,
	    SG2_T, &v);
	CHECK(er == HOOK_OK, "sendgrid: its second sample (two events) "
	    "verifies under its key");
	er = run(pk_ep(cf, "sgrot"), ENV(SG_H(SG_SIG, SG_TS)), SG_BODY, SG_T,
	    &v);
	CHECK(er == HOOK_OK, "sendgrid: rotation, the second key");
	er = run(pk_ep(cf, "sgpem"), ENV(SG_H(SG_SIG, SG_TS)), SG_BODY, SG_T,
	    &v);
	CHECK(er == HOOK_OK, "sendgrid: the key as PEM verifies");
	er = run(sg, ENV(SG_H(SG_SIG, SG_TS)), tampered(SG_BODY, 30), SG_T,
	    &v);
	CHECK(er == HOOK_ESIG, "sendgrid: a body byte changed, refused");
	memcpy(cut, SG_BODY, sizeof(SG_BODY));
	cut[sizeof(SG_BODY) - 3] = '\0';
	er = run(sg, ENV(SG_H(SG_SIG, SG_TS)), cut, SG_T, &v);
	CHECK(er == HOOK_ESIG, "sendgrid: the body without its CRLF, refused");
	er = run(sg, ENV(SG_H(SG_SIG, "1600112503")), SG_BODY, SG_T, &v);
	CHECK(er == HOOK_ESIG, "sendgrid: the timestamp is signed");
	er = run(sg, ENV(SG_H(SG_SIG, SG_TS)), SG_BODY, SG_T + 301, &v);
	CHECK(er == HOOK_ESTALE, "sendgrid: 301 s late, stale");
	er = run(sg, ENV("HTTP_X_TWILIO_EMAIL_EVENT_WEBHOOK_TIMESTAMP=" SG_TS),
	    SG_BODY, SG_T, &v);
	CHECK(er == HOOK_ESIG, "sendgrid: no signature header, refused");
	er = run(sg, ENV("HTTP_X_TWILIO_EMAIL_EVENT_WEBHOOK_SIGNATURE="
	    SG_SIG), SG_BODY, SG_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "timestamp"),
	    "sendgrid: no timestamp header, refused");
	er = run(sg, ENV(SG_H("MEUCIGHQ", SG_TS)), SG_BODY, SG_T, &v);
	CHECK(er == HOOK_ESIG, "sendgrid: a cut signature, refused");
	er = run(sg, ENV(SG_H("***", SG_TS)), SG_BODY, SG_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "sendgrid: a signature not base64, malformed");
	/* The sample's S is high; its twin (r, n - S) is low: both match. */
	er = run(sg, ENV(SG_H("MEQCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6Z"
	    "UAiA352jxkzMFHWEakvZHkFpGvMu+Ix+PzzgcJOUKQR6+fg==", SG_TS)),
	    SG_BODY, SG_T, &v);
	CHECK(er == HOOK_OK, "sendgrid: the sample's low-S twin verifies too");
	/* The same r and S in BER (a long-form length): not DER. */
	er = run(sg, ENV(SG_H("MIFFAiBh0FbRo/mNy5BvXy3MX96nyNdEMrIA1pjDlZsRtLu"
	    "mVAIhAMgYlw1szPrjnuVtCbhvpbkAGzyKh4fPTNeU5bi7RGbT", SG_TS)),
	    SG_BODY, SG_T, &v);
	CHECK(er == HOOK_ESIG, "sendgrid: the sample in BER, refused");
}

static void
test_v1a(const struct conf *cf)
{
	const struct conf_endpoint	*sw = pk_ep(cf, "sw");
	const struct conf_endpoint	*both = pk_ep(cf, "swboth");
	struct sig_verdict		 v;
	enum hook_err			 er;

	CHECK(sw->nsecrets == 1 && sw->secrets[0].kind == SECRET_ED25519,
	    "standard: a whpk_ key is an Ed25519 key");
	er = run(sw, ENV(SW_H(V1A_SIG)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_OK, "standard: a v1a entry verifies under whpk_");
	er = run(sw, ENV(SW_H(V1A_SIG2)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_ESIG, "standard: key 2's v1a entry refused");
	er = run(sw, ENV(SW_H(V1_SIG " " V1A_SIG)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_OK, "standard: v1 then v1a, the v1a matches");
	er = run(sw, ENV(SW_H(V1A_SIG2 " " V1A_SIG)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_OK, "standard: two v1a entries, the second matches");
	er = run(sw, ENV(SW_H(V1A_SIG2 " " V1A_SIG2 " " V1A_SIG2 " "
	    V1A_SIG)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_OK, "standard: the 4th v1a entry (SIG_V1A_MAX) "
	    "is tried");
	er = run(sw, ENV(SW_H(V1A_SIG2 " " V1A_SIG2 " " V1A_SIG2 " "
	    V1A_SIG2 " " V1A_SIG)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_ESIG, "standard: a 5th v1a entry is not: each is "
	    "a verification of the body per key");
	er = run(sw, ENV(SW_H(V1_SIG)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_ESIG, "standard: a v1 entry is not checked against "
	    "a whpk_ key");
	er = run(sw, ENV(SW_H(V1A_SIG)), tampered(V1A_BODY, 10), V1A_T, &v);
	CHECK(er == HOOK_ESIG, "standard: v1a, a body byte changed, refused");
	er = run(sw, ENV(SW_H(V1A_SIG)), V1A_BODY, V1A_T + 301, &v);
	CHECK(er == HOOK_ESTALE, "standard: v1a 301 s late, stale");
	er = run(sw, ENV("HTTP_WEBHOOK_ID=msg_other",
	    "HTTP_WEBHOOK_TIMESTAMP=" V1A_TS, "HTTP_WEBHOOK_SIGNATURE="
	    V1A_SIG), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_ESIG, "standard: v1a, the id is signed");
	er = run(sw, ENV(SW_H("v1a,pbpYBMlty2hExn4zt0UTGb6BaP2Vq5AfyzjB9GGV3x"
	    "/wCJKd8UjOCf8Qhaji6TKY9C5eNMnlF0GG4udaO6B7")), V1A_BODY, V1A_T,
	    &v);
	CHECK(er == HOOK_ESIG, "standard: a cut v1a entry, refused");
	er = run(both, ENV(SW_H(V1_SIG)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_OK, "standard: whsec_ + whpk_, a v1 entry verifies");
	er = run(both, ENV(SW_H(V1A_SIG2)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_OK, "standard: whsec_ + whpk_, a v1a entry verifies");
	er = run(both, ENV(SW_H(V1A_SIG)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_ESIG, "standard: whsec_ + whpk_, another key's v1a "
	    "refused");
	er = run(pk_ep(cf, "swrot"), ENV(SW_H(V1A_SIG)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_OK, "standard: two whpk_ keys, the second matches");
	er = run(pk_ep(cf, "swrot"), ENV(SW_H(V1_SIG)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_ESIG, "standard: two whpk_ keys, a v1 entry refused");
}

/*
 * Without libcrypto (a build without OpenSSL, or no libssl3): the keys
 * load, and every public-key signature is a misconfiguration (500,
 * never a match nor a 401 the sender would take for its own fault);
 * standard's v1 entries, HMAC, still verify.
 */
static void
test_no_libcrypto(const struct conf *cf, const char *why)
{
	struct sig_verdict	 v;
	enum hook_err		 er;

	printf("# no libcrypto: %s\n", why);
	er = run(pk_ep(cf, "dc"), ENV(DC_H(DC_EV_SIG, PK_TS)), DC_EV, PK_T,
	    &v);
	CHECK(er == HOOK_ECONF && why_has(&v, "libcrypto"),
	    "discord without libcrypto: a misconfiguration (%s)", v.why);
	er = run(pk_ep(cf, "tx"), ENV(TX_H(TX_SIG, PK_TS)), TX_BODY, PK_T,
	    &v);
	CHECK(er == HOOK_ECONF, "telnyx without libcrypto: the same");
	er = run(pk_ep(cf, "sg"), ENV(SG_H(SG_SIG, SG_TS)), SG_BODY, SG_T,
	    &v);
	CHECK(er == HOOK_ECONF, "sendgrid without libcrypto: the same");
	er = run(pk_ep(cf, "sw"), ENV(SW_H(V1A_SIG)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_ECONF, "standard v1a without libcrypto: the same");
	er = run(pk_ep(cf, "swboth"), ENV(SW_H(V1_SIG)), V1A_BODY, V1A_T, &v);
	CHECK(er == HOOK_OK, "standard v1 without libcrypto: verified");
}

/* event_extract() of body on ep, no header. */
static enum hook_err
pk_event(const struct conf_endpoint *ep, const char *body, struct event *ev)
{
	struct testreq	 t;
	struct why	 why = { "", NULL };

	return event_extract(ep, mkreq(&t, NULL), body, strlen(body), ev,
	    &why);
}

static void
test_discord_events(const struct conf *cf)
{
	const struct conf_endpoint	*dc = pk_ep(cf, "dc");
	struct hook_answer		 a;
	struct sig_input		 in;
	struct testreq			 t;
	struct event			 ev;
	enum hook_err			 er;

	er = pk_event(dc, DC_PING, &ev);
	CHECK(er == HOOK_HANDSHAKE && ev.handshake != NULL &&
	    ev.handshake->answer != NULL,
	    "discord: {\"type\":1} is the interactions PING");
	memset(&a, 0, sizeof(a));
	in.rq = mkreq(&t, NULL);
	in.body = DC_PING;
	in.bodysz = strlen(DC_PING);
	in.now = PK_T;
	CHECK(er == HOOK_HANDSHAKE && sig_answer(dc, ev.handshake, &in,
	    ev.token, &a) == 0 && a.n == 1 && strcmp(a.name[0], "type") == 0 &&
	    strcmp(a.value[0], "1") == 0 && (a.number & 1),
	    "discord: answered {\"type\":1}, 1 a number");
	event_clear(&ev);
	er = pk_event(dc, "{\"type\": 1 }", &ev);
	CHECK(er == HOOK_HANDSHAKE, "discord: the PING with spaces too");
	event_clear(&ev);
	er = pk_event(dc, "{\"type\":\"1\"}", &ev);
	CHECK(er == HOOK_HANDSHAKE, "discord: a type \"1\" (a string) too");
	event_clear(&ev);
	er = pk_event(dc, "{\"version\":1,\"application_id\":"
	    "\"1234560123453231555\",\"type\":0}", &ev);
	CHECK(er == HOOK_HANDSHAKE && ev.handshake != NULL &&
	    ev.handshake->answer == NULL,
	    "discord: a webhook events PING (type 0) is a handshake, "
	    "no members");
	event_clear(&ev);
	er = pk_event(dc, DC_EV, &ev);
	CHECK(er == HOOK_OK && ev.key != NULL && ev.type != NULL &&
	    strcmp(ev.type, "APPLICATION_DEAUTHORIZED") == 0,
	    "discord: type 1 with an event member is an event (%s)",
	    ev.type != NULL ? ev.type : "no type");
	CHECK(er == HOOK_OK && ev.key != NULL && strlen(ev.key) == 64,
	    "discord: a webhook event's key is its body's hash");
	event_clear(&ev);
	er = pk_event(dc, "{\"type\":2,\"id\":\"1201\",\"data\":{}}", &ev);
	CHECK(er == HOOK_OK && ev.key != NULL && strcmp(ev.key, "1201") == 0,
	    "discord: an interaction (type 2) is an event keyed by its id");
	event_clear(&ev);
}

static void
test_sendgrid_batch(const struct conf *cf)
{
	const struct conf_endpoint	*sg = pk_ep(cf, "sg");
	const struct sig_batch		*b = scheme_batch(sg->scheme);
	struct testreq			 t;
	struct why			 why = { "", NULL };
	struct event			*items = NULL;
	size_t				 n = 0;
	enum hook_err			 er;

	if (b == NULL) {
		CHECK(0, "sendgrid: a batch scheme");
		return;
	}
	er = event_items(sg, mkreq(&t, NULL), b, SG_BODY, strlen(SG_BODY),
	    &items, &n, &why);
	CHECK(er == HOOK_OK && n == 1 && strcmp(items[0].key,
	    "ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA") == 0 &&
	    strcmp(items[0].type, "dropped") == 0,
	    "sendgrid: the sample is one event, keyed by sg_event_id");
	event_items_free(items, n);
	items = NULL;
	n = 0;
	er = event_items(sg, mkreq(&t, NULL), b, SG2_BODY, strlen(SG2_BODY),
	    &items, &n, &why);
	CHECK(er == HOOK_OK && n == 2 && strcmp(items[0].key,
	    "cHJvY2Vzc2VkLTE5OTQyMTEyLXFOd0JMZ1BRUWpXNkRKdktRd1NBYnctMA") ==
	    0 && strcmp(items[0].type, "processed") == 0 &&
	    strcmp(items[1].key,
	    "Ym91bmNlLTAtMTk5NDIxMTItcU53QkxnUFFRalc2REp2S1F3U0Fidy0w") == 0 &&
	    strcmp(items[1].type, "bounce") == 0,
	    "sendgrid: the second sample is two events, in order");
	event_items_free(items, n);
	items = NULL;
	n = 0;
	er = event_items(sg, mkreq(&t, NULL), b, "[{\"event\":\"open\"}]", 18,
	    &items, &n, &why);
	CHECK(er == HOOK_ENOKEY, "sendgrid: an item without sg_event_id, "
	    "the whole request refused");
	event_items_free(items, n);
}

static void
test_pubkey_schemes(void)
{
	struct conf	*cf;
	char		 err[256];
	const char	*tmp = getenv("TMPDIR");
	FILE		*f;
	int		 fd;

	snprintf(pk_file, sizeof(pk_file), "%s/t_sig.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if ((fd = mkstemp(pk_file)) == -1 || (f = fdopen(fd, "w")) == NULL)
		BAIL("mkstemp %s failed", pk_file);
	fputs("# the new key, then the old\n" PK1_PEM "\n" PK2_PEM, f);
	if (fclose(f) != 0)
		BAIL("cannot write %s", pk_file);
	cf = conf_load(pk_get, (void *)pk_env, err, sizeof(err));
	unlink(pk_file);
	if (cf == NULL)
		BAIL("conf_load: %s", err);
	if (pubkey_load(err, sizeof(err)) == 0) {
		test_discord(cf);
		test_telnyx(cf);
		test_sendgrid(cf);
		test_v1a(cf);
	} else
		test_no_libcrypto(cf, err);
	test_discord_events(cf);
	test_sendgrid_batch(cf);
	conf_free(cf);
}

/*
 * PayPal's published example (PayPal-Java-SDK, ValidateCertTest with
 * testClientCert.crt, a sandbox certificate that ended in 2019): the
 * certificate's key given (its fetch is tests/paypal.sh's), the signed
 * string and the CRC-32 are checked against PayPal's own signature.
 */
#define PP_BODY \
	"{\"id\":\"WH-2MW4820926242972J-6SG447389E205703U\",\"event_ver" \
	"sion\":\"1.0\",\"create_time\":\"2017-03-30T20:04:05.613Z\",\"" \
	"resource_type\":\"plan\",\"event_type\":\"BILLING.PLAN.CREATED" \
	"\",\"summary\":\"A billing plan was created\",\"resource\":{\"" \
	"merchant_preferences\":{\"setup_fee\":{\"currency\":\"USD\",\"" \
	"value\":\"1\"},\"return_url\":\"https://www.mta.org/wp-content" \
	"/plugins/AMS/api/Paypal/paypal/rest-api-sdk-php/sample/billing" \
	"/ExecuteAgreement.php?success=true\",\"cancel_url\":\"https://" \
	"www.mta.org/wp-content/plugins/AMS/api/Paypal/paypal/rest-api-" \
	"sdk-php/sample/billing/ExecuteAgreement.php?success=false\",\"" \
	"auto_bill_amount\":\"YES\",\"initial_fail_amount_action\":\"CO" \
	"NTINUE\",\"max_fail_attempts\":\"0\"},\"update_time\":\"2017-0" \
	"3-30T20:04:05.587Z\",\"create_time\":\"2017-03-30T20:04:05.587" \
	"Z\",\"name\":\"T-Shirt of the Month Club Plan\",\"description" \
	"\":\"Template creation.\",\"links\":[{\"href\":\"api.sandbox.p" \
	"aypal.com/v1/payments/billing-plans/P-2U911356NH683973BEDIWKUY" \
	"\",\"rel\":\"self\",\"method\":\"GET\"}],\"payment_definitions" \
	"\":[{\"name\":\"Regular Payments\",\"type\":\"REGULAR\",\"freq" \
	"uency\":\"Month\",\"frequency_interval\":\"2\",\"amount\":{\"c" \
	"urrency\":\"USD\",\"value\":\"100\"},\"cycles\":\"12\",\"charg" \
	"e_models\":[{\"type\":\"SHIPPING\",\"amount\":{\"currency\":\"" \
	"USD\",\"value\":\"10\"},\"id\":\"CHM-6H655806YS685182XEDIWKUY" \
	"\"}],\"id\":\"PD-5N450756VM995270VEDIWKUY\"}],\"id\":\"P-2U911" \
	"356NH683973BEDIWKUY\",\"state\":\"CREATED\",\"type\":\"FIXED\"" \
	"},\"links\":[{\"href\":\"https://api.sandbox.paypal.com/v1/not" \
	"ifications/webhooks-events/WH-2MW4820926242972J-6SG447389E2057" \
	"03U\",\"rel\":\"self\",\"method\":\"GET\"},{\"href\":\"https:/" \
	"/api.sandbox.paypal.com/v1/notifications/webhooks-events/WH-2M" \
	"W4820926242972J-6SG447389E205703U/resend\",\"rel\":\"resend\"," \
	"\"method\":\"POST\"}]}"
#define PP_SPKI \
	"MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA0wLC0HBxRhtJryzQJb" \
	"txSf+kFK9RG1EgWJ6hf6EW4q8yUVm09yVqRa9qWpWhTZ36QsCwfymPlF98Qywe" \
	"SHN/KYhuhc0XtU4mXMYXSGzmNtTr1VRWrV3zOtpc8F90QEqW1QNXGwqAwUm4Mq" \
	"ZUjyDVXfBsn/qrScW1uzOnFbmWntTcdJgOt0nzZ0aQcDr2AFJAq7ggoyFS6kbl" \
	"m0c59ML2slTFmrMNOO6x4bRZmmAcCdS+LJ+TS/hw0OcEjG9RBOOr/2hhnb+23B" \
	"4XOEXtAtaRVtN9jFW/OXkQ+zrbw9oWTNjuScIsBzAV88RI6yGxggOm3t2nJs2C" \
	"sWC2R2LeipUAwQIDAQAB"
#define PP_SIG \
	"aBjgm5/xljRYu3G64Q0axISrP2xcy7WbW1u4UTCKnQvyprOZ1a1BBmqn2Jdr6c" \
	"e8E76I3Ti/AL9y4VYSHyGSEaoE6dVQcCDebLbOXLH0fjTAbTc1/rmfdWmsk0DP" \
	"ltW84Y8W8jOHe3CLWDOwg5zmozyt+AceG2x5eOiw7mLSycaEoj/5RG+dOIWXnm" \
	"WcLEArbG3VFshy0wuhZrKuGa9C/bD4Ku+Y9gK7Bv5I5IuGRVnTGpcFnVG0KxOy" \
	"JxccLGyBVCIUMY5IZS7LkmJszQ3HZZFDTNihvgJHECSLwLhzUaysIye5G6CbbL" \
	"dtAmeeb6wiDciEAvr2dFf+SplOR4Lrng=="

static void
test_paypal_published(void)
{
	static unsigned char	 id[] = "96605875FF6516633";
	struct secret		 s[1] = { { id, sizeof(id) - 1, SECRET_ID } };
	struct conf_endpoint	 ep;
	struct testreq		 t;
	struct sig_input	 in;
	struct sig_verdict	 v;
	unsigned char		 spki[400];
	char			 why[256], *body;
	long			 n;
	const char *const	 env[] = {
		"HTTP_PAYPAL_TRANSMISSION_ID=071f7d20-1584-11e7-abf0-"
		    "6b62a8a99ac4",
		"HTTP_PAYPAL_TRANSMISSION_TIME=2017-03-30T20:04:05Z",
		"HTTP_PAYPAL_TRANSMISSION_SIG=" PP_SIG,
		"HTTP_PAYPAL_CERT_URL=https://api.sandbox.paypal.com/v1/"
		    "notifications/certs/CERT-360caa42-fca2a594-aa6a7f3c",
		"HTTP_PAYPAL_AUTH_ALGO=SHA256withRSA",
		NULL,
	};

	if (pubkey_load(why, sizeof(why)) == -1)
		return;		/* test_no_libcrypto() says what then */
	endpoint(&ep, "paypal", s, 1);
	n = crypto_unbase64(PP_SPKI, strlen(PP_SPKI), spki, sizeof(spki));
	in.rq = mkreq(&t, env);
	in.body = PP_BODY;
	in.bodysz = strlen(PP_BODY);
	in.now = 1490904245 + 60;
	CHECK(n > 0 && crypto_crc32(PP_BODY, strlen(PP_BODY)) == 3494065244UL &&
	    sigpub_paypal_check(&ep, &in, spki, (size_t)n, &v) == HOOK_OK,
	    "paypal: PayPal's published delivery verifies with its "
	    "certificate's key (CRC-32 3494065244)");
	body = strdup(PP_BODY);
	body[10] ^= 1;
	in.body = body;
	CHECK(sigpub_paypal_check(&ep, &in, spki, (size_t)n, &v) == HOOK_ESIG,
	    "paypal: its body changed by one bit is refused");
	free(body);
	in.body = PP_BODY;
	s[0].sz--;	/* another webhook id */
	CHECK(sigpub_paypal_check(&ep, &in, spki, (size_t)n, &v) == HOOK_ESIG,
	    "paypal: under another webhook id it is refused");
}

/*
 * PayPal's certificate URLs refused before any fetch: the allow-list's
 * edges, with the test's host list too (a trailing space in it is no
 * empty host: "https:///x" would reach a host curl makes of the path).
 */
static void
test_cert_urls(void)
{
	static const char *const bad[] = {
		"https://api.paypal.com./v1/notifications/certs/CERT-1",
		"https://api.paypal.com:8443/v1/notifications/certs/CERT-1",
		"https://api.paypal.com@evil.example/v1/notifications/certs/C",
		"https://evil.example@api.paypal.com/v1/notifications/certs/C",
		"https://evil.example\\@api.paypal.com/v1/notifications/certs/C",
		"https://api.paypal.com\\.evil.example/v1/notifications/certs/C",
		"https://api.paypal.com#@evil.example/v1/notifications/certs/C",
		"https://api.paypal.com?@evil.example/v1/notifications/certs/C",
		"https://api.paypal.com/v1/notifications/certs/../../../x",
		"https://api.paypal.com/v1/notifications/certs/%2e%2e/x",
		"https://api.paypal.com/v1/notifications/certs/C?x=1",
		"https://api.paypal.com/v1/notifications/certs/C#x",
		"https://api.paypal.com/v1/notifications/certs/",
		"https://api.paypal.com.evil.example/v1/notifications/certs/C",
		"https://xn--pypal-4ve.com/v1/notifications/certs/C",
		"http://api.paypal.com/v1/notifications/certs/C",
		"HTTPS://api.paypal.com/v1/notifications/certs/C",
		"https:///v1/notifications/certs/CERT-1",
		"https://127.0.0.1:1/v1/notifications/certs/C",
	};
	static char		 hosts[] = "127.0.0.2:1 ";
	struct conf_certs	 cc = { NULL, NULL, NULL };
	unsigned char		 spki[CERTS_SPKI_MAX];
	char			 url[700];
	const char		*why;
	size_t			 i, len;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		CHECK(certs_paypal(&cc, bad[i], 1700000000, spki, &len,
		    &why) == HOOK_ESIG && why != NULL &&
		    strstr(why, "not on PayPal's hosts") != NULL,
		    "cert URL refused: %s", bad[i]);
	}
	snprintf(url, sizeof(url), "https://api.paypal.com/v1/notifications/"
	    "certs/%0600d", 1);
	CHECK(certs_paypal(&cc, url, 1700000000, spki, &len, &why) ==
	    HOOK_ESIG, "cert URL refused: 640 bytes long");
	cc.hosts = hosts;
	why = NULL;
	CHECK(certs_paypal(&cc, "https:///v1/notifications/certs/CERT-1",
	    1700000000, spki, &len, &why) == HOOK_ESIG && why != NULL &&
	    strstr(why, "not on PayPal's hosts") != NULL,
	    "cert URL with no host refused, the test's hosts ending in a "
	    "space");
}

/*
 * A cache file that is a FIFO (or anything but a file) is no cached
 * certificate: passed over at once, not waited on for ever (holding
 * the cache's lock).  In a child, which an alarm ends if it hangs.
 */
static void
test_cert_cache_fifo(void)
{
	static char		 hosts[] = "127.0.0.1:1";
	static const char	 url[] = "https://127.0.0.1:1/v1/notifications/"
	    "certs/CERT-fifo";
	char			 dir[] = "/tmp/t_sig.XXXXXX", path[256];
	char			 hex[2 * CRYPTO_SHA256_LEN + 1];
	unsigned char		 md[CRYPTO_SHA256_LEN], spki[CERTS_SPKI_MAX];
	struct conf_certs	 cc = { NULL, hosts, NULL };
	const char		*why;
	size_t			 len;
	pid_t			 pid;
	int			 st = -1;

	if (mkdtemp(dir) == NULL || crypto_sha256(url, strlen(url), md) == -1)
		BAIL("mkdtemp or sha256");
	crypto_hex(md, sizeof(md), hex);
	snprintf(path, sizeof(path), "%s/%s.pem", dir, hex);
	if (mkfifo(path, 0600) == -1)
		BAIL("mkfifo %s", path);
	cc.cache = dir;
	if ((pid = tap_fork()) == 0) {
		(void)signal(SIGALRM, SIG_DFL);
		(void)alarm(5);
		_exit(certs_paypal(&cc, url, 1700000000, spki, &len, &why) ==
		    HOOK_ECERT ? 0 : 1);
	}
	if (pid == -1 || waitpid(pid, &st, 0) != pid)
		BAIL("fork or waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "cert cache: a FIFO in place of the file passed over, the host "
	    "tried (%s)", WIFSIGNALED(st) ? "hung: killed by the alarm" :
	    "ended");
	tap_rmdir(dir);
}

/*
 * Ed25519 keys of small order refused where keys are read: under the
 * identity one signature (R = 1, S = 0) verifies every message.  Each
 * with its sign bit set too; hex, whpk_ and PEM alike.
 */
static void
test_weak_ed25519(void)
{
	static const char *const weak[] = {
		"0000000000000000000000000000000000000000000000000000000000000000",
		"0000000000000000000000000000000000000000000000000000000000000080",
		"0100000000000000000000000000000000000000000000000000000000000000",
		"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
		"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
		"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
		"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
		"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
		"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"whpk_AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		"-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAAQAAAAAAAAAAAAAAAAAA"
		    "AAAAAAAAAAAAAAAAAAAAAAA=\n-----END PUBLIC KEY-----",
	};
	struct secret	 s;
	char		 err[256];
	size_t		 i;

	for (i = 0; i < sizeof(weak) / sizeof(weak[0]); i++) {
		err[0] = '\0';
		memset(&s, 0, sizeof(s));
		CHECK(sigpub_secret_ed25519(weak[i], &s, err, sizeof(err)) ==
		    -1 && strstr(err, "small order") != NULL,
		    "ed25519 key of small order refused: weak[%zu] (%s)", i,
		    err);
		free(s.p);
	}
	memset(&s, 0, sizeof(s));
	CHECK(sigpub_secret_ed25519("6d78d5d9cfc3de5f8aae6601cfda74d5ec1406"
	    "6727e04b7b6906c0be549e11bb", &s, err, sizeof(err)) == 0 &&
	    s.sz == 32, "ed25519: an ordinary key still read");
	free(s.p);
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
	test_basic();
	test_mailgun();
	test_new_conf();
	test_schemes();
	test_twilio();
	test_square();
	test_url_sign();
	test_pubkey_schemes();
	test_paypal_published();
	test_cert_urls();
	test_cert_cache_fifo();
	test_weak_ed25519();
	return tap_done();
}
