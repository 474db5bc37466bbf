/* SPDX-License-Identifier: MIT */
/*
 * oncehook: a growable byte buffer, for text built piece by piece (SQL,
 * a fingerprint) and for the writer's frames.
 *
 * p holds len bytes; buf_add() keeps a NUL after them, so that text in a
 * buffer is a C string (a caller that writes into the room itself, as
 * read(2) does, keeps its own).  cap is what p can hold.  A zeroed
 * struct is an empty buffer; free(p) ends it; len = 0 empties it and
 * keeps the room.  Nothing is changed by a call that fails.
 */
#ifndef ONCEHOOK_BUF_H
#define ONCEHOOK_BUF_H

#include <stddef.h>

struct buf {
	char	*p;
	size_t	 len, cap;
};

/* Room for more bytes and a NUL past len: 0, or -1 (out of memory). */
int	buf_room(struct buf *b, size_t more);
/* Append the n bytes at s, and keep a NUL after them: 0, or -1. */
int	buf_add(struct buf *b, const void *s, size_t n);

#endif
