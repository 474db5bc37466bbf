/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: jansson as the oracle of jsondoc (tests/unit/t_jsondoc.c,
 * tests/fuzz/fuzz_jsondoc.c): pipeline/event.c's reading before jsondoc, its
 * normalisation of whole reals and the nesting depth of a value.
 */
#ifndef ONCEHOOK_JANSSON_ORACLE_H
#define ONCEHOOK_JANSSON_ORACLE_H

#include <stddef.h>

#include <jansson.h>

#define CANON_FLAGS	(JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)

static int
whole(const json_t *v, json_int_t *w)
{
	double	 d;

	if (!json_is_real(v))
		return 0;
	d = json_real_value(v);
	if (d <= -9007199254740992.0 || d >= 9007199254740992.0 ||
	    (double)(json_int_t)d != d)
		return 0;
	*w = (json_int_t)d;
	return 1;
}

static void
normalize(json_t *j)
{
	const char	*k;
	json_t		*v;
	json_int_t	 w;
	size_t		 i;

	if (json_is_object(j)) {
		json_object_foreach(j, k, v) {
			if (whole(v, &w))
				json_object_set_new(j, k, json_integer(w));
			else
				normalize(v);
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) {
			if (whole(v, &w))
				json_array_set_new(j, i, json_integer(w));
			else
				normalize(v);
		}
	}
}

static size_t
depth(const json_t *j)
{
	const char	*k;
	json_t		*v;
	size_t		 i, m = 0, d;

	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v)
			if ((d = depth(v)) > m)
				m = d;
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			if ((d = depth(v)) > m)
				m = d;
	} else
		return 0;
	return m + 1;
}

#endif
