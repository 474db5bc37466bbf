/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the standalone FastCGI server (see front/serve.h).
 *
 * The parent validates the configuration, opens the socket and forks
 * the workers; each worker opens its own database connection and
 * accepts requests on the shared socket.  SIGTERM, SIGINT or SIGHUP to the
 * parent is passed to the workers, which finish the request in flight
 * and exit; the parent then removes its unix socket and exits.  A worker
 * that dies is replaced (after a pause if workers keep dying at once).
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "front/front.h"
#include "front/serve.h"
#include "lib/log.h"
#include "outbox/deliver.h"
#include "pipeline/pipeline.h"
#include "store/store.h"
#include "store/work.h"
#include "writer/writer.h"

#define WORKERS_MAX	64
#define BACKLOG		128
#define TIMEOUT_DEFAULT	30	/* seconds; nginx's fastcgi timeouts are 60 */
#define TIMEOUT_MAX	3600
#define NAUX		2	/* work and deliver children */

static const char usage[] =
"usage: oncehook serve --listen ADDR [--workers N] [--timeout SECONDS]\n"
"                      [--no-group-commit] [--no-work] [--no-deliver]\n"
"\n"
"Serve FastCGI on ADDR for Apache mod_proxy_fcgi or nginx fastcgi_pass:\n"
"127.0.0.1:9000 (loopback only), or a unix socket path such as\n"
"/run/oncehook/oncehook.sock (created mode 0660; a stale one is\n"
"replaced).  N worker processes (default 2, at most 64) share the\n"
"database.  A connection that has not sent its whole request SECONDS\n"
"(default 30, 1 to 3600) after it was accepted, or has not taken the\n"
"answer SECONDS after it was ready, is closed; nothing is recorded for\n"
"a request cut short.  SIGTERM, SIGINT or SIGHUP: finish the requests in\n"
"flight, exit.  New events are claimed by one writer process, several\n"
"to a transaction and one fsync (group commit); each is answered after\n"
"the COMMIT that covers it.  --no-group-commit: each worker claims its\n"
"own, one to a transaction.  A child runs oncehook work for ever (the\n"
"deferred events a worker could not run, failed ones when due);\n"
"--no-work: none (run oncehook work from a timer instead).  Another runs\n"
"oncehook deliver for ever (the outbox); --no-deliver: none.\n"
"Configured by the same ONCEHOOK_* variables as the handler.\n";

static volatile sig_atomic_t	 stopping;	/* SIGTERM/SIGINT seen */
static volatile sig_atomic_t	 children;	/* SIGCHLD seen */
static sigset_t			 waitmask;	/* the mask in sigsuspend */

static void
on_stop(int sig)
{
	stopping = 1;
}

static void
on_child(int sig)
{
	children = 1;
}

