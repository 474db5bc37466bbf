#!/bin/bash
# SPDX-License-Identifier: MIT
# oncehook's benchmark (issue 9): in one run, with the same events and
# settings, the minimal FastCGI responder (the ceiling), oncehook under
# lighttpd mod_fastcgi with 1, 2 and 4 processes, synchronous normal and
# full, new and duplicate events; "oncehook serve" behind nginx; CGI
# against the minimal responder as CGI; SQLite's raw commit loop (full,
# normal) and an fdatasync loop; and the peers of bench/peers/, two
# kinds: the handler a site owner would write (minimal: PHP-FPM x4,
# Node x1) and oncehook's work re-done (same work: PHP-FPM with a
# persistent PDO, Node with better-sqlite3; PHP-FPM with PDO MySQL
# beside the MariaDB rows, on their server).  Prints a table (medians of
# the runs) and the ratios, and saves both under _build/bench/results/.
#
# usage: bench/run.sh [--smoke] [--seconds S] [--runs R] [--target-runs T]
#                     [--conns C] [--only REGEX] [--no-peers] [--all]
#                     [--bin PATH] [--keep]
#   --seconds S   load per row and run (default 10; smoke 2)
#   --runs R      runs per row, made in R passes over every row (run 1 of
#                 each row, then run 2 ...), so that the machine's drift
#                 over the run meets every row alike; the table shows
#                 their medians (default 3)
#   --target-runs T  runs of the rows of the targets' ratios, which each
#                 pass measures first, side by side (the ceiling, new
#                 events x4 for Stripe and hmac-sha256, the minimal
#                 peers, full x4, serve x16, the SQLite loops, CGI): R
#                 passes of every row, then T - R passes of those
#                 alone (default the larger of R and 5)
#   --conns C     wrk's connections (default 32), over 2 threads
#   --only REGEX  only the rows whose name matches (grep -E)
#   --no-peers    leave out PHP-FPM and Node
#   --all         also the rows left out to keep a run near 10 minutes:
#                 duplicates with 2 processes and with full for 1 and 2
#                 (the read path does not commit), the same-work peers'
#                 duplicates, the peers under full
#   --bin PATH    the oncehook to measure (default: build _build/bench)
#   --keep        keep the run directories (logs, databases)
#   --smoke       CI's check that the benchmark still works: a few
#                 seconds per oncehook row, one run, no peers, no loops;
#                 every row's checks must pass
# Exit status 0 if every row's checks passed, 1 if not, 2 on a harness
# error.  Needs wrk, lighttpd, nginx (tools/deps.sh); the peers need
# bench/deps.sh.  Load and servers stay on 127.0.0.1, on free ports;
# servers are stopped by PID.  The machine should be otherwise idle: the
# "other CPU" column shows what else ran.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
smoke=0 seconds='' runs='' truns='' conns=32 only='' peers=1 all=0 bin=''
keep=0
shared_bin=''
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1 ;;
	--seconds) seconds=$2; shift ;;
	--runs) runs=$2; shift ;;
	--target-runs) truns=$2; shift ;;
	--conns) conns=$2; shift ;;
	--only) only=$2; shift ;;
	--no-peers) peers=0 ;;
	--all) all=1 ;;
	--bin) bin=$2; shift ;;
	--keep) keep=1 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/run.sh: unknown option $1 (--help)" >&2; exit 2 ;;
	esac
	shift
done
# Each count a whole number from 1 up (bash would take a word as 0).
for opt in "seconds:$seconds" "runs:$runs" "target-runs:$truns" \
    "conns:$conns"; do
	case ${opt#*:} in
	'') ;;
	*[!0-9]*|0*)
		echo "bench/run.sh: --${opt%%:*} wants a whole number from 1" \
		    "up, not '${opt#*:}'" >&2
		exit 2 ;;
	esac
done
if [ $smoke -eq 1 ]; then
	: "${seconds:=2}" "${runs:=1}"
	peers=0
else
	: "${seconds:=10}" "${runs:=3}"
fi
# The targets' rows: at least as many runs as the others, 5 by default.
: "${truns:=$((runs > 5 ? runs : 5))}"
[ "$smoke" -eq 0 ] || truns=$runs
[ "$truns" -ge "$runs" ] || {
	echo "bench/run.sh: --target-runs must be at least --runs" >&2
	exit 2
}
out=$root/_build/bench
mkdir -p "$out/results" "$out/bin" || exit 2

# What is measured: oncehook (built here unless --bin), the minimal
# responder and the commit loops (cc, a few seconds).
if [ -z "$bin" ]; then
	bin=$out/oncehook
	if [ -f "$root/config.status" ]; then
		echo "bench/run.sh: the source tree was configured in" \
		    "place; run 'make distclean' there first" >&2
		exit 2
	fi
	if [ ! -f "$out/Makefile" ]; then
		echo "== building oncehook in $out"
		(cd "$root" && ./autogen.sh >/dev/null 2>&1) ||
		    { echo "bench/run.sh: autogen.sh failed" >&2; exit 2; }
		(cd "$out" && "$root/configure" >configure.out 2>&1) ||
		    { echo "bench/run.sh: configure failed ($out)" >&2; exit 2; }
	fi
	# Always brought up to date: a binary older than the sources
	# would be measured as theirs.
	(cd "$out" && make -j2 oncehook >make.out 2>&1) ||
	    { echo "bench/run.sh: the build failed ($out)" >&2; exit 2; }
	# The same with libfcgi, jansson and sqlite3 loaded as shared
	# libraries (configure --disable-static-libs; the Debian
	# package's build), for the CGI rows and one FastCGI row; the
	# default build links them in where their .a files link.
	if { [ -f "$out/shared/Makefile" ] || { mkdir -p "$out/shared" &&
	    (cd "$out/shared" && "$root/configure" --disable-static-libs \
	    >configure.out 2>&1); }; } &&
	    (cd "$out/shared" && make -j2 oncehook >make.out 2>&1); then
		shared_bin=$out/shared/oncehook
	else
		echo "== no shared-libs build (see $out/shared/*.out): its" \
		    "rows are left out"
	fi
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
[ -x "$bin" ] || { echo "bench/run.sh: no oncehook at $bin" >&2; exit 2; }
cc -O2 -o "$out/bin/minimal" "$root/bench/minimal/minimal.c" -lfcgi &&
cc -O2 -o "$out/bin/commitloop" "$root/bench/minimal/commitloop.c" \
    -lsqlite3 &&
