#!/usr/bin/env bash
# The container sandbox with real podman: what a sandboxed agent can and
# cannot see or write, status over the bridge, containers going with their
# panes and after a dashboard was killed, refusals, and a project config
# that tries to widen its own sandbox.
. "$(dirname "$0")/lib.sh"

# Host secrets the sandbox must not see.
plant_secrets() {
	mkdir -p "$HOME/.ssh" "$HOME/.aws" "$HOME/.gnupg" "$HOME/.config/gh"
	echo PRIVATE-KEY >"$HOME/.ssh/id_ed25519"
	echo AWS-SECRET >"$HOME/.aws/credentials"
	echo GPG-SECRET >"$HOME/.gnupg/x"
	echo GH-TOKEN >"$HOME/.config/gh/hosts.yml"
	echo 'curl -H "token: HISTORY-SECRET"' >"$HOME/.bash_history"
}

# containers [FILTER...]: the project's containers, stopped ones too.
containers() { podman_names --filter "label=workrex.project=$repo" "$@"; }

t_sandboxed_agent_sees_only_its_work() {
	make_repo
	plant_secrets
	global_config "  enabled: true" "  container:" "    excluded_files: [secret.env]"
	echo DB_PASSWORD=hunter2 >"$repo/secret.env"
	# A project trying to widen its own sandbox: ignored, with warnings.
	cat >"$repo/.workrex.yaml" <<-YAML
		sandbox:
		  extra_mounts: [/]
		  host_commands: [bash]
		  enabled: false
	YAML
	git -C "$repo" add .workrex.yaml
	git -C "$repo" commit -qm "a project config"
	wrx config check >"$E2E_TMP/check.out" 2>&1 || true
	grep -q "'sandbox.extra_mounts' may only be set in the global config; ignored" "$E2E_TMP/check.out"
	grep -q "'sandbox.host_commands' may only be set in the global config; ignored" "$E2E_TMP/check.out"
	grep -q "cannot turn off the global sandbox" "$E2E_TMP/check.out"
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add box -b >/dev/null
	wait_for '^ 2 box'
	local w=$repo/../proj__worktrees/box g=$repo/.git
	w=$(cd "$w" && pwd)
	echo DB_PASSWORD=hunter2 >"$w/secret.env"
	wrx close box
	wrx open box
	until_ok 30 eval 'containers | grep -q "^wrx-box-"'
	cat >"$w/probe.sh" <<-EOF
		out=$w/result.txt
		: >\$out
		for f in $HOME/.ssh/id_ed25519 $HOME/.aws/credentials $HOME/.gnupg/x $HOME/.config/gh/hosts.yml $HOME/.bash_history ~/.ssh/id_ed25519 $w/secret.env $repo/secret.env; do
			if grep -q . "\$f" 2>/dev/null; then echo "READABLE \$f"; else echo "hidden \$f"; fi
		done >>\$out
		echo "made inside" >made-inside.txt && echo wrote-worktree >>\$out
		git add made-inside.txt && git commit -qm "from the sandbox" && echo commit-ok >>\$out
		for t in $g/config $g/hooks/x $w/.git $repo/planted $g/worktrees/box/gitdir; do
			if (echo x >>"\$t") 2>/dev/null; then echo "WRITABLE \$t"; else echo "ro \$t"; fi
		done >>\$out
		# Its own git config is its own (the host never reads it); the host's is not.
		if git config --file $g/config core.hooksPath /tmp/evil 2>/dev/null; then echo "WRITABLE git config"; else echo "ro git config"; fi >>\$out
		echo 'pre_merge: ["touch $E2E_TMP/planted-hook-ran"]' >$w/.workrex.yaml
		workrex --version >>\$out
		workrex set-status waiting && echo status-ok >>\$out
		echo probe-done >>\$out
	EOF
	wrx send box "sh probe.sh"
	until_ok 30 grep -q probe-done "$w/result.txt" || { cat "$w/result.txt" >&2; screen >&2; return 1; }
	cat "$w/result.txt" >"$E2E_TMP/result"
	not grep -q READABLE "$E2E_TMP/result"
	[ "$(grep -c '^hidden ' "$E2E_TMP/result")" -eq 8 ]
	grep -q wrote-worktree "$E2E_TMP/result"
	test "$(cat "$w/made-inside.txt")" = "made inside"
	grep -q commit-ok "$E2E_TMP/result"
	# The commit lives in the agent's private git dir until the host imports it.
	[ "$(git -C "$repo" log -1 --format=%s box)" = 'a project config' ]
	wrx list | grep -qE '^box +box .* 1$'
	git -C "$repo" log -1 --format='%s|%an|%ae' box | grep -qx 'from the sandbox|Host User|host@example.com'
	test -z "$(git -C "$w" status --porcelain -- made-inside.txt)"
	not grep -q WRITABLE "$E2E_TMP/result"
	[ "$(grep -c '^ro ' "$E2E_TMP/result")" -eq 6 ]
	grep -q 'sandbox client' "$E2E_TMP/result"
	grep -q status-ok "$E2E_TMP/result"
	test ! -e "$repo/planted"
	not grep -q evil "$g/config"
	# The project config it wrote in its worktree is not the project's: workrex
	# run from inside that worktree reads the main worktree's.
	(cd "$w" && "$WORKREX" config path) | grep -qx "project: $repo/.workrex.yaml"
	(cd "$w" && "$WORKREX" config check 2>/dev/null) | not grep -q planted-hook-ran
	# The host saw the status; the agent is marked as sandboxed.
	wait_for '◆ box ▣'
	# The approval flag is never added outside a sandbox (the shell agent has none).
	# The container goes with its panes.
	wrx close box
	until_ok 20 eval '! containers | grep -q "^wrx-box-"' || { containers >&2; return 1; }
}

