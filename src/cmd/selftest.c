/* SPDX-License-Identifier: MIT */
/*
 * oncehook: selftest (see cmd/selftest.h).
 *
 * Each vector (src/pipeline/vectors.c) is a request as a provider documents it: a secret, a body,
 * the headers, and the time at which it was signed.  For each, the
 * configuration is loaded the way the handler loads it (conf_load over a
 * table of variables), the request must verify, the same request with
 * one body byte changed must not, and signing the body again with the
 * same id and time must give the documented signature header.  A
 * public-key vector is signed again only where its private key is
 * published (RFC 8032's test key, from which the Discord, Telnyx and
 * v1a vectors are derived: the providers publish none); a batch's body
 * must hold its number of events.  Without libcrypto the public-key
 * vectors are skipped, saying why.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cmd/selftest.h"
#include "conf.h"
#include "hook.h"
#include "lib/crypto.h"
#include "lib/pubkey.h"
#include "pipeline/event.h"
#include "pipeline/sig.h"
#include "pipeline/sigkit.h"
#include "pipeline/vectors.h"

/* One vector's configuration, as conf_load() asks for it. */
struct vecenv {
	const struct vector	*v;
	const char		*secretfile;	/* or NULL */
};

/*
 * The configuration variables of one vector.  A secret with a space
 * (GitHub's example has some) cannot go in ONCEHOOK_SECRET, which is a
 * space-separated list: it goes through ONCEHOOK_SECRET_FILE, as a user
 * would have to do.
 */
static const char *
vec_get(const char *name, void *arg)
{
	const struct vecenv	*e = arg;

	if (strcmp(name, "ONCEHOOK_DB") == 0)
		return "/nonexistent/oncehook-selftest.db";
	if (strcmp(name, "ONCEHOOK_SCHEME") == 0)
		return e->v->scheme;
	if (strcmp(name, "ONCEHOOK_SECRET") == 0 && e->secretfile == NULL)
		return e->v->secret;
	if (strcmp(name, "ONCEHOOK_SECRET_FILE") == 0)
		return e->secretfile;
	if (strcmp(name, "ONCEHOOK_URL") == 0)
		return vector_url(e->v);
	return NULL;
}

/* Load v's configuration; NULL with a reason in err. */
static struct conf *
vec_conf(const struct vector *v, char *err, size_t errsz)
{
	struct vecenv	 e = { v, NULL };
	struct conf	*cf;
	const char	*dir;
	char		 path[512];
	FILE		*f;
	int		 fd;

	if (strchr(v->secret, ' ') == NULL)
		return conf_load(vec_get, &e, err, errsz);
	if ((dir = getenv("TMPDIR")) == NULL || *dir == '\0')
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/oncehook-selftest.XXXXXX", dir);
	if ((fd = mkstemp(path)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errsz, "%s: cannot create a temporary file",
		    dir);
		if (fd != -1)
			close(fd);
		return NULL;
	}
	fprintf(f, "%s\n", v->secret);
	fclose(f);
	e.secretfile = path;
	cf = conf_load(vec_get, &e, err, errsz);
	unlink(path);
	return cf;
}

/* CGI names (HTTP_X_FOO) for the vector's headers, into names. */
static size_t
cgi_headers(const struct vector *v, char names[VEC_HEADERS][64],
    struct req_header *h)
{
	size_t	 i, j, n = 0;

	for (i = 0; i < VEC_HEADERS && v->headers[i][0] != NULL; i++) {
		snprintf(names[i], sizeof(names[i]), "HTTP_%s",
		    v->headers[i][0]);
		for (j = 5; names[i][j] != '\0'; j++)
			names[i][j] = names[i][j] == '-' ? '_' :
			    (char)(names[i][j] >= 'a' && names[i][j] <= 'z' ?
			    names[i][j] - 32 : names[i][j]);
		h[n].name = names[i];
		h[n].namelen = strlen(names[i]);
		h[n].value = v->headers[i][1];
		n++;
	}
	return n;
}

/*
 * Verify body under v's headers at v's time; with answer, also make
 * the answer to the handshake token into it (failing: HOOK_ESYSTEM).
 */
static enum hook_err
verify_answer(const struct conf_endpoint *ep, const struct vector *v,
    const char *body, const char *token, struct hook_answer *answer)
{
	char			 names[VEC_HEADERS][64];
	struct req_header	 h[VEC_HEADERS];
	struct req		 rq;
	struct sig_input	 in;
	struct sig_verdict	 verdict;
	enum hook_err		 er;

	memset(&rq, 0, sizeof(rq));
	rq.headers = h;
	rq.nheaders = cgi_headers(v, names, h);
	in.rq = &rq;
	in.body = body;
	in.bodysz = strlen(body);
	in.now = (time_t)(v->now ? v->now : 1700000000);
	er = sig_verify(ep, &in, &verdict);
	if (er == HOOK_OK && answer != NULL &&
	    sig_answer(ep, NULL, &in, token, answer) == -1)
		er = HOOK_ESYSTEM;
	return er;
}

static enum hook_err
verify(const struct conf_endpoint *ep, const struct vector *v,
    const char *body)
{
	return verify_answer(ep, v, body, NULL, NULL);
}

/* The answer to av's token in v's request ends with av's value. */
static int
answers(const struct conf_endpoint *ep, const struct vector *v,
    const struct answer_vector *av)
{
	struct hook_answer	 a;

	return verify_answer(ep, v, v->body, av->token, &a) == HOOK_OK &&
	    a.n > 0 && strcmp(a.value[a.n - 1], av->answer) == 0;
}