cc -O2 -o "$out/bin/cgiloop" "$root/bench/minimal/cgiloop.c" ||
    { echo "bench/run.sh: cc failed" >&2; exit 2; }
for c in wrk lighttpd nginx python3 curl; do
	command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] || {
		echo "bench/run.sh: $c is not installed (tools/deps.sh)" >&2
		exit 2
	}
done
nginx=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
phpfpm=$(command -v php-fpm8.2 2>/dev/null || true)
for f in /usr/sbin/php-fpm*; do
	[ -n "$phpfpm" ] || [ ! -x "$f" ] || phpfpm=$f
done
# The peers' parts, asked only of the rows wanted (--only).
peers_need() {	# peers_need: exit 2 if a wanted peer row cannot run
	local miss=
	[ $peers -eq 1 ] || return 0
	if [ -z "$phpfpm" ] && wanted_any "php-fpm x4 normal new" \
	    "php-fpm x4 minimal new" "php-fpm x4 minimal dup" \
	    "php-fpm x4 normal new, mariadb"; then
		miss="PHP-FPM"
	fi
	if ! php -m 2>/dev/null | grep -qx pdo_mysql &&
	    wanted_any "php-fpm x4 normal new, mariadb"; then
		miss="$miss PDO MySQL (php8.2-mysql)"
	fi
	if [ ! -d "$root/bench/peers/node/node_modules/better-sqlite3" ] &&
	    wanted_any "node x4 normal new" "node x1 minimal new" \
	    "node x1 minimal dup"; then
		miss="$miss the Node peer's packages (npm ci)"
	fi
	[ -z "$miss" ] && return 0
	echo "bench/run.sh: the peers need bench/deps.sh ($miss); or" \
	    "--no-peers" >&2
	exit 2
}

# The helpers of the tests and the demo: tests/servers/lib.sh (run
# directories, "oncehook init" and "serve" as the backends' user, PIDs
# tracked and stopped at exit: its deploy.sh part) and tools/lighttpd.sh
# (lighttpd from the shipped examples).  The busy timeout stays the shipped 5000 ms.
# None of oncehook's configuration in this shell's environment: lighttpd
# passes its environment on to its processes, so a variable exported
# here (by the caller; lh_setup exports none) reaches every lighttpd
# row whatever the row's configuration says (a row's
# ONCEHOOK_GROUP_COMMIT=off did, until a5fa5b2).  The helpers' own
# (ONCEHOOK_BIN, ONCEHOOK_E2E_*) stay.
no_oncehook_env() {
	local v
	for v in $(compgen -e); do
		case $v in
		ONCEHOOK_BIN|ONCEHOOK_E2E_*) ;;
		ONCEHOOK_*) unset "$v" ;;
		esac
	done
}
no_oncehook_env
top_srcdir=$root
ONCEHOOK_BIN=$bin
ONCEHOOK_E2E_BUSY_MS=5000
LH_ROOT=$root
# shellcheck source=tests/servers/lib.sh
. "$root/tests/servers/lib.sh"
# shellcheck source=tools/lighttpd.sh
. "$root/tools/lighttpd.sh"
# A harness error, here and in the helpers sourced above (tap.sh's exits
# 99, automake's code): this script's is 2, as its head says.
bail() {
	echo "bench/run.sh: $*" >&2
	exit 2
}
dp_init bench
# The MariaDB rows: one server of the bench's own (tests/servers/
# mariadb.sh), a database made again for each run; left out, with a
# word, where mariadb-server is not installed or oncehook was built
# without the MariaDB store.
# The server runs only while its rows do, and starts again (a new
# directory) in each pass: an idle server still has threads that wake
# and files it may write, and no other row should share the machine with
# it.
md_url= md_starts=0 md_dir=
md_bench_start() {
	local d
	[ "$md_url" = none ] && return 1
	[ -n "$md_url" ] && return 0
	# shellcheck source=tests/servers/mariadb.sh
	. "$root/tests/servers/mariadb.sh"
	d=$tmp/mariadb$((md_starts += 1))
	if ! md_bin >/dev/null; then
		echo "== no MariaDB server (mariadb-server): its rows left out"
		md_url=none
		return 1
	# The server's own sizes and I/O, as Debian ships them (the tests'
	# are smaller, for many servers side by side; without io_uring the
	# server falls back to synchronous I/O): a smaller redo log is
	# checkpointed more often under load, and its flushes were the rows'
	# p99.
	elif ! md_start "$d" "" --innodb-buffer-pool-size=128M \
	    --innodb-log-file-size=96M --innodb-use-native-aio=1 \
	    >/dev/null 2>&1; then
		echo "== MariaDB did not start ($d/log): its rows left out" \
		    "from here on"
		md_url=none
		return 1
	fi
	md_dir=$d
	md_pw=$d/password
	echo benchpw >"$md_pw"
	chmod 644 "$md_pw"
	md_url="mysql://bench@localhost/bench?socket=$MD_SOCK"
	trap 'md_stop >/dev/null 2>&1; dp_cleanup' EXIT
}
md_running() {
	[ -n "$md_url" ] && [ "$md_url" != none ]
}
md_bench_stop() {	# and its files, written out first: not during
			# the next rows (the loops that fsync come next)
	md_running || return 0
	md_stop >/dev/null 2>&1
	md_url=
	[ $keep -eq 1 ] || rm -rf "$md_dir"
	sync
}
# Whether any of the rows named is wanted (--only).
wanted_any() {
	local n
	for n in "$@"; do
		wanted "$n" && return 0
	done
	return 1
}
md_fresh() {	# a fresh bench database: 0, or 1 (no server running)
	md_running || return 1
	md_sql "DROP DATABASE IF EXISTS bench" && md_user bench bench benchpw
}
if [ $keep -eq 1 ]; then
	ONCEHOOK_E2E_KEEP=1
