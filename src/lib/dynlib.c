/* SPDX-License-Identifier: MIT */
/* oncehook: a shared library opened at its first use (see lib/dynlib.h). */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>

#include "lib/dynlib.h"

void
dynlib_close(void **lib, const struct dynlib_sym *syms, size_t n)
{
	size_t	 i;

	if (*lib != NULL)
		dlclose(*lib);
	*lib = NULL;
	for (i = 0; i < n; i++)
		*syms[i].slot = NULL;
}

int
dynlib_open(void **lib, const char *soname, const char *debpkg,
    const struct dynlib_sym *syms, size_t n, char *why, size_t whysz)
{
	const char	*e;
	size_t		 i;

	if (*lib != NULL)
		return 0;
	if ((*lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		e = dlerror();
		snprintf(why, whysz, "cannot load %s (install the Debian "
		    "package %s): %s", soname, debpkg, e != NULL ? e : "?");
		return -1;
	}
	for (i = 0; i < n; i++)
		if ((*syms[i].slot = dlsym(*lib, syms[i].name)) == NULL) {
			snprintf(why, whysz, "%s: a function is missing: %s",
			    soname, syms[i].name);
			dynlib_close(lib, syms, n);
			return -1;
		}
	return 0;
}
