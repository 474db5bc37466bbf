#!/bin/bash
# Install, from Debian's packages, everything oncehook needs to build,
# test and run its demo: compiler and autotools, the five libraries, and
# the real web servers and clients the tests drive (wrk: bench/run.sh
# --smoke; promtool, from prometheus, checks the metrics; chromium opens
# the status page; PHP-FPM runs the outbox's receiver in tests/outbox.sh;
# the benchmark's peers need bench/deps.sh too; debhelper, lintian and
# libmariadb-dev build and check the Debian package, tests/package.sh).  Does nothing when
# all are there.  Run as root (or with sudo) on Debian 12.
set -euo pipefail

pkgs=(
	gcc make autoconf automake pkg-config
	libfcgi-dev libfcgi-bin libjansson-dev libsqlite3-dev libssl-dev
	libcurl4-openssl-dev libmariadb-dev mariadb-server
	sqlite3 openssl curl python3 lighttpd
	apache2 libapache2-mod-fcgid nginx-light spawn-fcgi
	valgrind clang libclang-rt-14-dev wrk
	prometheus chromium
	php8.2-fpm php8.2-sqlite3 php8.2-cli jq
	debhelper dpkg-dev fakeroot lintian libmariadb-dev
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm (the providers' own libraries in the tests): any
# installation will do; Debian's packages if there is none.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1
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
