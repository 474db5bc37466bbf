#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook tests: the MariaDB actions guard's lexer against the server's
# own over generated inputs (tests/unit/t_mylex), on a MariaDB of the
# test's own (tests/servers/mariadb.sh, md_test_env) set up as a site's
# might be, in ways oncehook's connection must not take on: a default
# sql_mode of NO_BACKSLASH_ESCAPES and ANSI_QUOTES, and latin1 forced on
# every client whatever it asks (character-set-client-handshake off).
# Its TAP is this script's; 77 (skipped) without mariadb-server.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=.}"
# shellcheck source=tests/servers/mariadb.sh
. "$top_srcdir/tests/servers/mariadb.sh"
md_test_env oncelex --character-set-client-handshake=OFF \
    --character-set-server=latin1 --collation-server=latin1_swedish_ci
md_sql "SET GLOBAL sql_mode = 'NO_BACKSLASH_ESCAPES,ANSI_QUOTES'" || {
	echo "Bail out! cannot set the server's default sql_mode"
	exit 99
}
"$top_builddir/tests/unit/t_mylex"
