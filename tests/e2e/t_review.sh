#!/usr/bin/env bash
# Review (SPEC §10, issue 30): what an agent changed, from the command line
# and in the dashboard's review view (prefix D).
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
trap stop EXIT

git_env

# An agent with a commit, a staged file, an unstaged change, an untracked
# file, an untracked symlink and a file of escape sequences.
review_repo() {
	make_repo
	printf 'keep\n' >"$repo/b.txt"
	git -C "$repo" add b.txt && git -C "$repo" commit -qm b
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add feat >/dev/null
	wt=$E2E_TMP/work/proj__worktrees/feat
	echo committed >"$wt/a.txt"
	git -C "$wt" commit -qam "the commit"
	echo staged >"$wt/staged.txt"
	git -C "$wt" add staged.txt
	echo unstaged >>"$wt/b.txt"
	echo untracked >"$wt/new.txt"
	ln -s /etc/passwd "$wt/link"
	# OSC 52 (clipboard), a title, a DCS and a C1 CSI inside a file.
	printf 'osc52 \033]52;c;cHduZWQ=\007 title \033]0;PWNED\007 dcs \033P+q544e\033\\ c1 \302\233 end\n' \
		>"$wt/evil.txt"
}

t_diff_cli() {
	review_repo
	wrx diff feat --stat >"$E2E_TMP/stat"
	grep -qE '^ +\+1 +0  b.txt$' "$E2E_TMP/stat"
	grep -qE '^ +\+1 +0  staged.txt$' "$E2E_TMP/stat"
	grep -qE '^ +\+1 +0  new.txt$' "$E2E_TMP/stat"
	grep -qE '^ +\+1 +0  link$' "$E2E_TMP/stat"
	grep -qx '5 files, +5 -0' "$E2E_TMP/stat"
	# The commit is the branch's, not WIP's.
	not grep -q 'a.txt' "$E2E_TMP/stat"
	wrx diff feat --branch --stat | grep -qx '1 file, +1 -1'
	wrx diff feat --commits | grep -q '^    the commit$'
	wrx diff feat --json >"$E2E_TMP/json"
	python3 - "$E2E_TMP/json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["mode"] == "wip" and d["base"] == "main" and d["added"] == 5, d
assert {f["path"] for f in d["files"]} == {"b.txt", "staged.txt", "new.txt", "link", "evil.txt"}
EOF
	# A symlink is its target's name, never what it points to.
	wrx diff feat >"$E2E_TMP/diff"
	grep -qx '+/etc/passwd' "$E2E_TMP/diff"
	not grep -q '^+root:' "$E2E_TMP/diff"
	# On a terminal the file's escapes are text, coloured by git's kinds.
	(cd "$wt" && script -qfec "$WORKREX diff" /dev/null) >"$E2E_TMP/tty"
	not grep -aq $'\033]52;' "$E2E_TMP/tty"
	not grep -aq $'\033]0;PWNED' "$E2E_TMP/tty"
	not grep -aq $'\033P+q' "$E2E_TMP/tty"
	not grep -aq $'\302\233' "$E2E_TMP/tty"
	grep -aqF '+osc52 ^[]52;c;cHduZWQ=^G title ^[]0;PWNED^G dcs ^[P+q544e^[\ c1 <U+009B> end' \
		"$E2E_TMP/tty"
	# From inside the worktree, no handle needed; a pipe gets git's bytes.
	(cd "$wt" && "$WORKREX" diff --branch) | grep -qx '+committed'
	not wrx diff nosuch 2>"$E2E_TMP/err"
	grep -q nosuch "$E2E_TMP/err"
}

# The first row under the view's header: what the view scrolled to.
top_is() { screen | sed -n 2p | grep -qF -- "$1"; }

