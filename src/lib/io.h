/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the system helpers several rooms share -- writing a whole
 * buffer to a descriptor, elapsed time on the monotonic clock, a short
 * sleep, memory given back.
 */
#ifndef ONCEHOOK_IO_H
#define ONCEHOOK_IO_H

#include <stddef.h>
#include <time.h>

/* Write all n bytes of p to fd, again after EINTR: 0, or -1 (errno). */
int	io_write_all(int fd, const void *p, size_t n);

/* Now on the monotonic clock, to measure from with io_ms_since(). */
void	io_clock(struct timespec *t0);

/* Milliseconds since t0 (io_clock()). */
long	io_ms_since(const struct timespec *t0);

/* Sleep us microseconds (a signal may end it sooner). */
void	io_nap_us(long us);

/*
 * Give the allocator's free pages back to the kernel (glibc's
 * malloc_trim(); nothing elsewhere): for a process gone idle.
 */
void	io_trim(void);

#endif
