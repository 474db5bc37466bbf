#!/bin/bash
# SPDX-License-Identifier: MIT
# Instructions per CGI request, counted by valgrind's callgrind: a new
# event and a duplicate, each delivered R times (R new events, then R
# duplicates of the first) through one or two builds side by side, and
# the ratio.  A count of instructions does not change with the machine's
# load, as requests per second do: it tells a few per cent on the
# request path from the run-to-run spread of bench/run.sh.  It counts
# only oncehook's own process (no web server, no fsync waits).
#
# usage: bench/instructions.sh [--runs R] BIN [BIN2]
#   BIN, BIN2   the oncehook builds to count (BIN2: the one compared)
#   --runs R    deliveries of each kind per build (default 3); the
#               median is printed
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=3 bins=()
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) bins+=("$1") ;;
	esac
	shift
done
[ ${#bins[@]} -ge 1 ] && [ ${#bins[@]} -le 2 ] ||
    { echo "usage: bench/instructions.sh [--runs R] BIN [BIN2]" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind" >&2; exit 2; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf '%s\n' 'CREATE TABLE IF NOT EXISTS paid (k TEXT NOT NULL);' \
    '-- on: payment_intent.succeeded' \
    'INSERT INTO paid (k) VALUES (:key);' >"$d/actions.sql"
python3 - "$d" "$runs" "${bins[@]}" <<'PY'
import hashlib, hmac, os, statistics, subprocess, sys, time
d, runs, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
secret = "whsec_bench"
base = {"ONCEHOOK_SCHEME": "stripe", "ONCEHOOK_SECRET": secret,
        "ONCEHOOK_ACTIONS": d + "/actions.sql", "PATH": "/usr/bin:/bin"}

def count(binp, db, i):
    """Instructions of one CGI delivery of event i (callgrind's Ir)."""
    t = str(int(time.time()))
    body = ('{"id":"evt_%d","type":"payment_intent.succeeded","data":'
            '{"object":{"id":"pi_%d"}}}' % (i, i)).encode()
    sig = hmac.new(secret.encode(), t.encode() + b"." + body,
                   hashlib.sha256).hexdigest()
    env = dict(base, ONCEHOOK_DB=db, GATEWAY_INTERFACE="CGI/1.1",
               REQUEST_METHOD="POST", CONTENT_TYPE="application/json",
               SCRIPT_NAME="/hooks", PATH_INFO="/stripe",
               CONTENT_LENGTH=str(len(body)),
               HTTP_STRIPE_SIGNATURE="t=%s,v1=%s" % (t, sig))
    r = subprocess.run(["valgrind", "--tool=callgrind",
                        "--callgrind-out-file=/dev/null", binp],
                       input=body, env=env, capture_output=True)
    if not r.stdout.startswith(b"Status: 200"):
        sys.exit("instructions.sh: %s: not 200: %r" % (binp, r.stdout[:80]))
    for line in r.stderr.decode().splitlines():
        if "Collected" in line:
            return int(line.split()[-1])
    sys.exit("instructions.sh: no count from callgrind")

res = []
for n, binp in enumerate(bins):
    db = "%s/db%d.sqlite" % (d, n)
    subprocess.run([binp, "init"], env=dict(base, ONCEHOOK_DB=db),
                   capture_output=True, check=True)
    new = [count(binp, db, 1000 + k) for k in range(runs)]
    dup = [count(binp, db, 1000) for _ in range(runs)]
    res.append((statistics.median(new), statistics.median(dup)))
    print("%-40s new %10.0f  duplicate %10.0f  instructions per request"
          % (binp, res[-1][0], res[-1][1]))
if len(res) == 2:
    print("ratio (second / first): new %.4f, duplicate %.4f"
          % (res[1][0] / res[0][0], res[1][1] / res[0][1]))
PY
