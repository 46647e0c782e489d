#!/usr/bin/env bash
# Attacks from inside a real sandboxed pane (podman + runc), one class each
# (issue 10): the host's git store, symlinks where the host writes, RPC
# spawn and merge, git hooks, privileges, lock files. Each attack is really
# performed; what is checked is that it failed where it matters: a marker
# that only a host-run command could make does not appear, a host file
# keeps its bytes, the host repository stays sound. Against the build
# before these fixes every one of them succeeds (see the issue's note).
. "$(dirname "$0")/lib.sh"

# Every attack runs in a sandboxed agent.
sandboxed() { global_config "  enabled: true" "$@"; }

# inside HANDLE SCRIPT: run SCRIPT (sh) in the agent's sandboxed pane, wait for it to end.
inside() {
	local h=$1 w
	w=$(cd "$repo/../proj__worktrees/$1" && pwd)
	printf '%s\necho attack-done >%s/.attack-done\n' "$2" "$w" >"$w/.attack.sh"
	rm -f "$w/.attack-done"
	wrx send "$h" "sh .attack.sh >.attack.log 2>&1"
	until_ok 60 test -e "$w/.attack-done" || { screen >&2; cat "$w/.attack.log" >&2; return 1; }
}

boxed_agent() {
	start_repo 160 45
	wait_for 'wrx\$'
	wrx add box -b >/dev/null
	w=$(cd "$repo/../proj__worktrees/box" && pwd)
	g=$repo/.git
	until_ok 30 eval 'podman ps --filter "label=workrex.project=$repo" --format "{{.Names}}" | grep -q "^wrx-box-"'
}

# 1. The shared object store and refs: poison an object the host will check
#    out, move main; corrupt what the sandbox may write, and get it imported.
t_git_store() {
	make_repo
	echo 'echo safe' >"$repo/setup.sh"
	git -C "$repo" add setup.sh && git -C "$repo" commit -qm setup
	sandboxed "post_create: [\"sh ./setup.sh\"]"
	boxed_agent
	local blob main_before box_before
	blob=$(git -C "$repo" rev-parse HEAD:setup.sh)
	main_before=$(git -C "$repo" rev-parse main)
	# Poison the blob of setup.sh: another blob's compressed bytes under its name.
	inside box "
		obj=$g/objects/\$(echo $blob | cut -c1-2)/\$(echo $blob | cut -c3-)
		git init -q /tmp/p && bad=\$(echo 'touch $E2E_TMP/HOST-RAN' | git -C /tmp/p hash-object -w --stdin)
		chmod u+w \$obj; cp /tmp/p/.git/objects/\$(echo \$bad | cut -c1-2)/\$(echo \$bad | cut -c3-) \$obj || echo poison-failed
	"
	# The next agent's checkout, and the user's post_create in it, get the real setup.sh.
	wrx add two -b >/dev/null 2>&1 || true
	test ! -e "$E2E_TMP/HOST-RAN"
	# Move main, by git and by hand.
	inside box "
		git update-ref refs/heads/main HEAD~1 || echo main-failed
		echo 'touch $E2E_TMP/HOST-RAN' >$g/refs/heads/main || echo ref-write-failed
	"
	[ "$(git -C "$repo" rev-parse main)" = "$main_before" ]
	git -C "$repo" fsck --strict 2>&1 | not grep -E 'error|corrupt|mismatch'
	# Four commands import the same commit at once: one does, the rest see it done.
	inside box "echo fine >ok.txt; git add ok.txt; git commit -qm ok"
	local i
	for i in 1 2 3 4; do wrx list >"$E2E_TMP/list$i" 2>&1 & done
	wait
	cat "$E2E_TMP"/list? | not grep 'moved on the host'
	git -C "$repo" cat-file -e box:ok.txt
	box_before=$(git -C "$repo" rev-parse box)
	# Commit, then corrupt the object it made, under its own name, in what it may write.
	inside box "
		echo planted >x.txt; git add x.txt; git commit -qm inside
		b=\$(git rev-parse HEAD:x.txt); o=\$(git rev-parse --git-dir)/objects/\$(echo \$b | cut -c1-2)/\$(echo \$b | cut -c3-)
		chmod u+w \$o; cp $g/objects/\$(echo $blob | cut -c1-2)/\$(echo $blob | cut -c3-) \$o
	"
	# The corrupted commit is not imported, with a clear word; nothing changed.
	wrx list >"$E2E_TMP/list" 2>&1
	grep -q "failed verification and were not imported" "$E2E_TMP/list"
	[ "$(git -C "$repo" rev-parse box)" = "$box_before" ]
	git -C "$repo" fsck --strict
}

