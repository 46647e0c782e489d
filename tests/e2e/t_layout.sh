#!/usr/bin/env bash
# What a person meets with many agents: the focused agent has the main
# pane, no pane shown is squeezed under 3 rows, the rest are hidden and
# counted, every agent is reachable by keys (number or name), and keys go
# to the pane the screen shows focused, zoomed or not. A pane of one row
# loses nothing of what its program prints, in the dashboard and in a
# keeper alone.
. "$(dirname "$0")/lib.sh"
trap stop EXIT
git_env

# agents N: a repository with N bash agents of two panes each, added in the background.
agents() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	for i in $(seq 1 "$1"); do wrx add -b "ag$i" >/dev/null; done
}

# The panes the screen shows, by their title bars: "id handle" a line.
shown() { screen | grep -oE '│ [0-9]+ [^ │:]*( [^ │:]+)?:' | sed -E 's/^│ ([0-9]+) (. )?([^:]*):$/\1 \3/'; }

# room W H N: N agents at W x H; every agent picked by name with C-b ',
# typed into with tmux keys; the screen checked each time.
room() {
	local w=$1 h=$2 n=$3 i id handle
	agents "$n"
	start_repo "$w" "$h"
	wait_for "^ 2 ag1"
	for i in $(seq 1 "$n"); do
		prefix "'"
		wait_for 'agent \(number or name'
		tm send-keys -l "ag$i"
		keys Enter
		# Its pane is the main one: the first title bar, right of the sidebar.
		wait_for "^ workrex +│ [0-9]+ ag$i:"
		tm send-keys -l "echo typed-into-\$WORKREX_HANDLE"
		keys Enter
		wait_for "^.{24}│typed-into-ag$i *│"
		# No pane shown under 3 rows; the focused one as tall as the area.
		while read -r id handle; do
			[ "$handle" = proj ] && continue
			[ "$(wrx capture "$handle" --screen | wc -l)" -ge 3 ] ||
				{ echo "  pane $id of $handle has under 3 rows" >&2; return 1; }
		done < <(shown)
		[ "$(wrx capture "ag$i" --screen | wc -l)" -eq $((h - 2)) ]
	done
	# What does not fit is counted.
	screen | grep -qE '\+[0-9]+ more'
	# Agents past 9 by number too.
	prefix "'"
	tm send-keys -l 11
	keys Enter
	wait_for "^ workrex +│ [0-9]+ ag10:"
}

t_80x24_12_agents() { room 80 24 12; }
t_200x60_25_agents() { room 200 60 25; }

# Zoomed, focusing another agent shows that agent: keys never go unseen.
t_zoom_follows_focus() {
	agents 3
	start_repo 120 36
	wait_for '^ 4 ag3'
	prefix 2
	wait_for '^ workrex +│ [0-9]+ ag1:'
	prefix z
	wait_for '\[zoom\]'
	prefix 4
	wait_for '^ workrex +│ [0-9]+ ag3:.*\[zoom\]'
	[ "$(shown | wc -l)" -eq 1 ]
	tm send-keys -l 'echo zoomed-$WORKREX_HANDLE'
	keys Enter
	wait_for '│zoomed-ag3 *$'
}

# The sidebar keeps the focused agent's row in view and says how many more.
t_sidebar_scrolls() {
	agents 25
	start_repo 80 24
	wait_for '↓[0-9]+ more'
	prefix "'"
	tm send-keys -l ag25
	keys Enter
	wait_for '^ 26 ag25'
	wait_for '↑[0-9]+ more'
	prefix 1
	wait_for '^ 1 proj'
	wait_gone '↑[0-9]+ more'
}

# A pane of one row: its program's lines go to its history, in the
# dashboard and in its keeper with no dashboard.
t_one_row_pane_keeps_lines() {
	agents 1
	start_repo 80 3
	wait_for 'ag1|proj'
	prefix 2
	sleep 0.5
	[ "$(wrx capture ag1 --screen | wc -l)" -eq 1 ]
	wrx send ag1 'seq 1 40; echo seq-done'
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' capture ag1 | grep -qx seq-done"
	wrx capture ag1 | grep -xE '[0-9]+' | head -40 | diff - <(seq 1 40) >&2
	kill_tmux
	wrx send ag1 'seq 41 80; echo keeper-done'
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' capture ag1 | grep -qx keeper-done"
	wrx capture ag1 | grep -xE '[0-9]+' | diff - <(seq 1 80) >&2
}

# Narrow panes keep the agent's name in their titles: the markers on the
# right ([<1m], [interrupted 4m]) give way first (issue 46).
t_titles_keep_the_name() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add -b login-fix >/dev/null
	wrx add -b api-cache >/dev/null
	wrx add -b docs-typo >/dev/null
	start_repo 100 24 # panes of 24 columns: [interrupted <1m] takes 19
	wait_for '^ 4 docs-typo'
	# Working, then silent for 10 s: interrupted, the widest marker.
	for h in login-fix api-cache docs-typo; do wrx send "$h" 'clear; workrex set-status working'; done
	prefix Space
	wait_for '\[grid\]'
	wait_for '^ 4 ○ docs-typo' 20
	# Each agent pane (the first of each agent: 1, 3, 5) keeps its number,
	# icon and name; the marker gives way.
	local t
	for t in '1 ○ login-fix' '3 ○ api-cache' '5 ○ docs-typo'; do
		until_ok 5 in_output -F "│ $t" -- screen || { screen >&2; return 1; }
	done
	screen | not grep -qE '│ [0-9]+ [^ ]* +\['
}

# sidebar.width sizes the sidebar; the layout (C-b Space) and the sidebar
# hidden (C-b s) outlive a detach (issue 46).
t_view_kept_across_detach() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\nsidebar:\n  width: 40\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add -b a-rather-long-agent-name-here >/dev/null
	start_repo 120 30
	# 40 columns: the whole name, and the border at column 41.
	wait_for '^ 2 a-rather-long-agent-name-here  +│'
	[ "$(screen | head -1 | python3 -c 'import sys; print(sys.stdin.read()[40])')" = '│' ]
	prefix Space
	wait_for '\[grid\]'
	prefix d
	wait_for 'WORKREX-EXITED'
	kill_tmux
	start_repo 120 30
	wait_for '\[grid\]'
	prefix s
	wait_gone '^ workrex  '
	prefix d
	wait_for 'WORKREX-EXITED'
	kill_tmux
	start_repo 120 30
	wait_for '\[grid\]'
	sleep 0.5
	not in_output '^ workrex  ' -- screen
	prefix s
	wait_for '^ 2 a-rather-long-agent-name-here'
}

run_test "80x24, 12 agents: each by name, the main pane, none under 3 rows" t_80x24_12_agents
run_test "200x60, 25 agents: each by name, the main pane, none under 3 rows" t_200x60_25_agents
run_test "zoomed, focusing another agent shows it; keys go there" t_zoom_follows_focus
run_test "the sidebar scrolls to the focused agent and counts the rest" t_sidebar_scrolls
run_test "a pane one row high keeps every line, with and without a dashboard" t_one_row_pane_keeps_lines
run_test "narrow panes keep the agent's name in their titles; markers give way" t_titles_keep_the_name
run_test "sidebar.width; the layout and a hidden sidebar outlive a detach" t_view_kept_across_detach
