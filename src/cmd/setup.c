/* SPDX-License-Identifier: MIT */
/*
 * oncehook: `oncehook init` and `oncehook check`: creating the database,
 * and what is wrong with a configuration.
 */
#include "config.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/admin.h"
#include "cmd/common.h"
#include "conf.h"
#include "lib/curlapi.h"
#include "lib/pubkey.h"
#include "pipeline/route.h"
#include "pipeline/sig.h"
#include "store/outbox.h"
#include "store/sqlite/actions.h"
#include "store/store.h"

/*
 * -1 and a message if the database or a secrets file lies inside
 * $DOCUMENT_ROOT or $CONTEXT_DOCUMENT_ROOT.
 */
static int
docroot_ok(const char *cmd, const struct conf *cf)
{
	static const char *const vars[] = {
		"DOCUMENT_ROOT", "CONTEXT_DOCUMENT_ROOT"
	};
	const struct conf_endpoint	*ep;
	const char			*dr, *file;
	size_t				 i;

	for (i = 0; i < 2; i++) {
		if ((dr = getenv(vars[i])) == NULL || *dr == '\0' ||
		    (file = route_exposed(cf, dr, &ep)) == NULL)
			continue;
		fprintf(stderr, "oncehook %s: %s%s: %s lies inside %s %s, "
		    "where the web server could serve it\n", cmd,
		    ep ? ep->prefix : "ONCEHOOK_DB", ep ? "SECRET_FILE" : "",
		    file, vars[i], dr);
		return -1;
	}
	return 0;
}

static const char init_usage[] =
"usage: oncehook init\n"
"\n"
"Create the database named by ONCEHOOK_DB (mode 0600) or migrate it to\n"
"this version's schema, and run the setup part of every endpoint's\n"
"actions file (tables such as orders).  Safe to run again.\n";

int
admin_init(int argc, char **argv)
{
	struct conf	*cf;
	struct store	*st;
	char		 err[512];

	if (cmd_helped(argc, argv, init_usage))
		return 0;
	if (argc > 1) {
		fputs(init_usage, stderr);
		return 2;
	}
	if ((cf = cmd_load("init", CONF_NEEDS_ALL)) == NULL)
		return 1;
	if (docroot_ok("init", cf) == -1) {
		conf_free(cf);
		return 1;
	}
	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL) {
		fprintf(stderr, "oncehook init: %s\n", err);
		conf_free(cf);
		return 1;
	}
	printf("%s: schema version %d, ready\n", cf->db, store_schema(st));
	store_close(st);
	conf_free(cf);
	return 0;
}

static const char check_usage[] =
"usage: oncehook check\n"
"\n"
"Validate the configuration in the environment, open the database and\n"
"prepare every action, and print the endpoints with their schemes,\n"
"key sources and retention, and where each outbox topic goes (the\n"
"topics the actions files write as literals, and those of rows waiting\n"
"in the outbox; one without a target is a warning).  Secrets are\n"
"counted, never printed.\n"
"Exit status 0 if all is well, 1 if not.\n";

/*
 * List the variables as cf holds them, from the configuration table:
 * the globals (ep NULL) or ep's.  Secrets are counted, never shown.
 */
static void
list_vars(const struct conf *cf, const struct conf_endpoint *ep)
{
	const struct conf_var	*cv;
	char			 name[CONF_NAME_MAX + 64], val[512];

	for (cv = conf_vars; cv->name != NULL; cv++) {
		if (cv->scope != (ep == NULL ? CONF_GLOBAL : CONF_ENDPOINT))
			continue;
		/* Tolerance means nothing to a scheme without a time. */
		if (ep != NULL && cv->off == offsetof(struct conf_endpoint,
		    tolerance) && !ep->scheme->timestamped)
			continue;
		snprintf(name, sizeof(name), "%s%s", ep != NULL ? ep->prefix :
		    "ONCEHOOK_", cv->name);
		conf_show(cf, ep, cv, val, sizeof(val));
		printf("%s%-*s %s\n", ep != NULL ? "  " : "",
		    ep != NULL ? 30 : 32, name, val);
	}
}

