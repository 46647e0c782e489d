#!/usr/bin/env bash
# The dashboard as a user sees it: shell pane, colours, wide characters,
# alternate screen, tiling, zoom, focus, close, resize, scroll mode, quit.
. "$(dirname "$0")/lib.sh"
trap stop EXIT

t_shell_runs_commands() {
	start 120 40
	wait_for 'wrx\$'
	type_line 'echo $((6*7))'
	wait_for '^.*│42 *$'
	# The sidebar lists the agent (the directory) and its pane.
	screen | grep -qE '^ 1 +work'
	screen | grep -qE '^ +1 bash'
}

t_bold_red() {
	start 120 40
	wait_for 'wrx\$'
	type_line "printf '\\033[1;31mX\\033[0m\\n'"
	wait_for '│X *$'
	# tmux reports the cell's attributes: bold and red right before the X.
	screen -e | grep -aP '\x1b\[[0-9;]*\b1m(\x1b\[[0-9;]*m)*\x1b\[31m(\x1b\[[0-9;]*m)*X' >/dev/null ||
		screen -e | grep -aP '\x1b\[[0-9;]*31m(\x1b\[[0-9;]*m)*X' | grep -aq '1m'
}

t_truecolour() {
	# On a 256-colour terminal RGB maps to the nearest palette entry...
	start 120 40 tmux-256color
	wait_for 'wrx\$'
	type_line "printf '\\033[38;2;255;0;0mR\\033[48;2;0;0;255mB\\033[0m\\n'"
	wait_for '│RB *$'
	screen -e | grep -aP '\x1b\[38;5;196m(\x1b\[[0-9;]*m)*R' >/dev/null
	screen -e | grep -aP '\x1b\[48;5;21m(\x1b\[[0-9;]*m)*B' >/dev/null
	kill_server
	# ...and with direct colour it goes through unchanged.
	start 120 40 xterm-direct
	wait_for 'wrx\$'
	type_line "printf '\\033[38;2;18;52;86mR\\033[0m\\n'"
	wait_for '│R *$'
	screen -e | grep -aP '\x1b\[38;2;18;52;86m(\x1b\[[0-9;]*m)*R' >/dev/null
}

t_wide_chars_keep_columns() {
	start 120 40
	wait_for 'wrx\$'
	type_line "printf 'abcd|\\n中文|\\n😀xy|\\ne\\xcc\\x81abc|\\n'"
	wait_for 'abc\|$'
	# Every | must sit at the same display column.
	screen | python3 -c '
import sys, unicodedata
def width(s):
    w = 0
    for ch in s:
        if unicodedata.combining(ch): continue
        w += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return w
cols = set()
for line in sys.stdin:
    line = line.rstrip("\n")
    if line.endswith("|") and "printf" not in line:
        cols.add(width(line[: line.rindex("|")]))
sys.exit(0 if len(cols) == 1 else 1)'
}

t_alternate_screen() {
	seq 1 500 >"$E2E_TMP/work/numbers.txt"
	start 120 40
	wait_for 'wrx\$'
	type_line 'echo before-less'
	wait_for '│before-less'
	type_line 'less numbers.txt'
	wait_for '│1 *$'
	wait_gone 'before-less'
	keys G
	wait_for '│500 *$'
	keys q
	wait_for 'before-less'
	wait_gone '│500 *$'
}

# The outer terminal shrinks and grows while less is up, then less quits
# (once after the grow, once while small): the shell's lines come back in
# place, the prompt after the command, nothing overwritten (as in tmux).
t_resize_under_the_alternate_screen() {
	seq 1 500 >"$E2E_TMP/work/numbers.txt"
	start 100 40
	wait_for 'wrx\$'
	type_line 'seq 101 130'
	wait_for '│130 *$'
	type_line 'less numbers.txt'
	wait_for '│1 *$'
	tm resize-window -x 100 -y 12
	wait_gone '│130 *$'
	tm resize-window -x 100 -y 40
	wait_for '│37 *$'
	keys q
	wait_for '│130 *$'
	type_line 'echo after-$((6*7))'
	wait_for '│after-42 *$'
	screen | grep -A3 -E '│130 *$' | sed -n 2p | grep -q 'less numbers.txt'
	wait_for '│101 *$' # the frame after the echo may still be on its way
	type_line 'less numbers.txt'
	wait_for '│1 *$'
	tm resize-window -x 100 -y 12
	wait_for '│9 *$'
	keys q
	wait_for 'less numbers.txt'
	type_line 'echo small-$((6*7))'
	wait_for '│small-42 *$'
	screen | grep -A1 'less numbers.txt' | tail -1 | grep -q 'echo small-'
}

