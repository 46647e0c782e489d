#!/usr/bin/env bash
# The verbs workmux users reach for (issue 11): path, sync-files, rebase,
# rename, init, completions; and verbs that never destroy work by surprise.
. "$(dirname "$0")/lib.sh"
trap stop EXIT

git_env

# A project whose files.copy / files.symlink entries are ignored by git.
verbs_repo() {
	make_repo
	printf 'local.env\nshared\n' >"$repo/.gitignore"
	git -C "$repo" add .gitignore && git -C "$repo" commit -qm ignore
	echo v1 >"$repo/local.env"
	mkdir "$repo/shared"
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'files:\n  copy: [local.env]\n  symlink: [shared]\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
}

t_path_and_sync_files() {
	verbs_repo
	wrx add topic >/dev/null
	local w=$E2E_TMP/work/proj__worktrees/topic
	[ "$(wrx path topic)" = "$w" ]
	[ "$(cd "$w" && "$WORKREX" path)" = "$w" ]
	not wrx path nosuch 2>/dev/null
	[ "$(cat "$w/local.env")" = v1 ]
	# The project's copy changed, the link went: both come back; then nothing to do.
	echo v2 >"$repo/local.env"
	rm "$w/shared"
	wrx sync-files topic | grep -qx 'topic: 2 files brought up to date'
	[ "$(cat "$w/local.env")" = v2 ]
	[ "$(readlink "$w/shared")" = "$repo/shared" ]
	wrx sync-files --all | grep -qx 'topic: 0 files brought up to date'
	# What the branch tracks is the branch's.
	echo mine >"$w/local.env"
	git -C "$w" add -f local.env && git -C "$w" commit -qm tracked
	wrx sync-files topic | grep -qx 'topic: 0 files brought up to date'
	[ "$(cat "$w/local.env")" = mine ]
}

t_rebase() {
	verbs_repo
	wrx add topic >/dev/null
	local w=$E2E_TMP/work/proj__worktrees/topic
	echo t >"$w/t.txt" && git -C "$w" add t.txt && git -C "$w" commit -qm topic
	echo m >"$repo/m.txt" && git -C "$repo" add m.txt && git -C "$repo" commit -qm main
	wrx rebase topic | grep -qx 'topic is now on top of main'
	git -C "$repo" merge-base --is-ancestor main topic
	wrx rebase topic | grep -qx 'topic already has everything on main'
	# A conflict: the rebase is undone, the branch as it was.
	echo topic-side >"$w/a.txt" && git -C "$w" commit -qam side
	echo main-side >"$repo/a.txt" && git -C "$repo" commit -qam other
	local before
	before=$(git -C "$repo" rev-parse topic)
	not wrx rebase topic 2>"$E2E_TMP/err"
	grep -q 'conflict in a.txt; nothing was changed' "$E2E_TMP/err"
	[ "$(git -C "$repo" rev-parse topic)" = "$before" ]
	[ "$(cat "$w/a.txt")" = topic-side ]
	git -C "$w" status | not grep -q 'rebase in progress'
	# Uncommitted work is never rebased under.
	echo wip >>"$w/t.txt"
	not wrx rebase topic 2>"$E2E_TMP/err"
	grep -q 'uncommitted changes' "$E2E_TMP/err"
}

t_rename() {
	verbs_repo
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add topic -b >/dev/null
	wait_for '^ 2 topic'
	# Not while its programs run in the old directory.
	not wrx rename topic better 2>"$E2E_TMP/err"
	grep -q "'topic' has open panes; close them first" "$E2E_TMP/err"
	wrx close topic
	wrx rename topic better | grep -q '^renamed topic to better (better) at '
	wait_for '^ 2 better'
	local w=$E2E_TMP/work/proj__worktrees/better
	test ! -e "$E2E_TMP/work/proj__worktrees/topic"
	[ "$(git -C "$w" rev-parse --abbrev-ref HEAD)" = better ]
	git -C "$repo" worktree list | grep -q "proj__worktrees/better .*\[better\]"
	git -C "$repo" worktree list | not grep -q topic
	wrx list | grep -q '^better '
	# A branch not named as the handle keeps its name; a taken name is refused.
	wrx add feature/x --name fx -b >/dev/null
	wrx close fx
	wrx rename fx fx2 | grep -q '^renamed fx to fx2 (feature/x)'
	not wrx rename fx2 better 2>"$E2E_TMP/err"
	grep -qE "'better' is taken|agent named 'better'" "$E2E_TMP/err"
	# Its panes open in the new directory, with its number.
	prefix 2
	type_line 'basename "$PWD"'
	wait_for '│better *(│|$)'
	# Something to merge: a branch with nothing is not merged while its agent runs.
	git -C "$w" commit -q --allow-empty -m renamed
	wrx merge better | grep -q 'merged better into main'
}

