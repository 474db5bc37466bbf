/* SPDX-License-Identifier: MIT */
/*
 * oncehook: application/x-www-form-urlencoded bodies (Twilio's), read
 * the way the WHATWG URL standard and Node.js's querystring read them:
 * pairs split on '&' (empty ones skipped), name and value split at the
 * first '=' (none: an empty value), '+' is a space, %XX a byte (a '%'
 * not followed by two hex digits stays as it is).  Knows no HTTP, no
 * scheme and no database.
 */
#ifndef ONCEHOOK_FORM_H
#define ONCEHOOK_FORM_H

#include <stddef.h>

struct form_param {
	const char	*name;		/* decoded, NUL-terminated; may hold */
	size_t		 namesz;	/* a NUL of its own (%00): use the size */
	const char	*value;
	size_t		 valuesz;
	size_t		 pos;		/* its place in the body, from 0 */
};

/* A parsed body; owns its strings.  Cleared with form_clear(). */
struct form {
	struct form_param	*v;
	size_t			 n;
	char			*buf;
};

/* Parse body[0..sz) into f.  Returns 0, or -1 if out of memory (f empty). */
int	form_parse(const char *body, size_t sz, struct form *f);
void	form_clear(struct form *f);

/*
 * Sort f's pairs by name, then by value, both as bytes: the order of
 * Twilio's signed string (names sorted, each name's values sorted).
 */
void	form_sort(struct form *f);

/*
 * The form as one JSON object, members in the order of their first
 * pair; a name sent once is a string, a name sent more than once an
 * array of its values in the order sent.  Strings are written the one
 * way pipeline/event.c writes them (only '"', '\\' and control
 * characters escaped).  Returns a new NUL-terminated text (its length
 * in *outsz) the caller frees; NULL with *why set if a name or value
 * is not UTF-8 text (invalid UTF-8 or a NUL), NULL with *why NULL if
 * out of memory.  f is not changed.
 */
char	*form_json(const struct form *f, size_t *outsz, const char **why);

#endif