t_review_view() {
	review_repo
	# A second commit, on a file of its own: commits mode shows one at a time.
	echo second >"$wt/second.txt"
	git -C "$wt" add second.txt && git -C "$wt" commit -qm "the second" -- second.txt
	start_repo 120 30
	wait_for 'C-b \? help'
	# What workrex writes to its terminal, every byte.
	tm pipe-pane -o "cat >>'$E2E_TMP/outer.log'"
	prefix 2
	wait_for '^ 2 feat'
	prefix D
	wait_for 'review feat  \[wip\]  5 files \+5 -0'
	# The file list beside the diff, the untracked files as new.
	wait_for '^ \+1 -0 b.txt +│diff --git a/b.txt b/b.txt'
	screen | grep -q '│+unstaged'
	screen | grep -q '│+staged'
	# The escapes are text on the screen...
	wait_for '│\+osc52 \^\[\]52;c;cHduZWQ=\^G title \^\[\]0;PWNED\^G dcs \^\[P\+q544e\^\[\\ c1 <U\+009B> end'
	# ]: the next file at the top, and marked in the list; [ back; n: the next hunk.
	keys ']'
	until_ok 5 top_is '│diff --git a/staged.txt b/staged.txt'
	keys ']' ']'
	until_ok 5 top_is '│diff --git a/link b/link'
	keys '['
	until_ok 5 top_is '│diff --git a/evil.txt b/evil.txt'
	keys g n
	until_ok 5 top_is '│@@ -1 +1,2 @@'
	keys n
	until_ok 5 top_is '│@@ -0,0 +1 @@'
	# o on a hunk's header is on its first change; on a file's header, on its first hunk's.
	keys g
	until_ok 5 top_is '│diff --git a/b.txt b/b.txt'
	keys o
	wait_for 'comment on b.txt:2:'
	keys Escape
	wait_gone 'comment on'
	keys ']' o
	wait_for 'comment on staged.txt:1:'
	keys Escape
	wait_gone 'comment on'
	# Tab: the branch, then its commits.
	keys Tab
	wait_for 'review feat  \[branch\]  2 files \+2 -1'
	screen | grep -q '│-one'
	screen | grep -q '│+committed'
	keys Tab
	wait_for 'review feat  \[commits 1/2\]  1 file'
	wait_for '│    the commit'
	screen >"$E2E_TMP/screen"
	not grep -q 'the second' "$E2E_TMP/screen"
	# l: the next commit, alone; h: back.
	keys l
	wait_for '\[commits 2/2\]'
	until_ok 5 top_is '│commit '
	wait_for '│    the second'
	wait_for '^ \+1 -0 second.txt'
	screen >"$E2E_TMP/screen"
	not grep -q '│    the commit' "$E2E_TMP/screen"
	keys h
	wait_for '\[commits 1/2\]'
	# What is staged (what c commits): staged.txt alone. Then / searches.
	keys Tab
	wait_for '\[staged\]  1 file \+1 -0'
	until_ok 5 top_is '│diff --git a/staged.txt b/staged.txt'
	keys Tab
	wait_for '\[wip\].*5 files'
	keys /
	wait_for 'search:'
	tm send-keys -l untracked
	keys Enter
	until_ok 5 top_is '│+untracked'
	keys q
	wait_gone 'review feat'
	wait_for 'C-b \? help'
	tm pipe-pane
	# ...and never reached the outer terminal as sequences.
	test -s "$E2E_TMP/outer.log"
	not grep -aq $'\033]52;' "$E2E_TMP/outer.log"
	not grep -aq $'\033]0;PWNED' "$E2E_TMP/outer.log"
	not grep -aq $'\033P+q' "$E2E_TMP/outer.log"
	not grep -aq $'\302\233' "$E2E_TMP/outer.log"
}

# An agent with nothing to show, in every mode: each key of the view says
# so or does nothing (o on no line killed the dashboard once).
t_review_empty() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add quiet >/dev/null
	start_repo 80 24
	wait_for 'C-b \? help'
	prefix 2
	wait_for '^ 2 quiet'
	prefix D
	local mode
	for mode in wip branch commits staged; do
		wait_for "review quiet  \[$mode\].*no changes"
		keys o
		wait_for 'a comment goes on a hunk'
		keys n N ']' '[' h l j k g G Space C-d C-u S
		keys /
		wait_for 'search:'
		tm send-keys -l nothing
		keys Enter
		wait_for "review quiet  \[$mode\].*no changes"
		keys Tab
	done
	wait_for 'review quiet  \[wip\].*no changes'
	keys q
	wait_gone 'review quiet'
	wait_for 'C-b \? help'
	[ -n "$(workrex_pid)" ]
}

