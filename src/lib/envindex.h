/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the process environment's ONCEHOOK_ variables, indexed.
 *
 * conf_load() asks for about ten names an endpoint, most of them unset,
 * and getenv() walks the whole environment for each, at every CGI
 * request (docs/design/004-envindex.md).  envindex_new() walks it once and
 * hashes every variable whose name starts with ONCEHOOK_; envindex_get()
 * then answers as getenv() would (the first of two same names wins),
 * and passes any other name to getenv().  The index points into the
 * environment: it lives while nothing changes the environment (one
 * conf_load()).
 */
#ifndef ONCEHOOK_ENVINDEX_H
#define ONCEHOOK_ENVINDEX_H

struct envindex;

/* Index env (NULL-terminated, "NAME=value" strings); NULL if out of
 * memory (then pass NULL to envindex_get: it calls getenv()). */
struct envindex	*envindex_new(char *const *env);
/* conf_getenv_fn: the value of name, or NULL; arg is the index. */
const char	*envindex_get(const char *name, void *arg);
void		 envindex_free(struct envindex *);

#endif
