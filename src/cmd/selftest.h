/* SPDX-License-Identifier: MIT */
/*
 * oncehook: "oncehook selftest", the providers' published signature
 * vectors checked inside the binary, so a user without a compiler can
 * check a build.
 */
#ifndef ONCEHOOK_SELFTEST_H
#define ONCEHOOK_SELFTEST_H

/* Run every vector; print one line each.  Returns the exit code. */
int	selftest_main(int argc, char **argv);

#endif
