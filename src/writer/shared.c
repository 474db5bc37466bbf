/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the writer the FastCGI processes of a web server share, and
 * its CGI requests while they overlap (see writer/shared.h).
 */
#define _GNU_SOURCE		/* struct ucred, close_range */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"
#include "lib/buf.h"
#include "lib/crypto.h"
#include "lib/io.h"
#include "lib/log.h"
#include "store/actfile.h"
#include "store/sqlite/walguard.h"
#include "store/store.h"
#include "writer/shared.h"

#define NAME_PREFIX	"oncehook-writer/"
#define NAME_HEX	32		/* hex digits after NAME_PREFIX */
#define TEXTS_HEX	8		/* its last ones: the texts' */
#define ANSWER_MS	30000		/* past the wait for the lock */
/* The name's length as a sockaddr_un (abstract: a NUL, then the name),
 * and where in sun_path its texts' digits are. */
#define NAME_ADDRLEN	((socklen_t)(offsetof(struct sockaddr_un, sun_path) + \
			    1 + strlen(NAME_PREFIX) + NAME_HEX))
#define TEXTS_AT	(1 + strlen(NAME_PREFIX) + NAME_HEX - TEXTS_HEX)

extern char	**environ;

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Append s (n bytes) and a NUL, counted, to the text t: 0, or -1. */
static int
add(struct buf *t, const char *s, size_t n)
{
	return buf_add(t, s, n) == -1 || buf_add(t, "", 1) == -1 ? -1 : 0;
}

/*
 * Append "LABEL dev ino", and with when "size mtime", of the file at path
 * ("LABEL -" if none or it cannot be stat()ed): 0, or -1.
 */
static int
add_ident(struct buf *t, const char *label, const char *path, int when)
{
	struct stat	 sb;
	char		 line[200];
	int		 k;

	if (path == NULL || stat(path, &sb) == -1)
		k = snprintf(line, sizeof(line), "%s -", label);
	else if (when)
		k = snprintf(line, sizeof(line), "%s %ju %ju %jd %jd.%09ld",
		    label, (uintmax_t)sb.st_dev, (uintmax_t)sb.st_ino,
		    (intmax_t)sb.st_size, (intmax_t)sb.st_mtim.tv_sec,
		    sb.st_mtim.tv_nsec);
	else
		k = snprintf(line, sizeof(line), "%s %ju %ju", label,
		    (uintmax_t)sb.st_dev, (uintmax_t)sb.st_ino);
	return add(t, line, (size_t)k);
}

/*
 * What the writer's claims depend on, as text: the user, the table's
 * variables in the environment but the secrets, sorted, and each
 * actions file's identity.  0, or -1 (out of memory).
 */
static int
fingerprint(const struct conf *cf, unsigned char out[CRYPTO_SHA256_LEN])
{
	const struct conf_endpoint	*ep;
	const struct conf_var		*v;
	const char			**vars;
	struct buf			 t = { NULL, 0, 0 };
	char				 line[160];
	size_t				 n = 0, i, namelen;
	int				 rc = -1, k;

	for (i = 0; environ[i] != NULL; i++)
		n++;
	if ((vars = calloc(n + 1, sizeof(*vars))) == NULL)
		return -1;
	for (i = n = 0; environ[i] != NULL; i++) {
		if (strncmp(environ[i], "ONCEHOOK_", 9) != 0 ||
		    strchr(environ[i], '=') == NULL)
			continue;
		namelen = (size_t)(strchr(environ[i], '=') - environ[i]);
		if ((v = conf_var_of(cf, environ[i], namelen, &ep)) == NULL ||
		    (v->flags & CONF_HIDDEN))
			continue;
		vars[n++] = environ[i];
	}
	qsort(vars, n, sizeof(*vars), cmp_str);
	k = snprintf(line, sizeof(line), "uid %ld", (long)geteuid());
	if (add(&t, line, (size_t)k) == -1)
		goto out;
	for (i = 0; i < n; i++)
		if (add(&t, vars[i], strlen(vars[i])) == -1)
			goto out;
	/*
	 * Which file the path is, and which binary this is: an abstract
	 * name is shared by the whole network namespace, where the same
	 * path can be another file (a chroot, a private mount, another
	 * container), and after an upgrade the old writer would run the
	 * new binary's claims.  The mount namespace too.
	 */
	if (add_ident(&t, "db", cf->my == NULL ? cf->db : NULL,
	    0) == -1 || add_ident(&t, "exe", "/proc/self/exe",
	    1) == -1 || add_ident(&t, "mnt", "/proc/self/ns/mnt",
	    0) == -1)
		goto out;
	rc = crypto_sha256(t.p, t.len, out) == 0 ? 0 : -1;
out:
	free(t.p);
	free(vars);
	return rc;
}

