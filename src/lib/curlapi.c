/* SPDX-License-Identifier: MIT */
/* oncehook: the libcurl room (see lib/curlapi.h). */
#include "config.h"

#include <stdio.h>

#include "lib/curlapi.h"
#include "lib/dynlib.h"

/* The per-process cache: loaded once. */
static struct curl_api	 api;
static void		*lib;

#define NSYMS	(sizeof(api) / sizeof(void *))

const struct curl_api *
curlapi_load(char *why, size_t whysz)
{
	static const char	 names[] = CURLAPI_FUNCS(DYNLIB_NAME);

	if (lib != NULL)
		return &api;
	if (dynlib_open(&lib, CURL_SONAME, "libcurl4", names,
	    (void **)&api, NSYMS, why, whysz) == -1)
		return NULL;
	if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(why, whysz, "%s: curl_global_init failed",
		    CURL_SONAME);
		dynlib_close(&lib, (void **)&api, NSYMS);
		return NULL;
	}
	return &api;
}
