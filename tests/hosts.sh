#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook on two web hosts sharing one MariaDB server: each host an
# nginx (conf-examples/nginx.conf, filled as tests/e2e-nginx.sh fills it,
# fastcgi_pass to 127.0.0.1:PORT as its comment shows) in front of its
# own "oncehook serve --listen 127.0.0.1:PORT --workers 3" with its own
# ONCEHOOK_COUNTERS_FILE; one private MariaDB (tests/servers/mariadb.sh,
# a unix socket in a temporary directory), one database and user,
# "oncehook init" once.  The deliveries are Stripe's
# (payment_intent.succeeded), the actions sql/actions/mysql/orders.sql;
# bench/load/hostsload.py sends them and reads the effects:
#
#   - 40 identical deliveries at once, 20 to each host: one processed,
#     39 already_processed, one events row, one paid order, one
#     order.paid outbox row
#   - 8 senders x 500 deliveries at once, half of them repeats, hosts
#     alternating: each event processed once (answers and rows), one
#     effect each; every answer 200 (oncehook's 503 + Retry-After, a
#     lock wait timed out, is delivered again until 200)
#   - the same load until told to stop, while host A's workers are
#     killed (SIGKILL; serve replaces them), then host A's whole serve
#     (SIGKILL, its children too) and it is started again a few seconds
#     later, host B answering throughout; every delivery not answered
#     200 is sent again: each event once
#   - the order.paid rows, delivered by the two serves' deliver children
#     (a command noting each row's id): each once, but the row the
#     deliverer killed with host A had under way (at least once)
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped (no
# mariadbd, nginx or python3), 99 harness error.  As root, MariaDB, nginx's
# workers and oncehook run as nobody.

set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"

md_bin >/dev/null || skip_all "mariadbd is not installed (mariadb-server)"
command -v mariadb-install-db >/dev/null 2>&1 ||
    skip_all "mariadb-install-db is not installed (mariadb-server)"
nginx=$(command -v nginx 2>/dev/null || true)
[ -n "$nginx" ] || [ ! -x /usr/sbin/nginx ] || nginx=/usr/sbin/nginx
[ -n "$nginx" ] || skip_all "nginx is not installed"
params=${NGINX_FASTCGI_PARAMS:-/etc/nginx/fastcgi_params}
[ -r "$params" ] ||
    skip_all "no $params (nginx-common; or set NGINX_FASTCGI_PARAMS)"

# The shipped busy timeout (5 s): contention, not a held lock, is tested.
BUSY_MS=5000
dp_init hosts
for f in conf-examples/nginx.conf sql/actions/mysql/orders.sql \
    bench/load/hostsload.py tests/servers/oncetest/hookclient.py; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done
"$ONCEHOOK_BIN" serve --help 2>&1 | grep -q -e --workers ||
    bail "$ONCEHOOK_BIN has no serve --workers"

# Stop MariaDB last (the trap's dp_stop stops the hosts first).
md_cleanup() {
	dp_stop
	md_stop
	sv_tmp_done "$tmp"
}
trap md_cleanup EXIT

# -- MariaDB ----------------------------------------------------------
chmod 0755 "$tmp"
if ! md_start "$tmp/mariadb" 2>"$tmp/md.err"; then
	sed 's/^/# /' "$tmp/md.err"
	bail "MariaDB did not start"
fi
DB=oncehook
DB_USER=oncehook
DB_PASS=hosts-pass-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
md_user "$DB" "$DB_USER" "$DB_PASS" >"$tmp/md.err" 2>&1 || {
	sed 's/^/# /' "$tmp/md.err"
	bail "md_user failed"
}
tap ok "MariaDB started (socket $MD_SOCK), database and user made"

# -- the two hosts' directories ----------------------------------------
shared=$tmp/shared
mkdir -p "$shared" || bail "mkdir $shared"
printf '%s\n' "$DB_PASS" >"$shared/dbpass"
# The deliver children note each order.paid row's id.
# shellcheck disable=SC2016 # $ONCEHOOK_OUTBOX_ID: the script's
printf '#!/bin/sh\ncat >/dev/null\necho "$ONCEHOOK_OUTBOX_ID" >>"%s/outbox-notes"\n' \
    "$shared" >"$shared/outbox-note.sh"
chmod 0755 "$shared" "$shared/outbox-note.sh"
chmod 0600 "$shared/dbpass"
: >"$shared/outbox-notes"
if [ -n "$run_user" ]; then
	chown "$run_user:$run_group" "$shared/dbpass" "$shared/outbox-notes"
fi

host_dir() {	# host_dir DIR
	dp_dir "$1"
	cp "$top_srcdir/sql/actions/mysql/orders.sql" "$1/sql/orders.sql" ||
	    bail "copying mysql/orders.sql"
	{
		echo "ONCEHOOK_DB=mysql://$DB_USER@localhost/$DB?socket=$MD_SOCK"
		echo "ONCEHOOK_DB_PASSWORD_FILE=$shared/dbpass"
		echo "ONCEHOOK_ENDPOINTS=stripe"
		echo "ONCEHOOK_STRIPE_SCHEME=stripe"
		echo "ONCEHOOK_STRIPE_SECRET=$STRIPE_SECRET"
		echo "ONCEHOOK_STRIPE_ACTIONS=$1/sql/orders.sql"
		echo "ONCEHOOK_MAX_BODY=1048576"
		echo "ONCEHOOK_BUSY_TIMEOUT_MS=$BUSY_MS"
		echo "ONCEHOOK_LOG=info"
		echo "ONCEHOOK_COUNTERS_FILE=$1/db/counters"
		echo "ONCEHOOK_OUTBOX_ORDER_PAID_COMMAND=$shared/outbox-note.sh"
	} >"$1/conf/env"
	chmod 0600 "$1/conf/env"
}

# The test's nginx.conf around the filled example (tests/e2e-nginx.sh's,
# the FastCGI address being serve's TCP one).
nginx_conf() {	# nginx_conf DIR PORT BACKEND_PORT
	ex=$top_srcdir/conf-examples/nginx.conf
	dp_need "$ex" 'fastcgi_pass unix:/run/oncehook/oncehook.sock;' \
	    '#fastcgi_pass 127.0.0.1:9000;' 'include fastcgi_params;'
	sed -e "s|^\([[:space:]]*\)fastcgi_pass unix:/run/oncehook/oncehook.sock;|\1fastcgi_pass 127.0.0.1:$3;|" \
	    "$ex" >"$1/conf/oncehook.conf"
	grep -q "^[[:space:]]*fastcgi_pass 127.0.0.1:$3;" "$1/conf/oncehook.conf" ||
	    bail "nginx.conf: fastcgi_pass not filled"
	cp "$params" "$1/conf/fastcgi_params" || bail "copying $params"
	{
		echo "daemon off;"
		echo "worker_processes 2;"
		echo "pid $1/run/nginx.pid;"
		echo "error_log $1/log/error.log warn;"
		if [ -n "$run_user" ]; then
			echo "user $run_user $run_group;"
		fi
		echo "events { worker_connections 512; }"
		echo "http {"
		echo "	access_log $1/log/access.log;"
		echo "	default_type application/octet-stream;"
		for t in client_body fastcgi proxy uwsgi scgi; do
			echo "	${t}_temp_path $1/tmp/$t;"
		done
		echo "	server {"
		echo "		listen 127.0.0.1:$2;"
		echo "		server_name localhost;"
		echo "		root $1/htdocs;"
		echo "		include $1/conf/oncehook.conf;"
		echo "	}"
		echo "}"
	} >"$1/conf/nginx.conf"
}

start_serve() {	# start_serve DIR PORT; sets serve_pid
	dp_backend "$1" "$1/log/serve.log" "$1/bin/oncehook" serve \
	    --listen "127.0.0.1:$2" --workers 3
	serve_pid=$bg_pid
	dp_track "$serve_pid"
	dp_wait_port "$2" "$serve_pid"
}

start_nginx() {	# start_nginx DIR PORT; sets nginx_pid
	"$nginx" -t -p "$1" -c "$1/conf/nginx.conf" -e "$1/log/error.log" \
	    >"$1/log/t.log" 2>&1 || return 1
	"$nginx" -p "$1" -c "$1/conf/nginx.conf" -e "$1/log/error.log" \
	    >"$1/log/stdout.log" 2>&1 &
	nginx_pid=$!
	dp_track "$nginx_pid"
	dp_wait_port "$2" "$nginx_pid"
}

# Every descendant of a process, from /proc (children first).
descendants() {	# descendants PID
	python3 -c 'import sys; sys.path.insert(0, sys.argv[1])
from oncetest import testkit
def walk(p):
    for c in testkit.children_of(p):
        walk(c)
        print(c)
walk(int(sys.argv[2]))' "$top_srcdir/tests/servers" "$1"
}

comm() { cat "/proc/$1/comm" 2>/dev/null; }

# The workers of a serve: its children but the writer, the work child
# and the deliver one (named so by serve, as bench/load/serveload.py
# knows them; the deliver child's own children, the outbox command, are
# not serve's).
workers_of() {	# workers_of PID
	for c in $(python3 -c 'import sys; sys.path.insert(0, sys.argv[1])
from oncetest import testkit
print(" ".join(map(str, testkit.children_of(int(sys.argv[2])))))' \
	    "$top_srcdir/tests/servers" "$1"); do
		case $(comm "$c") in
		oncehook-writer | oncehook-work | oncehook-outbox) ;;
		*) echo "$c" ;;
		esac
	done
}

