/* SPDX-License-Identifier: MIT */
/*
 * oncehook: an outbox row to a command (see outbox/send.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/io.h"
#include "outbox/send.h"

#define ARGV_MAX	64
#define ENV_MAX		1024
#define TAIL_MAX	512	/* the output kept, for why */
#define POLL_SLICE_MS	20	/* look at its exit this often */
#define OUTPUT_GRACE_MS	100	/* read its output this long after */

extern char	**environ;

/* Split command on spaces into argv (in buf); the count, or -1. */
static int
split(const char *command, char *buf, size_t bufsz, char **argv)
{
	char	*p;
	int	 n = 0;

	if (snprintf(buf, bufsz, "%s", command) >= (int)bufsz)
		return -1;
	for (p = strtok(buf, " "); p != NULL; p = strtok(NULL, " ")) {
		if (n == ARGV_MAX - 1)
			return -1;
		argv[n++] = p;
	}
	argv[n] = NULL;
	return n;
}

/* In the child: its environment, without oncehook's variables, with the
 * row's four.  Then exec; never returns. */
static void
child(char **argv, const struct send_msg *m, int in, int out, pid_t parent)
{
	static char	 vars[4][1024];
	char		*env[ENV_MAX + 5];
	sigset_t	 none;
	size_t		 i, n = 0;

	/* Killed if the deliverer dies (it was already, if its parent is
	 * no longer the deliverer). */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(125);
	(void)setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (dup2(in, 0) == -1 || dup2(out, 1) == -1 || dup2(out, 2) == -1)
		_exit(126);
	if (in > 2)
		close(in);
	if (out > 2)
		close(out);
	for (i = 0; environ[i] != NULL && n < ENV_MAX; i++)
		if (strncmp(environ[i], "ONCEHOOK_", 9) != 0)
			env[n++] = environ[i];
	snprintf(vars[0], sizeof(vars[0]), "ONCEHOOK_OUTBOX_ID=%s", m->id);
	snprintf(vars[1], sizeof(vars[1]), "ONCEHOOK_OUTBOX_TOPIC=%s",
	    m->topic);
	snprintf(vars[2], sizeof(vars[2]), "ONCEHOOK_OUTBOX_ENDPOINT=%s",
	    m->endpoint);
	snprintf(vars[3], sizeof(vars[3]), "ONCEHOOK_OUTBOX_KEY=%s", m->key);
	for (i = 0; i < 4; i++)
		env[n++] = vars[i];
	env[n] = NULL;
	environ = env;
	execvp(argv[0], argv);
	fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* The last non-empty line of the output kept, for why. */
static const char *
last_line(char *tail, size_t n)
{
	char	*p;

	tail[n] = '\0';
	while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == '\r' ||
	    tail[n - 1] == ' '))
		tail[--n] = '\0';
	if ((p = strrchr(tail, '\n')) != NULL)
		return p + 1;
	return tail;
}

