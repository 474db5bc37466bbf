/* SPDX-License-Identifier: MIT */
/*
 * oncehook: one connection to a MariaDB or MySQL server (see store/mysql/conn.h);
 * the MariaDB Connector/C room.
 *
 * The library is opened with dlopen() on the first connection, not
 * linked: a SQLite site's CGI runs would otherwise relocate it and its
 * TLS libraries on every request for nothing.  configure checks its
 * headers (the types and constants are mysql.h's) and names it
 * (MARIADB_SONAME).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "lib/buf.h"
#include "lib/crypto.h"
#include "lib/dynlib.h"
#include "lib/log.h"
#include "store/mysql/conn.h"

#ifndef HAVE_MARIADB

enum hook_err
mydb_connect(const struct conf *cf, struct mydb **out, char *err,
    size_t errsz)
{
	(void)cf;
	*out = NULL;
	snprintf(err, errsz, "this oncehook was built without the MariaDB/"
	    "MySQL store: install the Debian package libmariadb-dev and "
	    "build it again (configure finds it)");
	return HOOK_ECONF;
}

void
mydb_close(struct mydb *db)
{
	(void)db;
}

const char *
mydb_error(const struct mydb *db)
{
	(void)db;
	return "no MariaDB/MySQL support";
}

int
mydb_lost(const struct mydb *db)
{
	(void)db;
	return 1;
}

enum hook_err
mydb_classify(unsigned int err)
{
	return err == 0 ? HOOK_OK : HOOK_ESYSTEM;
}

int
mydb_deadlock(unsigned int err)
{
	(void)err;
	return 0;
}

unsigned int
mydb_ping(struct mydb *db)
{
	(void)db;
	return 2006;
}

const char *
mydb_server(const struct mydb *db)
{
	(void)db;
	return "";
}

const char *
mydb_tls(const struct mydb *db)
{
	(void)db;
	return "";
}

unsigned long
mydb_version(const struct mydb *db, int *mariadb)
{
	(void)db;
	*mariadb = 0;
	return 0;
}

unsigned int
mydb_run(struct mydb *db, char *sql, struct myres **res, long long *affected)
{
	(void)db;
	free(sql);
	if (res != NULL)
		*res = NULL;
	if (affected != NULL)
		*affected = 0;
	return 2000;
}

int
mydb_next(struct myres *res, struct myrow *row)
{
	(void)res;
	(void)row;
	return 0;
}

void
mydb_free(struct myres *res)
{
	(void)res;
}

long long
mydb_int(const struct myrow *row, unsigned int i, long long def)
{
	(void)row;
	(void)i;
	return def;
}

unsigned int
mydb_script(struct mydb *db, const char *sql)
{
	(void)db;
	(void)sql;
	return 2000;
}

unsigned int
mydb_prepare(struct mydb *db, const char *sql, struct mystmt **out)
{
	(void)db;
	(void)sql;
	*out = NULL;
	return 2000;
}

unsigned int
mydb_execute(struct mydb *db, struct mystmt *st, const struct mybind *b,
    size_t n, long long *affected)
{
	(void)db;
	(void)st;
	(void)b;
	(void)n;
	*affected = 0;
	return 2000;
}

unsigned int
mydb_query(struct mydb *db, struct mystmt *st, const struct mybind *b,
    size_t n, struct myres **res, long long *affected)
{
	(void)db;
	(void)st;
	(void)b;
	(void)n;
	if (res != NULL)
		*res = NULL;
	if (affected != NULL)
		*affected = 0;
	return 2000;
}

void
mydb_stmt_close(struct mystmt *st)
{
	(void)st;
}

#else /* HAVE_MARIADB */


#include <mysql.h>
#include <mysql/plugin_auth.h>
#include <errmsg.h>
#include <mysqld_error.h>

/*
 * An authentication plugin as mysql/client_plugin.h declares it
 * (MYSQL_CLIENT_PLUGIN_HEADER and authenticate_user), written out here:
 * Debian's copy of that header includes one its package does not ship.
 */
#define MY_AUTH_PLUGIN		2	/* MYSQL_CLIENT_AUTHENTICATION_PLUGIN */
#define MY_AUTH_INTERFACE	0x0100	/* its INTERFACE_VERSION */
struct my_auth_plugin {
	int		 type;
	unsigned int	 interface_version;
	const char	*name;
	const char	*author;
	const char	*desc;
	unsigned int	 version[3];
	const char	*license;
	void		*mysql_api;
	int		(*init)(char *, size_t, int, va_list);
	int		(*deinit)(void);
	int		(*options)(const char *, const void *);
	int		(*authenticate_user)(MYSQL_PLUGIN_VIO *, MYSQL *);
};

/* mysql_client_register_plugin(), as this file uses it. */
typedef struct my_auth_plugin *my_register_plugin_fn(MYSQL *,
    struct my_auth_plugin *);

