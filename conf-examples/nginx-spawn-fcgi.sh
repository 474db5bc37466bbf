#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook under spawn-fcgi, for nginx (conf-examples/nginx.conf): the
# alternative to "oncehook serve" (conf-examples/oncehook.service) where
# spawn-fcgi is already how FastCGI programs are run.
#
#   nginx-spawn-fcgi.sh start    start PROCS oncehook processes on SOCKET
#   nginx-spawn-fcgi.sh stop     stop them (each finishes the request it
#                                is handling), remove the socket
#
# spawn-fcgi opens the socket, starts the processes as RUN_USER and
# exits: nothing watches them afterwards.  A process that dies is not
# replaced, and the remaining ones carry the load until none is left.
# oncehook serve replaces a dead worker and is supervised by systemd:
# prefer it.  (Under daemontools, runit or systemd, "spawn-fcgi -n"
# runs one process in the foreground for them to supervise.)
#
# The configuration is the same /etc/oncehook/env as oncehook.service's
# (one VARIABLE=value a line, double quotes around a value with spaces,
# no other shell syntax), read here by the shell as root and handed to
# oncehook in its environment, and nothing else of this script's
# environment is.  Run this script as root: spawn-fcgi then drops to
# RUN_USER and gives the socket to SOCKET_GROUP, the group nginx runs as
# (mode 0660: nginx may connect, other local users may not).
#
# Install (Debian; as root):
#
#   1. apt install spawn-fcgi; a user, the database directory, the
#      configuration and the database exactly as in oncehook.service
#      (steps 1 to 3).
#   2. cp nginx-spawn-fcgi.sh /usr/local/sbin/oncehook-spawn-fcgi
#      and run "oncehook-spawn-fcgi start" at boot (before nginx); for
#      example from /etc/rc.local, or a systemd unit with Type=forking,
#      ExecStart=/usr/local/sbin/oncehook-spawn-fcgi start and
#      ExecStop=/usr/local/sbin/oncehook-spawn-fcgi stop.
#   3. nginx.conf as that file says.
#
# Every setting below can also be given in the environment.

set -eu

# The oncehook binary.
: "${SPAWN_PROGRAM:=/usr/local/bin/oncehook}"
# Its configuration (the ONCEHOOK_* variables).
: "${SPAWN_ENV_FILE:=/etc/oncehook/env}"
# The socket nginx's fastcgi_pass names, and the PID file of the
# processes.  For TCP, spawn-fcgi -a 127.0.0.1 -p 9000 instead of -s:
# never let spawn-fcgi bind its default 0.0.0.0, because whoever reaches
# a FastCGI socket sets every CGI variable.
: "${SPAWN_SOCKET:=/run/oncehook/oncehook.sock}"
: "${SPAWN_PIDFILE:=/run/oncehook/spawn-fcgi.pid}"
# Processes: each handles one request at a time.
: "${SPAWN_PROCS:=4}"
# Who runs oncehook, and the group that may use the socket (nginx's).
: "${SPAWN_USER:=oncehook}"
: "${SPAWN_SOCKET_GROUP:=www-data}"
# Where oncehook's log lines go (one per request), appended to.
# spawn-fcgi sends its processes' stderr to /dev/null: a shell in between
# sends it here instead.  Created for SPAWN_USER if missing.  (Rotate it
# with logrotate's copytruncate.)  Empty: no log.
: "${SPAWN_LOG:=/var/log/oncehook.log}"

start() {
	[ -r "$SPAWN_ENV_FILE" ] || {
		echo "$0: cannot read $SPAWN_ENV_FILE" >&2
		exit 1
	}
	rundir=$(dirname "$SPAWN_SOCKET")
	owner=
	if [ "$(id -u)" = 0 ]; then
		# The socket's directory: oncehook's, readable by nginx's group.
		install -d -o "$SPAWN_USER" -g "$SPAWN_SOCKET_GROUP" -m 0750 \
		    "$rundir"
		owner="-u $SPAWN_USER -U $SPAWN_USER -G $SPAWN_SOCKET_GROUP"
	else
		mkdir -p "$rundir"
	fi
	if [ -n "$SPAWN_LOG" ]; then
		if [ ! -e "$SPAWN_LOG" ] && [ "$(id -u)" = 0 ]; then
			install -m 0600 -o "$SPAWN_USER" \
			    /dev/null "$SPAWN_LOG"
		fi
		# shellcheck disable=SC2016 # expanded by that shell
		set -- /bin/sh -c 'exec "$0" 2>>"$1"' "$SPAWN_PROGRAM" \
		    "$SPAWN_LOG"
	else
		set -- "$SPAWN_PROGRAM"
	fi
	# oncehook gets PATH and the file's variables, nothing else.
	# shellcheck disable=SC2086,SC2016 # owner holds several options;
	# the sh -c script expands its own arguments
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	    sh -c 'set -a; . "$1"; shift; exec "$@"' sh "$SPAWN_ENV_FILE" \
	    spawn-fcgi -s "$SPAWN_SOCKET" -M 0660 $owner \
	    -F "$SPAWN_PROCS" -P "$SPAWN_PIDFILE" -- "$@"
}

stop() {
	[ -r "$SPAWN_PIDFILE" ] || {
		echo "$0: no $SPAWN_PIDFILE: not started?" >&2
		exit 1
	}
	pids=$(cat "$SPAWN_PIDFILE")
	# shellcheck disable=SC2086 # one PID a line
	kill -TERM $pids 2>/dev/null || true
	# Each finishes the request it is handling: wait for them (at most
	# 30 s, then they are killed).
	i=0
	while [ $i -lt 300 ]; do
		alive=
		for p in $pids; do
			if kill -0 "$p" 2>/dev/null; then
				alive=yes
			fi
		done
		[ -n "$alive" ] || break
		sleep 0.1
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	[ -z "$alive" ] || kill -KILL $pids 2>/dev/null || true
	rm -f "$SPAWN_PIDFILE" "$SPAWN_SOCKET"
}

case ${1:-} in
start) start ;;
stop) stop ;;
*)
	echo "usage: $0 start|stop" >&2
	exit 2
	;;
esac