fi
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
# Signatures carry one timestamp per pool; a tolerance of an hour lets
# one pool serve the whole run (the check's cost does not depend on it).
tolerance=3600
secret=$STRIPE_SECRET
stamp=$(date +%Y%m%d-%H%M%S)
[ $smoke -eq 1 ] && stamp=smoke-$stamp
results=$out/results/$stamp.jsonl
: >"$results"
measure="python3 $root/bench/measure.py"
ndup=100

# The pool of signed events (bench/pool.py): enough for 20,000 new
# events a second (a row that runs out says so and fails), made again
# when it is 50 minutes old; one pool per scheme (stripe, hmac-sha256),
# made when a row first needs it.  Sets pool.
pool_n=$(awk -v s="$seconds" 'BEGIN { n = int(s * 20000);
    print (n < 20000 ? 20000 : n) }')
pool_fresh() {	# pool_fresh SCHEME
	local ts
	pool=$tmp/pool-$1
	ts=$(cat "$pool/pool.ts" 2>/dev/null || echo 0)
	[ $(($(date +%s) - ts)) -lt 3000 ] && return 0
	echo "== signing $pool_n events, $1 (bench/pool.py)"
	python3 "$root/bench/pool.py" "$secret" "$pool_n" "$pool" "$1" ||
	    { echo "bench/run.sh: pool.py failed" >&2; exit 2; }
}

# The work of the issue's benchmark, the peers' work: verify, claim, one
# order row.  The shipped orders.sql also writes an outbox row for each
# paid order (docs/benchmark-history.md, "The outbox's cost"): the bench's copy leaves those
# statements out, and one row measures the shipped file as it is.
bench_actions=$tmp/orders-bench.sql
bench_actions_my=$tmp/orders-bench-mysql.sql
no_outbox() {	# no_outbox IN OUT
	awk '/^INSERT INTO outbox/ { skip = 1 }
	    !skip { print }
	    skip && /;[[:space:]]*$/ { skip = 0 }' "$1" >"$2" &&
	    ! grep -v '^--' "$2" | grep -qi outbox ||
	    bail "no_outbox: $1 still writes the outbox"
}
no_outbox "$root/sql/actions/orders.sql" "$bench_actions"
no_outbox "$root/sql/actions/mysql/orders.sql" "$bench_actions_my"

seq=0
# Each server setup leaves: srv_url, srv_pids (comma list, tracked),
# srv_app (process names that are the application), srv_db ("" if none);
# and may set srv_scheme (the pool's scheme, stripe unless set) and
# srv_claims (the table of the events where it is not "events").

