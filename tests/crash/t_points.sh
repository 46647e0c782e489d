#!/usr/bin/env bash
# Every fault point in the source is injected by some crash test: each
# t_*.sh names the points it walks ("# points: add.*"), and walks every
# point of those names that the source has.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

test_every_point_tested() {
	local point covered=0 bad=0 globs
	globs=$(sed -n 's/^# points: //p' "$here"/t_*.sh | tr ' ' '\n')
	for point in $(fault_points '[a-z]+'); do
		local hit=0 g
		for g in $globs; do
			# shellcheck disable=SC2053
			[[ $point == $g ]] && hit=1
		done
		if [ "$hit" -eq 1 ]; then
			covered=$((covered + 1))
		else
			echo "  fault point $point: no crash test walks it" >&2
			bad=1
		fi
	done
	[ "$covered" -gt 0 ] && [ "$bad" -eq 0 ]
}

run_test "every fault point in the source has a crash test" test_every_point_tested
rm -rf "$E2E_TMP"