t_sandboxed_agent_outlives_the_dashboard() {
	make_repo
	global_config "  enabled: true"
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add box -b >/dev/null
	until_ok 30 eval 'containers | grep -q "^wrx-box-"'
	local name
	name=$(containers | grep '^wrx-box-')
	wrx send box 'echo before-$((6*7))'
	until_ok 30 eval 'wrx capture box | grep -q before-42'
	# A killed dashboard: the agent goes on in the same container.
	kill -9 "$(workrex_pid)"
	wait_for 'WORKREX-EXITED'
	sleep 2
	[ "$(containers)" = "$name" ]
	podman inspect -f '{{.State.Running}}' "$name" | grep -qx true
	# Status from inside while no dashboard runs: its keeper takes it.
	wrx send box 'workrex set-status waiting && echo REPORTED-$((6*7))'
	until_ok 30 eval 'wrx capture box | grep -q REPORTED-42' || { wrx capture box >&2; return 1; }
	kill_tmux
	start_repo 140 40
	# Taken over, not opened again: its history, the same container, the
	# status it reported meanwhile, and its RPC socket listened on again.
	wait_for '^ 2 ◆ box'
	wrx capture box | grep -q before-42
	wrx send box 'echo inside-$((6*7)); workrex set-status done'
	until_ok 30 eval 'wrx capture box | grep -q inside-42' || { wrx capture box >&2; return 1; }
	wait_for '✓ box ▣'
	[ "$(containers)" = "$name" ]
	# A keeper that dies leaves its container to the next start, which removes it.
	wrx send box "trap '' HUP TERM; exec sleep 600"
	sleep 1
	kill -9 $(keepers)
	until_ok 10 nkeepers 0
	kill -9 "$(workrex_pid)"
	wait_for 'WORKREX-EXITED'
	kill_tmux
	start_repo 140 40
	wait_for 'wrx\$'
	until_ok 30 eval '! containers | grep -qxF "$name"' || { containers >&2; return 1; }
}

