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
	# Pane 2, focused, is the main one (left). A click into pane 1, in the
	# stack, focuses it: it becomes the main one, and typing lands there.
	mouse 100 10 0
	mouse 100 10 3
	wait_for '^ workrex .*│ 1 [^│]*work:bash.*│ 2 [^│]*work:bash'
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

# osc52 TEXT: the shell line that has the pane's program set the clipboard to TEXT.
osc52() {
	local b
	b=$(printf %s "$1" | base64 -w0)
	printf '%s' "printf '\\033]52;c;$b\\a'"
}

buffer_is() {
	for _ in $(seq 50); do
		[ "$(tm show-buffer 2>/dev/null)" = "$1" ] && return 0
		sleep 0.1
	done
	echo "buffer: $(tm show-buffer 2>&1), not $1" >&2
	false
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
	# No X or Wayland here: only the terminal has it, and that is said.
	wait_for 'copied 4 bytes to the terminal \(OSC 52; no wl-copy or xclip here'
	buffer_is beta
}

# A host pane's OSC 52 write reaches the outer terminal (clipboard.host_panes:
# allow); a read is never answered.
t_pane_sets_clipboard() {
	start 120 30
	tm set -g set-clipboard on
	wait_for 'wrx\$'
	type_line "$(osc52 from-the-pane)"
	buffer_is from-the-pane
	type_line "printf '\\033]52;c;?\\a'; read -rs -t 1 x; echo \"answer[\$x]\""
	wait_for '^.*│answer\[\] *$'
}

# clipboard.host_panes: ask. The question waits on the status line and
# takes no key: y typed into the pane goes to the pane; prefix a opens it,
# y sets the clipboard, n refuses, and the pane is not asked again soon.
t_pane_clipboard_asks() {
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'clipboard:\n  host_panes: ask\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start 120 30
	tm set -g set-clipboard on
	tm set-buffer before
	wait_for 'wrx\$'
	type_line "$(osc52 first-write)"
	wait_for 'a question waits: C-b a to answer - .*sets the clipboard to "first-write"'
	keys y y y
	wait_for 'wrx\$ yyy'
	buffer_is before
	keys C-u
	prefix a
	wait_for '^.*sets the clipboard to "first-write" \(11 bytes\)\. Allow\?'
	keys y
	buffer_is first-write
	wait_gone 'Allow\?'
	type_line "$(osc52 second-write)"
	wait_for 'question waits.*sets the clipboard to "second-write"'
	prefix a
	keys n
	wait_gone 'second-write'
	type_line "$(osc52 third-write); echo wrote-third"
	wait_for '│wrote-third *$'
	sleep 0.5
	screen | not grep -q 'question waits'
	buffer_is first-write
	rm -rf "$XDG_CONFIG_HOME/workrex"
}

# An agent asks as fast as it can (its own merge, clipboard writes) while
# the user types into another agent: every key reaches that agent, and no
# y typed into a pane answers a question; the questions wait until the user
# opens one (prefix a), and a no is not asked again at once.
t_questions_take_no_keys() {
	git_env
	make_repo
	mkdir -p "$E2E_TMP/guestbin" "$XDG_CONFIG_HOME/workrex"
	ln -sf "$WORKREX_GUEST" "$E2E_TMP/guestbin/workrex"
	printf 'clipboard:\n  host_panes: ask\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 140 40
	tm set -g set-clipboard on
	tm set-buffer before
	wait_for 'wrx\$'
	wrx add asker -b >/dev/null
	wrx add typist -b >/dev/null
	wait_for '^ 3 typist'
	local g="PATH=$E2E_TMP/guestbin:\$PATH WORKREX_SANDBOX=1" a t
	a=$(wrx path asker)
	t=$(wrx path typist)
	# Nothing to merge yet: refused at once, nobody asked.
	# (Its output outside its worktree: a file there is uncommitted work,
	# which its merge is refused for before anyone is asked.)
	wrx send asker "$g workrex merge 2>'$E2E_TMP/nothing.err'; echo nothing-rc=\$?"
	wait_for 'nothing-rc=1'
	grep -q "'asker' has nothing to merge into main yet" "$E2E_TMP/nothing.err"
	screen | not grep -q 'question waits'
	echo change >"$a/change.txt"
	git -C "$a" add change.txt
	git -C "$a" commit -qm change
	# Until told to stop: its merge (in the background, again and again)
	# and a clipboard write every 20 ms.
	wrx send asker "i=0; while [ ! -e stop ]; do i=\$((i + 1)); ($g workrex merge >/dev/null 2>&1 &); printf '\\033]52;c;%s\\a' \$(printf y-\$i | base64); sleep 0.02; done; echo asker-done"
	wait_for 'C-b a to answer'
	prefix 3
	wait_for '│ 4 typist:shell'
	tm send-keys -l 'cat >typed.txt'
	keys Enter
	# Typed only once cat reads: keys that reach the shell's line editor
	# before it gives the terminal back keep a raw \r, which cat's cooked
	# terminal takes for no end of line (a CI run lost its first Enter so).
	# The shell makes the file after it gave the terminal back.
	until_ok 10 test -e "$t/typed.txt"
	local i expect=
	for i in $(seq 40); do
		tm send-keys -l "y yes n y$i"
		keys Enter
		expect+="y yes n y$i"$'\n'
		((i % 10)) || keys y Enter
		((i % 10)) || expect+=$'y\n'
	done
	keys C-d
	until_ok 20 eval '[ "$(cat "$t/typed.txt" 2>/dev/null)" = "$(printf %s "$expect")" ]' ||
		{ diff <(printf %s "$expect") "$t/typed.txt" >&2; screen >&2; return 1; }
	touch "$a/stop"
	wait_for 'asker-done' 30
	# Nothing was answered: no clipboard, no merge; at most 4 of its questions wait.
	buffer_is before
	not git -C "$repo" merge-base --is-ancestor asker main
	wait_for '^4 questions wait: C-b a to answer'
	# Opened on purpose, one at a time, each a no.
	local merge_declined=
	for i in 1 2 3 4; do
		prefix a
		wait_for '^asker (asks to merge|sets the clipboard).*(Allow\?|allow\? \(y/n\))'
		screen | grep -q '^asker asks to merge' && merge_declined=1
		keys n
		wait_gone "^$((5 - i)) questions? waits?" 5
	done
	wait_gone 'questions? waits?'
	buffer_is before
	not git -C "$repo" merge-base --is-ancestor asker main
	# A merge asked and declined is not asked again at once.
	if [ -z "$merge_declined" ]; then
		wrx send asker "$g workrex merge; echo merge-rc=\$?"
		wait_for 'question waits: C-b a to answer - asker asks to merge'
		prefix a
		keys n
		wait_for 'merge-rc=1'
	fi
	wrx send asker "$g workrex merge 2>'$E2E_TMP/again.err'; echo merge-rc=\$?"
	until_ok 10 grep -q 'not asked again for 60 s' "$E2E_TMP/again.err"
	not git -C "$repo" merge-base --is-ancestor asker main
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
run_test "a pane's OSC 52 write sets the clipboard; a read is not answered" t_pane_sets_clipboard
run_test "clipboard.host_panes: ask waits on the status line; prefix a opens it" t_pane_clipboard_asks
run_test "an agent asking as fast as it can takes no key typed into another agent" t_questions_take_no_keys
run_test "bell marks an unfocused pane; titles show" t_bell_and_title
