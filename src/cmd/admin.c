/* SPDX-License-Identifier: MIT */
/*
 * oncehook: admin commands (see cmd/admin.h).  They print to stdout what a
 * person asked for and to stderr what went wrong; never a secret.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/sqlite/actions.h"
#include "cmd/admin.h"
#include "conf.h"
#include "observe/counters.h"
#include "lib/crypto.h"
#include "outbox/deliver.h"
#include "lib/log.h"
#include "store/outbox.h"
#include "pipeline/route.h"
#include "pipeline/sig.h"
#include "observe/stats.h"
#include "store/work.h"
#include "store/store.h"

/* --help for a command: 1 if asked (and printed). */
static int
helped(int argc, char **argv, const char *usage)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		fputs(usage, stdout);
		return 1;
	}
	return 0;
}

/*
 * Load what cmd uses of the configuration (CONF_NEEDS_*: the rows it
 * does not use are not read) or say why not.
 */
static struct conf *
load(const char *cmd, unsigned needs)
{
	struct conf	*cf;
	char		 err[512];

	if ((cf = conf_load_env_for(needs, err, sizeof(err))) == NULL)
		fprintf(stderr, "oncehook %s: %s\n", cmd, err);
	else
		log_setlevel(cf->loglevel);	/* ONCEHOOK_LOG, as cron asks */
	return cf;
}

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

	if (helped(argc, argv, init_usage))
		return 0;
	if (argc > 1) {
		fputs(init_usage, stderr);
		return 2;
	}
	if ((cf = load("init", CONF_NEEDS_ALL)) == NULL)
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
	size_t				 i;
	int				 rc = 0;

	if (helped(argc, argv, check_usage))
		return 0;
	if (argc > 1) {
		fputs(check_usage, stderr);
		return 2;
	}
	if ((cf = load("check", CONF_NEEDS_ALL)) == NULL)
		return 1;
	/* Its lines and its warnings interleave as written, 2>&1 too. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	list_vars(cf, NULL);
	for (i = 0; i < cf->nendpoints; i++) {
		ep = &cf->endpoints[i];
		printf("endpoint %s%s\n", ep->name,
		    cf->named ? "" : " (unnamed: every path)");
		list_vars(cf, ep);
		if (ep->nsecrets == 0) {
			fprintf(stderr, "oncehook check: endpoint %s has no "
			    "usable secret: it refuses every request\n",
			    ep->name);
			rc = 1;
		}
	}
	(void)conf_warnings(cf, (const char *const *)environ, check_warning,
	    NULL);
	if (docroot_ok("check", cf) == -1)
		rc = 1;
	/* The database file, or the file with the server's password. */
	path = cf->my != NULL ? cf->db_password_file : cf->db;
	if (path != NULL && stat(path, &sb) == 0 && (sb.st_mode & 077) != 0)
		fprintf(stderr, "oncehook check: warning: %s is readable by "
		    "others (mode %03o); chmod 600 it\n", path,
		    (unsigned)(sb.st_mode & 0777));
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

static const char sign_usage[] =
"usage: oncehook sign [--endpoint NAME] [--curl URL] [--id ID]\n"
"                     [--event TYPE] [--time UNIX] FILE\n"
"\n"
"Sign the JSON in FILE (- for standard input) the way the endpoint's\n"
"provider does, with its first secret and the current time, and print\n"
"the headers to send, or with --curl a ready curl command line.\n"
"--id sets the delivery id for schemes that send one in a header (random\n"
"otherwise; give the same id twice to send a duplicate; for hmac-sha256\n"
"it becomes X-Idempotency-Key, else the body's id is the key; schemes\n"
"whose key is in the body ignore it), --event the type for schemes that\n"
"carry it in a header\n"
"(github, shopify, gitlab), --time the timestamp.  For gitlab the header\n"
"is the secret itself.\n";

#define SIGN_BODY_MAX	(64 << 20)	/* bytes */

/* Read FILE (or stdin for "-") into a new buffer; NULL on error. */
static char *
read_file(const char *path, size_t *sz)
{
	FILE	*f;
	char	*buf, *nb;
	size_t	 cap = 65536, len = 0, n;

	if ((f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb")) ==
	    NULL) {
		fprintf(stderr, "oncehook sign: %s: %s\n", path,
		    strerror(errno));
		return NULL;
	}
	if ((buf = malloc(cap)) == NULL)
		goto fail;
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			if (cap >= SIGN_BODY_MAX ||
			    (nb = realloc(buf, cap * 2)) == NULL)
				goto fail;
			buf = nb;
			cap *= 2;
		}
	}
	if (ferror(f))
		goto fail;
	if (f != stdin)
		fclose(f);
	*sz = len;
	return buf;
fail:
	fprintf(stderr, "oncehook sign: %s: cannot read it\n", path);
	free(buf);
	if (f != stdin)
		fclose(f);
	return NULL;
}

