#!/bin/sh
# SPDX-License-Identifier: MIT
# Group commit for the FastCGI processes a web server started, and for
# its CGI requests (docs/reliability.md, docs/design/015-shared-writer.md,
# docs/design/035-cgi-writer.md; src/writer/shared.h), behind a real
# lighttpd running conf-examples/lighttpd-fastcgi.conf with 4 processes
# and the default synchronous=full (and lighttpd-cgi.conf, last):
#
# - under load, the writer is killed three times and a FastCGI process
#   once (bench/load/groupload.py): every event answered 200 is in the
#   database with its order, none answered 200 is missing, a retry of
#   each is 200, and in the end one row and one order per event; then
#   the same with mostly new Stripe events (runs of them straight to
#   the writer, without a lookup: src/pipeline/pipeline.h; the writer's last line
#   counts the retries among them it answered);
# - the writer batched (its last line says the largest batch) and ends
#   by itself once lighttpd stopped its processes;
# - `oncehook --shared-writer` is not a command a user can run;
# - ONCEHOOK_GROUP_COMMIT=off: no writer, events processed as before;
# - the -wal stays under 16 MiB through each load;
# - synchronous=normal: deliveries one at a time start no writer (a
#   process hands a claim over only when the write lock is taken); under
#   load one runs, and every answer holds as above; after it, while the
#   writer says the others are connected, every claim goes to it; mostly
#   new Stripe events (runs of them straight to the writer, without a
#   lookup), the writer killed twice and a process once: every answer
#   holds;
# - one actions text: the file edited in place and the writer gone, the
#   processes run the text they read and start no writer (which would
#   read the new one), and start one again once the file holds their
#   text again; a writer started on a name whose texts are not its own
#   exits at once; a database restored under them does not stop the
#   next writer;
# - CGI (conf-examples/lighttpd-cgi.conf): one request at a time starts
#   no writer, even with oncehook work running; requests that overlap
#   start one and hand it their events, each answered at once (the
#   writer holds none of the server's pipes and none of the request's
#   variables: tests/servers/deploy.sh, dp_cgi_writer); under load the
#   writer killed twice and a request's process once, every answer holds
#   as above; the writer ends by itself after.
#
# TAP.  Environment: ONCEHOOK_BIN, top_srcdir (set by make check).

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"
sv_need openssl sqlite3 curl
lt_find

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-group.XXXXXX") || bail "mktemp"
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	lt_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

# walsize LABEL: the -wal of $db stayed bounded through the load (the
# writer's checkpoints, the processes' copies:
# docs/design/011-checkpoint.md); without them it grows by some 24 KB an
# event.
walsize() {
	_w=$(stat -c %s "$db-wal" 2>/dev/null || echo 0)
	[ "$_w" -le $((16 * 1024 * 1024)) ]
	check $? "$1: the log stayed bounded (-wal $_w bytes, at most 16 MiB)"
}

# load OUT [ARGS]: bench/load/groupload.py against this lighttpd ($d),
# its output in OUT, its ok / not ok lines as this suite's.
load() {
	_out=$1
	shift
	python3 "$top_srcdir/bench/load/groupload.py" "$@" \
	    --url "http://127.0.0.1:$lt_port/hooks/${load_endpoint:-shop}" \
	    --env "$d/conf/env" \
	    --server-pid "$server_pid" >"$_out" 2>&1
	_rc=$?
	grep '^#' "$_out"
	while IFS= read -r line; do
		case $line in
		"ok - "*) tap ok "${line#ok - }" ;;
		"not ok - "*) tap not-ok "${line#not ok - }" ;;
		"#"*) ;;
		*) echo "# $line" ;;
		esac
	done <"$_out"
	[ $_rc -le 1 ] || bail "groupload.py failed (exit $_rc)"
}

