/* SPDX-License-Identifier: MIT */
/*
 * oncehook: group commit under `oncehook serve` -- one writer process
 * claims the new events of every worker, several to a transaction.
 *
 * Why a process and socketpairs.  With synchronous=FULL every COMMIT
 * costs an fsync, and one event per transaction makes the disk's sync
 * rate the ceiling however many workers there are.  serve's workers
 * are processes (a crash in one cannot take the others with it), so
 * the writer is one too: the supervisor makes a socketpair per worker
 * before it forks anyone, the writer keeps one end of each and every
 * worker the other end of its own.  Nothing listens anywhere: no other
 * process can hand the writer a claim (only a worker, after it checked
 * the signature).  Workers still answer duplicates themselves, from
 * their own read connection, without the writer or the write lock
 * (but for a retry that comes in a run of new events, which a worker
 * sends straight here: pipeline/pipeline.h).
 *
 * The batch forms by itself (no timer): while one COMMIT's fsync runs,
 * the claims that arrive wait in their sockets; the writer then takes
 * every whole claim waiting (at most WRITER_BATCH_MAX), runs them in
 * one store_claim() (one savepoint each; the batch rule of store/store.h: one
 * failing claim fails alone), and only after that returns sends each
 * worker its result.  So no claim is answered before the COMMIT that
 * covers it, and a retry of an event still in a batch is not visible to
 * a worker's read: it goes to the writer too and is answered, after the
 * commit, as the duplicate it is.
 *
 * When the writer dies, its ends close: a worker waiting on it reads
 * end of file and answers 503 (the provider retries), and the
 * supervisor starts the writer and the workers again with new pairs.
 * A worker that dies is replaced on the same pair; each claim carries
 * an id (the worker's pid and a counter), so a reply meant for the dead
 * one is dropped by its successor.
 *
 * The same writer serves the FastCGI processes a web server started,
 * over a socket they find by name (writer/shared.h): then it accepts
 * peers as they come, and ends when the last one has been gone a while.
 *
 * The wire (native byte order: both ends are this binary, on this
 * machine): a frame is a u32 length of what follows, then
 *   claim:  u64 id, u32 endpoint, i64 received_at, the hash
 *           (CRYPTO_SHA256_HEXLEN bytes), key, u32 key_signed (0 or
 *           1), then signed_key, type, payload and norm; each string a
 *           u32 length and its bytes (WRITER_NONE for NULL: signed_key,
 *           type and norm);
 *   result: u64 id, i32 result (enum hook_err), u32 the number of
 *           peers connected to the writer that sent it something in the
 *           last 2 s (serve: its workers), u32 flags (WRITER_COPY), u32
 *           length and the why.
 * WRITER_COPY (in the first answer of a batch only, and only when the
 * writer has no copier: under `full`, store/sqlite/copier.h): the log grew by
 * STORE_COPY_STEP pages since the writer last asked; that worker copies
 * it into the database after its answer (store_upkeep(): STORE_COPY), so that the
 * writer's own checkpoint, which every claim waits for, copies only
 * what came since.  Under `normal` the writer's copier, a thread beside
 * it, does that copy, and no worker is asked (unless the copier could
 * not start).
 * The shared writer first sends WRITER_HELLO (a u32) on each connection
 * it accepted.
 */
#ifndef ONCEHOOK_WRITER_H
#define ONCEHOOK_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct conf;
struct store_claim;

#define WRITER_BATCH_MAX	64
#define WRITER_NONE		0xffffffffu	/* a NULL string */
#define WRITER_COPY		0x1u		/* result flag: store_upkeep(): STORE_COPY */
#define WRITER_HELLO		0x6f6e6331u	/* "onc1": the shared writer
						   accepted, and reads */

/* A worker's end: its socket, and the claims it sent so far. */
struct writer_link {
	int		 fd;
	uint64_t	 next;		/* the next claim's id */
	long		 timeout_ms;	/* for the writer's answer */
	char		*out;		/* the claim frame, kept between */
	size_t		 outcap;	/* claims (NULL, 0 to start) */
	int		 broken;	/* the writer is gone, or spoke
					   nonsense: the link is useless */
	pid_t		 pid;		/* in the claims' ids; 0: ask */
	uint32_t	 peers;		/* active peers of the writer at
					   its last answer (0: none yet) */
};

/* A link over the socket fd (-1: none yet), no claim sent, answers
 * waited for timeout_ms; free(l->out) when done with it. */
void	writer_link_init(struct writer_link *l, int fd, long timeout_ms);

/*
 * Claim c through the writer (the pipeline's claim function).  0: the
 * claim was sent, and c->result and c->why are as store_claim() would
 * set them, or HOOK_EBUSY (503) when the writer went away or did not
 * answer within the link's timeout (it may have committed: nothing is
 * acknowledged).  -1: the claim could not be sent whole, so no writer
 * can run it; the caller claims it itself.  A link that broke either
 * way says so in l->broken.
 */
int	writer_claim(void *link, struct store_claim *c);

/*
 * A shared writer's first word on a new connection (WRITER_HELLO),
 * waited for timeout_ms: 0, or -1 (no writer will read this
 * connection: claim here).
 */
int	writer_hello(int fd, long timeout_ms);

/*
 * The writer process: serve the claims of n workers on fds until
 * SIGTERM, then finish the batch in hand.  Returns an exit code.
 */
int	writer_main(const struct conf *cf, const int *fds, size_t n);

/*
 * The shared writer (writer/shared.h): the claims of whoever connects to
 * the listening socket lfd with this process's user id, until SIGTERM
 * or until nobody has been connected for linger_ms.  Returns an exit
 * code.
 */
int	writer_listen(const struct conf *cf, int lfd, long linger_ms);

#endif
