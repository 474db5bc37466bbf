#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook when the database file changes under it (docs/reliability.md, "Reliability:
# what is guaranteed and what is not").
#
# Part 1, behind a real lighttpd running conf-examples/lighttpd-fastcgi.conf
# (two FastCGI processes holding the database open): the file is renamed
# away and back, replaced by a restored backup, and removed, while the
# processes run.  Each delivery while the file at ONCEHOOK_DB is not the
# one a process holds must be 503, never 200; once the database is back,
# 200; after lighttpd stops, every event answered 200 is in the database
# at the path, with its order.  As root on a file system that has it, the
# -shm is also made immutable (chattr +i): 503, and no process killed.
#
# Part 2, as root only (a tmpfs remounted read-only): with no -wal left
# (the last long-lived connection removes it on close: here oncehook
# stats, after a CGI delivery, which leaves it), a retry of a known event is still
# 200 from a read, a new event is 503 with Retry-After, and once the
# mount is writable again the new event is processed.
#
# TAP.  Environment: ONCEHOOK_BIN, top_srcdir (set by make check).

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"
sv_need openssl sqlite3 curl
lt_find

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-rel.XXXXXX") || bail "mktemp"
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	lt_stop
	umount "$tmp/ro" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

# sign BODY: the X-Webhook-Signature value for the shop endpoint.
sign() {
	printf '%s' "$1" | openssl dgst -sha256 -hmac "$SHOP_SECRET" -r |
	    cut -d' ' -f1
}
# body KEY: a payment for order o_KEY.
body() {
	printf '{"eventId":"%s","type":"payment.success","metadata":{"orderId":"o_%s"},"transaction":{"id":"tx_%s","amount":10,"currency":"EUR"}}' \
	    "$1" "$1" "$1"
}
# post KEY: deliver through lighttpd; prints the status code.
post() {
	_b=$(body "$1")
	curl -s -o "$tmp/answer" -w '%{http_code}' -m 30 \
	    -H 'Content-Type: application/json' \
	    -H "X-Webhook-Signature: sha256=$(sign "$_b")" \
	    --data-binary "$_b" "http://127.0.0.1:$lt_port/hooks/shop"
}

# fpost N KEY: deliver straight to the Nth FastCGI process (its socket),
# bypassing lighttpd's choice; prints the status code.
fpost() {
	_b=$(body "$2")
	python3 -c 'import sys
sys.path.insert(0, sys.argv[1])
from oncetest import fcgiclient
r = fcgiclient.request(sys.argv[2], "POST", "/hooks/shop",
    sys.argv[3].encode(), {"X-Webhook-Signature": "sha256=" + sys.argv[4]})
print(r.status)' "$top_srcdir/tests/servers" "$d/run/oncehook.sock-$1" \
	    "$_b" "$(sign "$_b")" 2>/dev/null || echo 502
}

acked=
# deliver KEY...: each must be 200; the keys are acknowledged.
deliver() {
	_bad=
	for k in "$@"; do
		s=$(post "$k")
		[ "$s" = 200 ] && acked="$acked $k" || _bad="$_bad $k:$s"
	done
	[ -z "$_bad" ] || echo "# not 200:$_bad"
	[ -z "$_bad" ]
}
# refused KEY...: each must be 503 (more keys than processes, so every
# process meets the change); a 200 is still counted as acknowledged.
refused() {
	_bad=
	for k in "$@"; do
		s=$(post "$k")
		[ "$s" = 200 ] && acked="$acked $k"
		[ "$s" = 503 ] || _bad="$_bad $k:$s"
	done
	[ -z "$_bad" ] || echo "# not 503:$_bad"
	[ -z "$_bad" ]
}
# settle KEY...: each 200 within five seconds, 503 meanwhile (a process
# that still held the old file refuses once, then opens the new one; a
# new file is not opened while another process holds the old one, which
# an idle process lets go of within a second).
settle() {
	_bad=
	for k in "$@"; do
		s=$(post_settled "$k" 25)
		[ "$s" = 200 ] && acked="$acked $k" || _bad="$_bad $k:$s"
	done
	[ -z "$_bad" ] || echo "# not settled:$_bad"
	[ -z "$_bad" ]
}

