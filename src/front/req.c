/* SPDX-License-Identifier: MIT */
/*
 * oncehook: header lookup in a request.  CGI and FastCGI hand headers
 * over as HTTP_NAME variables, upper-cased with '-' turned into '_'; we
 * compare in that form so a lookup is case-insensitive.
 */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "front/req.h"

static int
same(const char *cgi, size_t len, const char *http)
{
	unsigned char	 a, b;

	for (; len > 0 && *http != '\0'; cgi++, http++, len--) {
		a = (unsigned char)*cgi;
		b = (unsigned char)*http;
		if (b == '-')
			b = '_';
		if (toupper(a) != toupper(b))
			return 0;
	}
	return len == 0 && *http == '\0';
}

const char *
req_header(const struct req *rq, const char *name)
{
	size_t	 i;

	for (i = 0; i < rq->nheaders; i++) {
		if (rq->headers[i].namelen < 5 ||
		    strncmp(rq->headers[i].name, "HTTP_", 5) != 0)
			continue;
		if (same(rq->headers[i].name + 5,
		    rq->headers[i].namelen - 5, name))
			return rq->headers[i].value;
	}
	return NULL;
}

long long
req_content_length(const char *s)
{
	long long	 v = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -2;
		if (v < (1LL << 50))
			v = v * 10 + (*s - '0');
	}
	return v;
}
