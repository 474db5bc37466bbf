#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook's outbox (SPEC 13) end to end: side effects after the commit,
# delivered at least once with a stable id to a receiver that
# deduplicates, so that each happens exactly once.
#
# One run directory: a real lighttpd from the shipped
# conf-examples/lighttpd-fastcgi.conf (tests/servers/lighttpd.sh), oncehook
# under mod_fastcgi at /hooks/, and on the same lighttpd (".php") a real
# PHP-FPM 8.2 running tests/outbox/receiver.php: a site's own Standard
# Webhooks receiver (verifies the signature itself, 401 otherwise;
# deduplicates by webhook-id in its own SQLite file via PDO; answers 500
# to the first two attempts of each id on purpose; keeps every request
# in captures/).  The command target is tests/outbox/cmd-target.sh (the
# same behaviour for ONCEHOOK_OUTBOX_ID).  Events are signed with
# "oncehook sign" (endpoint shop, hmac-sha256) and sent with curl; the
# shipped orders.sql turns a first payment of an order into an outbox
# row "order.paid" and a first refund into "order.refunded".  Targets:
# order.paid -> the PHP receiver's URL, order.refunded -> the command.
# All assertions read the databases with the sqlite3 CLI.
#
#  1. A signed delivery through lighttpd commits the order and exactly
#     one pending order.paid row; its retry, and another payment event
#     for the same order, add none.
#  R. The receiver itself: a forged and a stale request get 401, a good
#     one 500, 500, then 200 with one effect, and 200 without a second.
#  2. "deliver --max-seconds 8" (looping): the order.paid row is
#     delivered after 3 attempts, with the payload as the body; the
#     receiver saw 3 requests and did one effect.
#  4. The command target: 3 runs (deliver --once, repeated), delivered,
#     one effect, the payload on stdin, exactly the four
#     ONCEHOOK_OUTBOX_* variables and no secret in its environment.
#  3. kill -9 of a deliverer mid-POST (receiver sleeping 3 s) and of
#     another mid-command (TIMEOUT=2: lease 7 s): nothing is sent again
#     while leased; after the lease both are sent again with the same
#     id, and each target did its effect once (the receiver in the
#     killed attempt, which it finished; the command in either run:
#     oncehook's child may die with it).
#  T. A receiver and a command slower than TIMEOUT=2 (5 s, once): each
#     attempt is given up at 2 s (the command stopped), the next is
#     delivered; one effect each.
#  C. A 204 answer is a delivery (the payload with a UTF-8 e-mail, byte
#     for byte); a 302 is a failure, not followed (dead at
#     MAX_ATTEMPTS=2); "deliver --retry-dead --once" then delivers it.
#  N. Without a target for its topic a row waits (pending, 0 attempts)
#     and "oncehook check" names the variable; once set, delivered.
#  6. A URL on a closed port with MAX_ATTEMPTS=2: dead after 2 attempts;
#     list/show --outbox name it; "deliver --retry-dead" makes it
#     pending, and it is then delivered.
#  7. Two deliverers at once over 20 rows: all delivered on the first
#     attempt, the receiver saw each id exactly once.
#  5. The Standard Webhooks library (standardwebhooks, from
#     tests/node/package-lock.json, sv_npm_ci() into the temporary
#     directory) verifies every request the receiver accepted, refuses
#     the ones it refused, and refuses each with its body or id changed
#     (tests/node/verify-outbox.mjs).
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set
# (or by hand: top_srcdir=. builddir=_build/dev sh tests/outbox.sh).
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped
# (php-fpm8.2 is not installed), 99 harness error.  As root (CI),
# lighttpd, PHP-FPM's pool, "oncehook deliver" (hence the command
# target) and the sqlite3 reads run as nobody:nogroup.  Set
# ONCEHOOK_E2E_KEEP=1 to keep the temporary directory.

umask 022
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=${builddir:-.}}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"

# PHP-FPM 8.2: the one reason to skip.
phpfpm=$(command -v php-fpm8.2 2>/dev/null || true)
if [ -z "$phpfpm" ] && [ -x /usr/sbin/php-fpm8.2 ]; then
	phpfpm=/usr/sbin/php-fpm8.2
fi
if [ -z "$phpfpm" ]; then
	echo "1..0 # SKIP php-fpm8.2 is not installed"
	exit 77
fi
# The rest is installed by tools/deps.sh: missing, it is a harness error.
if ! command -v lighttpd >/dev/null 2>&1 && [ ! -x /usr/sbin/lighttpd ]; then
	bail "lighttpd is not installed (tools/deps.sh)"
fi
for tool in python3 sqlite3 curl node npm; do
	command -v $tool >/dev/null 2>&1 ||
	    bail "$tool is not installed (tools/deps.sh)"
done
"$phpfpm" -m 2>/dev/null | grep -qx pdo_sqlite ||
    bail "$phpfpm has no pdo_sqlite (php8.2-sqlite3)"
for f in tests/servers/lighttpd.sh tests/outbox/receiver.php \
    tests/outbox/cmd-target.sh tests/node/verify-outbox.mjs \
    tests/node/package.json tests/node/package-lock.json; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done
lt_find
backend=
if [ -n "$run_user" ]; then
	command -v setpriv >/dev/null 2>&1 || bail "setpriv is missing (root)"
	backend="setpriv --reuid=$run_user --regid=$run_group --clear-groups --"
fi

watchdog=
if command -v timeout >/dev/null 2>&1; then
	watchdog="timeout 120"
fi

# The outbox's secret: whsec_ and base64 of the key
# "oncehook outbox e2e signing key 01".
OUTBOX_SECRET=whsec_b25jZWhvb2sgb3V0Ym94IGUyZSBzaWduaW5nIGtleSAwMQ==

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-outbox.XXXXXX") ||
    bail "mktemp failed"
case $tmp in
*[!A-Za-z0-9/._-]*) bail "$tmp: a command target's path is split on spaces" ;;
esac
fpm_pid=
bg_pids=

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	for p in $bg_pids; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	lt_stop
	if [ -n "$fpm_pid" ]; then
		kill "$fpm_pid" 2>/dev/null
		wait "$fpm_pid" 2>/dev/null
	fi
	sv_tmp_done "$tmp"
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

start=$(date +%s)

# -- the run directory: lighttpd, oncehook, PHP-FPM ------------------

d=$tmp/run
lt_setup fastcgi "$d"
db=$d/db/oncehook.db
recv=$d/recv	# the receiver's database, captures and markers
cmdd=$d/cmd	# the command target's files and markers
ev=$d/events	# the events sent
mkdir -p "$recv/captures" "$cmdd" "$ev" || bail "mkdir in $d"
cp "$top_srcdir/tests/outbox/receiver.php" "$d/htdocs/receiver.php" ||
    bail "copying receiver.php"