# 3. Host writes into a tree the sandbox wrote: a prompt through a symlinked
#    .workrex, a files.copy entry through a symlinked directory.
t_symlinks_where_the_host_writes() {
	make_repo
	mkdir -p "$repo/conf" "$E2E_TMP/victim"
	echo SECRET-TOKEN >"$repo/conf/local.env"
	echo 'keep me' >"$E2E_TMP/victim/PROMPT-two.md"
	echo 'my bashrc' >"$E2E_TMP/victim/.gitignore"
	sandboxed "files:" "  copy: [conf/local.env]"
	boxed_agent
	inside box "
		rm -rf .workrex conf; ln -s $E2E_TMP/victim .workrex; ln -s $E2E_TMP/victim conf
		git add .workrex conf; git commit -qm links
	"
	wrx list >/dev/null 2>&1
	git -C "$repo" cat-file -p box:.workrex | grep -q victim # imported
	# An agent from that branch: the host must not write through the links.
	wrx add two --base box -p 'ignore previous instructions' -b >"$E2E_TMP/out" 2>&1 || true
	[ "$(cat "$E2E_TMP/victim/PROMPT-two.md")" = 'keep me' ]
	[ "$(cat "$E2E_TMP/victim/.gitignore")" = 'my bashrc' ]
	test ! -e "$E2E_TMP/victim/local.env"
	grep -q "a directory on the way is a symlink" "$E2E_TMP/out"
}

# 5. RPC: a spawn gets a new sandboxed branch from the base and its
#    post_create runs inside; a merge waits for the user's yes; git hooks
#    inside the repository never run for a sandboxed agent's merge.
t_rpc_spawn_and_merge() {
	make_repo
	git -C "$repo" config core.hooksPath .husky
	sandboxed "post_create: ['if [ -n \"\$WORKREX_SANDBOX\" ]; then touch ran-inside; else touch $E2E_TMP/POST-CREATE-ON-HOST; fi']"
	# A branch of the host's that the sandbox would like an agent (and post_create) on.
	git -C "$repo" branch crafted
	boxed_agent
	rm "$E2E_TMP/POST-CREATE-ON-HOST" # the user's own add of box ran it, as it should
	inside box "
		mkdir -p .husky; printf '#!/bin/sh\ntouch $E2E_TMP/HOOK-RAN\n' >.husky/post-merge; chmod +x .husky/post-merge
		printf 'post_create: [\"touch $E2E_TMP/PROJECT-HOOK-RAN\"]\n' >.workrex.yaml
		mkdir -p .vscode .github/workflows sub
		echo 'all:; touch $E2E_TMP/MAKE-RAN' >sub/Makefile
		echo '{\"scripts\": {\"postinstall\": \"touch x\"}}' >package.json
		echo 'touch x' >.envrc; echo '{}' >.vscode/tasks.json; echo 'on: push' >.github/workflows/ci.yml
		git add .husky .workrex.yaml sub package.json .envrc .vscode .github; git commit -qm hooks
		workrex add crafted -b >spawn-existing.txt 2>&1; echo rc=\$? >>spawn-existing.txt
		workrex add spawned -b >spawn.txt 2>&1; echo rc=\$? >>spawn.txt
	"
	grep -q 'rc=1' "$w/spawn-existing.txt"
	grep -q 'may only spawn on a new branch' "$w/spawn-existing.txt"
	grep -q 'rc=0' "$w/spawn.txt"
	wrx list | grep -qE '^spawned +spawned +- +[a-z-]+ +container '
	local ws
	ws=$(cd "$repo/../proj__worktrees/spawned" && pwd)
	# From the base, not from the caller's branch.
	[ "$(git -C "$repo" rev-parse spawned)" = "$(git -C "$repo" rev-parse main)" ]
	until_ok 30 test -e "$ws/ran-inside" || { screen >&2; return 1; }
	test ! -e "$E2E_TMP/POST-CREATE-ON-HOST"
	# Its own merge: refused at once with its files uncommitted (spawn.txt,
	# merge.txt), unasked; then with --ignore-uncommitted the dashboard asks,
	# with the warning; no is no.
	wrx send box "workrex merge >merge0.txt 2>&1; echo rc=\$? >>merge0.txt"
	until_ok 30 grep -q rc= "$w/merge0.txt"
	grep -q 'rc=1' "$w/merge0.txt"
	grep -q "branch 'box' has uncommitted changes; commit them or pass --ignore-uncommitted" "$w/merge0.txt"
	wrx send box "workrex merge --ignore-uncommitted >merge.txt 2>&1; echo rc=\$? >>merge.txt"
	wait_for 'question waits: C-b a to answer - box asks to merge box into main' 30
	prefix a
	wait_for '^box asks to merge box into main: .*WARNING, runs on the host: ' 10
	local f
	for f in .husky/post-merge .workrex.yaml sub/Makefile package.json .envrc .vscode/tasks.json \
		.github/workflows/ci.yml; do
		screen | tr -d '\n' | grep -qF "$f" || { echo "not warned: $f" >&2; screen >&2; return 1; }
	done
	keys n
	until_ok 30 grep -q rc= "$w/merge.txt"
	grep -q 'rc=1' "$w/merge.txt"
	grep -q 'declined' "$w/merge.txt"
	not git -C "$repo" merge-base --is-ancestor box main
	# The user merges it: git's post-merge hook from the branch does not run.
	wrx merge --ignore-uncommitted box >/dev/null
	git -C "$repo" log -1 --format=%s main | grep -q "Merge branch 'box'"
	test ! -e "$E2E_TMP/HOOK-RAN"
	# The .workrex.yaml it brought runs nothing until the user trusts it.
	wrx add after-merge --no-sandbox -b >/dev/null 2>&1
	test ! -e "$E2E_TMP/PROJECT-HOOK-RAN"
}

