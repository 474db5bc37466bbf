/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the providers' published test vectors (src/pipeline/sig.c).
 *
 * Each vector is checked both ways: the request a provider sent
 * verifies (with the clock at the vector's own timestamp, and refused
 * once a byte changes or the clock moves past the tolerance), and
 * sig_sign(), given the same id and time, produces the very headers of
 * the vector.  Endpoints come from conf_load(), so the secrets go
 * through the same decoding as in production (whsec_ base64 for
 * Standard Webhooks and Svix, the bytes as they are for the others).
 *
 * Where each vector comes from: see src/pipeline/vectors.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "pipeline/sig.h"
#include "tap.h"
#include "testlib.h"
#include "pipeline/vectors.h"


static const char *const env[] = {
	"ONCEHOOK_DB=/var/lib/oncehook/oncehook.db",
	"ONCEHOOK_ENDPOINTS=standard,bare,svix,github,slack,paddle,stripe,"
	    "shopify,gitlab",
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

static const struct conf_endpoint *
ep(const struct conf *cf, const char *name)
{
	size_t	 i;

	for (i = 0; i < cf->nendpoints; i++)
		if (strcmp(cf->endpoints[i].name, name) == 0)
			return &cf->endpoints[i];
	BAIL("no endpoint %s", name);
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
	if (sig_sign(e, &m, out) != 0)
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

static int
why_has(const struct sig_verdict *v, const char *word)
{
	return v->why != NULL && strstr(v->why, word) != NULL;
}

static void
test_standard(const struct conf *cf)
{
	const struct conf_endpoint	*e = ep(cf, "standard");
	struct sig_verdict		 v;
	struct sig_out			 out;
	enum hook_err			 er;

	er = run(e, ENV("HTTP_WEBHOOK_ID=" SW_ID, "HTTP_WEBHOOK_TIMESTAMP="
	    SW_TS, "HTTP_WEBHOOK_SIGNATURE=" SW_SIG), SW_BODY, SW_T, &v);
	CHECK(er == HOOK_OK, "standard webhooks: the published vector "
	    "verifies");
	er = run(ep(cf, "bare"), ENV("HTTP_WEBHOOK_ID=" SW_ID,
	    "HTTP_WEBHOOK_TIMESTAMP=" SW_TS, "HTTP_WEBHOOK_SIGNATURE=" SW_SIG),
	    SW_BODY, SW_T, &v);
	CHECK(er == HOOK_OK, "standard webhooks: the vector's secret without "
	    "its whsec_ prefix");
	er = run(e, ENV("HTTP_WEBHOOK_ID=" SW_ID, "HTTP_WEBHOOK_TIMESTAMP="
	    SW_TS, "HTTP_WEBHOOK_SIGNATURE=" SW_SIG_OTHER " " SW_SIG),
	    SW_BODY, SW_T, &v);
	CHECK(er == HOOK_OK, "standard webhooks: the vector as the second of "
	    "two signatures");
	er = run(e, ENV("HTTP_WEBHOOK_ID=" SW_ID, "HTTP_WEBHOOK_TIMESTAMP="
	    SW_TS, "HTTP_WEBHOOK_SIGNATURE=v1a,c2lnbmF0dXJl " SW_SIG),
	    SW_BODY, SW_T, &v);
	CHECK(er == HOOK_OK, "standard webhooks: another version's entry "
	    "ignored, as the reference libraries do");
	er = run(e, ENV("HTTP_WEBHOOK_ID=" SW_ID, "HTTP_WEBHOOK_TIMESTAMP="
	    SW_TS, "HTTP_WEBHOOK_SIGNATURE=" SW_SIG), SW_BODY, SW_T + 300, &v);
	CHECK(er == HOOK_OK, "standard webhooks: 300 s later still verifies");
	er = run(e, ENV("HTTP_WEBHOOK_ID=" SW_ID, "HTTP_WEBHOOK_TIMESTAMP="
	    SW_TS, "HTTP_WEBHOOK_SIGNATURE=" SW_SIG), SW_BODY, SW_T + 301, &v);
	CHECK(er == HOOK_ESTALE && v.skew == 301,
	    "standard webhooks: 301 s later -> stale, skew 301");
	er = run(e, ENV("HTTP_WEBHOOK_ID=" SW_ID, "HTTP_WEBHOOK_TIMESTAMP="
	    SW_TS, "HTTP_WEBHOOK_SIGNATURE=" SW_SIG), SW_BODY, SW_T - 301, &v);
	CHECK(er == HOOK_ESTALE && v.skew == -301,
	    "standard webhooks: 301 s earlier -> stale, skew -301");
	er = run(e, ENV("HTTP_WEBHOOK_ID=" SW_ID, "HTTP_WEBHOOK_TIMESTAMP="
	    SW_TS, "HTTP_WEBHOOK_SIGNATURE=" SW_SIG), "{\"test\": 2432232315}",
	    SW_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "matched"),
	    "standard webhooks: one digit of the payload changed -> refused");
	er = run(e, ENV("HTTP_WEBHOOK_ID=msg_p5jXN8AQM9LWM0D4loKWxJeK",
	    "HTTP_WEBHOOK_TIMESTAMP=" SW_TS, "HTTP_WEBHOOK_SIGNATURE=" SW_SIG),
	    SW_BODY, SW_T, &v);
	CHECK(er == HOOK_ESIG, "standard webhooks: another id -> refused");
	er = run(e, ENV("HTTP_WEBHOOK_ID=" SW_ID,
	    "HTTP_WEBHOOK_TIMESTAMP=1614265331", "HTTP_WEBHOOK_SIGNATURE="
	    SW_SIG), SW_BODY, SW_T, &v);
	CHECK(er == HOOK_ESIG, "standard webhooks: another timestamp -> "
	    "refused");
	er = run(e, ENV("HTTP_SVIX_ID=" SW_ID, "HTTP_SVIX_TIMESTAMP=" SW_TS,
	    "HTTP_SVIX_SIGNATURE=" SW_SIG), SW_BODY, SW_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "missing"),
	    "standard webhooks: svix- headers are not webhook- headers");

	sign(e, SW_BODY, SW_ID, NULL, SW_T, &out);
	CHECK(has(&out, "webhook-id", SW_ID) &&
	    has(&out, "webhook-timestamp", SW_TS) &&
	    has(&out, "webhook-signature", SW_SIG),
	    "standard webhooks: sig_sign reproduces the published vector");
	sign(ep(cf, "bare"), SW_BODY, SW_ID, NULL, SW_T, &out);
	CHECK(has(&out, "webhook-signature", SW_SIG),
	    "standard webhooks: sig_sign, secret without whsec_, same vector");
}

