/* SPDX-License-Identifier: MIT */
/*
 * oncehook: what the commands share (common.h).
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/common.h"
#include "conf.h"
#include "lib/log.h"

/* --help for a command: 1 if asked (and printed). */
int
cmd_helped(int argc, char **argv, const char *usage)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		fputs(usage, stdout);
		return 1;
	}
	return 0;
}

/*
 * Load what cmd uses of the configuration (CONF_NEEDS_*: the rows it
 * does not use are not read) or say why not.
 */
struct conf *
cmd_load(const char *cmd, unsigned needs)
{
	struct conf	*cf;
	char		 err[512];

	if ((cf = conf_load_env_for(needs, err, sizeof(err))) == NULL)
		fprintf(stderr, "oncehook %s: %s\n", cmd, err);
	else
		log_setlevel(cf->loglevel);	/* ONCEHOOK_LOG, as cron asks */
	return cf;
}

/* A whole number in [0, max] for an option; -1 if not. */
long long
cmd_number(const char *s, long long max)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > max)
		return -1;
	return v;
}