# --- Part 1: FastCGI, the file moved, replaced, removed ----------------
d=$tmp/fcgi
lt_setup fastcgi "$d"
db=$d/db/oncehook.db
lt_start "$d" fastcgi || bail "lighttpd did not start"

deliver a1 a2 a3 a4
check $? "fastcgi: deliveries processed"

mv "$db" "$db.away"
refused b1 b2 b3 b4 a1
check $? "renamed away: every delivery 503, a retry of a known event too"
mv "$db.away" "$db"
settle b1 b2 b3 b4
check $? "renamed back: processed after the processes reopen it"

# A restore as docs/operations.md says to do it by file: a backup taken with
# SQLite, copied in under a new name, renamed over the database, and
# the old -wal and -shm removed.
as_backend sqlite3 -cmd '.timeout 10000' "$db" ".backup '$d/db/backup.db'" || bail "backup"
as_backend cp "$d/db/backup.db" "$d/db/restore.tmp" || bail "cp backup"
mv "$d/db/restore.tmp" "$db"
rm -f "$db-wal" "$db-shm"
settle c1 c2 c3 c4 c5 c6
check $? "replaced by a restored backup: 503 until reopened, then processed"
deliver c7 c8 c9 c10
check $? "replaced by a restored backup: processed in the new file"

# Again, with both processes holding the old file, and no request
# meanwhile.  Neither may open the restored file while the other still
# holds the old one (store/sqlite/walguard.h); an idle process looks once a second,
# lets go, and closes without a checkpoint, leaving the -wal and -shm at
# the path, which are now the new file's, alone.  So after a few quiet
# seconds both have let go by themselves (two log lines) and the first
# request to each is processed in the new file.
# (lighttpd gives sequential requests to one process: each is sent to
# its own here, first so that both hold the file open.)
# With group commit (the default) the processes' writer holds it too, and
# lets go the same way: one line more.
s0=$(fpost 0 x0) s1=$(fpost 1 x1)
[ "$s0" = 200 ] && [ "$s1" = 200 ] && acked="$acked x0 x1"
check $? "both processes hold the database (200 each: $s0 $s1)"
writers=$(($(grep -c 'writer: started for the FastCGI processes' \
    "$d/log/breakage.log") - $(grep -c 'writer: [0-9]* claims in' \
    "$d/log/breakage.log")))
before=$(grep -c 'removed, renamed or replaced while in use' \
    "$d/log/breakage.log")
as_backend sqlite3 -cmd '.timeout 10000' "$db" ".backup '$d/db/backup.db'" || bail "backup"
as_backend cp "$d/db/backup.db" "$d/db/restore.tmp" || bail "cp backup"
mv "$d/db/restore.tmp" "$db"
rm -f "$db-wal" "$db-shm"
sleep 2.5
after=$(grep -c 'removed, renamed or replaced while in use' \
    "$d/log/breakage.log")
s0=$(fpost 0 e1) s1=$(fpost 1 e2)
echo "# idle for 2.5 s: $((after - before)) processes let go (2 and $writers writer); then e1 $s0, e2 $s1"
for k in e1:$s0 e2:$s1; do
	[ "${k#*:}" = 200 ] && acked="$acked ${k%:*}"
done
[ "$writers" = 1 ] && [ $((after - before)) -eq 3 ] && [ "$s0" = 200 ] &&
    [ "$s1" = 200 ]
check $? "replaced, both processes idle: each lets go within a second by itself; then both process in the new file"

as_backend sqlite3 -cmd '.timeout 10000' "$db" ".backup '$d/db/backup2.db'" || bail "backup"
rm -f "$db" "$db-wal" "$db-shm"
refused d1 d2 d3 d4
check $? "removed: every delivery 503"
grep -q 'is gone.*oncehook init' "$d/log/breakage.log"
check $? "removed: the log says the database is gone, run oncehook init"
as_backend cp "$d/db/backup2.db" "$db" || bail "cp backup2"
settle d1 d2 d3 d4
check $? "restored after removal: processed"

