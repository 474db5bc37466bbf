#!/bin/bash
# SPDX-License-Identifier: MIT
# The main job, end to end: build and install oncehook into _demo/,
# start a real lighttpd on a free port of 127.0.0.1 with oncehook under
# mod_fastcgi (from conf-examples/lighttpd-fastcgi.conf, only paths,
# port and secrets filled in), send signed sample deliveries, duplicates
# included, print each answer and the resulting rows, then stop the
# server.  With --keep, leave the server running and print how to reach
# it.  Signatures are made here with the openssl command line tool.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
keep=0
[ "${1:-}" = "--keep" ] && keep=1

bash "$root/tools/deps.sh" demo
demo="$root/_demo"
prefix="$demo/prefix"
run="$demo/run"

echo "== building oncehook into $prefix"
(cd "$root" && ./autogen.sh >/dev/null 2>&1)
if [ -f "$root/config.status" ]; then
	echo "tools/demo.sh: the source tree was configured in place;" \
	    "run 'make distclean' there first (builds go in _demo/)" >&2
	exit 1
fi
mkdir -p "$demo/build"
(cd "$demo/build" &&
    "$root/configure" --prefix="$prefix" >configure.out 2>&1 &&
    make -j"$(nproc)" >make.out 2>&1 && make install >install.out 2>&1) ||
    { echo "build failed: see $demo/build/*.out" >&2; exit 1; }

# A fresh run directory: database, sockets, logs, document root.
if [ -f "$run/lighttpd.pid" ]; then
	kill "$(cat "$run/lighttpd.pid")" 2>/dev/null || true
	sleep 0.5
fi
rm -rf "$run"
LH_ROOT=$root
. "$root/tools/lighttpd.sh"
lh_setup fastcgi "$run" "$prefix/bin/oncehook" "$prefix/share/oncehook"
# One configuration, the example's: this shell's (and lighttpd's).
set -a
. "$run/env"
set +a
stripe_secret=$LH_STRIPE_SECRET
shop_secret=$LH_SHOP_SECRET
"$prefix/bin/oncehook" init
# check's verdict: its full report (every endpoint of the example) is in
# $run/check.out; the warnings on its standard error are shown.
"$prefix/bin/oncehook" check >"$run/check.out" 2>"$run/check.err" ||
    { cat "$run/check.out" "$run/check.err"; exit 1; }
echo "== oncehook check: $(grep -c '^endpoint' "$run/check.out" || true) endpoints, $(tail -n 1 "$run/check.out") (the report: $run/check.out)"
sed 's/^/   /' "$run/check.err"

lh_start "$run"
pid=$LH_PID
[ $keep -eq 1 ] || trap lh_stop EXIT
port=$LH_PORT
url="http://127.0.0.1:$port/hooks"
echo "== lighttpd (pid $pid) on $url/<endpoint> ($ONCEHOOK_ENDPOINTS)"

hmac_hex() { openssl dgst -sha256 -hmac "$1" -r | cut -d' ' -f1; }

# post ENDPOINT BODY HEADER: print the status line, any replay header,
# then the body.  Safe to run concurrently.
post() {
	local head
	head=$(mktemp "$run/head.XXXXXX")
	curl -s -D "$head" -o "$head.body" -H 'Content-Type: application/json' \
	    -H "$3" --data-binary "$2" "$url/$1"
	grep -iE '^(HTTP|Idempotent)' "$head" | tr -d '\r' | paste -sd' '
	cat "$head.body"
	rm -f "$head" "$head.body"
}

# shop BODY [SECRET]: a delivery signed the hmac-sha256 way.
shop() {
	local sig
	sig=$(printf '%s' "$1" | hmac_hex "${2:-$shop_secret}")
	post shop "$1" "X-Webhook-Signature: sha256=$sig"
}

# stripe BODY: a delivery signed the way Stripe signs, timestamp now.
stripe() {
	local t sig
	t=$(date +%s)
	sig=$(printf '%s.%s' "$t" "$1" | hmac_hex "$stripe_secret")
	post stripe "$1" "Stripe-Signature: t=$t,v1=$sig"
}

