#!/bin/bash
# SPDX-License-Identifier: MIT
# End-to-end latency of one request through a real lighttpd, FastCGI and
# CGI, from the shipped conf-examples: prints per-kind median, p90 and
# mean in milliseconds (bench/latency.py), and for FastCGI the throughput
# of new events from 8 concurrent senders (bench/throughput.py), RUNS
# times per mode, so the medians of several runs can be quoted.
#
# usage: bench/latency.sh [N] [RUNS]     (defaults 200 requests, 3 runs)
# Builds into _build/bench if needed.  ONCEHOOK_SYNCHRONOUS=normal in the
# environment is passed on (the shipped examples leave it at full).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-200}
runs=${2:-3}
build="$root/_build/bench"
if [ -f "$root/config.status" ]; then
	echo "bench/latency.sh: the source tree was configured in place;" \
	    "run 'make distclean' there first" >&2
	exit 1
fi
if [ ! -x "$build/oncehook" ]; then
	(cd "$root" && ./autogen.sh >/dev/null 2>&1)
	mkdir -p "$build"
	(cd "$build" && "$root/configure" >/dev/null && make -j2 >/dev/null)
fi
LH_ROOT=$root
. "$root/tools/lighttpd.sh"
trap lh_stop EXIT
for mode in fastcgi cgi; do
	for r in $(seq "$runs"); do
		run=$(mktemp -d /tmp/oncehook-bench.XXXXXX)
		lh_setup "$mode" "$run" "$build/oncehook" "$root"
		lh_with_env "$run" "$build/oncehook" init >/dev/null 2>&1
		lh_start "$run"
		echo "== $mode, run $r: $n requests of each kind (ms)"
		python3 "$root/bench/latency.py" \
		    "http://127.0.0.1:$LH_PORT/hooks/shop" "$LH_SHOP_SECRET" "$n"
		if [ "$mode" = fastcgi ]; then
			python3 "$root/bench/throughput.py" \
			    "http://127.0.0.1:$LH_PORT/hooks/shop" \
			    "$LH_SHOP_SECRET" 8 "$n"
		fi
		lh_stop
		rm -rf "$run"
	done
done