# An immutable -shm: SQLite writes into its mapping, which the kernel
# answers with SIGBUS (the web server's own 500 page).  Needs root and a
# file system with the attribute (ext4, not tmpfs).
s0=$(post i0)
[ "$s0" = 200 ] && acked="$acked i0"
if [ "$(id -u)" = 0 ] && [ -e "$db-shm" ] && chattr +i "$db-shm" 2>/dev/null
then
	s1=$(post i1) s2=$(fpost 0 i1) s3=$(fpost 1 i1)
	a=$(cat "$tmp/answer")
	chattr -i "$db-shm"
	echo "# immutable -shm: i1 $s1 $s2 $s3"
	for k in $s1 $s2 $s3; do [ "$k" = 200 ] && acked="$acked i1"; done
	[ "$s1" = 503 ] && [ "$s2" = 503 ] && [ "$s3" = 503 ] &&
	    printf '%s\n' "$a" | grep -q '"unavailable"'
	check $? "immutable -shm: 503 from every process, none killed"
	settle i1
	check $? "-shm mutable again: processed"
else
	n=$((n + 1)); echo "ok $n # SKIP immutable -shm: needs root and chattr"
	n=$((n + 1)); echo "ok $n # SKIP immutable -shm: needs root and chattr"
fi

lt_stop
lt_start "$d" fastcgi || bail "lighttpd did not restart"
s=$(post a1)
[ "$s" = 200 ] && grep -q already_processed "$tmp/answer"
check $? "after a restart: a retry of the first event is a duplicate"
lt_stop

missing=
for k in $acked; do
	got=$(sq "$db" "SELECT count(*) FROM events e JOIN orders o
	    ON o.id = 'o_' || e.key WHERE e.endpoint = 'shop' AND
	    e.key = '$k' AND o.paid_at IS NOT NULL")
	[ "$got" = 1 ] || missing="$missing $k"
done
[ -n "$acked" ] && [ -z "$missing" ]
check $? "every event answered 200 is in the database with its order${missing:+ (missing:$missing)}"
lt_sanitizer "$d" fastcgi

# --- Part 2: a read-only mount, no -wal left ----------------------------
ro=$tmp/ro
if [ "$(id -u)" = 0 ] && mkdir -p "$ro" &&
    mount -t tmpfs -o size=4m tmpfs "$ro" 2>/dev/null; then
	# The CGI handler as a web server runs it, signed as above.
	while IFS= read -r kv; do
		# shellcheck disable=SC2163 # kv is NAME=value
		export "$kv"
	done <"$d/conf/env"
	ONCEHOOK_DB=$ro/oncehook.db
	export ONCEHOOK_DB
	cgi() {	# cgi KEY: prints the CGI answer
		_b=$(body "$1")
		printf '%s' "$_b" | env GATEWAY_INTERFACE=CGI/1.1 \
		    REQUEST_METHOD=POST CONTENT_TYPE=application/json \
		    CONTENT_LENGTH=${#_b} PATH_INFO=/hooks/shop \
		    HTTP_X_WEBHOOK_SIGNATURE="sha256=$(sign "$_b")" \
		    "$ONCEHOOK_BIN" 2>>"$tmp/ro.log"
	}
	"$ONCEHOOK_BIN" init >/dev/null 2>&1 || bail "init on tmpfs"
	cgi r1 | grep -q '"status":"processed"'
	check $? "read-only: a first delivery processed"
	"$ONCEHOOK_BIN" stats >/dev/null 2>>"$tmp/ro.log"
	[ ! -e "$ONCEHOOK_DB-wal" ] && [ ! -e "$ONCEHOOK_DB-shm" ]
	check $? "read-only: no -wal or -shm left after oncehook stats, the last to close"
	mount -o remount,ro "$ro" || bail "remount ro"
	out=$(cgi r1)
	printf '%s\n' "$out" | grep -q '^Status: 200' &&
	    printf '%s\n' "$out" | grep -q '"already_processed"'
	check $? "read-only: a retry of a known event is 200"
	out=$(cgi r2)
	printf '%s\n' "$out" | grep -q '^Status: 503' &&
	    printf '%s\n' "$out" | grep -q '^Retry-After: '
	check $? "read-only: a new event is 503 with Retry-After"
	mount -o remount,rw "$ro" || bail "remount rw"
	cgi r2 | grep -q '"status":"processed"'
	check $? "writable again: the new event is processed"
	umount "$ro"
else
	for t in 1 2 3 4 5; do
		n=$((n + 1))
		echo "ok $n # SKIP read-only: needs root and tmpfs"
	done
fi

echo "1..$n"
[ "$failed" -eq 0 ]
