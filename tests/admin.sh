#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook's admin commands on a real database, as an operator runs
# them: init, check, the CGI handler for a few deliveries (signed here
# with openssl), then list, show and prune (--dry-run and for real).
# TAP.  Environment: ONCEHOOK_BIN, top_srcdir.
set -u
: "${ONCEHOOK_BIN:?}" "${top_srcdir:?}"
LC_ALL=C
export LC_ALL
n=0 failed=0
ok() {	# ok CONDITION-STATUS TEXT
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}
command -v openssl >/dev/null 2>&1 || { echo "1..0 # SKIP no openssl"; exit 77; }
command -v sqlite3 >/dev/null 2>&1 || { echo "1..0 # SKIP no sqlite3"; exit 77; }
dir=$(mktemp -d /tmp/oncehook-admin.XXXXXX) || { echo "Bail out! mktemp"; exit 99; }
trap 'umount "$dir/full" "$dir/ro" 2>/dev/null; rm -rf "$dir"' EXIT INT TERM

ONCEHOOK_DB=$dir/hooks.db
ONCEHOOK_ENDPOINTS=shop,keep
ONCEHOOK_SHOP_SCHEME=hmac-sha256
ONCEHOOK_SHOP_SECRET=admin-test-secret
ONCEHOOK_SHOP_ACTIONS=$top_srcdir/sql/actions/orders.sql
ONCEHOOK_SHOP_RETENTION=1h
ONCEHOOK_KEEP_SCHEME=hmac-sha256
ONCEHOOK_KEEP_SECRET=admin-test-secret
ONCEHOOK_KEEP_ACTIONS=$top_srcdir/sql/actions/orders.sql
ONCEHOOK_KEEP_RETENTION=forever
export ONCEHOOK_DB ONCEHOOK_ENDPOINTS ONCEHOOK_SHOP_SCHEME ONCEHOOK_SHOP_SECRET \
    ONCEHOOK_SHOP_ACTIONS ONCEHOOK_SHOP_RETENTION ONCEHOOK_KEEP_SCHEME \
    ONCEHOOK_KEEP_SECRET ONCEHOOK_KEEP_ACTIONS ONCEHOOK_KEEP_RETENTION

"$ONCEHOOK_BIN" init >/dev/null 2>&1
ok $? "init"
"$ONCEHOOK_BIN" check >/dev/null 2>&1
ok $? "check"

# check shows a github endpoint's key with the hook id put before it,
# and a key set by hand as it is.
out=$(env ONCEHOOK_ENDPOINTS=shop,keep,gh ONCEHOOK_GH_SCHEME=github \
    ONCEHOOK_GH_SECRET=admin-test-secret "$ONCEHOOK_BIN" check 2>/dev/null)
own=$(env ONCEHOOK_ENDPOINTS=shop,keep,gh ONCEHOOK_GH_SCHEME=github \
    ONCEHOOK_GH_SECRET=admin-test-secret \
    ONCEHOOK_GH_KEY=header:X-GitHub-Delivery "$ONCEHOOK_BIN" check 2>/dev/null)
printf '%s\n' "$out" | grep -q 'ONCEHOOK_GH_KEY  *header:X-GitHub-Delivery, after header:X-GitHub-Hook-ID and' &&
    printf '%s\n' "$own" | grep -q 'ONCEHOOK_GH_KEY  *header:X-GitHub-Delivery$'
ok $? "check: github's key shown with its hook-id scope; a key set by hand without"
out=$(env ONCEHOOK_ENDPOINTS=shop,keep,ad ONCEHOOK_AD_SCHEME=adyen \
    ONCEHOOK_AD_SECRET=44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056 \
    "$ONCEHOOK_BIN" check 2>/dev/null)
printf '%s\n' "$out" | grep -q "ONCEHOOK_AD_KEY  *json:/pspReference ':' json:/eventCode ':' json:/success$"
ok $? "check: adyen's key shown as its items get it, pspReference:eventCode:success"

# check warns about a section no endpoint running its file can receive:
# GitLab's types hold a space, so a bare Push Hook is "Push" and "Hook".
printf '%s\n' '-- on: Push Hook' 'SELECT 1;' \
    '-- on: "Merge Request Hook", "Tag Push Hook"' 'SELECT 2;' \
    >"$dir/gitlab.sql"
out=$(env ONCEHOOK_ENDPOINTS=shop,keep,gl ONCEHOOK_GL_SCHEME=gitlab \
    ONCEHOOK_GL_SECRET=admin-test-secret \
    ONCEHOOK_GL_ACTIONS="$dir/gitlab.sql" "$ONCEHOOK_BIN" check 2>&1 >/dev/null)
rc=$?
[ $rc -eq 0 ] &&
    [ "$(printf '%s\n' "$out" | grep -c 'warning: .*gitlab.sql:1: ')" -eq 2 ] &&
    printf '%s\n' "$out" | grep -q 'type "Push", so its section never runs' &&
    printf '%s\n' "$out" | grep -q 'type "Hook"' &&
    ! printf '%s\n' "$out" | grep -q 'gitlab.sql:3:'
ok $? "check: warns of \"-- on: Push Hook\" on gitlab, not of quoted types"
printf '%s\n' '-- on: "Push Hook' 'SELECT 1;' >"$dir/gitlab.sql"
out=$(env ONCEHOOK_ENDPOINTS=shop,keep,gl ONCEHOOK_GL_SCHEME=gitlab \
    ONCEHOOK_GL_SECRET=admin-test-secret \
    ONCEHOOK_GL_ACTIONS="$dir/gitlab.sql" "$ONCEHOOK_BIN" check 2>&1 >/dev/null)
[ $? -eq 1 ] &&
    printf '%s\n' "$out" | grep -q 'gitlab.sql:1: .*unterminated quote'
ok $? "check: an unterminated quote is file:line, exit 1"