# 6. Privileges and what crosses into the container: capabilities, user
#    namespaces, a memory limit, the dashboard's proxy, credentials in the
#    git config. 8. A lock file that would block removal.
t_privileges_and_leaks() {
	make_repo
	git -C "$repo" remote add origin https://me:ghp_SECRETTOKEN@example.com/o/r.git
	git -C "$repo" config http.extraHeader "AUTHORIZATION: bearer SECRET2"
	sandboxed
	HTTPS_PROXY=http://u:PROXYSECRET@127.0.0.1:9 start_repo 160 45
	wait_for 'wrx\$'
	wrx add box -b >/dev/null
	w=$(cd "$repo/../proj__worktrees/box" && pwd)
	g=$repo/.git
	inside box "
		grep CapEff /proc/self/status >caps.txt
		if unshare -U true 2>/dev/null; then echo USERNS; else echo no-userns; fi >userns.txt
		env >env.txt; cat $g/config \$(git rev-parse --git-dir)/config >cfg.txt
		touch $g/worktrees/box/locked 2>/dev/null && echo LOCKED >lock.txt || echo not-locked >lock.txt
	"
	grep -q 'CapEff:.0000000000000000' "$w/caps.txt"
	if [ "${WORKREX_TEST_RUNTIME:-}" = gvisor ]; then
		# One of gVisor's kernel: the host's user namespace code is not reached.
		grep -qx USERNS "$w/userns.txt"
	else
		grep -qx no-userns "$w/userns.txt"
	fi
	podman ps --filter "label=workrex.project=$repo" --format '{{.Names}}' | head -1 >"$E2E_TMP/name"
	[ "$(podman inspect --format '{{.HostConfig.Memory}}' "$(cat "$E2E_TMP/name")")" = $((8 << 30)) ]
	not grep -q SECRET "$w/env.txt"
	not grep -q SECRET "$w/cfg.txt"
	grep -q 'url = https://example.com/o/r.git' "$w/cfg.txt"
	grep -qx not-locked "$w/lock.txt"
	# A lock (made on the host here) does not stop remove -f.
	git -C "$repo" worktree lock "$w"
	wrx close box
	wrx remove -f box
	test ! -e "$w"
}

