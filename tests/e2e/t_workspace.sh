#!/usr/bin/env bash
# One agent, several repositories (add --repos; SPEC §14): a worktree of
# each side by side under the directory its panes start in; merge previews
# every repository, then lands each, or lands none; remove takes them all.
. "$(dirname "$0")/lib.sh"
trap stop EXIT

git_env

t_workspace_one_agent_two_repos() {
	make_workspace
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add task --repos web -b >"$E2E_TMP/out" || { cat "$E2E_TMP/out" >&2; return 1; }
	grep -q "^made task in web, at $E2E_TMP/work/web__worktrees/task$" "$E2E_TMP/out"
	local home=$E2E_TMP/work/proj__worktrees/task.repos
	[ "$(readlink "$home/proj")" = "$E2E_TMP/work/proj__worktrees/task" ]
	[ "$(readlink "$home/web")" = "$E2E_TMP/work/web__worktrees/task" ]
	wrx list --json | python3 -c 'import json,sys; a=json.load(sys.stdin)[0]; assert a["repos"] == ["web"] and a["home"].endswith("/task.repos"), a'
	# Its pane starts in its home: both worktrees there, by name.
	wrx send task "[ \"\$PWD\" = '$home' ] && echo IN-HOME-\$((6*7)); ls"
	until_ok 20 eval "wrx capture task | grep -qx IN-HOME-42" || { wrx capture task >&2; return 1; }
	wrx capture task | grep -q 'proj *web'
	# A commit in each, by the agent.
	wrx send task 'echo api >proj/api.txt && git -C proj add api.txt && git -C proj commit -qm "api side" && echo web >web/web.txt && git -C web add web.txt && git -C web commit -qm "web side" && echo COMMITTED-$((6*7))'
	until_ok 20 eval 'wrx capture task | grep -q COMMITTED-42' || { wrx capture task >&2; return 1; }
	# Its review (C-b D) has both repositories' files, the other's under its name;
	# an untracked file in web shows as new in its WIP, and from diff too.
	echo new >"$E2E_TMP/work/web__worktrees/task/new.txt"
	prefix 2
	prefix D
	wait_for 'review task  \[wip\]  1 file \+1 -0'
	wait_for '│diff --git a/web/new.txt b/web/new.txt'
	keys Tab
	wait_for 'review task  \[branch\]  2 files \+2 -0'
	wait_for '^ \+1 -0 api.txt'
	wait_for '^ \+1 -0 web/web.txt'
	keys q
	wait_gone 'review task'
	wrx diff task --branch --stat | grep -q 'web/web.txt'
	rm "$E2E_TMP/work/web__worktrees/task/new.txt"
	# Its preview says each repository's part, in the merge question (C-b m) too.
	wrx merge task --preview | grep -qx 'task into main: proj: 1 file changed, 1 insertion(+); web: 1 file changed, 1 insertion(+)'
	prefix 2
	prefix m
	wait_for 'merge task and remove its worktree\? .* task into main: proj: 1 file changed, 1 insertion\(\+\);'
	wait_for '^web: 1 file changed, 1 insertion'
	keys n
	# Merged: each lands on its own main; its worktrees, branches and home go.
	wrx merge task >"$E2E_TMP/out" 2>&1 || { cat "$E2E_TMP/out" >&2; return 1; }
	grep -q '^merged task into its main branch in web' "$E2E_TMP/out"
	grep -q '^merged task into main' "$E2E_TMP/out"
	git -C "$repo" log --format=%s main | grep -qx 'api side'
	git -C "$web" log --format=%s main | grep -qx 'web side'
	[ ! -e "$home" ] && [ ! -e "$E2E_TMP/work/web__worktrees/task" ] && [ ! -e "$E2E_TMP/work/proj__worktrees/task" ]
	not git -C "$web" rev-parse -q --verify refs/heads/task >/dev/null
	[ -z "$(wrx list -q)" ]
	wait_gone ' task' 10
}