/*
 * The actions texts' part of the name: TEXTS_HEX hex digits and a NUL
 * into hex, of a SHA-256 over each endpoint's text (its file's first
 * endpoint only), "-" for one that cannot be read.  The texts this
 * process runs (actfile_kept()), or with now what the files hold now.
 * 0, or -1 (out of memory).
 */
static int
texts_of(const struct conf *cf, int now, char hex[TEXTS_HEX + 1])
{
	struct buf	 t = { NULL, 0, 0 };
	unsigned char	 h[CRYPTO_SHA256_LEN];
	char		 all[CRYPTO_SHA256_HEXLEN + 1], line[64];
	const char	*text;
	char		*mine = NULL;
	size_t		 i, len = 0;
	int		 rc = -1, k;

	for (i = 0; i < cf->nendpoints; i++) {
		if (cf->endpoints[i].actions == NULL ||
		    conf_actions_first(cf, i) != i)
			continue;
		text = now ? (mine = actfile_now(cf->endpoints[i].actions,
		    &len)) : actfile_kept(cf->endpoints[i].actions, &len);
		k = snprintf(line, sizeof(line), "actions %zu", i);
		if (add(&t, line, (size_t)k) == -1 ||
		    (text != NULL ? crypto_sha256(text, len, h) != 0 ||
		    buf_add(&t, h, sizeof(h)) == -1 : add(&t, "-", 1) == -1))
			goto out;
		free(mine);
		mine = NULL;
	}
	if (add(&t, "texts", 5) == -1 || crypto_sha256(t.p, t.len, h) != 0)
		goto out;
	crypto_hex(h, sizeof(h), all);
	memcpy(hex, all, TEXTS_HEX);
	hex[TEXTS_HEX] = '\0';
	rc = 0;
out:
	free(mine);
	free(t.p);
	return rc;
}

/*
 * The writer's name for cf's processes: NAME_HEX - TEXTS_HEX hex digits
 * of the fingerprint, then TEXTS_HEX of the actions texts this process
 * runs (sw_connect() writes those at each connection), so that
 * processes share a writer only with the same texts, and the writer can
 * tell whether it read theirs (same_texts()).  Into addr and *len: 0,
 * or -1 (out of memory).
 */
static int
name_of(const struct conf *cf, struct sockaddr_un *addr, socklen_t *len)
{
	unsigned char	 h[CRYPTO_SHA256_LEN];
	char		 hex[CRYPTO_SHA256_HEXLEN + 1];

	if (fingerprint(cf, h) == -1)
		return -1;
	crypto_hex(h, sizeof(h), hex);
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	/* Abstract: a NUL first, then the name, no NUL after it. */
	(void)snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1,
	    "%s%.*s%0*d", NAME_PREFIX, NAME_HEX - TEXTS_HEX, hex,
	    TEXTS_HEX, 0);
	*len = NAME_ADDRLEN;
	return 0;
}

/*
 * Whether the texts (this process's, or with now the files' as they are
 * now) are those the name addr ends with: 1, 0, or -1 (out of memory).
 * Only the texts: the database file may have been replaced since (a
 * restore), and a writer opens the file at the path now, as the
 * processes do.
 */
static int
same_texts(const struct conf *cf, int now, const struct sockaddr_un *addr,
    socklen_t len)
{
	char	 hex[TEXTS_HEX + 1];

	if (len != NAME_ADDRLEN)
		return 0;
	if (texts_of(cf, now, hex) == -1)
		return -1;
	return memcmp(addr->sun_path + TEXTS_AT, hex, TEXTS_HEX) == 0;
}

