/* SPDX-License-Identifier: MIT */
/*
 * oncehook: one member of a JSON text, found without parsing the text.
 *
 * A retry is most often the stored bytes again.  To look it up, the
 * pipeline needs its key; a parse of the whole body (lib/jsondoc.h) costs
 * more than the lookup.  jsonpeek() walks the raw text along an RFC 6901
 * pointer, skipping every value off the path without decoding it, and
 * hands back the bytes of a plain string at its end.
 *
 * It never decides anything alone: it validates nothing off its path,
 * and a text that is not JSON may give any answer.  Its caller uses the
 * value only to find a stored event, and believes the find only if the
 * stored bytes are the body's bytes (which the parse accepted when they
 * were stored, giving that key).  Whatever it cannot be sure to read as
 * the parse would (an escape in a name or string on the path, an array on
 * the way, a number) it says so, and the caller parses.
 */
#ifndef ONCEHOOK_JSONPEEK_H
#define ONCEHOOK_JSONPEEK_H

#include <stddef.h>

enum jsonpeek {
	JSONPEEK_STRING,	/* a string without escapes: *v, *vlen */
	JSONPEEK_ABSENT,	/* no such member, null, or a scalar on
				 * the way (jsondoc_get(): nothing) */
	JSONPEEK_OTHER,		/* a number, true, false, object or array;
				 * for a number, true or false *v, *vlen
				 * hold its text (NULL, 0 otherwise) */
	JSONPEEK_UNSURE		/* cannot tell without a parse */
};

/*
 * Follow pointer ("/data/object/id"; "" is the whole text, which is
 * JSONPEEK_OTHER) through the object at the top of text[0..sz).  *v
 * points into text.  Reads nothing past text + sz; no allocation, no
 * recursion.
 */
enum jsonpeek	 jsonpeek(const char *text, size_t sz, const char *pointer,
		    const char **v, size_t *vlen);

#endif /* ONCEHOOK_JSONPEEK_H */
