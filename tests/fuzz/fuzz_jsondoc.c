/* SPDX-License-Identifier: MIT */
/*
 * oncehook fuzz target (libFuzzer): jsondoc against jansson on any
 * bytes.  Both must take or refuse the text (JSON_REJECT_DUPLICATES;
 * with JSON_DECODE_ANY when the first byte is odd, which is then not
 * part of the text); when taken, the canonical forms must be the same
 * bytes (jansson's dump after pipeline/event.c's former normalisation of whole
 * reals) and so must the depth.  A disagreement aborts.  Built and run
 * by tests/fuzz/run.sh; tests/unit/t_jsondoc.c is the same comparison on
 * generated texts in make check.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jansson_oracle.h"
#include "lib/jsondoc.h"

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
	want = json_dumps(j, CANON_FLAGS);
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
