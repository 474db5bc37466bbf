#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook end to end behind a real Apache, from the shipped examples:
#
#   fcgid       conf-examples/apache-fcgid.conf: mod_fcgid starts oncehook
#   proxy-fcgi  conf-examples/apache-proxy-fcgi.conf: mod_proxy_fcgi to
#               "oncehook serve" on a unix socket, run as
#               conf-examples/oncehook.service says (its ExecStart= and
#               the environment file its comments show)
#   cgi         conf-examples/apache-cgi.htaccess: the binary copied as
#               hooks/oncehook.cgi in the document root, configured by the
#               .htaccess beside it (shared hosting); twice: mpm_event
#               with mod_cgid (Debian's default), mpm_prefork with mod_cgi
#
# Each example is copied with only its ports, paths and secret values
# filled in and included from a minimal httpd.conf of the test's own (a
# ServerRoot in a temporary directory, 127.0.0.1 and a free port, the
# modules loaded from /usr/lib/apache2/modules); the database is created
# with "oncehook init" from the very variables of the filled example;
# Apache runs in the foreground (apache2 -DFOREGROUND) in a session of
# its own and is stopped by its PID.  Through each runs the
# delivery suite of tests/e2e/scenarios.py, then the checks of
# tests/deploy/checks.py (routing, answers given before the body is
# read, the body limit at the server, the .htaccess not served, the
# Authorization header, a stopped backend).
#
# Scenario 10 (read-only database) makes long-running processes reopen
# the database: Apache's graceful restart ("apache2 -k graceful", as
# apachectl runs it: scenarios.py --reload-command) for mod_fcgid, a
# restart of oncehook serve (SIGUSR1 to tests/deploy/supervise.py, which
# stands in for systemd: --reload-signal) for mod_proxy_fcgi.  Apache
# refuses a body over ONCEHOOK_MAX_BODY itself and has JSON error pages
# of its own: scenarios.py --server-body-limit and --server-json-pages
# (tests/servers/deploy.sh).
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped (no
# apache2 or python3), 99 harness error.  As root, Apache runs its
# children as nobody:nogroup, and so does oncehook serve.

set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"

apache=$(command -v apache2 2>/dev/null || true)
[ -n "$apache" ] || [ ! -x /usr/sbin/apache2 ] || apache=/usr/sbin/apache2
[ -n "$apache" ] || skip_all "apache2 is not installed"
moddir=${APACHE_MODULES:-/usr/lib/apache2/modules}
[ -r "$moddir/mod_mpm_event.so" ] ||
    skip_all "no Apache modules in $moddir (set APACHE_MODULES)"
command -v setsid >/dev/null 2>&1 || skip_all "no setsid (util-linux)"

dp_init apache
for f in conf-examples/apache-fcgid.conf conf-examples/apache-proxy-fcgi.conf \
    conf-examples/apache-cgi.htaccess conf-examples/oncehook.service \
    tests/e2e/scenarios.py tests/deploy/checks.py; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done

# The substitutions every Apache example gets.
fill_common() {	# fill_common DIR < example > filled
	sed -e "s|/usr/local/bin|$1/bin|g" \
	    -e "s|/var/lib/oncehook/oncehook.db|$1/db/oncehook.db|g" \
	    -e "s|/home/example/oncehook/oncehook.db|$1/db/oncehook.db|g" \
	    -e "s|/usr/local/share/oncehook/sql/actions/orders.sql|$1/sql/orders.sql|g" \
	    -e "s|/home/example/oncehook/orders.sql|$1/sql/orders.sql|g" \
	    -e "s|/run/oncehook/oncehook.sock|$1/run/oncehook.sock|g" \
	    -e "s|\"whsec_REPLACE_WITH_YOUR_SIGNING_SECRET\"|\"$STRIPE_SECRET\"|" \
	    -e "s|\"REPLACE_WITH_YOUR_SHARED_SECRET\"|\"$SHOP_SECRET $SHOP_SECRET_OLD\"|" \
	    -e "s|ONCEHOOK_BUSY_TIMEOUT_MS 5000\$|ONCEHOOK_BUSY_TIMEOUT_MS $BUSY_MS|" \
	    -e "s|^#\([A-Za-z]*\) ONCEHOOK_STATUS_TOKEN REPLACE_WITH_A_LONG_RANDOM_TOKEN\$|\1 ONCEHOOK_STATUS_TOKEN $STATUS_TOKEN|"
}

# No placeholder may be left outside comments.
check_filled() {	# check_filled FILE
	if grep -v '^[[:space:]]*#' "$1" | grep -e REPLACE_WITH \
	    -e /usr/local/ -e /var/lib/oncehook -e /home/example \
	    -e '[" :]/run/oncehook'; then
		bail "$1: placeholders left after filling"
	fi
}

# The ONCEHOOK_* variables an Apache file sets (FcgidInitialEnv or
# SetEnv NAME VALUE, VALUE maybe quoted, ${X} from Define X), as
# NAME=value lines.
apache_env() {	# apache_env DIRECTIVE FILE
	awk -v dir="$1" '
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
	}' "$2"
}

