/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the providers' signature vectors, one set for the binary's
 * `selftest` (src/cmd/selftest.c) and the unit tests (tests/unit/t_vectors.c).
 *
 * Each value is written once, here, as a macro (the tests splice them
 * into request strings at compile time); vectors[] in src/pipeline/vectors.c is
 * the table selftest walks.
 *
 * Where each vector comes from:
 *
 * - Standard Webhooks: the tests of the reference libraries in the
 *   specification's repository (github.com/standard-webhooks/
 *   standard-webhooks, under libraries/, the JavaScript one's among
 *   them): secret
 *   whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, id msg_p5jXN8AQM9LWM0D4loKWxJek,
 *   timestamp 1614265330, payload {"test": 2432232314}, signature
 *   v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=.  Checked at
 *   authoring time with python3 hmac/base64 and with the npm package
 *   standardwebhooks 1.1.1 (Webhook.sign), both giving that signature.
 * - Svix: the same vector, under svix- header names (Svix's own
 *   libraries' tests use these values; Standard Webhooks came from Svix).
 * - GitHub: the example of "Validating webhook deliveries" in GitHub's
 *   documentation: secret "It's a Secret to Everybody", payload
 *   "Hello, World!", X-Hub-Signature-256:
 *   sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17
 *   (python3 hmac agrees).
 * - Slack: the example of "Verifying requests from Slack" in Slack's API
 *   documentation: signing secret 8f742231b10e8888abcd99yyyzzz85a5,
 *   X-Slack-Request-Timestamp 1531420618, the slash-command body below,
 *   X-Slack-Signature
 *   v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503
 *   (python3 hmac over "v0:1531420618:" + body agrees).
 * - Paddle: Paddle's documentation ("Verify webhook signatures") shows
 *   a Paddle-Signature header such as ts=1671552777;h1=eb4d0dc8...db151
 *   (the value as recalled at authoring time), but not the secret and
 *   body behind it.  That header is checked for its layout only (it
 *   parses, and matches nothing here); the vector that verifies uses a
 *   made-up secret and body, its h1 computed with python3:
 *   hmac.new(secret, b"1671552777:" + body, sha256).hexdigest().
 * - Stripe: its documentation shows the header layout
 *   t=1492774577,v1=5257a869...,v0=6ffbb59b... without the secret and
 *   body behind it.  The vector that verifies was made with Stripe's own
 *   library, the npm package stripe 22.6.2:
 *   stripe.webhooks.generateTestHeaderString({ payload, secret:
 *   "whsec_test_secret", timestamp: 1492774577 }) with payload
 *   JSON.stringify({ id: "evt_test_webhook", object: "event" }, null, 2)
 *   (the payload of stripe-node's own webhook tests); python3 hmac over
 *   "1492774577." + payload with the secret's bytes, whsec_ included,
 *   agrees.
 * - Shopify publishes no webhook vector (its documentation shows code
 *   only): base64 HMAC-SHA256 of the body, made-up secret and body,
 *   computed with python3 hmac and base64.
 * - GitLab sends the secret token itself: the vector is the token.
 * - Twilio: the example of its request-validation documentation
 *   (twilio-php's and twilio-python's "Validate Incoming Requests"):
 *   auth token 12345, URL https://mycompany.com/myapp.php?foo=1&bar=2,
 *   the parameters CallSid, Caller, Digits, From, To below (posted as a
 *   form, '+' written %2B), X-Twilio-Signature
 *   RSOYDt4T1cUTdK1PDd93/VVr8B8=; twilio 6.3.1's validateRequest and
 *   python3 hmac (sha1) agree.
 * - Square: the vector of the Square SDK's WebhooksHelper tests (signature
 *   key, notification URL, body, x-square-hmacsha256-signature below);
 *   square 46.0.0's WebhooksHelper.verifySignature and python3 hmac
 *   over URL + body agree.
 */
#ifndef ONCEHOOK_VECTORS_H
#define ONCEHOOK_VECTORS_H

#include <stddef.h>

/* hmac-sha256: RFC 4231 section 4.3 (test case 2). */
#define HM_SECRET	"Jefe"
#define HM_BODY		"what do ya want for nothing?"
#define HM_SIG		"sha256=5bdcc146bf60754e6a042426089575c7" \
			"5a003f089d2739839dec58b964ec3843"

/* Standard Webhooks and Svix. */
#define SW_SECRET	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define SW_SECRET_BARE	"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define SW_ID		"msg_p5jXN8AQM9LWM0D4loKWxJek"
#define SW_T		1614265330
#define SW_TS		"1614265330"
#define SW_BODY		"{\"test\": 2432232314}"
#define SW_SIG		"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
/* A well-formed signature that is not the vector's: python3 hmac of the
 * same message under the secret whsec_b3RoZXI= (key bytes "other"). */
#define SW_SIG_OTHER	"v1,A9tvYUxvVRf3KZODcc7Ikc08j2ku8QechJYsWbg28NY="

/* GitHub. */
#define GH_SECRET	"It's a Secret to Everybody"
#define GH_BODY		"Hello, World!"
#define GH_HEX		"757107ea0eb2509fc211221cce984b8a" \
			"37570b6d7586c22c46f4379c8b043e17"
#define GH_SIG		"sha256=" GH_HEX

/* Slack. */
#define SL_SECRET	"8f742231b10e8888abcd99yyyzzz85a5"
#define SL_T		1531420618
#define SL_TS		"1531420618"
#define SL_BODY		"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&" \
    "team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&" \
    "user_id=U2CERLKJA&user_name=roadrunner&" \
    "command=%2Fwebhook-collect&text=&" \
    "response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J" \
    "%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&" \
    "trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
#define SL_SIG		"v0=a2114d57b48eac39b9ad189dd8316235" \
			"a7b4a8d21a10bd27519666489c69b503"

/* Paddle: the documented header (layout only), and a computed vector. */
#define PD_DOC		"ts=1671552777;h1=eb4d0dc8853be92b7f063b9f3ba5233e" \
			"b920a09459b6e6b2c26705b4364db151"
#define PD_SECRET	"pdl_ntfset_01h8bkrrvdv8dbrpp2fv4x3p8n_secretkey"
#define PD_T		1671552777
#define PD_BODY		"{\"event_id\":\"evt_01h8bkrrvdv8dbrpp2fv4x3p8n\"," \
    "\"event_type\":\"transaction.completed\"," \
    "\"occurred_at\":\"2023-08-21T11:57:57.441285Z\"," \
    "\"data\":{\"id\":\"txn_01h8bkrrvdv8dbrpp2fv4x3p8n\"}}"
#define PD_H1		"532eef824c0d98d3fb4ed733c29b2ebc" \
			"0349816b32a688835d41596f42b1e57f"
#define PD_SIG		"ts=1671552777;h1=" PD_H1

/* Stripe: stripe-node's generateTestHeaderString, and the docs' values. */
#define ST_SECRET	"whsec_test_secret"
#define ST_T		1492774577
#define ST_BODY		"{\n  \"id\": \"evt_test_webhook\",\n" \
			"  \"object\": \"event\"\n}"
#define ST_SIG		"t=1492774577,v1=c2f890decbc5ede7c5060bb9a6d31e06" \
			"26a4342bacb9aeae2adb1bcea72f9812"
#define ST_DOC_V1	"5257a869e7ecebeda32affa62cdca3fa" \
			"51cad7e77a0e56ff536d0ce8e108d8bd"
#define ST_DOC_V0	"6ffbb59b2300aae63f272406069a9788" \
			"598b792a944a07aba816edb039989a39"

/* Shopify: computed. */
#define SH_SECRET	"hush"
#define SH_BODY		"{\"id\":820982911946154508,\"email\":\"jon@doe.ca\"," \
			"\"total_price\":\"254.98\"}"
#define SH_SIG		"ZNdwthQjVKmz3Ou/fTvJTjIv0sVH/V3K4KGg68C6tPY="

/* GitLab: the token. */
#define GL_SECRET	"glwht-e2e-token-6d1f"

/* Twilio: its documentation's example, posted as a form. */
#define TW_SECRET	"12345"
#define TW_URL		"https://mycompany.com/myapp.php?foo=1&bar=2"
#define TW_BODY		"CallSid=CA1234567890ABCDE&Caller=%2B14158675309&" \
			"Digits=1234&From=%2B14158675309&To=%2B18005551212"
#define TW_SIG		"RSOYDt4T1cUTdK1PDd93/VVr8B8="

/* Square: the SDK's test vector. */
#define SQ_SECRET	"Ibxx_5AKakO-3qeNVR61Dw"
#define SQ_URL		"https://webhook.site/679a4f3a-dcfa-49ee-bac5-" \
			"9d0edad886b9"
#define SQ_BODY		"{\"merchant_id\":\"MLEFBHHSJGVHD\",\"type\":" \
    "\"webhooks.test_notification\",\"event_id\":\"ac3ac95b-f97d-458c-" \
    "a6e6-18981597e05f\",\"created_at\":\"2022-07-13T20:30:59.037339943Z\"" \
    ",\"data\":{\"type\":\"webhooks\",\"id\":\"bc368e64-01aa-407e-b46e-" \
    "3231809b1129\"}}"
#define SQ_SIG		"GF4YkrJgGBDZ9NIYbNXBnMzqb2HoL4RW/S6vkZ9/2N4="

#define VEC_HEADERS	4

/* One provider's request as documented, and how to check it. */
struct vector {
	const char	*scheme;
	const char	*source;	/* where the vector comes from */
	const char	*secret;
	const char	*body;
	long long	 now;		/* signing time (0: none) */
	const char	*id;		/* delivery id, for re-signing */
	const char	*headers[VEC_HEADERS][2];
	const char	*signature;	/* the header sign must reproduce */
	int		 bodyless;	/* the signature does not cover the body */
};

/* One vector per scheme. */
extern const struct vector	vectors[];
extern const size_t		nvectors;

/* The public URL a URL-signed vector (twilio, square) was signed for,
 * its endpoint's ONCEHOOK_URL; NULL for the others. */
const char			*vector_url(const struct vector *);

#endif
