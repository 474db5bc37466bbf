/* SPDX-License-Identifier: MIT */
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
#define CONF_COUNTED_MAX 64	/* endpoints the counters have room for
				   (CTR_SLOTS - 1 in counters.h) */
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
	/* A key source: 1 if the endpoint's signature covers what it reads
	 * (the body where the scheme signs it, the scheme's signed header);
	 * set by conf_load(), 0 elsewhere. */
	int		 covered;
};

/* An ordered list of sources: the first that yields a value wins. */
struct srclist {
	struct src	 v[CONF_SRC_MAX];
	size_t		 n;
};

/* What a configured secret's bytes are (the scheme's secret function
 * says; 0 where it has none). */
enum secret_kind {
	SECRET_MAC = 0,		/* a shared key: HMAC, or compared */
	SECRET_ED25519,		/* an Ed25519 public key, raw 32 bytes */
	SECRET_P256,		/* an ECDSA P-256 public key, DER SPKI */
	SECRET_ID,		/* a name the signature covers (PayPal's
				   webhook id): not secret */
	SECRET_PRIVATE,		/* a private key, for oncehook sign only:
				   PEM text, or Ed25519's 32-byte seed */
};

struct secret {
	unsigned char	*p;	/* key bytes as the scheme uses them */
	size_t		 sz;
	enum secret_kind kind;
};

/*
 * The deepest nesting of arrays and objects in a body that the store's
 * JSON functions read, the top-level object counting 1: SQLite's since
 * 3.42 (JSON_MAX_DEPTH; 2000 before); MariaDB's JSON_DEPTH_LIMIT of 32
 * leaves 31 levels so counted (MySQL reads 100).  A deeper body would
 * fail its actions on every retry, so it is refused before the claim
 * (pipeline/event.h; tests/cases/deep-json*).
 */
#define CONF_DEPTH_SQLITE	1000
#define CONF_DEPTH_MYSQL	31

/*
 * Where a sender's signing certificates come from and are kept
 * (pipeline/certs.h: PayPal's).  hosts and ca replace the provider's
 * hosts and the system's CAs, for tests only.
 */
struct conf_certs {
	char			*cache;		/* directory, or NULL */
	char			*hosts;		/* "host[:port] ...", or NULL */
	char			*ca;		/* PEM file, or NULL */
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
	const char		*key_scope;	/* header prefixing the key
						   (pipeline/sig.h:
						   scheme_key_scope()), or
						   NULL */
	int			 key_default;	/* key: the scheme's (no
						   ONCEHOOK_<NAME>_KEY) */
	struct srclist		 type;
	long long		 retention;	/* seconds; -1 forever */
	long long		 park_after;	/* attempts; 0: never park */
	int			 deferred;	/* MODE=deferred */
	long long		 max_attempts;	/* then dead */
	unsigned		 depth_max;	/* CONF_DEPTH_* of its store */
	int			 replay_guard;	/* a known payload is a duplicate
						   whatever its key: the scheme
						   signs no timestamp */
	char			*actions;	/* path of the actions file */
	char			*secret_file;	/* or NULL */
	char			*url;		/* the public URL a URL-signing
						   scheme signs (_URL), or NULL */
	const struct conf_certs	*certs;		/* the conf's */
};

/* ONCEHOOK_DB=mysql://user@host[:port]/database[?socket=/path]: the
 * MariaDB/MySQL store (store/store.h).  No password: DB_PASSWORD_FILE. */
struct conf_mysql {
	char			*user;
	char			*host;		/* "localhost" with a socket */
	unsigned int		 port;		/* 0: the client's default */
	char			*database;
	char			*socket;	/* or NULL */
};

/* ONCEHOOK_DB_TLS: what a TCP connection to the server asks of TLS. */
enum conf_tls {
	CONF_TLS_OFF,			/* none (the socket, the loopback) */
	CONF_TLS_REQUIRED,		/* encrypted; no certificate checked */
	CONF_TLS_VERIFY_CA,		/* and signed by ONCEHOOK_DB_TLS_CA */
	CONF_TLS_VERIFY_IDENTITY,	/* and issued to the host connected
					   to (the system's CAs without
					   ONCEHOOK_DB_TLS_CA) */
};

