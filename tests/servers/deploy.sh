# SPDX-License-Identifier: MIT
# shellcheck shell=sh disable=SC2154 # top_srcdir, ONCEHOOK_BIN: the caller's
# oncehook deployment tests: Apache, nginx and serve from the shipped
# examples (tests/e2e-apache.sh, tests/e2e-nginx.sh, tests/serve.sh,
# tests/hosts.sh).  Part of tests/servers/lib.sh (POSIX sh).
#
# Each test starts a real server from a shipped file of conf-examples/,
# copied with only its ports, paths and secret values filled in, on
# 127.0.0.1 and a free port, in a temporary directory of its own; stops
# it by its PID (dp_stop, also run by the EXIT trap); and speaks TAP.
#
# As root (CI), oncehook runs as nobody:nogroup (the web server drops to
# that user, or setpriv does), so that a read-only database is read-only
# to oncehook; the run, log and database directories belong to nobody.
#
#   dp_init NAME          defaults, the temporary directory $tmp, traps
#   tap ok|not-ok TEXT    one numbered TAP line
#   bail TEXT             harness error: "Bail out!", exit 99
#   skip_all TEXT         "1..0 # SKIP", exit 77
#   dp_done               the plan; exit 0 or 1
#   dp_dir DIR            a run directory: bin/oncehook, sql/orders.sql,
#                         conf, htdocs, db, run, log, tmp
#   dp_need FILE PAT...   bail unless FILE holds each fixed string PAT
#   dp_init_db DIR        "oncehook init" as the backends' user, with
#                         the variables of DIR/conf/env
#   dp_backend DIR LOG CMD...  run CMD in the background as the backends'
#                         user with only PATH and DIR/conf/env in its
#                         environment, stderr to LOG; sets bg_pid
#   dp_wait_port PORT PID / dp_wait_socket PATH PID
#                         0 once it accepts connections (10 s at most)
#   dp_track PID          stop PID (TERM, then wait) at dp_stop
#   dp_stop               stop every tracked PID, last first
#   dp_scenarios LABEL MODE DIR URL PID [ARGS...]
#                         run tests/e2e/scenarios.py with
#                         --server-pid PID, the server's body limit and
#                         JSON error pages, and ARGS (the reload: see
#                         "scenarios.py --help"); renumber its lines as
#                         "LABEL: ..."
#   dp_sanitizer LABEL FILE...  one TAP line: no sanitizer report
#   dp_py SCRIPT ARGS...  run tests/deploy/SCRIPT (or SCRIPT, a path in the
#                         tree), renumber its lines
#   dp_nginx_conf DIR PORT  DIR/conf/nginx.conf: a minimal nginx on
#                         127.0.0.1:PORT around conf-examples/nginx.conf
#                         (its socket put in DIR/run); needs $nginx and
#                         $params (Debian's fastcgi_params)
#   dp_start_nginx DIR PORT LABEL  nginx -t, then start it (tracked;
#                         sets nginx_pid): two TAP lines, 0 once it
#                         answers

tmp=
dp_pids=
watchdog=

skip_all() {
	echo "1..0 # SKIP $*"
	exit 77
}

dp_track() {
	dp_pids="$1 $dp_pids"
}

dp_stop() {
	for p in $dp_pids; do
		kill "$p" 2>/dev/null
	done
	for p in $dp_pids; do
		# Not necessarily our child (a PID file's): poll.
		wait "$p" 2>/dev/null
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 200 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -9 "$p" 2>/dev/null
	done
	dp_pids=
}

# shellcheck disable=SC2317 # run by the trap
dp_cleanup() {
	dp_stop
	sv_tmp_done "$tmp"
}

dp_init() {	# dp_init NAME
	command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
	[ -x "$ONCEHOOK_BIN" ] ||
	    bail "ONCEHOOK_BIN=$ONCEHOOK_BIN is not an executable"
	if [ "$(id -u)" = 0 ]; then
		run_user=nobody
		run_group=$(id -gn nobody 2>/dev/null || echo nogroup)
		command -v setpriv >/dev/null 2>&1 ||
		    skip_all "as root, setpriv (util-linux) is needed"
	fi
	if command -v timeout >/dev/null 2>&1; then
		watchdog="timeout 600"
	fi
	# A python3 the backends' user may run (not one under /root).
	backend_python=$(backend_python3) ||
	    skip_all "no python3 that $run_user may run"
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-$1.XXXXXX") ||
	    bail "mktemp failed"
	chmod 0755 "$tmp"
	trap dp_cleanup EXIT
	trap 'exit 99' HUP INT TERM
	dp_start=$(date +%s)
}

