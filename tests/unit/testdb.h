/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the helpers of the tests that work in a temporary
 * directory of SQLite databases (t_store, t_outbox).  The including
 * file defines `static char dir[64]`, the directory, before including
 * this.
 *
 * - path(): a file of dir; write_file(): one written there, as after a
 *   restart; edit_file(): as edited under a running process;
 * - qint(): the first column of the first row of a query, as a number.
 */
#ifndef ONCEHOOK_TESTDB_H
#define ONCEHOOK_TESTDB_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "store/actfile.h"
#include "tap.h"

/* dir/name into buf (size sizeof(dir) + 64). */
static char *
path(char *buf, const char *name)
{
	snprintf(buf, sizeof(dir) + 64, "%s/%s", dir, name);
	return buf;
}

static void
edit_file(const char *name, const char *text)
{
	char	 p[sizeof(dir) + 64];
	FILE	*f;

	if ((f = fopen(path(p, name), "w")) == NULL ||
	    fputs(text, f) == EOF || fclose(f) == EOF)
		BAIL("%s: %s", p, strerror(errno));
}

static void
write_file(const char *name, const char *text)
{
	edit_file(name, text);
	actfile_forget(NULL);	/* as a restart would: the new text runs */
}

/* The first column of the first row of sql; -1 if none, -2 if NULL. */
static long long
qint(sqlite3 *db, const char *sql)
{
	sqlite3_stmt	*st;
	long long	 v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		BAIL("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -2 :
		    sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

#endif
