#!/bin/sh
# SPDX-License-Identifier: MIT
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
# (tests/servers/lighttpd.sh).  The examples name one endpoint per provider:
# the suite runs its delivery and hostile-header scenarios on each, and
# in the CGI run also sends the hostile headers straight to the binary.
# Then, with oncehook down, lighttpd's own error answer must be JSON with
# a 5xx and Retry-After (the examples' server.error-handler).
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped (no
# lighttpd or python3), 99 harness error.
#
# As root (CI), lighttpd drops to nobody:nogroup before it starts the
# backends, so that a read-only database is read-only to oncehook; the
# temporary directory and the database then belong to nobody.

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"

lt_find
for f in tests/e2e/scenarios.py tests/servers/oncetest/hookclient.py \
    tests/e2e/actions-e2e.sql; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done
# The parking and replay sections of tests/e2e/statuscheck.py's "park".
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
	sv_tmp_done "$tmp"
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

# oncehook down: the program replaced by one that fails at once (and, for
# FastCGI, the running processes killed, so lighttpd's respawns fail).
# lighttpd's own error answer must be the example's JSON with a 5xx the
# provider retries and Retry-After, never its HTML page.
down_check() {	# down_check mode dir
	mv "$2/bin/oncehook" "$2/bin/oncehook.real" || bail "mv oncehook"
	printf '#!/bin/sh\nexit 1\n' >"$2/bin/oncehook"
	chmod 0755 "$2/bin/oncehook"
	if [ "$1" = fastcgi ]; then
		# shellcheck disable=SC2046 # the PIDs, one a word
		kill -9 $(ps -o pid= --ppid "$server_pid") 2>/dev/null
		sleep 0.5
	fi
	python3 - "http://127.0.0.1:$lt_port/hooks/shop" \
	    >"$2/log/down.log" 2>&1 <<'PY'
import json, sys, urllib.error, urllib.request
req = urllib.request.Request(sys.argv[1], data=b'{"id":"x"}', headers={
    "Content-Type": "application/json"})
try:
    r = urllib.request.urlopen(req, timeout=20)
    st, hd, body = r.status, r.headers, r.read()
except urllib.error.HTTPError as e:
    st, hd, body = e.code, e.headers, e.read()
print("# %d %r %r %r" % (st, hd.get("Content-Type"), hd.get("Retry-After"),
                         body[:200]))
try:
    err = json.loads(body).get("error")
except ValueError:
    err = None
sys.exit(0 if 500 <= st <= 599 and hd.get("Retry-After") == "5" and
         (hd.get("Content-Type") or "").startswith("application/json") and
         err == "unavailable" else 1)
PY
	if [ $? -eq 0 ]; then
		tap ok "$1: oncehook down: lighttpd answers 5xx, JSON, Retry-After"
	else
		tap not-ok "$1: oncehook down: lighttpd answers 5xx, JSON, Retry-After"
	fi
	cat "$2/log/down.log"
	mv "$2/bin/oncehook.real" "$2/bin/oncehook" || bail "mv oncehook back"
}

# The counters and the status endpoint (tests/e2e/statuscheck.py CMD).
st_run() {	# st_run MODE CMD DIR [ARGS...]
	_sm=$1
	_sc=$2
	_sd=$3
	shift 3
	set -- --url "http://127.0.0.1:$lt_port/hooks" --env "$_sd/conf/env" \
	    --bin "$_sd/bin/oncehook" --label "$_sm" "$@"
	if [ -n "$run_user" ]; then
		set -- "$@" --as "$run_user" --group "$run_group"
	fi
	$watchdog python3 "$top_srcdir/tests/e2e/statuscheck.py" "$_sc" "$@" \
	    >"$_sd/log/status.tap" 2>"$_sd/log/status.err"
	_rc=$?
	relay <"$_sd/log/status.tap"
	if [ $_rc -gt 1 ]; then
		tap not-ok "$_sm: statuscheck.py $_sc ran to its end (exit $_rc)"
		sed 's/^/# /' "$_sd/log/status.err"
	fi
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
	    "$@" \
	    >"$d/log/scenarios.tap" 2>"$d/log/scenarios.err"
	rc=$?
	relay <"$d/log/scenarios.tap"
	if [ $rc -gt 1 ]; then
		tap not-ok "$mode: the scenarios ran to their end (exit $rc)"
		sed 's/^/# /' "$d/log/scenarios.err"
	fi
	# The counters and the status endpoint; under FastCGI also across a
	# restart of lighttpd and its processes, and the page in Chromium.
	st_run "$mode" park "$d"
	st_run "$mode" mix "$d"
	if [ "$mode" = fastcgi ]; then
		lt_stop
		if lt_start "$d" "$mode"; then
			st_run "$mode" restart "$d"
			st_run "$mode" page "$d" \
			    --shot "$shots/status-lighttpd-$mode.png"
		fi
	fi
	down_check "$mode" "$d"
	lt_stop
	lt_sanitizer "$d" "$mode"
}

# A secrets file saved as UTF-16 with its byte-order mark, as Windows
# editors save "Unicode" text.  Read as a C string, its key was the bytes
# before the first NUL, FF FE 72: forgeable in a few hundred requests.
# Behind FastCGI, the github endpoint reading such a file must accept
# neither a request signed with that key nor one signed with the real
# secret (500 misconfigured, the reason in the log only, nothing stored),
# and "oncehook check" must exit 1 naming the variable, never the secret.
# The secret starts with "r", as in the report: its key was FF FE 72.
UTF16_SECRET=real-github-secret-saved-as-utf16-4b2e
run_utf16_secret() {
	d=$tmp/utf16
	lt_setup fastcgi "$d"
	f=$d/conf/github.secret
	python3 -c 'import sys
text = "\ufeff" + sys.argv[2] + "\r\n"
open(sys.argv[1], "wb").write(text.encode("utf-16-le"))' \
	    "$f" "$UTF16_SECRET" || bail "writing $f"
	python3 -c 'import sys
p, old, new = sys.argv[1:]
text = open(p, encoding="utf-8").read()
if text.count(old) != 1:
    sys.exit("%s: no %s" % (p, old))
open(p, "w", encoding="utf-8").write(text.replace(old, new))' \
	    "$d/conf/oncehook.conf" \
	    "\"ONCEHOOK_GITHUB_SECRET\" => \"$GITHUB_SECRET\"" \
	    "\"ONCEHOOK_GITHUB_SECRET_FILE\" => \"$f\"" ||
	    bail "no GitHub secret to move into a file"
	lt_env "$d"
	if [ -n "$run_user" ]; then
		chown "root:$run_group" "$f" || bail "chown $f"
	fi
	chmod 0640 "$f"

	out=$(
		while IFS= read -r kv; do
			# shellcheck disable=SC2163 # kv is NAME=value
			export "$kv"
		done <"$d/conf/env"
		as_backend "$d/bin/oncehook" check 2>&1 >/dev/null
	)
	rc=$?
	case $rc:$out in
	0:*) tap not-ok "utf16: oncehook check exits 0 with a UTF-16 secrets file" ;;
	*"$UTF16_SECRET"*) tap not-ok "utf16: oncehook check shows the secret" ;;
	*ONCEHOOK_GITHUB_SECRET_FILE*UTF-16*)
		tap ok "utf16: oncehook check exits $rc naming ONCEHOOK_GITHUB_SECRET_FILE" ;;
	*) tap not-ok "utf16: oncehook check does not name ONCEHOOK_GITHUB_SECRET_FILE and UTF-16" ;;
	esac
	printf '%s\n' "$out" | sed 's/^/# check: /'

	lt_start "$d" fastcgi || return
	python3 - "http://127.0.0.1:$lt_port/hooks" "$d/db/oncehook.db" \
	    "$UTF16_SECRET" "$d/log/breakage.log" \
	    "$top_srcdir/tests/servers" >"$d/log/utf16.tap" 2>&1 <<'EOF'
