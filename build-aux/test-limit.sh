#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit.sh TEST [ARG...]: what "make check" runs each test through
# (LOG_COMPILER).  The test runs in a process group of its own.  If it
# has not ended in ONCEHOOK_TEST_LIMIT seconds (default 600; the longest
# suite takes about two minutes), what still runs is shown as TAP
# comments, with the tail of what the test's servers logged, and the
# group is killed: "Bail out!", exit 99.  So one test that hangs is
# named, and the rest of the suite still runs.  Whatever the test left
# running in its group when it ended is killed too (and named): it would
# hold the TAP pipe open, and the driver would wait for it for ever.
#
# Each test's start and end (its seconds and exit status) are added to
# the file ONCEHOOK_TEST_TRACE (default: test-limit.trace in the current
# directory, the build directory under make): what began and did not end
# is there even when make is killed (it removes the unfinished logs).
#
# Exit status: the test's, or 99.

limit=${ONCEHOOK_TEST_LIMIT:-600}
trace=${ONCEHOOK_TEST_TRACE:-test-limit.trace}
[ $# -gt 0 ] || { echo "usage: test-limit.sh TEST [ARG...]" >&2; exit 2; }
command -v setsid >/dev/null 2>&1 || exec "$@"

# A background job of a shell without job control is not a group
# leader: setsid(1) makes the test's group without a fork of its own,
# so its pid is the group's.
began=$(date +%s)
echo "began $1 $began" >>"$trace" 2>/dev/null
setsid "$@" &
pid=$!

# The group's processes: pid, parent, seconds, state, what it waits in,
# its command line.
group() {
	ps -e -o pgid=,pid=,ppid=,etimes=,stat=,wchan:24=,args= 2>/dev/null |
	    awk -v g="$pid" '$1 == g && $5 !~ /^Z/ {
		$1 = ""; print substr($0, 2) }'
}

# shellcheck disable=SC2317 # run by the trap
stop() {
	kill -TERM "-$pid" 2>/dev/null
	sleep 1
	kill -KILL "-$pid" 2>/dev/null
}
trap 'kill "$dog" 2>/dev/null; stop; exit 99' HUP INT TERM

# The watchdog: at the limit, what runs, then the kill.  Its sleep does
# not hold the TAP pipe (the driver reads it to its end).
(
	sleep "$limit" >/dev/null 2>&1 &
	s=$!
	trap 'kill "$s" 2>/dev/null; exit 0' TERM
	wait "$s"
	kill -0 "$pid" 2>/dev/null || exit 0
	trap '' TERM		# fired: to the end, for the wrapper
	echo "# $1 has not ended in ${limit}s; what runs in its group:"
	group | head -n 60 | sed 's/^/#   /'
	echo "# the oncehook processes outside it:"
	ps -e -o pgid=,pid=,ppid=,etimes=,stat=,wchan:24=,comm=,args= |
	    awk -v g="$pid" '$1 != g && $7 ~ /^oncehook/' | head -n 20 |
	    sed 's/^/#   /'
	df -h "${TMPDIR:-/tmp}" 2>/dev/null | sed 's/^/#   /'
	stop
	echo "Bail out! $1 had no end in ${limit}s (killed)"
	exit 3
) &
dog=$!

wait "$pid"
rc=$?
kill "$dog" 2>/dev/null
wait "$dog"
[ $? -ne 3 ] || rc=99		# it fired: the test was killed
left=$(group)
if [ -n "$left" ]; then
	echo "# $1 ended (exit $rc) and left these running (killed):"
	printf '%s\n' "$left" | head -n 20 | sed 's/^/#   /'
	stop
fi
echo "ended $1 $(($(date +%s) - began))s exit $rc" >>"$trace" 2>/dev/null
exit $rc
