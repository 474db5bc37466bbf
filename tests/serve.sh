#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook serve: several FastCGI worker processes on one database, under
# concurrent duplicate load, with workers killed, and stopped by SIGTERM
# with a request in flight; and conf-examples/oncehook.service, which
# runs it.  Requests go straight to serve over FastCGI
# (tests/servers/oncetest/fcgiclient.py, driven by bench/load/serveload.py).
#
#   - systemd-analyze verify accepts oncehook.service (when installed)
#   - serve refuses a listening address that is not loopback
#   - TCP, 127.0.0.1 and a free port, --workers 4: the duplicate load;
#     SIGKILL to a worker holding a request and to another one mid-load;
#     SIGTERM with two requests in flight (one stopped in its parameters,
#     one in its body): both answered 200, exit status 0
#   - --timeout 2, two workers, on TCP and on a unix socket: two idle
#     connections, one stopped mid-parameters, one mid-body; each is
#     closed, a delivery behind them is answered, nothing is stored for
#     the body cut short; a kept connection idle on each worker is
#     closed after 2 s; SIGTERM with eight silent connections queued:
#     serve exits within 4 s, status 0
#   - the unit's ExecStart= (a unix socket, --workers 4) with the
#     environment file its comments show: a stale socket file is
#     replaced, the socket is mode 0660, a second serve on it is refused,
#     SIGTERM with two requests in flight: both answered, exit status 0,
#     socket removed
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped (no
# python3), 99 harness error.  As root, serve runs as nobody:nogroup.

set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"

# The shipped busy timeout (5 s): no scenario here holds the lock on
# purpose, and a slow build (sanitizers) must not turn contention into 503.
BUSY_MS=5000
dp_init serve
for f in conf-examples/oncehook.service bench/load/serveload.py \
    tests/servers/oncetest/fcgiclient.py; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done

d=$tmp/s
dp_dir "$d"
dp_fill_service "$d"
# A third endpoint in deferred mode, for serveload.py's "deferred" step.
sed -i 's/^ONCEHOOK_ENDPOINTS=stripe,shop$/ONCEHOOK_ENDPOINTS=stripe,shop,later/' \
    "$d/conf/oncehook.env" "$d/conf/env"
grep -q '^ONCEHOOK_ENDPOINTS=stripe,shop,later$' "$d/conf/env" ||
    bail "oncehook.service: its ONCEHOOK_ENDPOINTS line changed"
for f in "$d/conf/oncehook.env" "$d/conf/env"; do
	printf '%s\n' ONCEHOOK_LATER_SCHEME=hmac-sha256 \
	    "ONCEHOOK_LATER_SECRET=$SHOP_SECRET" \
	    "ONCEHOOK_LATER_ACTIONS=$d/sql/orders.sql" \
	    ONCEHOOK_LATER_MODE=deferred >>"$f"
done
# The outbox: order.paid rows (orders.sql writes one per paid order) go
# to a command that notes their ids, sent by serve's deliver child.
printf '#!/bin/sh\ncat >/dev/null\necho "$ONCEHOOK_OUTBOX_ID" >>"%s/db/outbox-notes"\n' \
    "$d" >"$d/bin/outbox-note.sh"
chmod 755 "$d/bin/outbox-note.sh"
for f in "$d/conf/oncehook.env" "$d/conf/env"; do
	echo "ONCEHOOK_OUTBOX_ORDER_PAID_COMMAND=$d/bin/outbox-note.sh" >>"$f"
done
dp_init_db "$d"
unit=$top_srcdir/conf-examples/oncehook.service

# The unit itself, as systemd reads it (the binary's path filled in).
if command -v systemd-analyze >/dev/null 2>&1; then
	sed "s|/usr/local/bin/oncehook|$d/bin/oncehook|" "$unit" \
	    >"$d/conf/oncehook.service"
	if systemd-analyze verify --man=no "$d/conf/oncehook.service" \
	    >"$d/log/verify.log" 2>&1; then
		tap ok "oncehook.service: systemd-analyze verify accepts it"
	else
		tap not-ok "oncehook.service: systemd-analyze verify accepts it"
		sed 's/^/# /' "$d/log/verify.log"
	fi
	if systemd-analyze security --offline=yes \
	    "$d/conf/oncehook.service" >"$d/log/security.log" 2>&1; then
		echo "# $(grep -i 'overall exposure' "$d/log/security.log")"
	fi
	# The timers' units (work, deliver): each timer and the service it
	# starts.
	for w in work deliver; do
		for u in oncehook-$w.service oncehook-$w.timer; do
			sed "s|/usr/local/bin/oncehook|$d/bin/oncehook|" \
			    "$top_srcdir/conf-examples/$u" >"$d/conf/$u"
		done
		if systemd-analyze verify --man=no "$d/conf/oncehook-$w.timer" \
		    "$d/conf/oncehook-$w.service" >"$d/log/verify-$w.log" 2>&1
		then
			tap ok "oncehook-$w.timer and .service: systemd-analyze verify accepts them"
		else
			tap not-ok "oncehook-$w.timer and .service: systemd-analyze verify accepts them"
			sed 's/^/# /' "$d/log/verify-$w.log"
		fi
	done
else
	tap ok "oncehook.service: systemd-analyze verify # SKIP no systemd-analyze"
	tap ok "oncehook-work units: systemd-analyze verify # SKIP no systemd-analyze"
	tap ok "oncehook-deliver units: systemd-analyze verify # SKIP no systemd-analyze"
fi

# Not loopback: refused at start.
port=$(free_port) || bail "no free port"
if (dp_env "$d" as_backend "$d/bin/oncehook" serve \
    --listen "0.0.0.0:$port") >"$d/log/any.log" 2>&1; then
	tap not-ok "serve --listen 0.0.0.0:PORT is refused"
else
	if grep -q loopback "$d/log/any.log"; then
		tap ok "serve --listen 0.0.0.0:PORT is refused, naming loopback"
	else
		tap not-ok "serve --listen 0.0.0.0:PORT is refused, naming loopback"
		sed 's/^/# /' "$d/log/any.log"
	fi
fi

# serve's exit status, once it is gone.
wait_serve() {	# wait_serve PID LABEL
	wait "$1"
	st=$?
	if [ $st -eq 0 ]; then
		tap ok "$2: serve exits 0 after SIGTERM"
	else
		tap not-ok "$2: serve exits 0 after SIGTERM (got $st)"
	fi
}

# TCP on loopback, four workers.
label="serve tcp"
port=$(free_port) || bail "no free port"
dp_backend "$d" "$d/log/serve-tcp.log" "$d/bin/oncehook" serve \
    --listen "127.0.0.1:$port" --workers 4
spid=$bg_pid
dp_track "$spid"
if dp_wait_port "$port" "$spid"; then
	tap ok "$label: serve --listen 127.0.0.1:PORT --workers 4 starts"
	dp_py "$label" bench/load/serveload.py workers load kill killwriter batchdup \
	    deferred term \
	    --addr "127.0.0.1:$port" --serve-pid "$spid" \
	    --env "$d/conf/env" --workers 4
	wait_serve "$spid" "$label"
	if grep -q 'worker [0-9]* killed by signal 9; starting the writer and the workers again' "$d/log/serve-tcp.log" &&
	    grep -q 'the writer [0-9]* killed by signal 9; starting the writer and the workers again' "$d/log/serve-tcp.log"
	then
		tap ok "$label: the log says a killed worker, and the killed writer, were replaced"
	else
		tap not-ok "$label: the log says a killed worker, and the killed writer, were replaced"
	fi
	# Group commit: under the load, transactions of several claims.
	big=$(sed -n 's/.* writer: [0-9]* claims in [0-9]* transactions (.* largest \([0-9]*\)).*$/\1/p' \
	    "$d/log/serve-tcp.log" | sort -n | tail -n 1)
	if [ "${big:-0}" -gt 1 ]; then
		tap ok "$label: group commit: the writer committed up to $big claims in one transaction"
	else
		tap not-ok "$label: group commit: no transaction of more than one claim (${big:-none})"
		grep 'writer:' "$d/log/serve-tcp.log" | sed 's/^/# /'
	fi
	# Each line names its process: the pid is asked once per process,
	# again in each forked worker, never the parent's.
	ppid_=$(sed -n 's/^oncehook\[\([0-9]*\)\]: .* serve: listening .*/\1/p' \
	    "$d/log/serve-tcp.log" | head -n 1)
	wpids=$(sed -n 's/^oncehook\[\([0-9]*\)\]: .* outcome=.*/\1/p' \
	    "$d/log/serve-tcp.log" | sort -u)
	if [ -n "$ppid_" ] && [ -n "$wpids" ] &&
	    ! printf '%s\n' "$wpids" | grep -qx "$ppid_"; then
		tap ok "$label: request lines carry the workers' pids ($(
		    printf '%s\n' "$wpids" | grep -c .) of them), not the parent's"
	else
		tap not-ok "$label: request lines carry the workers' pids, not the parent's ($ppid_: $(echo $wpids))"
	fi
	# The deliver child sent order.paid rows while the load ran; what
	# was left when serve stopped, a deliver --once sends: every row
	# delivered, each id noted (at least once).
	sent=$(grep -c 'outcome=delivered' "$d/log/serve-tcp.log" || :)
	(dp_env "$d" as_backend "$d/bin/oncehook" deliver --once) \
	    2>>"$d/log/deliver.log"
	rows=$(sq "$d/db/oncehook.db" "SELECT count(*) FROM outbox WHERE topic = 'order.paid'")
	left=$(sq "$d/db/oncehook.db" "SELECT count(*) FROM outbox WHERE status <> 'delivered'")
	noted=$(sort -u "$d/db/outbox-notes" 2>/dev/null | grep -c .)
	if [ "$sent" -gt 0 ] && [ "${rows:-0}" -gt 0 ] && [ "$left" = 0 ] &&
	    [ "$noted" = "$rows" ]; then
		tap ok "$label: the deliver child sent $sent order.paid rows under the load; all $rows delivered, each id noted"
	else
		tap not-ok "$label: the deliver child: sent $sent, rows $rows, left $left, ids noted $noted"
	fi
