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
 * - basic: RFC 7617 section 2's example, user "Aladdin", password
 *   "open sesame", Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==
 *   (python3 base64 agrees).
 * - Mailgun's "Securing Webhooks" page shows a signature block (token
 *   e0b54771...e123, timestamp 1770920772) without the key behind it,
 *   its signature ending 12345: made up.  The vector keeps that token and
 *   timestamp with a made-up key, the signature computed as the page's
 *   Python example does: hmac.new(key, (timestamp + token).encode(),
 *   sha256).hexdigest().  Signing it again is t_sig's (the body
 *   sign makes, byte for byte); selftest re-signs header vectors only.
 * - Zoom publishes no vector ("Using webhooks" in Zoom's developer
 *   documentation shows the message "v0:" + timestamp + ":" + body, and a
 *   url_validation answer without its secret): a made-up secret, a body
 *   of the documented shape, x-zm-signature computed with python3
 *   hmac.new(secret, b"v0:1658940994:" + body, sha256).hexdigest(); the
 *   encryptedToken of plainToken qgg8vlvZRS6UYooatFL8Aw under the same
 *   secret the same way.
 * - Mollie: the secret and payload of the tests of Mollie's own PHP
 *   library (mollie-api-php, tests/Webhooks/SignatureValidatorTest.php:
 *   test_webhook_secret, {"id":"tr_12345","event_type":
 *   "payment-link.paid"}), whose SignatureValidator::createSignature is
 *   hash_hmac('sha256', payload, secret); the hex computed with python3
 *   hmac.  Mollie's documentation shows code, no values.
 * - Razorpay, WooCommerce, Linear, Webflow, Vercel and Cashfree publish
 *   no secret, body and signature together (Webflow's and Cashfree's
 *   pages show a timestamp, 1663849649733 and 1617695238078, without
 *   the rest): made-up secrets and bodies, the MACs computed with
 *   python3 hmac, base64 and hashlib (sha1 for Vercel) as each provider
 *   documents its scheme; Razorpay's also accepted by
 *   Razorpay.validateWebhookSignature of the npm package razorpay
 *   2.9.8.  Those of Webflow and Cashfree are signed at a whole second
 *   (oncehook sign's resolution), and at the documented millisecond
 *   timestamps too (WF_SIG_733, CF_SIG_078: verified, not re-signed).
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
 * - Adyen: the example of "Verify HMAC signatures" (docs.adyen.com,
 *   development-resources/webhooks/secure-webhooks/verify-hmac-
 *   signatures): HMAC key 44782DEF...BA056 (hex), an AUTHORISATION item
 *   of pspReference 7914073381342284, merchantAccountCode TestMerchant,
 *   merchantReference TestPayment-1407325143704, 1130 EUR, success
 *   "true", whose signed text is
 *   "7914073381342284::TestMerchant:TestPayment-1407325143704:1130:EUR:
 *   AUTHORISATION:true" and hmacSignature
 *   coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0= (openssl dgst -hmac
 *   with the hex key agrees).  The signature is in the body: oncehook
 *   sign does not make it.
 * - SendGrid: the two samples of SendGrid's own library's tests
 *   (sendgrid-nodejs, packages/eventwebhook/src/eventwebhook.spec.js;
 *   the npm package @sendgrid/eventwebhook 8.0.0): public key, timestamp,
 *   payload and signature, the payload's bytes as sent, a CRLF after
 *   each event and at the end (without the last CRLF nothing verifies).
 *   The first is one "dropped" event, the second a "processed" and a
 *   "bounce": a batch, one event per element.  Both signatures have a
 *   high S.  ECDSA signs with a random nonce and the private keys are
 *   not published: these are verified, not signed again.
 * - Discord, Telnyx and Standard Webhooks' v1a publish no vector (their
 *   libraries' tests make fresh keys; the specification's v1a example
 *   has no key): these are DERIVED from RFC 8032's test key 1 (section
 *   7.1, TEST 1: seed 9d61b19d...7f60, public key d75a9801...511a), not
 *   made by the providers.  Ed25519 being deterministic, sign makes the
 *   same signature again from the seed.  Discord's ({"type":1} at
 *   1700000000) was accepted by discord-interactions 4.4.0's verifyKey,
 *   Telnyx's by telnyx 7.24.0's TelnyxWebhook.verify; the v1a one by
 *   node's crypto and openssl pkeyutl.
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

