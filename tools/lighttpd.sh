# SPDX-License-Identifier: MIT
# Sourced by tools/demo.sh and bench/latency.sh: run oncehook behind a
# real lighttpd from the shipped conf-examples, filling in only paths,
# the port and the secrets.  (tests/e2e-lighttpd.sh does the same with
# the extra steps a test needs: an unprivileged backend user, sanitizer
# logs.)  Needs bash.

# lh_setup MODE RUN BIN SHARE: write RUN/lighttpd.conf for MODE (fastcgi
# or cgi) on a free port of 127.0.0.1, with the database in RUN/db and a
# fresh secret for every endpoint of the example; write the example's
# ONCEHOOK_* variables to RUN/env, for "oncehook init", "check" and
# "sign" to see what the server sees.  Exports nothing: lighttpd passes
# its environment on to oncehook, so a variable left in the caller's
# shell would reach every later server it starts whatever their
# configuration says (the benchmark's rows did, until a5fa5b2).  A
# caller with one configuration sources RUN/env itself (tools/demo.sh);
# one with several, in a subshell per command (bench/).  Sets LH_PORT,
# LH_STRIPE_SECRET, LH_SHOP_SECRET.
lh_setup() {
	local mode=$1 run=$2 bin=$3 share=$4 p
	mkdir -p "$run/www" "$run/db"
	chmod 700 "$run/db"
	LH_STRIPE_SECRET="whsec_$(openssl rand -hex 16)"
	LH_SHOP_SECRET="$(openssl rand -hex 16)"
	LH_PORT=$(python3 -c 'import socket; s = socket.socket();
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	# Standard Webhooks and Svix secrets are whsec_ and base64.
	sed -e "s|/usr/local/bin/oncehook|$bin|" \
	    -e "s|/usr/local/share/oncehook|$share|g" \
	    -e "s|/run/lighttpd/oncehook.sock|$run/oncehook.sock|" \
	    -e "s|/var/lib/oncehook/oncehook.db|$run/db/oncehook.db|" \
	    -e "s|whsec_REPLACE_WITH_YOUR_SIGNING_SECRET|$LH_STRIPE_SECRET|" \
	    -e "s|REPLACE_WITH_YOUR_SHARED_SECRET|$LH_SHOP_SECRET|" \
	    -e "s|whsec_REPLACEwith[A-Za-z]*|whsec_$(openssl rand -hex 24)|" \
	    "$LH_ROOT/conf-examples/lighttpd-$mode.conf" >"$run/oncehook.conf"
	# Any other placeholder: a fresh secret each (hex is base64 too).
	while p=$(grep -o 'REPLACE_WITH_YOUR_[A-Z_]*' "$run/oncehook.conf" |
	    head -n 1) && [ -n "$p" ]; do
		sed -i "s|$p|$(openssl rand -hex 16)|" "$run/oncehook.conf"
	done
	cat >"$run/lighttpd.conf" <<CONF
server.port = $LH_PORT
server.bind = "127.0.0.1"
server.document-root = "$run/www"
server.errorlog = "$run/error.log"
server.breakagelog = "$run/oncehook.log"
server.pid-file = "$run/lighttpd.pid"
include "$run/oncehook.conf"
CONF
	lh_env "$run"
}

# lh_env RUN: write RUN/env from RUN/oncehook.conf, the variables
# lighttpd passes (commented lines, the status token's say, are not
# among them); again after a caller edits the configuration.
lh_env() {
	grep -v '^[[:space:]]*#' "$1/oncehook.conf" |
	    grep -o '"ONCEHOOK_[A-Z0-9_]*" => "[^"]*"' |
	    sed 's/^"\([^"]*\)" => "\(.*\)"$/\1=\2/' >"$1/env"
	chmod 600 "$1/env"
}

# lh_with_env RUN COMMAND...: COMMAND with RUN/env's variables, in a
# subshell: none of them is left in the caller's environment.
lh_with_env() {
	local run=$1
	shift
	(set -a && . "$run/env" && exec "$@")
}

# lh_start RUN: start lighttpd in the foreground of a background job;
# sets LH_PID and waits until the port answers.
lh_start() {
	local run=$1 i
	lighttpd -D -f "$run/lighttpd.conf" &
	LH_PID=$!
	for i in $(seq 100); do
		curl -s -o /dev/null "http://127.0.0.1:$LH_PORT/" && return 0
		sleep 0.05
	done
	echo "lighttpd did not start: see $run/error.log" >&2
	return 1
}

# lh_stop: stop the server started by lh_start, by its PID.
lh_stop() {
	[ -n "${LH_PID:-}" ] || return 0
	kill "$LH_PID" 2>/dev/null
	wait "$LH_PID" 2>/dev/null || true
	LH_PID=
}