# init: a commented .workrex.yaml that loads as it is and uncommented.
t_init() {
	make_repo
	touch "$repo/package-lock.json"
	wrx init | grep -q "^wrote $repo/.workrex.yaml"
	grep -q '^# post_create: \["npm ci"\] .*package-lock.json' "$repo/.workrex.yaml"
	grep -q '^# merge_strategy: merge' "$repo/.workrex.yaml"
	# Its header names every key that runs a command, as the key table says (issue 46).
	local k
	for k in worktree_dir agent panes post_create check review.pager review.remote; do
		sed -n '1,/^#$/p' "$repo/.workrex.yaml" | grep -qw "$k" || { echo "header lacks $k" >&2; return 1; }
	done
	not grep -q 'global only' "$repo/.workrex.yaml"
	# Not even the header of a section only the global file may set.
	not grep -qE '^# (clipboard|agents|remote):' "$repo/.workrex.yaml"
	wrx config check >/dev/null 2>"$E2E_TMP/err"
	[ "$(cat "$E2E_TMP/err")" = "config check: valid, 0 warnings" ]
	# A bad file gets a verdict too.
	printf 'scrollback: lots\n' >"$E2E_TMP/bad.yaml"
	not wrx --config "$E2E_TMP/bad.yaml" config check >/dev/null 2>"$E2E_TMP/err"
	grep -q '^config check: not valid (1 error, 0 warnings)' "$E2E_TMP/err"
	# Never over a file that is there.
	not wrx init 2>"$E2E_TMP/err"
	grep -q 'File exists (left as it is)' "$E2E_TMP/err"
	# Every key at its default, uncommented, is a valid config ("null" too).
	sed -n '/^# main_branch/,$p' "$repo/.workrex.yaml" | sed 's/^# //' >"$E2E_TMP/all.yaml"
	mv "$E2E_TMP/all.yaml" "$repo/.workrex.yaml"
	wrx config check 2>&1 >/dev/null | not grep -v 'project config is not trusted\|^config check: valid'
	wrx config check 2>/dev/null | grep -q "^main_branch: (detected)"
}

# The completion scripts, loaded by each shell for real.
t_completions() {
	make_repo
	wrx add topic >/dev/null
	local d=$E2E_TMP/compl
	mkdir -p "$d"
	wrx completions bash >"$d/workrex.bash"
	wrx completions zsh >"$d/_workrex"
	wrx completions fish >"$d/workrex.fish"
	not wrx completions tcsh 2>/dev/null
	# bash: commands, a command's flags, agents.
	local out
	out=$(cd "$repo" && bash -c '. "$1"; COMP_WORDS=(workrex re); COMP_CWORD=1; _workrex; echo "${COMPREPLY[*]}"' _ "$d/workrex.bash")
	[ "$(tr " " "\n" <<<"$out" | sort | xargs)" = "rebase remove rename review" ]
	out=$(cd "$repo" && bash -c '. "$1"; COMP_WORDS=(workrex merge --sq); COMP_CWORD=2; _workrex; echo "${COMPREPLY[*]}"' _ "$d/workrex.bash")
	[ "$out" = "--squash" ]
	out=$(cd "$repo" && PATH=$(dirname "$WORKREX"):$PATH bash -c '. "$1"; COMP_WORDS=(workrex merge t); COMP_CWORD=2; _workrex; echo "${COMPREPLY[*]}"' _ "$d/workrex.bash")
	[ "$out" = "topic" ]
	# fish
	out=$(cd "$repo" && PATH=$(dirname "$WORKREX"):$PATH fish -c "source $d/workrex.fish; complete -C 'workrex path '")
	[ "$out" = "topic" ]
	(cd "$repo" && fish -c "source $d/workrex.fish; complete -C 'workrex config '") | grep -qx reference
	# zsh, at a prompt in a terminal: <Tab> completes a command, then an agent.
	tm new-session -d -x 100 -y 20 -c "$repo" "env PATH=$(dirname "$WORKREX"):$PATH zsh -f"
	tm set -g status off
	type_line "fpath=($d \$fpath); autoload -Uz compinit; compinit -u; PS1='zsh> '"
	wait_for '^zsh> ?$'
	tm send-keys -l 'workrex ren'
	tm send-keys Tab
	wait_for '^zsh> workrex rename ?$'
	tm send-keys C-u
	tm send-keys -l 'workrex open to'
	tm send-keys Tab
	wait_for '^zsh> workrex open topic ?$'
}

