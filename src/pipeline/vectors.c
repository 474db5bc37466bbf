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
};

const size_t	nvectors = sizeof(vectors) / sizeof(vectors[0]);

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