/* Install handler for sig without SA_RESTART, so waits are cut short. */
static void
catch(int sig, void (*fn)(int))
{
	struct sigaction	 sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static int
listen_unix(const char *path, char *err, size_t errsz)
{
	struct sockaddr_un	 sun;
	struct stat		 sb;
	mode_t			 old;
	int			 fd, probe;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errsz, "%s: path too long", path);
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, path);
	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			snprintf(err, errsz, "%s: exists and is not a socket",
			    path);
			return -1;
		}
		/* A socket nobody answers on is stale: replace it. */
		if ((probe = socket(AF_UNIX, SOCK_STREAM, 0)) == -1) {
			snprintf(err, errsz, "socket: %s", strerror(errno));
			return -1;
		}
		if (connect(probe, (struct sockaddr *)&sun,
		    sizeof(sun)) == 0) {
			close(probe);
			snprintf(err, errsz, "%s: in use by a running server",
			    path);
			return -1;
		}
		close(probe);
		if (unlink(path) == -1) {
			snprintf(err, errsz, "%s: %s", path, strerror(errno));
			return -1;
		}
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errsz, "socket: %s", strerror(errno));
		return -1;
	}
	/* Owner and group (the web server's) may connect; others not. */
	old = umask(0117);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		umask(old);
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	if (listen(fd, BACKLOG) == -1) {
		snprintf(err, errsz, "%s: listen: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

/* 1 if sa is a loopback address. */
static int
loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in	*s4;
	const struct sockaddr_in6	*s6;

	if (sa->sa_family == AF_INET) {
		s4 = (const struct sockaddr_in *)sa;
		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		s6 = (const struct sockaddr_in6 *)sa;
		return IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
	}
	return 0;
}

static int
listen_tcp(const char *addr, char *err, size_t errsz)
{
	struct addrinfo	 hints, *res = NULL;
	char		 host[256];
	const char	*colon, *port;
	size_t		 hl;
	int		 fd = -1, on = 1, rc;

	if ((colon = strrchr(addr, ':')) == NULL || colon[1] == '\0') {
		snprintf(err, errsz, "%s: want HOST:PORT or a socket path",
		    addr);
		return -1;
	}
	port = colon + 1;
	hl = (size_t)(colon - addr);
	if (hl > 1 && addr[0] == '[' && addr[hl - 1] == ']') {
		addr++;
		hl -= 2;
	}
	if (hl == 0 || hl >= sizeof(host)) {
		snprintf(err, errsz, "%s: want HOST:PORT, e.g. 127.0.0.1:9000",
		    addr);
		return -1;
	}
	memcpy(host, addr, hl);
	host[hl] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		snprintf(err, errsz, "%s: %s", host, gai_strerror(rc));
		return -1;
	}
	if (!loopback(res->ai_addr)) {
		/* A FastCGI peer sets every CGI variable: never expose it. */
		snprintf(err, errsz, "%s: not a loopback address; use "
		    "127.0.0.1, ::1 or a unix socket", host);
		goto out;
	}
	if ((fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC,
	    0)) == -1) {
		snprintf(err, errsz, "socket: %s", strerror(errno));
		goto out;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(fd, res->ai_addr, res->ai_addrlen) == -1 ||
	    listen(fd, BACKLOG) == -1) {
		snprintf(err, errsz, "%s: %s", addr, strerror(errno));
		close(fd);
		fd = -1;
	}
out:
	freeaddrinfo(res);
	return fd;
}

int
serve_listen(const char *addr, char *err, size_t errsz)
{
	if (strncmp(addr, "unix:", 5) == 0)
		addr += 5;
	if (addr[0] == '/')
		return listen_unix(addr, err, errsz);
	return listen_tcp(addr, err, errsz);
}

extern char	**environ;

/*
 * A worker: its own pipeline and database connection; front_fcgi()
 * handles SIGTERM (the request in flight first) and, with the limit
 * serve_main() set, SIGALRM (a connection's clock).
 */
static int
worker(const struct conf *cf, int fd, struct writer_link *link)
{
	struct pipeline	 p;
	int		 rc;

	/*
	 * The parent's handlers only set its flags: back to the defaults,
	 * with the signals still blocked, until front_fcgi() installs its
	 * own and unblocks them, so a SIGTERM sent meanwhile waits for it.
	 */
	signal(SIGCHLD, SIG_DFL);
	signal(SIGALRM, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_IGN);	/* the parent stops us */
	pipeline_init(&p, cf, NULL);
	if (link != NULL)
		pipeline_claim_through(&p, writer_claim, NULL, link);
	front_explain_faults();
	rc = front_fcgi(&p, fd);
	pipeline_clear(&p);
	return rc;
}

/* What serve was asked for. */
struct serve_args {
	const char	*listen;	/* --listen */
	long		 workers;	/* --workers */
	long		 timeout;	/* --timeout, seconds */
	int		 group;		/* group commit (not --no-group-commit) */
	int		 work;		/* a work child (not --no-work) */
	int		 deliver;	/* a deliver child (not --no-deliver) */
};

/* A whole number from 1 to max for option opt; -1 after a message. */
static long
serve_number(const char *opt, const char *v, long max, const char *unit)
{
	char	*end;
	long	 n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || *end != '\0' || n < 1 || n > max) {
		fprintf(stderr, "oncehook serve: %s: want 1 to %ld%s\n", opt,
		    max, unit);
		return -1;
	}
	return n;
}