# The test's httpd.conf: only what the example needs besides itself.
httpd_conf() {	# httpd_conf DIR PORT MODULES... (then the extra lines on stdin)
	d=$1
	port=$2
	shift 2
	{
		echo "# oncehook tests: a minimal Apache around one example"
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
		for m in "mpm_$mpm" authz_core alias headers "$@"; do
			[ -r "$moddir/mod_$m.so" ] ||
			    bail "no $moddir/mod_$m.so"
			echo "LoadModule ${m}_module \"$moddir/mod_$m.so\""
		done
		if [ "$mpm" = event ]; then
			echo "StartServers 1"
			echo "ServerLimit 2"
			echo "ThreadsPerChild 64"
			echo "MaxRequestWorkers 128"
		else
			echo "StartServers 4"
			echo "MaxRequestWorkers 64"
		fi
		echo "DocumentRoot \"$d/htdocs\""
		echo "<Directory />"
		echo "	AllowOverride None"
		echo "	Require all denied"
		echo "</Directory>"
		cat
	} >"$d/conf/httpd.conf"
}

apache_pid=
start_apache() {	# start_apache DIR PORT LABEL
	if ! "$apache" -t -f "$1/conf/httpd.conf" >"$1/log/t.log" 2>&1; then
		tap not-ok "$3: apache2 -t accepts the filled example"
		sed 's/^/# /' "$1/log/t.log"
		return 1
	fi
	tap ok "$3: apache2 -t accepts the filled example"
	# A session of its own: on stop, Apache (prefork) signals its whole
	# process group, which would otherwise be this script's.
	rm -f "$1/run/httpd.pid"
	setsid "$apache" -f "$1/conf/httpd.conf" -DFOREGROUND \
	    >"$1/log/stdout.log" 2>&1 &
	i=0
	while [ ! -s "$1/run/httpd.pid" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	apache_pid=$(cat "$1/run/httpd.pid" 2>/dev/null)
	if [ -z "$apache_pid" ] || ! dp_wait_port "$2" "$apache_pid"; then
		tap not-ok "$3: Apache starts"
		sed 's/^/# /' "$1/log/stdout.log" "$1/log/error.log" 2>/dev/null
		[ -z "$apache_pid" ] || kill "$apache_pid"
		return 1
	fi
	dp_track "$apache_pid"
	tap ok "$3: Apache starts"
}

# mod_fcgid: Apache starts oncehook with FcgidInitialEnv.
run_fcgid() {
	label="apache mod_fcgid"
	d=$tmp/fcgid
	if [ ! -r "$moddir/mod_fcgid.so" ]; then
		tap ok "$label # SKIP mod_fcgid is not installed (libapache2-mod-fcgid)"
		return
	fi
	dp_dir "$d"
	ex=$top_srcdir/conf-examples/apache-fcgid.conf
	dp_need "$ex" 'ScriptAlias /hooks/ /usr/local/bin/oncehook/' \
	    'FcgidInitialEnv ONCEHOOK_DB /var/lib/oncehook/oncehook.db' \
	    '"whsec_REPLACE_WITH_YOUR_SIGNING_SECRET"' \
	    '"REPLACE_WITH_YOUR_SHARED_SECRET"' \
	    '/usr/local/share/oncehook/sql/actions/orders.sql' \
	    'FcgidInitialEnv ONCEHOOK_BUSY_TIMEOUT_MS 5000'
	fill_common "$d" <"$ex" >"$d/conf/oncehook.conf"
	check_filled "$d/conf/oncehook.conf"
	apache_env FcgidInitialEnv "$d/conf/oncehook.conf" >"$d/conf/env"
	chmod 0600 "$d/conf/oncehook.conf" "$d/conf/env"
	dp_init_db "$d"
	port=$(free_port) || bail "no free port"
	httpd_conf "$d" "$port" fcgid <<EOF
FcgidIPCDir "$d/run/fcgid"
FcgidProcessTableFile "$d/run/fcgid_shm"
Include "$d/conf/oncehook.conf"
EOF
	start_apache "$d" "$port" "$label" || return
	# Scenario 10's reload: what "apachectl graceful" (and "systemctl
	# reload apache2") runs; mod_fcgid's processes are Apache's children.
	dp_scenarios "$label" fastcgi "$d" "http://127.0.0.1:$port/hooks" \
	    "$apache_pid" --log "$d/log/error.log" \
	    --reload-command "$apache -k graceful -f $d/conf/httpd.conf"
	dp_py "$label" checks.py routing early limits \
	    --url "http://127.0.0.1:$port/hooks" --env "$d/conf/env"
	dp_status "$label" mix "$d" "http://127.0.0.1:$port/hooks"
	dp_stop
	dp_sanitizer "$label" "$d/log/error.log" "$d/log/stdout.log"
}

# mod_proxy_fcgi to oncehook serve, as oncehook.service runs it.
run_proxy() {
	label="apache mod_proxy_fcgi + serve"
	d=$tmp/proxy
	dp_dir "$d"
	dp_fill_service "$d"
	dp_init_db "$d"
	ex=$top_srcdir/conf-examples/apache-proxy-fcgi.conf
	dp_need "$ex" \
	    'ProxyPass "/hooks/" "unix:/run/oncehook/oncehook.sock|fcgi://localhost/hooks/"'
	fill_common "$d" <"$ex" >"$d/conf/oncehook.conf"
	check_filled "$d/conf/oncehook.conf"
	port=$(free_port) || bail "no free port"
	httpd_conf "$d" "$port" proxy proxy_fcgi <<EOF
Include "$d/conf/oncehook.conf"
EOF
	if ! dp_start_serve "$d"; then
		tap not-ok "$label: oncehook serve starts as oncehook.service says"
		sed 's/^/# /' "$d/log/serve.log"
		dp_stop
		return
	fi
	tap ok "$label: oncehook serve starts as oncehook.service says"
	start_apache "$d" "$port" "$label" || { dp_stop; return; }
	# Scenario 10's reload: "systemctl restart oncehook", SIGUSR1 to the
	# supervisor that stands in for systemd.
	dp_scenarios "$label" fastcgi "$d" "http://127.0.0.1:$port/hooks" \
	    "$serve_sup" --log "$d/log/serve.log" --reload-signal USR1
	dp_py "$label" checks.py routing early limits \
	    --url "http://127.0.0.1:$port/hooks" --env "$d/conf/env"
	dp_status "$label" mix "$d" "http://127.0.0.1:$port/hooks"
	# oncehook serve stopped, Apache still up.
	kill "$serve_sup"
	wait "$serve_sup"
	dp_py "$label" checks.py unavailable \
	    --url "http://127.0.0.1:$port/hooks" --env "$d/conf/env"
	dp_stop
	dp_sanitizer "$label" "$d/log/serve.log" "$d/log/error.log"
}

# A CGI program that says whether Authorization reached it, put where
# oncehook.cgi would be: the request takes the same rewrite.
probe_cgi() {	# probe_cgi FILE
	cat >"$1" <<'EOF'
#!/bin/sh
printf 'Content-Type: text/plain\r\n\r\n'
if [ -n "${HTTP_AUTHORIZATION:-}" ]; then echo present; else echo absent; fi
EOF
	chmod 0755 "$1"
}

# A basic (HTTP Basic auth) endpoint through the shipped .htaccess, once
# as shipped and once with CGIPassAuth On uncommented, each in a
# directory of its own with the real binary: the first must answer 401
# and log the CGIPassAuth hint, the second process the delivery.
BASIC_PAIR=postmark:e2e-apache-basic-password-0123
basic_dirs() {	# basic_dirs DIR: make DIR/htdocs/basic-{default,passauth}
	for v in default passauth; do
		b=$1/htdocs/basic-$v
		mkdir -p "$b"
		cp "$ONCEHOOK_BIN" "$b/oncehook.cgi" || bail "copying the binary"
		chmod 0755 "$b" "$b/oncehook.cgi"
		pass=
		[ "$v" = passauth ] && pass='s|^#CGIPassAuth On|CGIPassAuth On|'
		sed -e "s|^RewriteBase /hooks/|RewriteBase /basic-$v/|" \
		    -e 's|^SetEnv ONCEHOOK_ENDPOINTS stripe,shop$|SetEnv ONCEHOOK_ENDPOINTS stripe,shop,postmark|' \
		    -e "$pass" "$1/htdocs/hooks/.htaccess" >"$b/.htaccess"
		grep -q '^SetEnv ONCEHOOK_ENDPOINTS stripe,shop,postmark$' \
		    "$b/.htaccess" || bail "no ONCEHOOK_ENDPOINTS line to extend"
		printf '%s\n' 'SetEnv ONCEHOOK_POSTMARK_SCHEME basic' \
		    "SetEnv ONCEHOOK_POSTMARK_SECRET $BASIC_PAIR" \
		    "SetEnv ONCEHOOK_POSTMARK_ACTIONS $1/sql/orders.sql" \
		    >>"$b/.htaccess"
		chmod 0644 "$b/.htaccess"
	done
}

# POST a Postmark delivery with the pair; prints the status and the body.
basic_post() {	# basic_post URL
	python3 -c '
import base64, sys, urllib.error, urllib.request
body = b"{\"RecordType\":\"Delivery\",\"MessageID\":\"e2e-apache-1\"}"
auth = "Basic " + base64.b64encode(sys.argv[2].encode()).decode()
rq = urllib.request.Request(sys.argv[1], data=body, method="POST", headers={
    "Content-Type": "application/json", "Authorization": auth})
try:
    with urllib.request.urlopen(rq, timeout=30) as r:
        print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
' "$1" "$BASIC_PAIR"
}

basic_checks() {	# basic_checks LABEL DIR PORT
	what="$1: basic endpoint, CGIPassAuth as shipped (off): 401, the log names CGIPassAuth"
	out=$(basic_post "http://127.0.0.1:$3/basic-default/postmark")
	sleep 1	# Apache copies the program's stderr to its log
	if case $out in "401 "*invalid_signature*) true ;; *) false ;; esac &&
	    grep -q 'endpoint=postmark .*why="Authorization header missing (a CGI request: Apache passes it on only with CGIPassAuth On' \
	    "$2/log/error.log"; then
		tap ok "$what"
	else
		tap not-ok "$what"
		echo "# got: $out"
		grep postmark "$2/log/error.log" | tail -3 | sed 's/^/# /'
	fi
	out=$(basic_post "http://127.0.0.1:$3/basic-passauth/postmark")
	case $out in
	"200 "*'"processed"'*)
		tap ok "$1: basic endpoint, CGIPassAuth On uncommented: processed" ;;
	*)	tap not-ok "$1: basic endpoint, CGIPassAuth On uncommented: processed"
		echo "# got: $out" ;;
	esac
	out=$(basic_post "http://127.0.0.1:$3/basic-passauth/postmark")
	case $out in
	"200 "*'"already_processed"'*)
		tap ok "$1: basic endpoint, CGIPassAuth On: its retry already_processed" ;;
	*)	tap not-ok "$1: basic endpoint, CGIPassAuth On: its retry already_processed"
		echo "# got: $out" ;;
	esac
	if grep -q 'e2e-apache-basic-password' "$2/log/error.log"; then
		tap not-ok "$1: basic endpoint: the password is in no log line"
	else
		tap ok "$1: basic endpoint: the password is in no log line"
	fi
}

