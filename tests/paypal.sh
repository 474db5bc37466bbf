#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook tests: PayPal's scheme through every way it is deployed, its
# signing certificates fetched over HTTPS from a local server standing
# for PayPal's certificate host (tests/e2e/paypal.py says what is sent
# and checked, and how).
#
# A test CA, PayPal's signing key and its certificates (valid, the
# sandbox's, through an intermediate, expired, by another CA, self-
# signed, issued to another name) and the HTTPS server's certificate are
# made here with the openssl CLI.  The deliveries go through three
# deployments, each a database of its own, its example filled in with
# only its ports, paths and values (tests/servers/lighttpd.sh,
# tests/servers/deploy.sh), the example's endpoints replaced by one
# "paypal" endpoint and the test's certificate host and CA given as each
# deployment passes ONCEHOOK_* variables (ONCEHOOK_TEST_CERT_HOSTS,
# ONCEHOOK_TEST_CERT_CA):
#
#   lighttpd + FastCGI  conf-examples/lighttpd-fastcgi.conf
#   lighttpd + CGI      conf-examples/lighttpd-cgi.conf
#   nginx + serve       conf-examples/nginx.conf in front of "oncehook
#                       serve", run as conf-examples/oncehook.service says
#
# Each gets the valid delivery and its retry, the refused ones (401,
# nothing stored), the certificate host down (503, Retry-After) and back
# (200), and 1,000 events signed once here, sent over 4 connections at
# once, whose certificate must be fetched exactly once (CGI: from the
# disk cache; FastCGI and serve: the memory cache, the disk cache for
# the other processes; the processes that miss at once wait for the
# one holding the cache's fetch.lock).
#
# ONCEHOOK_PAYPAL_BULK=N sends N events in place of the 1,000 (a quick
# run while working on it).
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped (no
# python3 or openssl), 99 harness error.  A deployment whose server is
# not installed is skipped (a SKIP line).  As root, the servers' workers
# and oncehook run as nobody:nogroup.  About 30 s (signing the 1,000
# events and their CGI requests are most of it).

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"

dp_init paypal
command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"
for f in tests/e2e/paypal.py tests/e2e/actions-schemes.sql \
    conf-examples/lighttpd-fastcgi.conf conf-examples/lighttpd-cgi.conf \
    conf-examples/nginx.conf conf-examples/oncehook.service \
    tests/deploy/supervise.py; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done
paypal=$top_srcdir/tests/e2e/paypal.py
WEBHOOK_ID=8PT597110X687430LKGECATA
BULK=${ONCEHOOK_PAYPAL_BULK:-1000}

# -- the certificates ------------------------------------------------------

pki=$tmp/pki
mkdir -p "$pki/cadb" || bail "mkdir $pki"
name=messageverificationcerts.paypal.com
ossl() {
	openssl "$@" >>"$pki/openssl.log" 2>&1 ||
	    { sed 's/^/# /' "$pki/openssl.log"; bail "openssl $1 failed"; }
}
# req -new then x509 -req: a leaf of KEY for CN, SAN DNS:CN, by CA.
leaf() {	# leaf KEY CN CA OUT [EXTFILE]
	ossl req -new -key "$pki/$1" -subj "/CN=$2" -out "$pki/$4.csr"
	printf 'subjectAltName=DNS:%s\n' "$2" >"$pki/$4.ext"
	ossl x509 -req -in "$pki/$4.csr" -CA "$pki/$3.pem" \
	    -CAkey "$pki/$3.key" -CAcreateserial -days 30 \
	    -extfile "${5:-$pki/$4.ext}" -out "$pki/$4.pem"
}
(
	cd "$pki" || exit 1
	for k in ca ca2 inter sign other tls; do
		openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
		    -out "$k.key" 2>>openssl.log || exit 1
	done
) || bail "openssl genpkey failed"
ossl req -x509 -key "$pki/ca.key" -subj "/CN=oncehook test CA" -days 30 \
    -out "$pki/ca.pem"
ossl req -x509 -key "$pki/ca2.key" -subj "/CN=oncehook other CA" -days 30 \
    -out "$pki/ca2.pem"
printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n' \
    >"$pki/inter.cnf"
leaf inter.key "oncehook test intermediate CA" ca inter "$pki/inter.cnf"
leaf sign.key "$name" ca valid
leaf sign.key messageverificationcerts.sandbox.paypal.com ca sandbox
leaf sign.key "$name" ca2 otherca
leaf sign.key "$name" inter leafinter
cat "$pki/leafinter.pem" "$pki/inter.pem" >"$pki/chain.pem"
leaf sign.key messageverificationcerts.example.com ca wrongname
ossl req -x509 -key "$pki/sign.key" -subj "/CN=$name" \
    -addext "subjectAltName=DNS:$name" -days 30 -out "$pki/selfsigned.pem"
ossl req -x509 -key "$pki/other.key" -subj "/CN=$name" \
    -addext "subjectAltName=DNS:$name" -days 30 -out "$pki/planted.pem"
# Expired: "openssl ca" sets dates in the past (x509 -req cannot in 3.0).
: >"$pki/cadb/index.txt"
echo 1000 >"$pki/cadb/serial"
cat >"$pki/ca.cnf" <<EOF
[ ca ]
default_ca = test
[ test ]
database = $pki/cadb/index.txt
serial = $pki/cadb/serial
new_certs_dir = $pki/cadb
certificate = $pki/ca.pem
private_key = $pki/ca.key
default_md = sha256
policy = any
unique_subject = no
[ any ]
commonName = supplied
[ leaf ]
subjectAltName = DNS:$name
EOF
ossl ca -batch -config "$pki/ca.cnf" -extensions leaf -notext \
    -startdate 20200101000000Z -enddate 20200201000000Z \
    -in "$pki/valid.csr" -out "$pki/expired.pem"
ossl req -new -key "$pki/tls.key" -subj "/CN=127.0.0.1" -out "$pki/tls.csr"
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$pki/tls.ext"
ossl x509 -req -in "$pki/tls.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" \
    -CAcreateserial -days 30 -extfile "$pki/tls.ext" -out "$pki/tls.pem"
# The backends read the CA only.
chmod 0755 "$pki"
chmod 0644 "$pki/ca.pem"
tap ok "the test CA and PayPal's certificates made with openssl"

# The certificate host's ports, listed and not, for a deployment whose
# server listens on SERVER_PORT (free ports, none bound yet: distinct).
pick_ports() {	# pick_ports SERVER_PORT
	port=$1
	while [ "$port" = "$1" ]; do
		port=$(free_port) || bail "no free port"
	done
	port2=$1
	while [ "$port2" = "$1" ] || [ "$port2" = "$port" ]; do
		port2=$(free_port) || bail "no free port"
	done
	hosts="127.0.0.1:$port"
}

# The bulk, signed once: each deployment has a database of its own.
# shellcheck disable=SC2086 # watchdog is a command and its argument
$watchdog python3 "$paypal" bulk --pki "$pki" --secret "$WEBHOOK_ID" \
    --count "$BULK" --out "$tmp/bulk.json" >"$tmp/bulk.out" 2>&1 ||
    { sed 's/^/# /' "$tmp/bulk.out"; bail "signing the bulk failed"; }
echo "# $BULK events signed in $(($(date +%s) - dp_start))s (with the PKI)"

# run_paypal LABEL DIR LOG BASE: "paypal.py send", its lines numbered as
# LABEL's; a run that ends early or prints no result is a failure.
run_paypal() {
	mkdir -p "$tmp/sign" || bail "mkdir $tmp/sign"
	# shellcheck disable=SC2086
	$watchdog python3 "$paypal" send --label "$1" --url "$4" \
	    --db "$2/db/oncehook.db" --pki "$pki" --secret "$WEBHOOK_ID" \
	    --port "$port" --port2 "$port2" --log "$3" \
	    --bin "$ONCEHOOK_BIN" --tmp "$tmp/sign" --bulk "$tmp/bulk.json" \
	    >"$tmp/py.tap" 2>"$tmp/py.err"
	rp_rc=$?
	dp_relay "$1" <"$tmp/py.tap"
	if [ $rp_rc -gt 1 ] ||
	    ! grep -q -e '^ok' -e '^not ok' "$tmp/py.tap"; then
		tap not-ok "$1: paypal.py send ran to its end (exit $rp_rc)"
	fi
	sed 's/^/# /' "$tmp/py.err"
}

# The endpoint in place of the example's in DIR's FILE (FORMAT lighttpd
# or env), running DIR/sql/schemes.sql.
use_paypal() {	# use_paypal DIR FORMAT FILE...
	up_d=$1
	up_f=$2
	shift 2
	cp "$top_srcdir/tests/e2e/actions-schemes.sql" "$up_d/sql/schemes.sql" ||
	    bail "copying actions-schemes.sql"
	chmod 0644 "$up_d/sql/schemes.sql"
	for up_file; do
		python3 "$paypal" conf "$up_f" "$up_file" \
		    "$up_d/sql/schemes.sql" --secret "$WEBHOOK_ID" \
		    --hosts "$hosts" --ca "$pki/ca.pem" ||
		    bail "paypal.py conf $up_file"
	done
}

# -- the three deployments (tests/servers/deploy.sh) ------------------------

# conf_paypal DIR FORMAT PORT FILE...: the certificate host's ports
# (never the server's), then the endpoint.
conf_paypal() {
	cp_d=$1
	cp_f=$2
	pick_ports "$3"
	shift 3
	use_paypal "$cp_d" "$cp_f" "$@"
}

dp_each_deployment conf_paypal run_paypal

dp_done