cp "$top_srcdir/conf-examples/outbox-receiver.php" \
    "$d/htdocs/outbox-receiver.php" || bail "copying outbox-receiver.php"
cp "$top_srcdir/tests/outbox/cmd-target.sh" "$d/bin/cmd-target.sh" ||
    bail "copying cmd-target.sh"
chmod 0644 "$d/htdocs/receiver.php" "$d/htdocs/outbox-receiver.php"
chmod 0755 "$d/bin/cmd-target.sh" "$ev"
if [ -n "$run_user" ]; then
	chown -R "$run_user:$run_group" "$recv" "$cmdd" ||
	    bail "chown $recv $cmdd"
fi

hooks=http://127.0.0.1:$lt_port/hooks
recv_url=http://127.0.0.1:$lt_port/receiver.php
# The same lighttpd hands *.php to PHP-FPM.
cat >>"$d/conf/lighttpd.conf" <<EOF
fastcgi.server += ( ".php" => ((
	"socket" => "$d/run/php.sock",
	"check-local" => "enable",
)) )
EOF

{
	echo "[global]"
	echo "pid = $d/run/php-fpm.pid"
	echo "error_log = $d/log/php-fpm.log"
	echo "daemonize = no"
	echo "[receiver]"
	if [ -n "$run_user" ]; then
		echo "user = $run_user"
		echo "group = $run_group"
	fi
	echo "listen = $d/run/php.sock"
	echo "listen.mode = 0666"
	echo "pm = static"
	echo "pm.max_children = 6"
	echo "pm.max_requests = 0"
	echo "clear_env = yes"
	echo "catch_workers_output = yes"
	echo "env[RECEIVER_DIR] = \"$recv\""
	echo "env[OUTBOX_SECRET] = \"$OUTBOX_SECRET\""
	echo "env[OUTBOX_DSN] = \"sqlite:$recv/shop.db\""
	echo "php_admin_flag[log_errors] = on"
	echo "php_admin_value[error_log] = \"$d/log/php-error.log\""
} >"$d/conf/php-fpm.conf"
"$phpfpm" -F -y "$d/conf/php-fpm.conf" >"$d/log/php-fpm.out" 2>&1 &
fpm_pid=$!
i=0
while [ ! -S "$d/run/php.sock" ]; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 "$fpm_pid" 2>/dev/null; then
		sed 's/^/# /' "$d/log/php-fpm.out" "$d/log/php-fpm.log" \
		    2>/dev/null
		bail "php-fpm did not start"
	fi
	sleep 0.1
done
lt_start "$d" fastcgi || bail "lighttpd did not start"
tap ok "lighttpd (conf-examples/lighttpd-fastcgi.conf) and PHP-FPM start"

# -- helpers -----------------------------------------------------------

# The outbox's settings for the next "ob" runs: targets of order.paid
# (the receiver) and order.refunded (the command; split on spaces).
paid_url=$recv_url
refund_cmd="/bin/sh $d/bin/cmd-target.sh $cmdd"
ob_timeout=5
ob_max=16

# ob ARGS...: exec oncehook ARGS as the backends' user with only PATH,
# LC_ALL, the filled example's variables (DIR/conf/env: the database,
# every endpoint's secret) and the outbox's (a target left empty is
# unset).  It replaces the shell: run it in ( ) or in the background
# (then $! is oncehook's PID).
ob() {
	# shellcheck disable=SC2086,SC2016 # $backend: words; sh -c's own "$1"
	set -- sh -c 'while IFS= read -r kv; do export "$kv"; done <"$1"
		shift
		exec "$@"' sh "$d/conf/env" $backend "$d/bin/oncehook" "$@"
	[ -z "$paid_url" ] ||
	    set -- ONCEHOOK_OUTBOX_ORDER_PAID_URL="$paid_url" "$@"
	[ -z "$refund_cmd" ] ||
	    set -- ONCEHOOK_OUTBOX_ORDER_REFUNDED_COMMAND="$refund_cmd" "$@"
	exec env -i PATH="$PATH" LC_ALL=C \
	    ONCEHOOK_OUTBOX_SECRET="$OUTBOX_SECRET" \
	    ONCEHOOK_OUTBOX_TIMEOUT="$ob_timeout" \
	    ONCEHOOK_OUTBOX_BACKOFF=1 \
	    ONCEHOOK_OUTBOX_MAX_ATTEMPTS="$ob_max" "$@"
}

# q SQL / rq SQL: a query on oncehook's / the receiver's database.
q() {
	# shellcheck disable=SC2086 # $backend: words
	$backend sqlite3 -batch -noheader -cmd '.timeout 10000' "$db" "$1"
}
rq() {
	# shellcheck disable=SC2086 # $backend: words
	$backend sqlite3 -batch -noheader -cmd '.timeout 10000' \
	    "$recv/receiver.db" "$1"
}

# Is PID (a child of ours) still running?  (A zombie is not.)
alive() {
	case $(ps -o stat= -p "$1" 2>/dev/null) in
	'' | Z*) return 1 ;;
	esac
	return 0
}

# wait_pid PID SECONDS: wait for our child PID, killed (-9) after
# SECONDS; sets rc (its exit status) and took (seconds it ran for).
wait_pid() {
	_t0=$(date +%s)
	_w=0
	while alive "$1" && [ $_w -lt $(($2 * 10)) ]; do
		sleep 0.1
		_w=$((_w + 1))
	done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	rc=$?
	took=$(($(date +%s) - _t0))
	bg_done "$1"
}

# bg_done PID: a background deliverer waited for, no longer to stop.
bg_done() {
	_l=
	for _p in $bg_pids; do
		[ "$_p" = "$1" ] || _l="$_l $_p"
	done
	bg_pids=$_l
}

# until_true SECONDS CMD...: run CMD every 0.1 s until it succeeds (0)
# or SECONDS pass (1).
until_true() {
	_n=$(($1 * 10))
	shift
	while ! "$@"; do
		_n=$((_n - 1))
		[ $_n -gt 0 ] || return 1
		sleep 0.1
	done
	return 0
}

# Events in the generic format, as files (signed and sent as they are).
paid_event() {	# paid_event KEY ORDER AMOUNT [EMAIL]
	printf '{"id":"%s","type":"payment.success","metadata":{"orderId":"%s"},"transaction":{"id":"tx_%s","amount":%s,"currency":"EUR"},"customer":{"customerEmail":"%s"}}' \
	    "$1" "$2" "$1" "$3" "${4:-buyer$2@example.com}" >"$ev/$1.json"
}
refund_event() {	# refund_event KEY ORDER
	printf '{"id":"%s","type":"payment.refunded","metadata":{"orderId":"%s"},"transaction":{"id":"tx_%s"}}' \
	    "$1" "$2" "$1" >"$ev/$1.json"
}

