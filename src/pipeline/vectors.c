/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the providers' signature vectors (see pipeline/vectors.h).
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "pipeline/vectors.h"

const struct vector vectors[] = {
	{ "hmac-sha256", "RFC 4231 section 4.3 (test case 2)",
	  HM_SECRET, HM_BODY, 0, NULL,
	  { { "X-Webhook-Signature", HM_SIG } },
	  "X-Webhook-Signature", 0 },
	{ "stripe", "made with Stripe's library (stripe-node "
	  "generateTestHeaderString, t=1492774577)",
	  ST_SECRET, ST_BODY, ST_T, NULL,
	  { { "Stripe-Signature", ST_SIG } },
	  "Stripe-Signature", 0 },
	{ "github", "GitHub docs, Validating webhook deliveries (test values)",
	  GH_SECRET, GH_BODY, 0, NULL,
	  { { "X-Hub-Signature-256", GH_SIG } },
	  "X-Hub-Signature-256", 0 },
	{ "standard", "Standard Webhooks specification and libraries' tests",
	  SW_SECRET, SW_BODY, SW_T, SW_ID,
	  { { "webhook-id", SW_ID }, { "webhook-timestamp", SW_TS },
	    { "webhook-signature", SW_SIG } },
	  "webhook-signature", 0 },
	{ "svix", "Svix docs, Verifying webhooks manually",
	  SW_SECRET, SW_BODY, SW_T, SW_ID,
	  { { "svix-id", SW_ID }, { "svix-timestamp", SW_TS },
	    { "svix-signature", SW_SIG } },
	  "svix-signature", 0 },
	{ "shopify", "Shopify docs, Verify a webhook (base64 HMAC-SHA256 "
	  "of the body); computed with Python hmac",
	  SH_SECRET, SH_BODY, 0, NULL,
	  { { "X-Shopify-Hmac-Sha256", SH_SIG } },
	  "X-Shopify-Hmac-Sha256", 0 },
	{ "slack", "Slack docs, Verifying requests from Slack (worked example)",
	  SL_SECRET, SL_BODY, SL_T, NULL,
	  { { "X-Slack-Request-Timestamp", SL_TS },
	    { "X-Slack-Signature", SL_SIG } },
	  "X-Slack-Signature", 0 },
	{ "paddle", "Paddle docs, Verify webhook signatures (ts=1671552777 "
	  "format); h1 computed with Python hmac",
	  PD_SECRET, PD_BODY, PD_T, NULL,
	  { { "Paddle-Signature", PD_SIG } },
	  "Paddle-Signature", 0 },
	{ "gitlab", "GitLab docs, webhook secret token (X-Gitlab-Token)",
	  GL_SECRET, "{\"object_kind\":\"push\"}", 0, NULL,
	  { { "X-Gitlab-Token", GL_SECRET } },
	  "X-Gitlab-Token", 1 },
	{ "basic", "RFC 7617 section 2 (Aladdin, open sesame)",
	  BA_SECRET, "{}", 0, NULL,
	  { { "Authorization", BA_AUTH } },
	  "Authorization", 1 },
	{ "mailgun", "Mailgun docs, Securing Webhooks (their token and "
	  "timestamp; key made up, signature by their Python example)",
	  MG_SECRET, MG_BODY, MG_T, MG_TOKEN,
	  { { NULL, NULL } },
	  NULL, 1 },
	{ "zoom", "Zoom docs, Using webhooks (v0:ts:body); computed with "
	  "Python hmac, made-up secret",
	  ZM_SECRET, ZM_BODY, ZM_T, NULL,
	  { { "x-zm-request-timestamp", ZM_TS },
	    { "x-zm-signature", ZM_SIG } },
	  "x-zm-signature", 0 },
	{ "razorpay", "computed (HMAC-SHA256 hex of the body); accepted by "
	  "razorpay 2.9.8's validateWebhookSignature",
	  RZ_SECRET, RZ_BODY, 0, RZ_ID,
	  { { "X-Razorpay-Event-Id", RZ_ID },
	    { "X-Razorpay-Signature", RZ_SIG } },
	  "X-Razorpay-Signature", 0 },
	{ "woocommerce", "computed (HMAC-SHA256 base64 of the body, as "
	  "WooCommerce's WC_Webhook signs it)",
	  WC_SECRET, WC_BODY, 0, WC_ID,
	  { { "X-WC-Webhook-Delivery-ID", WC_ID },
	    { "X-WC-Webhook-Signature", WC_SIG } },
	  "X-WC-Webhook-Signature", 0 },
	{ "mollie", "mollie-api-php's SignatureValidator tests (secret and "
	  "payload); hex computed with Python hmac",
	  MO_SECRET, MO_BODY, 0, NULL,
	  { { "X-Mollie-Signature", MO_SIG } },
	  "X-Mollie-Signature", 0 },
	{ "linear", "computed (HMAC-SHA256 hex of the body, webhookTimestamp "
	  "in it)",
	  LI_SECRET, LI_BODY, LI_T, LI_ID,
	  { { "Linear-Delivery", LI_ID }, { "Linear-Signature", LI_SIG } },
	  "Linear-Signature", 0 },
	{ "webflow", "computed (HMAC-SHA256 hex of timestamp:body, "
	  "milliseconds)",
	  WF_SECRET, WF_BODY, WF_T, NULL,
	  { { "x-webflow-timestamp", WF_TS },
	    { "x-webflow-signature", WF_SIG } },
	  "x-webflow-signature", 0 },
	{ "vercel", "computed (HMAC-SHA1 hex of the body)",
	  VE_SECRET, VE_BODY, 0, NULL,
	  { { "x-vercel-signature", VE_SIG } },
	  "x-vercel-signature", 0 },
	{ "cashfree", "computed (HMAC-SHA256 base64 of timestamp and body, "
	  "milliseconds)",
	  CF_SECRET, CF_BODY, CF_T, NULL,
	  { { "x-webhook-timestamp", CF_TS },
	    { "x-webhook-signature", CF_SIG } },
	  "x-webhook-signature", 0 },
	{ "twilio", "Twilio docs, Validate Incoming Requests (auth token "
	  "12345, its example URL and parameters)",
	  TW_SECRET, TW_BODY, 0, NULL,
	  { { "X-Twilio-Signature", TW_SIG } },
	  "X-Twilio-Signature", 0 },
	{ "square", "Square SDK's WebhooksHelper test vector (checked with "
	  "the npm package square 46.0.0)",
	  SQ_SECRET, SQ_BODY, 0, NULL,
	  { { "x-square-hmacsha256-signature", SQ_SIG } },
	  "x-square-hmacsha256-signature", 0 },
	{ "adyen", "Adyen docs, Verify HMAC signatures (the example item "
	  "and key; the signature is in the body)",
	  AD_SECRET, AD_BODY, 0, NULL,
	  { { NULL, NULL } },
	  NULL, 0 },
	/* The public-key schemes: verified, and re-signed where the
	 * private key is known (vector_more()). */
	{ "sendgrid", "SendGrid's published sample (sendgrid-nodejs "
	  "eventwebhook.spec.js: one event, CRLF-terminated)",
	  SGA_KEY, SGA_BODY, SGA_T, NULL,
	  { { "X-Twilio-Email-Event-Webhook-Signature", SGA_SIG },
	    { "X-Twilio-Email-Event-Webhook-Timestamp", SGA_TS } },
	  NULL, 0 },
	{ "sendgrid", "SendGrid's second published sample (the same tests: "
	  "two events)",
	  SGB_KEY, SGB_BODY, SGB_T, NULL,
	  { { "X-Twilio-Email-Event-Webhook-Signature", SGB_SIG },
	    { "X-Twilio-Email-Event-Webhook-Timestamp", SGB_TS } },
	  NULL, 0 },
	{ "discord", "DERIVED from RFC 8032's test key 1, not Discord's "
	  "(Discord publishes none); discord-interactions' verifyKey agrees",
	  RFC8032_HEX, DI_BODY, DI_T, NULL,
	  { { "X-Signature-Ed25519", DI_SIG },
	    { "X-Signature-Timestamp", DI_TS } },
	  "X-Signature-Ed25519", 0 },
	{ "telnyx", "DERIVED from RFC 8032's test key 1, not Telnyx's "
	  "(Telnyx publishes none); telnyx's TelnyxWebhook.verify agrees",
	  RFC8032_B64, TN_BODY, TN_T, NULL,
	  { { "telnyx-signature-ed25519", TN_SIG },
	    { "telnyx-timestamp", TN_TS } },
	  "telnyx-signature-ed25519", 0 },
	{ "standard", "v1a: DERIVED from RFC 8032's test key 1 (the "
	  "specification's v1a example has no key)",
	  "whpk_" RFC8032_B64, SWA_BODY, SWA_T, SWA_ID,
	  { { "webhook-id", SWA_ID }, { "webhook-timestamp", SWA_TS },
	    { "webhook-signature", SWA_SIG } },
	  "webhook-signature", 0 },
};

