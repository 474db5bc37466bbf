#!/bin/sh
# oncehook tests: the MariaDB/MySQL store's contract on a real server.
# Starts a MariaDB of its own (tests/deploy/mariadb.sh: mariadb-install-db
# into a temporary directory, the server as an unprivileged user on a
# unix socket, stopped by PID), makes a database and a user with the
# privileges the README asks for, and runs tests/t_mystore against it
# (its TAP is this script's).  Exit status: t_mystore's; 77 (skipped)
# when mariadb-server is not installed; 99 if the server does not start.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=.}"
# shellcheck source=tests/deploy/mariadb.sh
. "$top_srcdir/tests/deploy/mariadb.sh"

if ! md_bin >/dev/null 2>&1; then
	echo "1..0 # SKIP no MariaDB server (Debian's mariadb-server)"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-mystore.XXXXXX") || exit 99
trap 'md_stop >/dev/null 2>&1; rm -rf "$tmp"' EXIT
trap 'exit 99' HUP INT TERM
if ! md_start "$tmp/md" >"$tmp/start.log" 2>&1; then
	echo "Bail out! MariaDB did not start: $(tail -n 3 "$tmp/start.log")"
	exit 99
fi
md_user oncetest oncetest 'pw-oncetest-1' || {
	echo "Bail out! cannot make the test database and user"
	exit 99
}
printf 'pw-oncetest-1\n' >"$tmp/pw"
chmod 600 "$tmp/pw"
ONCEHOOK_TEST_MYSQL="mysql://oncetest@localhost/oncetest?socket=$MD_SOCK"
ONCEHOOK_TEST_MYSQL_PW=$tmp/pw
export ONCEHOOK_TEST_MYSQL ONCEHOOK_TEST_MYSQL_PW
"$top_builddir/tests/t_mystore"