/* Print s single-quoted for a POSIX shell. */
static void
shell_quote(const char *s)
{
	putchar('\'');
	for (; *s != '\0'; s++)
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
	putchar('\'');
}

/* What `sign` was asked to do. */
struct sign_args {
	const char	*endpoint;	/* --endpoint, or NULL */
	const char	*curl;		/* --curl URL, or NULL */
	const char	*file;		/* FILE, or "-" */
	const char	*id;		/* --id, or NULL */
	const char	*event;		/* --event, or NULL */
	long long	 t;		/* --time, or -1 */
};

/* Parse sign's command line; 0, or 2 after a usage message. */
static int
sign_parse(int argc, char **argv, struct sign_args *a)
{
	char	*end;
	int	 i;

	memset(a, 0, sizeof(*a));
	a->t = -1;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
			a->endpoint = argv[++i];
		else if (strcmp(argv[i], "--curl") == 0 && i + 1 < argc)
			a->curl = argv[++i];
		else if (strcmp(argv[i], "--id") == 0 && i + 1 < argc)
			a->id = argv[++i];
		else if (strcmp(argv[i], "--event") == 0 && i + 1 < argc)
			a->event = argv[++i];
		else if (strcmp(argv[i], "--time") == 0 && i + 1 < argc) {
			errno = 0;
			a->t = strtoll(argv[++i], &end, 10);
			if (errno != 0 || *end != '\0' || a->t < 0) {
				fprintf(stderr, "oncehook sign: --time wants "
				    "Unix seconds\n");
				return 2;
			}
		} else if (a->file == NULL && (argv[i][0] != '-' ||
		    strcmp(argv[i], "-") == 0))
			a->file = argv[i];
		else
			break;
	}
	if (i < argc || a->file == NULL || (a->id != NULL &&
	    (*a->id == '\0' || strlen(a->id) > 200))) {
		fputs(sign_usage, stderr);
		return 2;
	}
	return 0;
}

/* The endpoint to sign for, with a usable secret; NULL after a message. */
static const struct conf_endpoint *
sign_endpoint(const struct conf *cf, const char *name)
{
	const struct conf_endpoint	*ep = NULL;
	size_t				 i;

	if (name == NULL && cf->named && cf->nendpoints > 1) {
		fprintf(stderr, "oncehook sign: --endpoint: one of");
		for (i = 0; i < cf->nendpoints; i++)
			fprintf(stderr, " %s", cf->endpoints[i].name);
		fprintf(stderr, "\n");
		return NULL;
	}
	for (i = 0; i < cf->nendpoints && ep == NULL; i++)
		if (name == NULL || strcmp(cf->endpoints[i].name, name) == 0)
			ep = &cf->endpoints[i];
	if (ep == NULL) {
		fprintf(stderr, "oncehook sign: no endpoint %s\n", name);
		return NULL;
	}
	if (ep->nsecrets == 0) {
		fprintf(stderr, "oncehook sign: endpoint %s has no usable "
		    "secret%s\n", ep->name, ep->placeholder ? " (only the "
		    "example's placeholder)" : "");
		return NULL;
	}
	return ep;
}

/* Print the signed headers, or a curl command line sending the file. */
static void
sign_print(const struct sig_out *out, const struct sign_args *a)
{
	char	 line[PATH_MAX + 8], abs[PATH_MAX];
	size_t	 i;

	if (a->curl == NULL) {
		printf("Content-Type: application/json\n");
		for (i = 0; i < out->n; i++)
			printf("%s: %s\n", out->h[i].name, out->h[i].value);
		return;
	}
	printf("curl -sS -X POST -H 'Content-Type: application/json'");
	for (i = 0; i < out->n; i++) {
		snprintf(line, sizeof(line), "%s: %s", out->h[i].name,
		    out->h[i].value);
		printf(" -H ");
		shell_quote(line);
	}
	printf(" --data-binary ");
	if (strcmp(a->file, "-") == 0)
		printf("@-");
	else {
		/* Absolute, so the line works from anywhere. */
		if (realpath(a->file, abs) == NULL)
			snprintf(abs, sizeof(abs), "%s", a->file);
		snprintf(line, sizeof(line), "@%s", abs);
		shell_quote(line);
	}
	printf(" ");
	shell_quote(a->curl);
	printf("\n");
}