# lighttpd from conf-examples/lighttpd-MODE.conf running PROG, PROCS
# processes (fastcgi), synchronous SYNC, ONCEHOOK_COUNTERS COUNTERS.
# With STORE mariadb, the bench's MariaDB database for ONCEHOOK_DB; with
# hmac, the example's endpoint "shop" (scheme hmac-sha256, its replay
# guard) is the one loaded.
srv_lighttpd() {	# srv_lighttpd fastcgi|cgi PROG PROCS SYNC [COUNTERS [STORE]]
	local run=$tmp/run$((seq += 1)) prog=$2 ctr=${5:-on}
	lh_setup "$1" "$run" "$prog" "$root"
	if [ "${6:-}" = mariadb ]; then
		md_fresh || bail "no MariaDB for a mariadb row"
		sed -i -e "/^[[:space:]]*#/!s|\"ONCEHOOK_DB\" => \"[^\"]*\",|\"ONCEHOOK_DB\" => \"$md_url\",\n\"ONCEHOOK_DB_PASSWORD_FILE\" => \"$md_pw\",|" \
		    -e "s|$root/sql/actions/orders.sql|$bench_actions_my|g" \
		    "$run/oncehook.conf"
	elif [ "${6:-}" != shipped ]; then
		sed -i "s|$root/sql/actions/orders.sql|$bench_actions|g" \
		    "$run/oncehook.conf"
	fi
	# nogroup: each FastCGI process commits its own claims.
	[ "${6:-}" != nogroup ] ||
	    sed -i 's|"ONCEHOOK_LOG" => "info",|&\n"ONCEHOOK_GROUP_COMMIT" => "off",|' \
	    "$run/oncehook.conf"
	sed -i -e "s|$LH_STRIPE_SECRET|$secret|" -e "s|$LH_SHOP_SECRET|$secret|" \
	    -e "s|\"max-procs\" => 2,|\"max-procs\" => $3,|" \
	    -e "s|\"ONCEHOOK_LOG\" => \"info\",|&\n\"ONCEHOOK_SYNCHRONOUS\" => \"$4\",\n\"ONCEHOOK_STRIPE_TOLERANCE\" => \"$tolerance\",\n\"ONCEHOOK_COUNTERS\" => \"$ctr\",|" \
	    "$run/oncehook.conf"
	grep -q "\"max-procs\" => $3," "$run/oncehook.conf" ||
	    [ "$1" = cgi ] || bail "lighttpd-fastcgi.conf: no max-procs to set"
	grep -q ONCEHOOK_SYNCHRONOUS "$run/oncehook.conf" ||
	    bail "lighttpd-$1.conf: no ONCEHOOK_LOG line to follow"
	# RUN/env again, from the configuration as the row runs it (its
	# secret, synchronous, tolerance, counters), for init below.
	lh_env "$run"
	grep -qx "ONCEHOOK_SYNCHRONOUS=$4" "$run/env" ||
	    bail "$run/env: not the row's configuration"
	# As nginx below: keep-alive connections are not cut every 1000
	# requests (either server's default).
	echo 'server.max-keep-alive-requests = 100000' >>"$run/lighttpd.conf"
	srv_db= srv_writer= srv_app=$(basename "$prog")
	if [ "$srv_app" = oncehook ]; then
		# The row's variables for its init only: exported into this
		# shell, they went on to every later row's lighttpd and so to
		# its processes (the nogroup row's ONCEHOOK_GROUP_COMMIT=off
		# turned the shared writer off for every row after it).
		lh_with_env "$run" "$bin" init >"$run/init.log" 2>&1 ||
		    { cat "$run/init.log"; bail "oncehook init failed"; }
		srv_db=$run/db/oncehook.db
		[ "${6:-}" != mariadb ] || srv_db=mysql:$MD_SOCK:bench
		# What the row's configuration says of the FastCGI processes'
		# shared writer, for writer_check: under full it starts at the
		# first new event (src/writer/shared.h); with
		# ONCEHOOK_GROUP_COMMIT=off never.
		[ "$1" = fastcgi ] && case ${6:-}.$4 in
		nogroup.*) srv_writer=no ;;
		mariadb.*) ;;
		*.full) srv_writer=yes ;;
		esac
	fi
	lh_start "$run" || bail "lighttpd did not start ($run/error.log)"
	dp_track "$LH_PID"
	srv_url=http://127.0.0.1:$LH_PORT/hooks/stripe
	if [ "${6:-}" = hmac ]; then
		srv_url=http://127.0.0.1:$LH_PORT/hooks/shop
		srv_scheme=hmac-sha256
	fi
	srv_pids=$LH_PID
	# The server's CPU counts the database's.
	[ "${6:-}" != mariadb ] || srv_pids=$srv_pids,$MD_PID
	srv_log=$run/oncehook.log
}

# nginx around a location block, listening on 127.0.0.1:PORT, as
# tests/e2e-nginx.sh's; no access log (lighttpd's examples have none).
bench_nginx() {	# bench_nginx DIR PORT LOCATION-FILE
	local d=$1 t
	cp "${NGINX_FASTCGI_PARAMS:-/etc/nginx/fastcgi_params}" \
	    "$d/conf/fastcgi_params" || bail "no fastcgi_params"
	{
		echo "daemon off;"
		echo "worker_processes 2;"
		echo "pid $d/run/nginx.pid;"
		echo "error_log $d/log/error.log warn;"
		[ -n "$run_user" ] && echo "user $run_user $run_group;"
		echo "events { worker_connections 1024; }"
		echo "http {"
		echo "	access_log off;"
		echo "	keepalive_requests 100000;"
		echo "	default_type application/octet-stream;"
		for t in client_body fastcgi proxy uwsgi scgi; do
			echo "	${t}_temp_path $d/tmp/$t;"
		done
		echo "	server {"
		echo "		listen 127.0.0.1:$2;"
		echo "		root $d/htdocs;"
		echo "		include $3;"
		echo "	}"
		echo "}"
	} >"$d/conf/nginx.conf"
	"$nginx" -p "$d" -c "$d/conf/nginx.conf" -e "$d/log/error.log" \
	    >"$d/log/nginx.out" 2>&1 &
	nginx_pid=$!
	dp_track "$nginx_pid"
	dp_wait_port "$2" "$nginx_pid" ||
	    { cat "$d/log/nginx.out" "$d/log/error.log"; bail "nginx"; }
}

# "oncehook serve" as conf-examples/oncehook.service starts it, behind
# nginx with conf-examples/nginx.conf.
srv_serve() {	# srv_serve WORKERS SYNC [nogroup]
	local d=$tmp/run$((seq += 1)) port pid
	dp_dir "$d"
	cp "$bench_actions" "$d/sql/orders.sql"
	dp_fill_service "$d"
	printf 'ONCEHOOK_SYNCHRONOUS=%s\nONCEHOOK_STRIPE_TOLERANCE=%s\n' \
	    "$2" "$tolerance" >>"$d/conf/env"
	sed -i "s/--workers 4/--workers $1/" "$d/conf/serve.cmd"
	grep -q -- "--workers $1" "$d/conf/serve.cmd" ||
	    bail "oncehook.service: no --workers 4 to change"
	[ "${3:-}" = nogroup ] &&
	    sed -i 's/$/ --no-group-commit/' "$d/conf/serve.cmd"
	dp_init_db "$d"
	# shellcheck disable=SC2046 # the command line, split into words
	dp_backend "$d" "$d/log/serve.log" $(cat "$d/conf/serve.cmd")
	pid=$bg_pid
	dp_track "$pid"
	dp_wait_socket "$d/run/oncehook.sock" "$pid" ||
	    { cat "$d/log/serve.log"; bail "oncehook serve did not start"; }
	sed "s|unix:/run/oncehook/oncehook.sock|unix:$d/run/oncehook.sock|" \
	    "$root/conf-examples/nginx.conf" >"$d/conf/oncehook.conf"
	port=$(free_port)
	bench_nginx "$d" "$port" "$d/conf/oncehook.conf"
	srv_url=http://127.0.0.1:$port/hooks/stripe
	srv_pids=$pid,$nginx_pid
	srv_app=oncehook
	srv_db=$d/db/oncehook.db
	srv_log=$d/log/serve.log
}

