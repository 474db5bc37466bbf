#!/bin/bash
# SPDX-License-Identifier: MIT
# The whole test suite, as CI runs it (.ci/run calls this).  Each step
# is one of these, run side by side with others (most suites wait on
# servers and processes more than on the CPU):
#
#     plain      build with warnings as errors, `make check` (everything);
#     sanitize   build with AddressSanitizer + UBSan, `make check-some`:
#                the unit and case suites and the suites reaching code no
#                case does (Makefile.am, SOME_TESTS);
#     distcheck  `make distcheck-some`: the tarball builds (VPATH, read-
#                only sources) and what reads the shipped files passes;
#                then a build without MariaDB Connector/C nor OpenSSL
#                (one test);
#     valgrind   every unit test program of the plain build
#                (tests/unit/t_*) under valgrind, leaks checked (one test
#                each; the fault and power-loss suites in their quick
#                form), in two halves, one a core;
#     fuzz       the libFuzzer targets (tests/fuzz/run.sh) for
#                FUZZ_SECONDS (default 60; one test);
#     bench      the benchmark's smoke mode (bench/run.sh --smoke: does it
#                run, do its rows pass their checks; no figure is judged)
#                and bench/pages.sh over 20 deliveries (one test each);
#     package    the Debian package from HEAD: lintian, install, the
#                request cases and the e2e suites against it, purge
#                (tests/package.sh; its TAP lines counted).
#
# plain and sanitize start first, two at a time; the others once
# sanitize ended (and valgrind, fuzz and bench once the plain build's
# programs exist), four at a time, the longest first (schedule()).  Each step's
# output goes to _build/<step>.log and is printed whole when it ends.
# Every long command has a time limit (bounded()): a hang is one
# failure, named, and the run still ends well inside CI's 90 minutes.
# Ends with one line "N passed, N failed" over all steps, and exits 1
# if anything failed.
set -uo pipefail
# No bytecode written into the source tree by the suites' Python:
# distcheck copies tests/ while plain's suites run.
export PYTHONDONTWRITEBYTECODE=1

root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/deps.sh" || { echo "0 passed, 1 failed"; exit 1; }
if [ -f "$root/config.status" ]; then
	echo "tools/test.sh: the source tree was configured in place; run" \
	    "'make distclean' there first (the suites build in _build/)"
	echo "0 passed, 1 failed"
	exit 1
fi
cd "$root" && ./autogen.sh >/dev/null 2>&1 ||
    { echo "autogen.sh failed"; echo "0 passed, 1 failed"; exit 1; }

jobs=$(nproc 2>/dev/null || echo 2)
out=$root/_build
rm -rf "$out/steps" && mkdir -p "$out/steps"

# Within a step: its counts, in _build/steps/NAME ("passed failed
# skipped"), added to by each result.
passed=0 failed=0 skipped=0
result() {	# result ok|fail|skip
	case $1 in
	ok) passed=$((passed + 1)) ;;
	fail) failed=$((failed + 1)) ;;
	skip) skipped=$((skipped + 1)) ;;
	esac
}

# Add a `make check` run's counts (from its test-suite.log).
count() {
	local log=$1 p f e s
	if [ ! -f "$log" ]; then
		failed=$((failed + 1))
		return
	fi
	p=$(sed -n 's/^# PASS: *//p' "$log" | head -1)
	f=$(sed -n 's/^# FAIL: *//p' "$log" | head -1)
	e=$(sed -n 's/^# ERROR: *//p' "$log" | head -1)
	s=$(sed -n 's/^# SKIP: *//p' "$log" | head -1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0} + ${e:-0}))
	skipped=$((skipped + ${s:-0}))
}

# bounded SECONDS WHAT COMMAND...: the command, killed with everything it
# started (timeout(1) gives it its own process group) if it has not
# ended in SECONDS; then "WHAT had no end in SECONDS s" and status 124.
bounded() {
	local limit=$1 what=$2 rc
	shift 2
	timeout -k 30 "$limit" "$@"
	rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "== $what had no end in ${limit}s: killed"
		return 124
	fi
	return $rc
}

# build-aux/test-limit.sh's trace of the build in ., each test named by
# its place in tests/ (the trace has the path the harness ran).
trace() {
	awk '{ sub(/.*\/tests\//, "tests/", $2); print }' test-limit.trace
}

# The automake tests of the build in . that began and did not end
# (from the trace: make removes their logs).
unfinished() {
	local t
	[ -f test-limit.trace ] || return 0
	for t in $(trace | awk '$1 == "began" { b[$2] = 1 }
	    $1 == "ended" { delete b[$2] } END { for (t in b) print t }'); do
		echo "--- began and did not end: $t"
	done
}

# The five tests of the build in . that took longest.
slowest() {
	[ -f test-limit.trace ] || return 0
	echo "== slowest: $(trace | awk '$1 == "ended" { print $3 + 0, $2 }' |
	    sort -rn | head -n 5 |
	    awk '{ printf "%s%s %ds", (NR > 1 ? ", " : ""), $2, $1 }')"
}