/* Parse serve's command line: 0, or an exit code (help 0 is -1). */
static int
serve_parse(int argc, char **argv, struct serve_args *a)
{
	int	 i;

	a->listen = NULL;
	a->workers = 2;
	a->timeout = TIMEOUT_DEFAULT;
	a->group = 1;
	a->work = 1;
	a->deliver = 1;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			fputs(usage, stdout);
			return -1;
		} else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
			a->listen = argv[++i];
		else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
			if ((a->workers = serve_number("--workers", argv[++i],
			    WORKERS_MAX, "")) == -1)
				return 2;
		} else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
			if ((a->timeout = serve_number("--timeout", argv[++i],
			    TIMEOUT_MAX, " seconds")) == -1)
				return 2;
		} else if (strcmp(argv[i], "--no-group-commit") == 0)
			a->group = 0;
		else if (strcmp(argv[i], "--no-work") == 0)
			a->work = 0;
		else if (strcmp(argv[i], "--no-deliver") == 0)
			a->deliver = 0;
		else
			break;
	}
	if (i < argc || a->listen == NULL) {
		fputs(usage, stderr);
		return 2;
	}
	return 0;
}

/*
 * Block the signals the parent waits for; they are let in only inside
 * sigsuspend(), so none is lost between a check of the flags and the
 * wait.
 */
static void
serve_signals(void)
{
	sigset_t	 blocked;

	sigemptyset(&blocked);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGHUP);
	sigaddset(&blocked, SIGCHLD);
	sigaddset(&blocked, SIGALRM);
	sigprocmask(SIG_BLOCK, &blocked, &waitmask);
	catch(SIGTERM, on_stop);
	catch(SIGINT, on_stop);
	/* No reload: a hangup stops, children first, where its default
	 * killed the parent alone and left the workers unsupervised. */
	catch(SIGHUP, on_stop);
	catch(SIGCHLD, on_child);
	catch(SIGALRM, on_child);
	signal(SIGPIPE, SIG_IGN);
}

/* The workers: their PIDs (-1: to start) and when each started. */
struct pool {
	const struct conf	*cf;
	int			 fd;		/* the listening socket */
	long			 n;
	pid_t			 pids[WORKERS_MAX];
	time_t			 started[WORKERS_MAX];
	int			 quick;		/* deaths soon after a start */
	/* Group commit (writer/writer.h): the writer, and a socketpair per
	 * worker: its end in kfd, the writer's in wfd (closed here once
	 * the writer has it, so that its death is the workers' EOF). */
	int			 group;
	long			 timeout_ms;	/* a worker waits this long */
	pid_t			 writer;
	int			 kfd[WORKERS_MAX];
	int			 wfd[WORKERS_MAX];
	/* The children that run a loop of their own (store/work.h, outbox/deliver.h):
	 * pid -1 if none or to start; NAUX of them. */
	struct aux {
		const char	*what;		/* in the log */
		const char	*comm;		/* in ps (and for the tests) */
		int		(*loop)(const struct conf *);
		int		 on;
		pid_t		 pid;
		time_t		 started;
	}			 aux[NAUX];
};

/* Close the ends in fds[0..n) that are open; mark them closed. */
static void
close_all(int *fds, long n)
{
	long	 i;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

/* Fork worker i; its pid in the pool, or -1 (a retry on SIGALRM). */
static void
pool_start(struct pool *p, long i)
{
	struct writer_link	 link;
	pid_t			 pid;
	long			 j;
	int			 rc;

	if ((pid = fork()) == -1) {
		log_warn("serve: fork");
		alarm(1);	/* wake up to try again */
	} else if (pid == 0) {
		log_forked();
		if (!p->group)
			_exit(worker(p->cf, p->fd, NULL));
		for (j = 0; j < p->n; j++)
			if (j != i && p->kfd[j] >= 0)
				close(p->kfd[j]);
		writer_link_init(&link, p->kfd[i], p->timeout_ms);
		rc = worker(p->cf, p->fd, &link);
		free(link.out);
		_exit(rc);
	}
	p->pids[i] = pid;
	p->started[i] = time(NULL);
}

/* New socketpairs and the writer on them: 0, or -1 (logged). */
static int
writer_start(struct pool *p)
{
	int	 sv[2];
	long	 i;

	for (i = 0; i < p->n; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
		    sv) == -1) {
			log_warn("serve: socketpair");
			close_all(p->kfd, i);
			close_all(p->wfd, i);
			return -1;
		}
		p->kfd[i] = sv[0];
		p->wfd[i] = sv[1];
	}
	if ((p->writer = fork()) == -1) {
		log_warn("serve: fork");
		close_all(p->kfd, p->n);
		close_all(p->wfd, p->n);
		return -1;
	}
	if (p->writer == 0) {
		log_forked();
		signal(SIGCHLD, SIG_DFL);
		signal(SIGALRM, SIG_DFL);
		close(p->fd);
		close_all(p->kfd, p->n);
		_exit(writer_main(p->cf, p->wfd, (size_t)p->n));
	}
	close_all(p->wfd, p->n);
	return 0;
}