int
admin_sign(int argc, char **argv)
{
	struct conf			*cf = NULL;
	const struct conf_endpoint	*ep;
	struct sign_args		 a;
	struct sig_msg			 m;
	struct sig_out			 out;
	unsigned char			 rnd[12];
	char				 id[40];
	char				*body = NULL;
	size_t				 bodysz = 0;
	int				 rc = 1;

	if (helped(argc, argv, sign_usage))
		return 0;
	if ((rc = sign_parse(argc, argv, &a)) != 0)
		return rc;
	rc = 1;
	memset(&out, 0, sizeof(out));
	if ((cf = load("sign", CONF_NEEDS_SECRETS)) == NULL)
		return 1;
	if ((ep = sign_endpoint(cf, a.endpoint)) == NULL ||
	    (body = read_file(a.file, &bodysz)) == NULL)
		goto out;
	memset(&m, 0, sizeof(m));
	m.id = a.id;
	m.event = a.event;
	m.id_given = m.id != NULL;
	if (m.id == NULL) {
		if (crypto_random(rnd, sizeof(rnd)) == -1)
			goto out;
		memcpy(id, "msg_", 4);
		crypto_hex(rnd, sizeof(rnd), id + 4);
		m.id = id;
	}
	m.body = body;
	m.bodysz = bodysz;
	m.now = a.t >= 0 ? (time_t)a.t : time(NULL);
	if (sig_sign(ep, &m, &out) == -1) {
		fprintf(stderr, "oncehook sign: signing failed\n");
		goto out;
	}
	sign_print(&out, &a);
	rc = 0;
out:
	crypto_wipe(&out, sizeof(out));
	free(body);
	conf_free(cf);
	return rc;
}

/*
 * Open the configured store for a command that reads or changes only the
 * database (no secret is read); NULL after a message.
 */
static struct store *
open_store(const char *cmd, struct conf **cfp)
{
	struct store	*st;
	char		 err[512];

	if ((*cfp = load(cmd, CONF_NEEDS_DB)) == NULL)
		return NULL;
	if ((st = store_open(*cfp, 0, err, sizeof(err))) == NULL) {
		fprintf(stderr, "oncehook %s: %s\n", cmd, err);
		conf_free(*cfp);
		*cfp = NULL;
	}
	return st;
}

/* Unix seconds as UTC ISO 8601 into buf (21 bytes). */
static const char *
iso(long long t, char *buf, size_t sz)
{
	if (t < 0)
		snprintf(buf, sz, "-");
	else
		log_utc((int64_t)t, buf, sz);
	return buf;
}

static void
list_row(void *arg, const struct store_row *r)
{
	char	 t[32], k[600], ty[300];

	printf("%s  %-12s %-9s %s  %s\n", iso(r->received_at, t, sizeof(t)),
	    r->endpoint, r->status, log_escape(k, sizeof(k), r->key),
	    log_escape(ty, sizeof(ty), r->type));
}

static const char list_usage[] =
"usage: oncehook list [--endpoint NAME] [--status STATUS] [--limit N]\n"
"       oncehook list --outbox [--status STATUS] [--limit N]\n"
"\n"
"List recorded events, newest first (default 50): time received,\n"
"endpoint, status, key, type.  Keys and types are printed escaped.\n"
"--status received, processed, failed (parked) or dead.\n"
"--outbox: the outbox's rows instead, newest first: time written, id,\n"
"status, attempts, topic, endpoint, key; --status pending, delivered\n"
"or dead.\n";

static void
outbox_line(void *arg, const struct outbox_row *r)
{
	char	 t[32], k[600], tp[300];

	(void)arg;
	printf("%s  %s %-9s %3lld  %s  %s %s\n", iso(r->created_at, t,
	    sizeof(t)), r->id, r->status, r->attempts, log_escape(tp,
	    sizeof(tp), r->topic), r->endpoint, log_escape(k, sizeof(k),
	    r->key));
}

static void
outbox_show(void *arg, const struct outbox_row *r)
{
	char	 t[32], k[600];

	(void)arg;
	printf("id            %s\n", r->id);
	printf("topic         %s\n", r->topic);
	printf("endpoint      %s\n", r->endpoint);
	printf("key           %s\n", log_escape(k, sizeof(k), r->key));
	printf("status        %s\n", r->status);
	printf("created_at    %s\n", iso(r->created_at, t, sizeof(t)));
	printf("attempts      %lld\n", r->attempts);
	if (r->last_error != NULL)
		printf("last_error    %s\n", log_escape(k, sizeof(k),
		    r->last_error));
	if (strcmp(r->status, "pending") == 0)
		printf("next_at       %s\n", iso(r->next_at, t, sizeof(t)));
	printf("delivered_at  %s\n", iso(r->delivered_at, t, sizeof(t)));
	printf("payload       %s\n", r->payload ? r->payload : "");
}

/* show KEY: the event's outbox rows, one line each. */
static void
event_outbox_line(void *arg, const struct outbox_row *r)
{
	int	*first = arg;

	printf("%s%s %s %s (%lld attempt%s)\n", *first ? "outbox        " :
	    "              ", r->id, r->topic, r->status, r->attempts,
	    r->attempts == 1 ? "" : "s");
	*first = 0;
}

/* The status words list --status takes, of events and of the outbox. */
static const char *const event_words[] = { "received", "processed",
    "failed", "dead", NULL };
static const char *const outbox_words[] = { "pending", "delivered",
    "dead", NULL };

/* s if it is one of words (NULL-terminated), as the table spells it. */
static const char *
word_in(const char *s, const char *const *words)
{
	for (; *words != NULL; words++)
		if (strcmp(s, *words) == 0)
			return *words;
	return NULL;
}

