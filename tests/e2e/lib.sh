# tests/e2e/lib.sh - drive the real workrex binary inside a real tmux.
#
# Every test gets its own tmux server (private socket), its own HOME and XDG
# directories, and a bash whose prompt is "wrx$ ". Helpers wait for text on
# the screen instead of sleeping; every wait is bounded.

: "${WORKREX:?set WORKREX to the binary under test}"
E2E_TMP=$(mktemp -d /tmp/wrx-e2e.XXXXXX)
SOCK="wrx-$$-$RANDOM"
export HOME="$E2E_TMP/home" XDG_CONFIG_HOME="$E2E_TMP/home/.config"
export XDG_STATE_HOME="$E2E_TMP/home/.local/state" XDG_RUNTIME_DIR="$E2E_TMP/run"
export LANG=C.UTF-8 LC_ALL=C.UTF-8 SHELL=/bin/bash
# Direct colour is asked for by name where a test wants it.
unset TMUX COLORTERM
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" "$E2E_TMP/work"
chmod 700 "$XDG_RUNTIME_DIR"
cat >"$HOME/.bashrc" <<'RC'
PS1='wrx$ '
unset PROMPT_COMMAND
HISTFILE=/dev/null
RC
: "${E2E_TIMEOUT:=10}"
# What a window runs after workrex: its exit status on a line of its own.
# A killed dashboard leaves the terminal raw (a newline does not return the
# carriage), so the mark could start mid-row and wrap at the margin.
after_exit='; printf "\r\nWORKREX-EXITED %s\r\n" $?; sleep 30'

tm() { tmux -L "$SOCK" -f /dev/null "$@"; }

# start W H [TERM]: workrex in a new tmux session of W x H, cwd $E2E_TMP/work.
start() {
	local w=$1 h=$2 term=${3:-tmux-256color}
	tm new-session -d -x "$w" -y "$h" -c "$E2E_TMP/work" \
		"env TERM=$term $WORKREX_ENV $WORKREX$after_exit"
	tm set -g status off
}

# ours PATTERN [VAR=VALUE]: pids of the processes pgrep -f finds whose
# environment has VAR=VALUE (default: this test's XDG_RUNTIME_DIR).
# (read by the shell itself: a fork costs 3 ms of CPU on a 2-core CI
# machine, and waits call this in loops across every machine's process.)
ours() {
	local p e mark=${2:-XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR} env
	for p in $(pgrep -f -- "$1" || true); do
		mapfile -d '' -t env 2>/dev/null <"/proc/$p/environ" || continue
		for e in "${env[@]}"; do
			[[ $e == "$mark" ]] && { echo "$p"; break; }
		done
	done
	return 0
}
# gone PID...: none of them runs (a zombie, its command line empty, counts
# as gone). Read by the shell: a wait looks every 50 ms, and a scan of every
# process (pgrep) costs the CI machine 30 to 80 ms of CPU each time.
gone() {
	local p c
	for p; do
		c=
		{ read -r -d '' c <"/proc/$p/cmdline"; } 2>/dev/null
		[ -z "$c" ] || return 1
	done
	return 0
}
# end_found TRIES PATTERN [VAR=VALUE]: those of ours (PATTERN) TERMed; waited
# for, TRIES times 50 ms; then the ones still found (the scan again: a pid
# may have been reused meanwhile) KILLed.
end_found() {
	local tries=$1 i=0 left
	shift
	left=$(ours "$@")
	[ -n "$left" ] || return 0
	kill $left 2>/dev/null
	while ! gone $left && ((i++ < tries)); do snooze 0.05; done
	left=$(ours "$@")
	[ -n "$left" ] && kill -9 $left 2>/dev/null
	return 0
}
# end_ours PATTERN [VAR=VALUE]: end those (TERM, then KILL after 2 s) and wait until they went.
end_ours() { end_found 40 "$@"; }
# keepers [VAR=VALUE]: the pids of this test's keepers (started under its
# XDG_RUNTIME_DIR), or of those whose environment has VAR=VALUE.
keepers() { ours '__keeper$' "${1:-}"; }
# nkeepers N [VAR=VALUE]: exactly N of them run now (for until_ok).
nkeepers() {
	local -a k
	mapfile -t k < <(keepers "${2:-}")
	[ "${#k[@]}" -eq "$1" ]
}
# end_keepers [VAR=VALUE]: end them (TERM, then KILL after 5 s: a killed
# tmux only detaches workrex) and wait until they went.
end_keepers() { end_found 100 '__keeper$' "${1:-}"; }

