/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the status endpoint (see observe/status.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "front/req.h"
#include "lib/crypto.h"
#include "lib/log.h"
#include "observe/stats.h"
#include "observe/status.h"
#include "pipeline/route.h"

#define AUTH_MAX	1024	/* bytes of a decoded Basic credential */

int
status_wanted(const struct conf *cf, const struct req *rq)
{
	char	 name[16];

	if (cf == NULL || cf->status_token == NULL)
		return 0;
	route_name(rq->path_info, rq->script_name, name, sizeof(name));
	return strcmp(name, "status") == 0;
}

/* 1 if the n bytes at p are the token; the time depends on neither. */
static int
is_token(const char *token, const void *p, size_t n)
{
	unsigned char	 a[CRYPTO_SHA256_LEN], b[CRYPTO_SHA256_LEN];
	int		 ok;

	if (crypto_sha256(token, strlen(token), a) == -1 ||
	    crypto_sha256(p, n, b) == -1)
		return 0;
	ok = crypto_equal(a, b, sizeof(a));
	crypto_wipe(a, sizeof(a));
	crypto_wipe(b, sizeof(b));
	return ok;
}

/* 1 if Authorization carries the token as Bearer or Basic's password. */
static int
authorized(const char *token, const char *auth)
{
	unsigned char	 cred[AUTH_MAX];
	unsigned char	*colon;
	long		 n;
	int		 ok;

	if (auth == NULL)
		return 0;
	while (*auth == ' ')
		auth++;
	if (strncasecmp(auth, "Bearer ", 7) == 0) {
		for (auth += 7; *auth == ' '; auth++)
			;
		return is_token(token, auth, strcspn(auth, " \t"));
	}
	if (strncasecmp(auth, "Basic ", 6) != 0)
		return 0;
	for (auth += 6; *auth == ' '; auth++)
		;
	if ((n = crypto_unbase64(auth, strcspn(auth, " \t"), cred,
	    sizeof(cred))) < 0)
		return 0;
	if ((colon = memchr(cred, ':', (size_t)n)) == NULL)
		ok = 0;
	else
		ok = is_token(token, colon + 1,
		    (size_t)(cred + n - (colon + 1)));
	crypto_wipe(cred, sizeof(cred));
	return ok;
}

/* The formats, in the order a tie is settled. */
enum fmt { FMT_JSON, FMT_HTML, FMT_PROM, FMT__MAX };

/*
 * The format Accept asks for: each media range with its q (default 1);
 * application/json, text/html and text/plain name theirs, and * / * and
 * application/ * count for JSON.  The highest q wins, JSON first on a
 * tie; none acceptable (or no header): JSON.
 */
static enum fmt
choose(const char *accept)
{
	static const struct {
		const char	*type;
		enum fmt	 fmt;
	} types[] = {
		{ "application/json", FMT_JSON }, { "*/*", FMT_JSON },
		{ "application/*", FMT_JSON }, { "text/html", FMT_HTML },
		{ "text/plain", FMT_PROM },
	};
	double		 q[FMT__MAX] = { -1, -1, -1 }, v;
	const char	*p, *end, *qs;
	size_t		 len, i;
	int		 best = FMT_JSON, k;

	for (p = accept; p != NULL && *p != '\0'; p = *end ? end + 1 : end) {
		while (*p == ' ' || *p == '\t')
			p++;
		end = p + strcspn(p, ",");
		len = strcspn(p, "; \t,");
		v = 1;
		for (qs = p; (qs = strchr(qs, ';')) != NULL && qs < end; qs++) {
			qs++;
			while (*qs == ' ' || *qs == '\t')
				qs++;
			if (qs[0] == 'q' && qs[1] == '=')
				v = strtod(qs + 2, NULL);
		}
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strlen(types[i].type) == len &&
			    strncasecmp(p, types[i].type, len) == 0 &&
			    v > q[types[i].fmt])
				q[types[i].fmt] = v;
	}
	for (k = 1; k < FMT__MAX; k++)
		if (q[k] > q[best])
			best = k;
	return q[best] > 0 || accept == NULL ? (enum fmt)best : FMT_JSON;
}

enum hook_err
status_answer(const struct conf *cf, struct store *st, const struct req *rq,
    time_t now, char **body, size_t *bodysz, const char **ctype,
    struct why *why)
{
	const char	*auth = req_header(rq, "Authorization");
	struct stats	 s;
	FILE		*o;
	enum fmt	 fmt;

	*body = NULL;
	*bodysz = 0;
	*ctype = NULL;
	if (auth != NULL && *auth == '\0')
		auth = NULL;
	if (!authorized(cf->status_token, auth)) {
		why_set(why, "status: %s", auth != NULL ? "wrong token" :
		    "no Authorization header (does the web server pass it? "
		    "see docs/operations.md)");
		return HOOK_EAUTH;
	}
	if (rq->method == NULL || (strcmp(rq->method, "GET") != 0 &&
	    strcmp(rq->method, "HEAD") != 0))
		return HOOK_EGETONLY;
	/* A browser asks for text/html first; Prometheus for text/plain
	 * (after OpenMetrics, which is not served); curl for anything. */
	fmt = choose(req_header(rq, "Accept"));
	if (stats_gather(cf, st, st == NULL ?
	    "the database could not be opened" : NULL, (int64_t)now,
	    &stats_limits_default, NULL, &s) == -1)
		return HOOK_ESYSTEM;
	if ((o = open_memstream(body, bodysz)) == NULL) {
		stats_clear(&s);
		return HOOK_ESYSTEM;
	}
	switch (fmt) {
	case FMT_HTML:
		stats_write_html(o, &s);
		*ctype = "text/html; charset=utf-8";
		break;
	case FMT_PROM:
		stats_write_prom(o, &s);
		*ctype = "text/plain; version=0.0.4; charset=utf-8";
		break;
	case FMT_JSON:
	case FMT__MAX:
		(void)stats_write_json(o, &s);
		*ctype = "application/json";
		break;
	}
	stats_clear(&s);
	if (fclose(o) != 0 || *body == NULL) {
		free(*body);
		*body = NULL;
		return HOOK_ESYSTEM;
	}
	return HOOK_STATUS;
}
