#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook tests: the protocol's table of cases (tests/unit/t_protocol.c) on
# the fake engine, SQLite and a MariaDB of the test's own
# (tests/servers/mariadb.sh, md_test_env: stopped by PID).  Without
# mariadb-server, the MariaDB cases are skipped and the others run.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=.}"
# shellcheck source=tests/servers/mariadb.sh
. "$top_srcdir/tests/servers/mariadb.sh"
if md_bin >/dev/null 2>&1; then
	md_test_env oncetest
fi
"$top_builddir/tests/unit/t_protocol"
