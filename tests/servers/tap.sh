# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# oncehook tests: TAP for the shell suites (sourced; POSIX sh).  The
# caller keeps the counters n and failed and prints the plan "1..$n".
#   tap ok|not-ok|skip TEXT [WHY]   one result line
#   check STATUS TEXT    ok if STATUS is 0
#   bail TEXT            a harness error: "Bail out!", exit 99
n=${n:-0}
failed=${failed:-0}

tap() {	# tap ok|not-ok|skip description [why skipped]
	n=$((n + 1))
	case $1 in
	ok) printf 'ok %d - %s\n' "$n" "$2" ;;
	skip) printf 'ok %d - %s # SKIP %s\n' "$n" "$2" "${3:-}" ;;
	*)
		failed=$((failed + 1))
		printf 'not ok %d - %s\n' "$n" "$2"
		;;
	esac
}

check() {	# check STATUS TEXT
	if [ "$1" -eq 0 ]; then tap ok "$2"; else tap not-ok "$2"; fi
}

bail() {
	echo "Bail out! $*"
	exit 99
}
