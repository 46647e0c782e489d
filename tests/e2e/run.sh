#!/usr/bin/env bash
# Runs every t_*.sh of a suite against $WORKREX and prints one summary line:
#   run.sh              the e2e suite (this directory)
#   run.sh DIR NAME     another suite built on lib.sh (tests/sandbox/run.sh)
# Sanitizer reports of the binary under test fail the suite too.
#
# The files run side by side, TEST_JOBS at once (by default twice the
# cores, at least 3: an e2e file mostly waits for a screen), the longest
# first, from the times in tests/durations, so that the last to start is a
# short one. Each file's output goes to a log of its own
# ($TEST_LOGS/NAME/FILE.log) and is printed whole when the file ends, so
# the output reads as it did one file after another. TEST_JOBS=1 runs
# them one after another. TEST_ONLY=GLOB runs only the files it matches;
# TEST_SMOKE=1 only the suite's files in tests/smoke.
# With TEST_SLOTS (a directory), suites started together share the
# TEST_JOBS places (take_slot).
set -u
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here} name=${2:-e2e}
: "${WORKREX:?set WORKREX to the binary under test}"
for tool in tmux python3; do
	command -v "$tool" >/dev/null || { echo "$name: $tool is required but not installed" >&2; exit 1; }
done
passed=0 failed=0
asan_dir=$(mktemp -d /tmp/wrx-asan.XXXXXX)
logs=${TEST_LOGS:-$here/../../build/test-logs}/$name
rm -rf "$logs"
mkdir -p "$logs"
# The quarantine (freed memory ASan holds back to catch use after free) grows
# with allocation throughput, up to 256 MB by default; the flood test bounds
# workrex's own memory, so the quarantine is kept to 32 MB.
export ASAN_OPTIONS="log_path=$asan_dir/asan:detect_leaks=0:abort_on_error=1:quarantine_size_mb=32"
export UBSAN_OPTIONS="log_path=$asan_dir/ubsan:print_stacktrace=1:halt_on_error=1"

# The tools the tests drive are Debian's (scripts/deps.sh installs them):
# a version manager's shims in front of them in PATH are not what the
# README's machine has, and cost (pyenv's python3 takes 0.7 s of CPU to
# start, Debian's 0.05).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH

jobs=${TEST_JOBS:-$(($(nproc) * 2 > 3 ? $(nproc) * 2 : 3))}

# The files, longest first: a file not in tests/durations counts as long.
mapfile -t files < <(
	for t in "$dir"/t_*.sh; do
		f=${t##*/}
		[[ -z ${TEST_ONLY:-} || $f == $TEST_ONLY ]] || continue
		[ -z "${TEST_SMOKE:-}" ] || grep -qx "$name/$f" "$here/../smoke" || continue
		s=$(awk -v k="$name/$f" '$1 == k { print $2 }' "$here/../durations" 2>/dev/null)
		echo "${s:-9999} $t"
	done | sort -rn | cut -d' ' -f2-
)

# take_slot: where suites run side by side (make test), their files share
# the places of $TEST_SLOTS/places, a pipe holding one byte for each free
# place (as make's jobserver): a file takes one (a read that waits, costing
# nothing) and gives it back when it ends (give_slot).
slot=
take_slot() {
	[ -n "${TEST_SLOTS:-}" ] || return 0
	exec {slot}<>"$TEST_SLOTS/places"
	read -r -n 1 -u "$slot" _
}
give_slot() {
	[ -n "${slot:-}" ] || return 0
	printf . >&"$slot"
	exec {slot}>&-
}

# One file: its output into its log, its wall seconds after it.
run_file() {
	local t=$1 log=$logs/${1##*/}.log start
	take_slot
	start=$SECONDS
	# (the slot's lock stays here: not held by what the file leaves running)
	if [ -n "${slot:-}" ]; then
		bash "$t" >"$log" 2>&1 {slot}>&-
	else
		bash "$t" >"$log" 2>&1
	fi
	give_slot
	# Wall seconds, then the CPU seconds (user + system) of what it ran.
	# (times, not in a $(...): a subshell's children are not this one's)
	times >"$log.times"
	awk -v wall=$((SECONDS - start)) 'END { split($1, u, "m"); split($2, s, "m");
		printf "%d %d\n", wall, u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$log.times" >"$log.secs"
}

# report FILE: its log printed, its results counted.
report() {
	local log=$logs/${1##*/}.log
	cat "$log"
	passed=$((passed + $(grep -c '^ok - ' "$log")))
	failed=$((failed + $(grep -c '^not ok - ' "$log")))
	grep '^not ok - ' "$log" | sed "s|^|${1##*/}: |" >>"$logs/failures"
	printf '%s/%s %s\n' "$name" "${1##*/}" "$(cat "$log.secs" 2>/dev/null)" >>"$logs/durations"
}

declare -A running=() # pid -> file
for t in "${files[@]}"; do
	while ((${#running[@]} >= jobs)); do
		wait -n -p done_pid "${!running[@]}"
		report "${running[$done_pid]}"
		unset "running[$done_pid]"
	done
	run_file "$t" &
	running[$!]=$t
done
while ((${#running[@]} > 0)); do
	wait -n -p done_pid "${!running[@]}"
	report "${running[$done_pid]}"
	unset "running[$done_pid]"
done

if compgen -G "$asan_dir/*" >/dev/null; then
	echo "not ok - sanitizer reports:"
	cat "$asan_dir"/*
	failed=$((failed + 1))
fi
rm -rf "$asan_dir"
echo "$name: $passed passed, $failed failed"
# The failures again, by file, where the end of a long output shows them.
[ ! -s "$logs/failures" ] || sed "s|^|$name: |" "$logs/failures"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
