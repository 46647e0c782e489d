#!/usr/bin/env bash
# scripts/suites.sh ROUND SUITE...: the test suites of a round (make test,
# make asan) side by side, each its own `make SUITE`, and every one runs
# to its end whichever fails. Each suite's output goes to a log of its own
# and is printed whole when it ends, so suites do not interleave; its wall
# time is added to build/times ("ROUND SUITE SECONDS ok|FAILED"), which
# scripts/times.sh prints as a table.
#
# The suites made of test files (e2e, crash, net, sandbox) share TEST_JOBS
# places for their files (tests/e2e/run.sh, TEST_SLOTS): started together,
# they keep the machine as busy as it should be and no busier.
#
# Extra make arguments for every suite come from SUITE_MAKE_ARGS.
set -u
round=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)
logs=$top/build/suite-logs/$round
times=$top/build/times
mkdir -p "$logs"
for s; do rm -f "$logs/$s".*; done
# The places: a pipe with one byte for each (tests/e2e/run.sh, take_slot),
# TEST_JOBS of them (run.sh's default, told to it); held open here so it
# never ends.
TEST_SLOTS=$(mktemp -d /tmp/wrx-slots.XXXXXX)
TEST_JOBS=${TEST_JOBS:-$(($(nproc) * 2 > 3 ? $(nproc) * 2 : 3))}
export TEST_SLOTS TEST_JOBS
trap 'rm -rf "$TEST_SLOTS"' EXIT
mkfifo "$TEST_SLOTS/places"
exec {places_fd}<>"$TEST_SLOTS/places"
printf "%${TEST_JOBS}s" '' | tr ' ' . >&"$places_fd"

# Debian's tools first (as tests/e2e/run.sh says why): the soak and the
# fuzzers' runs are started from here too.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH

# The make arguments, quoted as a shell quotes them (the Makefile's own).
eval "margs=(${SUITE_MAKE_ARGS:-})"

declare -A running=() # pid -> suite
failed=
for s; do
	(
		start=$SECONDS
		make --no-print-directory -C "$top" "${margs[@]}" "$s" >"$logs/$s.log" 2>&1 {places_fd}>&-
		rc=$?
		echo "$((SECONDS - start)) $rc" >"$logs/$s.done"
		exit $rc
	) &
	running[$!]=$s
done
while ((${#running[@]} > 0)); do
	wait -n -p pid "${!running[@]}"
	s=${running[$pid]}
	unset "running[$pid]"
	cat "$logs/$s.log"
	read -r secs rc <"$logs/$s.done"
	if [ "$rc" -eq 0 ]; then
		echo "$round $s $secs ok" >>"$times"
	else
		echo "$round $s $secs FAILED" >>"$times"
		failed="$failed $s"
	fi
done
if [ -n "$failed" ]; then
	echo "make $round: FAILED:$failed"
	# What failed, once more at the end, where a clipped log keeps it.
	for s in $failed; do
		grep -E '^[a-z-]+: t_[a-z_0-9]+\.sh: not ok' "$logs/$s.log"
	done
	exit 1
fi
echo "make $round: every suite passed"
