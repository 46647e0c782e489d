#!/usr/bin/env bash
# The real Claude Code (from the npm registry, cached under
# /var/cache/workrex-test/npm), offline: in a network namespace of its own
# (loopback only), its API pointed at a closed loopback port. Its input box
# comes up without a network; there, C-b p's pasted path becomes its image
# attachment, and `send` is submitted (its screen answers Enter).
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
need_x
trap 'stop_x; stop' EXIT
git_env

CLAUDE_VERSION=2.1.197
NPM_DIR=/var/cache/workrex-test/npm
for tool in npm unshare; do
	command -v "$tool" >/dev/null || { echo "not ok - agent CLIs: $tool is required but not installed"; exit 1; }
done
if ! [ -x "$NPM_DIR/node_modules/.bin/claude" ] ||
	! grep -q "\"version\": \"$CLAUDE_VERSION\"" "$NPM_DIR/node_modules/@anthropic-ai/claude-code/package.json"; then
	mkdir -p "$NPM_DIR"
	timeout 600 npm install --no-audit --no-fund --prefix "$NPM_DIR" \
		"@anthropic-ai/claude-code@$CLAUDE_VERSION" >"$E2E_TMP/npm.log" 2>&1 ||
		{ echo "not ok - agent CLIs: npm install of Claude Code failed:"; tail -5 "$E2E_TMP/npm.log"; exit 1; }
fi

t_claude_takes_paste_and_send() {
	make_repo
	start_x
	"$here/make_png.py" "$E2E_TMP/shot.png" 5000
	clip "$E2E_TMP/shot.png" image/png
	local w=$E2E_TMP/work/proj__worktrees/cc
	# Its first run's questions answered as a user would have: onboarding,
	# the API key, trust of the worktree.
	cat >"$HOME/.claude.json" <<-EOF
		{"hasCompletedOnboarding": true,
		 "customApiKeyResponses": {"approved": ["sk-ant-offline"], "rejected": []},
		 "projects": {"$w": {"hasTrustDialogAccepted": true}}}
	EOF
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: claude\npanes:\n  - command: <agent>\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	export PATH="$NPM_DIR/node_modules/.bin:$PATH" ANTHROPIC_API_KEY=sk-ant-offline
	export ANTHROPIC_BASE_URL=http://127.0.0.1:9 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1
	export DISABLE_ERROR_REPORTING=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
	# The dashboard, its keepers and Claude in a network namespace with only loopback.
	tm new-session -d -x 160 -y 40 -c "$repo" \
		"unshare -n sh -c 'ip link set lo up; exec env TERM=tmux-256color PATH=\"$PATH\" $WORKREX'$after_exit"
	tm set -g status off
	wait_for 'C-b \? help'
	wrx add cc >/dev/null
	prefix z
	wait_for '│ *❯' 60
	prefix p
	wait_for '\[Image #1\]' 20
	# The attachment is the file workrex staged, byte for byte.
	cmp "$E2E_TMP/shot.png" "$(ls "$w"/.workrex/tmp/clipboard-*.png)"
	# send: submitted with the image (in its transcript, the input box
	# empty again), and Claude asks its API: loopback's closed port.
	wrx send cc 'describe the image'
	wait_for '│❯ \[Image #1\]describe the image' 20
	wait_for '⎿.*\[Image #1\]'
	wait_for 'Unable to connect to API \(ConnectionRefused\)' 30
	wait_for '│❯.{0,2}$'
}

run_test "Claude Code (offline): C-b p's path is its image attachment; send is submitted" t_claude_takes_paste_and_send
