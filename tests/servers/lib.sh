# SPDX-License-Identifier: MIT
# shellcheck shell=sh disable=SC2034 # values the suites and parts use
# oncehook tests: the one library a server suite sources (POSIX sh),
# after setting top_srcdir.  It sets what every suite runs under, finds
# the build and the binary, holds the fixtures every suite shares (the
# secrets, the busy timeout, the status token, the backends' user), and
# brings in its parts from this folder:
#   tap.sh       tap, check, bail;
#   lighttpd.sh  lt_*: lighttpd from conf-examples, its env, its logs;
#   deploy.sh    dp_*: Apache, nginx, serve, from conf-examples;
#   mariadb.sh   md_*: a MariaDB server of the test's own.
# And its own helpers:
#   sv_need TOOL...   skip the whole suite (exit 77) if a tool is missing
#   free_port         a free TCP port on 127.0.0.1
#   as_backend CMD... run CMD as the backends' user (nobody, as root)
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

# The test's values.  Secrets as providers issue them: Stripe's whsec_
# string used as is; Standard Webhooks and Svix a whsec_ and base64 of
# the key; any string for the others (two for shop: a rotation).
STRIPE_SECRET=whsec_e2eStripeSigningSecret0123456789abcdef
SHOP_SECRET_OLD=e2e-shop-old-secret-4f1c
SHOP_SECRET=e2e-shop-secret-9b7d2a
GITHUB_SECRET=e2e-github-secret-7a1c
# base64 of "e2e standard webhooks signing key 01" and "e2e svix ...".
STANDARD_SECRET=whsec_ZTJlIHN0YW5kYXJkIHdlYmhvb2tzIHNpZ25pbmcga2V5IDAx
SVIX_SECRET=whsec_ZTJlIHN2aXggc2lnbmluZyBrZXkgMDI=
SHOPIFY_SECRET=e2e-shopify-client-secret-5e2b
SLACK_SECRET=e2e0slack0signing0secret03c9d
PADDLE_SECRET=pdl_ntfset_e2e_paddle_secret_key_8f0a
GITLAB_SECRET=e2e-gitlab-secret-token-1b7e
BUSY_MS=${ONCEHOOK_E2E_BUSY_MS:-300}
STATUS_TOKEN=e2e-status-token-8d21c4f0a9

# As root (CI), the servers and oncehook run as nobody (lt_*, dp_* set
# these).
run_user=
run_group=

free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

as_backend() {
	if [ -n "$run_user" ] && command -v setpriv >/dev/null 2>&1; then
		setpriv --reuid="$run_user" --regid="$run_group" \
		    --clear-groups -- "$@"
	else
		"$@"
	fi
}

# backend_python3: a python3 the backends' user may run (not one under
# /root), printed; 1 if there is none.
backend_python3() {
	for _c in /usr/bin/python3 "$(command -v python3)"; do
		if [ -x "$_c" ] && as_backend "$_c" -c '' 2>/dev/null; then
			echo "$_c"
			return 0
		fi
	done
	return 1
}

# A suite's temporary directory at its end: kept (and named) with
# ONCEHOOK_E2E_KEEP set, else removed.
sv_tmp_done() {	# sv_tmp_done DIR
	if [ -n "${ONCEHOOK_E2E_KEEP:-}" ]; then
		echo "# kept $1"
	elif [ -n "$1" ]; then
		rm -rf "$1"
	fi
}

# writers DB: the pids of the writers whose ONCEHOOK_DB is DB.
writers() {
	runs_on "$1" oncehook-writer
}
# runs_on DB NAME: the pids of the processes named NAME that run with
# ONCEHOOK_DB=DB, one a line.
runs_on() {
	for p in /proc/[0-9]*; do
		# read, not cat: no process made for each one looked at
		read -r _c <"$p/comm" && [ "$_c" = "$2" ] || continue
		tr '\0' '\n' <"$p/environ" 2>/dev/null |
		    grep -qx "ONCEHOOK_DB=$1" && echo "${p#/proc/}"
	done 2>/dev/null
}
# gone DB: wait up to 5 s until no writer of DB runs; 0 if none does.
gone() {
	_i=0
	while [ -n "$(writers "$1")" ]; do
		[ $_i -lt 50 ] || return 1
		sleep 0.1
		_i=$((_i + 1))
	done
	return 0
}

# post_settled KEY TRIES: the calling suite's post KEY (it prints the
# status), again every 0.2 s while it is 503, at most TRIES times more
# (processes letting go of a replaced file); prints the last status.
post_settled() {
	_n=0
	while :; do
		_s=$(post "$1")
		[ "$_s" = 503 ] && [ $_n -lt "$2" ] || break
		_n=$((_n + 1))
		sleep 0.2
	done
	echo "$_s"
}

# sq DB SQL...: the sqlite3 shell on DB, waiting up to 10 s for a lock:
# an oncehook process that closes the database last (a writer that
# lingers after the server stopped, a CGI process that just answered)
# copies the log into it and cuts it, and a query meanwhile would fail
# and print nothing.
sq() {
	sqlite3 -cmd '.timeout 10000' "$@"
}

# sv_npm_ci DIR LOG: "npm ci" of the pinned test libraries in DIR (its
# package-lock.json), output to LOG; once more after a pause if it fails:
# on a fresh machine the suites fill npm's empty cache side by side, and
# one may meet another's half-written entry.  Status: npm's last.  With
# ONCEHOOK_TEST_NODE_MODULES, the node_modules an "npm ci" of the same
# package-lock.json made (tools/test.sh's, once for every suite): linked,
# not installed again.
sv_npm_ci() {
	if [ -n "${ONCEHOOK_TEST_NODE_MODULES:-}" ] &&
	    [ -d "$ONCEHOOK_TEST_NODE_MODULES" ] &&
	    cmp -s "$ONCEHOOK_TEST_NODE_MODULES/../package-lock.json" \
	    "$1/package-lock.json"; then
		echo "linked $ONCEHOOK_TEST_NODE_MODULES" >"$2"
		ln -s "$ONCEHOOK_TEST_NODE_MODULES" "$1/node_modules" &&
		    return 0
	fi
	_t=
	command -v timeout >/dev/null 2>&1 && _t="timeout -k 10 300"
	for _try in 1 2; do
		# shellcheck disable=SC2086 # $_t: a command and its argument
		(cd "$1" && $_t npm ci --no-audit --no-fund --ignore-scripts \
		    --prefer-offline --loglevel=error) >"$2" 2>&1 && return 0
		[ "$_try" = 2 ] || { echo "# npm ci failed; once more"; sleep 3; }
	done
	return 1
}

sv_need() {	# sv_need TOOL...
	for sv_t in "$@"; do
		command -v "$sv_t" >/dev/null 2>&1 ||
		    { echo "1..0 # SKIP $sv_t is not installed"; exit 77; }
	done
}

# shellcheck source=tests/servers/lighttpd.sh
. "$top_srcdir/tests/servers/lighttpd.sh"
# shellcheck source=tests/servers/deploy.sh
. "$top_srcdir/tests/servers/deploy.sh"
# shellcheck source=tests/servers/mariadb.sh
. "$top_srcdir/tests/servers/mariadb.sh"
