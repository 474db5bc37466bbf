#!/bin/sh
# oncehook end to end: the shipped lighttpd configuration examples, a real
# lighttpd, and a client that signs its requests itself.
#
# The scenario suite (tests/e2e/scenarios.py) runs twice: once behind
# mod_fastcgi (conf-examples/lighttpd-fastcgi.conf, several processes),
# once behind mod_cgi (conf-examples/lighttpd-cgi.conf).  For each run the
# example is copied with only its ports, paths and values filled in (the
# database, the binary, the secrets of every endpoint, the busy timeout),
# included from a minimal lighttpd.conf listening on 127.0.0.1 only, the
# database is created with "oncehook init" from the very variables of the
# filled example, and lighttpd runs in the foreground until the run ends
# (tests/e2e/lighttpd.sh).  The examples name one endpoint per provider:
# the suite runs its delivery and hostile-header scenarios on each, and
# in the CGI run also sends the hostile headers straight to the binary.
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped (no
# lighttpd or python3), 99 harness error.
#
# As root (CI), lighttpd drops to nobody:nogroup before it starts the
# backends, so that a read-only database is read-only to oncehook; the
# temporary directory and the database then belong to nobody.

set -u

LC_ALL=C
export LC_ALL
# No __pycache__ in the source tree (it is read-only under distcheck).
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=.}"
: "${ONCEHOOK_BIN:=$top_builddir/oncehook}"

bail() {
	echo "Bail out! $*"
	exit 99
}

n=0
failed=0

# Print one TAP line, numbered.
tap() {	# tap ok|not-ok description
	n=$((n + 1))
	if [ "$1" = ok ]; then
		printf 'ok %d - %s\n' "$n" "$2"
	else
		failed=$((failed + 1))
		printf 'not ok %d - %s\n' "$n" "$2"
	fi
}

[ -r "$top_srcdir/tests/e2e/lighttpd.sh" ] ||
    bail "missing $top_srcdir/tests/e2e/lighttpd.sh"
# shellcheck source=tests/e2e/lighttpd.sh
. "$top_srcdir/tests/e2e/lighttpd.sh"
lt_find
for f in tests/e2e/scenarios.py tests/e2e/hookclient.py \
    tests/e2e/actions-e2e.sql; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done
# The gitlab endpoint's sections for "Push Hook" (scenario G).
LT_ACTIONS_EXTRA=$top_srcdir/tests/e2e/actions-e2e.sql

# A scenario run that hangs must not hang make check.
watchdog=
if command -v timeout >/dev/null 2>&1; then
	watchdog="timeout 300"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-e2e.XXXXXX") || bail "mktemp failed"

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	lt_stop
	if [ -n "${ONCEHOOK_E2E_KEEP:-}" ]; then
		echo "# kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

# Renumber the "ok - ..." / "not ok - ..." lines of the scenarios.
relay() {
	while IFS= read -r line; do
		case $line in
		"ok - "*) tap ok "${line#ok - }" ;;
		"not ok - "*) tap not-ok "${line#not ok - }" ;;
		*) printf '%s\n' "$line" ;;
		esac
	done
}

# One run of the suite behind lighttpd in mode fastcgi or cgi.
run_mode() {
	mode=$1
	d=$tmp/$mode
	lt_setup "$mode" "$d"
	lt_start "$d" "$mode" || return
	tap ok "$mode: lighttpd starts with conf-examples/lighttpd-$mode.conf"

	# In the CGI run, the hostile headers also go straight to the
	# binary (no web server limit on their size), as the backends' user.
	set --
	if [ "$mode" = cgi ]; then
		set -- --cgi "$d/bin/oncehook"
		[ -n "$run_user" ] && set -- "$@" --cgi-user "$run_user"
	fi
	$watchdog python3 "$top_srcdir/tests/e2e/scenarios.py" \
	    --url "http://127.0.0.1:$lt_port/hooks" --env "$d/conf/env" \
	    --mode "$mode" --server-pid "$server_pid" \
	    --log "$d/log/error.log" --log "$d/log/breakage.log" \
	    --log "$d/log/stdout.log" --header-limit 65535 \
	    --e2e-actions "$@" \
	    >"$d/log/scenarios.tap" 2>"$d/log/scenarios.err"
	rc=$?
	relay <"$d/log/scenarios.tap"
	if [ $rc -gt 1 ]; then
		tap not-ok "$mode: the scenarios ran to their end (exit $rc)"
		sed 's/^/# /' "$d/log/scenarios.err"
	fi
	lt_stop
	lt_sanitizer "$d" "$mode"
}

start=$(date +%s)
run_mode fastcgi
run_mode cgi
echo "# e2e took $(($(date +%s) - start))s"
echo "1..$n"
[ $failed -eq 0 ] || exit 1
exit 0