int
admin_list(int argc, char **argv)
{
	struct conf	*cf = NULL;
	struct store	*st;
	const char	*endpoint = NULL, *status = NULL, *sword = NULL;
	char		 err[512], *end;
	long long	 limit = 50, n;
	int		 i, outbox = 0;

	if (helped(argc, argv, list_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
			endpoint = argv[++i];
		else if (strcmp(argv[i], "--outbox") == 0)
			outbox = 1;
		else if (strcmp(argv[i], "--status") == 0 && i + 1 < argc)
			sword = argv[++i];
		else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
			errno = 0;
			limit = strtoll(argv[++i], &end, 10);
			if (errno != 0 || *end != '\0' || limit < 1) {
				fputs(list_usage, stderr);
				return 2;
			}
		} else {
			fputs(list_usage, stderr);
			return 2;
		}
	}
	if (sword != NULL && (status = word_in(sword, outbox ? outbox_words :
	    event_words)) == NULL) {
		fprintf(stderr, "oncehook list: --status %s: want %s\n", sword,
		    outbox ? "pending, delivered or dead" :
		    "received, processed, failed or dead");
		return 2;
	}
	if (outbox && endpoint != NULL) {
		fputs(list_usage, stderr);
		return 2;
	}
	if ((st = open_store("list", &cf)) == NULL)
		return 1;
	if (outbox)
		n = outbox_list(st, NULL, NULL, NULL, status, limit, 0,
		    outbox_line, NULL, err, sizeof(err));
	else
		n = store_list(st, endpoint, NULL, status, limit, 0, list_row,
		    NULL, err, sizeof(err));
	if (n < 0)
		fprintf(stderr, "oncehook list: %s\n", err);
	store_close(st);
	conf_free(cf);
	return n < 0 ? 1 : 0;
}

static void
show_row(void *arg, const struct store_row *r)
{
	char	 t[32], k[600];

	printf("endpoint      %s\n", r->endpoint);
	printf("key           %s\n", log_escape(k, sizeof(k), r->key));
	printf("type          %s\n", log_escape(k, sizeof(k), r->type));
	printf("status        %s\n", r->status);
	printf("payload_hash  %s\n", r->payload_hash);
	printf("received_at   %s\n", iso(r->received_at, t, sizeof(t)));
	printf("processed_at  %s\n", iso(r->processed_at, t, sizeof(t)));
	printf("attempts      %lld\n", r->attempts);
	if (r->last_error != NULL)
		printf("last_error    %s\n", log_escape(k, sizeof(k),
		    r->last_error));
	if (r->next_at >= 0)
		printf("next_at       %s\n", iso(r->next_at, t, sizeof(t)));
	printf("expires_at    %s\n", r->expires_at < 0 ? "never (forever)" :
	    iso(r->expires_at, t, sizeof(t)));
	printf("payload       %s\n", r->payload ? r->payload : "");
}

static const char show_usage[] =
"usage: oncehook show [--endpoint NAME] KEY\n"
"       oncehook show --outbox ID\n"
"\n"
"Show one recorded event with its payload, its attempts and, if its\n"
"last run failed, why, and the outbox rows its actions wrote.\n"
"--endpoint is needed when ONCEHOOK_ENDPOINTS names several.  --outbox:\n"
"one outbox row instead, by its id (ob_...).  Exit status 1 if there is\n"
"none, 2 on a usage error.\n";

