/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the providers' published test vectors (src/pipeline/sig.c).
 *
 * Each vector is checked both ways: the request a provider sent
 * verifies (with the clock at the vector's own timestamp, and refused
 * once a byte changes or the clock moves past the tolerance: vcases[],
 * one row a check), and sig_sign(), given the same id and time,
 * produces the very headers of the vector (vectors[] walked as
 * `selftest` walks it, then scases[] for the headers naming the
 * delivery).  Endpoints come from conf_load(), so the secrets go
 * through the same decoding as in production (whsec_ base64 for
 * Standard Webhooks and Svix, the bytes as they are for the others).
 *
 * Where each vector comes from: see src/pipeline/vectors.h.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "lib/pubkey.h"
#include "pipeline/event.h"
#include "pipeline/sig.h"
#include "pipeline/sigkit.h"
#include "tap.h"
#include "testlib.h"
#include "pipeline/vectors.h"


static const char *const env[] = {
	"ONCEHOOK_DB=/var/lib/oncehook/oncehook.db",
	"ONCEHOOK_ENDPOINTS=standard,bare,svix,github,slack,paddle,stripe,"
	    "shopify,gitlab,zoom,razorpay,woocommerce,mollie,linear,webflow,"
	    "vercel,cashfree,vercel2,adyen",
	"ONCEHOOK_STANDARD_SCHEME=standard",
	"ONCEHOOK_STANDARD_SECRET=" SW_SECRET,
	"ONCEHOOK_BARE_SCHEME=standard",
	"ONCEHOOK_BARE_SECRET=" SW_SECRET_BARE,
	"ONCEHOOK_SVIX_SCHEME=svix",
	"ONCEHOOK_SVIX_SECRET=" SW_SECRET,
	"ONCEHOOK_GITHUB_SCHEME=github",
	/* ONCEHOOK_GITHUB_SECRET_FILE: see env_get() */
	"ONCEHOOK_SLACK_SCHEME=slack",
	"ONCEHOOK_SLACK_SECRET=" SL_SECRET,
	"ONCEHOOK_PADDLE_SCHEME=paddle",
	"ONCEHOOK_PADDLE_SECRET=" PD_SECRET,
	"ONCEHOOK_STRIPE_SCHEME=stripe",
	"ONCEHOOK_STRIPE_SECRET=" ST_SECRET,
	"ONCEHOOK_SHOPIFY_SCHEME=shopify",
	"ONCEHOOK_SHOPIFY_SECRET=" SH_SECRET,
	"ONCEHOOK_GITLAB_SCHEME=gitlab",
	"ONCEHOOK_GITLAB_SECRET=" GL_SECRET,
	"ONCEHOOK_ZOOM_SCHEME=zoom",
	"ONCEHOOK_ZOOM_SECRET=" ZM_SECRET,
	"ONCEHOOK_RAZORPAY_SCHEME=razorpay",
	"ONCEHOOK_RAZORPAY_SECRET=" RZ_SECRET,
	"ONCEHOOK_WOOCOMMERCE_SCHEME=woocommerce",
	"ONCEHOOK_WOOCOMMERCE_SECRET=" WC_SECRET,
	"ONCEHOOK_MOLLIE_SCHEME=mollie",
	"ONCEHOOK_MOLLIE_SECRET=" MO_SECRET,
	"ONCEHOOK_LINEAR_SCHEME=linear",
	"ONCEHOOK_LINEAR_SECRET=" LI_SECRET,
	"ONCEHOOK_WEBFLOW_SCHEME=webflow",
	"ONCEHOOK_WEBFLOW_SECRET=" WF_SECRET,
	"ONCEHOOK_VERCEL_SCHEME=vercel",
	"ONCEHOOK_VERCEL_SECRET=" VE_SECRET,
	"ONCEHOOK_CASHFREE_SCHEME=cashfree",
	"ONCEHOOK_CASHFREE_SECRET=" CF_SECRET,
	/* A rotation: the new secret first, the vector's second. */
	"ONCEHOOK_VERCEL2_SCHEME=vercel",
	"ONCEHOOK_VERCEL2_SECRET=vercel-rotated-new-secret-77 " VE_SECRET,
	"ONCEHOOK_ADYEN_SCHEME=adyen",
	"ONCEHOOK_ADYEN_SECRET=" AD_SECRET,
	NULL
};

/*
 * GitHub's example secret has spaces, and ONCEHOOK_<NAME>_SECRET splits
 * on spaces: it goes through ONCEHOOK_GITHUB_SECRET_FILE, a temporary
 * file written by main().
 */
static char	 ghfile[4096];

