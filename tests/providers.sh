#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook against the providers' own libraries, from the npm registry at
# the exact versions of tests/node/package-lock.json: stripe,
# standardwebhooks, @octokit/webhooks-methods, razorpay, twilio, square,
# and for the public-key schemes discord-interactions, telnyx and
# @sendgrid/eventwebhook.
#
# 1. Deliveries signed by those libraries (tests/node/deliver.mjs) are
#    sent to oncehook behind a real lighttpd, started from the shipped
#    conf-examples/lighttpd-fastcgi.conf, then lighttpd-cgi.conf, with
#    only its ports, paths and values filled in (tests/servers/lighttpd.sh)
#    and the twilio and square endpoints added: each is processed once,
#    answered already_processed when sent again, refused (401) with its
#    body changed.
# 2. What "oncehook sign" prints is accepted by those libraries' own
#    verify functions (tests/node/verify.mjs), and refused by them once
#    the payload changes or the timestamp is an hour old.
# 3. What "oncehook sign --key" prints, with key pairs made here by
#    openssl, is accepted by discord-interactions' verifyKey, Telnyx's
#    TelnyxWebhook.verify and @sendgrid/eventwebhook's verifySignature,
#    and refused by them for a payload changed or another key.  Standard
#    Webhooks' v1a, which the standardwebhooks library does not verify
#    (v1 only), is checked with node:crypto, and sign's v1a with RFC
#    8032's test key 1 must give the vector derived from it exactly.
#    (Deliveries these libraries accept, sent to oncehook through real
#    servers: tests/schemes.sh.)
#
# The libraries are installed with "npm ci" into a temporary directory,
# never into the source tree (read-only under distcheck), or linked from
# tools/test.sh's install of the same package-lock.json (sv_npm_ci()).
#
# Run by "make check" with top_srcdir, top_builddir and ONCEHOOK_BIN set.
# Speaks TAP.  Exit status: 0 all passed, 1 some failed, 77 skipped (no
# node, npm or python3), 99 harness error (npm ci failed, say).  Without
# lighttpd, part 1 is skipped and part 2 still runs.

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/servers/lib.sh
. "$top_srcdir/tests/servers/lib.sh"

# The URL-signing providers' endpoints, added to the filled example by
# add_endpoints: their secrets, and the public URLs they are configured
# with and sign (never the 127.0.0.1 URL the tests post to).
TWILIO_SECRET=twilio-providers-auth-token-0123
SQUARE_SECRET=square-providers-signature-key-0123
TWILIO_URL='https://shop.example/hooks/twilio?site=1'
SQUARE_URL=https://shop.example/hooks/square

# add_endpoints DIR: endpoints razorpay, twilio and square in DIR's
# filled lighttpd example (bin-environment), then DIR/conf/env again.
add_endpoints() {
	python3 -c '
import re, sys
path, actions, rzs, tws, twu, sqs, squ = sys.argv[1:]
text = open(path, encoding="utf-8").read()
m = re.search(r"^([ \t]*)\"ONCEHOOK_ENDPOINTS\" => \"([^\"]*)\",\n", text,
              re.M)
if not m:
    sys.exit("no ONCEHOOK_ENDPOINTS line in " + path)
ind = m.group(1)
add = "".join("%s\"ONCEHOOK_%s_%s\" => \"%s\",\n" % (ind, n, k, v)
              for n, s, u in (("RAZORPAY", rzs, None), ("TWILIO", tws, twu),
                              ("SQUARE", sqs, squ))
              for k, v in (("SCHEME", n.lower()), ("SECRET", s), ("URL", u),
                           ("ACTIONS", actions)) if v is not None)
text = (text[:m.start()] + "%s\"ONCEHOOK_ENDPOINTS\" => "
        "\"%s,razorpay,twilio,square\",\n" % (ind, m.group(2)) + add +
        text[m.end():])
open(path, "w", encoding="utf-8").write(text)
' "$1/conf/oncehook.conf" "$1/sql/orders.sql" "$RAZORPAY_SECRET" \
	    "$TWILIO_SECRET" "$TWILIO_URL" "$SQUARE_SECRET" "$SQUARE_URL" &&
	    lt_env "$1"
}

# Renumber the "ok - ..." / "not ok - ..." lines of a script, each
# description after the prefix $1.
relay() {
	while IFS= read -r line; do
		case $line in
		"ok - "*) tap ok "$1${line#ok - }" ;;
		"not ok - "*) tap not-ok "$1${line#not ok - }" ;;
		*) printf '%s\n' "$line" ;;
		esac
	done
}