int
admin_show(int argc, char **argv)
{
	struct conf	*cf = NULL;
	struct store	*st;
	const char	*endpoint = NULL, *key = NULL;
	char		 err[512];
	long long	 n;
	int		 i, outbox = 0, first = 1;

	if (helped(argc, argv, show_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
			endpoint = argv[++i];
		else if (strcmp(argv[i], "--outbox") == 0 && !outbox)
			outbox = 1;
		else if (key == NULL)
			key = argv[i];
		else {
			fputs(show_usage, stderr);
			return 2;
		}
	}
	if (key == NULL) {
		fputs(show_usage, stderr);
		return 2;
	}
	if (outbox && endpoint != NULL) {
		fputs(show_usage, stderr);
		return 2;
	}
	if ((st = open_store("show", &cf)) == NULL)
		return 1;
	if (outbox) {
		if ((n = outbox_list(st, key, NULL, NULL, NULL, 1, 1,
		    outbox_show, NULL, err, sizeof(err))) < 0)
			fprintf(stderr, "oncehook show: %s\n", err);
		else if (n == 0)
			fprintf(stderr, "oncehook show: no outbox row %s\n",
			    key);
		store_close(st);
		conf_free(cf);
		return n > 0 ? 0 : 1;
	}
	if (endpoint == NULL && cf->nendpoints == 1)
		endpoint = cf->endpoints[0].name;
	if (endpoint == NULL) {
		fprintf(stderr, "oncehook show: --endpoint is needed\n");
		n = -2;			/* a usage error: 2, as replay */
	} else if ((n = store_list(st, endpoint, key, NULL, 1, 1, show_row,
	    NULL, err, sizeof(err))) < 0)
		fprintf(stderr, "oncehook show: %s\n", err);
	else if (n == 0)
		fprintf(stderr, "oncehook show: no event %s on endpoint %s\n",
		    key, endpoint);
	else if (outbox_list(st, NULL, endpoint, key, NULL, 100, 0,
	    event_outbox_line, &first, err, sizeof(err)) < 0)
		fprintf(stderr, "oncehook show: outbox: %s\n", err);
	store_close(st);
	conf_free(cf);
	return n > 0 ? 0 : n == -2 ? 2 : 1;
}

static const char prune_usage[] =
"usage: oncehook prune [--dry-run] [--dead]\n"
"\n"
"Delete the processed events whose retention (ONCEHOOK_<NAME>_RETENTION)\n"
"has ended, and the conflicts rows older than it, in small transactions\n"
"while deliveries go on.  A pruned key is no longer deduplicated: keep\n"
"the retention beyond every sender's retry horizon.  Events that never\n"
"took effect (received, failed) are kept; --dead deletes dead ones past\n"
"their retention too.  The outbox rows of the events deleted go with\n"
"them once delivered (dead ones too with --dead; pending ones are kept).\n"
"--dry-run counts only.  Run it from cron, e.g.\n"
"daily.\n";

int
admin_prune(int argc, char **argv)
{
	struct conf	*cf = NULL;
	struct store	*st;
	char		 err[512];
	long long	 n, nc = 0, no = 0, now;
	int		 i, dry = 0, dead = 0;

	if (helped(argc, argv, prune_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (strcmp(argv[i], "--dead") == 0)
			dead = 1;
		else {
			fputs(prune_usage, stderr);
			return 2;
		}
	}
	if ((st = open_store("prune", &cf)) == NULL)
		return 1;
	now = (long long)time(NULL);
	if ((n = store_prune(st, now, dry, dead, &nc, err, sizeof(err))) < 0 ||
	    (no = outbox_prune(st, now, dry, dead, err, sizeof(err))) < 0) {
		fprintf(stderr, "oncehook prune: %s\n", err);
		n = -1;
	} else
		printf("%s %lld events and %lld conflicts past their "
		    "retention, and %lld outbox rows of the events gone\n",
		    dry ? "would delete" : "deleted", n, nc, no);
	store_close(st);
	conf_free(cf);
	return n < 0 ? 1 : 0;
}

static const char stats_usage[] =
"usage: oncehook stats [--endpoint NAME] [--json | --prometheus]\n"
"                      [--check [LIMITS]]\n"
"\n"
"What the counters (ONCEHOOK_DB-counters) and the database say: per\n"
"endpoint its health, deliveries in the last hour and day, processed,\n"
"duplicates and the dedup rate, key conflicts, refusals and failures by\n"
"reason, the last success and the last failure with its reason, stored\n"
"events; the outbox's rows by topic; the database and WAL sizes.\n"
"--json and --prometheus print the\n"
"same as the status endpoint.  --check prints one line and exits 0 (ok),\n"
"1 (warning: an endpoint or the outbox degraded) or 2 (critical: one\n"
"failing, or the database unreadable).  LIMITS (the defaults in brackets):\n"
"  --refused N      refusals in the last hour for a warning [10]\n"
"  --refused-pct P  ... if they are at least P% of deliveries [50]\n"
"  --storm N        deliveries in the last hour to judge duplicates [100]\n"
"  --storm-pct P    ... a warning if at least P% are duplicates [90]\n"
"  --idle H         a warning if an endpoint had no success in H hours\n"
"                   [off]\n"
"  --outbox-warn S  a warning if an outbox row is pending S seconds [600]\n"
"  --outbox-crit S  critical if one is pending S seconds [3600]; a dead\n"
"                   outbox row is always critical\n";

/* A whole number in [0, max] for a stats option; -1 if not. */
static long long
stats_number(const char *s, long long max)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > max)
		return -1;
	return v;
}

