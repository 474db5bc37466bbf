/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the front, the only room that knows libfcgi and CGI.  It
 * turns a request from the server into a struct req, hands it to the
 * pipeline, and writes the struct resp back.
 */
#ifndef ONCEHOOK_FRONT_H
#define ONCEHOOK_FRONT_H

struct pipeline;

/*
 * Log why before dying of SIGBUS (SQLite's mapped -shm file could not be
 * written).  Once per process, before the first request.
 */
void	front_explain_faults(void);

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

/*
 * Set before front_fcgi(): a connection then has seconds from its
 * accept() to deliver its whole request, and seconds more to take the
 * answer, or it is shut down (a request cut short is never claimed).
 * front_fcgi() makes listenfd non-blocking and uses SIGALRM.  0, the
 * default, sets no limit.
 */
void	front_fcgi_limit(unsigned int seconds);

#endif