static void
test_svix(const struct conf *cf)
{
	const struct conf_endpoint	*e = ep(cf, "svix");
	struct sig_verdict		 v;
	struct sig_out			 out;
	enum hook_err			 er;

	er = run(e, ENV("HTTP_SVIX_ID=" SW_ID, "HTTP_SVIX_TIMESTAMP=" SW_TS,
	    "HTTP_SVIX_SIGNATURE=" SW_SIG), SW_BODY, SW_T, &v);
	CHECK(er == HOOK_OK, "svix: the published vector verifies");
	er = run(e, ENV("HTTP_SVIX_ID=" SW_ID, "HTTP_SVIX_TIMESTAMP=" SW_TS,
	    "HTTP_SVIX_SIGNATURE=" SW_SIG), SW_BODY, SW_T + 301, &v);
	CHECK(er == HOOK_ESTALE, "svix: 301 s later -> stale");
	er = run(e, ENV("HTTP_SVIX_ID=" SW_ID, "HTTP_SVIX_TIMESTAMP=" SW_TS,
	    "HTTP_SVIX_SIGNATURE=" SW_SIG), SW_BODY " ", SW_T, &v);
	CHECK(er == HOOK_ESIG, "svix: a byte appended -> refused");
	er = run(e, ENV("HTTP_WEBHOOK_ID=" SW_ID, "HTTP_WEBHOOK_TIMESTAMP="
	    SW_TS, "HTTP_WEBHOOK_SIGNATURE=" SW_SIG), SW_BODY, SW_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "missing"),
	    "svix: webhook- headers are not svix- headers");
	sign(e, SW_BODY, SW_ID, NULL, SW_T, &out);
	CHECK(has(&out, "svix-id", SW_ID) &&
	    has(&out, "svix-timestamp", SW_TS) &&
	    has(&out, "svix-signature", SW_SIG),
	    "svix: sig_sign reproduces the published vector");
}