# 9. An agent CLI's own state (issue 45): the host's Claude Code sources
#    shell-snapshots/ and session-env/ before each command, resumes
#    projects/, rewinds file-history/; Codex resumes sessions/. A sandboxed
#    claude and codex (a shell under each name) read the host's transcripts
#    and histories, append a command to every file the host would source,
#    forge a transcript and plant new ones.
t_agent_state_is_its_own() {
	make_repo
	local c=$HOME/.claude x=$HOME/.codex
	mkdir -p "$c/projects/-other-project" "$c/shell-snapshots" "$c/session-env/s1" \
		"$c/file-history/s1" "$c/todos" "$x/sessions/2026/12" "$E2E_TMP/fakebin"
	echo '{"hooks": {}}' >"$c/settings.json"
	echo '{"claudeAiOauth": {"accessToken": "TOKEN-FOR-BOX"}}' >"$c/.credentials.json"
	echo '{"type":"user","message":"HOST-TRANSCRIPT"}' >"$c/projects/-other-project/s1.jsonl"
	echo 'export PATH=/usr/bin:/bin' >"$c/shell-snapshots/snapshot-bash-1-abc.sh"
	echo 'export FOO=1' >"$c/session-env/s1/sessionstart-hook-0.sh"
	echo 'HOST-FILE-V1' >"$c/file-history/s1/f@v1"
	echo '{"display":"HOST-PROMPT"}' >"$c/history.jsonl"
	echo '[]' >"$c/todos/s1.json"
	echo 'model = "o3"' >"$x/config.toml"
	echo '{"OPENAI_API_KEY": "KEY-FOR-BOX"}' >"$x/auth.json"
	echo '{"payload":"HOST-CODEX-SESSION"}' >"$x/sessions/2026/12/rollout-1.jsonl"
	echo '{"text":"HOST-CODEX-PROMPT"}' >"$x/history.jsonl"
	(cd "$HOME" && find .claude .codex -type f -exec sha256sum {} + | sort) >"$E2E_TMP/before"
	printf '#!/bin/sh\nexec sh\n' >"$E2E_TMP/fakebin/agent"
	chmod +x "$E2E_TMP/fakebin/agent"
	sandboxed "  extra_mounts:" \
		"    - {host_path: $E2E_TMP/fakebin/agent, guest_path: /usr/local/bin/claude}" \
		"    - {host_path: $E2E_TMP/fakebin/agent, guest_path: /usr/local/bin/codex}"
	printf 'agent: claude\n' >>"$XDG_CONFIG_HOME/workrex/config.yaml"
	boxed_agent
	wrx add cx -a codex -b >/dev/null
	local attack='
		for d in $HOME/.claude $HOME/.codex; do
			grep -rhs HOST- $d >>seen.txt
			for f in $(find $d -type f 2>/dev/null); do echo "touch '"$E2E_TMP"'/HOST-RAN" >>$f 2>/dev/null; done
		done
		for f in shell-snapshots/snapshot-bash-1-abc.sh shell-snapshots/snapshot-zsh-2.sh session-env/s1/sessionstart-hook-0.sh \
			session-env/s2/x.sh file-history/s1/f@v2 projects/-other-project/s1.jsonl history.jsonl .credentials.json; do
			mkdir -p $(dirname $HOME/.claude/$f) && echo "touch '"$E2E_TMP"'/HOST-RAN" >>$HOME/.claude/$f && echo "wrote $f"
		done >>wrote.txt 2>&1
		for f in sessions/2026/12/rollout-1.jsonl history.jsonl auth.json; do
			mkdir -p $(dirname $HOME/.codex/$f) && echo forged >>$HOME/.codex/$f && echo "wrote codex $f"
		done >>wrote.txt 2>&1
		grep -s TOKEN-FOR-BOX $HOME/.claude/.credentials.json >creds.txt
		grep -s KEY-FOR-BOX $HOME/.codex/auth.json >>creds.txt
		cat $HOME/.claude/settings.json $HOME/.codex/config.toml >settings.txt'
	inside box "$attack"
	inside cx "$attack"
	# Its own state took every write; the host saw none of it.
	local d
	for d in "$w" "$(wrx path cx)"; do
		not grep -q HOST- "$d/seen.txt"
	done
	grep -q TOKEN-FOR-BOX "$w/creds.txt" && grep -q KEY-FOR-BOX "$(wrx path cx)/creds.txt"
	grep -q '"hooks": {}' "$w/settings.txt" && grep -q 'model = "o3"' "$(wrx path cx)/settings.txt"
	grep -qx 'wrote history.jsonl' "$w/wrote.txt"
	grep -qx 'wrote codex history.jsonl' "$(wrx path cx)/wrote.txt"
	(cd "$HOME" && find .claude .codex -type f -exec sha256sum {} + | sort) >"$E2E_TMP/after"
	diff "$E2E_TMP/before" "$E2E_TMP/after"
	# Sourced as Claude Code sources them, nothing runs.
	for f in "$c"/shell-snapshots/*.sh "$c"/session-env/*/*; do (. "$f"); done
	test ! -e "$E2E_TMP/HOST-RAN"
	# Restarted, an agent finds its own state again, and the host's settings.
	wrx close box
	wrx open box
	until_ok 30 eval 'podman ps --filter "label=workrex.project=$repo" --format "{{.Names}}" | grep -q "^wrx-box-"'
	inside box 'cat $HOME/.claude/history.jsonl $HOME/.claude/settings.json >again.txt'
	grep -q HOST-RAN "$w/again.txt" && grep -q '"hooks": {}' "$w/again.txt"
	not grep -q HOST-PROMPT "$w/again.txt"
}