# shutdown -y ends the project's programs and their containers with them
# (a killed `podman run` client leaves its container up).
t_shutdown_ends_containers() {
	make_repo
	global_config "  enabled: true"
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add box -b >/dev/null
	wrx add cox -b >/dev/null
	until_ok 30 eval '[ "$(containers | grep -c "^wrx-[bc]ox-")" -ge 2 ]' || { screen >&2; return 1; }
	# Agents that ignore the signals a stopping client passes on.
	wrx send box "trap '' HUP TERM INT; exec sleep 600"
	wrx send cox "trap '' HUP TERM INT; exec sleep 600"
	sleep 1
	kill -9 "$(workrex_pid)"
	wait_for 'WORKREX-EXITED'
	wrx shutdown -y | grep -q '^ended [0-9]* programs$'
	until_ok 15 eval '[ -z "$(containers)" ]' || { containers >&2; return 1; }
	until_ok 10 nkeepers 0
}

# sandbox doctor --attack: the user's own proof. It holds on the test
# image with host commands; mounting ~/.ssh through extra_mounts fails it,
# naming the case.
t_doctor_attack() {
	make_repo
	mkdir -p "$HOME/.ssh" "$HOME/.cargo/registry"
	echo PRIVATE >"$HOME/.ssh/id_ed25519"
	global_config "  enabled: true" "  host_commands: [git]"
	wrx add box -b -S >/dev/null 2>&1 || wrx add box -S >/dev/null
	(cd "$repo" && "$WORKREX" sandbox doctor --attack box) >"$E2E_TMP/attack.out" 2>&1 ||
		{ cat "$E2E_TMP/attack.out" >&2; return 1; }
	cat "$E2E_TMP/attack.out" >&2
	grep -q '^ok    secrets' "$E2E_TMP/attack.out"
	grep -q '^ok    sockets' "$E2E_TMP/attack.out"
	grep -q "^ok    host command's ~" "$E2E_TMP/attack.out"
	grep -q '^ok    caches: its writes went to the agent' "$E2E_TMP/attack.out"
	grep -q '^ok    agent state: its own' "$E2E_TMP/attack.out"
	grep -q '^ok    cache layers: out of a command' "$E2E_TMP/attack.out"
	grep -qx 'every case held' "$E2E_TMP/attack.out"
	test ! -e "$HOME/.cargo/registry/.workrex-doctor"
	global_config "  enabled: true" "  host_commands: [git]" "  extra_mounts: [$HOME/.ssh]"
	not wrx sandbox doctor --attack box >"$E2E_TMP/attack2.out" 2>&1
	cat "$E2E_TMP/attack2.out" >&2
	grep -q "^FAIL  secrets: readable inside:.*\(~/.ssh\|id_ed25519\)" "$E2E_TMP/attack2.out"
	grep -q 'did not hold' "$E2E_TMP/attack2.out"
	# A key found by what it holds, under /etc, by a name like no key's; the
	# host's Claude Code transcripts mounted where the agent keeps its own.
	printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==\n-----END OPENSSH PRIVATE KEY-----\n' >"$E2E_TMP/conn.dat"
	mkdir -p "$HOME/.claude/projects/-p"
	echo '{}' >"$HOME/.claude/projects/-p/s.jsonl"
	global_config "  enabled: true" "  host_commands: [git]" "  extra_mounts:" \
		"    - {host_path: $E2E_TMP/conn.dat, guest_path: /etc/app/conn.dat}" \
		"    - {host_path: $HOME/.claude/projects, guest_path: /tmp/.claude/projects}"
	printf 'agent: claude\n' >>"$XDG_CONFIG_HOME/workrex/config.yaml"
	not wrx sandbox doctor --attack box >"$E2E_TMP/attack3.out" 2>&1
	cat "$E2E_TMP/attack3.out" >&2
	grep -q '^FAIL  secrets: readable inside:.* /etc/app/conn.dat' "$E2E_TMP/attack3.out"
	grep -q "^FAIL  agent state: the host's own in there: ~/.claude/projects" "$E2E_TMP/attack3.out"
	grep -q '^ok    cache layers: out of a command' "$E2E_TMP/attack3.out"
	grep -q '^ok    config: no value' "$E2E_TMP/attack3.out"
	rm -rf "$HOME/.claude" # the next test's host ~/.claude starts empty
}