# send KEY: sign events/KEY.json with "oncehook sign --endpoint shop",
# POST it through lighttpd with curl; sets code (the HTTP status), the
# answer in $tmp/resp, its headers in $tmp/resp.h.
send() {
	_f=$ev/$1.json
	if ! (ob sign --endpoint shop "$_f") >"$tmp/sign.out" 2>"$tmp/sign.err"
	then
		code=sign-failed
		sed 's/^/#   sign: /' "$tmp/sign.err"
		return
	fi
	set --
	while IFS= read -r _h; do
		[ -z "$_h" ] || set -- "$@" -H "$_h"
	done <"$tmp/sign.out"
	code=$(curl -sS --noproxy '*' --max-time 20 -o "$tmp/resp" -D "$tmp/resp.h" \
	    -w '%{http_code}' -X POST "$@" --data-binary "@$_f" "$hooks/shop" \
	    2>"$tmp/curl.err") || code="curl-failed:$(cat "$tmp/curl.err")"
}

# send_row TOPIC KEY: send KEY; sets rid, the id of the outbox row of
# TOPIC it made (none: a harness error).
send_row() {
	send "$2"
	rid=$(q "SELECT id FROM outbox WHERE topic = '$1' AND key = '$2'")
	if [ "$code" != 200 ] || [ -z "$rid" ]; then
		bail "$2: no $1 row (answer $code)"
	fi
}

# The bytes of a file, and of an outbox row's payload, as upper-case hex.
hexfile() {
	od -An -v -tx1 "$1" | tr -d ' \n' | tr 'a-f' 'A-F'
}
hexpayload() {	# hexpayload OUTBOX_ID
	q "SELECT hex(payload) FROM outbox WHERE id = '$1'"
}

row() {	# row OUTBOX_ID: the row, for a diagnostic
	q "SELECT id, topic, endpoint, key, status, attempts, next_at,
	    delivered_at, last_error FROM outbox WHERE id = '$1'" |
	    sed 's/^/#   outbox: /'
}

# The receiver's requests for a webhook-id: "status,status,...".
statuses() {
	rq "SELECT coalesce(group_concat(coalesce(status, '-'), ','), '')
	    FROM (SELECT status FROM requests WHERE webhook_id = '$1'
	    ORDER BY seq)"
}
effects() {	# effects WEBHOOK_ID: the receiver's effects for it
	rq "SELECT count(*) FROM effects WHERE webhook_id = '$1'"
}
# The command target's runs and effects for an id.
calls() {
	awk -v id="$1" '$1 == id' "$cmdd/calls" 2>/dev/null | wc -l |
	    tr -d ' '
}
cmd_effects() {
	awk -v id="$1" '$1 == id' "$cmdd/effects" 2>/dev/null | wc -l |
	    tr -d ' '
}

# deliver_until STATUS ID... : run "deliver --once" (log
# $d/log/deliver.log) every 0.3 s until every ID has STATUS, at most 40
# times; sets runs, first_rc (the first run's exit status).
deliver_until() {
	_want=$1
	shift
	runs=0
	first_rc=
	while [ $runs -lt 40 ]; do
		runs=$((runs + 1))
		echo "--- deliver --once ($runs)" >>"$d/log/deliver.log"
		(ob deliver --once) >>"$d/log/deliver.log" 2>&1
		_rc=$?
		[ -n "$first_rc" ] || first_rc=$_rc
		_all=1
		for _id in "$@"; do
			[ "$(q "SELECT status FROM outbox WHERE id = '$_id'")" = \
			    "$_want" ] || _all=0
		done
		[ $_all -eq 0 ] || return 0
		sleep 0.3
	done
	return 1
}

# -- 1. a signed delivery commits the order and one outbox row ---------

paid_event evt_paid_1001 1001 1000
send evt_paid_1001
code1=$code
check "$([ "$code1" = 200 ]; echo $?)" \
    "1: a signed payment.success through lighttpd is answered 200 ($code1)"
check "$([ "$(q "SELECT status FROM orders WHERE id = '1001'")" = paid ]
    echo $?)" "1: order 1001 is paid"
rows=$(q "SELECT count(*) FROM outbox")
p1=$(q "SELECT id FROM outbox WHERE topic = 'order.paid' AND key = 'evt_paid_1001'")
if [ "$rows" = 1 ] && [ -n "$p1" ] &&
    [ "$(q "SELECT endpoint = 'shop' AND status = 'pending' AND
	attempts = 0 AND delivered_at IS NULL AND id GLOB 'ob_?*'
	FROM outbox WHERE id = '$p1'")" = 1 ]; then
	tap ok "1: exactly one outbox row: order.paid, endpoint shop, key evt_paid_1001, pending, 0 attempts, id $p1"
else
	tap not-ok "1: exactly one outbox row: order.paid, endpoint shop, key evt_paid_1001, pending, 0 attempts"
	echo "#   $rows row(s)"
	q "SELECT * FROM outbox" | sed 's/^/#   outbox: /'
fi
if [ "$(q "SELECT json_valid(payload)
    AND CAST(json_extract(payload, '$.order_id') AS TEXT) = '1001'
    AND json_extract(payload, '$.amount') + 0 = 1000
    AND json_extract(payload, '$.currency') = 'EUR'
    AND json_extract(payload, '$.customer_email') = 'buyer1001@example.com'
    AND json_extract(payload, '$.payment_id') = 'tx_evt_paid_1001'
    AND json_extract(payload, '$.event_key') = 'evt_paid_1001'
    AND json_extract(payload, '$.event_type') = 'payment.success'
    FROM outbox WHERE id = '$p1'")" = 1 ]; then
	tap ok "1: its payload: order_id, amount, currency, customer_email, payment_id, event_key, event_type"
else
	tap not-ok "1: its payload: order_id, amount, currency, customer_email, payment_id, event_key, event_type"
	q "SELECT payload FROM outbox WHERE id = '$p1'" | sed 's/^/#   payload: /'
fi
send evt_paid_1001
code2=$code
replayed=0
grep -qi '^Idempotent-Replayed: *true' "$tmp/resp.h" && replayed=1
if [ "$code2" = 200 ] && [ $replayed -eq 1 ] &&
    [ "$(q "SELECT count(*) FROM outbox")" = 1 ] &&
    [ "$(q "SELECT count(*) FROM events WHERE key = 'evt_paid_1001'")" = 1 ]
then
	tap ok "1: the retry of the same event: 200 replayed, still one event and one outbox row"
else
	tap not-ok "1: the retry of the same event: 200 replayed, still one event and one outbox row"
	echo "#   answer $code2, replayed $replayed, $(q "SELECT count(*) FROM outbox") outbox row(s)"
