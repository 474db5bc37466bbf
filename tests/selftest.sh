#!/bin/sh
# SPDX-License-Identifier: MIT
# "oncehook selftest" as a user runs it on the built binary: the
# providers' published signature vectors (src/cmd/selftest.c) must all pass.
# Its output is TAP; this adds checks of its own on that output: the
# public-key schemes' vectors are there (SendGrid's two published samples,
# its batch counted), and the ones derived from RFC 8032's test key say
# so, as no provider published them.
: "${ONCEHOOK_BIN:?ONCEHOOK_BIN is not set}"
out=$("$ONCEHOOK_BIN" selftest)
rc=$?
printf '%s\n' "$out" | grep -v '^1\.\.'
n=$(printf '%s\n' "$out" | grep -c '^\(not \)\{0,1\}ok ')

check() {	# what, then a grep pattern that must match a line of $out
	n=$((n + 1))
	if printf '%s\n' "$out" | grep -q -- "$2"; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
	fi
}
[ "$rc" -eq 0 ] && echo "ok $((n += 1)) - selftest exits 0" ||
    echo "not ok $((n += 1)) - selftest exits 0 (exit $rc)"
if printf '%s\n' "$out" | grep -q '# SKIP'; then
	# A build or a host without libcrypto: the public-key vectors say so.
	for s in sendgrid discord telnyx; do
		check "$s: skipped, saying why" "^ok [0-9]* - $s # SKIP ."
	done
else
	check "sendgrid: its first published sample verifies" \
	    "^ok [0-9]* - sendgrid verifies: SendGrid's published sample"
	check "sendgrid: its second published sample verifies" \
	    "^ok [0-9]* - sendgrid verifies: SendGrid's second published"
	check "sendgrid: the second sample's body is two events" \
	    "^ok [0-9]* - sendgrid's body is 2 event"
	for s in discord telnyx "standard verifies: v1a"; do
		check "${s%% *}: a vector derived from RFC 8032's key, said" \
		    "^ok [0-9]* - $s.*DERIVED from RFC 8032's test key 1"
	done
	for s in discord telnyx standard; do
		check "$s: signed again from RFC 8032's private key" \
		    "^ok [0-9]* - $s signs it the same (from RFC 8032"
	done
	check "discord: its PING answered" "^ok [0-9]* - discord answers"
fi
echo "1..$n"
