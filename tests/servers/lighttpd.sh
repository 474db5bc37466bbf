# SPDX-License-Identifier: MIT
# shellcheck shell=sh disable=SC2154 # top_srcdir, ONCEHOOK_BIN: the caller's
# oncehook tests: a real lighttpd running a shipped configuration example.
# Part of tests/servers/lib.sh, which the suites source (POSIX sh).
#
# The example (conf-examples/lighttpd-fastcgi.conf or lighttpd-cgi.conf)
# is copied with only its ports, paths and values filled in (the
# database, the binary, the secrets, the busy timeout), included from a
# minimal lighttpd.conf listening on 127.0.0.1 only; the database is
# created with "oncehook init" from the very variables of the filled
# example, and lighttpd runs in the foreground (-D) until lt_stop stops
# it by its PID.
#
# As root (CI), lighttpd drops to nobody:nogroup before it starts the
# backends, so that a read-only database is read-only to oncehook; the
# run directory and the database then belong to nobody.
#
# lib.sh gives it top_srcdir, ONCEHOOK_BIN, the secrets, bail, tap,
# free_port and as_backend; a suite calls lt_find (77 with a SKIP line
# when lighttpd is missing).
#
#   lt_setup MODE DIR  fill the example for MODE (fastcgi or cgi) into
#                      DIR/conf, copy the binary and orders.sql, run
#                      "oncehook init"; sets lt_port.  DIR/conf/env holds
#                      the ONCEHOOK_* variables of the filled example.
#                      With LT_ACTIONS_EXTRA set (an actions file), the
#                      copy of orders.sql gets that file's setup part
#                      before it and its sections after it.
#   lt_env DIR         write DIR/conf/env again from DIR/conf/oncehook.conf.
#   lt_start DIR MODE  start lighttpd; 0 once the port answers (sets
#                      server_pid), else 1 after a "not ok" line.
#   lt_stop            stop it by its PID.
#   lt_sanitizer DIR MODE  one TAP line: no sanitizer report in the logs.

lighttpd=
server_pid=
lt_port=

