# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# oncehook tests: a real MariaDB server of the tests' own (issue 13),
# from Debian's packages (mariadb-server): a data directory made by
# mariadb-install-db in a temporary directory, the server run as an
# unprivileged user on a unix socket there (no TCP unless asked), stopped
# by PID.  Sourced (POSIX sh).
#
#   md_start DIR [PORT [OPT...]]   make DIR/data and start the server;
#                         sets MD_SOCK (the socket), MD_PID, MD_LOG; with
#                         PORT it also listens on 127.0.0.1:PORT (PORT ""
#                         for the socket alone); OPT... are more of the
#                         server's options (--ssl-cert=... in tls.sh).
#                         Returns 1 (after saying why on stderr) if it
#                         cannot.
#   md_sql SQL...         run SQL as the server's root over the socket
#   md_user DB USER PASSWORD   a database and a user with the privileges
#                         oncehook needs on it (docs/stores.md)
#   md_stop               SIGTERM, wait for the PID, SIGKILL after 30 s
#   md_kill               SIGKILL (a crash), no wait for a clean stop
#   md_test_env NAME [OPT...]  for a test program: start a server (with
#                         OPT..., more of its options) in a new
#                         temporary directory (removed, and the server
#                         stopped, at exit), a database and user NAME,
#                         and export ONCEHOOK_TEST_MYSQL (its URL) and
#                         ONCEHOOK_TEST_MYSQL_PW (the password file);
#                         exits 77 without mariadb-server, 99 if it
#                         does not start

md_bin() {
	for b in /usr/sbin/mariadbd /usr/sbin/mysqld; do
		[ -x "$b" ] && { echo "$b"; return 0; }
	done
	return 1
}

