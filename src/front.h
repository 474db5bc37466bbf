/*
 * oncehook: the front, the only room that knows libfcgi and CGI.  It
 * turns a request from the server into a struct req, hands it to the
 * pipeline, and writes the struct resp back.
 */
#ifndef ONCEHOOK_FRONT_H
#define ONCEHOOK_FRONT_H

struct pipeline;

/* 1 if the process was started as plain CGI (no FastCGI socket). */
int	front_is_cgi(void);

/* Handle the one CGI request of this process.  Returns an exit code. */
int	front_cgi(struct pipeline *);

/*
 * Accept FastCGI requests on listenfd (0 for the socket a process
 * manager passes on stdin) until accepting fails.  SIGTERM and SIGINT
 * end the process at once between requests, and after the request in
 * flight otherwise.  Returns an exit code.
 */
int	front_fcgi(struct pipeline *, int listenfd);

#endif
