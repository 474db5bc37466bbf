#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook end to end behind a real nginx, from the shipped examples:
# conf-examples/nginx.conf (the location block, included in a server
# block of the test's own nginx.conf) in front of
#
#   serve       "oncehook serve" on a unix socket, run as
#               conf-examples/oncehook.service says (its ExecStart= and
#               the environment file its comments show)
#   spawn-fcgi  conf-examples/nginx-spawn-fcgi.sh start: spawn-fcgi with
#               four oncehook processes on the same socket, the same
#               environment file
#
# Each example is copied with only its paths and secret values filled
# in; nginx listens on 127.0.0.1 and a free port, runs in the foreground
# (daemon off) with its prefix in a temporary directory, and is stopped
# by its PID, as the backend is.  Through each runs the delivery suite of
# tests/e2e/scenarios.py, then the checks of tests/deploy/checks.py
# (routing, answers given before the body is read, the body limit at
# nginx, a stopped backend).
#
# Scenario 10 (read-only database) makes the backend's processes reopen
# the database by restarting them: SIGUSR1 to tests/deploy/supervise.py
# (scenarios.py --reload-signal), which stands in for systemd
# ("systemctl restart oncehook") and, for spawn-fcgi, re-runs the start
# script.  nginx refuses a body over its client_max_body_size itself and
# has JSON error pages of its own (413; 502/504 while the backend
# restarts): scenarios.py --server-body-limit and --server-json-pages
# (tests/servers/deploy.sh).
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped (no
# nginx or python3), 99 harness error.  As root, nginx's workers and
# oncehook run as nobody:nogroup.

set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"

nginx=$(command -v nginx 2>/dev/null || true)
[ -n "$nginx" ] || [ ! -x /usr/sbin/nginx ] || nginx=/usr/sbin/nginx
[ -n "$nginx" ] || skip_all "nginx is not installed"
params=${NGINX_FASTCGI_PARAMS:-/etc/nginx/fastcgi_params}
[ -r "$params" ] ||
    skip_all "no $params (nginx-common; or set NGINX_FASTCGI_PARAMS)"

dp_init nginx
for f in conf-examples/nginx.conf conf-examples/nginx-spawn-fcgi.sh \
    conf-examples/oncehook.service tests/e2e/scenarios.py \
    tests/deploy/checks.py tests/deploy/supervise.py; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done

after_run() {	# after_run DIR LABEL BACKEND_PID
	dp_py "$2" checks.py routing early limits \
	    --url "http://127.0.0.1:$port/hooks" --env "$1/conf/env"
	# The backend stopped, nginx still up.
	kill "$3"
	wait "$3"
	dp_py "$2" checks.py unavailable \
	    --url "http://127.0.0.1:$port/hooks" --env "$1/conf/env"
}

run_serve() {
	label="nginx + serve"
	d=$tmp/serve
	dp_dir "$d"
	dp_fill_service "$d"
	dp_init_db "$d"
	port=$(free_port) || bail "no free port"
	dp_nginx_conf "$d" "$port"
	if ! dp_start_serve "$d"; then
		tap not-ok "$label: oncehook serve starts as oncehook.service says"
		sed 's/^/# /' "$d/log/serve.log"
		dp_stop
		return
	fi
	tap ok "$label: oncehook serve starts as oncehook.service says"
	dp_start_nginx "$d" "$port" "$label" || { dp_stop; return; }
	dp_scenarios "$label" fastcgi "$d" "http://127.0.0.1:$port/hooks" \
	    "$serve_sup" --log "$d/log/serve.log" --reload-signal USR1
	# The counters and the status endpoint; again after a restart of
	# oncehook serve (SIGUSR1: the supervisor restarts it, as systemctl
	# restart would); the page in Chromium.
	dp_status "$label" mix "$d" "http://127.0.0.1:$port/hooks"
	rm -f "$d/run/oncehook.sock"
	kill -USR1 "$serve_sup"
	dp_wait_socket "$d/run/oncehook.sock" "$serve_sup" ||
	    tap not-ok "$label: oncehook serve restarts"
	dp_status "$label" restart "$d" "http://127.0.0.1:$port/hooks"
	dp_status "$label" page "$d" "http://127.0.0.1:$port/hooks" \
	    --shot "$shots/status-nginx-serve.png"
	after_run "$d" "$label" "$serve_sup"
	dp_stop
	dp_sanitizer "$label" "$d/log/serve.log" "$d/log/error.log"
}

# The basic (HTTP Basic auth) and mailgun schemes through nginx and
# oncehook serve: the service's environment with a postmark (basic) and
# a mailgun endpoint added (tests/e2e/basic_mailgun.py).
BASIC_PAIR=postmark:e2e-nginx-basic-password-7c2
MAILGUN_KEY=key-e2e-nginx-mailgun-0123456789
run_basic_mailgun() {
	label="nginx + serve, basic and mailgun"
	d=$tmp/basic-mailgun
	dp_dir "$d"
	dp_fill_service "$d"
	for f in "$d/conf/oncehook.env" "$d/conf/env"; do
		sed -i 's/^ONCEHOOK_ENDPOINTS=/ONCEHOOK_ENDPOINTS=postmark,mailgun,/' \
		    "$f"
		printf '%s\n' ONCEHOOK_POSTMARK_SCHEME=basic \
		    "ONCEHOOK_POSTMARK_SECRET=$BASIC_PAIR" \
		    "ONCEHOOK_POSTMARK_ACTIONS=$d/sql/orders.sql" \
		    ONCEHOOK_MAILGUN_SCHEME=mailgun \
		    "ONCEHOOK_MAILGUN_SECRET=$MAILGUN_KEY" \
		    "ONCEHOOK_MAILGUN_ACTIONS=$d/sql/orders.sql" >>"$f"
	done
	grep -q '^ONCEHOOK_ENDPOINTS=postmark,mailgun,' "$d/conf/env" ||
	    bail "no ONCEHOOK_ENDPOINTS to extend"
	dp_init_db "$d"
	port=$(free_port) || bail "no free port"
	nginx_conf "$d" "$port"
	if ! dp_start_serve "$d"; then
		tap not-ok "$label: oncehook serve starts"
		sed 's/^/# /' "$d/log/serve.log"
		dp_stop
		return
	fi
	start_nginx "$d" "$port" "$label" || { dp_stop; return; }
	python3 "$top_srcdir/tests/e2e/basic_mailgun.py" "$label" \
	    "http://127.0.0.1:$port/hooks" "$d/db/oncehook.db" \
	    "$BASIC_PAIR" "$MAILGUN_KEY" "$d/log/serve.log" \
	    >"$d/log/basic-mailgun.tap" 2>&1
	dp_relay "$label" <"$d/log/basic-mailgun.tap"
	dp_stop
	dp_sanitizer "$label" "$d/log/serve.log" "$d/log/error.log"
}

run_spawn() {
	label="nginx + spawn-fcgi"
	d=$tmp/spawn
	if ! command -v spawn-fcgi >/dev/null 2>&1; then
		tap ok "$label # SKIP spawn-fcgi is not installed"
		return
	fi
	dp_dir "$d"
	dp_fill_service "$d"
	# Here the status endpoint stays off (no token): /status is 404.
	sed -i '/^ONCEHOOK_STATUS_TOKEN=/d' "$d/conf/oncehook.env" \
	    "$d/conf/env"
	dp_init_db "$d"
	port=$(free_port) || bail "no free port"
	dp_nginx_conf "$d" "$port"
	script=$top_srcdir/conf-examples/nginx-spawn-fcgi.sh
	# shellcheck disable=SC2016 # the script's lines, as they are
	dp_need "$script" ': "${SPAWN_PROGRAM:=/usr/local/bin/oncehook}"' \
	    ': "${SPAWN_ENV_FILE:=/etc/oncehook/env}"' \
	    ': "${SPAWN_SOCKET:=/run/oncehook/oncehook.sock}"'
	# The script's settings, from the environment (as it allows): only
	# paths and users.
	SPAWN_PROGRAM=$d/bin/oncehook
	SPAWN_ENV_FILE=$d/conf/oncehook.env
	SPAWN_SOCKET=$d/run/oncehook.sock
	SPAWN_PIDFILE=$d/run/spawn-fcgi.pid
	SPAWN_LOG=$d/log/oncehook.log
	SPAWN_USER=${run_user:-$(id -un)}
	SPAWN_SOCKET_GROUP=${run_group:-$(id -gn)}
	export SPAWN_PROGRAM SPAWN_ENV_FILE SPAWN_SOCKET SPAWN_PIDFILE \
	    SPAWN_LOG SPAWN_USER SPAWN_SOCKET_GROUP
	# spawn-fcgi forks the processes and exits: supervise.py adopts them
	# (a subreaper) and re-runs the script on SIGUSR1.
	python3 "$top_srcdir/tests/deploy/supervise.py" --detaching -- \
	    sh "$script" start >"$d/log/spawn.log" 2>&1 &
	sup=$!
	dp_track "$sup"
	if ! dp_wait_socket "$SPAWN_SOCKET" "$sup"; then
		tap not-ok "$label: nginx-spawn-fcgi.sh start starts oncehook"
		sed 's/^/# /' "$d/log/spawn.log"
		dp_stop
		return
	fi
	# spawn-fcgi writes the PID file once all are started.
	i=0
	while [ $i -lt 50 ] && [ "$(wc -l <"$SPAWN_PIDFILE" 2>/dev/null)" != 4 ]
	do
		sleep 0.1
		i=$((i + 1))
	done
	procs=
	# shellcheck disable=SC2013 # one PID a line
	for p in $(cat "$SPAWN_PIDFILE" 2>/dev/null); do
		if [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$d/bin/oncehook" ]
		then
			procs="$procs $p"
		fi
	done
	if [ "$(echo "$procs" | wc -w)" -eq 4 ]; then
		tap ok "$label: nginx-spawn-fcgi.sh start starts 4 oncehook processes"
	else
		tap not-ok "$label: nginx-spawn-fcgi.sh start starts 4 oncehook processes"
		echo "# oncehook processes of $SPAWN_PIDFILE:$procs"
	fi
	mode=$(stat -c %a "$SPAWN_SOCKET")
	if [ "$mode" = 660 ]; then
		tap ok "$label: the socket is mode 0660"
	else
		tap not-ok "$label: the socket is mode 0660 (got $mode)"
	fi
	dp_start_nginx "$d" "$port" "$label" || { dp_stop; return; }
	dp_scenarios "$label" fastcgi "$d" "http://127.0.0.1:$port/hooks" \
	    "$sup" --log "$d/log/oncehook.log" --reload-signal USR1
	dp_py "$label" checks.py routing early limits \
	    --url "http://127.0.0.1:$port/hooks" --env "$d/conf/env"
	dp_status "$label" off "$d" "http://127.0.0.1:$port/hooks"
	# The script's own stop: by the PIDs of its PID file.
	pids=$(cat "$SPAWN_PIDFILE" 2>/dev/null)
	if sh "$script" stop >>"$d/log/spawn.log" 2>&1 &&
	    [ -n "$pids" ] && ! [ -e "$SPAWN_SOCKET" ]; then
		alive=
		for p in $pids; do
			if kill -0 "$p" 2>/dev/null &&
			    ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then
				alive="$alive $p"
			fi
		done
		if [ -z "$alive" ]; then
			tap ok "$label: nginx-spawn-fcgi.sh stop stops the processes and removes the socket"
		else
			tap not-ok "$label: nginx-spawn-fcgi.sh stop stops the processes (left:$alive)"
		fi
	else
		tap not-ok "$label: nginx-spawn-fcgi.sh stop stops the processes and removes the socket"
		sed 's/^/# /' "$d/log/spawn.log"
	fi
	dp_py "$label" checks.py unavailable \
	    --url "http://127.0.0.1:$port/hooks" --env "$d/conf/env"
	dp_stop
	dp_sanitizer "$label" "$d/log/oncehook.log" "$d/log/error.log"
}

# Screenshots of the status page, kept with the test's output.
shots=${ONCEHOOK_SHOTS:-$(pwd)/tests/screenshots}
mkdir -p "$shots" || bail "mkdir $shots"
run_serve
run_spawn
run_basic_mailgun
dp_done
