#!/usr/bin/env bash
# A full disk: the state dir, the config dir and a worktree dir on a small
# tmpfs the test mounts, filled to the last byte. Each write fails with a
# clear message (the system's own words: no space left) and leaves the old
# bytes: config edits, trust, add, a capture written there, the log. The
# dashboard goes on. With room again, each works.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "crash: the disk-full tests mount a tmpfs: run them as root" >&2; exit 1; }
full=$E2E_TMP/full
trap 'umount "$full" 2>/dev/null; stop' EXIT

# mount_small: a 1 MB tmpfs at $full with the state and config dirs on it.
mount_small() {
	mkdir -p "$full"
	mountpoint -q "$full" || mount -t tmpfs -o size=1m,nr_inodes=4096 wrx-full "$full"
	rm -rf "${full:?}"/*
	mkdir -p "$full/state" "$full/config/workrex" "$full/wt"
	export XDG_STATE_HOME=$full/state XDG_CONFIG_HOME=$full/config
}
# fill: not one byte left on it.
fill() { dd if=/dev/zero of="$full/filler" bs=4k status=none 2>/dev/null || true; sync; }
# room: the filler gone.
room() { rm -f "$full/filler"; }
nospace() { grep -qi "no space left on device" "$1" || { echo "  said: $(cat "$1")" >&2; return 1; }; }

test_config_edit() {
	make_repo
	mount_small
	printf '# mine\nsandbox:\n  network:\n    allowed_domains: [a.example]\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	cp "$XDG_CONFIG_HOME/workrex/config.yaml" "$E2E_TMP/before"
	fill
	not wrx allow-domain b.example -y 2>"$E2E_TMP/err"
	nospace "$E2E_TMP/err"
	cmp "$XDG_CONFIG_HOME/workrex/config.yaml" "$E2E_TMP/before"
	[ "$(ls -A "$XDG_CONFIG_HOME/workrex")" = config.yaml ] || { ls -A "$XDG_CONFIG_HOME/workrex" >&2; return 1; }
	room
	wrx allow-domain b.example -y >/dev/null
	grep -q b.example "$XDG_CONFIG_HOME/workrex/config.yaml" && grep -q '# mine' "$XDG_CONFIG_HOME/workrex/config.yaml"
}

test_trust() {
	make_repo
	mount_small
	printf 'post_create: ["echo one"]\n' >"$repo/.workrex.yaml"
	wrx trust >/dev/null
	cp -r "$XDG_STATE_HOME/workrex/trusted" "$E2E_TMP/trusted.before"
	printf 'post_create: ["echo two"]\n' >"$repo/.workrex.yaml"
	fill
	not wrx trust 2>"$E2E_TMP/err" >/dev/null
	nospace "$E2E_TMP/err"
	diff -r "$XDG_STATE_HOME/workrex/trusted" "$E2E_TMP/trusted.before"
	room
	wrx trust >/dev/null
	not diff -rq "$XDG_STATE_HOME/workrex/trusted" "$E2E_TMP/trusted.before" >/dev/null
}

test_add_worktree() {
	make_repo
	mount_small
	printf 'agent: bash\nworktree_dir: %s\n' "$full/wt" >"$XDG_CONFIG_HOME/workrex/config.yaml"
	for i in $(seq 1 200); do echo "line $i of a file big enough to need room" >>"$repo/big.txt"; done
	git -C "$repo" add big.txt && git -C "$repo" commit -qm big
	commits_before
	fill
	not wrx add -b ag 2>"$E2E_TMP/err" >/dev/null
	nospace "$E2E_TMP/err"
	invariants
	[ ! -e "$full/wt/ag" ] && not git -C "$repo" rev-parse -q --verify refs/heads/ag >/dev/null
	room
	wrx add -b ag >/dev/null
	[ -f "$full/wt/ag/big.txt" ]
	invariants
}

test_capture() {
	make_repo
	mount_small
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add -b ag >/dev/null
	until_ok 10 eval '[ -n "$(keepers)" ]'
	wrx send ag 'seq 1 3000' >/dev/null
	until_ok 10 in_output -q '^3000' -- wrx capture ag
	fill
	not wrx capture ag >"$full/out" 2>"$E2E_TMP/err"
	nospace "$E2E_TMP/err"
	room
	wrx capture ag >"$full/out"
	grep -q '^3000' "$full/out"
}

test_log_full_dashboard_goes_on() {
	make_repo
	mount_small
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo
	wait_for 'C-b \? help'
	local before
	before=$(wc -c <"$XDG_STATE_HOME/workrex/workrex.log")
	fill
	# The log's own last page too (tmpfs gives a file its room a page at a
	# time: a short line still fit there, by luck of its length).
	head -c 4096 /dev/zero | tr '\0' '\n' >>"$XDG_STATE_HOME/workrex/workrex.log" 2>/dev/null || true
	# An error the dashboard logs: the log cannot take it, and that is said.
	tm send-keys C-b
	tm send-keys 9
	wait_for 'log: .*workrex.log: No space left on device' 10
	# Still here: keys work, another error shows as usual.
	tm send-keys C-b
	tm send-keys 8
	wait_for 'no agent 8'
	wait_gone 'No space left'
	[ "$(head -c "$before" "$XDG_STATE_HOME/workrex/workrex.log" | wc -c)" -eq "$before" ]
	room
}

run_test "a config edit on a full disk: refused, said, the file as it was" test_config_edit
run_test "trust on a full disk: refused, said, the trust record as it was" test_trust
run_test "add with its worktree on a full disk: refused, said, nothing left" test_add_worktree
run_test "capture into a file on a full disk: said, not a short file passed for whole" test_capture
run_test "the log on a full disk: the dashboard says so and goes on" test_log_full_dashboard_goes_on
umount "$full" 2>/dev/null
rm -rf "$E2E_TMP"