# deliver ENDPOINT BODY: one CGI request; prints the body of the answer.
cgi() {	# cgi ENDPOINT BODY: the whole CGI answer, head and body
	sig=$(printf '%s' "$2" | openssl dgst -sha256 -hmac admin-test-secret -r |
	    cut -d' ' -f1)
	printf '%s' "$2" | env GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST \
	    CONTENT_TYPE=application/json CONTENT_LENGTH=${#2} \
	    PATH_INFO="/hooks/$1" HTTP_X_WEBHOOK_SIGNATURE="sha256=$sig" \
	    "$ONCEHOOK_BIN" 2>/dev/null
}
deliver() {	# deliver ENDPOINT BODY: the body of the answer
	cgi "$1" "$2" | tail -n 1
}
deliver shop '{"eventId":"evt_a","type":"webhook.ping"}' | grep -q '"processed"'
ok $? "first delivery on shop processed"
deliver shop '{"eventId":"evt_b","type":"webhook.ping","n":1}' | grep -q '"processed"'
ok $? "second delivery on shop processed"
deliver keep '{"eventId":"evt_k","type":"webhook.ping"}' | grep -q '"processed"'
ok $? "delivery on keep processed"

# An actions file that no longer prepares fails its endpoint's new
# events only: actions are prepared on an endpoint's first claim, so a
# duplicate, and the other endpoints, are still answered.
printf '%s\n' '-- on: *' 'INSERT INTO no_such_table VALUES (1);' >"$dir/broken.sql"
out=$(ONCEHOOK_KEEP_ACTIONS=$dir/broken.sql; cgi keep '{"eventId":"evt_kb","type":"webhook.ping"}')
printf '%s\n' "$out" | grep -q '^Status: 500' &&
    printf '%s\n' "$out" | grep -q '"misconfigured"'
ok $? "broken actions file: a new event on its endpoint is 500 misconfigured"
out=$(ONCEHOOK_KEEP_ACTIONS=$dir/broken.sql; deliver keep '{"eventId":"evt_k","type":"webhook.ping"}')
printf '%s\n' "$out" | grep -q '"already_processed"'
ok $? "broken actions file: a retry on its endpoint is still answered (got $out)"
out=$(ONCEHOOK_KEEP_ACTIONS=$dir/broken.sql; deliver shop '{"eventId":"evt_a","type":"webhook.ping"}')
printf '%s\n' "$out" | grep -q '"already_processed"'
ok $? "broken actions file: another endpoint is still answered (got $out)"
(ONCEHOOK_KEEP_ACTIONS=$dir/broken.sql; "$ONCEHOOK_BIN" check >/dev/null 2>&1)
[ $? -ne 0 ]
ok $? "broken actions file: check still prepares every endpoint's actions and fails"

out=$("$ONCEHOOK_BIN" list 2>&1)
[ "$(printf '%s\n' "$out" | grep -c .)" -eq 3 ] &&
    printf '%s\n' "$out" | head -n 1 | grep -q 'keep .*processed.*evt_k'
ok $? "list: three events, newest first"
out=$("$ONCEHOOK_BIN" list --endpoint shop --limit 1 2>&1)
[ "$(printf '%s\n' "$out" | grep -c .)" -eq 1 ] &&
    printf '%s\n' "$out" | grep -q 'shop .*evt_b'
ok $? "list --endpoint --limit"
out=$("$ONCEHOOK_BIN" show --endpoint shop evt_a 2>&1)
printf '%s\n' "$out" | grep -q '^payload  *{"eventId":"evt_a"' &&
    printf '%s\n' "$out" | grep -q '^type  *webhook.ping'
ok $? "show: the event with its payload"
"$ONCEHOOK_BIN" show --endpoint shop evt_nope >/dev/null 2>&1
[ $? -eq 1 ]
ok $? "show: an unknown key exits 1"
"$ONCEHOOK_BIN" show evt_a >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "show: --endpoint needed with several endpoints (a usage error: 2)"
out=$("$ONCEHOOK_BIN" list --status bogus 2>&1)
[ $? -eq 2 ] && printf '%s\n' "$out" | grep -q 'status bogus: want received'
ok $? "list --status with an unknown word: says which, exit 2"

# Age evt_a and a conflict past shop's one-hour retention.
sqlite3 -cmd '.timeout 10000' "$ONCEHOOK_DB" "UPDATE events SET received_at = received_at - 7200,
    expires_at = expires_at - 7200 WHERE key = 'evt_a';
    INSERT INTO conflicts (endpoint, key, payload_hash, received_at)
    VALUES ('shop', 'old', 'x', strftime('%s','now') - 7200),
           ('keep', 'old', 'x', strftime('%s','now') - 7200000)"
out=$("$ONCEHOOK_BIN" prune --dry-run 2>&1)
[ "$out" = "would delete 1 events and 1 conflicts past their retention, and 0 outbox rows of the events gone" ] &&
    [ "$(sqlite3 -cmd '.timeout 10000' "$ONCEHOOK_DB" 'SELECT count(*) FROM events')" -eq 3 ]
ok $? "prune --dry-run counts, deletes nothing ($out)"
out=$("$ONCEHOOK_BIN" prune 2>&1)
[ "$out" = "deleted 1 events and 1 conflicts past their retention, and 0 outbox rows of the events gone" ] &&
    [ "$(sqlite3 -cmd '.timeout 10000' "$ONCEHOOK_DB" "SELECT group_concat(key) FROM (SELECT key
        FROM events ORDER BY key)")" = "evt_b,evt_k" ] &&
    [ "$(sqlite3 -cmd '.timeout 10000' "$ONCEHOOK_DB" "SELECT endpoint FROM conflicts")" = keep ]
ok $? "prune: the expired event and conflict go, forever stays ($out)"
deliver shop '{"eventId":"evt_b","type":"webhook.ping","n":1}' |
    grep -q '"already_processed"'
ok $? "a kept event is still a duplicate after prune"
"$ONCEHOOK_BIN" prune --bogus >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "prune: a bad option exits 2"

# A full disk: 503 with Retry-After, nothing stored; with room again,
# the same delivery is processed.  Needs root to mount a small tmpfs.
full=$dir/full
if [ "$(id -u)" = 0 ] && mkdir -p "$full" &&
    mount -t tmpfs -o size=256k tmpfs "$full" 2>/dev/null; then
	ONCEHOOK_DB=$full/hooks.db
	"$ONCEHOOK_BIN" init >/dev/null 2>&1
	dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null
	body='{"eventId":"evt_full","type":"webhook.ping"}'
	out=$(cgi shop "$body")
	printf '%s\n' "$out" | grep -q '^Status: 503' &&
	    printf '%s\n' "$out" | grep -q '^Retry-After: '
	ok $? "disk full: 503 with Retry-After"
	rm -f "$full/filler"
	# "processed", not "already_processed": the 503 stored nothing.
	deliver shop "$body" | grep -q '"status":"processed"'
	ok $? "room again: the same delivery is processed (nothing was stored)"
	umount "$full"
	ONCEHOOK_DB=$dir/hooks.db
else
	n=$((n + 1)); echo "ok $n # SKIP disk full: needs root and tmpfs"
	n=$((n + 1)); echo "ok $n # SKIP disk full: needs root and tmpfs"
fi

# DB-shm made immutable (chattr +i) under a running FastCGI process:
# SQLite's mapped shared memory would fault (SIGBUS) on its next write;
# the process sees the file cannot be written and answers 503 with
# Retry-After instead; chattr -i, and the next delivery is processed.
# Needs root and a file system with chattr (not tmpfs).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fcgi() {	# fcgi EVENT-ID: one signed delivery through serve; prints status
	python3 - "$port" "$1" "$top_srcdir/tests/servers" <<'PY'
import hashlib, hmac, json, sys
sys.path.insert(0, sys.argv[3])
from oncetest import fcgiclient
body = json.dumps({"eventId": sys.argv[2], "type": "webhook.ping"}).encode()
sig = hmac.new(b"admin-test-secret", body, hashlib.sha256).hexdigest()
try:
    r = fcgiclient.request("127.0.0.1:" + sys.argv[1], "POST", "/hooks/shop",
                           body, {"Content-Type": "application/json",
                                  "X-Webhook-Signature": "sha256=" + sig})
except Exception as e:
    print("no-answer", type(e).__name__)
    sys.exit(0)
print(r.status, r.header("retry-after") or "-", (r.json or {}).get("status"))
PY
}
serve_pid=
if [ "$(id -u)" = 0 ] && command -v chattr >/dev/null 2>&1; then
	"$ONCEHOOK_BIN" serve --listen "127.0.0.1:$port" --workers 1 \
	    2>"$dir/serve.log" &
	serve_pid=$!
	i=0
	until fcgi evt_shm_0 >/dev/null 2>&1 || [ $i -ge 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
fi
if [ -n "$serve_pid" ] && chattr +i "$dir/hooks.db-shm" 2>/dev/null; then
	out=$(fcgi evt_shm_1)
	chattr -i "$dir/hooks.db-shm"
	case $out in "503 "[0-9]*) true ;; *) false ;; esac
	ok $? "-shm immutable: 503 with Retry-After, no crash (got $out)"
	grep -q 'hooks.db-shm cannot be written' "$dir/serve.log"
	ok $? "-shm immutable: the log says which file and what to do"
	out=$(fcgi evt_shm_1)
	[ "$out" = "200 - processed" ]
	ok $? "-shm writable again: the same delivery is processed (got $out)"
