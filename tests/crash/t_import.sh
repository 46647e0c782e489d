#!/usr/bin/env bash
# The import of a sandboxed agent's commits (a real podman sandbox commits;
# the host imports when a command needs the branch) killed at each of its
# fault points (kill -9, and an exit with no cleanup): the next command
# completes it. The branch is at the sandbox's commit, nothing is set aside
# as if the host had moved, the host's index for the worktree follows, and
# every invariant holds.
# points: import.*
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
for tool in podman runc; do
	command -v $tool >/dev/null || { echo "crash: $tool is required but not installed" >&2; exit 1; }
done
export CONTAINERS_CONF=$here/../sandbox/containers.conf
"$here/../sandbox/image.sh" || { echo "crash: could not build the sandbox test image" >&2; exit 1; }
trap 'podman ps -aq --filter "label=workrex.project=$repo" | xargs -r podman rm -f >/dev/null 2>&1; stop' EXIT
# The sandbox gets the host's identity from its git config, as a user's would.
unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
export GIT_CONFIG_GLOBAL=$HOME/.gitconfig
git config --global user.name "Host User"
git config --global user.email host@example.com
mapfile -t POINTS < <(fault_points import)

setup() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'sandbox:\n  image: workrex-test:latest\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add box -S -b >/dev/null
	w=$(wrx path box)
	priv=$(echo "$XDG_STATE_HOME"/workrex/sandbox/git-*/box)
	[ -d "$priv/git" ] || { echo "  no private git dir for box" >&2; return 1; }
}

# inside_commit N: the agent commits file N inside its sandbox; TIP is its commit.
inside_commit() {
	wrx sandbox shell box -- sh -c "echo $1 >f$1.txt && git add f$1.txt && git commit -qm c$1" >/dev/null
	TIP=$(git --git-dir="$priv/git" rev-parse refs/heads/box)
	[ "$(git -C "$repo" rev-parse box)" != "$TIP" ] || { echo "  imported already" >&2; return 1; }
}

# imported: box is at TIP, the import whole: nothing set aside, synced, the index follows.
imported() {
	[ "$(git -C "$repo" rev-parse box)" = "$TIP" ] || { echo "  box is not at the sandbox's commit" >&2; return 1; }
	[ "$(cat "$priv/synced")" = "$TIP" ] || { echo "  synced: $(cat "$priv/synced")" >&2; return 1; }
	not git -C "$repo" rev-parse -q --verify refs/workrex/import/box >/dev/null ||
		{ echo "  the commits were set aside" >&2; return 1; }
	[ -z "$(git -C "$w" status --porcelain)" ] ||
		{ echo "  the host's index: $(git -C "$w" status --short | head -3)" >&2; return 1; }
	not grep -q "moved on the host" "$E2E_TMP/next.err" || { cat "$E2E_TMP/next.err" >&2; return 1; }
}

test_each_point() {
	[ "${#POINTS[@]}" -ge 5 ] || { echo "  only ${#POINTS[@]} import points: ${POINTS[*]}" >&2; return 1; }
	setup || return 1
	local point action n=0
	for point in "${POINTS[@]}"; do
		for action in "${ACTIONS[@]}"; do
			n=$((n + 1))
			inside_commit $n || return 1
			commits_before
			killed "$point" "$action" list &&
				wrx list >/dev/null 2>"$E2E_TMP/next.err" && imported && invariants ||
				{ echo "  at $point:$action" >&2; return 1; }
		done
	done
	# All of them, in order, on the branch; it merges.
	[ "$(git -C "$repo" rev-list --count main..box)" -eq $n ]
	wrx merge box >/dev/null
	[ "$(cat "$repo/f$n.txt")" = $n ]
	invariants
}

# The project on a full disk: the import fails, says why, moves nothing;
# with room again, the next command imports.
test_full_disk() {
	local work=$E2E_TMP/work
	mkdir -p "$work"
	mount -t tmpfs -o size=16m wrx-full "$work"
	setup || return 1
	inside_commit full || return 1
	local before
	before=$(git -C "$repo" rev-parse box)
	dd if=/dev/zero of="$work/filler" bs=4k status=none 2>/dev/null || true
	wrx list >/dev/null 2>"$E2E_TMP/err" || true
	grep -q "the sandbox's commits on box were not imported: .*No space left on device" "$E2E_TMP/err" ||
		{ cat "$E2E_TMP/err" >&2; return 1; }
	[ "$(git -C "$repo" rev-parse box)" = "$before" ]
	rm -f "$work/filler"
	wrx list >/dev/null 2>"$E2E_TMP/next.err"
	imported
	git -C "$repo" fsck --no-progress
}

run_test "the import of a sandbox's commits killed at each fault point: the next command completes it" test_each_point
run_test "the import on a full disk: said, nothing moved; with room, imported" test_full_disk
podman ps -aq --filter "label=workrex.project=$repo" | xargs -r podman rm -f >/dev/null 2>&1
umount "$E2E_TMP/work" 2>/dev/null
rm -rf "$E2E_TMP"
