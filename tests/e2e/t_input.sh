#!/usr/bin/env bash
# Input paths: key encodings per the program's modes, bracketed paste, the
# mouse (focus, wheel, pass-through), copying from scroll mode, bells and
# titles.
. "$(dirname "$0")/lib.sh"
trap stop EXIT

t_keys_follow_modes() {
	start 120 30
	wait_for 'wrx\$'
	type_line 'cat -v'
	keys Up F5 M-x C-a
	keys Enter
	wait_for '│\^\[\[A\^\[\[15~\^\[x\^A *$'
	keys C-c
	# Application cursor keys, as vim and less ask for them.
	type_line "printf '\\033[?1h'; echo mode-''on; cat -v"
	wait_for '│mode-on *$'
	keys Up Down
	keys Enter
	wait_for '│\^\[OA\^\[OB *$'
}

t_bracketed_paste() {
	start 120 30
	wait_for 'wrx\$'
	# The marker is drawn after the mode change: the dashboard has seen it.
	type_line "printf '\\033[?2004h'; echo mode-''on; cat -v"
	wait_for '│mode-on *$'
	tm set-buffer 'pasted-text'
	tm paste-buffer -p
	keys Enter
	wait_for '│\^\[\[200~pasted-text\^\[\[201~ *$'
	keys C-c
	# Without the mode the text arrives bare.
	type_line "printf '\\033[?2004l'; echo mode-''off; cat -v"
	wait_for '│mode-off *$'
	tm paste-buffer -p
	keys Enter
	wait_for '│pasted-text *$'
}

# mouse X Y BUTTON: an X10 mouse report as the outer terminal sends it.
mouse() {
	local b=$3 x=$1 y=$2
	tm send-keys -l "$(printf '\033[M%b%b%b' "\\$(printf '%03o' $((32 + b)))" \
		"\\$(printf '%03o' $((33 + x)))" "\\$(printf '%03o' $((33 + y)))")"
}

t_mouse() {
	start 120 30
	wait_for 'wrx\$'
	type_line 'seq 1 100'
	wait_for '│100 *$'
	prefix c
	wait_for '^ +2 bash'
	# Click into pane 1 (left) focuses it: typing lands there.
	mouse 40 10 0
	mouse 40 10 3
	type_line 'echo clicked-one'
	wait_for '^.{20,30}│clicked-one'
	# The wheel scrolls its history.
	mouse 40 10 64
	wait_for '\[scroll [1-9]'
	mouse 40 10 65
	mouse 40 10 65
	wait_gone '\[scroll'
	# A program that asked for mouse events gets them instead.
	type_line "printf '\\033[?1000h'; echo mode-''on; cat -v"
	wait_for '│mode-on *│'
	mouse 30 5 0
	keys Enter
	wait_for '│\^\[\[M .*$'
}

t_copy_to_clipboard() {
	start 120 30
	tm set -g set-clipboard on
	wait_for 'wrx\$'
	type_line 'echo alpha-beta-gamma'
	wait_for '│alpha-beta-gamma *$'
	prefix '['
	wait_for '\[scroll'
	keys /
	tm send-keys -l 'beta'
	keys Enter
	keys v l l l
	keys y
	wait_for 'copied 4 bytes'
	for _ in $(seq 50); do
		[ "$(tm show-buffer 2>/dev/null)" = "beta" ] && return 0
		sleep 0.1
	done
	echo "buffer: $(tm show-buffer 2>&1)" >&2
	false
}

t_bell_and_title() {
	start 120 30
	wait_for 'wrx\$'
	type_line "printf '\\033]2;my-title\\007'"
	wait_for '1 work:bash — my-title'
	screen | grep -qE '^ +1 bash my-title'
	type_line 'sleep 1; printf "\a"'
	prefix c
	wait_for '^ +2 bash'
	wait_for '\[bell\]'
	wait_for '^ 1 work !'
	# Focusing the pane clears the mark.
	prefix o
	wait_gone '\[bell\]'
}

run_test "keys are encoded as the program's modes ask" t_keys_follow_modes
run_test "bracketed paste passes through when enabled" t_bracketed_paste
run_test "mouse: click focuses, wheel scrolls, programs get events" t_mouse
run_test "scroll mode copies to the clipboard (OSC 52)" t_copy_to_clipboard
run_test "bell marks an unfocused pane; titles show" t_bell_and_title