host_dir "$tmp/a"
host_dir "$tmp/b"
dp_init_db "$tmp/a"
if md_sql "SELECT COUNT(*) FROM information_schema.tables
    WHERE table_schema = '$DB' AND table_name IN
    ('oncehook_events', 'oncehook_outbox', 'orders')" | grep -qx 3; then
	tap ok "oncehook init made oncehook_events, oncehook_outbox and orders"
else
	tap not-ok "oncehook init made oncehook_events, oncehook_outbox and orders"
	sed 's/^/# /' "$tmp/a/log/init.log"
fi

for h in a b; do
	H=$(echo "$h" | tr '[:lower:]' '[:upper:]')
	sport=$(free_port) || bail "no free port"
	if ! start_serve "$tmp/$h" "$sport"; then
		tap not-ok "host $H: oncehook serve --listen 127.0.0.1:$sport --workers 3 starts"
		sed 's/^/# /' "$tmp/$h/log/serve.log"
		bail "host $H: serve did not start"
	fi
	eval "serve_$h=\$serve_pid sport_$h=\$sport"
	tap ok "host $H: oncehook serve --listen 127.0.0.1:$sport --workers 3 starts"
	hport=$(free_port) || bail "no free port"
	nginx_conf "$tmp/$h" "$hport" "$sport"
	if ! start_nginx "$tmp/$h" "$hport"; then
		tap not-ok "host $H: nginx (the filled example) starts on 127.0.0.1:$hport"
		sed 's/^/# /' "$tmp/$h/log/t.log" "$tmp/$h/log/stdout.log" \
		    "$tmp/$h/log/error.log" 2>/dev/null
		bail "host $H: nginx did not start"
	fi
	eval "hport_$h=\$hport"
	tap ok "host $H: nginx (the filled example) starts on 127.0.0.1:$hport"