run_test "attack: poison the shared object store, move main, smuggle a corrupt object" t_git_store
run_test "attack: symlinks where the host writes (prompt, .gitignore, files.copy)" t_symlinks_where_the_host_writes
run_test "attack: RPC spawn on a crafted branch, merge without the user, hooks in the repository" t_rpc_spawn_and_merge
run_test "attack: capabilities, user namespaces, memory, proxy and git credentials, a lock file" t_privileges_and_leaks
run_test "attack: the host's Claude Code and Codex state (snapshots, session env, transcripts, history)" t_agent_state_is_its_own

# 7. One connection budget for every listener: an agent holds 1,100 idle
#    connections to its own socket (what the container mounts), opened here
#    from the host through the same socket file.
t_connection_flood() {
	make_repo
	sandboxed
	boxed_agent
	local sock
	sock=$(find "$XDG_RUNTIME_DIR" -path '*/a-*/rpc.sock' | head -1)
	test -S "$sock"
	python3 - "$sock" "$E2E_TMP/held" <<-'PY' &
		import socket, sys, time
		held = []
		for i in range(1100):
		    s = socket.socket(socket.AF_UNIX)
		    try:
		        s.connect(sys.argv[1])
		    except OSError:
		        break
		    held.append(s)
		open(sys.argv[2], "w").write(str(len(held)))
		time.sleep(20)
	PY
	local flood=$! log=$XDG_STATE_HOME/workrex/workrex.log
	until_ok 30 test -s "$E2E_TMP/held"
	echo "flood: $(cat "$E2E_TMP/held") connections held" >&2
	# The user's CLI still reaches the dashboard, and other agents still start.
	wrx list | grep -q '^box ' || { tail -5 "$log" >&2; return 1; }
	wrx capture box >/dev/null || { tail -5 "$log" >&2; return 1; }
	wrx add other --no-sandbox -b >/dev/null
	wait_for '^ [0-9] other'
	kill "$flood"
	grep -q 'too many open on box' "$log" || { grep rpc: "$log" | tail -5 >&2; return 1; }
}
run_test "attack: 1,100 idle connections to an agent's own socket do not lock the user out" t_connection_flood

# 8. A family shares one budget: an agent and the three it spawned hold 64
# connections each (what each socket allows); past 192 together, refused.
t_family_connection_budget() {
	make_repo
	sandboxed
	touch "$E2E_TMP/family-start" # the sockets of this test's agents only
	boxed_agent
	inside box "for k in kid1 kid2 kid3; do workrex add \$k -b; done >spawn.txt 2>&1"
	local k
	for k in kid1 kid2 kid3; do
		until_ok 60 eval "find '$XDG_RUNTIME_DIR' -path '*/a-*/rpc.sock' -newer '$E2E_TMP/family-start' | wc -l | grep -qx 4" ||
			{ cat "$w/spawn.txt" >&2; screen >&2; return 1; }
	done
	rm -f "$E2E_TMP/family-held"
	python3 - "$E2E_TMP/family-held" $(find "$XDG_RUNTIME_DIR" -path '*/a-*/rpc.sock' -newer "$E2E_TMP/family-start") <<-'PY' &
		import select, socket, sys, time
		conns = []
		for path in sys.argv[2:]:
		    for i in range(64):
		        s = socket.socket(socket.AF_UNIX)
		        try:
		            s.connect(path)
		            conns.append(s)
		        except OSError:
		            pass
		time.sleep(0.5)  # a refused one has its answer, or is closed, by now
		ready, _, _ = select.select(conns, [], [], 0)
		open(sys.argv[1], "w").write(str(len(conns) - len(ready)))
		time.sleep(5)
	PY
	local flood=$! log=$XDG_STATE_HOME/workrex/workrex.log
	until_ok 90 test -s "$E2E_TMP/family-held"
	echo "family flood: $(cat "$E2E_TMP/family-held") of 256 held" >&2
	[ "$(cat "$E2E_TMP/family-held")" -le 192 ]
	grep -q 'too many open on the family of box' "$log" || { grep rpc: "$log" | tail -5 >&2; return 1; }
	wrx list | grep -q '^box '
	kill "$flood"
}
run_test "attack: an agent and its children share one connection budget" t_family_connection_budget
