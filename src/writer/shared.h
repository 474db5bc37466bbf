/* SPDX-License-Identifier: MIT */
/*
 * oncehook: group commit for the FastCGI processes a web server started
 * (lighttpd mod_fastcgi, Apache mod_fcgid), and for its CGI requests:
 * they find one writer process by name and hand it their new events
 * (writer/writer.h does the claiming).
 *
 * Why.  serve's workers have a supervisor that starts their writer;
 * processes lighttpd or mod_fcgid started have none, so each would
 * commit its own claims: one fsync each under synchronous=FULL, and each
 * would read again the pages the others wrote.  So the first of them
 * with a new event to claim that finds no writer starts one, and all of
 * them hand it their claims; it runs every claim waiting in one
 * transaction (one savepoint each) and answers each after the COMMIT.
 *
 * The name.  An abstract unix socket (Linux): nothing in the file system
 * to leave behind, gone with the writer.  Its name is "oncehook-writer/"
 * and 32 hex digits.  The first 24 are of a SHA-256 over the user id and
 * the rest of what the writer's claims depend on: every ONCEHOOK_*
 * variable of the table but the secrets (ONCEHOOK_DB among them), the
 * identity of the database file, of this binary and of the mount
 * namespace (one network namespace can hold several chroots or
 * containers with the same paths, and after an upgrade the old writer
 * must not run the new binary's claims).  The last 8 are of the actions
 * texts the process runs (store/store.h: read at its start), so that
 * processes share a writer only when they run the same texts.  Binding
 * the name is the election: one process can, the others find it bound
 * and connect.  The writer's first word on each connection it accepted
 * is a hello (writer/writer.h): without it (a writer that was ending,
 * or whose start failed) the process claims its events itself.
 *
 * One text.  The writer reads the actions files when it starts, later
 * than its processes did.  A process about to start one first reads
 * the files again: if they no longer hold its texts (edited in place
 * since), it starts none and claims its own events, with its texts,
 * until they hold them again or it is restarted (logged once).  The
 * writer checks its own texts against the name's last 8 digits and
 * exits at once if they differ (an edit between the two reads).
 *
 * Who may talk to whom.  An abstract socket has no file permissions, so
 * each side checks the other's user id (SO_PEERCRED): the writer takes
 * claims only from its own user, a process hands claims only to a
 * writer of its own user.  Another user who took the name first can
 * only make this user's processes claim their events themselves.
 *
 * Failing safe.  Whatever keeps a process from handing a claim over
 * whole -- no writer and none can be started (the files changed among
 * the reasons), the name taken, no hello,
 * a connection that broke or stayed full (a writer stopped) before any
 * byte of the claim was sent -- makes it claim the
 * event itself, as without group commit: every claim is correct with
 * several writers (store/store.h); the writer only makes them cheaper.  Once
 * a claim was sent, only the writer's answer counts: a writer that dies
 * first is 503 (it may have committed; the provider's retry is then the
 * duplicate it is, or claimed anew).
 *
 * Only over SQLite.  Under synchronous=full a FastCGI process sends
 * every claim to the writer (a batch shares one fsync); under normal
 * one that finds the write lock taken as it comes, and from then on
 * every claim while the writer's answers say other processes sent it
 * claims in the last 2 s (the writer's one warm connection instead of
 * several re-reading each other's pages; a process alone claims itself,
 * where the hand-over would cost what it saves).  On MariaDB/MySQL the
 * server commits concurrent transactions together itself, and one
 * connection for every process would put each one's round trips behind
 * the others' (docs/design/015-shared-writer.md).
 *
 * Under CGI.  Each request is a process that would open the database,
 * parse its schema and close it again: most of what a CGI request
 * costs beyond starting the program.  So a CGI process with a parsed
 * event (bad input and handshakes never get here) asks once whether a
 * writer runs (a connect), and if none does, whether another CGI
 * request of the database runs now (its byte,
 * store/sqlite/walguard.h: requests overlap, the site is busy; work,
 * deliver and the FastCGI processes hold none); then it starts one.
 * With a writer it sends the event straight, a duplicate too (the
 * writer's claim answers a known key), and opens the database only if
 * the claim comes back, or to copy the log when the writer asks
 * (WRITER_COPY); without one (a quiet site, group commit off, a writer
 * that cannot start) it does its own work, as before.  A writer a CGI
 * request started gets the request's ONCEHOOK_*, locale and
 * temporary-directory variables only (not its headers), and not its
 * standard error if that is a pipe or a socket (Apache reads a CGI
 * program's until its end: the request would last as long as the
 * writer); lighttpd's file it keeps, so its lines go where the
 * requests' go.  The rule is the same under both synchronous
 * settings.  Each CGI process starts afresh: the pause between two
 * starts (SHAREDWRITER_RETRY_MS) does not hold across requests, so a
 * writer that cannot start is tried by each request that overlaps
 * another.
 *
 * Its life.  The writer is a new program (the same binary, executed
 * again with SHAREDWRITER_ARG and the bound socket as descriptor 3:
 * nothing of the SQLite connections of the process that started it
 * survives into it), in a session of its own, a grandchild of that
 * process, so it belongs to no request.  It ends when nobody has been
 * connected for SHAREDWRITER_LINGER_MS (the web server stopped its
 * processes), or on SIGTERM; the next new event starts another.
 */
#ifndef ONCEHOOK_SHAREDWRITER_H
#define ONCEHOOK_SHAREDWRITER_H

#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "writer/writer.h"

struct conf;
struct store_claim;

#define SHAREDWRITER_ARG	"--shared-writer"	/* argv[1] */
#define SHAREDWRITER_CGI	"cgi"		/* argv[2]: started by a CGI
						   request */
#define SHAREDWRITER_LINGER_MS	2000
#define SHAREDWRITER_RETRY_MS	5000	/* between two starts */

/* A FastCGI or CGI process's way to the writer. */
struct sharedwriter {
	const struct conf	*cf;
	struct writer_link	 link;		/* fd -1: not connected */
	struct sockaddr_un	 addr;
	socklen_t		 addrlen;	/* 0: off (claim here) */
	struct timespec		 started;	/* the last start */
	int			 starts;	/* tries so far */
	int			 said_texts;	/* logged: a file changed */
	int			 one_request;	/* a CGI process */
	int			 cgi_tried;	/* its one try made */
	int			 probe;		/* the database's directory
						   (normal: is its write lock
						   free?), or -1 */
};

/* Ready sw for cf's processes (group commit off: every claim here);
 * one_request: a CGI process ("Under CGI" above). */
void	sharedwriter_init(struct sharedwriter *sw, const struct conf *cf,
	    int one_request);

/* The pipeline's claim function (pipeline/pipeline.h): through the writer,
 * started if none runs; -1 when the claim is the caller's to make. */
int	sharedwriter_claim(void *sw, struct store_claim *c);

/* Whether sharedwriter_claim() would hand the next claim over now to a
 * writer other processes use too (pipeline/pipeline.h): 1, or 0.  A CGI
 * process looks for one here, once ("Under CGI"). */
int	sharedwriter_hands(void *sw);

void	sharedwriter_close(struct sharedwriter *sw);

/* The writer itself: `oncehook --shared-writer [cgi]` with the
 * listening socket as descriptor 3 (cgi: a CGI request started it).
 * Returns an exit code. */
int	sharedwriter_main(int cgi);

#endif
