#!/bin/bash
# SPDX-License-Identifier: MIT
# WAL pages (frames) written per new event: N deliveries of the demo's
# payment events through oncehook as CGI, while another connection holds
# a read transaction so that no checkpoint resets the log, then the
# log's size over the frame size.  Counts what a change to the schema or
# to the actions writes; needs no load generator and no web server.
# Three runs, each on a database of its own: hmac-sha256 keyed by the
# X-Idempotency-Key header (a replay guard; the signature does not cover
# that header, so each payload is indexed), hmac-sha256 keyed by the
# body's id (the guard; a key the signature covers: not indexed,
# docs/design/034) and stripe (a signed timestamp: no guard,
# sql/migrations/008-guard-index.sql); a line for each.
#
# usage: bench/pages.sh [--bin PATH] [--actions FILE] [N]
#   --bin PATH      the oncehook to measure (default _build/bench/oncehook)
#   --actions FILE  the actions file (default sql/actions/orders.sql)
#   N               deliveries (default 100; at most 120, so the log
#                   stays under the 1,000 pages that start a checkpoint)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/_build/bench/oncehook actions=$root/sql/actions/orders.sql n=100
while [ $# -gt 0 ]; do
	case $1 in
	--bin) bin=$2; shift ;;
	--actions) actions=$2; shift ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) n=$1 ;;
	esac
	shift
done
[ "$n" -ge 1 ] && [ "$n" -le 120 ] || { echo "pages.sh: N is 1 to 120" >&2; exit 2; }
d=$(mktemp -d)
reader=
# The trap's own status would be the script's: a reader already gone
# (after each database) must not turn a good run into exit 2.
trap 'st=$?; [ -z "$reader" ] || kill "$reader" 2>/dev/null; rm -rf "$d"; exit $st' EXIT
secret=0123456789abcdef0123

pages() {	# pages SCHEME LINE [header]: deliveries to a new database
	local scheme=$1 db=$d/$1${3:-}.sqlite i ts sig hdr
	export ONCEHOOK_DB=$db ONCEHOOK_ENDPOINTS=shop \
	    ONCEHOOK_SHOP_SCHEME=$scheme ONCEHOOK_SHOP_SECRET=$secret \
	    ONCEHOOK_SHOP_ACTIONS=$actions ONCEHOOK_SYNCHRONOUS=normal
	[ "$scheme" = stripe ] && export ONCEHOOK_SHOP_SECRET=whsec_$secret
	rm -f "$d/ready"
	"$bin" init >/dev/null 2>&1
	python3 - "$db" "$d/ready" <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN")
c.execute("SELECT count(*) FROM events").fetchone()
open(sys.argv[2], "w").close()
time.sleep(600)
PY
	reader=$!
	while [ ! -e "$d/ready" ]; do sleep 0.05; done
	for i in $(seq 1 "$n"); do
		printf '{"id":"evt_%d","type":"payment.success","metadata":{"orderId":"o%d"},"transaction":{"id":"t%d","amount":10,"currency":"eur"},"customer":{"customerEmail":"a@example.com"},"pad":"%0900d"}' \
		    "$i" "$i" "$i" 0 >"$d/ev.json"
		if [ "$scheme" = stripe ]; then
			ts=$(date +%s)
			sig=$({ printf '%s.' "$ts"; cat "$d/ev.json"; } |
			    openssl dgst -sha256 -hmac "whsec_$secret" -hex |
			    sed 's/.*= //')
			hdr=(HTTP_STRIPE_SIGNATURE="t=$ts,v1=$sig")
		else
			sig=$(openssl dgst -sha256 -hmac "$secret" -hex \
			    <"$d/ev.json" | sed 's/.*= //')
			hdr=("HTTP_X_WEBHOOK_SIGNATURE=sha256=$sig")
			[ -z "${3:-}" ] ||
			    hdr+=("HTTP_X_IDEMPOTENCY_KEY=evt_$i")
		fi
		env GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST \
		    CONTENT_TYPE=application/json \
		    CONTENT_LENGTH=$(stat -c %s "$d/ev.json") PATH_INFO=/shop \
		    SCRIPT_NAME=/hooks "${hdr[@]}" \
		    "$bin" <"$d/ev.json" >"$d/out" 2>/dev/null
		grep -q '"processed"' "$d/out" || { echo "pages.sh: $scheme, delivery $i: $(cat "$d/out")" >&2; exit 1; }
	done
	size=$(stat -c %s "$db-wal")
	page=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA page_size").fetchone()[0])' "$db")
	kill "$reader" 2>/dev/null
	wait "$reader" 2>/dev/null || true
	reader=
	python3 -c 'import sys; w,s,p,n = sys.argv[1], *map(int, sys.argv[2:]); f = (s - 32) // (p + 24); print("%s: %d events: %d WAL frames, %.2f per event" % (w, n, f, f / n))' "$2" "$size" "$page" "$n"
}

pages hmac-sha256 "hmac-sha256 keyed by a header (replay guard)" header
pages hmac-sha256 "hmac-sha256 keyed by the body's id (replay guard)"
pages stripe "stripe (no guard)"
