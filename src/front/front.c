/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the FastCGI and CGI front (see front/front.h).
 *
 * Both paths build the same struct req from a CGI environment (the
 * process's for CGI, the request's parameters for FastCGI) and write the
 * same CGI-style response, so the pipeline cannot tell them apart.
 */
#include "config.h"

#define _GNU_SOURCE		/* ppoll */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "front/front.h"
#include "front/req.h"
#include "front/resp.h"
#include "hook.h"
#include "lib/io.h"
#include "lib/log.h"
#include "observe/counters.h"
#include "pipeline/pipeline.h"

extern char	**environ;

/*
 * The request's variables, borrowed from an environment array.  The
 * header array grows to the largest request seen and is kept for the
 * process.
 */
struct cgienv {
	struct req_header	*headers;
	size_t			 cap;
	struct req		 rq;
};

static const char *
env_find(char **envp, const char *name)
{
	size_t	 len = strlen(name);

	for (; *envp != NULL; envp++)
		if (strncmp(*envp, name, len) == 0 && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

/*
 * Fill ce->rq from envp; the body reader is the caller's.  Returns 0,
 * or -1 if out of memory.
 */
static int
from_env(struct cgienv *ce, char **envp, req_read_fn rd, void *arg)
{
	struct req		*rq = &ce->rq;
	struct req_header	*nh;
	const char		*eq;
	size_t			 n = 0;
	char			**e;

	for (e = envp; *e != NULL; e++)
		n += strncmp(*e, "HTTP_", 5) == 0;
	if (n > ce->cap) {
		if ((nh = reallocarray(ce->headers, n, sizeof(*nh))) == NULL)
			return -1;
		ce->headers = nh;
		ce->cap = n;
	}
	n = 0;

	memset(rq, 0, sizeof(*rq));
	rq->method = env_find(envp, "REQUEST_METHOD");
	rq->path_info = env_find(envp, "PATH_INFO");
	rq->script_name = env_find(envp, "SCRIPT_NAME");
	rq->content_type = env_find(envp, "CONTENT_TYPE");
	rq->content_length = env_find(envp, "CONTENT_LENGTH");
	rq->document_root = env_find(envp, "DOCUMENT_ROOT");
	rq->context_root = env_find(envp, "CONTEXT_DOCUMENT_ROOT");
	rq->query_string = env_find(envp, "QUERY_STRING");
	for (e = envp; *e != NULL && n < ce->cap; e++) {
		if (strncmp(*e, "HTTP_", 5) != 0 ||
		    (eq = strchr(*e, '=')) == NULL)
			continue;
		ce->headers[n].name = *e;
		ce->headers[n].namelen = (size_t)(eq - *e);
		ce->headers[n].value = eq + 1;
		n++;
	}
	rq->headers = ce->headers;
	rq->nheaders = n;
	rq->read = rd;
	rq->readarg = arg;
	return 0;
}

int
front_is_cgi(void)
{
	return FCGX_IsCGI();
}

#define CGI_DRAIN_MAX	(64LL << 20)	/* bytes read and dropped at most */

static ssize_t
cgi_read(void *arg, char *buf, size_t n)
{
	long long	*consumed = arg;
	ssize_t		 r;

	do
		r = read(STDIN_FILENO, buf, n);
	while (r == -1 && errno == EINTR);
	if (r > 0)
		*consumed += r;
	return r;
}

/*
 * Read and drop what is left of the body after the response was
 * written.  A CGI program that exits with body bytes unread makes
 * Apache's mod_cgid (one socket for stdin and stdout) reset the
 * connection and lose the response; the limit keeps a huge body from
 * holding the process.
 */
static void
cgi_drain(const char *content_length, long long consumed)
{
	char		 buf[65536];
	long long	 left = req_content_length(content_length);
	ssize_t		 r;

	if (left < 0 || left > CGI_DRAIN_MAX)
		return;
	for (left -= consumed; left > 0; left -= r)
		if ((r = cgi_read(&consumed, buf, (size_t)(left <
		    (long long)sizeof(buf) ? left : (long long)sizeof(buf)))) <=
		    0)
			break;
}

/*
 * SIGBUS: SQLite maps DB-shm, and writing a page of it faults when the
 * file can no longer be written (chattr +i, a file system gone
 * read-only under the mapping).  Nothing can be undone from inside the
 * fault, so say why in the log, with what to do, and die as SIGBUS
 * would: the web server answers this request 5xx and starts a new
 * process; nothing was acknowledged.  The counters file is mapped too:
 * a fault while counting (the file truncated under the mapping) is
 * left by counters_on_bus(), and the request goes on uncounted.
 */
static void
on_bus(int sig)
{
	static const char	 msg[] = "oncehook: SIGBUS in SQLite's shared "
	    "memory: the database's -shm file cannot be written (immutable? "
	    "chattr -i it; a read-only or full file system?); nothing was "
	    "acknowledged; exiting\n";

	counters_on_bus();	/* returns unless a count is in flight */
	(void)write(STDERR_FILENO, msg, sizeof(msg) - 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

void
front_explain_faults(void)
{
	struct sigaction	 sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_bus;
	sigemptyset(&sa.sa_mask);
	/* Not reset, not deferred: a count left by siglongjmp() keeps the
	 * handler (on_bus() restores the default itself to die). */
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
}

/* HEAD gets the head alone (RFC 9110 9.3.2), whatever made the answer. */
static void
head_only(struct resp *resp, char **envp)
{
	const char	*m = env_find(envp, "REQUEST_METHOD");

	resp->head_only = m != NULL && strcmp(m, "HEAD") == 0;
}

int
front_cgi(struct pipeline *p)
{
	static struct cgienv	 ce;
	struct resp		 resp;
	char			 head[512];
	const char		*body;
	long long		 consumed = 0;
	size_t			 bodysz;
	int			 n, rc = 0;

	p->one_request = 1;	/* prepare only what it needs */
	if (from_env(&ce, environ, cgi_read, &consumed) == -1) {
		log_error("cgi: out of memory");
		resp_make(&resp, &(struct resp_in){ .err = HOOK_ESYSTEM });
	} else
		pipeline_run(p, &ce.rq, time(NULL), &resp);
	head_only(&resp, environ);
	body = resp_body(&resp, &bodysz);
	if ((n = resp_head(&resp, head, sizeof(head))) < 0 ||
	    io_write_all(STDOUT_FILENO, head, (size_t)n) == -1 ||
	    io_write_all(STDOUT_FILENO, body, bodysz) == -1) {
		log_warn("cgi: writing the response");
		rc = 1;
	}
	resp_clear(&resp);
	cgi_drain(ce.rq.content_length, consumed);
	pipeline_after(p);
	pipeline_leave(p);
	return rc;
}

/*
 * The time limit (front_fcgi_limit()): a connection has limit seconds
 * from its accept() to deliver the whole request (parameters and body),
 * and limit seconds more to take the answer; the work in between is not
 * timed.  libfcgi accepts and reads the parameters inside
 * FCGX_Accept_r(), so no socket option can be set in between (a unix
 * socket does not inherit SO_RCVTIMEO from the listening one): the clock
 * is alarm(), started when poll() finds a connection waiting on the
 * non-blocking listening socket, so just before libfcgi's accept().  When
 * it runs out while the request is read or the answer written, on_alarm()
 * shuts the connection down: a read blocked in libfcgi returns end of
 * file (its error path closes the connection and, in FCGX_Accept_r(),
 * takes the next one), a blocked write fails.  The body is read before
 * anything is claimed, so a request cut short is never recorded.
 */
enum clock_phase {
	PHASE_IDLE,		/* waiting for a connection: no clock */
	PHASE_RECEIVING,	/* parameters and body are read */
	PHASE_WORKING,		/* the pipeline decides: not timed */
	PHASE_ANSWERING		/* the answer is written */
};

static unsigned int		 limit;		/* seconds, 0 none */
static FCGX_Request		*watched;	/* the request in flight */
static volatile sig_atomic_t	 phase = PHASE_IDLE;
static volatile sig_atomic_t	 expired;	/* the phase on_alarm() cut */
static sigset_t			 alrm;		/* { SIGALRM } */
static sigset_t			 stops;		/* SIGTERM, SIGINT; with a
						   limit SIGALRM too */
static sigset_t			 waiting;	/* the mask while it waits,
						   with a limit */
static volatile sig_atomic_t	 busy;		/* a request is in flight */
static volatile sig_atomic_t	 stopping;	/* SIGTERM/SIGINT came then */

void
front_fcgi_limit(unsigned int seconds)
{
	limit = seconds;
}

static void
on_alarm(int sig)
{
	int	 save = errno, fd;

	if (phase != PHASE_RECEIVING && phase != PHASE_ANSWERING)
		return;
	/*
	 * FCGX_Request.ipcFd is past the fields libfcgi calls public, but
	 * the struct is the caller's (its layout is the library's ABI) and
	 * this is the only way to the connection it accepted: read only.
	 */
	if ((fd = watched->ipcFd) >= 0)
		(void)shutdown(fd, SHUT_RDWR);
	expired = phase;
	/* Told to stop: the request cut had nothing claimed, and the next
	 * connection FCGX_Accept_r() would take is not waited for. */
	if (phase == PHASE_RECEIVING && stopping)
		_exit(0);
	/* FCGX_Accept_r() may take the next connection: a clock for it. */
	if (phase == PHASE_RECEIVING)
		alarm(limit);
	errno = save;
}

/* Stop the clock (the phase first: a SIGALRM in between is ignored). */
static void
clock_stop(enum clock_phase next)
{
	phase = next;
	alarm(0);
}

/* The operator's line for a connection on_alarm() cut. */
static void
clock_report(void)
{
	if (expired == PHASE_RECEIVING)
		log_warnx("fastcgi: no whole request within %u s of the "
		    "connection; closed it", limit);
	else if (expired == PHASE_ANSWERING)
		log_warnx("fastcgi: the answer was not taken within %u s; "
		    "closed the connection", limit);
	expired = PHASE_IDLE;
}

/* The request's body as the pipeline reads it, counted for finish(). */
struct fcgi_body {
	FCGX_Stream	*in;
	long long	 got;		/* bytes handed to the pipeline */
};

static ssize_t
fcgi_read(void *arg, char *buf, size_t n)
{
	struct fcgi_body	*b = arg;
	int			 r;

	if (n > (1U << 30))
		n = 1U << 30;
	/* SIGALRM is let in while libfcgi waits for the peer only. */
	if (limit > 0)
		sigprocmask(SIG_UNBLOCK, &alrm, NULL);
	r = FCGX_GetStr(buf, (int)n, b->in);
	if (limit > 0)
		sigprocmask(SIG_BLOCK, &alrm, NULL);
	if (r < 0 || FCGX_GetError(b->in) != 0)
		return -1;
	b->got += r;
	return r;
}

/*
 * SIGTERM and SIGINT: between requests nothing is in flight, no
 * transaction is open, and the process may end at once.  While a
 * request is handled (busy) the loop ends once it is answered.  With a
 * time limit they come in only while accept_timed() waits or libfcgi
 * takes a request, and are blocked otherwise, with SIGALRM; without one
 * the flag is enough, and a request costs no sigprocmask(2).
 * SA_RESTART: a read of the body is not cut by the signal.
 */
static void
on_stop(int sig)
{
	if (!busy)
		_exit(0);
	stopping = 1;
}

/*
 * Take the next request, looking at the store once a second while none
 * comes (pipeline_idle(): the users of a replaced database file let go
 * of its log).  Without a limit, the listening socket stays blocking
 * and SO_RCVTIMEO ends the wait (the kernel wakes one waiting process
 * per connection; poll() would wake them all).  With one: wait until a
 * connection is there, or the next request's first bytes on one the web
 * server kept open (for limit seconds at most: then it is closed, as
 * one that sends nothing is), start the clock, and let libfcgi take it
 * from the non-blocking socket.  SIGTERM and SIGINT come in only while
 * it waits (ppoll(): then nothing is in flight, and the worker ends) and
 * while libfcgi takes the request; from the wait's end on the request is
 * in flight (busy): a SIGTERM then waits for its answer, as one while
 * its body is read does.  Returns what FCGX_Accept_r() returns: -EAGAIN
 * if another worker took it first, or the second passed.
 */
#define IDLE_TICK_MS	1000

static int
accept_timed(struct pipeline *p, FCGX_Request *r, int listenfd)
{
	struct pollfd	 pfd;
	struct timespec	 tick = { IDLE_TICK_MS / 1000, 0 }, t0 = { 0, 0 };
	int		 rc, n;

	if (limit == 0) {
		if ((rc = FCGX_Accept_r(r)) == -EAGAIN || rc == -EWOULDBLOCK)
			pipeline_idle(p);
		return rc;
	}
	FCGX_Finish_r(r);
	/* ipcFd: libfcgi's, read only (see on_alarm()). */
	pfd.fd = listenfd;
	if (r->ipcFd >= 0) {
		pfd.fd = r->ipcFd;	/* kept: timed from here */
		io_clock(&t0);
	}
	pfd.events = POLLIN;
	while ((n = ppoll(&pfd, 1, &tick, &waiting)) <= 0) {
		if (n == -1 && errno != EINTR)
			return -errno;
		pipeline_idle(p);
		if (pfd.fd != listenfd &&
		    io_ms_since(&t0) >= (long)limit * 1000) {
			(void)FCGX_Detach(r);	/* nothing unread: no wait */
			FCGX_Free(r, 1);
			log_warnx("fastcgi: a kept connection sent nothing "
			    "for %u s; closed it", limit);
			pfd.fd = listenfd;
		}
	}
	busy = 1;
	phase = PHASE_RECEIVING;
	alarm(limit);
	sigprocmask(SIG_UNBLOCK, &stops, NULL);
	rc = FCGX_Accept_r(r);
	sigprocmask(SIG_BLOCK, &stops, NULL);
	if (rc != 0) {
		clock_stop(PHASE_IDLE);
		busy = 0;
		if (stopping)
			_exit(0);
	}
	clock_report();
	return rc;
}

/*
 * End a request.  libfcgi's FCGX_Finish_r() closes a connection the
 * careful way: shut down its sending side, then wait (poll and read, up
 * to 2 s) for the web server to close first, so that nothing it sent is
 * left unread when the socket closes (unread data turns a TCP close into
 * a reset that may destroy the answer before the web server read it; on
 * a unix socket it makes the web server's next read fail).  That wait
 * is a sleep and a wakeup per request.  When the pipeline read the whole
 * body (Content-Length bytes), the record that ends the request's input
 * normally came with it: it is read here, without waiting (the socket
 * non-blocking for that read only: if it is not there yet, the read
 * fails and nothing else changes).  Once it is seen, nothing else comes
 * for this request: a connection the web server does not keep is closed
 * at once (FCGX_Detach(): no shutdown, no wait), and one it keeps
 * (FCGI_KEEP_CONN) starts its next request at that request's first
 * record, not at the rest of this one.  Anything else (a body left
 * unread, an answer given before it, more bytes than announced, an end
 * not there yet) takes libfcgi's way.
 */
static void
finish(FCGX_Request *r, const struct req *rq, const struct fcgi_body *b)
{
	long long	 cl = req_content_length(rq->content_length);
	int		 seen, on = 1, off = 0;

	/* ipcFd and keepConnection: libfcgi's, read only (see on_alarm()). */
	if (cl >= 0 && b->got == cl && r->in != NULL && r->ipcFd >= 0 &&
	    ioctl(r->ipcFd, FIONBIO, &on) == 0) {
		seen = FCGX_GetChar(r->in) == EOF && FCGX_HasSeenEOF(r->in) &&
		    FCGX_GetError(r->in) == 0;
		if (ioctl(r->ipcFd, FIONBIO, &off) == -1) {
			log_warn("fastcgi: the connection stays non-blocking");
			seen = 0;
		}
		if (seen && !r->keepConnection)
			(void)FCGX_Detach(r);
	}
	FCGX_Finish_r(r);
}

int
front_fcgi(struct pipeline *p, int listenfd)
{
	struct sigaction	 sa;
	static struct cgienv	 ce;
	struct timeval		 tick;
	FCGX_Request		 r;
	struct resp		 resp;
	struct fcgi_body	 fb;
	char			 head[512];
	const char		*body;
	size_t			 bodysz;
	int			 n, fl, rc;

	if (FCGX_Init() != 0) {
		log_error("fastcgi: FCGX_Init failed");
		return 1;
	}
	if (FCGX_InitRequest(&r, listenfd, FCGI_FAIL_ACCEPT_ON_INTR) != 0) {
		log_error("fastcgi: FCGX_InitRequest failed");
		return 1;
	}
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	/* A process under a web server runs a deferred event's actions
	 * after its answer; serve's workers leave them to serve's work
	 * child, so that a slow action never keeps a worker from the next
	 * request (CGI leaves them to oncehook work). */
	p->run_after = limit == 0;
	if (limit == 0) {
		tick.tv_sec = IDLE_TICK_MS / 1000;
		tick.tv_usec = 0;
		if (setsockopt(listenfd, SOL_SOCKET, SO_RCVTIMEO, &tick,
		    sizeof(tick)) == -1)
			log_warnx("fastcgi: listening socket: SO_RCVTIMEO: %s "
			    "(an idle process does not look at the store)",
			    strerror(errno));
	} else {
		/* Workers race for a connection poll() saw: losers go on. */
		if ((fl = fcntl(listenfd, F_GETFL)) == -1 ||
		    fcntl(listenfd, F_SETFL, fl | O_NONBLOCK) == -1) {
			log_error("fastcgi: listening socket: %s",
			    strerror(errno));
			return 1;
		}
		watched = &r;
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		sigaddset(&stops, SIGALRM);
	}
	/* With a limit they stay blocked but where accept_timed() lets
	 * them in (serve started the worker with them blocked). */
	if (limit == 0)
		sigprocmask(SIG_UNBLOCK, &stops, NULL);
	else {
		sigprocmask(SIG_BLOCK, &stops, &waiting);
		sigdelset(&waiting, SIGTERM);
		sigdelset(&waiting, SIGINT);
		sigdelset(&waiting, SIGALRM);
	}
	for (;;) {
		if ((rc = accept_timed(p, &r, listenfd)) == -EAGAIN ||
		    rc == -EWOULDBLOCK)
			continue;
		if (rc != 0)
			break;
		busy = 1;	/* accept_timed() set it already with a limit */
		fb.in = r.in;
		fb.got = 0;
		if (from_env(&ce, r.envp, fcgi_read, &fb) == -1) {
			log_error("fastcgi: out of memory");
			resp_make(&resp, &(struct resp_in){ .err = HOOK_ESYSTEM });
		} else
			pipeline_run(p, &ce.rq, time(NULL), &resp);
		if (limit > 0) {
			/* A clock that ran out while the pipeline worked
			 * is stale: its SIGALRM arrives in PHASE_WORKING. */
			clock_stop(PHASE_WORKING);
			clock_report();
			sigprocmask(SIG_UNBLOCK, &alrm, NULL);
			phase = PHASE_ANSWERING;
			alarm(limit);
		}
		head_only(&resp, r.envp);
		body = resp_body(&resp, &bodysz);
		if ((n = resp_head(&resp, head, sizeof(head))) < 0 ||
		    FCGX_PutStr(head, n, r.out) != n ||
		    FCGX_PutStr(body, (int)bodysz, r.out) != (int)bodysz)
			log_warnx("fastcgi: writing the response failed");
		resp_clear(&resp);
		finish(&r, &ce.rq, &fb);
		if (limit > 0)
			clock_stop(PHASE_WORKING);
		pipeline_after(p);
		busy = 0;
		if (stopping)
			_exit(0);
		if (limit > 0) {
			clock_stop(PHASE_IDLE);
			clock_report();
		}
	}
	FCGX_Free(&r, 1);
	return 0;
}