# A peer's run directory: a database made by "oncehook init" (the same
# tables, indexes and trigger), and conf/env with the variables the peers
# read (the same names as oncehook's).
peer_dir() {	# peer_dir DIR SYNC
	dp_dir "$1"
	cat >"$1/conf/env" <<ENV
ONCEHOOK_DB=$1/db/oncehook.db
ONCEHOOK_ENDPOINTS=stripe
ONCEHOOK_STRIPE_SCHEME=stripe
ONCEHOOK_STRIPE_SECRET=$secret
ONCEHOOK_STRIPE_ACTIONS=$1/sql/orders.sql
ONCEHOOK_STRIPE_TOLERANCE=$tolerance
ONCEHOOK_SYNCHRONOUS=$2
ONCEHOOK_BUSY_TIMEOUT_MS=5000
ENV
	chmod 0600 "$1/conf/env"
	dp_init_db "$1"
}

# The minimal peers' table (bench/peers/minimal.sql) in a peer's
# database, made as the backends' user (so are its -wal and -shm).
minimal_db() {	# minimal_db DIR
	as_backend "${backend_python:-python3}" -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript(sys.stdin.read())
c.close()' "$1/db/oncehook.db" <"$root/bench/peers/minimal.sql" ||
	    bail "minimal.sql in $1"
	srv_claims=processed_events
}

# PHP-FPM (pm static, PROCS children) behind nginx; with STORE mariadb,
# bench/peers/php/hook-mysql.php on the bench's MariaDB database (the
# same server and tables as the oncehook mariadb rows, made by "oncehook
# init"), with mariadb-minimal bench/peers/php/minimal-mysql.php there
# (its table: bench/peers/minimal-mysql.sql), with minimal
# bench/peers/php/minimal.php (the handler a site owner would write),
# else hook.php on SQLite.
srv_php() {	# srv_php PROCS SYNC [mariadb|mariadb-minimal|minimal]
	local d=$tmp/run$((seq += 1)) port pid kv
	if [ "${3:-}" = mariadb ] || [ "${3:-}" = mariadb-minimal ]; then
		md_fresh || bail "no MariaDB for a mariadb row"
		dp_dir "$d"
		cat >"$d/conf/env" <<ENV
ONCEHOOK_DB=$md_url
ONCEHOOK_DB_PASSWORD_FILE=$md_pw
ONCEHOOK_ENDPOINTS=stripe
ONCEHOOK_STRIPE_SCHEME=stripe
ONCEHOOK_STRIPE_SECRET=$secret
ONCEHOOK_STRIPE_ACTIONS=$bench_actions_my
ONCEHOOK_STRIPE_TOLERANCE=$tolerance
ENV
		chmod 0600 "$d/conf/env"
		dp_init_db "$d"
		if [ "$3" = mariadb-minimal ]; then
			md_sql "USE bench; $(cat "$root/bench/peers/minimal-mysql.sql")" ||
			    bail "minimal-mysql.sql"
			srv_claims=processed_events
			cp "$root/bench/peers/php/minimal-mysql.php" \
			    "$d/htdocs/hook.php"
		else
			cp "$root/bench/peers/php/hook-mysql.php" \
			    "$d/htdocs/hook.php"
		fi
	elif [ "${3:-}" = minimal ]; then
		peer_dir "$d" "$2"
		minimal_db "$d"
		cp "$root/bench/peers/php/minimal.php" "$d/htdocs/hook.php"
	else
		peer_dir "$d" "$2"
		cp "$root/bench/peers/php/hook.php" "$d/htdocs/hook.php"
	fi
	chmod 0644 "$d/htdocs/hook.php"
	{
		echo "[global]"
		echo "pid = $d/run/php-fpm.pid"
		echo "error_log = $d/log/php-fpm.log"
		echo "daemonize = no"
		echo "[bench]"
		if [ -n "$run_user" ]; then
			echo "user = $run_user"
			echo "group = $run_group"
		fi
		echo "listen = $d/run/php.sock"
		echo "listen.mode = 0666"
		echo "pm = static"
		echo "pm.max_children = $1"
		echo "pm.max_requests = 0"
		echo "clear_env = yes"
		while IFS= read -r kv; do
			echo "env[${kv%%=*}] = \"${kv#*=}\""
		done <"$d/conf/env"
	} >"$d/conf/php-fpm.conf"
	"$phpfpm" -F -y "$d/conf/php-fpm.conf" >"$d/log/php-fpm.out" 2>&1 &
	pid=$!
	dp_track "$pid"
	dp_wait_socket "$d/run/php.sock" "$pid" ||
	    { cat "$d/log/php-fpm.out" "$d/log/php-fpm.log"; bail "php-fpm"; }
	cat >"$d/conf/php.conf" <<CONF
location /hooks/ {
	client_max_body_size 1m;
	include fastcgi_params;
	fastcgi_param SCRIPT_FILENAME $d/htdocs/hook.php;
	fastcgi_pass unix:$d/run/php.sock;
}
CONF
	port=$(free_port)
	bench_nginx "$d" "$port" "$d/conf/php.conf"
	srv_url=http://127.0.0.1:$port/hooks/stripe
	srv_pids=$pid,$nginx_pid
	srv_app=$(basename "$phpfpm")
	srv_db=$d/db/oncehook.db
	if [ "${3:-}" = mariadb ] || [ "${3:-}" = mariadb-minimal ]; then
		srv_db=mysql:$MD_SOCK:bench
		# The server's CPU counts the database's.
		srv_pids=$srv_pids,$MD_PID
	fi
}

