#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook tests: the MariaDB actions guard's lexer against the server's
# own over generated inputs (tests/unit/t_mylex), on a MariaDB of the
# test's own (tests/servers/mariadb.sh, md_test_env) whose default
# sql_mode a site might have set: NO_BACKSLASH_ESCAPES and ANSI_QUOTES,
# which oncehook's connection must not take.  Its TAP is this script's;
# 77 (skipped) without mariadb-server.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=.}"
# shellcheck source=tests/servers/mariadb.sh
. "$top_srcdir/tests/servers/mariadb.sh"
md_test_env oncelex
md_sql "SET GLOBAL sql_mode = 'NO_BACKSLASH_ESCAPES,ANSI_QUOTES'" || {
	echo "Bail out! cannot set the server's default sql_mode"
	exit 99
}
"$top_builddir/tests/unit/t_mylex"