int
admin_stats(int argc, char **argv)
{
	static const struct {
		const char	*opt;
		long long	 max;
		size_t		 off;
		int		 wide;	/* uint64_t, else unsigned */
	} lims[] = {
		{ "--refused", 1LL << 40,
		    offsetof(struct stats_limits, refused), 1 },
		{ "--refused-pct", 100,
		    offsetof(struct stats_limits, refused_pct), 0 },
		{ "--storm", 1LL << 40,
		    offsetof(struct stats_limits, dup_min), 1 },
		{ "--storm-pct", 100,
		    offsetof(struct stats_limits, dup_pct), 0 },
		{ "--idle", 24 * 365,
		    offsetof(struct stats_limits, idle_hours), 0 },
		{ "--outbox-warn", 86400 * 30,
		    offsetof(struct stats_limits, outbox_warn), 0 },
		{ "--outbox-crit", 86400 * 30,
		    offsetof(struct stats_limits, outbox_crit), 0 },
	};
	struct stats_limits	 lim = stats_limits_default;
	struct conf		*cf;
	struct store		*st;
	struct stats		 s;
	const char		*only = NULL;
	char			 err[512];
	long long		 v;
	size_t			 k;
	int			 i, json = 0, prom = 0, check = 0, rc;

	if (helped(argc, argv, stats_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		for (k = 0; k < sizeof(lims) / sizeof(lims[0]); k++)
			if (strcmp(argv[i], lims[k].opt) == 0)
				break;
		if (k < sizeof(lims) / sizeof(lims[0]) && i + 1 < argc) {
			if ((v = stats_number(argv[++i], lims[k].max)) < 0) {
				fprintf(stderr, "oncehook stats: %s: a whole "
				    "number from 0 to %lld\n", lims[k].opt,
				    lims[k].max);
				return 2;
			}
			if (lims[k].wide)
				*(uint64_t *)((char *)&lim + lims[k].off) =
				    (uint64_t)v;
			else
				*(unsigned *)((char *)&lim + lims[k].off) =
				    (unsigned)v;
		} else if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
			only = argv[++i];
		else if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--prometheus") == 0)
			prom = 1;
		else if (strcmp(argv[i], "--check") == 0)
			check = 1;
		else {
			fputs(stats_usage, stderr);
			return 2;
		}
	}
	if (json && prom) {
		fputs(stats_usage, stderr);
		return 2;
	}
	if ((cf = load("stats", CONF_NEEDS_DB)) == NULL)
		return check ? 2 : 1;
	if ((st = store_open(cf, 0, err, sizeof(err))) == NULL)
		fprintf(stderr, "oncehook stats: %s\n", err);
	if (stats_gather(cf, st, st == NULL ? err : NULL,
	    (int64_t)time(NULL), &lim, only, &s) == -1) {
		if (check)
			printf("CRITICAL: %s\n", s.verdict);
		fprintf(stderr, "oncehook stats: %s\n", s.verdict);
		store_close(st);
		conf_free(cf);
		return 2;
	}
	if (json)
		(void)stats_write_json(stdout, &s);
	else if (prom)
		stats_write_prom(stdout, &s);
	else if (check)
		printf("%s\n", s.verdict);
	else
		stats_write_text(stdout, &s);
	rc = check ? s.code : 0;
	stats_clear(&s);
	store_close(st);
	conf_free(cf);
	return rc;
}

static const char replay_usage[] =
"usage: oncehook replay [--endpoint NAME] [--dry-run]\n"
"                       (KEY... | --failed | --dead)\n"
"\n"
"Run the endpoint's current actions for stored events that have not\n"
"taken effect (failed: parked after ONCEHOOK_<NAME>_PARK_AFTER attempts;\n"
"dead; received), each exactly once: the status changes in the same\n"
"transaction as the effect, so two replays, work and live deliveries\n"
"at the same moment cannot run one twice.  A processed event is never\n"
"run again (said, not an error).  --failed or --dead: every such event\n"
"(of the endpoint, or of all).  --dry-run says what would run.  Exit 0\n"
"when nothing failed (nothing to do included), 1 when an event failed\n"
"again or a named key was not found, 2 on a usage or configuration\n"
"error.\n";

/* The events to replay: endpoint index and key, owned. */
struct replay_list {
	size_t	*ep;
	char	**keys;
	size_t	 n, cap;
	size_t	 cur;		/* the endpoint being listed */
	int	 oom;
};

static void
replay_add(void *arg, const struct store_row *r)
{
	struct replay_list	*l = arg;
	size_t			*ne;
	char			**nk;

	if (l->oom)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		ne = realloc(l->ep, l->cap * sizeof(*ne));
		nk = realloc(l->keys, l->cap * sizeof(*nk));
		if (ne != NULL)
			l->ep = ne;
		if (nk != NULL)
			l->keys = nk;
		if (ne == NULL || nk == NULL) {
			l->oom = 1;
			return;
		}
	}
	if ((l->keys[l->n] = strdup(r->key)) == NULL) {
		l->oom = 1;
		return;
	}
	l->ep[l->n++] = l->cur;
}