/* The entry points used, as mysql.h declares them (lib/dynlib.h). */
#define MY_FUNCS(X) \
	X(__typeof__(mysql_init), init, "mysql_init") \
	X(__typeof__(mysql_options), options, "mysql_options") \
	X(__typeof__(mysql_real_connect), real_connect, "mysql_real_connect") \
	X(__typeof__(mysql_close), close, "mysql_close") \
	X(__typeof__(mysql_errno), errno_, "mysql_errno") \
	X(__typeof__(mysql_error), error, "mysql_error") \
	X(__typeof__(mysql_real_query), real_query, "mysql_real_query") \
	X(__typeof__(mysql_store_result), store_result, "mysql_store_result") \
	X(__typeof__(mysql_free_result), free_result, "mysql_free_result") \
	X(__typeof__(mysql_fetch_row), fetch_row, "mysql_fetch_row") \
	X(__typeof__(mysql_fetch_lengths), fetch_lengths, \
	    "mysql_fetch_lengths") \
	X(__typeof__(mysql_field_count), field_count, "mysql_field_count") \
	X(__typeof__(mysql_affected_rows), affected_rows, \
	    "mysql_affected_rows") \
	X(__typeof__(mysql_get_server_info), server_info, \
	    "mysql_get_server_info") \
	X(__typeof__(mysql_ping), ping, "mysql_ping") \
	X(__typeof__(mysql_get_server_version), server_version, \
	    "mysql_get_server_version") \
	X(__typeof__(mysql_next_result), next_result, "mysql_next_result") \
	X(__typeof__(mysql_set_server_option), set_server_option, \
	    "mysql_set_server_option") \
	X(__typeof__(mysql_stmt_init), stmt_init, "mysql_stmt_init") \
	X(__typeof__(mysql_stmt_prepare), stmt_prepare, "mysql_stmt_prepare") \
	X(__typeof__(mysql_stmt_bind_param), stmt_bind_param, \
	    "mysql_stmt_bind_param") \
	X(__typeof__(mysql_stmt_execute), stmt_execute, "mysql_stmt_execute") \
	X(__typeof__(mysql_stmt_affected_rows), stmt_affected_rows, \
	    "mysql_stmt_affected_rows") \
	X(__typeof__(mysql_stmt_store_result), stmt_store_result, \
	    "mysql_stmt_store_result") \
	X(__typeof__(mysql_stmt_free_result), stmt_free_result, \
	    "mysql_stmt_free_result") \
	X(__typeof__(mysql_stmt_param_count), stmt_param_count, \
	    "mysql_stmt_param_count") \
	X(__typeof__(mysql_stmt_close), stmt_close, "mysql_stmt_close") \
	X(__typeof__(mysql_stmt_errno), stmt_errno, "mysql_stmt_errno") \
	X(__typeof__(mysql_stmt_error), stmt_error, "mysql_stmt_error") \
	X(__typeof__(mysql_stmt_result_metadata), stmt_result_metadata, \
	    "mysql_stmt_result_metadata") \
	X(__typeof__(mysql_stmt_bind_result), stmt_bind_result, \
	    "mysql_stmt_bind_result") \
	X(__typeof__(mysql_stmt_fetch), stmt_fetch, "mysql_stmt_fetch") \
	X(__typeof__(mysql_stmt_fetch_column), stmt_fetch_column, \
	    "mysql_stmt_fetch_column") \
	X(__typeof__(mysql_num_fields), num_fields, "mysql_num_fields") \
	X(__typeof__(mysql_get_ssl_cipher), ssl_cipher, \
	    "mysql_get_ssl_cipher") \
	X(__typeof__(mariadb_get_infov), get_infov, "mariadb_get_infov") \
	X(my_register_plugin_fn, register_plugin, \
	    "mysql_client_register_plugin")

struct my_api {
	MY_FUNCS(DYNLIB_MEMBER)
};

/* The per-process cache: loaded once. */
static struct my_api	 api;
static void		*api_lib;

struct mydb {
	MYSQL		*m;
	unsigned int	 err;		/* the last error, or 0 */
	char		 msg[256];
	int		 lost;
	char		 server[96];
	char		 tls[96];	/* "TLS off", "TLSv1.3 TLS_AES_..." */
	unsigned long long packet;	/* max_allowed_packet; 0: not asked */
};

struct mystmt {
	struct mydb	*db;
	MYSQL_STMT	*st;
	unsigned long	 nparams;
	MYSQL_BIND	*mb;		/* nparams of each: the binding's */
	unsigned long	*lens;
	my_bool		*nul;
};

/* A text query's rows (r), or a prepared statement's, copied. */
struct myres {
	MYSQL_RES	*r;
	char		**v;		/* nrows * ncols fields */
	unsigned long	*len;
	size_t		 nrows, ncols, next;
};

static int
load(char *why, size_t whysz)
{
	static const char	 names[] = MY_FUNCS(DYNLIB_NAME);

	return dynlib_open(&api_lib, MARIADB_SONAME, "libmariadb3", names,
	    (void **)&api, sizeof(api) / sizeof(void *), why, whysz);
}

