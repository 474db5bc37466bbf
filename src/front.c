/*
 * oncehook: the FastCGI and CGI front (see front.h).
 *
 * Both paths build the same struct req from a CGI environment (the
 * process's for CGI, the request's parameters for FastCGI) and write the
 * same CGI-style response, so the pipeline cannot tell them apart.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "front.h"
#include "hook.h"
#include "log.h"
#include "pipeline.h"
#include "req.h"
#include "resp.h"

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

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t	 w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
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

	if (from_env(&ce, environ, cgi_read, &consumed) == -1) {
		log_error("cgi: out of memory");
		resp_make(&resp, &(struct resp_in){ .err = HOOK_ESYSTEM });
	} else
		pipeline_run(p, &ce.rq, time(NULL), &resp);
	body = resp_body(&resp, &bodysz);
	if ((n = resp_head(&resp, head, sizeof(head))) < 0 ||
	    write_all(STDOUT_FILENO, head, (size_t)n) == -1 ||
	    write_all(STDOUT_FILENO, body, bodysz) == -1) {
		log_warn("cgi: writing the response");
		rc = 1;
	}
	resp_clear(&resp);
	cgi_drain(ce.rq.content_length, consumed);
	return rc;
}

static ssize_t
fcgi_read(void *arg, char *buf, size_t n)
{
	FCGX_Stream	*in = arg;
	int		 r;

	if (n > (1U << 30))
		n = 1U << 30;
	r = FCGX_GetStr(buf, (int)n, in);
	if (r < 0 || FCGX_GetError(in) != 0)
		return -1;
	return r;
}

/*
 * SIGTERM and SIGINT are blocked while a request is handled, so this
 * runs only between requests: nothing is in flight, no transaction is
 * open, and the process may end at once.
 */
static void
on_stop(int sig)
{
	_exit(0);
}

int
front_fcgi(struct pipeline *p, int listenfd)
{
	struct sigaction	 sa;
	sigset_t		 stops;
	static struct cgienv	 ce;
	FCGX_Request		 r;
	struct resp		 resp;
	char			 head[512];
	const char		*body;
	size_t			 bodysz;
	int			 n;

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
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigprocmask(SIG_UNBLOCK, &stops, NULL);
	while (FCGX_Accept_r(&r) == 0) {
		sigprocmask(SIG_BLOCK, &stops, NULL);
		if (from_env(&ce, r.envp, fcgi_read, r.in) == -1) {
			log_error("fastcgi: out of memory");
			resp_make(&resp, &(struct resp_in){ .err = HOOK_ESYSTEM });
		} else
			pipeline_run(p, &ce.rq, time(NULL), &resp);
		body = resp_body(&resp, &bodysz);
		if ((n = resp_head(&resp, head, sizeof(head))) < 0 ||
		    FCGX_PutStr(head, n, r.out) != n ||
		    FCGX_PutStr(body, (int)bodysz, r.out) != (int)bodysz)
			log_warnx("fastcgi: writing the response failed");
		resp_clear(&resp);
		FCGX_Finish_r(&r);
		sigprocmask(SIG_UNBLOCK, &stops, NULL);
	}
	FCGX_Free(&r, 1);
	return 0;
}
