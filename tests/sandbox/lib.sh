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

# podman_names ARGS...: the names `podman ps -a ARGS` lists. A whole ps fails
# now and then while another test's container is torn down ("unknown FS magic
# on /run/netns/..."): tried again then, up to 10 times in 5 s.
podman_names() {
	local i out
	for i in 1 2 3 4 5 6 7 8 9 10; do
		if out=$(podman ps -a "$@" --format '{{.Names}}' 2>/dev/null); then
			[ -z "$out" ] || printf '%s\n' "$out"
			return 0
		fi
		sleep 0.5
	done
	echo "  podman ps -a $* failed 10 times" >&2
	return 1
}

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