# refused "CONFIG LINES..." MESSAGE: with this global config, a sandboxed
# agent does not start and the user is told why; the dashboard goes on.
refused() {
	local msg=$1
	shift
	kill_server
	global_config "$@"
	start_repo 140 40
	wait_for 'wrx\$'
	not wrx open capped >"$E2E_TMP/out" 2>&1
	grep -qF -- "$msg" "$E2E_TMP/out" || { cat "$E2E_TMP/out" >&2; return 1; }
	[ -z "$(containers)" ]
	wrx open plain
	wrx send plain 'echo still-fine'
	wait_for 'still-fine'
}

t_refusals_and_a_missing_runtime() {
	make_repo
	global_config
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add plain --no-sandbox -b >/dev/null
	wait_for '^ [0-9] plain'
	# -S on the command line, refused: add says why and fails.
	kill_server
	global_config "  container:" "    cap_add: [SYS_ADMIN]"
	start_repo 140 40
	wait_for 'wrx\$'
	not wrx add capped -S -b >"$E2E_TMP/out" 2>&1
	grep -qF 'cap_add: SYS_ADMIN would let the agent out of its container; refused' "$E2E_TMP/out"
	refused 'cap_add: ALL would let the agent out' "  container:" "    cap_add: [ALL]"
	refused 'container engine socket' "  extra_mounts: [/var/run/docker.sock]"
	refused 'overlaps the git metadata' "  extra_mounts:" "    - {host_path: $repo/.git, writable: true}"
	refused 'sandbox.container.runtime is apple-container, but container is not installed' \
		"  container:" "    runtime: apple-container"
	ln -s /tmp/evil-hook "$repo/.git/hooks/pre-commit"
	refused 'is a symlink to /tmp/evil-hook, outside the repository; refused' "  enabled: false"
	rm "$repo/.git/hooks/pre-commit"
}

t_sandbox_commands() {
	make_repo
	plant_secrets
	global_config
	wrx add box -S -b >/dev/null
	wrx list | grep -qE '^box +box +- +[a-z-]+ +container '
	local w
	w=$(cd "$repo/../proj__worktrees/box" && pwd)
	# init-dockerfile writes out the built-in one, and refuses to overwrite it.
	wrx sandbox init-dockerfile >/dev/null
	cmp "$repo/.workrex/Dockerfile" "$(dirname "$0")/../../assets/Dockerfile.sandbox"
	not wrx sandbox init-dockerfile 2>/dev/null
	# build uses the project's Dockerfile (here: one that needs no registry).
	printf 'FROM workrex-test:latest\nRUN echo built-by-workrex >/built\n' >"$repo/.workrex/Dockerfile"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-YAML
		sandbox:
		  image: workrex-sandbox-test:shell
		  runtime: ${WORKREX_TEST_RUNTIME:-default}
	YAML
	podman rmi -f workrex-sandbox-test:shell >/dev/null 2>&1 || true
	# From the dashboard's command line, with the build's progress on the status line.
	start_repo 140 40
	wait_for 'wrx\$'
	prefix :
	wait_for 'workrex'
	tm send-keys -l 'sandbox build'
	keys Enter
	wait_for 'built workrex-sandbox-test:shell' 120
	test "$(podman run --rm workrex-sandbox-test:shell cat /built)" = built-by-workrex
	# shell: a new container with an agent's mounts.
	wrx sandbox shell box -- git log -1 --format=%s >"$E2E_TMP/out"
	grep -qx init "$E2E_TMP/out"
	not wrx sandbox shell box -- cat "$HOME/.ssh/id_ed25519" 2>/dev/null
	wrx sandbox shell box -- sh -c "echo from-shell >$w/shell.txt"
	test "$(cat "$w/shell.txt")" = from-shell
	# doctor: all fine, and it says what the pane sees.
	wrx sandbox doctor box >"$E2E_TMP/doctor"
	grep -q '^ok    runtime: podman' "$E2E_TMP/doctor"
	grep -q '^ok    image: workrex-sandbox-test:shell' "$E2E_TMP/doctor"
	grep -q '^ok    checks for box' "$E2E_TMP/doctor"
	grep -q "target=$repo/.git/config,readonly" "$E2E_TMP/doctor"
	# Without a name: the agent whose worktree this is, and it says so; its
	# command line as a shell reads it back, word for word.
	(cd "$w" && "$WORKREX" sandbox doctor) >"$E2E_TMP/doctor"
	grep -q '^(for box, whose worktree this is; sandbox doctor HANDLE for another)' "$E2E_TMP/doctor"
	sed -n '/^the command:/{n;p;}' "$E2E_TMP/doctor" | python3 -c 'import shlex, sys; a = shlex.split(sys.stdin.read()); assert a[0].endswith("podman") and "--mount" in a and a[-1] == "/bin/bash", a'
	podman rmi -f workrex-sandbox-test:shell >/dev/null 2>&1
	not wrx sandbox doctor box >"$E2E_TMP/doctor"
	grep -q '^FAIL  image: workrex-sandbox-test:shell is not here' "$E2E_TMP/doctor"
}