import hashlib, hmac, sys
url, db, secret, log, lib = sys.argv[1:]
sys.path.insert(0, lib)
from oncetest import hookclient
gh = hookclient.SCHEMES["github"]
http = hookclient.Client(url)
for what, key in (("the 3-byte key FF FE 72", b"\xff\xfe\x72"),
                  ("the real secret", secret.encode("utf-8"))):
    delivery = "utf16-%s" % key.hex()
    body = gh.body(delivery, "push")
    headers = [(k, v) for k, v in gh.headers(secret, body, delivery, "push")
               if k != gh.sig]
    headers.append((gh.sig, "sha256=" +
                    hmac.new(key, body, hashlib.sha256).hexdigest()))
    r = http.post(http.path("github"), body, headers)
    err = r.json.get("error") if isinstance(r.json, dict) else None
    stored = hookclient.Db(db).scalar(
        "SELECT count(*) FROM events WHERE key = ?", (delivery,))
    ok = r.status == 500 and err == "misconfigured" and stored == 0
    print("%s - utf16: a request signed with %s -> 500 misconfigured, "
          "nothing stored" % ("ok" if ok else "not ok", what))
    if not ok:
        print("#   got %r, %d event(s) stored" % (r, stored))
text = open(log, encoding="utf-8", errors="replace").read()
ok = ("ONCEHOOK_GITHUB_SECRET_FILE" in text and "UTF-16" in text and
      secret not in text)
