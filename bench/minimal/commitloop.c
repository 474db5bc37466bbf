/* SPDX-License-Identifier: MIT */
/*
 * The floors under oncehook's write path, for bench/run.sh: how many
 * durable commits the disk and SQLite allow one process, with nothing
 * else in the way (no HTTP, no signature, no JSON).
 *
 *   commitloop sqlite full|normal DB SECONDS
 *	DB is a database made by "oncehook init" (the same tables and
 *	indexes).  Each iteration is one transaction as oncehook's claim
 *	is: BEGIN IMMEDIATE; an events row with a 1 KB payload; an orders
 *	row; COMMIT.  WAL,
 *	synchronous as asked.
 *   commitloop fdatasync FILE SECONDS
 *	Each iteration writes 4 KB (one WAL frame: a page and its header,
 *	rounded) into a file preallocated to 4 MB, cycling through it as a
 *	WAL does after a checkpoint, then fdatasync(): the device's floor
 *	for one durable commit.
 *
 * Prints one line of JSON: iterations, seconds, the median and 99th
 * percentile of one iteration in microseconds, the process's CPU (user +
 * system) in microseconds and its peak RSS (VmHWM) in kB.  Exit 1 on any
 * error.
 *
 * cc -O2 -o commitloop commitloop.c -lsqlite3
 */
#include <sys/resource.h>
#include <sys/time.h>

#include <err.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXLAT	(1 << 22)	/* iterations whose latency is kept */

static double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp(const void *a, const void *b)
{
	float	x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/* Peak RSS in kB (getrusage's may be the parent's, from before exec). */
static long
hwm(void)
{
	FILE	*f;
	char	 line[128];
	long	 kb = 0;

	if ((f = fopen("/proc/self/status", "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void
report(const char *what, float *lat, long n, double secs)
{
	struct rusage	ru;
	long		k = n < MAXLAT ? n : MAXLAT;
	double		cpu;

	getrusage(RUSAGE_SELF, &ru);
	cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	qsort(lat, (size_t)k, sizeof(*lat), cmp);
	printf("{\"what\":\"%s\",\"iterations\":%ld,\"seconds\":%.3f,"
	    "\"p50_us\":%.1f,\"p99_us\":%.1f,\"cpu_us\":%.0f,"
	    "\"rss_kb\":%ld}\n", what, n, secs, k ? lat[k / 2] : 0.0,
	    k ? lat[(long)(k * 0.99)] : 0.0, cpu, hwm());
}

static void
sq(sqlite3 *db, int rc, const char *what)
{
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
		errx(1, "%s: %s", what, sqlite3_errmsg(db));
}

static int
loop_sqlite(const char *sync, const char *path, double secs, float *lat)
{
	sqlite3		*db;
	sqlite3_stmt	*ev, *ord;
	char		 payload[1025], key[32], sql[64];
	double		 t0, t, end;
	long		 n = 0;

	memset(payload, 'x', sizeof(payload) - 1);
	payload[sizeof(payload) - 1] = '\0';
	sq(NULL, sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL),
	    path);
	sqlite3_busy_timeout(db, 5000);
	snprintf(sql, sizeof(sql), "PRAGMA journal_mode = WAL; "
	    "PRAGMA synchronous = %s", sync);
	sq(db, sqlite3_exec(db, sql, NULL, NULL, NULL), "pragmas");
	sq(db, sqlite3_prepare_v2(db, "INSERT INTO events (endpoint, key, "
	    "type, payload_hash, payload, received_at, processed_at, "
	    "expires_at) VALUES ('stripe', ?1, 'payment_intent.succeeded', "
	    "'0000000000000000000000000000000000000000000000000000000000000000'"
	    ", ?2, ?3, ?3, ?3 + 2592000) ON CONFLICT (endpoint, key) "
	    "DO NOTHING", -1, &ev, NULL), "prepare events");
	sq(db, sqlite3_prepare_v2(db, "INSERT INTO orders (id, amount, "
	    "currency, customer_email, payment_id, paid_at, created_at, "
	    "updated_at) VALUES (?1, 2000, 'eur', 'jenny@example.com', ?1, "
	    "?2, ?2, ?2)", -1, &ord, NULL), "prepare orders");
	end = now() + secs;
	t0 = now();
	while ((t = now()) < end) {
		snprintf(key, sizeof(key), "evt_%012ld", n);
		sq(db, sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL),
		    "begin");
		sqlite3_bind_text(ev, 1, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(ev, 2, payload, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ev, 3, (sqlite3_int64)time(NULL));
		sq(db, sqlite3_step(ev), "insert event");
		sqlite3_reset(ev);
		sqlite3_bind_text(ord, 1, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(ord, 2, (sqlite3_int64)time(NULL));
		sq(db, sqlite3_step(ord), "insert order");
		sqlite3_reset(ord);
		sq(db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), "commit");
		if (n < MAXLAT)
			lat[n] = (float)((now() - t) * 1e6);
		n++;
	}
	t = now() - t0;
	sqlite3_finalize(ev);
	sqlite3_finalize(ord);
	sq(db, sqlite3_close(db), "close");
	report(strcmp(sync, "full") == 0 ? "sqlite-full" : "sqlite-normal",
	    lat, n, t);
	return 0;
}

static int
loop_fdatasync(const char *path, double secs, float *lat)
{
	static char	 page[4096];
	const long	 frames = 1024;	/* 4 MB */
	double		 t0, t, end;
	long		 n = 0, i;
	int		 fd;

	memset(page, 'w', sizeof(page));
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) == -1)
		err(1, "%s", path);
	for (i = 0; i < frames; i++)
		if (write(fd, page, sizeof(page)) != (ssize_t)sizeof(page))
			err(1, "%s: write", path);
	if (fsync(fd) == -1)
		err(1, "%s: fsync", path);
	end = now() + secs;
	t0 = now();
	while ((t = now()) < end) {
		if (pwrite(fd, page, sizeof(page), (n % frames) *
		    (off_t)sizeof(page)) != (ssize_t)sizeof(page))
			err(1, "%s: pwrite", path);
		if (fdatasync(fd) == -1)
			err(1, "%s: fdatasync", path);
		if (n < MAXLAT)
			lat[n] = (float)((now() - t) * 1e6);
		n++;
	}
	t = now() - t0;
	close(fd);
	report("fdatasync", lat, n, t);
	return 0;
}

int
main(int argc, char *argv[])
{
	float	*lat;
	double	 secs;

	if (argc < 4 || (strcmp(argv[1], "sqlite") == 0 && argc != 5) ||
	    (strcmp(argv[1], "fdatasync") == 0 && argc != 4)) {
		fprintf(stderr, "usage: commitloop sqlite full|normal DB "
		    "SECONDS\n       commitloop fdatasync FILE SECONDS\n");
		return 2;
	}
	if ((lat = calloc(MAXLAT, sizeof(*lat))) == NULL)
		err(1, "calloc");
	if (strcmp(argv[1], "sqlite") == 0) {
		if (strcmp(argv[2], "full") != 0 &&
		    strcmp(argv[2], "normal") != 0)
			errx(2, "synchronous: full or normal");
		secs = atof(argv[4]);
		return loop_sqlite(argv[2], argv[3], secs, lat);
	}
	if (strcmp(argv[1], "fdatasync") == 0) {
		secs = atof(argv[3]);
		return loop_fdatasync(argv[2], secs, lat);
	}
	errx(2, "unknown loop %s", argv[1]);
}
