#!/usr/bin/env bash
# Image paste with a real X server (Xvfb) and clipboard (xclip): prefix p,
# an empty bracketed paste from the outer terminal, the CLI; text on the
# clipboard, a clipboard tool that answers text, no clipboard at all.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
need_x
trap 'stop_x; stop' EXIT

git_env

t_image_paste() {
	make_repo
	start_x
	"$here/make_png.py" "$E2E_TMP/one.png" 3000
	"$here/make_png.py" "$E2E_TMP/two.png" 9000
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: %s\npanes:\n  - command: <agent>\n' "$here/show_input.py" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 200 30
	wait_for 'C-b \? help'
	wrx add img >/dev/null
	wait_for '│show-input ready'
	prefix z
	local w
	w=$(wrx path img)
	# prefix p: the image as a file under the worktree, its path bracketed.
	clip "$E2E_TMP/one.png" image/png
	prefix p
	wait_for '│GOT\[\\x1b\[200~/.*/\.workrex/tmp/clipboard-[0-9-]+\.png\\x1b\[201~\]'
	local f
	staged_one "$w" "$E2E_TMP/one.png"
	[ "$(cat "$w/.workrex/tmp/.gitignore")" = '*' ]
	screen | grep -qF "$staged"
	test -z "$(git -C "$w" status --porcelain)"
	# The terminal's empty paste (a clipboard that holds only an image).
	clip "$E2E_TMP/two.png" image/png
	tm send-keys -H 1b 5b 32 30 30 7e 1b 5b 32 30 31 7e
	until_ok 10 eval '[ "$(ls "$w"/.workrex/tmp/clipboard-*.png | wc -l)" -eq 2 ]'
	f=$(ls -t "$w"/.workrex/tmp/clipboard-*.png | head -1)
	cmp "$E2E_TMP/two.png" "$f"
	wait_for "│GOT\[.x1b\[200~$f.x1b\[201~\]"
	# Text on the clipboard: said, nothing pasted; an empty paste then goes on as it came.
	printf 'just text' | xclip -selection clipboard >/dev/null 2>&1
	local before
	before=$(screen | grep -c '│GOT')
	prefix p
	wait_for 'paste-image: no image on the clipboard'
	tm send-keys -H 1b 5b 32 30 30 7e 1b 5b 32 30 31 7e
	wait_for '│GOT\[\\x1b\[200~\\x1b\[201~\]'
	[ "$(screen | grep -c '│GOT')" -eq $((before + 1)) ]
	# The CLI, with the dashboard: the path printed, and pasted.
	clip "$E2E_TMP/one.png" image/png
	wrx paste-image img >"$E2E_TMP/out"
	grep -qE '/\.workrex/tmp/clipboard-[0-9-]+\.png$' "$E2E_TMP/out"
	cmp "$E2E_TMP/one.png" "$(cat "$E2E_TMP/out")"
	# A clipboard tool that says image and gives text (some bridges do): refused.
	mkdir -p "$E2E_TMP/fake"
	cat >"$E2E_TMP/fake/xclip" <<-'EOF'
		#!/bin/sh
		case "$*" in *TARGETS*) printf 'TARGETS\nimage/png\n' ;; *) printf 'not an image at all' ;; esac
	EOF
	chmod +x "$E2E_TMP/fake/xclip"
	prefix d
	wait_for 'WORKREX-EXITED'
	(cd "$repo" && not env PATH="$E2E_TMP/fake:$PATH" "$WORKREX" paste-image img 2>"$E2E_TMP/err")
	grep -q 'not an image' "$E2E_TMP/err"
	# No clipboard at all: said.
	(cd "$repo" && not env -u DISPLAY "$WORKREX" paste-image img 2>"$E2E_TMP/err")
	grep -q 'neither WAYLAND_DISPLAY nor DISPLAY' "$E2E_TMP/err"
	[ "$(ls "$w"/.workrex/tmp/clipboard-*.png | wc -l)" -eq 3 ]
}