# kill_tmux: end this test's tmux (its workrex detaches) and wait until its socket is gone.
kill_tmux() {
	local i=0
	tm kill-server 2>/dev/null || true
	while tm has-session 2>/dev/null && ((i < 100)); do
		snooze 0.05
		i=$((i + 1))
	done
	rm -f "/tmp/tmux-$(id -u)/$SOCK"
}
# kill_server: end this test's tmux and its keepers.
kill_server() {
	kill_tmux
	end_keepers
}

# A git repository to run agents in: make_repo creates $repo afresh (and
# forgets any global workrex config), start_repo [W H] starts workrex in it.
repo=$E2E_TMP/work/proj
git_env() {
	export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
	export GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@example.com
}
make_repo() {
	rm -rf "$E2E_TMP/work"/proj* "$XDG_CONFIG_HOME/workrex"
	# A new project at the old path: not the old one's chosen view (layout, sidebar).
	rm -f "$XDG_STATE_HOME"/workrex/sandbox/git-*/view
	mkdir -p "$repo"
	git -C "$repo" init -q -b main
	echo one >"$repo/a.txt"
	git -C "$repo" add a.txt
	git -C "$repo" commit -qm init
}
# make_workspace: make_repo's proj and a repository web beside it ($web),
# named by a workspace file beside them (add --repos); agents are bash.
make_workspace() {
	make_repo
	web=$E2E_TMP/work/web
	rm -rf "$web" "$E2E_TMP/work/web__worktrees"
	git init -q -b main "$web"
	echo base >"$web/c.txt"
	git -C "$web" add c.txt
	git -C "$web" commit -qm 'web: base'
	printf 'repos: [proj, web]\n' >"$E2E_TMP/work/.workrex-workspace.yaml"
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
}

start_repo() {
	tm new-session -d -x "${1:-120}" -y "${2:-36}" -c "$repo" \
		"env TERM=tmux-256color PATH='$PATH' $WORKREX$after_exit"
	tm set -g status off
}
wrx() { (cd "$repo" && "$WORKREX" "$@"); }

screen() { tm capture-pane -p "$@"; }

# nap N: sleep N ms, and make N the next wait's: half as long again, up to
# 200 ms. Waits look early and often at first, then back off, so that many
# tests side by side (make test) do not spend the machine on looking.
# A look forks nothing it need not: on the CI machine a fork costs about
# 3 ms of CPU and a tmux client 8, and a dozen files wait at once. So the
# clock is $EPOCHREALTIME (a $(...) would fork), the sleep a read that
# times out on a pipe nobody writes (opened for the read alone, so that
# nothing started inherits it), and the screen is matched by the shell.
mkfifo "$E2E_TMP/.nap"
snooze() {
	local fd
	exec {fd}<>"$E2E_TMP/.nap"
	read -r -t "$1" -u "$fd" _ || :
	exec {fd}>&-
}
nap() {
	local ms=${!1} secs
	printf -v secs %d.%03d $((ms / 1000)) $((ms % 1000))
	snooze "$secs"
	ms=$((ms * 3 / 2))
	((ms <= 200)) || ms=200
	printf -v "$1" %d "$ms"
}

# on_screen REGEX: a line of the screen matches REGEX (grep -E's syntax:
# the shell's [[ =~ ]] is the same POSIX extended regex), one tmux client.
on_screen() {
	local l lines
	mapfile -t lines < <(screen)
	for l in "${lines[@]}"; do
		[[ $l =~ $1 ]] && return 0
	done
	return 1
}

# screen_until yes|no REGEX SECONDS: until the screen does (or no longer
# does) match, else show it and fail.
screen_until() {
	local want=$1 re=$2 limit=$3 wait_ms=20 end rc=0
	[[ '' =~ $re ]] || rc=$?
	((rc != 2)) || { echo "not a regex: $re" >&2; return 1; }
	end=$((${EPOCHREALTIME/./} + limit * 1000000))
	while :; do
		if on_screen "$re"; then
			[ "$want" = yes ] && return 0
		else
			[ "$want" = no ] && return 0
		fi
		((${EPOCHREALTIME/./} < end)) || break
		nap wait_ms
	done
	local what f=1
	what="waited ${limit}s for the screen to $([ "$want" = yes ] || echo 'stop ')match: $re"
	# The test's own line, for a log read from its end.
	while [[ ${BASH_SOURCE[f]:-} == */lib.sh ]]; do f=$((f + 1)); done
	what+=" (${BASH_SOURCE[f]##*/}:${BASH_LINENO[f - 1]})"
	echo "--- $what" >&2
	screen >&2
	echo "--- that was: $what" >&2
	return 1
}