fi
# Another payment event for the order already paid: no second message.
paid_event evt_paid_1001b 1001 1000
send evt_paid_1001b
if [ "$code" = 200 ] && [ "$(q "SELECT count(*) FROM outbox")" = 1 ] &&
    [ "$(q "SELECT count(*) FROM events WHERE key = 'evt_paid_1001b'")" = 1 ]
then
	tap ok "1: a second payment event for order 1001: recorded, no second outbox row"
else
	tap not-ok "1: a second payment event for order 1001: recorded, no second outbox row"
	echo "#   answer $code, $(q "SELECT count(*) FROM outbox") outbox row(s)"
fi

# -- R. the receiver on its own ---------------------------------------

# direct ID TIME KEY: POST a payload straight to the receiver, signed by
# Python's hmac with the outbox key (KEY good) or another one (bad) at
# Unix TIME; prints the HTTP status.
direct() {
	python3 - "$recv_url" "$OUTBOX_SECRET" "$1" "$2" "$3" <<'PY'
import base64, hashlib, hmac, sys, urllib.error, urllib.request
url, secret, mid, ts, which = sys.argv[1:]
key = base64.b64decode(secret[len("whsec_"):])
if which != "good":
    key = b"not the outbox key"
body = ('{"order_id":"direct","event_key":"%s","amount":1}' % mid).encode()
mac = hmac.new(key, b"%s.%s.%s" % (mid.encode(), ts.encode(), body),
               hashlib.sha256)
req = urllib.request.Request(url, data=body, method="POST", headers={
    "content-type": "application/json", "webhook-id": mid,
    "webhook-timestamp": ts,
    "webhook-signature": "v1," + base64.b64encode(mac.digest()).decode()})
# Straight to 127.0.0.1, whatever http_proxy says.
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    print(opener.open(req, timeout=20).status)
except urllib.error.HTTPError as e:
    print(e.code)
except OSError as e:
    print("error: %s" % e)
PY
}
now=$(date +%s)
c=$(direct msg_forged "$now" bad)
check "$([ "$c" = 401 ] && [ "$(statuses msg_forged)" = 401 ] &&
    [ "$(effects msg_forged)" = 0 ]; echo $?)" \
    "R: the receiver answers 401 to a wrong signature, no effect ($c)"
c=$(direct msg_stale $((now - 600)) good)
check "$([ "$c" = 401 ] && [ "$(effects msg_stale)" = 0 ]; echo $?)" \
    "R: the receiver answers 401 to a signature 10 minutes old, no effect ($c)"
c="$(direct msg_direct "$now" good) $(direct msg_direct "$now" good)"
c="$c $(direct msg_direct "$now" good) $(direct msg_direct "$now" good)"
if [ "$c" = "500 500 200 200" ] && [ "$(effects msg_direct)" = 1 ] &&
    [ "$(rq "SELECT count(*) FROM requests WHERE webhook_id = 'msg_direct'
	AND verdict = 'accepted'")" = 4 ]; then
	tap ok "R: a good request 4 times: 500, 500, 200, 200; one effect"
else
	tap not-ok "R: a good request 4 times: 500, 500, 200, 200; one effect"
	echo "#   answers $c, $(effects msg_direct) effect(s)"
fi

# The shipped receiver as its own script (conf-examples/outbox-receiver.php,
# as docs/operations.md shows it): a good request twice, then a forged one.
c=$(recv_url=http://127.0.0.1:$lt_port/outbox-receiver.php direct msg_shipped "$now" good)
c="$c $(recv_url=http://127.0.0.1:$lt_port/outbox-receiver.php direct msg_shipped "$now" good)"
c="$c $(recv_url=http://127.0.0.1:$lt_port/outbox-receiver.php direct msg_shipped_bad "$now" bad)"
# shellcheck disable=SC2086 # $backend: words
shop=$($backend sqlite3 -batch -noheader "$recv/shop.db" \
    "SELECT (SELECT count(*) FROM shop_order_events WHERE order_id = 'direct') || ' ' || (SELECT count(*) FROM outbox_seen)" 2>&1)
if [ "$c" = "200 200 401" ] && [ "$shop" = "1 1" ]; then
	tap ok "R: the shipped outbox-receiver.php: a good request twice: 200, 200, one effect; a forged one: 401"
else
	tap not-ok "R: the shipped outbox-receiver.php: a good request twice: 200, 200, one effect; a forged one: 401"
	echo "#   answers $c; effects and ids: $shop"
fi

# -- 2. the URL target: 3 attempts, then delivered ----------------------

ob deliver --max-seconds 8 >"$d/log/deliver-2.log" 2>&1 &
pid=$!
bg_pids="$pid $bg_pids"
wait_pid "$pid" 20
echo "# deliver --max-seconds 8: exit $rc after ${took}s"
check "$([ $rc -ne 137 ] && [ "$took" -le 11 ]; echo $?)" \
    "2: deliver --max-seconds 8 ends by itself (after ${took}s)"
if [ "$(q "SELECT status = 'delivered' AND attempts = 3 AND
    delivered_at IS NOT NULL FROM outbox WHERE id = '$p1'")" = 1 ]; then
	tap ok "2: order.paid is delivered after 3 attempts"
else
	tap not-ok "2: order.paid is delivered after 3 attempts"
	row "$p1"
fi
st=$(statuses "$p1")
check "$([ "$st" = 500,500,200 ]; echo $?)" \
    "2: the receiver saw 3 requests with webhook-id $p1: 500, 500, 200 ($st)"
check "$([ "$(effects "$p1")" = 1 ] &&
    [ "$(rq "SELECT count(*) FROM effects WHERE order_id = '1001'")" = 1 ]
    echo $?)" "2: the receiver did exactly one effect for order 1001"
last=$(rq "SELECT max(seq) FROM requests WHERE webhook_id = '$p1'")
if [ -n "$last" ] && [ -r "$recv/captures/$last.body" ] &&
    [ "$(hexfile "$recv/captures/$last.body")" = "$(hexpayload "$p1")" ] &&
    grep -q '"content-type":"application/json' "$recv/captures/$last.json"
then
	tap ok "2: the body is the payload, byte for byte, as application/json"
else
	tap not-ok "2: the body is the payload, byte for byte, as application/json"
	cat "$recv/captures/$last.json" "$recv/captures/$last.body" \
	    2>/dev/null | sed 's/^/#   capture: /'
fi
nlog=$(grep -c -F "$p1" "$d/log/deliver-2.log")
check "$([ "$nlog" = 3 ]; echo $?)" \
    "2: deliver logged one line per attempt naming $p1 (3: $nlog)"
