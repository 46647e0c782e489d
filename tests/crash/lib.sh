# tests/crash/lib.sh - what the crash tests share, on tests/e2e/lib.sh
# (a HOME of their own, tmux, keepers, wrx), in a project at $repo:
#
#   fault_points PREFIX     the source's fault points PREFIX.*, one a line
#   killed POINT ACTION CMD...
#                           workrex CMD in the project, stopped at POINT by
#                           ACTION (kill or exit); fails unless it was
#   said_once TEXT          the next command (list) says TEXT, the one after nothing;
#                           what it said is left in $E2E_TMP/said.err
#   commits_before          note every commit now reachable (before the fault)
#   invariants              check them all; say each broken one on stderr
#
# The promise (workrex(1), WHAT SURVIVES A CRASH): every commit reachable
# before is reachable still; git fsck is clean; no lock or intent file is
# left; every worktree entry is whole (git reads it); every worktree git knows has its agent's record and every record
# its worktree (or `list` shows it missing); no keeper runs for an agent
# with no record.

# How each point is hit: kill -9 and an exit with no cleanup; kill -9 alone
# with CRASH_QUICK set (the sanitizer build's run, where each costs more).
ACTIONS=(kill exit)
[ -n "${CRASH_QUICK:-}" ] && ACTIONS=(kill)

crash_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$crash_here/../e2e/lib.sh"
git_env
repo="$E2E_TMP/work/proj"
PASSED=0 FAILED=0

fault_points() {
	grep -rhoE "FAULT\(\"$1\.[a-z-]+\"\)" "$crash_here/../../src" | sed 's/FAULT("\(.*\)")/\1/' | sort -u
}

killed() {
	local point=$1 action=$2 rc=0 want=3
	shift 2
	[ "$action" = kill ] && want=137
	# (bash's own "Killed" for it kept out of the log)
	{ (cd "$repo" && WORKREX_FAULT="$point:$action" exec "$WORKREX" "$@" \
		>"$E2E_TMP/killed.out" 2>&1) || rc=$?; } 2>/dev/null
	[ "$rc" -eq "$want" ] ||
		{ echo "  $* at $point:$action exited $rc: $(cat "$E2E_TMP/killed.out")" >&2; return 1; }
}

said_once() {
	wrx list >/dev/null 2>"$E2E_TMP/said.err"
	grep -qF "$1" "$E2E_TMP/said.err" ||
		{ echo "  the next command said: $(cat "$E2E_TMP/said.err")" >&2; return 1; }
	wrx list >/dev/null 2>"$E2E_TMP/said.again"
	not grep -q "cut short" "$E2E_TMP/said.again"
}

commits_before() { git -C "$repo" rev-list --all | sort >"$E2E_TMP/commits.before"; }

invariants() {
	local bad=0 gitdir h path
	gitdir=$(git -C "$repo" rev-parse --git-common-dir)
	case $gitdir in /*) ;; *) gitdir="$repo/$gitdir" ;; esac
	if [ -f "$E2E_TMP/commits.before" ]; then
		local lost
		lost=$(git -C "$repo" rev-list --all | sort | comm -23 "$E2E_TMP/commits.before" -)
		[ -z "$lost" ] || { echo "  invariant: commits no longer reachable: $lost" >&2; bad=1; }
	fi
	git -C "$repo" fsck --no-progress >"$E2E_TMP/fsck" 2>&1 ||
		{ echo "  invariant: git fsck: $(head -3 "$E2E_TMP/fsck")" >&2; bad=1; }
	local locks
	locks=$(find "$gitdir" -name '*.lock' 2>/dev/null)
	[ -z "$locks" ] || { echo "  invariant: lock files left: $locks" >&2; bad=1; }
	local left
	left=$(ls -A "$gitdir/workrex-intents" 2>/dev/null || true)
	[ -z "$left" ] || { echo "  invariant: intents left: $left" >&2; bad=1; }
	# git reads every worktree entry: none is half-written (an empty
	# commondir is fatal to git worktree list), none is being built.
	git -C "$repo" worktree list --porcelain >"$E2E_TMP/wtlist" 2>&1 ||
		{ echo "  invariant: git worktree list: $(head -3 "$E2E_TMP/wtlist")" >&2; bad=1; }
	local entry f
	for entry in "$gitdir"/worktrees/*/; do
		[ -d "$entry" ] || continue
		for f in gitdir commondir HEAD; do
			[ -s "$entry/$f" ] || { echo "  invariant: worktree entry ${entry%/} has no $f" >&2; bad=1; }
		done
	done
	left=$(ls -A "$gitdir/workrex-new" 2>/dev/null || true)
	[ -z "$left" ] || { echo "  invariant: worktree entries left half-built: $left" >&2; bad=1; }
	# Every worktree but the main one has a record with its path ...
	while read -r path; do
		[ "$path" = "$repo" ] && continue
		git -C "$repo" config --get-regexp '^workrex\.worktree\..*\.path$' | awk '{print $2}' |
			grep -qxF "$path" || { echo "  invariant: worktree without a record: $path" >&2; bad=1; }
	done < <(git -C "$repo" worktree list --porcelain | sed -n 's/^worktree //p')
	# ... and every record its worktree, or list says it is missing.
	while read -r key path; do
		h=${key#workrex.worktree.}
		h=${h%.path}
		[ -d "$path" ] && continue
		wrx list --json 2>/dev/null | python3 -c '
import json, sys
h = sys.argv[1]
sys.exit(0 if any(a.get("handle") == h and a.get("missing") for a in json.load(sys.stdin)) else 1)' "$h" ||
			{ echo "  invariant: record of $h without its worktree, not shown missing" >&2; bad=1; }
	done < <(git -C "$repo" config --get-regexp '^workrex\.worktree\..*\.path$' || true)
	# No keeper (one that answers on its socket) for an agent with no record.
	local agent
	for agent in $(python3 - "$XDG_RUNTIME_DIR" <<'PY'
import glob, os, socket, sys
for link in glob.glob(sys.argv[1] + "/**/*.agent", recursive=True):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(link[:-len(".agent")] + ".sock")
        print(os.readlink(link))
    except OSError:
        pass
    finally:
        s.close()
PY
	); do
		[ "$agent" = "$(basename "$repo")" ] && continue # the project's own panes
		git -C "$repo" config "workrex.worktree.$agent.path" >/dev/null ||
			{ echo "  invariant: a keeper runs for $agent, which has no record" >&2; bad=1; }
	done
	return $bad
}