for tool in node npm python3; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool is not installed"
		exit 77
	fi
done
[ -x "$ONCEHOOK_BIN" ] || bail "ONCEHOOK_BIN=$ONCEHOOK_BIN is not an executable"
for f in tests/node/package.json tests/node/package-lock.json \
    tests/node/deliver.mjs tests/node/verify.mjs tests/servers/lighttpd.sh; do
	[ -r "$top_srcdir/$f" ] || bail "missing $top_srcdir/$f"
done

watchdog=
if command -v timeout >/dev/null 2>&1; then
	watchdog="timeout 300"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-providers.XXXXXX") ||
    bail "mktemp failed"

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	lt_stop
	sv_tmp_done "$tmp"
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

start=$(date +%s)

# Razorpay's webhook secret: any string the dashboard is given.
RAZORPAY_SECRET=e2e-razorpay-webhook-secret-6c3e

# The libraries, exactly as locked, beside the scripts (Node.js resolves
# an ES module's imports from the module's own directory).
node=$tmp/node
mkdir -p "$node" || bail "mkdir $node"
cp "$top_srcdir/tests/node/package.json" \
    "$top_srcdir/tests/node/package-lock.json" \
    "$top_srcdir/tests/node/deliver.mjs" "$top_srcdir/tests/node/verify.mjs" \
    "$node/" || bail "copying tests/node"
