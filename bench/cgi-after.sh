#!/bin/bash
# SPDX-License-Identifier: MIT
# What a web server does with a CGI program that answers, closes its
# output and goes on working (issue 11: may a CGI handler run deferred
# actions after its answer?).  For lighttpd mod_cgi, Apache mod_cgid
# (Debian's default) and Apache mod_cgi, a CGI script answers at once,
# closes stdout and stderr, works for WORK seconds, then writes a marker
# file.  Printed for each: how long the client waited for the whole
# answer, and whether the work finished (the marker) or was killed.
#
# usage: bench/cgi-after.sh [WORK_SECONDS]   (default 4; needs lighttpd
# and apache2, tools/deps.sh; binds 127.0.0.1 on free ports; servers
# stopped by PID)
set -u
work=${1:-4}
tmp=$(mktemp -d /tmp/oncehook-cgi-after.XXXXXX) || exit 2
pids=
trap 'for p in $pids; do kill $p 2>/dev/null; done; sleep 0.5; rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"
free_port() {
	python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
script() {	# script DIR MARKER
	mkdir -p "$1"
	cat >"$1/after.cgi" <<EOF
#!/bin/sh
printf 'Status: 200 OK\r\nContent-Type: application/json\r\nContent-Length: 22\r\n\r\n{"status":"accepted"}\n'
exec >&- 2>&-
sleep $work
touch "$2"
EOF
	chmod 0755 "$1" "$1/after.cgi"
}
measure() {	# measure LABEL URL MARKER
	local t0 t1 answered finished
	t0=$(date +%s.%N)
	curl -s -o /dev/null --max-time $((work * 3)) "$2"
	t1=$(date +%s.%N)
	answered=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	sleep $((work + 2))
	if [ -e "$3" ]; then finished=yes; else finished="no (killed)"; fi
	printf '| %s | %s | %s |\n' "$1" "$answered" "$finished"
}

echo "A CGI program answers, closes its output, works ${work} s, then"
echo "writes a marker. Seconds until the client had the whole answer;"
echo "whether the work finished."
echo
echo "| server | answer complete after, s | work finished |"
echo "|---|---:|---|"

# lighttpd mod_cgi
if command -v lighttpd >/dev/null 2>&1; then
	d=$tmp/lighttpd
	script "$d/htdocs" "$d/htdocs/marker"
	port=$(free_port)
	cat >"$d/lighttpd.conf" <<EOF
server.port = $port
server.bind = "127.0.0.1"
server.document-root = "$d/htdocs"
server.errorlog = "$d/error.log"
server.modules += ( "mod_cgi" )
cgi.assign = ( ".cgi" => "" )
EOF
	[ "$(id -u)" = 0 ] && printf 'server.username = "nobody"\nserver.groupname = "nogroup"\n' >>"$d/lighttpd.conf" && chown -R nobody "$d"
	lighttpd -D -f "$d/lighttpd.conf" &
	pids="$pids $!"
	sleep 1
	measure "lighttpd $(lighttpd -v | sed -n 's/^lighttpd\/\([0-9.]*\).*/\1/p') mod_cgi" "http://127.0.0.1:$port/after.cgi" "$d/htdocs/marker"
fi

# Apache, mod_cgid (mpm_event) and mod_cgi (mpm_prefork)
moddir=/usr/lib/apache2/modules
apache=$(command -v apache2 || echo /usr/sbin/apache2)
if [ -x "$apache" ]; then
	for m in cgid cgi; do
		d=$tmp/apache-$m
		script "$d/htdocs" "$d/htdocs/marker"
		mkdir -p "$d/run" "$d/log"
		port=$(free_port)
		mpm=event
		[ $m = cgi ] && mpm=prefork
		{
			echo "ServerRoot \"$d\""
			echo "ServerName 127.0.0.1"
			echo "Listen 127.0.0.1:$port"
			echo "PidFile \"$d/run/httpd.pid\""
			echo "DefaultRuntimeDir \"$d/run\""
			echo "Mutex file:$d/run default"
			echo "ErrorLog \"$d/log/error.log\""
			[ "$(id -u)" = 0 ] && echo "User nobody" && echo "Group nogroup"
			for mod in mpm_$mpm authz_core alias mime $m; do
				echo "LoadModule ${mod}_module $moddir/mod_$mod.so"
			done
			[ $m = cgid ] && echo "ScriptSock \"$d/run/cgisock\""
			echo "DocumentRoot \"$d/htdocs\""
			echo "<Directory \"$d/htdocs\">"
			echo "	Options +ExecCGI"
			echo "	AddHandler cgi-script .cgi"
			echo "	Require all granted"
			echo "</Directory>"
		} >"$d/httpd.conf"
		[ "$(id -u)" = 0 ] && chown -R nobody "$d/htdocs"
		"$apache" -f "$d/httpd.conf" -DFOREGROUND &
		pids="$pids $!"
		sleep 1.5
		measure "Apache $("$apache" -v | sed -n 's/.*Apache\/\([0-9.]*\).*/\1/p') mod_$m" "http://127.0.0.1:$port/after.cgi" "$d/htdocs/marker"
	done
fi
