#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook tests: the request cases (tests/cases/*/case.json, see
# tests/cases/README.md), each on SQLite, on a MariaDB of the test's
# own (tests/servers/mariadb.sh, md_test_env: stopped by PID) and on the
# in-memory engine (tests/unit/oncehook-fake), each with the fast paths
# off (CGI) and on (FastCGI), by tests/cases/run.py.
# Without mariadb-server only the SQLite runs are made.
# ONCEHOOK_BIN: the binary to feed (default: the build's).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=.}"
# shellcheck source=tests/servers/mariadb.sh
. "$top_srcdir/tests/servers/mariadb.sh"
if md_bin >/dev/null 2>&1; then
	md_test_env oncecases
	set -- --mysql-url "$ONCEHOOK_TEST_MYSQL" \
	    --mysql-pw "$ONCEHOOK_TEST_MYSQL_PW"
fi
# The in-memory engine: its own build of the program (make check has
# made it; not in a package's tree).
fake=$top_builddir/tests/unit/oncehook-fake
[ -x "$fake" ] && set -- "$@" --fake-bin "$fake"
python3 "$top_srcdir/tests/cases/run.py" \
    --bin "${ONCEHOOK_BIN:-$top_builddir/oncehook}" "$@"