chmod u+w "$node"/* 2>/dev/null
if ! sv_npm_ci "$node" "$tmp/npm.log"; then
	sed 's/^/# /' "$tmp/npm.log"
	bail "npm ci failed in $node"
fi
echo "# node $(node --version); $(cd "$node" && node -e '
for (const p of ["stripe", "standardwebhooks", "@octokit/webhooks-methods",
    "razorpay", "twilio", "square", "discord-interactions", "telnyx",
    "@sendgrid/eventwebhook"])
	process.stdout.write(p + " " +
	    require("./node_modules/" + p + "/package.json").version + "; ");
')"

# -- 1. deliveries signed by the libraries, through lighttpd ----------

if command -v lighttpd >/dev/null 2>&1 || [ -x /usr/sbin/lighttpd ]; then
	lt_find
	# FastCGI, then CGI (each request a process): the same deliveries.
	for mode in fastcgi cgi; do
		d=$tmp/$mode
		lt_setup $mode "$d"
		add_endpoints "$d" ||
		    bail "adding the razorpay, twilio and square endpoints"
		if lt_start "$d" $mode; then
			tap ok "lighttpd starts with conf-examples/lighttpd-$mode.conf"
			STRIPE_SECRET=$STRIPE_SECRET STANDARD_SECRET=$STANDARD_SECRET \
			    SVIX_SECRET=$SVIX_SECRET GITHUB_SECRET=$GITHUB_SECRET \
			    RAZORPAY_SECRET=$RAZORPAY_SECRET \
			    TWILIO_SECRET=$TWILIO_SECRET TWILIO_URL=$TWILIO_URL \
			    SQUARE_SECRET=$SQUARE_SECRET SQUARE_URL=$SQUARE_URL \
			    $watchdog node "$node/deliver.mjs" \
			    "http://127.0.0.1:$lt_port/hooks" >"$tmp/deliver.tap" \
			    2>"$tmp/deliver.err"
			rc=$?
			relay "$mode: " <"$tmp/deliver.tap"
			if [ $rc -gt 1 ]; then
				tap not-ok "$mode: deliver.mjs ran to its end (exit $rc)"
				sed 's/^/# /' "$tmp/deliver.err"
			fi
			# One event row per endpoint: each library's delivery, once
			# (twilio: a form and a JSON body).
			rows=$(python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(" ".join("%s=%d" % r for r in db.execute(
    "SELECT endpoint, count(*) FROM events GROUP BY endpoint "
    "ORDER BY endpoint")))' "$d/db/oncehook.db" 2>&1)
			want="github=1 razorpay=1 square=1 standard=1 stripe=1"
			if [ "$rows" = "$want svix=1 twilio=2" ]; then
				tap ok "$mode: one event row per library's delivery ($rows)"
			else
				tap not-ok "$mode: one event row per library's delivery"
				echo "#   events by endpoint: $rows"
			fi
			lt_stop
			if [ $failed -gt 0 ]; then
				tail -n 20 "$d/log/breakage.log" 2>/dev/null |
				    sed 's/^/# oncehook: /'
			fi
		fi
		lt_sanitizer "$d" $mode
	done
else
	tap skip "deliveries signed by the libraries, through lighttpd" \
	    "lighttpd is not installed"
fi

# -- 2. "oncehook sign" checked by the libraries ------------------------

# The configuration "oncehook sign" reads: the same secrets.
cat >"$tmp/sign.env" <<EOF
ONCEHOOK_DB=$tmp/unused.db
ONCEHOOK_ENDPOINTS=stripe,standard,svix,github,razorpay,twilio,square
ONCEHOOK_STRIPE_SCHEME=stripe
ONCEHOOK_STRIPE_SECRET=$STRIPE_SECRET
ONCEHOOK_STANDARD_SCHEME=standard
ONCEHOOK_STANDARD_SECRET=$STANDARD_SECRET
ONCEHOOK_SVIX_SCHEME=svix
ONCEHOOK_SVIX_SECRET=$SVIX_SECRET
ONCEHOOK_GITHUB_SCHEME=github
ONCEHOOK_GITHUB_SECRET=$GITHUB_SECRET
ONCEHOOK_RAZORPAY_SCHEME=razorpay
ONCEHOOK_RAZORPAY_SECRET=$RAZORPAY_SECRET
ONCEHOOK_TWILIO_SCHEME=twilio
ONCEHOOK_TWILIO_SECRET=$TWILIO_SECRET
ONCEHOOK_TWILIO_URL=$TWILIO_URL
ONCEHOOK_SQUARE_SCHEME=square
ONCEHOOK_SQUARE_SECRET=$SQUARE_SECRET
ONCEHOOK_SQUARE_URL=$SQUARE_URL
EOF

# A payload as a file: UTF-8 beyond ASCII, a trailing newline; sign
# must sign its exact bytes.  The tampered copy differs in one digit.
printf '{"id":"evt_sign_1","type":"customer.created","livemode":false,"data":{"object":{"name":"Zo\303\253 \342\230\203","amount":4999}}}\n' \
    >"$tmp/payload.json"
sed 's/4999/4998/' "$tmp/payload.json" >"$tmp/tampered.json"
cmp -s "$tmp/payload.json" "$tmp/tampered.json" && bail "tampering failed"

# oncehook sign ENDPOINT [ARGS...] > headers: 0 if it worked.
sign() {
	(
		while IFS= read -r kv; do
			# shellcheck disable=SC2163 # kv is NAME=value
			export "$kv"
		done <"${sign_env:-$tmp/sign.env}"
		"$ONCEHOOK_BIN" sign --endpoint "$@"
	)
}

# verify WANT LIB SECRET PAYLOAD HEADERS DESCRIPTION [WHY]: WANT is 0
# (accepted) or 1 (refused, for a reason the library words as the
# extended regular expression WHY).
verify() {
	out=$($watchdog node "$node/verify.mjs" "$2" "$3" "$4" "$5" \
	    "${vurl:-}" 2>&1)
	rc=$?
	if [ $rc -eq "$1" ] && { [ $# -lt 7 ] ||
	    printf '%s\n' "$out" | grep -Eiq "$7"; }; then
		tap ok "$6"
	else
		tap not-ok "$6"
		echo "#   verify.mjs exit $rc, want $1: $out"
		sed 's/^/#   header: /' "$5"
	fi
}

# one LIB ENDPOINT SECRET: sign now, verify; verify the tampered
# payload; for timestamped schemes sign an hour ago, verify.
one() {
	lib=$1
	ep=$2
	secret=$3
	h=$tmp/$ep.headers
	if ! sign "$ep" "$tmp/payload.json" >"$h" 2>"$tmp/sign.err"; then
		tap not-ok "oncehook sign --endpoint $ep runs"
		sed 's/^/#   /' "$tmp/sign.err"
		return
	fi
	verify 0 "$lib" "$secret" "$tmp/payload.json" "$h" \
	    "$lib accepts what oncehook sign --endpoint $ep prints"
	verify 1 "$lib" "$secret" "$tmp/tampered.json" "$h" \
	    "$lib refuses it for a payload one digit off" \
	    'signature|returned false'
	case $ep in
	stripe | standard)
		sign "$ep" --time $(($(date +%s) - 3600)) "$tmp/payload.json" \
		    >"$h.old" 2>"$tmp/sign.err" ||
		    tap not-ok "oncehook sign --endpoint $ep --time runs"
		verify 1 "$lib" "$secret" "$tmp/payload.json" "$h.old" \
		    "$lib refuses oncehook sign --time an hour ago (stale)" \
		    'tolerance|too old'
		;;
	esac
}

one stripe stripe "$STRIPE_SECRET"
one standardwebhooks standard "$STANDARD_SECRET"
one svix svix "$SVIX_SECRET"
one octokit github "$GITHUB_SECRET"
one razorpay razorpay "$RAZORPAY_SECRET"

# The delivery id and event type given to sign are the headers GitHub
# sends beside the signature, and the signature still verifies.
h=$tmp/github-id.headers
if sign github --id 72d3162e-cc78-11e3-81ab-4c9367dc0958 --event push \
    "$tmp/payload.json" >"$h" 2>"$tmp/sign.err" &&
    grep -qx 'X-GitHub-Delivery: 72d3162e-cc78-11e3-81ab-4c9367dc0958' "$h" &&
    grep -qx 'X-GitHub-Event: push' "$h"; then
	verify 0 octokit "$GITHUB_SECRET" "$tmp/payload.json" "$h" \
	    "octokit accepts oncehook sign --id --event, which sets X-GitHub-Delivery and X-GitHub-Event"
else
	tap not-ok "oncehook sign --id --event sets X-GitHub-Delivery and X-GitHub-Event"
	sed 's/^/#   /' "$h" "$tmp/sign.err"
fi

# twilio and square sign the endpoint's ONCEHOOK_<NAME>_URL: what sign
# prints is accepted by the libraries given that URL, refused by them
# given another one.  Twilio's payload is a form, as Twilio posts it.
printf '%s\n' 'MessageSid=SMsign1&MessageStatus=delivered&To=%2B15005550006&Body=Zo%C3%AB+%E2%98%83&MediaUrl=https%3A%2F%2Fa.example%2F1&MediaUrl=https%3A%2F%2Fa.example%2F2' \
    >"$tmp/payload.form"
sed 's/delivered/failed/' "$tmp/payload.form" >"$tmp/tampered.form"
h=$tmp/twilio-form.headers
vurl=$TWILIO_URL
if sign twilio --id idem_sign_1 "$tmp/payload.form" >"$h" 2>"$tmp/sign.err" &&
    grep -qx 'Content-Type: application/x-www-form-urlencoded' "$h" &&
    grep -qx 'I-Twilio-Idempotency-Token: idem_sign_1' "$h"; then
	verify 0 twilio "$TWILIO_SECRET" "$tmp/payload.form" "$h" \
	    "twilio accepts what oncehook sign --endpoint twilio prints"
	verify 1 twilio "$TWILIO_SECRET" "$tmp/tampered.form" "$h" \
	    "twilio refuses it with MessageStatus changed" 'returned false'
	vurl=https://shop.example/hooks/twilio
	verify 1 twilio "$TWILIO_SECRET" "$tmp/payload.form" "$h" \
	    "twilio refuses it for the URL without its query string" \
	    'returned false'
else
	tap not-ok "oncehook sign --endpoint twilio prints a form's headers"
	sed 's/^/#   /' "$h" "$tmp/sign.err"
fi
vurl=$SQUARE_URL
one square square "$SQUARE_SECRET"
vurl=$SQUARE_URL/
verify 1 square "$SQUARE_SECRET" "$tmp/payload.json" "$tmp/square.headers" \
    "square refuses what sign printed, given a URL one slash off" \
    'returned false'
vurl=

# -- 3. "oncehook sign --key" checked by the libraries ----------------

# newkey KIND NAME: a new private key in $tmp/NAME.pem (openssl), its
# public key's DER in $tmp/NAME.der; 0 if it worked.
newkey() {
	nk=$2
	case $1 in
	ed25519) set -- -algorithm ed25519 ;;
	p256) set -- -algorithm EC -pkeyopt ec_paramgen_curve:P-256 ;;
	esac
	(umask 077 && openssl genpkey "$@" -out "$tmp/$nk.pem") \
	    >/dev/null 2>&1 &&
	    openssl pkey -in "$tmp/$nk.pem" -pubout -outform DER \
	    -out "$tmp/$nk.der" >/dev/null 2>&1
}
# NAME's raw Ed25519 key in hex, in base64; NAME.der in base64.
raw_hex() { tail -c 32 "$tmp/$1.der" | od -An -v -tx1 | tr -d ' \n'; }
raw_b64() { tail -c 32 "$tmp/$1.der" | openssl base64 -A; }
spki_b64() { openssl base64 -A <"$tmp/$1.der"; }

# pk LIB ENDPOINT KEY PUBLIC OTHER: sign with --key $tmp/KEY.pem; LIB
# accepts it given PUBLIC, refuses it for the payload changed, and
# given OTHER, another key's public key.
pk() {
	h=$tmp/$2.headers
	if ! sign "$2" --key "$tmp/$3.pem" "$tmp/payload.json" >"$h" \
	    2>"$tmp/sign.err"; then
		tap not-ok "oncehook sign --endpoint $2 --key runs"
		sed 's/^/#   /' "$tmp/sign.err"
		return
	fi
	verify 0 "$1" "$4" "$tmp/payload.json" "$h" \
	    "$1 accepts what oncehook sign --endpoint $2 --key prints"
	verify 1 "$1" "$4" "$tmp/tampered.json" "$h" \
	    "$1 refuses it for a payload one digit off" \
	    'returned false|does not match|no v1a|failed'
	verify 1 "$1" "$5" "$tmp/payload.json" "$h" \
	    "$1 refuses it given another key" \
	    'returned false|does not match|no v1a|failed'
}

if newkey ed25519 ed && newkey ed25519 ed2 && newkey p256 ec &&
    newkey p256 ec2; then
	sign_env=$tmp/pk.env
	{
		echo "ONCEHOOK_DB=$tmp/unused.db"
		echo "ONCEHOOK_ENDPOINTS=discord,telnyx,sendgrid,v1a"
		echo "ONCEHOOK_DISCORD_SCHEME=discord"
		echo "ONCEHOOK_DISCORD_SECRET=$(raw_hex ed)"
		echo "ONCEHOOK_TELNYX_SCHEME=telnyx"
		echo "ONCEHOOK_TELNYX_SECRET=$(raw_b64 ed)"
		echo "ONCEHOOK_SENDGRID_SCHEME=sendgrid"
		echo "ONCEHOOK_SENDGRID_SECRET=$(spki_b64 ec)"
		echo "ONCEHOOK_V1A_SCHEME=standard"
		echo "ONCEHOOK_V1A_SECRET=whpk_$(raw_b64 ed)"
	} >"$sign_env"
	pk discord-interactions discord ed "$(raw_hex ed)" "$(raw_hex ed2)"
	pk telnyx telnyx ed "$(raw_b64 ed)" "$(raw_b64 ed2)"
	pk @sendgrid/eventwebhook sendgrid ec "$(spki_b64 ec)" \
	    "$(spki_b64 ec2)"
	pk v1a v1a ed "whpk_$(raw_b64 ed)" "whpk_$(raw_b64 ed2)"
	h=$tmp/telnyx-old.headers
	sign telnyx --key "$tmp/ed.pem" --time $(($(date +%s) - 3600)) \
	    "$tmp/payload.json" >"$h" 2>"$tmp/sign.err" ||
	    tap not-ok "oncehook sign --endpoint telnyx --key --time runs"
	verify 1 telnyx "$(raw_b64 ed)" "$tmp/payload.json" "$h" \
	    "telnyx refuses oncehook sign --key --time an hour ago (stale)" \
	    'too old'

	# RFC 8032's test key 1 (published, so written here) as a whsk_
	# seed: Ed25519 is deterministic, so v1a over this message is one
	# signature, the one node:crypto and openssl give for it.
	printf '%s' 'whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=' \
	    >"$tmp/rfc8032.key"
	printf '%s' '{"type":"contact.created","timestamp":"2022-11-03T20:26:10.344522Z","data":{"id":"1f81eb52-5198-4599-803e-771906343485"}}' \
	    >"$tmp/v1a.json"
	v1a_pub=whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=
	echo "ONCEHOOK_V1A_SECRET=$v1a_pub" >>"$sign_env"
	want='webhook-signature: v1a,pbpYBMlty2hExn4zt0UTGb6BaP2Vq5AfyzjB9GGV3x/wCJKd8UjOCf8Qhaji6TKY9C5eNMnlF0GG4udaO6B7Ag=='
	h=$tmp/v1a-vector.headers
	what="oncehook sign --key whsk_ (RFC 8032 test key 1) gives the v1a vector"
	if sign v1a --key "$tmp/rfc8032.key" \
	    --id msg_2KWPBgLlAfxdpx2AI54pPJ85f4W --time 1674087231 \
	    "$tmp/v1a.json" >"$h" 2>"$tmp/sign.err" &&
	    grep -qxF "$want" "$h"; then
		tap ok "$what"
	else
		tap not-ok "$what"
		sed 's/^/#   /' "$h" "$tmp/sign.err"
	fi
	verify 0 v1a "$v1a_pub" "$tmp/v1a.json" "$h" \
	    "node:crypto accepts the v1a vector against its whpk_ key"
	sign_env=
else
	tap not-ok "openssl genpkey makes Ed25519 and P-256 key pairs"
fi

echo "# providers took $(($(date +%s) - start))s"
echo "1..$n"
[ $failed -eq 0 ] || exit 1
exit 0
