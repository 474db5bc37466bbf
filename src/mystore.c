#include "config.h"
#include <stdio.h>
#include "store_be.h"
enum hook_err
mys_connect(const struct conf *cf, int flags, struct store **out, char *err,
    size_t errsz)
{
	(void)cf; (void)flags; *out = NULL;
	snprintf(err, errsz, "no");
	return HOOK_ECONF;
}