struct conf {
	char			*db;		/* ONCEHOOK_DB, as given */
	struct conf_mysql	*my;		/* parsed, if mysql://; else
						   db is the SQLite file */
	char			*db_password_file; /* or NULL */
	char			*db_prefix;	/* ONCEHOOK_DB_PREFIX */
	int			 db_tls;	/* enum conf_tls */
	char			*db_tls_ca;	/* files, or NULL */
	char			*db_tls_cert;
	char			*db_tls_key;
	char			*counters_file;	/* NULL: counting off */
	struct conf_certs	 certs;
	struct conf_endpoint	*endpoints;
	size_t			 nendpoints;
	int			 named;		/* ONCEHOOK_ENDPOINTS set */
	long long		 maxbody;	/* bytes */
	int			 synchronous_full;
	int			 group_commit;	/* a writer claims for all */
	int			 fast_paths;	/* pipeline/pipeline.h's; off:
						   no group commit either */
	long long		 busy_ms;
	char			*status_token;	/* NULL if off */
	int			 status_placeholder; /* the example's, ignored */
	int			 counters;	/* count requests (observe/counters.h) */
	struct secret		 outbox_secret;	/* signs URL targets' POSTs */
	long long		 outbox_timeout; /* seconds per delivery */
	long long		 outbox_backoff; /* seconds to the 1st retry */
	long long		 outbox_max_attempts; /* then dead */
	char			 outbox_err[300]; /* a bad OUTBOX_* value, or "" */
	int			 loglevel;	/* enum log_level */
};

/*
 * The variables: one row each in conf_vars[] (conf.c), global or per
 * endpoint, read in the table's order.  A row says its name (after
 * ONCEHOOK_ or ONCEHOOK_<NAME>_), its kind (how the value is checked,
 * stored and shown), its bounds, its default (parsed like a value) and
 * how the documentation writes it, where the value lands (an offset in
 * struct conf or struct conf_endpoint), and what it means.  Parsing,
 * the typo warnings, `check`'s listing and the documentation's tables
 * (tests/docs.sh) all follow the table.
 */
struct conf_loader;			/* a parse in progress (conf.c) */
struct conf_var;

enum conf_scope {
	CONF_GLOBAL,			/* ONCEHOOK_<name> */
	CONF_ENDPOINT,			/* ONCEHOOK_<NAME>_<name> */
};

#define CONF_REQUIRED	0x01	/* unset (and no default) is an error */
#define CONF_UNSET_TOO	0x02	/* the setter runs unset too (v NULL) */
#define CONF_SECONDS	0x04	/* a number of seconds (in messages) */
#define CONF_HIDDEN	0x08	/* a secret: shown as counted or "set" */
#define CONF_OUTBOX	0x10	/* the outbox's: a bad value is kept in
				   outbox_err (deliver and check refuse it),
				   never the handler's failure */
#define CONF_SIGNING	0x20	/* a secret requests are checked with (an
				   endpoint's, the status token): read only
				   with CONF_NEEDS_SECRETS */
#define CONF_STORE	0x40	/* where the store is: read only with
				   CONF_NEEDS_DB */
#define CONF_EMPTY	0x80	/* set and empty is a value of its own,
				   not unset (the default) */

/*
 * What a command uses of the configuration (conf_load_for()).  Rows it
 * does not use are not read at all: a command that only reads the
 * database neither needs nor holds the endpoints' secrets, and `sign`
 * needs no database.
 */
#define CONF_NEEDS_DB		0x01	/* the rows flagged CONF_STORE */
#define CONF_NEEDS_SECRETS	0x02	/* the rows flagged CONF_SIGNING */
/* (The outbox's signing secret is read by all: a bad one is kept in
 * outbox_err, which only deliver and check refuse.) */
#define CONF_NEEDS_ALL		(CONF_NEEDS_DB | CONF_NEEDS_SECRETS)

struct conf_kind {
	/* Check v, store it at dst; 0, or -1 with the error written. */
	int	(*set)(struct conf_loader *, const struct conf_var *,
		    const char *var, const char *v, void *dst);
	/* Write the stored value at src for `check`; never a secret. */
	void	(*show)(const struct conf_var *, const void *src, char *buf,
		    size_t bufsz);
};

