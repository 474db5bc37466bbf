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

/* The entry points used, as curl.h declares them. */
struct curl_api {
	__typeof__(curl_easy_init)	*easy_init;
	__typeof__(curl_easy_setopt)	*easy_setopt;
	__typeof__(curl_easy_perform)	*easy_perform;
	__typeof__(curl_easy_getinfo)	*easy_getinfo;
	__typeof__(curl_easy_cleanup)	*easy_cleanup;
	__typeof__(curl_easy_strerror)	*easy_strerror;
	__typeof__(curl_slist_append)	*slist_append;
	__typeof__(curl_slist_free_all)	*slist_free_all;
};

/*
 * The library, opened and initialised once per process; NULL with why
 * set (naming the Debian package) if it cannot be.
 */
const struct curl_api	*curlapi_load(char *why, size_t whysz);

#endif