# Shared hosting: the binary as hooks/oncehook.cgi beside the .htaccess.
# cgid: mpm_event and mod_cgid, Debian's default; cgi: mpm_prefork and
# mod_cgi, which many shared hosts run.
run_cgi() {	# run_cgi cgid|cgi
	cgimod=$1
	if [ "$cgimod" = cgid ]; then
		mpm=event
		label="apache CGI (.htaccess, mod_cgid)"
		sock="ScriptSock \"$tmp/$cgimod/run/cgisock\""
	else
		mpm=prefork
		label="apache CGI (.htaccess, mod_cgi)"
		sock=
	fi
	d=$tmp/$cgimod
	dp_dir "$d"
	ex=$top_srcdir/conf-examples/apache-cgi.htaccess
	dp_need "$ex" 'RewriteBase /hooks/' \
	    'SetEnv ONCEHOOK_DB /home/example/oncehook/oncehook.db' \
	    '"whsec_REPLACE_WITH_YOUR_SIGNING_SECRET"' \
	    '"REPLACE_WITH_YOUR_SHARED_SECRET"' \
	    'SetEnv ONCEHOOK_STRIPE_ACTIONS /home/example/oncehook/orders.sql' \
	    'SetEnv ONCEHOOK_BUSY_TIMEOUT_MS 5000' '#CGIPassAuth On' \
	    '#RewriteRule .* - [E=HTTP_AUTHORIZATION:%{HTTP:Authorization}]'
	h=$d/htdocs/hooks
	mkdir -p "$h"
	cp "$ONCEHOOK_BIN" "$h/oncehook.cgi" || bail "copying the binary"
	chmod 0755 "$h" "$h/oncehook.cgi"
	fill_common "$d" <"$ex" >"$h/.htaccess"
	check_filled "$h/.htaccess"
	chmod 0644 "$h/.htaccess"
	apache_env SetEnv "$h/.htaccess" >"$d/conf/env"
	dp_init_db "$d"
	# The advice in its comments on Authorization, each in a directory
	# of its own where a probe stands in for oncehook.cgi.
	for v in default passauth rewrite; do
		mkdir -p "$d/htdocs/auth-$v"
		chmod 0755 "$d/htdocs/auth-$v"
		probe_cgi "$d/htdocs/auth-$v/oncehook.cgi"
		case $v in
		default) set -- ;;
		passauth) set -- -e 's|^#CGIPassAuth On|CGIPassAuth On|' ;;
		rewrite) set -- -e 's|^#RewriteRule \.\* - \[E=|RewriteRule .* - [E=|' ;;
		esac
		sed -e "s|^RewriteBase /hooks/|RewriteBase /auth-$v/|" "$@" \
		    "$h/.htaccess" >"$d/htdocs/auth-$v/.htaccess"
		chmod 0644 "$d/htdocs/auth-$v/.htaccess"
	done
	basic_dirs "$d"
	port=$(free_port) || bail "no free port"
	# No <FilesMatch "^\.ht"> here: the .htaccess must protect itself.
	# What the host allows: as the example's comments say.
	httpd_conf "$d" "$port" mime env rewrite "$cgimod" <<EOF