/* Zoom: computed. */
#define ZM_SECRET	"zoom-webhook-secret-token"
#define ZM_T		1658940994
#define ZM_TS		"1658940994"
#define ZM_BODY		"{\"event\":\"meeting.started\",\"event_ts\":" \
    "1658940993000,\"payload\":{\"account_id\":\"D8cJuqWVQ623CI4Q8yQK0Q\"," \
    "\"object\":{\"id\":\"89690084012\",\"uuid\":" \
    "\"YaWOFdQbQUK/uJXtt3SGdw==\",\"topic\":\"oncehook\"}}}"
#define ZM_SIG		"v0=d1a87e8bcf8034c24b01b563952c994f" \
			"8168c4d947757309716e93cdee93ca15"
#define ZM_TOKEN	"qgg8vlvZRS6UYooatFL8Aw"
#define ZM_ENCRYPTED	"303d596c41398000067ebaef31f940ff" \
			"99945195fe501fc03a7549f882aa6c08"
/* Razorpay: computed; razorpay 2.9.8's validateWebhookSignature accepts it. */
#define RZ_SECRET	"razorpay-selftest-webhook-secret"
#define RZ_ID		"evt_selftest_0001"
#define RZ_BODY		\
			"{\"entity\":\"event\",\"account_id\":\"acc_BFQ7uQEa" \
			"a7j2z7\",\"event\":\"payment.captured\",\"contains" \
			"\":[\"payment\"],\"payload\":{\"payment\":{\"entity\"" \
			":{\"id\":\"pay_DESlfW9H8K9uqM\",\"entity\":\"paymen" \
			"t\",\"amount\":100,\"currency\":\"INR\",\"status\":\"c" \
			"aptured\"}}},\"created_at\":1567674606}"
#define RZ_SIG		"6c3f7406ecdbaa026b6f5e2b0a55dc20" \
			"70d81498b23f3845b890e4482d23c83c"

/* WooCommerce: computed (base64). */
#define WC_SECRET	"woocommerce-selftest-secret"
#define WC_ID		"3a4f1c2e9b7d0a51"
#define WC_BODY		\
			"{\"id\":727,\"status\":\"processing\",\"currency\":\"" \
			"USD\",\"total\":\"29.35\"}"
#define WC_SIG		"FBF1KlBfASxJJ/wUJq5se/tfNCgr5cQ6kl387fGTvUk="

/* Mollie: the secret and payload of mollie-api-php's own tests. */
#define MO_SECRET	"test_webhook_secret"
#define MO_BODY		\
			"{\"id\":\"tr_12345\",\"event_type\":\"payment-link." \
			"paid\"}"
#define MO_HEX		"e479a5e4aaa17db94cfc546071e10e91" \
			"c0b37f21e464e751ebdd7d7ad2ffd146"
#define MO_SIG		"sha256=" MO_HEX

/* Linear: computed; its time is the body's webhookTimestamp. */
#define LI_SECRET	"lin_wh_selftest_signing_secret"
#define LI_T		1676056940
#define LI_ID		"234d1a4e-b617-4388-90fe-adc3633d6b72"
#define LI_BODY		\
			"{\"action\":\"create\",\"type\":\"Issue\",\"data\":{\"i" \
			"d\":\"2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9\",\"t" \
			"itle\":\"Selftest\"},\"url\":\"https://linear.app/" \
			"e/issue/E-1\",\"webhookTimestamp\":167605694050" \
			"8}"
#define LI_SIG		"7680c2f55a8fc482551a7d90aa627a8e" \
			"eca6ab194c5bd808a6c56403b50f66e0"

/* Webflow: computed; the time in milliseconds. */
#define WF_SECRET	"webflow-selftest-client-secret"
#define WF_T		1663849649
#define WF_TS		"1663849649000"
#define WF_BODY		\
			"{\"triggerType\":\"form_submission\",\"payload\":{" \
			"\"name\":\"Contact Us\",\"siteId\":\"65427cf400e02b" \
			"306eaa049c\",\"data\":{\"email\":\"zaphod@heartofg" \
			"old.ai\"},\"id\":\"6321ca84df3949bfc6752327\"}}"
