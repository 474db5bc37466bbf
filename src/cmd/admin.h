/* SPDX-License-Identifier: MIT */
/*
 * oncehook: admin commands (SPEC section 9), run from a shell with the
 * same environment as the handler.  Each returns an exit code: 0 done,
 * 1 failed, 2 usage.  They print to stdout what a person asked for and
 * to stderr what went wrong; never a secret.
 */
#ifndef ONCEHOOK_ADMIN_H
#define ONCEHOOK_ADMIN_H

int	admin_init(int argc, char **argv);
int	admin_check(int argc, char **argv);
int	admin_sign(int argc, char **argv);
int	admin_list(int argc, char **argv);
int	admin_show(int argc, char **argv);
int	admin_prune(int argc, char **argv);
int	admin_stats(int argc, char **argv);
int	admin_replay(int argc, char **argv);
int	admin_work(int argc, char **argv);
int	admin_deliver(int argc, char **argv);

#endif