else
	for i in 1 2 3; do
		n=$((n + 1)); echo "ok $n # SKIP -shm immutable: needs root, chattr, not tmpfs"
	done
fi
[ -n "$serve_pid" ] && kill "$serve_pid" && wait "$serve_pid" 2>/dev/null

# The status endpoint straight through CGI: the format the Accept header
# asks for (q-values counted), and the token's rules.
status_ct() {	# status_ct ACCEPT: the Content-Type of the answer
	printf '' | env ONCEHOOK_STATUS_TOKEN=admin-status-token-0123 \
	    GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET \
	    PATH_INFO=/hooks/status HTTP_ACCEPT="$1" \
	    HTTP_AUTHORIZATION="Bearer admin-status-token-0123" \
	    "$ONCEHOOK_BIN" 2>/dev/null | sed -n 's/^Content-Type: \([^;\r]*\).*/\1/p'
}
[ "$(status_ct '')" = application/json ] &&
    [ "$(status_ct '*/*')" = application/json ] &&
    [ "$(status_ct 'text/html,application/xhtml+xml,*/*;q=0.8')" = text/html ] &&
    [ "$(status_ct 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1')" = text/plain ] &&
    [ "$(status_ct 'text/html;q=0')" = application/json ] &&
    [ "$(status_ct 'application/json, text/html;q=0.1')" = application/json ] &&
    [ "$(status_ct 'text/plain,	text/html')" = text/html ]
ok $? "status: Accept chooses JSON, HTML or Prometheus text, q-values counted"
out=$(printf '' | env ONCEHOOK_STATUS_TOKEN=admin-status-token-0123 \
    GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET PATH_INFO=/hooks/status \
    HTTP_AUTHORIZATION= "$ONCEHOOK_BIN" 2>&1)
printf '%s\n' "$out" | grep -q '^Status: 401' &&
    printf '%s\n' "$out" | grep -q 'no Authorization header'
ok $? "status: an empty Authorization header is no header (401, said so)"
out=$(env ONCEHOOK_STATUS_TOKEN=admin-status-token-0123 \
    ONCEHOOK_ENDPOINTS=shop,Status ONCEHOOK_STATUS_SCHEME=hmac-sha256 \
    ONCEHOOK_STATUS_SECRET=admin-test-secret "$ONCEHOOK_BIN" check 2>&1)
[ $? -eq 1 ] && printf '%s\n' "$out" | grep -q 'may not be named status'
ok $? "check: an endpoint named Status (any case) while the token is set"

