#!/bin/bash
# SPDX-License-Identifier: MIT
# Install, from Debian's packages, what oncehook needs, and no more:
#
#   tools/deps.sh demo   what tools/demo.sh needs: the compiler and
#                        autotools, the libraries configure asks for,
#                        lighttpd, and the command-line tools the demo
#                        runs (sqlite3, openssl, curl, python3);
#   tools/deps.sh        (or "test") the demo's and what the whole test
#                        suite drives besides: the other web servers
#                        (Apache with mod_fcgid, nginx, spawn-fcgi),
#                        MariaDB (and tcpdump: tests/tls.sh reads the
#                        wire), valgrind and clang (sanitizers, fuzzing),
#                        wrk (bench/run.sh --smoke), promtool (prometheus:
#                        the metrics), chromium (the status page), PHP-FPM
#                        (the outbox's receiver), jq, Node.js and npm (the
#                        providers' own libraries), debhelper and lintian
#                        (tests/package.sh).
#
# The benchmark's peers need bench/deps.sh too.  Does nothing when all
# are there.  Run as root (or with sudo) on Debian 12.
set -euo pipefail

demo_pkgs=(
	gcc make autoconf automake pkg-config
	libfcgi-dev libjansson-dev libsqlite3-dev libssl-dev
	libcurl4-openssl-dev
	sqlite3 openssl curl python3 lighttpd
)
test_pkgs=(
	libfcgi-bin libmariadb-dev mariadb-server tcpdump galera-4 rsync iproute2
	apache2 libapache2-mod-fcgid nginx-light spawn-fcgi
	valgrind clang libclang-rt-14-dev wrk
	prometheus chromium
	php8.2-fpm php8.2-sqlite3 php8.2-cli jq
	debhelper dpkg-dev fakeroot lintian
)
case ${1:-test} in
demo)	pkgs=("${demo_pkgs[@]}") ;;
test)	pkgs=("${demo_pkgs[@]}" "${test_pkgs[@]}") ;;
*)	echo "usage: tools/deps.sh [demo | test]" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm (the providers' own libraries in the tests): any
# installation will do; Debian's packages if there is none.
if [ "${1:-test}" = test ] && ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1
then
	missing+=(nodejs npm)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
else
	sudo=""
fi
echo "tools/deps.sh: installing ${missing[*]}" >&2
# Keep the packages' own services (lighttpd on port 80) from starting:
# the tests and the demo start their own servers on 127.0.0.1.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
	$sudo chmod 755 "$policy"
	own_policy=1
fi
trap '[ $own_policy -eq 1 ] && $sudo rm -f "$policy"' EXIT
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