# Node (express + better-sqlite3), PROCS cluster workers, serving HTTP
# itself; with minimal, bench/peers/node/minimal.js, one process.
srv_node() {	# srv_node PROCS SYNC [minimal]
	local d=$tmp/run$((seq += 1)) port js=server.js
	peer_dir "$d" "$2"
	if [ "${3:-}" = minimal ]; then
		[ "$1" = 1 ] || bail "minimal.js is one process"
		minimal_db "$d"
		js=minimal.js
	fi
	port=$(free_port)
	dp_backend "$d" "$d/log/node.log" "$(command -v node)" \
	    "$root/bench/peers/node/$js" --listen "127.0.0.1:$port" \
	    --workers "$1"
	dp_track "$bg_pid"
	dp_wait_port "$port" "$bg_pid" ||
	    { cat "$d/log/node.log"; bail "node did not start"; }
	srv_url=http://127.0.0.1:$port/hooks/stripe
	srv_pids=$bg_pid
	srv_app=node
	srv_db=$d/db/oncehook.db
}

rows_ok=0 rows_bad=0
note_result() {	# note_result STATUS
	case $1 in
	0) rows_ok=$((rows_ok + 1)) ;;
	1) rows_bad=$((rows_bad + 1)) ;;
	*) echo "bench/run.sh: measure.py failed (exit $1)" >&2
	   rows_bad=$((rows_bad + 1)) ;;
	esac
}

wanted() {
	[ -z "$only" ] || printf '%s\n' "$1" | grep -Eq -- "$only"
}

# Group commit's batches: a writer (serve's, or the one the FastCGI
# processes started) logs its claims and transactions when it ends, after
# the server stopped; the line goes to $tmp/writers under the row's name.
writer_note() {	# writer_note NAME RUN
	local i=0 l=
	[ -n "${srv_log:-}" ] && [ -f "$srv_log" ] || return 0
	grep -q -e 'writer: started' -e 'with [0-9]* workers.*group commit' \
	    "$srv_log" || return 0
	while [ $i -lt 50 ]; do
		l=$(grep -h 'writer: [0-9]* claims in' "$srv_log" | tail -n 1)
		[ -z "$l" ] || break
		sleep 0.1
		i=$((i + 1))
	done
	[ -z "$l" ] ||
	    printf -- '- %s, run %s: %s\n' "$1" "$2" "${l#*writer: }" \
	    >>"$tmp/writers"
}

# Whether the FastCGI processes ran the configuration the row wrote,
# told by their shared writer: started where srv_lighttpd expects it
# (srv_writer yes), never where the row turned it off (no).  A variable
# of one row that reached the processes of another (a5fa5b2) fails the
# later row's run here.  Status 1 (and a line on standard error) if not.
writer_check() {	# writer_check NAME RUN EVENTS
	local started=no
	[ "$3" = new ] && [ -n "${srv_writer:-}" ] && [ -n "${srv_log:-}" ] ||
	    return 0
	grep -q 'writer: started' "$srv_log" 2>/dev/null && started=yes
	[ "$started" = "$srv_writer" ] && return 0
	echo "bench/run.sh: $1, run $2: the shared writer started: $started;" \
	    "the row's configuration says $srv_writer" >&2
	return 1
}

# A row under load: NAME, the events (new, dup, any), then the server
# setup and its arguments.  A fresh server and database for each run.
row() {	# row NAME EVENTS SETUP ARGS...
	local name=$1 mode=$2 r rc
	shift 2
	wanted "$name" || return 0
	for r in $pass; do
		srv_writer='' srv_scheme=stripe srv_claims=''
		"$@"
		pool_fresh "$srv_scheme"
		if [ "$mode" = dup ] || [ "$mode" = forged ]; then
			python3 "$root/bench/measure.py" deliver --url "$srv_url" \
			    --pool "$pool" --ndup "$ndup" || {
				rows_bad=$((rows_bad + 1))
				dp_stop
				srv_log=
				continue
			}
		fi
		$measure load --row "$name" --run "$r" --out "$results" \
		    --url "$srv_url" --mode "$mode" --pool "$pool" \
		    --ndup "$ndup" --seconds "$seconds" --conns "$conns" \
		    --threads 2 --pids "$srv_pids" --app "$srv_app" \
		    ${srv_db:+--db "$srv_db"} \
		    ${srv_claims:+--claims "$srv_claims"} --log "$tmp/wrk-$seq.log"
		rc=$?
		[ $rc -le 1 ] || sed 's/^/# /' "$tmp/wrk-$seq.log"
		dp_stop
		writer_note "$name" "$r"
		writer_check "$name" "$r" "$mode" || [ $rc -ne 0 ] || rc=1
		note_result $rc
		srv_log=
	done
}

