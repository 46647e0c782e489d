#!/usr/bin/env bash
# Host commands (sandbox.host_commands) from inside a real podman sandbox:
# the shims on PATH, output and exit codes exactly, names that must not run,
# and what a command may do on the host (bubblewrap): no secrets, no writes
# outside the worktree, no host environment.
. "$(dirname "$0")/lib.sh"

# Home, state and the host's tools outside /tmp, which a host command does
# not see (other programs' sockets live there): so that hiding ~/.ssh is
# something the command does, not a side effect of where the test runs.
HX=$(mktemp -d /var/lib/wrx-hostexec.XXXXXX)
cp -a "$HOME" "$HX/home"
mkdir -m 700 "$HX/run"
export HOME=$HX/home XDG_CONFIG_HOME=$HX/home/.config XDG_STATE_HOME=$HX/home/.local/state
export GIT_CONFIG_GLOBAL=$HOME/.gitconfig XDG_RUNTIME_DIR=$HX/run
repo=$HX/work/proj
trap 'podman ps -aq --filter "label=workrex.project=$repo" | xargs -r podman rm -f >/dev/null 2>&1; stop; rm -rf "$HX"' EXIT

# The host's own tools, on the dashboard's PATH.
host_tools() {
	mkdir -p "$HX/bin" "$HOME/.ssh" "$HOME/.cache"
	echo PRIVATE-KEY >"$HOME/.ssh/id_ed25519"
	echo 'machine x password NETRC-SECRET' >"$HOME/.netrc"
	head -c 10485760 /dev/urandom >"$HX/big.bin"
	cat >"$HX/bin/hx-out" <<-'EOF'
		#!/bin/sh
		printf 'out-line\nsecond\n'; printf 'err-line\n' >&2; exit 7
	EOF
	cat >"$HX/bin/hx-big" <<-EOF
		#!/bin/sh
		exec cat "$HX/big.bin"
	EOF
	cat >"$HX/bin/hx-args" <<-'EOF'
		#!/bin/sh
		for a; do printf '[%s]\n' "$a"; done; pwd
	EOF
	cat >"$HX/bin/hx-probe" <<-EOF
		#!/bin/sh
		if cat "$HOME/.ssh/id_ed25519" 2>/dev/null | grep -q KEY; then echo "READABLE ssh"; else echo "hidden ssh"; fi
		if grep -q SECRET "$HOME/.netrc" 2>/dev/null; then echo "READABLE netrc"; else echo "hidden netrc"; fi
		if (echo x >"$HX/outside") 2>/dev/null; then echo "WRITABLE outside"; else echo "ro outside"; fi
		if (echo x >"$repo/planted") 2>/dev/null; then echo "WRITABLE main worktree"; else echo "ro main worktree"; fi
		if (echo x >>"\$PWD/.git") 2>/dev/null; then echo "WRITABLE .git"; else echo "ro .git"; fi
		if (echo x >"$HOME/.cache/hx") 2>/dev/null; then echo "cache writable"; else echo "CACHE RO"; fi
		echo made-by-host-command >"\$PWD/host-made.txt" && echo "worktree writable"
		if ls "$XDG_RUNTIME_DIR/workrex" 2>/dev/null | grep -q .; then echo "SEES sockets"; else echo "no sockets"; fi
		env | grep -q HOST-ENV-SECRET && echo "LEAKED env" || echo "clean env"
		read -r line && echo "STDIN \$line" || echo "stdin empty"
	EOF
	chmod +x "$HX"/bin/*
	export PATH="$HX/bin:$PATH" AWS_SECRET_ACCESS_KEY=HOST-ENV-SECRET
}

t_host_commands() {
	make_repo
	host_tools
	global_config "  enabled: true" "  host_commands: [hx-out, hx-big, hx-args, hx-probe, hx-missing, 'bad;name']"
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add box -b >/dev/null
	wait_for '^ 2 box'
	local w=$repo/../proj__worktrees/box
	w=$(cd "$w" && pwd)
	until_ok 30 eval 'podman ps --format "{{.Names}}" | grep -q "^wrx-box-"'
	long=$(printf 'a%.0s' $(seq 1 65))
	cat >"$w/probe.sh" <<-EOF
		out=$w/hx.txt
		: >\$out
		echo "shim \$(command -v hx-out)" >>\$out
		echo "login \$(bash -lc 'command -v hx-out; command -v workrex' | tr '\n' ' ')" >>\$out
		hx-out >o.txt 2>e.txt; echo "out \$?" >>\$out
		hx-big >big.out; echo "big \$?" >>\$out
		hx-args 'a b' '' "\\\$(id)" >args.txt; echo "args \$?" >>\$out
		for n in '../bin/sh' 'sh;id' '\$(id)' /bin/sh . '' $long bash 'bad;name'; do
			workrex host-exec "\$n" -c 'echo RAN >$w/ran' 2>>names.err; echo "name \$?" >>\$out
		done
		hx-missing; echo "missing \$?" >>\$out
		echo sent | hx-probe >probe.txt 2>&1; echo "probe \$?" >>\$out
		echo hx-done >>\$out
	EOF
	wrx send box "sh probe.sh"
	until_ok 60 grep -q hx-done "$w/hx.txt" || { cat "$w/hx.txt" >&2; screen >&2; return 1; }
	cat "$w/hx.txt" >&2
	grep -qx 'shim /opt/workrex/host-bin/hx-out' "$w/hx.txt"
	grep -qx 'login /opt/workrex/host-bin/hx-out /opt/workrex/bin/workrex ' "$w/hx.txt"
	# Output and status exactly, stdout and stderr apart.
	grep -qx 'out 7' "$w/hx.txt"
	printf 'out-line\nsecond\n' | cmp - "$w/o.txt"
	printf 'err-line\n' | cmp - "$w/e.txt"
	grep -qx 'big 0' "$w/hx.txt"
	cmp "$HX/big.bin" "$w/big.out"
	printf '[a b]\n[]\n[$(id)]\n%s\n' "$w" | cmp - "$w/args.txt"
	# Names that are not on the list, or no names at all: 127, nothing ran.
	[ "$(grep -c '^name 127$' "$w/hx.txt")" -eq 9 ]
	test ! -e "$w/ran"
	grep -q "'bash' is not one of sandbox.host_commands" "$w/names.err"
	grep -q "'sh;id' is not a command name" "$w/names.err"
	grep -q "'bad;name' is not a command name" "$w/names.err"
	# On the list but not on the host: 126.
	grep -qx 'missing 126' "$w/hx.txt"
	# What the command could do on the host.
	cat "$w/probe.txt" >&2
	grep -qx 'probe 0' "$w/hx.txt"
	not grep -qE 'READABLE|WRITABLE|SEES|LEAKED|STDIN|CACHE RO' "$w/probe.txt"
	[ "$(grep -cE '^(hidden|ro|clean|no sockets|stdin empty|cache writable|worktree writable)' "$w/probe.txt")" -eq 10 ]
	test ! -e "$HX/outside"
	test ! -e "$repo/planted"
	grep -qx made-by-host-command "$w/host-made.txt"
	wrx close box
}

run_test "host commands from a sandbox: shims, exact output and status, refused names, no secrets" t_host_commands
