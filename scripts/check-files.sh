#!/usr/bin/env bash
# scripts/check-files.sh [BASE]: the e2e files that touch what changed since
# BASE (default: the commits not on origin/main, or HEAD, and what is not
# committed yet), as a TEST_ONLY pattern for tests/e2e/run.sh (make check).
#
# What a change touches is read from the table below: a path pattern and
# the e2e files that drive that code. A changed e2e file is run itself.
# Where nothing matches, or the choice would be most of the suite, the
# fixed quick set of tests/smoke is run instead (with any changed file).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
base=${1:-}
if [ -z "$base" ]; then
	base=$(git merge-base HEAD origin/main 2>/dev/null) || base=HEAD
	[ "$base" = "$(git rev-parse HEAD)" ] && base=HEAD
fi

# path (a shell pattern) | e2e files
table='
src/ui/*|t_dashboard t_layout t_keys t_input
src/term/*|t_dashboard t_input t_fidelity
src/keeper/*|t_keepers t_robust
src/core/*|t_agents t_status t_keepers
src/git/*|t_agents t_verbs t_review
src/cmd/cmd_worktree.c|t_agents t_verbs
src/cmd/cmd_review.c|t_review
src/cmd/cmd_group.c|t_group
src/cmd/cmd_kinds.c|t_kinds
src/cmd/cmd_lima.c|t_lima
src/cmd/cmd_remote.c|t_remote
src/cmd/cmd_setup.c|t_status t_agent_clis
src/cmd/*|t_verbs
src/backends/*|t_kinds t_agent_clis t_lima
src/remote/*|t_remote
src/rpc/*|t_status t_verbs
src/config/*|t_dashboard t_kinds
src/util/*|t_agents t_robust
man/*|t_install
Makefile|t_install
'

changed=$( (git diff --name-only "$base" 2>/dev/null; git ls-files --others --exclude-standard) | sort -u)
picked=()
while read -r f; do
	[ -n "$f" ] || continue
	case $f in
	tests/e2e/t_*.sh) picked+=("${f##*/}") ;;
	esac
	while IFS='|' read -r pat files; do
		[ -n "$pat" ] || continue
		# shellcheck disable=SC2053
		if [[ $f == $pat ]]; then
			for t in $files; do picked+=("$t.sh"); done
			break
		fi
	done <<<"$table"
done <<<"$changed"

mapfile -t picked < <(printf '%s\n' "${picked[@]}" | sort -u | grep .)
all=$(ls tests/e2e/t_*.sh | wc -l)
if [ "${#picked[@]}" -eq 0 ] || [ "${#picked[@]}" -gt $((all / 2)) ]; then
	mapfile -t smoke < <(sed -n 's|^e2e/||p' tests/smoke)
	picked=("${smoke[@]}")
fi
# One glob for the runner: @(a|b|c) (extglob).
(
	IFS='|'
	echo "@(${picked[*]})"
)