done
# shellcheck disable=SC2154 # set by eval above
set -- --url-a "http://127.0.0.1:$hport_a/hooks/stripe" \
    --url-b "http://127.0.0.1:$hport_b/hooks/stripe" \
    --secret "$STRIPE_SECRET" --sock "$MD_SOCK" --db "$DB"
# shellcheck disable=SC2154
workers_a0=$(workers_of "$serve_a" | sort | tr '\n' ' ')
# shellcheck disable=SC2154
workers_b0=$(workers_of "$serve_b" | sort | tr '\n' ' ')

dp_py hosts bench/load/hostsload.py "$@" same
stats() {	# stats HOST FILE
	(dp_env "$tmp/$1" as_backend "$tmp/$1/bin/oncehook" stats --json) \
	    >"$2" 2>"$2.err"
}
stats a "$tmp/stats-a0.json"
stats b "$tmp/stats-b0.json"
dp_py hosts bench/load/hostsload.py "$@" --counts "$tmp/counts.json" mixed
stats a "$tmp/stats-a1.json"
stats b "$tmp/stats-b1.json"
# Each host's counters file counted its own answers of the load.
if python3 - "$tmp" >"$tmp/counters.log" 2>&1 <<'EOF'
import json, sys
t = sys.argv[1]
want = json.load(open(t + "/counts.json"))
bad = 0
for h in "ab":
    def outcomes(f):
        d = json.load(open("%s/stats-%s%s.json" % (t, h, f)))
        e = [e for e in d["endpoints"] if e["name"] == "stripe"][0]
        return e["outcomes"]
    o0, o1 = outcomes("0"), outcomes("1")
    got = {k: o1[k] - o0[k] for k in o1 if o1[k] != o0[k]}
    w = want[h.upper()]
    print("host %s: counted %r, answered %r" % (h.upper(), got, w))
    bad += got != w
