#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook tests: every signature scheme through every way it is
# deployed.  One row per scheme in the table at the top of
# tests/e2e/schemes.py (its format is written there): scheme, secret,
# who signs (the provider's npm library through tests/node/sign.mjs, or
# "oncehook sign"), whether it is timestamped, a sample body.  Adding a
# scheme to this suite is adding its row; a scheme of the binary without
# one is a failure.
#
# The deliveries are signed once (those of the rows that sign the
# deployment's own URL, twilio and square, once per deployment): by the
# libraries of tests/node/package-lock.json (installed with "npm ci"
# into a temporary directory, as tests/providers.sh does) where the row
# names one, else by "oncehook sign".  They are then sent through three
# deployments, each one server with one endpoint per row (the shipped
# example's endpoints replaced by the table's, as an administrator keeps
# the ones used) and a database of its own:
#
#   lighttpd + FastCGI  conf-examples/lighttpd-fastcgi.conf
#   lighttpd + CGI      conf-examples/lighttpd-cgi.conf
#   nginx + serve       conf-examples/nginx.conf in front of "oncehook
#                       serve", run as conf-examples/oncehook.service says
#
# each filled in with only its ports, paths and values
# (tests/servers/lighttpd.sh, tests/servers/deploy.sh), on 127.0.0.1
# and free ports.  For each scheme on each: the valid delivery is 200
# processed, the same again 200 already_processed, its body changed 401,
# one signed with another key 401, one signed an hour ago (timestamped
# schemes) 400 stale_timestamp; then the database holds one event for
# the endpoint and one row of its effect (tests/e2e/actions-schemes.sql),
# the refused deliveries nothing.  The public-key rows (discord, telnyx,
# sendgrid, standard-v1a) are signed with key pairs made at test time
# (their public halves in $tmp/keys.json, which "conf" reads), and
# their signatures attacked too: forged, one byte short, Ed25519's S+L,
# ECDSA's wrong curve, BER encoding and (r, n-s) (schemes.py's
# docstring, sig=); "oncehook check" must refuse a key of another kind.
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped (no
# python3), 99 harness error.  A deployment whose server is not installed
# is skipped (a SKIP line), and so are the rows signed by npm without
# node and npm; tools/deps.sh installs them all.  As root, the servers'
# workers and oncehook run as nobody:nogroup.  About 30 s.

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"

dp_init schemes
for f in tests/e2e/schemes.py tests/e2e/actions-schemes.sql \
    tests/node/package.json tests/node/package-lock.json \
    tests/node/sign.mjs conf-examples/lighttpd-fastcgi.conf \
    conf-examples/lighttpd-cgi.conf conf-examples/nginx.conf \
    conf-examples/oncehook.service tests/deploy/supervise.py; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done
if command -v timeout >/dev/null 2>&1; then
	watchdog="timeout 300"
fi
schemes=$top_srcdir/tests/e2e/schemes.py

# run_schemes LABEL ARGS...: run schemes.py, its lines numbered as
# LABEL's; a run that ends early or prints no result is a failure.
run_schemes() {
	rs_l=$1
	shift
	# shellcheck disable=SC2086 # watchdog is a command and its argument
	$watchdog python3 "$schemes" "$@" >"$tmp/py.tap" 2>"$tmp/py.err"
	rs_rc=$?
	dp_relay "$rs_l" <"$tmp/py.tap"
	if [ $rs_rc -gt 1 ] ||
	    ! grep -q -e '^ok' -e '^not ok' "$tmp/py.tap"; then
		tap not-ok "$rs_l: schemes.py $1 ran to its end (exit $rs_rc)"
	fi
	sed 's/^/# /' "$tmp/py.err"
	return $rs_rc
}

# The table's endpoints in place of the example's in DIR's FILE
# (FORMAT lighttpd or env), each running DIR/sql/schemes.sql; BASE is
# the deployment's base URL (the rows' "{base}").
use_table() {	# use_table DIR FORMAT BASE FILE...
	ut_d=$1
	ut_f=$2
	ut_b=$3
	shift 3
	cp "$top_srcdir/tests/e2e/actions-schemes.sql" "$ut_d/sql/schemes.sql" ||
	    bail "copying actions-schemes.sql"
	chmod 0644 "$ut_d/sql/schemes.sql"
	for ut_file; do
		python3 "$schemes" conf "$ut_f" "$ut_file" \
		    "$ut_d/sql/schemes.sql" --base "$ut_b" --keys "$keys" ||
		    bail "schemes.py conf $ut_file"
	done
}

# -- the deliveries, signed once -----------------------------------------

node_dir=
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
	node_dir=$tmp/node
	mkdir -p "$node_dir" || bail "mkdir $node_dir"
	cp "$top_srcdir/tests/node/package.json" \
	    "$top_srcdir/tests/node/package-lock.json" \
	    "$top_srcdir/tests/node/sign.mjs" "$node_dir/" ||
	    bail "copying tests/node"
	chmod u+w "$node_dir"/* 2>/dev/null
	if ! sv_npm_ci "$node_dir" "$tmp/npm.log"; then
		sed 's/^/# /' "$tmp/npm.log"
		bail "npm ci failed in $node_dir"
	fi
	echo "# node $(node --version); the libraries ready in $(($(date +%s) - dp_start))s"
fi
mkdir -p "$tmp/sign" || bail "mkdir $tmp/sign"
signed=$tmp/signed.json
keys=$tmp/keys.json
run_schemes sign sign --bin "$ONCEHOOK_BIN" --tmp "$tmp/sign" \
    --out "$signed" --keys "$keys" ${node_dir:+--node "$node_dir"}
[ -s "$signed" ] || bail "no deliveries signed"

# -- the three deployments (tests/servers/deploy.sh) ------------------------

# conf_schemes DIR FORMAT PORT FILE...: the table's endpoints.
conf_schemes() {
	cs_d=$1
	cs_f=$2
	cs_p=$3
	shift 3
	use_table "$cs_d" "$cs_f" "http://127.0.0.1:$cs_p/hooks" "$@"
}

# send_schemes LABEL DIR LOG BASE: every delivery, and the rows.
send_schemes() {
	run_schemes "$1" send --label "$1" --url "$4" \
	    --db "$2/db/oncehook.db" --signed "$signed" --bin "$ONCEHOOK_BIN" \
	    --tmp "$tmp/sign" ${node_dir:+--node "$node_dir"}
}

dp_each_deployment conf_schemes send_schemes

dp_done
