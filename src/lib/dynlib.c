/* SPDX-License-Identifier: MIT */
/* oncehook: a shared library opened at its first use (see lib/dynlib.h). */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "lib/dynlib.h"

void
dynlib_close(void **lib, void **slots, size_t n)
{
	if (*lib != NULL)
		dlclose(*lib);
	*lib = NULL;
	memset(slots, 0, n * sizeof(*slots));
}

int
dynlib_open(void **lib, const char *soname, const char *debpkg,
    const char *names, void **slots, size_t n, char *why, size_t whysz)
{
	const char	*e, *name = names;
	size_t		 i;

	if (*lib != NULL)
		return 0;
	if ((*lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		e = dlerror();
		snprintf(why, whysz, "cannot load %s (install the Debian "
		    "package %s): %s", soname, debpkg, e != NULL ? e : "?");
		return -1;
	}
	for (i = 0; i < n; i++, name += strlen(name) + 1)
		if ((slots[i] = dlsym(*lib, name)) == NULL) {
			snprintf(why, whysz, "%s: a function is missing: %s",
			    soname, name);
			dynlib_close(lib, slots, n);
			return -1;
		}
	return 0;
}