# straight LOG LABEL: the writer that took the most claims in LOG (its
# last line) found the key stored in at least 1 % of them and 3: the
# retries that came in runs of new events, sent to it without a lookup
# (src/pipeline/pipeline.h; measured 528-545 of 12,000-13,000, and 6 of
# 378 under the sanitizers on a loaded machine; without straight claims,
# races only: 1-8 of 12,000, under 0.1 %).
straight() {
	_l=$(sed -n 's/.* writer: \([0-9]*\) claims in .*; \([0-9]*\) found their key stored$/\1 \2/p' \
	    "$1" | sort -n | tail -n 1)
	_c=${_l% *}
	_k=${_l#* }
	[ -n "$_l" ] && [ "$_k" -ge 3 ] && [ $((_k * 100)) -ge "$_c" ]
	check $? "$2: retries in runs of new events went straight to the writer (${_k:-0} of its ${_c:-0} claims found their key stored)"
}

# --- Part 1: kills under load --------------------------------------------
d=$tmp/fcgi
lt_setup fastcgi "$d"
sed -i 's/"max-procs" => 2,/"max-procs" => 4,/' "$d/conf/oncehook.conf"
grep -q '"max-procs" => 4,' "$d/conf/oncehook.conf" ||
    bail "lighttpd-fastcgi.conf: no max-procs to set"
! grep -q '^ONCEHOOK_SYNCHRONOUS=' "$d/conf/env" ||
    bail "the example sets ONCEHOOK_SYNCHRONOUS; this test wants the default"
db=$(sed -n 's/^ONCEHOOK_DB=//p' "$d/conf/env")
lt_start "$d" fastcgi || bail "lighttpd did not start"

load "$tmp/load.out"
walsize "full, under load"
# Mostly new events to Stripe's endpoint (no replay guard): runs of them
# go straight to the writer without a lookup (src/pipeline/pipeline.h), a retry
# among them waits for its batch's fsync; the writer killed twice and a
# process once meanwhile, every answer holds.
load_endpoint=stripe load "$tmp/load-stripe.out" --kills 2 --seconds 4 \
    --stripe --every 20 --label "full, Stripe, mostly new: "

# A writer that cannot start (the binary no longer executable, as in the
# middle of an upgrade) says no hello: every process claims its events
# itself, none is answered 503 for it.
secret=$(sed -n 's/^ONCEHOOK_SHOP_SECRET=//p' "$d/conf/env" | cut -d' ' -f1)
# post KEY [SECONDS]: deliver through lighttpd, waiting at most SECONDS
# (30) for the answer; prints the status code (000: none in time).
post() {
	_b=$(printf '{"eventId":"%s","type":"payment.success","metadata":{"orderId":"o_%s"},"transaction":{"id":"tx","amount":1,"currency":"EUR"}}' "$1" "$1")
	_s=$(printf '%s' "$_b" | openssl dgst -sha256 -hmac "$secret" -r |
	    cut -d' ' -f1)
	curl -s -o /dev/null -w '%{http_code}' -m "${2:-30}" \
	    -H 'Content-Type: application/json' \
	    -H "X-Webhook-Signature: sha256=$_s" --data-binary "$_b" \
	    "http://127.0.0.1:$lt_port/hooks/shop"
}
# stop_writer: SIGTERM to $db's writers, and their end awaited.
stop_writer() {
	for p in $(writers "$db"); do kill "$p"; done
	gone "$db" || echo "# the writer did not end on SIGTERM"
}
# restore: a backup of $db renamed over it and its log files removed,
# under the running processes (docs/reliability.md's restore).
restore() {
	as_backend sqlite3 -cmd '.timeout 10000' "$db" ".backup '$db.backup'" || bail "backup"
	as_backend cp "$db.backup" "$db.restore" || bail "cp backup"
	mv "$db.restore" "$db"
	rm -f "$db-wal" "$db-shm"
}
# post_restored KEY...: each delivered again while it is 503 (the
# processes letting go of the old file), 8 s at most; sets bad.
post_restored() {
	bad=
	for _k in "$@"; do
		code=$(post_settled "$_k" 40)
		[ "$code" = 200 ] || bad="$bad $_k:$code"
	done
}
# (SIGTERM: the writer that took the end of the load says its batches.)
chmod a-x "$d/bin/oncehook"
stop_writer
bad=
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	code=$(post "nox$i")
	[ "$code" = 200 ] || bad="$bad nox$i:$code"
done
rows=$(sq "$db" "SELECT count(*) FROM events WHERE key LIKE 'nox%'")
chmod a+x "$d/bin/oncehook"
[ -z "$bad" ] && [ "$rows" = 12 ] && [ -z "$(writers "$db")" ]
check $? "no writer can start: 12 events processed by the processes themselves, no 503 ($rows rows${bad:+,$bad})"
sleep 5.5	# SHAREDWRITER_RETRY_MS: each process's pause between starts
code=$(post nox13)
[ "$code" = 200 ] && [ -n "$(writers "$db")" ]
check $? "executable again: a writer starts (at most 5 s after the last try) and the event is processed ($code)"

lt_sanitizer "$d" fastcgi
lt_stop
gone "$db"
check $? "the writer ends by itself once lighttpd stopped its processes"
big=$(sed -n 's/.* writer: [0-9]* claims in [0-9]* transactions (.* largest \([0-9]*\)).*$/\1/p' \
    "$d/log/breakage.log" | sort -n | tail -n 1)
grep 'writer: [0-9]* claims in' "$d/log/breakage.log" | sed 's/^/# /'
[ "${big:-0}" -gt 1 ]
check $? "group commit: the writer committed up to ${big:-0} claims in one transaction"
straight "$d/log/breakage.log" "full, Stripe, mostly new"
grep -q 'writer: started for the FastCGI processes of' "$d/log/breakage.log"
check $? "the log says a writer started"

# --- Part 2: not a command -------------------------------------------------
out=$("$ONCEHOOK_BIN" --shared-writer 2>&1 </dev/null)
rc=$?
[ $rc = 2 ] && printf '%s\n' "$out" | grep -q 'not a command'
check $? "oncehook --shared-writer by hand: exit 2, not a command ($rc)"

# A lighttpd FastCGI set-up in dir with NAME=VALUE in oncehook's
# environment (lighttpd's and conf/env's) and PROCS processes, started;
# sets d, db and secret.
start_with() {	# dir procs name value
	d=$1
	lt_setup fastcgi "$d"
	sed -i "s/\"max-procs\" => 2,/\"max-procs\" => $2,/" \
	    "$d/conf/oncehook.conf"
	sed -i "s|\"ONCEHOOK_LOG\" => \"info\",|&\n\"$3\" => \"$4\",|" \
	    "$d/conf/oncehook.conf"
	grep -q "$3" "$d/conf/oncehook.conf" ||
	    bail "lighttpd-fastcgi.conf: no ONCEHOOK_LOG line to follow"
	echo "$3=$4" >>"$d/conf/env"
	db=$(sed -n 's/^ONCEHOOK_DB=//p' "$d/conf/env")
	lt_start "$d" fastcgi || bail "lighttpd did not start"
	secret=$(sed -n 's/^ONCEHOOK_SHOP_SECRET=//p' "$d/conf/env" |
	    cut -d' ' -f1)
}

# Deliveries PREFIX1..3 one at a time: 0 if each is 200, their three
# rows are there and no writer ran; sets rows and bad for the message.
# With cgi, one at a time means each request's process has ended before
# the next is sent (its answer can reach the client first, and under
# the sanitizers its exit takes a while): up to 5 s each.
alone() {	# prefix [cgi]
	bad=
	for k in "${1}1" "${1}2" "${1}3"; do
		code=$(post "$k")
		[ "$code" = 200 ] || bad="$bad $k:$code"
		_i=0
		while [ "${2:-}" = cgi ] && [ $_i -lt 50 ] &&
		    [ -n "$(runs_on "$db" oncehook)" ]; do
			sleep 0.1
			_i=$((_i + 1))
		done
	done
	rows=$(sq "$db" "SELECT count(*) FROM events WHERE key LIKE '$1%'")
	[ -z "$bad" ] && [ "$rows" = 3 ] && [ -z "$(writers "$db")" ] &&
	    ! grep -q 'writer: started' "$d/log/breakage.log"
}

# --- Part 3: ONCEHOOK_GROUP_COMMIT=off --------------------------------------
start_with "$tmp/off" 2 ONCEHOOK_GROUP_COMMIT off
alone off
check $? "ONCEHOOK_GROUP_COMMIT=off: processed ($rows rows${bad:+,$bad}), no writer"
lt_stop

# --- Part 4: synchronous=normal -------------------------------------------
# A process hands its claim to the writer when the write lock is taken
# as it comes to claim, then every claim while others are connected to
# the writer: one delivery at a time starts no writer; under load a
# writer runs, and every answer holds as under full.
start_with "$tmp/normal" 4 ONCEHOOK_SYNCHRONOUS normal
alone nrm
check $? "normal, one delivery at a time: processed by the processes ($rows rows${bad:+,$bad}), no writer"
load "$tmp/load-normal.out" --kills 0 --seconds 4 --label "normal: "
walsize "normal, under load"
# After the load every process has handed the writer a claim, and its
# answers say four processes are connected: now even one delivery at a
# time goes to the writer.  Stopped (SIGSTOP), it holds the delivery,
# and a retry of an event it holds, uncommitted, is not answered either
# (no read can see that event yet: the retry waits behind the batch);
# once it runs again the event is there once, and its retry is a
# duplicate.  (A process that claimed itself would answer at once.)
w=$(writers "$db")
if [ "$(printf '%s\n' "$w" | grep -c .)" = 1 ]; then
	kill -STOP "$w"
	held=
	for k in nrm-held1 nrm-held2 nrm-held3 nrm-held1; do
		held="$held$(post "$k" 1) "
	done
	kill -CONT "$w"
	again=
	for k in nrm-held1 nrm-held2 nrm-held3; do
		again="$again$(post "$k") "
	done
	rows=$(sq "$db" "SELECT count(*) FROM events WHERE key LIKE 'nrm-held%'")
	orders=$(sq "$db" "SELECT count(*) FROM orders WHERE id LIKE 'o_nrm-held%'")
	[ "$held" = "000 000 000 000 " ] && [ "$again" = "200 200 200 " ] &&
	    [ "$rows" = 3 ] && [ "$orders" = 3 ]
	check $? "normal, after the load: one delivery at a time waits for the stopped writer, and so does a retry of an event it holds (answers $held), then each event is there once ($rows rows, $orders orders; retries $again)"
else
	check 1 "normal, after the load: one writer running (pids: $w)"
fi
# Mostly new events to Stripe's endpoint (no replay guard): runs of them
# go straight to the writer without a lookup (src/pipeline/pipeline.h), and the
# retries among them are answered by the writer; the writer killed
# twice and a process once meanwhile, every answer holds.
load_endpoint=stripe load "$tmp/load-normal-stripe.out" --kills 2 \
    --seconds 4 --stripe --every 20 --label "normal, Stripe, mostly new: "
# A restore under normal (docs/reliability.md): a backup renamed over
# the database while the writer runs.  Its copier had a connection of
# its own during the load, and is asked nothing now: it lets that go
# within a second (store/sqlite/copier.h), as the writer and the processes let go of
# theirs, so within a few seconds every delivery is processed in the
# new file.  (A copier that kept its connection would hold the old
# file's byte, store/sqlite/walguard.h, and every new connection would meet 503.)
restore
post_restored nrm-r1 nrm-r2 nrm-r3 nrm-r4 nrm-r5
rows=$(sq "$db" "SELECT count(*) FROM events WHERE key LIKE 'nrm-r%'")
[ -z "$bad" ] || tail -n 12 "$d/log/breakage.log" | sed 's/^/# /'
[ -z "$bad" ] && [ "$rows" = 5 ]
check $? "normal, restored under the writer and its copier: each delivery processed in the new file within 8 s (${bad:-all 200}; $rows rows)"

# The writer under normal has its copier (a thread, store/sqlite/copier.h): what
# the sanitizers say of it is in the log once the writer has ended.
lt_stop
gone "$db"
check $? "normal: the writer ends by itself once lighttpd stopped its processes"
lt_sanitizer "$tmp/normal" "fastcgi, normal (the writer and its copier)"
grep 'writer: [0-9]* claims in' "$d/log/breakage.log" | sed 's/^/# /'
straight "$d/log/breakage.log" "normal, Stripe, mostly new"

# --- Part 5: one actions text, the writer's too ----------------------------
# Each FastCGI process runs the actions text it read at its start
# (store/store.h), and so does the writer it hands claims to: a writer
# started after the file was edited in place would run the new text for
# processes that run the old one.  The processes, started with v1, see
# the file changed when no writer runs (the writer's name holds the
# files' times): they claim their own events with v1 and start none.
d=$tmp/text
lt_setup fastcgi "$d"
texts_sql() {	# texts_sql TAG: every event writes its key and TAG
	printf '%s\n' \
	    'CREATE TABLE IF NOT EXISTS texts (k TEXT NOT NULL, v TEXT NOT NULL);' \
	    '-- on: *' "INSERT INTO texts VALUES (:key, '$1');"
}
texts_sql v1 >"$d/sql/orders.sql"
chmod 0644 "$d/sql/orders.sql"
db=$(sed -n 's/^ONCEHOOK_DB=//p' "$d/conf/env")
(dp_env "$d" as_backend "$d/bin/oncehook" init) >"$d/log/init.log" 2>&1 ||
    bail "oncehook init with the texts file: $(tail -n 1 "$d/log/init.log")"
lt_start "$d" fastcgi || bail "lighttpd did not start"
secret=$(sed -n 's/^ONCEHOOK_SHOP_SECRET=//p' "$d/conf/env" | cut -d' ' -f1)
texts() {
	sq "$db" "SELECT v || ':' || count(*) FROM texts GROUP BY v ORDER BY v" |
	    tr '\n' ' '
}
bad=
for k in txt-a1 txt-a2 txt-a3; do
	code=$(post "$k")
	[ "$code" = 200 ] || bad="$bad $k:$code"
done
before=$(texts)
[ -z "$bad" ] && [ "$before" = "v1:3 " ] && [ -n "$(writers "$db")" ]
check $? "one text: 3 events through a writer ran the text read at start ($before${bad:+,$bad})"
# Only the actions files count: a database restored under the processes
# (a backup renamed over it) and the writer gone, the next writer starts
# on the same name and opens the file there now, as the processes do.
restore
stop_writer
sleep 5.5	# SHAREDWRITER_RETRY_MS: each process's pause between starts
post_restored txt-r1 txt-r2 txt-r3
restored=$(texts)
w=$(writers "$db")
[ -z "$bad" ] && [ "$restored" = "v1:6 " ] && [ -n "$w" ]
check $? "one text: the database restored and the writer gone, a writer starts again ($restored${bad:+,$bad}; writers: ${w:-none})"
texts_sql v2 >"$d/sql/orders.sql"	# in place: the same file, a new time
stop_writer
sleep 5.5	# SHAREDWRITER_RETRY_MS: each process's pause between starts
bad=
for k in txt-b1 txt-b2 txt-b3 txt-b4 txt-b5 txt-b6; do
	code=$(post "$k")
	[ "$code" = 200 ] || bad="$bad $k:$code"
done
after=$(texts)
w=$(writers "$db")
said=$(grep -c 'group commit: an actions file no longer holds the text this process started with' \
    "$d/log/breakage.log")
[ -z "$bad" ] && [ "$after" = "v1:12 " ] && [ -z "$w" ] && [ "$said" -ge 1 ]
check $? "one text: the file edited in place, no writer running: 6 more events ran the processes' text, no writer started, the log says why ($after${bad:+,$bad}; writers: ${w:-none}; said $said times)"
# The file written back as it was (the same text, a new time, as touch
# or a deploy that rewrites unchanged files would leave it): after the
# pause between starts a writer starts again.  (Each process's first
# claim after the kill met the broken connection and claimed itself;
# with 2 processes and 6 posts each tried a start.)
texts_sql v1 >"$d/sql/orders.sql"
sleep 5.5	# SHAREDWRITER_RETRY_MS: each process's pause between starts
bad=
for k in txt-c1 txt-c2 txt-c3 txt-c4; do
	code=$(post "$k")
	[ "$code" = 200 ] || bad="$bad $k:$code"
done
again=$(texts)
w=$(writers "$db")
[ -z "$bad" ] && [ "$again" = "v1:16 " ] && [ -n "$w" ]
check $? "one text: the file holding the processes' text again (rewritten, a new time), a writer starts again ($again${bad:+,$bad}; writers: ${w:-none})"
# A writer that reads a file changed since its processes read theirs
# (an edit between a process's check and the writer's read) does not
# serve: started on a name made before the edit, it exits at once.
py=$(backend_python3) || bail "no python3 the backends' user may run"
out=$(dp_env "$d" as_backend "$py" - "$d/bin/oncehook" 2>&1 <<'PY'
import os, socket, subprocess, sys, uuid
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
# A name of this run's own; its last 8 are no hex digest of any texts.
s.bind("\0oncehook-writer/" + uuid.uuid4().hex[:24] + "g" * 8)
s.listen(8)
os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
r = subprocess.run([sys.argv[1], "--shared-writer"], pass_fds=(3,),
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
print("rc=%d %s" % (r.returncode, r.stderr.decode(errors="replace")))
PY
)
case $out in
rc=1*"changed since the FastCGI processes that started it"*) rc=0 ;;
*) rc=1 ;;
esac
check $rc "one text: a writer started on a name its files no longer give does not serve (exit 1, says why): $(printf '%s' "$out" | head -c 160 | tr '\n' ' ')"
lt_stop