# start_over_ssh CLIP: the dashboard of $repo over a real ssh (loopback
# sshd), its terminal one that speaks kitty's clipboard protocol (OSC 5522)
# with CLIP its clipboard (kitty_terminal.py), in tmux.
start_over_ssh() {
	local env="HOME=$HOME XDG_CONFIG_HOME=$XDG_CONFIG_HOME XDG_STATE_HOME=$XDG_STATE_HOME"
	env="$env XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR LANG=C.UTF-8 LC_ALL=C.UTF-8 SHELL=/bin/bash"
	env="$env TERM=tmux-256color PATH=$PATH"
	rm -f "$E2E_TMP/requests"
	tm new-session -d -x 200 -y 30 -c "$repo" \
		"python3 $here/kitty_terminal.py $E2E_TMP/requests $1 $(ssh_cmd) -tt 'cd $repo && env $env $WORKREX'$after_exit"
	tm set -g status off
}

# Over SSH the clipboard is the terminal's: asked through OSC 5522, on the
# dashboard's own tty; chunked data, text, a refusal, no such terminal.
t_image_paste_over_ssh() {
	make_repo
	start_sshd
	"$here/make_png.py" "$E2E_TMP/one.png" 3000
	"$here/make_png.py" "$E2E_TMP/big.png" 2000000
	cp "$E2E_TMP/one.png" "$E2E_TMP/clip"
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: %s\npanes:\n  - command: <agent>\n' "$here/show_input.py" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_over_ssh "$E2E_TMP/clip"
	wait_for 'C-b \? help' 20
	until_ok 10 grep -qx decrqm "$E2E_TMP/requests"
	wrx add img >/dev/null
	wait_for '│show-input ready'
	prefix z
	local w f
	w=$(wrx path img)
	prefix p
	wait_for '│GOT\[\\x1b\[200~/.*/\.workrex/tmp/clipboard-[0-9-]+\.png\\x1b\[201~\]'
	f=$(ls "$w"/.workrex/tmp/clipboard-*.png)
	cmp "$E2E_TMP/one.png" "$f"
	grep -qx 'read image/png image/jpeg image/webp image/gif' "$E2E_TMP/requests"
	# 2 MB in 4 KiB packets, asked by the terminal's empty paste.
	cp "$E2E_TMP/big.png" "$E2E_TMP/clip"
	tm send-keys -H 1b 5b 32 30 30 7e 1b 5b 32 30 31 7e
	until_ok 20 eval '[ "$(ls "$w"/.workrex/tmp/clipboard-*.png | wc -l)" -eq 2 ]'
	f=$(ls -t "$w"/.workrex/tmp/clipboard-*.png | head -1)
	cmp "$E2E_TMP/big.png" "$f"
	wait_for "│GOT\[.x1b\[200~$f.x1b\[201~\]"
	# Text only, and the user's refusal: said, nothing pasted.
	printf 'text:hello' >"$E2E_TMP/clip"
	prefix p
	wait_for "paste-image: no image on the terminal's clipboard"
	printf eperm >"$E2E_TMP/clip"
	prefix p
	wait_for 'paste-image: the terminal refused to read its clipboard \(EPERM\)'
	[ "$(ls "$w"/.workrex/tmp/clipboard-*.png | wc -l)" -eq 2 ]
	# Keys typed while it reads still reach the pane.
	cp "$E2E_TMP/one.png" "$E2E_TMP/clip"
	prefix p
	tm send-keys -l 'typed'
	wait_for 'GOT\[.*typed'
}

# A terminal without the protocol, over SSH with no display: said why.
t_image_paste_over_ssh_no_protocol() {
	make_repo
	start_sshd
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: %s\npanes:\n  - command: <agent>\n' "$here/show_input.py" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_over_ssh none
	wait_for 'C-b \? help' 20
	until_ok 10 grep -qx decrqm "$E2E_TMP/requests"
	wrx add img >/dev/null
	wait_for '│show-input ready'
	prefix p
	wait_for 'terminal does not offer its clipboard \(OSC 5522\)'
	not grep -q '^read' "$E2E_TMP/requests"
}

run_test "image paste: prefix p, the terminal's empty paste, the CLI; text and no clipboard refused" t_image_paste
run_test "image paste over SSH: the terminal's clipboard (OSC 5522)" t_image_paste_over_ssh
run_test "image paste over SSH, a terminal without OSC 5522: said" t_image_paste_over_ssh_no_protocol
