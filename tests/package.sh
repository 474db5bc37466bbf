#!/bin/bash
# SPDX-License-Identifier: MIT
# oncehook's Debian package, as an operator gets it:
#
#   1. build it with "dpkg-buildpackage -us -uc -b" from a clean copy of
#      the checkout's HEAD (git archive: nothing uncommitted, nothing
#      built in place);
#   2. lintian on the .changes: no E: or W: line (an override in
#      debian/oncehook.lintian-overrides says why, in a comment);
#   3. install it with "apt-get install ./oncehook_*.deb": the user, the
#      data directory (0700), /etc/oncehook/env from its template, the
#      units installed and not enabled, the examples uncompressed, every
#      path they name there;
#   4. the request cases (tests/cases.sh) and the end-to-end delivery
#      suites, tests/e2e-lighttpd.sh and
#      tests/e2e-apache.sh, against the installed /usr/bin/oncehook with
#      the installed examples (/usr/share/doc/oncehook/examples) and SQL
#      (/usr/share/oncehook/sql).  The suites look for the /usr/local
#      paths of a source install in the examples and fill in their own
#      (a temporary directory per run); so a tree of links is made for
#      them whose conf-examples/ are the installed examples with the
#      package's paths turned back into those (step 3 checks that the
#      package's paths exist);
#   5. "oncehook init" with /etc/oncehook/env, as README.Debian says;
#      "apt-get remove" keeps the database and /etc/oncehook/env;
#   6. "apt-get purge": every file "dpkg -L" listed is gone, and every
#      directory but those other packages own; /var/lib/oncehook and
#      /etc/oncehook are gone (Debian policy 6.8, 10.7.3: purge removes
#      what the maintainer scripts created); the system user oncehook
#      stays, as README.Debian says (common Debian practice).
#
# As root on Debian 12, with the build dependencies, lintian, and the
# e2e suites' servers installed (tools/deps.sh).  It installs and purges
# the package oncehook: it refuses to run when oncehook is installed.
# Speaks TAP and ends with "N passed, N failed".  Exit status: 0 all
# passed, 1 some failed, 77 skipped (not root, no git checkout), 99
# harness error.

# shellcheck disable=SC2016 # the sh -c scripts expand in their own shell
set -uo pipefail
export LC_ALL=C DEBIAN_FRONTEND=noninteractive

root=$(cd "$(dirname "$0")/.." && pwd)
n=0
failed=0
start=$(date +%s)

tap() {	# tap ok|not-ok TEXT
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
	fi
}
check() {	# check TEXT COMMAND...: one TAP line, ok if COMMAND succeeds
	local text=$1
	shift
	if "$@" >"$work/check.out" 2>&1; then
		tap ok "$text"
	else
		tap not-ok "$text"
		tail -n 20 "$work/check.out" | sed 's/^/# /'
	fi
}
bail() {
	echo "Bail out! $*"
	exit 99
}
skip_all() {
	echo "1..0 # SKIP $*"
	exit 77
}
done_() {
	echo "# tests/package.sh took $(($(date +%s) - start))s"
	echo "1..$n"
	echo "$((n - failed)) passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

[ "$(id -u)" = 0 ] || skip_all "installs a package: run as root"
git -C "$root" rev-parse HEAD >/dev/null 2>&1 ||
    skip_all "$root is not a git checkout"
if dpkg-query -W -f='${Status}' oncehook 2>/dev/null |
    grep -qv 'not-installed'; then
	bail "the package oncehook is installed (or its configuration" \
	    "left): tests/package.sh installs and purges it; purge it first"
fi
for c in dpkg-buildpackage lintian apt-get git; do
	command -v "$c" >/dev/null 2>&1 || bail "no $c (run tools/deps.sh)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/oncehook-package.XXXXXX") ||
    bail "mktemp failed"
