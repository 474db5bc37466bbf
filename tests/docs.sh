#!/bin/sh
# SPDX-License-Identifier: MIT
# The documentation follows the tables in the code: the man page's
# SYNOPSIS and `oncehook --help` name the same commands with the same
# arguments (src/cmd/main.c's command table).  TAP.
: "${ONCEHOOK_BIN:?ONCEHOOK_BIN is not set}"
: "${top_srcdir:?top_srcdir is not set}"
exec python3 "$top_srcdir/tests/docs/check.py" "$ONCEHOOK_BIN" \
    "$top_srcdir"