# suite NAME TARGET CONFIGURE-FLAGS...: build in _build/NAME, make TARGET.
suite() {
	local name=$1 target=$2 dir="$out/$1"
	shift 2
	echo "== $name: configure $*; make $target"
	rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" ||
	    { result fail; return; }
	if ! "$root/configure" "$@" >configure.out 2>&1; then
		tail -20 configure.out
		result fail
		return
	fi
	if ! make -j"$jobs" >make.out 2>&1; then
		grep -E 'error|warning' make.out | head -40
		result fail
		return
	fi
	# The test programs (check_PROGRAMS) too, for valgrind.  A build
	# that failed writes no marker: the step's end stands for it.
	bounded 900 "make check TESTS=" make -j"$jobs" check TESTS= \
	    TEST_SUITE_LOG=built.log >built.out 2>&1
	: >"$out/steps/$name.built"
	rm -f test-limit.trace
	if ! bounded "${SUITE_LIMIT:-1500}" "make $target" \
	    make -j"$jobs" "$target" >check.out 2>&1; then
		if tail -n 1 check.out | grep 'had no end'; then
			unfinished
			result fail
		fi
	fi
	slowest
	grep -E '^(PASS|FAIL|ERROR|SKIP|XPASS|XFAIL):' check.out |
	    grep -v '^PASS' || true
	grep -E '^# (TOTAL|PASS|FAIL|ERROR|SKIP):' check.out
	for f in $(grep -lE '^(not ok|Bail out)' tests/*.log 2>/dev/null); do
		echo "--- $f"
		# Each failure with the comments after it (its details);
		# a bail-out with what came before (a killed test's listing).
		grep -E '^(not ok|#)' "$f" | grep -A 6 '^not ok' | head -n 40
		grep -E '^(Bail out|#)' "$f" | grep -B 40 '^Bail out' |
		    tail -n 45
	done
	count "$dir/test-suite.log"
}

step_plain() {
	suite plain check --enable-werror
}

step_sanitize() {
	# The e2e busy timeout is 300 ms (the shipped one is 5000) to keep
	# the busy scenarios short; a sanitized CGI process is several times
	# slower, and 40 concurrent ones can wait longer for the write lock.
	ONCEHOOK_E2E_BUSY_MS=${ONCEHOOK_E2E_BUSY_MS_SANITIZE:-1500} \
	    suite sanitize check-some --enable-werror --enable-asan --enable-ubsan
}

step_distcheck() {
	echo "== distcheck (make distcheck-some)"
	# A tree of its own: plain's make check may still run in its own.
	rm -rf "$out/dist" && mkdir -p "$out/dist" && cd "$out/dist" &&
	    "$root/configure" >configure.out 2>&1 ||
	    { tail -20 configure.out; result fail; return; }
	# The fault and power-loss suites ran in full: a sample here.
	if ONCEHOOK_TEST_QUICK=1 bounded 1200 "make distcheck-some" \
	    make -j"$jobs" distcheck-some \
	    DISTCHECK_CONFIGURE_FLAGS=--enable-werror >distcheck.out 2>&1; then
		result ok
		grep -E 'archives ready|\.tar\.gz' distcheck.out | head -3
	else
		result fail
		grep -E '^(FAIL|ERROR)|rror|had no end' distcheck.out | head -30
		(cd oncehook-*/_build/sub 2>/dev/null && unfinished)
	fi
	# A build without MariaDB Connector/C nor OpenSSL still builds, and
	# a mysql:// store and a public-key scheme say what they need (one
	# step).
	echo "== without MariaDB and OpenSSL"
	local nomy=$out/nomariadb ok=0
	rm -rf "$nomy" && mkdir -p "$nomy" && cd "$nomy" &&
	if "$root/configure" --without-mariadb --without-openssl \
	    --enable-werror >configure.out 2>&1 &&
	    make -j"$jobs" oncehook >make.out 2>&1 &&
	    ! grep -q 'define HAVE_MARIADB' config.h &&
	    ! grep -q 'define HAVE_OPENSSL' config.h &&
	    ! ldd ./oncehook | grep -q libcrypto; then
		ONCEHOOK_DB='mysql://shop@localhost/shop' \
		    ONCEHOOK_SCHEME=stripe ONCEHOOK_SECRET=whsec_x \
		    ./oncehook check >check.out 2>&1
		[ $? -eq 1 ] && grep -q 'built without the MariaDB/MySQL store: ' \
		    check.out &&
		# The database and actions there: check fails for OpenSSL
		# alone (a stripe endpoint beside passes).
		export ONCEHOOK_DB="$nomy/db.sqlite" \
		    ONCEHOOK_ACTIONS="$root/tests/e2e/actions-schemes.sql"
		ONCEHOOK_SCHEME=stripe ONCEHOOK_SECRET=whsec_$(printf %040d 0) \
		    ./oncehook init >>check.out 2>&1 &&
		ONCEHOOK_SCHEME=stripe ONCEHOOK_SECRET=whsec_$(printf %040d 0) \
		    ./oncehook check >>check.out 2>&1 &&
		ONCEHOOK_SCHEME=discord \
		    ONCEHOOK_SECRET=d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a \
		    ./oncehook check >>check.out 2>&1
		[ $? -eq 1 ] && grep -q 'endpoint default (discord): this oncehook was built without OpenSSL' \
		    check.out &&
		ONCEHOOK_SCHEME=standard \
		    ONCEHOOK_SECRET=whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo= \
		    ./oncehook check >>check.out 2>&1
		[ $? -eq 1 ] && grep -q 'endpoint default (standard): this oncehook was built without OpenSSL' \
		    check.out && ok=1
		unset ONCEHOOK_DB ONCEHOOK_ACTIONS
	fi
	if [ $ok -eq 1 ]; then
		result ok
		grep 'built without' check.out
	else
		result fail
		tail -n 20 configure.out make.out check.out 2>/dev/null
	fi
}