# HEAD: the head alone, with the Content-Length a GET's body would have,
# on the status endpoint and on a webhook endpoint (its 405) alike.
head_req() {	# head_req METHOD PATH: the whole CGI answer
	printf '' | env ONCEHOOK_STATUS_TOKEN=admin-status-token-0123 \
	    GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD="$1" PATH_INFO="$2" \
	    HTTP_AUTHORIZATION="Bearer admin-status-token-0123" \
	    "$ONCEHOOK_BIN" 2>/dev/null
}
for p in /hooks/status /hooks/shop; do
	head_req HEAD "$p" >"$dir/head.out"
	head_req GET "$p" >"$dir/get.out"
	hlen=$(sed -n 's/^Content-Length: \([0-9]*\).*/\1/p' "$dir/head.out")
	glen=$(sed -n 's/^Content-Length: \([0-9]*\).*/\1/p' "$dir/get.out")
	# What follows the blank line that ends the head.
	body=$(awk 'b { printf "%s", $0 } /^\r?$/ { b = 1 }' "$dir/head.out")
	gbody=$(awk 'b { printf "%s", $0 } /^\r?$/ { b = 1 }' "$dir/get.out")
	# The status document changes between the two requests (its
	# counts); the endpoint's 405 does not.
	[ -n "$hlen" ] && [ "$hlen" -gt 0 ] && [ -z "$body" ] &&
	    [ -n "$gbody" ] &&
	    { [ "$p" = /hooks/status ] || [ "$hlen" = "$glen" ]; } &&
	    [ "$(sed -n 1p "$dir/head.out")" = "$(sed -n 1p "$dir/get.out")" ]
	ok $? "HEAD $p: the head alone, Content-Length $hlen (GET's $glen), GET's status"
done

# Each command asks only for what it uses: those that only read or change
# the database need no endpoint secret, and sign needs no database.  A
# secret set to garbage is never read by them either.
for c in list "show --endpoint shop evt_b" stats "stats --check" "prune --dry-run" \
    "replay --failed" "work --once --max-seconds 1"; do
	# shellcheck disable=SC2086
	env -u ONCEHOOK_SHOP_SECRET -u ONCEHOOK_KEEP_SECRET \
	    ONCEHOOK_KEEP_SECRET_FILE=/nonexistent \
	    ONCEHOOK_STATUS_TOKEN=short "$ONCEHOOK_BIN" $c \
	    >"$dir/needs.out" 2>&1
	rc=$?
	! grep -q SECRET "$dir/needs.out" && [ $rc -ne 2 ] &&
	    { [ $rc -eq 0 ] || [ "$c" = "stats --check" ]; }
	ok $? "$c: no endpoint secret or status token needed (exit $rc)"
done
printf '%s' '{"eventId":"evt_s","type":"t"}' >"$dir/sign.json"
env -u ONCEHOOK_DB "$ONCEHOOK_BIN" sign --endpoint shop "$dir/sign.json" \
    >"$dir/needs.out" 2>&1 &&
    grep -q '^X-Webhook-Signature: sha256=' "$dir/needs.out"