# A sandbox holding another agent's token still cannot speak for it.
t_no_agent_speaks_for_another() {
	make_repo
	global_config "  enabled: true"
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add one -b >/dev/null
	wrx add two -b >/dev/null
	local w1 w2
	w1=$(cd "$repo/../proj__worktrees/one" && pwd)
	w2=$(cd "$repo/../proj__worktrees/two" && pwd)
	until_ok 30 eval '[ "$(containers | grep -c "^wrx-")" -ge 2 ]'
	# two's token leaks (through the host, here) into one's worktree.
	wrx send two "printf %s \"\$WORKREX_RPC_TOKEN\" >$w2/token"
	until_ok 30 test -s "$w2/token"
	cp "$w2/token" "$w1/stolen"
	wrx send one "for f in /run/workrex/*; do echo \${f##*/}; done >$w1/ls.txt; WORKREX_RPC_TOKEN=\$(cat stolen) workrex set-status done 2>$w1/err.txt; echo rc=\$? >>$w1/err.txt"
	until_ok 30 grep -q rc= "$w1/err.txt"
	# Its socket is its own: the stolen token is refused there, and two is untouched.
	grep -qx rpc.sock "$w1/ls.txt"
	[ "$(wc -l <"$w1/ls.txt")" -eq 1 ]
	grep -q 'rc=1' "$w1/err.txt"
	grep -q 'refused the token' "$w1/err.txt"
	wrx status --json | python3 -c 'import json,sys; s={a["handle"]: a.get("status") for a in json.load(sys.stdin)}; assert s["two"] is None, s'
	grep -q "token of another agent on an agent's socket" "$XDG_STATE_HOME/workrex/workrex.log"
}