sed 's/^/#   deliver: /' "$d/log/deliver-2.log"
echo "# seconds between the attempts: $(rq "SELECT group_concat(printf('%.2f',
    started - prev), ' ') FROM (SELECT started, lag(started) OVER
    (ORDER BY seq) AS prev FROM requests WHERE webhook_id = '$p1')
    WHERE prev IS NOT NULL")"

# -- 4. the command target: 3 runs, then delivered ----------------------

refund_event evt_refund_1001 1001
send evt_refund_1001
check "$([ "$code" = 200 ] &&
    [ "$(q "SELECT status FROM orders WHERE id = '1001'")" = refunded ]
    echo $?)" "4: a refund through lighttpd: 200, order 1001 refunded ($code)"
r1=$(q "SELECT id FROM outbox WHERE topic = 'order.refunded' AND key = 'evt_refund_1001'")
check "$([ -n "$r1" ] && [ "$(q "SELECT count(*) FROM outbox")" = 2 ] &&
    [ "$(q "SELECT status FROM outbox WHERE id = '$r1'")" = pending ]
    echo $?)" "4: exactly one new outbox row, order.refunded, pending ($r1)"
deliver_until delivered "$r1"
check "$([ "$first_rc" = 1 ]; echo $?)" \
    "4: deliver --once exits 1 when the command failed (${first_rc:-none})"
if [ "$(q "SELECT status = 'delivered' AND attempts = 3 FROM outbox
    WHERE id = '$r1'")" = 1 ]; then
	tap ok "4: order.refunded is delivered after 3 attempts ($runs runs of deliver --once)"
else
	tap not-ok "4: order.refunded is delivered after 3 attempts"
	row "$r1"
fi
check "$([ "$(calls "$r1")" = 3 ] && [ "$(cmd_effects "$r1")" = 1 ] &&
    grep -qx "$r1 3 order.refunded shop evt_refund_1001" "$cmdd/effects"
    echo $?)" "4: the command ran 3 times for $r1 and did one effect (run 3: order.refunded shop evt_refund_1001)"
same=0
for k in 1 2 3; do
	[ -r "$cmdd/stdin-$r1-$k" ] &&
	    [ "$(hexfile "$cmdd/stdin-$r1-$k")" = "$(hexpayload "$r1")" ] &&
	    same=$((same + 1))
done
check "$([ $same = 3 ]; echo $?)" \
    "4: each run had the payload on stdin, byte for byte ($same of 3)"
envf=$cmdd/env-$r1-3
names=$(sed -n 's/^\(ONCEHOOK_[A-Za-z0-9_]*\)=.*/\1/p' "$envf" 2>/dev/null |
    sort | tr '\n' ' ')
if [ "$names" = "ONCEHOOK_OUTBOX_ENDPOINT ONCEHOOK_OUTBOX_ID ONCEHOOK_OUTBOX_KEY ONCEHOOK_OUTBOX_TOPIC " ] &&
    grep -qx "ONCEHOOK_OUTBOX_ID=$r1" "$envf" &&
    grep -qx "ONCEHOOK_OUTBOX_TOPIC=order.refunded" "$envf" &&
    grep -qx "ONCEHOOK_OUTBOX_ENDPOINT=shop" "$envf" &&
    grep -qx "ONCEHOOK_OUTBOX_KEY=evt_refund_1001" "$envf"; then
	tap ok "4: the command's ONCEHOOK_ variables are exactly ID, TOPIC, ENDPOINT, KEY, with the row's values"
else
	tap not-ok "4: the command's ONCEHOOK_ variables are exactly ID, TOPIC, ENDPOINT, KEY, with the row's values"
	grep '^ONCEHOOK_' "$envf" 2>/dev/null | sed 's/=.*/=.../; s/^/#   env: /'
fi
leak=0
for k in 1 2 3; do
	if grep -q -F -e SECRET -e "$SHOP_SECRET" -e "$STRIPE_SECRET" \
	    -e "${OUTBOX_SECRET#whsec_}" "$cmdd/env-$r1-$k" 2>/dev/null ||
	    [ ! -r "$cmdd/env-$r1-$k" ]; then
		leak=$((leak + 1))
	fi
done
check "$([ $leak = 0 ]; echo $?)" \
    "4: no secret (ONCEHOOK_*_SECRET, ONCEHOOK_OUTBOX_SECRET, their values) in the command's environment"

# -- 3. kill -9 of a deliverer mid-POST and mid-command -----------------

ob_timeout=2	# the lease: 2 + 5 = 7 s
paid_event evt_paid_1002 1002 2000
send_row order.paid evt_paid_1002
p2=$rid
# Slow once, and no failure: the killed attempt does its effect.
touch "$recv/slow-$p2" "$recv/nofail-$p2"
ob deliver --once >"$d/log/deliver-3a.log" 2>&1 &
pa=$!
bg_pids="$pa $bg_pids"
# shellcheck disable=SC2317 # called by until_true
seen_p2() { [ "$(statuses "$p2")" = - ]; }
if until_true 5 seen_p2; then
	kill -9 "$pa"
	wait "$pa" 2>/dev/null
	rca=$?
	bg_done "$pa"
	tap ok "3: kill -9 of deliver while the receiver holds its POST of $p2 (exit $rca)"
else
	tap not-ok "3: kill -9 of deliver while the receiver holds its POST of $p2"
	echo "#   the receiver's requests for it: '$(statuses "$p2")'"
fi

refund_event evt_refund_1002 1002
send_row order.refunded evt_refund_1002
r2=$rid
touch "$cmdd/slow-$r2" "$cmdd/nofail-$r2"
calls_before=$(wc -l <"$cmdd/calls" | tr -d ' ')
ob deliver --once >"$d/log/deliver-3b.log" 2>&1 &
pb=$!
bg_pids="$pb $bg_pids"
# shellcheck disable=SC2317 # called by until_true
running_r2() { [ "$(calls "$r2")" = 1 ] && [ ! -e "$cmdd/slow-$r2" ]; }
if until_true 5 running_r2; then
	kill -9 "$pb"
	wait "$pb" 2>/dev/null
	rcb=$?
	bg_done "$pb"
	tap ok "3: kill -9 of deliver while the command for $r2 runs (exit $rcb)"
else
	tap not-ok "3: kill -9 of deliver while the command for $r2 runs"
	echo "#   command runs for it: $(calls "$r2")"
fi

# Leased: a deliverer right now sends neither of them.
(ob deliver --once) >"$d/log/deliver-3c.log" 2>&1
rcc=$?
if [ $rcc -eq 0 ] && [ "$(rq "SELECT count(*) FROM requests
    WHERE webhook_id = '$p2'")" = 1 ] && [ "$(calls "$r2")" = 1 ] &&
    [ "$(q "SELECT count(*) FROM outbox WHERE id IN ('$p2', '$r2')
	AND status = 'pending'")" = 2 ]; then
	tap ok "3: while leased, deliver --once sends neither again (exit 0, both pending)"
