#!/bin/sh
# SPDX-License-Identifier: MIT
# Every header under src/ compiles on its own, included first, with the
# build's flags (warnings as errors where the build has them): a header
# is a contract and says what it needs.  TAP.
: "${top_srcdir:?top_srcdir is not set}"
: "${CC:?CC is not set}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-headers.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
for h in $(cd "$top_srcdir/src" && find . -name '*.h' | sed 's|^\./||' | sort); do
	n=$((n + 1))
	name=$h
	printf '#include "%s"\n' "$name" >"$tmp/t.c"
	# shellcheck disable=SC2086
	if out=$($CC $HEADER_CFLAGS -fsyntax-only "$tmp/t.c" 2>&1); then
		echo "ok $n - src/$name compiles on its own"
	else
		failed=$((failed + 1))
		echo "not ok $n - src/$name compiles on its own"
		printf '%s\n' "$out" | head -5 | sed 's/^/#   /'
	fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