# review.pager: the diff coloured by a real filter, line for line (git's
# contrib diff-highlight, as Debian ships it; delta is not in Debian 12).
# A filter that changes the number of lines is dropped, with a message; one
# that writes sequences of its own has its SGR read and nothing else.
t_review_pager() {
	review_repo
	local dh=/usr/share/doc/git/contrib/diff-highlight
	{ echo '#!/usr/bin/perl'; cat "$dh/DiffHighlight.pm" "$dh/diff-highlight.perl"; } \
		>"$E2E_TMP/diff-highlight"
	chmod +x "$E2E_TMP/diff-highlight"
	echo 'hello world' >"$wt/words.txt"
	git -C "$wt" add words.txt && git -C "$wt" commit -qm words -- words.txt
	echo 'hello there' >"$wt/words.txt"
	printf 'agent: bash\nreview:\n  pager: %s\n' "$E2E_TMP/diff-highlight" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 120 30
	wait_for 'C-b \? help'
	tm pipe-pane -o "cat >>'$E2E_TMP/outer.log'"
	prefix 2
	wait_for '^ 2 feat'
	prefix D
	wait_for 'review feat  \[wip\]  6 files'
	keys /
	wait_for 'search:'
	tm send-keys -l 'hello there'
	keys Enter
	until_ok 5 top_is '│+hello there'
	# The changed word in reverse video, on git's green: diff-highlight's mark.
	until_ok 5 in_output $'│\033\\[32m+hello \033\\[7m\\?\\(32m\\)\\?there' -- tm capture-pane -p -e
	# The escapes of evil.txt are still text: the pager's line is not the file's bytes.
	keys g
	wait_for '│\+osc52 \^\[\]52;c;cHduZWQ=\^G title'
	keys q
	wait_gone 'review feat'
	# A filter that drops a line: told, and git's colours instead.
	printf 'agent: bash\nreview:\n  pager: sed 1d\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wait_for 'config reloaded'
	prefix D
	wait_for 'review.pager changed the number of lines; git.s colours instead'
	wait_for '│\+hello there'
	keys q
	# A hostile one: its own OSC 52, title and DCS before every line; only SGR is read.
	cat >"$E2E_TMP/hostile-pager" <<'EOF'
#!/bin/sh
exec sed 's/^/\x1b]52;c;cGFnZXI=\x07\x1b]0;PAGER\x07\x1bP+q\x1b\\\x1b[31m/'
EOF
	chmod +x "$E2E_TMP/hostile-pager"
	echo x | "$E2E_TMP/hostile-pager" | grep -aq $'\033]52;c;cGFnZXI=\a\033]0;PAGER'
	printf 'agent: bash\nreview:\n  pager: %s\n' "$E2E_TMP/hostile-pager" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	wait_for 'config reloaded'
	prefix D
	wait_for 'review feat  \[wip\]  6 files'
	wait_for '│diff --git a/b.txt b/b.txt'
	keys q
	wait_gone 'review feat'
	tm pipe-pane
	test -s "$E2E_TMP/outer.log"
	not grep -aq $'\033]52;' "$E2E_TMP/outer.log"
	not grep -aq 'PAGER' "$E2E_TMP/outer.log"
	not grep -aq $'\033P+q' "$E2E_TMP/outer.log"
}

# Patch mode stages what git add -p stages for the same answers.
t_patch_mode() {
	make_repo
	seq 1 40 >"$repo/n.txt"
	seq 1 12 >"$repo/m.txt"
	git -C "$repo" add . && git -C "$repo" commit -qm numbers
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add feat >/dev/null
	wt=$E2E_TMP/work/proj__worktrees/feat
	# n.txt: 3 and 9 one hunk (s splits it), 20 one, 33 and 36 one; m.txt one.
	sed -i -e 's/^3$/three/' -e 's/^9$/nine/' -e 's/^20$/twenty/' -e 's/^33$/x/' -e 's/^36$/y/' \
		"$wt/n.txt"
	sed -i 's/^6$/six/' "$wt/m.txt"
	echo new >"$wt/untracked.txt"
	# git add -p's answers: s (m.txt's hunk cannot be split) y; s y n (3
	# staged, 9 not); y (20); n (33 and 36). The view gets the same below.
	printf 's\ny\ns\ny\nn\ny\nn\n' | git -C "$wt" add -p >/dev/null 2>&1
	git -C "$wt" diff --cached >"$E2E_TMP/add-p"
	[ "$(grep -c '^@@' "$E2E_TMP/add-p")" -ge 2 ]
	git -C "$wt" reset -q
	start_repo 120 30
	wait_for 'C-b \? help'
	prefix 2
	wait_for '^ 2 feat'
	prefix D
	wait_for 'review feat  \[wip\]'
	keys a
	wait_for 'patch feat  \[1/4\]  m.txt  0 staged'
	screen | grep -qx -- '-6 *'
	screen | grep -qx -- '+six *'
	keys s
	wait_for 'patch feat  \[1/4\]'
	keys y
	wait_for 'patch feat  \[2/4\]  n.txt  1 staged'
	keys s
	wait_for 'patch feat  \[2/5\]'
	keys y n
	wait_for '\[4/5\]  n.txt  2 staged'
	# u takes the last answer back; the same answer again.
	keys u
	wait_for '\[3/5\]  n.txt  2 staged'
	keys n y
	wait_for '\[5/5\]  n.txt  3 staged'
	keys n
	wait_for 'feat: 3 hunks staged'
	wait_for 'review feat  \[wip\]'
	git -C "$wt" diff --cached >"$E2E_TMP/ours"
	diff -u "$E2E_TMP/add-p" "$E2E_TMP/ours"
	# q leaves with what was answered; nothing answered stages nothing.
	git -C "$wt" reset -q
	keys a
	wait_for 'patch feat  \[1/4\]'
	keys q
	wait_for 'feat: nothing staged'
	[ -z "$(git -C "$wt" diff --cached)" ]
}