else
	tap not-ok "3: while leased, deliver --once sends neither again (exit 0, both pending)"
	echo "#   exit $rcc; requests for $p2: '$(statuses "$p2")'; runs for $r2: $(calls "$r2")"
	row "$p2"
	row "$r2"
	sed 's/^/#   deliver: /' "$d/log/deliver-3c.log"
fi

# After the lease, both are sent again.
if deliver_until delivered "$p2" "$r2"; then
	tap ok "3: after the lease both rows are delivered ($runs runs of deliver --once)"
else
	tap not-ok "3: after the lease both rows are delivered"
	row "$p2"
	row "$r2"
fi
st=$(statuses "$p2")
if [ "$st" = 200,200 ] &&
    [ "$(rq "SELECT count(*) || ' ' || count(DISTINCT webhook_id) FROM requests
	WHERE order_id = '1002'")" = "2 1" ] &&
    [ "$(rq "SELECT count(*) FROM effects WHERE order_id = '1002'")" = 1 ] &&
    [ "$(rq "SELECT e.seq = min(r.seq) FROM effects e, requests r
	WHERE e.webhook_id = '$p2' AND r.webhook_id = '$p2'")" = 1 ]; then
	tap ok "3: the receiver saw $p2 twice with the same webhook-id and did one effect (the killed attempt's)"
else
	tap not-ok "3: the receiver saw $p2 twice with the same webhook-id and did one effect (the killed attempt's)"
	rq "SELECT seq, webhook_id, status, order_id FROM requests
	    WHERE order_id = '1002'" | sed 's/^/#   request: /'
	echo "#   effects for order 1002: $(rq "SELECT count(*) FROM effects WHERE order_id = '1002'")"
fi
# The lease ends 7 s after it was taken, in whole seconds: more than 6 s.
gap=$(rq "SELECT printf('%.1f', max(started) - min(started)) FROM requests
    WHERE webhook_id = '$p2'")
check "$(awk -v g="${gap:-0}" 'BEGIN { exit !(g >= 5.5) }'; echo $?)" \
    "3: the POST was sent again only after the lease (${gap:-?} s later, lease 7 s)"
new_calls=$(sed -n "$((calls_before + 1)),\$p" "$cmdd/calls" | awk '{ print $1 }' |
    sort | uniq -c | awk '{ print $1 " " $2 }')
# The killed run may have finished or not (oncehook's child may die
# with it): one effect, by either run.
by=$(awk -v id="$r2" '$1 == id { print $2 }' "$cmdd/effects")
if [ "$new_calls" = "2 $r2" ] && [ "$(cmd_effects "$r2")" = 1 ]; then
	tap ok "3: the command ran twice for $r2 (same ONCEHOOK_OUTBOX_ID) and did one effect (in run $by)"
else
	tap not-ok "3: the command ran twice for $r2 (same ONCEHOOK_OUTBOX_ID) and did one effect"
	sed -n "$((calls_before + 1)),\$p" "$cmdd/calls" | sed 's/^/#   run: /'
	sed 's/^/#   effect: /' "$cmdd/effects"
fi
gap=$(awk -v id="$r2" '$1 == id { t[$2] = $3 }
    END { if (1 in t && 2 in t) printf "%.1f", t[2] - t[1] }' "$cmdd/calls")
check "$(awk -v g="${gap:-0}" 'BEGIN { exit !(g >= 5.5) }'; echo $?)" \
    "3: the command ran again only after the lease (${gap:-?} s later)"

# -- T. targets slower than ONCEHOOK_OUTBOX_TIMEOUT --------------------

# TIMEOUT=2; the receiver answers after 5 s, and the command sleeps 5 s,
# each once (no deliberate failures).  Each first attempt fails at 2 s,
# not at 5; the next one is delivered.  The slow request still finishes
# its work on the server; the slow command is stopped.  One effect each.
ob_timeout=2
paid_event evt_paid_1004 1004 4000
send_row order.paid evt_paid_1004
p4=$rid
echo 5 >"$recv/slow-$p4"
touch "$recv/nofail-$p4"
deliver_until delivered "$p4"
check "$([ "$first_rc" = 1 ] &&
    [ "$(q "SELECT status || ' ' || attempts FROM outbox WHERE id = '$p4'")" = "delivered 2" ]
    echo $?)" "T: a POST answered after 5 s fails with TIMEOUT=2 (exit $first_rc); delivered on attempt 2"
row "$p4"
gap=$(rq "SELECT printf('%.1f', max(started) - min(started)) FROM requests
    WHERE webhook_id = '$p4'")
check "$(awk -v g="${gap:-0}" 'BEGIN { exit !(g >= 1.8 && g < 4.5) }'; echo $?)" \
    "T: the POST was given up after 2 s (sent again ${gap:-?} s after the first)"
refund_event evt_refund_1004 1004
send_row order.refunded evt_refund_1004
r4=$rid
echo 5 >"$cmdd/slow-$r4"
touch "$cmdd/nofail-$r4"
deliver_until delivered "$r4"
check "$([ "$first_rc" = 1 ] &&
    [ "$(q "SELECT status || ' ' || attempts FROM outbox WHERE id = '$r4'")" = "delivered 2" ]
    echo $?)" "T: a command sleeping 5 s fails with TIMEOUT=2 (exit $first_rc); delivered on attempt 2"
row "$r4"
gap=$(awk -v id="$r4" '$1 == id { t[$2] = $3 }
    END { if (1 in t && 2 in t) printf "%.1f", t[2] - t[1] }' "$cmdd/calls")
check "$(awk -v g="${gap:-0}" 'BEGIN { exit !(g >= 1.8 && g < 4.5) }'; echo $?)" \
    "T: the command was given up after 2 s (run again ${gap:-?} s after the first)"
# Past the end of the slow request, and of the slow command's sleep.
# shellcheck disable=SC2317 # called by until_true
p4_done() { [ "$(rq "SELECT count(*) FROM requests WHERE webhook_id = '$p4'
    AND status IS NULL")" = 0 ]; }
r4_woke_at=$(awk -v id="$r4" '$1 == id && $2 == 1 { printf "%.3f", $3 + 5.5 }' \
    "$cmdd/calls")
# shellcheck disable=SC2317 # called by until_true
past_r4() { awk -v t="${r4_woke_at:-0}" -v now="$(date +%s.%N)" \
    'BEGIN { exit !(now >= t) }'; }
until_true 10 p4_done
until_true 10 past_r4
check "$([ "$(rq "SELECT count(*) FROM requests WHERE webhook_id = '$p4'")" = 2 ] &&
    [ "$(effects "$p4")" = 1 ]; echo $?)" \
    "T: the receiver saw $p4 twice and did one effect"
check "$([ "$(calls "$r4")" = 2 ] && [ "$(cmd_effects "$r4")" = 1 ] &&
    [ ! -e "$cmdd/woke-$r4-1" ]; echo $?)" \
    "T: the command ran twice for $r4, one effect; the timed-out run was stopped (it never woke)"
