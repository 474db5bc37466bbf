#!/bin/sh
# oncehook end to end: the shipped lighttpd configuration examples, a real
# lighttpd, and a client that signs its requests itself.
#
# The scenario suite (tests/e2e/scenarios.py) runs twice: once behind
# mod_fastcgi (conf-examples/lighttpd-fastcgi.conf, several processes),
# once behind mod_cgi (conf-examples/lighttpd-cgi.conf).  For each run the
# example is copied with only its ports, paths and values filled in (the
# database, the binary, the secrets, the busy timeout), included from a
# minimal lighttpd.conf listening on 127.0.0.1 only, the database is
# created with "oncehook init" from the very variables of the filled
# example, and lighttpd runs in the foreground until the run ends.
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

lighttpd=$(command -v lighttpd 2>/dev/null || true)
if [ -z "$lighttpd" ] && [ -x /usr/sbin/lighttpd ]; then
	lighttpd=/usr/sbin/lighttpd
fi
if [ -z "$lighttpd" ]; then
	echo "1..0 # SKIP lighttpd is not installed"
	exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 is not installed"
	exit 77
fi
[ -x "$ONCEHOOK_BIN" ] || bail "ONCEHOOK_BIN=$ONCEHOOK_BIN is not an executable"
for f in conf-examples/lighttpd-fastcgi.conf conf-examples/lighttpd-cgi.conf \
    sql/actions/orders.sql tests/e2e/scenarios.py tests/e2e/hookclient.py; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done

# As root, the backends run as nobody (lighttpd drops privileges).
run_user=
run_group=
if [ "$(id -u)" = 0 ]; then
	run_user=nobody
	run_group=$(id -gn nobody 2>/dev/null || echo nogroup)
fi

# Run a command as the backends' user (as is when not root, or without
# setpriv: the caller then hands the files over with chown).
as_backend() {
	if [ -n "$run_user" ] && command -v setpriv >/dev/null 2>&1; then
		setpriv --reuid="$run_user" --regid="$run_group" \
		    --clear-groups -- "$@"
	else
		"$@"
	fi
}

# A scenario run that hangs must not hang make check.
watchdog=
if command -v timeout >/dev/null 2>&1; then
	watchdog="timeout 300"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-e2e.XXXXXX") || bail "mktemp failed"
server_pid=
n=0
failed=0

stop_server() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
		server_pid=
	fi
}

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	stop_server
	if [ -n "${ONCEHOOK_E2E_KEEP:-}" ]; then
		echo "# kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

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

free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# The test's values.  Secrets as providers issue them: Stripe's whsec_
# string used as is; any string for the HMAC sender (two: a rotation).
STRIPE_SECRET=whsec_e2eStripeSigningSecret0123456789abcdef
SHOP_SECRET_OLD=e2e-shop-old-secret-4f1c
SHOP_SECRET=e2e-shop-secret-9b7d2a
BUSY_MS=${ONCEHOOK_E2E_BUSY_MS:-300}

