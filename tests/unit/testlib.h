/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the helpers the unit tests share (after tap.h).
 *
 * - struct var and var_get(): a configuration as a table of variables,
 *   for conf_load();
 * - struct testreq and mkreq(): a POST whose headers are given as
 *   "NAME=value" CGI variables (ENV() writes such a list inline).
 */
#ifndef ONCEHOOK_TESTLIB_H
#define ONCEHOOK_TESTLIB_H

#include <string.h>

#include "hook.h"
#include "tap.h"

/* One configuration variable; a table of them ends with a NULL name. */
struct var {
	const char	*name;
	const char	*value;
};

/* A conf_getenv_fn over a struct var table (arg). */
static inline const char *
var_get(const char *name, void *arg)
{
	const struct var	*v;

	for (v = arg; v->name != NULL; v++)
		if (strcmp(v->name, name) == 0)
			return v->value;
	return NULL;
}

#define TESTREQ_HEADERS	8

/* A request and the headers it borrows. */
struct testreq {
	struct req		 rq;
	struct req_header	 h[TESTREQ_HEADERS];
};

/* A POST whose headers are the given "NAME=value" CGI variables. */
static inline const struct req *
mkreq(struct testreq *t, const char *const *vars)
{
	const char	*eq;
	size_t		 n = 0;

	memset(t, 0, sizeof(*t));
	for (; vars != NULL && *vars != NULL; vars++) {
		if (n == TESTREQ_HEADERS || (eq = strchr(*vars, '=')) == NULL)
			BAIL("bad test request");
		t->h[n].name = *vars;
		t->h[n].namelen = (size_t)(eq - *vars);
		t->h[n].value = eq + 1;
		n++;
	}
	t->rq.method = "POST";
	t->rq.headers = t->h;
	t->rq.nheaders = n;
	return &t->rq;
}

/* An inline list of "NAME=value" strings for mkreq(). */
#define ENV(...)	((const char *const []){ __VA_ARGS__, NULL })

#endif
