#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook on MariaDB with its connection cut at the instant of a
# COMMIT: a private MariaDB server on 127.0.0.1 (tests/servers/mariadb.sh),
# the fault proxy tests/servers/oncetest/myproxy.py between it and
# oncehook, and the scenarios of tests/e2e/commitfault.py: each moment
# (before the COMMIT reaches the server, after it but before its
# answer reaches oncehook, after the answer), for a CGI delivery, a
# FastCGI process's kept connection, "oncehook work" and "oncehook
# replay": never 200 (nor "replayed") unless the commit is known, the
# retry answered 200, one effect counted on the server.
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP (the scenarios'); exit 0 all passed, 1 some failed, 77
# skipped (no mariadbd or python3), 99 harness error.

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"

md_bin >/dev/null || { echo "1..0 # SKIP mariadbd is not installed"; exit 77; }
sv_need python3 mariadb mariadb-install-db
[ -x "$ONCEHOOK_BIN" ] || bail "no oncehook at $ONCEHOOK_BIN"
"$ONCEHOOK_BIN" --version >/dev/null 2>&1 || bail "$ONCEHOOK_BIN does not run"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-commitfault.XXXXXX") ||
    bail "mktemp failed"
chmod 0755 "$tmp"

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	md_stop
	sv_tmp_done "$tmp"
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

port=$(free_port) || bail "no free port"
if ! md_start "$tmp/md" "$port" 2>"$tmp/md-start.err"; then
	sed 's/^/# /' "$tmp/md-start.err"
	bail "MariaDB does not start"
fi
pw=cf-pw-$(date +%s)-$$
md_user shop oncehook "$pw" || bail "md_user failed"
printf '%s\n' "$pw" >"$tmp/db.password" || bail "writing the password file"
chmod 0600 "$tmp/db.password" || bail "chmod the password file"
mkdir "$tmp/t" || bail "mkdir"

watchdog=
command -v timeout >/dev/null 2>&1 && watchdog="timeout 120"
# shellcheck disable=SC2086 # watchdog is a command and its argument
$watchdog python3 "$top_srcdir/tests/e2e/commitfault.py" \
    --bin "$ONCEHOOK_BIN" --port "$port" --socket "$MD_SOCK" \
    --database shop --user oncehook --pwfile "$tmp/db.password" \
    --tmp "$tmp/t"
rc=$?
if [ "$rc" -ne 0 ] && [ -s "$tmp/t/oncehook.log" ]; then
	echo "# oncehook's log, the end:"
	tail -n 30 "$tmp/t/oncehook.log" | sed 's/^/#   /'
fi
[ "$rc" -le 1 ] || bail "the scenarios ended with status $rc"
exit "$rc"