void
sharedwriter_init(struct sharedwriter *sw, const struct conf *cf,
    int one_request)
{
	memset(sw, 0, sizeof(*sw));
	sw->cf = cf;
	writer_link_init(&sw->link, -1, (long)cf->busy_ms + ANSWER_MS);
	/*
	 * Under synchronous=full every claim goes to the writer: a batch
	 * shares one fsync.  Under normal there is no fsync to share; the
	 * writer's gain is one warm connection where several processes
	 * would each re-read the pages the others wrote, and the queue it
	 * keeps instead of the lock.  A process alone pays the hand-over
	 * for nothing, so under normal a process hands a claim over
	 * when the write lock is taken as it comes to claim (the probe:
	 * flock(2) on the database's directory, as
	 * store/sqlite/walguard.h takes it, tried without waiting), and then every claim for as long as the
	 * writer's answers say another process sent it something in the
	 * last 2 s too; at quiet times no writer even starts.
	 * Not for MariaDB/MySQL: InnoDB already commits concurrent
	 * transactions together, and one connection would queue every
	 * process's statements behind each other's round trips.
	 * Why: docs/design/015-shared-writer.md.
	 */
	sw->probe = -1;
	if (!cf->group_commit || !cf->fast_paths || cf->my != NULL)
		return;
	/* A CGI process looks when it first needs a writer (cgi_link()):
	 * many of its requests end before (a forgery, a bad request). */
	if ((sw->one_request = one_request))
		return;
	if (!cf->synchronous_full)
		sw->probe = walguard_dir(cf->db);
	/* On failure addrlen stays 0: off. */
	if (name_of(cf, &sw->addr, &sw->addrlen) == -1)
		log_warnx("group commit: out of memory: each process claims "
		    "its own events");
}

/* The peer on fd is this user: 1, or 0. */
static int
same_user(int fd)
{
	struct ucred	 cr;
	socklen_t	 len = sizeof(cr);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 &&
	    len == sizeof(cr) && cr.uid == geteuid();
}

/*
 * Whether the web server may read descriptor fd until its end (a pipe
 * or a socket, as Apache reads a CGI program's standard error): then a
 * writer started by a CGI request must not hold it, or the request
 * would not end before the writer.  A file (lighttpd's error log) it
 * may keep: its lines go where the request's go.
 */
static int
held_by_server(int fd)
{
	struct stat	 sb;

	return fstat(fd, &sb) == -1 || S_ISFIFO(sb.st_mode) ||
	    S_ISSOCK(sb.st_mode);
}

/*
 * A CGI request's environment, for the writer it starts: only what
 * configures oncehook (its ONCEHOOK_* variables, which name the writer)
 * and the locale's, never the request's own variables (its headers,
 * Authorization among them), which the writer would keep for its life;
 * the temporary directory SQLite may use.  NULL if out of memory.
 */
static char **
config_only(char **env)
{
	static const char *const keep[] = { "ONCEHOOK_", "PATH=", "TZ=",
	    "LANG=", "LC_", "TMPDIR=", "SQLITE_TMPDIR=" };
	char	**out;
	size_t	  i, j, n = 0;

	for (i = 0; env[i] != NULL; i++)
		;
	if ((out = calloc(i + 1, sizeof(*out))) == NULL)
		return NULL;
	for (i = 0; env[i] != NULL; i++)
		for (j = 0; j < sizeof(keep) / sizeof(keep[0]); j++)
			if (strncmp(env[i], keep[j], strlen(keep[j])) == 0) {
				out[n++] = env[i];
				break;
			}
	return out;
}

/*
 * Start a writer on the name: bind it (the election), then a grandchild
 * executes this binary again as the writer, with the socket as fd 3.
 * 0 if a writer holds the name now (this one's, or another's that was
 * faster), -1 if none can be started.
 */
