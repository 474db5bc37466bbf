/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the request pipeline (src/pipeline/pipeline.c).
 *
 * Requests are struct req values whose body comes from an in-memory
 * reader that counts its calls and the bytes it handed out, so the tests
 * can tell whether the pipeline read the body at all, and how much of
 * it.  Signatures are made here with crypto_hmac_sha256(); the
 * end-to-end suite uses an independent signer.  The clock is fixed.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "conf.h"
#include "lib/crypto.h"
#include "pipeline/event.h"
#include "hook.h"
#include "lib/jsondoc.h"
#include "pipeline/pipeline.h"
#include "front/resp.h"
#include "observe/counters.h"
#include "writer/shared.h"
#include "store/engine.h"
#include "store/store.h"
#include "fakestore.h"
#include "tap.h"
#include "testlib.h"
#include "writer/writer.h"

#define NOW		((time_t)1700000000)
#define MAXBODY		4096
#define GSECRET		"generic-test-secret"
#define SSECRET		"whsec_t_pipeline_test_secret"
#define ZSECRET_OLD	"zoom-old-secret-token-0123"	/* rotation: */
#define ZSECRET_NEW	"zoom-new-secret-token-4567"	/* both valid */
#define ASECRET		"44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C05" \
			"7550C48EC2ACF6BA056"	/* Adyen's example key */

/* The body as the front would hand it out, with counters. */
struct body {
	const char	*p;
	size_t		 len;
	size_t		 off;		/* bytes handed out so far */
	size_t		 chunk;		/* most bytes per call; 0: any */
	int		 calls;
	int		 fail;		/* answer -1 */
};

/* One request and what it needs to live. */
struct call {
	struct req		 rq;
	struct req_header	 h[4];
	size_t			 nh;
	char			 cl[32];
	char			 sig[256];
	char			 ts[32];
	struct body		 b;
};

static char		 dir[64];
static char		 dbpath[sizeof(dir) + 32];
static char		 actions[1024];

static ssize_t
reader(void *arg, char *buf, size_t n)
{
	struct body	*b = arg;
	size_t		 m;

	b->calls++;
	if (b->fail)
		return -1;
	m = b->len - b->off;
	if (m > n)
		m = n;
	if (b->chunk != 0 && m > b->chunk)
		m = b->chunk;
	memcpy(buf, b->p + b->off, m);
	b->off += m;
	return (ssize_t)m;
}

/* The configuration over database db (generic and stripe endpoints). */
static struct conf *
mkconf(const char *db)
{
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", db },
		{ "ONCEHOOK_ENDPOINTS", "generic,stripe,slack,zoom,adyen" },
		{ "ONCEHOOK_MAX_BODY", "4096" },
		{ "ONCEHOOK_BUSY_TIMEOUT_MS", "100" },
		{ "ONCEHOOK_GENERIC_SCHEME", "hmac-sha256" },
		{ "ONCEHOOK_GENERIC_SECRET", GSECRET },
		{ "ONCEHOOK_GENERIC_ACTIONS", actions },
		{ "ONCEHOOK_STRIPE_SCHEME", "stripe" },
		{ "ONCEHOOK_STRIPE_SECRET", SSECRET },
		{ "ONCEHOOK_STRIPE_ACTIONS", actions },
		{ "ONCEHOOK_SLACK_SCHEME", "slack" },
		{ "ONCEHOOK_SLACK_SECRET", SSECRET },
		{ "ONCEHOOK_SLACK_ACTIONS", actions },
		{ "ONCEHOOK_ZOOM_SCHEME", "zoom" },
		{ "ONCEHOOK_ZOOM_SECRET", ZSECRET_OLD " " ZSECRET_NEW },
		{ "ONCEHOOK_ZOOM_ACTIONS", actions },
		{ "ONCEHOOK_ADYEN_SCHEME", "adyen" },
		{ "ONCEHOOK_ADYEN_SECRET", ASECRET },
		{ "ONCEHOOK_ADYEN_ACTIONS", actions },
		{ NULL, NULL }
	};
	struct conf	*cf;
	char		 err[512];

	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	return cf;
}

/* A POST of len bytes of body to path, application/json, with length. */
static void
mkcall(struct call *c, const char *path, const char *body, size_t len)
{
	memset(c, 0, sizeof(*c));
	c->rq.method = "POST";
	c->rq.path_info = path;
	c->rq.script_name = "/cgi-bin/oncehook";
	c->rq.content_type = "application/json";
	snprintf(c->cl, sizeof(c->cl), "%zu", len);
	c->rq.content_length = c->cl;
	c->b.p = body;
	c->b.len = len;
	c->rq.read = reader;
	c->rq.readarg = &c->b;
}

static void
header(struct call *c, const char *name, const char *value)
{
	if (c->nh == sizeof(c->h) / sizeof(c->h[0]))
		BAIL("too many headers");
	c->h[c->nh].name = name;
	c->h[c->nh].namelen = strlen(name);
	c->h[c->nh].value = value;
	c->nh++;
}

/* Hex HMAC-SHA256 under secret of prefix (may be NULL) then body. */
static void
hmac_hex(const char *secret, const char *prefix, const char *body,
    size_t len, char *out)
{
	struct crypto_piece	 pc[2];
	unsigned char		 md[CRYPTO_SHA256_LEN];
	size_t			 n = 0;

	if (prefix != NULL) {
		pc[n].p = prefix;
		pc[n++].sz = strlen(prefix);
	}
	pc[n].p = body;
	pc[n++].sz = len;
	if (crypto_hmac_sha256(secret, strlen(secret), pc, n, md) == -1)
		BAIL("crypto_hmac_sha256");
	crypto_hex(md, sizeof(md), out);
}

/* X-Webhook-Signature over the call's body with secret. */
static void
sign_generic(struct call *c, const char *secret)
{
	char	 hex[CRYPTO_SHA256_HEXLEN + 1];

	hmac_hex(secret, NULL, c->b.p, c->b.len, hex);
	snprintf(c->sig, sizeof(c->sig), "sha256=%s", hex);
	header(c, "HTTP_X_WEBHOOK_SIGNATURE", c->sig);
}

/* Stripe-Signature t=ts,v1=... over the call's body with secret. */
static void
sign_stripe(struct call *c, const char *secret, long long ts)
{
	char	 hex[CRYPTO_SHA256_HEXLEN + 1], pre[32];

	snprintf(pre, sizeof(pre), "%lld.", ts);
	hmac_hex(secret, pre, c->b.p, c->b.len, hex);
	snprintf(c->sig, sizeof(c->sig), "t=%lld,v1=%s", ts, hex);
	header(c, "HTTP_STRIPE_SIGNATURE", c->sig);
}

/* X-Slack-Signature v0=... over "v0:ts:" and the body, with secret. */
static void
sign_slack(struct call *c, const char *secret, long long ts)
{
	char	 hex[CRYPTO_SHA256_HEXLEN + 1], pre[40];

	snprintf(pre, sizeof(pre), "v0:%lld:", ts);
	hmac_hex(secret, pre, c->b.p, c->b.len, hex);
	snprintf(c->ts, sizeof(c->ts), "%lld", ts);
	header(c, "HTTP_X_SLACK_REQUEST_TIMESTAMP", c->ts);
	snprintf(c->sig, sizeof(c->sig), "v0=%s", hex);
	header(c, "HTTP_X_SLACK_SIGNATURE", c->sig);
}

/* x-zm-signature v0=... over "v0:ts:" and the body, with secret. */
static void
sign_zoom(struct call *c, const char *secret, long long ts)
{
	char	 hex[CRYPTO_SHA256_HEXLEN + 1], pre[40];

	snprintf(pre, sizeof(pre), "v0:%lld:", ts);
	hmac_hex(secret, pre, c->b.p, c->b.len, hex);
	snprintf(c->ts, sizeof(c->ts), "%lld", ts);
	header(c, "HTTP_X_ZM_REQUEST_TIMESTAMP", c->ts);
	snprintf(c->sig, sizeof(c->sig), "v0=%s", hex);
	header(c, "HTTP_X_ZM_SIGNATURE", c->sig);
}

static void
run(struct pipeline *p, struct call *c, struct resp *r)
{
	c->rq.headers = c->h;
	c->rq.nheaders = c->nh;
	pipeline_run(p, &c->rq, NOW, r);
}

/* Sign body for generic and run it; the response in r. */
static void
post_generic(struct pipeline *p, const char *body, struct resp *r)
{
	struct call	 c;

	mkcall(&c, "/hooks/generic", body, strlen(body));
	sign_generic(&c, GSECRET);
	run(p, &c, r);
}