t_tiling_zoom_focus_close() {
	start 120 40
	wait_for 'wrx\$'
	prefix c
	wait_for '^ +2 bash'
	prefix c
	wait_for '^ +3 bash'
	# Three title bars: the focused pane (3) is the main one, left; the
	# others stacked right, in their order.
	[ "$(screen | grep -oE '│ [123] [^│]*work:bash' | wc -l)" -eq 3 ]
	screen | grep -qE '^ workrex .*│ 3 [^│]*work:bash.*│ 1 [^│]*work:bash'
	screen | grep -A30 '│ 1 [^│]*work:bash' | grep -qE '│ 2 [^│]*work:bash *$'
	type_line 'echo in-three'
	wait_for '^.{20,30}│in-three *│'
	# Zoom shows one pane only.
	prefix z
	wait_for '\[zoom\]'
	[ "$(screen | grep -oE '│ [123] [^│]*work:bash' | wc -l)" -eq 1 ]
	prefix z
	wait_gone '\[zoom\]'
	# Focus by number: agent 1 again moves on to its next pane (pane 1).
	prefix 1
	type_line 'echo in-one'
	wait_for '^.{20,30}│in-one'
	# Close pane 1: it still runs, so confirm.
	prefix x
	wait_for 'close pane 1'
	keys y
	# The others keep their numbers (as tmux keeps window indexes): 2 and 3.
	wait_gone '^ +1 bash'
	[ "$(screen | grep -oE '│ [23] [^│]*work:bash' | wc -l)" -eq 2 ]
	# Layouts cycle: grid, then full.
	prefix Space
	wait_for '\[grid\]'
	prefix Space
	wait_for '\[full\]'
}

t_resize_reaches_programs() {
	start 120 40
	wait_for 'wrx\$'
	type_line 'stty size'
	# 40 rows - status line - title bar; 120 cols - sidebar (24) - separator.
	wait_for '│38 95 *$'
	tm resize-window -x 100 -y 30
	# The status line is redrawn at the new width once the resize is through.
	wait_for '^ {75,85}\[tile\] C-b \? help$'
	sleep 0.3
	type_line 'clear; stty size'
	wait_for '│28 75 *$'
	prefix s
	# Type once the pane has moved to column 0 (the sidebar is gone).
	wait_gone '^ workrex'
	sleep 0.3
	type_line 'clear; stty size'
	wait_for '^28 100 *$'
}

t_scroll_mode_shows_history() {
	start 100 30
	wait_for 'wrx\$'
	type_line 'seq 1 300'
	wait_for '^.*│300 *$'
	prefix '['
	wait_for '\[scroll 0/'
	keys PageUp PageUp PageUp
	# Three pages up: lines around 200-230, far from the live screen's 270-300.
	wait_for '\[scroll [1-9][0-9]*/'
	wait_for '│21[0-9] *$'
	# Search for a line long gone from the screen.
	keys /
	wait_for 'search up:'
	tm send-keys -l '123'
	keys Enter
	wait_for '│123 *$'
	keys q
	wait_for '│300 *$'
	wait_gone '\[scroll'
}

t_quit_asks_while_running() {
	start 100 30
	wait_for 'wrx\$'
	prefix q
	wait_for 'quit and end 1 running program'
	keys n
	wait_gone 'quit and end'
	prefix q
	wait_for 'quit and end'
	keys y
	wait_for 'WORKREX-EXITED 0'
}

# The dashboard sets the terminal's modes itself (curses draws into memory):
# after it ends they are exactly as the shell had them.
t_terminal_modes_restored() {
	tm new-session -d -x 100 -y 30 -c "$E2E_TMP/work" "env TERM=tmux-256color bash --norc"
	tm set -g status off
	type_line "PS1='sh> '; stty -g > $E2E_TMP/before; $WORKREX; stty -g > $E2E_TMP/after; cmp $E2E_TMP/before $E2E_TMP/after && echo MODES-RE''STORED"
	wait_for 'wrx\$'
	prefix q
	wait_for 'quit and end'
	keys y
	wait_for 'MODES-RESTORED'
	type_line 'echo typed-back'
	wait_for '^typed-back'
}

