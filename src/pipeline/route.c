/* SPDX-License-Identifier: MIT */
/*
 * oncehook: routing and the document-root policy (see pipeline/route.h).
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "pipeline/route.h"

/*
 * The last non-empty segment of path into buf ("" if it does not fit);
 * returns its length, 0 if path has none.
 */
static size_t
last_segment(const char *path, char *buf, size_t bufsz)
{
	const char	*end, *start;
	size_t		 len;

	buf[0] = '\0';
	if (path == NULL)
		return 0;
	end = path + strlen(path);
	while (end > path && end[-1] == '/')
		end--;
	start = end;
	while (start > path && start[-1] != '/')
		start--;
	len = (size_t)(end - start);
	if (len > 0 && len < bufsz) {
		memcpy(buf, start, len);
		buf[len] = '\0';
	}
	return len;
}

void
route_name(const char *path_info, const char *script_name, char *buf,
    size_t bufsz)
{
	if (last_segment(path_info, buf, bufsz) == 0)
		(void)last_segment(script_name, buf, bufsz);
}

const struct conf_endpoint *
route_endpoint(const struct conf *cf, const char *path_info,
    const char *script_name)
{
	char	 seg[CONF_NAME_MAX];
	size_t	 i;

	if (!cf->named)
		return &cf->endpoints[0];
	route_name(path_info, script_name, seg, sizeof(seg));
	if (seg[0] == '\0')
		return NULL;
	for (i = 0; i < cf->nendpoints; i++)
		if (strcmp(cf->endpoints[i].name, seg) == 0)
			return &cf->endpoints[i];
	return NULL;
}

/*
 * Resolve path: the file itself if it exists, else its directory plus
 * its last component.  Returns 0, or -1 if neither resolves.
 */
static int
resolve(const char *path, char *out)
{
	char	 dir[PATH_MAX];
	char	*slash;

	if (realpath(path, out) != NULL)
		return 0;
	if (strlen(path) >= sizeof(dir))
		return -1;
	strcpy(dir, path);
	if ((slash = strrchr(dir, '/')) == NULL)
		return -1;
	*slash = '\0';
	if (realpath(*dir ? dir : "/", out) == NULL)
		return -1;
	if (strlen(out) + strlen(slash + 1) + 2 > PATH_MAX)
		return -1;
	strcat(out, "/");
	strcat(out, slash + 1);
	return 0;
}

/* 1 if the resolved path p lies in the resolved directory d. */
static int
under(const char *p, const char *d)
{
	size_t	 dl = strlen(d);

	if (dl == 1)		/* the directory is "/" */
		return 1;
	return strncmp(p, d, dl) == 0 && (p[dl] == '/' || p[dl] == '\0');
}

/*
 * A database is inside the document root if it is so as written (even
 * in a directory that does not exist yet), with
 * its directories resolved, or with its last component followed too: a
 * symbolic link in the document root that points elsewhere still lets
 * the web server serve the file.
 */
int
route_path_inside(const char *path, const char *dir)
{
	char	 p[PATH_MAX], d[PATH_MAX], parent[PATH_MAX];
	char	*slash;

	/* As written, when no "." or ".." component can lead out. */
	if (strstr(path, "/./") == NULL && strstr(path, "/../") == NULL &&
	    under(path, dir))
		return 1;
	if (realpath(dir, d) == NULL)
		return -1;
	if (strstr(path, "/./") == NULL && strstr(path, "/../") == NULL &&
	    under(path, d))
		return 1;
	if (strlen(path) < sizeof(parent)) {
		strcpy(parent, path);
		if ((slash = strrchr(parent, '/')) != NULL && slash != parent) {
			*slash = '\0';
			if (realpath(parent, p) != NULL &&
			    strlen(p) + strlen(slash + 1) + 2 <= sizeof(p)) {
				strcat(p, "/");
				strcat(p, slash + 1);
				if (under(p, d))
					return 1;
			}
		}
	}
	if (resolve(path, p) == -1)
		return -1;
	return under(p, d);
}

const char *
route_exposed(const struct conf *cf, const char *root,
    const struct conf_endpoint **ep)
{
	size_t	 i;

	*ep = NULL;
	if (cf->my == NULL && route_path_inside(cf->db, root) == 1)
		return cf->db;
	if (cf->db_password_file != NULL &&
	    route_path_inside(cf->db_password_file, root) == 1)
		return cf->db_password_file;
	if (cf->db_tls_key != NULL &&
	    route_path_inside(cf->db_tls_key, root) == 1)
		return cf->db_tls_key;
	if (cf->counters_file != NULL &&
	    route_path_inside(cf->counters_file, root) == 1)
		return cf->counters_file;
	for (i = 0; i < cf->nendpoints; i++)
		if (cf->endpoints[i].secret_file != NULL &&
		    route_path_inside(cf->endpoints[i].secret_file, root) == 1) {
			*ep = &cf->endpoints[i];
			return cf->endpoints[i].secret_file;
		}
	return NULL;
}
