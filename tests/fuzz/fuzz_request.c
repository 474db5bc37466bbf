/* SPDX-License-Identifier: MIT */
/*
 * oncehook fuzz target (libFuzzer): hostile requests through everything
 * that reads them before the database does — signature verification of
 * every scheme, event extraction (JSON, keys, types, canonical hash) and
 * the response body.  The input is split at the first two NUL bytes into
 * a signature-header value, a second header value (timestamp, id), and
 * the body; the second value is also the query string (Twilio's
 * bodySHA256).  A form body (twilio) is also read as event_form() reads
 * it: what it makes must be JSON the pipeline reads; a batch scheme's
 * body (adyen) is also split into its items as event_items() splits it.
 * Built and run by tests/fuzz/run.sh; not part of make check.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "pipeline/event.h"
#include "hook.h"
#include "front/resp.h"
#include "pipeline/sig.h"

static const char *const schemes[] = {
	"hmac-sha256", "stripe", "github", "standard", "svix", "shopify",
	"slack", "paddle", "gitlab", "zoom", "twilio", "square", "razorpay",
	"woocommerce", "mollie", "linear", "webflow", "vercel", "cashfree",
	"basic", "mailgun", "adyen", "discord", "telnyx", "sendgrid"
};
#define NSCHEMES	(sizeof(schemes) / sizeof(schemes[0]))

static struct conf	*confs[NSCHEMES];

struct vars {
	const char	*scheme;
};

static const char *
get(const char *name, void *arg)
{
	const struct vars	*v = arg;

	if (strcmp(name, "ONCEHOOK_DB") == 0)
		return "/nonexistent/fuzz.db";
	if (strcmp(name, "ONCEHOOK_SCHEME") == 0)
		return v->scheme;
	/* A secret each scheme's parser takes (sig.c's secret_*()). */
	if (strcmp(name, "ONCEHOOK_SECRET") == 0)
		return strcmp(v->scheme, "basic") == 0 ?
		    "fuzz:MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" :
		    strcmp(v->scheme, "adyen") == 0 ?
		    "44782DEF547AAA06C910C43932B1EB0C"
		    "71FC68D9D0C057550C48EC2ACF6BA056" :
		    /* Public keys: RFC 8032's test key 1, SendGrid's sample. */
		    strcmp(v->scheme, "discord") == 0 ?
		    "d75a980182b10ab7d54bfed3c964073a"
		    "0ee172f3daa62325af021a68f707511a" :
		    strcmp(v->scheme, "telnyx") == 0 ?
		    "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=" :
		    strcmp(v->scheme, "sendgrid") == 0 ?
		    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/"
		    "7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6"
		    "wEA3F+g==" :
		    "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
	if (strcmp(name, "ONCEHOOK_URL") == 0 && scheme_signs_url(
	    scheme_find(v->scheme)))
		return "https://example.com/hooks?x=1";
	return NULL;
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {
		"HTTP_X_WEBHOOK_SIGNATURE", "HTTP_STRIPE_SIGNATURE",
		"HTTP_X_HUB_SIGNATURE_256", "HTTP_WEBHOOK_SIGNATURE",
		"HTTP_SVIX_SIGNATURE", "HTTP_X_SHOPIFY_HMAC_SHA256",
		"HTTP_X_SLACK_SIGNATURE", "HTTP_PADDLE_SIGNATURE",
		"HTTP_X_GITLAB_TOKEN", "HTTP_X_ZM_SIGNATURE", "HTTP_WEBHOOK_ID",
		"HTTP_WEBHOOK_TIMESTAMP", "HTTP_SVIX_ID", "HTTP_SVIX_TIMESTAMP",
		"HTTP_X_SLACK_REQUEST_TIMESTAMP", "HTTP_X_IDEMPOTENCY_KEY",
		"HTTP_X_GITHUB_DELIVERY", "HTTP_X_GITHUB_EVENT",
		"HTTP_X_SHOPIFY_EVENT_ID", "HTTP_X_SHOPIFY_TOPIC",
		"HTTP_X_GITLAB_EVENT_UUID", "HTTP_X_GITLAB_EVENT",
		"HTTP_X_ZM_REQUEST_TIMESTAMP",
		"HTTP_I_TWILIO_IDEMPOTENCY_TOKEN",
		"HTTP_X_TWILIO_WEBHOOKS_SIGNATURE_SETTINGS",
		"HTTP_X_RAZORPAY_EVENT_ID", "HTTP_X_WC_WEBHOOK_DELIVERY_ID",
		"HTTP_X_WC_WEBHOOK_TOPIC", "HTTP_LINEAR_DELIVERY",
		"HTTP_X_WEBFLOW_TIMESTAMP", "HTTP_X_WEBHOOK_TIMESTAMP",
		"HTTP_IDEMPOTENCY_KEY",
		/* Signatures again, the first value (see below). */
		"HTTP_X_TWILIO_SIGNATURE", "HTTP_X_SQUARE_HMACSHA256_SIGNATURE",
		"HTTP_X_RAZORPAY_SIGNATURE", "HTTP_X_WC_WEBHOOK_SIGNATURE",
		"HTTP_X_MOLLIE_SIGNATURE", "HTTP_LINEAR_SIGNATURE",
		"HTTP_X_WEBFLOW_SIGNATURE", "HTTP_X_VERCEL_SIGNATURE",
		"HTTP_AUTHORIZATION", "HTTP_X_SIGNATURE_ED25519",
		"HTTP_TELNYX_SIGNATURE_ED25519",
		"HTTP_X_TWILIO_EMAIL_EVENT_WEBHOOK_SIGNATURE",
		/* Their timestamps: the second value. */
		"HTTP_X_SIGNATURE_TIMESTAMP", "HTTP_TELNYX_TIMESTAMP",
		"HTTP_X_TWILIO_EMAIL_EVENT_WEBHOOK_TIMESTAMP",
	};
	struct req_header	 h[sizeof(names) / sizeof(names[0])];
	struct req		 rq;
	struct sig_input	 in;
	struct sig_verdict	 v;
	struct hook_answer	 a;
	struct event		 ev, pk;
	struct resp		 r;
	struct vars		 vars;
	struct why		 why = { "", NULL };
	char			*copy, *sigv, *other, *body, err[256], *json, *c;
	const struct sig_batch	*batch;
	struct event		*items;
	size_t			 i, j, n, bodysz, jsonsz, nitems;
	enum hook_err		 er;

	if ((copy = malloc(size + 3)) == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = copy[size + 1] = copy[size + 2] = '\0';
	sigv = copy;
	other = sigv + strlen(sigv) + 1;
	body = other + strlen(other) + 1;
	bodysz = body <= copy + size ? (size_t)(copy + size - body) : 0;

	for (n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
		h[n].name = names[n];
		h[n].namelen = strlen(names[n]);
		/* The first 10 and the later signatures (and basic's
		 * credential) take the first value; the rest the second. */
		h[n].value = n < 10 || (strstr(names[n], "_SIGNATURE") != NULL &&
		    strstr(names[n], "TIMESTAMP") == NULL) ||
		    strcmp(names[n], "HTTP_AUTHORIZATION") == 0 ? sigv : other;
	}
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.headers = h;
	rq.nheaders = n;
	rq.query_string = other;
	in.rq = &rq;
	in.body = body;
	in.bodysz = bodysz;
	in.now = 1614265330;

	for (i = 0; i < NSCHEMES; i++) {
		if (confs[i] == NULL) {
			vars.scheme = schemes[i];
			if ((confs[i] = conf_load(get, &vars, err,
			    sizeof(err))) == NULL)
				abort();
		}
		(void)sig_verify(&confs[i]->endpoints[0], &in, &v);
		er = event_extract(&confs[i]->endpoints[0], &rq, body, bodysz,
		    &ev, &why);
		memset(&a, 0, sizeof(a));
		if (er == HOOK_HANDSHAKE)
			(void)sig_answer(&confs[i]->endpoints[0], NULL, &in,
			    ev.token, &a);
		resp_make(&r, &(struct resp_in){ .err = er, .key = ev.key,
		    .answer = &a, .detail = why.client });
		resp_clear(&r);
		/* The quick look at a body jansson took finds its key and
		 * type, or nothing (pipeline/event.h, event_peek()). */
		if (event_peek(&confs[i]->endpoints[0], &rq, body, bodysz,
		    &pk)) {
			if (er == HOOK_HANDSHAKE)
				abort();
			if (er == HOOK_OK && (strcmp(pk.key, ev.key) != 0 ||
			    (pk.type == NULL) != (ev.type == NULL) ||
			    (pk.type != NULL && strcmp(pk.type, ev.type) != 0)))
				abort();
			event_clear(&pk);
		}
		event_clear(&ev);
		if ((batch = scheme_batch(confs[i]->endpoints[0].scheme)) !=
		    NULL) {
			/* A batch's body is JSON: no form scheme is one. */
			if (scheme_sends_form(confs[i]->endpoints[0].scheme))
				abort();
			if (event_items(&confs[i]->endpoints[0], &rq, batch,
			    body, bodysz, &items, &nitems, &why) == HOOK_OK) {
				for (j = 0; j < nitems; j++) {
					er = event_finish(&items[j]);
					if (er == HOOK_OK &&
					    (items[j].key == NULL ||
					    items[j].hash[0] == '\0'))
						abort();
				}
				event_items_free(items, nitems);
			}
			continue;
		}
		if (!scheme_sends_form(confs[i]->endpoints[0].scheme))
			continue;
		/* A form the pipeline reads as JSON: always JSON it takes. */
		if (event_form(body, bodysz, &json, &jsonsz, &why) != HOOK_OK)
			continue;
		if ((c = event_canonical(json, jsonsz)) == NULL)
			abort();
		free(c);
		er = event_extract(&confs[i]->endpoints[0], &rq, json, jsonsz,
		    &ev, &why);
		if (er == HOOK_EJSON && why.client != NULL &&
		    strstr(why.client, "not valid JSON") != NULL)
			abort();
		event_clear(&ev);
		free(json);
	}
	free(copy);
	return 0;
}
