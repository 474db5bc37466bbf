/* SPDX-License-Identifier: MIT */
/*
 * oncehook: group commit under `oncehook serve` (see writer/writer.h).
 */
#define _GNU_SOURCE		/* accept4, struct ucred */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "hook.h"
#include "lib/buf.h"
#include "lib/crypto.h"
#include "lib/io.h"
#include "lib/log.h"
#include "pipeline/event.h"
#include "store/sqlite/copier.h"
#include "store/store.h"
#include "writer/writer.h"

/* No claim frame is larger: two copies of the largest body, and change. */
#define FRAME_MAX(cf)	(2 * (size_t)(cf)->maxbody + 4096)
#define RESULT_MAX	(sizeof(((struct store_claim *)0)->why) + 64)

static int
put_u32(struct buf *b, uint32_t v)
{
	return buf_add(b, &v, sizeof(v));
}

/* A string, or WRITER_NONE for NULL. */
static int
put_str(struct buf *b, const char *s, size_t n)
{
	if (s == NULL)
		return put_u32(b, WRITER_NONE);
	if (n >= WRITER_NONE)
		return -1;
	return put_u32(b, (uint32_t)n) == -1 ? -1 : buf_add(b, s, n);
}

/* Reading a frame: where, and what is left; NULL p once it ran short. */
struct rd {
	const char	*p;
	size_t		 left;
};

static int
get(struct rd *r, void *out, size_t n)
{
	if (r->p == NULL || r->left < n) {
		r->p = NULL;
		return -1;
	}
	memcpy(out, r->p, n);
	r->p += n;
	r->left -= n;
	return 0;
}

/* A string in place: *s (NULL for WRITER_NONE) and *n. */
static int
get_str(struct rd *r, const char **s, size_t *n)
{
	uint32_t	 len;

	if (get(r, &len, sizeof(len)) == -1)
		return -1;
	if (len == WRITER_NONE) {
		*s = NULL;
		*n = 0;
		return 0;
	}
	if (r->left < len) {
		r->p = NULL;
		return -1;
	}
	*s = r->p;
	*n = len;
	r->p += len;
	r->left -= len;
	return 0;
}

/* --- The worker's side ------------------------------------------------ */

/*
 * Read exactly n bytes from the socket fd within the deadline: 0, or
 * READ_LATE (out of time with none of them read: nothing is out of
 * step), or -1 (why in *what).  With wait, it waits first (an answer not
 * sent yet); without, it reads first (the rest of a frame whose start
 * came) and waits only if there is nothing: one poll(2) a call fewer.
 */
#define READ_LATE	(-2)

