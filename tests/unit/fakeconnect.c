/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the engine choice of tests/unit/oncehook-fake, the
 * binary the request cases (tests/cases/) run on the in-memory engine:
 * in place of src/store/connect.c, every ONCEHOOK_DB is a state file of
 * tests/unit/fakestore.c.  Everything else is the program as shipped.
 */
#include "config.h"

#include <stddef.h>

#include "conf.h"
#include "store/store.h"
#include "fakestore.h"

enum hook_err
store_connect(const struct conf *cf, int flags, struct store **out, char *err,
    size_t errsz)
{
	*out = fake_open_file(cf, flags & STORE_INIT, err, errsz);
	return *out != NULL ? HOOK_OK : HOOK_ECONF;
}