#define WF_SIG		"e33d82838746269217f3b7db711e533f" \
			"5c8e54f66ab1dc5d3beb0129c74426bb"
/* The same at 1663849649733, the docs' timestamp (not whole seconds). */
#define WF_SIG_733	"d0406856f77dfc0a648cb85c81d50ba1" \
			"52527193dac36f5919910415ff69043f"

/* Vercel: computed (HMAC-SHA1). */
#define VE_SECRET	"vercel-selftest-webhook-secret"
#define VE_BODY		\
			"{\"id\":\"evt_selftest\",\"type\":\"deployment.crea" \
			"ted\",\"createdAt\":1700000000000,\"payload\":{\"d" \
			"eployment\":{\"id\":\"dpl_selftest\"}}}"
#define VE_SIG		"f13539b6150123ef832f8314dc2678feda87f011"

/* Cashfree: computed; the time in milliseconds, no joiner. */
#define CF_SECRET	"cashfree-selftest-client-secret"
#define CF_T		1617695238
#define CF_TS		"1617695238000"
#define CF_BODY		\
			"{\"data\":{\"order\":{\"order_id\":\"order_OFRfOi8A" \
			"Bp\",\"order_amount\":2},\"payment\":{\"cf_payment" \
			"_id\":975678721,\"payment_status\":\"SUCCESS\"}}," \
			"\"event_time\":\"2021-04-06T13:17:18+05:30\",\"ty" \
			"pe\":\"PAYMENT_SUCCESS_WEBHOOK\"}"
#define CF_SIG		"ksfMHGs+2pj73mp2HXeUJLK1iVKRHb9vllRyS2ATDXQ="
/* The same at 1617695238078, the docs' timestamp. */
#define CF_SIG_078	"5RSwOANVK5JC9SuB1ho5lx0mLaAAZd9YUYUT3V5KsQQ="

/* basic: RFC 7617 section 2. */
#define BA_SECRET	"Aladdin:open sesame"
#define BA_AUTH		"Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="

/* mailgun: the documented token and timestamp, a made-up key. */
#define MG_SECRET	"key-selftest-mailgun-0123456789"
#define MG_T		1770920772
#define MG_TOKEN	"e0b5477167110d68991efc6b9f89f0a11066af27834600e123"
#define MG_BODY		"{\"signature\":{\"timestamp\":\"1770920772\"," \
			"\"token\":\"" MG_TOKEN "\",\"signature\":" \
			"\"497d020564f29767dc63c073c89592c9" \
			"f7a3ec79fe9aaa874d3961622505c3dd\"}," \
			"\"event-data\":{\"event\":\"delivered\"}}"
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
/* Adyen: its documentation's example (above); two items for the tests. */
#define AD_SECRET	"44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C" \
			"48EC2ACF6BA056"
#define AD_SIG		"coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0="
#define AD_ITEM(sig)	\
			"{\"NotificationRequestItem\":{\"additionalData\":" \
			"{\"hmacSignature\":\"" sig "\"},\"amount\":{\"cu" \
			"rrency\":\"EUR\",\"value\":1130},\"eventCode\":" \
			"\"AUTHORISATION\",\"merchantAccountCode\":\"TestM" \
			"erchant\",\"merchantReference\":\"TestPayment-140" \
			"7325143704\",\"pspReference\":\"7914073381342284" \
			"\",\"success\":\"true\"}}"
#define AD_BATCH(items)	"{\"live\":\"false\",\"notificationItems\":[" \
			items "]}"
#define AD_BODY		AD_BATCH(AD_ITEM(AD_SIG))

/* SendGrid's two samples (above). */
#define SGA_KEY		"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW" \
	"4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g=="
#define SGA_T		1600112502
#define SGA_TS		"1600112502"
#define SGA_BODY	"[{\"email\":\"hello@world.com\",\"event\":\"dropped\"," \
	"\"reason\":\"Bounced Address\",\"sg_event_id\":\"ZHJvcC0xMDk5NDkxOS1" \
	"MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA\",\"sg_message_id\":\"LRzXl_NHStOG" \
	"hQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0\"," \
	"\"smtp-id\":\"<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid." \
	"net>\",\"timestamp\":1600112492}]\r\n"
#define SGA_SIG		"MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEA" \
	"yBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15TluLtEZtM="