sys.exit(1 if bad else 0)
EOF
then
	tap ok "each host's counters file counts its own answers of the load"
else
	tap not-ok "each host's counters file counts its own answers of the load"
fi
sed 's/^/# /' "$tmp/counters.log"

# No process of either serve died under the load.
a1=$(workers_of "$serve_a" | sort | tr '\n' ' ')
b1=$(workers_of "$serve_b" | sort | tr '\n' ' ')
if [ "$a1" = "$workers_a0" ] && [ "$b1" = "$workers_b0" ] &&
    [ -n "$a1" ] && [ -n "$b1" ]; then
	tap ok "both serves' workers are the same processes after the load"
else
	tap not-ok "both serves' workers are the same processes after the load"
	echo "# A: before $workers_a0, after $a1"
	echo "# B: before $workers_b0, after $b1"
fi

# The load again, host A killed meanwhile.
rm -f "$tmp/stop" "$tmp/ready"
$watchdog python3 "$top_srcdir/bench/load/hostsload.py" "$@" \
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
# 1. host A's workers, mid-load: serve replaces them.
kw=$(workers_of "$serve_a")
echo "# SIGKILL to host A's workers: $(echo $kw)"
for p in $kw; do kill -9 "$p" 2>/dev/null; done
sleep 1.5
a2=$(workers_of "$serve_a")
same=
for p in $a2; do
	for q in $kw; do
		[ "$p" = "$q" ] && same=$p
	done
done
if kill -0 "$serve_a" 2>/dev/null && [ -z "$same" ] &&
    [ "$(echo "$a2" | grep -c .)" -eq "$(echo "$kw" | grep -c .)" ]; then
	tap ok "host A: serve replaced its workers killed mid-load"
else
	tap not-ok "host A: serve replaced its workers killed mid-load"
	echo "# killed: $(echo $kw); now: $(echo $a2)"
	tail -n 20 "$tmp/a/log/serve.log" | sed 's/^/# /'
fi
# 2. host A's whole serve: SIGKILL to it and to every process of its.
sleep 1
ka="$serve_a $(descendants "$serve_a")"
echo "# SIGKILL to host A's serve and its children: $(echo $ka)"
for p in $ka; do kill -9 "$p" 2>/dev/null; done
wait "$serve_a" 2>/dev/null
sleep 3
left=
for p in $ka; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
[ -z "$left" ] || echo "# still there after SIGKILL:$left"
# 3. host A started again, on the same port.
# shellcheck disable=SC2154
if start_serve "$tmp/a" "$sport_a"; then
	serve_a=$serve_pid
	tap ok "host A: serve starts again after SIGKILL, on the same port"
else
	tap not-ok "host A: serve starts again after SIGKILL, on the same port"
	tail -n 20 "$tmp/a/log/serve.log" | sed 's/^/# /'
fi
sleep 2
touch "$tmp/stop"
wait "$load_pid"
rc=$?
dp_relay hosts <"$tmp/kill.tap"
if [ $rc -gt 1 ]; then
	tap not-ok "hosts: hostsload.py kill ran to its end (exit $rc)"
	sed 's/^/# /' "$tmp/kill.err"
fi

dp_py hosts bench/load/hostsload.py "$@" --notes "$shared/outbox-notes" outbox

# No crash in the logs: no worker died but those killed here.
for h in a b; do
	H=$(echo "$h" | tr '[:lower:]' '[:upper:]')
	if grep -n -i -e 'segmentation' -e 'abort' -e 'sanitizer' \
	    -e 'signal 6' -e 'signal 11' "$tmp/$h/log/serve.log" \
	    >"$tmp/crash.log"; then
		tap not-ok "host $H: no crash in serve's log"
		head -n 20 "$tmp/crash.log" | sed 's/^/# /'
	else
		tap ok "host $H: no crash in serve's log"
	fi
done
dp_sanitizer hosts "$tmp/a/log/serve.log" "$tmp/b/log/serve.log"
for h in a b; do
	echo "# host $(echo "$h" | tr '[:lower:]' '[:upper:]'): serve's outcomes: $(grep -o \
	    'outcome=[a-z_]* status=[0-9]*' "$tmp/$h/log/serve.log" |
	    sort | uniq -c | tr -s ' \n' ' ')"
done
dp_done
