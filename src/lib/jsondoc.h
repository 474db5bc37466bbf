/* SPDX-License-Identifier: MIT */
/*
 * oncehook: a JSON text read once, as jansson reads it, for the event
 * in a body: its members found by JSON pointer, its canonical form
 * written.
 *
 * Not jansson itself, which allocates every value of a body and a hash
 * table for every object (docs/design/007-jsondoc-jsonpeek.md): jsondoc
 * reads the text into one array of nodes that point into it (strings
 * with escapes are decoded into one side buffer), and sorts each
 * object's members as it closes.
 *
 * It is held to jansson's reading, because stored hashes were made by
 * it: a retry of an event stored by an older oncehook must hash the
 * same.  jsondoc_read() takes exactly the texts that jansson's
 * json_loadb() takes with JSON_REJECT_DUPLICATES (and JSON_DECODE_ANY
 * if asked): strict RFC 8259 numbers, integers within a long long,
 * reals that do not overflow, valid UTF-8 without surrogates or
 * overlong forms, no NUL in strings or names, no control characters,
 * no duplicate names (compared decoded), at most 2,048 levels (each
 * value counting its own).  jsondoc_canonical() writes what jansson's
 * json_dumps(JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) writes
 * after pipeline/event.c's normalisation: reals holding whole numbers below
 * 2^53 as integers, other reals as "%.17g" with jansson's touches (".0"
 * added where no '.' or 'e', no '+' nor leading zeros in an exponent).
 * tests/unit/t_jsondoc.c checks all of it against jansson itself.
 */
#ifndef ONCEHOOK_JSONDOC_H
#define ONCEHOOK_JSONDOC_H

#include <stddef.h>

enum jsondoc_kind {
	JSONDOC_NULL,
	JSONDOC_TRUE,
	JSONDOC_FALSE,
	JSONDOC_INTEGER,	/* also a real holding a whole number < 2^53,
				 * except at the top */
	JSONDOC_REAL,
	JSONDOC_STRING,
	JSONDOC_ARRAY,
	JSONDOC_OBJECT
};

enum jsondoc_err {
	JSONDOC_OK,
	JSONDOC_EJSON,		/* not a text jansson takes */
	JSONDOC_ENOMEM
};

#define JSONDOC_ANY	0x1	/* any value at the top (JSON_DECODE_ANY) */
#define JSONDOC_MAX_DEPTH 2048	/* jansson's JSON_PARSER_MAX_DEPTH */

struct jsondoc;

/*
 * Read text[0..sz) into *out (free with jsondoc_free()).  Without
 * JSONDOC_ANY the top must be an object or an array.  Reads nothing
 * past text + sz, which must outlive the document.
 */
enum jsondoc_err jsondoc_read(const char *text, size_t sz, int flags,
		    struct jsondoc **out);
void		 jsondoc_free(struct jsondoc *);

/* Deepest nesting of arrays and objects, the top level counting 1. */
size_t		 jsondoc_depth(const struct jsondoc *);

/*
 * The value an RFC 6901 pointer leads to ("" is the top), as a node
 * number, or -1 if it leads nowhere (a missing member, an index out of
 * range or not written as one, a token longer than 255 bytes).
 */
long		 jsondoc_get(const struct jsondoc *, const char *pointer);
enum jsondoc_kind jsondoc_kind(const struct jsondoc *, long node);
/* A string's bytes (no NUL among them) and length; NULL otherwise. */
const char	*jsondoc_string(const struct jsondoc *, long node,
		    size_t *len);
/*
 * An object's or an array's text as read, from its bracket to its
 * closing one (a slice of the text given to jsondoc_read()); NULL for
 * any other value.
 */
const char	*jsondoc_raw(const struct jsondoc *, long node, size_t *len);
/* An integer's value (0 otherwise). */
long long	 jsondoc_integer(const struct jsondoc *, long node);

/* Leave the top object's member name out of the canonical form. */
void		 jsondoc_forget(struct jsondoc *, const char *name);

/*
 * Two pieces of JSON strings, shared with pipeline/event.c's event_unescape():
 * the value of the four hex digits at p (four bytes read), or -1 if one
 * is not a hex digit; the UTF-8 bytes of code point cp (at most
 * U+10FFFF) at o, their number (1 to 4) returned.
 */
long		 jsondoc_hex4(const char *p);
size_t		 jsondoc_utf8(char *o, unsigned long cp);

/*
 * The canonical form of the document, NUL-terminated, its length in
 * *len; owned by the document (valid until the next call or the free).
 * NULL if out of memory.
 */
const char	*jsondoc_canonical(struct jsondoc *, size_t *len);

#endif /* ONCEHOOK_JSONDOC_H */