else
	tap not-ok "$label: serve --listen 127.0.0.1:PORT --workers 4 starts"
	sed 's/^/# /' "$d/log/serve-tcp.log"
fi
dp_stop

# Connections that stall (--timeout 2, two workers): on TCP, and on a
# unix socket (which inherits no socket option from the listening one).
for fam in tcp unix; do
	label="serve $fam --timeout 2"
	if [ $fam = tcp ]; then
		port=$(free_port) || bail "no free port"
		addr=127.0.0.1:$port
	else
		addr=$d/run/stall.sock
	fi
	dp_backend "$d" "$d/log/serve-stall-$fam.log" "$d/bin/oncehook" serve \
	    --listen "$addr" --workers 2 --timeout 2
	spid=$bg_pid
	dp_track "$spid"
	if if [ $fam = tcp ]; then dp_wait_port "$port" "$spid"
	    else dp_wait_socket "$addr" "$spid"; fi; then
		dp_py "$label" bench/load/serveload.py workers stall closing \
		    keepidle termidle \
		    --addr "$addr" \
		    --serve-pid "$spid" --env "$d/conf/env" --workers 2 \
		    --timeout 2
		wait_serve "$spid" "$label"
		if grep -q 'no whole request within 2 s' \
		    "$d/log/serve-stall-$fam.log" &&
		    grep -q 'a kept connection sent nothing for 2 s' \
		    "$d/log/serve-stall-$fam.log"; then
			tap ok "$label: the log names the connections closed"
		else
			tap not-ok "$label: the log names the connections closed"
			sed 's/^/# /' "$d/log/serve-stall-$fam.log"
		fi
	else
		tap not-ok "$label: serve starts"
		sed 's/^/# /' "$d/log/serve-stall-$fam.log"
	fi
	dp_stop
