/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: a tiny TAP producer, in the spirit of Redis's
 * test_cond.  Each CHECK prints "ok N - what" or "not ok N - what";
 * tap_done() prints the plan and returns the exit code (0 if all
 * passed, 1 if not).  The automake TAP driver counts every line.
 */
#ifndef ONCEHOOK_TAP_H
#define ONCEHOOK_TAP_H

#include <sys/prctl.h>
#include <sys/types.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int	tap_n, tap_failed;

/*
 * A test that hangs fails instead: after ONCEHOOK_TEST_TIMEOUT seconds
 * (600 if unset, 0 for none) it bails out, naming the last check done,
 * and its children started with tap_fork() die with it.  A hang would
 * otherwise hold make, and CI, until CI's own limit.
 */
static void
tap_timeout(int sig)
{
	char	 m[96];
	int	 n;

	(void)sig;
	n = snprintf(m, sizeof(m), "Bail out! no end in time: the last "
	    "check done was %d (ONCEHOOK_TEST_TIMEOUT)\n", tap_n);
	if (n > 0)
		(void)!write(STDOUT_FILENO, m, (size_t)n);
	_exit(99);
}

/*
 * fork(2), the child killed when the test ends, however it ends: a
 * child the test stopped (SIGSTOP) would otherwise outlive it, holding
 * the pipe make reads the test's output from.
 */
static inline pid_t
tap_fork(void)
{
	pid_t	 parent = getpid(), pid;

	if ((pid = fork()) == 0 &&
	    (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent))
		_exit(99);
	return pid;
}

__attribute__((constructor)) static void
tap_watchdog(void)
{
	const char	*s = getenv("ONCEHOOK_TEST_TIMEOUT");
	long		 t = s != NULL ? strtol(s, NULL, 10) : 600;

	if (t <= 0)
		return;
	(void)signal(SIGALRM, tap_timeout);
	(void)alarm((unsigned)t);
}

#define CHECK(cond, ...) do {						\
	int tap_ok_ = (cond) ? 1 : 0;	/* evaluated once */		\
	tap_n++;							\
	if (tap_ok_)							\
		printf("ok %d - ", tap_n);				\
	else {								\
		tap_failed++;						\
		printf("not ok %d - ", tap_n);				\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	if (!tap_ok_)							\
		printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__,	\
		    #cond);						\
	fflush(stdout);							\
} while (0)

/* A harness failure: not a test result; stop with automake's 99. */
#define BAIL(...) do {							\
	printf("Bail out! ");						\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	exit(99);							\
} while (0)

static inline int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/* The source tree (for sql/), from the test environment. */
static inline const char *
tap_srcdir(void)
{
	const char	*d = getenv("top_srcdir");

	return d != NULL ? d : ".";
}

/* Remove a test's flat temporary directory and the files in it. */
static inline void
tap_rmdir(const char *dir)
{
	char		 p[1024];
	DIR		*d;
	struct dirent	*e;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

#endif