# c commits what is staged with the message typed; m merges, asked with what it brings.
t_commit_and_merge() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add feat >/dev/null
	wt=$E2E_TMP/work/proj__worktrees/feat
	echo two >>"$wt/a.txt"
	git -C "$wt" commit -qam "first"
	echo staged >"$wt/s.txt"
	git -C "$wt" add s.txt
	start_repo 120 30
	wait_for 'C-b \? help'
	prefix 2
	wait_for '^ 2 feat'
	prefix D
	wait_for 'review feat  \[wip\]  1 file \+1 -0'
	keys c
	wait_for 'commit message:'
	tm send-keys -l 'from the review'
	keys Enter
	wait_for 'feat: committed \[feat [0-9a-f]+\] from the review'
	wait_for 'review feat  \[wip\]  0 files'
	[ "$(git -C "$wt" log -1 --format=%s)" = 'from the review' ]
	[ -z "$(git -C "$wt" status --porcelain)" ]
	keys m
	wait_for 'merge feat and remove its worktree\? \(y/n, q: to the merge queue\)  feat into main: 2 files changed'
	keys y
	wait_for 'merged feat'
	git -C "$repo" log --oneline main | grep -q 'from the review'
	# review.commit: agent asks the agent instead (review.commit_prompt).
	printf 'agent: bash\nreview:\n  commit: agent\n  commit_prompt: echo asked-to-$((40 + 2))\n' \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	wait_for 'config reloaded'
	wrx add other >/dev/null
	wait_for '^ 2 other'
	prefix 2
	prefix D
	wait_for 'review other  \[wip\]'
	# Not while it has not said it waits at its input: typed into whatever
	# runs there, the prompt would go to that (issue 46).
	keys c
	wait_for 'other has not said it waits for input \(no status\)'
	keys q
	wrx send other 'workrex set-status waiting'
	wait_for '^ 2 ◆ other'
	prefix D
	wait_for 'review other  \[wip\]'
	keys c
	wait_for 'other: sent, and it took it'
	keys q
	wait_for '│asked-to-42'
}

# PRs against a bare repository on disk as origin (the pushes are real) and
# a recorded gh (tests/e2e/fake_gh.py): GitHub cannot be reached from here.
pr_repo() {
	make_repo
	rm -rf "$E2E_TMP/origin.git" "$E2E_TMP/contrib" "$E2E_TMP/gh.json" "$E2E_TMP/gh.log"
	git init -q --bare "$E2E_TMP/origin.git"
	git -C "$repo" remote add origin "$E2E_TMP/origin.git"
	git -C "$repo" push -q origin main
	mkdir -p "$E2E_TMP/bin" "$XDG_CONFIG_HOME/workrex"
	ln -sf "$here/fake_gh.py" "$E2E_TMP/bin/gh"
	export PATH="$E2E_TMP/bin:$PATH" FAKE_GH_STATE=$E2E_TMP/gh.json FAKE_GH_LOG=$E2E_TMP/gh.log
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
}