done

# The unit's command line: a unix socket.
label="serve unix (oncehook.service)"
sock=$d/run/oncehook.sock
# A stale socket: bound, never listened on, left behind.
as_backend "$backend_python" -c 'import socket, sys
socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$sock" ||
    bail "no stale socket"
[ -S "$sock" ] || bail "no stale socket"
# shellcheck disable=SC2046 # the command line, split into words
dp_backend "$d" "$d/log/serve-unix.log" $(cat "$d/conf/serve.cmd")
spid=$bg_pid
dp_track "$spid"
if dp_wait_socket "$sock" "$spid"; then
	tap ok "$label: ExecStart= starts, replacing a stale socket file"
	mode=$(stat -c %a "$sock")
	if [ "$mode" = 660 ]; then
		tap ok "$label: the socket is mode 0660"
	else
		tap not-ok "$label: the socket is mode 0660 (got $mode)"
	fi
	# shellcheck disable=SC2046
	if (dp_env "$d" as_backend $(cat "$d/conf/serve.cmd")) \
	    >"$d/log/second.log" 2>&1; then
		tap not-ok "$label: a second serve on the live socket is refused"
	else
		tap ok "$label: a second serve on the live socket is refused"
		sed 's/^/# /' "$d/log/second.log"
	fi
	dp_py "$label" bench/load/serveload.py workers term --addr "$sock" \
	    --serve-pid "$spid" --env "$d/conf/env" --workers 4
	wait_serve "$spid" "$label"
	if [ -e "$sock" ]; then
		tap not-ok "$label: the socket file is removed at exit"
	else
		tap ok "$label: the socket file is removed at exit"
	fi
else
	tap not-ok "$label: ExecStart= starts, replacing a stale socket file"
	sed 's/^/# /' "$d/log/serve-unix.log"
