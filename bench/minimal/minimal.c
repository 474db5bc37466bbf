/* SPDX-License-Identifier: MIT */
/*
 * The ceiling of bench/run.sh: the least a FastCGI (or CGI) responder
 * can do for a webhook.  It reads the body and answers 200 with the JSON
 * oncehook sends for a new event, and does nothing else: no signature,
 * no JSON parsing, no database.  Whatever oncehook costs above this row
 * is oncehook's own work; what this row costs is the web server's and
 * libfcgi's.
 *
 * Under a FastCGI server it loops; started as CGI, FCGI_Accept()
 * returns once with the CGI environment and stdin, so the same binary
 * is the "minimal CGI" row.
 *
 * cc -O2 -o minimal minimal.c -lfcgi
 */
#include <fcgi_stdio.h>
#include <stdlib.h>

int
main(void)
{
	static char	 buf[16384];
	const char	*cl;
	long		 left;
	size_t		 n, want;

	while (FCGI_Accept() >= 0) {
		cl = getenv("CONTENT_LENGTH");
		left = cl != NULL ? strtol(cl, NULL, 10) : 0;
		while (left > 0) {
			want = (size_t)left < sizeof(buf) ? (size_t)left :
			    sizeof(buf);
			if ((n = fread(buf, 1, want, stdin)) == 0)
				break;
			left -= (long)n;
		}
		printf("Status: 200 OK\r\n"
		    "Content-Type: application/json\r\n"
		    "\r\n"
		    "{\"status\":\"processed\"}\n");
	}
	return 0;
}