# valgrind HALF: the unit test programs, every other one from the first
# (0) or the second (1): two steps, one per core.
valgrind_half() {
	echo "== valgrind ($1 of two halves)"
	cd "$out/plain" || { result fail; return; }
	local t i=0
	for t in tests/unit/t_*; do
		case $t in *.*) continue ;; esac
		# t_mystore needs its server: tests/mystore.sh runs it.
		case $t in */t_mystore) continue ;; esac
		[ -x "$t" ] || continue
		i=$((i + 1))
		[ $((i % 2)) -eq "$1" ] || continue
		if top_srcdir=$root ONCEHOOK_TEST_QUICK=1 bounded 900 \
		    "valgrind $t" valgrind -q \
		    --error-exitcode=1 --leak-check=full \
		    --errors-for-leak-kinds=definite,indirect \
		    --log-file="$t.valgrind" "./$t" >"$t.valgrind.out" 2>&1; then
			result ok
		else
			result fail
			echo "FAIL: valgrind $t"
			head -30 "$t.valgrind"
			grep -E '^(not ok|Bail out|== )' "$t.valgrind.out" | head -10
		fi
	done
}
step_valgrind1() { valgrind_half 1; }
step_valgrind2() { valgrind_half 0; }

step_fuzz() {
	echo "== fuzz (${FUZZ_SECONDS:-60}s)"
	if bounded 900 "tests/fuzz/run.sh" sh "$root/tests/fuzz/run.sh" \
	    "${FUZZ_SECONDS:-60}" >"$out/fuzz.out" 2>&1; then
		result ok
		grep -E '^(stat::number_of_executed_units|Done)' \
		    "$out/fuzz.out" | head -2
	else
		result fail
		tail -30 "$out/fuzz.out"
	fi
}

step_bench() {
	# A count that is not one is refused, naming it, before any row.
	echo "== bench options"
	bash "$root/bench/run.sh" --runs three >"$out/bench-opt.out" 2>&1
	if [ $? -eq 2 ] && grep -q "^bench/run.sh: --runs wants a whole" \
	    "$out/bench-opt.out"; then
		result ok
	else
		result fail
		cat "$out/bench-opt.out"
	fi
	# The benchmark still runs and its rows pass their checks.
	echo "== bench smoke"
	if bounded 900 "bench/run.sh --smoke" bash "$root/bench/run.sh" \
	    --smoke --bin "$out/plain/oncehook" >"$out/bench-smoke.out" 2>&1
	then
		result ok
		grep -E '^(  |bench:)' "$out/bench-smoke.out"
	else
		result fail
		tail -n 30 "$out/bench-smoke.out"
	fi
	# WAL pages per new event (bench/pages.sh) still measures.
	echo "== bench pages"
	if bounded 300 "bench/pages.sh" bash "$root/bench/pages.sh" \
	    --bin "$out/plain/oncehook" 20 >"$out/bench-pages.out" 2>&1; then
		result ok
		cat "$out/bench-pages.out"
	else
		result fail
		tail -n 30 "$out/bench-pages.out"
	fi
}