# Fill a shipped example: only paths, ports and values change.  Every
# placeholder must be found exactly as shipped, so an edit of the example
# that the test no longer matches is a harness error, not a silent pass.
fill() {	# fill example dir
	ex=$1
	d=$2
	for pat in '"/usr/local/bin/oncehook' \
	    '"/var/lib/oncehook/oncehook.db"' \
	    '"whsec_REPLACE_WITH_YOUR_SIGNING_SECRET"' \
	    '"REPLACE_WITH_YOUR_SHARED_SECRET"' \
	    '"/usr/local/share/oncehook/sql/actions/orders.sql"' \
	    '"ONCEHOOK_BUSY_TIMEOUT_MS" => "5000"' \
	    '"ONCEHOOK_ENDPOINTS" => "stripe,shop"'; do
		grep -qF "$pat" "$ex" || bail "$ex: no $pat to fill in"
	done
	sed -e "s|\"/usr/local/bin/oncehook|\"$d/bin/oncehook|" \
	    -e "s|\"/run/lighttpd/oncehook.sock\"|\"$d/run/oncehook.sock\"|" \
	    -e "s|\"/var/lib/oncehook/oncehook.db\"|\"$d/db/oncehook.db\"|" \
	    -e "s|\"whsec_REPLACE_WITH_YOUR_SIGNING_SECRET\"|\"$STRIPE_SECRET\"|" \
	    -e "s|\"REPLACE_WITH_YOUR_SHARED_SECRET\"|\"$SHOP_SECRET $SHOP_SECRET_OLD\"|" \
	    -e "s|\"/usr/local/share/oncehook/sql/actions/orders.sql\"|\"$d/sql/orders.sql\"|" \
	    -e "s|\"ONCEHOOK_BUSY_TIMEOUT_MS\" => \"5000\"|\"ONCEHOOK_BUSY_TIMEOUT_MS\" => \"$BUSY_MS\"|" \
	    "$ex"
}

