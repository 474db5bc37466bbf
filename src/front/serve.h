/* SPDX-License-Identifier: MIT */
/*
 * oncehook: "oncehook serve", a FastCGI server of its own for Apache
 * mod_proxy_fcgi and nginx fastcgi_pass: a listening socket (TCP on
 * loopback or a unix socket), pre-forked workers that share one
 * database, graceful stop, dead workers replaced.
 */
#ifndef ONCEHOOK_SERVE_H
#define ONCEHOOK_SERVE_H

#include <stddef.h>

/* Run the server; returns the exit code (0 stopped, 1 error, 2 usage). */
int	serve_main(int argc, char **argv);

/*
 * Open a listening socket for addr: "HOST:PORT" on a loopback address,
 * or an absolute path (optionally "unix:" first) for a unix socket,
 * created with mode 0660 (a stale socket file is replaced; one in use
 * is an error).  Returns the descriptor, or -1 with a reason in err.
 */
int	serve_listen(const char *addr, char *err, size_t errsz);

#endif
