#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook tests: the MariaDB/MySQL store's contract on a real server:
# tests/unit/t_mystore against a MariaDB of the test's own
# (tests/servers/mariadb.sh, md_test_env: mariadb-install-db into a
# temporary directory, the server as an unprivileged user on a unix
# socket, stopped by PID).  Its TAP is this script's; 77 (skipped)
# without mariadb-server.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=.}"
# shellcheck source=tests/servers/mariadb.sh
. "$top_srcdir/tests/servers/mariadb.sh"
md_test_env oncetest
"$top_builddir/tests/unit/t_mystore"