# wait_for REGEX [SECONDS]: until the screen matches (grep -E).
wait_for() { screen_until yes "$1" "${2:-$E2E_TIMEOUT}"; }
# wait_gone REGEX [SECONDS]: until the screen no longer matches.
wait_gone() { screen_until no "$1" "${2:-$E2E_TIMEOUT}"; }

keys() { tm send-keys "$@"; }
# until_ok SECONDS CMD...: until CMD succeeds, at most SECONDS (whole).
until_ok() {
	local limit=$1 wait_ms=20 end
	shift
	end=$((${EPOCHREALTIME/./} + limit * 1000000))
	while ! "$@" 2>/dev/null; do
		((${EPOCHREALTIME/./} < end)) || return 1
		nap wait_ms
	done
}

# in_output GREP_ARGS... -- CMD...: CMD's output, read afresh at each
# call, matches. For until_ok: a <(CMD) there is read only once.
in_output() {
	local args=() out
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	out=$("$@" 2>/dev/null) || true
	grep -q "${args[@]}" <<<"$out"
}

# not CMD...: succeeds when CMD fails (a bare `! cmd` never fails a test).
not() { if "$@"; then return 1; fi; }
type_line() { tm send-keys -l -- "$1"; tm send-keys Enter; }
prefix() { tm send-keys C-b "$@"; }

# The newest dashboard of this test: not a child of one between its fork and its exec,
# which has the same command line for a moment (a test once read such a
# child's /proc as it went).
workrex_pid() {
	local all p
	all=$(ours '^([^ ]*/)?workrex$')
	for p in $all; do
		grep -qx "$(ps -o ppid= -p "$p" | tr -d ' ')" <<<"$all" || echo "$p"
	done | tail -1
}

stop() {
	tm kill-server 2>/dev/null
	stop_sshd
	end_keepers
	rm -rf "$E2E_TMP"
}

# Test bookkeeping: run_test NAME FUNCTION
PASSED=0
FAILED=0
# The function runs in a subshell with errexit; it must not run inside an
# `if` (bash ignores errexit there), so every failing step fails the test.
# E2E_ONLY=GLOB runs only the tests whose function matches (t_detach, t_*kill*).
run_test() {
	local name=$1 fn=$2 rc
	[[ -z ${E2E_ONLY:-} || $fn == $E2E_ONLY ]] || return 0
	(
		set -eE
		# Say which command failed: a CI log is all there may be to go on.
		trap 'echo "  failed: ${BASH_SOURCE[0]##*/}:$LINENO: $BASH_COMMAND" >&2' ERR
		"$fn"
	)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "ok - $name"
		PASSED=$((PASSED + 1))
	else
		# A test killed says nothing of its own (twice, in CI): its status says it.
		((rc <= 128)) || echo "  the test's shell was killed: signal $((rc - 128))" >&2
		echo "not ok - $name"
		FAILED=$((FAILED + 1))
	fi
	kill_server
}

# An X server of our own (Xvfb) and its clipboard (xclip), for image paste.
need_x() {
	local tool
	for tool in Xvfb xclip; do
		command -v "$tool" >/dev/null || { echo "not ok - $tool is required but not installed"; exit 1; }
	done
}
# start_x: Xvfb on a free display, DISPLAY exported; stop_x ends it and
# its clipboard's owners (a test runs in a subshell: the pid is in a file).
# Xvfb picks the display itself (-displayfd) and says which: two test files
# started at once never share one, nor each other's clipboard.
start_x() {
	local f="$E2E_TMP/x.display"
	rm -f "$f"
	Xvfb -displayfd 3 -nolisten tcp -screen 0 320x240x24 3>"$f" >/dev/null 2>&1 &
	echo $! >>"$E2E_TMP/x.pids"
	until_ok 10 test -s "$f"
	export DISPLAY=":$(tr -d '\n' <"$f")"
	until_ok 10 test -S "/tmp/.X11-unix/X${DISPLAY#:}"
}
stop_x() {
	[ -f "$E2E_TMP/x.pids" ] || return 0
	end_ours "^xclip -selection clipboard" "DISPLAY=$DISPLAY"
	kill $(cat "$E2E_TMP/x.pids") 2>/dev/null
	rm -f "$E2E_TMP/x.pids"
	return 0
}
# clip FILE TYPE: the clipboard holds FILE as TYPE (xclip stays, on no pipe of ours, to serve it).
clip() { xclip -selection clipboard -t "$2" -i "$1" >/dev/null 2>&1; }
# staged_one WORKTREE IMAGE: one pasted image under WORKTREE, IMAGE's
# bytes, mode 0600; its path in $staged.
staged_one() {
	staged=$(ls "$1"/.workrex/tmp/clipboard-*.png)
	[ "$(echo "$staged" | wc -l)" -eq 1 ] || return 1
	cmp "$2" "$staged" || return 1
	[ "$(stat -c %a "$staged")" = 600 ]
}