extern char	**environ;

static void
check_warning(void *arg, const char *message)
{
	fprintf(stderr, "oncehook check: warning: %s\n", message);
}

/* One actions file and the endpoints that run it, for check_types(). */
struct typecheck {
	const struct conf	*cf;
	const char		*path;
};

/*
 * Warn about an event type that no endpoint using this actions file
 * can receive: its section never runs, and the events fall to the
 * catch-all or to none.
 */
static void
check_type(void *arg, const char *type, int line)
{
	const struct typecheck		*tc = arg;
	const struct conf_endpoint	*ep;
	const char			*ex;
	char				 hint[512];
	size_t				 i, j, o = 0;
	int				 spaced = 0;

	hint[0] = '\0';
	for (i = 0; i < tc->cf->nendpoints; i++) {
		ep = &tc->cf->endpoints[i];
		if (strcmp(ep->actions, tc->path) != 0)
			continue;
		if (scheme_sends_type(ep->scheme, type))
			return;
		/* Each scheme once in the hint. */
		for (j = 0; j < i; j++)
			if (strcmp(tc->cf->endpoints[j].actions,
			    tc->path) == 0 &&
			    tc->cf->endpoints[j].scheme == ep->scheme)
				break;
		if (j < i || (ex = scheme_type_example(ep->scheme)) == NULL ||
		    o >= sizeof(hint))
			continue;
		o += (size_t)snprintf(hint + o, sizeof(hint) - o,
		    "%s%s sends types like \"%s\"", o ? ", " : "",
		    ep->scheme->name, ex);
		spaced |= strchr(ex, ' ') != NULL;
	}
	fprintf(stderr, "oncehook check: warning: %s:%d: no endpoint running "
	    "this file receives event type \"%s\", so its section never "
	    "runs (%s%s)\n", tc->path, line, type, hint, spaced ?
	    "; a type with spaces is written in quotes: -- on: "
	    "\"Push Hook\"" : "");
}

/* check_type() for every section of every endpoint's actions file. */
static void
check_types(const struct conf *cf)
{
	struct typecheck	 tc;
	char			 err[512];
	size_t			 i;

	tc.cf = cf;
	for (i = 0; i < cf->nendpoints; i++) {
		if (conf_actions_first(cf, i) < i)
			continue;	/* that file is checked already */
		tc.path = cf->endpoints[i].actions;
		if (actions_types(tc.path, check_type, &tc, err,
		    sizeof(err)) == -1)
			fprintf(stderr, "oncehook check: %s\n", err);
	}
}

/* A topic check has seen (in an actions file or the outbox). */
struct topicseen {
	char	 (*t)[132];
	size_t	 n;
	int	 bad;		/* a topic without a target, or a bad one */
};

/* 1 if prog (a path, or a name looked up in PATH as execvp() does) is
 * a file this user may run. */
static int
runnable(const char *prog)
{
	const char	*path, *p;
	char		 f[PATH_MAX];
	size_t		 n;

	if (*prog == '\0')
		return 0;
	if (strchr(prog, '/') != NULL)
		return access(prog, X_OK) == 0;
	path = getenv("PATH");
	for (p = path != NULL ? path : "/usr/bin:/bin"; ; p += n + 1) {
		n = strcspn(p, ":");
		if (snprintf(f, sizeof(f), "%.*s/%s", (int)n, n ? p : ".",
		    prog) < (int)sizeof(f) && access(f, X_OK) == 0)
			return 1;
		if (p[n] == '\0')
			return 0;
	}
}

/* url without its user and password and its query (either may hold a
 * credential), into buf. */
static const char *
url_shown(const char *url, char *buf, size_t sz)
{
	const char	*h = strstr(url, "://"), *at, *slash;
	int		 q;

	if (h == NULL) {
		snprintf(buf, sz, "(not a URL)");
		return buf;
	}
	h += 3;
	slash = h + strcspn(h, "/?#");
	at = memchr(h, '@', (size_t)(slash - h));
	q = (int)strcspn(at != NULL ? at : h, "?#");
	if (at == NULL)
		snprintf(buf, sz, "%.*s", (int)(h - url) + q, url);
	else
		snprintf(buf, sz, "%.*s***%.*s", (int)(h - url), url, q, at);
	if (strpbrk(at != NULL ? at : h, "?#") != NULL)
		snprintf(buf + strlen(buf), sz - strlen(buf), "?...");
	return buf;
}

