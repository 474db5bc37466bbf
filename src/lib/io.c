/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the system helpers several rooms share (see lib/io.h).
 */
#include "config.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "lib/io.h"

int
io_write_all(int fd, const void *buf, size_t n)
{
	const char	*p = buf;
	ssize_t		 w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void
io_clock(struct timespec *t0)
{
	clock_gettime(CLOCK_MONOTONIC, t0);
}

long
io_ms_since(const struct timespec *t0)
{
	struct timespec	 t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)(t.tv_sec - t0->tv_sec) * 1000 +
	    (t.tv_nsec - t0->tv_nsec) / 1000000;
}

void
io_nap_us(long us)
{
	struct timespec	 ts = { us / 1000000L, (us % 1000000L) * 1000L };

	(void)nanosleep(&ts, NULL);
}

void
io_trim(void)
{
#ifdef __GLIBC__
	(void)malloc_trim(0);
#endif
}