static int
start_writer(struct sharedwriter *sw)
{
	static const int sigs[] = { SIGCHLD, SIGHUP, SIGINT, SIGQUIT,
			    SIGPIPE, SIGTERM, SIGALRM };
	const char	*argv[] = { "oncehook", SHAREDWRITER_ARG, NULL, NULL };
	char		**envp = environ;
	struct sigaction dfl, oldchld;
	sigset_t	 none;
	pid_t		 pid, grand, w;
	size_t		 i;
	int		 lfd, null, status = 0;

	if ((lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("group commit: socket");
		return -1;
	}
	if (bind(lfd, (struct sockaddr *)&sw->addr, sw->addrlen) == -1) {
		close(lfd);
		if (errno == EADDRINUSE)
			return 0;	/* another process was first */
		log_warn("group commit: bind");
		return -1;
	}
	if (listen(lfd, 128) == -1) {
		log_warn("group commit: listen");
		close(lfd);
		return -1;
	}
	/* Its child is waited for: not if SIGCHLD were ignored (a web
	 * server or a wrapper may have left it so). */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	(void)sigaction(SIGCHLD, &dfl, &oldchld);
	if ((pid = fork()) == -1) {
		log_warn("group commit: fork");
		(void)sigaction(SIGCHLD, &oldchld, NULL);
		close(lfd);
		return -1;
	}
	if (pid == 0) {
		/* The child only forks the writer, so that it is nobody's
		 * child to wait for; a failure here is the parent's 1. */
		if ((grand = fork()) != 0)
			_exit(grand == -1 ? 1 : 0);
		(void)setsid();
		/* Nothing ignored or blocked goes with it through exec. */
		for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			(void)sigaction(sigs[i], &dfl, NULL);
		sigemptyset(&none);
		(void)sigprocmask(SIG_SETMASK, &none, NULL);
		if ((null = open("/dev/null", O_RDWR)) == -1 ||
		    dup2(null, 0) == -1 || dup2(null, 1) == -1 ||
		    (sw->one_request && held_by_server(2) &&
		    dup2(null, 2) == -1) ||
		    dup2(lfd, 3) == -1 || fcntl(3, F_SETFD, 0) == -1)
			_exit(1);
		if (sw->one_request) {
			argv[2] = SHAREDWRITER_CGI;
			if ((envp = config_only(environ)) == NULL)
				_exit(1);
		}
		/* Nothing else of this process goes with it: the writer
		 * opens its own store. */
		if (close_range(4, ~0U, 0) == -1) {
			int	 fd;

			for (fd = 4; fd < 1024; fd++)
				(void)close(fd);
		}
		execve("/proc/self/exe", (char *const *)argv, envp);
		log_warn("group commit: cannot start the writer: "
		    "/proc/self/exe");
		_exit(1);
	}
	close(lfd);
	while ((w = waitpid(pid, &status, 0)) == -1 && errno == EINTR)
		;
	(void)sigaction(SIGCHLD, &oldchld, NULL);
	if (w == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		log_warnx("group commit: cannot start the writer (fork)");
		return -1;
	}
	log_debug("group commit: started a writer");
	return 0;
}

/* Connect to the writer on the name: the socket, or -1 (errno). */
static int
dial(const struct sharedwriter *sw)
{
	int	 fd, fl, e;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1)
		return -1;
	/* A unix socket connects at once or not at all (EAGAIN: the
	 * writer's backlog is full; it is behind). */
	if (connect(fd, (const struct sockaddr *)&sw->addr,
	    sw->addrlen) == -1 ||
	    (fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Whether another CGI request of the database runs now; this one holds
 * its byte from here to its exit (walguard_request()). */
static int
busy(struct sharedwriter *sw)
{
	if (sw->probe < 0)
		sw->probe = walguard_dir(sw->cf->db);
	return sw->probe >= 0 && walguard_request(sw->probe, sw->cf->db);
}

/* A connection to the writer, started if none runs (with busy_only,
 * only while another CGI request runs: busy()): 0, or -1. */
static int
sw_connect(struct sharedwriter *sw, int busy_only)
{
	char	 hex[TEXTS_HEX + 1];
	int	 fd, same;

	/*
	 * The name's last digits: of the texts this process runs now
	 * (they change only where one failed to load and was read again,
	 * store/store.h).  The rest stays as it was made at the start:
	 * after a restore every process still finds the one writer.
	 */
	if (texts_of(sw->cf, 0, hex) == -1)
		return -1;
	memcpy(sw->addr.sun_path + TEXTS_AT, hex, TEXTS_HEX);
	if ((fd = dial(sw)) == -1) {
		if (errno != ECONNREFUSED || (busy_only && !busy(sw)))
			return -1;
		/* Nobody holds the name.  A writer that keeps dying, or
		 * cannot be started, is not tried again at every event. */
		if (sw->starts > 0 &&
		    io_ms_since(&sw->started) < SHAREDWRITER_RETRY_MS)
			return -1;
		sw->starts++;
		io_clock(&sw->started);
		/*
		 * A writer started now reads the files as they are now: not
		 * if they no longer hold the texts this process runs (edited
		 * since it started), or its events would run either text.
		 * It claims its own until they hold them again, or it is
		 * restarted.
		 */
		if ((same = same_texts(sw->cf, 1, &sw->addr,
		    sw->addrlen)) != 1) {
			if (same == 0 && !sw->said_texts)
				log_warnx("group commit: an actions file no "
				    "longer holds the text this process "
				    "started with: it claims its own events, "
				    "with that text, until it is restarted (a "
				    "CGI request: until the files hold it "
				    "again)");
			sw->said_texts |= same == 0;
			return -1;
		}
		if (start_writer(sw) == -1 || (fd = dial(sw)) == -1)
			return -1;
	}
	if (!same_user(fd)) {
		log_error("group commit: the writer's name is held by "
		    "another user's process: each process claims its own "
		    "events");
		close(fd);
		sw->addrlen = 0;
		return -1;
	}
	/* No hello: a writer that was ending, or did not start. */
	if (writer_hello(fd, sw->cf->busy_ms > 100 ? (long)sw->cf->busy_ms :
	    100) == -1) {
		close(fd);
		return -1;
	}
	sw->link.fd = fd;
	sw->link.broken = 0;
	return 0;
}

/*
 * A CGI process's link (writer/shared.h, "Under CGI"): the writer that
 * runs, or one it starts while another request holds the database's
 * request byte (store/sqlite/walguard.h); tried once per request.  0,
 * or -1: the process does its own work.
 */
static int
cgi_link(struct sharedwriter *sw)
{
	if (sw->link.fd >= 0)
		return 0;
	if (sw->cgi_tried)
		return -1;
	sw->cgi_tried = 1;
	/* The texts first: the writer's name is made of them. */
	store_keep_actions(sw->cf);
	if (name_of(sw->cf, &sw->addr, &sw->addrlen) == -1) {
		sw->addrlen = 0;
		return -1;
	}
	return sw_connect(sw, 1);
}

int
sharedwriter_claim(void *arg, struct store_claim *c)
{
	struct sharedwriter	*sw = arg;
	int			 rc;

	if (sw->one_request) {
		if (cgi_link(sw) == -1)
			return -1;
	} else {
		if (sw->addrlen == 0)
			return -1;
		/*
		 * normal: while the writer last said other processes use
		 * it, every claim goes there; else only one that finds the
		 * write lock taken (the lock free, nobody to queue behind:
		 * claim here).
		 */
		if (sw->probe >= 0 && sw->link.peers < 2 &&
		    !walguard_taken(sw->probe))
			return -1;
		if (sw->link.fd < 0 && sw_connect(sw, 0) == -1)
			return -1;
	}
	rc = writer_claim(&sw->link, c);
	if (sw->link.broken) {
		close(sw->link.fd);
		sw->link.fd = -1;
		sw->link.broken = 0;
		sw->link.peers = 0;
	}
	return rc;
}

int
sharedwriter_hands(void *arg)
{
	struct sharedwriter	*sw = arg;

	if (sw->one_request)
		return cgi_link(sw) == 0;
	return sw->addrlen != 0 && sw->link.fd >= 0 && sw->link.peers >= 2;
}

void
sharedwriter_close(struct sharedwriter *sw)
{
	if (sw->link.fd >= 0)
		close(sw->link.fd);
	sw->link.fd = -1;
	if (sw->probe >= 0)
		close(sw->probe);
	sw->probe = -1;
	free(sw->link.out);
	sw->link.out = NULL;
	sw->link.outcap = 0;
}

int
sharedwriter_main(int cgi)
{
	struct sockaddr_un	 bound;
	struct conf		*cf;
	char			 err[512];
	socklen_t		 len = sizeof(int);
	int			 on = 0, rc, same;

	if (getsockopt(3, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == -1 ||
	    !on) {
		fprintf(stderr, "oncehook: %s is how a FastCGI or CGI "
		    "process starts its group commit writer, not a "
		    "command\n", SHAREDWRITER_ARG);
		return 2;
	}
	if ((cf = conf_load_env(err, sizeof(err))) == NULL) {
		log_error("group commit writer: configuration: %s", err);
		return 1;
	}
	log_setlevel(cf->loglevel);
	/* It runs the claims' actions: one text for its life, as each
	 * FastCGI process (store/store.h), and the one the processes on
	 * its name run: the name's last digits are of their texts. */
	store_keep_actions(cf);
	len = sizeof(bound);
	if (getsockname(3, (struct sockaddr *)&bound, &len) == -1) {
		log_warn("writer: getsockname");
		conf_free(cf);
		return 1;
	}
	if ((same = same_texts(cf, 0, &bound, len)) != 1) {
		if (same == 0)
			log_warnx("writer: an actions file changed since the "
			    "%s that started it read theirs: not started "
			    "(they claim their own events)", cgi ? "CGI "
			    "processes" : "FastCGI processes");
		else
			log_warnx("writer: out of memory: not started");
		conf_free(cf);
		return 1;
	}
	log_info("writer: started for the %s of %s", cgi ? "CGI requests" :
	    "FastCGI processes", cf->my != NULL ? "this MariaDB/MySQL "
	    "database" : cf->db);
	rc = writer_listen(cf, 3, SHAREDWRITER_LINGER_MS);
	conf_free(cf);
	return rc;
}