/* The errors after which the connection is gone. */
static int
is_lost(unsigned int e)
{
	switch (e) {
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case CR_CONNECTION_ERROR:
	case CR_CONN_HOST_ERROR:
	case CR_COMMANDS_OUT_OF_SYNC:
	case ER_CONNECTION_KILLED:
	case ER_SERVER_SHUTDOWN:
	case ER_QUERY_INTERRUPTED:
		return 1;
	default:
		/* CR_SERVER_LOST_EXTENDED; MySQL's idle disconnect. */
		return e == 2055 || e == 4031;
	}
}

enum hook_err
mydb_classify(unsigned int e)
{
	if (e == 0)
		return HOOK_OK;
	switch (e) {
	case ER_TABLEACCESS_DENIED_ERROR:	/* what the operator grants */
	case ER_COLUMNACCESS_DENIED_ERROR:
	case ER_DBACCESS_DENIED_ERROR:
	case ER_SPECIFIC_ACCESS_DENIED_ERROR:
	case ER_NO_SUCH_TABLE:
		return HOOK_ECONF;
	case ER_LOCK_DEADLOCK:
	case ER_LOCK_WAIT_TIMEOUT:
	case MYDB_TOO_BIG:		/* until the server's limit is raised */
	case CR_NET_PACKET_TOO_LARGE:
	case ER_CON_COUNT_ERROR:
	case ER_TOO_MANY_USER_CONNECTIONS:
	case ER_OPTION_PREVENTS_STATEMENT:	/* read_only */
	case ER_CANT_LOCK:
	case ER_LOCK_TABLE_FULL:
	case ER_RECORD_FILE_FULL:
	case ER_DISK_FULL:
	/* Galera: a node outside the primary component, or not yet
	 * synced after a restart ("WSREP has not yet prepared node for
	 * application use"): down for now, as a restarting server. */
	case ER_UNKNOWN_COM_ERROR:
		return HOOK_EBUSY;
	default:
		return is_lost(e) ? HOOK_EBUSY : HOOK_ESYSTEM;
	}
}

int
mydb_deadlock(unsigned int e)
{
	return e == ER_LOCK_DEADLOCK;
}

/* Note the connection's last error. */
static unsigned int
note(struct mydb *db)
{
	db->err = api.errno_(db->m);
	snprintf(db->msg, sizeof(db->msg), "%s", api.error(db->m));
	if (is_lost(db->err))
		db->lost = 1;
	return db->err;
}

static unsigned int
note_stmt(struct mydb *db, MYSQL_STMT *st)
{
	db->err = api.stmt_errno(st);
	snprintf(db->msg, sizeof(db->msg), "%s", api.stmt_error(st));
	if (is_lost(db->err))
		db->lost = 1;
	return db->err;
}

/* Note our own running out of memory as the connection's error. */
static unsigned int
oom(struct mydb *db)
{
	db->err = MYDB_OOM;
	snprintf(db->msg, sizeof(db->msg), "out of memory");
	return db->err;
}

