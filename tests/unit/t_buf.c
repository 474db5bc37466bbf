/* SPDX-License-Identifier: MIT */
/*
 * t_buf: the growable byte buffer (src/lib/buf.c): pieces appended in
 * order, a NUL kept after them, the room reused once emptied, bytes
 * with NULs kept whole, and a request for more than memory can hold
 * refused with the buffer unchanged.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "tap.h"

int
main(void)
{
	struct buf	 b = { NULL, 0, 0 };
	char		 want[5000];
	size_t		 i, cap;
	int		 ok = 1;

	CHECK(buf_add(&b, "", 0) == 0 && b.len == 0 && b.p != NULL &&
	    b.p[0] == '\0', "nothing appended: an empty C string");
	for (i = 0; i < sizeof(want); i++) {
		want[i] = (char)('a' + i % 26);
		ok &= buf_add(&b, &want[i], 1) == 0;
	}
	CHECK(ok && b.len == sizeof(want) &&
	    memcmp(b.p, want, sizeof(want)) == 0,
	    "5,000 bytes appended one by one, in order (cap %zu)", b.cap);
	CHECK(b.cap > b.len && b.p[b.len] == '\0',
	    "a NUL after them, inside the room");
	cap = b.cap;
	b.len = 0;
	CHECK(buf_add(&b, "x\0y", 3) == 0 && b.len == 3 && b.cap == cap &&
	    memcmp(b.p, "x\0y", 4) == 0,
	    "emptied, the room is reused; a NUL inside is kept as a byte");
	CHECK(buf_room(&b, (size_t)-1) == -1 && b.len == 3 && b.cap == cap &&
	    memcmp(b.p, "x\0y", 4) == 0,
	    "room for SIZE_MAX bytes refused, the buffer unchanged");
	CHECK(buf_add(&b, want, (size_t)-1 / 2 + 1) == -1 && b.len == 3,
	    "an append larger than memory refused, nothing changed");
	free(b.p);
	return tap_done();
}