step_package() {
	echo "== package"
	local p f
	bounded 1500 "tests/package.sh" bash "$root/tests/package.sh" \
	    >"$out/package.out" 2>&1 || [ $? -ne 124 ] || {
		echo "Bail out! tests/package.sh had no end" >>"$out/package.out"
	}
	p=$(grep -c '^ok ' "$out/package.out")
	f=$(grep -c -e '^not ok ' -e '^Bail out!' "$out/package.out")
	passed=$((passed + p))
	failed=$((failed + f))
	grep -e '^not ok ' -e '^Bail out!' -e '^# lintian' -e 'took' \
	    "$out/package.out"
	if grep -q '^1\.\.0 # SKIP' "$out/package.out"; then
		result skip
	elif [ "$p" -eq 0 ]; then
		result fail
		tail -n 30 "$out/package.out"
	fi
}

# run STEP: one step in a subshell, its output and counts to files.
run() {
	(
		t0=$(date +%s)
		"step_$1"
		echo "== $1 took $(( $(date +%s) - t0 ))s"
		echo "$passed $failed $skipped" >"$out/steps/$1"
	) >"$out/$1.log" 2>&1
}

# schedule CAP STEP[:FILE,...]...: run every step, the first ones
# first, at most CAP at once, each once the files it names exist under
# $out/steps (a step's counts, written when it ended; NAME.built, once
# suite NAME built its programs) or once the step they belong to ended
# without them (NAME.ended, written here: a failed build, a killed step;
# its failure is counted, and what waits on it runs and fails on its own
# terms); print each step's log when it ends.
schedule() {
	local cap=$1 spec s f ok
	local -a queue=() left=() running=()
	shift
	queue=("$@")
	while [ ${#queue[@]} -gt 0 ] || [ ${#running[@]} -gt 0 ]; do
		left=()
		for s in "${running[@]}"; do
			if [ -f "$out/steps/$s" ] ||
			    ! kill -0 "${pid[$s]}" 2>/dev/null; then
				wait "${pid[$s]}"
				: >"$out/steps/$s.ended"
				cat "$out/$s.log"
			else
				left+=("$s")
			fi
		done
		running=("${left[@]}")
		left=()
		for spec in "${queue[@]}"; do
			s=${spec%%:*} ok=1
			if [ "$s" != "$spec" ]; then
				f=${spec#*:}
				for f in ${f//,/ }; do
					[ -e "$out/steps/$f" ] ||
					    [ -e "$out/steps/${f%.built}.ended" ] ||
					    ok=0
				done
			fi
			# Nothing running: what it waits for is a file no
			# step writes (a name misspelt here); it runs anyway.
			if [ ${#running[@]} -eq 0 ] ||
			    { [ $ok -eq 1 ] && [ ${#running[@]} -lt "$cap" ]; }
			then
				run "$s" &
				pid[$s]=$!
				running+=("$s")
			else
				left+=("$spec")
			fi
		done
		queue=("${left[@]}")
		sleep 1
	done
}
declare -A pid

start=$(date +%s)
# The pinned test libraries, once: the suites that use them link this
# node_modules (ONCEHOOK_TEST_NODE_MODULES; tests/servers/lib.sh,
# sv_npm_ci()) rather than each copying 200 MB out of npm's cache.  Not
# counted: if it fails, they install their own.
if command -v npm >/dev/null 2>&1; then
	rm -rf "$out/npm" && mkdir -p "$out/npm" &&
	    cp "$root/tests/node/package.json" \
	    "$root/tests/node/package-lock.json" "$out/npm/"
	if (cd "$out/npm" && timeout -k 10 600 npm ci --no-audit --no-fund \
	    --ignore-scripts --prefer-offline --loglevel=error) \
	    >"$out/npm.log" 2>&1; then
		echo "== test libraries installed in $(( $(date +%s) - start ))s"
		export ONCEHOOK_TEST_NODE_MODULES=$out/npm/node_modules
	else
		echo "== test libraries not installed (the suites try again):"
		tail -n 5 "$out/npm.log"
	fi
fi
# Two builds and their suites fill the machine first; the rest start
# as sanitize (the shorter) ends, beside plain's last suites, the
# longest first (package 260-290 s there, valgrind 165-215 each,
# distcheck 105-130, fuzz 80, bench 60).  fuzz reads plain's config.h.
schedule 4 plain sanitize package:sanitize \
    valgrind2:sanitize,plain.built valgrind1:sanitize,plain.built \
    distcheck:sanitize fuzz:sanitize,plain.built \
    bench:sanitize,plain.built

total_p=0 total_f=0 total_s=0
for s in plain sanitize distcheck valgrind1 valgrind2 fuzz bench package; do
	if [ -f "$out/steps/$s" ]; then
		read -r p f k <"$out/steps/$s"
	else
		p=0 f=1 k=0
		echo "== $s: ended without its counts"
	fi
	total_p=$((total_p + p))
	total_f=$((total_f + f))
	total_s=$((total_s + k))
done
echo "== took $(( $(date +%s) - start ))s; $total_s skipped"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