static const char *
env_get(const char *name, void *arg)
{
	const char *const	*e;
	size_t			 len = strlen(name);

	if (strcmp(name, "ONCEHOOK_GITHUB_SECRET_FILE") == 0)
		return ghfile;
	for (e = arg; *e != NULL; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

/* Verify body against the headers in vars at time now. */
static enum hook_err
run(const struct conf_endpoint *ep, const char *const *vars,
    const char *body, time_t now, struct sig_verdict *v)
{
	struct testreq		 t;
	struct sig_input	 in;

	in.rq = mkreq(&t, vars);
	in.body = body;
	in.bodysz = strlen(body);
	in.now = now;
	return sig_verify(ep, &in, v);
}

/* The endpoint named name, or NULL. */
static const struct conf_endpoint *
ep_or_null(const struct conf *cf, const char *name)
{
	size_t	 i;

	for (i = 0; i < cf->nendpoints; i++)
		if (strcmp(cf->endpoints[i].name, name) == 0)
			return &cf->endpoints[i];
	return NULL;
}

static const struct conf_endpoint *
ep(const struct conf *cf, const char *name)
{
	const struct conf_endpoint	*e;

	if ((e = ep_or_null(cf, name)) == NULL)
		BAIL("no endpoint %s", name);
	return e;
}

/* Sign body as the endpoint's provider with the given id, type, time. */
static void
sign(const struct conf_endpoint *e, const char *body, const char *id,
    const char *event, time_t now, struct sig_out *out)
{
	struct sig_msg	 m;

	memset(&m, 0, sizeof(m));
	m.body = body;
	m.bodysz = strlen(body);
	m.now = now;
	m.id = id;
	m.id_given = 1;
	m.event = event;
	if (sig_sign(e, NULL, &m, out) != 0)
		BAIL("sig_sign failed for %s", e->name);
}

/* The value of header name in out (names compared exactly), or NULL. */
static const char *
out_get(const struct sig_out *out, const char *name)
{
	size_t	 i;

	for (i = 0; i < out->n; i++)
		if (strcmp(out->h[i].name, name) == 0)
			return out->h[i].value;
	return NULL;
}

/* 1 if out has header name with exactly value want. */
static int
has(const struct sig_out *out, const char *name, const char *want)
{
	const char	*got = out_get(out, name);

	if (got != NULL && strcmp(got, want) == 0)
		return 1;
	printf("#   %s: got \"%s\", want \"%s\"\n", name,
	    got != NULL ? got : "(none)", want);
	return 0;
}

/*
 * One verification: the endpoint, the request's headers, the body and
 * the clock; the verdict and, where it matters, a word of its why and
 * the skew it saw.  Each provider's published vector verifies, and
 * fails once a byte, the id, the time or the header names change.
 */
#define NOSKEW	LLONG_MIN

struct vcase {
	const char	*ep;
	const char	*vars[4];
	const char	*body;
	long long	 now;
	enum hook_err	 want;
	const char	*why;		/* a word of the verdict's why */
	long long	 skew;		/* NOSKEW: not asked */
	const char	*what;
};

/* Adyen's example item with its amount 1131, signed anew (python3 hmac). */
#define AD_ITEM_1131	\
	"{\"NotificationRequestItem\":{\"additionalData\":{\"hmacSignatu" \
	"re\":\"2q/PBI8UVbrlKk2xOK6yLUee5G7juwQHxfujrnhkIwQ=\"},\"amount\"" \
	":{\"currency\":\"EUR\",\"value\":1131},\"eventCode\":\"AUTHORI" \
	"SATION\",\"merchantAccountCode\":\"TestMerchant\",\"merchantRe" \
	"ference\":\"TestPayment-1407325143704\",\"pspReference\":\"791" \
	"4073381342284\",\"success\":\"true\"}}"

static const struct vcase vcases[] = {
	{ "standard", {
	    "HTTP_WEBHOOK_ID=" SW_ID,
	    "HTTP_WEBHOOK_TIMESTAMP=" SW_TS,
	    "HTTP_WEBHOOK_SIGNATURE=" SW_SIG },
	  SW_BODY, SW_T, HOOK_OK, NULL, NOSKEW,
	  "standard webhooks: the published vector verifies" },
	{ "bare", {
	    "HTTP_WEBHOOK_ID=" SW_ID,
	    "HTTP_WEBHOOK_TIMESTAMP=" SW_TS,
	    "HTTP_WEBHOOK_SIGNATURE=" SW_SIG },
	  SW_BODY, SW_T, HOOK_OK, NULL, NOSKEW,
	  "standard webhooks: the vector's secret without its whsec_ prefix" },
	{ "standard", {
	    "HTTP_WEBHOOK_ID=" SW_ID,
	    "HTTP_WEBHOOK_TIMESTAMP=" SW_TS,
	    "HTTP_WEBHOOK_SIGNATURE=" SW_SIG_OTHER " " SW_SIG },
	  SW_BODY, SW_T, HOOK_OK, NULL, NOSKEW,
	  "standard webhooks: the vector as the second of two signatures" },
	{ "standard", {
	    "HTTP_WEBHOOK_ID=" SW_ID,
	    "HTTP_WEBHOOK_TIMESTAMP=" SW_TS,
	    "HTTP_WEBHOOK_SIGNATURE=v1a,c2lnbmF0dXJl " SW_SIG },
	  SW_BODY, SW_T, HOOK_OK, NULL, NOSKEW,
	  "standard webhooks: another version's entry ignored, as the "
	  "reference libraries do" },
	{ "standard", {
	    "HTTP_WEBHOOK_ID=" SW_ID,
	    "HTTP_WEBHOOK_TIMESTAMP=" SW_TS,
	    "HTTP_WEBHOOK_SIGNATURE=" SW_SIG },
	  SW_BODY, SW_T + 300, HOOK_OK, NULL, NOSKEW,
	  "standard webhooks: 300 s later still verifies" },
	{ "standard", {
	    "HTTP_WEBHOOK_ID=" SW_ID,
	    "HTTP_WEBHOOK_TIMESTAMP=" SW_TS,
	    "HTTP_WEBHOOK_SIGNATURE=" SW_SIG },
	  SW_BODY, SW_T + 301, HOOK_ESTALE, NULL, 301,
	  "standard webhooks: 301 s later -> stale, skew 301" },
	{ "standard", {
	    "HTTP_WEBHOOK_ID=" SW_ID,
	    "HTTP_WEBHOOK_TIMESTAMP=" SW_TS,
	    "HTTP_WEBHOOK_SIGNATURE=" SW_SIG },
	  SW_BODY, SW_T - 301, HOOK_ESTALE, NULL, -301,
	  "standard webhooks: 301 s earlier -> stale, skew -301" },
	{ "standard", {
	    "HTTP_WEBHOOK_ID=" SW_ID,
	    "HTTP_WEBHOOK_TIMESTAMP=" SW_TS,
	    "HTTP_WEBHOOK_SIGNATURE=" SW_SIG },
	  "{\"test\": 2432232315}", SW_T, HOOK_ESIG, "matched", NOSKEW,
	  "standard webhooks: one digit of the payload changed -> refused" },
	{ "standard", {
	    "HTTP_WEBHOOK_ID=msg_p5jXN8AQM9LWM0D4loKWxJeK",
	    "HTTP_WEBHOOK_TIMESTAMP=" SW_TS,
	    "HTTP_WEBHOOK_SIGNATURE=" SW_SIG },
	  SW_BODY, SW_T, HOOK_ESIG, NULL, NOSKEW,
	  "standard webhooks: another id -> refused" },
	{ "standard", {
	    "HTTP_WEBHOOK_ID=" SW_ID,
	    "HTTP_WEBHOOK_TIMESTAMP=1614265331",
	    "HTTP_WEBHOOK_SIGNATURE=" SW_SIG },
	  SW_BODY, SW_T, HOOK_ESIG, NULL, NOSKEW,
	  "standard webhooks: another timestamp -> refused" },
	{ "standard", {
	    "HTTP_SVIX_ID=" SW_ID,
	    "HTTP_SVIX_TIMESTAMP=" SW_TS,
	    "HTTP_SVIX_SIGNATURE=" SW_SIG },
	  SW_BODY, SW_T, HOOK_ESIG, "missing", NOSKEW,
	  "standard webhooks: svix- headers are not webhook- headers" },
	{ "svix", {
	    "HTTP_SVIX_ID=" SW_ID,
	    "HTTP_SVIX_TIMESTAMP=" SW_TS,
	    "HTTP_SVIX_SIGNATURE=" SW_SIG },
	  SW_BODY, SW_T, HOOK_OK, NULL, NOSKEW,
	  "svix: the published vector verifies" },
	{ "svix", {
	    "HTTP_SVIX_ID=" SW_ID,
	    "HTTP_SVIX_TIMESTAMP=" SW_TS,
	    "HTTP_SVIX_SIGNATURE=" SW_SIG },
	  SW_BODY, SW_T + 301, HOOK_ESTALE, NULL, NOSKEW,
	  "svix: 301 s later -> stale" },
	{ "svix", {
	    "HTTP_SVIX_ID=" SW_ID,
	    "HTTP_SVIX_TIMESTAMP=" SW_TS,
	    "HTTP_SVIX_SIGNATURE=" SW_SIG },
	  SW_BODY " ", SW_T, HOOK_ESIG, NULL, NOSKEW,
	  "svix: a byte appended -> refused" },
	{ "svix", {
	    "HTTP_WEBHOOK_ID=" SW_ID,
	    "HTTP_WEBHOOK_TIMESTAMP=" SW_TS,
	    "HTTP_WEBHOOK_SIGNATURE=" SW_SIG },
	  SW_BODY, SW_T, HOOK_ESIG, "missing", NOSKEW,
	  "svix: webhook- headers are not svix- headers" },
	{ "github", { "HTTP_X_HUB_SIGNATURE_256=" GH_SIG },
	  GH_BODY, 0, HOOK_OK, NULL, NOSKEW,
	  "github: the documented example verifies" },
	{ "github", { "HTTP_X_HUB_SIGNATURE_256=" GH_SIG },
	  "Hello, World?", 0, HOOK_ESIG, "matched", NOSKEW,
	  "github: the example with its last byte changed -> refused" },
	{ "github", { "HTTP_X_HUB_SIGNATURE=sha1=" GH_HEX },
	  GH_BODY, 0, HOOK_ESIG, "missing", NOSKEW,
	  "github: the legacy X-Hub-Signature header alone -> refused" },
	{ "github", { "HTTP_X_HUB_SIGNATURE_256=" GH_HEX },
	  GH_BODY, 0, HOOK_ESIG, "malformed", NOSKEW,
	  "github: the hex without its sha256= prefix -> refused" },
	{ "slack", {
	    "HTTP_X_SLACK_REQUEST_TIMESTAMP=" SL_TS,
	    "HTTP_X_SLACK_SIGNATURE=" SL_SIG },
	  SL_BODY, SL_T, HOOK_OK, NULL, NOSKEW,
	  "slack: the documented example verifies" },
	{ "slack", {
	    "HTTP_X_SLACK_REQUEST_TIMESTAMP=" SL_TS,
	    "HTTP_X_SLACK_SIGNATURE=" SL_SIG },
	  SL_BODY, SL_T + 301, HOOK_ESTALE, NULL, 301,
	  "slack: 301 s later -> stale (Slack advises 5 minutes)" },
	{ "slack", {
	    "HTTP_X_SLACK_REQUEST_TIMESTAMP=1531420619",
	    "HTTP_X_SLACK_SIGNATURE=" SL_SIG },
	  SL_BODY, SL_T, HOOK_ESIG, NULL, NOSKEW,
	  "slack: another timestamp -> refused" },
	{ "slack", {
	    "HTTP_X_SLACK_REQUEST_TIMESTAMP=" SL_TS,
	    "HTTP_X_SLACK_SIGNATURE=" SL_SIG },
	  SL_BODY "&x=1", SL_T, HOOK_ESIG, NULL, NOSKEW,
	  "slack: body with a field added -> refused" },
	{ "zoom", {
	    "HTTP_X_ZM_REQUEST_TIMESTAMP=" ZM_TS,
	    "HTTP_X_ZM_SIGNATURE=" ZM_SIG },
	  ZM_BODY, ZM_T, HOOK_OK, NULL, NOSKEW,
	  "zoom: the computed vector verifies" },
	{ "zoom", {
	    "HTTP_X_ZM_REQUEST_TIMESTAMP=" ZM_TS,
	    "HTTP_X_ZM_SIGNATURE=" ZM_SIG },
	  ZM_BODY, ZM_T + 301, HOOK_ESTALE, NULL, 301,
	  "zoom: 301 s later -> stale" },
	{ "zoom", {
	    "HTTP_X_ZM_REQUEST_TIMESTAMP=1658940995",
	    "HTTP_X_ZM_SIGNATURE=" ZM_SIG },
	  ZM_BODY, ZM_T, HOOK_ESIG, "matched", NOSKEW,
	  "zoom: another timestamp -> refused" },
	{ "paddle", { "HTTP_PADDLE_SIGNATURE=" PD_DOC },
	  PD_BODY, PD_T, HOOK_ESIG, "matched", NOSKEW,
	  "paddle: the documented header parses (and matches nothing here)" },
	{ "paddle", { "HTTP_PADDLE_SIGNATURE=" PD_SIG },
	  PD_BODY, PD_T, HOOK_OK, NULL, NOSKEW,
	  "paddle: the computed vector verifies" },
	{ "paddle", {
	    "HTTP_PADDLE_SIGNATURE=ts=1671552777;h1="
	    "eb4d0dc8853be92b7f063b9f3ba5233eb920a09459b6e6b2c26705b4364db151;"
	    "h1=" PD_H1 },
	  PD_BODY, PD_T, HOOK_OK, NULL, NOSKEW,
	  "paddle: two h1 (a secret rotation), the second matches" },
	{ "paddle", { "HTTP_PADDLE_SIGNATURE=" PD_SIG },
	  PD_BODY, PD_T + 301, HOOK_ESTALE, NULL, NOSKEW,
	  "paddle: 301 s later -> stale" },
	{ "paddle", { "HTTP_PADDLE_SIGNATURE=ts=1671552778;h1=" PD_H1 },
	  PD_BODY, PD_T, HOOK_ESIG, NULL, NOSKEW,
	  "paddle: another ts -> refused" },
	{ "stripe", { "HTTP_STRIPE_SIGNATURE=" ST_SIG },
	  ST_BODY, ST_T, HOOK_OK, NULL, NOSKEW,
	  "stripe: stripe-node's generateTestHeaderString vector verifies" },
	{ "stripe", { "HTTP_STRIPE_SIGNATURE=" ST_SIG ",v0=" ST_DOC_V0 },
	  ST_BODY, ST_T, HOOK_OK, NULL, NOSKEW,
	  "stripe: with a v0 entry, as in the documented layout" },
	{ "stripe", {
	    "HTTP_STRIPE_SIGNATURE=t=1492774577,v1=" ST_DOC_V1
	    ",v0=" ST_DOC_V0 },
	  ST_BODY, ST_T, HOOK_ESIG, "matched", NOSKEW,
	  "stripe: the documented header parses (and matches nothing here)" },
	{ "stripe", { "HTTP_STRIPE_SIGNATURE=" ST_SIG },
	  ST_BODY, ST_T + 301, HOOK_ESTALE, NULL, NOSKEW,
	  "stripe: 301 s later -> stale (the libraries' default tolerance is "
	  "300 s)" },
	{ "stripe", { "HTTP_STRIPE_SIGNATURE=" ST_SIG },
	  "{\"id\": \"evt_test_webhook\", \"object\": \"event\"}", ST_T,
	  HOOK_ESIG, NULL, NOSKEW,
	  "stripe: the same JSON re-serialised -> refused (raw bytes)" },
	{ "shopify", { "HTTP_X_SHOPIFY_HMAC_SHA256=" SH_SIG },
	  SH_BODY, 0, HOOK_OK, NULL, NOSKEW,
	  "shopify: the computed vector verifies" },
	{ "shopify", { "HTTP_X_SHOPIFY_HMAC_SHA256=" SH_SIG },
	  "{\"id\":820982911946154508,\"email\":\"jon@doe.ca\","
	  "\"total_price\":\"254.99\"}", 0, HOOK_ESIG, NULL, NOSKEW,
	  "shopify: the price changed -> refused" },
	{ "gitlab", { "HTTP_X_GITLAB_TOKEN=" GL_SECRET },
	  "{}", 0, HOOK_OK, NULL, NOSKEW,
	  "gitlab: the token verifies" },
	{ "gitlab", { "HTTP_X_GITLAB_TOKEN=" GL_SECRET "x" },
	  "{}", 0, HOOK_ESIG, NULL, NOSKEW,
	  "gitlab: the token with a byte appended -> refused" },
	{ "gitlab", { "HTTP_X_GITLAB_TOKEN=glwht-e2e-token-6d1" },
	  "{}", 0, HOOK_ESIG, NULL, NOSKEW,
	  "gitlab: a prefix of the token -> refused" },
	{ "razorpay", { "HTTP_X_RAZORPAY_SIGNATURE=" RZ_SIG },
	  RZ_BODY, 0, HOOK_OK, NULL, NOSKEW,
	  "razorpay: the vector verifies" },
	{ "razorpay", { "HTTP_X_RAZORPAY_SIGNATURE=sha256=" RZ_SIG },
	  RZ_BODY, 0, HOOK_ESIG, "malformed", NOSKEW,
	  "razorpay: a sha256= prefix, which Razorpay never sends -> refused" },
	{ "razorpay", { "HTTP_X_RAZORPAY_SIGNATURE=" RZ_SIG },
	  RZ_BODY " ", 0, HOOK_ESIG, "matched", NOSKEW,
	  "razorpay: a byte appended -> refused" },
	{ "razorpay", { "HTTP_X_HUB_SIGNATURE_256=sha256=" RZ_SIG },
	  RZ_BODY, 0, HOOK_ESIG, "missing", NOSKEW,
	  "razorpay: GitHub's header is not Razorpay's" },
	{ "woocommerce", { "HTTP_X_WC_WEBHOOK_SIGNATURE=" WC_SIG },
	  WC_BODY, 0, HOOK_OK, NULL, NOSKEW,
	  "woocommerce: the vector verifies" },
	{ "woocommerce", { "HTTP_X_WC_WEBHOOK_SIGNATURE=" WC_SIG },
	  "{\"id\":728,\"status\":\"processing\",\"currency\":\"USD\","
	  "\"total\":\"29.35\"}", 0, HOOK_ESIG, "matched", NOSKEW,
	  "woocommerce: another order id -> refused" },
	{ "woocommerce", { "HTTP_X_WC_WEBHOOK_SIGNATURE=" MO_HEX },
	  WC_BODY, 0, HOOK_ESIG, "malformed", NOSKEW,
	  "woocommerce: hex where base64 is sent -> refused" },
	{ "mollie", { "HTTP_X_MOLLIE_SIGNATURE=" MO_SIG },
	  MO_BODY, 0, HOOK_OK, NULL, NOSKEW,
	  "mollie: the vector verifies, sha256= prefixed" },
	{ "mollie", { "HTTP_X_MOLLIE_SIGNATURE=" MO_HEX },
	  MO_BODY, 0, HOOK_OK, NULL, NOSKEW,
	  "mollie: the hex alone verifies too, as Mollie's validator takes" },
	{ "mollie", { "HTTP_X_MOLLIE_SIGNATURE=sha1=" MO_HEX },
	  MO_BODY, 0, HOOK_ESIG, "malformed", NOSKEW,
	  "mollie: a sha1= prefix -> refused" },
	{ "mollie", { "HTTP_X_MOLLIE_SIGNATURE=" MO_SIG },
	  "{\"id\":\"tr_12346\",\"event_type\":\"payment-link.paid\"}", 0,
	  HOOK_ESIG, "matched", NOSKEW,
	  "mollie: another id -> refused" },
	{ "linear", { "HTTP_LINEAR_SIGNATURE=" LI_SIG },
	  LI_BODY, LI_T, HOOK_OK, NULL, NOSKEW,
	  "linear: the vector verifies at its webhookTimestamp" },
	{ "linear", { "HTTP_LINEAR_SIGNATURE=" LI_SIG },
	  LI_BODY, LI_T + 300, HOOK_OK, NULL, NOSKEW,
	  "linear: 300 s after webhookTimestamp still verifies" },
	{ "linear", { "HTTP_LINEAR_SIGNATURE=" LI_SIG },
	  LI_BODY, LI_T + 301, HOOK_ESTALE, NULL, 301,
	  "linear: 301 s after webhookTimestamp -> stale, skew 301" },
	{ "linear", { "HTTP_LINEAR_SIGNATURE=" LI_SIG },
	  LI_BODY, LI_T - 301, HOOK_ESTALE, NULL, -301,
	  "linear: 301 s before webhookTimestamp -> stale, skew -301" },
	{ "linear", { "HTTP_LINEAR_SIGNATURE=" WF_SIG },
	  LI_BODY, LI_T + 3600, HOOK_ESIG, "matched", NOSKEW,
	  "linear: another signature and an hour late -> the signature's "
	  "refusal, not the time's" },
	/* Python hmac of these bodies under LI_SECRET. */
	{ "linear", { "HTTP_LINEAR_SIGNATURE=15097c929e30643476b4b07576af6ab3"
	    "21e355de7988dcc35d4d838b60054103" },
	  "{\"action\":\"create\",\"type\":\"Issue\"}", LI_T, HOOK_ESIG,
	  "webhookTimestamp", NOSKEW,
	  "linear: signed, but no webhookTimestamp -> refused" },
	{ "linear", { "HTTP_LINEAR_SIGNATURE=4aecd3c75be68598a8738d2e68b13300"
	    "46bb0f004ba4192a672c3df355d409c6" },
	  "{\"action\":\"create\",\"type\":\"Issue\","
	  "\"webhookTimestamp\":\"1676056940508\"}", LI_T, HOOK_ESIG,
	  "webhookTimestamp", NOSKEW,
	  "linear: signed, webhookTimestamp a string -> refused" },
	{ "webflow", {
	    "HTTP_X_WEBFLOW_TIMESTAMP=" WF_TS,
	    "HTTP_X_WEBFLOW_SIGNATURE=" WF_SIG },
	  WF_BODY, WF_T, HOOK_OK, NULL, NOSKEW,
	  "webflow: the vector verifies" },
	{ "webflow", {
	    "HTTP_X_WEBFLOW_TIMESTAMP=1663849649733",
	    "HTTP_X_WEBFLOW_SIGNATURE=" WF_SIG_733 },
	  WF_BODY, WF_T, HOOK_OK, NULL, NOSKEW,
	  "webflow: signed at the documented millisecond timestamp" },
	{ "webflow", {
	    "HTTP_X_WEBFLOW_TIMESTAMP=1663849649733",
	    "HTTP_X_WEBFLOW_SIGNATURE=" WF_SIG },
	  WF_BODY, WF_T, HOOK_ESIG, "matched", NOSKEW,
	  "webflow: another timestamp under the signature -> refused" },
	{ "webflow", {
	    "HTTP_X_WEBFLOW_TIMESTAMP=" WF_TS,
	    "HTTP_X_WEBFLOW_SIGNATURE=" WF_SIG },
	  WF_BODY, WF_T + 301, HOOK_ESTALE, NULL, 301,
	  "webflow: 301 s later -> stale (milliseconds read as such)" },
	{ "webflow", { "HTTP_X_WEBFLOW_SIGNATURE=" WF_SIG },
	  WF_BODY, WF_T, HOOK_ESIG, "timestamp", NOSKEW,
	  "webflow: no x-webflow-timestamp -> refused" },
	{ "vercel", { "HTTP_X_VERCEL_SIGNATURE=" VE_SIG },
	  VE_BODY, 0, HOOK_OK, NULL, NOSKEW,
	  "vercel: the vector verifies (HMAC-SHA1)" },
	{ "vercel", { "HTTP_X_VERCEL_SIGNATURE=" VE_SIG },
	  VE_BODY "\n", 0, HOOK_ESIG, "matched", NOSKEW,
	  "vercel: a newline appended -> refused" },
	{ "vercel", { "HTTP_X_VERCEL_SIGNATURE=" MO_HEX },
	  VE_BODY, 0, HOOK_ESIG, "malformed", NOSKEW,
	  "vercel: a SHA-256-sized hex -> refused as malformed" },
	{ "cashfree", {
	    "HTTP_X_WEBHOOK_TIMESTAMP=" CF_TS,
	    "HTTP_X_WEBHOOK_SIGNATURE=" CF_SIG },
	  CF_BODY, CF_T, HOOK_OK, NULL, NOSKEW,
	  "cashfree: the vector verifies" },
	{ "cashfree", {
	    "HTTP_X_WEBHOOK_TIMESTAMP=1617695238078",
	    "HTTP_X_WEBHOOK_SIGNATURE=" CF_SIG_078 },
	  CF_BODY, CF_T, HOOK_OK, NULL, NOSKEW,
	  "cashfree: signed at the documented timestamp 1617695238078" },
	{ "cashfree", {
	    "HTTP_X_WEBHOOK_TIMESTAMP=" CF_TS,
	    "HTTP_X_WEBHOOK_SIGNATURE=" CF_SIG },
	  CF_BODY, CF_T - 301, HOOK_ESTALE, NULL, -301,
	  "cashfree: 301 s early -> stale" },
	{ "cashfree", {
	    "HTTP_X_WEBHOOK_TIMESTAMP=" CF_TS,
	    "HTTP_X_WEBHOOK_SIGNATURE=" CF_SIG_078 },
	  CF_BODY, CF_T, HOOK_ESIG, "matched", NOSKEW,
	  "cashfree: another timestamp under the signature -> refused" },
	{ "cashfree", {
	    "HTTP_X_WEBHOOK_TIMESTAMP=1617695238O00",
	    "HTTP_X_WEBHOOK_SIGNATURE=" CF_SIG },
	  CF_BODY, CF_T, HOOK_ESIG, "malformed", NOSKEW,
	  "cashfree: a letter in the timestamp -> malformed" },
	{ "adyen", { NULL }, AD_BODY, 0, HOOK_OK, NULL, NOSKEW,
	  "adyen: Adyen's example item verifies" },
	{ "adyen", { NULL }, AD_BATCH(AD_ITEM(AD_SIG) "," AD_ITEM_1131), 0,
	  HOOK_OK, NULL, NOSKEW,
	  "adyen: two items, each signed, verify" },
	{ "adyen", { NULL }, AD_BATCH(AD_ITEM(AD_SIG) "," AD_ITEM(
	  "2q/PBI8UVbrlKk2xOK6yLUee5G7juwQHxfujrnhkIwQ=")), 0,
	  HOOK_ESIG, "matched", NOSKEW,
	  "adyen: the second of two items carries the 1131 item's signature "
	  "-> the request refused" },
	{ "adyen", { NULL }, AD_BATCH(AD_ITEM_1131 "," AD_ITEM("")), 0,
	  HOOK_ESIG, "malformed", NOSKEW,
	  "adyen: an empty hmacSignature -> malformed" },
	{ "adyen", { NULL }, "{\"notificationItems\":[{\"NotificationRe"
	  "questItem\":{\"pspReference\":\"1\"}}]}", 0,
	  HOOK_ESIG, "hmacSignature", NOSKEW,
	  "adyen: an item without additionalData.hmacSignature -> refused" },
	{ "adyen", { NULL }, "{\"notificationItems\":[]}", 0,
	  HOOK_ESIG, "notificationItems", NOSKEW,
	  "adyen: no items -> refused" },
	{ "adyen", { NULL }, "{\"live\":\"false\"", 0,
	  HOOK_ESIG, "JSON", NOSKEW,
	  "adyen: a body that is not JSON -> refused" },
	{ "adyen", { NULL }, AD_BATCH("{\"NotificationRequestItem\":{\"a"
	  "dditionalData\":{\"hmacSignature\":\"" AD_SIG "\"},\"amount"
	  "\":{\"currency\":\"EUR\",\"value\":\"1130\"},\"eventCod"
	  "e\":\"AUTHORISATION\",\"merchantAccountCode\":\"TestMerchant"
	  "\",\"merchantReference\":\"TestPayment-1407325143704\",\"psp"
	  "Reference\":\"\\u0037914073381342284\",\"success\":\"true"
	  "\"}}"), 0, HOOK_OK, NULL, NOSKEW,
	  "adyen: the fields as decoded (an escape, the value as a string), "
	  "as HmacValidator reads them" },
	{ "adyen", { NULL }, AD_BATCH("{\"NotificationRequestItem\":{\"a"
	  "dditionalData\":{\"hmacSignature\":\"" AD_SIG "\"},\"amount"
	  "\":{\"currency\":\"EUR\",\"value\":1130.0},\"eventCode\":"
	  "\"AUTHORISATION\",\"merchantAccountCode\":\"TestMerchant\","
	  "\"merchantReference\":\"TestPayment-1407325143704\",\"pspRef"
	  "erence\":\"7914073381342284\",\"success\":true}}"), 0,
	  HOOK_OK, NULL, NOSKEW,
	  "adyen: success as true, 1130.0 as 1130 (as JavaScript writes "
	  "them)" },
	{ "adyen", { NULL }, AD_BATCH("{\"NotificationRequestItem\":{\"a"
	  "dditionalData\":{\"hmacSignature\":\"" AD_SIG "\"},\"amount"
	  "\":{\"currency\":\"EUR\",\"value\":1130.5},\"eventCode\":"
	  "\"AUTHORISATION\",\"merchantAccountCode\":\"TestMerchant\","
	  "\"merchantReference\":\"TestPayment-1407325143704\",\"pspRef"
	  "erence\":\"7914073381342284\",\"success\":\"true\"}}"), 0,
	  HOOK_ESIG, "malformed", NOSKEW,
	  "adyen: an amount that is not whole -> malformed" },
	{ "webflow", {
	    "HTTP_X_WEBFLOW_TIMESTAMP=1663849649000000",
	    "HTTP_X_WEBFLOW_SIGNATURE=" WF_SIG },
	  WF_BODY, WF_T, HOOK_ESIG, "malformed", NOSKEW,
	  "webflow: a timestamp of 16 digits -> malformed" },
	{ "vercel2", { "HTTP_X_VERCEL_SIGNATURE=" VE_SIG },
	  VE_BODY, 0, HOOK_OK, NULL, NOSKEW,
	  "vercel: two secrets (a rotation), the second one's signature "
	  "verifies" },
	{ "vercel2", { "HTTP_X_VERCEL_SIGNATURE=" VE_SIG },
	  VE_BODY " ", 0, HOOK_ESIG, "matched", NOSKEW,
	  "vercel: two secrets, neither matches a changed body" },
};

/*
 * Signing: sig_sign(), given a vector's secret, body, id and time,
 * makes the vector's very headers (vectors[], as `selftest` walks them),
 * and the headers that name the delivery and its event.
 */
struct scase {
	const char	*ep;
	const char	*body;
	const char	*id;
	const char	*event;
	long long	 now;
	const char	*headers[3][2];
	const char	*what;
};

static const struct scase scases[] = {
	{ "bare", SW_BODY, SW_ID, NULL, SW_T,
	  { { "webhook-signature", SW_SIG } },
	  "standard webhooks: sig_sign, secret without whsec_, same vector" },
	{ "github", GH_BODY, "72d3162e-cc78-11e3-81ab-4c9367dc0958", "push", 0,
	  { { "X-Hub-Signature-256", GH_SIG },
	    { "X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958" },
	    { "X-GitHub-Event", "push" } },
	  "github: sig_sign names the delivery and its event" },
	{ "shopify", SH_BODY, "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
	  "orders/create", 0,
	  { { "X-Shopify-Hmac-Sha256", SH_SIG },
	    { "X-Shopify-Topic", "orders/create" },
	    { "X-Shopify-Event-Id", "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043" } },
	  "shopify: sig_sign names the delivery and its topic" },
	{ "gitlab", "{}", "3e1a6f60-77b1-4c8c-9b0a-4f5c3c4b9d21", "Push Hook",
	  0,
	  { { "X-Gitlab-Token", GL_SECRET },
	    { "X-Gitlab-Event", "Push Hook" },
	    { "X-Gitlab-Event-UUID", "3e1a6f60-77b1-4c8c-9b0a-4f5c3c4b9d21" } },
	  "gitlab: sig_sign sends the token, the delivery and its event" },
	{ "woocommerce", WC_BODY, WC_ID, "order.updated", 0,
	  { { "X-WC-Webhook-Signature", WC_SIG },
	    { "X-WC-Webhook-Topic", "order.updated" },
	    { "X-WC-Webhook-Delivery-ID", WC_ID } },
	  "woocommerce: sig_sign names the delivery and its topic" },
	{ "linear", LI_BODY, LI_ID, "Issue", 0,
	  { { "Linear-Signature", LI_SIG },
	    { "Linear-Delivery", LI_ID },
	    { "Linear-Event", "Issue" } },
	  "linear: sig_sign names the delivery and its entity type" },
	{ "razorpay", RZ_BODY, RZ_ID, NULL, 0,
	  { { "X-Razorpay-Signature", RZ_SIG },
	    { "X-Razorpay-Event-Id", RZ_ID } },
	  "razorpay: sig_sign names the event in X-Razorpay-Event-Id" },
};

static void
test_verify(const struct conf *cf)
{
	const struct vcase	*c;
	struct sig_verdict	 v;
	enum hook_err		 er;
	size_t			 i;

	for (i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
		c = &vcases[i];
		er = run(ep(cf, c->ep), c->vars, c->body, (time_t)c->now, &v);
		CHECK(er == c->want && (c->why == NULL || (v.why != NULL &&
		    strstr(v.why, c->why) != NULL)) && (c->skew == NOSKEW ||
		    v.skew == c->skew), "%s (%d, why \"%s\")", c->what,
		    (int)er, v.why != NULL ? v.why : "");
	}
}

/* 1 if out has every header of h (a NULL name ends it). */
static int
has_all(const struct sig_out *out, const char *const h[][2], size_t n)
{
	size_t	 i;
	int	 ok = 1;

	for (i = 0; i < n && h[i][0] != NULL; i++)
		ok &= has(out, h[i][0], h[i][1]);
	return ok;
}

static void
test_sign(const struct conf *cf)
{
	const struct conf_endpoint	*e;
	const struct vector		*vec;
	const struct scase		*c;
	struct sig_out			 out;
	size_t				 i;

	for (i = 0; i < nvectors; i++) {
		vec = &vectors[i];
		if ((e = ep_or_null(cf, vec->scheme)) == NULL ||
		    vec->signature == NULL || vector_more(vec) != NULL)
			continue;	/* hmac-sha256: t_sig's; adyen: the
					   signature is in the body; public
					   keys: test_pubkey_vectors() */
		sign(e, vec->body, vec->id != NULL ? vec->id : "unused", NULL,
		    (time_t)vec->now, &out);
		CHECK(has_all(&out, vec->headers, VEC_HEADERS),
		    "%s: sig_sign reproduces the vector (%s)", vec->scheme,
		    vec->source);
	}
	for (i = 0; i < sizeof(scases) / sizeof(scases[0]); i++) {
		c = &scases[i];
		sign(ep(cf, c->ep), c->body, c->id, c->event, (time_t)c->now,
		    &out);
		CHECK(has_all(&out, c->headers, 3), "%s", c->what);
	}
}

/* Zoom's url_validation answered as computed (vectors.h). */
static void
test_answer(const struct conf *cf)
{
	struct testreq		 t;
	struct sig_input	 in;
	struct hook_answer	 a;

	in.rq = mkreq(&t, ENV("HTTP_X_ZM_REQUEST_TIMESTAMP=" ZM_TS,
	    "HTTP_X_ZM_SIGNATURE=" ZM_SIG));
	in.body = ZM_BODY;
	in.bodysz = strlen(ZM_BODY);
	in.now = ZM_T;
	CHECK(sig_answer(ep(cf, "zoom"), NULL, &in, ZM_TOKEN, &a) == 0 &&
	    a.n == 2 &&
	    strcmp(a.value[0], ZM_TOKEN) == 0 &&
	    strcmp(a.value[1], ZM_ENCRYPTED) == 0,
	    "zoom: encryptedToken of " ZM_TOKEN " as computed");
}

/*
 * The public-key vectors (vector_more()): each verifies at its time,
 * not 301 s later, not with a body byte changed, not under another
 * vector's key of its scheme; signed again from RFC 8032's private key
 * where it is derived from it, every header the vector's; a batch's
 * body holds its events.
 */
static void
test_pubkey_vectors(void)
{
	const struct vector		*v, *w;
	const struct vector_more	*more;
	const char			*vars[VEC_HEADERS + 1];
	char				 hv[VEC_HEADERS][512], err[256];
	char				 sv[64], kv[512], *body;
	struct sig_verdict		 vd;
	struct sig_out			 out;
	struct sig_msg			 m;
	struct secret			 k;
	struct testreq			 t;
	struct why			 why = { "", NULL };
	struct event			*items;
	struct conf			*cf, *other;
	size_t				 i, j, n;
	int				 nh, seen = 0;

	for (i = 0; i < nvectors; i++) {
		v = &vectors[i];
		if ((more = vector_more(v)) == NULL)
			continue;
		seen++;
		snprintf(sv, sizeof(sv), "ONCEHOOK_SCHEME=%s", v->scheme);
		snprintf(kv, sizeof(kv), "ONCEHOOK_SECRET=%s", v->secret);
		if ((cf = conf_load(env_get, (void *)(const char *const[]){
		    "ONCEHOOK_DB=/nonexistent/t_vectors.db", sv, kv, NULL },
		    err, sizeof(err))) == NULL)
			BAIL("conf_load %s: %s", v->scheme, err);
		for (nh = 0; nh < VEC_HEADERS && v->headers[nh][0] != NULL;
		    nh++) {
			snprintf(hv[nh], sizeof(hv[nh]), "HTTP_%s=%s",
			    v->headers[nh][0], v->headers[nh][1]);
			for (j = 5; hv[nh][j] != '='; j++)
				hv[nh][j] = hv[nh][j] == '-' ? '_' :
				    (char)toupper((unsigned char)hv[nh][j]);
			vars[nh] = hv[nh];
		}
		vars[nh] = NULL;
		if (pubkey_load(err, sizeof(err)) == -1) {
			CHECK(run(&cf->endpoints[0], vars, v->body,
			    (time_t)v->now, &vd) == HOOK_ECONF, "%s without "
			    "libcrypto: a misconfiguration (%s)", v->scheme,
			    err);
			conf_free(cf);
			continue;
		}
		CHECK(run(&cf->endpoints[0], vars, v->body, (time_t)v->now,
		    &vd) == HOOK_OK, "%s: the vector verifies (%s)", v->scheme,
		    v->source);
		CHECK(run(&cf->endpoints[0], vars, v->body, (time_t)v->now +
		    301, &vd) == HOOK_ESTALE, "%s: 301 s later, stale",
		    v->scheme);
		if ((body = strdup(v->body)) == NULL)
			BAIL("out of memory");
		body[strlen(body) / 2] ^= 1;
		CHECK(run(&cf->endpoints[0], vars, body, (time_t)v->now,
		    &vd) == HOOK_ESIG, "%s: a body byte changed, refused",
		    v->scheme);
		free(body);
		for (j = 0; j < nvectors; j++) {
			w = &vectors[j];
			if (w == v || strcmp(w->scheme, v->scheme) != 0 ||
			    vector_more(w) == NULL)
				continue;
			snprintf(kv, sizeof(kv), "ONCEHOOK_SECRET=%s",
			    w->secret);
			if ((other = conf_load(env_get, (void *)(const char
			    *const[]){ "ONCEHOOK_DB=/nonexistent/t.db", sv, kv,
			    NULL }, err, sizeof(err))) == NULL)
				BAIL("conf_load: %s", err);
			CHECK(run(&other->endpoints[0], vars, v->body,
			    (time_t)v->now, &vd) == HOOK_ESIG,
			    "%s: under the other vector's key, refused",
			    v->scheme);
			conf_free(other);
		}
		if (more->private != NULL) {
			if (sigpub_private(more->private, &k, err,
			    sizeof(err)) == -1)
				BAIL("sigpub_private: %s", err);
			memset(&m, 0, sizeof(m));
			m.body = v->body;
			m.bodysz = strlen(v->body);
			m.now = (time_t)v->now;
			m.id = v->id != NULL ? v->id : "unused";
			m.id_given = 1;
			CHECK(sig_sign(&cf->endpoints[0], &k, &m, &out) == 0 &&
			    has_all(&out, v->headers, VEC_HEADERS),
			    "%s: signed again from RFC 8032's seed, the "
			    "vector's headers", v->scheme);
			free(k.p);
		}
		if (more->items > 0 &&
		    scheme_batch(cf->endpoints[0].scheme) == NULL)
			CHECK(0, "%s: a batch scheme", v->scheme);
		else if (more->items > 0) {
			items = NULL;
			n = 0;
			CHECK(event_items(&cf->endpoints[0], mkreq(&t, NULL),
			    scheme_batch(cf->endpoints[0].scheme), v->body,
			    strlen(v->body), &items, &n, &why) == HOOK_OK &&
			    n == more->items, "%s: the body is %zu event(s)",
			    v->scheme, more->items);
			event_items_free(items, n);
		}
		conf_free(cf);
	}
	CHECK(seen == 5, "five public-key vectors: SendGrid's two, and "
	    "Discord's, Telnyx's, v1a's derived from RFC 8032 (%d)", seen);
}

int
main(void)
{
	struct conf	*cf;
	char		 err[256];
	const char	*tmp = getenv("TMPDIR");
	int		 fd;

	snprintf(ghfile, sizeof(ghfile), "%s/t_vectors.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if ((fd = mkstemp(ghfile)) == -1)
		BAIL("mkstemp %s failed", ghfile);
	if (write(fd, GH_SECRET "\n", sizeof(GH_SECRET)) !=
	    (ssize_t)sizeof(GH_SECRET) || close(fd) != 0)
		BAIL("cannot write %s", ghfile);
	cf = conf_load(env_get, (void *)env, err, sizeof(err));
	unlink(ghfile);
	if (cf == NULL)
		BAIL("conf_load: %s", err);

	test_verify(cf);
	test_sign(cf);
	test_answer(cf);
	conf_free(cf);
	test_pubkey_vectors();
	return tap_done();
}