/* Say what topic goes to, once per topic; where says where it was seen. */
static void
check_topic(struct topicseen *ts, const char *topic, const char *where)
{
	struct outbox_target	 t;
	char			 err[512], (*nt)[132];
	size_t			 i;

	for (i = 0; i < ts->n; i++)
		if (strcmp(ts->t[i], topic) == 0)
			return;
	if ((nt = reallocarray(ts->t, ts->n + 1, sizeof(*nt))) == NULL)
		return;
	ts->t = nt;
	snprintf(ts->t[ts->n++], sizeof(*nt), "%s", topic);
	if (conf_outbox_target(topic, NULL, NULL, &t, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "oncehook check: outbox: %s\n", err);
		ts->bad = 1;
	} else if (t.kind == OUTBOX_NONE) {
		fprintf(stderr, "oncehook check: warning: outbox topic %s "
		    "(%s) has no target: its rows wait until %s_COMMAND or "
		    "_URL is set\n", topic, where, t.var);
	} else if (t.kind == OUTBOX_URL)
		printf("outbox topic %-24s -> POST %s\n", topic,
		    url_shown(t.value, err, sizeof(err)));
	else {	/* its program; the arguments may hold a credential */
		snprintf(err, sizeof(err), "%.*s", (int)strcspn(t.value +
		    strspn(t.value, " "), " "), t.value + strspn(t.value, " "));
		printf("outbox topic %-24s -> command %s%s\n", topic, err,
		    strchr(t.value + strspn(t.value, " "), ' ') != NULL ?
		    " ..." : "");
		if (!runnable(err))
			fprintf(stderr, "oncehook check: warning: outbox topic "
			    "%s: %s is not a program this user can run (here: "
			    "its deliveries would fail)\n", topic, err);
	}
}

static void
check_file_topic(void *arg, const char *topic, int line)
{
	(void)line;
	check_topic(arg, topic, "written by an actions file");
}

static void
check_db_topic(void *arg, const char *topic, const char *status,
    long long rows, long long oldest)
{
	(void)oldest;
	(void)rows;
	if (topic != NULL && status != NULL && strcmp(status, "delivered") !=
	    0)
		check_topic(arg, topic, "rows waiting in the outbox");
}

/* The outbox: every topic the actions files or the rows name, and
 * whether URL targets can be signed.  0, or -1 if one is unusable. */
static int
check_outbox(const struct conf *cf, struct store *st)
{
	struct topicseen	 ts = { NULL, 0, 0 };
	struct outbox_target	 t;
	char			 err[512], topic[132];
	size_t			 i, j, n;
	int			 url = 0;

	for (i = 0; i < cf->nendpoints; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(cf->endpoints[j].actions,
			    cf->endpoints[i].actions) == 0)
				break;
		if (j == i && actions_topics(cf->endpoints[i].actions,
		    check_file_topic, &ts, err, sizeof(err)) == -1)
			fprintf(stderr, "oncehook check: %s\n", err);
	}
	if (st != NULL && outbox_topics(st, check_db_topic, &ts, err,
	    sizeof(err)) == -1)
		fprintf(stderr, "oncehook check: outbox: %s\n", err);
	/* A variable set for a topic nothing names is still checked. */
	for (i = 0; environ[i] != NULL; i++) {
		n = strcspn(environ[i], "=");
		if (!conf_outbox_var(environ[i], n))
			continue;
		url |= n > 4 && strncmp(environ[i] + n - 4, "_URL", 4) == 0;
	}
	for (i = 0; i < ts.n; i++) {
		snprintf(topic, sizeof(topic), "%s", ts.t[i]);
		if (conf_outbox_target(topic, NULL, NULL, &t, err,
		    sizeof(err)) == 0 && t.kind == OUTBOX_URL)
			url = 1;
	}
	if (url && cf->outbox_secret.p == NULL) {
		fprintf(stderr, "oncehook check: outbox: a URL target is set "
		    "but ONCEHOOK_OUTBOX_SECRET is not: its POSTs cannot be "
		    "signed\n");
		ts.bad = 1;
	}
	free(ts.t);
	return ts.bad ? -1 : 0;
}