int
send_command(const char *command, const struct send_msg *m, long timeout,
    char *why, size_t whysz)
{
	char		 buf[4096], *argv[ARGV_MAX], tail[TAIL_MAX + 1];
	char		 chunk[1024], line[200];
	struct pollfd	 pf[2];
	struct timespec	 t0;
	size_t		 sent = 0, kept = 0;
	ssize_t		 r;
	pid_t		 pid;
	long		 left;
	int		 inp[2] = { -1, -1 }, outp[2] = { -1, -1 };
	struct sigaction ign, oldpipe, dfl, oldchld;
	long		 exit_ms = 0;
	pid_t		 self, w;
	int		 status = -1, timed_out = 0, exited = 0, np, k;
	int		 waited = 0;

	if (whysz > 0)
		why[0] = '\0';
	if (split(command, buf, sizeof(buf), argv) <= 0) {
		snprintf(why, whysz, "the command is empty or too long");
		return -1;
	}
	if (pipe(inp) == -1 || pipe(outp) == -1) {
		snprintf(why, whysz, "pipe: %s", strerror(errno));
		goto fail;
	}
	/* Not inherited by the child's own children (dup2 clears it). */
	(void)fcntl(inp[1], F_SETFD, FD_CLOEXEC);
	(void)fcntl(outp[0], F_SETFD, FD_CLOEXEC);
	self = getpid();
	/* waitpid() must see its exit: not if SIGCHLD is ignored (a parent
	 * may have left it so across exec). */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	(void)sigaction(SIGCHLD, &dfl, &oldchld);
	if ((pid = fork()) == -1) {
		snprintf(why, whysz, "fork: %s", strerror(errno));
		(void)sigaction(SIGCHLD, &oldchld, NULL);
		goto fail;
	}
	if (pid == 0)
		child(argv, m, inp[0], outp[1], self);
	(void)setpgid(pid, pid);	/* its group, whichever runs first */
	close(inp[0]);
	close(outp[1]);
	inp[0] = outp[1] = -1;
	(void)fcntl(inp[1], F_SETFL, O_NONBLOCK);
	if (m->payloadsz == 0) {
		close(inp[1]);
		inp[1] = -1;
	}
	/* A program that exits before reading its input is its failure
	 * or its choice, never the deliverer's death. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	(void)sigaction(SIGPIPE, &ign, &oldpipe);
	io_clock(&t0);
	/*
	 * Feed its input and read its output until it exits, or the time
	 * is up.  Its exit decides, not its output's end: a program that
	 * leaves a background child holding its output (sendmail ... &)
	 * and exits 0 is done.  After its exit, what it wrote is read for
	 * a moment (OUTPUT_GRACE_MS), then left.
	 */
	while (outp[0] != -1) {
		if (!exited && (w = waitpid(pid, &status, WNOHANG)) != 0 &&
		    (w == pid || errno != EINTR)) {
			if (w == -1)
				waited = errno;
			exited = 1;
			exit_ms = io_ms_since(&t0);
			if (inp[1] != -1) {
				close(inp[1]);
				inp[1] = -1;
			}
		}
		if (exited && io_ms_since(&t0) - exit_ms >= OUTPUT_GRACE_MS)
			break;
		left = timeout * 1000 - io_ms_since(&t0);
		if (left <= 0 && !exited) {
			timed_out = 1;
			break;
		}
		/* Wake to look at its exit: SIGCHLD is not ours to catch. */
		if (left > POLL_SLICE_MS || left <= 0)
			left = POLL_SLICE_MS;
		np = 0;
		pf[np].fd = outp[0];
		pf[np++].events = POLLIN;
		if (inp[1] != -1) {
			pf[np].fd = inp[1];
			pf[np++].events = POLLOUT;
		}
		if ((k = poll(pf, (nfds_t)np, (int)left)) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (np == 2 && pf[1].revents != 0) {
			r = write(inp[1], m->payload + sent, m->payloadsz -
			    sent);
			if (r > 0)
				sent += (size_t)r;
			/* Done, or it will not read the rest: its stdin
			 * ends here either way. */
			if (sent == m->payloadsz || (r == -1 && errno !=
			    EAGAIN && errno != EINTR)) {
				close(inp[1]);
				inp[1] = -1;
			}
		}
		if (pf[0].revents != 0) {
			r = read(outp[0], chunk, sizeof(chunk));
			if (r > 0) {
				/* Keep the last TAIL_MAX bytes. */
				if ((size_t)r >= TAIL_MAX) {
					memcpy(tail, chunk + r - TAIL_MAX,
					    TAIL_MAX);
					kept = TAIL_MAX;
				} else {
					if (kept + (size_t)r > TAIL_MAX) {
						memmove(tail, tail + kept +
						    (size_t)r - TAIL_MAX,
						    TAIL_MAX - (size_t)r);
						kept = TAIL_MAX - (size_t)r;
					}
					memcpy(tail + kept, chunk, (size_t)r);
					kept += (size_t)r;
				}
			} else if (r == 0 || errno != EINTR) {
				close(outp[0]);
				outp[0] = -1;
			}
		}
	}
	/* Its output closed: wait for its exit, within the time left. */
	while (!timed_out && !exited) {
		if ((w = waitpid(pid, &status, WNOHANG)) == pid)
			break;
		if (w == -1 && errno != EINTR) {
			waited = errno;
			break;
		}
		if (timeout * 1000 - io_ms_since(&t0) <= 0)
			timed_out = 1;
		else
			(void)poll(NULL, 0, 10);
	}
	(void)sigaction(SIGPIPE, &oldpipe, NULL);
	if (timed_out) {
		(void)kill(-pid, SIGKILL);
		(void)kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
		(void)sigaction(SIGCHLD, &oldchld, NULL);
		snprintf(why, whysz, "%s: timed out after %ld s, killed",
		    argv[0], timeout);
		goto fail;
	}
	(void)sigaction(SIGCHLD, &oldchld, NULL);
	if (inp[1] != -1)
		close(inp[1]);
	if (outp[0] != -1)
		close(outp[0]);
	/* Its exit unknown is no success. */
	if (waited != 0) {
		snprintf(why, whysz, "%s: its exit is unknown: waitpid: %s",
		    argv[0], strerror(waited));
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	snprintf(line, sizeof(line), "%.199s", last_line(tail, kept));
	if (WIFEXITED(status))
		snprintf(why, whysz, "%s: exit %d%s%s", argv[0],
		    WEXITSTATUS(status), line[0] ? ": " : "", line);
	else
		snprintf(why, whysz, "%s: killed by signal %d%s%s", argv[0],
		    WTERMSIG(status), line[0] ? ": " : "", line);
	return -1;
fail:
	if (inp[0] != -1)
		close(inp[0]);
	if (inp[1] != -1)
		close(inp[1]);
	if (outp[0] != -1)
		close(outp[0]);
	if (outp[1] != -1)
		close(outp[1]);
	return -1;
}