static void
test_github(const struct conf *cf)
{
	const struct conf_endpoint	*e = ep(cf, "github");
	struct sig_verdict		 v;
	struct sig_out			 out;
	enum hook_err			 er;

	er = run(e, ENV("HTTP_X_HUB_SIGNATURE_256=" GH_SIG), GH_BODY, 0, &v);
	CHECK(er == HOOK_OK, "github: the documented example verifies");
	er = run(e, ENV("HTTP_X_HUB_SIGNATURE_256=" GH_SIG), "Hello, World?",
	    0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "matched"),
	    "github: the example with its last byte changed -> refused");
	er = run(e, ENV("HTTP_X_HUB_SIGNATURE=sha1=" GH_HEX), GH_BODY, 0,
	    &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "missing"),
	    "github: the legacy X-Hub-Signature header alone -> refused");
	er = run(e, ENV("HTTP_X_HUB_SIGNATURE_256=" GH_HEX), GH_BODY, 0, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "malformed"),
	    "github: the hex without its sha256= prefix -> refused");
	sign(e, GH_BODY, "72d3162e-cc78-11e3-81ab-4c9367dc0958", "push", 0,
	    &out);
	CHECK(has(&out, "X-Hub-Signature-256", GH_SIG) &&
	    has(&out, "X-GitHub-Delivery",
	    "72d3162e-cc78-11e3-81ab-4c9367dc0958") &&
	    has(&out, "X-GitHub-Event", "push"),
	    "github: sig_sign reproduces the documented example");
}

static void
test_slack(const struct conf *cf)
{
	const struct conf_endpoint	*e = ep(cf, "slack");
	struct sig_verdict		 v;
	struct sig_out			 out;
	enum hook_err			 er;

	er = run(e, ENV("HTTP_X_SLACK_REQUEST_TIMESTAMP=" SL_TS,
	    "HTTP_X_SLACK_SIGNATURE=" SL_SIG), SL_BODY, SL_T, &v);
	CHECK(er == HOOK_OK, "slack: the documented example verifies");
	er = run(e, ENV("HTTP_X_SLACK_REQUEST_TIMESTAMP=" SL_TS,
	    "HTTP_X_SLACK_SIGNATURE=" SL_SIG), SL_BODY, SL_T + 301, &v);
	CHECK(er == HOOK_ESTALE && v.skew == 301,
	    "slack: 301 s later -> stale (Slack advises 5 minutes)");
	er = run(e, ENV("HTTP_X_SLACK_REQUEST_TIMESTAMP=1531420619",
	    "HTTP_X_SLACK_SIGNATURE=" SL_SIG), SL_BODY, SL_T, &v);
	CHECK(er == HOOK_ESIG, "slack: another timestamp -> refused");
	er = run(e, ENV("HTTP_X_SLACK_REQUEST_TIMESTAMP=" SL_TS,
	    "HTTP_X_SLACK_SIGNATURE=" SL_SIG), SL_BODY "&x=1", SL_T, &v);
	CHECK(er == HOOK_ESIG, "slack: body with a field added -> refused");
	sign(e, SL_BODY, "unused", NULL, SL_T, &out);
	CHECK(has(&out, "X-Slack-Request-Timestamp", SL_TS) &&
	    has(&out, "X-Slack-Signature", SL_SIG),
	    "slack: sig_sign reproduces the documented example");
}

static void
test_paddle(const struct conf *cf)
{
	const struct conf_endpoint	*e = ep(cf, "paddle");
	struct sig_verdict		 v;
	struct sig_out			 out;
	enum hook_err			 er;

	er = run(e, ENV("HTTP_PADDLE_SIGNATURE=" PD_DOC), PD_BODY, PD_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "matched"),
	    "paddle: the documented header parses (and matches nothing here)");
	er = run(e, ENV("HTTP_PADDLE_SIGNATURE=" PD_SIG), PD_BODY, PD_T, &v);
	CHECK(er == HOOK_OK, "paddle: the computed vector verifies");
	er = run(e, ENV("HTTP_PADDLE_SIGNATURE=ts=1671552777;h1="
	    "eb4d0dc8853be92b7f063b9f3ba5233eb920a09459b6e6b2c26705b4364db151;"
	    "h1=" PD_H1), PD_BODY, PD_T, &v);
	CHECK(er == HOOK_OK, "paddle: two h1 (a secret rotation), the second "
	    "matches");
	er = run(e, ENV("HTTP_PADDLE_SIGNATURE=" PD_SIG), PD_BODY, PD_T + 301,
	    &v);
	CHECK(er == HOOK_ESTALE, "paddle: 301 s later -> stale");
	er = run(e, ENV("HTTP_PADDLE_SIGNATURE=ts=1671552778;h1=" PD_H1),
	    PD_BODY, PD_T, &v);
	CHECK(er == HOOK_ESIG, "paddle: another ts -> refused");
	sign(e, PD_BODY, "unused", NULL, PD_T, &out);
	CHECK(has(&out, "Paddle-Signature", PD_SIG),
	    "paddle: sig_sign reproduces the computed vector");
}