# One run of the suite behind lighttpd in mode fastcgi or cgi.
run_mode() {
	mode=$1
	d=$tmp/$mode
	mkdir -p "$d/conf" "$d/htdocs" "$d/db" "$d/run" "$d/log" "$d/upload" \
	    "$d/bin" "$d/sql" || bail "mkdir in $d"
	# A copy, so that the backends' user can reach it wherever the build
	# directory lies (under /root, say).
	cp "$ONCEHOOK_BIN" "$d/bin/oncehook" || bail "copying $ONCEHOOK_BIN"
	cp "$top_srcdir/sql/actions/orders.sql" "$d/sql/orders.sql" ||
	    bail "copying orders.sql"
	echo '<!doctype html><title>e2e</title>' >"$d/htdocs/index.html"
	port=$(free_port) || bail "no free port"

	fill "$top_srcdir/conf-examples/lighttpd-$mode.conf" "$d" \
	    >"$d/conf/oncehook.conf"
	if grep -v '^[[:space:]]*#' "$d/conf/oncehook.conf" | grep -e REPLACE_WITH \
	    -e /usr/local/ -e /var/lib/oncehook -e /run/lighttpd; then
		bail "lighttpd-$mode.conf: placeholders left after filling"
	fi
	# The variables of the filled example, for "oncehook init".
	sed -n 's/^[[:space:]]*"\(ONCEHOOK_[A-Z0-9_]*\)" => "\(.*\)",\{0,1\}$/\1=\2/p' \
	    "$d/conf/oncehook.conf" >"$d/conf/env"
	grep -q '^ONCEHOOK_DB=' "$d/conf/env" || bail "no ONCEHOOK_DB in $mode example"

	{
		echo "server.port = $port"
		echo 'server.bind = "127.0.0.1"'
		echo "server.document-root = \"$d/htdocs\""
		echo "server.errorlog = \"$d/log/error.log\""
		# The backends' stderr (oncehook's request log), as the
		# examples advise.
		echo "server.breakagelog = \"$d/log/breakage.log\""
		echo "server.pid-file = \"$d/run/lighttpd.pid\""
		echo "server.upload-dirs = ( \"$d/upload\" )"
		if [ -n "$run_user" ]; then
			echo "server.username = \"$run_user\""
			echo "server.groupname = \"$run_group\""
		fi
		echo "include \"$d/conf/oncehook.conf\""
	} >"$d/conf/lighttpd.conf"
	# As the example says: the secrets readable by root and lighttpd's
	# group only (lighttpd reads the configuration again on a graceful
	# restart, after dropping privileges).
	chmod 0640 "$d/conf/oncehook.conf" "$d/conf/lighttpd.conf"

	if [ -n "$run_user" ]; then
		chmod 0755 "$tmp" "$d"
		chown -R "$run_user:$run_group" "$d/db" "$d/run" "$d/log" \
		    "$d/upload" || bail "chown in $d"
		chmod 0700 "$d/db"
		chown "root:$run_group" "$d/conf" "$d/conf/oncehook.conf" \
		    "$d/conf/lighttpd.conf"
		chmod 0750 "$d/conf"
		chmod 0755 "$d/bin" "$d/sql" "$d/htdocs"
		chmod 0644 "$d/sql/orders.sql"
	fi

	if ! (
		while IFS= read -r kv; do
			# shellcheck disable=SC2163 # kv is NAME=value
			export "$kv"
		done <"$d/conf/env"
		as_backend "$d/bin/oncehook" init
	) >"$d/log/init.log" 2>&1; then
		sed 's/^/# /' "$d/log/init.log"
		bail "oncehook init failed ($mode)"
	fi
	if [ -n "$run_user" ]; then
		chown -R "$run_user:$run_group" "$d/db" || bail "chown $d/db"
	fi

	if ! "$lighttpd" -tt -f "$d/conf/lighttpd.conf" >"$d/log/tt.log" 2>&1; then
		tap not-ok "$mode: lighttpd accepts conf-examples/lighttpd-$mode.conf"
		sed 's/^/# /' "$d/log/tt.log"
		return
	fi
	"$lighttpd" -D -f "$d/conf/lighttpd.conf" >"$d/log/stdout.log" 2>&1 &
	server_pid=$!
	up=no
	i=0
	while [ $i -lt 100 ]; do
		if ! kill -0 "$server_pid" 2>/dev/null; then
			break
		fi
		if python3 -c 'import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()' \
		    "$port" 2>/dev/null; then
			up=yes
			break
		fi
		sleep 0.1
		i=$((i + 1))
	done
	if [ $up != yes ]; then
		tap not-ok "$mode: lighttpd starts with conf-examples/lighttpd-$mode.conf"
		sed 's/^/# /' "$d/log/stdout.log" "$d/log/error.log" 2>/dev/null
		stop_server
		return
	fi
	tap ok "$mode: lighttpd starts with conf-examples/lighttpd-$mode.conf"

	$watchdog python3 "$top_srcdir/tests/e2e/scenarios.py" \
	    --mode "$mode" --port "$port" --db "$d/db/oncehook.db" \
	    --server-pid "$server_pid" \
	    --log "$d/log/error.log" --log "$d/log/breakage.log" \
	    --log "$d/log/stdout.log" \
	    --busy-ms "$BUSY_MS" \
	    --stripe-secret "$STRIPE_SECRET" \
	    --shop-secret "$SHOP_SECRET" \
	    --shop-secret-old "$SHOP_SECRET_OLD" \
	    >"$d/log/scenarios.tap" 2>"$d/log/scenarios.err"
	rc=$?
	relay <"$d/log/scenarios.tap"
	if [ $rc -gt 1 ]; then
		tap not-ok "$mode: the scenarios ran to their end (exit $rc)"
		sed 's/^/# /' "$d/log/scenarios.err"
	fi
	stop_server

	# Sanitizer reports (ASan/UBSan builds) land where the backends'
	# stderr goes: server.breakagelog (else server.errorlog for CGI, and
	# lighttpd's own stderr for FastCGI).
	if grep -n -s -e 'ERROR: AddressSanitizer' -e 'runtime error:' \
	    -e 'LeakSanitizer' -e 'ERROR: .*Sanitizer' \
	    "$d/log/error.log" "$d/log/breakage.log" "$d/log/stdout.log" \
	    >"$d/log/san.log" 2>/dev/null; then
		tap not-ok "$mode: no sanitizer report in the error log"
		head -n 40 "$d/log/san.log" | sed 's/^/# /'
	else
		tap ok "$mode: no sanitizer report in the error log"
	fi
}

start=$(date +%s)
run_mode fastcgi
run_mode cgi
echo "# e2e took $(($(date +%s) - start))s"
echo "1..$n"
[ $failed -eq 0 ] || exit 1
exit 0
