#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook's TLS to MariaDB (ONCEHOOK_DB_TLS, docs/stores.md): a private
# MariaDB (tests/servers/mariadb.sh) on 127.0.0.1 with a CA made here
# with the openssl command, and certificates of three kinds: the server's
# (for localhost and 127.0.0.1), one from a second CA oncehook does not
# know, and one issued to another name (swapped in with FLUSH SSL).
#
#   - each setting against the right certificate: `check` reports the
#     cipher; the server sees oncehook's own session encrypted (an action
#     records its Ssl_cipher, SESSION_STATUS) for a CGI delivery and for
#     `serve` (FastCGI; performance_schema.status_by_thread), and counts
#     the handshakes (Ssl_accepts)
#   - verify-identity refuses the wrong name and the unknown CA, verify-ca
#     the unknown CA: `check` exits 1 saying why, a delivery is 503 and
#     nothing is stored
#   - a fake server whose greeting offers no TLS (with and without
#     CLIENT_PLUGIN_AUTH): required, verify-ca and verify-identity send it
#     nothing, not even the user name (off does: the check can fail)
#   - a fake server that offers TLS with a self-signed certificate, then
#     asks for mysql_clear_password, dialog, a full caching_sha2_password
#     or sha256_password login: required sends it no password; verify-ca
#     with a certificate of its CA does (the fake's own check)
#   - users created REQUIRE SSL and REQUIRE X509: reached only with TLS,
#     and with the client certificate
#   - every configuration error, and the files: missing, unreadable, an
#     encrypted key (refused, never a passphrase prompt); a client library
#     that refuses a TLS option (tests/servers/refuseopt.c, preloaded)
#   - a capture of the loopback (tcpdump, as root): with TLS, neither the
#     event's key nor its order's data nor the user name in it; with TLS
#     off, all of them (the check can fail)
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped (no
# mariadbd, openssl or python3), 99 harness error.

# shellcheck disable=SC2015,SC2086 # bail exits; $to, $VI, $live: words
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"

md_bin >/dev/null || { echo "1..0 # SKIP mariadbd is not installed"; exit 77; }
sv_need mariadb mariadb-install-db openssl python3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-tls.XXXXXX") || bail "mktemp failed"
chmod 0755 "$tmp"
serve_pid=
dump_pid=
fake_pid=
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	for p in $serve_pid $dump_pid $fake_pid; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	md_stop
	sv_tmp_done "$tmp"
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

# The PKI: a test CA, another CA, and certificates (2048-bit RSA, two
# days).  mkcert NAME CA SAN CN
pki=$tmp/pki
mkdir -p "$pki" "$tmp/live" || bail "mkdir"
mkca() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$1" \
	    -keyout "$pki/$2.key" -out "$pki/$2.pem" >/dev/null 2>&1
}
mkcert() {
	openssl req -newkey rsa:2048 -nodes -subj "/CN=$4" \
	    -keyout "$pki/$1.key" -out "$pki/$1.csr" >/dev/null 2>&1 &&
	printf 'subjectAltName=%s\n' "$3" >"$pki/$1.ext" &&
	openssl x509 -req -in "$pki/$1.csr" -CA "$pki/$2.pem" \
	    -CAkey "$pki/$2.key" -CAcreateserial -days 2 \
	    -extfile "$pki/$1.ext" -out "$pki/$1.pem" >/dev/null 2>&1
}
mkca "oncehook test CA" ca && mkca "oncehook other CA" ca2 &&
    mkcert server ca "DNS:localhost,IP:127.0.0.1" localhost &&
    mkcert other ca2 "DNS:localhost,IP:127.0.0.1" localhost &&
    mkcert wrong ca "DNS:db.example.net" db.example.net &&
    mkcert client ca "DNS:oncehook-client" oncehook-client ||
    bail "openssl could not make the test certificates"
openssl pkey -in "$pki/client.key" -aes256 -passout pass:tls-test \
    -out "$pki/client-enc.key" >/dev/null 2>&1 || bail "openssl pkey"