/* The header sig_sign gives for v equals the documented one. */
static int
resign(const struct conf_endpoint *ep, const struct vector *v)
{
	const struct vector_more	*more = vector_more(v);
	struct secret			 k, *key = NULL;
	struct sig_msg			 m;
	struct sig_out			 out;
	char				 err[256];
	size_t				 i, j;
	int				 rc;

	memset(&m, 0, sizeof(m));
	m.body = v->body;
	m.bodysz = strlen(v->body);
	m.now = (time_t)v->now;
	m.id = v->id != NULL ? v->id : "selftest";
	m.id_given = v->id != NULL;
	if (more != NULL && more->private != NULL) {
		/* A public-key vector: its published private key. */
		if (sigpub_private(more->private, &k, err, sizeof(err)) == -1)
			return 0;
		key = &k;
	}
	rc = sig_sign(ep, key, &m, &out);
	if (key != NULL) {
		crypto_wipe(k.p, k.sz);
		free(k.p);
	}
	if (rc == -1)
		return 0;
	for (i = 0; i < out.n; i++) {
		if (strcasecmp(out.h[i].name, v->signature) != 0)
			continue;
		for (j = 0; j < VEC_HEADERS && v->headers[j][0] != NULL; j++)
			if (strcasecmp(v->headers[j][0], v->signature) == 0)
				return strcmp(out.h[i].value,
				    v->headers[j][1]) == 0;
	}
	return 0;
}

/* The events of v's batch body: their number, each keyed; -1 if the
 * body is refused. */
static long
batch_items(const struct conf_endpoint *ep, const struct vector *v)
{
	struct req	 rq;
	struct why	 why = { "", NULL };
	struct event	*items = NULL;
	size_t		 n = 0, i;
	long		 rc;

	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	if (scheme_batch(ep->scheme) == NULL ||
	    event_items(ep, &rq, scheme_batch(ep->scheme), v->body,
	    strlen(v->body), &items, &n, &why) != HOOK_OK)
		return -1;
	for (rc = (long)n, i = 0; i < n; i++)
		if (items[i].key == NULL || *items[i].key == '\0')
			rc = -1;
	event_items_free(items, n);
	return rc;
}

int
selftest_main(int argc, char **argv)
{
	const struct vector	*v;
	const struct vector_more *more;
	struct conf		*cf;
	char			 err[256], *tampered;
	size_t			 i, j;
	int			 failed = 0, n = 0, ok;
	long			 got;

	if (argc > 1) {
		fputs("usage: oncehook selftest\n\nCheck every signature "
		    "scheme against its provider's published example:\nthe "
		    "example verifies, a changed body does not, and signing "
		    "again\ngives the documented signature; a handshake's "
		    "answer is the\ndocumented one.  Exit status 0 if all "
		    "pass.\n", strcmp(argv[1], "--help") == 0 ?
		    stdout : stderr);
		return strcmp(argv[1], "--help") == 0 ? 0 : 2;
	}
	for (i = 0; i < nvectors; i++) {
		v = &vectors[i];
		more = vector_more(v);
		if (more != NULL && pubkey_load(err, sizeof(err)) == -1) {
			printf("ok %d - %s # SKIP %s\n", ++n, v->scheme, err);
			continue;
		}
		if ((cf = vec_conf(v, err, sizeof(err))) == NULL) {
			printf("not ok %d - %s: configuration: %s\n", ++n,
			    v->scheme, err);
			failed++;
			continue;
		}
		ok = verify(&cf->endpoints[0], v, v->body) == HOOK_OK;
		printf("%s %d - %s verifies: %s\n", ok ? "ok" : "not ok", ++n,
		    v->scheme, v->source);
		failed += !ok;
		if (!v->bodyless) {
			if ((tampered = strdup(v->body)) != NULL) {
				tampered[0] ^= 1;
				ok = verify(&cf->endpoints[0], v, tampered) ==
				    HOOK_ESIG;
				free(tampered);
			} else
				ok = 0;
			printf("%s %d - %s refuses the body changed\n",
			    ok ? "ok" : "not ok", ++n, v->scheme);
			failed += !ok;
		}
		if (v->signature != NULL) {
			ok = resign(&cf->endpoints[0], v);
			printf("%s %d - %s signs it the same%s\n",
			    ok ? "ok" : "not ok", ++n, v->scheme,
			    more != NULL && more->private != NULL ?
			    " (from RFC 8032's private key)" : "");
			failed += !ok;
		}
		if (more != NULL && more->items > 0) {
			got = batch_items(&cf->endpoints[0], v);
			ok = got == (long)more->items;
			printf("%s %d - %s's body is %zu event(s), each keyed "
			    "(found %ld)\n", ok ? "ok" : "not ok", ++n,
			    v->scheme, more->items, got);
			failed += !ok;
		}
		for (j = 0; j < nanswer_vectors; j++) {
			if (strcmp(answer_vectors[j].scheme, v->scheme) != 0)
				continue;
			ok = answers(&cf->endpoints[0], v, &answer_vectors[j]);
			printf("%s %d - %s answers its handshake\n",
			    ok ? "ok" : "not ok", ++n, v->scheme);
			failed += !ok;
		}
		conf_free(cf);
	}
	printf("1..%d\n", n);
	printf("%s: %d of %d checks passed\n", failed ? "FAILED" : "selftest "
	    "passed", n - failed, n);
	return failed ? 1 : 0;
}
