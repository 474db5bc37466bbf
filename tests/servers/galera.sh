# SPDX-License-Identifier: MIT
# shellcheck shell=sh disable=SC2034,SC2154 # values set and read by eval
# oncehook tests: a three-node Galera cluster of the tests' own (issue
# 36), from Debian's packages (mariadb-server, galera-4, rsync): each
# node a mariadbd made and started by mariadb.sh's pieces (md_prepare,
# md_options, md_launch: the same options, run as nobody as root) in
# DIR/nodeN, on 127.0.0.1 with ports of its own for SQL, gcomm
# (gmcast), IST and the rsync state transfer; node 1 bootstraps the
# cluster (--wsrep-new-cluster), 2 and 3 join it by rsync SST.  Stopped
# by PID.  Sourced after mariadb.sh and lib.sh (free_port).
#
#   gl_start DIR          the three nodes, each Synced in a cluster of 3;
#                         sets GL_DIR, GL_SOCK_N, GL_PORT_N (SQL),
#                         GL_PID_N.  1 (after saying why) if it cannot
#   gl_sql N SQL...       SQL as root on node N (socket)
#   gl_status N VAR       a status variable of node N (wsrep_...)
#   gl_wait_synced N [S]  until node N is Synced in a cluster of 3
#                         (S seconds, 120 by default)
#   gl_kill N             SIGKILL to node N (a crash), reaped
#   gl_restart N          node N started again on its data directory,
#                         its position recovered first (--wsrep-recover)
#                         so that it rejoins by IST if the others' gcache
#                         holds what it missed, else by SST; not waited
#   gl_stop               every node stopped (SIGTERM, SIGKILL after 30
#                         s), the joiners first
#   gl_user DB USER PW    md_user on node 1 (replicated to all)
#   gl_counters           "N: cert_failures=.. bf_aborts=.." a node a line

GL_PROVIDER=/usr/lib/galera/libgalera_smm.so

gl_need() {	# skip (77) without what the cluster needs
	md_bin >/dev/null 2>&1 ||
	    { echo "1..0 # SKIP no mariadbd (mariadb-server)"; exit 77; }
	[ -r "$GL_PROVIDER" ] ||
	    { echo "1..0 # SKIP no $GL_PROVIDER (galera-4)"; exit 77; }
	for gl_t in rsync mariadb-install-db; do
		command -v "$gl_t" >/dev/null 2>&1 ||
		    { echo "1..0 # SKIP $gl_t is not installed"; exit 77; }
	done
}

# The Galera options of node N (one a line, for md_launch).
gl_options() {	# gl_options N
	eval "gl_g=\$GL_GCOMM_$1 gl_i=\$GL_IST_$1 gl_s=\$GL_SST_$1 gl_p=\$GL_PORT_$1"
	# Short failure detection: a killed node leaves the view in seconds
	# (the cluster stalls until it does).
	printf '%s\n' --port="$gl_p" --bind-address=127.0.0.1 \
	    --wsrep-on=ON --wsrep-provider="$GL_PROVIDER" \
	    --wsrep-cluster-name=oncehook-test \
	    --wsrep-cluster-address="gcomm://$GL_PEERS" \
	    --wsrep-node-name="node$1" \
	    --wsrep-node-address="127.0.0.1:$gl_g" \
	    --wsrep-node-incoming-address="127.0.0.1:$gl_p" \
	    --wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$gl_g;ist.recv_addr=127.0.0.1:$gl_i;gcache.size=64M;evs.keepalive_period=PT0.5S;evs.inactive_check_period=PT0.5S;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT5S;evs.install_timeout=PT5S" \
	    --wsrep-sst-method=rsync \
	    --wsrep-sst-receive-address="127.0.0.1:$gl_s" \
	    --binlog-format=ROW --innodb-autoinc-lock-mode=2 \
	    --default-storage-engine=InnoDB
}

gl_launch() {	# gl_launch N OPT...
	gl_n=$1
	shift
	eval "MD_SOCK=\$GL_DIR/node$gl_n/run/mysqld.sock"
	MD_LOG=$GL_DIR/node$gl_n/log/mariadb.log
	gl_ifs=$IFS
	IFS='
'
	# shellcheck disable=SC2046 # one word a line
	set -- $(gl_options "$gl_n") "$@"
	IFS=$gl_ifs
	md_launch "$GL_DIR/node$gl_n" "$@" || return 1
	eval "GL_PID_$gl_n=\$MD_PID"
}

