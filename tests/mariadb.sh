#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook end to end on the MariaDB/MySQL store: a private MariaDB
# server (tests/servers/mariadb.sh), the shipped web server examples
# filled with a mysql:// ONCEHOOK_DB and ONCEHOOK_DB_PASSWORD_FILE, and a
# client that signs its requests itself (tests/e2e/mariadb_scenarios.py,
# which reads every effect back from the server with the mariadb client).
#
#   lighttpd FastCGI   conf-examples/lighttpd-fastcgi.conf, the store on
#                      the server's unix socket (?socket=)
#   lighttpd CGI       conf-examples/lighttpd-cgi.conf, likewise
#   Apache mod_fcgid   conf-examples/apache-fcgid.conf, the store over
#                      TCP (127.0.0.1:PORT)
#   Apache CGI         conf-examples/apache-cgi.htaccess (mod_cgid), the
#                      store on the unix socket
#                      (both with the lighttpd examples' other endpoints
#                      added, so that every scheme runs behind Apache too)
#   WordPress          lighttpd FastCGI, the stripe endpoint's actions
#                      sql/actions/mysql/wordpress.sql on the tables of
#                      tests/deploy/wp-schema.sql
#   fault              lighttpd FastCGI under load; the MariaDB server
#                      killed with SIGKILL, then started again on its
#                      data directory
#
# Each deployment has a database of its own on the one server; the
# actions of every endpoint are sql/actions/mysql/orders.sql (the
# default for a mysql store).  tests/e2e/scenarios.py is not run here:
# it reads the SQLite file directly (and runs SQLite-only scenarios).
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped (no
# mariadbd, lighttpd, apache2 or python3), 99 harness error.  As root,
# the web servers run oncehook as nobody: the password file belongs to
# nobody (mode 0600), and so does the MariaDB server's directory.

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"

for f in tests/servers/lighttpd.sh tests/servers/mariadb.sh \
    tests/e2e/mariadb_scenarios.py tests/servers/oncetest/hookclient.py \
    sql/actions/mysql/orders.sql sql/actions/mysql/wordpress.sql \
    tests/deploy/wp-schema.sql conf-examples/apache-fcgid.conf \
    conf-examples/apache-cgi.htaccess; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done
lt_find
md_bin >/dev/null || { echo "1..0 # SKIP mariadbd is not installed"; exit 77; }
command -v mariadb >/dev/null 2>&1 ||
    { echo "1..0 # SKIP the mariadb client is not installed"; exit 77; }
command -v mariadb-install-db >/dev/null 2>&1 ||
    { echo "1..0 # SKIP mariadb-install-db is not installed"; exit 77; }
apache=$(command -v apache2 2>/dev/null || true)
[ -n "$apache" ] || [ ! -x /usr/sbin/apache2 ] || apache=/usr/sbin/apache2
moddir=${APACHE_MODULES:-/usr/lib/apache2/modules}

watchdog=
if command -v timeout >/dev/null 2>&1; then
	watchdog="timeout 300"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-mariadb.XXXXXX") ||
    bail "mktemp failed"
chmod 0755 "$tmp"
apache_pid=
proxy_pid=

# Apache by its PID (not our child: its PID file's).
stop_apache() {
	[ -n "$apache_pid" ] || return 0
	kill "$apache_pid" 2>/dev/null
	i=0
	while kill -0 "$apache_pid" 2>/dev/null && [ "$i" -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$apache_pid" 2>/dev/null
	apache_pid=
}

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	lt_stop
	stop_apache
	if [ -n "$proxy_pid" ]; then
		kill "$proxy_pid" 2>/dev/null
		wait "$proxy_pid" 2>/dev/null
	fi
	# After a restart by the fault scenario, the server is no child of
	# this shell: its PID is in its PID file.
	if [ -z "${MD_PID:-}" ] && [ -s "$tmp/md/run/mariadb.pid" ]; then
		MD_PID=$(cat "$tmp/md/run/mariadb.pid")
	fi
	md_stop
	sv_tmp_done "$tmp"
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

start=$(date +%s)

# The server: a unix socket, and TCP on 127.0.0.1 for the mod_fcgid run.
md_port=$(free_port) || bail "no free port"
if ! md_start "$tmp/md" "$md_port" 2>"$tmp/md-start.err"; then
	sed 's/^/# /' "$tmp/md-start.err"
	bail "MariaDB does not start"
fi
tap ok "MariaDB starts in $tmp/md (unix socket, 127.0.0.1:$md_port)"

DB_USER=oncehook
DB_PASSWORD=e2e-Maria-pw-$(date +%s)-$$
mkdir -p "$tmp/secret" || bail "mkdir"
chmod 0755 "$tmp/secret"
pwfile=$tmp/secret/db.password
printf '%s\n' "$DB_PASSWORD" >"$pwfile" || bail "writing $pwfile"
chmod 0600 "$pwfile"
[ -z "$run_user" ] || chown "$run_user:$run_group" "$pwfile" ||
    bail "chown $pwfile"
for db in shop_ltf shop_ltc shop_apf shop_apc shop_wp shop_fault shop_proxy; do
	md_user "$db" "$DB_USER" "$DB_PASSWORD" ||
	    bail "md_user $db failed"
done
tap ok "databases and the user $DB_USER made with md_user"

# Behind a proxy that reports another server version (MySQL 8.0's),
# oncehook names the session's isolation variable transaction_isolation,
# which MariaDB knows from 11.1 only; told so (1193), it takes the other
# name, and connects; a delivery's action records the session's level.
cat >"$tmp/proxy.sql" <<'EOF' || bail "writing $tmp/proxy.sql"
-- SPDX-License-Identifier: MIT
CREATE TABLE IF NOT EXISTS proxy_iso (k VARCHAR(64) PRIMARY KEY,
    iso VARCHAR(64));
-- on: *
INSERT INTO proxy_iso (k, iso) SELECT :key, VARIABLE_VALUE
FROM information_schema.SESSION_VARIABLES
WHERE VARIABLE_NAME = 'TX_ISOLATION';
EOF
python3 "$top_srcdir/tests/servers/oncetest/myproxy.py" \
    --upstream "127.0.0.1:$md_port" --version 8.0.35-proxy \
    >"$tmp/proxy.port" 2>"$tmp/proxy.err" &
proxy_pid=$!
i=0
until [ -s "$tmp/proxy.port" ] || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
pport=$(head -n 1 "$tmp/proxy.port")
[ -n "$pport" ] || bail "the proxy did not start: $(cat "$tmp/proxy.err")"
for cmd in init check; do
	env ONCEHOOK_DB="mysql://$DB_USER@127.0.0.1:$pport/shop_proxy" \
	    ONCEHOOK_DB_PASSWORD_FILE="$pwfile" ONCEHOOK_DB_TLS=off \
	    ONCEHOOK_SCHEME=hmac-sha256 ONCEHOOK_SECRET=proxy-test-secret-0123 \
	    ONCEHOOK_ACTIONS="$tmp/proxy.sql" \
	    ONCEHOOK_COUNTERS=off "$ONCEHOOK_BIN" $cmd >"$tmp/proxy.$cmd" 2>&1
	rc=$?
	[ $rc -eq 0 ] && { [ $cmd = init ] ||
	    grep -q "^database ok: MySQL 8.0.35-proxy, TLS off" "$tmp/proxy.$cmd"; }
	check $? "a proxy reporting MySQL 8.0.35: oncehook $cmd connects (exit $rc)"
	[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/proxy.$cmd"
done
body='{"id":"evt_proxy_1","type":"order.paid"}'
sig=$(printf '%s' "$body" | openssl dgst -sha256 \
    -hmac proxy-test-secret-0123 -r | cut -d' ' -f1)
st=$(printf '%s' "$body" | env \
    ONCEHOOK_DB="mysql://$DB_USER@127.0.0.1:$pport/shop_proxy" \
    ONCEHOOK_DB_PASSWORD_FILE="$pwfile" ONCEHOOK_DB_TLS=off \
    ONCEHOOK_SCHEME=hmac-sha256 ONCEHOOK_SECRET=proxy-test-secret-0123 \
    ONCEHOOK_ACTIONS="$tmp/proxy.sql" ONCEHOOK_COUNTERS=off \
    GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST \
    CONTENT_TYPE=application/json CONTENT_LENGTH=${#body} \
    PATH_INFO=/hooks/proxy HTTP_X_WEBHOOK_SIGNATURE="sha256=$sig" \
    "$ONCEHOOK_BIN" 2>"$tmp/proxy.cgi" | head -n 1 | tr -d '\r')
iso=$(md_sql "SELECT iso FROM shop_proxy.proxy_iso WHERE k = 'evt_proxy_1'")
[ "$st" = "Status: 200 OK" ] && [ "$iso" = READ-COMMITTED ]
check $? "... and a delivery through it runs at READ COMMITTED ('$st', '$iso')"
kill "$proxy_pid" 2>/dev/null
wait "$proxy_pid" 2>/dev/null
proxy_pid=

url_socket() {	# url_socket DB
	echo "mysql://$DB_USER@localhost/$1?socket=$MD_SOCK"
}

# Renumber the "ok - ..." / "not ok - ..." lines of the scenarios.
relay() {
	while IFS= read -r line; do
		case $line in
		"ok - "*) tap ok "${line#ok - }" ;;
		"not ok - "*) tap not-ok "${line#not ok - }" ;;
		*) printf '%s\n' "$line" ;;
		esac
	done
}

# scen LABEL CMD DIR URL DB [ARGS...]
scen() {
	_l=$1
	_c=$2
	_d=$3
	_u=$4
	_db=$5
	shift 5
	# shellcheck disable=SC2086 # watchdog is a command and its argument
	$watchdog python3 "$top_srcdir/tests/e2e/mariadb_scenarios.py" "$_c" \
	    --url "$_u" --env "$_d/conf/env" --socket "$MD_SOCK" \
	    --database "$_db" --label "$_l" "$@" \
	    >"$_d/log/$_c.tap" 2>"$_d/log/$_c.err"
	_rc=$?
	relay <"$_d/log/$_c.tap"
	if [ $_rc -gt 1 ]; then
		tap not-ok "$_l: mariadb_scenarios.py $_c ran to its end (exit $_rc)"
		sed 's/^/# /' "$_d/log/$_c.err"
	fi
}

# Run "oncehook init" (and check) as the backends' user with DIR/conf/env.
init_db() {	# init_db DIR LABEL
	for cmd in init check; do
		if (
			while IFS= read -r kv; do
				# shellcheck disable=SC2163 # kv is NAME=value
				export "$kv"
			done <"$1/conf/env"
			as_backend "$1/bin/oncehook" "$cmd"
		) >"$1/log/$cmd.log" 2>&1; then
			tap ok "$2: oncehook $cmd on the MariaDB store"
		else
			tap not-ok "$2: oncehook $cmd on the MariaDB store"
			sed 's/^/# /' "$1/log/$cmd.log"
		fi
	done
}

# A run directory: the binary, the MySQL actions as sql/orders.sql (the
# path the filled examples name), wordpress.sql, unavailable.json.
mk_dir() {	# mk_dir DIR
	mkdir -p "$1/conf" "$1/htdocs" "$1/db" "$1/run" "$1/log" \
	    "$1/upload" "$1/bin" "$1/sql" || bail "mkdir in $1"
	cp "$ONCEHOOK_BIN" "$1/bin/oncehook" || bail "copying $ONCEHOOK_BIN"
	for f in sql/actions/mysql/orders.sql sql/actions/mysql/wordpress.sql \
	    conf-examples/unavailable.json; do
		cp "$top_srcdir/$f" "$1/sql/" || bail "copying $f"
	done
	echo '<!doctype html><title>e2e</title>' >"$1/htdocs/index.html"
	chmod 0755 "$1" "$1/bin" "$1/sql" "$1/htdocs" "$1/conf"
	chmod 0644 "$1/sql/"*
	if [ -n "$run_user" ]; then
		chown -R "$run_user:$run_group" "$1/db" "$1/run" "$1/log" \
		    "$1/upload" || bail "chown in $1"
	fi
}

# A lighttpd example filled as tests/servers/lighttpd.sh fills it, but for
# ONCEHOOK_DB: the database's URL, and the password file after it.
lt_md_setup() {	# lt_md_setup MODE DIR DB-URL
	_m=$1
	_d=$2
	mk_dir "$_d"
	lt_port=$(free_port) || bail "no free port"
	lt_fill "$top_srcdir/conf-examples/lighttpd-$_m.conf" "$_d" |
	    python3 -c 'import sys
text = sys.stdin.read()
old = "\"ONCEHOOK_DB\" => \"%s/db/oncehook.db\"," % sys.argv[1]
if text.count(old) != 1:
    sys.exit("no %s" % old)
sys.stdout.write(text.replace(old,
    "\"ONCEHOOK_DB\" => \"%s\",\n\t\t\t\"ONCEHOOK_DB_PASSWORD_FILE\" => \"%s\","
    % (sys.argv[2], sys.argv[3])))' "$_d" "$3" "$pwfile" \
	    >"$_d/conf/oncehook.conf" || bail "filling lighttpd-$_m.conf"
	if grep -v '^[[:space:]]*#' "$_d/conf/oncehook.conf" | grep -e REPLACE \
	    -e /usr/local/ -e /var/lib/oncehook -e /run/lighttpd -e oncehook.db
	then
		bail "lighttpd-$_m.conf: placeholders left after filling"
	fi
	lt_env "$_d"
	grep -q '^ONCEHOOK_DB=mysql://' "$_d/conf/env" ||
	    bail "no mysql ONCEHOOK_DB in the filled $_m example"
	{
		echo "server.port = $lt_port"
		echo 'server.bind = "127.0.0.1"'
		echo "server.document-root = \"$_d/htdocs\""
		echo "server.errorlog = \"$_d/log/error.log\""
		echo "server.breakagelog = \"$_d/log/breakage.log\""
		echo "server.pid-file = \"$_d/run/lighttpd.pid\""
		echo "server.upload-dirs = ( \"$_d/upload\" )"
		if [ -n "$run_user" ]; then
			echo "server.username = \"$run_user\""
			echo "server.groupname = \"$run_group\""
		fi
		echo "include \"$_d/conf/oncehook.conf\""
	} >"$_d/conf/lighttpd.conf"
	chmod 0640 "$_d/conf/oncehook.conf" "$_d/conf/lighttpd.conf"
	if [ -n "$run_user" ]; then
		chown "root:$run_group" "$_d/conf" "$_d/conf/oncehook.conf" \
		    "$_d/conf/lighttpd.conf"
		chmod 0750 "$_d/conf"
	fi
}

# The delivery scenarios behind lighttpd.
run_lighttpd() {	# run_lighttpd MODE DB
	label="lighttpd $1"
	d=$tmp/lt-$1
	lt_md_setup "$1" "$d" "$(url_socket "$2")"
	init_db "$d" "$label"
	lt_start "$d" "$1" || return
	tap ok "$label: lighttpd starts with conf-examples/lighttpd-$1.conf and a mysql:// store"
	scen "$label" endpoints "$d" "http://127.0.0.1:$lt_port/hooks" "$2"
	lt_stop
	lt_sanitizer "$d" "$label"
}

# Apache: conf-examples/apache-fcgid.conf (mod_fcgid starts oncehook,
# the store over TCP) or conf-examples/apache-cgi.htaccess (the binary as
# hooks/oncehook.cgi beside the .htaccess, mpm_event and mod_cgid as on
# Debian; the store on the unix socket), filled as tests/e2e-apache.sh
# fills them, but for ONCEHOOK_DB (the database's URL, and the password
# file after it), with the lighttpd examples' other endpoints added so
# that every scheme runs.
run_apache() {	# run_apache fcgid|cgi DB
	kind=$1
	if [ "$kind" = fcgid ]; then
		label="apache mod_fcgid"
		dir=FcgidInitialEnv
		ex=$top_srcdir/conf-examples/apache-fcgid.conf
		mods="mpm_event authz_core alias headers fcgid"
		dburl="mysql://$DB_USER@127.0.0.1:$md_port/$2"
		dbpat='/var/lib/oncehook/oncehook.db'
	else
		label="apache CGI (.htaccess, mod_cgid)"
		dir=SetEnv
		ex=$top_srcdir/conf-examples/apache-cgi.htaccess
		mods="mpm_event authz_core alias headers mime env rewrite cgid"
		dburl=$(url_socket "$2")
		dbpat='/home/example/oncehook/oncehook.db'
	fi
	for m in $mods; do
		if [ -z "$apache" ] || [ ! -r "$moddir/mod_$m.so" ]; then
			tap ok "$label # SKIP apache2 or mod_$m is not installed"
			return
		fi
	done
	d=$tmp/ap-$kind
	mk_dir "$d"
	for pat in "$dir ONCEHOOK_DB $dbpat" \
	    "$dir ONCEHOOK_ENDPOINTS stripe,shop" \
	    "$dir ONCEHOOK_BUSY_TIMEOUT_MS 5000" \
	    '"whsec_REPLACE_WITH_YOUR_SIGNING_SECRET"' \
	    '"REPLACE_WITH_YOUR_SHARED_SECRET"'; do
		grep -qF -e "$pat" "$ex" || bail "$ex: no $pat to fill in"
	done
	extra=
	for e in GITHUB:github:$GITHUB_SECRET STANDARD:standard:$STANDARD_SECRET \
	    SVIX:svix:$SVIX_SECRET SHOPIFY:shopify:$SHOPIFY_SECRET \
	    SLACK:slack:$SLACK_SECRET PADDLE:paddle:$PADDLE_SECRET \
	    GITLAB:gitlab:$GITLAB_SECRET; do
		IFS=: read -r _v _s _k <<EOF
$e
EOF
		extra="$extra\\
$dir ONCEHOOK_${_v}_SCHEME $_s\\
$dir ONCEHOOK_${_v}_SECRET \"$_k\"\\
$dir ONCEHOOK_${_v}_ACTIONS $d/sql/orders.sql"
	done
	if [ "$kind" = fcgid ]; then
		out=$d/conf/oncehook.conf
	else
		mkdir -p "$d/htdocs/hooks"
		cp "$ONCEHOOK_BIN" "$d/htdocs/hooks/oncehook.cgi" ||
		    bail "copying the binary"
		chmod 0755 "$d/htdocs/hooks" "$d/htdocs/hooks/oncehook.cgi"
		out=$d/htdocs/hooks/.htaccess
	fi
	sed -e "s|/usr/local/bin|$d/bin|g" \
	    -e "s|^$dir ONCEHOOK_DB $dbpat\$|$dir ONCEHOOK_DB $dburl\\
$dir ONCEHOOK_DB_PASSWORD_FILE $pwfile|" \
	    -e "s|^$dir ONCEHOOK_ENDPOINTS stripe,shop\$|$dir ONCEHOOK_ENDPOINTS stripe,shop,github,standard,svix,shopify,slack,paddle,gitlab$extra|" \
	    -e "s|/usr/local/share/oncehook/sql/actions/orders.sql|$d/sql/orders.sql|g" \
	    -e "s|/home/example/oncehook/orders.sql|$d/sql/orders.sql|g" \
	    -e "s|\"whsec_REPLACE_WITH_YOUR_SIGNING_SECRET\"|\"$STRIPE_SECRET\"|" \
	    -e "s|\"REPLACE_WITH_YOUR_SHARED_SECRET\"|\"$SHOP_SECRET $SHOP_SECRET_OLD\"|" \
	    -e "s|ONCEHOOK_BUSY_TIMEOUT_MS 5000\$|ONCEHOOK_BUSY_TIMEOUT_MS $BUSY_MS|" \
	    "$ex" >"$out"
	if grep -v '^[[:space:]]*#' "$out" | grep -e REPLACE_WITH \
	    -e /usr/local/ -e /var/lib/oncehook -e /home/example; then
		bail "$ex: placeholders left after filling"
	fi
	awk -v dir="$dir" '
	$1 == "Define" { def[$2] = $3 }
	$1 == dir && $2 ~ /^ONCEHOOK_/ {
		v = $0
		sub("^[ \t]*" dir "[ \t]+[^ \t]+[ \t]+", "", v)
		sub("[ \t]+$", "", v)
		if (v ~ /^".*"$/)
			v = substr(v, 2, length(v) - 2)
		while (match(v, /\$\{[A-Za-z0-9_]+\}/))
			v = substr(v, 1, RSTART - 1) def[substr(v, RSTART + 2, \
			    RLENGTH - 3)] substr(v, RSTART + RLENGTH)
		print $2 "=" v
	}' "$out" >"$d/conf/env"
	grep -q "^ONCEHOOK_DB=$dburl\$" "$d/conf/env" ||
	    bail "no mysql ONCEHOOK_DB in the filled $ex"
	if [ "$kind" = fcgid ]; then
		chmod 0600 "$out"
	else
		chmod 0644 "$out"
	fi
	chmod 0600 "$d/conf/env"
	init_db "$d" "$label"
	port=$(free_port) || bail "no free port"
	{
		echo "ServerRoot \"$d\""
		echo "ServerName 127.0.0.1"
		echo "Listen 127.0.0.1:$port"
		echo "PidFile \"$d/run/httpd.pid\""
		echo "DefaultRuntimeDir \"$d/run\""
		echo "Mutex file:$d/run default"
		echo "ErrorLog \"$d/log/error.log\""
		echo "LogLevel warn"
		if [ -n "$run_user" ]; then
			echo "User $run_user"
			echo "Group $run_group"
		fi
		for m in $mods; do
			echo "LoadModule ${m}_module \"$moddir/mod_$m.so\""
		done
		echo "StartServers 1"
		echo "ServerLimit 2"
		echo "ThreadsPerChild 64"
		echo "MaxRequestWorkers 128"
		echo "DocumentRoot \"$d/htdocs\""
		echo "<Directory />"
		echo "	AllowOverride None"
		echo "	Require all denied"
		echo "</Directory>"
		if [ "$kind" = fcgid ]; then
			# mod_fcgid's process table lock under mpm_event: with
			# the file (fcntl) mutex, threads of one process may
			# get EDEADLK ("can't lock process table") and the
			# child drops its connections.
			echo "Mutex pthread fcgid-proctbl"
			echo "FcgidIPCDir \"$d/run/fcgid\""
			echo "FcgidProcessTableFile \"$d/run/fcgid_shm\""
			echo "Include \"$d/conf/oncehook.conf\""
		else
			echo "TypesConfig /dev/null"
			echo "ScriptSock \"$d/run/cgisock\""
			echo "<Directory \"$d/htdocs\">"
			echo "	AllowOverride FileInfo AuthConfig Options=ExecCGI,Indexes"
			echo "	Require all granted"
			echo "</Directory>"
		fi
	} >"$d/conf/httpd.conf"
	if ! "$apache" -t -f "$d/conf/httpd.conf" >"$d/log/t.log" 2>&1; then
		tap not-ok "$label: apache2 -t accepts the filled example"
		sed 's/^/# /' "$d/log/t.log"
		return
	fi
	# A session of its own: on stop, Apache may signal its whole
	# process group, which would otherwise be this script's.
	setsid "$apache" -f "$d/conf/httpd.conf" -DFOREGROUND \
	    >"$d/log/stdout.log" 2>&1 &
	i=0
	while [ ! -s "$d/run/httpd.pid" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	apache_pid=$(cat "$d/run/httpd.pid" 2>/dev/null)
	i=0
	while [ -n "$apache_pid" ] && [ $i -lt 100 ] &&
	    ! python3 -c 'import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()' \
	    "$port" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ -z "$apache_pid" ] || [ $i -ge 100 ]; then
		tap not-ok "$label: Apache starts"
		sed 's/^/# /' "$d/log/stdout.log" "$d/log/error.log" 2>/dev/null
		return
	fi
	tap ok "$label: Apache starts with $(basename "$ex") and ONCEHOOK_DB=${dburl%%\?*}"
	scen "$label" endpoints "$d" "http://127.0.0.1:$port/hooks" "$2"
	stop_apache
	lt_sanitizer "$d" "$label"
}

# The WordPress example: the shop's tables first, then oncehook's.
run_wordpress() {	# run_wordpress DB
	label="wordpress"
	d=$tmp/wp
	if ! mariadb --no-defaults --socket="$MD_SOCK" -u root "$1" \
	    <"$top_srcdir/tests/deploy/wp-schema.sql" >"$tmp/wp-schema.log" 2>&1
	then
		sed 's/^/# /' "$tmp/wp-schema.log"
		bail "loading tests/deploy/wp-schema.sql"
	fi
	lt_md_setup fastcgi "$d" "$(url_socket "$1")"
	sed -i "s|\"ONCEHOOK_STRIPE_ACTIONS\" => \"$d/sql/orders.sql\"|\"ONCEHOOK_STRIPE_ACTIONS\" => \"$d/sql/wordpress.sql\"|" \
	    "$d/conf/oncehook.conf"
	lt_env "$d"
	grep -q "^ONCEHOOK_STRIPE_ACTIONS=$d/sql/wordpress.sql\$" "$d/conf/env" ||
	    bail "no ONCEHOOK_STRIPE_ACTIONS to point at wordpress.sql"
	init_db "$d" "$label"
	lt_start "$d" fastcgi || return
	scen "$label" wordpress "$d" "http://127.0.0.1:$lt_port/hooks" "$1"
	lt_stop
	lt_sanitizer "$d" "$label"
}

# The fault: MariaDB killed under load behind lighttpd FastCGI.
run_fault() {	# run_fault DB
	label="fault"
	d=$tmp/fault
	lt_md_setup fastcgi "$d" "$(url_socket "$1")"
	init_db "$d" "$label"
	lt_start "$d" fastcgi || return
	cat >"$d/bin/md-restart.sh" <<EOF
. "$top_srcdir/tests/servers/mariadb.sh"
md_start "$tmp/md" "$md_port"
EOF
	scen "$label" fault "$d" "http://127.0.0.1:$lt_port/hooks" "$1" \
	    --kill-cmd "kill -9 $MD_PID" \
	    --restart-cmd "sh $d/bin/md-restart.sh" --senders 4
	# The server now runs from the restart: its PID from its PID file.
	MD_PID=
	if [ -s "$tmp/md/run/mariadb.pid" ]; then
		MD_PID=$(cat "$tmp/md/run/mariadb.pid")
	fi
	lt_stop
	lt_sanitizer "$d" "$label"
}

run_lighttpd fastcgi shop_ltf
run_lighttpd cgi shop_ltc
run_apache fcgid shop_apf
run_apache cgi shop_apc
run_wordpress shop_wp
run_fault shop_fault
echo "# mariadb.sh took $(($(date +%s) - start))s"
echo "1..$n"
[ $failed -eq 0 ] || exit 1
exit 0
