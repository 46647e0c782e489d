#!/usr/bin/env bash
# Keys as a terminal sends them: every key of the table below is typed with
# tmux's send-keys into a program in a workrex pane and into the same
# program in a plain tmux pane (the reference), and the bytes each program
# read must be the same. key_echo.py logs them; it asks for the modes Claude
# Code and Codex ask for (bracketed paste, focus events, SGR mouse), once in
# normal and once in application cursor-key mode.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
REF="$SOCK-ref"
ref() { tmux -L "$REF" -f /dev/null "$@"; }
trap 'ref kill-server 2>/dev/null; stop' EXIT

KEYS=(Enter C-j Tab BTab BSpace C-h Escape Space C-Space C-a C-c C-d C-e C-r C-u C-w C-z
	'C-\' 'C-]' C-_ M-a M-x M-B M-Enter M-BSpace M-. M-Tab
	F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 S-F5 C-F5
	Up Down Left Right Home End PPage NPage IC DC
	S-Up S-Down S-Left S-Right C-Up C-Down C-Left C-Right M-Up M-Down M-Left M-Right
	C-S-Left C-S-Right S-Home S-End C-Home C-End C-PPage C-NPage S-DC C-DC M-DC)
APP_KEYS=(Up Down Left Right Home End Enter C-Up S-Right)

# Where tmux and xterm differ, the pane's TERM (xterm-256color) decides:
# tmux sends Home and End as its own TERM (screen, tmux) has them.
declare -A XTERM=([normal Home]=1b5b48 [normal End]=1b5b46 [app Home]=1b4f48 [app End]=1b4f46)

# lines FILE: how many lines the log has.
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
grown() { [ "$(lines "$1")" -gt "$2" ]; }

# both KEY...: the same keys to both programs; each log's new line in
# $got_wrx and $got_ref.
both() {
	local nw nr
	nw=$(lines "$E2E_TMP/wrx.log") nr=$(lines "$E2E_TMP/ref.log")
	keys "$@"
	ref send-keys "$@"
	until_ok 5 grown "$E2E_TMP/wrx.log" "$nw" || { got_wrx=none got_ref=; return 0; }
	until_ok 5 grown "$E2E_TMP/ref.log" "$nr" || { got_ref=none; }
	sleep 0.2
	got_wrx=$(sed -n "$((nw + 1)),\$p" "$E2E_TMP/wrx.log" | tr -d '\n')
	got_ref=$(sed -n "$((nr + 1)),\$p" "$E2E_TMP/ref.log" | tr -d '\n')
}

# table MODE KEY...: each key to both, every difference listed.
table() {
	local mode=$1 k bad=0
	shift
	rm -f "$E2E_TMP/wrx.log" "$E2E_TMP/ref.log"
	type_line "$here/key_echo.py $E2E_TMP/wrx.log $mode"
	ref new-session -d -x 100 -y 30 "$here/key_echo.py $E2E_TMP/ref.log $mode"
	wait_for '│key-echo ready'
	until_ok 5 sh -c "ref() { tmux -L '$REF' -f /dev/null \"\$@\"; }; ref capture-pane -p | grep -q key-echo"
	for k; do
		both "$k"
		[ -n "${XTERM[$mode $k]:-}" ] && got_ref=${XTERM[$mode $k]}
		if [ "$got_wrx" != "$got_ref" ]; then
			echo "  $mode $k: workrex sent [$got_wrx], tmux [$got_ref]" >&2
			bad=$((bad + 1))
		fi
	done
	# A paste, with a newline in it, bracketed as the program asked.
	tm set-buffer "$(printf 'pasted\nline two')"
	ref set-buffer "$(printf 'pasted\nline two')"
	local nw nr
	nw=$(lines "$E2E_TMP/wrx.log") nr=$(lines "$E2E_TMP/ref.log")
	tm paste-buffer -p
	ref paste-buffer -p
	until_ok 5 grown "$E2E_TMP/wrx.log" "$nw"
	until_ok 5 grown "$E2E_TMP/ref.log" "$nr"
	sleep 0.2
	[ "$(tail -n +$((nw + 1)) "$E2E_TMP/wrx.log" | tr -d '\n')" = "$(tail -n +$((nr + 1)) "$E2E_TMP/ref.log" | tr -d '\n')" ] ||
		{ echo "  $mode paste: $(tail -1 "$E2E_TMP/wrx.log") against $(tail -1 "$E2E_TMP/ref.log")" >&2; bad=$((bad + 1)); }
	ref kill-server
	tm send-keys -l QUIT-KEY-ECHO
	return $bad
}

t_key_table() {
	start 120 30
	wait_for 'wrx\$'
	table normal "${KEYS[@]}"
	wait_for 'wrx\$'
	table app "${APP_KEYS[@]}"
}

# Focus events and SGR mouse reports: the outer terminal's go to the
# program in the focused pane in the form it asked for.
t_focus_and_mouse() {
	start 120 30
	wait_for 'wrx\$'
	type_line "$here/key_echo.py $E2E_TMP/wrx.log"
	wait_for '│key-echo ready'
	local n
	# Each as a line of its own, waited for (not a count of lines); the log
	# is shown when one never comes.
	tm send-keys -l $'\e[O'
	until_ok 5 grep -qx 1b5b4f "$E2E_TMP/wrx.log" || { cat "$E2E_TMP/wrx.log" >&2; false; }
	tm send-keys -l $'\e[I'
	until_ok 5 grep -qx 1b5b49 "$E2E_TMP/wrx.log" || { cat "$E2E_TMP/wrx.log" >&2; false; }
	# A click (X10 from the outer terminal) reaches it as SGR press and release.
	n=$(lines "$E2E_TMP/wrx.log")
	tm send-keys -l $'\e[M @+'
	until_ok 5 grown "$E2E_TMP/wrx.log" "$n"
	tm send-keys -l $'\e[M#@+'
	until_ok 5 grown "$E2E_TMP/wrx.log" $((n + 1))
	# ESC [ < 0 ; col ; row M, then the same with m.
	tail -n 2 "$E2E_TMP/wrx.log" | tr -d '\n' | grep -qE '^1b5b3c303b3[0-9](3[0-9])*3b3[0-9](3[0-9])*4d1b5b3c303b3[0-9](3[0-9])*3b3[0-9](3[0-9])*6d$'
}

run_test "every key of the table reaches a program as tmux sends it" t_key_table
run_test "focus events and SGR mouse reports reach the program" t_focus_and_mouse