# add --issue against a recorded gh (GitHub cannot be reached from here):
# the branch named from the issue, its title and body the agent's prompt,
# and the PR that agent opens closes the issue.
t_add_from_issue() {
	pr_repo
	python3 - "$FAKE_GH_STATE" <<-'EOF'
		import json, sys
		json.dump({"next": 1, "prs": [], "issues": [{"number": 7,
		    "title": "Login rejects e-mails with a plus sign!",
		    "body": "Steps: sign up as a+b@example.com.\nExpected: accepted.",
		    "url": "https://github.example/o/r/issues/7"},
		    {"number": 9, "title": "Dark mode", "body": "", "url": "u9"}]}, open(sys.argv[1], "w"))
	EOF
	local w=$E2E_TMP/work/proj__worktrees
	wrx add --issue 7 -b >"$E2E_TMP/out"
	wrx list -q | grep -qx '7-login-rejects-e-mails-with-a-plus-sign' || { wrx list >&2; return 1; }
	local h=7-login-rejects-e-mails-with-a-plus-sign p
	p=$w/$h/.workrex/PROMPT-$h.md
	head -1 "$p" | grep -qx '# Login rejects e-mails with a plus sign!'
	grep -q 'GitHub issue #7: https://github.example/o/r/issues/7' "$p"
	grep -q 'Steps: sign up as a+b@example.com.' "$p"
	wrx list --json | grep -q '"issue":7'
	grep -q '"argv": \["issue", "view", "7", "--json", "number,title,body,url"\]' "$FAKE_GH_LOG"
	# A branch named by the user, and -p's text after the issue's.
	wrx add --issue 7 plus-fix -p 'Add a test first.' -b >/dev/null
	grep -q 'Steps: sign up' "$w/plus-fix/.workrex/PROMPT-plus-fix.md"
	tail -1 "$w/plus-fix/.workrex/PROMPT-plus-fix.md" | grep -qx 'Add a test first.'
	# Its PR: titled as the issue, and closing it.
	echo fix >>"$w/plus-fix/a.txt"
	git -C "$w/plus-fix" commit -qam "login: accept plus signs"
	wrx pr plus-fix >/dev/null
	python3 - "$E2E_TMP/gh.log" <<-'EOF'
		import json, sys
		c = [json.loads(l)["argv"] for l in open(sys.argv[1]) if '"create"' in l][-1]
		assert c[c.index("--title") + 1] == "Login rejects e-mails with a plus sign!", c
		assert "Closes #7" in c[c.index("--body") + 1], c
	EOF
	# No such issue; no gh: said, and nothing made.
	not wrx add --issue 8 -b 2>"$E2E_TMP/err"
	grep -q "workrex: add: --issue 8: gh exited 1: GraphQL: Could not resolve" "$E2E_TMP/err"
	# (PATH: the tests' own bin without gh, and the system's, which has none)
	rm "$E2E_TMP/bin/gh"
	not command -v gh
	not wrx add --issue 7 -b 2>"$E2E_TMP/err" || { echo "  no gh, and it made one" >&2; return 1; }
	grep -q 'gh is not installed' "$E2E_TMP/err" || { cat "$E2E_TMP/err" >&2; return 1; }
	[ "$(wrx list -q | wc -l)" -eq 2 ]
	not wrx add --issue 7 --pr 3 2>/dev/null
	# In the dashboard, by keys: C-b n, then #9 for the branch.
	ln -sf "$here/fake_gh.py" "$E2E_TMP/bin/gh"
	start_repo 100 30
	wait_for 'C-b \? help'
	prefix n
	wait_for 'new agent, branch \(or #N, a GitHub issue; # Tab lists them\):'
	# # and Tab: the open issues, as gh lists them; 9 and Tab: that one.
	tm send-keys -l '#'
	keys Tab
	wait_for '#7 Login rejects e-mails with a plus sign!  #9 Dark mode'
	tm send-keys -l '9'
	keys Tab
	wait_for '^> #9 '
	keys Enter
	until_ok 30 eval 'wrx list -q | grep -qx 9-dark-mode' || { screen >&2; return 1; }
	# (Listed once its record is written; its prompt comes a moment after.)
	until_ok 10 test -f "$w/9-dark-mode/.workrex/PROMPT-9-dark-mode.md"
	head -1 "$w/9-dark-mode/.workrex/PROMPT-9-dark-mode.md" | grep -qx '# Dark mode'
	wait_for ' 9-dark-mode'
}

