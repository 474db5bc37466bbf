/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: configuration from the environment (src/conf.c).
 *
 * conf_load() reads its variables through a lookup function, so each
 * test feeds it a table: a valid base and a few overrides.  Checked: a
 * full named configuration and its defaults, the single unnamed
 * endpoint, routing, that every bad value is refused with an error that
 * starts with the variable's name, secrets (rotation, files), durations
 * and the "inside DOCUMENT_ROOT" test on real temporary files.
 */
#include "config.h"

#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "lib/envindex.h"
#include "lib/log.h"
#include "lib/pubkey.h"
#include "pipeline/route.h"
#include "pipeline/sig.h"
#include "front/req.h"
#include "testlib.h"
#include "tap.h"

/*
 * A test environment: "NAME=value" strings.  Overrides come first; an
 * override of just "NAME" unsets that variable of the base.
 */
struct env {
	const char *const	*over;
	const char *const	*base;
};

/* A valid configuration with two named endpoints (SPEC section 3). */
static const char *const named[] = {
	"ONCEHOOK_DB=/var/lib/oncehook/hooks.db",
	"ONCEHOOK_ENDPOINTS=stripe,stripe-eu",
	"ONCEHOOK_STRIPE_SCHEME=stripe",
	"ONCEHOOK_STRIPE_SECRET=whsec_main",
	"ONCEHOOK_STRIPE_EU_SCHEME=stripe",
	"ONCEHOOK_STRIPE_EU_SECRET=whsec_eu_old whsec_eu_new",
	"ONCEHOOK_STRIPE_EU_TOLERANCE=600",
	"ONCEHOOK_STRIPE_EU_RETENTION=72h",
	"ONCEHOOK_STRIPE_EU_KEY=header:X-Request-Id json:/data/object/id",
	"ONCEHOOK_STRIPE_EU_ACTIONS=/srv/hooks/eu.sql",
	NULL
};

/* A valid configuration of the single unnamed endpoint. */
static const char *const single[] = {
	"ONCEHOOK_DB=/var/lib/oncehook/hooks.db",
	"ONCEHOOK_SCHEME=hmac-sha256",
	"ONCEHOOK_SECRET=s3cr3t-value",
	NULL
};

/* Temporary files and directories, removed at exit (also on BAIL). */
static char	 tmpdir[256];
static char	*made[48];
static size_t	 nmade;

static const char *
find(const char *const *list, const char *name, int *found)
{
	size_t	 len = strlen(name);

	*found = 0;
	for (; list != NULL && *list != NULL; list++) {
		if (strncmp(*list, name, len) != 0)
			continue;
		if ((*list)[len] == '=') {
			*found = 1;
			return *list + len + 1;
		}
		if ((*list)[len] == '\0') {
			*found = 1;
			return NULL;
		}
	}
	return NULL;
}

static const char *
env_get(const char *name, void *arg)
{
	const struct env	*e = arg;
	const char		*v;
	int			 found;

	v = find(e->over, name, &found);
	if (found)
		return v;
	return find(e->base, name, &found);
}

static struct conf *
load(const char *const *base, const char *const *over, char *err,
    size_t errsz)
{
	struct env	 e = { over, base };

	err[0] = '\0';
	return conf_load(env_get, &e, err, errsz);
}

/* 1 if err starts with "VAR: " for var. */
static int
names(const char *err, const char *var)
{
	size_t	 n = strlen(var);

	return strncmp(err, var, n) == 0 && err[n] == ':' && err[n + 1] == ' ';
}

/*
 * Check that base plus over is refused with an error naming var (or
 * alt, if not NULL).
 */
static void
refuses(const char *const *base, const char *const *over, const char *var,
    const char *alt, const char *what)
{
	struct conf	*cf;
	char		 err[512];

	cf = load(base, over, err, sizeof(err));
	CHECK(cf == NULL && (names(err, var) ||
	    (alt != NULL && names(err, alt))),
	    "%s: refused naming %s (\"%s\")", what, var, err);
	conf_free(cf);
}

#define OVER(...)	((const char *const []){ __VA_ARGS__, NULL })

/* A conf_warnings() callback: messages joined with "|" into arg. */
static void
collect(void *arg, const char *message)
{
	char	*seen = arg;

	strncat(seen, message, 200);
	strcat(seen, "|");
}

static int
secret_is(const struct secret *s, const char *text)
{
	return s->sz == strlen(text) && memcmp(s->p, text, s->sz) == 0;
}

