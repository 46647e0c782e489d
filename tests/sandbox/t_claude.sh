#!/usr/bin/env bash
# The real Claude Code (the npm cache the tests keep, offline: its API at a
# closed loopback port) in a sandbox, as root when the tests are: it comes
# up with no question in a new worktree of a project the user trusted,
# with the user's settings (workrex's status hooks in them report from
# inside) and API-key approval, keeps its transcript in its own config
# dir, and leaves every byte of the host's Claude Code files as it was.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../e2e/clis.sh"
install_agent_clis || exit 1

t_real_claude_in_a_sandbox() {
	make_repo
	local root
	root=$(cd "$repo" && pwd -P)
	mkdir -p "$HOME/.claude/projects/-host-project"
	echo '{"type":"user","message":"HOST-TRANSCRIPT"}' >"$HOME/.claude/projects/-host-project/h.jsonl"
	echo '{"display":"HOST-PROMPT"}' >"$HOME/.claude/history.jsonl"
	cat >"$HOME/.claude.json" <<-JSON
		{"hasCompletedOnboarding": true,
		 "customApiKeyResponses": {"approved": ["sk-ant-offline"], "rejected": []},
		 "projects": {"$root": {"hasTrustDialogAccepted": true}}}
	JSON
	PATH="$NPM_DIR/node_modules/.bin:$PATH" "$WORKREX" setup >"$E2E_TMP/setup.out" 2>/dev/null
	grep -q 'claude: hooks written' "$E2E_TMP/setup.out"
	host_sums() { (cd "$HOME" && find .claude .claude.json -type f -exec sha256sum {} + | sort); }
	host_sums >"$E2E_TMP/before"
	global_config "  enabled: true" \
		"  extra_mounts:" \
		"    - {host_path: $(readlink -f "$NPM_DIR/node_modules/.bin/claude"), guest_path: /usr/local/bin/claude}" \
		"  env:" "    ANTHROPIC_API_KEY: sk-ant-offline" "    ANTHROPIC_BASE_URL: http://127.0.0.1:9" \
		"    DISABLE_AUTOUPDATER: '1'" "    DISABLE_TELEMETRY: '1'" "    DISABLE_ERROR_REPORTING: '1'" \
		"    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1'"
	printf 'agent: claude\n' >>"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 160 45
	wait_for 'wrx\$'
	wrx add cc >/dev/null
	# Its input box, with no login and no trust question: the user's approval, and
	# the trust of the project (its new worktree is trusted in the sandbox's copy).
	until_ok 90 eval 'wrx capture cc | grep -q "❯\|trust this folder"' || { wrx capture cc >&2; return 1; }
	not grep -q 'trust this folder' <(wrx capture cc) || { wrx capture cc >&2; return 1; }
	wait_for '│ *❯' 30
	not grep -q 'cannot be used with root' <(wrx capture cc)
	# A prompt typed as a person does: its hooks (the host's settings, read-only) say it works.
	tm send-keys -l 'say hello from the box'
	wait_for '❯.say hello from the box'
	keys Enter
	wait_for 'Unable to connect to API' 60
	until_ok 30 eval 'wrx status --json | grep -q "\"status\":\"\(working\|waiting\|done\)\""'
	# Its transcript is in its own dir; the host's files keep every byte.
	local own
	own=$(echo "$XDG_STATE_HOME"/workrex/sandbox/git-*/cc/home/claude)
	until_ok 10 eval "grep -rqs 'say hello from the box' '$own/projects'"
	not grep -rqs 'say hello from the box' "$HOME/.claude"
	not grep -rqs HOST- "$own"
	host_sums >"$E2E_TMP/after"
	diff "$E2E_TMP/before" "$E2E_TMP/after"
}

run_test "the real Claude Code in a sandbox: the user's settings and key, its own state, the host's untouched" t_real_claude_in_a_sandbox
