# tests/e2e/clis.sh - the real agent CLIs the tests run (sourced): Claude
# Code, Codex, Gemini CLI and OpenCode, and the dev container CLI
# (sandbox.backend: devcontainer), from the npm registry, installed once into
# /var/cache/workrex-test/npm and kept. Two suites may ask at once: the
# install holds a lock.
CLAUDE_VERSION=2.1.197
CODEX_VERSION=0.171.0
GEMINI_VERSION=0.61.0
DEVCONTAINER_VERSION=0.89.0
OPENCODE_VERSION=1.18.33
NPM_DIR=/var/cache/workrex-test/npm

clis_installed() { grep -q "\"version\": \"$2\"" "${OC:-$NPM_DIR}/node_modules/$1/package.json" 2>/dev/null; }

# install_agent_clis: 0 once all are there; else says why (a "not ok" line), 1.
install_agent_clis() {
	local tool
	for tool in npm unshare flock; do
		command -v "$tool" >/dev/null || { echo "not ok - agent CLIs: $tool is required but not installed"; return 1; }
	done
	mkdir -p "$NPM_DIR"
	(
		flock 9
		clis_installed @anthropic-ai/claude-code "$CLAUDE_VERSION" &&
			clis_installed @openai/codex "$CODEX_VERSION" &&
			clis_installed @google/gemini-cli "$GEMINI_VERSION" &&
			clis_installed @devcontainers/cli "$DEVCONTAINER_VERSION" &&
			clis_installed opencode-ai "$OPENCODE_VERSION" &&
			OC=$NPM_DIR/opencode-config clis_installed @opencode-ai/plugin "$OPENCODE_VERSION" && exit 0
		# OpenCode's own plugin package, in a config dir of its own: what its
		# first run online installs beside the user's plugins (offline, it
		# waits two minutes for the registry before it starts).
		timeout 900 npm install --no-audit --no-fund --prefix "$NPM_DIR" \
			"@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" \
			"@google/gemini-cli@$GEMINI_VERSION" "@devcontainers/cli@$DEVCONTAINER_VERSION" \
			"opencode-ai@$OPENCODE_VERSION" >"$E2E_TMP/npm.log" 2>&1 &&
			timeout 300 npm install --no-audit --no-fund --prefix "$NPM_DIR/opencode-config" \
				"@opencode-ai/plugin@$OPENCODE_VERSION" >>"$E2E_TMP/npm.log" 2>&1 && exit 0
		echo "not ok - agent CLIs: npm install of Claude Code, Codex, Gemini CLI, OpenCode and the dev container CLI failed:"
		tail -5 "$E2E_TMP/npm.log"
		exit 1
	) 9>"$NPM_DIR.lock"
}

# trust_codex_hooks: Codex's question about hooks setup wrote, in the
# focused pane, answered by keys: down to "Trust all", Enter. (A key that
# comes while it is still drawing the menu is not taken: pressed again.)
trust_codex_hooks() {
	local i=0
	wait_for '│ *› 1\. Review hooks' 60
	until on_screen '│ *› 2\. Trust all and continue'; do
		((i++ < 40)) || return 1
		((i % 8 != 1)) || keys Down
		snooze 0.1
	done
	keys Enter
}

# codex_offline_toml [DIR...]: Codex's config.toml with a provider of the
# user's own (so no OpenAI sign-in) at a closed loopback port, each DIR trusted.
codex_offline_toml() {
	cat <<-EOF
		model = "gpt-5"
		model_provider = "offline"
		[model_providers.offline]
		name = "offline"
		base_url = "http://127.0.0.1:9/v1"
		wire_api = "responses"
		requires_openai_auth = false
	EOF
	local d
	for d; do
		printf '[projects."%s"]\ntrust_level = "trusted"\n' "$d"
	done
}
