#!/usr/bin/env bash
# Abuse: floods, garbage, programs that exit or crash at once, extreme
# terminal sizes, broken configuration. The dashboard must stay up and
# keep every other pane usable.
. "$(dirname "$0")/lib.sh"
trap stop EXIT

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
here=$(cd "$(dirname "$0")" && pwd)

t_flood_does_not_starve() {
	start 120 40
	wait_for 'wrx\$'
	type_line 'timeout 12 yes flood-flood-flood'
	wait_for 'flood-flood'
	prefix c
	wait_for '^ +2 bash'
	pid=$(workrex_pid)
	max=0
	for i in 1 2 3; do
		type_line "echo marker-$i-\$((7*6))"
		# Generous liveness bound; the latency itself is measured by make bench.
		wait_for "│marker-$i-42 *(│|$)" 10
		r=$(rss_kb "$pid")
		((r > max)) && max=$r
		sleep 1
	done
	sleep 3
	r=$(rss_kb "$pid")
	((r > max)) && max=$r
	echo "# flood: max RSS ${max} kB" >&2
	# 10000 lines of history and the screens: far below this.
	((max < 200000))
	kill -0 "$pid"
}

t_random_bytes_flood() {
	start 120 40
	wait_for 'wrx\$'
	prefix c
	wait_for '^ +2 bash'
	prefix o
	# Raw random bytes: every escape sequence libvterm knows, and junk.
	type_line 'head -c 3000000 /dev/urandom; printf "\033c"; echo random-done'
	prefix o
	type_line 'echo alive-$((6*7))'
	wait_for '│alive-42 *(│|$)' 20
	pid=$(workrex_pid)
	kill -0 "$pid"
}

t_base64_flood_for_ten_seconds() {
	start 120 40
	wait_for 'wrx\$'
	type_line 'timeout 10 sh -c "cat /dev/urandom | base64"; echo flood-over'
	prefix c
	wait_for '^ +2 bash'
	type_line 'echo typed-$((6*7))'
	wait_for '│typed-42 *(│|$)' 10
	wait_for 'flood-over' 30
	kill -0 "$(workrex_pid)"
}

t_child_exits_at_once() {
	start 100 30
	wait_for 'wrx\$'
	type_line 'exec true'
	wait_for '\[exited 0\]'
	prefix c
	wait_for '^ +2 bash'
	type_line 'kill -SEGV $$'
	wait_for '\[killed by signal 11\]'
	# An exited pane closes without asking.
	prefix x
	wait_gone 'killed by signal'
	prefix x
	wait_for 'no panes'
	prefix c
	wait_for 'wrx\$'
}

t_shell_that_cannot_start() {
	WORKREX_ENV="SHELL=/nonexistent/shell" start 100 30
	wait_for 'cannot run /nonexistent/shell'
	wait_for '\[exited 127\]'
	kill -0 "$(workrex_pid)"
}

t_one_by_one_terminal() {
	start 1 1
	sleep 1
	pid=$(workrex_pid)
	kill -0 "$pid"
	tm resize-window -x 2 -y 2
	sleep 0.3
	tm resize-window -x 100 -y 30
	wait_for 'wrx\$'
	type_line 'stty size'
	wait_for '│28 75 *(│|$)'
}

t_huge_terminal() {
	start 500 200
	wait_for 'wrx\$'
	type_line 'stty size'
	wait_for '│198 475 *(│|$)'
	prefix c
	prefix c
	prefix Space
	wait_for '\[grid\]'
	kill -0 "$(workrex_pid)"
}

# A program sets a scroll region and saves the cursor low on a tall pane;
# the pane shrinks under it; then it scrolls, restores and prints in insert
# mode. libvterm 0.1.4 kept the region and the cursor beyond the smaller
# screen and wrote past its arrays (the dashboard crashed).
t_shrink_under_a_scroll_region() {
	start 100 40
	wait_for 'wrx\$'
	type_line "printf '\\033[20;38r\\033[37;1H\\0337'; sleep 1; printf '\\033[14T\\033[4h\\0338status\\033[3L\\r\\n'; echo shrink-\$((6*7))"
	sleep 0.3
	tm resize-window -x 100 -y 12
	wait_for '│shrink-42 *(│|$)'
	kill -0 "$(workrex_pid)"
	type_line 'stty size'
	wait_for '│10 75 *(│|$)'
}

t_invalid_utf8() {
	start 100 30
	wait_for 'wrx\$'
	type_line "printf '\\xff\\xfe\\xc3\\x28\\xe2\\x82\\xf0\\x9f\\x98\\xed\\xa0\\x80\\xc0\\xaf|\\n'; echo utf8-$((6*7))"
	wait_for '│utf8-42 *(│|$)'
	kill -0 "$(workrex_pid)"
}

# Escape sequences with intermediates before '[' or a string introducer:
# libvterm 0.1.4 read ESC ! [ 5 b as a bare REP and looped forever (the
# whole dashboard at 100 % CPU, deaf to SIGTERM). Each is printed, then the
# pane must still echo, and SIGTERM still end the dashboard.
t_intermediates_do_not_freeze() {
	start 100 30
	wait_for 'wrx\$'
	type_line "printf '\\033![5b\\033 [3b\\033#]0;t\\007\\033\"P1\\033\\\\'; echo after-them"
	wait_for '│5b3b0;t1after-them *(│|$)' 5
	type_line 'echo still-alive'
	wait_for '│still-alive *(│|$)' 5
	kill -TERM "$(workrex_pid)"
	wait_for 'WORKREX-EXITED' 5
}