gl_start() {	# gl_start DIR
	GL_DIR=$1
	GL_PEERS=
	for gl_n in 1 2 3; do
		for gl_v in PORT GCOMM IST SST; do
			gl_f=$(free_port) || return 1
			eval "GL_${gl_v}_$gl_n=\$gl_f"
		done
		eval "GL_SOCK_$gl_n=\$1/node$gl_n/run/mysqld.sock"
		eval "GL_PEERS=\${GL_PEERS:+\$GL_PEERS,}127.0.0.1:\$GL_GCOMM_$gl_n"
		md_prepare "$1/node$gl_n" || return 1
		eval "GL_PID_$gl_n="
	done
	gl_launch 1 --wsrep-new-cluster || return 1
	gl_wait_state 1 Synced 1 60 || return 1
	# One joiner at a time: two rsync transfers from one donor at once
	# make the second wait for the first anyway.
	for gl_n in 2 3; do
		gl_launch "$gl_n" || return 1
		gl_wait_state "$gl_n" Synced "$gl_n" 120 || return 1
	done
	gl_wait_synced 1 30
}

gl_sql() {	# gl_sql N SQL...
	gl_n=$1
	shift
	eval "gl_sock=\$GL_SOCK_$gl_n"
	mariadb --no-defaults --socket="$gl_sock" -u root -N -B -e "$*"
}

gl_status() {	# gl_status N VAR
	gl_sql "$1" "SHOW GLOBAL STATUS LIKE '$2'" 2>/dev/null | cut -f2
}

# Until node N's wsrep_local_state_comment is STATE in a cluster of
# SIZE; 1 (saying why) if the node exits or after SECONDS.
gl_wait_state() {	# gl_wait_state N STATE SIZE SECONDS
	eval "gl_pid=\$GL_PID_$1"
	gl_i=0
	while [ "$gl_i" -lt $(($4 * 5)) ]; do
		if [ -z "$gl_pid" ] || ! kill -0 "$gl_pid" 2>/dev/null; then
			echo "galera: node $1 exited:" >&2
			tail -n 20 "$GL_DIR/node$1/log/mariadb.log" >&2
			return 1
		fi
		gl_got=$(gl_sql "$1" "SHOW GLOBAL STATUS WHERE Variable_name IN
		    ('wsrep_local_state_comment', 'wsrep_cluster_size')" \
		    2>/dev/null | sort | cut -f2 | tr '\n' ' ')
		# sorted: wsrep_cluster_size, then wsrep_local_state_comment
		[ "$gl_got" = "$3 $2 " ] && return 0
		sleep 0.2
		gl_i=$((gl_i + 1))
	done
	echo "galera: node $1 not $2 in a cluster of $3 after $4 s" \
	    "(last: $gl_got):" >&2
	tail -n 20 "$GL_DIR/node$1/log/mariadb.log" >&2
	return 1
}

gl_wait_synced() {	# gl_wait_synced N [SECONDS]
	gl_wait_state "$1" Synced 3 "${2:-120}"
}

gl_kill() {	# gl_kill N
	eval "gl_pid=\$GL_PID_$1"
	[ -n "$gl_pid" ] || return 0
	kill -9 "$gl_pid" 2>/dev/null
	wait "$gl_pid" 2>/dev/null
	eval "GL_PID_$1="
}

gl_restart() {	# gl_restart N
	gl_d=$GL_DIR/node$1
	# What mariadb's own galera_recovery does: the position of the last
	# committed transaction from InnoDB, so the node asks for IST.
	gl_ifs=$IFS
	IFS='
'
	# shellcheck disable=SC2046 # one word a line
	set -- "$1" $(md_options "$gl_d") $(gl_options "$1")
	IFS=$gl_ifs
	gl_n=$1
	shift
	"$(md_bin)" "$@" --wsrep-recover \
	    --log-error="$gl_d/log/recover.log" >/dev/null 2>&1
	gl_pos=$(sed -n 's/.*WSREP: Recovered position: *//p' \
	    "$gl_d/log/recover.log" | tail -n 1)
	if [ -n "$gl_pos" ]; then
		gl_launch "$gl_n" --wsrep-start-position="$gl_pos"
	else
		gl_launch "$gl_n"
	fi
}

gl_stop() {
	for gl_n in 3 2 1; do
		eval "MD_PID=\${GL_PID_$gl_n:-}"
		md_stop
		eval "GL_PID_$gl_n="
	done
}

gl_user() {	# gl_user DB USER PW
	MD_SOCK=$GL_SOCK_1
	md_user "$@"
}

gl_counters() {
	for gl_n in 1 2 3; do
		echo "node $gl_n: wsrep_local_cert_failures=$(gl_status \
		    "$gl_n" wsrep_local_cert_failures)" \
		    "wsrep_local_bf_aborts=$(gl_status "$gl_n" \
		    wsrep_local_bf_aborts)"
	done
}