# commit_in AGENT FILE: a commit on the agent's branch, in its worktree.
commit_in() {
	local w=$E2E_TMP/work/proj__worktrees/$1
	echo "$2" >"$w/$2"
	git -C "$w" add "$2"
	git -C "$w" commit -qm "$2"
}

# Nothing lost by surprise: a merge with nothing to merge while the agent
# runs is refused; what files.copy/symlink placed is not the agent's
# change; the keys' merge and remove ask again with the flag git's
# refusal names.
t_no_surprises() {
	make_repo
	echo secret >"$repo/.env"
	mkdir "$repo/cache"
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\nfiles:\n  copy: [.env]\n  symlink: [cache]\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 140 40
	wait_for 'C-b \? help'
	for a in busy placed dirty gone; do wrx add -b "$a" >/dev/null; done
	wait_for '^ 5 gone'
	not wrx merge busy 2>"$E2E_TMP/err"
	grep -q "'busy' has nothing to merge into main yet, and its agent still runs" "$E2E_TMP/err"
	wrx list | grep -q '^busy '
	# .env and cache, placed by workrex, are not the agent's changes.
	commit_in placed one.txt
	wrx merge placed >/dev/null
	git -C "$repo" log --oneline main | grep -q one.txt
	# C-b m: refused for uncommitted work, asked again, merged with it kept.
	commit_in dirty two.txt
	echo wip >"$E2E_TMP/work/proj__worktrees/dirty/wip.txt"
	prefix "'"
	tm send-keys -l dirty
	keys Enter
	# One question, the one that says why (its preview is refused as the
	# merge would be).
	prefix m
	wait_for "branch 'dirty' has uncommitted changes; commit them or pass --ignore-uncommitted"
	wait_for 'merge its commits anyway'
	keys y
	# Its outcome, longer than the line: cut there, whole in the log (and C-b ~).
	wait_for 'merged dirty into main: the worktree'
	until_ok 10 grep -q 'said: merged dirty into main: the worktree .* keeps its uncommitted changes and was not removed' "$XDG_STATE_HOME/workrex/workrex.log"
	# Answered, the question's rows are the panes' again, not left standing.
	wait_gone 'merge its commits anyway'
	git -C "$repo" log --oneline main | grep -q two.txt
	[ -f "$E2E_TMP/work/proj__worktrees/dirty/wip.txt" ]
	# C-b X: refused for unmerged commits, asked again, removed.
	commit_in gone three.txt
	prefix "'"
	tm send-keys -l gone
	keys Enter
	prefix X
	wait_for 'remove the worktree and branch of gone\? \(y/n\)'
	keys y
	wait_for 'remove it anyway'
	sleep 0.7
	keys y
	wait_gone 'remove it anyway'
	until_ok 10 not test -d "$E2E_TMP/work/proj__worktrees/gone"
	# The branch goes after the worktree (git worktree remove, then git branch -D).
	until_ok 10 not git -C "$repo" rev-parse -q --verify refs/heads/gone
}