int
admin_replay(int argc, char **argv)
{
	struct replay_list	 l;
	struct conf		*cf = NULL;
	struct counters		*ctr = NULL;
	struct store		*st;
	const char		*endpoint = NULL, *status = NULL;
	char			 why[512], k[600];
	enum hook_err		 er;
	size_t			 e = 0, j;
	int			 i, dry = 0, nkeys = 0, rc = 0;
	long long		 n;

	if (helped(argc, argv, replay_usage))
		return 0;
	memset(&l, 0, sizeof(l));
	/* Options anywhere: "replay KEY --dry-run" must not run KEY. */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
			endpoint = argv[++i];
		else if (strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (strcmp(argv[i], "--failed") == 0)
			status = "failed";
		else if (strcmp(argv[i], "--dead") == 0)
			status = "dead";
		else if (argv[i][0] == '-') {
			fputs(replay_usage, stderr);
			return 2;
		} else
			nkeys++;
	}
	if ((nkeys == 0) == (status == NULL)) {
		fputs(replay_usage, stderr);
		return 2;
	}
	if ((cf = load("replay", CONF_NEEDS_DB)) == NULL)
		return 2;
	if ((er = store_connect(cf, STORE_LAZY, &st, why, sizeof(why))) !=
	    HOOK_OK) {
		fprintf(stderr, "oncehook replay: %s\n", why);
		conf_free(cf);
		return er == HOOK_ECONF ? 2 : 1;
	}
	if (endpoint != NULL && conf_endpoint_index(cf, endpoint, &e) == -1) {
		fprintf(stderr, "oncehook replay: no endpoint %s\n", endpoint);
		rc = 2;
		goto out;
	}
	if (endpoint == NULL && nkeys > 0 && cf->nendpoints > 1) {
		fprintf(stderr, "oncehook replay: --endpoint is needed\n");
		rc = 2;
		goto out;
	}
	if (endpoint == NULL)
		e = 0;
	if (status != NULL) {
		for (j = 0; j < cf->nendpoints; j++) {
			if (endpoint != NULL && j != e)
				continue;
			l.cur = j;
			if ((n = store_list(st, cf->endpoints[j].name, NULL,
			    status, 1LL << 40, 0, replay_add, &l, why,
			    sizeof(why))) < 0) {
				fprintf(stderr, "oncehook replay: %s\n", why);
				rc = 1;
				goto out;
			}
		}
	} else
		for (i = 1; i < argc && !l.oom; i++) {
			if (strcmp(argv[i], "--endpoint") == 0) {
				i++;
				continue;
			}
			if (argv[i][0] == '-')
				continue;
			l.cur = e;
			replay_add(&l, &(struct store_row){ .key = argv[i] });
		}
	if (l.oom) {
		fprintf(stderr, "oncehook replay: out of memory\n");
		rc = 2;
		goto out;
	}
	if (l.n == 0)
		printf("nothing to replay\n");
	/* Oldest first, as work runs them (the list came newest first). */
	if (status != NULL)
		for (j = 0; j < l.n / 2; j++) {
			char	*tk = l.keys[j];
			size_t	 te = l.ep[j];

			l.keys[j] = l.keys[l.n - 1 - j];
			l.ep[j] = l.ep[l.n - 1 - j];
			l.keys[l.n - 1 - j] = tk;
			l.ep[l.n - 1 - j] = te;
		}
	for (j = 0; j < l.n; j++) {
		const char	*name = cf->endpoints[l.ep[j]].name;

		log_escape(k, sizeof(k), l.keys[j]);
		switch (store_replay(st, l.ep[j], l.keys[j], dry, why,
		    sizeof(why))) {
		case REPLAY_DONE:
			printf("replayed       %s %s\n", name, k);
			if (cf->counters && cf->counters_file != NULL &&
			    ctr == NULL)
				ctr = counters_open(cf->counters_file);
			counters_succeeded(ctr, name, (int64_t)time(NULL));
			break;
		case REPLAY_WOULD:
			printf("would replay   %s %s (%s)\n", name, k, why);
			break;
		case REPLAY_ALREADY:
			printf("processed      %s %s (already; not run again)\n",
			    name, k);
			break;
		case REPLAY_NONE:
			printf("not found      %s %s\n", name, k);
			rc = 1;
			break;
		case REPLAY_FAILED:
			printf("failed again   %s %s: %s\n", name, k, why);
			rc = 1;
			break;
		case REPLAY_ERROR:
			printf("not replayed   %s %s: %s\n", name, k, why);
			rc = 1;
			break;
		}
	}
out:
	for (j = 0; j < l.n; j++)
		free(l.keys[j]);
	free(l.keys);
	free(l.ep);
	counters_close(ctr);
	store_close(st);
	conf_free(cf);
	return rc;
}

static const char work_usage[] =
"usage: oncehook work [--once] [--max-seconds N]\n"
"\n"
"Run the actions of due events that have not taken effect: received\n"
"(deferred mode, when the process that claimed one did not run it, as\n"
"under CGI) and failed ones whose next attempt is due (parked included),\n"
"oldest first, each exactly once: any number of work processes, replays\n"
"and live deliveries may run at the same time.  A failure counts an\n"
"attempt and waits (1 minute doubling to 6 hours, with jitter); at\n"
"ONCEHOOK_<NAME>_MAX_ATTEMPTS the event is dead.  One log line per event\n"
"on stderr.  --once: until none is due (cron, every minute); else\n"
"polling every second until --max-seconds have passed, or SIGTERM.  Exit\n"
"0 when nothing failed (nothing to do included), 1 when an event failed\n"
"or the database could not be used, 2 on a usage or configuration\n"
"error.\n";

static volatile sig_atomic_t	 work_stop;

static void
on_work_stop(int sig)
{
	(void)sig;
	work_stop = 1;
}

