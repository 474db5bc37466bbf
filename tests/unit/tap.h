/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: a tiny TAP producer, in the spirit of Redis's
 * test_cond.  Each CHECK prints "ok N - what" or "not ok N - what";
 * tap_done() prints the plan and returns the exit code (0 if all
 * passed, 1 if not).  The automake TAP driver counts every line.
 */
#ifndef ONCEHOOK_TAP_H
#define ONCEHOOK_TAP_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int	tap_n, tap_failed;

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