chmod 0755 "$pki"
chmod 0644 "$pki"/*

# The server's files are copies: use NAME swaps them, FLUSH SSL reloads.
use() {
	cp "$pki/$1.pem" "$tmp/live/cert.pem" &&
	    cp "$pki/$1.key" "$tmp/live/key.pem" &&
	    chmod 0644 "$tmp/live/cert.pem" "$tmp/live/key.pem" ||
	    bail "copying the $1 certificate"
	[ -z "${MD_PID:-}" ] || md_sql "FLUSH SSL" || bail "FLUSH SSL failed"
}
use server
cp "$pki/ca.pem" "$tmp/live/ca.pem" || bail "cp"

port=$(free_port) || bail "no free port"
if ! md_start "$tmp/md" "$port" --ssl-cert="$tmp/live/cert.pem" \
    --ssl-key="$tmp/live/key.pem" --ssl-ca="$tmp/live/ca.pem" \
    --performance-schema=ON 2>"$tmp/md-start.err"; then
	sed 's/^/# /' "$tmp/md-start.err"
	bail "MariaDB does not start"
fi
[ "$(md_sql "SELECT @@have_ssl")" = YES ] || bail "the server has no TLS"
tap ok "MariaDB with the test CA's certificate on 127.0.0.1:$port"

PW=tls-Pw-$$-$(date +%s)
md_user tls tls "$PW" || bail "md_user"
md_sql "CREATE USER 'tlsreq'@'127.0.0.1' IDENTIFIED BY '$PW' REQUIRE SSL;
    CREATE USER 'tlsx509'@'127.0.0.1' IDENTIFIED BY '$PW' REQUIRE X509;
    GRANT SELECT, INSERT, UPDATE, DELETE ON tls.* TO
        'tlsreq'@'127.0.0.1', 'tlsx509'@'127.0.0.1'" || bail "users"
printf '%s\n' "$PW" >"$tmp/pw" && chmod 0600 "$tmp/pw" || bail "pw"

# The actions: the order, and the session's cipher as the server has it.
cat >"$tmp/actions.sql" <<'EOF' || bail "actions"
-- SPDX-License-Identifier: MIT
CREATE TABLE IF NOT EXISTS tls_orders (id VARCHAR(64) PRIMARY KEY,
    email VARCHAR(191), cipher VARCHAR(64));
-- on: *
INSERT INTO tls_orders (id, email, cipher)
SELECT JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.order')),
       JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.email')), VARIABLE_VALUE
FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'SSL_CIPHER';
EOF

SECRET=tls-test-secret-0123456789
url="mysql://tls@127.0.0.1:$port/tls"
ONCEHOOK_DB=$url
ONCEHOOK_DB_PASSWORD_FILE=$tmp/pw
ONCEHOOK_SCHEME=hmac-sha256
ONCEHOOK_SECRET=$SECRET
ONCEHOOK_ACTIONS=$tmp/actions.sql
ONCEHOOK_COUNTERS=off
export ONCEHOOK_DB ONCEHOOK_DB_PASSWORD_FILE ONCEHOOK_SCHEME ONCEHOOK_SECRET \
    ONCEHOOK_ACTIONS ONCEHOOK_COUNTERS
unset ONCEHOOK_DB_TLS ONCEHOOK_DB_TLS_CA ONCEHOOK_DB_TLS_CERT \
    ONCEHOOK_DB_TLS_KEY
CA=$pki/ca.pem
CA2=$pki/ca2.pem
to=
command -v timeout >/dev/null 2>&1 && to="timeout 60"

# chk VAR=VALUE...: oncehook check in that environment; its output in
# $tmp/chk.out, its status returned.
chk() {
	env "$@" $to "$ONCEHOOK_BIN" check >"$tmp/chk.out" 2>&1
}
said() {	# said TEXT: in the last check's output
	grep -q -F -e "$1" "$tmp/chk.out"
}
show() { sed -n 's/^/#   /; /oncehook check: [^w]\|database ok/p' "$tmp/chk.out"; }
# ck STATUS TEXT: check, and the last check's lines when it failed
ck() {
	check "$1" "$2"
	[ "$1" -eq 0 ] || show
}

# cgi BODY VAR=VALUE...: one signed CGI delivery; its status line.
cgi() {
	body=$1
	shift
	sig=$(printf '%s' "$body" | openssl dgst -sha256 -hmac "$SECRET" -r |
	    cut -d' ' -f1)
	printf '%s' "$body" | env "$@" GATEWAY_INTERFACE=CGI/1.1 \
	    REQUEST_METHOD=POST CONTENT_TYPE=application/json \
	    CONTENT_LENGTH=${#body} PATH_INFO=/hooks/tls \
	    HTTP_X_WEBHOOK_SIGNATURE="sha256=$sig" $to "$ONCEHOOK_BIN" \
	    2>>"$tmp/cgi.log" | head -n 1 | tr -d '\r'
}
event() {	# event ID ORDER: a body
	printf '{"id":"%s","type":"order.paid","order":"%s","email":"%s@example.org"}' \
	    "$1" "$2" "$2"
}
stored() {	# stored ID ORDER: events rows + orders rows of them
	md_sql "SELECT (SELECT COUNT(*) FROM tls.oncehook_events WHERE
	    event_key = '$1') + (SELECT COUNT(*) FROM tls.tls_orders WHERE
	    id = '$2')"
}
cipher_of() {	# cipher_of ORDER: the Ssl_cipher its action saw
	md_sql "SELECT cipher FROM tls.tls_orders WHERE id = '$1'"
}
accepts() { md_sql "SHOW GLOBAL STATUS LIKE 'Ssl_accepts'" | cut -f2; }

VI="ONCEHOOK_DB_TLS=verify-identity ONCEHOOK_DB_TLS_CA=$CA"

# --- the right certificate ---------------------------------------------

env $VI "$ONCEHOOK_BIN" init >"$tmp/init.out" 2>&1
check $? "init over TLS (verify-identity, the test CA)"
md_sql "SHOW COLUMNS FROM tls.oncehook_events" | grep -q '^event_key' ||
    bail "no event_key column in oncehook_events (the test's stored())"

chk
said "ONCEHOOK_DB_TLS                  off" && said ", TLS off, tables"
check $? "127.0.0.1: TLS off by default, and check says so"

for mode in required verify-ca verify-identity; do
	a0=$(accepts)
	if [ $mode = required ]; then chk ONCEHOOK_DB_TLS=$mode
	else chk ONCEHOOK_DB_TLS=$mode ONCEHOOK_DB_TLS_CA="$CA"; fi
	rc=$?
	a1=$(accepts)
	[ $rc -eq 0 ] && grep -q "^database ok: .*, TLSv1\.[23] [A-Z0-9_-]* ($mode), tables" \
	    "$tmp/chk.out" && [ "$a1" -gt "$a0" ]
	ck $? "$mode: check connects, reports version and cipher (Ssl_accepts $a0 -> $a1)"
done

# A delivery: the server's view of oncehook's own session.
st=$(cgi "$(event evt_tls_1 ord-tls-1)" $VI)
c=$(cipher_of ord-tls-1)
[ "$st" = "Status: 200 OK" ] && [ -n "$c" ]
check $? "verify-identity: a CGI delivery is stored over TLS (server's Ssl_cipher '$c')"
grep -q "^database ok: .* $c (verify-identity)" "$tmp/chk.out"
check $? "check's cipher is the server's ($c)"

# FastCGI: serve's connection, seen live from the server.
sport=$(free_port) || bail "no free port"
env $VI "$ONCEHOOK_BIN" serve --listen "127.0.0.1:$sport" --workers 1 \
    2>"$tmp/serve.log" &
serve_pid=$!
fcgi() {	# fcgi BODY: the status of one FastCGI delivery to serve
	python3 - "$sport" "$1" "$SECRET" "$top_srcdir/tests/servers" <<'PY'
import hashlib, hmac, sys
sys.path.insert(0, sys.argv[4])
from oncetest import fcgiclient
body = sys.argv[2].encode()
sig = hmac.new(sys.argv[3].encode(), body, hashlib.sha256).hexdigest()
try:
    r = fcgiclient.request("127.0.0.1:" + sys.argv[1], "POST", "/hooks/tls",
                           body, {"Content-Type": "application/json",
                                  "X-Webhook-Signature": "sha256=" + sig},
                           timeout=20)
    print(r.status)
except Exception as e:
    print("no-answer", type(e).__name__)
PY
}
i=0
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $sport), 1)" \
    2>/dev/null || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
st=$(fcgi "$(event evt_tls_2 ord-tls-2)")
c=$(cipher_of ord-tls-2)
live=$(md_sql "SELECT COUNT(*), COALESCE(SUM(s.VARIABLE_VALUE <> ''), 0)
    FROM performance_schema.threads t JOIN performance_schema.status_by_thread s
    ON s.THREAD_ID = t.THREAD_ID AND s.VARIABLE_NAME = 'Ssl_cipher'
    WHERE t.PROCESSLIST_USER = 'tls'")
set -- $live
[ "$st" = 200 ] && [ -n "$c" ] && [ "${1:-0}" -ge 1 ] && [ "$1" = "${2:-x}" ]
check $? "serve (FastCGI): delivery $st, Ssl_cipher '$c'; its live connections encrypted: ${2:-?} of ${1:-?}"
kill "$serve_pid" 2>/dev/null
wait "$serve_pid" 2>/dev/null
serve_pid=

# verify-identity with no CA file: the system's CAs (OpenSSL's default
# paths; SSL_CERT_FILE points them at the test CA).
chk ONCEHOOK_DB_TLS=verify-identity
rc=$?
[ $rc -ne 0 ] && said "certificate" && said "(ONCEHOOK_DB_TLS=verify-identity)"
check $? "verify-identity without a CA file: the test CA is not among the system's (exit $rc)"
chk ONCEHOOK_DB_TLS=verify-identity SSL_CERT_FILE="$CA"
ck $? "verify-identity without a CA file: the system's CAs are used (SSL_CERT_FILE)"

# --- an unknown CA, a wrong name ---------------------------------------

# refused LABEL EVENT ORDER VAR=VALUE...: check exits 1 naming the
# setting, a delivery is 503, nothing stored.
refused() {
	rlabel=$1 rev=$2 rord=$3
	shift 3
	chk "$@"
	rc=$?
	st=$(cgi "$(event "$rev" "$rord")" "$@")
	[ $rc -eq 1 ] && said "oncehook check: mysql://tls@127.0.0.1/tls: " &&
	    [ "$st" = "Status: 503 Service Unavailable" ] &&
	    [ "$(stored "$rev" "$rord")" = 0 ]
	ck $? "$rlabel: check exit $rc, delivery '$st', nothing stored"
}

use other
refused "unknown CA, verify-identity" evt_tls_3 ord-tls-3 $VI
said "TLS/SSL error: " && said "certificate" &&
    said "(ONCEHOOK_DB_TLS=verify-identity)"
ck $? "unknown CA: check says why"
refused "unknown CA, verify-ca" evt_tls_4 ord-tls-4 ONCEHOOK_DB_TLS=verify-ca \
    ONCEHOOK_DB_TLS_CA="$CA"
chk ONCEHOOK_DB_TLS=required
check $? "unknown CA, required: connects (nothing checked, as documented)"
# The server's certificate is right, the CA file is another: refused too.
use server
refused "CA file of another CA, verify-identity" evt_tls_5 ord-tls-5 \
    ONCEHOOK_DB_TLS=verify-identity ONCEHOOK_DB_TLS_CA="$CA2"

use wrong
refused "wrong name, verify-identity" evt_tls_6 ord-tls-6 $VI
said "the server's certificate is not issued to the host in ONCEHOOK_DB (ONCEHOOK_DB_TLS=verify-identity)"
ck $? "wrong name: check says why"
grep -q 'status=503 .*why="mysql://tls@127.0.0.1/tls: .*not issued to the host' \
    "$tmp/cgi.log" && ! grep -q -F -e "$PW" "$tmp/cgi.log"
check $? "wrong name: the delivery's log line says why, without the password"
chk ONCEHOOK_DB_TLS=verify-ca ONCEHOOK_DB_TLS_CA="$CA"
check $? "wrong name, verify-ca: connects (the name is not checked)"
use server

# A server that offers no TLS (a greeting without CLIENT_SSL, as a man
# in the middle would strike it out), with and without CLIENT_PLUGIN_AUTH:
# every setting but off stops before the login, nothing sent to it (the
# library alone would send user, database and the password's scramble
# under required and verify-ca).  Each connection's bytes in fake.N.
fport=$(free_port) || bail "no free port"
python3 - "$fport" "$tmp/fake" <<'PY' &
import socket, struct, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(4)
s.settimeout(120)
k = 0
while True:
    try:
        c, _ = s.accept()
    except OSError:
        break
    k += 1
    caps = 0x0001 | 0x0004 | 0x0008 | 0x0200 | 0x2000 | 0x8000  # no SSL
    hi = 0x0002 | (0 if k % 2 else 0x0008)  # PLUGIN_AUTH on even ones
    p = (b"\x0a" + b"5.5.5-10.11.0-fake\0" + struct.pack("<I", 7) +
         b"abcdefgh\0" + struct.pack("<HBHH", caps, 45, 2, hi) +
         bytes([21]) + b"\0" * 10 + b"ijklmnopqrst\0" +
         (b"mysql_native_password\0" if hi & 0x0008 else b""))
    # The file exists before the client reads the greeting (the test
    # looks at it as soon as the client has given up), and is written
    # unbuffered.
    out = open("%s.%d" % (sys.argv[2], k), "wb", buffering=0)
    c.sendall(struct.pack("<I", len(p))[:3] + b"\0" + p)
    c.settimeout(3)
    with out:
        try:
            while True:
                d = c.recv(4096)
                if not d:
                    break
                out.write(d)
        except OSError:
            pass
    c.close()
PY
fake_pid=$!
i=0
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $fport), 1)" \
    2>/dev/null || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
# The probe above was connection 1.
k=1
for mode in required verify-ca verify-identity; do
	for auth in "" " (no PLUGIN_AUTH)"; do
		k=$((k + 1))
		if [ $mode = required ]; then
			chk ONCEHOOK_DB="mysql://tls@127.0.0.1:$fport/tls" ONCEHOOK_DB_TLS=$mode
		else
			chk ONCEHOOK_DB="mysql://tls@127.0.0.1:$fport/tls" \
			    ONCEHOOK_DB_TLS=$mode ONCEHOOK_DB_TLS_CA="$CA"
		fi
		rc=$?
		[ $rc -eq 1 ] && said "the server offers no TLS: nothing was sent to it (ONCEHOOK_DB_TLS=$mode)" &&
		    [ -e "$tmp/fake.$k" ] && [ ! -s "$tmp/fake.$k" ]
		ck $? "a server that offers no TLS$auth: $mode sends it nothing (exit $rc, $(wc -c <"$tmp/fake.$k" 2>/dev/null || echo no) bytes)"
	done
done
chk ONCEHOOK_DB="mysql://tls@127.0.0.1:$fport/tls" ONCEHOOK_DB_TLS=off
k=$((k + 1))
i=0	# the bytes may reach the file just after the client gave up
until grep -q -a tls "$tmp/fake.$k" 2>/dev/null || [ $i -ge 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
grep -q -a tls "$tmp/fake.$k"
check $? "... and with TLS off the login is sent to it (the check can fail)"
kill "$fake_pid" 2>/dev/null
wait "$fake_pid" 2>/dev/null
fake_pid=

# A server that offers TLS with a certificate of its own (self-signed,
# which required accepts, as a man in the middle's would be), then asks
# for a login method that sends the password itself: mysql_clear_password,
# dialog, a full caching_sha2_password or sha256_password login.  Under
# required oncehook sends none of them the password (design 022); under
# verify-ca, with a certificate the CA file vouches for, it does (the
# fake's check).  Each connection's bytes, decrypted, in tfake.PORT.N.
tlsfake() {	# tlsfake PORT CERT KEY: in the background
	python3 - "$1" "$tmp/tfake.$1" "$2" "$3" <<'PY' &
import socket, ssl, struct, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(4)
s.settimeout(120)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[3], sys.argv[4])
methods = ["mysql_clear_password", "dialog", "caching_sha2_password",
           "sha256_password"]
nonce = b"abcdefghijklmnopqrst"

def packet(c, seq, body):
    c.sendall(struct.pack("<I", len(body))[:3] + bytes([seq]) + body)

def read(c, out):
    h = b""
    while len(h) < 4:
        d = c.recv(4 - len(h))
        if not d:
            raise EOFError
        h += d
    n = h[0] | h[1] << 8 | h[2] << 16
    b = b""
    while len(b) < n:
        d = c.recv(n - len(b))
        if not d:
            raise EOFError
        b += d
    out.write(h + b)
    return h[3], b

k = 0
while True:
    try:
        c, _ = s.accept()
    except OSError:
        break
    k += 1
    m = methods[(k - 2) % len(methods)]  # connection 1: the probe
    caps = 0x0001 | 0x0004 | 0x0008 | 0x0200 | 0x0800 | 0x2000 | 0x8000
    hi = 0x0002 | 0x0008
    p = (b"\x0a" + b"5.5.5-10.11.0-fake\0" + struct.pack("<I", 7) +
         nonce[:8] + b"\0" + struct.pack("<HBHH", caps, 45, 2, hi) +
         bytes([21]) + b"\0" * 10 + nonce[8:] + b"\0" +
         b"mysql_native_password\0")
    out = open("%s.%d" % (sys.argv[2], k), "wb", buffering=0)
    c.settimeout(5)
    try:
        with out:
            packet(c, 0, p)
            read(c, out)                    # the SSL request
            c = ctx.wrap_socket(c, server_side=True)
            seq, _ = read(c, out)           # the login
            if m == "dialog":
                data = b"\x05Password: "    # a password, the last question
            else:
                data = nonce + b"\0"
            packet(c, seq + 1, b"\xfe" + m.encode() + b"\0" + data)
            seq, _ = read(c, out)
            if m == "caching_sha2_password":
                packet(c, seq + 1, b"\x01\x04")  # full authentication
                seq, _ = read(c, out)
            while True:
                read(c, out)
    except (OSError, EOFError, ssl.SSLError):
        pass
    c.close()
PY
}
waitport() {	# waitport PORT
	i=0
	until python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 1)" \
	    2>/dev/null || [ $i -ge 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
tport=$(free_port) || bail "no free port"
tlsfake "$tport" "$pki/ca2.pem" "$pki/ca2.key"
fake_pid=$!
waitport "$tport"
k=1
for m in mysql_clear_password dialog caching_sha2_password sha256_password; do
	k=$((k + 1))
	chk ONCEHOOK_DB="mysql://tls@127.0.0.1:$tport/tls" ONCEHOOK_DB_TLS=required
	rc=$?
	[ $rc -eq 1 ] && said "the server asks for a login method that can send the password itself, refused where its certificate is not checked: use verify-ca or verify-identity (ONCEHOOK_DB_TLS=required)" &&
	    [ -s "$tmp/tfake.$tport.$k" ] &&
	    ! grep -q -a -F -e "$PW" "$tmp/tfake.$tport.$k"
	ck $? "required, a self-signed certificate, then $m asked for: no password sent (exit $rc, $(wc -c <"$tmp/tfake.$tport.$k" 2>/dev/null || echo no) bytes read)"
done
kill "$fake_pid" 2>/dev/null
wait "$fake_pid" 2>/dev/null
tport=$(free_port) || bail "no free port"
tlsfake "$tport" "$pki/server.pem" "$pki/server.key"
fake_pid=$!
waitport "$tport"
k=1
for m in mysql_clear_password dialog; do
	k=$((k + 1))
	chk ONCEHOOK_DB="mysql://tls@127.0.0.1:$tport/tls" ONCEHOOK_DB_TLS=verify-ca \
	    ONCEHOOK_DB_TLS_CA="$CA"
	i=0
	until grep -q -a -F -e "$PW" "$tmp/tfake.$tport.$k" 2>/dev/null ||
	    [ $i -ge 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q -a -F -e "$PW" "$tmp/tfake.$tport.$k"
	check $? "verify-ca, a certificate of the CA: $m is the server's to ask for (the fake reads the password)"
done
kill "$fake_pid" 2>/dev/null
wait "$fake_pid" 2>/dev/null
fake_pid=

# --- users that require TLS ----------------------------------------------

chk ONCEHOOK_DB="mysql://tlsreq@127.0.0.1:$port/tls" ONCEHOOK_DB_TLS=off
rc=$?
[ $rc -eq 1 ] && said "Access denied"
ck $? "REQUIRE SSL user, TLS off: refused by the server (exit $rc)"
chk ONCEHOOK_DB="mysql://tlsreq@127.0.0.1:$port/tls" ONCEHOOK_DB_TLS=verify-identity \
    ONCEHOOK_DB_TLS_CA="$CA"
ck $? "REQUIRE SSL user, verify-identity: connects"
chk ONCEHOOK_DB="mysql://tlsx509@127.0.0.1:$port/tls" ONCEHOOK_DB_TLS=verify-identity \
    ONCEHOOK_DB_TLS_CA="$CA"
rc=$?
[ $rc -eq 1 ] && said "Access denied"
check $? "REQUIRE X509 user without a client certificate: refused (exit $rc)"
chk ONCEHOOK_DB="mysql://tlsx509@127.0.0.1:$port/tls" ONCEHOOK_DB_TLS=verify-identity \
    ONCEHOOK_DB_TLS_CA="$CA" ONCEHOOK_DB_TLS_CERT="$pki/client.pem" \
    ONCEHOOK_DB_TLS_KEY="$pki/client.key"
ck $? "REQUIRE X509 user with ONCEHOOK_DB_TLS_CERT and _KEY: connects"
said "oncehook check: warning: $pki/client.key is readable by others (mode 644); chmod 600 it"
check $? "check warns of a client key others may read"
chmod 0600 "$pki/client.key"
# A key inside the document root is refused, as the password file.
mkdir -p "$tmp/www" && cp "$pki/client.pem" "$pki/client.key" "$tmp/www/" ||
    bail "cp"
chk DOCUMENT_ROOT="$tmp/www" ONCEHOOK_DB_TLS=verify-identity \
    ONCEHOOK_DB_TLS_CA="$CA" ONCEHOOK_DB_TLS_CERT="$tmp/www/client.pem" \
    ONCEHOOK_DB_TLS_KEY="$tmp/www/client.key"
rc=$?
st=$(cgi "$(event evt_tls_8 ord-tls-8)" DOCUMENT_ROOT="$tmp/www" \
    ONCEHOOK_DB_TLS=verify-identity ONCEHOOK_DB_TLS_CA="$CA" \
    ONCEHOOK_DB_TLS_CERT="$tmp/www/client.pem" \
    ONCEHOOK_DB_TLS_KEY="$tmp/www/client.key")
[ $rc -eq 1 ] && said "$tmp/www/client.key lies inside DOCUMENT_ROOT" &&
    [ "$st" = "Status: 500 Internal Server Error" ] &&
    [ "$(stored evt_tls_8 ord-tls-8)" = 0 ] &&
    grep -q "status=500 .*$tmp/www/client.key lies inside the document root" \
    "$tmp/cgi.log"
ck $? "a client key inside the document root: check exit $rc, a delivery '$st'"
chk ONCEHOOK_DB="mysql://tlsx509@127.0.0.1:$port/tls" ONCEHOOK_DB_TLS=verify-identity \
    ONCEHOOK_DB_TLS_CA="$CA" ONCEHOOK_DB_TLS_CERT="$pki/client.pem" \
    ONCEHOOK_DB_TLS_KEY="$pki/client.key"
rc=$?
[ $rc -eq 0 ] && ! said "readable by others"
check $? "... and not of one at mode 600 (exit $rc)"

# --- configuration errors and files ------------------------------------

# bad EXIT TEXT VAR=VALUE...: check's exit and message
bad() {
	bexit=$1 btext=$2
	shift 2
	chk "$@"
	rc=$?
	[ $rc -eq "$bexit" ] && said "$btext"
	ck $? "refused ($*): $btext"
}
sock="mysql://tls@localhost/tls?socket=$MD_SOCK"
bad 1 'ONCEHOOK_DB_TLS: want off, required, verify-ca or verify-identity (got "yes")' \
    ONCEHOOK_DB_TLS=yes
bad 1 "ONCEHOOK_DB_TLS: verify-ca needs ONCEHOOK_DB_TLS_CA" ONCEHOOK_DB_TLS=verify-ca
bad 1 "ONCEHOOK_DB_TLS_CA: set with ONCEHOOK_DB_TLS=required, which checks no certificate" \
    ONCEHOOK_DB_TLS=required ONCEHOOK_DB_TLS_CA="$CA"
bad 1 "ONCEHOOK_DB_TLS_CA: set while ONCEHOOK_DB_TLS is off" ONCEHOOK_DB_TLS_CA="$CA"
bad 1 "ONCEHOOK_DB_TLS_CERT: set while ONCEHOOK_DB_TLS is off" ONCEHOOK_DB_TLS=off \
    ONCEHOOK_DB_TLS_CERT="$pki/client.pem" ONCEHOOK_DB_TLS_KEY="$pki/client.key"
bad 1 "ONCEHOOK_DB_TLS_CERT: the client certificate and its key go together" \
    ONCEHOOK_DB_TLS=required ONCEHOOK_DB_TLS_CERT="$pki/client.pem"
bad 1 "ONCEHOOK_DB_TLS_KEY: the client certificate and its key go together" \
    ONCEHOOK_DB_TLS=required ONCEHOOK_DB_TLS_KEY="$pki/client.key"
bad 1 'ONCEHOOK_DB_TLS_CA: must be an absolute path (got "ca.pem")' \
    ONCEHOOK_DB_TLS=verify-ca ONCEHOOK_DB_TLS_CA=ca.pem
bad 1 "ONCEHOOK_DB_TLS: required: mysql://...@localhost connects through the server's unix socket, which carries no TLS" \
    ONCEHOOK_DB="$sock" ONCEHOOK_DB_TLS=required
bad 1 "ONCEHOOK_DB_TLS: verify-identity: mysql://...@localhost connects through" \
    ONCEHOOK_DB="mysql://tls@localhost:$port/tls" ONCEHOOK_DB_TLS=verify-identity
bad 1 "ONCEHOOK_DB_TLS_CA: set, but the server's unix socket (localhost) carries no TLS" \
    ONCEHOOK_DB="$sock" ONCEHOOK_DB_TLS_CA="$CA"
bad 1 "ONCEHOOK_DB_TLS_CA: $tmp/none.pem: No such file or directory" \
    ONCEHOOK_DB_TLS=verify-ca ONCEHOOK_DB_TLS_CA="$tmp/none.pem"
# A delivery meets it as the password file's: what the operator fixes.
st=$(cgi "$(event evt_tls_7 ord-tls-7)" ONCEHOOK_DB_TLS=verify-ca \
    ONCEHOOK_DB_TLS_CA="$tmp/none.pem")
[ "$st" = "Status: 500 Internal Server Error" ] &&
    [ "$(stored evt_tls_7 ord-tls-7)" = 0 ] &&
    grep -q "status=500 .*ONCEHOOK_DB_TLS_CA: $tmp/none.pem: No such file" \
    "$tmp/cgi.log"
check $? "a missing CA file: a delivery is 500, logged naming it, nothing stored ('$st')"
chk ONCEHOOK_DB="$sock"
said ", TLS off, tables"
ck $? "the unix socket: TLS off by default, check connects"
# A client library that refuses a TLS option (an older or other one):
# a configuration error naming the setting, never a verify-ca that
# checks nothing (tests/servers/refuseopt.c, preloaded, refuses the one
# named).
# shellcheck disable=SC2086 # HEADER_CFLAGS: words
${CC:-cc} ${HEADER_CFLAGS:-} -shared -fPIC -o "$tmp/refuseopt.so" \
    "$top_srcdir/tests/servers/refuseopt.c" -ldl 2>"$tmp/cc.err" || {
	sed 's/^/# /' "$tmp/cc.err"
	bail "cannot build tests/servers/refuseopt.c"
}
for o in MYSQL_OPT_SSL_ENFORCE:ONCEHOOK_DB_TLS=verify-ca \
    MYSQL_OPT_SSL_VERIFY_SERVER_CERT:ONCEHOOK_DB_TLS=verify-identity \
    MYSQL_OPT_SSL_CA:ONCEHOOK_DB_TLS_CA MYSQL_OPT_SSL_CERT:ONCEHOOK_DB_TLS_CERT \
    MYSQL_OPT_SSL_KEY:ONCEHOOK_DB_TLS_KEY \
    MARIADB_OPT_TLS_PASSPHRASE:ONCEHOOK_DB_TLS_KEY; do
	opt=${o%%:*} var=${o#*:}
	tls=verify-ca
	case $var in *=verify-identity) tls=verify-identity ;; esac
	chk LD_PRELOAD="$tmp/refuseopt.so" REFUSE_OPTION="$opt" \
	    ONCEHOOK_DB_TLS=$tls ONCEHOOK_DB_TLS_CA="$CA" \
	    ONCEHOOK_DB_TLS_CERT="$pki/client.pem" \
	    ONCEHOOK_DB_TLS_KEY="$pki/client.key"
	rc=$?
	[ $rc -eq 1 ] && said "oncehook check: $var: this client library" &&
	    said "refused its option $opt" && ! said "database ok"
	ck $? "the library refuses $opt: check exit $rc naming $var"
done
st=$(cgi "$(event evt_tls_9 ord-tls-9)" LD_PRELOAD="$tmp/refuseopt.so" \
    REFUSE_OPTION=MYSQL_OPT_SSL_CA ONCEHOOK_DB_TLS=verify-ca \
    ONCEHOOK_DB_TLS_CA="$CA")
[ "$st" = "Status: 500 Internal Server Error" ] &&
    [ "$(stored evt_tls_9 ord-tls-9)" = 0 ] &&
    grep -q "status=500 .*ONCEHOOK_DB_TLS_CA: this client library .* refused its option MYSQL_OPT_SSL_CA" \
    "$tmp/cgi.log"
check $? "... a delivery meets it as a configuration error: 500, logged, nothing stored ('$st')"
chk ONCEHOOK_DB="mysql://tls@db.invalid:$port/tls"
said "ONCEHOOK_DB_TLS                  verify-identity"
check $? "a host not the loopback: verify-identity by default"

# A CA file oncehook may not read: named, not an OpenSSL error.
cp "$CA" "$tmp/ca-private.pem" && chmod 0600 "$tmp/ca-private.pem"
if [ "$(id -u)" = 0 ]; then
	chown nobody "$tmp/pw" "$tmp/actions.sql" 2>/dev/null
	chown root "$tmp/ca-private.pem"
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- env \
	    ONCEHOOK_DB_TLS=verify-ca ONCEHOOK_DB_TLS_CA="$tmp/ca-private.pem" \
	    "$ONCEHOOK_BIN" check >"$tmp/chk.out" 2>&1
	rc=$?
	chown root "$tmp/pw" "$tmp/actions.sql"
else
	chmod 0000 "$tmp/ca-private.pem"
	chk ONCEHOOK_DB_TLS=verify-ca ONCEHOOK_DB_TLS_CA="$tmp/ca-private.pem"
	rc=$?
fi
[ $rc -eq 1 ] && said "ONCEHOOK_DB_TLS_CA: $tmp/ca-private.pem: Permission denied"
ck $? "an unreadable CA file: check names it (exit $rc)"

# An encrypted key: refused at once, even with a terminal to prompt on.
if command -v script >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1; then
	ONCEHOOK_DB_TLS=required ONCEHOOK_DB_TLS_CERT="$pki/client.pem" \
	    ONCEHOOK_DB_TLS_KEY="$pki/client-enc.key" timeout 20 \
	    script -qec "$ONCEHOOK_BIN check" /dev/null </dev/null \
	    >"$tmp/chk.out" 2>&1
	rc=$?
	[ $rc -eq 1 ] && said "bad decrypt (ONCEHOOK_DB_TLS=required)" &&
	    ! said "pass phrase"
	ck $? "an encrypted key: refused, no passphrase prompt (exit $rc)"
else
	tap skip "an encrypted key: refused, no passphrase prompt" "no script or timeout"
fi

# --- nothing readable on the wire -----------------------------------------

# capture NAME EVENT ORDER VAR=VALUE...: check and a delivery while
# tcpdump records the server's port; the capture in $tmp/NAME.pcap.
capture() {
	cname=$1 cev=$2 cord=$3
	shift 3
	tcpdump -i lo --immediate-mode -U -s 0 -w "$tmp/$cname.pcap" "tcp port $port" \
	    2>"$tmp/$cname.tcpdump" &
	dump_pid=$!
	i=0
	until grep -q 'listening on' "$tmp/$cname.tcpdump" || [ $i -ge 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	chk "$@" || show
	st=$(cgi "$(event "$cev" "$cord")" "$@")
	sleep 0.3
	kill -INT "$dump_pid" 2>/dev/null
	wait "$dump_pid" 2>/dev/null
	dump_pid=
	[ "$st" = "Status: 200 OK" ] && [ "$(stored "$cev" "$cord")" = 2 ]
}
# seen FILE TEXT: TEXT in the capture, as sent (\0 for a NUL byte)
seen() {
	python3 -c 'import sys
want = sys.argv[2].replace("\\0", "\0").encode()
sys.exit(0 if want in open(sys.argv[1], "rb").read() else 1)' "$1" "$2"
}
if [ "$(id -u)" != 0 ] || ! command -v tcpdump >/dev/null 2>&1; then
	for w in "TLS capture" "clear capture"; do
		tap skip "$w of the loopback" "needs root and tcpdump"
	done
else
	ev=evt_wire_$$
	ord=ord-wire-$$-secretorder
	capture tls "$ev" "$ord" $VI
	rc=$?
	pkts=$(tcpdump -r "$tmp/tls.pcap" 2>/dev/null | wc -l)
	[ $rc -eq 0 ] && [ "$pkts" -gt 20 ] && ! seen "$tmp/tls.pcap" "$ev" &&
	    ! seen "$tmp/tls.pcap" "$ord" && ! seen "$tmp/tls.pcap" "$PW" &&
	    ! seen "$tmp/tls.pcap" "oncehook_events" &&
	    ! seen "$tmp/tls.pcap" '\0tls\0'
	check $? "TLS capture ($pkts packets): no event key, order data, password, user name or SQL"
	capture clear "${ev}c" "${ord}c" ONCEHOOK_DB_TLS=off
	rc=$?
	[ $rc -eq 0 ] && seen "$tmp/clear.pcap" "${ev}c" &&
	    seen "$tmp/clear.pcap" "${ord}c" &&
	    seen "$tmp/clear.pcap" "oncehook_events" &&
	    seen "$tmp/clear.pcap" '\0tls\0'
	check $? "clear capture (TLS off): the event key, order data, user name and SQL are there"
	# The password itself is in neither: mysql_native_password sends a
	# scramble of it, TLS or not.
	! seen "$tmp/clear.pcap" "$PW"
	check $? "clear capture: the password itself is not sent (a scramble)"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
