#!/bin/sh
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2046,SC2086,SC2154 # set -- $(numbers); eval's values
# oncehook on a three-node Galera cluster (issue 36): three web hosts
# behind a load balancer, each writing to its own node.  The cluster is
# tests/servers/galera.sh's (three mariadbd on 127.0.0.1 from Debian's
# mariadb-server and galera-4, rsync state transfer, stopped by PID);
# each host an "oncehook serve --listen 127.0.0.1:PORT --workers 2"
# whose ONCEHOOK_DB is its node's socket, spoken to in FastCGI (as a web
# server would) by bench/load/hostsload.py, the load of tests/hosts.sh.
# The stripe endpoint's actions are sql/actions/mysql/orders.sql; the
# "later" endpoint (deferred: serve --no-work leaves its events
# received, for "oncehook work" and "oncehook replay") runs the test's
# own, one row an event.
#
#   - 40 identical deliveries at once over the three hosts: one
#     processed, one events row, one paid order, one order.paid row
#   - 8 senders x 500 deliveries, half repeats, hosts in turn: each
#     event processed once, one effect each
#   - the same load while node 1 is killed (SIGKILL) and brought back
#     (IST, or SST): no event answered 200 is missing, none applied
#     twice, host A answers 503 (not 500) meanwhile, then 200 again
#   - "oncehook deliver" on hosts A and B at once: every order.paid
#     row delivered once
#   - "oncehook work" on hosts A and B at once on 100 received events:
#     both take a share, each event run once
#   - "oncehook replay KEY" on hosts A and B at once, 10 keys: each
#     exits 0 (one replayed, the other finds it processed), one effect
#   - the certification conflicts of each step counted (the nodes'
#     wsrep_local_cert_failures and wsrep_local_bf_aborts) and printed
#     with oncehook's answers
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped (no
# mariadbd, galera-4, rsync or python3), 99 harness error.  As root,
# MariaDB and oncehook run as nobody.

set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"
# shellcheck source=tests/servers/galera.sh
. "$top_srcdir/tests/servers/galera.sh"

gl_need
# The shipped busy timeout (5 s): a node's stall, not a held lock.
BUSY_MS=5000
dp_init galera
for f in sql/actions/mysql/orders.sql bench/load/hostsload.py \
    tests/servers/oncetest/hookclient.py \
    tests/servers/oncetest/fcgiclient.py; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done

# The hosts first, then the cluster.
gl_cleanup() {
	dp_stop
	gl_stop
	sv_tmp_done "$tmp"
}
trap gl_cleanup EXIT

# Each step's time, and the certification conflicts it met: the nodes'
# counters since the last step (a node started again counts from 0).
lap=$(date +%s)
# shellcheck disable=SC2034 # read by eval
cf_1=0 cf_2=0 cf_3=0 bf_1=0 bf_2=0 bf_3=0
timing() {	# timing STEP
	now=$(date +%s)
	tc=0 tb=0 per=
	for gl_n in 1 2 3; do
		v=$(gl_status "$gl_n" wsrep_local_cert_failures)
		w=$(gl_status "$gl_n" wsrep_local_bf_aborts)
		eval "pv=\$cf_$gl_n pw=\$bf_$gl_n"
		[ "${v:-0}" -ge "$pv" ] || pv=0
		[ "${w:-0}" -ge "$pw" ] || pw=0
		dc=$((${v:-0} - pv))
		db=$((${w:-0} - pw))
		eval "cf_$gl_n=\${v:-0} bf_$gl_n=\${w:-0}"
		tc=$((tc + dc))
		tb=$((tb + db))
		per="$per node $gl_n +$dc/+$db;"
	done
	echo "# timing: $1: $((now - lap)) s; certification failures" \
	    "+$tc, brute-force aborts +$tb (${per# })"
	lap=$now
}

# -- the cluster -------------------------------------------------------
if ! gl_start "$tmp/cluster" 2>"$tmp/gl.err"; then
	sed 's/^/# /' "$tmp/gl.err"
	bail "the Galera cluster did not start"
fi
tap ok "three nodes (rsync SST, 127.0.0.1) Synced in a cluster of 3 in $(($(date +%s) - lap)) s"
timing "the cluster"
DB=oncehook
DB_USER=oncehook
DB_PASS=galera-pass-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
gl_user "$DB" "$DB_USER" "$DB_PASS" >"$tmp/md.err" 2>&1 || {
	sed 's/^/# /' "$tmp/md.err"
	bail "gl_user failed"
}

# -- the three hosts ----------------------------------------------------
shared=$tmp/shared
mkdir -p "$shared" || bail "mkdir $shared"
printf '%s\n' "$DB_PASS" >"$shared/dbpass"
chmod 0600 "$shared/dbpass"
# The "later" endpoint's actions: one row an event (no key: a second
# run would show); the fast ones long enough that two work runners
# started a moment apart both run (100 take 2 s), the slow ones long
# enough for two replays to overlap.
cat >"$shared/later.sql" <<'EOF'
-- SPDX-License-Identifier: MIT
CREATE TABLE IF NOT EXISTS later_effects (
    id BIGINT AUTO_INCREMENT PRIMARY KEY,
    k VARCHAR(200) NOT NULL
) ENGINE=InnoDB;
-- on: later.fast
SELECT SLEEP(0.02);
INSERT INTO later_effects (k) VALUES (:key);
-- on: later.slow
SELECT SLEEP(0.5);
INSERT INTO later_effects (k) VALUES (:key);
EOF
chmod 0755 "$shared"
chmod 0644 "$shared/later.sql"
for h in a b c; do
	# The outbox command notes each row's id, a file per host.
	# shellcheck disable=SC2016 # $ONCEHOOK_OUTBOX_ID: the script's
	printf '#!/bin/sh\ncat >/dev/null\necho "$ONCEHOOK_OUTBOX_ID" >>"%s/notes-%s"\n' \
	    "$shared" "$h" >"$shared/note-$h.sh"
	chmod 0755 "$shared/note-$h.sh"
	: >"$shared/notes-$h"
	[ -z "$run_user" ] ||
	    chown "$run_user:$run_group" "$shared/notes-$h"
done
[ -z "$run_user" ] || chown "$run_user:$run_group" "$shared/dbpass"

host_dir() {	# host_dir DIR NODE
	dp_dir "$1"
	cp "$top_srcdir/sql/actions/mysql/orders.sql" "$1/sql/orders.sql" ||
	    bail "copying mysql/orders.sql"
	eval "sock=\$GL_SOCK_$2"
	h=$(basename "$1")
	{
		echo "ONCEHOOK_DB=mysql://$DB_USER@localhost/$DB?socket=$sock"
		echo "ONCEHOOK_DB_PASSWORD_FILE=$shared/dbpass"
		echo "ONCEHOOK_ENDPOINTS=stripe,later"
		echo "ONCEHOOK_STRIPE_SCHEME=stripe"
		echo "ONCEHOOK_STRIPE_SECRET=$STRIPE_SECRET"
		echo "ONCEHOOK_STRIPE_ACTIONS=$1/sql/orders.sql"
		echo "ONCEHOOK_LATER_SCHEME=stripe"
		echo "ONCEHOOK_LATER_SECRET=$STRIPE_SECRET"
		echo "ONCEHOOK_LATER_ACTIONS=$shared/later.sql"
		echo "ONCEHOOK_LATER_MODE=deferred"
		echo "ONCEHOOK_MAX_BODY=1048576"
		echo "ONCEHOOK_BUSY_TIMEOUT_MS=$BUSY_MS"
		echo "ONCEHOOK_LOG=info"
		echo "ONCEHOOK_OUTBOX_ORDER_PAID_COMMAND=$shared/note-$h.sh"
	} >"$1/conf/env"
	chmod 0600 "$1/conf/env"
}

start_serve() {	# start_serve DIR PORT; sets serve_pid
	dp_backend "$1" "$1/log/serve.log" "$1/bin/oncehook" serve \
	    --listen "127.0.0.1:$2" --workers 2 --no-work --no-deliver
	serve_pid=$bg_pid
	dp_track "$serve_pid"
	dp_wait_port "$2" "$serve_pid"
}

host_dir "$tmp/a" 1
host_dir "$tmp/b" 2
host_dir "$tmp/c" 3
dp_init_db "$tmp/a"
if gl_sql 3 "SET SESSION wsrep_sync_wait = 1; SELECT COUNT(*) FROM
    information_schema.tables WHERE table_schema = '$DB' AND table_name IN
    ('oncehook_events', 'oncehook_outbox', 'orders', 'later_effects')" |
    grep -qx 4; then
	tap ok "oncehook init on node 1: the tables on node 3 too"
else
	tap not-ok "oncehook init on node 1: the tables on node 3 too"
	sed 's/^/# /' "$tmp/a/log/init.log"
fi
set --
for h in a b c; do
	H=$(echo "$h" | tr '[:lower:]' '[:upper:]')
	port=$(free_port) || bail "no free port"
	if ! start_serve "$tmp/$h" "$port"; then
		sed 's/^/# /' "$tmp/$h/log/serve.log"
		bail "host $H: serve did not start"
	fi
	eval "port_$h=\$port"
	case $h in
	a) set -- "$@" --url-a "fcgi://127.0.0.1:$port/hooks/stripe" ;;
	b) set -- "$@" --url-b "fcgi://127.0.0.1:$port/hooks/stripe" ;;
	c) set -- "$@" --url "C=fcgi://127.0.0.1:$port/hooks/stripe" ;;
	esac
