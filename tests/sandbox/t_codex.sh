#!/usr/bin/env bash
# The real Codex (the npm cache the tests keep; its static binary, offline:
# its provider at a closed loopback port) in a sandbox. Codex runs a hook
# only once the user has trusted it, keyed by the hook file's path: the
# hooks setup wrote, trusted on the host as a person does (its "Hooks need
# review" question, by keys), are trusted in the sandbox too, where the
# same file has another path, and report its status through the bridge.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../e2e/clis.sh"
install_agent_clis || exit 1
# Codex starts an app-server daemon of its own from its HOME (ours) on the
# host, which outlives its agent; it is ended with the test.
trap 'end_ours "^$HOME/\.codex/packages/" "HOME=$HOME"
	podman ps -aq --filter "label=workrex.project=$repo" | xargs -r podman rm -f >/dev/null 2>&1; stop' EXIT

# Its package (the binary finds its resources beside it), as an image would
# have it; without its background server, which wants a ps the tests' image lacks.
codex_pkg() { readlink -f "$(dirname "$(ls "$NPM_DIR"/node_modules/@openai/codex-linux-x64/vendor/*/bin/codex)")/.."; }

t_real_codex_trust_in_a_sandbox() {
	make_repo
	local top hw bw
	top=$(cd "$repo/.." && pwd -P)/proj__worktrees
	hw=$top/host bw=$top/cx
	mkdir -p "$HOME/.codex" "$E2E_TMP/wbin"
	codex_offline_toml "$hw" "$bw" >"$HOME/.codex/config.toml"
	ln -sf "$WORKREX" "$E2E_TMP/wbin/workrex"
	export PATH="$E2E_TMP/wbin:$NPM_DIR/node_modules/.bin:$PATH"
	workrex setup >"$E2E_TMP/setup.out"
	grep -q 'codex: hooks written to' "$E2E_TMP/setup.out"
	workrex agents | grep -Eq '^codex +yes .* untrusted ' || { workrex agents >&2; return 1; }
	global_config "  enabled: true" \
		"  extra_mounts:" \
		"    - {host_path: $(codex_pkg), guest_path: /opt/codex}"
	printf 'agent: codex\nagents:\n  boxed: {command: /opt/codex/bin/codex, args: [--no-daemon]}\npanes:\n  - command: <agent>\n' \
		>>"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 160 45
	wait_for 'wrx\$'
	# On the host: Codex asks about the hooks; trusted by keys.
	wrx add host --no-sandbox >/dev/null
	prefix 2
	trust_codex_hooks || { screen >&2; return 1; }
	wait_for '│› Ask Codex' 60
	workrex agents | grep -Eq '^codex +yes .* trusted ' || { workrex agents >&2; return 1; }
	grep -q "^\[hooks.state.\"$HOME/.codex/hooks.json:stop" "$HOME/.codex/config.toml"
	cp "$HOME/.codex/config.toml" "$E2E_TMP/config.before"
	wrx close host
	# In the sandbox: the same hooks, trusted, no question; a prompt typed reaches them.
	wrx add cx -a boxed >/dev/null
	prefix 3
	until_ok 60 eval 'wrx capture cx | grep -q "Ask Codex\|Hooks need review"'
	not grep -q 'Hooks need review' <(wrx capture cx) || { wrx capture cx >&2; return 1; }
	tm send-keys -l 'say hello from the box'
	wait_for '│› say hello from the box'
	sleep 1
	keys Enter
	until_ok 30 eval 'wrx status cx --json | grep -q "\"status\":\"\(working\|waiting\|done\)\""' ||
		{ wrx status cx --json >&2; wrx capture cx >&2; return 1; }
	# The host's config kept every byte: the sandbox's copy was ours, read-only.
	cmp "$HOME/.codex/config.toml" "$E2E_TMP/config.before"
	local copy
	copy=$(echo "$XDG_STATE_HOME"/workrex/sandbox/git-*/cx/codex-config.toml)
	grep -q '^\[hooks.state."/tmp/.codex/hooks.json:stop' "$copy"
	not grep -q "$HOME/.codex/hooks.json" "$copy"
}

run_test "the real Codex: hooks trusted on the host by keys are trusted in its sandbox and report" t_real_codex_trust_in_a_sandbox
