#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook tests (tests/outbox.sh): a command target of the outbox, as a
# site would write one, run by "oncehook deliver" as
#
#   ONCEHOOK_OUTBOX_<TOPIC>_COMMAND="/bin/sh .../cmd-target.sh DIR"
#
# with the payload on standard input and ONCEHOOK_OUTBOX_ID, _TOPIC,
# _ENDPOINT and _KEY in its environment.  In DIR it keeps:
#
#   calls           one line per run: "<id> <n> <time>" (n: this id's run
#                   count; time: Unix seconds, with nanoseconds)
#   env-<id>-<n>    the environment of run n, sorted (env)
#   stdin-<id>-<n>  the payload of run n, as received
#   effects         one line per effect: "<id> <n> <topic> <endpoint> <key>"
#
# and obeys the test's markers in DIR:
#
#   slow-<id>    sleep after reading the payload, 3 s or the seconds
#                the file holds (removed: once), then leave
#                woke-<id>-<n> (not if stopped meanwhile)
#   nofail-<id>  no deliberate failures for that id
#   nofail       no deliberate failures at all
#
# Without a nofail marker the first two runs for each id exit 1 on
# purpose.  Then it deduplicates by ONCEHOOK_OUTBOX_ID: an id already in
# effects is acknowledged (exit 0) without a second effect.  Runs are
# serialised on DIR/lock (mkdir), so that concurrent runs count right.

set -u
dir=${1:?usage: cmd-target.sh DIR}
id=${ONCEHOOK_OUTBOX_ID:-}
case $id in
'' | .* | *[!A-Za-z0-9_.-]*)
	echo "cmd-target.sh: no usable ONCEHOOK_OUTBOX_ID: '$id'" >&2
	exit 2
	;;
esac

lock() {
	i=0
	until mkdir "$dir/lock" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 300 ]; then
			echo "cmd-target.sh: $dir/lock held for 30 s" >&2
			exit 3
		fi
		sleep 0.1
	done
}
unlock() {
	rmdir "$dir/lock"
}

lock
n=$(($(awk -v id="$id" '$1 == id' "$dir/calls" 2>/dev/null | wc -l) + 1))
echo "$id $n $(date +%s.%N)" >>"$dir/calls"
unlock

env | sort >"$dir/env-$id-$n"
cat >"$dir/stdin-$id-$n" || exit 4

secs=$(cat "$dir/slow-$id" 2>/dev/null)
if rm "$dir/slow-$id" 2>/dev/null; then
	case $secs in
	'' | *[!0-9]*) secs=3 ;;
	esac
	sleep "$secs"
	: >"$dir/woke-$id-$n"
fi
if [ ! -e "$dir/nofail" ] && [ ! -e "$dir/nofail-$id" ] && [ "$n" -le 2 ]
then
	echo "cmd-target.sh: $id: failing run $n on purpose" >&2
	exit 1
fi

lock
if [ -n "$(awk -v id="$id" '$1 == id' "$dir/effects" 2>/dev/null)" ]; then
	unlock
	echo "cmd-target.sh: $id: already done (run $n)" >&2
	exit 0
fi
echo "$id $n ${ONCEHOOK_OUTBOX_TOPIC:-} ${ONCEHOOK_OUTBOX_ENDPOINT:-}" \
    "${ONCEHOOK_OUTBOX_KEY:-}" >>"$dir/effects"
unlock
exit 0