t_pull_requests() {
	pr_repo
	local w=$E2E_TMP/work/proj__worktrees
	wrx add feat -p $'Fix the login form\n\nIt rejects valid emails.' >/dev/null
	echo fix >>"$w/feat/a.txt"
	git -C "$w/feat" commit -qam "login: accept plus signs"
	wrx pr feat --draft >"$E2E_TMP/out"
	grep -qx 'feat: pushed to origin, draft https://github.example/o/r/pull/1' "$E2E_TMP/out"
	[ "$(git -C "$E2E_TMP/origin.git" rev-parse refs/heads/feat)" = "$(git -C "$w/feat" rev-parse HEAD)" ]
	python3 - "$E2E_TMP/gh.log" <<-'EOF'
		import json, sys
		calls = [json.loads(l)["argv"] for l in open(sys.argv[1])]
		create = [c for c in calls if c[:2] == ["pr", "create"]]
		assert len(create) == 1, calls
		c = create[0]
		assert c[2:10] == ["--head", "feat", "--base", "main", "--title", "Fix the login form",
		                   "--body", c[9]] and c[10:] == ["--draft"], c
		assert "It rejects valid emails." in c[9] and "- login: accept plus signs" in c[9], c[9]
	EOF
	# Two more: one with a PR, one never pushed.
	wrx add other >/dev/null
	echo other >"$w/other/o.txt"
	git -C "$w/other" add o.txt && git -C "$w/other" commit -qm other
	wrx pr other | grep -q 'pull/2$'
	wrx add third >/dev/null
	# Their checks as GitHub would give them: feat's passed, other's failed.
	python3 - "$FAKE_GH_STATE" <<-'EOF'
		import json, sys
		s = json.load(open(sys.argv[1]))
		s["prs"][0]["statusCheckRollup"] = [{"name": "ci", "status": "COMPLETED", "conclusion": "SUCCESS"}]
		s["prs"][1]["statusCheckRollup"] = [{"name": "ci", "status": "COMPLETED", "conclusion": "SUCCESS"},
		                                    {"name": "lint", "status": "COMPLETED", "conclusion": "FAILURE"}]
		json.dump(s, open(sys.argv[1], "w"))
	EOF
	wrx list --pr >"$E2E_TMP/list"
	grep -qE '^feat +feat +#1 +OPEN +✓ +https://github.example/o/r/pull/1$' "$E2E_TMP/list"
	grep -qE '^other +other +#2 +OPEN +✗ ' "$E2E_TMP/list"
	grep -qE '^third +third +- +- +- *$' "$E2E_TMP/list"
	wrx list --pr --json | python3 -c '
import json, sys
d = {a["handle"]: a["pr"] for a in json.load(sys.stdin)}
assert d["feat"] == {"number": 1, "state": "OPEN", "checks": "✓", "url": "https://github.example/o/r/pull/1"}, d
assert d["other"]["checks"] == "✗" and d["third"] is None, d'
	# The sidebar follows them, asked of gh by a child (every 0.3 s here).
	export WORKREX_PR_POLL_MS=300
	start_repo 100 30
	wait_for 'C-b \? help'
	wait_for 'feat .*#1✓'
	wait_for 'other .*#2✗'
	screen >"$E2E_TMP/screen"
	grep -q 'third' "$E2E_TMP/screen"
	not grep -q 'third .*#' "$E2E_TMP/screen"
	# Merged on GitHub: the sidebar says so; remove --gone asks once, and
	# removes exactly that one.
	python3 -c 'import json,sys; p=sys.argv[1]; s=json.load(open(p)); s["prs"][0]["state"]="MERGED"; json.dump(s,open(p,"w"))' "$FAKE_GH_STATE"
	wait_for 'feat .*#1 merged'
	echo n | wrx remove --gone >"$E2E_TMP/out"
	grep -qx '  feat: its PR #1 is merged' "$E2E_TMP/out"
	grep -q 'nothing removed' "$E2E_TMP/out"
	wrx list -q | grep -qx feat
	echo y | wrx remove --gone >"$E2E_TMP/out"
	grep -qx 'remove it, its worktree and branch? (y/n) y' "$E2E_TMP/out"
	grep -qx 'removed feat' "$E2E_TMP/out"
	[ "$(wrx list -q | sort | tr '\n' ' ')" = 'other third ' ]
	# Its branch deleted upstream: gone too. R in the overview asks once, with the list.
	git -C "$E2E_TMP/origin.git" branch -qD other
	wrx remove --gone -n >"$E2E_TMP/out"
	grep -qx '  other: its branch is gone from origin' "$E2E_TMP/out"
	wrx list -q | grep -qx other
	prefix w
	wait_for 'R remove gone'
	keys R
	wait_for 'remove other: its branch is gone from origin\? \(y/n\)'
	keys y
	wait_for 'removed other'
	[ "$(wrx list -q | tr '\n' ' ')" = 'third ' ]
	# add --pr: a contributor's PR, its head branch fetched into a new agent.
	git clone -q -b main "$E2E_TMP/origin.git" "$E2E_TMP/contrib"
	git -C "$E2E_TMP/contrib" checkout -qb contrib
	echo theirs >"$E2E_TMP/contrib/c.txt"
	git -C "$E2E_TMP/contrib" add c.txt && git -C "$E2E_TMP/contrib" commit -qm theirs
	git -C "$E2E_TMP/contrib" push -q origin contrib
	python3 -c 'import json,sys; p=sys.argv[1]; s=json.load(open(p)); s["prs"].append({"number": 7, "headRefName": "contrib", "state": "OPEN", "url": "u", "statusCheckRollup": []}); json.dump(s,open(p,"w"))' "$FAKE_GH_STATE"
	wrx add --pr https://github.example/o/r/pull/7 >/dev/null
	[ "$(cat "$w/contrib/c.txt")" = theirs ]
	wait_for 'contrib .*#7'
	[ "$(git -C "$w/contrib" rev-parse --abbrev-ref HEAD)" = contrib ]
	not wrx add --pr 99 2>"$E2E_TMP/err"
	grep -q 'no pull requests found' "$E2E_TMP/err"
}