done
tap ok "hosts A, B, C: oncehook serve (FastCGI) on nodes 1, 2, 3"
set -- "$@" --secret "$STRIPE_SECRET" --sock "$GL_SOCK_2" --db "$DB" \
    --sync-wait
timing "the hosts"

# -- 1, 2: identical deliveries, then the mixed load ---------------------
dp_py galera bench/load/hostsload.py "$@" same
timing "40 identical deliveries"
dp_py galera bench/load/hostsload.py "$@" mixed
timing "8 senders x 500 deliveries"

# -- 3: node 1 killed under the load and brought back --------------------
rm -f "$tmp/stop" "$tmp/ready"
$watchdog python3 "$top_srcdir/bench/load/hostsload.py" "$@" --db-kill \
    --stop-file "$tmp/stop" --ready-file "$tmp/ready" kill \
    >"$tmp/kill.tap" 2>"$tmp/kill.err" &
load_pid=$!
dp_track "$load_pid"
i=0
while [ ! -e "$tmp/ready" ] && kill -0 "$load_pid" 2>/dev/null &&
    [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -e "$tmp/ready" ] || {
	touch "$tmp/stop"
	wait "$load_pid"
	sed 's/^/# /' "$tmp/kill.tap" "$tmp/kill.err"
	bail "the kill load did not start"
}
k0=$(date +%s)
gl_kill 1
echo "# SIGKILL to node 1 (host A's database)"
sleep 3
gl_restart 1
if gl_wait_synced 1 120 2>"$tmp/rejoin.err"; then
	how=SST
	grep -q 'IST received' "$tmp/cluster/node1/log/mariadb.log" && how=IST
	tap ok "node 1 rejoined the cluster ($how) and is Synced, $(($(date +%s) - k0)) s after the kill"