TypesConfig /dev/null
$sock
<Directory "$d/htdocs">
	AllowOverride FileInfo AuthConfig Options=ExecCGI,Indexes
	Require all granted
</Directory>
EOF
	start_apache "$d" "$port" "$label" || return
	dp_scenarios "$label" cgi "$d" "http://127.0.0.1:$port/hooks" \
	    "$apache_pid" --log "$d/log/error.log"
	dp_py "$label" checks.py routing early limits htaccess \
	    --url "http://127.0.0.1:$port/hooks" --env "$d/conf/env"
	dp_py "$label (as shipped)" checks.py auth-absent \
	    --url "http://127.0.0.1:$port/hooks" --env "$d/conf/env" \
	    --probe "http://127.0.0.1:$port/auth-default/status"
	dp_py "$label (CGIPassAuth On uncommented)" checks.py auth-present \
	    --url "http://127.0.0.1:$port/hooks" --env "$d/conf/env" \
	    --probe "http://127.0.0.1:$port/auth-passauth/status"
	dp_py "$label (RewriteRule E=HTTP_AUTHORIZATION uncommented)" \
	    checks.py auth-present \
	    --url "http://127.0.0.1:$port/hooks" --env "$d/conf/env" \
	    --probe "http://127.0.0.1:$port/auth-rewrite/status"
	# The status endpoint, as the example's comments say: the token set,
	# CGIPassAuth On uncommented.
	sed -i 's|^#CGIPassAuth On|CGIPassAuth On|' "$h/.htaccess"
	dp_status "$label" mix "$d" "http://127.0.0.1:$port/hooks"
	basic_checks "$label" "$d" "$port"
	dp_cgi_writer "$label" "$d" "http://127.0.0.1:$port/hooks" \
	    "$h/oncehook.cgi"
	dp_stop
	dp_sanitizer "$label" "$d/log/error.log" "$d/log/stdout.log"
	# What the example says of a stock Apache: .ht* files are refused.
	if [ "$cgimod" = cgid ] && [ -r /etc/apache2/apache2.conf ]; then
		if grep -A1 -F '<FilesMatch "^\.ht">' /etc/apache2/apache2.conf |
		    grep -q 'Require all denied'; then
			tap ok "Debian's apache2.conf refuses .ht* files, as apache-cgi.htaccess says"
		else
			tap not-ok "Debian's apache2.conf refuses .ht* files, as apache-cgi.htaccess says"
		fi
	fi
}

mpm=event
run_fcgid
run_proxy
run_cgi cgid
run_cgi cgi
dp_done