/* r's body without its final newline, for messages. */
static const char *
text(const struct resp *r)
{
	static char	 buf[256];
	size_t		 n;

	if (r->body == NULL)
		return "(no body)";
	snprintf(buf, sizeof(buf), "%s", r->body);
	n = strlen(buf);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

/* 1 if r's body contains s. */
static int
says(const struct resp *r, const char *s)
{
	return r->body != NULL && strstr(r->body, s) != NULL;
}

static long long
count(sqlite3 *q, const char *sql)
{
	sqlite3_stmt	*s;
	long long	 n = -1;

	if (sqlite3_prepare_v2(q, sql, -1, &s, NULL) != SQLITE_OK)
		BAIL("%s: %s", sql, sqlite3_errmsg(q));
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

/* 1 if path does not exist. */
static int
absent(const char *path)
{
	struct stat	 sb;

	return stat(path, &sb) == -1 && errno == ENOENT;
}

static void
test_delivery(struct pipeline *p, sqlite3 *q)
{
	static const char	 body[] = "{\"id\":\"evt-1\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":\"po1\"},"
	    "\"transaction\":{\"id\":\"tx1\",\"amount\":100,\"currency\":"
	    "\"EUR\"}}";
	static const char	 again[] = "{ \"transaction\": {\"currency\": "
	    "\"EUR\", \"amount\": 100, \"id\": \"tx1\"}, \"metadata\": "
	    "{\"orderId\": \"po1\"}, \"type\": \"payment.success\", "
	    "\"id\": \"evt-1\" }\n";
	static const char	 other[] = "{\"id\":\"evt-1\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":\"po1\"},"
	    "\"transaction\":{\"id\":\"tx1\",\"amount\":999,\"currency\":"
	    "\"EUR\"}}";
	struct resp		 r;

	post_generic(p, body, &r);
	CHECK(r.status == 200 && r.err == HOOK_OK && !r.replayed &&
	    says(&r, "\"status\":\"processed\"") &&
	    says(&r, "\"key\":\"evt-1\""),
	    "first delivery: 200 processed (%d %s)", r.status,
	    text(&r));
	resp_clear(&r);
	CHECK(count(q, "SELECT count(*) FROM events WHERE endpoint = "
	    "'generic' AND key = 'evt-1' AND type = 'payment.success' AND "
	    "received_at = 1700000000") == 1,
	    "first delivery: event recorded at the request's time");
	CHECK(count(q, "SELECT count(*) FROM orders WHERE id = 'po1' AND "
	    "status = 'paid' AND amount = 100") == 1,
	    "first delivery: the action ran (order po1 paid)");

	post_generic(p, body, &r);
	CHECK(r.status == 200 && r.err == HOOK_DUP && r.replayed &&
	    says(&r, "\"status\":\"already_processed\"") &&
	    says(&r, "\"key\":\"evt-1\""),
	    "retry: 200 already_processed, Idempotent-Replayed (%d %s)",
	    r.status, text(&r));
	resp_clear(&r);

	post_generic(p, again, &r);
	CHECK(r.status == 200 && r.err == HOOK_DUP && r.replayed,
	    "re-serialised retry: 200 already_processed (%d)", r.status);
	resp_clear(&r);
	CHECK(count(q, "SELECT count(*) FROM events") == 1,
	    "retries add no event");

	post_generic(p, other, &r);
	CHECK(r.status == 422 && r.err == HOOK_ECONFLICT && !r.replayed &&
	    says(&r, "\"error\":\"key_conflict\""),
	    "other payload, same key: 422 key_conflict (%d %s)", r.status,
	    text(&r));
	resp_clear(&r);
	CHECK(count(q, "SELECT count(*) FROM conflicts WHERE endpoint = "
	    "'generic' AND key = 'evt-1'") == 1,
	    "the collision is recorded");
	CHECK(count(q, "SELECT count(*) FROM orders WHERE id = 'po1' AND "
	    "amount = 100") == 1 && count(q, "SELECT count(*) FROM events") ==
	    1, "the collision is never processed");
}

/*
 * A retry of the stored bytes is answered from the bytes, before any
 * canonical JSON; other bytes are still decided by the payload hash.
 * The stored hash is made wrong on purpose: only the byte comparison
 * can still call the first retry a duplicate.
 */
/*
 * Reads of a body by jsondoc, counted: the test is linked with
 * -Wl,--wrap=jsondoc_read (Makefile.am), so pipeline/event.c's calls come here.
 */
static size_t	jsondoc_reads;

enum jsondoc_err	__real_jsondoc_read(const char *, size_t, int,
			    struct jsondoc **);
enum jsondoc_err	__wrap_jsondoc_read(const char *, size_t, int,
			    struct jsondoc **);

enum jsondoc_err
__wrap_jsondoc_read(const char *text, size_t sz, int flags,
    struct jsondoc **out)
{
	jsondoc_reads++;
	return __real_jsondoc_read(text, sz, flags, out);
}

static void
test_same_bytes(struct pipeline *p)
{
	static const char	 body[] = "{\"id\":\"evt-b\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":\"pb1\"}}";
	static const char	 again[] = "{\"type\": \"payment.success\", "
	    "\"metadata\": {\"orderId\": \"pb1\"}, \"id\": \"evt-b\"}";
	struct resp		 r;
	sqlite3			*w;

	post_generic(p, body, &r);
	CHECK(r.status == 200 && r.err == HOOK_OK,
	    "same bytes: first delivery processed (%d)", r.status);
	resp_clear(&r);
	if (sqlite3_open_v2(dbpath, &w, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK || sqlite3_exec(w, "UPDATE events SET payload_hash = "
	    "'not-its-hash' WHERE key = 'evt-b'", NULL, NULL, NULL) !=
	    SQLITE_OK)
		BAIL("update: %s", sqlite3_errmsg(w));
	sqlite3_close(w);
	jsondoc_reads = 0;
	post_generic(p, body, &r);
	CHECK(r.status == 200 && r.err == HOOK_DUP && r.replayed &&
	    says(&r, "\"key\":\"evt-b\""),
	    "same bytes: the retry is a duplicate by its bytes (%d %s)",
	    r.status, text(&r));
	CHECK(jsondoc_reads == 0, "same bytes: answered without parsing "
	    "the body (%zu reads)", jsondoc_reads);
	resp_clear(&r);
	/* The re-serialised body is parsed; then its hash decides. */
	jsondoc_reads = 0;
	post_generic(p, again, &r);
	CHECK(r.status == 422 && r.err == HOOK_ECONFLICT && jsondoc_reads == 1,
	    "other bytes: parsed (%zu reads), then the payload hash decides "
	    "(%d %s)", jsondoc_reads, r.status, text(&r));
	resp_clear(&r);
}

/* Resident KB of the process's [heap] mapping (glibc's main arena). */
static long
heap_kb(void)
{
	FILE	*f;
	char	 line[512];
	long	 kb = 0;
	int	 in = 0;

	if ((f = fopen("/proc/self/smaps", "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strchr(line, '-') != NULL && strstr(line, " [heap]") != NULL)
			in = 1;
		else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/*
 * A second idle gives back SQLite's page cache (store_upkeep(): STORE_RELEASE) and
 * the allocator's free pages (io_trim()), once; the next event is
 * processed as before.
 */
static void
test_idle_release(struct pipeline *p, sqlite3 *q)
{
	char		 body[1400];
	struct resp	 r;
	sqlite3_int64	 sq0, sq1;
	long		 h0, h1;
	int		 i, ok = 1;

	for (i = 0; i < 2500; i++) {
		snprintf(body, sizeof(body), "{\"id\":\"evt-idle-%d\","
		    "\"type\":\"payment.success\",\"metadata\":{\"orderId\":"
		    "\"oi%d\"},\"pad\":\"%0900d\"}", i, i, i);
		post_generic(p, body, &r);
		ok &= r.status == 200;
		resp_clear(&r);
	}
	CHECK(ok, "idle: 2,500 new events of 1 KB processed");
	sq0 = sqlite3_memory_used();
	h0 = heap_kb();
	pipeline_idle(p);
	sq1 = sqlite3_memory_used();
	h1 = heap_kb();
	CHECK(sq0 - sq1 >= 1024 * 1024, "idle: SQLite's memory in use "
	    "%lld KB -> %lld KB (its page cache given back)",
	    (long long)sq0 / 1024, (long long)sq1 / 1024);
	if (h0 >= 2048)
		CHECK(h0 - h1 >= 1024, "idle: the heap's resident memory "
		    "%ld KB -> %ld KB (free pages given back)", h0, h1);
	else
		printf("# the heap holds %ld KB: not glibc's allocator "
		    "(a sanitizer, valgrind); its pages not checked\n", h0);
	post_generic(p, "{\"id\":\"evt-idle-after\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":\"oia\"}}", &r);
	CHECK(r.status == 200 && r.err == HOOK_OK && count(q, "SELECT "
	    "count(*) FROM orders WHERE id = 'oia'") == 1,
	    "idle: the next event processed as before (%d)", r.status);
	resp_clear(&r);
}

/*
 * A socketpair, and a fork: the child keeps sv[1], the parent sv[0]
 * (each end closed on the other side).  The child's pid, or 0 in it.
 */
static pid_t
fork_pair(int sv[2])
{
	pid_t	 pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		BAIL("socketpair: %s", strerror(errno));
	if ((pid = tap_fork()) == -1)
		BAIL("fork: %s", strerror(errno));
	close(sv[pid == 0 ? 0 : 1]);
	return pid;
}

/* The writer pid told to end and waited for, its link l closed; with
 * done, l's frame buffer freed too. */
static void
writer_stop(pid_t pid, struct writer_link *l, int done)
{
	int	 st;

	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	close(l->fd);
	if (done) {
		free(l->out);
		l->out = NULL;
		l->outcap = 0;
	}
}

/* One claim of body under key through link l, keyed as said
 * (pipeline/event.h: key_signed, signed_key: NULL for none): the
 * writer's result. */
static enum hook_err
writer_says_keyed(struct writer_link *l, const char *key, int key_signed,
    const char *signed_key, const char *body)
{
	struct store_claim	 c;
	struct event		 ev;
	enum hook_err		 er = HOOK_ESYSTEM;
	char			 hash[CRYPTO_SHA256_HEXLEN + 1];
	unsigned char		 md[CRYPTO_SHA256_LEN];

	if (crypto_sha256(body, strlen(body), md) == -1)
		BAIL("sha256");
	crypto_hex(md, sizeof(md), hash);
	if (event_stored(&ev, key, "payment.success", hash, body,
	    strlen(body), (long long)time(NULL)) != HOOK_OK)
		BAIL("event_stored");
	ev.key_signed = key_signed;
	if (signed_key != NULL && (ev.signed_key = strdup(signed_key)) ==
	    NULL)
		BAIL("strdup");
	memset(&c, 0, sizeof(c));
	c.ev = &ev;
	if (writer_claim(l, &c) == 0)
		er = c.result;
	event_clear(&ev);
	return er;
}

/* One claim of key through link l, its own payload (the endpoint
 * refuses a payload again under another key: replay guard). */
static enum hook_err
writer_says(struct writer_link *l, const char *key)
{
	char	 body[64];

	snprintf(body, sizeof(body), "{\"id\":\"%s\"}", key);
	return writer_says_keyed(l, key, 0, NULL, body);
}

/*
 * The claim frame carries key_signed and signed_key (docs/design/034):
 * an event claimed through the writer under its signed key is stored
 * out of the payload index, and its body under a header's key, claimed
 * through the writer too, is the duplicate the guard finds under the
 * signed key; the other way round, a body first stored under a
 * header's key is found by the payload index.
 */
static void
test_writer_signed(const struct conf *cf, sqlite3 *q)
{
	struct writer_link	 l;
	int			 sv[2];
	pid_t			 pid;
	enum hook_err		 a, b, c, d;
	const char		*b1 = "{\"id\":\"ws-1\",\"n\":1}";
	const char		*b2 = "{\"id\":\"ws-2\",\"n\":2}";

	if ((pid = fork_pair(sv)) == 0)
		_exit(writer_main(cf, &sv[1], 1));
	writer_link_init(&l, sv[0], 10000);
	a = writer_says_keyed(&l, "ws-1", 1, NULL, b1);
	b = writer_says_keyed(&l, "ws-h1", 0, "ws-1", b1);
	c = writer_says_keyed(&l, "ws-h2", 0, "ws-2", b2);
	d = writer_says_keyed(&l, "ws-2", 1, NULL, b2);
	writer_stop(pid, &l, 1);
	CHECK(a == HOOK_OK && b == HOOK_DUP && c == HOOK_OK && d == HOOK_DUP &&
	    count(q, "SELECT count(*) FROM events WHERE key = 'ws-1' AND "
	    "guarded = 0") == 1 && count(q, "SELECT count(*) FROM events "
	    "WHERE key = 'ws-h2' AND guarded = 1") == 1 && count(q,
	    "SELECT count(*) FROM events WHERE key IN ('ws-h1', 'ws-2')") ==
	    0, "writer: a signed key stored unguarded, its body under a "
	    "header's key a duplicate; a header's key stored guarded, its "
	    "body under the signed key a duplicate (%d %d %d %d)", a, b, c,
	    d);
}

/*
 * The writer's answers count the peers that sent it something in the
 * last 2 s (writer/writer.h): two workers claiming, then one alone after a
 * quiet spell.  Under normal, a FastCGI process hands every claim over
 * only while that count is 2 or more (writer/shared.c).
 */
static void
test_writer_peers(const struct conf *cf)
{
	struct writer_link	 l[2];
	int			 sv[2][2], fds[2], st;
	pid_t			 pid;
	enum hook_err		 a, b, c, d;
	uint32_t		 pb, pc, pd;
	size_t			 i;

	for (i = 0; i < 2; i++)
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]) == -1)
			BAIL("socketpair: %s", strerror(errno));
	if ((pid = tap_fork()) == -1)
		BAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		close(sv[0][0]);
		close(sv[1][0]);
		fds[0] = sv[0][1];
		fds[1] = sv[1][1];
		_exit(writer_main(cf, fds, 2));
	}
	for (i = 0; i < 2; i++) {
		close(sv[i][1]);
		writer_link_init(&l[i], sv[i][0], 10000);
	}
	a = writer_says(&l[0], "evt-w1");
	b = writer_says(&l[1], "evt-w2");
	pb = l[1].peers;
	c = writer_says(&l[0], "evt-w3");
	pc = l[0].peers;
	usleep(2300 * 1000);
	d = writer_says(&l[0], "evt-w4");
	pd = l[0].peers;
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	close(l[0].fd);
	close(l[1].fd);
	free(l[0].out);
	free(l[1].out);
	CHECK(a == HOOK_OK && b == HOOK_OK && c == HOOK_OK && d == HOOK_OK &&
	    pb == 2 && pc == 2 && pd == 1, "writer: two workers claiming, "
	    "its answers say 2 peers (%u, %u); after 2.3 s of quiet, one "
	    "claiming alone is told 1 (%u); results %d %d %d %d", pb, pc, pd,
	    a, b, c, d);
}

/* The log's size and how much of it is copied, from the -shm (SQLite's
 * WAL-index: mxFrame in the header, nBackfill after its two copies). */
static void
wal_index(uint32_t *mx, uint32_t *backfill)
{
	char		 path[600];
	unsigned char	 h[100];
	FILE		*f;

	snprintf(path, sizeof(path), "%s-shm", dbpath);
	if ((f = fopen(path, "rb")) == NULL || fread(h, 1, sizeof(h), f) !=
	    sizeof(h))
		BAIL("%s: cannot read the WAL-index", path);
	fclose(f);
	memcpy(mx, h + 16, sizeof(*mx));
	memcpy(backfill, h + 96, sizeof(*backfill));
}

/*
 * How many descriptors process pid has open on the database's directory
 * (a connection's walguard, store/sqlite/walguard.h: its lock on the file's byte)
 * and its -wal: one each per connection.  (SQLite keeps the database
 * file's own open while another connection of the process has it
 * locked.)
 */
static int
db_fds(pid_t pid)
{
	char		 fds[64], p[400], to[600], wal[sizeof(dbpath) + 8];
	struct dirent	*de;
	DIR		*d;
	ssize_t		 n;
	int		 k = 0;

	snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	snprintf(fds, sizeof(fds), "/proc/%ld/fd", (long)pid);
	if ((d = opendir(fds)) == NULL)
		BAIL("%s: %s", fds, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		snprintf(p, sizeof(p), "%s/%s", fds, de->d_name);
		if ((n = readlink(p, to, sizeof(to) - 1)) <= 0)
			continue;
		to[n] = '\0';
		k += strcmp(to, dir) == 0 || strcmp(to, wal) == 0;
	}
	closedir(d);
	return k;
}

/* count() of a query with one text parameter. */
static long long
count_like(sqlite3 *db, const char *sql, const char *arg)
{
	sqlite3_stmt	*st;
	long long	 n = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		BAIL("prepare %s: %s", sql, sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/*
 * The log is copied into the database beside the writer's commits, so
 * that the writer's own checkpoint, past 1,000 pages, finds little to
 * copy.  Under `full` (full != 0) the writer asks the processes it
 * answers, every STORE_COPY_STEP pages (WRITER_COPY), and each that is
 * asked copies it after its answer (pipeline_after(): store_upkeep(): STORE_COPY);
 * here, one event at a time and no reader in the log, a whole copy lets
 * SQLite start the log over at the writer's next commit.  Under
 * `normal` its copier does (store/sqlite/copier.h), a thread beside it: no process
 * is asked, and the log is seen copied while it is still short of the
 * writer's checkpoint.
 */
static void
test_writer_copy(struct conf *cf, sqlite3 *q, int full)
{
	struct pipeline		 p;
	struct writer_link	 l;
	struct resp		 r;
	char			 body[1400];
	const char		*mode = full ? "full" : "normal";
	uint32_t		 mx0 = 0, bf0, mx1, bf1;
	int			 sv[2], i, ok = 1, asks = 0, copied = 0;
	int			 behind = 0, beside = 0, was = cf->synchronous_full;
	int			 held = 0, idle, k;
	char			 like[40], olike[40];
	uint32_t		 mxmax = 0;
	sqlite3			*rw;
	pid_t			 pid;

	cf->synchronous_full = full;
	if ((pid = fork_pair(sv)) == 0)
		_exit(writer_main(cf, &sv[1], 1));
	writer_link_init(&l, sv[0], 10000);
	pipeline_init(&p, cf, NULL);
	pipeline_claim_through(&p, writer_claim, NULL, &l);
	/* The tests before never checkpoint: the log starts empty. */
	if (sqlite3_open(dbpath, &rw) != SQLITE_OK || sqlite3_exec(rw,
	    "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL) != SQLITE_OK)
		BAIL("%s: checkpoint: %s", dbpath, sqlite3_errmsg(rw));
	sqlite3_close(rw);
	for (i = 0; i < 1200; i++) {
		snprintf(body, sizeof(body), "{\"id\":\"evt-copy-%s-%d\","
		    "\"type\":\"payment.success\",\"metadata\":{\"orderId\":"
		    "\"oc%s%d\"},\"pad\":\"%0900d\"}", mode, i, mode, i, i);
		post_generic(&p, body, &r);
		ok &= r.status == 200 && r.err == HOOK_OK;
		resp_clear(&r);
		if (p.copy) {
			asks++;
			wal_index(&mx0, &bf0);
			behind += bf0 < mx0;
		}
		pipeline_after(&p);
		if (mx0 > 0) {
			wal_index(&mx1, &bf1);
			copied += bf1 >= mx0;
			mx0 = 0;
		}
		wal_index(&mx1, &bf1);
		if (mx1 > mxmax)
			mxmax = mx1;
		beside += bf1 > 0 && mx1 < 1000;
		if ((k = db_fds(pid)) > held)
			held = k;
	}
	pipeline_clear(&p);
	/* The copier lets its connection go after a second unasked. */
	usleep(2000 * 1000);
	idle = db_fds(pid);
	writer_stop(pid, &l, 1);
	cf->synchronous_full = was;
	snprintf(like, sizeof(like), "evt-copy-%s-%%", mode);
	snprintf(olike, sizeof(olike), "oc%s%%", mode);
	CHECK(ok && count_like(q, "SELECT count(*) FROM events WHERE key "
	    "LIKE ?", like) == 1200 && count_like(q, "SELECT count(*) FROM "
	    "orders WHERE id LIKE ?", olike) == 1200,
	    "writer copy, %s: 1,200 new events through the writer, each "
	    "stored once with its order", mode);
	if (full) {
		CHECK(asks >= 6 && behind == asks && copied == asks,
		    "writer copy, full: the writer asked %d times for the log "
		    "to be copied (every %d pages, not near its own "
		    "checkpoint), each time with pages not yet copied (%d), "
		    "and each time the process copied them all after its "
		    "answer (%d)", asks, STORE_COPY_STEP, behind, copied);
		CHECK(mxmax >= STORE_COPY_STEP && mxmax < 2 * STORE_COPY_STEP,
		    "writer copy, full: the log stays short (at most %u "
		    "pages; all copied, SQLite starts it over at the next "
		    "commit; without the copies, 1,000)", mxmax);
		CHECK(held < idle + 2, "writer copy, full: no copier: no "
		    "connection more in the writer's process when busy than "
		    "idle (at most %d descriptors on the directory and the "
		    "-wal, then %d)", held, idle);
	} else {
		CHECK(asks == 0 && beside >= 10, "writer copy, normal: no "
		    "process asked (%d); the copier copied the log beside the "
		    "writer, seen %d times before its checkpoint", asks,
		    beside);
		CHECK(mxmax >= STORE_COPY_STEP && mxmax < 1000 +
		    2 * STORE_COPY_STEP, "writer copy, normal: the log stays "
		    "bounded (at most %u pages)", mxmax);
		/* At least two more (its walguard's directory and its
		 * -wal; SQLite opens the directory for an fsync now and
		 * then, which a sample may catch). */
		CHECK(held >= idle + 2, "writer copy, normal: the writer's "
		    "process has a connection more while its copier copies "
		    "(at most %d descriptors on the directory and the -wal) "
		    "than after two seconds unasked (%d: the copier let its "
		    "connection go; a file replaced meanwhile is not held)",
		    held, idle);
	}
}

/* Read exactly n bytes from fd: 0, or -1. */
static int
read_n(int fd, void *buf, size_t n)
{
	char	*b = buf;
	ssize_t	 r;

	while (n > 0) {
		if ((r = read(fd, b, n)) <= 0) {
			if (r == -1 && errno == EINTR)
				continue;
			return -1;
		}
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* An answer frame for claim id into out: its length. */
static size_t
answer_frame(char *out, uint64_t id, int32_t result, const char *why)
{
	uint32_t	 len, peers = 1, flags = 0, wl = (uint32_t)strlen(why);
	size_t		 o = sizeof(len);

	memcpy(out + o, &id, sizeof(id));
	o += sizeof(id);
	memcpy(out + o, &result, sizeof(result));
	o += sizeof(result);
	memcpy(out + o, &peers, sizeof(peers));
	o += sizeof(peers);
	memcpy(out + o, &flags, sizeof(flags));
	o += sizeof(flags);
	memcpy(out + o, &wl, sizeof(wl));
	o += sizeof(wl);
	memcpy(out + o, why, wl);
	o += wl;
	len = (uint32_t)(o - sizeof(len));
	memcpy(out, &len, sizeof(len));
	return o;
}

/* The id of the claim frame read from fd (the writer's side). */
static uint64_t
claim_id(int fd)
{
	static char	 buf[65536];
	uint32_t	 len;
	uint64_t	 id;

	if (read_n(fd, &len, sizeof(len)) == -1 || len > sizeof(buf) ||
	    len < sizeof(id) || read_n(fd, buf, len) == -1)
		_exit(1);
	memcpy(&id, buf, sizeof(id));
	return id;
}

/*
 * A worker out of time with none of the writer's answer read answers
 * 503 and keeps its link (nothing of the stream is out of step): the
 * late answer, when it comes, is dropped by its claim's id, and the
 * next claim reads its own.  A worker reads the writer's answer as it
 * comes: in three pieces 50 ms apart, it is one answer.  Out of time
 * with the answer's length read
 * and not the rest, the stream is out of step: the claim is 503, and the
 * link is broken (closed, a new one made), so that the next claim does
 * not read that answer's rest as its own.
 */
static void
test_writer_split(void)
{
	struct writer_link	 l;
	char			 a[256];
	size_t			 n;
	int			 sv[2], st;
	enum hook_err		 late, after, one, two;
	int			 broken;
	pid_t			 pid;

	if ((pid = fork_pair(sv)) == 0) {
		n = answer_frame(a, claim_id(sv[1]), HOOK_OK, "late");
		if (usleep(450000) == -1 || write(sv[1], a, n) != (ssize_t)n)
			_exit(1);
		n = answer_frame(a, claim_id(sv[1]), HOOK_OK, "after it");
		if (write(sv[1], a, n) != (ssize_t)n)
			_exit(1);
		n = answer_frame(a, claim_id(sv[1]), HOOK_OK, "in pieces");
		if (write(sv[1], a, 4) != 4 || usleep(50000) == -1 ||
		    write(sv[1], a + 4, 10) != 10 || usleep(50000) == -1 ||
		    write(sv[1], a + 14, n - 14) != (ssize_t)(n - 14))
			_exit(1);
		n = answer_frame(a, claim_id(sv[1]), HOOK_OK, "too late");
		if (write(sv[1], a, 10) != 10 || usleep(600000) == -1)
			_exit(1);
		(void)send(sv[1], a + 10, n - 10, MSG_NOSIGNAL);	/* closed */
		_exit(0);
	}
	writer_link_init(&l, sv[0], 300);
	late = writer_says(&l, "evt-split-late");
	broken = l.broken;
	/* The claims whose answers come are given time enough for a slow
	 * machine (valgrind, a loaded CI): their deadline is not what they
	 * show.  Those that must run out keep 300 ms. */
	l.timeout_ms = 10000;
	after = writer_says(&l, "evt-split-after");
	CHECK(late == HOOK_EBUSY && !broken && after == HOOK_OK && !l.broken,
	    "writer link: out of time with nothing read: 503 (result %d), the "
	    "link kept (%d); the late answer dropped, the next claim's own "
	    "read (result %d)", (int)late, broken, (int)after);
	one = writer_says(&l, "evt-split-1");
	broken = l.broken;
	l.timeout_ms = 300;
	two = writer_says(&l, "evt-split-2");
	CHECK(one == HOOK_OK && !broken, "writer link: an answer in three "
	    "pieces, 50 ms apart, read as one (result %d)", (int)one);
	CHECK(two == HOOK_EBUSY && l.broken, "writer link: out of time with "
	    "an answer half read: 503 (result %d), and the link broken (%d), its "
	    "stream out of step", (int)two, l.broken);
	close(sv[0]);
	free(l.out);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		BAIL("the test's writer failed");
}

/* A Stripe event: key evt-direct-<tag><i>, its order od<tag><i>; pad
 * makes other bytes under the same key.  The answer in r. */
static void
post_direct(struct pipeline *p, const char *tag, int i, int pad,
    struct resp *r)
{
	struct call	 c;
	char		 body[400];

	snprintf(body, sizeof(body), "{\"id\":\"evt-direct-%s%d\",\"type\":"
	    "\"payment_intent.succeeded\",\"data\":{\"object\":{\"metadata\":"
	    "{\"order_id\":\"od%s%d\"}}},\"pad\":%d}", tag, i, tag, i, pad);
	mkcall(&c, "/hooks/stripe", body, strlen(body));
	sign_stripe(&c, SSECRET, (long long)NOW);
	run(p, &c, r);
}

/* n new events of tag through p: 1 if each was answered 200 processed. */
static int
post_new(struct pipeline *p, const char *tag, int n)
{
	struct resp	 r;
	int		 i, ok = 1;

	for (i = 0; i < n; i++) {
		post_direct(p, tag, i, 0, &r);
		ok &= r.status == 200 && r.err == HOOK_OK;
		resp_clear(&r);
	}
	return ok;
}

/* Milliseconds since t0. */
static long
ms_since(const struct timespec *t0)
{
	struct timespec	 t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (long)((t1.tv_sec - t0->tv_sec) * 1000 +
	    (t1.tv_nsec - t0->tv_nsec) / 1000000);
}

/* The writer pid stopped, not only told to stop.  The wait is taken
 * again when a signal ends it: a late tick of the write lock's timer
 * (store/sqlite/walguard.c) can, and a bail-out here would leave the
 * writer stopped. */
static void
stop_writer(pid_t pid)
{
	pid_t	 w;
	int	 st;

	if (kill(pid, SIGSTOP) == -1)
		BAIL("the writer cannot be stopped: %s", strerror(errno));
	while ((w = waitpid(pid, &st, WUNTRACED)) == -1 && errno == EINTR)
		;
	if (w != pid || !WIFSTOPPED(st)) {
		kill(pid, SIGKILL);
		BAIL("the writer did not stop");
	}
}

/* What the answer to event i of tag (pad as post_direct()) was while the
 * writer pid was stopped and the link waited ms for it. */
struct stopped {
	int		 status;
	enum hook_err	 er;
	long		 took;		/* ms */
};

static struct stopped
while_stopped(struct pipeline *p, struct writer_link *l, pid_t pid,
    const char *tag, int i, int pad, long ms)
{
	struct stopped	 a;
	struct timespec	 t0;
	struct resp	 r;
	long		 was = l->timeout_ms;

	stop_writer(pid);
	l->timeout_ms = ms;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	post_direct(p, tag, i, pad, &r);
	a.took = ms_since(&t0);
	l->timeout_ms = was;
	kill(pid, SIGCONT);
	a.status = r.status;
	a.er = r.err;
	resp_clear(&r);
	return a;
}

/*
 * A run of new events straight to the writer (pipeline/pipeline.h): after
 * PIPELINE_DIRECT_AFTER new events in a row a process
 * sends the next one to the writer without a lookup, and the writer
 * answers a known key.  Seen from outside with the writer stopped: a
 * retry answered at once was answered by the process's own lookup; one
 * that waited for the link's timeout was sent to the writer (and, the
 * writer out of time, is answered from a read then).  A lookup takes
 * microseconds: QUICK_MS is far more than any, far less than LONG_MS.
 */
#define QUICK_MS	5000
#define LONG_MS		10000
#define SHORT_MS	300

static void
test_writer_direct(struct conf *cf, sqlite3 *q)
{
	struct pipeline		 p;
	struct sharedwriter	 sw;
	struct writer_link	 l;
	struct resp		 r;
	struct stopped		 a, b;
	struct timespec		 t0;
	char			 body[200];
	int			 sv[2], ok, i, hands[4];
	int			 was = cf->synchronous_full;
	unsigned		 f1;
	long			 took;
	long long		 conflicts;
	pid_t			 pid;

	cf->synchronous_full = 0;
	if ((pid = fork_pair(sv)) == 0)
		_exit(writer_main(cf, &sv[1], 1));
	writer_link_init(&l, sv[0], LONG_MS);
	pipeline_init(&p, cf, NULL);
	pipeline_claim_through(&p, writer_claim, NULL, &l);

	ok = post_new(&p, "a", PIPELINE_DIRECT_AFTER - 1);
	f1 = p.fresh;
	a = while_stopped(&p, &l, pid, "a", 0, 0, LONG_MS);
	CHECK(ok && f1 == PIPELINE_DIRECT_AFTER - 1 && a.status == 200 &&
	    a.er == HOOK_DUP && a.took < QUICK_MS && p.fresh == 0,
	    "direct: after %d new events (%u in a row), a retry is answered "
	    "by the process's lookup, the writer stopped (%d, result %d, %ld "
	    "ms); none in a row after it (%u)", PIPELINE_DIRECT_AFTER - 1, f1,
	    a.status, (int)a.er, a.took, p.fresh);

	ok = post_new(&p, "b", PIPELINE_DIRECT_AFTER);
	f1 = p.fresh;
	a = while_stopped(&p, &l, pid, "b", 0, 0, SHORT_MS);
	b = while_stopped(&p, &l, pid, "b", 0, 0, LONG_MS);
	CHECK(ok && f1 == PIPELINE_DIRECT_AFTER && a.status == 200 &&
	    a.er == HOOK_DUP && a.took >= SHORT_MS && b.status == 200 &&
	    b.er == HOOK_DUP && b.took < QUICK_MS && p.fresh == 0,
	    "direct: after %d new events a retry goes to the writer without a "
	    "lookup: the writer stopped, it waits until the link gives up "
	    "(%ld ms), then is answered 200 from a read (%d, result %d); the "
	    "next retry is the lookup's again, at once (%d, result %d, %ld ms)",
	    PIPELINE_DIRECT_AFTER, a.took, a.status, (int)a.er, b.status,
	    (int)b.er, b.took);

	ok = post_new(&p, "c", PIPELINE_DIRECT_AFTER);
	f1 = p.fresh;
	post_direct(&p, "c", 0, 0, &r);
	CHECK(ok && f1 == PIPELINE_DIRECT_AFTER && r.status == 200 &&
	    r.err == HOOK_DUP && p.fresh == 0, "direct: a retry in a run, "
	    "the writer running: it answers the duplicate (%d, result %d), "
	    "and lookups come first again (%u in a row)", r.status,
	    (int)r.err, p.fresh);
	resp_clear(&r);

	conflicts = count(q, "SELECT count(*) FROM conflicts WHERE key = "
	    "'evt-direct-b1'");
	ok = post_new(&p, "e", PIPELINE_DIRECT_AFTER);
	f1 = p.fresh;
	post_direct(&p, "b", 1, 7, &r);
	CHECK(ok && f1 == PIPELINE_DIRECT_AFTER && r.status == 422 &&
	    r.err == HOOK_ECONFLICT && count(q, "SELECT count(*) FROM "
	    "conflicts WHERE key = 'evt-direct-b1'") == conflicts + 1 &&
	    p.fresh == 0, "direct: other bytes under a known key, straight "
	    "to the writer: 422 key_conflict (%d), its conflict recorded, "
	    "lookups first again (%u)", r.status, p.fresh);
	resp_clear(&r);
	/* The writer stopped: the process answers from a read; the claim
	 * it sent records the conflict when the writer runs again (before
	 * the next claim on the link: one row). */
	ok = post_new(&p, "f", PIPELINE_DIRECT_AFTER);
	a = while_stopped(&p, &l, pid, "b", 2, 7, SHORT_MS);
	ok &= post_new(&p, "h", 1);
	CHECK(ok && a.status == 422 && a.er == HOOK_ECONFLICT &&
	    a.took >= SHORT_MS && count(q, "SELECT count(*) FROM conflicts "
	    "WHERE key = 'evt-direct-b2'") == 1, "direct: other bytes under "
	    "a known key, the writer stopped: after the link gave up (%ld "
	    "ms), 422 from a read (%d); the conflict recorded once, by the "
	    "claim, once the writer ran again", a.took, a.status);

	/* Under full too: the retry waits for its batch's fsync, as the
	 * new events of the run do. */
	cf->synchronous_full = 1;
	ok = post_new(&p, "d", PIPELINE_DIRECT_AFTER + 2);
	a = while_stopped(&p, &l, pid, "d", 0, 0, SHORT_MS);
	cf->synchronous_full = 0;
	CHECK(ok && a.status == 200 && a.er == HOOK_DUP &&
	    a.took >= SHORT_MS, "direct: under full too: after %d new events "
	    "a retry goes to the writer, the writer stopped: answered when the "
	    "link gave up (%ld ms), from a read (%d, result %d)",
	    PIPELINE_DIRECT_AFTER + 2, a.took, a.status, (int)a.er);

	/* Behind a replay guard too (generic's scheme has no timestamp):
	 * the claim checks the payload under the write lock.  Other bytes
	 * under a known key, the writer stopped: sent straight, answered
	 * from a read once the link gave up. */
	for (i = 0, ok = 1; i <= PIPELINE_DIRECT_AFTER; i++) {
		snprintf(body, sizeof(body), "{\"id\":\"evt-direct-g%d\","
		    "\"type\":\"payment.success\",\"metadata\":{\"orderId\":"
		    "\"odg%d\"}}", i, i);
		post_generic(&p, body, &r);
		ok &= r.status == 200 && r.err == HOOK_OK;
		resp_clear(&r);
	}
	f1 = p.fresh;
	stop_writer(pid);
	l.timeout_ms = SHORT_MS;
	snprintf(body, sizeof(body), "{\"id\":\"evt-direct-g%d\","
	    "\"type\":\"payment.success\",\"metadata\":{\"orderId\":"
	    "\"odg%d\"},\"pad\":1}", PIPELINE_DIRECT_AFTER,
	    PIPELINE_DIRECT_AFTER);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	post_generic(&p, body, &r);
	took = ms_since(&t0);
	l.timeout_ms = LONG_MS;
	kill(pid, SIGCONT);
	CHECK(ok && f1 == PIPELINE_DIRECT_AFTER && r.status == 422 &&
	    r.err == HOOK_ECONFLICT && took >= SHORT_MS && p.fresh == 0,
	    "direct: behind a replay guard too: after %d new events (%u in a "
	    "row) other bytes under a known key go to the writer, the writer "
	    "stopped: 422 from a read when the link gave up (%d, result %d, "
	    "%ld ms)", PIPELINE_DIRECT_AFTER + 1, f1, r.status, (int)r.err,
	    took);
	resp_clear(&r);

	/* A captured payload under a new, unsigned key: the claim's guard
	 * answers it, the writer running; the writer stopped, the payload's
	 * read does once the link gave up.  Nothing stored under the new
	 * keys, no order twice. */
	{
		struct stopped	 g[2];
		int		 k, okk[2];

		for (k = 0; k < 2; k++) {
			okk[k] = 1;
			for (i = 0; i < PIPELINE_DIRECT_AFTER; i++) {
				snprintf(body, sizeof(body), "{\"id\":"
				    "\"evt-guard-%d-%d\",\"type\":\"payment."
				    "success\",\"metadata\":{\"orderId\":"
				    "\"gq%d-%d\"}}", k, i, k, i);
				post_generic(&p, body, &r);
				okk[k] &= r.status == 200 && r.err == HOOK_OK;
				resp_clear(&r);
			}
			f1 = p.fresh;
			okk[k] &= f1 == PIPELINE_DIRECT_AFTER;
			if (k == 1) {
				stop_writer(pid);
				l.timeout_ms = SHORT_MS;
			}
			clock_gettime(CLOCK_MONOTONIC, &t0);
			{
				struct call	 c;

				mkcall(&c, "/hooks/generic", body,
				    strlen(body));
				header(&c, "HTTP_X_IDEMPOTENCY_KEY", k == 0 ?
				    "evt-guard-new0" : "evt-guard-new1");
				sign_generic(&c, GSECRET);
				run(&p, &c, &r);
			}
			g[k].took = ms_since(&t0);
			g[k].status = r.status;
			g[k].er = r.err;
			okk[k] &= r.replayed && p.fresh == 0;
			resp_clear(&r);
			if (k == 1) {
				l.timeout_ms = LONG_MS;
				kill(pid, SIGCONT);
			}
		}
		CHECK(okk[0] && g[0].status == 200 && g[0].er == HOOK_DUP,
		    "direct, replay guard: a payload known under another key "
		    "sent straight is the writer's duplicate (%d, result %d)",
		    g[0].status, (int)g[0].er);
		CHECK(okk[1] && g[1].status == 200 && g[1].er == HOOK_DUP &&
		    g[1].took >= SHORT_MS, "direct, replay guard: the writer "
		    "stopped, a payload known under another key is 200 from "
		    "the payload's read when the link gave up (%d, result %d, "
		    "%ld ms)", g[1].status, (int)g[1].er, g[1].took);
		CHECK(count(q, "SELECT count(*) FROM events WHERE key LIKE "
		    "'evt-guard-new%'") == 0 && count(q, "SELECT count(*) FROM "
		    "events WHERE key LIKE 'evt-guard-%'") ==
		    2 * PIPELINE_DIRECT_AFTER && count(q, "SELECT count(*) "
		    "FROM orders WHERE id LIKE 'gq%'") ==
		    2 * PIPELINE_DIRECT_AFTER, "direct, replay guard: nothing "
		    "stored under the new keys, each order once");
	}

	CHECK(count(q, "SELECT count(*) FROM events WHERE key LIKE "
	    "'evt-direct-%'") == 7 * PIPELINE_DIRECT_AFTER + 3 &&
	    count(q, "SELECT count(*) FROM orders WHERE id LIKE 'od%'") ==
	    7 * PIPELINE_DIRECT_AFTER + 3, "direct: every new event stored "
	    "once with its order, no retry stored again");

	pipeline_clear(&p);
	writer_stop(pid, &l, 1);
	cf->synchronous_full = was;

	/* A FastCGI process's link (writer/shared.c): straight only while
	 * it is connected to a writer whose answers say 2 peers or more. */
	memset(&sw, 0, sizeof(sw));
	sw.link.fd = -1;
	hands[0] = sharedwriter_hands(&sw);		/* off */
	sw.addrlen = 1;
	sw.link.peers = 2;
	hands[1] = sharedwriter_hands(&sw);		/* not connected */
	sw.link.fd = 0;
	sw.link.peers = 1;
	hands[2] = sharedwriter_hands(&sw);		/* alone */
	sw.link.peers = 2;
	hands[3] = sharedwriter_hands(&sw);
	CHECK(!hands[0] && !hands[1] && !hands[2] && hands[3], "direct: a "
	    "FastCGI process hands a claim straight over only connected to a "
	    "writer that says 2 peers (off %d, not connected %d, 1 peer %d, "
	    "2 peers %d)", hands[0], hands[1], hands[2], hands[3]);
}

static void	failing_writer(int);

static int	looked_for;	/* takes()'s calls */

/* A writer takes the claim (as writer/shared.h's cgi_link() says). */
static int
takes(void *arg)
{
	(void)arg;
	looked_for++;
	return 1;
}

/*
 * A CGI process (one request) with a writer (writer/shared.h, "Under
 * CGI"): its new event and then a retry go straight to the writer, and
 * the process never opens the database; with a writer whose claims
 * fail, the claim comes back, the process opens it, and a known event
 * is still 200 from its read.
 */
static void
test_writer_cgi(struct conf *cf)
{
	struct pipeline		 p;
	struct writer_link	 l;
	struct resp		 r[3];
	int			 sv[2], st, opened[3];
	pid_t			 pid;

	if ((pid = fork_pair(sv)) == 0)
		_exit(writer_main(cf, &sv[1], 1));
	writer_link_init(&l, sv[0], LONG_MS);
	pipeline_init(&p, cf, NULL);
	p.one_request = 1;
	pipeline_claim_through(&p, writer_claim, takes, &l);
	post_direct(&p, "cgi", 1, 0, &r[0]);
	opened[0] = p.st != NULL;
	post_direct(&p, "cgi", 1, 0, &r[1]);
	opened[1] = p.st != NULL;
	CHECK(r[0].status == 200 && r[0].err == HOOK_OK && !opened[0] &&
	    r[1].status == 200 && r[1].err == HOOK_DUP && !opened[1],
	    "CGI with a writer: a new event (%d, result %d) and its retry "
	    "(%d, result %d) answered by the writer, the database never "
	    "opened by the process (%d, %d)", r[0].status, (int)r[0].err,
	    r[1].status, (int)r[1].err, opened[0], opened[1]);
	resp_clear(&r[0]);
	resp_clear(&r[1]);
	pipeline_clear(&p);
	writer_stop(pid, &l, 0);

	if ((pid = fork_pair(sv)) == 0) {
		failing_writer(sv[1]);
		_exit(0);
	}
	l.fd = sv[0];
	l.broken = 0;
	pipeline_init(&p, cf, NULL);
	p.one_request = 1;
	pipeline_claim_through(&p, writer_claim, takes, &l);
	post_direct(&p, "cgi", 1, 0, &r[2]);
	opened[2] = p.st != NULL;
	CHECK(r[2].status == 200 && r[2].err == HOOK_DUP && opened[2],
	    "CGI, the writer's claim failing: the process opens the "
	    "database and a known event is 200 from its read (%d, result "
	    "%d, opened %d)", r[2].status, (int)r[2].err, opened[2]);
	resp_clear(&r[2]);
	pipeline_clear(&p);
	close(l.fd);
	free(l.out);
	waitpid(pid, &st, 0);
}

/*
 * A CGI process looks for a writer only for a parsed event: a verified
 * body without an id (400) and a handshake reach none, and open nothing
 * (writer/shared.h, "Under CGI").
 */
static void
test_writer_cgi_bad(const struct conf *cf)
{
	static const char	 noid[] = "{\"type\":\"payment_intent."
				    "succeeded\"}";
	struct pipeline		 p;
	struct writer_link	 l;
	struct call		 c;
	struct resp		 r;

	writer_link_init(&l, -1, LONG_MS);
	pipeline_init(&p, cf, NULL);
	p.one_request = 1;
	pipeline_claim_through(&p, writer_claim, takes, &l);
	looked_for = 0;
	mkcall(&c, "/hooks/stripe", noid, strlen(noid));
	sign_stripe(&c, SSECRET, (long long)NOW);
	run(&p, &c, &r);
	CHECK(r.status == 400 && looked_for == 0 && p.st == NULL,
	    "CGI: a verified body without an id is 400, no writer looked for "
	    "(%d times), the database not opened (%d)", looked_for,
	    p.st != NULL);
	resp_clear(&r);
	pipeline_clear(&p);
}

/*
 * Under `full` the writer asks the process it answers to copy the log
 * (WRITER_COPY): a CGI process, whose event went to the writer without
 * its store, opens it after its answer and copies (pipeline_after()).
 * Each event through a process of its own, as CGI runs them.
 */
static void
test_writer_cgi_copy(struct conf *cf)
{
	struct pipeline		 p;
	struct writer_link	 l;
	struct resp		 r;
	char			 body[1400];
	uint32_t		 mx0, bf0, mx1, bf1;
	int			 sv[2], i, ok = 1, asks = 0, copied = 0;
	int			 opened = 0, was = cf->synchronous_full;
	pid_t			 pid;

	cf->synchronous_full = 1;
	if ((pid = fork_pair(sv)) == 0)
		_exit(writer_main(cf, &sv[1], 1));
	writer_link_init(&l, sv[0], 10000);
	for (i = 0; i < 400; i++) {
		pipeline_init(&p, cf, NULL);
		p.one_request = 1;
		pipeline_claim_through(&p, writer_claim, takes, &l);
		snprintf(body, sizeof(body), "{\"id\":\"evt-cgicopy-%d\","
		    "\"type\":\"payment.success\",\"metadata\":{\"orderId\":"
		    "\"occ%d\"},\"pad\":\"%0900d\"}", i, i, i);
		post_generic(&p, body, &r);
		ok &= r.status == 200 && r.err == HOOK_OK;
		resp_clear(&r);
		opened += p.st != NULL;
		mx0 = 0;
		if (p.copy) {
			asks++;
			wal_index(&mx0, &bf0);
		}
		pipeline_after(&p);
		if (mx0 > 0) {
			wal_index(&mx1, &bf1);
			copied += bf1 >= mx0;
		}
		pipeline_clear(&p);
	}
	writer_stop(pid, &l, 1);
	cf->synchronous_full = was;
	CHECK(ok && opened == 0 && asks >= 2 && copied == asks,
	    "CGI, full: 400 events through the writer, none opening the "
	    "database for its claim (%d); asked %d times to copy the log, "
	    "each time the process opened it after its answer and copied "
	    "all (%d)", opened, asks, copied);
}

/*
 * A writer whose every claim fails, as one over a read-only or full
 * database does: answers each claim on fd HOOK_EBUSY, until the end
 * closes (claim_id() ends the process then).
 */
static void
failing_writer(int fd)
{
	char	 ans[200];
	size_t	 k;

	for (;;) {
		k = answer_frame(ans, claim_id(fd), HOOK_EBUSY,
		    "attempt to write a readonly database");
		if (write(fd, ans, k) != (ssize_t)k)
			return;
	}
}

/*
 * A run straight to a writer whose claims fail (a read-only or full
 * database): the new events are 503 as before, and a retry of a known
 * event in the run is still 200, from the lookup made after the failed
 * claim; lookups come first again after it.
 */
static void
test_writer_direct_failing(const struct conf *cf)
{
	struct pipeline		 p;
	struct writer_link	 l;
	struct resp		 r;
	int			 sv[2], st, i, busy = 1;
	unsigned		 f1;
	pid_t			 pid;

	if ((pid = fork_pair(sv)) == 0) {
		failing_writer(sv[1]);
		_exit(0);
	}
	writer_link_init(&l, sv[0], LONG_MS);
	pipeline_init(&p, cf, NULL);
	pipeline_claim_through(&p, writer_claim, NULL, &l);
	for (i = 0; i < PIPELINE_DIRECT_AFTER; i++) {
		post_direct(&p, "ro", i, 0, &r);
		busy &= r.status == 503 && r.err == HOOK_EBUSY;
		resp_clear(&r);
	}
	f1 = p.fresh;
	post_direct(&p, "a", 1, 0, &r);		/* stored by test_writer_direct */
	CHECK(busy && f1 == PIPELINE_DIRECT_AFTER && r.status == 200 &&
	    r.err == HOOK_DUP && p.fresh == 0, "direct, every claim failing "
	    "(a read-only database): %d new events 503, and a retry of a "
	    "known one sent straight is still 200 from the read after its "
	    "failed claim (%d, result %d); lookups first again (%u)",
	    PIPELINE_DIRECT_AFTER, r.status, (int)r.err, p.fresh);
	resp_clear(&r);
	pipeline_clear(&p);
	close(l.fd);
	free(l.out);
	waitpid(pid, &st, 0);
}

/*
 * A process that runs only after its link's deadline has passed (here a
 * deadline of 0 ms: under valgrind on a busy machine, 1 ms was seen to
 * pass between the clock and the first send) still hands the writer
 * the claim when the socket has room: the frame arrives, the answer is
 * late, 503, nothing stored by the process.  Before, the frame was
 * never sent and the process claimed the event itself, so the batch
 * test below waited for it for ever.
 */
static void
test_writer_past_deadline(const struct conf *cf, sqlite3 *q)
{
	struct pipeline		 p;
	struct writer_link	 l;
	struct resp		 r;
	struct pollfd		 pfd;
	uint32_t		 len = 0;
	int			 cap[2], got;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, cap) == -1)
		BAIL("socketpair: %s", strerror(errno));
	writer_link_init(&l, cap[0], 0);
	pipeline_init(&p, cf, NULL);
	pipeline_claim_through(&p, writer_claim, NULL, &l);
	post_generic(&p, "{\"id\":\"evt-late-1\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":\"ol1\"}}", &r);
	pfd.fd = cap[1];
	pfd.events = POLLIN;
	got = poll(&pfd, 1, 1000) == 1 && read_n(cap[1], &len, sizeof(len))
	    == 0 && len > 0;
	CHECK(r.status == 503 && got && count(q, "SELECT count(*) FROM events "
	    "WHERE key = 'evt-late-1'") == 0, "a claim past its link's "
	    "deadline before its first send: the frame still goes (%u bytes),"
	    " 503, nothing stored by the process (status %d)", len, r.status);
	resp_clear(&r);
	pipeline_clear(&p);
	close(cap[0]);
	close(cap[1]);
	free(l.out);
}

#define BATCH_LINKS	4
#define BATCH_EVENTS	600

/*
 * Only the first answer of a batch carries WRITER_COPY: one process
 * asked to copy the log is enough (each of a batch copying it would run
 * several checkpoints at once, all but one of them for nothing).  The
 * claims' frames are made by writer_claim() on a socket the test reads
 * (the answer never comes: the claim fails, 503, nothing stored), then
 * sent BATCH_LINKS at a time, one on each of the writer's sockets, while
 * the writer is stopped: it finds them all when it runs again, and
 * claims them in one transaction.
 */
static void
test_writer_batch_copy(const struct conf *cf, sqlite3 *q)
{
	struct pipeline		 p;
	struct writer_link	 l;
	struct resp		 r;
	char			 body[1400], *frames[BATCH_EVENTS], ans[600];
	uint32_t		 len[BATCH_EVENTS], n, flags;
	int32_t			 result;
	size_t			 lens = 0;
	int			 cap[2], sv[BATCH_LINKS][2], wfd[BATCH_LINKS];
	int			 i, k, st, ok = 1, made = 1, most = 0;
	int			 asked = 0, several = 0;
	pid_t			 pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, cap) == -1)
		BAIL("socketpair: %s", strerror(errno));
	writer_link_init(&l, cap[0], 1);
	pipeline_init(&p, cf, NULL);
	pipeline_claim_through(&p, writer_claim, NULL, &l);
	for (i = 0; i < BATCH_EVENTS; i++) {
		snprintf(body, sizeof(body), "{\"id\":\"evt-batch-%d\","
		    "\"type\":\"payment.success\",\"metadata\":{\"orderId\":"
		    "\"ob%d\"},\"pad\":\"%0900d\"}", i, i, i);
		post_generic(&p, body, &r);
		made &= r.status == 503;
		resp_clear(&r);
		if (read_n(cap[1], &len[i], sizeof(len[i])) == -1 ||
		    len[i] > 65536 || (frames[i] = malloc(len[i])) == NULL ||
		    read_n(cap[1], frames[i], len[i]) == -1)
			BAIL("the claim's frame: %s", strerror(errno));
		lens += len[i];
	}
	pipeline_clear(&p);
	close(cap[0]);
	close(cap[1]);
	free(l.out);
	CHECK(made && count(q, "SELECT count(*) FROM events WHERE key LIKE "
	    "'evt-batch-%'") == 0, "writer batch: %d claims' frames made "
	    "(%zu bytes; no writer answered: 503, nothing stored)",
	    BATCH_EVENTS, lens);

	for (k = 0; k < BATCH_LINKS; k++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv[k]) == -1)
			BAIL("socketpair: %s", strerror(errno));
		wfd[k] = sv[k][1];
	}
	if ((pid = tap_fork()) == -1)
		BAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		for (k = 0; k < BATCH_LINKS; k++)
			close(sv[k][0]);
		_exit(writer_main(cf, wfd, BATCH_LINKS));
	}
	for (k = 0; k < BATCH_LINKS; k++)
		close(sv[k][1]);
	for (i = 0; i < BATCH_EVENTS; i += BATCH_LINKS) {
		stop_writer(pid);
		for (k = 0; k < BATCH_LINKS; k++)
			if (write(sv[k][0], &len[i + k], sizeof(len[0])) !=
			    sizeof(len[0]) || write(sv[k][0], frames[i + k],
			    len[i + k]) != (ssize_t)len[i + k])
				BAIL("a frame to the writer: %s",
				    strerror(errno));
		kill(pid, SIGCONT);
		for (k = n = 0; k < BATCH_LINKS; k++) {
			if (read_n(sv[k][0], &len[i + k], sizeof(len[0])) ==
			    -1 || len[i + k] < 24 || len[i + k] > sizeof(ans) ||
			    read_n(sv[k][0], ans, len[i + k]) == -1)
				BAIL("the writer's answer: %s", strerror(errno));
			memcpy(&result, ans + 8, sizeof(result));
			memcpy(&flags, ans + 16, sizeof(flags));
			ok &= result == HOOK_OK;
			n += (flags & WRITER_COPY) != 0;
		}
		asked += n > 0;
		several += n > 1;
		if ((int)n > most)
			most = (int)n;
	}
	for (k = 0; k < BATCH_LINKS; k++)
		close(sv[k][0]);
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	for (i = 0; i < BATCH_EVENTS; i++)
		free(frames[i]);
	CHECK(ok && count(q, "SELECT count(*) FROM events WHERE key LIKE "
	    "'evt-batch-%'") == BATCH_EVENTS && count(q, "SELECT count(*) "
	    "FROM orders WHERE id LIKE 'ob%'") == BATCH_EVENTS,
	    "writer batch: %d events in batches of %d, each stored once with "
	    "its order", BATCH_EVENTS, BATCH_LINKS);
	CHECK(asked >= 5 && several == 0, "writer batch: %d batches asked "
	    "for the log to be copied, each of them one process only (at most "
	    "%d of a batch's %d answers)", asked, most, BATCH_LINKS);
}

/*
 * Requests refused before anything is stored, one row a check: the
 * path, how it is signed (GSECRET, another secret, a raw signature
 * header, or not), the method and content type (NOKEEP: none at all),
 * the body; the status, and where it matters the outcome, a word of the
 * answer, and that the body was never read.
 */
#define NOKEEP	((const char *)1)	/* the field unset (NULL) */

static const char	 refused_body[] = "{\"id\":\"evt-r\",\"type\":"
    "\"webhook.ping\"}";

static const struct {
	const char	*what;
	const char	*path;
	const char	*secret;	/* NULL: not signed */
	const char	*sigheader;	/* a raw X-Webhook-Signature */
	const char	*method;	/* NULL: POST */
	const char	*ctype;		/* NULL: application/json */
	const char	*body;		/* NULL: refused_body */
	int		 status;
	int		 err;		/* -1: not asked */
	const char	*says;
	int		 unread;	/* the body must not be read */
} refusals[] = {
	{ "bad signature: 401 invalid_signature", "/hooks/generic",
	  "not-the-secret", NULL, NULL, NULL, NULL, 401, -1,
	  "\"error\":\"invalid_signature\"", 0 },
	{ "missing signature: 401", "/hooks/generic", NULL, NULL, NULL, NULL,
	  NULL, 401, HOOK_ESIG, NULL, 0 },
	{ "malformed signature: 401", "/hooks/generic", NULL, "sha256=zz",
	  NULL, NULL, NULL, 401, -1, NULL, 0 },
	{ "generic signature on the stripe endpoint: 401", "/hooks/stripe",
	  GSECRET, NULL, NULL, NULL, NULL, 401, -1, NULL, 0 },
	{ "GET: 405, Allow: POST, body not read", "/hooks/generic", GSECRET,
	  NULL, "GET", NULL, NULL, 405, -1, NULL, 1 },
	{ "no method: 405", "/hooks/generic", GSECRET, NULL, NOKEEP, NULL,
	  NULL, 405, -1, NULL, 0 },
	{ "text/plain: 415, body not read", "/hooks/generic", GSECRET, NULL,
	  NULL, "text/plain", NULL, 415, -1, "unsupported_media_type", 1 },
	{ "no content type: 415", "/hooks/generic", GSECRET, NULL, NULL,
	  NOKEEP, NULL, 415, -1, NULL, 0 },
	{ "application/jsonx: 415", "/hooks/generic", GSECRET, NULL, NULL,
	  "application/jsonx", NULL, 415, -1, NULL, 0 },
	{ "unknown endpoint: 404, body not read", "/hooks/nope", GSECRET,
	  NULL, NULL, NULL, NULL, 404, -1, NULL, 1 },
	{ "signed malformed JSON: 400", "/hooks/generic", GSECRET, NULL, NULL,
	  NULL, "{\"id\":\"evt-j\",", 400, HOOK_EJSON, NULL, 0 },
};

static void
test_refusals(struct pipeline *p, sqlite3 *q)
{
	struct call	 c;
	struct resp	 r;
	const char	*body;
	long long	 before;
	size_t		 i;
	int		 ok;

	before = count(q, "SELECT count(*) FROM events");
	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		body = refusals[i].body != NULL ? refusals[i].body :
		    refused_body;
		mkcall(&c, refusals[i].path, body, strlen(body));
		if (refusals[i].secret != NULL)
			sign_generic(&c, refusals[i].secret);
		if (refusals[i].sigheader != NULL)
			header(&c, "HTTP_X_WEBHOOK_SIGNATURE",
			    refusals[i].sigheader);
		if (refusals[i].method != NULL)
			c.rq.method = refusals[i].method == NOKEEP ? NULL :
			    refusals[i].method;
		if (refusals[i].ctype != NULL)
			c.rq.content_type = refusals[i].ctype == NOKEEP ?
			    NULL : refusals[i].ctype;
		run(p, &c, &r);
		ok = r.status == refusals[i].status &&
		    (refusals[i].err == -1 || (int)r.err == refusals[i].err) &&
		    (refusals[i].says == NULL || says(&r, refusals[i].says)) &&
		    (!refusals[i].unread || c.b.calls == 0);
		if (refusals[i].status == 405 && refusals[i].unread)
			ok = ok && r.allow != NULL && strcmp(r.allow, "POST") == 0;
		CHECK(ok, "%s (%d)", refusals[i].what, r.status);
		resp_clear(&r);
	}
	CHECK(count(q, "SELECT count(*) FROM events WHERE key = 'evt-r'") ==
	    0, "no row after a refused signature");
	CHECK(count(q, "SELECT count(*) FROM events WHERE key = 'evt-j'") ==
	    0 && count(q, "SELECT count(*) FROM events") == before,
	    "no refusal wrote an event");
}

static void
test_media(struct pipeline *p, sqlite3 *q)
{
	static const char	*types[] = {
		"application/json; charset=utf-8",
		"application/cloudevents+json",
		"Application/JSON",
	};
	char			 body[128];
	struct call		 c;
	struct resp		 r;
	size_t			 i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		snprintf(body, sizeof(body), "{\"id\":\"evt-m%zu\",\"type\":"
		    "\"webhook.ping\"}", i);
		mkcall(&c, "/hooks/generic", body, strlen(body));
		sign_generic(&c, GSECRET);
		c.rq.content_type = types[i];
		run(p, &c, &r);
		CHECK(r.status == 200 && r.err == HOOK_OK,
		    "%s accepted (%d)", types[i], r.status);
		resp_clear(&r);
	}
	CHECK(count(q, "SELECT count(*) FROM events WHERE key LIKE "
	    "'evt-m%'") == 3, "... and recorded");
}

