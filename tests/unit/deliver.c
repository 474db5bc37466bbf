/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: deliveries through the real pipeline (see deliver.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "conf.h"
#include "lib/crypto.h"
#include "deliver.h"
#include "faultvfs.h"
#include "hook.h"
#include "pipeline/pipeline.h"
#include "store/sqlite/vfs.h"
#include "testlib.h"

#define SECRET	"generic-fault-test-secret"

struct body {
	const char	*p;
	size_t		 len, off;
};

static void
harness(const char *what, const char *detail)
{
	printf("Bail out! %s: %s\n", what, detail);
	exit(99);
}

void
dl_workdir(const char *name, char *dir, size_t dirsz, char *tmpl, char *db,
    size_t pathsz)
{
	char	 logpath[512];

	snprintf(dir, dirsz, "/tmp/oncehook-%s-XXXXXX", name);
	if (mkdtemp(dir) == NULL)
		harness("mkdtemp", strerror(errno));
	snprintf(tmpl, pathsz, "%s/template.sqlite", dir);
	snprintf(db, pathsz, "%s/hooks.sqlite", dir);
	/* The product's VFS over the faults, as it is over "unix" in
	 * oncehook (sqs_connect()): what the faults and the power
	 * cuts meet is the log's writes as the product makes them. */
	if (faultvfs_install() != SQLITE_OK)
		harness("faultvfs_install", "failed");
	if (sqwal_register() != 0)
		harness("sqwal_register", "failed");
	/* The product's log lines (one per request) are not the test's. */
	snprintf(logpath, sizeof(logpath), "%s/stderr.log", dir);
	if (freopen(logpath, "w", stderr) == NULL)
		harness("freopen", strerror(errno));
}

struct conf *
dl_conf(const char *db, const char *sync)
{
	static char	 actions[1024];
	const char	*top = getenv("top_srcdir");
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", db },
		{ "ONCEHOOK_ENDPOINTS", "generic" },
		{ "ONCEHOOK_MAX_BODY", "65536" },
		{ "ONCEHOOK_BUSY_TIMEOUT_MS", "20" },
		{ "ONCEHOOK_SYNCHRONOUS", sync },
		{ "ONCEHOOK_GENERIC_SCHEME", "hmac-sha256" },
		{ "ONCEHOOK_GENERIC_SECRET", SECRET },
		{ "ONCEHOOK_GENERIC_ACTIONS", actions },
		{ NULL, NULL }
	};
	struct conf	*cf;
	char		 err[512];

	snprintf(actions, sizeof(actions), "%s/sql/actions/orders.sql",
	    top != NULL ? top : ".");
	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		harness("conf_load", err);
	return cf;
}

static ssize_t
reader(void *arg, char *buf, size_t n)
{
	struct body	*b = arg;
	size_t		 m = b->len - b->off;

	if (m > n)
		m = n;
	memcpy(buf, b->p + b->off, m);
	b->off += m;
	return (ssize_t)m;
}

void
dl_post(struct pipeline *p, const char *body, time_t now, struct resp *r)
{
	struct crypto_piece	 pc;
	struct req_header	 h;
	struct req		 rq;
	struct body		 b;
	unsigned char		 md[CRYPTO_SHA256_LEN];
	char			 hex[CRYPTO_SHA256_HEXLEN + 1], sig[80], cl[32];

	memset(&rq, 0, sizeof(rq));
	memset(&b, 0, sizeof(b));
	b.p = body;
	b.len = strlen(body);
	pc.p = body;
	pc.sz = b.len;
	if (crypto_hmac_sha256(SECRET, strlen(SECRET), &pc, 1, md) == -1)
		harness("crypto_hmac_sha256", "failed");
	crypto_hex(md, sizeof(md), hex);
	snprintf(sig, sizeof(sig), "sha256=%s", hex);
	snprintf(cl, sizeof(cl), "%zu", b.len);
	h.name = "HTTP_X_WEBHOOK_SIGNATURE";
	h.namelen = strlen(h.name);
	h.value = sig;
	rq.method = "POST";
	rq.path_info = "/hooks/generic";
	rq.script_name = "/cgi-bin/oncehook";
	rq.content_type = "application/json";
	rq.content_length = cl;
	rq.headers = &h;
	rq.nheaders = 1;
	rq.read = reader;
	rq.readarg = &b;
	pipeline_run(p, &rq, now, r);
}

void
dl_payment(char *buf, size_t sz, const char *key, const char *order,
    int amount)
{
	snprintf(buf, sz, "{\"id\":\"%s\",\"type\":\"payment.success\","
	    "\"metadata\":{\"orderId\":\"%s\"},\"transaction\":{\"id\":"
	    "\"tx-%s\",\"amount\":%d,\"currency\":\"EUR\"}}", key, order,
	    key, amount);
}

sqlite3 *
dl_open(const char *db)
{
	sqlite3	*q;

	if (sqlite3_open_v2(db, &q, SQLITE_OPEN_READWRITE, "unix") !=
	    SQLITE_OK)
		harness("sqlite3_open_v2", sqlite3_errmsg(q));
	sqlite3_busy_timeout(q, 1000);
	return q;
}

long long
dl_count(sqlite3 *q, const char *sql)
{
	sqlite3_stmt	*s;
	long long	 n = -1;

	if (sqlite3_prepare_v2(q, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

int
dl_integrity(sqlite3 *q)
{
	sqlite3_stmt	*s;
	const char	*v;
	int		 ok = 0;

	if (sqlite3_prepare_v2(q, "PRAGMA integrity_check", -1, &s, NULL) !=
	    SQLITE_OK)
		return 0;
	if (sqlite3_step(s) == SQLITE_ROW &&
	    (v = (const char *)sqlite3_column_text(s, 0)) != NULL)
		ok = strcmp(v, "ok") == 0;
	sqlite3_finalize(s);
	return ok;
}

void
dl_copy(const char *from, const char *to)
{
	char	 buf[65536], side[1100];
	ssize_t	 n;
	int	 in, out;

	snprintf(side, sizeof(side), "%s-wal", to);
	if (unlink(side) == -1 && errno != ENOENT)
		harness("unlink", strerror(errno));
	snprintf(side, sizeof(side), "%s-shm", to);
	if (unlink(side) == -1 && errno != ENOENT)
		harness("unlink", strerror(errno));
	/* Not O_TRUNC: ext4 flushes a file truncated and rewritten. */
	if (unlink(to) == -1 && errno != ENOENT)
		harness("unlink", strerror(errno));
	if ((in = open(from, O_RDONLY | O_CLOEXEC)) == -1 ||
	    (out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1)
		harness("open", strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			harness("write", strerror(errno));
	if (n == -1)
		harness("read", strerror(errno));
	close(in);
	if (close(out) == -1)
		harness("close", strerror(errno));
}
