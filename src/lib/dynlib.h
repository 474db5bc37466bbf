/* SPDX-License-Identifier: MIT */
/*
 * oncehook: a shared library opened at its first use (dlopen), not
 * linked: the one mechanism of the rooms that call libcurl
 * (outbox/sendhttp.c), MariaDB Connector/C (store/mysql/conn.c) and
 * OpenSSL's libcrypto (lib/pubkey.c), so that a process that never
 * needs them, a CGI run above all, never maps nor relocates them.
 *
 * A room declares its entry points as a struct of function pointers
 * and a table naming each one; dynlib_open() fills them all or none.
 */
#ifndef ONCEHOOK_DYNLIB_H
#define ONCEHOOK_DYNLIB_H

#include <stddef.h>

/* One entry point: its symbol, and where its address goes. */
struct dynlib_sym {
	const char	*name;
	void		**slot;
};

/* A table row for member f of the room's struct api at symbol name. */
#define DYNLIB_SYM(api, f, name)	{ (name), (void **)&(api).f }

/*
 * Open soname once per process into *lib and fill every slot of syms
 * (n of them).  0 if *lib was open already or is now; -1 with why set
 * (naming the Debian package that ships the library, debpkg) and every
 * slot cleared otherwise.
 */
int	dynlib_open(void **lib, const char *soname, const char *debpkg,
	    const struct dynlib_sym *syms, size_t n, char *why, size_t whysz)
	    __attribute__((warn_unused_result));

/* Close *lib, if open, and clear it and every slot of syms. */
void	dynlib_close(void **lib, const struct dynlib_sym *syms, size_t n);

#endif
