/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: deliveries through the real pipeline, for the fault
 * and power-loss suites.  A configuration with one "generic" endpoint
 * (hmac-sha256) running the shipped sql/actions/orders.sql, a signed
 * POST as the front would hand it to pipeline_run(), and queries on a
 * connection of the plain "unix" VFS (never the fault shim).  A harness
 * failure exits 99.
 */
#ifndef ONCEHOOK_DELIVER_H
#define ONCEHOOK_DELIVER_H

#include <time.h>

#include <sqlite3.h>

struct conf;
struct pipeline;
struct resp;

/* The configuration over db; sync is "full" or "normal". */
/*
 * The suite's working directory, made from name: dir (size dirsz) gets
 * /tmp/oncehook-NAME-XXXXXX, tmpl and db (size pathsz each) the template
 * and database paths in it; the fault VFS becomes SQLite's default and
 * the product's log lines go to dir/stderr.log.  Bails on failure.
 */
void		 dl_workdir(const char *name, char *dir, size_t dirsz,
		    char *tmpl, char *db, size_t pathsz);
struct conf	*dl_conf(const char *db, const char *sync);
/* POST body, signed, to /hooks/generic at time now; r as answered. */
void		 dl_post(struct pipeline *, const char *body, time_t now,
		    struct resp *r);
/* A payment.success body for event key, paying order (amount cents). */
void		 dl_payment(char *buf, size_t sz, const char *key,
		    const char *order, int amount);
/* Open db with the plain unix VFS, read-write. */
sqlite3		*dl_open(const char *db);
/* Column 0 of the first row of sql, or -1 on error. */
long long	 dl_count(sqlite3 *, const char *sql);
/* 1 if PRAGMA integrity_check says ok. */
int		 dl_integrity(sqlite3 *);
/* Replace to (and its -wal, -shm) by a copy of the file from. */
void		 dl_copy(const char *from, const char *to);

#endif