/* A signed ping of exactly len bytes with id key (len >= 64). */
static char *
padded(const char *key, size_t len)
{
	char	*b;
	int	 n;

	if ((b = malloc(len + 1)) == NULL)
		BAIL("out of memory");
	n = snprintf(b, len + 1, "{\"id\":\"%s\",\"type\":\"webhook.ping\","
	    "\"pad\":\"", key);
	if (n < 0 || (size_t)n + 2 > len)
		BAIL("padded: %zu too short", len);
	memset(b + n, 'x', len - (size_t)n - 2);
	memcpy(b + len - 2, "\"}", 2);
	b[len] = '\0';
	return b;
}

static void
test_sizes(struct pipeline *p, sqlite3 *q)
{
	struct call	 c;
	struct resp	 r;
	char		*b;

	b = padded("evt-big1", MAXBODY + 1);
	mkcall(&c, "/hooks/generic", b, MAXBODY + 1);
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 413 && c.b.calls == 0,
	    "Content-Length over the limit: 413 without reading (%d, %d "
	    "calls)", r.status, c.b.calls);
	resp_clear(&r);

	mkcall(&c, "/hooks/generic", b, MAXBODY + 1);
	c.rq.content_length = "1073741824";
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 413 && c.b.calls == 0,
	    "Content-Length of 1 GiB: 413 without reading (%d)", r.status);
	resp_clear(&r);

	mkcall(&c, "/hooks/generic", b, MAXBODY + 1);
	c.rq.content_length = NULL;
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 413 && c.b.off <= MAXBODY + 1,
	    "limit + 1 bytes, no Content-Length: 413 (%d), read %zu",
	    r.status, c.b.off);
	resp_clear(&r);
	free(b);

	b = padded("evt-big3", 3 * MAXBODY);
	mkcall(&c, "/hooks/generic", b, 3 * MAXBODY);
	c.rq.content_length = NULL;
	c.b.chunk = 1000;
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 413 && c.b.off <= MAXBODY + 1,
	    "3x the limit in 1000-byte reads, no Content-Length: 413 (%d), "
	    "read %zu of %zu", r.status, c.b.off, c.b.len);
	resp_clear(&r);

	mkcall(&c, "/hooks/generic", b, 3 * MAXBODY);
	c.rq.content_length = "";
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 413 && c.b.off <= MAXBODY + 1,
	    "3x the limit, empty Content-Length: 413 (%d), read %zu",
	    r.status, c.b.off);
	resp_clear(&r);
	free(b);
	CHECK(count(q, "SELECT count(*) FROM events WHERE key LIKE "
	    "'evt-big%'") == 0, "no oversized event recorded");

	b = padded("evt-lim1", MAXBODY);
	mkcall(&c, "/hooks/generic", b, MAXBODY);
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 200 && r.err == HOOK_OK,
	    "exactly the limit, with Content-Length: 200 (%d)", r.status);
	resp_clear(&r);
	free(b);

	b = padded("evt-lim2", MAXBODY);
	mkcall(&c, "/hooks/generic", b, MAXBODY);
	c.rq.content_length = NULL;
	c.b.chunk = 999;
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 200 && r.err == HOOK_OK,
	    "exactly the limit, no Content-Length, small reads: 200 (%d)",
	    r.status);
	resp_clear(&r);
	CHECK(count(q, "SELECT count(*) FROM events WHERE key IN "
	    "('evt-lim1', 'evt-lim2') AND length(payload) = 4096") == 2,
	    "both stored whole");
	free(b);

	b = padded("evt-short", 100);
	mkcall(&c, "/hooks/generic", b, 50);
	c.rq.content_length = "100";
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 400 && r.err == HOOK_EBODY,
	    "body shorter than Content-Length: 400 (%d)", r.status);
	resp_clear(&r);

	mkcall(&c, "/hooks/generic", b, 100);
	c.b.fail = 1;
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 400 && r.err == HOOK_EBODY,
	    "read error: 400 (%d)", r.status);
	resp_clear(&r);

	mkcall(&c, "/hooks/generic", b, 100);
	c.rq.content_length = "10x";
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 400 && c.b.calls == 0,
	    "malformed Content-Length: 400 without reading (%d)", r.status);
	resp_clear(&r);

	mkcall(&c, "/hooks/generic", b, 100);
	c.rq.content_length = "60";
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 401 && c.b.off == 60,
	    "only Content-Length bytes are read (%d, read %zu)", r.status,
	    c.b.off);
	resp_clear(&r);
	free(b);
	CHECK(count(q, "SELECT count(*) FROM events WHERE key = "
	    "'evt-short'") == 0, "no short event recorded");
}