# A stand-in for claude: reports its arguments and what it could write.
t_known_agent_in_a_sandbox() {
	make_repo
	mkdir -p "$HOME/.claude" "$E2E_TMP/fakebin"
	echo '{"hooks": {}}' >"$HOME/.claude/settings.json"
	echo '{"mcpServers": {}}' >"$HOME/.claude.json"
	echo '{"token": "host"}' >"$HOME/.claude/.credentials.json"
	cat >"$E2E_TMP/fakebin/claude" <<-'EOF'
		#!/bin/sh
		out=$PWD/claude-report.txt
		echo "args: $*" >$out
		[ "$WORKREX_SANDBOX" = 1 ] || exec sleep 600 # on the host it stays polite
		if echo '{"hooks":{"Stop":"evil"}}' >$HOME/.claude/settings.json 2>/dev/null; then echo "settings WRITABLE"; else echo "settings ro"; fi >>$out
		if echo '{"mcpServers":{"evil":{}}}' >$HOME/.claude.json 2>/dev/null; then echo "claude.json written"; else echo "claude.json ro"; fi >>$out
		if echo token >$HOME/.claude/.credentials.json 2>/dev/null; then echo "credentials writable"; else echo "credentials ro"; fi >>$out
		# What the host's claude would obey or run: planted only in the sandbox's own dir.
		for f in CLAUDE.md commands/evil.md agents/evil.md settings.local.json statusline.sh plugins/x.json; do
			mkdir -p "$(dirname "$HOME/.claude/$f")" 2>/dev/null
			if echo evil >"$HOME/.claude/$f" 2>/dev/null || ln -s /etc/passwd "$HOME/.claude/$f" 2>/dev/null; then echo "PLANTED $f"; else echo "ro $f"; fi
		done >>$out
		if mkdir -p $HOME/.claude/projects && echo x >$HOME/.claude/projects/session.jsonl 2>/dev/null; then echo "sessions writable"; else echo "sessions ro"; fi >>$out
		echo report-done >>$out
		exec sleep 600
	EOF
	chmod +x "$E2E_TMP/fakebin/claude"
	global_config "  extra_mounts:" "    - {host_path: $E2E_TMP/fakebin/claude, guest_path: /usr/local/bin/claude}"
	printf 'agent: claude\n' >>"$XDG_CONFIG_HOME/workrex/config.yaml"
	PATH="$E2E_TMP/fakebin:$PATH" start_repo 140 40
	wait_for 'wrx\$'
	wrx add boxed -S -b >/dev/null
	wrx add plain --no-sandbox -b >/dev/null
	local wb wp
	wb=$(cd "$repo/../proj__worktrees/boxed" && pwd)
	wp=$(cd "$repo/../proj__worktrees/plain" && pwd)
	until_ok 30 grep -q report-done "$wb/claude-report.txt" || { screen >&2; return 1; }
	until_ok 30 grep -q args: "$wp/claude-report.txt"
	# In the sandbox: the approval flag; its settings read-only; ~/.claude.json its own copy.
	grep -Eqx 'args: --dangerously-skip-permissions --settings \{"skipDangerousModePermissionPrompt":true\} --session-id [0-9a-f-]{36}' "$wb/claude-report.txt"
	grep -qx 'settings ro' "$wb/claude-report.txt"
	grep -qx 'claude.json written' "$wb/claude-report.txt"
	for f in CLAUDE.md commands agents settings.local.json statusline.sh plugins; do test ! -e "$HOME/.claude/$f"; done
	grep -qx 'credentials writable' "$wb/claude-report.txt"
	grep -qx 'sessions writable' "$wb/claude-report.txt"
	grep -q '"hooks": {}' "$HOME/.claude/settings.json"
	grep -q '"mcpServers": {}' "$HOME/.claude.json"
	grep -qx '{"token": "host"}' "$HOME/.claude/.credentials.json"
	test ! -e "$HOME/.claude/projects"
	# On the host, never the flag.
	grep -Eqx 'args: --session-id [0-9a-f-]{36}' "$wp/claude-report.txt"
}

# Commits made inside (the private git dir) keep every guarantee of list,
# merge (three strategies), conflicts and remove once imported.
t_sandbox_commits_merge_three_ways() {
	make_repo
	global_config
	local h
	for h in m r q c; do wrx add "$h" -S -b >/dev/null; done
	inside_commit() { wrx sandbox shell "$1" -- sh -c "echo $2 >$3 && git add $3 && git commit -qm $2" >/dev/null; }
	inside_commit m one m.txt
	inside_commit r one r.txt
	inside_commit q one q.txt
	inside_commit q two q2.txt
	wrx list >"$E2E_TMP/list"
	grep -qE '^m +m +- +[a-z-]+ +container .* 1$' "$E2E_TMP/list" &&
		grep -qE '^q +q +- +[a-z-]+ +container .* 2$' "$E2E_TMP/list" ||
		{ cat "$E2E_TMP/list" >&2; git -C "$repo" log --oneline --all >&2; return 1; }
	git -C "$repo" log -1 --format='%s|%an' q | grep -qx 'two|Host User'
	wrx merge m >/dev/null
	git -C "$repo" log -1 --format=%s main | grep -qx "Merge branch 'm'"
	test -f "$repo/m.txt"
	wrx merge --rebase r >/dev/null
	git -C "$repo" log -1 --format=%s main | grep -qx one
	test -f "$repo/r.txt"
	wrx merge --squash q >/dev/null
	git -C "$repo" log -1 --format=%s main | grep -qx "Squashed branch 'q'"
	test -f "$repo/q2.txt"
	# A conflict: nothing changes, the sandbox's commit stays on its branch.
	inside_commit c theirs a.txt
	echo ours >"$repo/a.txt"
	git -C "$repo" commit -qam ours
	local main_before
	main_before=$(git -C "$repo" rev-parse main)
	not wrx merge c 2>"$E2E_TMP/err"
	grep -q 'conflict in a.txt; nothing was changed' "$E2E_TMP/err"
	[ "$(git -C "$repo" rev-parse main)" = "$main_before" ]
	git -C "$repo" log -1 --format=%s c | grep -qx theirs
	# Unmerged work counts for remove too; -f removes it and its private git dir.
	not wrx remove c 2>"$E2E_TMP/err"
	grep -q "'c' has 1 commit not merged" "$E2E_TMP/err"
	wrx remove -f c >/dev/null
	not ls -d "$XDG_STATE_HOME"/workrex/sandbox/git-*/c 2>/dev/null
	git -C "$repo" fsck --strict
}