pay='{"eventId":"evt_pay_42","type":"payment.success","metadata":{"orderId":"42"},"transaction":{"id":"tx_42","amount":49.99,"currency":"EUR"},"customer":{"customerEmail":"ada@example.com"}}'
echo; echo "-- 1. shop (hmac-sha256): a payment for order 42"
shop "$pay"
echo "-- 2. shop: the provider retries it"
shop "$pay"
echo "-- 3. shop: ten concurrent copies of a payment for order 7"
pay7='{"eventId":"evt_pay_7","type":"payment.success","metadata":{"orderId":"7"},"transaction":{"id":"tx_7","amount":12,"currency":"EUR"}}'
copies=()
for i in $(seq 10); do
	shop "$pay7" >"$run/c.$i" &
	copies+=($!)
done
wait "${copies[@]}"
cat "$run"/c.* | grep -o '"status":"[a-z_]*"' | sort | uniq -c
echo "-- 4. Stripe: the refund of order 43 arrives before its payment"
stripe '{"id":"evt_ref_43","type":"charge.refunded","data":{"object":{"id":"ch_43","metadata":{"order_id":"43"}}}}'
stripe '{"id":"evt_pi_43","type":"payment_intent.succeeded","data":{"object":{"id":"pi_43","amount":2500,"currency":"usd","metadata":{"order_id":"43"}}}}'
echo "-- 5. shop: a forged delivery (wrong secret)"
shop '{"eventId":"evt_forged","type":"payment.refunded","metadata":{"orderId":"42"}}' not-the-secret
echo "-- 6. shop: the same key with another payload"
shop '{"eventId":"evt_pay_42","type":"payment.success","metadata":{"orderId":"42"},"transaction":{"amount":0.01}}'

echo; echo "== events"
sqlite3 -header -column "$ONCEHOOK_DB" \
    "SELECT endpoint, key, type, status FROM events ORDER BY id"
echo; echo "== orders (Stripe's amounts are in cents, as sent)"
sqlite3 -header -column "$ONCEHOOK_DB" \
    "SELECT id, status, amount, currency, payment_id FROM orders ORDER BY id"
echo; echo "== outbox: what orders.sql wrote for the site's own code"
"$prefix/bin/oncehook" list --outbox
# A command target: here a script that notes each row it is given; a
# site's would send the e-mail (conf-examples/outbox-mail.sh) or call its
# code (a URL target: conf-examples/outbox-receiver.php).
cat >"$run/outbox-note.sh" <<'SH'
#!/bin/sh
printf '%s %s %s\n' "$ONCEHOOK_OUTBOX_ID" "$ONCEHOOK_OUTBOX_TOPIC" "$(cat)" \
    >>"$(dirname "$0")/outbox-notes"
SH
chmod 755 "$run/outbox-note.sh"
echo; echo "-- 7. oncehook deliver --once, each topic to a command ($run/outbox-note.sh) that notes it"
ONCEHOOK_OUTBOX_ORDER_PAID_COMMAND=$run/outbox-note.sh \
    ONCEHOOK_OUTBOX_ORDER_REFUNDED_COMMAND=$run/outbox-note.sh \
    "$prefix/bin/oncehook" deliver --once 2>&1 | sed 's/^/   /'
sed 's/^/   got: /' "$run/outbox-notes"
"$prefix/bin/oncehook" list --outbox

echo; echo "== oncehook's log ($run/oncehook.log)"
tail -n 8 "$run/oncehook.log" 2>/dev/null || true
if [ $keep -eq 1 ]; then
	cat <<EOF

lighttpd keeps running (pid $pid).  To send a delivery of your own:
    set -a; . $run/env; set +a
    $prefix/bin/oncehook sign --endpoint shop --curl $url/shop FILE.json | sh
Stop it with: kill $pid
EOF
fi