ok $? "sign: no database needed"
for bad in 'Latin-1 k\351' 'a C1 control k\302\205x' 'a tab k\tx'; do
	out=$(env -u ONCEHOOK_DB "$ONCEHOOK_BIN" sign --endpoint shop \
	    --id "$(printf "${bad##* }")" "$dir/sign.json" 2>&1)
	[ $? -eq 2 ] && ! printf '%s\n' "$out" | grep -q Signature &&
	    printf '%s\n' "$out" | grep -q 'want UTF-8 text'
	ok $? "sign --id with ${bad% *}: refused, nothing signed"
done
out=$(env -u ONCEHOOK_DB "$ONCEHOOK_BIN" sign --endpoint shop \
    --id "k$(printf '\303\251')" "$dir/sign.json" 2>&1)
printf '%s\n' "$out" | grep -q "^X-Idempotency-Key: k$(printf '\303\251')\$"
ok $? "sign --id with UTF-8 beyond ASCII: signed"
out=$(env -u ONCEHOOK_DB "$ONCEHOOK_BIN" list 2>&1)
[ $? -eq 1 ] && printf '%s\n' "$out" | grep -q '^oncehook list: ONCEHOOK_DB: required'
ok $? "list without ONCEHOOK_DB names the missing setting"
out=$(env -u ONCEHOOK_SHOP_SECRET "$ONCEHOOK_BIN" sign --endpoint shop \
    "$dir/sign.json" 2>&1)
[ $? -eq 1 ] && printf '%s\n' "$out" | grep -q 'ONCEHOOK_SHOP_SECRET'
ok $? "sign without the endpoint's secret names it"
out=$(env -u ONCEHOOK_SHOP_SECRET "$ONCEHOOK_BIN" check 2>&1)
[ $? -eq 1 ] && printf '%s\n' "$out" | grep -q 'ONCEHOOK_SHOP_SECRET'
ok $? "check still requires every endpoint's secret"

# --env-file: the variables as systemd's EnvironmentFile= reads them (no
# shell: a secret with $ and ` stays whole), for cron; the environment
# wins over the file.
printf '%s\n' '# as oncehook.service shows' "ONCEHOOK_DB=$dir/envfile.db" \
    'ONCEHOOK_ENDPOINTS=shop' 'ONCEHOOK_SHOP_SCHEME=hmac-sha256' \
    'ONCEHOOK_SHOP_SECRET="d0llar$ign`tick-secret-0123"' \
    "ONCEHOOK_SHOP_ACTIONS=$top_srcdir/sql/actions/orders.sql" \
    'ONCEHOOK_LOG=info' >"$dir/envfile"
env -i PATH="$PATH" "$ONCEHOOK_BIN" --env-file "$dir/envfile" init \
    >/dev/null 2>&1
body='{"eventId":"evt_envfile","type":"webhook.ping"}'
sig=$(printf '%s' "$body" | openssl dgst -sha256 \
    -hmac 'd0llar$ign`tick-secret-0123' -r | cut -d' ' -f1)
out=$(printf '%s' "$body" | env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 \
    REQUEST_METHOD=POST CONTENT_TYPE=application/json \
    CONTENT_LENGTH=${#body} PATH_INFO=/hooks/shop \
    HTTP_X_WEBHOOK_SIGNATURE="sha256=$sig" \
    "$ONCEHOOK_BIN" --env-file "$dir/envfile" 2>/dev/null)
printf '%s\n' "$out" | grep -q '"processed"'
ok $? "--env-file: a secret with \$ and \` read whole, the delivery processed"
out=$(env -i PATH="$PATH" ONCEHOOK_LOG=warn "$ONCEHOOK_BIN" --env-file \
    "$dir/envfile" work --once 2>&1)
rc=$?
[ $rc -eq 0 ] && ! printf '%s\n' "$out" | grep -q ' info: '
ok $? "--env-file: a variable already set wins (ONCEHOOK_LOG=warn: work is quiet)"
printf 'ONCEHOOK_DB\n' >"$dir/badenv"
out=$(env -i PATH="$PATH" "$ONCEHOOK_BIN" --env-file "$dir/badenv" check 2>&1)
[ $? -eq 2 ] && printf '%s\n' "$out" | grep -q 'badenv:1: want NAME=value'
ok $? "--env-file: a malformed line is named by file:line, exit 2"
printf '%s\n' 'ONCEHOOK_DB=/tmp/x.db' 'ONCEHOOK_SECRET="-----BEGIN PUBLIC KEY-----' \
    'MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=' \
    '-----END PUBLIC KEY-----"' >"$dir/pemenv"
out=$(env -i PATH="$PATH" "$ONCEHOOK_BIN" --env-file "$dir/pemenv" check 2>&1)
[ $? -eq 2 ] && printf '%s\n' "$out" |
    grep -q 'pemenv:2: ONCEHOOK_SECRET: .*double quote is not closed.*one line'
ok $? "--env-file: a PEM key pasted over lines: its variable and line named"
# init whose actions file is missing: the migrations it logged are
# rolled back with it, and it says so.
out=$(env -i PATH="$PATH" ONCEHOOK_DB="$dir/rolledback.db" \
    ONCEHOOK_SCHEME=hmac-sha256 ONCEHOOK_SECRET=0123456789abcdef0123 \
    ONCEHOOK_ACTIONS="$dir/no-such-actions.sql" "$ONCEHOOK_BIN" init 2>&1)
[ $? -eq 1 ] && printf '%s\n' "$out" | grep -q 'applied migration' &&
    printf '%s\n' "$out" | grep -q 'no-such-actions.sql.*rolled back' &&
    [ "$(sqlite3 -cmd '.timeout 10000' "$dir/rolledback.db" 'PRAGMA user_version')" = 0 ]
ok $? "init that fails after its migrations says they were rolled back"

# oncehook stats: the counters beside a fresh database, and --check's
# exit codes for cron and monitoring plugins.
ONCEHOOK_DB=$dir/stats.db
printf '%s\n' 'CREATE TABLE IF NOT EXISTS picky (x INTEGER CHECK (x > 0));' \
    '-- on: *' 'INSERT INTO picky VALUES (-1);' >"$dir/failing.sql"
ONCEHOOK_KEEP_ACTIONS=$dir/failing.sql "$ONCEHOOK_BIN" init >/dev/null 2>&1
out=$("$ONCEHOOK_BIN" stats --check)
rc=$?
[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q '^OK: 2 endpoints'
ok $? "stats --check before any delivery: exit 0, OK ($out)"
deliver shop '{"eventId":"evt_s1","type":"webhook.ping"}' >/dev/null
deliver shop '{"eventId":"evt_s1","type":"webhook.ping"}' >/dev/null
deliver shop '{"eventId":"evt_s2","type":"webhook.ping"}' >/dev/null
[ "$(stat -c %a "$dir/stats.db-counters")" = 600 ]
ok $? "the counters file is created beside the database, mode 0600"
out=$("$ONCEHOOK_BIN" stats --json)
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
e = {x["name"]: x for x in d["endpoints"]}["shop"]
sys.exit(0 if e["total"]["processed"] == 2 and
         e["total"]["duplicates"] == 1 and abs(e["dedup_rate"] - 1/3) < 1e-9
         and e["stored"]["events"] == 2 and d["status"] == "ok" else 1)'
ok $? "stats --json: 2 processed, 1 duplicate, dedup rate 1/3, 2 stored"
out=$("$ONCEHOOK_BIN" stats)
printf '%s\n' "$out" | grep -q '^shop  *healthy  *3  *3  *2  *1  *33.3%  *0  *0  *0$'
ok $? "stats: the table a person reads"
deliver shop '{"eventId":"evt_s1","type":"webhook.ping","n":2}' >/dev/null
out=$("$ONCEHOOK_BIN" stats --check)
rc=$?
[ $rc -eq 1 ] && printf '%s\n' "$out" | grep -q '^WARNING: shop degraded: 1 key conflict'
ok $? "stats --check after a key conflict: exit 1, WARNING ($out)"
out=$(ONCEHOOK_KEEP_ACTIONS=$dir/failing.sql cgi keep \
    '{"eventId":"evt_k2","type":"webhook.ping"}')
printf '%s\n' "$out" | grep -q '"action_failed"'
ok $? "an action that fails: 500 action_failed"
out=$(ONCEHOOK_KEEP_ACTIONS=$dir/failing.sql "$ONCEHOOK_BIN" stats --check)
rc=$?
[ $rc -eq 2 ] && printf '%s\n' "$out" | grep -q '^CRITICAL: keep failing: action_failed .* no success since'
ok $? "stats --check after a failure with no success since: exit 2, CRITICAL ($out)"
out=$("$ONCEHOOK_BIN" stats --endpoint shop --check)
[ $? -eq 1 ]
ok $? "stats --check --endpoint shop judges shop alone: exit 1"
"$ONCEHOOK_BIN" stats --endpoint nope >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "stats --endpoint with an unknown name: exit 2"
"$ONCEHOOK_BIN" stats --bogus >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "stats with an unknown option: usage, exit 2"
ONCEHOOK_COUNTERS=off deliver shop '{"eventId":"evt_s3","type":"webhook.ping"}' >/dev/null
"$ONCEHOOK_BIN" stats --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
e = {x["name"]: x for x in d["endpoints"]}["shop"]
sys.exit(0 if e["total"]["processed"] == 2 and e["stored"]["events"] == 3
         else 1)'
ok $? "ONCEHOOK_COUNTERS=off: the event stored, nothing counted"
out=$(ONCEHOOK_COUNTERS=off "$ONCEHOOK_BIN" stats)
printf '%s\n' "$out" | grep -q '^counters: counting is off' &&
    printf '%s\n' "$out" | grep -q 'counting is off: ONCEHOOK_COUNTERS=off)$'
ok $? "stats with ONCEHOOK_COUNTERS=off says counting is off"
chmod 000 "$dir/stats.db" 2>/dev/null
if [ "$(id -u)" = 0 ]; then
	# root reads any file: make it no database instead.
	chmod 600 "$dir/stats.db"
	mv "$dir/stats.db" "$dir/stats.db.away"
fi
out=$("$ONCEHOOK_BIN" stats --check 2>/dev/null)
rc=$?
[ $rc -eq 2 ] && printf '%s\n' "$out" | grep -q '^CRITICAL: the database'
ok $? "stats --check with the database unreadable: exit 2, CRITICAL ($out)"
[ -e "$dir/stats.db.away" ] && mv "$dir/stats.db.away" "$dir/stats.db"
chmod 600 "$dir/stats.db"
ONCEHOOK_DB=$dir/hooks.db

# The outbox's commands (docs/operations.md): a payment writes an order.paid
# row; check names the topics and their targets; deliver, list, show,
# stats and --retry-dead as an operator uses them, with the shipped
# e-mail target (conf-examples/outbox-mail.sh) and a fake sendmail.
ob=$dir/outbox
mkdir -p "$ob/bin"
printf '#!/bin/sh\ncat >>"%s/mails"\nprintf "\\n--\\n" >>"%s/mails"\n' \
    "$ob" "$ob" >"$ob/bin/sendmail"
chmod +x "$ob/bin/sendmail"
body='{"eventId":"evt_ob1","type":"payment.success","metadata":{"orderId":"ob-42"},"transaction":{"id":"tx_ob","amount":990,"currency":"EUR"},"customer":{"customerEmail":"buyer@example.com"}}'
deliver shop "$body" | grep -q '"processed"'
ok $? "outbox: a payment processed"
deliver shop "$body" | grep -q '"already_processed"'
[ "$(sqlite3 -cmd '.timeout 10000' "$ONCEHOOK_DB" "SELECT count(*) FROM outbox WHERE key = 'evt_ob1' AND topic = 'order.paid' AND status = 'pending'")" = 1 ]
ok $? "outbox: it wrote one order.paid row, its retry none"
out=$("$ONCEHOOK_BIN" check 2>&1 >/dev/null)
printf '%s\n' "$out" | grep -q 'warning: outbox topic order.paid (written by an actions file) has no target: its rows wait until ONCEHOOK_OUTBOX_ORDER_PAID_COMMAND or _URL is set' &&
    printf '%s\n' "$out" | grep -q 'warning: outbox topic order.refunded'
ok $? "check: warns of the shipped topics without a target"
out=$(ONCEHOOK_OUTBOX_ORDER_PAID_URL=https://user:pw@shop.example/rx "$ONCEHOOK_BIN" check 2>&1)
rc=$?
[ $rc -eq 1 ] && printf '%s\n' "$out" | grep -q 'ONCEHOOK_OUTBOX_SECRET is not' &&
    printf '%s\n' "$out" | grep -q 'order.paid .*-> POST https://\*\*\*@shop.example/rx' &&
    ! printf '%s\n' "$out" | grep -q 'pw@'
ok $? "check: a URL target without ONCEHOOK_OUTBOX_SECRET fails it (1); the URL shown without its password"
"$ONCEHOOK_BIN" deliver --once >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(sqlite3 -cmd '.timeout 10000' "$ONCEHOOK_DB" "SELECT status || attempts FROM outbox WHERE key = 'evt_ob1'")" = pending0 ]
ok $? "deliver --once without a target: exit 0, the row waits untouched"
export OUTBOX_MAIL_FROM=shop@example.com OUTBOX_MAIL_SENT="$ob/sent" SENDMAIL="$ob/bin/sendmail"
ONCEHOOK_OUTBOX_ORDER_PAID_COMMAND="$top_srcdir/conf-examples/outbox-mail.sh" \
    "$ONCEHOOK_BIN" deliver --once 2>"$ob/log"
rc=$?
id=$(sqlite3 -cmd '.timeout 10000' "$ONCEHOOK_DB" "SELECT id FROM outbox WHERE key = 'evt_ob1'")
[ $rc -eq 0 ] && [ "$(sqlite3 -cmd '.timeout 10000' "$ONCEHOOK_DB" "SELECT status || attempts FROM outbox WHERE key = 'evt_ob1'")" = delivered1 ] &&
    grep -q '^To: buyer@example.com$' "$ob/mails" &&
    grep -q "^Message-ID: <$id@oncehook.invalid>$" "$ob/mails" &&
    grep -q 'your payment for order ob-42\.' "$ob/mails" &&
    grep -q "outbox id=$id topic=order.paid endpoint=shop key=\"evt_ob1\" outcome=delivered attempt=1" "$ob/log"
ok $? "deliver: the e-mail target sends the customer's mail, the row delivered (one log line)"
printf '%s\n' "$id" | ONCEHOOK_OUTBOX_ID=$id "$top_srcdir/conf-examples/outbox-mail.sh" >/dev/null </dev/null
[ $? -eq 0 ] && [ "$(grep -c '^To: ' "$ob/mails")" = 1 ]
ok $? "outbox-mail.sh: the same id again sends no second mail"
"$ONCEHOOK_BIN" list --outbox | grep -q "  $id delivered   1  order.paid  shop evt_ob1$"
ok $? "list --outbox: the row"
out=$("$ONCEHOOK_BIN" show --outbox "$id")
printf '%s\n' "$out" | grep -q '^status        delivered$' &&
    printf '%s\n' "$out" | grep -q '^payload       {"type":"order.paid","order_id":"ob-42",'
ok $? "show --outbox ID: status and payload"
"$ONCEHOOK_BIN" show --endpoint shop evt_ob1 | grep -q "^outbox        $id order.paid delivered (1 attempt)$"
ok $? "show KEY: the event's outbox rows"
"$ONCEHOOK_BIN" show --outbox ob_000000000000000000000000 >/dev/null 2>&1
[ $? -eq 1 ]
ok $? "show --outbox: no such row, exit 1"
"$ONCEHOOK_BIN" list --outbox --status sent >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "list --outbox --status sent: a usage error (2)"
"$ONCEHOOK_BIN" deliver --bogus >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "deliver --bogus: a usage error (2)"
# A target that always fails: dead after ONCEHOOK_OUTBOX_MAX_ATTEMPTS,
# critical in stats --check, back with --retry-dead.
body='{"eventId":"evt_ob2","type":"payment.refunded","metadata":{"orderId":"ob-42"}}'
deliver shop "$body" | grep -q '"processed"'
ok $? "outbox: a refund processed (an order.refunded row)"
ONCEHOOK_OUTBOX_ORDER_REFUNDED_COMMAND=/bin/false ONCEHOOK_OUTBOX_BACKOFF=1 \
    ONCEHOOK_OUTBOX_MAX_ATTEMPTS=2 "$ONCEHOOK_BIN" deliver --max-seconds 4 2>"$ob/log"
rc=$?
[ $rc -eq 1 ] && [ "$(sqlite3 -cmd '.timeout 10000' "$ONCEHOOK_DB" "SELECT status || attempts || last_error FROM outbox WHERE key = 'evt_ob2'")" = "dead2/bin/false: exit 1" ] &&
    grep -q 'outcome=failed attempt=1 ' "$ob/log" && grep -q 'outcome=dead attempt=2 ' "$ob/log"
ok $? "deliver: a target that fails, MAX_ATTEMPTS 2 and a 1 s backoff: failed, then dead (exit 1, after 4 s)"
out=$("$ONCEHOOK_BIN" stats --check)
[ $? -eq 2 ] && printf '%s\n' "$out" | grep -q '^CRITICAL: outbox failing: 1 dead row'
ok $? "stats --check: a dead outbox row is critical (2): $out"
"$ONCEHOOK_BIN" stats | grep -q '^  order.refunded  *none here  *0  *0  *1 -$'
ok $? "stats: the outbox by topic"
"$ONCEHOOK_BIN" stats --prometheus | grep -q '^oncehook_outbox_rows{topic="order.refunded",status="dead"} 1$'
ok $? "stats --prometheus: oncehook_outbox_rows"
out=$("$ONCEHOOK_BIN" deliver --retry-dead)
[ $? -eq 0 ] && [ "$out" = "1 dead outbox row made due now" ] &&
    [ "$(sqlite3 -cmd '.timeout 10000' "$ONCEHOOK_DB" "SELECT status || attempts FROM outbox WHERE key = 'evt_ob2'")" = pending0 ]
ok $? "deliver --retry-dead: pending again, attempts from 0 (alone: no delivery)"
# A receiver that failed, then was fixed: --retry-now sends at once what
# waits out a 1 h backoff.
ONCEHOOK_OUTBOX_ORDER_REFUNDED_COMMAND=/bin/false ONCEHOOK_OUTBOX_BACKOFF=3600 \
    "$ONCEHOOK_BIN" deliver --once 2>/dev/null
ONCEHOOK_OUTBOX_ORDER_REFUNDED_COMMAND=/bin/true "$ONCEHOOK_BIN" deliver --once 2>/dev/null
[ "$(sqlite3 -cmd '.timeout 10000' "$ONCEHOOK_DB" "SELECT status || attempts FROM outbox WHERE key = 'evt_ob2'")" = pending1 ]
ok $? "a failure with a 1 h backoff: the fixed target waits"
ONCEHOOK_OUTBOX_ORDER_REFUNDED_COMMAND=/bin/true "$ONCEHOOK_BIN" deliver --retry-now --once 2>/dev/null >"$ob/out" &&
    [ "$(cat "$ob/out")" = "1 waiting outbox row made due now" ] &&
    [ "$(sqlite3 -cmd '.timeout 10000' "$ONCEHOOK_DB" "SELECT status || attempts FROM outbox WHERE key = 'evt_ob2'")" = delivered2 ]
ok $? "deliver --retry-now --once: due now, delivered at attempt 2"
unset OUTBOX_MAIL_FROM OUTBOX_MAIL_SENT SENDMAIL

# A read-only file system after a CGI request, which leaves the -wal
# emptied (0 bytes) and the -shm in place: a retry of a known event is
# still answered 200 from a read, a new event is 503 with Retry-After.
# (tests/reliability.sh does the same with no -wal left at all.)  Needs
# root to mount a tmpfs and make it read-only.
ro=$dir/ro
if [ "$(id -u)" = 0 ] && mkdir -p "$ro" &&
    mount -t tmpfs -o size=4m tmpfs "$ro" 2>/dev/null; then
	ONCEHOOK_DB=$ro/hooks.db
	"$ONCEHOOK_BIN" init >/dev/null 2>&1
	body='{"eventId":"evt_ro","type":"webhook.ping"}'
	deliver shop "$body" | grep -q '"status":"processed"'
	ok $? "read-only: the event is processed before"
	[ -f "$ro/hooks.db-wal" ] && [ ! -s "$ro/hooks.db-wal" ] &&
	    [ -f "$ro/hooks.db-shm" ] && mount -o remount,ro "$ro"
	ok $? "read-only: the CGI request left the -wal empty and the -shm, file system made read-only"
	deliver shop "$body" | grep -q '"status":"already_processed"'
	ok $? "read-only, empty -wal: a retry is answered 200 already_processed"
	body='{"eventId":"evt_ro_new","type":"webhook.ping"}'
	out=$(cgi shop "$body")
	printf '%s\n' "$out" | grep -q '^Status: 503' &&
	    printf '%s\n' "$out" | grep -q '^Retry-After: '
	ok $? "read-only, empty -wal: a new event is 503 with Retry-After"
	umount "$ro"
	ONCEHOOK_DB=$dir/hooks.db
else
	for i in 1 2 3 4; do
		n=$((n + 1)); echo "ok $n # SKIP read-only: needs root and tmpfs"
	done
fi

# --version says whether SQLite, jansson and libfcgi are linked in
# (configure's default where their .a files link) or shared, and the
# binary agrees: their security updates reach it only when shared.
ver=$("$ONCEHOOK_BIN" --version)
echo "$ver" | sed 's/^/# /'
if command -v readelf >/dev/null 2>&1; then
	libs=$(readelf -d "$ONCEHOOK_BIN" | grep -c 'NEEDED.*\(libsqlite3\|libjansson\|libfcgi\)')
	case $ver in
	*"linked in"*) [ "$libs" -eq 0 ] ;;
	*"shared libraries"*) [ "$libs" -eq 3 ] ;;
	*) false ;;
	esac
	ok $? "--version: SQLite, jansson and libfcgi linked in or shared, as the binary is ($libs of them loaded)"
	# Linked in, SQLite's math functions open libm at their first call
	# (src/store/sqlite/libm.c): the program does not load it at its start.
	libm=$(readelf -d "$ONCEHOOK_BIN" | grep -c 'NEEDED.*libm\.so')
	case $ver in
	*"linked in"*)
		[ "$libm" -eq 0 ]
		ok $? "linked in, the program loads no libm at its start ($libm NEEDED)" ;;
	*)	n=$((n + 1)); echo "ok $n # SKIP libm at start: a shared libsqlite3 loads it" ;;
	esac
