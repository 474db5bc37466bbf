/*
 * oncehook fuzz target (libFuzzer): jsondoc against jansson on any
 * bytes.  Both must take or refuse the text (JSON_REJECT_DUPLICATES;
 * with JSON_DECODE_ANY when the first byte is odd, which is then not
 * part of the text); when taken, the canonical forms must be the same
 * bytes (jansson's dump after event.c's former normalisation of whole
 * reals) and so must the depth.  A disagreement aborts.  Built and run
 * by tests/fuzz/run.sh; tests/t_jsondoc.c is the same comparison on
 * generated texts in make check.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsondoc.h"

static void
normalize(json_t *j)
{
	const char	*k;
	json_t		*v;
	size_t		 i;
	double		 d;

	if (json_is_object(j)) {
		json_object_foreach(j, k, v) {
			d = json_is_real(v) ? json_real_value(v) : 0.5;
			if (d > -9007199254740992.0 && d < 9007199254740992.0 &&
			    (double)(json_int_t)d == d)
				json_object_set_new(j, k,
				    json_integer((json_int_t)d));
			else
				normalize(v);
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) {
			d = json_is_real(v) ? json_real_value(v) : 0.5;
			if (d > -9007199254740992.0 && d < 9007199254740992.0 &&
			    (double)(json_int_t)d == d)
				json_array_set_new(j, i,
				    json_integer((json_int_t)d));
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

	if (!json_is_object(j) && !json_is_array(j))
		return 0;
	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v)
			if ((d = depth(v)) > m)
				m = d;
	} else
		json_array_foreach(j, i, v)
			if ((d = depth(v)) > m)
				m = d;
	return m + 1;
}

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*text = (const char *)data, *got;
	struct jsondoc	*d;
	enum jsondoc_err er;
	json_t		*j;
	char		*want;
	size_t		 len;
	int		 any = size > 0 && (data[0] & 1);

	if (any) {
		text++;
		size--;
	}
	j = json_loadb(text, size, JSON_REJECT_DUPLICATES |
	    (any ? JSON_DECODE_ANY : 0), NULL);
	er = jsondoc_read(text, size, any ? JSONDOC_ANY : 0, &d);
	if (er == JSONDOC_ENOMEM)
		abort();
	if ((j == NULL) != (er == JSONDOC_EJSON)) {
		fprintf(stderr, "jansson %s, jsondoc %s\n",
		    j ? "takes" : "refuses", d ? "takes" : "refuses");
		abort();
	}
	if (j == NULL)
		return 0;
	if (depth(j) != jsondoc_depth(d)) {
		fprintf(stderr, "depth %zu, jsondoc %zu\n", depth(j),
		    jsondoc_depth(d));
		abort();
	}
	normalize(j);
	want = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	got = jsondoc_canonical(d, &len);
	if (want == NULL || got == NULL)
		abort();
	if (strlen(want) != len || memcmp(want, got, len) != 0) {
		fprintf(stderr, "canonical forms differ:\n%s\n%.*s\n", want,
		    (int)len, got);
		abort();
	}
	free(want);
	json_decref(j);
	jsondoc_free(d);
	return 0;
}