lt_find() {
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
	[ -x "$ONCEHOOK_BIN" ] ||
	    bail "ONCEHOOK_BIN=$ONCEHOOK_BIN is not an executable"
	for f in conf-examples/lighttpd-fastcgi.conf \
	    conf-examples/lighttpd-cgi.conf sql/actions/orders.sql; do
		[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
	done
	# As root, the backends run as nobody (lighttpd drops privileges).
	if [ "$(id -u)" = 0 ]; then
		run_user=nobody
		run_group=$(id -gn nobody 2>/dev/null || echo nogroup)
	fi
}

# The placeholders of the shipped examples and what the tests put in
# their place, one "placeholder|value" a line.  Every placeholder must
# be found exactly as shipped (but the FastCGI socket, marked "?", which
# the CGI example has not), so that an edit of the example that the test
# no longer matches is a harness error, not a silent pass.
lt_values() {	# lt_values dir
	cat <<EOF
"/usr/local/bin/oncehook|"$1/bin/oncehook
?"/run/lighttpd/oncehook.sock"|"$1/run/oncehook.sock"
"/var/lib/oncehook/oncehook.db"|"$1/db/oncehook.db"
"/usr/local/share/oncehook/sql/actions/orders.sql"|"$1/sql/orders.sql"
?"/usr/local/share/oncehook/unavailable.json"|"$1/sql/unavailable.json"
"ONCEHOOK_BUSY_TIMEOUT_MS" => "5000"|"ONCEHOOK_BUSY_TIMEOUT_MS" => "$BUSY_MS"
"ONCEHOOK_ENDPOINTS" => "stripe,shop,github,standard,svix,shopify,slack,paddle,gitlab"|"ONCEHOOK_ENDPOINTS" => "stripe,shop,github,standard,svix,shopify,slack,paddle,gitlab"
"whsec_REPLACE_WITH_YOUR_SIGNING_SECRET"|"$STRIPE_SECRET"
"REPLACE_WITH_YOUR_SHARED_SECRET"|"$SHOP_SECRET $SHOP_SECRET_OLD"
"REPLACE_WITH_YOUR_GITHUB_WEBHOOK_SECRET"|"$GITHUB_SECRET"
"whsec_REPLACEwithYOURstandardSIGNINGsecret"|"$STANDARD_SECRET"
"whsec_REPLACEwithYOURsvixSIGNINGsecret"|"$SVIX_SECRET"
"REPLACE_WITH_YOUR_SHOPIFY_CLIENT_SECRET"|"$SHOPIFY_SECRET"
"REPLACE_WITH_YOUR_SLACK_SIGNING_SECRET"|"$SLACK_SECRET"
"REPLACE_WITH_YOUR_PADDLE_SECRET_KEY"|"$PADDLE_SECRET"
"REPLACE_WITH_YOUR_GITLAB_SECRET_TOKEN"|"$GITLAB_SECRET"
# "ONCEHOOK_STATUS_TOKEN" => "REPLACE_WITH_A_LONG_RANDOM_TOKEN",|"ONCEHOOK_STATUS_TOKEN" => "$STATUS_TOKEN",
EOF
}

# Fill a shipped example: only paths, ports and values change.
lt_fill() {	# lt_fill example dir
	lt_values "$2" | python3 -c '
import sys
text = open(sys.argv[1], encoding="utf-8").read()
for line in sys.stdin.read().splitlines():
    old, new = line.split("|", 1)
    optional = old.startswith("?")
    old = old[1:] if optional else old
    if old not in text and not optional:
        sys.exit("%s: no %s to fill in" % (sys.argv[1], old))
    text = text.replace(old, new)
sys.stdout.write(text)' "$1"
}

# The variables of the filled example, for "oncehook init" and the
# scenarios (again after a test edits DIR/conf/oncehook.conf).
lt_env() {	# lt_env dir
	sed -n 's/^[[:space:]]*"\(ONCEHOOK_[A-Z0-9_]*\)" => "\(.*\)",\{0,1\}$/\1=\2/p' \
	    "$1/conf/oncehook.conf" >"$1/conf/env"
}

lt_setup() {	# lt_setup mode dir
	_m=$1
	_d=$2
	mkdir -p "$_d/conf" "$_d/htdocs" "$_d/db" "$_d/run" "$_d/log" \
	    "$_d/upload" "$_d/bin" "$_d/sql" || bail "mkdir in $_d"
	# A copy, so that the backends' user can reach it wherever the build
	# directory lies (under /root, say).
	cp "$ONCEHOOK_BIN" "$_d/bin/oncehook" || bail "copying $ONCEHOOK_BIN"
	if [ -n "${LT_ACTIONS_EXTRA:-}" ]; then
		{
			sed '/^-- on:/,$d' "$LT_ACTIONS_EXTRA"
			cat "$top_srcdir/sql/actions/orders.sql"
			sed -n '/^-- on:/,$p' "$LT_ACTIONS_EXTRA"
		} >"$_d/sql/orders.sql" || bail "building orders.sql"
	else
		cp "$top_srcdir/sql/actions/orders.sql" "$_d/sql/orders.sql" ||
		    bail "copying orders.sql"
	fi
	cp "$top_srcdir/conf-examples/unavailable.json" "$_d/sql/" ||
	    bail "copying unavailable.json"
	echo '<!doctype html><title>e2e</title>' >"$_d/htdocs/index.html"
	lt_port=$(free_port) || bail "no free port"

	lt_fill "$top_srcdir/conf-examples/lighttpd-$_m.conf" "$_d" \
	    >"$_d/conf/oncehook.conf" || bail "filling lighttpd-$_m.conf"
	if grep -v '^[[:space:]]*#' "$_d/conf/oncehook.conf" | grep -e REPLACE \
	    -e /usr/local/ -e /var/lib/oncehook -e /run/lighttpd; then
		bail "lighttpd-$_m.conf: placeholders left after filling"
	fi
	lt_env "$_d"
	grep -q '^ONCEHOOK_DB=' "$_d/conf/env" ||
	    bail "no ONCEHOOK_DB in the $_m example"

	{
		echo "server.port = $lt_port"
		echo 'server.bind = "127.0.0.1"'
		echo "server.document-root = \"$_d/htdocs\""
		echo "server.errorlog = \"$_d/log/error.log\""
		# The backends' stderr (oncehook's request log), as the
		# examples advise.
		echo "server.breakagelog = \"$_d/log/breakage.log\""
		echo "server.pid-file = \"$_d/run/lighttpd.pid\""
		echo "server.upload-dirs = ( \"$_d/upload\" )"
		# lighttpd's largest request header block (default 8192), so
		# that hostile signature headers of up to 60 KB reach oncehook.
		echo "server.max-request-field-size = 65535"
		if [ -n "$run_user" ]; then
			echo "server.username = \"$run_user\""
			echo "server.groupname = \"$run_group\""
		fi
		echo "include \"$_d/conf/oncehook.conf\""
	} >"$_d/conf/lighttpd.conf"
	# As the example says: the secrets readable by root and lighttpd's
	# group only (lighttpd reads the configuration again on a graceful
	# restart, after dropping privileges).
	chmod 0640 "$_d/conf/oncehook.conf" "$_d/conf/lighttpd.conf"

	if [ -n "$run_user" ]; then
		chmod 0755 "$(dirname "$_d")" "$_d"
		chown -R "$run_user:$run_group" "$_d/db" "$_d/run" "$_d/log" \
		    "$_d/upload" || bail "chown in $_d"
		chmod 0700 "$_d/db"
		chown "root:$run_group" "$_d/conf" "$_d/conf/oncehook.conf" \
		    "$_d/conf/lighttpd.conf"
		chmod 0750 "$_d/conf"
		chmod 0755 "$_d/bin" "$_d/sql" "$_d/htdocs"
		chmod 0644 "$_d/sql/orders.sql"
	fi

	if ! (
		while IFS= read -r kv; do
			# shellcheck disable=SC2163 # kv is NAME=value
			export "$kv"
		done <"$_d/conf/env"
		as_backend "$_d/bin/oncehook" init
	) >"$_d/log/init.log" 2>&1; then
		sed 's/^/# /' "$_d/log/init.log"
		bail "oncehook init failed ($_m)"
	fi
	if [ -n "$run_user" ]; then
		chown -R "$run_user:$run_group" "$_d/db" || bail "chown $_d/db"
	fi
}

lt_start() {	# lt_start dir mode
	_d=$1
	_m=$2
	if ! "$lighttpd" -tt -f "$_d/conf/lighttpd.conf" >"$_d/log/tt.log" 2>&1
	then
		tap not-ok "$_m: lighttpd accepts conf-examples/lighttpd-$_m.conf"
		sed 's/^/# /' "$_d/log/tt.log"
		return 1
	fi
	"$lighttpd" -D -f "$_d/conf/lighttpd.conf" >"$_d/log/stdout.log" 2>&1 &
	server_pid=$!
	_i=0
	while [ $_i -lt 100 ]; do
		if ! kill -0 "$server_pid" 2>/dev/null; then
			break
		fi
		if python3 -c 'import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()' \
		    "$lt_port" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	tap not-ok "$_m: lighttpd starts with conf-examples/lighttpd-$_m.conf"
	sed 's/^/# /' "$_d/log/stdout.log" "$_d/log/error.log" 2>/dev/null
	lt_stop
	return 1
}

lt_stop() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
		server_pid=
	fi
}

# Sanitizer reports (ASan/UBSan builds) land where the backends' stderr
# goes: server.breakagelog (else server.errorlog for CGI, and lighttpd's
# own stderr for FastCGI).
lt_sanitizer() {	# lt_sanitizer dir mode
	if grep -n -s -e 'ERROR: AddressSanitizer' -e 'runtime error:' \
	    -e 'LeakSanitizer' -e 'ERROR: .*Sanitizer' \
	    "$1/log/error.log" "$1/log/breakage.log" "$1/log/stdout.log" \
	    >"$1/log/san.log" 2>/dev/null; then
		tap not-ok "$2: no sanitizer report in the error log"
		head -n 40 "$1/log/san.log" | sed 's/^/# /'
	else
		tap ok "$2: no sanitizer report in the error log"
	fi
}
