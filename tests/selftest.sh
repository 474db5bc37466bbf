#!/bin/sh
# SPDX-License-Identifier: MIT
# "oncehook selftest" as a user runs it on the built binary: the
# providers' published signature vectors (src/cmd/selftest.c) must all pass.
# Its output is TAP.
: "${ONCEHOOK_BIN:?ONCEHOOK_BIN is not set}"
exec "$ONCEHOOK_BIN" selftest