chmod 0755 "$work"
installed=0
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	# A run that stopped half-way leaves no package behind.
	if [ "$installed" = 1 ]; then
		apt-get purge -y -q oncehook >/dev/null 2>&1
	fi
	if [ -n "${ONCEHOOK_E2E_KEEP:-}" ]; then
		echo "# kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

# 1. Build from a clean copy of HEAD.
echo "# building $(git -C "$root" rev-parse --short HEAD) in $work/src"
mkdir -p "$work/src" || bail "mkdir $work/src"
git -C "$root" archive --format=tar HEAD | tar -x -C "$work/src" ||
    bail "git archive failed"
if (cd "$work/src" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1
then
	tap ok "dpkg-buildpackage -us -uc -b builds from a clean copy of HEAD"
else
	tap not-ok "dpkg-buildpackage -us -uc -b builds from a clean copy of HEAD"
	# The failing checks of its make check first, then the log's end.
	grep -E '^(FAIL|ERROR|not ok)' "$work/build.log" | head -20 |
	    sed 's/^/# /'
	tail -n 40 "$work/build.log" | sed 's/^/# /'
	done_
fi
deb=$(ls "$work"/oncehook_*.deb)
changes=$(ls "$work"/oncehook_*.changes)
echo "# $(stat -c '%s bytes' "$deb") $(basename "$deb")"
dpkg-deb -I "$deb" | sed -n 's/^ \(size\|Installed-Size\|Depends\|Recommends\):*/# &/p'

# 2. lintian, at its default level (errors and warnings); the info,
# pedantic and experimental lines shown too.  As nobody: lintian warns
# when run as root.
chmod -R a+rX "$work"
setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
    env HOME="$work" lintian -I -E --pedantic --show-overrides "$changes" \
    >"$work/lintian.out" 2>&1
sed 's/^/# lintian: /' "$work/lintian.out"
if grep -qE '^[EW]: ' "$work/lintian.out"; then
	tap not-ok "lintian: no error or warning"
else
	tap ok "lintian: no error or warning"
fi
# The licence: no copyright tag at any level, and debian/copyright (DEP-5)
# names MIT for the whole tree.
if grep -qiE '^[EWIPX]: .*copyright' "$work/lintian.out"; then
	tap not-ok "lintian: no copyright tag at any level"
else
	tap ok "lintian: no copyright tag at any level"
fi
if dpkg-deb --fsys-tarfile "$deb" |
    tar -xO ./usr/share/doc/oncehook/copyright 2>/dev/null |
    grep -q '^Files: \*$' &&
    dpkg-deb --fsys-tarfile "$deb" |
    tar -xO ./usr/share/doc/oncehook/copyright | grep -q '^License: MIT$'; then
	tap ok "the package's copyright file names MIT for Files: *"
else
	tap not-ok "the package's copyright file names MIT for Files: *"
fi

# 3. Install.
if apt-get install -y -q "$deb" >"$work/install.log" 2>&1; then
	installed=1
	tap ok "apt-get install ./$(basename "$deb")"
else
	tap not-ok "apt-get install ./$(basename "$deb")"
	tail -n 30 "$work/install.log" | sed 's/^/# /'
	done_
fi
dpkg -L oncehook | sort -u >"$work/files"
ex=/usr/share/doc/oncehook/examples
check "/usr/bin/oncehook --version runs" /usr/bin/oncehook --version
check "the package loads SQLite, jansson and libfcgi as shared libraries (apt upgrades them)" \
    sh -c '/usr/bin/oncehook --version | grep -q "the system.s shared libraries$" &&
	[ "$(readelf -d /usr/bin/oncehook | grep -c "NEEDED.*\(libsqlite3\|libjansson\|libfcgi\)")" -eq 3 ]'
check "the system user oncehook exists, without a shell" \
    sh -c 'getent passwd oncehook | grep -q ":/var/lib/oncehook:/usr/sbin/nologin$"'
check "/var/lib/oncehook is oncehook:oncehook, mode 0700" \
    sh -c '[ "$(stat -c %U:%G:%a /var/lib/oncehook)" = oncehook:oncehook:700 ]'
check "/etc/oncehook/env is root:oncehook, mode 0640" \
    sh -c '[ "$(stat -c %U:%G:%a /etc/oncehook/env)" = root:oncehook:640 ]'
check "/etc/oncehook/env points at the installed orders.sql and /var/lib/oncehook" \
    sh -c 'grep -qx "ONCEHOOK_DB=/var/lib/oncehook/oncehook.db" /etc/oncehook/env &&
	grep -q "^ONCEHOOK_[A-Z]*_ACTIONS=/usr/share/oncehook/sql/actions/orders.sql$" /etc/oncehook/env'
for u in oncehook.service oncehook-work.service oncehook-work.timer \
    oncehook-deliver.service oncehook-deliver.timer; do
	check "$u installed" grep -qx "/lib/systemd/system/$u" "$work/files"
done
check "no unit enabled or started" sh -c \
    '! ls /etc/systemd/system/*.wants/oncehook* 2>/dev/null | grep -q .'
check "the units run /usr/bin/oncehook" sh -c \
    '! grep -h "^ExecStart=" /lib/systemd/system/oncehook*.service |
	grep -v "^ExecStart=/usr/bin/oncehook "'
if command -v systemd-analyze >/dev/null 2>&1; then
	check "systemd-analyze verify accepts the units" \
	    systemd-analyze verify /lib/systemd/system/oncehook*.service \
	    /lib/systemd/system/oncehook*.timer
fi
check "the man page is installed" test -r /usr/share/man/man8/oncehook.8.gz
check "the actions file's man page is installed" \
    test -r /usr/share/man/man5/oncehook-actions.5.gz
check "the guides are installed" sh -c "ls /usr/share/doc/oncehook/docs/deploying.md*"
check "the SQL is installed under /usr/share/oncehook/sql" \
    test -r /usr/share/oncehook/sql/actions/orders.sql
# The examples: every file of conf-examples/, uncompressed, with no
# /usr/local path of oncehook's left, and each of the package's paths
# they name installed.
missing=
for f in "$work"/src/conf-examples/*; do
	[ -r "$ex/$(basename "$f")" ] || missing="$missing $(basename "$f")"
done
check "every conf-example is installed uncompressed in $ex${missing:+ (missing:$missing)}" \
    test -z "$missing"
check "the examples name no /usr/local path of oncehook's" sh -c \
    "! grep -rn -e /usr/local/bin/oncehook -e /usr/local/share/oncehook $ex /lib/systemd/system/oncehook*"
bad=
while IFS= read -r p; do
	[ -e "$p" ] || bad="$bad $p"
done < <(grep -rhoE '/usr/(bin|share)/oncehook[A-Za-z0-9_./-]*' "$ex" \
    /lib/systemd/system/oncehook* | sed 's|/$||' | sort -u)
check "every /usr/bin/oncehook... and /usr/share/oncehook... path the examples name exists${bad:+ (missing:$bad)}" \
    test -z "$bad"

# 4. The e2e suites: the installed binary, examples and SQL.
tree=$work/tree
mkdir -p "$tree/conf-examples" || bail "mkdir $tree"
cp -R "$work/src/tests" "$tree/tests" || bail "copying tests/"
ln -s /usr/share/oncehook/sql "$tree/sql"
for f in "$ex"/*; do
	sed -e 's|/usr/bin/oncehook|/usr/local/bin/oncehook|g' \
	    -e 's|/usr/share/oncehook|/usr/local/share/oncehook|g' \
	    -e 's|<Directory "/usr/bin">|<Directory "/usr/local/bin">|g' \
	    "$f" >"$tree/conf-examples/$(basename "$f")" || bail "copying $f"
done
chmod -R a+rX "$tree"
suite() {	# suite SCRIPT: run it, its TAP lines renumbered as ours
	local s=$1 rc
	echo "# $s against /usr/bin/oncehook and $ex"
	(cd "$work" && top_srcdir=$tree top_builddir=$tree \
	    ONCEHOOK_BIN=/usr/bin/oncehook ONCEHOOK_SHOTS=$work/shots \
	    sh "$tree/$s") >"$work/$(basename "$s").tap" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) tap ok "$s: ${line#ok * - }" ;;
		"not ok "*) tap not-ok "$s: ${line#not ok * - }" ;;
		"Bail out!"*) tap not-ok "$s: $line" ;;
		"1.."*) ;;
		*) echo "$line" ;;
		esac
	done <"$work/$(basename "$s").tap"
	case $rc in
	0 | 1) ;;
	77) tap not-ok "$s: skipped (exit 77): a server is missing (tools/deps.sh)" ;;
	*) tap not-ok "$s: ran to its end (exit $rc)" ;;
	esac
}
suite tests/cases.sh
suite tests/e2e-lighttpd.sh
suite tests/e2e-apache.sh

# 5. The data directory and the configuration, as an operator uses them;
# "remove" keeps both.
sed -i -e 's|^ONCEHOOK_STRIPE_SECRET=.*|ONCEHOOK_STRIPE_SECRET=whsec_packageTestSecret0123456789|' \
    -e 's|^ONCEHOOK_SHOP_SECRET=.*|ONCEHOOK_SHOP_SECRET=package-test-shop-secret|' \
    /etc/oncehook/env
check "oncehook init as oncehook with /etc/oncehook/env creates the database" \
    runuser -u oncehook -- /usr/bin/oncehook --env-file /etc/oncehook/env init
check "oncehook check as oncehook with /etc/oncehook/env" sh -c \
    'runuser -u oncehook -- /usr/bin/oncehook --env-file /etc/oncehook/env check >/dev/null 2>&1'
if apt-get remove -y -q oncehook >"$work/remove.log" 2>&1; then
	tap ok "apt-get remove oncehook"
else
	tap not-ok "apt-get remove oncehook"
	tail -n 20 "$work/remove.log" | sed 's/^/# /'
fi
check "after remove: /usr/bin/oncehook is gone" test ! -e /usr/bin/oncehook
check "after remove: the database and /etc/oncehook/env are kept" \
    test -s /var/lib/oncehook/oncehook.db -a -s /etc/oncehook/env

# 6. Purge: nothing left.
if apt-get purge -y -q oncehook >"$work/purge.log" 2>&1; then
	installed=0
	tap ok "apt-get purge oncehook"
else
	tap not-ok "apt-get purge oncehook"
	tail -n 20 "$work/purge.log" | sed 's/^/# /'
fi
left=
while IFS= read -r p; do
	[ "$p" != /. ] || continue
	[ -e "$p" ] || [ -L "$p" ] || continue
	# A directory another package also ships (/usr/bin, ...) stays.
	if [ -d "$p" ] && dpkg-query -S "$p" >/dev/null 2>&1; then
		continue
	fi
	left="$left $p"
done <"$work/files"
check "after purge: nothing dpkg -L listed is left${left:+ (left:$left)}" \
    test -z "$left"
check "after purge: /var/lib/oncehook is gone" test ! -e /var/lib/oncehook
check "after purge: /etc/oncehook is gone" test ! -e /etc/oncehook
check "after purge: dpkg knows no oncehook" sh -c \
    '! dpkg-query -W -f="\${Status}" oncehook 2>/dev/null | grep -qv not-installed'
check "after purge: no systemd state of the units is left" sh -c \
    '! ls -d /etc/systemd/system/*oncehook* /etc/systemd/system/*/*oncehook* \
	/var/lib/systemd/deb-systemd-helper-enabled/*oncehook* \
	/var/lib/systemd/deb-systemd-helper-enabled/*/*oncehook* \
	/var/lib/systemd/deb-systemd-helper-masked/*oncehook* 2>/dev/null | grep -q .'
check "after purge: the system user oncehook stays (README.Debian)" \
    getent passwd oncehook

done_