static int
src_is(const struct src *s, enum src_kind kind, const char *arg)
{
	if (s->kind != kind)
		return 0;
	if (arg == NULL)
		return s->arg == NULL;
	return s->arg != NULL && strcmp(s->arg, arg) == 0;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t	 a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void
test_named(void)
{
	const struct conf_endpoint	*s, *eu;
	struct conf			*cf;
	char				 err[512], name[64], upper[64];
	char				 list[128], scheme[128];
	char				 secret[128], path[128];

	cf = load(named, NULL, err, sizeof(err));
	CHECK(cf != NULL, "named configuration loads (%s)", err);
	if (cf == NULL)
		return;
	CHECK(cf->named == 1 && cf->nendpoints == 2,
	    "two named endpoints");
	CHECK(strcmp(cf->db, "/var/lib/oncehook/hooks.db") == 0,
	    "ONCEHOOK_DB kept");
	CHECK(cf->maxbody == 1048576, "ONCEHOOK_MAX_BODY defaults to 1 MiB");
	CHECK(cf->busy_ms == 5000, "ONCEHOOK_BUSY_TIMEOUT_MS defaults to 5000");
	CHECK(cf->synchronous_full == 1,
	    "ONCEHOOK_SYNCHRONOUS defaults to full");
	CHECK(cf->loglevel == LOG_LEVEL_INFO, "ONCEHOOK_LOG defaults to info");
	CHECK(cf->status_token == NULL, "status endpoint off by default");

	s = &cf->endpoints[0];
	eu = &cf->endpoints[1];
	CHECK(strcmp(s->name, "stripe") == 0 &&
	    strcmp(s->prefix, "ONCEHOOK_STRIPE_") == 0,
	    "first endpoint is stripe with prefix ONCEHOOK_STRIPE_");
	CHECK(strcmp(eu->name, "stripe-eu") == 0 &&
	    strcmp(eu->prefix, "ONCEHOOK_STRIPE_EU_") == 0,
	    "stripe-eu maps to ONCEHOOK_STRIPE_EU_");
	CHECK(s->scheme != NULL && s->scheme == scheme_find("stripe") &&
	    eu->scheme == s->scheme, "both use the stripe scheme");
	CHECK(s->nsecrets == 1 && secret_is(&s->secrets[0], "whsec_main"),
	    "stripe secret used as-is, whsec_ prefix included");
	CHECK(s->tolerance == 300, "tolerance defaults to 300 seconds");
	CHECK(s->retention == 30 * 86400, "retention defaults to 30 days");
	CHECK(s->key.n == 1 && src_is(&s->key.v[0], SRC_JSON, "/id"),
	    "stripe key defaults to json:/id");
	CHECK(s->type.n >= 1 && src_is(&s->type.v[0], SRC_JSON, "/type"),
	    "stripe event type from json:/type");
	CHECK(s->actions != NULL && s->actions[0] == '/' &&
	    ends_with(s->actions, "/actions/orders.sql"),
	    "actions default to the shipped actions/orders.sql (%s)",
	    s->actions ? s->actions : "(null)");

	CHECK(eu->nsecrets == 2 &&
	    secret_is(&eu->secrets[0], "whsec_eu_old") &&
	    secret_is(&eu->secrets[1], "whsec_eu_new"),
	    "two space-separated secrets: rotation, in order");
	CHECK(eu->tolerance == 600, "ONCEHOOK_STRIPE_EU_TOLERANCE=600");
	CHECK(eu->retention == 72 * 3600, "ONCEHOOK_STRIPE_EU_RETENTION=72h");
	CHECK(eu->key.n == 2 &&
	    src_is(&eu->key.v[0], SRC_HEADER, "X-Request-Id") &&
	    src_is(&eu->key.v[1], SRC_JSON, "/data/object/id"),
	    "ONCEHOOK_STRIPE_EU_KEY parsed in order");
	CHECK(strcmp(eu->actions, "/srv/hooks/eu.sql") == 0,
	    "ONCEHOOK_STRIPE_EU_ACTIONS kept");

	/* Routing: the last segment of PATH_INFO, else of SCRIPT_NAME. */
	CHECK(route_endpoint(cf, "/hooks/stripe", NULL) == s,
	    "route /hooks/stripe -> stripe");
	CHECK(route_endpoint(cf, "/stripe-eu", "/cgi-bin/oncehook.cgi") == eu,
	    "route PATH_INFO /stripe-eu -> stripe-eu, script name ignored");
	CHECK(route_endpoint(cf, "/hooks/stripe/", NULL) == s,
	    "route with a trailing slash -> stripe");
	CHECK(route_endpoint(cf, "", "/cgi-bin/stripe-eu") == eu,
	    "empty PATH_INFO falls back to SCRIPT_NAME");
	CHECK(route_endpoint(cf, NULL, "/hooks/stripe") == s,
	    "NULL PATH_INFO falls back to SCRIPT_NAME");
	CHECK(route_endpoint(cf, "/hooks/github", NULL) == NULL,
	    "unknown endpoint name -> NULL");
	CHECK(route_endpoint(cf, "/stripe/extra", NULL) == NULL,
	    "only the last segment counts");
	CHECK(route_endpoint(cf, "/hooks/strip", NULL) == NULL &&
	    route_endpoint(cf, "/hooks/stripe-e", NULL) == NULL,
	    "a prefix of a name does not route");
	CHECK(route_endpoint(cf, "/", NULL) == NULL &&
	    route_endpoint(cf, NULL, NULL) == NULL &&
	    route_endpoint(cf, "", "") == NULL,
	    "no segment -> NULL");
	CHECK(route_endpoint(cf, "/hooks/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	    NULL) == NULL, "a segment longer than any name -> NULL");
	/* lighttpd mod_fastcgi splits POST /hooks/stripe/ so. */
	CHECK(route_endpoint(cf, "/", "/hooks/stripe") == s,
	    "PATH_INFO / with SCRIPT_NAME /hooks/stripe -> stripe");
	CHECK(route_endpoint(cf, "//", "/hooks/stripe-eu/") == eu,
	    "PATH_INFO // with SCRIPT_NAME /hooks/stripe-eu/ -> stripe-eu");
	CHECK(route_endpoint(cf, "/hooks/stripe///", "/cgi-bin/x") == s,
	    "several trailing slashes -> stripe");
	conf_free(cf);

	/* The longest name, 63 characters, and its variables. */
	memset(name, 'a', 63);
	name[63] = '\0';
	snprintf(list, sizeof(list), "ONCEHOOK_ENDPOINTS=%s", name);
	memset(upper, 'A', 63);
	upper[63] = '\0';
	snprintf(scheme, sizeof(scheme), "ONCEHOOK_%s_SCHEME=stripe", upper);
	snprintf(secret, sizeof(secret), "ONCEHOOK_%s_SECRET=whsec_x", upper);
	snprintf(path, sizeof(path), "/hooks/%s", name);
	cf = load(named, OVER(list, scheme, secret), err, sizeof(err));
	CHECK(cf != NULL && cf->nendpoints == 1 &&
	    route_endpoint(cf, path, NULL) == &cf->endpoints[0],
	    "an endpoint name of 63 characters loads and routes (%s)", err);
	conf_free(cf);

	cf = load(named, OVER("ONCEHOOK_ENDPOINTS= stripe , stripe-eu"), err,
	    sizeof(err));
	CHECK(cf != NULL && cf->nendpoints == 2 &&
	    strcmp(cf->endpoints[0].name, "stripe") == 0 &&
	    strcmp(cf->endpoints[1].name, "stripe-eu") == 0,
	    "spaces around endpoint names are trimmed (%s)", err);
	conf_free(cf);
}

/* The name a path asks for: the last non-empty segment of PATH_INFO,
 * else of SCRIPT_NAME. */
static void
test_route_name(void)
{
	static const struct {
		const char	*path_info, *script_name, *want;
	} cases[] = {
		{ "/hooks/shop", NULL, "shop" },
		{ "/hooks/shop/", NULL, "shop" },
		{ "/hooks/shop///", NULL, "shop" },
		{ "shop", NULL, "shop" },
		{ "/", "/hooks/shop", "shop" },
		{ "/", "/hooks/shop/", "shop" },
		{ "//", "/hooks/shop", "shop" },
		{ "", "/hooks/shop", "shop" },
		{ NULL, "/hooks/shop//", "shop" },
		{ "/shop", "/hooks/other", "shop" },
		{ "/", NULL, "" },
		{ "//", "/", "" },
		{ "", "", "" },
		{ NULL, NULL, "" },
		{ "///", "//", "" },
	};
	char	 buf[CONF_NAME_MAX], longer[200];
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(buf, 'X', sizeof(buf));
		route_name(cases[i].path_info, cases[i].script_name, buf,
		    sizeof(buf));
		CHECK(strcmp(buf, cases[i].want) == 0, "route name of "
		    "PATH_INFO %s, SCRIPT_NAME %s is \"%s\" (got \"%.70s\")",
		    cases[i].path_info ? cases[i].path_info : "(unset)",
		    cases[i].script_name ? cases[i].script_name : "(unset)",
		    cases[i].want, buf);
	}
	/* A segment too long for any name names nothing, and does not
	 * fall back to SCRIPT_NAME. */
	memset(longer, 'a', sizeof(longer) - 1);
	longer[0] = '/';
	longer[sizeof(longer) - 1] = '\0';
	route_name(longer, "/hooks/shop", buf, sizeof(buf));
	CHECK(buf[0] == '\0', "a PATH_INFO segment too long for a name "
	    "routes nowhere (got \"%.70s\")", buf);
}

static void
test_single(void)
{
	const struct conf_endpoint	*ep;
	struct conf			*cf;
	char				 err[512];

	cf = load(single, NULL, err, sizeof(err));
	CHECK(cf != NULL, "unnamed single endpoint loads (%s)", err);
	if (cf == NULL)
		return;
	ep = &cf->endpoints[0];
	CHECK(cf->named == 0 && cf->nendpoints == 1,
	    "one unnamed endpoint");
	CHECK(strcmp(ep->name, "default") == 0 &&
	    strcmp(ep->prefix, "ONCEHOOK_") == 0,
	    "it is called default and reads ONCEHOOK_*");
	CHECK(ep->scheme == scheme_find("hmac-sha256"),
	    "ONCEHOOK_SCHEME=hmac-sha256");
	CHECK(ep->nsecrets == 1 && secret_is(&ep->secrets[0], "s3cr3t-value"),
	    "ONCEHOOK_SECRET kept");
	CHECK(ep->key.n == 4 &&
	    src_is(&ep->key.v[0], SRC_HEADER, "X-Idempotency-Key") &&
	    src_is(&ep->key.v[1], SRC_JSON, "/id") &&
	    src_is(&ep->key.v[2], SRC_JSON, "/eventId") &&
	    src_is(&ep->key.v[3], SRC_HASH, NULL),
	    "hmac-sha256 key: X-Idempotency-Key, /id, /eventId, hash");
	CHECK(ep->tolerance == 300 && ep->retention == 30 * 86400,
	    "unnamed endpoint gets the same defaults");
	CHECK(route_endpoint(cf, "/hooks/anything", NULL) == ep &&
	    route_endpoint(cf, NULL, NULL) == ep &&
	    route_endpoint(cf, "", "/cgi-bin/oncehook.cgi") == ep,
	    "every path routes to the single endpoint");
	conf_free(cf);

	cf = load(single, OVER("ONCEHOOK_MAX_BODY=67108864",
	    "ONCEHOOK_BUSY_TIMEOUT_MS=0", "ONCEHOOK_SYNCHRONOUS=normal",
	    "ONCEHOOK_LOG=debug", "ONCEHOOK_STATUS_TOKEN=0123456789abcdef"),
	    err, sizeof(err));
	CHECK(cf != NULL && cf->maxbody == 64 << 20 && cf->busy_ms == 0 &&
	    cf->synchronous_full == 0 && cf->loglevel == LOG_LEVEL_DEBUG &&
	    cf->status_token != NULL &&
	    strcmp(cf->status_token, "0123456789abcdef") == 0,
	    "globals set at their limits are accepted (%s)", err);
	conf_free(cf);

	cf = load(single, OVER("ONCEHOOK_KEY=header:X-Id json:/a~1b hash",
	    "ONCEHOOK_RETENTION=forever", "ONCEHOOK_TOLERANCE=604800"),
	    err, sizeof(err));
	CHECK(cf != NULL && cf->endpoints[0].key.n == 3 &&
	    src_is(&cf->endpoints[0].key.v[0], SRC_HEADER, "X-Id") &&
	    src_is(&cf->endpoints[0].key.v[1], SRC_JSON, "/a~1b") &&
	    src_is(&cf->endpoints[0].key.v[2], SRC_HASH, NULL) &&
	    cf->endpoints[0].retention == -1 &&
	    cf->endpoints[0].tolerance == 604800,
	    "KEY with hash last, RETENTION forever, TOLERANCE 7 days (%s)",
	    err);
	conf_free(cf);

	cf = load(single, OVER("ONCEHOOK_SECRET=  one\ttwo   three "), err,
	    sizeof(err));
	CHECK(cf != NULL && cf->endpoints[0].nsecrets == 3 &&
	    secret_is(&cf->endpoints[0].secrets[0], "one") &&
	    secret_is(&cf->endpoints[0].secrets[1], "two") &&
	    secret_is(&cf->endpoints[0].secrets[2], "three"),
	    "secrets split on spaces and tabs, ends trimmed (%s)", err);
	conf_free(cf);

	cf = load(single, OVER("ONCEHOOK_SECRET=a b c d e f g h i j k l m n "
	    "o p"), err, sizeof(err));
	CHECK(cf != NULL && cf->endpoints[0].nsecrets == 16,
	    "sixteen secrets accepted (%s)", err);
	conf_free(cf);
}

/*
 * What is refused: base plus over, with an error naming var (or alt, if
 * not NULL).
 */
struct refusal {
	const char *const	*base;
	const char		*over[4];
	const char		*var;
	const char		*alt;
	const char		*what;
};

static const struct refusal refusals[] = {
	/* Process-wide variables. */
	{ single, { "ONCEHOOK_DB" }, "ONCEHOOK_DB", NULL,
	  "missing DB" },
	{ single, { "ONCEHOOK_DB=" }, "ONCEHOOK_DB", NULL,
	  "empty DB" },
	{ single, { "ONCEHOOK_DB=hooks.db" }, "ONCEHOOK_DB", NULL,
	  "relative DB" },
	{ single, { "ONCEHOOK_DB=./data/hooks.db" }, "ONCEHOOK_DB", NULL,
	  "relative DB with ./" },
	{ single, { "ONCEHOOK_MAX_BODY=0" }, "ONCEHOOK_MAX_BODY", NULL,
	  "MAX_BODY 0" },
	{ single, { "ONCEHOOK_MAX_BODY=abc" }, "ONCEHOOK_MAX_BODY", NULL,
	  "MAX_BODY abc" },
	{ single, { "ONCEHOOK_MAX_BODY=67108865" }, "ONCEHOOK_MAX_BODY", NULL,
	  "MAX_BODY one over 64 MiB" },
	{ single, { "ONCEHOOK_MAX_BODY=99999999999999999999" },
	  "ONCEHOOK_MAX_BODY", NULL,
	  "MAX_BODY overflowing" },
	{ single, { "ONCEHOOK_MAX_BODY=1024k" }, "ONCEHOOK_MAX_BODY", NULL,
	  "MAX_BODY with a unit" },
	{ single, { "ONCEHOOK_MAX_BODY=-1" }, "ONCEHOOK_MAX_BODY", NULL,
	  "MAX_BODY -1" },
	{ single, { "ONCEHOOK_BUSY_TIMEOUT_MS=-1" },
	  "ONCEHOOK_BUSY_TIMEOUT_MS", NULL,
	  "BUSY_TIMEOUT_MS -1" },
	{ single, { "ONCEHOOK_BUSY_TIMEOUT_MS=5s" },
	  "ONCEHOOK_BUSY_TIMEOUT_MS", NULL,
	  "BUSY_TIMEOUT_MS 5s" },
	{ single, { "ONCEHOOK_SYNCHRONOUS=bogus" },
	  "ONCEHOOK_SYNCHRONOUS", NULL,
	  "SYNCHRONOUS bogus" },
	{ single, { "ONCEHOOK_SYNCHRONOUS=off" }, "ONCEHOOK_SYNCHRONOUS", NULL,
	  "SYNCHRONOUS off" },
	{ single, { "ONCEHOOK_LOG=bogus" }, "ONCEHOOK_LOG", NULL,
	  "LOG bogus" },
	{ single, { "ONCEHOOK_STATUS_TOKEN=short" },
	  "ONCEHOOK_STATUS_TOKEN", NULL,
	  "STATUS_TOKEN too short" },
	{ single, { "ONCEHOOK_STATUS_TOKEN=0123456789abcde" },
	  "ONCEHOOK_STATUS_TOKEN", NULL,
	  "STATUS_TOKEN of 15 characters" },
	{ single, { "ONCEHOOK_STATUS_TOKEN=0123456789 abcdef" },
	  "ONCEHOOK_STATUS_TOKEN", NULL,
	  "STATUS_TOKEN with a space" },
	{ single, { "ONCEHOOK_STATUS_TOKEN=0123456789abcdef\xc3\xa9" },
	  "ONCEHOOK_STATUS_TOKEN", NULL,
	  "STATUS_TOKEN not ASCII" },
	{ single, { "ONCEHOOK_COUNTERS=yes" }, "ONCEHOOK_COUNTERS", NULL,
	  "COUNTERS yes" },
	{ named, {
	    "ONCEHOOK_ENDPOINTS=stripe,status",
	    "ONCEHOOK_STATUS_TOKEN=0123456789abcdef" },
	  "ONCEHOOK_ENDPOINTS", NULL,
	  "an endpoint named status while the status token is set" },
	/* The unnamed endpoint's variables. */
	{ single, { "ONCEHOOK_SCHEME" }, "ONCEHOOK_SCHEME", NULL,
	  "missing SCHEME" },
	{ single, { "ONCEHOOK_SCHEME=nope" }, "ONCEHOOK_SCHEME", NULL,
	  "unknown scheme" },
	{ single, { "ONCEHOOK_SCHEME=HMAC-SHA256 " }, "ONCEHOOK_SCHEME", NULL,
	  "scheme name with a trailing space" },
	{ single, { "ONCEHOOK_SECRET" },
	  "ONCEHOOK_SECRET", "ONCEHOOK_SECRET_FILE",
	  "missing secret fails closed" },
	{ single, { "ONCEHOOK_SECRET= \t " },
	  "ONCEHOOK_SECRET", "ONCEHOOK_SECRET_FILE",
	  "blank secret fails closed" },
	{ single, { "ONCEHOOK_SECRET=a b c d e f g h i j k l m n o " "p q" },
	  "ONCEHOOK_SECRET", NULL,
	  "seventeen secrets" },
	{ single, { "ONCEHOOK_SECRET_FILE=/nonexistent/secrets" },
	  "ONCEHOOK_SECRET", "ONCEHOOK_SECRET_FILE",
	  "SECRET and SECRET_FILE both set" },
	{ single, { "ONCEHOOK_TOLERANCE=0" }, "ONCEHOOK_TOLERANCE", NULL,
	  "TOLERANCE 0" },
	{ single, { "ONCEHOOK_TOLERANCE=x" }, "ONCEHOOK_TOLERANCE", NULL,
	  "TOLERANCE x" },
	{ single, { "ONCEHOOK_TOLERANCE=604801" }, "ONCEHOOK_TOLERANCE", NULL,
	  "TOLERANCE over a week" },
	{ single, { "ONCEHOOK_TOLERANCE=300s" }, "ONCEHOOK_TOLERANCE", NULL,
	  "TOLERANCE with a unit" },
	{ single, { "ONCEHOOK_RETENTION=5x" }, "ONCEHOOK_RETENTION", NULL,
	  "RETENTION 5x" },
	{ single, { "ONCEHOOK_RETENTION=-1d" }, "ONCEHOOK_RETENTION", NULL,
	  "RETENTION -1d" },
	{ single, { "ONCEHOOK_RETENTION=30" }, "ONCEHOOK_RETENTION", NULL,
	  "RETENTION without a unit" },
	{ single, { "ONCEHOOK_KEY=bad:source" }, "ONCEHOOK_KEY", NULL,
	  "KEY bad source" },
	{ single, { "ONCEHOOK_KEY=hash json:/id" }, "ONCEHOOK_KEY", NULL,
	  "KEY hash not last" },
	{ single, { "ONCEHOOK_KEY=json:id" }, "ONCEHOOK_KEY", NULL,
	  "KEY JSON pointer without a leading slash" },
	{ single, { "ONCEHOOK_KEY=json:/a~2b" }, "ONCEHOOK_KEY", NULL,
	  "KEY JSON pointer with a bad ~ escape" },
	{ single, { "ONCEHOOK_KEY=header:" }, "ONCEHOOK_KEY", NULL,
	  "KEY header without a name" },
	{ single, { "ONCEHOOK_KEY=header:X:Id" }, "ONCEHOOK_KEY", NULL,
	  "KEY header name with a colon" },
	{ single, {
	    "ONCEHOOK_KEY=json:/a json:/b json:/c json:/d json:/e json:/f "
	    "json:/g json:/h json:/i" },
	  "ONCEHOOK_KEY", NULL,
	  "KEY with nine sources" },
	/* Named endpoints. */
	{ named, { "ONCEHOOK_ENDPOINTS=a b" }, "ONCEHOOK_ENDPOINTS", NULL,
	  "endpoint name \"a b\"" },
	{ named, { "ONCEHOOK_ENDPOINTS=stripe,,stripe-eu" },
	  "ONCEHOOK_ENDPOINTS", NULL,
	  "empty endpoint name" },
	{ named, { "ONCEHOOK_ENDPOINTS=stripe," }, "ONCEHOOK_ENDPOINTS", NULL,
	  "trailing comma" },
	{ named, { "ONCEHOOK_ENDPOINTS=hooks/stripe" },
	  "ONCEHOOK_ENDPOINTS", NULL,
	  "endpoint name with a slash" },
	{ named, {
	    "ONCEHOOK_ENDPOINTS=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaa" },
	  "ONCEHOOK_ENDPOINTS", NULL,
	  "endpoint name of 64 characters" },
	{ named, {
	    "ONCEHOOK_ENDPOINTS=a-b,a_b",
	    "ONCEHOOK_A_B_SCHEME=hmac-sha256",
	    "ONCEHOOK_A_B_SECRET=x" },
	  "ONCEHOOK_ENDPOINTS", NULL,
	  "names a-b and a_b collide" },
	{ named, { "ONCEHOOK_ENDPOINTS=stripe,stripe" },
	  "ONCEHOOK_ENDPOINTS", NULL,
	  "the same name twice" },
	{ named, { "ONCEHOOK_ENDPOINTS=stripe,Stripe" },
	  "ONCEHOOK_ENDPOINTS", NULL,
	  "names stripe and Stripe collide" },
	{ named, { "ONCEHOOK_ENDPOINTS=stripe,github" },
	  "ONCEHOOK_GITHUB_SCHEME", NULL,
	  "listed endpoint not configured" },
	{ named, { "ONCEHOOK_STRIPE_EU_SCHEME" },
	  "ONCEHOOK_STRIPE_EU_SCHEME", NULL,
	  "named endpoint without SCHEME" },
	{ named, { "ONCEHOOK_STRIPE_EU_SECRET" },
	  "ONCEHOOK_STRIPE_EU_SECRET", "ONCEHOOK_STRIPE_EU_SECRET_FILE",
	  "named endpoint without a secret fails closed" },
	{ named, { "ONCEHOOK_STRIPE_EU_TOLERANCE=0" },
	  "ONCEHOOK_STRIPE_EU_TOLERANCE", NULL,
	  "named TOLERANCE 0" },
	{ named, { "ONCEHOOK_STRIPE_EU_RETENTION=5x" },
	  "ONCEHOOK_STRIPE_EU_RETENTION", NULL,
	  "named RETENTION 5x" },
	{ named, { "ONCEHOOK_STRIPE_EU_KEY=hash json:/id" },
	  "ONCEHOOK_STRIPE_EU_KEY", NULL,
	  "named KEY hash not last" },
	/* An unnamed variable does not stand in for a named one. */
	{ named, {
	    "ONCEHOOK_STRIPE_SECRET",
	    "ONCEHOOK_SECRET=whsec_x" },
	  "ONCEHOOK_STRIPE_SECRET", "ONCEHOOK_STRIPE_SECRET_FILE",
	  "ONCEHOOK_SECRET does not configure a named endpoint" },
};

static void
test_refused(void)
{
	struct conf	*cf;
	char		 small[8];
	size_t		 i;

	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
		refuses(refusals[i].base, refusals[i].over, refusals[i].var,
		    refusals[i].alt, refusals[i].what);
	{
		char		 err[512];

		cf = load(named, OVER("ONCEHOOK_ENDPOINTS=stripe,status",
		    "ONCEHOOK_STATUS_SCHEME=stripe",
		    "ONCEHOOK_STATUS_SECRET=whsec_x"), err, sizeof(err));
		CHECK(cf != NULL && cf->status_token == NULL,
		    "an endpoint named status without the token (%s)",
		    cf ? "" : err);
		CHECK(cf != NULL && cf->counters == 1, "COUNTERS defaults to on");
		conf_free(cf);
		cf = load(single, OVER("ONCEHOOK_STATUS_TOKEN="
		    "REPLACE_WITH_A_LONG_RANDOM_TOKEN"), err, sizeof(err));
		CHECK(cf != NULL && cf->status_token == NULL &&
		    cf->status_placeholder, "the example's placeholder token "
		    "leaves the status endpoint off");
		conf_free(cf);
		cf = load(single, OVER("ONCEHOOK_COUNTERS=off"), err,
		    sizeof(err));
		CHECK(cf != NULL && cf->counters == 0, "COUNTERS=off");
		conf_free(cf);
	}

	/* A tiny error buffer is truncated, not overrun. */
	memset(small, 'X', sizeof(small));
	cf = load(single, OVER("ONCEHOOK_MAX_BODY=0"), small, sizeof(small));
	CHECK(cf == NULL && memchr(small, '\0', sizeof(small)) != NULL,
	    "an error in a small buffer stays NUL-terminated");
	conf_free(cf);
}

/* Write len bytes to a new file in tmpdir; returns its path (static). */
static const char *
tmpfile_bytes(const char *name, const void *data, size_t len)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	if ((f = fopen(path, "w")) == NULL)
		BAIL("%s: cannot create", path);
	if (nmade == sizeof(made) / sizeof(made[0]) ||
	    (made[nmade++] = strdup(path)) == NULL)
		BAIL("too many temporary files");
	if (fwrite(data, 1, len, f) != len || fclose(f) == EOF)
		BAIL("%s: cannot write", path);
	return made[nmade - 1];
}

/* Write text to a new file in tmpdir; returns its path (static). */
static const char *
tmpfile_with(const char *name, const char *text)
{
	return tmpfile_bytes(name, text, strlen(text));
}

static void
test_secret_file(void)
{
	struct conf	*cf;
	const char	*path;
	char		 var[PATH_MAX + 32], err[512];

	path = tmpfile_with("secrets",
	    "# rotated in May\r\n"
	    "\r\n"
	    "  whsec_new  \r\n"
	    "\n"
	    "\t# the old one, until every sender moved\n"
	    "whsec_old\twith tab\r\n"
	    "whsec_last");
	snprintf(var, sizeof(var), "ONCEHOOK_SECRET_FILE=%s", path);
	cf = load(single, OVER("ONCEHOOK_SECRET", var), err, sizeof(err));
	CHECK(cf != NULL && cf->endpoints[0].nsecrets == 3,
	    "SECRET_FILE: comments, blank lines and CRLF skipped (%s)", err);
	if (cf != NULL && cf->endpoints[0].nsecrets == 3) {
		CHECK(secret_is(&cf->endpoints[0].secrets[0], "whsec_new"),
		    "SECRET_FILE: first secret trimmed of blanks and CR");
		CHECK(secret_is(&cf->endpoints[0].secrets[1],
		    "whsec_old\twith tab"),
		    "SECRET_FILE: a line is one secret, inner blanks kept");
		CHECK(secret_is(&cf->endpoints[0].secrets[2], "whsec_last"),
		    "SECRET_FILE: last line without a newline");
	}
	if (cf != NULL) {
		const struct conf_endpoint	*ep = NULL;
		const char			*f;

		/* The secrets file inside a served directory is exposed. */
		f = route_exposed(cf, tmpdir, &ep);
		CHECK(f != NULL && strcmp(f, path) == 0 &&
		    ep == &cf->endpoints[0],
		    "SECRET_FILE inside the document root is exposed");
		f = route_exposed(cf, "/nonexistent-root", &ep);
		CHECK(f == NULL, "nothing exposed under another root");
	}
	conf_free(cf);

	path = tmpfile_with("comments", "# nothing here\r\n\r\n   \n");
	snprintf(var, sizeof(var), "ONCEHOOK_SECRET_FILE=%s", path);
	refuses(single, OVER("ONCEHOOK_SECRET", var), "ONCEHOOK_SECRET_FILE",
	    NULL, "SECRET_FILE without a secret fails closed");

	snprintf(var, sizeof(var), "ONCEHOOK_SECRET_FILE=%s/absent", tmpdir);
	refuses(single, OVER("ONCEHOOK_SECRET", var), "ONCEHOOK_SECRET_FILE",
	    NULL, "SECRET_FILE that does not exist");
}

/* cf (loaded into err) is refused with an error naming var, holding
 * every word of want ("|" separated) and never the secret's text. */
static void
refused_saying(struct conf *cf, const char *err, const char *var,
    const char *want, const char *what)
{
	char	 words[128], *w, *save;
	int	 ok;

	ok = cf == NULL && names(err, var) &&
	    strstr(err, "the-real-secret") == NULL;
	snprintf(words, sizeof(words), "%s", want);
	for (w = strtok_r(words, "|", &save); w != NULL;
	    w = strtok_r(NULL, "|", &save))
		ok = ok && strstr(err, w) != NULL;
	CHECK(ok, "%s: refused naming %s, saying %s, secret not shown "
	    "(\"%s\")", what, var, want, err);
	conf_free(cf);
}

/* Refuse a secret file (bytes data of size len), as refused_saying(). */
static void
refuses_file(const char *name, const void *data, size_t len,
    const char *want, const char *what)
{
	struct conf	*cf;
	char		 var[PATH_MAX + 32], err[512];

	snprintf(var, sizeof(var), "ONCEHOOK_SECRET_FILE=%s",
	    tmpfile_bytes(name, data, len));
	cf = load(single, OVER("ONCEHOOK_SECRET", var), err, sizeof(err));
	refused_saying(cf, err, "ONCEHOOK_SECRET_FILE", want, what);
}

/* Refuse ONCEHOOK_SECRET=text, as refused_saying(). */
static void
refuses_text(const char *text, const char *want, const char *what)
{
	struct conf	*cf;
	char		 var[256], err[512];

	snprintf(var, sizeof(var), "ONCEHOOK_SECRET=%s", text);
	cf = load(single, OVER(var), err, sizeof(err));
	refused_saying(cf, err, "ONCEHOOK_SECRET", want, what);
}

/*
 * Secrets are UTF-8 text.  A NUL byte would cut the key where it is read
 * as a C string: a UTF-16 file made the key FF FE 72, forgeable in a
 * few hundred tries.  A byte-order mark or bytes that are not UTF-8 are
 * refused too, in a file and in the variable alike.
 */
static void
test_secret_encoding(void)
{
	/* "the-real-secret\r\n" as Windows Notepad saves "Unicode". */
	static const char utf16le[] = "\xff\xfet\0h\0e\0-\0r\0e\0a\0l\0-\0"
	    "s\0e\0c\0r\0e\0t\0\r\0\n\0";
	static const char utf16be[] = "\xfe\xff\0t\0h\0e\0-\0r\0e\0a\0l\0-"
	    "\0s\0e\0c\0r\0e\0t\0\r\0\n";
	static const char utf16nobom[] = "t\0h\0e\0-\0r\0e\0a\0l\0-\0s\0e\0"
	    "c\0r\0e\0t\0\n\0";
	static const char nul[] = "# ok so far\nthe-real-secret-0001\n"
	    "ab\0the-real-secret\n";
	struct conf	*cf;
	const char	*path;
	char		 var[PATH_MAX + 32], err[512];

	refuses_file("utf16le", utf16le, sizeof(utf16le) - 1,
	    "line 1|UTF-16", "UTF-16 file with a BOM (FF FE)");
	refuses_file("utf16be", utf16be, sizeof(utf16be) - 1,
	    "line 1|UTF-16", "UTF-16 file with a BOM (FE FF)");
	refuses_file("utf16nobom", utf16nobom, sizeof(utf16nobom) - 1,
	    "line 1|NUL", "UTF-16 file without a BOM");
	refuses_file("nul", nul, sizeof(nul) - 1, "line 3|NUL",
	    "ab\\0secret on line 3");
	refuses_file("utf8bom", "\xef\xbb\xbfthe-real-secret\n", 19,
	    "line 1|byte-order mark", "UTF-8 BOM (EF BB BF)");
	refuses_file("bommid", "the-real-secret-1\n\xef\xbb\xbfthe-real-secret"
	    "\n", 37, "line 2|byte-order mark", "a BOM at a later line");
	refuses_file("c328", "the-real-secret\xc3\x28\n", 18,
	    "line 1|UTF-8", "invalid UTF-8 (C3 28)");
	refuses_file("latin1", "the-real-secret\n# caf\xe9\n", 22,
	    "line 2|UTF-8", "Latin-1 in a comment: the file is not UTF-8");
	refuses_file("overlong2", "the-real-secret\xc0\xaf\n", 18,
	    "line 1|UTF-8", "overlong '/' (C0 AF)");
	refuses_file("overlong3", "the-real-secret\xe0\x80\xaf\n", 19,
	    "line 1|UTF-8", "overlong '/' (E0 80 AF)");
	refuses_file("overlong4", "the-real-secret\xf0\x80\x80\xaf\n", 20,
	    "line 1|UTF-8", "overlong '/' (F0 80 80 AF)");
	refuses_file("surrogate", "the-real-secret\xed\xa0\x80\n", 19,
	    "line 1|UTF-8", "a UTF-16 surrogate (ED A0 80)");
	refuses_file("past", "the-real-secret\xf4\x90\x80\x80\n", 20,
	    "line 1|UTF-8", "past U+10FFFF (F4 90 80 80)");
	refuses_file("cut", "the-real-secret\xe2\x82", 17,
	    "line 1|UTF-8", "a sequence cut by the end of the file");
	refuses_file("cr", "the-real-secret-1\rthe-real-secret-2\r", 36,
	    "line 1|carriage return", "CR-only line endings");

	refuses_text("\xef\xbb\xbfthe-real-secret", "secret 1|byte-order mark",
	    "UTF-8 BOM in the variable");
	refuses_text("the-real-secret-0 the-real-secret\xc3\x28",
	    "secret 2|UTF-8", "invalid UTF-8 in the second secret");
	refuses_text("\xff\xfethe-real-secret", "secret 1|UTF-16",
	    "a UTF-16 BOM in the variable");
	refuses_text("the-real-secret\xc0\xaf", "secret 1|UTF-8",
	    "an overlong form in the variable");

	/* UTF-8 text beyond ASCII is a secret like any other. */
	path = tmpfile_with("utf8", "s\xc3\xa9\x63ret-\xe2\x82\xac-"
	    "\xf0\x9d\x84\x9e-0123456789\r\n");
	snprintf(var, sizeof(var), "ONCEHOOK_SECRET_FILE=%s", path);
	cf = load(single, OVER("ONCEHOOK_SECRET", var), err, sizeof(err));
	CHECK(cf != NULL && cf->endpoints[0].nsecrets == 1 &&
	    secret_is(&cf->endpoints[0].secrets[0], "s\xc3\xa9\x63ret-"
	    "\xe2\x82\xac-\xf0\x9d\x84\x9e-0123456789"),
	    "SECRET_FILE: UTF-8 beyond ASCII kept as its bytes, CRLF "
	    "stripped (%s)", err);
	conf_free(cf);
	cf = load(single, OVER("ONCEHOOK_SECRET=s\xc3\xa9\x63ret-\xe2\x82\xac"
	    "-0123456789"), err, sizeof(err));
	CHECK(cf != NULL && cf->endpoints[0].nsecrets == 1,
	    "SECRET: UTF-8 beyond ASCII accepted (%s)", err);
	conf_free(cf);

	/* CR and LF separate secrets in the variable (a value pasted from
	 * a CRLF file keeps no CR in its key). */
	cf = load(single, OVER("ONCEHOOK_SECRET=first-secret-0123456\r\n"
	    "second-secret-012345\r\n"), err, sizeof(err));
	CHECK(cf != NULL && cf->endpoints[0].nsecrets == 2 &&
	    secret_is(&cf->endpoints[0].secrets[0], "first-secret-0123456") &&
	    secret_is(&cf->endpoints[0].secrets[1], "second-secret-012345"),
	    "SECRET: CR and LF separate secrets, none kept in a key (%s)",
	    err);
	conf_free(cf);
}

/* A key shorter than 16 bytes is warned about, by variable and place,
 * never shown. */
static void
test_short_secret(void)
{
	static const char *const list[] = {
		"ONCEHOOK_SECRET=0123456789abcdef REPLACE_WITH_YOUR_SECRET "
		"s3cr3t-short", NULL
	};
	/* whsec_ and the base64 of 8 bytes, then of 16 bytes. */
	static const char *const standard[] = {
		"ONCEHOOK_SCHEME=standard",
		"ONCEHOOK_SECRET=whsec_MDEyMzQ1Njc= "
		"whsec_MDEyMzQ1Njc4OWFiY2RlZg==", NULL
	};
	const char	*none[] = { NULL };
	struct conf	*cf;
	const char	*path;
	char		 var[PATH_MAX + 32], err[512], seen[2048];
	int		 n;

	if ((cf = load(single, list, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	seen[0] = '\0';
	n = conf_warnings(cf, none, collect, seen);
	CHECK(n == 2 && strstr(seen, "ONCEHOOK_SECRET: secret 3 is shorter "
	    "than 16 bytes") != NULL && strstr(seen, "s3cr3t") == NULL &&
	    strstr(seen, "secret 1 ") == NULL,
	    "SECRET: the third secret (12 bytes) is short, the first (16) "
	    "not; never shown (got \"%s\")", seen);
	conf_free(cf);

	if ((cf = load(single, standard, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	seen[0] = '\0';
	n = conf_warnings(cf, none, collect, seen);
	CHECK(n == 1 && strstr(seen, "ONCEHOOK_SECRET: secret 1 is shorter "
	    "than 16 bytes once decoded") != NULL,
	    "standard: a whsec_ secret of 8 bytes once decoded is short, "
	    "one of 16 not (got \"%s\")", seen);
	conf_free(cf);

	path = tmpfile_with("short", "# keys\r\n0123456789abcdef\r\n\r\n"
	    "short-one\r\n");
	snprintf(var, sizeof(var), "ONCEHOOK_SECRET_FILE=%s", path);
	if ((cf = load(single, OVER("ONCEHOOK_SECRET", var), err,
	    sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	seen[0] = '\0';
	n = conf_warnings(cf, none, collect, seen);
	CHECK(n == 1 && strstr(seen, "ONCEHOOK_SECRET_FILE: ") != NULL &&
	    strstr(seen, "line 4 is shorter than 16 bytes") != NULL &&
	    strstr(seen, "short-one") == NULL,
	    "SECRET_FILE: the short secret named by its line (got \"%s\")",
	    seen);
	conf_free(cf);
}

static void
test_srclist(void)
{
	struct srclist	 sl;
	char		 err[256];
	int		 rc;

	memset(&sl, 0, sizeof(sl));
	rc = srclist_parse(&sl, "  header:X-A   json:/b  hash ", 1, err,
	    sizeof(err));
	CHECK(rc == 0 && sl.n == 3 &&
	    src_is(&sl.v[0], SRC_HEADER, "X-A") &&
	    src_is(&sl.v[1], SRC_JSON, "/b") &&
	    src_is(&sl.v[2], SRC_HASH, NULL),
	    "srclist_parse: three sources, extra spaces ignored");
	srclist_clear(&sl);
	CHECK(sl.n == 0, "srclist_clear empties the list");
	srclist_clear(&sl);

	rc = srclist_parse(&sl, "json:/id hash", 0, err, sizeof(err));
	CHECK(rc == -1 && sl.n == 0,
	    "srclist_parse: hash refused where not allowed");
	rc = srclist_parse(&sl, "   ", 1, err, sizeof(err));
	CHECK(rc == -1 && sl.n == 0, "srclist_parse: no source refused");
	rc = srclist_parse(&sl, "json:", 1, err, sizeof(err));
	CHECK(rc == 0 && sl.n == 1 && src_is(&sl.v[0], SRC_JSON, ""),
	    "srclist_parse: json: with the empty pointer (whole document)");
	srclist_clear(&sl);
	rc = srclist_parse(&sl, "json:/a header:X-B other", 1, err,
	    sizeof(err));
	CHECK(rc == -1 && sl.n == 0,
	    "srclist_parse: a bad third source frees the first two");
}

static void
test_duration(void)
{
	long long	 d;

	d = 0;
	CHECK(conf_duration("72h", &d) == 0 && d == 259200, "72h = 259200");
	d = 0;
	CHECK(conf_duration("30d", &d) == 0 && d == 2592000, "30d = 2592000");
	d = 0;
	CHECK(conf_duration("90m", &d) == 0 && d == 5400, "90m = 5400");
	d = 0;
	CHECK(conf_duration("1s", &d) == 0 && d == 1, "1s = 1");
	d = 0;
	CHECK(conf_duration("forever", &d) == 0 && d == -1, "forever = -1");

	d = 42;
	CHECK(conf_duration("", &d) == -1 && d == 42, "\"\" refused");
	CHECK(conf_duration("10", &d) == -1, "10 (no unit) refused");
	CHECK(conf_duration("0s", &d) == -1, "0s refused");
	CHECK(conf_duration("-1d", &d) == -1, "-1d refused");
	CHECK(conf_duration("1w", &d) == -1, "1w refused");
	CHECK(conf_duration("1dd", &d) == -1, "1dd refused");
	CHECK(conf_duration("d", &d) == -1, "d refused");
	CHECK(conf_duration(" 1d", &d) == -1, "leading space refused");
	CHECK(conf_duration("1 d", &d) == -1, "inner space refused");
	CHECK(conf_duration("Forever", &d) == -1, "Forever refused");
	CHECK(conf_duration("99999999999999999999s", &d) == -1,
	    "overflowing number refused");
	CHECK(conf_duration("999999999999999d", &d) == -1,
	    "product that would overflow refused");
	CHECK(d == 42, "a refused duration leaves the output untouched");
}

static void
test_path_inside(void)
{
	char	 a[512], ab[512], link[512], p[PATH_MAX], target[PATH_MAX];

	snprintf(a, sizeof(a), "%s/a", tmpdir);
	snprintf(ab, sizeof(ab), "%s/ab", tmpdir);
	snprintf(link, sizeof(link), "%s/link", tmpdir);
	if (mkdir(a, 0700) == -1 || mkdir(ab, 0700) == -1)
		BAIL("mkdir in %s failed", tmpdir);
	tmpfile_with("a/hooks.db", "");
	tmpfile_with("ab/hooks.db", "");
	if (symlink(a, link) == -1)
		BAIL("symlink %s failed", link);

	snprintf(p, sizeof(p), "%s/hooks.db", a);
	CHECK(route_path_inside(p, a) == 1, "file inside the directory");
	snprintf(p, sizeof(p), "%s/hooks.db", ab);
	CHECK(route_path_inside(p, a) == 0,
	    "prefix trap: %s/ab/hooks.db is not inside %s/a", tmpdir, tmpdir);
	CHECK(route_path_inside(p, tmpdir) == 1,
	    "file inside a parent directory");
	snprintf(p, sizeof(p), "%s/new.db", a);
	CHECK(route_path_inside(p, a) == 1,
	    "non-existent file in the directory is inside");
	snprintf(p, sizeof(p), "%s/new.db", ab);
	CHECK(route_path_inside(p, a) == 0,
	    "non-existent file in a sibling is not inside");
	snprintf(p, sizeof(p), "%s/hooks.db", link);
	CHECK(route_path_inside(p, a) == 1,
	    "path through a symlink into the directory is inside");
	snprintf(p, sizeof(p), "%s/new.db", link);
	CHECK(route_path_inside(p, a) == 1,
	    "non-existent file through a symlink is inside");
	snprintf(p, sizeof(p), "%s/hooks.db", a);
	CHECK(route_path_inside(p, link) == 1,
	    "directory given through a symlink");
	snprintf(p, sizeof(p), "%s/../ab/hooks.db", a);
	CHECK(route_path_inside(p, a) == 0, "dot-dot out of the directory");
	CHECK(route_path_inside(a, a) == 1, "the directory itself is inside");
	CHECK(route_path_inside(p, "/") == 1, "everything is inside /");
	snprintf(p, sizeof(p), "%s/hooks.db", a);
	CHECK(route_path_inside(p, "/nonexistent-oncehook-dir") == -1,
	    "missing directory is an error");
	snprintf(p, sizeof(p), "%s/nodir/new.db", a);
	CHECK(route_path_inside(p, a) == 1,
	    "file in a missing directory is inside as written");

	/* A link in the document root to a database elsewhere: the web
	 * server could follow it, so it counts as inside. */
	snprintf(p, sizeof(p), "%s/ln.db", a);
	snprintf(target, sizeof(target), "%s/hooks.db", ab);
	if (symlink(target, p) == -1)
		BAIL("symlink %s failed", p);
	CHECK(route_path_inside(p, a) == 1,
	    "symlink inside to a file outside is inside");
	CHECK(route_path_inside(target, a) == 0,
	    "its target, named directly, is not");

	if (unlink(link) == -1)
		BAIL("unlink %s failed", link);
}

static void
cleanup(void)
{
	char	 p[PATH_MAX];

	while (nmade > 0) {
		unlink(made[--nmade]);
		free(made[nmade]);
	}
	if (tmpdir[0] == '\0')
		return;
	snprintf(p, sizeof(p), "%s/link", tmpdir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/a", tmpdir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/ab", tmpdir);
	rmdir(p);
	rmdir(tmpdir);
}

/* A shipped example's placeholder never becomes a key. */
static void
test_placeholder(void)
{
	static const char *const only[] = {
		"ONCEHOOK_SECRET=whsec_REPLACE_WITH_YOUR_SIGNING_SECRET", NULL
	};
	static const char *const mixed[] = {
		"ONCEHOOK_SECRET=REPLACE_WITH_YOUR_SHARED_SECRET real-one", NULL
	};
	struct conf	*cf;
	char		 err[512];

	cf = load(single, only, err, sizeof(err));
	CHECK(cf != NULL && cf->endpoints[0].nsecrets == 0 &&
	    cf->endpoints[0].placeholder,
	    "placeholder only: loads with no secret (fails closed) (%s)",
	    err);
	conf_free(cf);
	cf = load(single, mixed, err, sizeof(err));
	CHECK(cf != NULL && cf->endpoints[0].nsecrets == 1 &&
	    secret_is(&cf->endpoints[0].secrets[0], "real-one"),
	    "placeholder beside a real secret: only the real one kept");
	conf_free(cf);
}

/* The replay guard: on where the signature covers no timestamp, or the
 * key comes from a header the signature does not cover. */
static void
test_replay_guard(void)
{
	static const char *const stripe[] = { "ONCEHOOK_SCHEME=stripe", NULL };
	static const char *const stripe_hdr[] = { "ONCEHOOK_SCHEME=stripe",
		"ONCEHOOK_KEY=header:X-Request-Id", NULL };
	static const char *const standard[] = {
		"ONCEHOOK_SCHEME=standard",
		"ONCEHOOK_SECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", NULL };
	static const char *const github[] = { "ONCEHOOK_SCHEME=github", NULL };
	const char *const	*cases[] = { stripe, stripe_hdr, standard, github };
	static const int	 want[] = { 0, 1, 0, 1 };
	static const char *const what[] = { "stripe, key from the body",
		"stripe, key from a header", "standard, key webhook-id (signed)",
		"github (no timestamp)" };
	struct conf		*cf;
	char			 err[512];
	size_t			 i;

	for (i = 0; i < 4; i++) {
		cf = load(single, cases[i], err, sizeof(err));
		CHECK(cf != NULL && cf->endpoints[0].replay_guard == want[i],
		    "replay guard %s for %s (%s)", want[i] ? "on" : "off",
		    what[i], err);
		conf_free(cf);
	}
}

/* Variables the configuration does not read are reported, others not;
 * a placeholder and STATUS_TOKEN are reported too. */
static void
test_unknown(void)
{
	static const char *const vars[] = {
		"ONCEHOOK_DB=/tmp/x.db", "ONCEHOOK_ENDPOINTS=stripe-eu",
		"ONCEHOOK_STRIPE_EU_SCHEME=stripe",
		"ONCEHOOK_STRIPE_EU_SECRET=whsec_0123456789abcdef", NULL
	};
	static const char *const placeholder[] = {
		"ONCEHOOK_STRIPE_EU_SECRET=whsec_REPLACE_WITH_YOUR_SECRET",
		"ONCEHOOK_STATUS_TOKEN=0123456789abcdef", NULL
	};
	const char	*envp[] = {
		"ONCEHOOK_DB=/tmp/x.db", "ONCEHOOK_ENDPOINTS=stripe-eu",
		"ONCEHOOK_STRIPE_EU_SCHEME=stripe",
		"ONCEHOOK_STRIPE_EU_SECRET=whsec_x",
		"ONCEHOOK_STRIPE_EU_SECRT=typo", "ONCEHOOK_SCHEME=stripe",
		"ONCEHOOK_LOG=info", "PATH=/bin", "ONCEHOOK_DBX=1", NULL
	};
	const char	*none[] = { NULL };
	struct conf	*cf;
	char		 err[256], seen[2048] = "";
	int		 n;

	if ((cf = load(vars, NULL, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	n = conf_warnings(cf, envp, collect, seen);
	CHECK(n == 3 && strstr(seen, "ONCEHOOK_STRIPE_EU_SECRT is not read") !=
	    NULL && strstr(seen, "ONCEHOOK_SCHEME is not read") != NULL &&
	    strstr(seen, "ONCEHOOK_DBX is not read") != NULL &&
	    strstr(seen, "ONCEHOOK_LOG") == NULL &&
	    strstr(seen, "ONCEHOOK_STRIPE_EU_SCHEME") == NULL,
	    "unread variables reported, read ones not (got \"%s\")", seen);
	conf_free(cf);

	/* A tolerance for a scheme that signs no time is read, in vain. */
	{
		static const char *const gh[] = {
			"ONCEHOOK_DB=/tmp/x.db", "ONCEHOOK_ENDPOINTS=gh,st",
			"ONCEHOOK_GH_SCHEME=github",
			"ONCEHOOK_GH_SECRET=0123456789abcdef0123",
			"ONCEHOOK_GH_TOLERANCE=600",
			"ONCEHOOK_ST_SCHEME=stripe",
			"ONCEHOOK_ST_SECRET=whsec_0123456789abcdef",
			"ONCEHOOK_ST_TOLERANCE=600", NULL
		};

		seen[0] = '\0';
		if ((cf = load(gh, NULL, err, sizeof(err))) == NULL)
			BAIL("conf_load: %s", err);
		n = conf_warnings(cf, (const char **)gh, collect, seen);
		CHECK(n == 1 && strstr(seen, "ONCEHOOK_GH_TOLERANCE is set, "
		    "but github signs no timestamp") != NULL &&
		    strstr(seen, "ONCEHOOK_ST_TOLERANCE") == NULL,
		    "check: a TOLERANCE for a scheme without a timestamp said "
		    "to change nothing, stripe's not (got \"%s\")", seen);
		conf_free(cf);
	}

	seen[0] = '\0';
	if ((cf = load(vars, placeholder, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	n = conf_warnings(cf, none, collect, seen);
	CHECK(n == 1 && strstr(seen, "ONCEHOOK_STRIPE_EU_SECRET holds the "
	    "example's placeholder") != NULL &&
	    strstr(seen, "ONCEHOOK_STATUS_TOKEN") == NULL,
	    "placeholder reported; STATUS_TOKEN, now served, not (got "
	    "\"%s\")", seen);
	conf_free(cf);
}

/* Every name conf_load() asked for, to check them against the table. */
struct asked {
	struct env	 env;
	char		 names[64][96];
	size_t		 n;
};

static const char *
asked_get(const char *name, void *arg)
{
	struct asked	*a = arg;

	if (a->n < 64)
		snprintf(a->names[a->n++], sizeof(a->names[0]), "%s", name);
	return env_get(name, &a->env);
}

/*
 * conf_load_for(): a command reads only the rows it uses.  Without
 * CONF_NEEDS_SECRETS the endpoints' secrets and the status token are not
 * read (bad or missing ones stop nothing, and nothing of them is kept);
 * without CONF_NEEDS_DB the database is not; CONF_NEEDS_ALL is
 * conf_load().
 */
static struct conf *
load_for(const char *const *over, unsigned needs, char *err, size_t errsz)
{
	struct env	 e = { over, named };

	err[0] = '\0';
	return conf_load_for(env_get, &e, needs, err, errsz);
}

/*
 * ONCEHOOK_DB_PREFIX may be empty (the man page says so): set and
 * empty is no prefix, not the default's, or a second installation so
 * configured would share the first one's tables (issue 36).
 */
static void
test_empty_prefix(void)
{
	struct conf	*cf;
	char		 err[512];

	cf = load(single, OVER("ONCEHOOK_DB=mysql://shop@localhost/shop",
	    "ONCEHOOK_DB_PREFIX="), err, sizeof(err));
	CHECK(cf != NULL && cf->db_prefix != NULL && cf->db_prefix[0] ==
	    '\0', "DB_PREFIX set and empty: no prefix (%s)", cf != NULL &&
	    cf->db_prefix != NULL ? cf->db_prefix : err);
	conf_free(cf);
	cf = load(single, OVER("ONCEHOOK_DB=mysql://shop@localhost/shop"),
	    err, sizeof(err));
	CHECK(cf != NULL && cf->db_prefix != NULL &&
	    strcmp(cf->db_prefix, "oncehook_") == 0,
	    "DB_PREFIX unset: the default, oncehook_ (%s)", cf != NULL &&
	    cf->db_prefix != NULL ? cf->db_prefix : err);
	conf_free(cf);
}

/*
 * ONCEHOOK_CERT_CACHE: beside a SQLite database by default, named only
 * where an endpoint fetches certificates; a MariaDB store must set it.
 */
static void
test_cert_cache(void)
{
	struct conf	*cf;
	char		 err[512];

	cf = load(single, OVER("ONCEHOOK_SCHEME=paypal",
	    "ONCEHOOK_SECRET=1JE4291016473214C"), err, sizeof(err));
	CHECK(cf != NULL && cf->certs.cache != NULL &&
	    strcmp(cf->certs.cache, "/var/lib/oncehook/hooks.db-certs") == 0,
	    "CERT_CACHE: a paypal endpoint's beside the database (%s)",
	    cf != NULL && cf->certs.cache != NULL ? cf->certs.cache : err);
	conf_free(cf);
	cf = load(single, NULL, err, sizeof(err));
	CHECK(cf != NULL && cf->certs.cache == NULL,
	    "CERT_CACHE: none named without an endpoint that fetches (%s)",
	    err);
	conf_free(cf);
	cf = load(single, OVER("ONCEHOOK_SCHEME=paypal",
	    "ONCEHOOK_SECRET=1JE4291016473214C",
	    "ONCEHOOK_DB=mysql://shop@localhost/shop"), err, sizeof(err));
	CHECK(cf == NULL && names(err, "ONCEHOOK_CERT_CACHE"),
	    "CERT_CACHE: a paypal endpoint on MariaDB must set it (%s)", err);
	conf_free(cf);
	cf = load(single, OVER("ONCEHOOK_SCHEME=paypal",
	    "ONCEHOOK_SECRET=1JE4291016473214C",
	    "ONCEHOOK_DB=mysql://shop@localhost/shop",
	    "ONCEHOOK_CERT_CACHE=/var/cache/oncehook"), err, sizeof(err));
	CHECK(cf != NULL && strcmp(cf->certs.cache, "/var/cache/oncehook") ==
	    0, "CERT_CACHE: set, on MariaDB (%s)", err);
	conf_free(cf);
}

/*
 * ONCEHOOK_DB_TLS: its default follows the host (off for the socket and
 * 127.0.0.0/8, verify-identity for any other), and the four variables
 * are checked together (docs/stores.md, "TLS"); without a server
 * (tests/tls.sh runs them against one).
 */
static void
test_db_tls(void)
{
	static const struct {
		const char	*db, *tls;
		int		 want;
	} dflt[] = {
		{ "mysql://shop@localhost/shop", NULL, CONF_TLS_OFF },
		{ "mysql://shop@localhost/shop?socket=/run/m.sock", NULL,
		    CONF_TLS_OFF },
		{ "mysql://shop@127.0.0.1:3307/shop", NULL, CONF_TLS_OFF },
		{ "mysql://shop@127.255.0.9/shop", NULL, CONF_TLS_OFF },
		{ "mysql://shop@128.0.0.1/shop", NULL,
		    CONF_TLS_VERIFY_IDENTITY },
		{ "mysql://shop@127.0.0.1.example.net/shop", NULL,
		    CONF_TLS_VERIFY_IDENTITY },
		{ "mysql://shop@db1.example.net/shop", NULL,
		    CONF_TLS_VERIFY_IDENTITY },
		{ "mysql://shop@db1.example.net/shop", "off", CONF_TLS_OFF },
		{ "mysql://shop@127.0.0.1/shop", "required",
		    CONF_TLS_REQUIRED },
		{ "/var/lib/oncehook/hooks.db", NULL, CONF_TLS_OFF },
	};
	struct conf	*cf;
	char		 err[512], tls[64];
	size_t		 i;

	for (i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++) {
		char	 db[128];

		snprintf(db, sizeof(db), "ONCEHOOK_DB=%s", dflt[i].db);
		snprintf(tls, sizeof(tls), "ONCEHOOK_DB_TLS%s%s",
		    dflt[i].tls != NULL ? "=" : "",
		    dflt[i].tls != NULL ? dflt[i].tls : "");
		cf = load(single, OVER(db, tls), err, sizeof(err));
		CHECK(cf != NULL && cf->db_tls == dflt[i].want,
		    "%s, ONCEHOOK_DB_TLS %s: %d (%s)", dflt[i].db,
		    dflt[i].tls != NULL ? dflt[i].tls : "unset",
		    cf != NULL ? cf->db_tls : -1, err);
		conf_free(cf);
	}
	cf = load(single, OVER("ONCEHOOK_DB=mysql://shop@db1.example.net/shop",
	    "ONCEHOOK_DB_TLS=verify-ca", "ONCEHOOK_DB_TLS_CA=/etc/o/ca.pem",
	    "ONCEHOOK_DB_TLS_CERT=/etc/o/c.pem",
	    "ONCEHOOK_DB_TLS_KEY=/etc/o/c.key"), err, sizeof(err));
	CHECK(cf != NULL && cf->db_tls == CONF_TLS_VERIFY_CA &&
	    cf->db_tls_ca != NULL && strcmp(cf->db_tls_ca, "/etc/o/ca.pem")
	    == 0 && cf->db_tls_cert != NULL && cf->db_tls_key != NULL,
	    "verify-ca with a CA, a certificate and its key (%s)", err);
	conf_free(cf);
	/* SQLite: the names are checked, and otherwise unused. */
	refuses(single, OVER("ONCEHOOK_DB_TLS=on"), "ONCEHOOK_DB_TLS", NULL,
	    "SQLite, DB_TLS=on");
	refuses(single, OVER("ONCEHOOK_DB=mysql://s@db1.example.net/s",
	    "ONCEHOOK_DB_TLS=Verify-CA"), "ONCEHOOK_DB_TLS", NULL,
	    "DB_TLS=Verify-CA (the words are lower case)");
	refuses(single, OVER("ONCEHOOK_DB=mysql://s@db1.example.net/s",
	    "ONCEHOOK_DB_TLS=verify-ca"), "ONCEHOOK_DB_TLS", NULL,
	    "verify-ca without a CA file");
	refuses(single, OVER("ONCEHOOK_DB=mysql://s@db1.example.net/s",
	    "ONCEHOOK_DB_TLS=required", "ONCEHOOK_DB_TLS_CA=/etc/o/ca.pem"),
	    "ONCEHOOK_DB_TLS_CA", NULL, "required with a CA file");
	refuses(single, OVER("ONCEHOOK_DB=mysql://s@127.0.0.1/s",
	    "ONCEHOOK_DB_TLS_CA=/etc/o/ca.pem"), "ONCEHOOK_DB_TLS_CA", NULL,
	    "a CA file with TLS off by default (127.0.0.1)");
	refuses(single, OVER("ONCEHOOK_DB=mysql://s@db1.example.net/s",
	    "ONCEHOOK_DB_TLS_CERT=/etc/o/c.pem"), "ONCEHOOK_DB_TLS_CERT",
	    NULL, "a certificate without its key");
	refuses(single, OVER("ONCEHOOK_DB=mysql://s@db1.example.net/s",
	    "ONCEHOOK_DB_TLS_KEY=/etc/o/c.key"), "ONCEHOOK_DB_TLS_KEY",
	    NULL, "a key without its certificate");
	refuses(single, OVER("ONCEHOOK_DB=mysql://s@db1.example.net/s",
	    "ONCEHOOK_DB_TLS_CA=ca.pem"), "ONCEHOOK_DB_TLS_CA", NULL,
	    "a relative CA path");
	refuses(single, OVER("ONCEHOOK_DB=mysql://s@localhost/s",
	    "ONCEHOOK_DB_TLS=verify-identity"), "ONCEHOOK_DB_TLS", NULL,
	    "TLS on the socket (localhost)");
	refuses(single, OVER("ONCEHOOK_DB=mysql://s@localhost/s?socket=/r/m",
	    "ONCEHOOK_DB_TLS_CERT=/etc/o/c.pem",
	    "ONCEHOOK_DB_TLS_KEY=/etc/o/c.key"), "ONCEHOOK_DB_TLS_CERT", NULL,
	    "a client certificate on the socket");
}

static void
test_needs(void)
{
	const char *const *bad = ENV("ONCEHOOK_STRIPE_SECRET=",
	    "ONCEHOOK_STRIPE_EU_SECRET=x", "ONCEHOOK_STRIPE_EU_SECRET_FILE=/x",
	    "ONCEHOOK_STATUS_TOKEN=short");
	struct conf	*cf;
	char		 err[512];

	cf = load_for(bad, CONF_NEEDS_DB, err, sizeof(err));
	CHECK(cf != NULL && cf->db != NULL && cf->endpoints[0].nsecrets ==
	    0 && cf->endpoints[1].nsecrets == 0 &&
	    cf->endpoints[1].secret_file == NULL && cf->status_token == NULL,
	    "needs DB: no secret, secret file or status token read, bad ones "
	    "stop nothing (%s)", err);
	conf_free(cf);
	cf = load_for(bad, CONF_NEEDS_ALL, err, sizeof(err));
	CHECK(cf == NULL && names(err, "ONCEHOOK_STATUS_TOKEN"),
	    "needs all: the same configuration refused (%s)", err);
	conf_free(cf);
	cf = load_for(ENV("ONCEHOOK_DB="), CONF_NEEDS_SECRETS, err,
	    sizeof(err));
	CHECK(cf != NULL && cf->db == NULL && cf->counters_file == NULL &&
	    cf->endpoints[1].nsecrets == 2,
	    "needs secrets: no database read, none required; the secrets "
	    "are (%s)", err);
	conf_free(cf);
	cf = load_for(ENV("ONCEHOOK_DB="), CONF_NEEDS_ALL, err, sizeof(err));
	CHECK(cf == NULL && names(err, "ONCEHOOK_DB"),
	    "needs all: no database refused, naming it (%s)", err);
	conf_free(cf);
}

/*
 * The configuration table: every variable conf_load() reads is a row of
 * conf_vars[], every row is read, and every row's default is accepted.
 */
static void
test_table(void)
{
	const struct conf_var		*cv;
	const struct conf_endpoint	*ep;
	struct asked			 a;
	struct conf			*cf;
	char				 err[512], unlisted[256];
	size_t				 i;
	int				 read, rows = 0, unread = 0;

	memset(&a, 0, sizeof(a));
	a.env.base = named;
	cf = conf_load(asked_get, &a, err, sizeof(err));
	if (cf == NULL)
		BAIL("named configuration refused: %s", err);
	unlisted[0] = '\0';
	for (i = 0; i < a.n; i++)
		if (conf_var_of(cf, a.names[i], strlen(a.names[i]),
		    &ep) == NULL)
			snprintf(unlisted, sizeof(unlisted), "%s", a.names[i]);
	CHECK(a.n > 0 && a.n < 64 && unlisted[0] == '\0',
	    "every variable read (%zu) is a row of the table%s%s", a.n,
	    unlisted[0] ? "; not: " : "", unlisted);
	for (cv = conf_vars; cv->name != NULL; cv++, rows++) {
		read = 0;
		for (i = 0; i < a.n; i++) {
			size_t	 nl = strlen(a.names[i]), cl = strlen(cv->name);

			read |= nl > cl &&
			    strcmp(a.names[i] + nl - cl, cv->name) == 0 &&
			    a.names[i][nl - cl - 1] == '_';
		}
		unread += !read;
	}
	CHECK(rows >= 14 && unread == 0, "every row of the table (%d) is "
	    "read (%d not)", rows, unread);
	conf_free(cf);
}

/*
 * ONCEHOOK_<NAME>_URL: required by the URL-signing schemes (no guess
 * from the request), refused elsewhere, a full http(s) URL, read only
 * with the secrets.
 */
static void
test_url(void)
{
	struct var	 v[] = {
		{ "ONCEHOOK_DB", "/tmp/x.db" },
		{ "ONCEHOOK_ENDPOINTS", "sms" },
		{ "ONCEHOOK_SMS_SCHEME", "twilio" },
		{ "ONCEHOOK_SMS_SECRET", "0123456789abcdef0123" },
		{ "ONCEHOOK_SMS_URL", NULL },
		{ NULL, NULL }
	};
	static const struct {
		const char	*scheme;
		const char	*url;
		int		 ok;
		const char	*what;
	} t[] = {
		{ "twilio", NULL, 0, "twilio without a URL" },
		{ "square", NULL, 0, "square without a URL" },
		{ "twilio", "https://shop.example/hooks/sms?a=1&b=2", 1,
		  "twilio with a URL and a query string" },
		{ "square", "http://shop.example:8080/hooks/sq", 1,
		  "square with an http:// URL and a port" },
		{ "stripe", "https://shop.example/hooks/sms", 0,
		  "a URL on a scheme that signs none" },
		{ "stripe", NULL, 1, "stripe without a URL" },
		{ "twilio", "shop.example/hooks/sms", 0, "a URL without http" },
		{ "twilio", "https://", 0, "a URL without a host" },
		{ "twilio", "https://shop.example/a b", 0, "a URL with a space" },
	};
	struct conf	*cf;
	char		 err[256];
	size_t		 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		v[2].value = t[i].scheme;
		v[4].value = t[i].url;
		cf = conf_load(var_get, v, err, sizeof(err));
		if (t[i].ok)
			CHECK(cf != NULL && (t[i].url == NULL ?
			    cf->endpoints[0].url == NULL :
			    strcmp(cf->endpoints[0].url, t[i].url) == 0),
			    "%s: loads (%s)", t[i].what, cf ? "" : err);
		else
			CHECK(cf == NULL && names(err, "ONCEHOOK_SMS_URL"),
			    "%s: refused naming ONCEHOOK_SMS_URL (%s)",
			    t[i].what, err);
		conf_free(cf);
	}
	v[2].value = "twilio";
	v[4].value = NULL;
	cf = conf_load_for(var_get, v, CONF_NEEDS_DB, err, sizeof(err));
	CHECK(cf != NULL, "twilio without a URL: a command that reads no "
	    "secrets (stats, list) still loads (%s)", cf ? "" : err);
	conf_free(cf);
	cf = conf_load(var_get, v, err, sizeof(err));
	CHECK(cf == NULL && strstr(err, "twilio") != NULL &&
	    strstr(err, "console") != NULL, "the error says which scheme "
	    "needs it and where the URL comes from (%s)", err);
	conf_free(cf);
}

/*
 * A bad outbox variable is the deliverer's problem, never the handler's:
 * the configuration loads, with the default in its place and the reason
 * kept for deliver and check; a good one is read.
 */
static void
test_outbox_vars(void)
{
	struct var	 bad[] = {
		{ "ONCEHOOK_DB", "/tmp/x.db" },
		{ "ONCEHOOK_SCHEME", "hmac-sha256" },
		{ "ONCEHOOK_SECRET", "0123456789abcdef" },
		{ "ONCEHOOK_OUTBOX_TIMEOUT", "5m" },
		{ "ONCEHOOK_OUTBOX_SECRET", "whsec_c2hvcnQ=" },
		{ NULL, NULL }
	};
	struct var	 good[] = {
		{ "ONCEHOOK_DB", "/tmp/x.db" },
		{ "ONCEHOOK_SCHEME", "hmac-sha256" },
		{ "ONCEHOOK_SECRET", "0123456789abcdef" },
		{ "ONCEHOOK_OUTBOX_TIMEOUT", "7" },
		{ "ONCEHOOK_OUTBOX_SECRET",
		    "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
		{ NULL, NULL }
	};
	struct conf	*cf;
	char		 err[256];

	cf = conf_load(var_get, bad, err, sizeof(err));
	CHECK(cf != NULL && cf->outbox_timeout == 30 &&
	    cf->outbox_secret.p == NULL && strstr(cf->outbox_err,
	    "ONCEHOOK_OUTBOX_SECRET: ") != NULL, "bad outbox variables: the "
	    "configuration loads (webhooks go on), the default in place, the "
	    "first reason kept (%s)", cf ? cf->outbox_err : err);
	conf_free(cf);
	cf = conf_load(var_get, good, err, sizeof(err));
	CHECK(cf != NULL && cf->outbox_timeout == 7 && cf->outbox_secret.sz ==
	    24 && cf->outbox_err[0] == '\0', "good ones are read (a 24-byte "
	    "key)");
	conf_free(cf);
}

/*
 * 1 if the index answers name as getenv() does over env (the process's
 * environment is env for that call: glibc's getenv() is the reference,
 * not a copy of it).  A name with '=' in it names no variable (getenv()
 * compares only that far).  A mismatch is shown, the first few.
 */
static int
as_getenv(const struct envindex *ix, char **env, const char *name,
    size_t *bad)
{
	extern char	**environ;
	char		**saved = environ;
	const char	 *a, *b;

	a = envindex_get(name, (void *)ix);
	environ = env;
	b = strchr(name, '=') != NULL ? NULL : getenv(name);
	environ = saved;
	if (a == b || (a != NULL && b != NULL && strcmp(a, b) == 0))
		return 1;
	if ((*bad)++ < 3)
		printf("# %s: index %s, getenv %s\n", name, a ? a : "(unset)",
		    b ? b : "(unset)");
	return 0;
}

/*
 * The index conf_load_env() reads through: the same answer as getenv()
 * for every name, over an environment with the cases a hash can get
 * wrong (a name that begins another, a name twice, empty values, an
 * entry without '=', more variables than the smallest table has
 * slots); names that do not start with ONCEHOOK_ go to getenv().  Then
 * conf_load_env() over the real environment loads what conf_load()
 * loads from the same variables.
 */
static void
test_envindex(void)
{
	static char	 many[80][32];
	char		*env[128];
	const char	*probe[] = { "ONCEHOOK_V80", "ONCEHOOK_v1",
	    "ONCEHOOK_DB=x", NULL };
	struct envindex	*ix;
	const struct conf_endpoint *eu;
	struct conf	*cf, *ref;
	const char	*a;
	char		 err[512], name[64];
	size_t		 i, k, len, n = 0, bad = 0;

	env[n++] = (char []){ "PATH=/usr/bin" };
	env[n++] = (char []){ "ONCEHOOK_DB_PASSWORD_FILE=/run/pw" };
	env[n++] = (char []){ "ONCEHOOK_DB=/var/lib/oncehook/a.db" };
	env[n++] = (char []){ "ONCEHOOK_DUP=first" };
	env[n++] = (char []){ "ONCEHOOK_DUP=second" };
	env[n++] = (char []){ "ONCEHOOK_EMPTY=" };
	env[n++] = (char []){ "ONCEHOOK_NOEQ" };
	env[n++] = (char []){ "ONCEHOOK_=nameless" };
	env[n++] = (char []){ "ONCEHOOK_DB=x=y" };
	for (i = 0; i < 80; i++) {
		snprintf(many[i], sizeof(many[i]), "ONCEHOOK_V%zu=%zu", i,
		    i * 7);
		env[n++] = many[i];
	}
	env[n] = NULL;
	if ((ix = envindex_new(env)) == NULL)
		BAIL("envindex_new: out of memory");
	/* Names no entry has; then every beginning of every name from
	 * ONCEHOOK_ on, the name itself and the name with more after it:
	 * no name is found by another that begins with it.  (Others are
	 * getenv()'s, below.) */
	for (i = 0; probe[i] != NULL; i++)
		(void)as_getenv(ix, env, probe[i], &bad);
	for (i = 0; env[i] != NULL; i++) {
		if (strncmp(env[i], "ONCEHOOK_", 9) != 0)
			continue;
		len = strcspn(env[i], "=");
		for (k = 9; k <= len + 1 && k < sizeof(name); k++) {
			snprintf(name, sizeof(name), "%.*s%s", (int)(k > len ?
			    len : k), env[i], k > len ? "X" : "");
			(void)as_getenv(ix, env, name, &bad);
		}
	}
	CHECK(bad == 0, "the index answers as getenv() for every name, "
	    "every beginning of one and every longer one");
	CHECK(strcmp(envindex_get("ONCEHOOK_DUP", ix), "first") == 0 &&
	    envindex_get("ONCEHOOK_NOEQ", ix) == NULL &&
	    strcmp(envindex_get("ONCEHOOK_V79", ix), "553") == 0,
	    "the first of two names, no entry without '=', the 80th");
	if (setenv("T_CONF_ENVINDEX", "outside", 1) == -1)
		BAIL("setenv");
	a = envindex_get("T_CONF_ENVINDEX", ix);
	CHECK(a != NULL && strcmp(a, "outside") == 0,
	    "other names are the process's getenv()");
	envindex_free(ix);
	a = envindex_get("T_CONF_ENVINDEX", NULL);
	CHECK(a != NULL && strcmp(a, "outside") == 0 &&
	    envindex_get("ONCEHOOK_DUP", NULL) == NULL,
	    "no index (out of memory): getenv()");

	for (i = 0; named[i] != NULL; i++)
		if (putenv((char *)named[i]) != 0)
			BAIL("putenv");
	err[0] = '\0';
	cf = conf_load_env(err, sizeof(err));
	CHECK(cf != NULL, "conf_load_env loads the named configuration (%s)",
	    err);
	for (i = 0; named[i] != NULL; i++) {
		snprintf(name, sizeof(name), "%.*s",
		    (int)strcspn(named[i], "="), named[i]);
		unsetenv(name);
	}
	ref = load(named, NULL, err, sizeof(err));
	if (cf != NULL && ref != NULL) {
		eu = &cf->endpoints[1];
		CHECK(cf->nendpoints == ref->nendpoints &&
		    strcmp(cf->db, ref->db) == 0 &&
		    strcmp(eu->name, ref->endpoints[1].name) == 0 &&
		    eu->nsecrets == 2 &&
		    eu->nsecrets == ref->endpoints[1].nsecrets &&
		    eu->tolerance == 600 && eu->retention == 72 * 3600 &&
		    strcmp(eu->actions, "/srv/hooks/eu.sql") == 0 &&
		    cf->endpoints[0].tolerance == ref->endpoints[0].tolerance,
		    "as conf_load() reads them: endpoints, secrets, bounds, "
		    "paths");
	}
	conf_free(cf);
	conf_free(ref);
}

/*
 * mailgun signs a timestamp and a token only: a key other than the
 * token lets one captured signature block carry any number of events
 * of the attacker's making while its timestamp is within the tolerance.
 */
static void
test_unsigned_data_key(void)
{
	static const char *const byid[] = { "ONCEHOOK_SCHEME=mailgun",
		"ONCEHOOK_KEY=json:/event-data/id", NULL };
	static const char *const both[] = { "ONCEHOOK_SCHEME=mailgun",
		"ONCEHOOK_KEY=json:/event-data/id json:/signature/token",
		NULL };
	static const char *const hash[] = { "ONCEHOOK_SCHEME=mailgun",
		"ONCEHOOK_KEY=hash", NULL };
	static const char *const token[] = { "ONCEHOOK_SCHEME=mailgun",
		"ONCEHOOK_KEY=json:/signature/token hash", NULL };
	struct conf	*cf;
	char		 err[512];

	refuses(single, byid, "ONCEHOOK_KEY", NULL,
	    "mailgun keyed by event-data.id");
	refuses(single, both, "ONCEHOOK_KEY", NULL,
	    "mailgun keyed by event-data.id, then the token");
	refuses(single, hash, "ONCEHOOK_KEY", NULL, "mailgun keyed by hash");
	cf = load(single, token, err, sizeof(err));
	CHECK(cf != NULL, "mailgun keyed by the token first: taken (%s)", err);
	conf_free(cf);
}

/*
 * A signed request may come again until its timestamp leaves the
 * tolerance, up to twice the tolerance after the first arrival (a
 * sender's clock ahead); a key pruned before then lets it in again.
 */
static void
test_retention_horizon(void)
{
	static const char *const mg[] = { "ONCEHOOK_SCHEME=mailgun",
		"ONCEHOOK_RETENTION=12h", NULL };
	static const char *const mg_ok[] = { "ONCEHOOK_SCHEME=mailgun",
		"ONCEHOOK_RETENTION=18h", NULL };
	static const char *const st[] = { "ONCEHOOK_SCHEME=stripe",
		"ONCEHOOK_TOLERANCE=600", "ONCEHOOK_RETENTION=15m", NULL };
	static const char *const gh[] = { "ONCEHOOK_SCHEME=github",
		"ONCEHOOK_RETENTION=1m", NULL };
	struct conf	*cf;
	char		 err[512];

	refuses(single, mg, "ONCEHOOK_RETENTION", NULL,
	    "mailgun: 12h retention, 9h tolerance");
	cf = load(single, mg, err, sizeof(err));
	CHECK(cf == NULL && strstr(err, "less than 64800s, twice the "
	    "tolerance") != NULL, "mailgun: the refusal names the minimum, "
	    "18h (%s)", err);
	conf_free(cf);
	refuses(single, st, "ONCEHOOK_RETENTION", NULL,
	    "stripe: 15m retention, 600s tolerance");
	cf = load(single, mg_ok, err, sizeof(err));
	CHECK(cf != NULL, "mailgun: 18h retention taken (%s)", err);
	conf_free(cf);
	cf = load(single, gh, err, sizeof(err));
	CHECK(cf != NULL, "github (no timestamp): 1m retention taken (%s)",
	    err);
	conf_free(cf);
}

/*
 * A basic secret's user name travels in the URL the provider is given
 * and in its dashboard: the password is what must not be guessed.
 */
static void
test_basic_password(void)
{
	static const char *const empty[] = { "ONCEHOOK_SCHEME=basic",
		"ONCEHOOK_SECRET=postmark-webhooks-user:", NULL };
	static const char *const shortpw[] = { "ONCEHOOK_SCHEME=basic",
		"ONCEHOOK_SECRET=postmark-webhooks-user:pw12", NULL };
	static const char *const longpw[] = { "ONCEHOOK_SCHEME=basic",
		"ONCEHOOK_SECRET=pm:0123456789abcdef", NULL };
	const char	*none[] = { NULL };
	struct conf	*cf;
	char		 err[512], seen[2048];
	int		 n;

	refuses(single, empty, "ONCEHOOK_SECRET", NULL,
	    "basic: an empty password");
	if ((cf = load(single, shortpw, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	seen[0] = '\0';
	n = conf_warnings(cf, none, collect, seen);
	CHECK(n == 1 && strstr(seen, "ONCEHOOK_SECRET: secret 1 is shorter "
	    "than 16 bytes") != NULL && strstr(seen, "pw12") == NULL,
	    "basic: a 4-byte password behind a long user name is short "
	    "(got \"%s\")", seen);
	conf_free(cf);
	if ((cf = load(single, longpw, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	seen[0] = '\0';
	n = conf_warnings(cf, none, collect, seen);
	CHECK(n == 0, "basic: a 16-byte password is not short (got \"%s\")",
	    seen);
	conf_free(cf);
}

/*
 * The public keys of discord, telnyx, sendgrid and standard (whpk_):
 * each form the provider hands out loads; a malformed one, a key of
 * the wrong kind or a private key is refused at load naming the
 * variable and saying what is wanted, a private key never echoed.  A
 * P-256 point off the curve loads (its SPKI head is right) and
 * oncehook check says libcrypto refuses it.
 */
#define CK_ED_HEX	"d75a980182b10ab7d54bfed3c964073a" \
			"0ee172f3daa62325af021a68f707511a"
#define CK_ED_B64	"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="
#define CK_SG_B64	"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW" \
	"4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g=="
/* The same point with y + 1: off the curve. */
#define CK_SG_OFF	"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW" \
	"4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+w=="
#define CK_P384		"MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEQR+R4aFybSrjVykj9FiRtY8a" \
	"qUlbabt4dsN/ziwq5espATrTAHy/wONuLP3nMTqweeAw4iF26Gfgj9p6ZlGJJOaMnLfB" \
	"uSxhqKnkkmvO9bt6pD0VVWEn1v4q7oj5euhk"
#define CK_K256		"MFYwEAYHKoZIzj0CAQYFK4EEAAoDQgAE6S5owJVZ4cQV3RN0P80LxI7p" \
	"KWgT6NRFk3qlKZpbU7Zq3yft/AQxeqlUTu8/SS/KwBn+Oz2pzG53dxvSRMdbLQ=="
/* RFC 8032's test key 1: seed, and the seed's PKCS#8 PEM. */
#define CK_SEED_B64	"nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A="
#define CK_PRIV_PEM	"-----BEGIN PRIVATE KEY-----\n" \
	"MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n" \
	"-----END PRIVATE KEY-----"
#define CK_ED_PEM	"-----BEGIN PUBLIC KEY-----\n" \
	"MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n" \
	"-----END PUBLIC KEY-----"

/* scheme with ONCEHOOK_SECRET=key: refused saying want ("|" words), the
 * text hidden not in the message. */
static void
key_refused(const char *scheme, const char *key, const char *want,
    const char *hidden, const char *what)
{
	struct conf	*cf;
	char		 sv[64], kv[1024], err[1024], words[256], *w, *save;
	int		 ok;

	snprintf(sv, sizeof(sv), "ONCEHOOK_SCHEME=%s", scheme);
	snprintf(kv, sizeof(kv), "ONCEHOOK_SECRET=%s", key);
	cf = load(single, OVER(sv, kv), err, sizeof(err));
	ok = cf == NULL && names(err, "ONCEHOOK_SECRET") &&
	    (hidden == NULL || strstr(err, hidden) == NULL);
	snprintf(words, sizeof(words), "%s", want);
	for (w = strtok_r(words, "|", &save); w != NULL;
	    w = strtok_r(NULL, "|", &save))
		ok = ok && strstr(err, w) != NULL;
	CHECK(ok, "%s: %s refused, saying %s (\"%s\")", scheme, what, want,
	    err);
	conf_free(cf);
}

/* scheme with ONCEHOOK_SECRET=key loads, n keys of kind. */
static void
key_loads(const char *scheme, const char *key, size_t n,
    enum secret_kind kind, const char *what)
{
	struct conf	*cf;
	char		 sv[64], kv[1024], err[512];
	size_t		 i;
	int		 ok;

	snprintf(sv, sizeof(sv), "ONCEHOOK_SCHEME=%s", scheme);
	snprintf(kv, sizeof(kv), "ONCEHOOK_SECRET=%s", key);
	cf = load(single, OVER(sv, kv), err, sizeof(err));
	ok = cf != NULL && cf->endpoints[0].nsecrets == n;
	for (i = 0; ok && i < n; i++)
		ok = cf->endpoints[0].secrets[i].kind == kind;
	CHECK(ok, "%s: %s loads as %zu key(s) (%s)", scheme, what, n,
	    cf != NULL ? "" : err);
	conf_free(cf);
}

static void
test_public_keys(void)
{
	static const char *const none[] = { NULL };
	struct conf	*cf;
	const char	*path;
	char		 err[512], seen[2048], var[PATH_MAX + 32];
	int		 n;

	key_loads("discord", CK_ED_HEX, 1, SECRET_ED25519, "64 hex digits");
	key_loads("discord", CK_ED_PEM, 1, SECRET_ED25519, "a PEM block");
	key_loads("telnyx", CK_ED_B64, 1, SECRET_ED25519, "base64");
	key_loads("telnyx", CK_ED_B64 " " CK_ED_PEM " " CK_ED_HEX, 3,
	    SECRET_ED25519, "base64, PEM and hex");
	key_loads("sendgrid", CK_SG_B64, 1, SECRET_P256, "base64 DER");
	key_loads("standard", "whpk_" CK_ED_B64, 1, SECRET_ED25519, "whpk_");
	key_loads("standard", CK_ED_PEM, 1, SECRET_ED25519, "a PEM block");

	key_refused("discord", "d75a980182b10ab7d54bfed3c964073a0ee172f3daa6"
	    "2325af021a68f707511", "Ed25519 public key|64 hex digits", NULL,
	    "63 hex digits");
	key_refused("discord", "d75a980182b10ab7d54bfed3c964073a0ee172f3daa6"
	    "2325af021a68f70751", "Ed25519 public key", NULL,
	    "31 bytes of hex");
	key_refused("telnyx", "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHUQ==",
	    "Ed25519 public key", NULL, "31 bytes of base64");
	key_refused("telnyx", "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURoA",
	    "Ed25519 public key", NULL, "33 bytes of base64");
	key_refused("telnyx", "not-a-key!", "Ed25519 public key", NULL,
	    "text");
	key_refused("discord", CK_SG_B64, "Ed25519 public key", NULL,
	    "a P-256 key");
	key_refused("discord", "whsk_" CK_SEED_B64, "private key|public half",
	    CK_SEED_B64, "whsk_ (a private key)");
	key_refused("telnyx", CK_PRIV_PEM, "private key|public half",
	    "MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v", "a PEM PRIVATE KEY");
	key_refused("discord", "-----BEGIN CERTIFICATE-----\n"
	    "MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n"
	    "-----END CERTIFICATE-----", "PEM PUBLIC KEY", NULL,
	    "a PEM block labelled CERTIFICATE");
	key_refused("sendgrid", CK_P384, "P-256", NULL, "a P-384 key");
	key_refused("sendgrid", CK_K256, "P-256", NULL, "a secp256k1 key");
	key_refused("sendgrid", "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O",
	    "P-256|base64", NULL, "a cut key");
	key_refused("sendgrid", "MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvP"
	    "apiMlrwIaaPcHURo=", "P-256", NULL, "an Ed25519 SPKI");
	key_refused("sendgrid", CK_ED_HEX, "P-256", NULL, "hex");
	key_refused("standard", "whsk_" CK_SEED_B64,
	    "whsk_ is a private key|whpk_", CK_SEED_B64,
	    "whsk_ (a private key)");
	key_refused("standard", "whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaP"
	    "cHUQ==", "Ed25519 public key", NULL, "whpk_ of 31 bytes");
	key_refused("standard", "whpk_***", "Ed25519", NULL,
	    "whpk_ not base64");
	key_refused("standard", CK_PRIV_PEM, "private key|public half",
	    "MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v", "a PEM PRIVATE KEY");

	/* A key file as Windows writes it: CRLF, a PEM block, then hex. */
	path = tmpfile_with("pk-crlf", "# Discord, rotated\r\n"
	    "-----BEGIN PUBLIC KEY-----\r\n"
	    "MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\r\n"
	    "-----END PUBLIC KEY-----\r\n\r\n" CK_ED_HEX "\r\n");
	snprintf(var, sizeof(var), "ONCEHOOK_SECRET_FILE=%s", path);
	cf = load(single, OVER("ONCEHOOK_SCHEME=discord", var,
	    "ONCEHOOK_SECRET="), err, sizeof(err));
	CHECK(cf != NULL && cf->endpoints[0].nsecrets == 2 &&
	    cf->endpoints[0].secrets[0].sz == 32 &&
	    cf->endpoints[0].secrets[1].sz == 32 &&
	    memcmp(cf->endpoints[0].secrets[0].p,
	    cf->endpoints[0].secrets[1].p, 32) == 0,
	    "discord: a CRLF file of a PEM block and hex: two keys, the "
	    "same (%s)", cf != NULL ? "" : err);
	conf_free(cf);
	/* A bad key after a PEM block: its own line named. */
	path = tmpfile_with("pk-line", "# line 1\n" CK_ED_PEM "\n\n"
	    "d75a98\n");
	snprintf(var, sizeof(var), "ONCEHOOK_SECRET_FILE=%s", path);
	cf = load(single, OVER("ONCEHOOK_SCHEME=discord", var,
	    "ONCEHOOK_SECRET="), err, sizeof(err));
	CHECK(cf == NULL && strstr(err, "line 6:") != NULL &&
	    strstr(err, "Ed25519") != NULL,
	    "discord: a bad key on line 6, after a PEM block, named (%s)",
	    err);
	conf_free(cf);

	if (pubkey_load(err, sizeof(err)) == -1) {
		/* No libcrypto: check says so, for each key. */
		cf = load(single, OVER("ONCEHOOK_SCHEME=sendgrid",
		    "ONCEHOOK_SECRET=" CK_SG_B64), err, sizeof(err));
		seen[0] = '\0';
		n = cf != NULL ? conf_warnings(cf, none, collect, seen) : -1;
		CHECK(n == 1 && strstr(seen, "OpenSSL") != NULL,
		    "sendgrid without libcrypto: check says so (%s)", seen);
		conf_free(cf);
		return;
	}
	/* Off the curve: loads, and check says so. */
	cf = load(single, OVER("ONCEHOOK_SCHEME=sendgrid",
	    "ONCEHOOK_SECRET=" CK_SG_B64 " " CK_SG_OFF), err, sizeof(err));
	seen[0] = '\0';
	n = cf != NULL ? conf_warnings(cf, none, collect, seen) : -1;
	CHECK(n == 1 && strstr(seen, "ONCEHOOK_SECRET") != NULL &&
	    strstr(seen, "secret 2") != NULL && strstr(seen, "public key") !=
	    NULL, "sendgrid: a point off the curve, check names it (%s)",
	    seen);
	conf_free(cf);
	cf = load(single, OVER("ONCEHOOK_SCHEME=sendgrid",
	    "ONCEHOOK_SECRET=" CK_SG_B64), err, sizeof(err));
	seen[0] = '\0';
	n = cf != NULL ? conf_warnings(cf, none, collect, seen) : -1;
	CHECK(n == 0, "sendgrid: its published key, no warning (%s)", seen);
	conf_free(cf);
	/* y = 2, no point of edwards25519: 64 hex digits all the same. */
	cf = load(single, OVER("ONCEHOOK_SCHEME=discord", "ONCEHOOK_SECRET="
	    CK_ED_HEX " 0200000000000000000000000000000000000000000000000000"
	    "000000000000"), err, sizeof(err));
	seen[0] = '\0';
	n = cf != NULL ? conf_warnings(cf, none, collect, seen) : -1;
	CHECK(n == 1 && strstr(seen, "secret 2") != NULL &&
	    strstr(seen, "no point") != NULL,
	    "discord: a key that is no point, check names it (%s)", seen);
	conf_free(cf);
}

int
main(void)
{
	const char	*t;

	if ((t = getenv("TMPDIR")) == NULL || *t == '\0')
		t = "/tmp";
	if ((size_t)snprintf(tmpdir, sizeof(tmpdir), "%s/t_conf.XXXXXX", t) >=
	    sizeof(tmpdir) || mkdtemp(tmpdir) == NULL)
		BAIL("mkdtemp %s failed", tmpdir);
	atexit(cleanup);

	test_named();
	test_single();
	test_refused();
	test_secret_file();
	test_secret_encoding();
	test_short_secret();
	test_route_name();
	test_srclist();
	test_duration();
	test_path_inside();
	test_unknown();
	test_placeholder();
	test_replay_guard();
	test_table();
	test_empty_prefix();
	test_cert_cache();
	test_db_tls();
	test_needs();
	test_outbox_vars();
	test_url();
	test_envindex();
	test_unsigned_data_key();
	test_retention_horizon();
	test_basic_password();
	test_public_keys();
	return tap_done();
}