static void
test_stripe(struct pipeline *p, sqlite3 *q)
{
	static const char	 body[] = "{\"id\":\"evt_st1\",\"object\":"
	    "\"event\",\"type\":\"payment_intent.succeeded\",\"data\":"
	    "{\"object\":{\"id\":\"pi_1\",\"amount\":500,\"currency\":"
	    "\"usd\",\"metadata\":{\"order_id\":\"pst1\"}}}}";
	static const char	 stale[] = "{\"id\":\"evt_st2\",\"type\":"
	    "\"webhook.ping\"}";
	static const char	 nokey[] = "{\"type\":\"webhook.ping\"}";
	struct call		 c;
	struct resp		 r;

	mkcall(&c, "/hooks/stripe", body, strlen(body));
	sign_stripe(&c, SSECRET, (long long)NOW - 10);
	run(p, &c, &r);
	CHECK(r.status == 200 && r.err == HOOK_OK &&
	    says(&r, "\"key\":\"evt_st1\""),
	    "stripe: signed 10 s ago, 200 processed (%d)", r.status);
	resp_clear(&r);
	CHECK(count(q, "SELECT count(*) FROM orders WHERE id = 'pst1' AND "
	    "status = 'paid'") == 1, "stripe: order paid");

	mkcall(&c, "/hooks/stripe", stale, strlen(stale));
	sign_stripe(&c, SSECRET, (long long)NOW - 1000);
	run(p, &c, &r);
	CHECK(r.status == 400 && r.err == HOOK_ESTALE &&
	    says(&r, "\"error\":\"stale_timestamp\""),
	    "stripe: timestamp 1000 s old: 400 stale_timestamp (%d %s)",
	    r.status, text(&r));
	resp_clear(&r);

	mkcall(&c, "/hooks/stripe", stale, strlen(stale));
	sign_stripe(&c, SSECRET, (long long)NOW + 1000);
	run(p, &c, &r);
	CHECK(r.status == 400 && r.err == HOOK_ESTALE,
	    "stripe: timestamp 1000 s ahead: 400 stale_timestamp (%d)",
	    r.status);
	resp_clear(&r);

	mkcall(&c, "/hooks/stripe", stale, strlen(stale));
	sign_stripe(&c, "whsec_wrong", (long long)NOW - 1000);
	run(p, &c, &r);
	CHECK(r.status == 401,
	    "stripe: stale and wrongly signed: 401 (%d)", r.status);
	resp_clear(&r);
	CHECK(count(q, "SELECT count(*) FROM events WHERE key = "
	    "'evt_st2'") == 0, "stripe: no row for a stale event");

	mkcall(&c, "/hooks/stripe", nokey, strlen(nokey));
	sign_stripe(&c, SSECRET, (long long)NOW);
	run(p, &c, &r);
	CHECK(r.status == 400 && r.err == HOOK_ENOKEY,
	    "stripe: no /id: 400 missing key (%d)", r.status);
	resp_clear(&r);
}

