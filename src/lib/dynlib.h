/* SPDX-License-Identifier: MIT */
/*
 * oncehook: a shared library opened at its first use (dlopen), not
 * linked: the one mechanism of the rooms that call libcurl
 * (lib/curlapi.c), MariaDB Connector/C (store/mysql/conn.c) and
 * OpenSSL's libcrypto (lib/pubkey.c), so that a process that never
 * needs them, a CGI run above all, never maps nor relocates them.
 *
 * A room lists its entry points once, as X(type, member, "symbol")
 * rows of a macro; DYNLIB_MEMBER makes of it a struct of function
 * pointers, DYNLIB_NAME the symbols as one string.  Neither holds an
 * address: a table of pointers would cost every process, CGI runs
 * included, a relocation per row at start.
 */
#ifndef ONCEHOOK_DYNLIB_H
#define ONCEHOOK_DYNLIB_H

#include <stddef.h>

#define DYNLIB_MEMBER(type, member, sym)	type *member;
#define DYNLIB_NAME(type, member, sym)		sym "\0"

/*
 * Open soname once per process into *lib and fill the n pointers at
 * slots (a struct of DYNLIB_MEMBERs) from names (n DYNLIB_NAMEs, in
 * the same order).  0 if *lib was open already or is now; -1 with why
 * set (naming debpkg, the Debian package that ships the library) and
 * every slot cleared otherwise.
 */
int	dynlib_open(void **lib, const char *soname, const char *debpkg,
	    const char *names, void **slots, size_t n, char *why,
	    size_t whysz) __attribute__((warn_unused_result));

/* Close *lib, if open, and clear it and the n slots. */
void	dynlib_close(void **lib, void **slots, size_t n);

#endif
