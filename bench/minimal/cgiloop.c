/* SPDX-License-Identifier: MIT */
/*
 * cgiloop: run a CGI program N times in a row, as a web server would,
 * each request a new signed event from bench/pool.py's pool, and print
 * what the programs cost a request: wall time, user and system CPU, and
 * page faults (getrusage of the children: what the child does between
 * fork and exec too, not the parent's fork(2) itself).  No web
 * server in the way, so a change to a CGI request's start shows in a
 * few seconds; bench/run.sh's CGI rows are the measure that counts.
 *
 *   python3 bench/pool.py SECRET N POOLDIR
 *   cc -O2 -o cgiloop bench/minimal/cgiloop.c
 *   ONCEHOOK_...=... ./cgiloop PROGRAM POOLDIR COUNT [FIRST]
 *
 * The program gets POST /hooks/stripe (SCRIPT_NAME /hooks, PATH_INFO
 * /stripe), the body on standard input, Stripe-Signature t=TS,v1=SIG;
 * its environment is cgiloop's (the ONCEHOOK_ variables).  Pool entries
 * FIRST.. are used (0 by default): a new range for each run, as every
 * event is new once.  Answers without "processed" are counted as bad
 * (the first shown on standard error), as are programs that did not
 * exit 0.  Exit 0, or 1 on a bad answer, 2 on a usage or pool error.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BODY_MAX	8192

static char	tmpl[BODY_MAX], ts[64];

static int
slurp_line(const char *dir, const char *name, char *buf, size_t sz)
{
	char	 path[4096];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "r")) == NULL || fgets(buf, (int)sz, f) == NULL) {
		fprintf(stderr, "cgiloop: %s: cannot read\n", path);
		if (f != NULL)
			fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The body of event id: the template with each @ID@ replaced; 0 if it
 * does not fit in outsz bytes. */
static size_t
body_of(const char *id, char *out, size_t outsz)
{
	const char	*s = tmpl, *q;
	size_t		 n = 0, idlen = strlen(id);

	while ((q = strstr(s, "@ID@")) != NULL) {
		if (n + (size_t)(q - s) + idlen >= outsz)
			return 0;
		memcpy(out + n, s, (size_t)(q - s));
		n += (size_t)(q - s);
		memcpy(out + n, id, idlen);
		n += idlen;
		s = q + 4;
	}
	if (n + strlen(s) >= outsz)
		return 0;
	memcpy(out + n, s, strlen(s) + 1);
	return n + strlen(s);
}

/* One request: 0 if answered "processed", 1 if not, -1 on error. */
static int
request(const char *prog, const char *id, const char *sig)
{
	char	 body[BODY_MAX * 2], ans[8192], cl[32], hs[256];
	int	 in[2], out[2], st;
	size_t	 len = body_of(id, body, sizeof(body)), got = 0;
	ssize_t	 r;
	pid_t	 pid;

	if (len == 0) {
		fprintf(stderr, "cgiloop: pool.tmpl: a body too long\n");
		return -1;
	}
	if (pipe(in) == -1 || pipe(out) == -1 ||
	    write(in[1], body, len) != (ssize_t)len)	/* < a pipe's room */
		return -1;
	close(in[1]);
	snprintf(cl, sizeof(cl), "%zu", len);
	snprintf(hs, sizeof(hs), "t=%s,v1=%s", ts, sig);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		int	 dn = open("/dev/null", O_WRONLY);

		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(dn, 2);
		setenv("GATEWAY_INTERFACE", "CGI/1.1", 1);
		setenv("SERVER_PROTOCOL", "HTTP/1.1", 1);
		setenv("REQUEST_METHOD", "POST", 1);
		setenv("SCRIPT_NAME", "/hooks", 1);
		setenv("PATH_INFO", "/stripe", 1);
		setenv("CONTENT_TYPE", "application/json", 1);
		setenv("CONTENT_LENGTH", cl, 1);
		setenv("HTTP_STRIPE_SIGNATURE", hs, 1);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	while (got < sizeof(ans) - 1 &&
	    (r = read(out[0], ans + got, sizeof(ans) - 1 - got)) > 0)
		got += (size_t)r;
	ans[got] = '\0';
	close(out[0]);
	if (waitpid(pid, &st, 0) == -1)
		return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
	    strstr(ans, "\"processed\"") != NULL)
		return 0;
	return 1;
}

int
main(int argc, char *argv[])
{
	struct timespec	 t0, t1;
	struct rusage	 ru;
	char		 path[4096], line[256], id[64], sig[128];
	FILE		*ids;
	long		 n, first, i;
	double		 wall, user, sys;
	int		 bad = 0, r;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: cgiloop PROGRAM POOLDIR COUNT "
		    "[FIRST]\n");
		return 2;
	}
	n = atol(argv[3]);
	first = argc == 5 ? atol(argv[4]) : 0;
	if (n <= 0 || first < 0 ||
	    slurp_line(argv[2], "pool.tmpl", tmpl, sizeof(tmpl)) == -1 ||
	    slurp_line(argv[2], "pool.ts", ts, sizeof(ts)) == -1)
		return 2;
	snprintf(path, sizeof(path), "%s/pool.ids", argv[2]);
	if ((ids = fopen(path, "r")) == NULL) {
		fprintf(stderr, "cgiloop: %s: cannot read\n", path);
		return 2;
	}
	for (i = 0; i < first; i++)
		if (fgets(line, sizeof(line), ids) == NULL)
			goto short_pool;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		if (fgets(line, sizeof(line), ids) == NULL ||
		    sscanf(line, "%63s %127s", id, sig) != 2)
			goto short_pool;
		if ((r = request(argv[1], id, sig)) == -1) {
			perror("cgiloop");
			return 2;
		}
		if (r == 1 && bad++ == 0)
			fprintf(stderr, "cgiloop: event %s not processed\n",
			    id);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_CHILDREN, &ru);
	wall = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	user = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	printf("%ld requests: wall %.0f us, user %.0f us, system %.0f us, "
	    "CPU %.0f us, %.0f page faults a request; %d not processed\n",
	    n, wall / n * 1e6, user / n * 1e6, sys / n * 1e6,
	    (user + sys) / n * 1e6, (double)ru.ru_minflt / n, bad);
	return bad > 0;
short_pool:
	fprintf(stderr, "cgiloop: %s: fewer than %ld entries\n", path,
	    first + n);
	return 2;
}
