# tests/sandbox/lib.sh - what the sandbox tests share on top of ../e2e/lib.sh:
# the host's git identity (which sandboxes get through GIT_CONFIG_*), a
# global config naming the tests' own image, bounded waits, and removal of
# every container a test's project started.
. "$(dirname "$0")/../e2e/lib.sh"
trap 'podman ps -aq --filter "label=workrex.project=$repo" | xargs -r podman rm -f >/dev/null 2>&1; stop' EXIT

git_env
unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
: "${WORKREX_GUEST:?}"
export WORKREX_GUEST E2E_TIMEOUT=30
export GIT_CONFIG_GLOBAL=$HOME/.gitconfig
git config --global user.name "Host User"
git config --global user.email host@example.com

# add_box: the agent "box", focused, its container up; sets w to its worktree.
add_box() {
	wrx add box >/dev/null
	wait_for '^ 2 box'
	until_ok 30 eval 'podman ps --filter "label=workrex.project=$repo" --format "{{.Names}}" | grep -q "^wrx-box-"'
	w=$(wrx path box)
}

# global_config LINES...: the global config, sandbox.image set (and
# sandbox.runtime to $WORKREX_TEST_RUNTIME, given), LINES under sandbox:.
global_config() {
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	{
		echo "sandbox:"
		echo "  image: workrex-test:latest"
		[ -z "${WORKREX_TEST_RUNTIME:-}" ] || echo "  runtime: $WORKREX_TEST_RUNTIME"
		printf '%s\n' "$@"
	} >"$XDG_CONFIG_HOME/workrex/config.yaml"
}

