/* SPDX-License-Identifier: MIT */
/* oncehook: the libcurl room (see lib/curlapi.h). */
#include "config.h"

#include <stdio.h>

#include "lib/curlapi.h"
#include "lib/dynlib.h"

/* The per-process cache: loaded once. */
static struct curl_api	 api;
static void		*lib;
static __typeof__(curl_global_init)	*global_init;

static const struct dynlib_sym syms[] = {
	{ "curl_global_init", (void **)&global_init },
	DYNLIB_SYM(api, easy_init, "curl_easy_init"),
	DYNLIB_SYM(api, easy_setopt, "curl_easy_setopt"),
	DYNLIB_SYM(api, easy_perform, "curl_easy_perform"),
	DYNLIB_SYM(api, easy_getinfo, "curl_easy_getinfo"),
	DYNLIB_SYM(api, easy_cleanup, "curl_easy_cleanup"),
	DYNLIB_SYM(api, easy_strerror, "curl_easy_strerror"),
	DYNLIB_SYM(api, slist_append, "curl_slist_append"),
	DYNLIB_SYM(api, slist_free_all, "curl_slist_free_all"),
};
#define NSYMS	(sizeof(syms) / sizeof(syms[0]))

const struct curl_api *
curlapi_load(char *why, size_t whysz)
{
	if (lib != NULL)
		return &api;
	if (dynlib_open(&lib, CURL_SONAME, "libcurl4", syms, NSYMS, why,
	    whysz) == -1)
		return NULL;
	if (global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(why, whysz, "%s: curl_global_init failed",
		    CURL_SONAME);
		dynlib_close(&lib, syms, NSYMS);
		return NULL;
	}
	return &api;
}