t_help_lists_bindings() {
	start 100 40
	wait_for 'wrx\$'
	prefix '?'
	wait_for 'keys after the prefix C-b'
	screen | grep -q 'zoom the focused pane'
	keys Escape
	wait_gone 'keys after the prefix'
	# Taller than an 80x24 screen, it scrolls to its last binding.
	tm resize-window -x 80 -y 24
	prefix '?'
	wait_for 'j/k scroll, any other key closes'
	not grep -q 'read the config files again' <(screen)
	for _ in $(seq 40); do keys j; done
	wait_for "the focused agent.s group side by side"
	wait_for 'read the config files again'
	keys q
	wait_gone 'keys after the prefix'
}

# Every view's keys, from the key table: Tab pages through them in the
# help, and ? in the agents table lists its own over it.
t_help_lists_views_keys() {
	start 100 40
	wait_for 'wrx\$'
	prefix '?'
	wait_for "Tab: the views' keys"
	keys Tab
	wait_for 'keys of the agents table'
	wait_for 'R +remove the agents whose work is gone upstream'
	keys Tab
	wait_for 'keys of the review view'
	wait_for 'Tab +next mode: wip, branch, commits, staged'
	keys Tab Tab Tab
	wait_for 'keys of a text shown whole'
	keys Tab
	wait_for 'keys after the prefix C-b'
	keys q
	wait_gone 'keys after the prefix'
	prefix w
	wait_for 'AGENT +STATUS'
	keys '?'
	wait_for 'keys of the agents table'
	keys q
	wait_gone 'keys of the agents table'
	wait_for 'AGENT +STATUS'
	keys q
	wait_gone 'AGENT +STATUS'
}

# Run inside tmux: its variables do not reach the panes (a tmux command
# there would drive the user's tmux), and the dashboard says how to reach
# its prefix past tmux's.
t_inside_tmux() {
	WORKREX_ENV="TMUX=/tmp/tmux-0/default,1,0 TMUX_PANE=%9 TERM_PROGRAM=tmux TERM_PROGRAM_VERSION=3.3a" start 120 30
	wait_for "inside tmux, C-b is tmux's prefix too: press C-b twice"
	type_line 'echo "outer=[$TMUX|$TMUX_PANE|$TERM_PROGRAM|$TERM_PROGRAM_VERSION]"'
	wait_for '│outer=\[\|\|\|\] *$'
}

# The running workrex is on the panes' PATH, built from source or not, so
# the hooks setup installs (workrex set-status) work in them (issue 11).
t_workrex_on_the_panes_path() {
	start 120 40
	wait_for 'wrx\$'
	type_line 'echo "at=$(command -v workrex)"'
	wait_for "│at=$(dirname "$WORKREX")/workrex *\$"
	type_line 'workrex set-status waiting && echo set-ok'
	wait_for '│set-ok *$'
}

run_test "shell pane runs commands" t_shell_runs_commands
run_test "inside tmux: no tmux variable in the panes; the prefix advice" t_inside_tmux
run_test "bold red X" t_bold_red
run_test "24-bit colour" t_truecolour
run_test "CJK, emoji and combining marks keep columns" t_wide_chars_keep_columns
run_test "alternate screen draws and restores" t_alternate_screen
run_test "resized under the alternate screen: the shell's lines come back" t_resize_under_the_alternate_screen
run_test "tile three panes, zoom, focus by number, close, layouts" t_tiling_zoom_focus_close
run_test "resize reaches the programs" t_resize_reaches_programs
run_test "scroll mode shows scrolled-off lines and searches" t_scroll_mode_shows_history
run_test "quit asks while programs run" t_quit_asks_while_running
run_test "the terminal's modes are restored at the end" t_terminal_modes_restored
run_test "help overlay lists bindings" t_help_lists_bindings
run_test "help: Tab pages through every view's keys; ? in the agents table" t_help_lists_views_keys
run_test "the running workrex is on the panes' PATH" t_workrex_on_the_panes_path