else
	n=$((n + 1)); echo "ok $n # SKIP --version against the binary: no readelf"
	n=$((n + 1)); echo "ok $n # SKIP libm at start: no readelf"
fi
echo "$ver" | grep -q "^SQLite [0-9][0-9.]*, jansson [0-9][0-9.]* and libfcgi: "
ok $? "--version names SQLite's and jansson's versions"
echo "$ver" | grep -q "MIT licence (LICENSE)$"
ok $? "--version names the licence"

# basic (HTTP Basic auth): check's CGIPassAuth hint; a CGI request
# without Authorization is a plain 401 to the client, and the log line
# names CGIPassAuth; sign prints the header that a delivery carries.
basic_env="ONCEHOOK_ENDPOINTS=shop,keep,pm ONCEHOOK_PM_SCHEME=basic
ONCEHOOK_PM_SECRET=postmark:admin-test-password-0123
ONCEHOOK_PM_ACTIONS=$top_srcdir/sql/actions/orders.sql"
out=$(env $basic_env "$ONCEHOOK_BIN" check 2>&1)
[ $? -eq 0 ] && printf '%s\n' "$out" | grep -q 'basic: .*CGIPassAuth On'
ok $? "check: a basic endpoint gets the CGIPassAuth hint"
out=$("$ONCEHOOK_BIN" check 2>&1)
! printf '%s\n' "$out" | grep -q CGIPassAuth
ok $? "check: no CGIPassAuth hint without a basic endpoint"
pm='{"RecordType":"Delivery","MessageID":"adm-1","Recipient":"a@example.com"}'
pm_cgi() {	# pm_cgi [HTTP_AUTHORIZATION=...]: answer on stdout, log in $dir/pm.log
	printf '%s' "$pm" | env $basic_env GATEWAY_INTERFACE=CGI/1.1 \
	    REQUEST_METHOD=POST CONTENT_TYPE=application/json \
	    CONTENT_LENGTH=${#pm} PATH_INFO=/hooks/pm "$@" "$ONCEHOOK_BIN" \
	    2>"$dir/pm.log"
}
out=$(pm_cgi)
printf '%s\n' "$out" | grep -q '^Status: 401' &&
    printf '%s\n' "$out" | grep -q '^WWW-Authenticate: Basic realm=' &&
    ! printf '%s\n' "$out" | grep -q CGIPassAuth &&
    grep -q 'why="Authorization header missing (a CGI request: .*CGIPassAuth On' \
    "$dir/pm.log" && ! grep -q 'admin-test-password' "$dir/pm.log"
ok $? "basic under CGI, no Authorization: 401 with WWW-Authenticate, the log line names CGIPassAuth"
bad=$(printf '%s' '{"eventId":"evt_www"}' | env GATEWAY_INTERFACE=CGI/1.1 \
    REQUEST_METHOD=POST CONTENT_TYPE=application/json CONTENT_LENGTH=21 \
    PATH_INFO=/hooks/shop HTTP_X_WEBHOOK_SIGNATURE=sha256=00 \
    "$ONCEHOOK_BIN" 2>/dev/null)
printf '%s\n' "$bad" | grep -q '^Status: 401' &&
    ! printf '%s\n' "$bad" | grep -q '^WWW-Authenticate'
ok $? "a signature scheme's 401 has no WWW-Authenticate"
auth=$(env $basic_env "$ONCEHOOK_BIN" sign --endpoint pm - </dev/null |
    sed -n 's/^Authorization: //p')
[ "$auth" = "Basic $(printf '%s' postmark:admin-test-password-0123 | openssl base64 -A)" ]
ok $? "sign: basic prints the Authorization header ($auth)"
out=$(pm_cgi HTTP_AUTHORIZATION="Basic $(printf '%s' postmark:admin-test-password-0124 | openssl base64 -A)")
printf '%s\n' "$out" | grep -q '^Status: 401' &&
    grep -q 'why="user name or password wrong"' "$dir/pm.log" &&
    ! grep -q 'CGIPassAuth\|admin-test-password' "$dir/pm.log"
ok $? "basic, wrong password: 401, no hint, the password never logged"
out=$(pm_cgi HTTP_AUTHORIZATION="$auth")
printf '%s\n' "$out" | grep -q '"processed"' &&
    ! grep -q 'admin-test-password' "$dir/pm.log"
ok $? "basic, the header sign printed: processed"

# mailgun: sign puts the signature in the body; that body is processed.
mg_env="ONCEHOOK_ENDPOINTS=shop,keep,mg ONCEHOOK_MG_SCHEME=mailgun
ONCEHOOK_MG_SECRET=key-admin-test-0123456789
ONCEHOOK_MG_ACTIONS=$top_srcdir/sql/actions/orders.sql"
printf '%s' '{"event-data":{"id":"adm-mg-1","event":"delivered"}}' >"$dir/mg.json"
mg=$(env $mg_env "$ONCEHOOK_BIN" sign --endpoint mg --id adm-token-1 "$dir/mg.json" |
    sed -n '3p')
out=$(printf '%s' "$mg" | env $mg_env GATEWAY_INTERFACE=CGI/1.1 \
    REQUEST_METHOD=POST CONTENT_TYPE=application/json CONTENT_LENGTH=${#mg} \
    PATH_INFO=/hooks/mg "$ONCEHOOK_BIN" 2>/dev/null)
printf '%s\n' "$out" | grep -q '"processed","key":"adm-token-1"'
ok $? "sign: the mailgun body it prints is processed, keyed by the token"
env $mg_env "$ONCEHOOK_BIN" sign --endpoint mg --curl http://127.0.0.1/hooks/mg \
    "$dir/mg.json" | grep -q "^curl .*--data-binary '{\"signature\":{\"timestamp\""
ok $? "sign --curl: the mailgun body inline"

echo "1..$n"
[ "$failed" -eq 0 ]
