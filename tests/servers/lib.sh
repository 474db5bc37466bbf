# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# oncehook tests: the library a server suite sources first (POSIX sh),
# after setting top_srcdir.  It sets what every suite runs under, finds
# the build and the binary, and brings in the TAP helpers (tap.sh).  A
# suite then sources the part for its servers, from this folder:
#   lighttpd.sh  lt_*: lighttpd from conf-examples, its env, its logs;
#   deploy.sh    dp_*: Apache, nginx, serve, the shared fixtures;
#   mariadb.sh   md_*: a MariaDB server of the test's own.
# And one more helper:
#   sv_need TOOL...  skip the whole suite (exit 77) if a tool is missing
set -u
LC_ALL=C
export LC_ALL
# No __pycache__ in the source tree (read-only under distcheck).
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
npm_config_update_notifier=false
export npm_config_update_notifier
: "${top_builddir:=.}"
: "${ONCEHOOK_BIN:=$top_builddir/oncehook}"
n=0
failed=0
# shellcheck source=tests/servers/tap.sh
. "$top_srcdir/tests/servers/tap.sh"

sv_need() {	# sv_need TOOL...
	for sv_t in "$@"; do
		command -v "$sv_t" >/dev/null 2>&1 ||
		    { echo "1..0 # SKIP $sv_t is not installed"; exit 77; }
	done
}