int
admin_check(int argc, char **argv)
{
	struct conf			*cf;
	const struct conf_endpoint	*ep;
	struct store			*st;
	struct stat			 sb;
	const char			*path;
	char				 err[512], about[512];
	size_t				 i, j;
	char				 why[300];
	int				 pub;
	int				 rc = 0;

	if (cmd_helped(argc, argv, check_usage))
		return 0;
	if (argc > 1) {
		fputs(check_usage, stderr);
		return 2;
	}
	if ((cf = cmd_load("check", CONF_NEEDS_ALL)) == NULL)
		return 1;
	/* Its lines and its warnings interleave as written, 2>&1 too. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	list_vars(cf, NULL);
	for (i = 0; i < cf->nendpoints; i++) {
		ep = &cf->endpoints[i];
		printf("endpoint %s%s\n", ep->name,
		    cf->named ? "" : " (unnamed: every path)");
		list_vars(cf, ep);
		if (scheme_authorization(ep->scheme))
			printf("  (%s: the credential is the Authorization "
			    "header; behind Apache, a CGI program sees it "
			    "only with CGIPassAuth On, mod_fcgid's with "
			    "FcgidPassHeader Authorization: see "
			    "docs/deploying.md)\n", ep->scheme->name);
		if (ep->nsecrets == 0) {
			fprintf(stderr, "oncehook check: endpoint %s has no "
			    "usable secret: it refuses every request\n",
			    ep->name);
			rc = 1;
		}
		for (j = 0, pub = 0; j < ep->nsecrets; j++)
			pub |= ep->secrets[j].kind == SECRET_ED25519 ||
			    ep->secrets[j].kind == SECRET_P256;
		/* standard's whpk_ keys too: each v1a request needs it. */
		if ((((ep->scheme->flags & SCHEME_PUBLIC_KEY) || pub) &&
		    pubkey_load(why, sizeof(why)) == -1) ||
		    ((ep->scheme->flags & SCHEME_FETCHES_CERTS) &&
		    curlapi_load(why, sizeof(why)) == NULL)) {
			fprintf(stderr, "oncehook check: endpoint %s (%s): "
			    "%s\n", ep->name, ep->scheme->name, why);
			rc = 1;
		}
	}
	(void)conf_warnings(cf, (const char *const *)environ, check_warning,
	    NULL);
	if (docroot_ok("check", cf) == -1)
		rc = 1;
	/* The database file, or the files with the server's password and
	 * the client certificate's key. */
	for (i = 0; i < 2; i++) {
		path = cf->my == NULL ? (i == 0 ? cf->db : NULL) : i == 0 ?
		    cf->db_password_file : cf->db_tls_key;
		if (path != NULL && stat(path, &sb) == 0 &&
		    (sb.st_mode & 077) != 0)
			fprintf(stderr, "oncehook check: warning: %s is "
			    "readable by others (mode %03o); chmod 600 it\n",
			    path, (unsigned)(sb.st_mode & 0777));
	}
	if ((st = store_open(cf, 0, err, sizeof(err))) == NULL) {
		fprintf(stderr, "oncehook check: %s\n", err);
		rc = 1;
	} else if (store_about(st, about, sizeof(about)) == -1) {
		fprintf(stderr, "oncehook check: %s\n", about);
		rc = 1;
	} else {
		printf("database ok: %s, schema version %d, actions "
		    "prepared\n", about, store_schema(st));
		check_types(cf);
	}
	if (cf->outbox_err[0] != '\0') {
		fprintf(stderr, "oncehook check: outbox: %s (webhooks are still "
		    "answered; deliver refuses to run)\n", cf->outbox_err);
		rc = 1;
	}
	if (check_outbox(cf, st) == -1)
		rc = 1;
	store_close(st);
	conf_free(cf);
	return rc;
}