fi
dp_stop
# One actions text for every worker (store_keep_actions()): serve reads
# the file before it listens and starts its workers; the file edited
# once the port accepts, before any event, is not what they run, nor
# what a worker started again after SIGKILL runs.  SIGHUP (no reload)
# stops serve and its children.  --no-group-commit: each worker runs
# the actions itself.
label="serve one text"
printf '%s\n' 'CREATE TABLE IF NOT EXISTS texts (k TEXT NOT NULL, v TEXT NOT NULL);' \
    '-- on: *' "INSERT INTO texts VALUES (:key, 'v1');" >"$d/sql/once.sql"
sed -i "s|^ONCEHOOK_SHOP_ACTIONS=.*|ONCEHOOK_SHOP_ACTIONS=$d/sql/once.sql|" \
    "$d/conf/env"
grep -q "^ONCEHOOK_SHOP_ACTIONS=$d/sql/once.sql\$" "$d/conf/env" ||
    bail "no ONCEHOOK_SHOP_ACTIONS line in $d/conf/env"
dp_init_db "$d"
port=$(free_port) || bail "no free port"
dp_backend "$d" "$d/log/serve-once.log" "$d/bin/oncehook" serve \
    --listen "127.0.0.1:$port" --workers 3 --no-group-commit
spid=$bg_pid
dp_track "$spid"
# send N TAG: N new shop events, each answered processed.
send() {
	python3 - "127.0.0.1:$port" "$SHOP_SECRET" "$1" "$2" \
	    "$top_srcdir/tests/servers" 2>&1 <<'PY'
import sys
addr, secret, n, tag, lib = sys.argv[1:]
sys.path.insert(0, lib)
from oncetest import fcgiclient, hookclient
sch = hookclient.SCHEMES["hmac-sha256"]
bad = 0
for i in range(int(n)):
    key = "once-%s-%d" % (tag, i)
    body = sch.body(key, "payment.success", 0)
    h = dict(sch.headers(secret, body, key, "payment.success"))
    h["X-Idempotency-Key"] = key
    r = fcgiclient.request(addr, "POST", "/hooks/shop", body, h)
    if r.status != 200 or b"processed" not in r.body:
        bad += 1
        print("# %s: %d %r" % (key, r.status, r.body[:80]))
sys.exit(1 if bad else 0)
PY
}
texts() { sq "$d/db/oncehook.db" "SELECT v || ':' || count(*) FROM texts GROUP BY v ORDER BY v" | tr '\n' ' '; }
if dp_wait_port "$port" "$spid"; then
	printf '%s\n' '-- on: *' "INSERT INTO texts VALUES (:key, 'v2');" \
	    >"$d/sql/once.sql"
	send 12 a
	got=$(texts)
	nw=$(sed -n 's/^oncehook\[\([0-9]*\)\]: .* key="once-a-.*outcome=processed.*/\1/p' \
	    "$d/log/serve-once.log" | sort -u | grep -c .)
	if [ "$got" = "v1:12 " ] && [ "$nw" -ge 2 ]; then
		tap ok "$label: the file edited after serve started: all 12 events, on $nw workers, ran the text read at start"
	else
		tap not-ok "$label: the file edited after serve started: texts $got on $nw workers (want v1:12 on 2 or more)"
	fi
	wp=$(sed -n 's/^oncehook\[\([0-9]*\)\]: .* key="once-a-.*outcome=processed.*/\1/p' \
	    "$d/log/serve-once.log" | head -n 1)
	kill -9 "$wp" 2>/dev/null
	sleep 1
	send 12 b
	got=$(texts)
	if [ "$got" = "v1:24 " ]; then
		tap ok "$label: a worker killed and started again runs the same text"
	else
		tap not-ok "$label: a worker killed and started again runs the same text (texts $got)"
	fi
	kill -HUP "$spid"
	wait "$spid"
	st=$?
	sleep 0.5
	# Its children (workers, work, deliver) run this binary's path.
	left=
	for c in /proc/[0-9]*/cmdline; do
		case $(tr '\0' ' ' <"$c" 2>/dev/null) in
		"$d/bin/oncehook serve"*)
			c=${c#/proc/}
			left="$left ${c%/cmdline}" ;;
		esac
	done
	if [ $st -eq 0 ] && [ -z "$left" ] &&
	    grep -q 'serve: stopping' "$d/log/serve-once.log"; then
		tap ok "$label: SIGHUP stops serve (exit 0) and its children"
	else
		tap not-ok "$label: SIGHUP stops serve and its children (exit $st, left: ${left:-none})"
		for k in $left; do kill -9 "$k" 2>/dev/null; done
	fi
else
	tap not-ok "$label: serve starts"
	sed 's/^/# /' "$d/log/serve-once.log"
fi
dp_stop
dp_sanitizer "serve" "$d/log/serve-tcp.log" "$d/log/serve-unix.log" \
    "$d/log/serve-stall-tcp.log" "$d/log/serve-stall-unix.log" \
    "$d/log/serve-once.log"
dp_done
