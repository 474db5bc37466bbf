/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the SQLite library, process-wide (not one store's).  Set up
 * for one thread by store_process_init(); a writer that is to have a
 * copier (store/sqlite/copier.h) turns it back to two.
 */
#ifndef ONCEHOOK_SQLITE_LIBRARY_H
#define ONCEHOOK_SQLITE_LIBRARY_H

/* The SQLite library's version ("3.40.1"): the one linked in, or the
 * shared library this process loaded (for oncehook --version). */
const char	*sqlite_library_version(void);

/*
 * A writer that is to have a copier, before the copier starts and
 * before the writer opens any store: SQLite set up for two threads,
 * each with connections of its own (its mutexes on, what
 * store_process_init() turned off).  0, or -1: SQLite cannot be (it was
 * built without threads, or is in use): one thread only, then.
 */
int		 sqlite_threaded(void);

#endif