# A sandboxed candidate's check runs in a sandbox with its mounts, never on
# the host: the host's secrets are not there, podman's marker is.
# A check that says where it runs and what it can read (the host's key: not in a sandbox).
check_config() {
	global_config
	cat >>"$XDG_CONFIG_HOME/workrex/config.yaml" <<-'YAML'
		check: 'test -f /run/.containerenv && echo IN-A-CONTAINER; cat ~/.ssh/id_ed25519; grep -qx good solution.txt'
	YAML
}

# The merge queue with a sandboxed agent: its commits made inside are
# imported, rebased onto main (which moved meanwhile), checked inside a
# sandbox (never on the host: the check would read the host's key there),
# and landed; a failing check there gives it back, as on the host.
t_queue_checks_in_the_sandbox() {
	make_repo
	plant_secrets
	check_config
	wrx add boxed -S -b >/dev/null
	wrx add other -S -b >/dev/null
	wrx sandbox shell boxed -- sh -c 'echo good >solution.txt && git add solution.txt && git commit -qm "good, from inside"' >/dev/null
	wrx sandbox shell other -- sh -c 'echo bad >other.txt && echo bad >solution.txt && git add . && git commit -qm "bad, from inside"' >/dev/null
	echo moved >"$repo/moved.txt"
	git -C "$repo" add moved.txt
	git -C "$repo" commit -qm 'main moved'
	wrx merge --queue other >"$E2E_TMP/other.out" 2>&1
	grep -q 'other: given back: its check failed (exit 1) on top of main' "$E2E_TMP/other.out" ||
		{ cat "$E2E_TMP/other.out" >&2; return 1; }
	# What it was told, typed into its pane: the check's output, from inside.
	until_ok 30 eval 'wrx capture other | grep -q IN-A-CONTAINER' || { wrx capture other >&2; return 1; }
	wrx capture other | not grep -q PRIVATE-KEY
	wrx merge --queue boxed >"$E2E_TMP/boxed.out" 2>&1 || { cat "$E2E_TMP/boxed.out" >&2; return 1; }
	grep -q '^boxed: check passed (exit 0, [0-9]*s, sandbox)' "$E2E_TMP/boxed.out"
	grep -qx 'merged boxed into main' "$E2E_TMP/boxed.out"
	# Linear: main's commit, then the one made inside, rebased onto it.
	[ "$(git -C "$repo" log --format=%s -2 main | tr '\n' '|')" = 'good, from inside|main moved|' ]
	[ -z "$(git -C "$repo" log --merges --oneline main)" ]
	wrx queue --json | grep -q '"handle":"boxed","state":"landed"'
	wrx queue --json | grep -q '"handle":"other","state":"returned"'
}

