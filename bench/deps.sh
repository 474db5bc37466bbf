#!/bin/bash
# SPDX-License-Identifier: MIT
# What bench/run.sh's peers need, beyond tools/deps.sh (which brings wrk,
# lighttpd, nginx, node and npm): PHP-FPM with SQLite, PDO MySQL (the
# MariaDB rows' peer) and OPcache, a C++ compiler, and the Node peers'
# packages, express and better-sqlite3 (bench/peers/node/package-lock.json,
# "npm ci"): the minimal peers and the same-work ones need the same.
# better-sqlite3 is built from source against the installed node's
# headers: no prebuilt binary is fetched.  The suite does not need
# this (bench/run.sh --smoke runs no peer).  Run as root (or with sudo)
# on Debian 12; does nothing when all is there.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/deps.sh"
pkgs=(php8.2-fpm php8.2-sqlite3 php8.2-mysql php8.2-opcache g++ python3)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q "install ok installed" || missing+=("$p")
done
# node-gyp builds against these headers; Debian's nodejs has them in
# libnode-dev.
if [ ! -r /usr/include/node/node_api.h ]; then
	missing+=(libnode-dev)
fi
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
else
	sudo=""
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "bench/deps.sh: installing ${missing[*]}" >&2
	# Keep php8.2-fpm's own service from starting: the benchmark starts
	# its own, on a socket of its run directory.
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
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" \
	    >/dev/null
fi
node_dir=$root/bench/peers/node
if [ ! -e "$node_dir/node_modules/better-sqlite3/build/Release/better_sqlite3.node" ]
then
	echo "bench/deps.sh: npm ci in bench/peers/node (builds SQLite:" \
	    "a few minutes)" >&2
	(cd "$node_dir" && npm_config_nodedir=/usr \
	    npm_config_build_from_source=true npm ci --no-audit --no-fund)
fi