static int
work_child(const struct conf *cf)
{
	return work_loop(cf, 0, 0, 1, &stopping);
}

static int
deliver_child(const struct conf *cf)
{
	return deliver_loop(cf, 0, 0, &stopping);
}

/* Fork aux child a: it runs until SIGTERM (the stopping flag). */
static void
aux_start(struct pool *p, struct aux *a)
{
	if (!a->on)
		return;
	if ((a->pid = fork()) == -1) {
		log_warn("serve: fork");
		alarm(1);
		return;
	}
	if (a->pid == 0) {
		sigset_t	 none;

		log_forked();
		signal(SIGCHLD, SIG_DFL);
		signal(SIGALRM, SIG_DFL);
		/* The parent blocks what it waits for; SIGTERM must reach
		 * the loop (it sets stopping, and the loop ends). */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* Told apart from the workers in ps (and by the tests). */
		(void)prctl(PR_SET_NAME, a->comm, 0, 0, 0);
		close(p->fd);
		close_all(p->kfd, p->n);
		_exit(a->loop(p->cf));
	}
	a->started = time(NULL);
}

/* SIGTERM to each pid and wait for it; each is -1 afterwards. */
static void
stop_pids(pid_t *pids, long n)
{
	long	 i;
	int	 alive, status;

	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	for (alive = 1; alive; ) {
		alive = 0;
		for (i = 0; i < n; i++) {
			if (pids[i] <= 0)
				continue;
			if (waitpid(pids[i], &status, 0) == pids[i] ||
			    errno == ECHILD)
				pids[i] = -1;
			else
				alive = 1;
		}
	}
}

/*
 * Start the writer (with group commit) and every worker.  A worker that
 * cannot be started now is tried again; a writer that cannot is the
 * pool without group commit until the next start.
 */
static void
pool_begin(struct pool *p)
{
	long	 i;

	if (p->group && writer_start(p) == -1) {
		log_warnx("serve: no writer process: each worker claims its "
		    "own events until the next restart of the pool");
		p->group = 0;
	}
	for (i = 0; i < p->n; i++)
		pool_start(p, i);
	for (i = 0; i < NAUX; i++)
		if (p->aux[i].pid <= 0)
			aux_start(p, &p->aux[i]);
}

/* The workers first (their claims in flight are answered), then the
 * writer; the pairs are closed. */
static void
pool_end(struct pool *p)
{
	stop_pids(p->pids, p->n);
	if (p->group) {
		stop_pids(&p->writer, 1);
		close_all(p->kfd, p->n);
	}
}

/* 1 + the index of worker pid, or 0. */
static long
pool_member(const struct pool *p, pid_t pid)
{
	long	 i;

	for (i = 0; i < p->n; i++)
		if (p->pids[i] == pid)
			return i + 1;
	return 0;
}

/* Count a death age seconds after its start; 1 if it is time to pause. */
static int
quick_death(struct pool *p, time_t age)
{
	p->quick = age < 1 ? p->quick + 1 : 0;
	return p->quick > 3;
}