# --- Part 6: CGI -----------------------------------------------------------
# A CGI process (one request) hands its event to a writer that runs, or
# starts one while another oncehook process has the database open (the
# requests overlap), and then opens no database itself; alone it does
# its own work, so a quiet site has no writer (src/writer/shared.h,
# "Under CGI").  conf-examples/lighttpd-cgi.conf, synchronous=full.
d=$tmp/cgi
lt_setup cgi "$d"
db=$(sed -n 's/^ONCEHOOK_DB=//p' "$d/conf/env")
lt_start "$d" cgi || bail "lighttpd did not start"
secret=$(sed -n 's/^ONCEHOOK_SHOP_SECRET=//p' "$d/conf/env" | cut -d' ' -f1)
alone cgi cgi
check $? "CGI, one delivery at a time: processed by each request's own process ($rows rows${bad:+,$bad}), no writer"
# One request at a time starts no writer even with oncehook work
# running; overlapping requests start one, answered at once; lighttpd
# gives a CGI program its error log file as standard error, which the
# writer keeps (its lines are where the requests' are).
dp_cgi_writer "CGI" "$d" "http://127.0.0.1:$lt_port/hooks" "$d/bin/oncehook"
grep -q 'writer: started for the CGI requests of' "$d/log/breakage.log"
check $? "CGI: the writer's start is in lighttpd's breakage log"
load "$tmp/load-cgi.out" --kills 2 --seconds 4 --cgi --label "CGI: "
load_endpoint=stripe load "$tmp/load-cgi-stripe.out" --kills 1 --seconds 4 \
    --stripe --every 20 --cgi --label "CGI, Stripe, mostly new: "
walsize "CGI, under load"
# The writer lingers 2 s after the last request (SHAREDWRITER_LINGER_MS),
# then ends and says what it did.
sleep 2.5
gone "$db"
check $? "CGI: the writer ends by itself once the requests stopped"
grep 'writer: [0-9]* claims in' "$d/log/breakage.log" | sed 's/^/# /'
took=$(sed -n 's/.* writer: \([0-9]*\) claims in .*/\1/p' \
    "$d/log/breakage.log" | sort -n | tail -n 1)
[ "${took:-0}" -ge 50 ]
check $? "CGI: the last writer took the requests' claims (${took:-0})"
lt_sanitizer "$d" "cgi (the requests and their writer)"
lt_stop

echo "1..$n"
[ $failed -eq 0 ]
