/* SPDX-License-Identifier: MIT */
/*
 * oncehook: which engine a configuration's ONCEHOOK_DB names
 * (store/store.h: store_connect()).  Alone in its file so that a test
 * build links another choice in its place (tests/unit/fakeconnect.c:
 * the in-memory engine, for the request cases).
 */
#include "config.h"

#include <stddef.h>

#include "conf.h"
#include "store/engine.h"
#include "store/store.h"

enum hook_err
store_connect(const struct conf *cf, int flags, struct store **out, char *err,
    size_t errsz)
{
	*out = NULL;
	return cf->my != NULL ? mys_connect(cf, flags, out, err, errsz) :
	    sqs_connect(cf, flags, out, err, errsz);
}