ob_timeout=5

# -- C. the receiver's status: 2xx delivered, 3xx not -------------------

# Order 1005's e-mail is UTF-8 beyond ASCII: the body, the signature and
# the library's check must agree on its bytes.
paid_event evt_paid_1005 1005 5000 "$(printf 'zo\303\253.\342\230\203@example.com')"
send_row order.paid evt_paid_1005
p5=$rid
paid_event evt_paid_1006 1006 6000
send_row order.paid evt_paid_1006
p6=$rid
touch "$recv/nofail-$p5" "$recv/nofail-$p6"
echo 204 >"$recv/code-$p5"
echo 302 >"$recv/code-$p6"
ob_max=2
# A retry waits at least 1 s (BACKOFF=1): poll for 3 s.
(ob deliver --max-seconds 3) >"$tmp/codes.out" 2>&1
rc=$?
check "$([ "$(q "SELECT status || ' ' || attempts FROM outbox WHERE id = '$p5'")" = "delivered 1" ] &&
    [ "$(statuses "$p5")" = 204 ] && [ "$(effects "$p5")" = 1 ]; echo $?)" \
    "C: a 204 answer is a delivery"
last=$(rq "SELECT max(seq) FROM requests WHERE webhook_id = '$p5'")
check "$([ -n "$last" ] &&
    [ "$(hexfile "$recv/captures/$last.body")" = "$(hexpayload "$p5")" ] &&
    [ "$(q "SELECT hex(json_extract(payload, '$.customer_email')) FROM outbox
	WHERE id = '$p5'")" = "$(printf 'zo\303\253.\342\230\203@example.com' |
	od -An -v -tx1 | tr -d ' \n' | tr 'a-f' 'A-F')" ]; echo $?)" \
    "C: a UTF-8 e-mail: in the payload as sent, and the body is the payload's bytes"
check "$([ $rc -eq 1 ] &&
    [ "$(q "SELECT status || ' ' || attempts FROM outbox WHERE id = '$p6'")" = "dead 2" ] &&
    [ "$(statuses "$p6")" = 302,302 ] && [ "$(effects "$p6")" = 0 ] &&
    q "SELECT last_error FROM outbox WHERE id = '$p6'" | grep -q 302
    echo $?)" "C: a 302 answer is a failure, not followed (MAX_ATTEMPTS=2: dead; exit $rc)"
row "$p6"
sed 's/^/#   deliver: /' "$tmp/codes.out"
rm -f "$recv/code-$p6"
ob_max=16
(ob deliver --retry-dead --once) >"$tmp/codes.out" 2>&1
rc=$?
check "$([ $rc -eq 0 ] &&
    [ "$(q "SELECT status FROM outbox WHERE id = '$p6'")" = delivered ] &&
    [ "$(statuses "$p6")" = 302,302,200 ] && [ "$(effects "$p6")" = 1 ]
    echo $?)" "C: deliver --retry-dead --once puts it back and delivers it (exit $rc)"
sed 's/^/#   deliver: /' "$tmp/codes.out"

# -- N. a topic without a target waits ----------------------------------

refund_event evt_refund_1005 1005
send_row order.refunded evt_refund_1005
r5=$rid
touch "$cmdd/nofail-$r5"
refund_cmd=
(ob deliver --once) >"$tmp/none.out" 2>&1
rc=$?
check "$([ $rc -eq 0 ] && [ "$(calls "$r5")" = 0 ] &&
    [ "$(q "SELECT status || ' ' || attempts FROM outbox WHERE id = '$r5'")" = "pending 0" ]
    echo $?)" "N: without ONCEHOOK_OUTBOX_ORDER_REFUNDED_COMMAND the row waits: pending, 0 attempts (exit $rc)"
sed 's/^/#   deliver: /' "$tmp/none.out"
(ob check) >"$tmp/check.out" 2>&1
check "$(grep -q 'ONCEHOOK_OUTBOX_ORDER_REFUNDED_COMMAND' "$tmp/check.out"
    echo $?)" "N: oncehook check names ONCEHOOK_OUTBOX_ORDER_REFUNDED_COMMAND"
grep -i 'outbox topic' "$tmp/check.out" | sed 's/^/#   check: /'
refund_cmd="/bin/sh $d/bin/cmd-target.sh $cmdd"
deliver_until delivered "$r5"
check "$([ "$(q "SELECT status || ' ' || attempts FROM outbox WHERE id = '$r5'")" = "delivered 1" ] &&
    [ "$(calls "$r5")" = 1 ] && [ "$(cmd_effects "$r5")" = 1 ]; echo $?)" \
    "N: with the command set, it is delivered on its first attempt, one effect"

# -- 6. a dead target: dead after MAX_ATTEMPTS, then --retry-dead -------

paid_event evt_paid_1003 1003 3000
send_row order.paid evt_paid_1003
p3=$rid
closed=$(free_port) || bail "no free port"
paid_url=http://127.0.0.1:$closed/receiver.php
ob_max=2
deliver_until dead "$p3"
check "$([ "$first_rc" = 1 ]; echo $?)" \
    "6: deliver --once exits 1 when the POST failed (${first_rc:-none})"
if [ "$(q "SELECT status = 'dead' AND attempts = 2 AND delivered_at IS NULL
    AND length(last_error) > 0 FROM outbox WHERE id = '$p3'")" = 1 ]; then
	tap ok "6: to a closed port with MAX_ATTEMPTS=2: dead after 2 attempts, the last error kept"
else
	tap not-ok "6: to a closed port with MAX_ATTEMPTS=2: dead after 2 attempts, the last error kept"
	row "$p3"
fi
echo "#   last_error: $(q "SELECT last_error FROM outbox WHERE id = '$p3'")"
# A dead row is left alone by deliver.
(ob deliver --once) >>"$d/log/deliver.log" 2>&1
check "$([ "$(q "SELECT status || ' ' || attempts FROM outbox WHERE id = '$p3'")" = "dead 2" ]
    echo $?)" "6: deliver --once leaves the dead row alone"
(ob list --outbox) >"$tmp/list.out" 2>&1
rc=$?
check "$([ $rc -eq 0 ] && grep -q -F "$p3" "$tmp/list.out"; echo $?)" \
    "6: oncehook list --outbox names the dead row (exit $rc)"