dp_done() {
	echo "# $(basename "$0") took $(($(date +%s) - dp_start))s"
	echo "1..$n"
	[ $failed -eq 0 ] || exit 1
	exit 0
}

dp_dir() {	# dp_dir DIR
	mkdir -p "$1/conf" "$1/htdocs" "$1/db" "$1/run" "$1/log" "$1/bin" \
	    "$1/sql" "$1/tmp" || bail "mkdir in $1"
	# Copies, so that the backends' user can reach them wherever the
	# build directory lies (under /root, say).
	cp "$ONCEHOOK_BIN" "$1/bin/oncehook" || bail "copying $ONCEHOOK_BIN"
	cp "$top_srcdir/sql/actions/orders.sql" "$1/sql/orders.sql" ||
	    bail "copying orders.sql"
	cp "$top_srcdir/tests/deploy/supervise.py" "$1/bin/supervise.py" ||
	    bail "copying supervise.py"
	echo '<!doctype html><title>deploy</title>' >"$1/htdocs/index.html"
	chmod 0755 "$1" "$1/bin" "$1/sql" "$1/htdocs" "$1/conf"
	chmod 0644 "$1/sql/orders.sql" "$1/htdocs/index.html" \
	    "$1/bin/supervise.py"
	if [ -n "$run_user" ]; then
		chown -R "$run_user:$run_group" "$1/db" "$1/run" "$1/log" \
		    "$1/tmp" || bail "chown in $1"
	fi
	chmod 0700 "$1/db"
}

dp_need() {	# dp_need FILE PATTERN...
	f=$1
	shift
	for pat in "$@"; do
		grep -qF -e "$pat" "$f" || bail "$f: no $pat to fill in"
	done
}

# Exec a command with only PATH and the variables of DIR/conf/env (one
# NAME=value a line, as is) in its environment, as systemd gives a
# service its EnvironmentFile; "as_backend" first: as the backends' user.
# It replaces the shell: run it in a subshell, ( ... ) or &.
dp_env() {	# dp_env DIR [as_backend] CMD...
	envfile=$1/conf/env
	shift
	for v in $(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p'); do
		case $v in
		PATH) ;;
		*) unset "$v" 2>/dev/null ;;
		esac
	done
	while IFS= read -r kv; do
		case $kv in
		ONCEHOOK_*=*)
			# shellcheck disable=SC2163 # kv is NAME=value
			export "$kv" ;;
		esac
	done <"$envfile"
	if [ "$1" = as_backend ]; then
		shift
		if [ -n "$run_user" ]; then
			exec setpriv --reuid="$run_user" --regid="$run_group" \
			    --clear-groups -- "$@"
		fi
	fi
	exec "$@"
}

dp_init_db() {	# dp_init_db DIR
	grep -q '^ONCEHOOK_DB=' "$1/conf/env" ||
	    bail "no ONCEHOOK_DB in $1/conf/env"
	if ! (dp_env "$1" as_backend "$1/bin/oncehook" init) \
	    >"$1/log/init.log" 2>&1; then
		sed 's/^/# /' "$1/log/init.log"
		bail "oncehook init failed in $1"
	fi
}

# The PID is the command's own (dp_env execs it).
dp_backend() {	# dp_backend DIR LOG CMD...
	dp_d=$1
	dp_log=$2
	shift 2
	dp_env "$dp_d" as_backend "$@" 2>>"$dp_log" &
	bg_pid=$!
}