# A worktree deleted by hand: listed as missing; rm cleans up git's record
# and ours, keeping a branch with unmerged commits unless -f; merge brings
# its commits in and cleans up.
t_worktree_deleted_by_hand() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	for a in plain work merged; do wrx add -b "$a" >/dev/null; done
	commit_in work w.txt
	commit_in merged m.txt
	local wt=$E2E_TMP/work/proj__worktrees
	end_keepers
	rm -rf "$wt/plain" "$wt/work" "$wt/merged"
	wrx list >"$E2E_TMP/list"
	grep -qE '^plain +plain +missing ' "$E2E_TMP/list"
	grep -qE '^work +work +missing ' "$E2E_TMP/list"
	# The dashboard shows it, and opens nothing there.
	start_repo 120 36
	wait_for 'worktree gone \(rm\)'
	wrx rm plain | grep -qx 'removed plain'
	not git -C "$repo" rev-parse -q --verify refs/heads/plain
	wrx rm work | grep -q 'its branch work keeps 1 commit not merged into main (git branch -D work deletes it)'
	git -C "$repo" rev-parse -q --verify refs/heads/work >/dev/null
	# One that said done, its directory deleted while it runs: missing, not
	# done; what rm says to do next can be done (issue 46).
	wrx add -b late >/dev/null
	commit_in late l.txt
	wrx send late 'workrex set-status done'
	wait_for '^ [0-9] ✓ late'
	rm -rf "$wt/late"
	wrx list >"$E2E_TMP/list"
	grep -qE '^late +late +missing ' "$E2E_TMP/list"
	wrx rm late | grep -q 'its branch late keeps 1 commit not merged into main (git branch -D late deletes it)'
	git -C "$repo" branch -D late >/dev/null
	wrx merge merged >/dev/null
	git -C "$repo" log --oneline main | grep -q m.txt
	not grep -q proj__worktrees <(git -C "$repo" worktree list --porcelain)
	not git -C "$repo" config --get-regexp '^workrex\.worktree\.(plain|work|merged)\.'
	not grep -qE '^(plain|work|merged) ' <(wrx list)
}

# add origin/feature: the local branch feature from it, tracking it; never
# a local branch named origin/feature.
t_add_remote_branch() {
	make_repo
	git clone -q --bare "$repo" "$E2E_TMP/origin.git"
	git -C "$repo" remote add origin "$E2E_TMP/origin.git"
	git -C "$repo" switch -q -c feature
	git -C "$repo" commit -q --allow-empty -m on-feature
	git -C "$repo" push -q origin feature
	git -C "$repo" switch -q main
	git -C "$repo" branch -q -D feature
	git -C "$repo" fetch -q origin
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add -b origin/feature >/dev/null
	not git -C "$repo" rev-parse -q --verify refs/heads/origin/feature
	[ "$(git -C "$repo" rev-parse feature)" = "$(git -C "$repo" rev-parse origin/feature)" ]
	[ "$(git -C "$repo" rev-parse --abbrev-ref feature@{upstream})" = origin/feature ]
	wrx list | grep -qE '^feature +feature '
	# With a local branch of that name already, it says which to use.
	wrx rm feature -k >/dev/null
	not wrx add -b origin/feature 2>"$E2E_TMP/err"
	grep -q "a local 'feature' exists: .workrex add feature. checks that out" "$E2E_TMP/err"
}

# In a submodule, the worktrees go beside the superproject, not into its
# working tree.
t_submodule_worktrees() {
	make_repo
	local app=$E2E_TMP/work/app
	git init -q -b main "$app"
	git -C "$app" -c protocol.file.allow=always submodule -q add "$repo" libs/core
	git -C "$app" commit -qm sub
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	(cd "$app/libs/core" && "$WORKREX" add -b x >/dev/null)
	[ -d "$E2E_TMP/work/app.libs.core__worktrees/x" ]
	[ -z "$(git -C "$app" status --porcelain)" ]
	(cd "$app/libs/core" && "$WORKREX" rm x >/dev/null)
}

# Twelve adds at once, a dashboard told of each: every record whole, every number its own.
t_adds_at_once() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: sleep 1000\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 80 24
	wait_for 'C-b \? help'
	local i pids=()
	for i in $(seq 1 12); do
		wrx add "c$i" >/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	[ "$(git -C "$repo" config --get-regexp '^workrex\.worktree\..*\.agent$' | wc -l)" -eq 12 ]
	git -C "$repo" config --get-regexp '^workrex\.worktree\..*\.number$' | awk '{print $2}' |
		sort -n | tr '\n' ' ' | grep -qx '2 3 4 5 6 7 8 9 10 11 12 13 '
	wait_for '^ 13 c'
	# The config held locked for a moment (by git, another add): add waits for it.
	: >"$repo/.git/config.lock"
	(sleep 1 && rm -f "$repo/.git/config.lock") &
	wrx add held >/dev/null
	[ "$(git -C "$repo" config workrex.worktree.held.number)" = 14 ]
	git -C "$repo" config workrex.worktree.held.agent >/dev/null
}

