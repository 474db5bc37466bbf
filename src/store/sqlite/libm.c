/* SPDX-License-Identifier: MIT */
/*
 * oncehook: SQLite's math functions, with libm opened at their first
 * call.
 *
 * Debian's SQLite is built with its SQL math functions (sin(), pow(),
 * sqrt(), ...), so a program that links sqlite3 in (configure's default:
 * docs/design/003-lazymath.md) needs 19 functions of libm.  Linked with -lm,
 * every process maps and relocates libm at its start, whether or not an
 * actions file ever calls one of them: under CGI, at every request
 * (docs/design/003-lazymath.md).  They are defined here instead, and the
 * link has no -lm (Makefile.am: LAZY_LIBM, only where sqlite3 is linked
 * in; a shared libsqlite3 loads libm itself).  Each is a call through a
 * pointer; the first call of any of them opens libm by its soname with
 * dlopen(), as the libcurl and MariaDB rooms open theirs, and finds all
 * 19 (once, under pthread_once(): a writer's process also runs its
 * copier, a thread, store/sqlite/copier.h).
 *
 * If libm cannot be opened or lacks one of them (it is part of glibc:
 * nowhere oncehook runs), the process says so in one log line and aborts.
 * These functions cannot report a failure, and a result SQLite would make
 * NULL would be written into the site's tables; an abort leaves the
 * transaction uncommitted, as any crash does, and the event unanswered
 * (its retry comes).  Linked with -lm, such a process would not have
 * started at all.
 */
#include "config.h"

#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "lib/log.h"

/* The functions SQLite's library calls from libm (nm -u of libsqlite3.a
 * against libm's symbols): one argument, then two. */
#define ONE_ARG(X) X(acos) X(acosh) X(asin) X(asinh) X(atan) X(atanh) \
	X(cos) X(cosh) X(exp) X(log) X(sin) X(sinh) X(sqrt) X(tan) \
	X(tanh) X(trunc)
#define TWO_ARGS(X) X(atan2) X(fmod) X(pow)

#define POINTER1(f)	double (*f)(double);
#define POINTER2(f)	double (*f)(double, double);

/* libm's functions: the per-process cache, filled once. */
static struct {
	ONE_ARG(POINTER1)
	TWO_ARGS(POINTER2)
} libm;

static pthread_once_t	 once = PTHREAD_ONCE_INIT;

static void
load(void)
{
	const char	*e;
	void		*lib;

	if ((lib = dlopen(LIBM_SO, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		e = dlerror();
		log_error("cannot load %s for SQLite's math functions: %s",
		    LIBM_SO, e != NULL ? e : "?");
		abort();
	}
#define FIND(f) \
	if ((*(void **)&libm.f = dlsym(lib, #f)) == NULL) { \
		log_error("%s has no %s", LIBM_SO, #f); \
		abort(); \
	}
	ONE_ARG(FIND)
	TWO_ARGS(FIND)
#undef FIND
}

#define DEFINE1(f) \
double \
f(double x) \
{ \
	(void)pthread_once(&once, load); \
	return libm.f(x); \
}
#define DEFINE2(f) \
double \
f(double x, double y) \
{ \
	(void)pthread_once(&once, load); \
	return libm.f(x, y); \
}

ONE_ARG(DEFINE1)
TWO_ARGS(DEFINE2)