sed 's/^/#   list: /' "$tmp/list.out" | head -n 20
(ob show --outbox "$p3") >"$tmp/show.out" 2>&1
rc=$?
check "$([ $rc -eq 0 ] && grep -q -F "$p3" "$tmp/show.out" &&
    grep -q dead "$tmp/show.out"; echo $?)" \
    "6: oncehook show --outbox ID shows it, dead (exit $rc)"
sed 's/^/#   show: /' "$tmp/show.out" | head -n 20
(ob stats) 2>&1 | grep -i -e outbox -e dead | sed 's/^/#   stats: /'
(ob deliver --retry-dead) >"$tmp/retry.out" 2>&1
rc=$?
check "$([ $rc -eq 0 ] &&
    [ "$(q "SELECT status FROM outbox WHERE id = '$p3'")" = pending ]
    echo $?)" "6: deliver --retry-dead exits 0 and the row is pending again (exit $rc)"
sed 's/^/#   retry-dead: /' "$tmp/retry.out"
paid_url=$recv_url
ob_max=16
touch "$recv/nofail-$p3"
deliver_until delivered "$p3"
check "$([ "$(q "SELECT status FROM outbox WHERE id = '$p3'")" = delivered ] &&
    [ "$(statuses "$p3")" = 200 ] && [ "$(effects "$p3")" = 1 ]
    echo $?)" "6: then delivered to the receiver: one request, one effect"
row "$p3"

# -- 7. two deliverers at once over 20 rows ----------------------------

ok=0
i=1
while [ $i -le 20 ]; do
	k=$(printf 'evt_conc_%02d' $i)
	paid_event "$k" $((2000 + i)) $((100 * i))
	send "$k"
	[ "$code" != 200 ] || ok=$((ok + 1))
	i=$((i + 1))
done
conc="key GLOB 'evt_conc_*' AND topic = 'order.paid'"
check "$([ $ok = 20 ] && [ "$(q "SELECT count(*) FROM outbox WHERE $conc
    AND status = 'pending'")" = 20 ]; echo $?)" \
    "7: 20 payments for 20 orders: 20 answers 200, 20 pending order.paid rows ($ok)"
touch "$recv/nofail" "$recv/delay"
ob deliver --once >"$d/log/deliver-7x.log" 2>&1 &
px=$!
ob deliver --once >"$d/log/deliver-7y.log" 2>&1 &
py=$!
bg_pids="$px $py $bg_pids"
wait_pid "$px" 40
rcx=$rc
wait_pid "$py" 40
rcy=$rc
check "$([ $rcx -eq 0 ] && [ $rcy -eq 0 ]; echo $?)" \
    "7: both deliverers exit 0 ($rcx, $rcy)"
n_ok=$(q "SELECT count(*) FROM outbox WHERE $conc AND status = 'delivered'
    AND attempts = 1")
check "$([ "$n_ok" = 20 ]; echo $?)" \
    "7: all 20 rows delivered, each on its first attempt ($n_ok)"
# The receiver's requests per row, joined to oncehook's database.
per=$(rq "ATTACH '$db' AS oh;
    SELECT count(*) || ' ' || coalesce(sum(c), 0) || ' ' ||
	coalesce(sum(c = 1), 0) FROM (SELECT o.id, (SELECT count(*)
	FROM main.requests r WHERE r.webhook_id = o.id) AS c
	FROM oh.outbox o WHERE o.$conc)")
check "$([ "$per" = "20 20 20" ]; echo $?)" \
    "7: the receiver saw each of the 20 ids exactly once (rows, requests, ids seen once: $per)"
check "$([ "$(rq "SELECT count(*) || ' ' || count(DISTINCT webhook_id)
    FROM effects WHERE CAST(order_id AS INTEGER) BETWEEN 2001 AND 2020")" = "20 20" ]
    echo $?)" "7: 20 effects, one per id"
lx=$(grep -c ob_ "$d/log/deliver-7x.log")
ly=$(grep -c ob_ "$d/log/deliver-7y.log")
ov=$(rq "SELECT count(*) FROM requests a JOIN requests b ON a.seq < b.seq
    AND a.started < b.finished AND b.started < a.finished
    WHERE CAST(a.order_id AS INTEGER) BETWEEN 2001 AND 2020
    AND CAST(b.order_id AS INTEGER) BETWEEN 2001 AND 2020")
echo "# deliverers' log lines naming a row: $lx and $ly; overlapping requests: $ov pair(s)"
rm -f "$recv/nofail" "$recv/delay"

# -- 5. the Standard Webhooks library checks what the receiver got ------

acc=$(rq "SELECT count(*) FROM requests WHERE verdict = 'accepted'")
ref=$(rq "SELECT count(*) FROM requests WHERE verdict = 'refused'")
node=$tmp/node
mkdir -p "$node" || bail "mkdir $node"
cp "$top_srcdir/tests/node/package.json" \
    "$top_srcdir/tests/node/package-lock.json" \
    "$top_srcdir/tests/node/verify-outbox.mjs" "$node/" ||
    bail "copying tests/node"
chmod u+w "$node"/* 2>/dev/null
if ! sv_npm_ci "$node" "$tmp/npm.log"; then
	sed 's/^/# /' "$tmp/npm.log"
	bail "npm ci failed in $node"
fi
echo "# node $(node --version); standardwebhooks $(cd "$node" &&
    node -p 'require("./node_modules/standardwebhooks/package.json").version')"
$watchdog node "$node/verify-outbox.mjs" "$recv/captures" "$OUTBOX_SECRET" \
    "$acc" "$ref" >"$tmp/verify.tap" 2>"$tmp/verify.err"
rc=$?
while IFS= read -r line; do
	case $line in
	"ok - "*) tap ok "5: ${line#ok - }" ;;
	"not ok - "*) tap not-ok "5: ${line#not ok - }" ;;
	*) printf '%s\n' "$line" ;;
	esac
done <"$tmp/verify.tap"
if [ $rc -gt 1 ]; then
	tap not-ok "5: verify-outbox.mjs ran to its end (exit $rc)"
	sed 's/^/# /' "$tmp/verify.err"
fi

# -- the end -------------------------------------------------------------

check "$([ "$(rq "SELECT count(*) FROM requests WHERE status IS NULL")" = 0 ]
    echo $?)" "the receiver answered every request it recorded"
if [ -s "$d/log/php-error.log" ]; then
	sed 's/^/#   php: /' "$d/log/php-error.log" | head -n 20
fi
lt_stop
lt_sanitizer "$d" fastcgi
if [ "$failed" -gt 0 ]; then
	tail -n 30 "$d/log/deliver.log" 2>/dev/null | sed 's/^/# deliver: /'
	tail -n 20 "$d/log/breakage.log" 2>/dev/null | sed 's/^/# oncehook: /'
fi
echo "# outbox took $(($(date +%s) - start))s"
echo "1..$n"
[ "$failed" -eq 0 ] || exit 1
exit 0
