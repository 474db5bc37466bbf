/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: an LD_PRELOAD shim under which Connector/C refuses one
 * option, named by REFUSE_OPTION (MYSQL_OPT_SSL_CA, ...), as an
 * older or other client library might.  mysql_options() calls
 * mysql_optionsv() through the library's PLT, so this one is called.
 */
#include "config.h"	/* MARIADB_SONAME */

#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#define O(x)	{ #x, x }
static const struct {
	const char		*name;
	enum mysql_option	 o;
} opts[] = {
	O(MYSQL_OPT_SSL_ENFORCE), O(MYSQL_OPT_SSL_VERIFY_SERVER_CERT),
	O(MYSQL_OPT_SSL_CA), O(MYSQL_OPT_SSL_CERT), O(MYSQL_OPT_SSL_KEY),
	O(MARIADB_OPT_TLS_PASSPHRASE),
};

int
mysql_optionsv(MYSQL *m, enum mysql_option o, ...)
{
	static int	 (*real)(MYSQL *, enum mysql_option, ...);
	const char	*r = getenv("REFUSE_OPTION");
	va_list		 ap;
	void		*v, *w, *h;
	size_t		 i;

	/* Two arguments at most (MYSQL_OPT_CONNECT_ATTR_ADD's), passed on
	 * as they came: the callee reads those it takes. */
	va_start(ap, o);
	v = va_arg(ap, void *);
	w = va_arg(ap, void *);
	va_end(ap);
	for (i = 0; r != NULL && i < sizeof(opts) / sizeof(opts[0]); i++)
		if (opts[i].o == o && strcmp(opts[i].name, r) == 0)
			return 1;
	/* oncehook's own copy of the library (RTLD_LOCAL: not in the
	 * global scope RTLD_NEXT searches). */
	if (real == NULL && (h = dlopen(MARIADB_SONAME, RTLD_LAZY |
	    RTLD_NOLOAD)) != NULL)
		*(void **)&real = dlsym(h, "mysql_optionsv");
	if (real == NULL || real == mysql_optionsv)
		abort();
	return real(m, o, v, w);
}