static void
test_stripe(const struct conf *cf)
{
	const struct conf_endpoint	*e = ep(cf, "stripe");
	struct sig_verdict		 v;
	struct sig_out			 out;
	enum hook_err			 er;

	er = run(e, ENV("HTTP_STRIPE_SIGNATURE=" ST_SIG), ST_BODY, ST_T, &v);
	CHECK(er == HOOK_OK, "stripe: stripe-node's generateTestHeaderString "
	    "vector verifies");
	er = run(e, ENV("HTTP_STRIPE_SIGNATURE=" ST_SIG ",v0=" ST_DOC_V0),
	    ST_BODY, ST_T, &v);
	CHECK(er == HOOK_OK, "stripe: with a v0 entry, as in the documented "
	    "layout");
	er = run(e, ENV("HTTP_STRIPE_SIGNATURE=t=1492774577,v1=" ST_DOC_V1
	    ",v0=" ST_DOC_V0), ST_BODY, ST_T, &v);
	CHECK(er == HOOK_ESIG && why_has(&v, "matched"),
	    "stripe: the documented header parses (and matches nothing here)");
	er = run(e, ENV("HTTP_STRIPE_SIGNATURE=" ST_SIG), ST_BODY, ST_T + 301,
	    &v);
	CHECK(er == HOOK_ESTALE, "stripe: 301 s later -> stale (the "
	    "libraries' default tolerance is 300 s)");
	er = run(e, ENV("HTTP_STRIPE_SIGNATURE=" ST_SIG),
	    "{\"id\": \"evt_test_webhook\", \"object\": \"event\"}", ST_T, &v);
	CHECK(er == HOOK_ESIG,
	    "stripe: the same JSON re-serialised -> refused (raw bytes)");
	sign(e, ST_BODY, "unused", NULL, ST_T, &out);
	CHECK(has(&out, "Stripe-Signature", ST_SIG),
	    "stripe: sig_sign reproduces stripe-node's header");
}

static void
test_shopify(const struct conf *cf)
{
	const struct conf_endpoint	*e = ep(cf, "shopify");
	struct sig_verdict		 v;
	struct sig_out			 out;
	enum hook_err			 er;

	er = run(e, ENV("HTTP_X_SHOPIFY_HMAC_SHA256=" SH_SIG), SH_BODY, 0, &v);
	CHECK(er == HOOK_OK, "shopify: the computed vector verifies");
	er = run(e, ENV("HTTP_X_SHOPIFY_HMAC_SHA256=" SH_SIG),
	    "{\"id\":820982911946154508,\"email\":\"jon@doe.ca\","
	    "\"total_price\":\"254.99\"}", 0, &v);
	CHECK(er == HOOK_ESIG, "shopify: the price changed -> refused");
	sign(e, SH_BODY, "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
	    "orders/create", 0, &out);
	CHECK(has(&out, "X-Shopify-Hmac-Sha256", SH_SIG) &&
	    has(&out, "X-Shopify-Topic", "orders/create") &&
	    has(&out, "X-Shopify-Event-Id",
	    "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043"),
	    "shopify: sig_sign reproduces the computed vector");
}

static void
test_gitlab(const struct conf *cf)
{
	const struct conf_endpoint	*e = ep(cf, "gitlab");
	struct sig_verdict		 v;
	struct sig_out			 out;
	enum hook_err			 er;

	er = run(e, ENV("HTTP_X_GITLAB_TOKEN=" GL_SECRET), "{}", 0, &v);
	CHECK(er == HOOK_OK, "gitlab: the token verifies");
	er = run(e, ENV("HTTP_X_GITLAB_TOKEN=" GL_SECRET "x"), "{}", 0, &v);
	CHECK(er == HOOK_ESIG, "gitlab: the token with a byte appended -> "
	    "refused");
	er = run(e, ENV("HTTP_X_GITLAB_TOKEN=glwht-e2e-token-6d1"), "{}", 0,
	    &v);
	CHECK(er == HOOK_ESIG, "gitlab: a prefix of the token -> refused");
	sign(e, "{}", "3e1a6f60-77b1-4c8c-9b0a-4f5c3c4b9d21", "Push Hook", 0,
	    &out);
	CHECK(has(&out, "X-Gitlab-Token", GL_SECRET) &&
	    has(&out, "X-Gitlab-Event", "Push Hook") &&
	    has(&out, "X-Gitlab-Event-UUID",
	    "3e1a6f60-77b1-4c8c-9b0a-4f5c3c4b9d21"),
	    "gitlab: sig_sign sends the token");
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

	test_standard(cf);
	test_svix(cf);
	test_github(cf);
	test_slack(cf);
	test_paddle(cf);
	test_stripe(cf);
	test_shopify(cf);
	test_gitlab(cf);
	conf_free(cf);
	return tap_done();
}
