/*
 * oncehook: configuration from the environment (SPEC section 3).
 *
 * conf_load() reads every ONCEHOOK_* variable once, validates each
 * against its row in a table, runs the cross-field checks, and returns
 * an immutable struct conf.  Every error names the variable.  Secrets
 * live here and conf_free() wipes them.
 */
#ifndef ONCEHOOK_CONF_H
#define ONCEHOOK_CONF_H

#include <stddef.h>

struct scheme;

#define CONF_NAME_MAX	64	/* endpoint name, bytes */
#define CONF_SRC_MAX	8	/* alternatives in a key or type source */
#define CONF_SECRETS_MAX 16	/* secrets per endpoint (rotation) */
#define CONF_SECRET_MIN	16	/* bytes of key below which check warns */

/* Where a value (the idempotency key, the event type) comes from. */
enum src_kind {
	SRC_HEADER,		/* a request header */
	SRC_JSON,		/* a JSON pointer into the body */
	SRC_HASH,		/* SHA-256 of the canonical JSON (keys only) */
};

struct src {
	enum src_kind	 kind;
	char		*arg;	/* header name or JSON pointer; NULL for hash */
};

/* An ordered list of sources: the first that yields a value wins. */
struct srclist {
	struct src	 v[CONF_SRC_MAX];
	size_t		 n;
};

struct secret {
	unsigned char	*p;	/* key bytes as the scheme uses them */
	size_t		 sz;
};

struct conf_endpoint {
	char			 name[CONF_NAME_MAX]; /* "" if unnamed */
	char			 prefix[CONF_NAME_MAX + 16]; /* ONCEHOOK_X_ */
	const struct scheme	*scheme;
	struct secret		*secrets;
	size_t			 nsecrets;	/* 0: refuses every request */
	unsigned		 secret_at[CONF_SECRETS_MAX]; /* where each
						   secret was written: its
						   line in secret_file, else
						   its place in _SECRET */
	int			 placeholder;	/* an example secret was left */
	long long		 tolerance;	/* seconds */
	struct srclist		 key;
	struct srclist		 type;
	long long		 retention;	/* seconds; -1 forever */
	int			 replay_guard;	/* a known payload is a duplicate
						   whatever its key: the scheme
						   signs no timestamp */
	char			*actions;	/* path of the actions file */
	char			*secret_file;	/* or NULL */
};

struct conf {
	char			*db;		/* ONCEHOOK_DB */
	struct conf_endpoint	*endpoints;
	size_t			 nendpoints;
	int			 named;		/* ONCEHOOK_ENDPOINTS set */
	long long		 maxbody;	/* bytes */
	int			 synchronous_full;
	long long		 busy_ms;
	char			*status_token;	/* NULL if off */
	int			 loglevel;	/* enum log_level */
};

/* Look a variable up; getenv by default, anything in tests. */
typedef const char	*(*conf_getenv_fn)(const char *name, void *arg);

/*
 * Parse the configuration.  On success returns a new struct conf, to be
 * released with conf_free().  On failure returns NULL and writes one
 * line naming the variable into err (size errsz).
 */
struct conf	*conf_load(conf_getenv_fn get, void *arg, char *err,
		    size_t errsz);
/* conf_load() from the process environment. */
struct conf	*conf_load_env(char *err, size_t errsz);
void		 conf_free(struct conf *);

/*
 * The endpoint name a request asks for (SPEC section 2), into buf: the
 * last non-empty segment of path_info, or of script_name when path_info
 * has none (NULL, "", "/", "//").  Trailing slashes never count, so
 * lighttpd's split of /hooks/shop/ (SCRIPT_NAME /hooks/shop, PATH_INFO
 * /) names shop.  buf is "" when neither has a segment, or when the
 * segment does not fit in bufsz (no name is that long).
 */
void		 conf_route_name(const char *path_info,
		    const char *script_name, char *buf, size_t bufsz);

/*
 * The endpoint a request routes to: the one conf_route_name() names.
 * With a single unnamed endpoint every path routes to it.  NULL if none.
 */
const struct conf_endpoint *
		 conf_route(const struct conf *, const char *path_info,
		    const char *script_name);

/*
 * Parse a source list such as "header:X-Id json:/id hash".  allowhash
 * says whether "hash" is accepted.  Returns 0, or -1 with a message in
 * err.  The caller frees with srclist_clear().
 */
int		 srclist_parse(struct srclist *, const char *, int allowhash,
		    char *err, size_t errsz);
void		 srclist_clear(struct srclist *);

/*
 * Parse a duration: a whole number followed by s, m, h or d, or
 * "forever" (-1).  Returns 0, or -1 if malformed or out of range.
 */
int		 conf_duration(const char *, long long *);

/*
 * Call say(arg, message) once for each thing in the configuration an
 * operator should hear of though it is no error: every ONCEHOOK_*
 * variable in envp that cf does not read (a typo, or an endpoint not
 * listed in ONCEHOOK_ENDPOINTS), an example's placeholder secret, a
 * secret whose key is shorter than CONF_SECRET_MIN bytes (named by its
 * variable and place, never shown), and ONCEHOOK_STATUS_TOKEN, which
 * nothing serves yet.  Returns the count.
 */
int		 conf_warnings(const struct conf *cf, const char *const *envp,
		    void (*say)(void *arg, const char *message), void *arg);

/*
 * The first file the web server must never serve (the database, a
 * secrets file) that lies inside root, or NULL.  *ep is NULL for the
 * database (ONCEHOOK_DB), else the endpoint whose SECRET_FILE it is.
 * A root that cannot be resolved is compared as written.
 */
const char	*conf_exposed(const struct conf *cf, const char *root,
		    const struct conf_endpoint **ep);

/* 1 if path (resolved) lies inside dir (resolved); 0 if not; -1 error */
int		 conf_path_inside(const char *path, const char *dir);

#endif
