/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the libcurl room: its entry points, opened at the first use
 * (lib/dynlib.h).  libcurl brings two dozen libraries (HTTP/2, IDN,
 * LDAP, SSH, Kerberos...); a CGI run, which never sends nor fetches,
 * would relocate them all on every request.  Used by the outbox's URL
 * targets (outbox/sendhttp.c) and PayPal's certificates
 * (pipeline/certs.c).  configure checks the headers and names the
 * library (CURL_SONAME); the types and constants are curl.h's.
 */
#ifndef ONCEHOOK_CURLAPI_H
#define ONCEHOOK_CURLAPI_H

#include <stddef.h>

#include <curl/curl.h>

#include "lib/dynlib.h"

/* The entry points used, as curl.h declares them (lib/dynlib.h). */
#define CURLAPI_FUNCS(X) \
	X(__typeof__(curl_global_init), global_init, "curl_global_init") \
	X(__typeof__(curl_easy_init), easy_init, "curl_easy_init") \
	X(__typeof__(curl_easy_setopt), easy_setopt, "curl_easy_setopt") \
	X(__typeof__(curl_easy_perform), easy_perform, "curl_easy_perform") \
	X(__typeof__(curl_easy_getinfo), easy_getinfo, "curl_easy_getinfo") \
	X(__typeof__(curl_easy_cleanup), easy_cleanup, "curl_easy_cleanup") \
	X(__typeof__(curl_easy_strerror), easy_strerror, \
	    "curl_easy_strerror") \
	X(__typeof__(curl_slist_append), slist_append, "curl_slist_append") \
	X(__typeof__(curl_slist_free_all), slist_free_all, \
	    "curl_slist_free_all")

struct curl_api {
	CURLAPI_FUNCS(DYNLIB_MEMBER)
};

/*
 * The library, opened and initialised once per process; NULL with why
 * set (naming the Debian package) if it cannot be.
 */
const struct curl_api	*curlapi_load(char *why, size_t whysz);

#endif