static void
test_busy(struct pipeline *p, sqlite3 *q)
{
	static const char	 known[] = "{\"id\":\"evt-1\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":\"po1\"},"
	    "\"transaction\":{\"id\":\"tx1\",\"amount\":100,\"currency\":"
	    "\"EUR\"}}";
	static const char	 fresh[] = "{\"id\":\"evt-busy\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":\"pbusy\"}}";
	struct pipeline		 fresh_p;
	struct resp		 r;
	sqlite3			*lock;

	if (sqlite3_open_v2(dbpath, &lock, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK || sqlite3_exec(lock, "BEGIN IMMEDIATE", NULL, NULL,
	    NULL) != SQLITE_OK)
		BAIL("lock: %s", sqlite3_errmsg(lock));

	post_generic(p, fresh, &r);
	CHECK(r.status == 503 && r.err == HOOK_EBUSY && r.retry_after > 0,
	    "write lock held elsewhere: 503 with Retry-After (%d)", r.status);
	resp_clear(&r);
	post_generic(p, known, &r);
	CHECK(r.status == 200 && r.err == HOOK_DUP && r.replayed,
	    "a retry is answered without the write lock (%d)", r.status);
	resp_clear(&r);

	/* A new process (CGI) opens the store while the lock is held. */
	pipeline_init(&fresh_p, p->cf, NULL);
	post_generic(&fresh_p, known, &r);
	CHECK(r.status == 200 && r.err == HOOK_DUP && r.replayed,
	    "a new process answers a retry under the lock too (%d %s)",
	    r.status, text(&r));
	resp_clear(&r);
	post_generic(&fresh_p, fresh, &r);
	CHECK(r.status == 503 && r.retry_after > 0,
	    "a new process answers a new event under the lock 503 (%d)",
	    r.status);
	resp_clear(&r);
	pipeline_clear(&fresh_p);

	sqlite3_exec(lock, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(lock);
	CHECK(count(q, "SELECT count(*) FROM events WHERE key = "
	    "'evt-busy'") == 0 && count(q, "SELECT count(*) FROM orders "
	    "WHERE id = 'pbusy'") == 0, "nothing processed while busy");
	post_generic(p, fresh, &r);
	CHECK(r.status == 200 && r.err == HOOK_OK,
	    "the provider's retry then succeeds (%d)", r.status);
	resp_clear(&r);
}

static void
test_misconfigured(void)
{
	static const char	 body[] = "{\"id\":\"evt-c\",\"type\":"
	    "\"webhook.ping\"}";
	char			 www[sizeof(dir) + 32], db[sizeof(dir) + 64];
	struct pipeline		 p;
	struct conf		*cf;
	struct call		 c;
	struct resp		 r;

	/* No configuration at all. */
	pipeline_init(&p, NULL, "ONCEHOOK_DB: required: the path");
	mkcall(&c, "/hooks/generic", body, strlen(body));
	sign_generic(&c, GSECRET);
	run(&p, &c, &r);
	CHECK(r.status == 500 && r.err == HOOK_ECONF &&
	    says(&r, "\"error\":\"misconfigured\"") &&
	    !says(&r, "ONCEHOOK_DB"),
	    "NULL conf: 500 misconfigured, detail not in the body (%d %s)",
	    r.status, text(&r));
	resp_clear(&r);
	pipeline_clear(&p);

	/* The database inside the document root. */
	snprintf(www, sizeof(www), "%s/www", dir);
	if (mkdir(www, 0700) == -1)
		BAIL("mkdir %s: %s", www, strerror(errno));
	snprintf(db, sizeof(db), "%s/hooks.sqlite", www);
	cf = mkconf(db);
	pipeline_init(&p, cf, NULL);
	mkcall(&c, "/hooks/generic", body, strlen(body));
	sign_generic(&c, GSECRET);
	c.rq.document_root = www;
	run(&p, &c, &r);
	CHECK(r.status == 500 && r.err == HOOK_ECONF &&
	    says(&r, "misconfigured") && !says(&r, www),
	    "database inside DOCUMENT_ROOT: 500 misconfigured (%d)",
	    r.status);
	resp_clear(&r);
	CHECK(absent(db), "... and no database created there");

	mkcall(&c, "/hooks/generic", body, strlen(body));
	sign_generic(&c, GSECRET);
	snprintf(db, sizeof(db), "%s/www/", dir);
	c.rq.document_root = db;
	run(&p, &c, &r);
	CHECK(r.status == 500 && r.err == HOOK_ECONF,
	    "... also with a trailing slash on DOCUMENT_ROOT (%d)", r.status);
	resp_clear(&r);

	/* Apache's Alias or ~user directory: CONTEXT_DOCUMENT_ROOT. */
	mkcall(&c, "/hooks/generic", body, strlen(body));
	sign_generic(&c, GSECRET);
	c.rq.document_root = "/nonexistent-docroot";
	c.rq.context_root = www;
	run(&p, &c, &r);
	CHECK(r.status == 500 && r.err == HOOK_ECONF,
	    "database inside CONTEXT_DOCUMENT_ROOT: 500 misconfigured (%d)",
	    r.status);
	resp_clear(&r);
	pipeline_clear(&p);
	conf_free(cf);
	rmdir(www);

	/* A database that was never initialised. */
	snprintf(db, sizeof(db), "%s/missing.sqlite", dir);
	cf = mkconf(db);
	pipeline_init(&p, cf, NULL);
	mkcall(&c, "/hooks/generic", body, strlen(body));
	sign_generic(&c, GSECRET);
	c.rq.document_root = "/nonexistent-docroot";
	run(&p, &c, &r);
	CHECK(r.status == 500 && r.err == HOOK_ECONF &&
	    says(&r, "misconfigured") && !says(&r, "missing.sqlite"),
	    "missing database file: 500 misconfigured (%d)", r.status);
	resp_clear(&r);
	CHECK(absent(db), "... and it is not created");
	pipeline_clear(&p);
	conf_free(cf);
}

static void
test_routing(struct pipeline *p)
{
	static const char	 body[] = "{\"id\":\"evt-sn\",\"type\":"
	    "\"webhook.ping\"}";
	struct call		 c;
	struct resp		 r;

	mkcall(&c, NULL, body, strlen(body));
	c.rq.script_name = "/cgi-bin/generic";
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 200 && r.err == HOOK_OK,
	    "no PATH_INFO: routed by the script name (%d)", r.status);
	resp_clear(&r);

	mkcall(&c, "/hooks/generic/", body, strlen(body));
	sign_generic(&c, GSECRET);
	run(p, &c, &r);
	CHECK(r.status == 200 && r.err == HOOK_DUP,
	    "trailing slash routes to the same endpoint (%d)", r.status);
	resp_clear(&r);
}

/*
 * Slack's url_verification is answered with its challenge, signed like
 * any event, and never claimed; a forged one is refused.
 */
static void
test_slack(struct pipeline *p, sqlite3 *q)
{
	static const char	 check[] = "{\"token\":\"t\",\"challenge\":"
				    "\"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P\","
				    "\"type\":\"url_verification\"}";
	static const char	 ev[] = "{\"event_id\":\"Ev1\",\"event\":"
				    "{\"type\":\"app_mention\"},\"type\":\"event_callback\"}";
	struct call		 c;
	struct resp		 r;
	long long		 before = count(q, "SELECT count(*) FROM events");

	mkcall(&c, "/hooks/slack", check, sizeof(check) - 1);
	sign_slack(&c, SSECRET, NOW);
	run(p, &c, &r);
	CHECK(r.status == 200 && says(&r, "\"challenge\":\"3eZbrw1aBm2rZgRNFd"
	    "xV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P\""),
	    "slack url_verification answered with its challenge: %s",
	    text(&r));
	CHECK(count(q, "SELECT count(*) FROM events") == before,
	    "url_verification is not claimed");
	resp_clear(&r);

	mkcall(&c, "/hooks/slack", check, sizeof(check) - 1);
	sign_slack(&c, "not-the-secret", NOW);
	run(p, &c, &r);
	CHECK(r.status == 401, "forged url_verification refused (%d)",
	    r.status);
	resp_clear(&r);

	mkcall(&c, "/hooks/slack", ev, sizeof(ev) - 1);
	sign_slack(&c, SSECRET, NOW);
	run(p, &c, &r);
	CHECK(r.status == 200 && says(&r, "\"processed\""),
	    "slack event_callback processed: %s", text(&r));
	resp_clear(&r);
	CHECK(count(q, "SELECT count(*) FROM events WHERE endpoint = 'slack'"
	    " AND key = 'Ev1' AND type = 'app_mention'") == 1,
	    "slack event stored under event_id with event.type");
}

/* The string member name of r's JSON body, copied into out. */
static const char *
member_of(const struct resp *r, const char *name, char *out, size_t outsz)
{
	json_t		*o;
	const char	*v;

	out[0] = '\0';
	if (r->body == NULL ||
	    (o = json_loadb(r->body, r->bodysz, 0, NULL)) == NULL)
		return NULL;
	if ((v = json_string_value(json_object_get(o, name))) != NULL)
		snprintf(out, outsz, "%s", v);
	json_decref(o);
	return v != NULL ? out : NULL;
}

/* Zoom's validation of body, signed with secret: its answer in r. */
static void
zoom_validate(struct pipeline *p, const char *body, const char *secret,
    long long ts, struct resp *r)
{
	struct call	 c;

	mkcall(&c, "/hooks/zoom", body, strlen(body));
	sign_zoom(&c, secret, ts);
	run(p, &c, r);
}

/*
 * Zoom's endpoint.url_validation (SPEC section 14): verified, answered
 * {"plainToken", "encryptedToken": hex HMAC-SHA256 of the token under
 * the secret that signed it}, never claimed; a forged, stale or
 * malformed one refused.  Then Zoom's events, keyed by their hash.
 */
static void
test_zoom(struct pipeline *p, sqlite3 *q)
{
	static const char	 check[] = "{\"payload\":{\"plainToken\":"
	    "\"qgg8vlvZRS6UYooatFL8Aw\"},\"event_ts\":1654503849680,"
	    "\"event\":\"endpoint.url_validation\"}";
	static const char	 ev[] = "{\"event\":\"meeting.started\","
	    "\"event_ts\":1626230691572,\"payload\":{\"account_id\":"
	    "\"AAAAAABBBB\",\"object\":{\"id\":\"1234567890\",\"uuid\":"
	    "\"4444AAAiAAAAAiAiAiiAii==\",\"topic\":\"My Meeting\"}}}";
	struct call		 c;
	struct resp		 r;
	struct crypto_piece	 pc = { "qgg8vlvZRS6UYooatFL8Aw", 22 };
	unsigned char		 md[CRYPTO_SHA256_LEN];
	char			 want[CRYPTO_SHA256_HEXLEN + 1], got[600];
	char			 body[1400], tok[600];
	long long		 before = count(q, "SELECT count(*) FROM events");
	const char		*secrets[2] = { ZSECRET_NEW, ZSECRET_OLD };
	int			 i;

	for (i = 0; i < 2; i++) {
		if (crypto_hmac_sha256(secrets[i], strlen(secrets[i]), &pc, 1,
		    md) == -1)
			BAIL("hmac");
		crypto_hex(md, sizeof(md), want);
		zoom_validate(p, check, secrets[i], NOW, &r);
		CHECK(r.status == 200 && r.err == HOOK_HANDSHAKE &&
		    member_of(&r, "plainToken", got, sizeof(got)) != NULL &&
		    strcmp(got, "qgg8vlvZRS6UYooatFL8Aw") == 0 &&
		    member_of(&r, "encryptedToken", got, sizeof(got)) !=
		    NULL && strcmp(got, want) == 0 && !says(&r, "status"),
		    "zoom url_validation signed with the %s secret: "
		    "encryptedToken under that secret: %s", i ? "first" :
		    "second", text(&r));
		resp_clear(&r);
	}
	CHECK(count(q, "SELECT count(*) FROM events") == before,
	    "url_validation is never stored");

	zoom_validate(p, check, "not-the-zoom-secret", NOW, &r);
	CHECK(r.status == 401 && !says(&r, "encryptedToken"),
	    "forged url_validation refused, no token (%d)", r.status);
	resp_clear(&r);
	zoom_validate(p, check, ZSECRET_NEW, NOW - 3600, &r);
	CHECK(r.status == 400 && says(&r, "stale_timestamp"),
	    "url_validation an hour old refused (%d)", r.status);
	resp_clear(&r);
	mkcall(&c, "/hooks/zoom", check, strlen(check));
	run(p, &c, &r);
	CHECK(r.status == 401, "unsigned url_validation refused (%d)",
	    r.status);
	resp_clear(&r);

	/* The token is the sender's text: bounded, escaped. */
	memset(tok, 'a', HOOK_TOKEN_MAX + 1);
	tok[HOOK_TOKEN_MAX + 1] = '\0';
	snprintf(body, sizeof(body), "{\"event\":\"endpoint.url_validation\","
	    "\"payload\":{\"plainToken\":\"%s\"}}", tok);
	zoom_validate(p, body, ZSECRET_NEW, NOW, &r);
	CHECK(r.status == 400 && says(&r, "handshake token"),
	    "a %d-byte plainToken refused: %s", HOOK_TOKEN_MAX + 1, text(&r));
	resp_clear(&r);
	tok[HOOK_TOKEN_MAX] = '\0';
	snprintf(body, sizeof(body), "{\"event\":\"endpoint.url_validation\","
	    "\"payload\":{\"plainToken\":\"%s\"}}", tok);
	zoom_validate(p, body, ZSECRET_NEW, NOW, &r);
	CHECK(r.status == 200 && member_of(&r, "plainToken", got,
	    sizeof(got)) != NULL && strcmp(got, tok) == 0,
	    "a %d-byte plainToken answered", HOOK_TOKEN_MAX);
	resp_clear(&r);
	zoom_validate(p, "{\"event\":\"endpoint.url_validation\","
	    "\"payload\":{\"plainToken\":\"a\\\"}</b>\\u00e9\"}}",
	    ZSECRET_NEW, NOW, &r);
	CHECK(r.status == 200 && member_of(&r, "plainToken", got,
	    sizeof(got)) != NULL && strcmp(got, "a\"}</b>\xc3\xa9") == 0,
	    "a plainToken with a quote comes back escaped: %s", text(&r));
	resp_clear(&r);
	zoom_validate(p, "{\"event\":\"endpoint.url_validation\","
	    "\"payload\":{\"plainToken\":\"a\\nb\"}}", ZSECRET_NEW, NOW,
	    &r);
	CHECK(r.status == 400, "a plainToken with a control character "
	    "refused (%d)", r.status);
	resp_clear(&r);
	zoom_validate(p, "{\"event\":\"endpoint.url_validation\","
	    "\"payload\":{\"plainToken\":7}}", ZSECRET_NEW, NOW, &r);
	CHECK(r.status == 400 && !says(&r, "encryptedToken"),
	    "a plainToken that is no string refused (%d)", r.status);
	resp_clear(&r);
	zoom_validate(p, "{\"event\":\"endpoint.url_validation\"}",
	    ZSECRET_NEW, NOW, &r);
	CHECK(r.status == 400, "a url_validation without its token refused "
	    "(%d)", r.status);
	resp_clear(&r);
	CHECK(count(q, "SELECT count(*) FROM events") == before,
	    "none of them stored");

	/* Events: the key is the hash of the body. */
	zoom_validate(p, ev, ZSECRET_OLD, NOW, &r);
	CHECK(r.status == 200 && says(&r, "\"processed\""),
	    "zoom meeting.started processed: %s", text(&r));
	resp_clear(&r);
	zoom_validate(p, ev, ZSECRET_NEW, NOW + 300, &r);
	CHECK(r.status == 200 && r.err == HOOK_DUP,
	    "its retry, signed anew 5 minutes later: already_processed (%d)",
	    r.status);
	resp_clear(&r);
	CHECK(count(q, "SELECT count(*) FROM events WHERE endpoint = 'zoom' "
	    "AND type = 'meeting.started' AND length(key) = 64") == 1,
	    "zoom event stored once, type from /event, key the hash");
	snprintf(body, sizeof(body), "{\"event\":\"recording.completed\","
	    "\"event_ts\":1626230691573,\"download_token\":\"%s\","
	    "\"payload\":{\"object\":{\"uuid\":\"4444AAAi\"}}}", "tok-1");
	zoom_validate(p, body, ZSECRET_NEW, NOW, &r);
	CHECK(r.status == 200 && r.err == HOOK_OK, "recording.completed "
	    "processed (%d)", r.status);
	resp_clear(&r);
	snprintf(body, sizeof(body), "{\"event\":\"recording.completed\","
	    "\"event_ts\":1626230691573,\"download_token\":\"%s\","
	    "\"payload\":{\"object\":{\"uuid\":\"4444AAAi\"}}}", "tok-2");
	zoom_validate(p, body, ZSECRET_NEW, NOW, &r);
	CHECK(r.status == 200 && r.err == HOOK_DUP, "its retry with a new "
	    "download_token: already_processed (%d)", r.status);
	resp_clear(&r);
}

/*
 * Stripe's event destinations ping (a thin event): verified as any
 * Stripe request, answered 200, never stored.
 */
static void
test_stripe_ping(struct pipeline *p, sqlite3 *q)
{
	static const char	 ping[] = "{\"id\":\"evt_test_65R9Ijk8dsVY4g4b"
	    "Vdb16R9I5PK5ZGhxxkyYmJ2hQ4a8rm\",\"object\":\"v2.core.event\","
	    "\"type\":\"v2.core.event_destination.ping\",\"livemode\":"
	    "false,\"created\":\"2026-01-01T00:00:00.000Z\","
	    "\"related_object\":{\"id\":\"ed_test_61RM8ltWcTW4mbsxf16RJyfa2"
	    "xSQLHJJh1sxm7H0KVT6\",\"type\":\"v2.core.event_destination\","
	    "\"url\":\"/v2/core/event_destinations/ed_test_61RM8ltWcTW4mb"
	    "sxf16RJyfa2xSQLHJJh1sxm7H0KVT6\"}}";
	struct call		 c;
	struct resp		 r;
	long long		 before = count(q, "SELECT count(*) FROM events");
	int			 i;

	for (i = 0; i < 2; i++) {
		mkcall(&c, "/hooks/stripe", ping, strlen(ping));
		sign_stripe(&c, SSECRET, (long long)NOW);
		run(p, &c, &r);
		CHECK(r.status == 200 && r.err == HOOK_HANDSHAKE &&
		    says(&r, "{\"status\":\"handshake\"}") &&
		    !says(&r, "key"),
		    "stripe event destination ping (%d): answered %s", i + 1,
		    text(&r));
		resp_clear(&r);
	}
	CHECK(count(q, "SELECT count(*) FROM events") == before,
	    "the ping is never stored");
	mkcall(&c, "/hooks/stripe", ping, strlen(ping));
	sign_stripe(&c, "whsec_not_the_secret", (long long)NOW);
	run(p, &c, &r);
	CHECK(r.status == 401, "a forged ping refused (%d)", r.status);
	resp_clear(&r);
	mkcall(&c, "/hooks/stripe", ping, strlen(ping));
	sign_stripe(&c, SSECRET, (long long)NOW - 3600);
	run(p, &c, &r);
	CHECK(r.status == 400, "a stale ping refused (%d)", r.status);
	resp_clear(&r);
}

/*
 * A CGI process leaves its connection to its exit (pipeline_leave())
 * only when another oncehook connection has the same file open: then its
 * close could not checkpoint the log, and would only free what the exit
 * frees.  Alone, it closes, so that the last process's close copies the
 * log and cuts it.
 */
static void
test_cgi_leave(const struct conf *cf, sqlite3 *q)
{
	static const char	 alone[] = "{\"id\":\"evt-leave-1\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":\"pl1\"}}";
	static const char	 shared[] = "{\"id\":\"evt-leave-2\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":\"pl2\"}}";
	struct pipeline		 p;
	struct resp		 r;
	struct store		*other, *st;
	char			 err[512];

	pipeline_init(&p, cf, NULL);
	p.one_request = 1;
	post_generic(&p, alone, &r);
	CHECK(r.status == 200 && r.err == HOOK_OK, "CGI leave, alone: the "
	    "event processed (%d %s)", r.status, text(&r));
	resp_clear(&r);
	pipeline_after(&p);
	pipeline_leave(&p);
	CHECK(p.st != NULL, "CGI leave: with no other oncehook connection "
	    "to the file, the store is not left to the exit (closed, so the "
	    "last close checkpoints)");
	pipeline_clear(&p);

	if ((other = store_open(cf, STORE_LAZY, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	pipeline_init(&p, cf, NULL);
	p.one_request = 1;
	post_generic(&p, shared, &r);
	CHECK(r.status == 200 && r.err == HOOK_OK, "CGI leave, shared: the "
	    "event processed (%d %s)", r.status, text(&r));
	resp_clear(&r);
	pipeline_after(&p);
	st = p.st;
	pipeline_leave(&p);
	CHECK(st != NULL && p.st == NULL, "CGI leave: with another "
	    "oncehook connection to the file, the store is left to the exit");
	CHECK(count(q, "SELECT count(*) FROM events WHERE key = "
	    "'evt-leave-2'") == 1 && count(q, "SELECT count(*) FROM orders "
	    "WHERE id = 'pl2'") == 1, "CGI leave: the event left with its "
	    "store was committed, with its order");
	pipeline_clear(&p);
	store_close(st);
	store_close(other);
}

/*
 * A CGI process (one request) prepares each statement on its first use.
 * One that cannot be prepared (its table dropped behind oncehook's back)
 * is an error on that request's path, answered and logged, never a
 * crash; what does not need it still works.
 */
static void
test_cgi_unprepared(const struct conf *cf)
{
	static const char	 first[] = "{\"id\":\"evt-u\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":\"pu1\"}}";
	static const char	 other[] = "{\"id\":\"evt-u\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":\"pu2\"}}";
	struct pipeline		 p;
	struct resp		 r;
	sqlite3			*w;

	pipeline_init(&p, cf, NULL);
	p.one_request = 1;
	post_generic(&p, first, &r);
	CHECK(r.status == 200 && r.err == HOOK_OK, "CGI store: a new event "
	    "processed (%d %s)", r.status, text(&r));
	resp_clear(&r);
	pipeline_clear(&p);
	if (sqlite3_open_v2(dbpath, &w, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK || sqlite3_exec(w, "DROP TABLE conflicts", NULL, NULL,
	    NULL) != SQLITE_OK)
		BAIL("drop: %s", sqlite3_errmsg(w));
	sqlite3_close(w);
	pipeline_init(&p, cf, NULL);
	p.one_request = 1;
	post_generic(&p, first, &r);
	CHECK(r.status == 200 && r.err == HOOK_DUP, "CGI store, a table "
	    "gone: a retry still answered from its lookup (%d %s)", r.status,
	    text(&r));
	resp_clear(&r);
	post_generic(&p, other, &r);
	CHECK(r.status == 422 && r.err == HOOK_ECONFLICT, "CGI store, the "
	    "conflicts table gone: the collision answered 422, its row not "
	    "recorded, no crash (%d %s)", r.status, text(&r));
	resp_clear(&r);
	pipeline_clear(&p);
}

/*
 * The shared writer's name is the configuration's: processes whose
 * variables differ (a new retention after a reload) find another writer,
 * while a secret, which the name leaves out, changes nothing.
 */
static struct conf *
writer_env_conf(void)
{
	struct conf	*cf;
	char		 err[512];

	if ((cf = conf_load_env(err, sizeof(err))) == NULL)
		BAIL("conf_load_env: %s", err);
	return cf;
}

static void
test_writer_name(void)
{
	static const char *const names[] = { "ONCEHOOK_DB",
	    "ONCEHOOK_SCHEME", "ONCEHOOK_SECRET", "ONCEHOOK_ACTIONS",
	    "ONCEHOOK_RETENTION", "ONCEHOOK_SYNCHRONOUS" };
	struct sharedwriter	 a, b, c;
	struct conf		*ca, *cb, *cc;
	size_t			 i;

	setenv("ONCEHOOK_DB", dbpath, 1);
	setenv("ONCEHOOK_SCHEME", "stripe", 1);
	setenv("ONCEHOOK_SECRET", "whsec_writer-name-test-0123456789", 1);
	setenv("ONCEHOOK_ACTIONS", actions, 1);
	setenv("ONCEHOOK_SYNCHRONOUS", "full", 1);
	ca = writer_env_conf();
	sharedwriter_init(&a, ca, 0);
	setenv("ONCEHOOK_RETENTION", "72h", 1);
	cb = writer_env_conf();
	sharedwriter_init(&b, cb, 0);
	setenv("ONCEHOOK_SECRET", "whsec_writer-name-test-another-one", 1);
	cc = writer_env_conf();
	sharedwriter_init(&c, cc, 0);
	CHECK(a.addrlen > 0 && b.addrlen == a.addrlen &&
	    memcmp(a.addr.sun_path, b.addr.sun_path, a.addrlen -
	    offsetof(struct sockaddr_un, sun_path)) != 0,
	    "writer name: another ONCEHOOK_RETENTION, another writer");
	CHECK(c.addrlen == b.addrlen && memcmp(b.addr.sun_path,
	    c.addr.sun_path, b.addrlen - offsetof(struct sockaddr_un,
	    sun_path)) == 0,
	    "writer name: another secret, the same writer");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unsetenv(names[i]);
	conf_free(ca);
	conf_free(cb);
	conf_free(cc);
}

/*
 * A run of new events claimed straight by the process itself (an engine
 * with ENGINE_DIRECT_CLAIM, MariaDB's INSERT ... ON DUPLICATE KEY; here
 * the fake), no writer: other bytes under a known key whose claim fails
 * (a row lock past its wait) are answered 422 from a read, and the
 * conflict is recorded (SPEC: a conflict is recorded), once.  Before,
 * the process left it to a writer there was none of.
 */
static void
test_direct_conflict(const struct conf *cf)
{
	struct pipeline	 p;
	struct resp	 r;
	long long	 before;
	int		 ok;

	pipeline_init(&p, cf, NULL);
	if ((p.st = fake_open(cf, ENGINE_DIRECT_CLAIM)) == NULL)
		BAIL("fake_open");
	ok = post_new(&p, "x", PIPELINE_DIRECT_AFTER);
	before = fake_conflicts(p.st);
	fake_fault(p.st, "insert", 1, FAKE_BUSY);
	post_direct(&p, "x", 1, 7, &r);
	CHECK(ok && r.status == 422 && r.err == HOOK_ECONFLICT &&
	    fake_conflicts(p.st) == before + 1, "direct, no writer: other "
	    "bytes under a known key, the claim out of time: 422 from a read "
	    "(%d), the conflict recorded (%lld of 1)", r.status,
	    fake_conflicts(p.st) - before);
	resp_clear(&r);
	/* A claim that answers the conflict itself records it, once. */
	ok = post_new(&p, "y", PIPELINE_DIRECT_AFTER);
	before = fake_conflicts(p.st);
	post_direct(&p, "y", 1, 7, &r);
	CHECK(ok && r.status == 422 && fake_conflicts(p.st) == before + 1,
	    "direct, no writer: the claim's own conflict, recorded once "
	    "(%d, %lld)", r.status, fake_conflicts(p.st) - before);
	resp_clear(&r);
	pipeline_clear(&p);
}

/* The counters slot of endpoint name in the file at path, copied. */
static int
slot_of(const char *path, const char *name, struct ctr_slot_data *out)
{
	static struct ctr_file	 f;
	char			 err[256];
	size_t			 i;

	if (counters_read(path, &f, err, sizeof(err)) == -1)
		return -1;
	for (i = 0; i < CTR_SLOTS; i++)
		if (strcmp(f.slots[i].name, name) == 0) {
			*out = f.slots[i];
			return 0;
		}
	return -1;
}

/*
 * An Adyen batch of two items (Adyen's example and a CAPTURE signed with
 * the same key, python3 hmac): two events, answered [accepted] as text,
 * a line in the log and a count for each item; the retry two duplicates.
 */
static void
test_adyen(struct pipeline *p, sqlite3 *q)
{
	static const char	 body[] =
	    "{\"live\":\"false\",\"notificationItems\":[{\"NotificationRequ"
	    "estItem\":{\"additionalData\":{\"hmacSignature\":\"coqCmt/IZ4E"
	    "3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0=\"},\"amount\":{\"currency\":"
	    "\"EUR\",\"value\":1130},\"eventCode\":\"AUTHORISATION\",\"merc"
	    "hantAccountCode\":\"TestMerchant\",\"merchantReference\":\"Tes"
	    "tPayment-1407325143704\",\"pspReference\":\"7914073381342284\""
	    ",\"success\":\"true\"}},{\"NotificationRequestItem\":{\"additi"
	    "onalData\":{\"hmacSignature\":\"rKxT8vkWa8XDU5V25GbIZ33K7PcuZU"
	    "f3elUo9j+g3Y8=\"},\"amount\":{\"currency\":\"EUR\",\"value\":2"
	    "260},\"eventCode\":\"CAPTURE\",\"merchantAccountCode\":\"TestM"
	    "erchant\",\"merchantReference\":\"TestPayment-1407325143705\","
	    "\"pspReference\":\"7914073381342285\",\"success\":\"true\"}}]}";
	struct ctr_slot_data	 sl;
	struct call		 c;
	struct resp		 r;
	char			 logpath[128], line[1024];
	FILE			*lf;
	int			 saved, fd, items = 0, first = 0;

	snprintf(logpath, sizeof(logpath), "%s/adyen.log", dir);
	fflush(stderr);
	if ((saved = dup(2)) == -1 || (fd = open(logpath, O_WRONLY | O_CREAT |
	    O_TRUNC, 0600)) == -1 || dup2(fd, 2) == -1)
		BAIL("redirecting stderr: %s", strerror(errno));
	close(fd);
	mkcall(&c, "/hooks/adyen", body, strlen(body));
	run(p, &c, &r);
	fflush(stderr);
	if (dup2(saved, 2) == -1)
		BAIL("dup2: %s", strerror(errno));
	close(saved);
	CHECK(r.status == 200 && r.err == HOOK_OK && r.body != NULL &&
	    strcmp(r.body, "[accepted]") == 0 && r.ctype != NULL &&
	    strcmp(r.ctype, "text/plain") == 0,
	    "adyen: a batch of two items -> 200 [accepted], text/plain "
	    "(%d %s)", r.status, text(&r));
	resp_clear(&r);
	CHECK(count(q, "SELECT count(*) FROM events WHERE endpoint = 'adyen' "
	    "AND status = 'processed' AND key IN ('7914073381342284:"
	    "AUTHORISATION:true', '7914073381342285:CAPTURE:true')") == 2,
	    "adyen: each item an event, keyed pspReference:eventCode:success");
	CHECK(count(q, "SELECT count(*) FROM events WHERE endpoint = 'adyen' "
	    "AND json_extract(payload, '$.amount.value') = 2260 AND "
	    "type = 'CAPTURE'") == 1,
	    "adyen: an item's payload is its object, its type its eventCode");
	if ((lf = fopen(logpath, "r")) == NULL)
		BAIL("%s: %s", logpath, strerror(errno));
	while (fgets(line, sizeof(line), lf) != NULL) {
		if (strstr(line, "item=1/2") != NULL &&
		    strstr(line, "7914073381342284:AUTHORISATION:true") !=
		    NULL && strstr(line, "outcome=processed") != NULL)
			first++;
		if (strstr(line, "item=") != NULL)
			items++;
	}
	fclose(lf);
	CHECK(first == 1 && items == 2,
	    "adyen: the log has one line per item (%d, %d)", first, items);
	mkcall(&c, "/hooks/adyen", body, strlen(body));
	run(p, &c, &r);
	CHECK(r.status == 200 && r.err == HOOK_DUP && r.body != NULL &&
	    strcmp(r.body, "[accepted]") == 0,
	    "adyen: the batch again -> 200 [accepted], duplicates (%d %s)",
	    r.status, text(&r));
	resp_clear(&r);
	CHECK(slot_of(p->cf->counters_file, "adyen", &sl) == 0 &&
	    sl.out[HOOK_OK] == 2 && sl.out[HOOK_DUP] == 2,
	    "adyen: the counters count each item: 2 processed, 2 duplicates");
}

int
main(void)
{
	char		 err[512];
	struct pipeline	 p;
	struct conf	*cf;
	struct store	*st;
	sqlite3		*q;

	snprintf(dir, sizeof(dir), "/tmp/oncehook-t_pipeline-XXXXXX");
	if (mkdtemp(dir) == NULL)
		BAIL("mkdtemp: %s", strerror(errno));
	snprintf(dbpath, sizeof(dbpath), "%s/hooks.sqlite", dir);
	snprintf(actions, sizeof(actions), "%s/sql/actions/orders.sql",
	    tap_srcdir());

	cf = mkconf(dbpath);
	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	store_close(st);
	if (sqlite3_open_v2(dbpath, &q, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK)
		BAIL("sqlite3_open: %s", sqlite3_errmsg(q));

	pipeline_init(&p, cf, NULL);
	test_delivery(&p, q);
	test_same_bytes(&p);
	test_refusals(&p, q);
	test_media(&p, q);
	test_sizes(&p, q);
	test_stripe(&p, q);
	test_busy(&p, q);
	test_routing(&p);
	test_slack(&p, q);
	test_zoom(&p, q);
	test_adyen(&p, q);
	test_stripe_ping(&p, q);
	test_idle_release(&p, q);
	pipeline_clear(&p);
	test_writer_peers(cf);
	test_writer_signed(cf, q);
	test_writer_split();
	test_writer_name();
	test_writer_copy(cf, q, 1);
	test_writer_copy(cf, q, 0);
	test_writer_past_deadline(cf, q);
	test_writer_batch_copy(cf, q);
	test_writer_direct(cf, q);
	test_writer_direct_failing(cf);
	test_writer_cgi(cf);
	test_writer_cgi_bad(cf);
	test_writer_cgi_copy(cf);
	test_direct_conflict(cf);
	test_misconfigured();
	test_cgi_leave(cf, q);
	test_cgi_unprepared(cf);	/* last: it drops a table */

	sqlite3_close(q);
	conf_free(cf);
	tap_rmdir(dir);
	return tap_done();
}