# The second repository conflicts: nothing merged anywhere, both as they
# were, and said; remove takes both.
t_workspace_conflict_lands_nothing() {
	make_workspace
	wrx add two --repos web -b >/dev/null
	local w1=$E2E_TMP/work/proj__worktrees/two w2=$E2E_TMP/work/web__worktrees/two
	echo two >"$w1/two.txt"
	git -C "$w1" add two.txt && git -C "$w1" commit -qm 'proj: two'
	echo theirs >"$w2/c.txt"
	git -C "$w2" commit -qam 'web: two'
	echo ours >"$web/c.txt"
	git -C "$web" commit -qam 'web: main moved'
	local m1 m2
	m1=$(git -C "$repo" rev-parse main) m2=$(git -C "$web" rev-parse main)
	not wrx merge two --preview 2>"$E2E_TMP/err"
	grep -q 'nothing would merge, in any of its repositories: web: conflicts with main in c.txt' "$E2E_TMP/err" ||
		{ cat "$E2E_TMP/err" >&2; return 1; }
	not wrx merge two 2>"$E2E_TMP/err"
	grep -q 'nothing merged, in any of its repositories: web: conflicts with main in c.txt' "$E2E_TMP/err" ||
		{ cat "$E2E_TMP/err" >&2; return 1; }
	[ "$(git -C "$repo" rev-parse main)" = "$m1" ] && [ "$(git -C "$web" rev-parse main)" = "$m2" ]
	[ -d "$w1" ] && [ -d "$w2" ] && [ -z "$(git -C "$web" status --porcelain --untracked-files=no)" ]
	# Unmerged work holds both; -f removes both, and its home.
	not wrx rm two 2>/dev/null
	[ -d "$w2" ] && [ -d "$w1" ]
	wrx rm -f two >"$E2E_TMP/out"
	grep -qx 'removed two in web' "$E2E_TMP/out"
	[ ! -e "$w1" ] && [ ! -e "$w2" ] && [ ! -e "$E2E_TMP/work/proj__worktrees/two.repos" ]
	# Bad input: a repository that is none, and one outside the workspace.
	not wrx add three --repos nowhere -b 2>"$E2E_TMP/err"
	grep -q "no repository 'nowhere' in $E2E_TMP/work/.workrex-workspace.yaml" "$E2E_TMP/err"
	[ -z "$(wrx list -q)" ]
}

# The global config's workspaces: name the repositories, by their paths, wherever they are.
t_workspace_from_the_global_config() {
	make_workspace
	rm "$E2E_TMP/work/.workrex-workspace.yaml"
	local lib=$E2E_TMP/elsewhere/lib
	rm -rf "$E2E_TMP/elsewhere"
	git init -q -b main "$lib"
	git -C "$lib" commit -q --allow-empty -m 'lib: base'
	cat >>"$XDG_CONFIG_HOME/workrex/config.yaml" <<-EOF
		workspaces:
		  shop: {repos: [$repo, $lib]}
	EOF
	wrx config check 2>&1 | grep -q "^workspaces: {shop: {repos: \[$repo, $lib\]}}"
	wrx add both --repos lib -b >/dev/null
	[ "$(readlink "$E2E_TMP/work/proj__worktrees/both.repos/lib")" = "$E2E_TMP/elsewhere/lib__worktrees/both" ]
	# Not in it: web, a sibling, is no repository of the workspace.
	not wrx add other --repos web -b 2>"$E2E_TMP/err"
	grep -q "no repository 'web' in the workspace shop" "$E2E_TMP/err"
	# A project file cannot set it.
	printf 'workspaces: {x: {repos: [/tmp]}}\n' >"$repo/.workrex.yaml"
	wrx config check 2>&1 | grep -q "'workspaces' may only be set in the global config; ignored"
	wrx rm -f both >/dev/null
}

run_test "add --repos: one agent, a worktree of each repository side by side; merge lands both" t_workspace_one_agent_two_repos
run_test "add --repos: the global config's workspaces name the repositories" t_workspace_from_the_global_config
run_test "add --repos: the second repository conflicts: nothing lands anywhere; rm takes both" t_workspace_conflict_lands_nothing