const size_t	nvectors = sizeof(vectors) / sizeof(vectors[0]);

const struct answer_vector answer_vectors[] = {
	{ "zoom", ZM_TOKEN, ZM_ENCRYPTED },
	{ "discord", NULL, "1" },	/* its PING answered {"type":1} */
};

const size_t	nanswer_vectors = sizeof(answer_vectors) /
		    sizeof(answer_vectors[0]);
const char *
vector_url(const struct vector *v)
{
	static const char *const urls[][2] = {
		{ "twilio", TW_URL },
		{ "square", SQ_URL },
	};
	size_t	 i;

	for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++)
		if (strcmp(v->scheme, urls[i][0]) == 0)
			return urls[i][1];
	return NULL;
}

const struct vector_more *
vector_more(const struct vector *v)
{
	static const struct vector_more	 more[] = {
		{ "sendgrid", SGA_KEY, NULL, 1 },
		{ "sendgrid", SGB_KEY, NULL, 2 },
		{ "discord", RFC8032_HEX, RFC8032_SEED, 0 },
		{ "telnyx", RFC8032_B64, RFC8032_SEED, 0 },
		{ "standard", "whpk_" RFC8032_B64, RFC8032_SEED, 0 },
	};
	size_t	 i;

	for (i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		if (strcmp(v->scheme, more[i].scheme) == 0 &&
		    strcmp(v->secret, more[i].secret) == 0)
			return &more[i];
	return NULL;
}