/* Reap dead workers and start new ones, until told to stop. */
static void
pool_supervise(struct pool *p)
{
	pid_t	 pid;
	long	 i;
	int	 status, was_writer;

	while (!stopping) {
		if (!children)
			sigsuspend(&waitmask);
		if (!children)
			continue;
		children = 0;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < NAUX && pid != p->aux[i].pid; i++)
				;
			if (i < NAUX) {
				p->aux[i].pid = -1;
				if (stopping)
					continue;
				log_warnx("serve: the %s child %ld %s %d; "
				    "starting it again", p->aux[i].what,
				    (long)pid, WIFSIGNALED(status) ?
				    "killed by signal" : "exited with",
				    WIFSIGNALED(status) ? WTERMSIG(status) :
				    WEXITSTATUS(status));
				if (time(NULL) - p->aux[i].started < 1)
					sleep(1);
				aux_start(p, &p->aux[i]);
				continue;
			}
			if (p->group && (pid == p->writer ||
			    pool_member(p, pid))) {
				/* A pair may hold half a claim: all anew. */
				was_writer = pid == p->writer;
				if (was_writer)
					p->writer = -1;
				else
					p->pids[pool_member(p, pid) - 1] = -1;
				if (stopping)
					continue;
				log_warnx("serve: %s %ld %s %d; starting the "
				    "writer and the workers again", was_writer ?
				    "the writer" : "worker", (long)pid,
				    WIFSIGNALED(status) ?
				    "killed by signal" : "exited with",
				    WIFSIGNALED(status) ? WTERMSIG(status) :
				    WEXITSTATUS(status));
				pool_end(p);
				if (quick_death(p, time(NULL) - p->started[0]))
					sleep(1);
				pool_begin(p);
				continue;
			}
			for (i = 0; i < p->n && p->pids[i] != pid; i++)
				;
			if (i == p->n)
				continue;
			p->pids[i] = -1;
			if (stopping)
				continue;
			log_warnx("serve: worker %ld %s %d; replacing it",
			    (long)pid, WIFSIGNALED(status) ? "killed by signal" :
			    "exited with", WIFSIGNALED(status) ?
			    WTERMSIG(status) : WEXITSTATUS(status));
			/* Workers dying at once: do not spin. */
			if (quick_death(p, time(NULL) - p->started[i]))
				sleep(1);
			pool_start(p, i);
		}
		/* A fork that failed is tried again (SIGALRM wakes us). */
		for (i = 0; i < p->n && !stopping; i++)
			if (p->pids[i] == -1)
				pool_start(p, i);
		for (i = 0; i < NAUX && !stopping; i++)
			if (p->aux[i].on && p->aux[i].pid == -1)
				aux_start(p, &p->aux[i]);
	}
}

int
serve_main(int argc, char **argv)
{
	struct serve_args	 a;
	struct pool		 pool;
	struct conf		*cf;
	const char		*path;
	char			 err[512];
	long			 i;
	int			 rc;

	if ((rc = serve_parse(argc, argv, &a)) != 0)
		return rc == -1 ? 0 : rc;
	if ((cf = conf_load_env(err, sizeof(err))) == NULL) {
		fprintf(stderr, "oncehook serve: %s\n", err);
		return 1;
	}
	log_setlevel(cf->loglevel);
	(void)conf_warnings(cf, (const char *const *)environ, log_warn_cb,
	    (void *)"serve: ");
	memset(&pool, 0, sizeof(pool));
	pool.cf = cf;
	pool.n = a.workers;
	pool.group = a.group && cf->group_commit && cf->fast_paths;
	pool.timeout_ms = a.timeout * 1000;
	pool.writer = -1;
	pool.aux[0] = (struct aux){ "work", "oncehook-work", work_child,
	    a.work, -1, 0 };
	pool.aux[1] = (struct aux){ "deliver", "oncehook-outbox",
	    deliver_child, a.deliver, -1, 0 };
	for (i = 0; i < WORKERS_MAX; i++)
		pool.kfd[i] = pool.wfd[i] = -1;
	/* Before the socket and the workers: each worker, and each started
	 * again, runs the text read here, and a file edited once the
	 * socket accepts is not it. */
	store_keep_actions(cf);
	if ((pool.fd = serve_listen(a.listen, err, sizeof(err))) == -1) {
		fprintf(stderr, "oncehook serve: %s\n", err);
		conf_free(cf);
		return 1;
	}
	serve_signals();
	front_fcgi_limit((unsigned int)a.timeout);
	log_info("serve: listening on %s with %ld workers, timeout %ld s%s%s%s",
	    a.listen, a.workers, a.timeout, a.group ? ", group commit" : "",
	    a.work ? ", a work child" : "", a.deliver ? ", a deliver child" :
	    "");
	pool_begin(&pool);
	pool_supervise(&pool);

	log_info("serve: stopping; waiting for the requests in flight");
	pool_end(&pool);
	for (i = 0; i < NAUX; i++)
		stop_pids(&pool.aux[i].pid, 1);
	close(pool.fd);
	path = strncmp(a.listen, "unix:", 5) == 0 ? a.listen + 5 : a.listen;
	if (path[0] == '/')
		unlink(path);
	conf_free(cf);
	log_info("serve: stopped");
	return 0;
}