/*
 * work's and deliver's shared options: 1 if argv[*i] was --once or
 * --max-seconds N (*i moved past N), 0 if it is not one of them, -1 if
 * N is not a number from 1 to a year of seconds.
 */
static int
loop_option(int argc, char **argv, int *i, int *once, long long *max)
{
	if (strcmp(argv[*i], "--once") == 0) {
		*once = 1;
		return 1;
	}
	if (strcmp(argv[*i], "--max-seconds") != 0 || *i + 1 >= argc)
		return 0;
	*max = stats_number(argv[++*i], 86400LL * 365);
	return *max < 1 ? -1 : 1;
}

/* SIGTERM and SIGINT end a loop (work_stop) after the item in hand. */
static void
catch_stop(void)
{
	struct sigaction	 sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_work_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

int
admin_work(int argc, char **argv)
{
	struct conf		*cf;
	long long		 max = 0;
	int			 i, once = 0, rc;

	if (helped(argc, argv, work_usage))
		return 0;
	for (i = 1; i < argc; i++)
		if (loop_option(argc, argv, &i, &once, &max) != 1) {
			fputs(work_usage, stderr);
			return 2;
		}
	if ((cf = load("work", CONF_NEEDS_DB)) == NULL)
		return 2;
	catch_stop();
	rc = work_loop(cf, once, (long)max, 0, &work_stop);
	conf_free(cf);
	return rc;
}

static const char deliver_usage[] =
"usage: oncehook deliver [--once] [--max-seconds N] [--retry-dead]\n"
"                        [--retry-now]\n"
"\n"
"Send the outbox's due rows (what actions wrote into the outbox table)\n"
"to their targets, oldest first: ONCEHOOK_OUTBOX_<TOPIC>_COMMAND (run,\n"
"the payload on stdin, exit 0 = done) or ONCEHOOK_OUTBOX_<TOPIC>_URL\n"
"(POSTed, signed as a Standard Webhooks sender with\n"
"ONCEHOOK_OUTBOX_SECRET; a 2xx = done).  At least once, with a stable id\n"
"(webhook-id, ONCEHOOK_OUTBOX_ID) the receiver deduplicates on.  Each\n"
"attempt leases its row for ONCEHOOK_OUTBOX_TIMEOUT + 5 s: deliverers may\n"
"run side by side, and a row whose deliverer died is sent again after\n"
"that.  A failure waits ONCEHOOK_OUTBOX_BACKOFF seconds, doubling to 6\n"
"hours, with jitter; at ONCEHOOK_OUTBOX_MAX_ATTEMPTS the row is dead.\n"
"Rows of a topic without a target wait (oncehook check names them).  One\n"
"log line per attempt on stderr.  --once: until none is due (cron,\n"
"every minute); else polling every second until --max-seconds have\n"
"passed, or SIGTERM.  --retry-dead: dead rows are made pending again,\n"
"due now, with their attempts from 0; --retry-now: pending rows waiting\n"
"out a backoff are made due now (a receiver fixed).  Then, with --once\n"
"or --max-seconds, delivered; alone, nothing more.  Exit 0 when nothing\n"
"failed (nothing to do included), 1 when an attempt failed or the\n"
"database could not be used, 2 on a usage or configuration error.\n";

int
admin_deliver(int argc, char **argv)
{
	struct conf		*cf;
	struct store		*st;
	long long		 max = 0, n;
	char			 err[512];
	int			 i, r, once = 0, dead = 0, now = 0, rc;

	if (helped(argc, argv, deliver_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if ((r = loop_option(argc, argv, &i, &once, &max)) == 1)
			continue;
		if (r == 0 && strcmp(argv[i], "--retry-dead") == 0)
			dead = 1;
		else if (r == 0 && strcmp(argv[i], "--retry-now") == 0)
			now = 1;
		else {
			fputs(deliver_usage, stderr);
			return 2;
		}
	}
	if ((cf = load("deliver", CONF_NEEDS_DB)) == NULL)
		return 2;
	if (cf->outbox_err[0] != '\0') {
		fprintf(stderr, "oncehook deliver: %s\n", cf->outbox_err);
		conf_free(cf);
		return 2;
	}
	if (dead || now) {
		if ((st = store_open(cf, 0, err, sizeof(err))) == NULL ||
		    (n = outbox_retry(st, (long long)time(NULL), dead, now, err,
		    sizeof(err))) < 0) {
			fprintf(stderr, "oncehook deliver: %s\n", err);
			store_close(st);
			conf_free(cf);
			return 1;
		}
		store_close(st);
		printf("%lld %soutbox row%s made due now\n", n, dead && !now ?
		    "dead " : now && !dead ? "waiting " : "", n == 1 ? "" :
		    "s");
		fflush(stdout);
		if (!once && max == 0) {
			conf_free(cf);
			return 0;
		}
	}
	catch_stop();
	rc = deliver_loop(cf, once, (long)max, &work_stop);
	conf_free(cf);
	return rc;
}
