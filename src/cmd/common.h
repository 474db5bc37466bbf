/* SPDX-License-Identifier: MIT */
/*
 * oncehook: what the commands (the files of src/cmd/) share: --help,
 * loading the part of the configuration a command uses, a number.
 */
#ifndef ONCEHOOK_CMD_COMMON_H
#define ONCEHOOK_CMD_COMMON_H

struct conf;

/* --help or -h as argv[1]: usage printed on stdout, 1; else 0. */
int		 cmd_helped(int argc, char **argv, const char *usage);
/*
 * Load what cmd uses of the configuration (CONF_NEEDS_*: the rows it
 * does not use are not read), and set the log level it names; NULL
 * after a message naming the variable.
 */
struct conf	*cmd_load(const char *cmd, unsigned needs);
/* A whole number in [0, max] for an option; -1 if not. */
long long	 cmd_number(const char *s, long long max);

#endif