# review.remote from a cloned project's file, and a branch's remote in git's
# config, never reach git as an option (--receive-pack=, --upload-pack=
# run their value on the host): pr, add --pr and remove --gone run nothing.
t_review_remote_never_an_option() {
	pr_repo
	local w=$E2E_TMP/work/proj__worktrees ran=$E2E_TMP/ran
	printf 'review:\n  remote: "--receive-pack=touch %s-pr;true"\n' "$ran" >"$repo/.workrex.yaml"
	wrx add feat >/dev/null 2>&1
	echo fix >>"$w/feat/a.txt"
	git -C "$w/feat" commit -qam fix
	# Not trusted: the project's remote is not taken (said), origin is.
	wrx pr feat >"$E2E_TMP/out" 2>"$E2E_TMP/err"
	grep -q "'review.remote' goes to git push, fetch and ls-remote, as the remote, and this project config is not trusted" "$E2E_TMP/err"
	grep -q '^feat: pushed to origin' "$E2E_TMP/out"
	[ ! -e "$ran-pr" ] || { echo "  pr ran the project's command" >&2; return 1; }
	# add --pr, through --upload-pack.
	printf 'review:\n  remote: "--upload-pack=touch %s-add;true"\n' "$ran" >"$repo/.workrex.yaml"
	git -C "$repo" push -q origin main:contrib
	python3 -c 'import json,sys; p=sys.argv[1]; s=json.load(open(p)); s["prs"].append({"number": 7, "headRefName": "contrib", "state": "OPEN", "url": "u", "statusCheckRollup": []}); json.dump(s,open(p,"w"))' "$FAKE_GH_STATE"
	wrx add --pr 7 >/dev/null 2>&1
	[ ! -e "$ran-add" ] || { echo "  add --pr ran the project's command" >&2; return 1; }
	# Trusted, or the user's own file: refused as an option, said; nothing runs.
	rm "$repo/.workrex.yaml"
	printf 'agent: bash\nreview:\n  remote: "--receive-pack=touch %s-own;true"\n' "$ran" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	not wrx pr feat 2>"$E2E_TMP/err"
	grep -q "review.remote: '--receive-pack=touch $ran-own;true' begins with '-'" "$E2E_TMP/err"
	[ ! -e "$ran-own" ] || { echo "  pr ran the user's option" >&2; return 1; }
	# remove --gone asks git about the remote git's config names for the branch.
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	git -C "$repo" config branch.feat.remote "--upload-pack=touch $ran-gone;true"
	wrx remove --gone -n >/dev/null 2>&1 || :
	[ ! -e "$ran-gone" ] || { echo "  remove --gone ran the branch's remote" >&2; return 1; }
}

# gh missing or failing: said once, never "nothing found" (issue 46).
# remove --gone cannot tell and says so, exit 1; list --pr says gh's error
# once and ? for each; pr pushes nothing before it finds gh, and when the
# PR fails after the push it says the push happened.
t_gh_missing_or_failing() {
	pr_repo
	local w=$E2E_TMP/work/proj__worktrees
	wrx add one >/dev/null
	wrx add two >/dev/null
	echo fix >>"$w/one/a.txt"
	git -C "$w/one" commit -qam fix
	# gh that fails (an expired login, no network).
	rm "$E2E_TMP/bin/gh" # the recorded gh's link: not written through
	printf '#!/bin/sh\necho "HTTP 401: Bad credentials" >&2\nexit 1\n' >"$E2E_TMP/bin/gh"
	chmod +x "$E2E_TMP/bin/gh"
	not wrx remove --gone -n >"$E2E_TMP/out" 2>"$E2E_TMP/err"
	not grep -q "no agent's work is gone upstream" "$E2E_TMP/out"
	grep -q 'could not tell for 2 of 2 agents (gh exited 1: HTTP 401: Bad credentials): nothing removed' "$E2E_TMP/err"
	not wrx list --pr >"$E2E_TMP/out" 2>"$E2E_TMP/err"
	[ "$(grep -c 'Bad credentials' "$E2E_TMP/err")" = 1 ]
	grep -qE '^one +one +\? +\? +\? *$' "$E2E_TMP/out"
	grep -qE '^two +two +\? +\? +\? *$' "$E2E_TMP/out"
	# The push happens, the PR does not: both said.
	not wrx pr one 2>"$E2E_TMP/err"
	grep -q 'pushed one to origin (its upstream set), but the PR was not opened: gh exited 1: HTTP 401' "$E2E_TMP/err"
	git -C "$E2E_TMP/origin.git" rev-parse -q --verify refs/heads/one >/dev/null
	# gh not installed: nothing pushed.
	rm "$E2E_TMP/bin/gh"
	local path=$PATH
	export PATH=$E2E_TMP/bin:/usr/sbin:/usr/bin:/sbin:/bin
	not command -v gh >/dev/null
	echo more >>"$w/two/a.txt"
	git -C "$w/two" commit -qam more
	not wrx pr two 2>"$E2E_TMP/err"
	grep -q 'gh is not installed: the GitHub CLI (Debian: apt install gh); nothing pushed' "$E2E_TMP/err"
	not git -C "$E2E_TMP/origin.git" rev-parse -q --verify refs/heads/two >/dev/null
	not git -C "$repo" config branch.two.remote >/dev/null
	export PATH=$path
}

