#!/bin/sh
# SPDX-License-Identifier: MIT
# The licence: LICENSE is MIT, and every tracked source, header, script,
# SQL, test and configuration-example file names it in an SPDX line
# among its first three lines.  In a git checkout the files are git's;
# in a release tarball (make distcheck), those of the tarball.  Formats
# that cannot hold a comment are exempt: JSON, Markdown, images, and
# debian/'s fixed-format files (changelog, copyright, source/format,
# *.docs, clean).  TAP.
: "${top_srcdir:?top_srcdir is not set}"
cd "$top_srcdir" || exit 1
n=0
failed=0
ok() {	# ok STATUS TEXT
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
	fi
}

grep -q '^MIT License$' LICENSE 2>/dev/null &&
    grep -q '^Copyright (c) 2026 the oncehook authors$' LICENSE
ok $? "LICENSE is the MIT licence of the oncehook authors"
for m in man/*.[58]; do
	sed -n '/^\.Sh AUTHORS/,/^\.Sh /p' "$m" | grep -q 'MIT licence'
	ok $? "$m: its AUTHORS section names the MIT licence"
done

if git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
    [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
	list() { git ls-files; }
	echo "# the files git tracks"
else
	# A tarball: its own files, less what autotools generated.
	list() {
		find . -type f ! -path './autom4te.cache/*' ! -path './_*' |
		    sed 's|^\./||' | grep -vE '^(configure|aclocal\.m4|config\.h\.in|Makefile\.in|build-aux/(ar-lib|compile|config\.guess|config\.sub|depcomp|install-sh|missing|test-driver|tap-driver\.sh))$'
	}
	echo "# the tarball's files"
fi

missing=$(list | while IFS= read -r f; do
	case $f in
	*.json|*.md|*.png|LICENSE|.gitignore) continue ;;
	debian/changelog|debian/copyright|debian/source/format) continue ;;
	debian/*.docs|debian/clean) continue ;;
	esac
	[ -f "$f" ] || continue
	head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT' || echo "$f"
done)
total=$(list | wc -l)
[ -z "$missing" ]
ok $? "every source, script, SQL, test and example file has its SPDX line ($total files looked at)"
[ -n "$missing" ] && echo "$missing" | sed 's/^/#   missing: /'

echo "1..$n"
[ "$failed" -eq 0 ]