# What the screen and the commands say, read whole (issue 46, items 17 and
# 20): list in the sidebar's order, its columns lined up past a Greek
# branch; config check counts the errors it lists; close says what it did;
# at 80x24 the inside-tmux notice and a merge's outcome are not cut; watch's
# goodbye is a line of its own.
t_outcomes_read_whole() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add zz -b >/dev/null
	wrx add aa -b >/dev/null
	wrx add 'κλάδος' --name gr -b >/dev/null
	wrx list >"$E2E_TMP/list"
	python3 - "$E2E_TMP/list" <<-'PY'
		import sys
		rows = open(sys.argv[1], encoding="utf-8").read().splitlines()
		assert [r.split()[0] for r in rows] == ["HANDLE", "zz", "aa", "gr"], rows
		# Greek letters take one column each: the STATUS column starts at one place.
		at = {r.index(r.split()[2], len(r.split()[0]) + len(r.split()[1]) + 2) for r in rows}
		assert len(at) == 1, rows
	PY
	printf 'scrollback: lots\nnotify: loud\n' >"$E2E_TMP/bad.yaml"
	not wrx --config "$E2E_TMP/bad.yaml" config check 2>"$E2E_TMP/err"
	[ "$(grep -c '^error: ' "$E2E_TMP/err")" = 2 ]
	grep -q '^config check: not valid (2 errors, 0 warnings)' "$E2E_TMP/err"
	# As if in the user's own tmux (its C-b first): the notice is longer
	# than the line at 80 columns; cut, it says where it is whole, and C-b ~
	# (tmux's show-messages) shows it, the panes' rows left to the panes.
	tm new-session -d -x 80 -y 24 -c "$repo" \
		"env TMUX=/tmp/tmux-0/default,1,0 TERM=tmux-256color PATH='$PATH' $WORKREX$after_exit"
	tm set -g status off
	wait_for '^inside tmux, C-b is .*… \(C-b ~\)'
	prefix '~'
	wait_for '^[0-9:]{8} inside tmux, C-b is tmux.s prefix too: press C-b twice for workrex.s,$'
	wait_for '^ +or set keys\.prefix$'
	keys q
	wait_gone '^[0-9:]{8} inside tmux'
	wrx close aa | grep -qx 'closed aa: its panes ended, its worktree stays (workrex open aa)'
	# A merge that leaves the worktree: the whole outcome, on the screen and in the log.
	commit_in zz z.txt
	echo scratch >"$E2E_TMP/work/proj__worktrees/zz/scratch.txt"
	prefix :
	wait_for ':'
	tm send-keys -l 'merge --ignore-uncommitted zz'
	keys Enter
	wait_for 'merged zz into main: the worktree'
	prefix '~'
	wait_for '^[0-9:]{8} merged zz into main: the worktree'
	wait_for 'was not removed$'
	keys q
	grep -q 'said: merged zz into main: the worktree .* was not removed' "$XDG_STATE_HOME/workrex/workrex.log"
	# watch, left with q: its goodbye, then the shell's prompt, each on its line.
	tm split-window -v "env PS1='P\$ ' bash --norc"
	tm send-keys "clear; cd '$repo' && '$WORKREX' watch gr" Enter
	# Watching: gr's own screen (its prompt) in this pane, not the shell's.
	until_ok 10 in_output '^wrx\$' -- tm capture-pane -p
	tm send-keys q
	until_ok 10 in_output -x 'workrex: watch: detached from gr' -- tm capture-pane -p
	tm capture-pane -p | grep -qx 'P\$ *'
}

run_test "path prints a worktree; sync-files copies and links again" t_path_and_sync_files
run_test "in a submodule the worktrees go beside the superproject" t_submodule_worktrees
run_test "add origin/feature: the local branch feature, tracking it" t_add_remote_branch
run_test "a worktree deleted by hand: missing; rm and merge clean up, unmerged kept" t_worktree_deleted_by_hand
run_test "no surprises: nothing to merge while it runs, placed files, keys ask again" t_no_surprises
run_test "rebase onto main; a conflict or uncommitted work changes nothing" t_rebase
run_test "init writes a commented config that loads, uncommented too" t_init
run_test "completion scripts for bash, zsh and fish, loaded by each" t_completions
run_test "rename: worktree, branch, dashboard; refused while it runs" t_rename
run_test "twelve adds at once: every record whole, every number its own" t_adds_at_once
run_test "what the screen and the commands say, whole: list, check, close, merge, watch" t_outcomes_read_whole