# review --comment from the command line: only on the agent's changes (a
# file among them, a line in one of its hunks); a waiting comment listed,
# changed and deleted, the sidebar's count following (issue 46).
t_review_comments_cli() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	local w=$E2E_TMP/work/proj__worktrees/rv
	seq 1 20 >"$repo/long.txt"
	git -C "$repo" add long.txt && git -C "$repo" commit -qm long
	wrx add rv -b >/dev/null
	sed -i 's/^15$/fifteen/' "$w/long.txt"
	echo new >"$w/notes.md"
	start_repo 140 40
	wait_for '^ 2 rv'
	not wrx review rv --comment nosuch.txt 'about nothing' 2>"$E2E_TMP/err"
	grep -q "nosuch.txt is not among rv's changes (workrex diff rv --stat lists them)" "$E2E_TMP/err"
	not wrx review rv --comment long.txt:2 'far from it' 2>"$E2E_TMP/err"
	grep -q "long.txt:2 is in none of rv's hunks: comment on a changed line, or on the file (long.txt alone)" "$E2E_TMP/err"
	[ "$(wrx review rv)" = 'no comment waits for rv' ]
	wrx review rv --comment long.txt:15 'spell it as a number' | grep -q '^rv: 1 comment waits for it'
	wrx review rv --comment notes.md 'say what it is for' | grep -q '^rv: 2 comments wait for it'
	wait_for '^ 2 .*rv .*✎2'
	wrx review rv >"$E2E_TMP/list"
	grep -qx '1. long.txt:15  spell it as a number' "$E2E_TMP/list"
	grep -qx '2. notes.md  say what it is for' "$E2E_TMP/list"
	wrx review rv --edit 1 'write 15, the digits' | grep -qx 'changed comment 1; rv: 2 comments wait for it'
	wrx review rv | grep -qx '1. long.txt:15  write 15, the digits'
	wrx review rv --delete 2 | grep -qx 'deleted comment 2; rv: 1 comment waits for it'
	wait_for '^ 2 .*rv .*✎1'
	not wrx review rv --delete 7 2>"$E2E_TMP/err"
	grep -q 'rv has no comment 7 waiting (workrex review rv lists them)' "$E2E_TMP/err"
	not wrx review rv --edit 1 '' 2>/dev/null
	wrx review rv --delete 1 >/dev/null
	wait_gone '✎'
}

# The review view at 80x24 (issue 46): its keys a ? away (the header has
# no room for them all); two files of one name told apart by their paths;
# a line a comment waits on marked; a long line read sideways; c with
# nothing staged says so and asks nothing.
t_review_at_80x24() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	local wt=$E2E_TMP/work/proj__worktrees/rv
	wrx add rv -b >/dev/null
	mkdir -p "$wt/src/core" "$wt/src/ui"
	echo core >"$wt/src/core/input.c"
	echo ui >"$wt/src/ui/input.c"
	printf 'short\n%s THE-END\n' "$(printf 'long%.0s ' $(seq 1 30))" >"$wt/wide.txt"
	wrx review rv --comment src/ui/input.c:1 'why ui here?' >/dev/null
	start_repo 80 24
	wait_for '^ 2 rv'
	prefix 2
	prefix D
	wait_for 'review rv  \[wip\]  3 files'
	wait_for '\? keys'
	# Paths, not two rows of "input.c".
	wait_for '^ \+1 -0 src/core/input\.c'
	wait_for '^ \+1 -0 src/ui/input\.c'
	# The whole diff fits the screen (19 lines): the commented line, marked.
	until_ok 5 in_output -E '^ .*│\+ui +✎' -- screen || { screen >&2; return 1; }
	# Sideways: the end of the long line comes into view.
	until_ok 5 in_output '│+long long' -- screen
	not in_output 'THE-END' -- screen
	keys Right Right Right Right Right Right Right Right Right Right Right Right Right Right
	wait_for 'THE-END'
	keys '<' '<' '<' '<' '<' '<' '<' '<' '<' '<' '<' '<' '<' '<'
	wait_gone 'THE-END'
	# Nothing staged: said, no message asked.
	keys c
	wait_for 'rv: nothing staged to commit'
	not in_output 'commit message:' -- screen
	keys '?'
	wait_for '^Tab +next mode: wip, branch, commits, staged'
	keys q
	wait_for 'review rv'
	keys q
	wait_gone 'review rv'
}

run_test "diff: WIP with untracked files, branch, commits, --stat and --json" t_diff_cli
run_test "review view: files and diff, hunks, modes, search; escapes drawn as text" t_review_view
run_test "review view with nothing to show: every key in every mode, no crash" t_review_empty
run_test "review.pager colours the diff line for line; a filter that breaks lines is dropped" t_review_pager
run_test "patch mode: the index git add -p leaves for the same answers" t_patch_mode
run_test "c commits what is staged; m merges after the preview; review.commit: agent" t_commit_and_merge
run_test "the review view at 80x24: ? keys, paths, comment marks, sideways, c with nothing staged" t_review_at_80x24
run_test "pr pushes and opens it (recorded gh); list --pr; remove --gone; add --pr" t_pull_requests
run_test "add --issue 7 (recorded gh): branch and prompt from the issue; its PR closes it" t_add_from_issue
run_test "gh missing or failing: said once; remove --gone cannot tell; pr pushes nothing first" t_gh_missing_or_failing
run_test "review --comment only on its changes; a waiting comment listed, edited, deleted" t_review_comments_cli
run_test "review.remote or a branch's remote that git would read as an option runs nothing" t_review_remote_never_an_option