static int
read_full(int fd, char *p, size_t n, const struct timespec *t0,
    long timeout_ms, int wait, const char **what)
{
	struct pollfd	 pfd;
	ssize_t		 r;
	long		 left;
	size_t		 want = n;

	pfd.fd = fd;
	pfd.events = POLLIN;
	while (n > 0) {
		if (wait) {
			if ((left = timeout_ms - io_ms_since(t0)) <= 0) {
				*what = "did not answer in time";
				return n < want ? -1 : READ_LATE;
			}
			if (poll(&pfd, 1, (int)left) == -1) {
				if (errno == EINTR)
					continue;
				*what = "cannot be waited for";
				return -1;
			}
			if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
		}
		wait = 1;
		if ((r = recv(fd, p, n, MSG_DONTWAIT)) == -1) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			*what = "is gone";
			return -1;
		}
		if (r == 0) {
			*what = "is gone";
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * Write all n bytes within the deadline: 0; or -1 with *sent how many
 * went (0: the writer has nothing of this frame).  It writes first and
 * waits only for room (a writer behind on its reading): the deadline
 * bounds that wait, so a process that was not scheduled until past it
 * still hands over a frame the socket has room for.
 */
static int
write_full(int fd, const char *p, size_t n, const struct timespec *t0,
    long timeout_ms, size_t *sent)
{
	struct pollfd	 pfd;
	ssize_t		 w;
	long		 left;
	int		 wait = 0;

	*sent = 0;
	pfd.fd = fd;
	pfd.events = POLLOUT;
	while (*sent < n) {
		if (wait) {
			if ((left = timeout_ms - io_ms_since(t0)) <= 0)
				return -1;
			if (poll(&pfd, 1, (int)left) == -1) {
				if (errno == EINTR)
					continue;
				return -1;
			}
			if (!(pfd.revents & (POLLOUT | POLLHUP | POLLERR)))
				continue;
		}
		wait = 1;
		if ((w = send(fd, p + *sent, n - *sent, MSG_DONTWAIT |
		    MSG_NOSIGNAL)) == -1) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			return -1;
		}
		*sent += (size_t)w;
		wait = 0;
	}
	return 0;
}

int
writer_hello(int fd, long timeout_ms)
{
	struct timespec	 t0;
	const char	*what;
	uint32_t	 magic;

	io_clock(&t0);
	if (read_full(fd, (char *)&magic, sizeof(magic), &t0, timeout_ms, 1,
	    &what) != 0 || magic != WRITER_HELLO)
		return -1;
	return 0;
}

static void
claim_failed(struct store_claim *c, const char *what)
{
	c->result = HOOK_EBUSY;
	snprintf(c->why, sizeof(c->why), "the writer process %s; nothing is "
	    "acknowledged (503)", what);
}

void
writer_link_init(struct writer_link *l, int fd, long timeout_ms)
{
	memset(l, 0, sizeof(*l));
	l->fd = fd;
	l->next = 1;
	l->timeout_ms = timeout_ms;
}

int
writer_claim(void *arg, struct store_claim *c)
{
	struct writer_link	*l = arg;
	const struct event	*ev = c->ev;
	struct buf		 b = { l->out, 0, l->outcap };
	struct timespec		 t0;
	struct rd		 r;
	const char		*what = "cannot be reached", *why;
	char			 reply[RESULT_MAX];
	uint64_t		 id, got;
	uint32_t		 len, u, flags;
	int32_t			 result;
	int64_t			 at = ev->received_at;
	size_t			 whysz, sent;
	int			 rc, late = 0;

	c->result = HOOK_EBUSY;
	c->why[0] = '\0';
	if (l->broken || l->fd < 0)
		return -1;
	if (l->pid == 0)
		l->pid = getpid();
	id = ((uint64_t)l->pid << 32) | (l->next++ & 0xffffffffu);
	u = (uint32_t)c->endpoint;
	if (put_u32(&b, 0) == -1 || buf_add(&b, &id, sizeof(id)) == -1 ||
	    put_u32(&b, u) == -1 || buf_add(&b, &at, sizeof(at)) == -1 ||
	    buf_add(&b, ev->hash, CRYPTO_SHA256_HEXLEN) == -1 ||
	    put_str(&b, ev->key, strlen(ev->key)) == -1 ||
	    put_u32(&b, (uint32_t)ev->key_signed) == -1 ||
	    put_str(&b, ev->signed_key, ev->signed_key ?
	    strlen(ev->signed_key) : 0) == -1 ||
	    put_str(&b, ev->type, ev->type ? strlen(ev->type) : 0) == -1 ||
	    put_str(&b, ev->payload, ev->payloadsz) == -1 ||
	    put_str(&b, ev->norm, ev->normsz) == -1) {
		l->out = b.p;
		l->outcap = b.cap;
		return -1;		/* out of memory: nothing sent */
	}
	/* The buffer is kept for the next claim. */
	l->out = b.p;
	l->outcap = b.cap;
	len = (uint32_t)(b.len - sizeof(len));
	memcpy(b.p, &len, sizeof(len));
	io_clock(&t0);
	/*
	 * The writer runs whole frames only: a write that failed (or found
	 * no room in time: a writer stuck or stopped) before any byte left
	 * the claim to the caller.  Part of a frame sent is not a claim the
	 * writer can run, but the link is then useless, and the caller
	 * cannot know better than 503.
	 */
	if (write_full(l->fd, b.p, b.len, &t0, l->timeout_ms, &sent) == -1) {
		l->broken = 1;
		if (sent == 0)
			return -1;
		claim_failed(c, "could not be handed the whole claim in time");
		return 0;
	}
	/* Replies to a predecessor's claims on this pair are dropped. */
	for (;;) {
		if ((rc = read_full(l->fd, (char *)&len, sizeof(len), &t0,
		    l->timeout_ms, 1, &what)) != 0) {
			late = rc == READ_LATE;
			break;
		}
		if (len < sizeof(id) + sizeof(result) + 3 * sizeof(u) ||
		    len > sizeof(reply)) {
			what = "answered nonsense";
			break;
		}
		if (read_full(l->fd, reply, len, &t0, l->timeout_ms, 0,
		    &what) != 0)
			break;		/* its length read: out of step */
		r.p = reply;
		r.left = len;
		if (get(&r, &got, sizeof(got)) == -1 ||
		    get(&r, &result, sizeof(result)) == -1 ||
		    get(&r, &u, sizeof(u)) == -1 ||
		    get(&r, &flags, sizeof(flags)) == -1 ||
		    get_str(&r, &why, &whysz) == -1) {
			what = "answered nonsense";
			break;
		}
		if (got != id)
			continue;
		l->peers = u;
		c->copy = (flags & WRITER_COPY) != 0;
		c->result = (enum hook_err)result;
		snprintf(c->why, sizeof(c->why), "%.*s", (int)whysz,
		    why ? why : "");
		return 0;
	}
	/* Only a late answer, none of it read, leaves the link usable (it
	 * is dropped when it comes). */
	if (!late)
		l->broken = 1;
	claim_failed(c, what);
	return 0;
}

/* --- The writer ------------------------------------------------------- */

/* One worker's socket, and what it sent that is not yet a whole claim. */
struct peer {
	int		 fd;
	struct buf	 in;
	int		 dead;		/* broken: no longer read */
	int		 sent;		/* it has sent something, at last */
	struct timespec	 last;
};

/*
 * A peer that sent something within the last WRITER_ACTIVE_MS counts in
 * the answers' number of peers (writer/writer.h): a quiet site's processes,
 * connected since a busy moment, claim their own events again.
 */
#define WRITER_ACTIVE_MS	2000

/* A claim in the batch: its frame (the event points into it). */
struct pending {
	struct peer		*from;
	uint64_t		 id;
	size_t			 endpoint;	/* index in cf->endpoints */
	char			*frame;
	char			*key;
	char			*signed_key;
	char			*type;
	struct event		 ev;
};

static volatile sig_atomic_t	 stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* Parse one claim frame (owned by p afterwards): 0, or -1 if malformed. */
static int
pending_parse(struct pending *p, char *frame, size_t len,
    const struct conf *cf)
{
	struct rd	 r = { frame, len };
	const char	*key, *skey, *type, *payload, *norm;
	size_t		 keysz, skeysz, typesz, payloadsz, normsz;
	uint32_t	 ep, ksigned;
	int64_t		 at;

	memset(p, 0, sizeof(*p));
	p->frame = frame;
	if (get(&r, &p->id, sizeof(p->id)) == -1 ||
	    get(&r, &ep, sizeof(ep)) == -1 || get(&r, &at, sizeof(at)) == -1 ||
	    get(&r, p->ev.hash, CRYPTO_SHA256_HEXLEN) == -1 ||
	    get_str(&r, &key, &keysz) == -1 ||
	    get(&r, &ksigned, sizeof(ksigned)) == -1 || ksigned > 1 ||
	    get_str(&r, &skey, &skeysz) == -1 ||
	    get_str(&r, &type, &typesz) == -1 ||
	    get_str(&r, &payload, &payloadsz) == -1 ||
	    get_str(&r, &norm, &normsz) == -1 || r.left != 0 ||
	    key == NULL || payload == NULL || ep >= cf->nendpoints)
		return -1;
	p->ev.hash[CRYPTO_SHA256_HEXLEN] = '\0';
	if ((p->key = strndup(key, keysz)) == NULL ||
	    (skey != NULL && (p->signed_key = strndup(skey, skeysz)) ==
	    NULL) ||
	    (type != NULL && (p->type = strndup(type, typesz)) == NULL))
		return -1;
	p->ev.key = p->key;
	p->ev.key_signed = (int)ksigned;
	p->ev.signed_key = p->signed_key;
	p->ev.type = p->type;
	p->ev.payload = payload;
	p->ev.payloadsz = payloadsz;
	p->ev.norm = (char *)norm;	/* borrowed: never event_clear()ed */
	p->ev.normsz = normsz;
	p->ev.received_at = at;
	p->endpoint = ep;
	return 0;
}

static void
pending_free(struct pending *p)
{
	free(p->frame);
	free(p->key);
	free(p->signed_key);
	free(p->type);
}

/* Read what peer q has for us (non-blocking): 0, or -1 if it broke. */
static int
peer_read(struct peer *q)
{
	ssize_t	 r;
	size_t	 want;

	for (;;) {
		if (buf_room(&q->in, 65535) == -1)
			return -1;
		want = q->in.cap - q->in.len;
		r = read(q->fd, q->in.p + q->in.len, want);
		if (r > 0) {
			q->in.len += (size_t)r;
			/* Less than asked: drained for now (poll says when
			 * more comes), without a read that finds nothing. */
			if ((size_t)r < want)
				return 0;
			continue;
		}
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return -1;		/* end of file, or an error */
	}
}

/*
 * Take the whole claims waiting in q's buffer into the batch, up to max:
 * how many were taken; a malformed frame breaks the peer.
 */
static size_t
peer_take(struct peer *q, struct pending *batch, size_t max,
    const struct conf *cf)
{
	uint32_t	 len;
	size_t		 n = 0, off = 0;
	char		*frame;

	while (n < max && q->in.len - off >= sizeof(len)) {
		memcpy(&len, q->in.p + off, sizeof(len));
		if (len > FRAME_MAX(cf)) {
			log_error("writer: a claim of %u bytes from a worker: "
			    "not from oncehook; its socket is no longer read",
			    len);
			q->dead = 1;
			break;
		}
		if (q->in.len - off - sizeof(len) < len)
			break;
		if ((frame = malloc(len ? len : 1)) == NULL)
			break;
		memcpy(frame, q->in.p + off + sizeof(len), len);
		off += sizeof(len) + len;
		if (pending_parse(&batch[n], frame, len, cf) == -1) {
			log_error("writer: a malformed claim from a worker: "
			    "dropped");
			pending_free(&batch[n]);
			continue;
		}
		batch[n].from = q;
		n++;
	}
	if (off > 0) {
		memmove(q->in.p, q->in.p + off, q->in.len - off);
		q->in.len -= off;
	}
	return n;
}

/*
 * Send each claim of the batch its result and the number of peers
 * active, the first one also the flags (writer/writer.h: one process asked to
 * copy the log is enough), then free the batch.
 */
static void
batch_answer(struct pending *batch, const struct store_claim *claims,
    size_t n, uint32_t peers, uint32_t flags)
{
	struct buf	 b = { NULL, 0, 0 };
	uint32_t	 len;
	int32_t		 result;
	size_t		 i;

	for (i = 0; i < n; i++) {
		b.len = 0;
		result = (int32_t)claims[i].result;
		if (put_u32(&b, 0) == 0 &&
		    buf_add(&b, &batch[i].id, sizeof(batch[i].id)) == 0 &&
		    buf_add(&b, &result, sizeof(result)) == 0 &&
		    put_u32(&b, peers) == 0 &&
		    put_u32(&b, i == 0 ? flags : 0) == 0 &&
		    put_str(&b, claims[i].why, strlen(claims[i].why)) == 0) {
			len = (uint32_t)(b.len - sizeof(len));
			memcpy(b.p, &len, sizeof(len));
			/* A worker that died meanwhile: nobody to tell. */
			(void)io_write_all(batch[i].from->fd, b.p, b.len);
		}
		pending_free(&batch[i]);
	}
	free(b.p);
}

/* The writer's store, opened on first use; NULL with *why if it cannot. */
static struct store *
writer_store(const struct conf *cf, struct store **st, enum hook_err *er,
    char *why, size_t whysz)
{
	if (*st == NULL)
		*er = store_connect(cf, STORE_LAZY, st, why, whysz);
	return *st;
}

/* Claim the batch in one transaction, or fail it as the store does. */
static void
batch_run(const struct conf *cf, struct store **st, struct pending *batch,
    struct store_claim *claims, size_t n, unsigned long *stats)
{
	enum hook_err	 er = HOOK_OK;
	char		 why[256];
	size_t		 i;

	for (i = 0; i < n; i++) {
		memset(&claims[i], 0, sizeof(claims[i]));
		claims[i].endpoint = batch[i].endpoint;
		claims[i].ev = &batch[i].ev;
	}
	if (writer_store(cf, st, &er, why, sizeof(why)) == NULL) {
		log_warnx("writer: %s", why);
		for (i = 0; i < n; i++) {
			claims[i].result = er == HOOK_ESYSTEM ? HOOK_ESYSTEM :
			    HOOK_EBUSY;
			snprintf(claims[i].why, sizeof(claims[i].why), "%s",
			    why);
		}
		return;
	}
	(void)store_claim(*st, claims, n);
	stats[0]++;
	stats[1] += n;
	if (n > stats[2])
		stats[2] = n;
	for (i = 0; i < n; i++)
		stats[3] += hook_known(claims[i].result);
	log_debug("writer: a batch of %zu claims", n);
}

/* The writer's peers: serve's workers, or whoever connected. */
struct peers {
	struct peer	*v;
	struct pollfd	*pfd;		/* [0] the listener, then v's */
	size_t		 n, cap;
	int		 lfd;		/* listening, or -1 (serve) */
	uid_t		 uid;		/* who may connect */
};

/* Room for one peer more: 0, or -1. */
static int
peers_room(struct peers *ps)
{
	struct peer	*nv;
	struct pollfd	*np;
	size_t		 cap;

	if (ps->n < ps->cap)
		return 0;
	cap = ps->cap ? ps->cap * 2 : 8;
	if ((nv = reallocarray(ps->v, cap, sizeof(*nv))) == NULL)
		return -1;
	ps->v = nv;
	if ((np = reallocarray(ps->pfd, cap + 1, sizeof(*np))) == NULL)
		return -1;
	ps->pfd = np;
	ps->cap = cap;
	return 0;
}

/* A new peer on fd (non-blocking from now): 0, or -1 (fd closed). */
static int
peers_add(struct peers *ps, int fd)
{
	int	 fl;

	if (peers_room(ps) == -1) {
		close(fd);
		return -1;
	}
	if ((fl = fcntl(fd, F_GETFL)) != -1)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	memset(&ps->v[ps->n], 0, sizeof(ps->v[ps->n]));
	ps->v[ps->n++].fd = fd;
	return 0;
}

/* Everyone waiting to connect, if they are this user: how many came. */
static size_t
peers_accept(struct peers *ps)
{
	struct ucred	 cr;
	socklen_t	 crlen;
	size_t		 n = 0;
	uint32_t	 hello = WRITER_HELLO;
	int		 fd;

	for (;;) {
		if ((fd = accept4(ps->lfd, NULL, NULL,
		    SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				log_warn("writer: accept");
			return n;
		}
		crlen = sizeof(cr);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr,
		    &crlen) == -1 || cr.uid != ps->uid) {
			log_error("writer: a connection from user id %ld, "
			    "not this one's (%ld): refused",
			    crlen == sizeof(cr) ? (long)cr.uid : -1L,
			    (long)ps->uid);
			close(fd);
			continue;
		}
		/* The hello says this writer will read what comes: a
		 * process claims nothing through a writer that never said
		 * it (one that was ending, or never started). */
		if (io_write_all(fd, &hello, sizeof(hello)) == -1) {
			close(fd);
			continue;
		}
		if (peers_add(ps, fd) == -1)
			log_error("writer: out of memory: a process is "
			    "refused (it claims its events itself)");
		else
			n++;
	}
}

/* After the batches: the peers that went away are forgotten. */
static void
peers_sweep(struct peers *ps)
{
	size_t	 i, j;

	for (i = j = 0; i < ps->n; i++) {
		if (ps->v[i].dead) {
			close(ps->v[i].fd);
			free(ps->v[i].in.p);
			continue;
		}
		ps->v[j++] = ps->v[i];
	}
	ps->n = j;
}

/*
 * The loop of both writers: claims in batches until SIGTERM, or, with a
 * listener, until no peer has been connected for linger_ms.
 */
static int
writer_loop(const struct conf *cf, struct peers *ps, long linger_ms)
{
	static struct pending		 batch[WRITER_BATCH_MAX];
	static struct store_claim	 claims[WRITER_BATCH_MAX];
	struct sigaction		 sa;
	struct store			*st = NULL;
	struct copier			*cp = NULL;
	struct pollfd			*pfd;
	struct timespec			 alone;
	sigset_t			 set;
	unsigned long			 stats[4] = { 0, 0, 0, 0 };
	enum store_copy			 due;
	size_t				 i, nb, np, live, start = 0;
	int				 rc, l = ps->lfd >= 0;
	int				 released = 1;

	/* ps and the tests tell it from the workers. */
	(void)prctl(PR_SET_NAME, "oncehook-writer", 0, 0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;	/* no SA_RESTART: poll() ends */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	io_clock(&alone);
	if (!cf->synchronous_full)
		cp = copier_start(cf);

	while (!stop) {
		if (peers_room(ps) == -1) {
			log_error("writer: out of memory");
			break;
		}
		pfd = ps->pfd + 1;
		ps->pfd[0].fd = ps->lfd;
		ps->pfd[0].events = POLLIN;
		ps->pfd[0].revents = 0;
		for (i = 0; i < ps->n; i++) {
			pfd[i].fd = ps->v[i].dead ? -1 : ps->v[i].fd;
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		if ((rc = poll(ps->pfd, ps->n + 1, 1000)) == -1 &&
		    errno != EINTR)
			break;
		if (rc <= 0) {
			/* Idle: the moved-file check, and the log's upkeep;
			 * the first idle second, memory given back. */
			if (st != NULL && (store_idle(st) ||
			    store_broken(st))) {
				store_close(st);
				st = NULL;
			}
			if (!released) {
				if (st != NULL)
					store_upkeep(st, STORE_RELEASE);
				io_trim();
				released = 1;
			}
			if (l && ps->n == 0 && io_ms_since(&alone) >= linger_ms)
				break;
			continue;
		}
		np = ps->n;
		live = 0;
		for (i = 0; i < np; i++) {
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				if (peer_read(&ps->v[i]) == -1)
					ps->v[i].dead = 1;
				else {
					ps->v[i].sent = 1;
					io_clock(&ps->v[i].last);
				}
			}
			live += !ps->v[i].dead && ps->v[i].sent &&
			    io_ms_since(&ps->v[i].last) < WRITER_ACTIVE_MS;
		}
		/* Every whole claim waiting, fairly from peer to peer. */
		do {
			nb = 0;
			for (i = 0; i < np && nb < WRITER_BATCH_MAX; i++)
				nb += peer_take(&ps->v[(start + i) % np],
				    batch + nb, WRITER_BATCH_MAX - nb, cf);
			start = np ? (start + 1) % np : 0;
			if (nb == 0)
				break;
			released = 0;
			batch_run(cf, &st, batch, claims, nb, stats);
			due = st != NULL ? store_upkeep(st, STORE_COPY_DUE) :
			    STORE_COPY_NONE;
			batch_answer(batch, claims, nb, (uint32_t)live,
			    due == STORE_COPY_ASK && cp == NULL ? WRITER_COPY :
			    0);
			if (due == STORE_COPY_ASK)
				copier_ask(cp);
			else if (due == STORE_COPY_CHECKPOINT)
				copier_wait(cp, COPIER_WAIT_MS);
			if (st != NULL) {
				store_upkeep(st, STORE_MAINTAIN);
				store_drop_broken(&st);
			}
		} while (nb == WRITER_BATCH_MAX);
		if (l) {
			/*
			 * Last: accept may move pfd and the peers.  A new
			 * process sees the database at the path as it is
			 * now; so does the writer for it, opening it again
			 * when it was replaced or can no longer be written
			 * (made read-only since).  Not at every new process:
			 * under CGI each request is one.
			 */
			if (ps->pfd[0].revents & POLLIN &&
			    peers_accept(ps) > 0 && st != NULL &&
			    (store_idle(st) || faccessat(AT_FDCWD, cf->db,
			    W_OK, AT_EACCESS) == -1)) {
				store_close(st);
				st = NULL;
			}
			/* Alone from the pass the last peer left in. */
			if (np > 0 || ps->n > 0)
				io_clock(&alone);
			peers_sweep(ps);
		}
	}
	/* Nobody new from here: a process that connects now finds the
	 * name free (and starts another writer), or gets no hello. */
	if (l)
		close(ps->lfd);
	log_info("writer: %lu claims in %lu transactions (%.1f a "
	    "transaction, largest %lu); %lu found their key stored",
	    stats[1], stats[0], stats[0] ? (double)stats[1] /
	    (double)stats[0] : 0.0, stats[2], stats[3]);
	copier_stop(cp);
	store_close(st);
	for (i = 0; i < ps->n; i++) {
		if (l)
			close(ps->v[i].fd);
		free(ps->v[i].in.p);
	}
	free(ps->v);
	free(ps->pfd);
	return 0;
}

int
writer_main(const struct conf *cf, const int *fds, size_t n)
{
	struct peers	 ps;
	size_t		 i;

	memset(&ps, 0, sizeof(ps));
	ps.lfd = -1;
	for (i = 0; i < n; i++)
		if (peers_add(&ps, fds[i]) == -1) {
			log_error("writer: out of memory");
			return 1;
		}
	return writer_loop(cf, &ps, 0);
}

int
writer_listen(const struct conf *cf, int lfd, long linger_ms)
{
	struct peers	 ps;
	int		 fl;

	memset(&ps, 0, sizeof(ps));
	ps.lfd = lfd;
	ps.uid = geteuid();
	if ((fl = fcntl(lfd, F_GETFL)) != -1)
		(void)fcntl(lfd, F_SETFL, fl | O_NONBLOCK);
	return writer_loop(cf, &ps, linger_ms);
}