t_bad_config_is_a_clear_error() {
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'scrollback: 10\nkeys: [\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start 120 30
	wait_for 'WORKREX-EXITED 1'
	screen | grep -qE 'workrex: .*/workrex/config.yaml:[0-9]+:[0-9]+: '
	rm "$XDG_CONFIG_HOME/workrex/config.yaml"
}

# broken FILE LIST_SAYS RM_SAYS: an agent made, then FILE broken: list,
# status and rm go on, saying so on stderr; what needs it (add) refuses.
broken() {
	git_env
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add -b one >/dev/null
	printf 'scrollback: 10\nkeys: [\n' >"$1"
	wrx list 2>"$E2E_TMP/err" | grep -q '^one '
	grep -q "${1##*/}:3:1: .*; list goes on $2" "$E2E_TMP/err"
	wrx status >/dev/null 2>&1
	wrx rm one 2>"$E2E_TMP/err" | grep -qx 'removed one'
	grep -q "remove goes on $3" "$E2E_TMP/err"
	not wrx add two 2>"$E2E_TMP/err"
	grep -q "add: .*${1##*/}:3:1: " "$E2E_TMP/err"
}

# A project's file that does not load: the global file alone.
t_bad_project_config_locks_nobody_out() {
	broken "$repo/.workrex.yaml" "without the project's config" \
		"without the project's config (no pre_remove of it runs)"
	rm -rf "$XDG_CONFIG_HOME/workrex" "$repo/.workrex.yaml"
}

# The global file broken (issue 46 item 9): the built-in defaults.
t_bad_global_config_locks_nobody_out() {
	broken "$XDG_CONFIG_HOME/workrex/config.yaml" "with the built-in defaults" \
		"with the built-in defaults .* (no pre_remove runs)"
	wrx shutdown -y >/dev/null 2>&1
	rm -rf "$XDG_CONFIG_HOME/workrex"
}

t_unknown_key_is_a_warning() {
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'scrollback: 10\nfrobnicate: 1\nkeys:\n  prefix: C-a\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start 120 30
	wait_for "config.yaml:2: unknown key 'frobnicate'"
	wait_for 'C-a \? help'
	# The rebound prefix works and C-b goes to the program.
	keys C-a c
	wait_for '^ +2 bash'
	rm "$XDG_CONFIG_HOME/workrex/config.yaml"
}

t_terminal_hangup_detaches() {
	start 100 30
	wait_for 'wrx\$'
	# A background job in each of six panes.
	type_line 'sleep 1000 &'
	for i in 2 3 4 5 6; do
		prefix c
		wait_for "^ +$i bash"
		wait_for '│wrx\$ *(│|$)'
		type_line 'sleep 1000 &'
	done
	for _ in $(seq 50); do
		[ "$(ours '^sleep 1000$' | wc -l)" -ge 6 ] && break
		sleep 0.1
	done
	wait_for '^ +6 bash'
	pid=$(workrex_pid)
	# A closed terminal is a detach: the dashboard goes, its programs stay.
	kill -HUP "$pid"
	wait_for 'WORKREX-EXITED 0'
	sleep 0.5
	[ "$(ours '^sleep 1000$' | wc -l)" -ge 6 ]
	[ "$(keepers | wc -l)" -eq 6 ]
	# The next dashboard has all six; quitting it ends them, and the
	# hang-up reaches every job (bash passes it on).
	kill_tmux
	start 100 30
	wait_for '^ +6 bash'
	prefix q
	wait_for 'quit and end 6 running programs'
	keys y
	wait_for 'WORKREX-EXITED 0'
	for _ in $(seq 100); do
		[ -n "$(ours '^sleep 1000$')" ] || { [ -z "$(keepers)" ]; return; }
		sleep 0.1
	done
	echo "--- sleep 1000 outlived the quit:" >&2
	ps -o pid,ppid,pgid,sid,stat,etime,cmd -p "$(ours '^sleep 1000$' | paste -sd,)" >&2
	end_ours '^sleep 1000$'
	false
}

# The outer terminal stops reading for 3 s while a pane floods (slow_terminal.py).
t_slow_terminal() {
	git_env
	make_repo
	python3 "$here/slow_terminal.py" "$WORKREX" "$repo"
}

run_test "a flooding pane does not starve another; memory bounded" t_flood_does_not_starve
run_test "random bytes flood a pane; the dashboard survives" t_random_bytes_flood
run_test "base64 of /dev/urandom for 10 s" t_base64_flood_for_ten_seconds
run_test "a child that exits at once or crashes" t_child_exits_at_once
run_test "a shell that cannot start" t_shell_that_cannot_start
run_test "1x1 terminal, then grown" t_one_by_one_terminal
run_test "500x200 terminal" t_huge_terminal
run_test "a pane shrinks under a scroll region and a saved cursor" t_shrink_under_a_scroll_region
run_test "invalid UTF-8" t_invalid_utf8
run_test "escape intermediates before [ or a string introducer do not freeze it" t_intermediates_do_not_freeze
run_test "malformed config is a clear error" t_bad_config_is_a_clear_error
run_test "a broken project config locks nobody out of list, status, rm" t_bad_project_config_locks_nobody_out
run_test "a broken global config locks nobody out of list, status, rm, shutdown; add refuses" t_bad_global_config_locks_nobody_out
run_test "unknown config key is a warning; prefix rebinds" t_unknown_key_is_a_warning
run_test "SIGHUP detaches; the next dashboard has the programs; quit ends them" t_terminal_hangup_detaches
run_test "a terminal that stops reading: the dashboard waits, nothing lost" t_slow_terminal