print("%s - utf16: the log names ONCEHOOK_GITHUB_SECRET_FILE and UTF-16, "
      "not the secret" % ("ok" if ok else "not ok"))
EOF
	relay <"$d/log/utf16.tap"
	lt_stop
	lt_sanitizer "$d" utf16
}

# The basic and mailgun schemes behind lighttpd, FastCGI and CGI: the
# filled example with a postmark (basic) and a mailgun endpoint added.
# Deliveries signed as those providers sign (tests/servers/oncetest
# hookclient) are processed once; a retry is already_processed, and for
# Mailgun a retry signed anew (another token) too, and the first token
# with other event data a key conflict; a wrong password or key, no
# Authorization and a stale Mailgun timestamp are refused, nothing stored
# (tests/e2e/basic_mailgun.py).
BASIC_PAIR=postmark:e2e-lighttpd-basic-password-5f1
MAILGUN_KEY=key-e2e-lighttpd-mailgun-0123456789
run_basic_mailgun() {	# run_basic_mailgun MODE
	d=$tmp/basic-mailgun-$1
	lt_setup "$1" "$d"
	python3 -c 'import sys
p, pair, key, acts = sys.argv[1:]
text = open(p, encoding="utf-8").read()
old = "\"ONCEHOOK_ENDPOINTS\" => \"stripe,shop,"
if text.count(old) != 1:
    sys.exit("%s: no %s" % (p, old))
line = text.index(old)
end = text.index("\n", line) + 1
text = (text[:line] + text[line:end].replace(old,
        "\"ONCEHOOK_ENDPOINTS\" => \"postmark,mailgun,stripe,shop,") +
        "\t\t\t\"ONCEHOOK_POSTMARK_SCHEME\" => \"basic\",\n"
        "\t\t\t\"ONCEHOOK_POSTMARK_SECRET\" => \"%s\",\n"
        "\t\t\t\"ONCEHOOK_POSTMARK_ACTIONS\" => \"%s\",\n"
        "\t\t\t\"ONCEHOOK_MAILGUN_SCHEME\" => \"mailgun\",\n"
        "\t\t\t\"ONCEHOOK_MAILGUN_SECRET\" => \"%s\",\n"
        "\t\t\t\"ONCEHOOK_MAILGUN_ACTIONS\" => \"%s\",\n" %
        (pair, acts, key, acts) +
        text[end:])
open(p, "w", encoding="utf-8").write(text)' \
	    "$d/conf/oncehook.conf" "$BASIC_PAIR" "$MAILGUN_KEY" \
	    "$d/sql/orders.sql" ||
	    bail "adding the basic and mailgun endpoints"
	lt_env "$d"
	lt_start "$d" "$1" || return
	python3 "$top_srcdir/tests/e2e/basic_mailgun.py" "lighttpd $1" \
	    "http://127.0.0.1:$lt_port/hooks" "$d/db/oncehook.db" \
	    "$BASIC_PAIR" "$MAILGUN_KEY" "$d/log/breakage.log" \
	    "$d/log/error.log" >"$d/log/basic-mailgun.tap" 2>&1
	relay <"$d/log/basic-mailgun.tap"
	lt_stop
	lt_sanitizer "$d" "basic-mailgun $1"
}

start=$(date +%s)
# Screenshots of the status page, kept with the test's output.
shots=${ONCEHOOK_SHOTS:-$(pwd)/tests/screenshots}
mkdir -p "$shots" || bail "mkdir $shots"
run_mode fastcgi
run_mode cgi
run_utf16_secret
run_basic_mailgun fastcgi
run_basic_mailgun cgi
echo "# e2e took $(($(date +%s) - start))s"
echo "1..$n"
[ $failed -eq 0 ] || exit 1
exit 0
