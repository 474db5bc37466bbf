/* SPDX-License-Identifier: MIT */
/*
 * oncehook: who may use the -wal and -shm at a database's path (see
 * store/sqlite/walguard.h).
 */
#define _GNU_SOURCE 1	/* F_OFD_SETLK */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/io.h"
#include "store/sqlite/walguard.h"

/*
 * A region of 2^31 bytes per database name (FNV-1a of the last path
 * segment, 31 bits): the byte is the inode's low 31 bits within it.
 * Regions and bytes stay below 2^62; the requests' bytes lie as far past
 * it, below 2^63: inside any off_t.
 */
#define REGION_BITS	31
#define REGION_SIZE	((off_t)1 << REGION_BITS)
/* The CGI requests' bytes (walguard_request()): past every region, at
 * the file's byte's place. */
#define REQUESTS_AT	((off_t)1 << 62)

static off_t
region_of(const char *name)
{
	uint32_t	 h = 2166136261u;

	for (; *name != '\0'; name++) {
		h ^= (unsigned char)*name;
		h *= 16777619u;
	}
	return (off_t)(h & (REGION_SIZE - 1)) << REGION_BITS;
}

/* The byte of the file ino at dbpath: in its name's region, at its
 * inode's low bits. */
static off_t
byte_of(const char *dbpath, ino_t ino)
{
	const char	*slash, *name;

	name = (slash = strrchr(dbpath, '/')) != NULL ? slash + 1 : dbpath;
	return region_of(name) + (off_t)(ino & (ino_t)(REGION_SIZE - 1));
}

/* 1 if another description holds a lock in [start, start + len). */
static int
held(int fd, off_t start, off_t len)
{
	struct flock	 fl;

	if (len <= 0)
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = start;
	fl.l_len = len;
	if (fcntl(fd, F_OFD_GETLK, &fl) == -1)
		return 0;
	return fl.l_type != F_UNLCK;
}

int
walguard_dir(const char *dbpath)
{
	char		 dir[4096];
	const char	*slash;

	if ((slash = strrchr(dbpath, '/')) == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if ((size_t)(slash - dbpath) >= sizeof(dir))
		return -1;
	else if (slash == dbpath)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - dbpath),
		    dbpath);
	return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int
walguard_taken(int dirfd)
{
	if (flock(dirfd, LOCK_EX | LOCK_NB) == -1)
		return 1;
	(void)flock(dirfd, LOCK_UN);
	return 0;
}

int
walguard_take(struct walguard *g, const char *dbpath, ino_t ino, char *err,
    size_t errsz)
{
	struct flock	 fl;
	off_t		 region, byte;
	int		 fd;

	g->fd = -1;
	g->locked = 0;
	if ((fd = walguard_dir(dbpath)) == -1)
		return WALGUARD_NONE;
	byte = byte_of(dbpath, ino);
	region = byte & ~(REGION_SIZE - 1);
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_RDLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = byte;
	fl.l_len = 1;
	if (fcntl(fd, F_OFD_SETLK, &fl) == -1) {
		close(fd);
		return WALGUARD_NONE;
	}
	if (held(fd, region, byte - region) ||
	    held(fd, byte + 1, region + REGION_SIZE - byte - 1)) {
		snprintf(err, errsz, "%s: another process still has the "
		    "database file that was at this path open (it was "
		    "replaced); its -wal is not this file's: waiting until it "
		    "lets go", dbpath);
		close(fd);
		return WALGUARD_FOREIGN;
	}
	g->fd = fd;
	g->byte = byte;
	return 0;
}

int
walguard_request(int dirfd, const char *dbpath)
{
	struct flock	 fl;
	struct stat	 sb;
	int		 others;

	if (stat(dbpath, &sb) == -1)
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_RDLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = REQUESTS_AT + byte_of(dbpath, sb.st_ino);
	fl.l_len = 1;
	others = held(dirfd, fl.l_start, 1);
	(void)fcntl(dirfd, F_OFD_SETLK, &fl);
	return others;
}

int
walguard_shared(const struct walguard *g)
{
	return g->fd >= 0 && held(g->fd, g->byte, 1);
}

void
walguard_release(struct walguard *g)
{
	if (g->fd >= 0)
		close(g->fd);	/* every lock of the description goes */
	g->fd = -1;
	g->locked = 0;
}

/*
 * The timer that ends a wait: made on first use, and kept (per-process
 * state, like the configuration).  It fires first at the deadline and
 * then every TICK_NS, so a signal that came just before the wait began
 * is followed by another.
 */
#define TICK_NS		5000000L	/* 5 ms */

static timer_t	 timer;
static int	 timer_state;		/* 0 not made, 1 made, -1 failed */

static void
on_timer(int sig)
{
	(void)sig;
}

static int
timer_ready(void)
{
	struct sigaction	 sa;
	struct sigevent		 sev;
	sigset_t		 set;

	if (timer_state != 0)
		return timer_state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_timer;	/* no SA_RESTART: the wait ends */
	sigemptyset(&sa.sa_mask);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = WALGUARD_SIGNAL;
	if (sigaction(WALGUARD_SIGNAL, &sa, NULL) == -1 ||
	    timer_create(CLOCK_MONOTONIC, &sev, &timer) == -1) {
		timer_state = -1;
		return -1;
	}
	sigemptyset(&set);
	sigaddset(&set, WALGUARD_SIGNAL);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	timer_state = 1;
	return 1;
}

static void
timer_arm(long ms)
{
	struct itimerspec	 it;

	memset(&it, 0, sizeof(it));
	if (ms > 0) {
		it.it_value.tv_sec = ms / 1000;
		it.it_value.tv_nsec = (ms % 1000) * 1000000L;
		it.it_interval.tv_nsec = TICK_NS;
	}
	(void)timer_settime(timer, 0, &it, NULL);
}

int
walguard_lock(struct walguard *g, long timeout_ms, long *waited_ms)
{
	struct timespec	 t0;
	long		 left;
	int		 rc, err;

	*waited_ms = 0;
	if (g->fd < 0 || g->locked)
		return 0;
	if (flock(g->fd, LOCK_EX | LOCK_NB) == 0) {
		g->locked = 1;
		return 0;
	}
	if (errno != EWOULDBLOCK || timer_ready() != 1)
		return 0;	/* no kernel wait: SQLite's handler waits */
	io_clock(&t0);
	for (;;) {
		if ((left = timeout_ms - io_ms_since(&t0)) <= 0) {
			*waited_ms = io_ms_since(&t0);
			return 1;
		}
		timer_arm(left);
		rc = flock(g->fd, LOCK_EX);
		err = errno;
		timer_arm(0);
		if (rc == 0) {
			g->locked = 1;
			*waited_ms = io_ms_since(&t0);
			return 0;
		}
		if (err != EINTR) {
			*waited_ms = io_ms_since(&t0);
			return 0;
		}
	}
}

void
walguard_unlock(struct walguard *g)
{
	if (g->fd < 0 || !g->locked)
		return;
	(void)flock(g->fd, LOCK_UN);
	g->locked = 0;
}