/* The first line of the password file into buf (wiped by the caller). */
static int
password(const char *path, char *buf, size_t bufsz, char *err, size_t errsz)
{
	FILE	*f;
	size_t	 n;

	buf[0] = '\0';
	if (path == NULL)
		return 0;
	if ((f = fopen(path, "re")) == NULL) {
		snprintf(err, errsz, "ONCEHOOK_DB_PASSWORD_FILE: %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (fgets(buf, (int)bufsz, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	n = strcspn(buf, "\r\n");
	buf[n] = '\0';
	return 0;
}

static const char *const tls_words[] = { "off", "required", "verify-ca",
    "verify-identity" };		/* enum conf_tls */

/*
 * The login's first step under ONCEHOOK_DB_TLS=required or verify-ca
 * (MYSQL_DEFAULT_AUTH).  Connector/C (3.3, and 3.4 unless it verifies
 * the certificate) answers a greeting that offers no TLS with the login
 * in clear: user, database and the password's scramble of the server's
 * challenge, which a man in the middle who struck the offer out could
 * pass on to the real server and be logged in as oncehook.  This runs
 * before the library writes anything, and stops there; with TLS offered
 * it sends an empty first answer (TLS starts before it), and the server
 * asks for the user's own method (one more round trip).  The connection
 * is restricted to this method until it has run (MARIADB_OPT_RESTRICTED_
 * AUTH), so that a greeting without CLIENT_PLUGIN_AUTH fails instead of
 * skipping it.  verify-identity needs no guard: the library refuses such
 * a greeting itself.
 *
 * After it, the user's method: under verify-ca any (the certificate was
 * checked against the CA file, which conf.c allows under verify-ca
 * alone); under required only those that never send the password itself
 * (NO_CLEAR_AUTH), since a man in the middle may present a certificate
 * of its own, which required accepts, and then ask for
 * mysql_clear_password, dialog, or a full caching_sha2_password or
 * sha256_password login (which send the password over TLS as is).
 */
#define NO_CLEAR_AUTH	"mysql_native_password,client_ed25519," \
			"auth_gssapi_client,parsec"

static int
tls_guard(MYSQL_PLUGIN_VIO *vio, MYSQL *m)
{
	if (!(m->server_capabilities & CLIENT_SSL))
		return CR_ERROR;	/* mydb_connect() says why */
	if (api.options(m, MARIADB_OPT_RESTRICTED_AUTH,
	    m->options.ssl_ca != NULL ? NULL : NO_CLEAR_AUTH) != 0)
		return CR_ERROR;
	return vio->write_packet(vio, (const unsigned char *)"", 0) != 0 ?
	    CR_ERROR : CR_OK;
}

static struct my_auth_plugin tls_guard_plugin = {
	MY_AUTH_PLUGIN, MY_AUTH_INTERFACE,
	"oncehook_tls_guard", "oncehook",
	"stops the login where the server offers no TLS", { 1, 0, 0 }, "MIT",
	NULL, NULL, NULL, NULL, tls_guard
};

/*
 * Set a TLS option: 0, or -1 with err naming the setting (var) when the
 * library refuses it: a verify-ca whose CA file or check were dropped
 * would act as required does.
 */
static int
tls_set(struct mydb *db, enum mysql_option o, const void *v,
    const char *oname, const char *var, const char *val, char *err,
    size_t errsz)
{
	if (api.options(db->m, o, v) == 0)
		return 0;
	snprintf(err, errsz, "%s%s%s: this client library (%s) refused its "
	    "option %s", var, val != NULL ? "=" : "", val != NULL ? val : "",
	    MARIADB_SONAME, oname);
	return -1;
}

/*
 * The TLS options of ONCEHOOK_DB_TLS (conf.c has checked that they go
 * together), every one set either way: Connector/C 3.4 encrypts and
 * verifies by default, 3.3 does neither.  With a CA file the library
 * checks the server's chain against it (verify-ca); verify-identity
 * adds the host name (or IP address) check, against the system's CAs
 * when no file is given.  The files are opened here first, so that one
 * that cannot be read is named, not an OpenSSL error.  0, or -1 with
 * the reason in err (an option the library refuses too).
 */
#define TLS_SET(o, v, var, val) \
	if (tls_set(db, o, v, #o, var, val, err, errsz) == -1) \
		return -1
static int
tls_options(const struct conf *cf, struct mydb *db, char *err, size_t errsz)
{
	const char *const	 files[] = { cf->db_tls_ca, cf->db_tls_cert,
				     cf->db_tls_key };
	const char *const	 vars[] = { "ONCEHOOK_DB_TLS_CA",
				     "ONCEHOOK_DB_TLS_CERT",
				     "ONCEHOOK_DB_TLS_KEY" };
	my_bool			 on = cf->db_tls != CONF_TLS_OFF;
	my_bool			 host = cf->db_tls == CONF_TLS_VERIFY_IDENTITY;
	size_t			 i;
	int			 fd;
	const char		*mode = tls_words[cf->db_tls];
	static int		 registered;	/* the guard, in this process */

	TLS_SET(MYSQL_OPT_SSL_ENFORCE, &on, "ONCEHOOK_DB_TLS", mode);
	TLS_SET(MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &host, "ONCEHOOK_DB_TLS",
	    mode);
	if (!on)
		return 0;
	if (!host) {
		if (!registered && api.register_plugin(db->m,
		    &tls_guard_plugin) == NULL) {
			snprintf(err, errsz, "ONCEHOOK_DB_TLS=%s: %s",
			    tls_words[cf->db_tls], api.error(db->m));
			return -1;
		}
		registered = 1;
		/* Only the guard may start the login: a greeting without
		 * CLIENT_PLUGIN_AUTH would have the library skip the default
		 * and log in with mysql_native_password at once. */
		if (api.options(db->m, MYSQL_DEFAULT_AUTH,
		    tls_guard_plugin.name) != 0 || api.options(db->m,
		    MARIADB_OPT_RESTRICTED_AUTH, tls_guard_plugin.name) != 0) {
			snprintf(err, errsz, "ONCEHOOK_DB_TLS=%s: this client "
			    "library (%s) cannot hold the login back from a "
			    "server that offers no TLS: use verify-identity",
			    tls_words[cf->db_tls], MARIADB_SONAME);
			return -1;
		}
	}
	for (i = 0; i < 3; i++) {
		if (files[i] == NULL)
			continue;
		if ((fd = open(files[i], O_RDONLY | O_CLOEXEC)) == -1) {
			snprintf(err, errsz, "%s: %s: %s", vars[i], files[i],
			    strerror(errno));
			return -1;
		}
		close(fd);
	}
	if (cf->db_tls_ca != NULL)
		TLS_SET(MYSQL_OPT_SSL_CA, cf->db_tls_ca, "ONCEHOOK_DB_TLS_CA",
		    NULL);
	if (cf->db_tls_cert != NULL) {
		TLS_SET(MYSQL_OPT_SSL_CERT, cf->db_tls_cert,
		    "ONCEHOOK_DB_TLS_CERT", NULL);
		TLS_SET(MYSQL_OPT_SSL_KEY, cf->db_tls_key,
		    "ONCEHOOK_DB_TLS_KEY", NULL);
		/* An encrypted key fails; OpenSSL would otherwise ask for
		 * its passphrase on the terminal. */
		TLS_SET(MARIADB_OPT_TLS_PASSPHRASE, "", "ONCEHOOK_DB_TLS_KEY",
		    NULL);
	}
	return 0;
}
#undef TLS_SET

/*
 * What a failed connect's message gains with TLS on: the setting, and
 * what Connector/C's "Validation of SSL server certificate failed" means
 * (the chain was checked before it: the name is what failed), or its
 * "plugin not allowed" (tls_guard()).
 */
static void
tls_why(const struct conf *cf, const struct mydb *db, char *why,
    size_t whysz)
{
	why[0] = '\0';
	if (cf->db_tls == CONF_TLS_OFF)
		return;
	snprintf(why, whysz, "%s (ONCEHOOK_DB_TLS=%s)",
	    db->err == CR_SSL_CONNECTION_ERROR && strstr(db->msg,
	    "Validation of SSL server certificate") != NULL ? ": the "
	    "server's certificate is not issued to the host in ONCEHOOK_DB" :
	    db->err == CR_PLUGIN_NOT_ALLOWED && db->m != NULL &&
	    (db->m->server_capabilities & CLIENT_SSL) ? ": the server asks "
	    "for a login method that can send the password itself, refused "
	    "where its certificate is not checked: use verify-ca or "
	    "verify-identity" : "", tls_words[cf->db_tls]);
}

enum hook_err
mydb_connect(const struct conf *cf, struct mydb **out, char *err,
    size_t errsz)
{
	const struct conf_mysql	*c = cf->my;
	const char		*cipher, *version = NULL;
	char			 why[256];
	struct mydb		*db;
	char			 pw[512], init[320];
	static const char *const iso_names[] = { "tx_isolation",
				     "transaction_isolation" };
	unsigned int		 timeout = 5, rw, e, k;
	int			 iso;
	my_bool			 no = 0;
	long long		 wait;
	enum hook_err		 er;

	*out = NULL;
	if (load(err, errsz) == -1)
		return HOOK_ECONF;
	if ((db = calloc(1, sizeof(*db))) == NULL ||
	    (db->m = api.init(NULL)) == NULL) {
		free(db);
		snprintf(err, errsz, "out of memory");
		return HOOK_ESYSTEM;
	}
	/* A lock wait is a whole second at least; the read timeout is
	 * longer, so that a wait is the server's to end. */
	wait = (cf->busy_ms + 999) / 1000;
	if (wait < 1)
		wait = 1;
	rw = (unsigned int)wait + 30;
	/* NAMES as well as the handshake's: a server with
	 * character-set-client-handshake off keeps its own character set
	 * otherwise, and the actions guard lexes as utf8mb4 does. */
	api.options(db->m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	api.options(db->m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	api.options(db->m, MYSQL_OPT_READ_TIMEOUT, &rw);
	api.options(db->m, MYSQL_OPT_WRITE_TIMEOUT, &rw);
	api.options(db->m, MYSQL_OPT_RECONNECT, &no);
	if (tls_options(cf, db, err, errsz) == -1) {
		mydb_close(db);
		return HOOK_ECONF;
	}
	if (password(cf->db_password_file, pw, sizeof(pw), err, errsz) ==
	    -1) {
		crypto_wipe(pw, sizeof(pw));
		mydb_close(db);
		return HOOK_ECONF;
	}
	if (api.real_connect(db->m, c->socket != NULL ? NULL : c->host,
	    c->user, pw[0] != '\0' ? pw : NULL, c->database, c->port,
	    c->socket, 0) == NULL) {
		crypto_wipe(pw, sizeof(pw));
		e = note(db);
		/* The greeting read offered no TLS: the guard, or the
		 * library (verify-identity), stopped before the login. */
		if (cf->db_tls != CONF_TLS_OFF && db->m->server_capabilities !=
		    0 && !(db->m->server_capabilities & CLIENT_SSL))
			snprintf(db->msg, sizeof(db->msg), "the server offers "
			    "no TLS: nothing was sent to it");
		/* What the operator must fix, or what may pass. */
		er = e == ER_ACCESS_DENIED_ERROR || e == ER_BAD_DB_ERROR ||
		    e == ER_DBACCESS_DENIED_ERROR || e == 1698 ? HOOK_ECONF :
		    HOOK_EBUSY;
		tls_why(cf, db, why, sizeof(why));
		snprintf(err, errsz, "mysql://%s@%s/%s: %s%s", c->user,
		    c->socket != NULL ? c->socket : c->host, c->database,
		    db->msg, why);
		mydb_close(db);
		return er;
	}
	crypto_wipe(pw, sizeof(pw));
	/* Never a clear connection where TLS was asked for, whatever the
	 * library did with the options. */
	if ((cipher = api.ssl_cipher(db->m)) == NULL) {
		if (cf->db_tls != CONF_TLS_OFF) {
			snprintf(err, errsz, "mysql://%s@%s/%s: the connection "
			    "is not encrypted (ONCEHOOK_DB_TLS=%s)", c->user,
			    c->host, c->database, tls_words[cf->db_tls]);
			mydb_close(db);
			return HOOK_EBUSY;
		}
		snprintf(db->tls, sizeof(db->tls), "TLS off");
	} else {
		if (api.get_infov(db->m, MARIADB_CONNECTION_TLS_VERSION,
		    &version) != 0 || version == NULL)
			version = "TLS";
		snprintf(db->tls, sizeof(db->tls), "%s %s (%s)", version,
		    cipher, tls_words[cf->db_tls]);
	}
	snprintf(db->server, sizeof(db->server), "%s %s",
	    strstr(api.server_info(db->m), "MariaDB") != NULL ? "MariaDB" :
	    "MySQL", api.server_info(db->m));
	/* The session's settings in one statement, one round trip (a CGI
	 * request's connection pays it every time): the isolation level
	 * as a variable, named as the server names it (MariaDB's
	 * tx_isolation, transaction_isolation from 11.1; MySQL 8.0 has only
	 * transaction_isolation).  SET TRANSACTION ISOLATION LEVEL cannot
	 * share the statement.  The name is guessed from the version
	 * string, which a proxy may rewrite: the server's "unknown system
	 * variable" has the other name tried once (a SET that fails sets
	 * none of its variables). */
	iso = strncmp(db->server, "MariaDB", 7) == 0 ? 0 : 1;
	for (k = 0; k < 2; k++, iso = !iso) {
		snprintf(init, sizeof(init), "SET NAMES utf8mb4, SESSION "
		    "sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,"
		    "NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,"
		    "NO_ENGINE_SUBSTITUTION', time_zone = '+00:00', "
		    "innodb_lock_wait_timeout = %lld, SESSION %s = "
		    "'READ-COMMITTED'", wait, iso_names[iso]);
		if ((e = mydb_run(db, strdup(init), NULL, NULL)) !=
		    ER_UNKNOWN_SYSTEM_VARIABLE ||
		    strstr(db->msg, iso_names[iso]) == NULL)
			break;
	}
	if (e != 0) {
		snprintf(err, errsz, "mysql://%s@%s/%s: setting up the "
		    "session: %s", c->user, c->socket != NULL ? c->socket :
		    c->host, c->database, db->msg);
		er = mydb_classify(e) == HOOK_ECONF ? HOOK_ECONF : HOOK_EBUSY;
		mydb_close(db);
		return er;
	}
	*out = db;
	return HOOK_OK;
}

void
mydb_close(struct mydb *db)
{
	if (db == NULL)
		return;
	if (db->m != NULL)
		api.close(db->m);
	free(db);
}

const char *
mydb_error(const struct mydb *db)
{
	return db->err != 0 ? db->msg : "no error";
}

int
mydb_lost(const struct mydb *db)
{
	return db->lost;
}

unsigned int
mydb_ping(struct mydb *db)
{
	db->err = 0;
	if (api.ping(db->m) != 0) {
		(void)note(db);
		db->lost = 1;
	}
	return db->err;
}

const char *
mydb_server(const struct mydb *db)
{
	return db->server;
}

const char *
mydb_tls(const struct mydb *db)
{
	return db->tls;
}

unsigned long
mydb_version(const struct mydb *db, int *mariadb)
{
	*mariadb = strncmp(db->server, "MariaDB", 7) == 0;
	return api.server_version(db->m);
}

/*
 * 1 if a statement of n bytes is more than the server takes in one
 * packet (max_allowed_packet, asked once a connection, for the first
 * statement over 1 MiB): it is not sent (the server would close the
 * connection), and the error says what to change.
 */
static int
too_big(struct mydb *db, size_t n)
{
	MYSQL_RES	*r;
	MYSQL_ROW	 row;
	const char	*q = "SELECT @@max_allowed_packet";

	if (n < (1 << 20))
		return 0;
	if (db->packet == 0 && api.real_query(db->m, q, strlen(q)) == 0 &&
	    (r = api.store_result(db->m)) != NULL) {
		if ((row = api.fetch_row(r)) != NULL && row[0] != NULL)
			db->packet = strtoull(row[0], NULL, 10);
		api.free_result(r);
	}
	if (db->packet == 0 || n + 64 <= db->packet)
		return 0;
	db->err = MYDB_TOO_BIG;
	snprintf(db->msg, sizeof(db->msg), "a statement of %zu bytes (the "
	    "body) is more than the server's max_allowed_packet "
	    "(%llu): raise it, or lower ONCEHOOK_MAX_BODY", n, db->packet);
	return 1;
}

unsigned int
mydb_run(struct mydb *db, char *sql, struct myres **res, long long *affected)
{
	MYSQL_RES	*r;
	size_t		 len;

	if (res != NULL)
		*res = NULL;
	if (affected != NULL)
		*affected = 0;
	if (sql == NULL)
		return oom(db);
	db->err = 0;
	len = strlen(sql);
	if (too_big(db, len)) {
		free(sql);
		return db->err;
	}
	if (api.real_query(db->m, sql, (unsigned long)len) != 0) {
		free(sql);
		return note(db);
	}
	free(sql);
	r = api.store_result(db->m);
	if (r == NULL && api.field_count(db->m) > 0)
		return note(db);
	if (affected != NULL && r == NULL)
		*affected = (long long)api.affected_rows(db->m);
	if (res != NULL && r != NULL) {
		if ((*res = calloc(1, sizeof(**res))) == NULL) {
			api.free_result(r);
			return oom(db);
		}
		(*res)->r = r;
	} else if (r != NULL)
		api.free_result(r);
	return 0;
}

int
mydb_next(struct myres *res, struct myrow *row)
{
	MYSQL_ROW	 r;

	if (res != NULL && res->r == NULL) {
		if (res->next == res->nrows)
			return 0;
		row->v = res->v + res->next * res->ncols;
		row->len = res->len + res->next * res->ncols;
		res->next++;
		return 1;
	}
	if (res == NULL || (r = api.fetch_row(res->r)) == NULL)
		return 0;
	row->v = r;
	row->len = api.fetch_lengths(res->r);
	return 1;
}

void
mydb_free(struct myres *res)
{
	size_t	 i;

	if (res == NULL)
		return;
	if (res->r != NULL)
		api.free_result(res->r);
	for (i = 0; i < res->nrows * res->ncols; i++)
		free(res->v[i]);
	free(res->v);
	free(res->len);
	free(res);
}

long long
mydb_int(const struct myrow *row, unsigned int i, long long def)
{
	return row->v[i] != NULL ? strtoll(row->v[i], NULL, 10) : def;
}

unsigned int
mydb_script(struct mydb *db, const char *sql)
{
	MYSQL_RES	*r;
	unsigned int	 e = 0;
	int		 more;

	db->err = 0;
	if (api.set_server_option(db->m, MYSQL_OPTION_MULTI_STATEMENTS_ON)
	    != 0)
		return note(db);
	if (api.real_query(db->m, sql, (unsigned long)strlen(sql)) != 0)
		e = note(db);
	else
		do {
			if ((r = api.store_result(db->m)) != NULL)
				api.free_result(r);
			else if (api.field_count(db->m) > 0) {
				e = note(db);
				break;
			}
			if ((more = api.next_result(db->m)) > 0) {
				e = note(db);
				break;
			}
		} while (more == 0);
	if (api.set_server_option(db->m, MYSQL_OPTION_MULTI_STATEMENTS_OFF) !=
	    0 && e == 0)
		e = note(db);
	return e;
}

unsigned int
mydb_prepare(struct mydb *db, const char *sql, struct mystmt **out)
{
	struct mystmt	*st;

	*out = NULL;
	db->err = 0;
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->st = api.stmt_init(db->m)) == NULL) {
		free(st);
		return oom(db);
	}
	st->db = db;
	if (api.stmt_prepare(st->st, sql, (unsigned long)strlen(sql)) != 0) {
		(void)note_stmt(db, st->st);
		mydb_stmt_close(st);
		return db->err;
	}
	st->nparams = api.stmt_param_count(st->st);
	if (st->nparams > 0 && ((st->mb = calloc(st->nparams,
	    sizeof(*st->mb))) == NULL || (st->lens = calloc(st->nparams,
	    sizeof(*st->lens))) == NULL || (st->nul = calloc(st->nparams,
	    sizeof(*st->nul))) == NULL)) {
		mydb_stmt_close(st);
		return oom(db);
	}
	*out = st;
	return 0;
}

/* Bind n values to st's parameters: 0, or the error number. */
static unsigned int
bind_params(struct mydb *db, struct mystmt *st, const struct mybind *b,
    size_t n)
{
	MYSQL_BIND	*mb = st->mb;
	size_t		 i, total = 0;

	db->err = 0;
	if (n != st->nparams) {
		db->err = CR_PARAMS_NOT_BOUND;
		snprintf(db->msg, sizeof(db->msg), "%zu values for %lu "
		    "parameters", n, st->nparams);
		return db->err;
	}
	if (n > 0)
		memset(mb, 0, n * sizeof(*mb));
	for (i = 0; i < n; i++) {
		st->nul[i] = b[i].p == NULL && !b[i].isnum;
		mb[i].is_null = &st->nul[i];
		if (b[i].isnum) {
			mb[i].buffer_type = MYSQL_TYPE_LONGLONG;
			mb[i].buffer = (void *)&b[i].num;
		} else {
			/* Text in the connection's character set; bytes as
			 * they are. */
			st->lens[i] = (unsigned long)b[i].len;
			mb[i].buffer_type = b[i].isblob ? MYSQL_TYPE_BLOB :
			    MYSQL_TYPE_STRING;
			mb[i].buffer = (void *)b[i].p;
			mb[i].buffer_length = st->lens[i];
			mb[i].length = &st->lens[i];
			total += b[i].len;
		}
	}
	if (too_big(db, total))
		return db->err;
	if (n > 0 && api.stmt_bind_param(st->st, mb) != 0)
		return note_stmt(db, st->st);
	return 0;
}

unsigned int
mydb_execute(struct mydb *db, struct mystmt *st, const struct mybind *b,
    size_t n, long long *affected)
{
	*affected = 0;
	if (bind_params(db, st, b, n) != 0)
		return db->err;
	if (api.stmt_execute(st->st) != 0 ||
	    /* A SELECT among the actions: its rows are read and dropped. */
	    api.stmt_store_result(st->st) != 0)
		return note_stmt(db, st->st);
	*affected = (long long)api.stmt_affected_rows(st->st);
	api.stmt_free_result(st->st);
	return 0;
}

/* Copy the rows of st's result (fields as text) into res. */
static unsigned int
copy_rows(struct mydb *db, struct mystmt *st, MYSQL_RES *meta,
    struct myres *res)
{
	MYSQL_BIND	*rb = NULL, one;
	unsigned long	*lens = NULL;
	my_bool		*nul = NULL;
	size_t		 i, c, cap = 0;
	void		*p;
	int		 rc;

	res->ncols = api.num_fields(meta);
	if (api.stmt_store_result(st->st) != 0)
		return note_stmt(db, st->st);
	if ((rb = calloc(res->ncols, sizeof(*rb))) == NULL ||
	    (lens = calloc(res->ncols, sizeof(*lens))) == NULL ||
	    (nul = calloc(res->ncols, sizeof(*nul))) == NULL)
		goto oom;
	/* No buffers: each field's length first, then the field. */
	for (c = 0; c < res->ncols; c++) {
		rb[c].buffer_type = MYSQL_TYPE_STRING;
		rb[c].length = &lens[c];
		rb[c].is_null = &nul[c];
	}
	if (api.stmt_bind_result(st->st, rb) != 0) {
		(void)note_stmt(db, st->st);
		goto out;
	}
	while ((rc = api.stmt_fetch(st->st)) == 0 ||
	    rc == MYSQL_DATA_TRUNCATED) {
		if (res->nrows == cap) {
			cap = cap ? 2 * cap : 4;
			if ((p = realloc(res->v, cap * res->ncols *
			    sizeof(*res->v))) == NULL)
				goto oom;
			res->v = p;
			if ((p = realloc(res->len, cap * res->ncols *
			    sizeof(*res->len))) == NULL)
				goto oom;
			res->len = p;
		}
		i = res->nrows * res->ncols;
		for (c = 0; c < res->ncols; c++) {
			res->v[i + c] = NULL;
			res->len[i + c] = 0;
		}
		res->nrows++;
		for (c = 0; c < res->ncols; c++) {
			if (nul[c])
				continue;
			if ((res->v[i + c] = malloc(lens[c] + 1)) == NULL)
				goto oom;
			memset(&one, 0, sizeof(one));
			one.buffer_type = MYSQL_TYPE_STRING;
			one.buffer = res->v[i + c];
			one.buffer_length = lens[c] + 1;
			if (lens[c] > 0 && api.stmt_fetch_column(st->st, &one,
			    (unsigned int)c, 0) != 0) {
				(void)note_stmt(db, st->st);
				goto out;
			}
			res->v[i + c][lens[c]] = '\0';
			res->len[i + c] = lens[c];
		}
	}
	if (rc == 1)
		(void)note_stmt(db, st->st);
	goto out;
oom:
	(void)oom(db);
out:
	api.stmt_free_result(st->st);
	free(rb);
	free(lens);
	free(nul);
	return db->err;
}

unsigned int
mydb_query(struct mydb *db, struct mystmt *st, const struct mybind *b,
    size_t n, struct myres **res, long long *affected)
{
	MYSQL_RES	*meta;

	if (res != NULL)
		*res = NULL;
	if (affected != NULL)
		*affected = 0;
	if (bind_params(db, st, b, n) != 0)
		return db->err;
	if (api.stmt_execute(st->st) != 0)
		return note_stmt(db, st->st);
	if ((meta = api.stmt_result_metadata(st->st)) == NULL) {
		if (affected != NULL)
			*affected = (long long)api.stmt_affected_rows(st->st);
		return 0;
	}
	if (res == NULL || (*res = calloc(1, sizeof(**res))) == NULL) {
		api.free_result(meta);
		(void)api.stmt_store_result(st->st);
		api.stmt_free_result(st->st);
		return res == NULL ? 0 : oom(db);
	}
	if (copy_rows(db, st, meta, *res) != 0) {
		mydb_free(*res);
		*res = NULL;
	}
	api.free_result(meta);
	return db->err;
}

void
mydb_stmt_close(struct mystmt *st)
{
	if (st == NULL)
		return;
	if (st->st != NULL)
		api.stmt_close(st->st);
	free(st->mb);
	free(st->lens);
	free(st->nul);
	free(st);
}

#endif /* HAVE_MARIADB */