# A commit loop: NAME, then commitloop's arguments (with @DB@ for a
# fresh database made by "oncehook init", @FILE@ for a file).
loop() {	# loop NAME ARGS...
	local name=$1 r d a args dbarg
	shift
	wanted "$name" || return 0
	for r in $pass; do
		d=$tmp/run$((seq += 1))
		peer_dir "$d" full
		args=()
		for a in "$@"; do
			case $a in
			@DB@) args+=("$d/db/oncehook.db") ;;
			@FILE@) args+=("$d/db/fdatasync.dat") ;;
			*) args+=("$a") ;;
			esac
		done
		dbarg=()
		[ "$1" = sqlite ] && dbarg=(--db "$d/db/oncehook.db")
		$measure loop --row "$name" --run "$r" --out "$results" \
		    "${dbarg[@]}" -- "$out/bin/commitloop" "${args[@]}"
		note_result $?
	done
}

echo "== bench/run.sh: ${seconds}s x $runs run(s) per row, $conns" \
    "connections (wrk -t2), oncehook $bin"
echo "== $("$bin" --version | tr '\n' ' ')"
echo "== $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
minimal=$out/bin/minimal
peers_need
start=$(date +%s)
# Every row, once: the runs are passes of plan() (one run of each row
# per pass), not a row's runs one after another, so that rows compared
# in a ratio were measured as close in time as the plan allows.
plan() {
	if [ $smoke -eq 1 ]; then
		row "minimal fcgi x1"              any srv_lighttpd fastcgi "$minimal" 1 normal
		row "oncehook fcgi x1 normal new"  new srv_lighttpd fastcgi "$bin" 1 normal
		row "oncehook fcgi x1 normal dup"  dup srv_lighttpd fastcgi "$bin" 1 normal
		row "oncehook fcgi x1 normal forged" forged \
		    srv_lighttpd fastcgi "$bin" 1 normal
		# Each row's configuration reaches its processes, and only
		# its (writer_check): the writer off, then on.
		row "oncehook fcgi x2 full new, no group commit" new \
		    srv_lighttpd fastcgi "$bin" 2 full on nogroup
		row "oncehook fcgi x2 full new"    new srv_lighttpd fastcgi "$bin" 2 full
		row "oncehook serve x2 normal new" new srv_serve 2 normal
		row "minimal cgi"                  any srv_lighttpd cgi "$minimal" 1 normal
		row "oncehook cgi normal new"      new srv_lighttpd cgi "$bin" 1 normal
		[ -z "$shared_bin" ] ||
		    row "oncehook cgi normal new, shared libs" new \
		    srv_lighttpd cgi "$shared_bin" 1 normal
		if wanted_any "oncehook fcgi x1 normal new, mariadb" &&
		    md_bench_start; then
			row "oncehook fcgi x1 normal new, mariadb" new \
			    srv_lighttpd fastcgi "$bin" 1 normal on mariadb
			md_bench_stop
		fi
	else
		# First, side by side, the rows of the targets' ratios
		# (bench/README.md): each new-event row with its peers and
		# its commit loop, so that a pass measures both sides of a
		# ratio within a minute or two of each other, not ten
		# minutes apart (the machine drifts).
		row "minimal fcgi x4"              any srv_lighttpd fastcgi "$minimal" 4 normal
		row "oncehook fcgi x4 normal new"  new \
		    srv_lighttpd fastcgi "$bin" 4 normal
		# A scheme without a signed timestamp: the example's endpoint
		# "shop", hmac-sha256, with its replay guard.
		row "oncehook fcgi x4 normal new, hmac-sha256" new \
		    srv_lighttpd fastcgi "$bin" 4 normal on hmac
		# Two kinds of peer: the handler a site owner would write
		# (minimal), and oncehook's work re-done (the same work).
		if [ $peers -eq 1 ]; then
			row "php-fpm x4 minimal new" new srv_php 4 normal minimal
			row "node x1 minimal new"    new srv_node 1 normal minimal
		fi
		row "oncehook fcgi x4 full new"    new \
		    srv_lighttpd fastcgi "$bin" 4 full
		# Group commit (the default): the largest batch is the workers'
		# number; without it, each worker commits its own.
		row "oncehook serve x16 full new"  new srv_serve 16 full
		# One process, no load generator: 5 s are plenty.
		ls=$(awk -v s="$seconds" 'BEGIN { print (s < 5 ? s : 5) }')
		loop "sqlite loop full"   sqlite full @DB@ "$ls"
		loop "sqlite loop normal" sqlite normal @DB@ "$ls"
		loop "fdatasync loop"     fdatasync @FILE@ "$ls"
		row "minimal cgi"                  any srv_lighttpd cgi "$minimal" 1 normal
		row "oncehook cgi normal new"      new srv_lighttpd cgi "$bin" 1 normal
		row "oncehook cgi normal dup"      dup srv_lighttpd cgi "$bin" 1 normal
		# Then the rest, unless this pass is one of the targets' own.
		[ "$pass" -le "$runs" ] || return 0
		for sync in normal full; do
			for p in 1 2; do
				row "oncehook fcgi x$p $sync new" new \
				    srv_lighttpd fastcgi "$bin" "$p" "$sync"
			done
		done
		for sync in normal full; do
			for p in 1 2 4; do
				[ $all -eq 1 ] || [ "$sync.$p" = normal.1 ] ||
				    [ $p = 4 ] || continue
				row "oncehook fcgi x$p $sync dup" dup \
				    srv_lighttpd fastcgi "$bin" "$p" "$sync"
			done
		done
		# Under full each process has one request in flight while its
		# claim waits for the fsync: more processes than cores make larger
		# batches (docs/deploying.md, docs/benchmark-history.md).
		row "oncehook fcgi x8 full new" new \
		    srv_lighttpd fastcgi "$bin" 8 full
		# Group commit (the default; FastCGI processes share a writer under
		# full only) against each process committing its own.
		row "oncehook fcgi x4 full new, no group commit" new \
		    srv_lighttpd fastcgi "$bin" 4 full on nogroup
		row "oncehook fcgi x4 normal new, shipped orders.sql" new \
		    srv_lighttpd fastcgi "$bin" 4 normal on shipped
		# The counters' cost on the paths that must stay cheap: the same
		# duplicates, and a forged flood, with ONCEHOOK_COUNTERS off.
		row "oncehook fcgi x4 normal dup, counters off" dup \
		    srv_lighttpd fastcgi "$bin" 4 normal off
		row "oncehook fcgi x4 normal forged" forged \
		    srv_lighttpd fastcgi "$bin" 4 normal
		row "oncehook fcgi x4 normal forged, counters off" forged \
		    srv_lighttpd fastcgi "$bin" 4 normal off
		row "oncehook serve x4 normal new" new srv_serve 4 normal
		row "oncehook serve x4 normal dup" dup srv_serve 4 normal
		row "oncehook serve x4 full new"   new srv_serve 4 full
		row "oncehook serve x4 full new, no group commit" new \
		    srv_serve 4 full nogroup
		row "oncehook serve x16 full new, no group commit" new \
		    srv_serve 16 full nogroup
		if [ -n "$shared_bin" ]; then
			row "oncehook cgi normal new, shared libs" new \
			    srv_lighttpd cgi "$shared_bin" 1 normal
			row "oncehook cgi normal dup, shared libs" dup \
			    srv_lighttpd cgi "$shared_bin" 1 normal
			# The memory of a FastCGI process that maps the three
			# libraries too.
			row "oncehook fcgi x4 normal new, shared libs" new \
			    srv_lighttpd fastcgi "$shared_bin" 4 normal
		fi
		# The site's own database (MariaDB, a unix socket, the same
		# machine): new events and duplicates, FastCGI and CGI (one
		# connection per request there).
		# The PHP peer on the same server is their anchor.
		md_rows=("oncehook fcgi x4 normal new, mariadb"
		    "oncehook fcgi x4 normal dup, mariadb"
		    "oncehook cgi normal new, mariadb"
		    "oncehook cgi normal dup, mariadb")
		[ $peers -eq 0 ] || md_rows+=("php-fpm x4 normal new, mariadb"
		    "php-fpm x4 normal dup, mariadb"
		    "php-fpm x4 minimal new, mariadb"
		    "php-fpm x4 minimal dup, mariadb")
		if wanted_any "${md_rows[@]}" && md_bench_start; then
			row "${md_rows[0]}" new \
			    srv_lighttpd fastcgi "$bin" 4 normal on mariadb
			row "${md_rows[1]}" dup \
			    srv_lighttpd fastcgi "$bin" 4 normal on mariadb
			row "${md_rows[2]}" new \
			    srv_lighttpd cgi "$bin" 1 normal on mariadb
			row "${md_rows[3]}" dup \
			    srv_lighttpd cgi "$bin" 1 normal on mariadb
			if [ $peers -eq 1 ]; then
				row "${md_rows[4]}" new srv_php 4 normal mariadb
				row "${md_rows[5]}" dup srv_php 4 normal mariadb
				row "${md_rows[6]}" new srv_php 4 normal \
				    mariadb-minimal
				row "${md_rows[7]}" dup srv_php 4 normal \
				    mariadb-minimal
			fi
			md_bench_stop
		fi
		# The other peers: the same-work ones, and the minimal peers'
		# duplicates (the same-work peers' only with --all: the minimal
		# peers' stand for the read path's peers).
		if [ $peers -eq 1 ]; then
			row "php-fpm x4 normal new" new srv_php 4 normal
			row "node x4 normal new"    new srv_node 4 normal
			row "php-fpm x4 minimal dup" dup srv_php 4 normal minimal
			row "node x1 minimal dup"    dup srv_node 1 normal minimal
			if [ $all -eq 1 ]; then
				row "php-fpm x4 normal dup" dup srv_php 4 normal
				row "node x4 normal dup"    dup srv_node 4 normal
				row "php-fpm x4 minimal full new" new \
				    srv_php 4 full minimal
				row "node x1 minimal full new" new \
				    srv_node 1 full minimal
				row "php-fpm x4 full new" new srv_php 4 full
				row "node x4 full new"    new srv_node 4 full
			fi
		fi
	fi
}
for pass in $(seq "$truns"); do
	if [ "$pass" -gt "$runs" ]; then
		echo "== pass $pass of $truns: the targets' rows only"
	elif [ "$truns" -gt 1 ]; then
		echo "== pass $pass of $truns"
	fi
	plan
done
echo "== took $(($(date +%s) - start))s"
python3 "$root/bench/report.py" "$results" "$out/results/$stamp.md"
if [ -s "$tmp/writers" ]; then
	{
		echo
		echo "Group commit: what each writer said when it ended (claims,"
		echo "transactions, claims per transaction, the largest batch; one"
		echo "fsync per transaction under full):"
		echo
		# By row, in the plan's order (the passes wrote them in
		# turn).
		awk '{ k = $0; sub(/, run [0-9]+: .*/, "", k)
		    if (!(k in n)) order[++rows] = k
		    line[k, ++n[k]] = $0 }
		    END { for (i = 1; i <= rows; i++)
			for (j = 1; j <= n[order[i]]; j++)
				print line[order[i], j] }' "$tmp/writers"
	} | tee -a "$out/results/$stamp.md"
fi
echo "== saved $out/results/$stamp.md and $(basename "$results")"
echo "bench: $rows_ok row runs passed their checks, $rows_bad failed"
[ $rows_bad -eq 0 ]