else
	tap not-ok "node 1 rejoined the cluster and is Synced"
	sed 's/^/# /' "$tmp/rejoin.err"
fi
sleep 2
touch "$tmp/stop"
wait "$load_pid"
rc=$?
dp_relay galera <"$tmp/kill.tap"
if [ $rc -gt 1 ]; then
	tap not-ok "galera: hostsload.py kill ran to its end (exit $rc)"
	sed 's/^/# /' "$tmp/kill.err"
fi
timing "node 1 killed and brought back under the load"

# -- 4: deliver, work and replay on two nodes at once ---------------------
# Events of the deferred endpoint "later", answered 200 "accepted" by the
# hosts in turn: received, for "oncehook work" (serve runs none:
# --no-work).
later() {	# later PREFIX TYPE N
	python3 - "$top_srcdir/tests/servers" "$STRIPE_SECRET" "$1" "$2" \
	    "$3" "$port_a" "$port_b" "$port_c" >"$tmp/later-$1.log" 2>&1 <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from oncetest import fcgiclient, hookclient
secret, prefix, typ, n, ports = sys.argv[2], sys.argv[3], sys.argv[4], \
    int(sys.argv[5]), sys.argv[6:]
bad = 0
for i in range(n):
    key = "%s-%d" % (prefix, i)
    body = hookclient.dumps({"id": key, "object": "event", "type": typ,
                             "created": 1767225600, "data": {}})
    r = fcgiclient.request("127.0.0.1:" + ports[i % 3], "POST",
                           "/hooks/later", body, {
                               "Content-Type": "application/json",
                               "Stripe-Signature":
                                   hookclient.sign_stripe(secret, body)})
    if r.status != 200 or (r.json or {}).get("status") != "accepted":
        bad += 1
        print("%s: %d %r" % (key, r.status, r.body[:200]))
sys.exit(1 if bad else 0)
EOF
	sent=$?
	got=$(gl_sql 2 "SET SESSION wsrep_sync_wait = 1; SELECT COUNT(*)
	    FROM \`$DB\`.oncehook_events WHERE endpoint = 'later' AND
	    event_key LIKE '$1-%' AND status = 'received'")
	if [ "$sent" = 0 ] && [ "$got" = "$3" ]; then
		tap ok "$3 events of the deferred endpoint answered accepted over the hosts: received"
	else
		tap not-ok "$3 events of the deferred endpoint answered accepted over the hosts: $got received"
		sed 's/^/# /' "$tmp/later-$1.log" | head -n 10
	fi
}
later wk later.fast 100
# deliver: the order.paid rows of the steps above, by hosts A and B.
for h in a b; do
	(dp_env "$tmp/$h" as_backend "$tmp/$h/bin/oncehook" deliver --once) \
	    >"$tmp/deliver-$h.out" 2>"$tmp/deliver-$h.err" &
	eval "dpid_$h=\$!"
done
# shellcheck disable=SC2154 # set by eval above
wait "$dpid_a" "$dpid_b"
rows=$(gl_sql 3 "SET SESSION wsrep_sync_wait = 1; SELECT COUNT(*),
    SUM(status = 'delivered') FROM \`$DB\`.oncehook_outbox")
na=$(grep -c . "$shared/notes-a")
nb=$(grep -c . "$shared/notes-b")
twice=$(cat "$shared/notes-a" "$shared/notes-b" | sort | uniq -d | wc -l)
ids=$(cat "$shared/notes-a" "$shared/notes-b" | sort -u | wc -l)
set -- $rows
if [ "$1" -gt 0 ] && [ "$1" = "$2" ] && [ "$ids" = "$1" ] &&
    [ "$twice" -eq 0 ] && [ $((na + nb)) -eq "$1" ]; then
	tap ok "deliver on hosts A and B at once: $1 outbox rows, each delivered once (A $na, B $nb)"
else
	tap not-ok "deliver on hosts A and B at once: each row once"
	echo "# rows $1, delivered $2; noted A $na, B $nb; distinct $ids; twice $twice"
	sed 's/^/# /' "$tmp/deliver-a.err" "$tmp/deliver-b.err" | tail -n 20
fi
timing "deliver on two nodes"

# A received event is due to "oncehook work" STORE_CLAIMER_FIRST (10)
# seconds after its claim (serve's own runner would take it at once).
due=$(gl_sql 2 "SELECT MAX(next_at) - UNIX_TIMESTAMP() FROM
    \`$DB\`.oncehook_events WHERE endpoint = 'later'")
[ "${due:-0}" -le 0 ] || sleep $((due + 1))
# work: "oncehook work --once" on hosts A and B at once.
for h in a b; do
	(dp_env "$tmp/$h" as_backend "$tmp/$h/bin/oncehook" work --once) \
	    >"$tmp/work-$h.out" 2>"$tmp/work-$h.err" &
	eval "wpid_$h=\$!"
done
# shellcheck disable=SC2154 # set by eval above
wait "$wpid_a" "$wpid_b"
wa=$(grep -c 'outcome=processed work' "$tmp/work-a.err")
wb=$(grep -c 'outcome=processed work' "$tmp/work-b.err")
set -- $(gl_sql 3 "SET SESSION wsrep_sync_wait = 1; SELECT COUNT(*),
    COUNT(DISTINCT k) FROM \`$DB\`.later_effects WHERE k LIKE 'wk-%';
    SELECT COUNT(*) FROM \`$DB\`.oncehook_events WHERE endpoint =
    'later' AND event_key LIKE 'wk-%' AND status = 'processed'")
if [ "$1" = 100 ] && [ "$2" = 100 ] && [ "$3" = 100 ] &&
    [ $((wa + wb)) -eq 100 ] && [ "$wa" -ge 20 ] && [ "$wb" -ge 20 ]; then
	tap ok "work on hosts A and B at once: 100 events shared ($wa and $wb), each run once"
else
	tap not-ok "work on hosts A and B at once: 100 events shared ($wa and $wb), each run once"
	echo "# effects $1, keys $2, processed $3"
	grep -v 'outcome=processed' "$tmp/work-a.err" "$tmp/work-b.err" |
	    head -n 20 | sed 's/^/# /'
fi
echo "# work: host A's lines other than processed: $(grep -vc \
    'outcome=processed' "$tmp/work-a.err"), host B's: $(grep -vc \
    'outcome=processed' "$tmp/work-b.err")"
timing "work on two nodes"

# replay: each slow key replayed on hosts A and B at the same moment
# (their runs overlap: one commits, the other's meets it at
# certification, or at the row lock on one node).
later rp later.slow 10
rpids=
i=0
while [ $i -lt 10 ]; do
	for h in a b; do
		( (dp_env "$tmp/$h" as_backend "$tmp/$h/bin/oncehook" replay \
		    --endpoint later "rp-$i"); echo "exit $?") \
		    >"$tmp/replay-$h-$i.out" 2>&1 &
		rpids="$rpids $!"
	done
	i=$((i + 1))
done
# shellcheck disable=SC2086 # a list of PIDs
wait $rpids
set -- $(gl_sql 3 "SET SESSION wsrep_sync_wait = 1; SELECT COUNT(*),
    COUNT(DISTINCT k) FROM \`$DB\`.later_effects WHERE k LIKE 'rp-%';
    SELECT COUNT(*) FROM \`$DB\`.oncehook_events WHERE endpoint =
    'later' AND event_key LIKE 'rp-%' AND status = 'processed'")
nz=$(cat "$tmp"/replay-*.out | grep -c '^exit [^0]')
ex=$(cat "$tmp"/replay-*.out | grep -c '^exit 0')
rep=$(cat "$tmp"/replay-*.out | grep -c '^replayed ')
alr=$(cat "$tmp"/replay-*.out | grep -c '(already; not run again)')
if [ "$1" = 10 ] && [ "$2" = 10 ] && [ "$3" = 10 ] && [ "$ex" = 20 ] &&
    [ "$rep" = 10 ] && [ "$alr" = 10 ]; then
	tap ok "replay on hosts A and B at once, 10 keys: 20 exits 0 (10 replayed, 10 found processed), each key applied once"
else
	tap not-ok "replay on hosts A and B at once, 10 keys: 20 exits 0 ($ex; $nz not; $rep replayed, $alr found processed), each key applied once ($1 effects, $2 keys, $3 processed)"
	grep -h -v '^exit 0' "$tmp"/replay-*.out | sort | uniq -c |
	    head -n 10 | sed 's/^/# /'
fi
echo "# replay: what the 20 said: $(cat "$tmp"/replay-*.out |
    grep -v -e '^exit' -e 'running it again' | sed 's/rp-[0-9]*/KEY/g' |
    sort | uniq -c | tr -s ' \n' ' ')"
echo "# replay: runs the server ended (a certification conflict or a" \
    "brute-force abort: deadlock), run again: $(cat "$tmp"/replay-*.out |
    grep -c 'Deadlock.*running it again')"
timing "replay on two nodes"

# -- what oncehook logged ------------------------------------------------
for h in a b c; do
	H=$(echo "$h" | tr '[:lower:]' '[:upper:]')
	if grep -n -i -e 'segmentation' -e 'abort' -e 'sanitizer' \
	    -e 'signal 6' -e 'signal 11' "$tmp/$h/log/serve.log" \
	    >"$tmp/crash.log"; then
		tap not-ok "host $H: no crash in serve's log"
		head -n 20 "$tmp/crash.log" | sed 's/^/# /'
	else
		tap ok "host $H: no crash in serve's log"
	fi
	echo "# host $H: serve's outcomes: $(grep -o \
	    'outcome=[a-z_]* status=[0-9]*' "$tmp/$h/log/serve.log" |
	    sort | uniq -c | tr -s ' \n' ' ')"
	# A claim the server ended (a deadlock: a certification failure or
	# a brute-force abort) is run once more; "(twice)": then 503.
	echo "# host $H: claims run again after a deadlock (certification" \
	    "conflict): $(grep -c 'running the claims again' \
	    "$tmp/$h/log/serve.log") (at the claim: $(grep -c \
	    'claim: Deadlock.*running the claims again' \
	    "$tmp/$h/log/serve.log"), at the commit: $(grep -c \
	    'commit: Deadlock.*running the claims again' \
	    "$tmp/$h/log/serve.log")); failed twice (503): $(grep -c \
	    'Deadlock.*(twice)' "$tmp/$h/log/serve.log"); 1047 (node not" \
	    "ready, 503): $(grep -c -e 'WSREP has not yet prepared' \
	    "$tmp/$h/log/serve.log")"
done
dp_sanitizer galera "$tmp/a/log/serve.log" "$tmp/b/log/serve.log" \
    "$tmp/c/log/serve.log"
echo "# the nodes' counters at the end:"
gl_counters | sed 's/^/#   /'
dp_done