t_group_check_in_its_sandbox() {
	make_repo
	plant_secrets
	check_config
	wrx add cand -n 2 -S -b >/dev/null
	local w
	w=$(cd "$repo/../proj__worktrees" && pwd)
	echo good >"$w/cand-1/solution.txt"
	echo bad >"$w/cand-2/solution.txt"
	not wrx compare cand --check >"$E2E_TMP/out" # cand-2 fails its check
	grep -q '^cand-1: check passed (exit 0, [0-9]*s, sandbox)' "$E2E_TMP/out"
	grep -q '^cand-2: check failed (exit 1, [0-9]*s, sandbox)' "$E2E_TMP/out"
	wrx compare cand --json >"$E2E_TMP/json"
	python3 - "$E2E_TMP/json" <<-'PY'
		import json, sys
		c = {x["handle"]: x for x in json.load(open(sys.argv[1]))}
		for h in ("cand-1", "cand-2"):
		    k = c[h]["check"]
		    assert c[h]["sandboxed"] and k["where"] == "sandbox", c[h]
		    assert "IN-A-CONTAINER" in k["output"], k
		    assert "PRIVATE-KEY" not in k["output"], k
		assert c["cand-1"]["check"]["state"] == "passed"
		assert c["cand-2"]["check"]["state"] == "failed"
	PY
	# The same command on the host would have read the key: it was not run there.
	grep -q PRIVATE-KEY "$HOME/.ssh/id_ed25519"
	# Its sandboxes went with it.
	[ -z "$(containers --filter label=workrex.session=check)" ]
	# The winner's commit, made inside, merged; nothing of the other is left:
	# its worktree, branch, record, private git dir, keeper and container.
	wrx sandbox shell cand-1 -- sh -c 'git add solution.txt && git commit -qm winner' >/dev/null
	until_ok 30 eval '[ -n "$(containers --filter label=workrex.handle=cand-2 --filter status=running)" ]'
	wrx compare cand --merge cand-1 -y >"$E2E_TMP/out"
	grep -qx 'merged cand-1; removed cand-2' "$E2E_TMP/out"
	git -C "$repo" log --format=%s main | grep -qx winner
	[ ! -e "$w/cand-2" ] && [ ! -e "$w/cand-1" ]
	[ -z "$(git -C "$repo" branch --list 'cand-*')" ]
	[ -z "$(git -C "$repo" config --get-regexp '^workrex\.worktree\.cand-' || true)" ]
	not ls -d "$XDG_STATE_HOME"/workrex/sandbox/git-*/cand-2 2>/dev/null
	until_ok 30 eval '[ -z "$(containers --filter label=workrex.handle=cand-2)" ]'
	until_ok 10 nkeepers 0
}

run_test "a sandboxed agent sees only its work: secrets hidden, git metadata read-only, commits land, status works" t_sandboxed_agent_sees_only_its_work
run_test "a sandboxed agent outlives a killed dashboard in its container; a dead keeper's container goes" t_sandboxed_agent_outlives_the_dashboard
run_test "shutdown -y ends the project's containers with its programs" t_shutdown_ends_containers
run_test "sandbox doctor --attack holds on the test image; ~/.ssh, a key under /etc, the host's transcripts fail it, named" t_doctor_attack
run_test "a sandbox holding another agent's token cannot speak for it" t_no_agent_speaks_for_another
run_test "a known agent in a sandbox: approval flag, read-only settings, its own ~/.claude and ~/.claude.json; none of it on the host" t_known_agent_in_a_sandbox
run_test "sandbox init-dockerfile, build (from the dashboard's command line), shell, doctor" t_sandbox_commands
run_test "refusals (cap_add, engine socket) and a missing runtime are clear; nothing starts" t_refusals_and_a_missing_runtime
run_test "commits made inside: list, merge three ways, a conflict, remove" t_sandbox_commits_merge_three_ways
run_test "a sandboxed group: checked in a sandbox, never on the host; the merge leaves none of the other" t_group_check_in_its_sandbox
run_test "merge queue: a sandboxed agent's commits, rebased here, checked in its sandbox, landed" t_queue_checks_in_the_sandbox
