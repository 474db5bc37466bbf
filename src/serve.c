/*
 * oncehook: the standalone FastCGI server (see serve.h).
 *
 * The parent validates the configuration, opens the socket and forks
 * the workers; each worker opens its own database connection and
 * accepts requests on the shared socket.  SIGTERM or SIGINT to the
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "front.h"
#include "log.h"
#include "pipeline.h"
#include "serve.h"

#define WORKERS_MAX	64
#define BACKLOG		128
#define TIMEOUT_DEFAULT	30	/* seconds; nginx's fastcgi timeouts are 60 */
#define TIMEOUT_MAX	3600

static const char usage[] =
"usage: oncehook serve --listen ADDR [--workers N] [--timeout SECONDS]\n"
"\n"
"Serve FastCGI on ADDR for Apache mod_proxy_fcgi or nginx fastcgi_pass:\n"
"127.0.0.1:9000 (loopback only), or a unix socket path such as\n"
"/run/oncehook/oncehook.sock (created mode 0660; a stale one is\n"
"replaced).  N worker processes (default 2, at most 64) share the\n"
"database.  A connection that has not sent its whole request SECONDS\n"
"(default 30, 1 to 3600) after it was accepted, or has not taken the\n"
"answer SECONDS after it was ready, is closed; nothing is recorded for\n"
"a request cut short.  SIGTERM or SIGINT: finish the requests in\n"
"flight, exit.\n"
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
worker(const struct conf *cf, int fd)
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
	pipeline_init(&p, cf, NULL);
	rc = front_fcgi(&p, fd);
	pipeline_clear(&p);
	return rc;
}

/* Fork one worker; its pid, or -1. */
static pid_t
spawn(const struct conf *cf, int fd)
{
	pid_t	 pid;

	if ((pid = fork()) == -1) {
		log_warn("serve: fork");
		alarm(1);	/* wake up to try again */
		return -1;
	}
	if (pid == 0)
		_exit(worker(cf, fd));
	return pid;
}

int
serve_main(int argc, char **argv)
{
	struct conf	*cf;
	const char	*listen_addr = NULL;
	pid_t		 pids[WORKERS_MAX], pid;
	time_t		 started[WORKERS_MAX], now;
	char		 err[512], *end;
	long		 nworkers = 2, timeout = TIMEOUT_DEFAULT;
	sigset_t	 blocked;
	int		 i, fd, status, alive, quick = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i],
		    "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		} else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
			listen_addr = argv[++i];
		else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
			errno = 0;
			nworkers = strtol(argv[++i], &end, 10);
			if (errno != 0 || *end != '\0' || nworkers < 1 ||
			    nworkers > WORKERS_MAX) {
				fprintf(stderr, "oncehook serve: --workers: "
				    "want 1 to %d\n", WORKERS_MAX);
				return 2;
			}
		} else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
			errno = 0;
			timeout = strtol(argv[++i], &end, 10);
			if (errno != 0 || *end != '\0' || timeout < 1 ||
			    timeout > TIMEOUT_MAX) {
				fprintf(stderr, "oncehook serve: --timeout: "
				    "want 1 to %d seconds\n", TIMEOUT_MAX);
				return 2;
			}
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (listen_addr == NULL) {
		fputs(usage, stderr);
		return 2;
	}
	if ((cf = conf_load_env(err, sizeof(err))) == NULL) {
		fprintf(stderr, "oncehook serve: %s\n", err);
		return 1;
	}
	log_setlevel(cf->loglevel);
	(void)conf_warnings(cf, (const char *const *)environ, log_warn_cb,
	    (void *)"serve: ");
	if ((fd = serve_listen(listen_addr, err, sizeof(err))) == -1) {
		fprintf(stderr, "oncehook serve: %s\n", err);
		conf_free(cf);
		return 1;
	}
	/*
	 * The signals are blocked but in sigsuspend(), so none is lost
	 * between a check of the flags and the wait.
	 */
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGCHLD);
	sigaddset(&blocked, SIGALRM);
	sigprocmask(SIG_BLOCK, &blocked, &waitmask);
	catch(SIGTERM, on_stop);
	catch(SIGINT, on_stop);
	catch(SIGCHLD, on_child);
	catch(SIGALRM, on_child);
	signal(SIGPIPE, SIG_IGN);
	front_fcgi_limit((unsigned int)timeout);
	log_info("serve: listening on %s with %ld workers, timeout %ld s",
	    listen_addr, nworkers, timeout);

	for (i = 0; i < nworkers; i++) {
		pids[i] = spawn(cf, fd);
		started[i] = time(NULL);
	}
	while (!stopping) {
		if (!children)
			sigsuspend(&waitmask);
		if (!children)
			continue;
		children = 0;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < nworkers && pids[i] != pid; i++)
				;
			if (i == nworkers)
				continue;
			pids[i] = -1;
			if (stopping)
				continue;
			now = time(NULL);
			log_warnx("serve: worker %ld %s %d; replacing it",
			    (long)pid, WIFSIGNALED(status) ? "killed by signal" :
			    "exited with", WIFSIGNALED(status) ?
			    WTERMSIG(status) : WEXITSTATUS(status));
			/* Workers dying at once: do not spin. */
			quick = now - started[i] < 1 ? quick + 1 : 0;
			if (quick > 3)
				sleep(1);
			pids[i] = spawn(cf, fd);
			started[i] = time(NULL);
		}
		/* A fork that failed is tried again (SIGALRM wakes us). */
		for (i = 0; i < nworkers && !stopping; i++)
			if (pids[i] == -1) {
				pids[i] = spawn(cf, fd);
				started[i] = time(NULL);
			}
	}

	log_info("serve: stopping; waiting for the requests in flight");
	for (i = 0; i < nworkers; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	for (alive = 1; alive; ) {
		alive = 0;
		for (i = 0; i < nworkers; i++) {
			if (pids[i] <= 0)
				continue;
			if (waitpid(pids[i], &status, 0) == pids[i] ||
			    errno == ECHILD)
				pids[i] = -1;
			else
				alive = 1;
		}
	}
	close(fd);
	if (strncmp(listen_addr, "unix:", 5) == 0)
		listen_addr += 5;
	if (listen_addr[0] == '/')
		unlink(listen_addr);
	conf_free(cf);
	log_info("serve: stopped");
	return 0;
}