struct conf_var {
	const char		*name;
	enum conf_scope		 scope;
	int			 flags;		/* CONF_* */
	long long		 min, max;	/* bounds, where the kind has */
	const char		*def;		/* default value, or NULL */
	const char		*defdoc;	/* the default as documented */
	size_t			 off;		/* where the value lands */
	const struct conf_kind	*kind;
	const char		*doc;		/* what it means (documented) */
	const char *const	*choices;	/* conf_kind_choice: the words,
						   NULL-terminated; the value
						   is the index (an int) */
};

/* A value that is one of the row's choices, stored as its index. */
extern const struct conf_kind	conf_kind_choice;

/* Every variable, in the order they are read; ends with a NULL name. */
extern const struct conf_var	conf_vars[];

/* Look a variable up; getenv by default, anything in tests. */
typedef const char	*(*conf_getenv_fn)(const char *name, void *arg);

/*
 * Parse the configuration.  On success returns a new struct conf, to be
 * released with conf_free().  On failure returns NULL and writes one
 * line naming the variable into err (size errsz).
 */
struct conf	*conf_load(conf_getenv_fn get, void *arg, char *err,
		    size_t errsz);
/* conf_load() of the rows needs (CONF_NEEDS_*) asks for, and the rest. */
struct conf	*conf_load_for(conf_getenv_fn get, void *arg, unsigned needs,
		    char *err, size_t errsz);
/* conf_load() from the process environment: all of it, or for needs. */
struct conf	*conf_load_env(char *err, size_t errsz);
struct conf	*conf_load_env_for(unsigned needs, char *err, size_t errsz);
void		 conf_free(struct conf *);

/*
 * The row of the variable name (length len, not NUL-terminated) in cf:
 * a global, or an endpoint's (then *ep is the endpoint).  NULL if cf
 * reads no such variable.
 */
const struct conf_var *
		 conf_var_of(const struct conf *cf, const char *name,
		    size_t len, const struct conf_endpoint **ep);
/* The index of the endpoint named name: 0, or -1 if none is. */
int		 conf_endpoint_index(const struct conf *cf, const char *name,
		    size_t *i);
/* The first endpoint whose actions file is endpoint i's (i itself if
 * none before it names that file): one file is loaded, set up and
 * checked once, for all the endpoints that name it. */
size_t		 conf_actions_first(const struct conf *cf, size_t i);

/*
 * The outbox's targets (SPEC section 13): ONCEHOOK_OUTBOX_<TOPIC>_COMMAND
 * or _URL, <TOPIC> the topic upper-cased with . and - written _.
 * conf_outbox_var() is 1 if name (length len) is such a variable.
 */
int		 conf_outbox_var(const char *name, size_t len);

enum outbox_kind {
	OUTBOX_NONE,			/* no target: kept, warned about */
	OUTBOX_COMMAND,			/* argv, payload on stdin */
	OUTBOX_URL,			/* HTTP POST, Standard Webhooks */
};

struct outbox_target {
	enum outbox_kind	 kind;
	char			 var[192];	/* its name; with OUTBOX_NONE,
						   ONCEHOOK_OUTBOX_<TOPIC> */
	const char		*value;	/* the command or the URL (get's) */
};

/*
 * Find topic's target with get (getenv by default).  Returns 0 (t->kind
 * says which, OUTBOX_NONE for none), or -1 with the reason in err: a
 * topic no variable can name (letters, digits, . - _ only, 1 to 128),
 * both variables set, an empty command, a URL not http:// or https://.
 */
int		 conf_outbox_target(const char *topic, conf_getenv_fn get,
		    void *arg, struct outbox_target *t, char *err,
		    size_t errsz);

/*
 * Write the value of row cv as cf holds it (for a per-endpoint row,
 * ep's), as `check` lists it; secrets are counted, never shown.
 */
void		 conf_show(const struct conf *cf,
		    const struct conf_endpoint *ep, const struct conf_var *cv,
		    char *buf, size_t bufsz);

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
 * variable and place, never shown), an example's placeholder status
 * token (the endpoint stays off).  Returns the count.
 */
int		 conf_warnings(const struct conf *cf, const char *const *envp,
		    void (*say)(void *arg, const char *message), void *arg);

#endif