dp_wait_port() {	# dp_wait_port PORT PID
	i=0
	while [ $i -lt 100 ]; do
		kill -0 "$2" 2>/dev/null || return 1
		if python3 -c 'import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()' \
		    "$1" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

dp_wait_socket() {	# dp_wait_socket PATH PID
	i=0
	while [ $i -lt 100 ]; do
		kill -0 "$2" 2>/dev/null || return 1
		if python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(0.2)
s.connect(sys.argv[1])
s.close()' "$1" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# Renumber "ok - MODE: ..." / "not ok - MODE: ..." lines as LABEL's.
dp_relay() {	# dp_relay LABEL
	while IFS= read -r line; do
		case $line in
		"ok - "*)
			t=${line#ok - }
			tap ok "$1: ${t#*: }" ;;
		"not ok - "*)
			t=${line#not ok - }
			tap not-ok "$1: ${t#*: }" ;;
		*) printf '%s\n' "$line" ;;
		esac
	done
}

dp_scenarios() {	# dp_scenarios LABEL MODE DIR URL PID [ARGS...]
	dp_l=$1
	dp_m=$2
	dp_d=$3
	dp_u=$4
	dp_p=$5
	shift 5
	# The shipped Apache and nginx examples refuse a body over
	# ONCEHOOK_MAX_BODY by its Content-Length before oncehook runs (so
	# that it is never buffered), and answer that 413, and nginx and
	# mod_proxy_fcgi a backend that does not answer, with JSON pages of
	# their own.
	dp_lim=$(sed -n 's/^ONCEHOOK_MAX_BODY=//p' "$dp_d/conf/env")
	set -- --url "$dp_u" --env "$dp_d/conf/env" --mode "$dp_m" \
	    --server-pid "$dp_p" --busy-ms "$BUSY_MS" \
	    --server-body-limit "${dp_lim:-1048576}" --server-json-pages "$@"
	# shellcheck disable=SC2086 # watchdog is a command and its argument
	$watchdog python3 "$top_srcdir/tests/e2e/scenarios.py" "$@" \
	    >"$dp_d/log/scenarios.tap" 2>"$dp_d/log/scenarios.err"
	dp_rc=$?
	dp_relay "$dp_l" <"$dp_d/log/scenarios.tap"
	if [ $dp_rc -gt 1 ]; then
		tap not-ok "$dp_l: the scenarios ran to their end (exit $dp_rc)"
		sed 's/^/# /' "$dp_d/log/scenarios.err"
	fi
}

dp_py() {	# dp_py LABEL SCRIPT ARGS...
	dp_l=$1
	dp_s=$2
	shift 2
	# shellcheck disable=SC2086
	case $dp_s in
	*/*) dp_p=$top_srcdir/$dp_s ;;		# bench/load/...
	*) dp_p=$top_srcdir/tests/deploy/$dp_s ;;
	esac
	$watchdog python3 "$dp_p" "$@" \
	    >"$tmp/py.tap" 2>"$tmp/py.err"
	dp_rc=$?
	dp_relay "$dp_l" <"$tmp/py.tap"
	if [ $dp_rc -gt 1 ]; then
		tap not-ok "$dp_l: $dp_s ran to its end (exit $dp_rc)"
		sed 's/^/# /' "$tmp/py.err"
	fi
}

# The counters and the status endpoint (tests/e2e/statuscheck.py CMD)
# through the server at URL, with DIR/conf/env's variables.
dp_status() {	# dp_status LABEL CMD DIR URL [ARGS...]
	dp_l=$1
	dp_c=$2
	dp_d=$3
	dp_u=$4
	shift 4
	set -- --url "$dp_u" --env "$dp_d/conf/env" \
	    --bin "$dp_d/bin/oncehook" --label "$dp_l" "$@"
	if [ -n "$run_user" ]; then
		set -- "$@" --as "$run_user" --group "$run_group"
	fi
	$watchdog python3 "$top_srcdir/tests/e2e/statuscheck.py" "$dp_c" \
	    "$@" >"$tmp/st.tap" 2>"$tmp/st.err"
	dp_rc=$?
	dp_relay "$dp_l" <"$tmp/st.tap"
	if [ $dp_rc -gt 1 ]; then
		tap not-ok "$dp_l: statuscheck.py $dp_c ran to its end (exit $dp_rc)"
		sed 's/^/# /' "$tmp/st.err"
	fi
}

# CGI requests and the group-commit writer (src/writer/shared.h, "Under
# CGI"), through the endpoint "shop" (hmac-sha256) of DIR/conf/env, BIN
# the site's binary:
# - one request at a time starts no writer, even while another oncehook
#   process has the database open (oncehook work, as cron runs it);
# - requests that overlap (8 at once) start one and hand it their
#   events, each answered at once: the writer holds no pipe or socket of
#   the server's on its descriptors 0 to 2 (Apache's mod_cgi reads a CGI
#   program's standard error until its end) and none of the request's
#   variables; it ends by itself after.
dp_cgi_writer() {	# dp_cgi_writer LABEL DIR URL BIN
	dp_l=$1
	dp_db=$(sed -n 's/^ONCEHOOK_DB=//p' "$2/conf/env")
	dp_s=$(sed -n 's/^ONCEHOOK_SHOP_SECRET=//p' "$2/conf/env" |
	    cut -d' ' -f1)
	gone "$dp_db" || echo "# a writer still runs before the check"
	(dp_env "$2" as_backend "$4" work --max-seconds 4) \
	    >"$2/log/work.log" 2>&1 &
	dp_wp=$!
	sleep 1
	dp_bad=''
	for dp_i in 1 2 3; do
		dp_a=$(dp_post_shop "$3" "$dp_s" "cgi-alone-$$-$dp_i")
		[ "${dp_a% *}" = 200 ] || dp_bad="$dp_bad $dp_a"
	done
	dp_w=$(writers "$dp_db")
	wait "$dp_wp"
	[ -z "$dp_bad" ] && [ -z "$dp_w" ]
	check $? "$dp_l: one request at a time, oncehook work running: each processed by its own process (${dp_bad:-all 200}), no writer (${dp_w:-none})"
	# Up to 5 rounds of 8: the processes of one round overlap (each
	# holds its byte from its look for a writer to its exit).
	dp_r=0
	dp_w=''
	while [ -z "$dp_w" ] && [ $dp_r -lt 5 ]; do
		dp_r=$((dp_r + 1))
		dp_ps=''
		for dp_i in 1 2 3 4 5 6 7 8; do
			dp_post_shop "$3" "$dp_s" "cgi-overlap-$$-$dp_r-$dp_i" \
			    >"$2/log/overlap.$dp_i" &
			dp_ps="$dp_ps $!"
		done
		# Only these: the web server is a child of this shell too.
		for dp_p in $dp_ps; do
			wait "$dp_p"
		done
		dp_w=$(writers "$dp_db" | head -n 1)
	done
	dp_fd=''
	dp_ev=''
	if [ -n "$dp_w" ]; then
		for dp_f in 0 1 2; do
			dp_fd="$dp_fd $(readlink "/proc/$dp_w/fd/$dp_f")"
		done
		dp_ev=$(tr '\0' '\n' <"/proc/$dp_w/environ" | grep -v \
		    -e '^ONCEHOOK_' -e '^PATH=' -e '^TZ=' -e '^LANG=' -e '^LC_' \
		    -e '^TMPDIR=' -e '^SQLITE_TMPDIR=' | cut -d= -f1 |
		    tr '\n' ' ')
	fi
	dp_a=$(cat "$2"/log/overlap.* | tr '\n' ' ')
	# Every answer 200, none slower than 2 s (the writer's linger).
	printf '%s\n' "$dp_a" | awk '{ for (i = 1; i < NF; i += 2)
	    if ($i != 200 || $(i + 1) >= 2) exit 1 }' &&
	    [ -n "$dp_w" ] &&
	    ! printf '%s\n' "$dp_fd" | grep -q -e 'pipe:' -e 'socket:' &&
	    [ -z "$dp_ev" ]
	check $? "$dp_l: 8 requests at once started a writer (round $dp_r) and were answered at once (status, seconds: $dp_a; writer ${dp_w:-none}, descriptors$dp_fd; other variables: ${dp_ev:-none})"
	gone "$dp_db"
	check $? "$dp_l: the writer CGI requests started ends by itself"
}

# Deliver KEY to the endpoint "shop" at URL/shop, signed with SECRET;
# prints the status code and the seconds the answer took.
dp_post_shop() {	# dp_post_shop URL SECRET KEY
	_b=$(printf '{"eventId":"%s","type":"payment.success","metadata":{"orderId":"o_%s"},"transaction":{"id":"tx","amount":1,"currency":"EUR"}}' "$3" "$3")
	_h=$(printf '%s' "$_b" | openssl dgst -sha256 -hmac "$2" -r |
	    cut -d' ' -f1)
	curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -m 30 \
	    -H 'Content-Type: application/json' \
	    -H "X-Webhook-Signature: sha256=$_h" --data-binary "$_b" "$1/shop"
}

dp_sanitizer() {	# dp_sanitizer LABEL FILE...
	dp_l=$1
	shift
	if grep -n -s -e 'ERROR: AddressSanitizer' -e 'runtime error:' \
	    -e 'LeakSanitizer' -e 'ERROR: .*Sanitizer' "$@" \
	    >"$tmp/san.log" 2>/dev/null; then
		tap not-ok "$dp_l: no sanitizer report in the logs"
		head -n 40 "$tmp/san.log" | sed 's/^/# /'
	else
		tap ok "$dp_l: no sanitizer report in the logs"
	fi
}

# Fill conf-examples/oncehook.service into DIR: conf/oncehook.env (the
# /etc/oncehook/env its comments show, as an administrator writes it),
# conf/env (the same variables as systemd reads them: quotes removed) and
# conf/serve.cmd (its ExecStart= command line).  Only paths and values
# change: the binary, the socket, the database, the actions, the
# secrets, the busy timeout.
dp_fill_service() {	# dp_fill_service DIR
	unit=$top_srcdir/conf-examples/oncehook.service
	dp_need "$unit" \
	    'ExecStart=/usr/local/bin/oncehook serve --listen /run/oncehook/oncehook.sock' \
	    '#   ONCEHOOK_DB=/var/lib/oncehook/oncehook.db' \
	    '#   ONCEHOOK_STRIPE_SECRET=whsec_REPLACE_WITH_YOUR_SIGNING_SECRET' \
	    '#   ONCEHOOK_SHOP_SECRET="REPLACE_WITH_YOUR_SHARED_SECRET"' \
	    '=/usr/local/share/oncehook/sql/actions/orders.sql' \
	    '#   ONCEHOOK_BUSY_TIMEOUT_MS=5000'
	sed -n 's/^#[[:space:]]*\(ONCEHOOK_[A-Z0-9_]*=.*\)$/\1/p' "$unit" |
	    sed -e "s|=/var/lib/oncehook/oncehook.db\$|=$1/db/oncehook.db|" \
	    -e "s|=whsec_REPLACE_WITH_YOUR_SIGNING_SECRET\$|=$STRIPE_SECRET|" \
	    -e "s|=\"REPLACE_WITH_YOUR_SHARED_SECRET\"\$|=\"$SHOP_SECRET $SHOP_SECRET_OLD\"|" \
	    -e "s|=/usr/local/share/oncehook/sql/actions/orders.sql\$|=$1/sql/orders.sql|" \
	    -e "s|^ONCEHOOK_BUSY_TIMEOUT_MS=5000\$|ONCEHOOK_BUSY_TIMEOUT_MS=$BUSY_MS|" \
	    -e "s|=REPLACE_WITH_A_LONG_RANDOM_TOKEN\$|=$STATUS_TOKEN|" \
	    >"$1/conf/oncehook.env"
	grep -q '^ONCEHOOK_ENDPOINTS=' "$1/conf/oncehook.env" ||
	    bail "$unit: no ONCEHOOK_* lines in its comments"
	if grep -e REPLACE_WITH -e /usr/local/ -e /var/lib/oncehook \
	    "$1/conf/oncehook.env"; then
		bail "$unit: placeholders left after filling"
	fi
	# systemd's EnvironmentFile: a value in double quotes loses them.
	sed 's/^\([A-Z0-9_]*\)="\(.*\)"$/\1=\2/' "$1/conf/oncehook.env" \
	    >"$1/conf/env"
	sed -n 's/^ExecStart=//p' "$unit" |
	    sed -e "s|/usr/local/bin/oncehook|$1/bin/oncehook|" \
	    -e "s|/run/oncehook/oncehook.sock|$1/run/oncehook.sock|" \
	    >"$1/conf/serve.cmd"
	chmod 0600 "$1/conf/oncehook.env" "$1/conf/env"
}

# Start "oncehook serve" as oncehook.service's ExecStart= says, as the
# backends' user, with the service's environment, under
# tests/deploy/supervise.py (which stands in for systemd: SIGUSR1
# restarts it).  Sets serve_sup (the supervisor's PID, tracked); 0 once
# the socket answers.
dp_start_serve() {	# dp_start_serve DIR
	# shellcheck disable=SC2046 # the command line, split into words
	dp_backend "$1" "$1/log/serve.log" "$backend_python" \
	    "$1/bin/supervise.py" -- \
	    $(cat "$1/conf/serve.cmd")
	serve_sup=$bg_pid
	dp_track "$serve_sup"
	dp_wait_socket "$1/run/oncehook.sock" "$serve_sup"
}

# A test's nginx.conf around the filled example.
dp_nginx_conf() {	# dp_nginx_conf DIR PORT
	d=$1
	ex=$top_srcdir/conf-examples/nginx.conf
	dp_need "$ex" 'fastcgi_pass unix:/run/oncehook/oncehook.sock;' \
	    'include fastcgi_params;' 'client_max_body_size 1m;'
	sed -e "s|unix:/run/oncehook/oncehook.sock|unix:$d/run/oncehook.sock|" \
	    "$ex" >"$d/conf/oncehook.conf"
	if grep -v '^[[:space:]]*#' "$d/conf/oncehook.conf" |
	    grep -e 'unix:/run/oncehook'; then
		bail "nginx.conf: placeholders left after filling"
	fi
	# "include fastcgi_params" is relative to the configuration's
	# directory: Debian's file, beside it.
	cp "$params" "$d/conf/fastcgi_params" || bail "copying $params"
	{
		echo "# oncehook tests: a minimal nginx around the example"
		echo "daemon off;"
		echo "worker_processes 2;"
		echo "pid $d/run/nginx.pid;"
		echo "error_log $d/log/error.log warn;"
		if [ -n "$run_user" ]; then
			echo "user $run_user $run_group;"
		fi
		echo "events { worker_connections 512; }"
		echo "http {"
		echo "	access_log $d/log/access.log;"
		echo "	default_type application/octet-stream;"
		for t in client_body fastcgi proxy uwsgi scgi; do
			echo "	${t}_temp_path $d/tmp/$t;"
		done
		echo "	server {"
		echo "		listen 127.0.0.1:$2;"
		echo "		server_name localhost;"
		echo "		root $d/htdocs;"
		echo "		include $d/conf/oncehook.conf;"
		echo "	}"
		echo "}"
	} >"$d/conf/nginx.conf"
}

nginx_pid=
dp_start_nginx() {	# dp_start_nginx DIR PORT LABEL
	if ! "$nginx" -t -p "$1" -c "$1/conf/nginx.conf" -e "$1/log/error.log" \
	    >"$1/log/t.log" 2>&1; then
		tap not-ok "$3: nginx -t accepts the filled example"
		sed 's/^/# /' "$1/log/t.log"
		return 1
	fi
	tap ok "$3: nginx -t accepts the filled example"
	"$nginx" -p "$1" -c "$1/conf/nginx.conf" -e "$1/log/error.log" \
	    >"$1/log/stdout.log" 2>&1 &
	nginx_pid=$!
	dp_track "$nginx_pid"
	if ! dp_wait_port "$2" "$nginx_pid"; then
		tap not-ok "$3: nginx starts"
		sed 's/^/# /' "$1/log/stdout.log" "$1/log/error.log" 2>/dev/null
		return 1
	fi
	tap ok "$3: nginx starts"
}

# dp_each_deployment CONF RUN: the suite's checks through the three
# deployments of conf-examples/, one after the other, each a server
# with a database of its own, on 127.0.0.1 and free ports:
#
#   lighttpd + FastCGI  conf-examples/lighttpd-fastcgi.conf
#   lighttpd + CGI      conf-examples/lighttpd-cgi.conf
#   nginx + serve       conf-examples/nginx.conf in front of "oncehook
#                       serve", run as conf-examples/oncehook.service says
#
# (one skipped where its server is not installed).  The suite's two
# functions: CONF DIR FORMAT PORT FILE... fills the deployment's
# configuration FILEs (FORMAT lighttpd or env) for the server's PORT,
# before it starts; RUN LABEL DIR LOG BASE runs the checks against the
# base URL BASE (http://127.0.0.1:PORT/hooks), LOG its oncehook log.
dp_each_deployment() {
	de_conf=$1
	de_run=$2
	lighttpd=$(command -v lighttpd 2>/dev/null || true)
	[ -n "$lighttpd" ] || [ ! -x /usr/sbin/lighttpd ] ||
	    lighttpd=/usr/sbin/lighttpd
	if [ -n "$lighttpd" ]; then
		lt_find
		dp_each_lighttpd fastcgi "lighttpd + FastCGI"
		dp_each_lighttpd cgi "lighttpd + CGI"
	else
		tap skip "lighttpd + FastCGI, lighttpd + CGI" \
		    "lighttpd is not installed"
	fi
	nginx=$(command -v nginx 2>/dev/null || true)
	[ -n "$nginx" ] || [ ! -x /usr/sbin/nginx ] || nginx=/usr/sbin/nginx
	params=${NGINX_FASTCGI_PARAMS:-/etc/nginx/fastcgi_params}
	if [ -z "$nginx" ]; then
		tap skip "nginx + serve" "nginx is not installed"
	elif [ ! -r "$params" ]; then
		tap skip "nginx + serve" "no $params (nginx-common)"
	else
		dp_each_nginx "nginx + serve"
	fi
}

# The log's last lines after a failed check, as oncehook wrote them.
dp_each_log() {	# dp_each_log F0 LOG
	if [ "$failed" -gt "$1" ]; then
		tail -n 20 "$2" 2>/dev/null | sed 's/^/# oncehook: /'
	fi
}

dp_each_lighttpd() {	# dp_each_lighttpd MODE LABEL
	de_d=$tmp/$1
	lt_setup "$1" "$de_d"
	"$de_conf" "$de_d" lighttpd "$lt_port" "$de_d/conf/oncehook.conf"
	lt_env "$de_d"
	dp_init_db "$de_d"
	if ! lt_start "$de_d" "$1"; then
		return
	fi
	dp_track "$server_pid"
	tap ok "$2: lighttpd starts with conf-examples/lighttpd-$1.conf"
	de_t0=$(date +%s)
	de_f0=$failed
	"$de_run" "$2" "$de_d" "$de_d/log/breakage.log" \
	    "http://127.0.0.1:$lt_port/hooks"
	echo "# $2: $(($(date +%s) - de_t0))s"
	dp_stop
	server_pid=
	dp_each_log "$de_f0" "$de_d/log/breakage.log"
	lt_sanitizer "$de_d" "$1"
}

dp_each_nginx() {	# dp_each_nginx LABEL
	de_d=$tmp/serve
	dp_dir "$de_d"
	dp_fill_service "$de_d"
	de_port=$(free_port) || bail "no free port"
	"$de_conf" "$de_d" env "$de_port" "$de_d/conf/env" \
	    "$de_d/conf/oncehook.env"
	dp_init_db "$de_d"
	dp_nginx_conf "$de_d" "$de_port"
	if ! dp_start_serve "$de_d"; then
		tap not-ok "$1: oncehook serve starts as oncehook.service says"
		sed 's/^/# /' "$de_d/log/serve.log"
		dp_stop
		return
	fi
	tap ok "$1: oncehook serve starts as oncehook.service says"
	dp_start_nginx "$de_d" "$de_port" "$1" || { dp_stop; return; }
	de_t0=$(date +%s)
	de_f0=$failed
	"$de_run" "$1" "$de_d" "$de_d/log/serve.log" \
	    "http://127.0.0.1:$de_port/hooks"
	echo "# $1: $(($(date +%s) - de_t0))s"
	dp_stop
	dp_each_log "$de_f0" "$de_d/log/serve.log"
	dp_sanitizer "$1" "$de_d/log/serve.log" "$de_d/log/error.log"
}
