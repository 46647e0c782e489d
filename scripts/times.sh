#!/bin/sh
# scripts/times.sh [FILE]: the wall time of each round's suites, as
# scripts/suites.sh and .ci/run wrote them (build/times: "ROUND SUITE
# SECONDS STATUS" a line), as a table. Suites of a round run side by side:
# a round's time is its own line ("ci ROUND"), not the sum of its suites.
f=${1:-build/times}
[ -s "$f" ] || exit 0
awk '
function mmss(s) { return sprintf("%d:%02d", s / 60, s % 60) }
{ printf "  %-12s %-14s %7s  %s\n", $1, $2, mmss($3), $4 }
$1 == "ci" { total += $3 }
END { printf "  %-12s %-14s %7s\n", "total", "", mmss(total) }
' "$f"
