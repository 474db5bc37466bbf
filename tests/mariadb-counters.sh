#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook tests: what a delivery costs a MariaDB server, by its own
# counters (tests/e2e/mariadb_counters.py --check): every section of the
# shipped sql/actions/mysql/orders.sql and wordpress.sql, run by oncehook
# as CGI and as a FastCGI process with a typical event, makes no
# temporary table, on disk or in memory (Created_tmp_disk_tables,
# Created_tmp_tables before and after), new or duplicate; and a new
# event, a replay-guarded one and a duplicate take no more round trips
# than their ceilings (the general log).  A private server
# (tests/servers/mariadb.sh, md_test_env); 77 (skipped) without
# mariadb-server or python3.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=.}"
command -v python3 >/dev/null 2>&1 ||
    { echo "1..0 # SKIP python3 is not installed"; exit 77; }
# shellcheck source=tests/servers/mariadb.sh
. "$top_srcdir/tests/servers/mariadb.sh"
md_test_env counters
python3 "$top_srcdir/tests/e2e/mariadb_counters.py" --check \
    --bin "${ONCEHOOK_BIN:-$top_builddir/oncehook}" --socket "$MD_SOCK" \
    --srcdir "$top_srcdir" --tmp "$md_tmp"