#define SGB_KEY		"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEQ4LIFtWztlsF7skF" \
	"qOncjD1lun4H5w8XOhyOArHW9RcIx/FfEzx6cikC/yPfUvwaX/JScE7Fc9CJD2afQ9Ok3Q=="
#define SGB_T		1619651159
#define SGB_TS		"1619651159"
#define SGB_BODY	"[{\"email\":\"invalid@gmail.com\",\"event\":" \
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
#define SGB_SIG		"MEYCIQC/I4o6vCgqRYrTljjoVWB/GRWNtxeePlLMHr3x9ETeRQIh" \
	"AIpV+03nREPTTHWSW0wIOA0EoMPdcNgXa70yCaqDJlu5"

/* RFC 8032's test key 1 (section 7.1, TEST 1), in each scheme's form. */
#define RFC8032_SEED	"9d61b19deffd5a60ba844af492ec2cc4" \
			"4449c5697b326919703bac031cae7f60"
#define RFC8032_HEX	"d75a980182b10ab7d54bfed3c964073a" \
			"0ee172f3daa62325af021a68f707511a"
#define RFC8032_B64	"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="
/* Discord, Telnyx, Standard Webhooks v1a: derived from that key. */
#define DI_T		1700000000
#define DI_TS		"1700000000"
#define DI_BODY		"{\"type\":1}"
#define DI_SIG		"1695961a47c91a1ec033b819b7e87e3d" \
			"bc583dd0cee6d1fd0216f58ac87b6228" \
			"ae531ddbf91fb7bc28d7edf7f08604da" \
			"16f54624f38a6bc0614e4dc13cd47f0f"
#define TN_T		1700000000
#define TN_TS		"1700000000"
#define TN_BODY		"{\"data\":{\"event_type\":\"message.received\"," \
	"\"id\":\"0ccc7b54-4df3-4bca-a65a-3da1ecc777f0\",\"occurred_at\":" \
	"\"2023-11-14T22:13:20.000+00:00\",\"payload\":{},\"record_type\":" \
	"\"event\"},\"meta\":{\"attempt\":1,\"delivered_to\":" \
	"\"https://example.com/webhooks\"}}"
#define TN_SIG		"lxjtJnvdgGzsPowQZ+C+mmZ/Jdcjy1hRswkwdfTL+jB53iNxWlUF" \
			"UnFlLZmHEvNMMKRihy60fhGsVrp7JjABBA=="
#define SWA_ID		"msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
#define SWA_T		1674087231
#define SWA_TS		"1674087231"
#define SWA_BODY	"{\"type\":\"contact.created\",\"timestamp\":" \
	"\"2022-11-03T20:26:10.344522Z\",\"data\":{\"id\":" \
	"\"1f81eb52-5198-4599-803e-771906343485\"}}"
#define SWA_SIG		"v1a,pbpYBMlty2hExn4zt0UTGb6BaP2Vq5AfyzjB9GGV3x/wCJKd" \
			"8UjOCf8Qhaji6TKY9C5eNMnlF0GG4udaO6B7Ag=="

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

/* One vector per scheme, more for some (SendGrid's two, standard's v1
 * and v1a). */
extern const struct vector	vectors[];
extern const size_t		nvectors;

/*
 * A handshake's answer to a token, in the request of the scheme's
 * vector (its secret): the last member of the answer (Zoom's
 * encryptedToken).
 */
struct answer_vector {
	const char	*scheme;
	const char	*token;
	const char	*answer;
};

extern const struct answer_vector	answer_vectors[];
extern const size_t			nanswer_vectors;
/* The public URL a URL-signed vector (twilio, square) was signed for,
 * its endpoint's ONCEHOOK_URL; NULL for the others. */
const char			*vector_url(const struct vector *);

/*
 * What a public-key vector has more: the private key behind it where
 * it is published (RFC 8032's), from which sign makes the vector's
 * signature again; the events of its body where the scheme's body is a
 * batch.  NULL for the shared-secret vectors.
 */
struct vector_more {
	const char	*scheme;
	const char	*secret;	/* the vector's key: which vector */
	const char	*private;	/* its private key, or NULL */
	size_t		 items;		/* events in a batch, or 0 */
};
const struct vector_more	*vector_more(const struct vector *);

#endif
