#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook tests: the orders domain on MariaDB: tests/unit/t_orders, the same
# program as for SQLite, with sql/actions/mysql/orders.sql on a MariaDB of
# the test's own (tests/servers/mariadb.sh, md_test_env): every arrival
# order of payment, refund and cancellation ends as on SQLite.  77
# (skipped) without mariadb-server.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=.}"
export top_srcdir
# shellcheck source=tests/servers/mariadb.sh
. "$top_srcdir/tests/servers/mariadb.sh"
md_test_env orders
"$top_builddir/tests/unit/t_orders"