md_start() {	# md_start DIR [PORT [OPT...]]
	md_prepare "$1" || return 1
	md_s=$1
	md_p=${2:-}
	shift
	[ $# -eq 0 ] || shift
	if [ -n "$md_p" ]; then
		md_launch "$md_s" --port="$md_p" --bind-address=127.0.0.1 "$@"
	else
		md_launch "$md_s" --skip-networking "$@"
	fi || return 1
	md_wait 300
}

# The pieces of md_start, for servers of other shapes (galera.sh):
#   md_prepare DIR        DIR's folders and a data directory
#                         (mariadb-install-db); sets MD_DIR, MD_SOCK,
#                         MD_LOG and md_user_ (who the server runs as)
#   md_options DIR        the options every server of the tests runs
#                         with, one a line (for set -- "$@")
#   md_launch DIR OPT...  start mariadbd in the background with
#                         md_options and OPT...; sets MD_PID
#   md_wait [TRIES]       until the server answers on MD_SOCK (0.1 s a
#                         try, 300 by default); 1 if it exited or not
md_prepare() {	# md_prepare DIR
	MD_DIR=$1
	MD_SOCK=$1/run/mysqld.sock
	MD_LOG=$1/log/mariadb.log
	MD_PID=
	mkdir -p "$1/data" "$1/run" "$1/log" "$1/tmp" || return 1
	md_user_=$(id -un)
	if [ "$(id -u)" = 0 ]; then
		md_user_=nobody
		chown -R nobody "$1/data" "$1/run" "$1/log" "$1/tmp" || return 1
		# The server must reach its directory through its parents.
		chmod o+x "$1" "$(dirname "$1")" 2>/dev/null
	fi
	md_bin >/dev/null || { echo "md_start: no mariadbd (mariadb-server)" >&2; return 1; }
	# A bootstrap that fails is tried once more on an empty data
	# directory (seen once in CI among thousands of starts, its
	# cause not kept); what it said is shown either way.
	for md_try_ in 1 2; do
		mariadb-install-db --no-defaults --datadir="$1/data" \
		    --user="$md_user_" --auth-root-authentication-method=socket \
		    --skip-test-db >"$1/log/install.log" 2>&1 && return 0
		echo "md_start: mariadb-install-db failed (try $md_try_):" >&2
		grep -E '\[(ERROR|Warning)\]|rror' "$1/log/install.log" |
		    head -n 20 >&2
		rm -rf "$1/data" && mkdir -p "$1/data" || return 1
		[ "$(id -u)" != 0 ] || chown nobody "$1/data" || return 1
	done
	return 1
}

md_options() {	# md_options DIR
	# No native AIO: the servers of suites run side by side (tools/test.sh)
	# would together exhaust fs.aio-max-nr, and the last one not start.
	printf '%s\n' --no-defaults --datadir="$1/data" \
	    --socket="$1/run/mysqld.sock" --pid-file="$1/run/mariadb.pid" \
	    --tmpdir="$1/tmp" --log-error="$1/log/mariadb.log" \
	    --user="$md_user_" \
	    --innodb-buffer-pool-size=64M --innodb-log-file-size=16M \
	    --innodb-use-native-aio=0 --max-connections=200
}

md_launch() {	# md_launch DIR OPT...
	md_d=$1
	shift
	md_exe=$(md_bin) || { echo "md_start: no mariadbd (mariadb-server)" >&2; return 1; }
	# The options hold no newline (paths of the tests' temporary folders).
	md_ifs=$IFS
	IFS='
'
	# shellcheck disable=SC2046 # one word a line
	set -- $(md_options "$md_d") "$@"
	IFS=$md_ifs
	"$md_exe" "$@" >/dev/null 2>&1 &
	MD_PID=$!
}

md_wait() {	# md_wait [TRIES]
	i=0
	while [ $i -lt "${1:-300}" ]; do
		if ! kill -0 "$MD_PID" 2>/dev/null; then
			echo "md_start: mariadbd exited:" >&2
			tail -n 20 "$MD_LOG" >&2
			MD_PID=
			return 1
		fi
		[ -S "$MD_SOCK" ] && md_sql "SELECT 1" >/dev/null 2>&1 &&
		    return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "md_start: mariadbd did not answer in $((${1:-300} / 10)) s" >&2
	md_kill
	return 1
}

md_sql() {	# md_sql SQL...
	mariadb --no-defaults --socket="$MD_SOCK" -u root -N -B -e "$*"
}

md_user() {	# md_user DB USER PASSWORD
	md_sql "CREATE DATABASE IF NOT EXISTS \`$1\` CHARACTER SET utf8mb4;
	    CREATE USER IF NOT EXISTS '$2'@'localhost' IDENTIFIED BY '$3';
	    CREATE USER IF NOT EXISTS '$2'@'127.0.0.1' IDENTIFIED BY '$3';
	    GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, INDEX, DROP,
	        CREATE TEMPORARY TABLES ON \`$1\`.* TO '$2'@'localhost',
	        '$2'@'127.0.0.1';"
}

md_stop() {
	[ -n "${MD_PID:-}" ] || return 0
	kill "$MD_PID" 2>/dev/null
	i=0
	while kill -0 "$MD_PID" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$MD_PID" 2>/dev/null
	wait "$MD_PID" 2>/dev/null
	MD_PID=
}

md_kill() {
	[ -n "${MD_PID:-}" ] || return 0
	kill -9 "$MD_PID" 2>/dev/null
	wait "$MD_PID" 2>/dev/null
	MD_PID=
}

md_test_env() {	# md_test_env NAME [OPT...]
	md_n=$1
	shift
	if ! md_bin >/dev/null 2>&1; then
		echo "1..0 # SKIP no MariaDB server (Debian's mariadb-server)"
		exit 77
	fi
	md_tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-$md_n.XXXXXX") || exit 99
	trap 'md_stop >/dev/null 2>&1; rm -rf "$md_tmp"' EXIT
	trap 'exit 99' HUP INT TERM
	if ! md_start "$md_tmp/md" "" "$@" >"$md_tmp/start.log" 2>&1; then
		# The server's own [ERROR] lines say why; else the end.
		echo "Bail out! MariaDB did not start: $( { grep -m 3 \
		    'ERROR' "$md_tmp/start.log" || tail -n 3 \
		    "$md_tmp/start.log"; } | tr '\n' ' ')"
		exit 99
	fi
	md_user "$md_n" "$md_n" "pw-$md_n-1" || {
		echo "Bail out! cannot make the test database and user"
		exit 99
	}
	printf 'pw-%s-1\n' "$md_n" >"$md_tmp/pw"
	chmod 600 "$md_tmp/pw"
	ONCEHOOK_TEST_MYSQL="mysql://$md_n@localhost/$md_n?socket=$MD_SOCK"
	ONCEHOOK_TEST_MYSQL_PW=$md_tmp/pw
	export ONCEHOOK_TEST_MYSQL ONCEHOOK_TEST_MYSQL_PW
}
