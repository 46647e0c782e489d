#!/usr/bin/env bash
# Ten commands at once on one project, as from ten terminals: adds,
# removes, renames and merges of different agents. Each one either does
# what it was asked or says why not; git's locks are waited for or
# reported, never left or broken; every invariant holds after.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

test_ten_at_once() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	local a
	for a in r1 r2 r3 n1 n2 m1 m2; do wrx add -b "$a" >/dev/null; done
	for a in m1 m2; do
		echo "$a" >"$(wrx path "$a")/$a.txt"
		git -C "$(wrx path "$a")" add "$a.txt"
		git -C "$(wrx path "$a")" commit -qm "$a"
	done
	# Renames and merges of agents whose panes are closed (a running one is refused).
	for a in n1 n2 m1 m2; do wrx close "$a" >/dev/null; done
	commits_before
	local pids=() i
	for i in 1 2 3; do (r=0; wrx add -b "a$i" >"$E2E_TMP/out.a$i" 2>&1 || r=$?; echo $r >"$E2E_TMP/rc.a$i") & pids+=($!); done
	for i in 1 2 3; do (r=0; wrx rm -f "r$i" >"$E2E_TMP/out.r$i" 2>&1 || r=$?; echo $r >"$E2E_TMP/rc.r$i") & pids+=($!); done
	for i in 1 2; do (r=0; wrx rename "n$i" "n${i}x" >"$E2E_TMP/out.n$i" 2>&1 || r=$?; echo $r >"$E2E_TMP/rc.n$i") & pids+=($!); done
	for i in 1 2; do (r=0; wrx merge "m$i" >"$E2E_TMP/out.m$i" 2>&1 || r=$?; echo $r >"$E2E_TMP/rc.m$i") & pids+=($!); done
	for i in "${pids[@]}"; do wait "$i"; done
	local f bad=0
	for f in "$E2E_TMP"/rc.*; do
		local k=${f##*/rc.}
		if [ "$(cat "$f")" -ne 0 ]; then
			# A refusal says why, in words (never a crash, never silence).
			grep -q . "$E2E_TMP/out.$k" || { echo "  $k failed silently" >&2; bad=1; }
			echo "  $k refused: $(head -2 "$E2E_TMP/out.$k")" >&2
		fi
	done
	invariants
	# What succeeded is there, whole.
	for i in 1 2 3; do
		[ "$(cat "$E2E_TMP/rc.a$i")" -ne 0 ] || [ -d "$(wrx path "a$i")" ]
		[ "$(cat "$E2E_TMP/rc.r$i")" -ne 0 ] || not git -C "$repo" config "workrex.worktree.r$i.path"
	done
	for i in 1 2; do
		[ "$(cat "$E2E_TMP/rc.n$i")" -ne 0 ] || [ -d "$(wrx path "n${i}x")" ]
		[ "$(cat "$E2E_TMP/rc.m$i")" -ne 0 ] || [ -f "$repo/m$i.txt" ] ||
			git -C "$repo" cat-file -e "main:m$i.txt"
	done
	# Most were done: a lock waited for, not given up on at once.
	local done
	done=$(grep -lx 0 "$E2E_TMP"/rc.* | wc -l)
	[ "$done" -ge 8 ] || { echo "  only $done of 10 done" >&2; bad=1; }
	[ "$bad" -eq 0 ]
}

run_test "ten adds, removes, renames and merges at once: each done or refused in words; invariants hold" test_ten_at_once
rm -rf "$E2E_TMP"