# A real sshd of the test's own on a free loopback port, with keys made for
# it: start_sshd exports SSH_PORT; on_ssh CMD... runs CMD there as this
# user; stop_sshd ends it and every connection it serves (stop does too);
# run_sshd starts it again, on the same port with the same keys. Lines in
# SSHD_EXTRA go into its config (SetEnv: the "server" user's environment).
start_sshd() {
	local d="$E2E_TMP/sshd"
	command -v /usr/sbin/sshd >/dev/null || { echo "not ok - sshd (openssh-server) is required but not installed"; return 1; }
	stop_sshd
	rm -rf "$d"
	mkdir -p "$d" /run/sshd
	ssh-keygen -q -t ed25519 -N '' -f "$d/host_key"
	ssh-keygen -q -t ed25519 -N '' -f "$d/user_key"
	cp "$d/user_key.pub" "$d/authorized_keys"
	SSH_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export SSH_PORT
	cat >"$d/sshd_config" <<-CONF
		Port $SSH_PORT
		ListenAddress 127.0.0.1
		HostKey $d/host_key
		AuthorizedKeysFile $d/authorized_keys
		PidFile $d/sshd.pid
		StrictModes no
		UsePAM no
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		PermitRootLogin prohibit-password
		${SSHD_EXTRA:-}
	CONF
	run_sshd
}
run_sshd() {
	local d="$E2E_TMP/sshd"
	/usr/sbin/sshd -f "$d/sshd_config" -E "$d/log"
	until_ok 10 test -s "$d/sshd.pid"
	until_ok 10 on_ssh true
}
# ssh_alias NAME: ssh (first on PATH) reaches the test's sshd as NAME, as a
# user's ~/.ssh/config would say it.
ssh_alias() {
	cat >"$E2E_TMP/ssh_config" <<-EOF
		Host $1
		  HostName 127.0.0.1
		  Port $SSH_PORT
		  User $(id -un)
		  IdentityFile $E2E_TMP/sshd/user_key
		  StrictHostKeyChecking no
		  UserKnownHostsFile /dev/null
		  LogLevel ERROR
	EOF
	mkdir -p "$E2E_TMP/bin"
	printf '#!/bin/sh\nexec /usr/bin/ssh -F %s "$@"\n' "$E2E_TMP/ssh_config" >"$E2E_TMP/bin/ssh"
	chmod +x "$E2E_TMP/bin/ssh"
	case :$PATH: in *:$E2E_TMP/bin:*) ;; *) export PATH="$E2E_TMP/bin:$PATH" ;; esac
}
# ssh_cmd: the ssh command line (options and all) that reaches it, as one string.
ssh_cmd() {
	printf 'ssh -p %s -i %s -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null' \
		"$SSH_PORT" "$E2E_TMP/sshd/user_key"
	printf ' -o LogLevel=ERROR -o BatchMode=yes -o ConnectTimeout=5 %s@127.0.0.1' "$(id -un)"
}
on_ssh() { $(ssh_cmd) "$@"; }
stop_sshd() {
	local f="$E2E_TMP/sshd/sshd.pid" p i=0
	[ -s "$f" ] || return 0
	p=$(cat "$f")
	pkill -P "$p" 2>/dev/null || true
	kill "$p" 2>/dev/null || true
	while kill -0 "$p" 2>/dev/null && ((i < 100)); do
		snooze 0.05
		i=$((i + 1))
	done
	rm -f "$f"
	return 0
}
