/* SPDX-License-Identifier: MIT */
/*
 * oncehook: where a request goes, and what the web server must never
 * serve.  Routing takes the endpoint name from the request path (SPEC
 * section 2); the document-root policy refuses a database or a secrets
 * file that lies where the web server could serve it.  Both read the
 * web server's view of paths (PATH_INFO, SCRIPT_NAME, DOCUMENT_ROOT),
 * which is why they live together and apart from the configuration.
 */
#ifndef ONCEHOOK_ROUTE_H
#define ONCEHOOK_ROUTE_H

#include <stddef.h>

struct conf;
struct conf_endpoint;

/*
 * The endpoint name a request asks for (SPEC section 2), into buf: the
 * last non-empty segment of path_info, or of script_name when path_info
 * has none (NULL, "", "/", "//").  Trailing slashes never count, so
 * lighttpd's split of /hooks/shop/ (SCRIPT_NAME /hooks/shop, PATH_INFO
 * /) names shop.  buf is "" when neither has a segment, or when the
 * segment does not fit in bufsz (no name is that long).
 */
void		 route_name(const char *path_info,
		    const char *script_name, char *buf, size_t bufsz);

/*
 * The endpoint a request routes to: the one route_name() names.
 * With a single unnamed endpoint every path routes to it.  NULL if none.
 */
const struct conf_endpoint *
		 route_endpoint(const struct conf *, const char *path_info,
		    const char *script_name);

/*
 * The first file the web server must never serve (the database, a
 * secrets file) that lies inside root, or NULL.  *ep is NULL for the
 * database (ONCEHOOK_DB), else the endpoint whose SECRET_FILE it is.
 * A root that cannot be resolved is compared as written.
 */
const char	*route_exposed(const struct conf *cf, const char *root,
		    const struct conf_endpoint **ep);

/* 1 if path (resolved) lies inside dir (resolved); 0 if not; -1 error */
int		 route_path_inside(const char *path, const char *dir);

#endif
