#!/usr/bin/env bash
# Host commands (sandbox.host_commands) from inside a real podman sandbox:
# the shims on PATH, output and exit codes exactly, names that must not run;
# then a hostile agent's Makefile run on the host, which attacks what the
# box lets it see, write and reach (each "BROKE" line is an attack that
# worked against the first box: root's capabilities, / read-only with a
# deny-list, the user's caches writable, the host's network); and a real
# cargo build through the box, twice, the second offline from the agent's
# own cache.
. "$(dirname "$0")/lib.sh"

# Home, state and the host's tools outside /tmp, which a host command does
# not see (other programs' sockets live there): so that hiding ~ is
# something the box does, not a side effect of where the test runs.
HX=$(mktemp -d /var/lib/wrx-hostexec.XXXXXX)
host_home=$(getent passwd "$(id -u)" | cut -d: -f6)
cp -a "$HOME" "$HX/home"
mkdir -m 700 "$HX/run" "$HX/wrt"
export HOME=$HX/home XDG_CONFIG_HOME=$HX/home/.config XDG_STATE_HOME=$HX/home/.local/state
export GIT_CONFIG_GLOBAL=$HOME/.gitconfig XDG_RUNTIME_DIR=$HX/run
# A runtime directory of workrex's own outside $XDG_RUNTIME_DIR: the first
# box masked only the latter, and the command reached every keeper.
export WORKREX_RUNTIME_DIR=$HX/wrt
repo=$HX/work/proj
repo2=$HX/work2/proj
repo3=$HX/work3/proj
trap 'kill $(cat "$HX/servers" 2>/dev/null) 2>/dev/null; for r in "$repo" "$repo2" "$repo3"; do podman ps -aq --filter "label=workrex.project=$r" | xargs -r podman rm -f >/dev/null 2>&1; done; stop; rm -rf "$HX" /run/wrx-hx-docker.sock' EXIT

# The host's own tools, on the dashboard's PATH.
host_tools() {
	mkdir -p "$HX/bin"
	head -c 10485760 /dev/urandom >"$HX/big.bin"
	cat >"$HX/bin/hx-out" <<-'EOF'
		#!/bin/sh
		printf 'out-line\nsecond\n'; printf 'err-line\n' >&2; exit 7
	EOF
	cat >"$HX/bin/hx-big" <<-EOF
		#!/bin/sh
		exec cat "$HX/big.bin"
	EOF
	cat >"$HX/bin/hx-args" <<-'EOF'
		#!/bin/sh
		for a; do printf '[%s]\n' "$a"; done; pwd
	EOF
	# The agent's own code, run by a host tool: here it is the tool.
	cat >"$HX/bin/hx-sh" <<-'EOF'
		#!/bin/sh
		exec /bin/sh "$@"
	EOF
	chmod +x "$HX"/bin/*
	export PATH="$HX/bin:$HOME/.cargo/bin:$PATH" AWS_SECRET_ACCESS_KEY=HOST-ENV-SECRET
}

# Secrets where a user keeps them, none of them on any list.
plant_secrets() {
	local n=0 f
	for f in .ssh/id_ed25519 .netrc .claude/.credentials.json .codex/auth.json \
		.config/anthropic/api_key .config/gcloud/credentials.db \
		.mozilla/firefox/p.default/logins.json ".config/google-chrome/Default/Login Data" \
		.config/git/credentials .config/containers/auth.json .config/glab-cli/config.yml \
		.config/rclone/rclone.conf .s3cfg .terraformrc .local/share/kwalletd/kdewallet.kwl \
		.config/Code/User/globalStorage/state.vscdb .histfile .local/share/recently-used.xbel \
		.gemini/oauth_creds.json .docker/config.json; do
		mkdir -p "$(dirname "$HOME/$f")"
		n=$((n + 1))
		echo "HOME-SECRET-$n" >"$HOME/$f"
	done
	echo "# HOME-SECRET-config" >>"$XDG_CONFIG_HOME/workrex/config.yaml"
	# A cache of the user's, with code the user's own cargo runs later.
	mkdir -p "$HOME/.cargo/registry/src/index/left-pad-1.0.0"
	echo 'fn main() {}' >"$HOME/.cargo/registry/src/index/left-pad-1.0.0/lib.rs"
}

# Things listening on the host: a loopback service, an abstract socket, a
# docker.sock stand-in in /run.
host_servers() {
	# Not on the test's output: the runner reads it to its end.
	python3 - "$HX/port" >/dev/null 2>&1 <<-'EOF' &
		import socket, sys, os
		s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
		open(sys.argv[1], "w").write(str(s.getsockname()[1]))
		a = socket.socket(socket.AF_UNIX); a.bind("\0wrx-hx-abstract" + sys.argv[1]); a.listen(8)
		u = socket.socket(socket.AF_UNIX)
		if os.path.exists("/run/wrx-hx-docker.sock"): os.unlink("/run/wrx-hx-docker.sock")
		u.bind("/run/wrx-hx-docker.sock"); u.listen(8)
		import time; time.sleep(600)
	EOF
	# A test runs in a subshell: its pid for the script's EXIT.
	echo $! >>"$HX/servers"
	until_ok 10 test -s "$HX/port"
}

t_host_commands() {
	make_repo
	host_tools
	global_config "  enabled: true" "  host_commands: [hx-out, hx-big, hx-args, hx-missing, 'bad;name']" \
		"  host_command_paths: [$HX/big.bin]"
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add box -b >/dev/null
	wait_for '^ 2 box'
	local w=$repo/../proj__worktrees/box
	w=$(cd "$w" && pwd)
	until_ok 30 eval 'podman ps --filter "label=workrex.project=$repo" --format "{{.Names}}" | grep -q "^wrx-box-"'
	long=$(printf 'a%.0s' $(seq 1 65))
	cat >"$w/probe.sh" <<-EOF
		out=$w/hx.txt
		: >\$out
		echo "shim \$(command -v hx-out)" >>\$out
		echo "login \$(bash -lc 'command -v hx-out; command -v workrex' | tr '\n' ' ')" >>\$out
		hx-out >o.txt 2>e.txt; echo "out \$?" >>\$out
		hx-big >big.out; echo "big \$?" >>\$out
		hx-args 'a b' '' "\\\$(id)" >args.txt; echo "args \$?" >>\$out
		for n in '../bin/sh' 'sh;id' '\$(id)' /bin/sh . '' $long bash 'bad;name'; do
			workrex host-exec "\$n" -c 'echo RAN >$w/ran' 2>>names.err; echo "name \$?" >>\$out
		done
		hx-missing; echo "missing \$?" >>\$out
		echo hx-done >>\$out
	EOF
	wrx send box "sh probe.sh"
	until_ok 60 grep -q hx-done "$w/hx.txt" || { cat "$w/hx.txt" >&2; screen >&2; return 1; }
	cat "$w/hx.txt" >&2
	grep -qx 'shim /opt/workrex/host-bin/hx-out' "$w/hx.txt"
	grep -qx 'login /opt/workrex/host-bin/hx-out /opt/workrex/bin/workrex ' "$w/hx.txt"
	# Output and status exactly, stdout and stderr apart.
	grep -qx 'out 7' "$w/hx.txt"
	printf 'out-line\nsecond\n' | cmp - "$w/o.txt"
	printf 'err-line\n' | cmp - "$w/e.txt"
	# A file of host_command_paths, read in the box.
	grep -qx 'big 0' "$w/hx.txt"
	cmp "$HX/big.bin" "$w/big.out"
	printf '[a b]\n[]\n[$(id)]\n%s\n' "$w" | cmp - "$w/args.txt"
	# Names that are not on the list, or no names at all: 127, nothing ran.
	[ "$(grep -c '^name 127$' "$w/hx.txt")" -eq 9 ]
	test ! -e "$w/ran"
	grep -q "'bash' is not one of sandbox.host_commands" "$w/names.err"
	grep -q "'sh;id' is not a command name" "$w/names.err"
	grep -q "'bad;name' is not a command name" "$w/names.err"
	# On the list but not on the host: 126.
	grep -qx 'missing 126' "$w/hx.txt"
	wrx close box
}

# The agent's Makefile, as the host runs it: every line that starts with
# BROKE is an attack that worked.
write_attack() {
	local w=$1 other=$2 port
	port=$(cat "$HX/port")
	cat >"$w/attack.sh" <<-EOF
		id -u >/dev/null
		grep -q '^CapEff:.*0000000000000000' /proc/self/status || echo "BROKE capabilities: \$(grep CapEff /proc/self/status)"
		grep -q '^CapBnd:.*0000000000000000' /proc/self/status || echo "BROKE bounding set"
		mount -o remount,rw / 2>/dev/null && echo "BROKE remount /"
		mount -t tmpfs none "\$PWD" 2>/dev/null && echo "BROKE mount"
		unshare -Ur true 2>/dev/null && echo "BROKE user namespace"
		grep -q . /etc/shadow 2>/dev/null && echo "BROKE /etc/shadow"
		for d in /usr /etc "$repo"; do
			(echo x >"\$d/wrx-planted") 2>/dev/null && echo "BROKE wrote \$d"
		done
		# Where the box has a scratch tmpfs: tried here, looked for on the host.
		for d in "$HX" "$HOME" /; do (echo x >"\$d/wrx-planted") 2>/dev/null; done
		n=\$(grep -rl HOME-SECRET "$HOME" 2>/dev/null | wc -l); [ "\$n" = 0 ] || echo "BROKE \$n home secrets: \$(grep -rl HOME-SECRET "$HOME" | tr '\n' ' ')"
		env | grep -q HOST-ENV-SECRET && echo "BROKE environment"
		grep -q TOKEN-SECRET "$repo/.git/config" 2>/dev/null && echo "BROKE main .git/config"
		git config --get remote.origin.url 2>/dev/null | grep -q TOKEN-SECRET && echo "BROKE git config"
		grep -qs EXCLUDED-SECRET "$repo/secret.env" "\$PWD/secret.env" && echo "BROKE excluded_files"
		grep -qs OTHER-SECRET "$other/other.txt" && echo "BROKE another agent's worktree"
		find "$XDG_STATE_HOME" -name 'proxy-token*' 2>/dev/null | grep -q . && echo "BROKE proxy tokens"
		ls -A "$WORKREX_RUNTIME_DIR" 2>/dev/null | grep -q . && echo "BROKE workrex runtime dir"
		ls -A "$XDG_RUNTIME_DIR" 2>/dev/null | grep -q . && echo "BROKE XDG runtime dir"
		python3 - <<-'PY'
			import socket, os, base64
			def tcp(port):
			    s = socket.socket(); s.settimeout(2)
			    try: s.connect(("127.0.0.1", port)); return True
			    except OSError: return False
			def unix(path):
			    s = socket.socket(socket.AF_UNIX); s.settimeout(2)
			    try: s.connect(path); return True
			    except OSError: return False
			if tcp($port): print("BROKE host loopback service")
			if unix("\0wrx-hx-abstract$HX/port"): print("BROKE abstract socket")
			if unix("/run/wrx-hx-docker.sock"): print("BROKE /run socket")
			url = os.environ.get("HTTPS_PROXY", "")
			print("proxy env", "yes" if url.startswith("http://workrex:") else "no")
			if url:
			    cred = url[len("http://"):url.rindex("@")]
			    s = socket.socket(); s.settimeout(5); s.connect(("127.0.0.1", 3128))
			    s.sendall(("CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\nProxy-Authorization: Basic %s\r\n\r\n" % base64.b64encode(cred.encode()).decode()).encode())
			    print("proxy says", s.recv(200).split(b"\r\n")[0].decode())
		PY
		mkdir -p "$HOME/.cargo/registry/src/index/left-pad-1.0.0" 2>/dev/null
		echo 'fn main() { /* planted */ }' >"$HOME/.cargo/registry/src/index/left-pad-1.0.0/build.rs" 2>/dev/null
		grep -q 'fn main' "$HOME/.cargo/registry/src/index/left-pad-1.0.0/lib.rs" && echo "user's cache readable"
		echo attack-done
	EOF
}

t_hostile_makefile() {
	repo=$repo2
	# What a run against a weakened build planted is not this run's doing.
	rm -f /usr/wrx-planted /etc/wrx-planted /wrx-planted
	make_repo
	git -C "$repo" remote add origin "https://user:TOKEN-SECRET@example.com/r.git"
	echo EXCLUDED-SECRET >"$repo/secret.env"
	host_tools
	host_servers
	global_config "  enabled: true" "  host_commands: [hx-sh, cargo]" \
		"  host_command_paths: [$HX/dep]" "  host_command_processes: 64" \
		"  container:" "    excluded_files: [secret.env]"
	plant_secrets
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add other -b >/dev/null
	wrx add box -b >/dev/null
	wait_for '^ 3 box'
	local w other
	w=$(wrx path box)
	other=$(wrx path other)
	echo OTHER-SECRET >"$other/other.txt"
	until_ok 60 eval 'podman ps --filter "label=workrex.project=$repo" --format "{{.Names}}" | grep -q "^wrx-box-"' || { screen >&2; return 1; }
	write_attack "$w" "$other"
	wrx send box "hx-sh attack.sh >attack.out 2>&1; echo \$? >attack.rc"
	until_ok 60 test -s "$w/attack.rc" || { screen >&2; return 1; }
	cat "$w/attack.out" >&2
	grep -qx attack-done "$w/attack.out"
	not grep -q '^BROKE' "$w/attack.out"
	grep -qx 'proxy env yes' "$w/attack.out"
	grep -q '^proxy says HTTP/1.1 403' "$w/attack.out"
	grep -qx "user's cache readable" "$w/attack.out"
	# Nothing it wrote is anywhere a host tool reads.
	local f
	for f in /usr/wrx-planted /etc/wrx-planted "$HX/wrx-planted" "$repo/wrx-planted" \
		"$HOME/wrx-planted" /wrx-planted "$HOME/.cargo/registry/src/index/left-pad-1.0.0/build.rs"; do
		test ! -e "$f" || { echo "planted: $f" >&2; return 1; }
	done
	# ...but in the agent's own layer, which goes with the agent.
	local layer
	layer=$(find "$XDG_STATE_HOME" -path '*host-caches/.cargo_registry/upper/src/index/left-pad-1.0.0/build.rs')
	test -n "$layer"

	# A fork bomb: stopped at host_command_processes (its cgroup refuses the
	# fork, as root here; else RLIMIT_NPROC, or the box's watch ends it all),
	# everything of it gone.
	# Its sleeps carry this test's own length: only they are looked for.
	local nap=37.$$
	printf 'i=0; while [ $i -lt 200 ]; do sleep %s & i=$((i + 1)); done; wait\n' "$nap" >"$w/bomb.sh"
	wrx send box "hx-sh bomb.sh >bomb.out 2>&1; echo \$? >bomb.rc"
	until_ok 60 test -s "$w/bomb.rc" || { screen >&2; return 1; }
	cat "$w/bomb.out" "$w/bomb.rc" >&2
	not grep -qx 0 "$w/bomb.rc"
	grep -qE 'over its limit of processes|[Cc]annot fork|Resource temporarily unavailable' "$w/bomb.out"
	[ "$(grep -c '^' "$w/bomb.out")" -lt 100 ]
	until_ok 10 not pgrep -f "^sleep $nap\$"

	# One at a time: two at once from the agent run one after the other.
	printf 'echo start >>slow.log; sleep 1; echo end >>slow.log\n' >"$w/slow.sh"
	wrx send box "(hx-sh slow.sh & hx-sh slow.sh & wait); echo done >slow.rc"
	until_ok 30 test -s "$w/slow.rc"
	printf 'start\nend\nstart\nend\n' | cmp - "$w/slow.log"

	# A real build: cargo with a git dependency (cargo's cache, ~/.cargo/git),
	# then again offline from nothing but the agent's layer.
	git init -q -b main "$HX/dep"
	printf '[package]\nname = "dep"\nversion = "0.1.0"\nedition = "2021"\n' >"$HX/dep/Cargo.toml"
	mkdir -p "$HX/dep/src"
	echo 'pub fn answer() -> u32 { 42 }' >"$HX/dep/src/lib.rs"
	git -C "$HX/dep" add -A
	git -C "$HX/dep" commit -qm dep
	# The user's rust toolchain, where rustup keeps it: ~/.rustup and ~/.cargo/bin.
	ln -s "$host_home/.rustup" "$HOME/.rustup"
	ln -s "$host_home/.cargo/bin" "$HOME/.cargo/bin"
	mkdir -p "$w/src"
	printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n[dependencies]\ndep = { git = "file://%s/dep" }\n' "$HX" >"$w/Cargo.toml"
	echo 'fn main() { println!("answer {}", dep::answer()); }' >"$w/src/main.rs"
	wrx send box "s=\$(date +%s%N); cargo build >build1.out 2>&1; echo \$? \$(( (\$(date +%s%N) - s) / 1000000 )) >build1.rc"
	until_ok 300 test -s "$w/build1.rc" || { screen >&2; return 1; }
	cat "$w/build1.out" "$w/build1.rc" >&2
	grep -q '^0 ' "$w/build1.rc"
	test ! -e "$HOME/.cargo/git"
	find "$XDG_STATE_HOME" -path '*host-caches/.cargo_git/upper/db/*' | grep -q .
	wrx send box "rm -rf target; s=\$(date +%s%N); cargo build --offline >build2.out 2>&1; echo \$? \$(( (\$(date +%s%N) - s) / 1000000 )) >build2.rc; ./target/debug/app >run.out"
	until_ok 300 test -s "$w/build2.rc" || { screen >&2; return 1; }
	cat "$w/build2.out" "$w/build2.rc" >&2
	grep -q '^0 ' "$w/build2.rc"
	# run.out is written after build2.rc: waited for, not read at once.
	until_ok 30 grep -qx 'answer 42' "$w/run.out"
	echo "cargo build: first $(cut -d' ' -f2 "$w/build1.rc") ms, again offline from the agent's cache $(cut -d' ' -f2 "$w/build2.rc") ms" >&2
}

# A host command swaps its cache layer for a link (issue 45): it renames
# the layer's upper dir it can reach and puts a link to ~/.ssh there; the
# user then removes that cache (as `npm cache clean` would), and the next
# host command would get the host's ~/.ssh read-write as its cache. And a
# link an older build let in is discarded, not bound.
t_cache_layer_swap() {
	repo=$repo3
	make_repo
	host_tools
	global_config "  enabled: true" "  host_commands: [hx-sh]"
	plant_secrets
	mkdir -p "$HOME/.npm/_cacache"
	echo cached >"$HOME/.npm/_cacache/index"
	(cd "$HOME/.ssh" && find . -exec stat -c '%n %s %Y' {} + | sort) >"$HX/ssh.before"
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add box -b >/dev/null
	local w
	w=$(wrx path box)
	until_ok 60 eval 'podman ps --filter "label=workrex.project=$repo" --format "{{.Names}}" | grep -q "^wrx-box-"' || { screen >&2; return 1; }
	cat >"$w/swap.sh" <<-EOF
		d=\$(grep " $HOME/.npm " /proc/self/mountinfo | sed -n 's|.*upperdir=\\([^,]*\\)/upper.*|\\1|p')
		[ -d "\$d/upper" ] && mv "\$d/upper" "\$d/gone" && ln -s "$HOME/.ssh" "\$d/upper" && echo "swapped \$d"
		cat "$HOME/.npm/_cacache/index"
	EOF
	cat >"$w/use.sh" <<-EOF
		cat "$HOME/.npm/id_ed25519" 2>/dev/null && echo "BROKE read the key"
		echo evil >>"$HOME/.npm/authorized_keys" 2>/dev/null
		ls -A "$HOME/.npm"
	EOF
	wrx send box "hx-sh swap.sh >swap.out 2>&1; echo \$? >swap.rc"
	until_ok 60 test -s "$w/swap.rc" || { screen >&2; return 1; }
	cat "$w/swap.out" >&2
	grep -qx cached "$w/swap.out"
	not grep -q swapped "$w/swap.out"
	# The user cleans the cache; the next host command is the agent's.
	rm -rf "$HOME/.npm"
	wrx send box "hx-sh use.sh >use.out 2>&1; echo \$? >use.rc"
	until_ok 60 test -s "$w/use.rc" || { screen >&2; return 1; }
	not grep -q BROKE "$w/use.out"
	# A link where the layer's upper dir goes, as an older build let in: discarded.
	local layer
	layer=$(find "$XDG_STATE_HOME" -path '*host-caches/.npm/upper/authorized_keys')
	layer=${layer%/upper/authorized_keys}
	test -d "$layer"
	rm -rf "$layer/upper" && ln -s "$HOME/.ssh" "$layer/upper"
	rm -f "$w/use.rc"
	wrx send box "hx-sh use.sh >use.out 2>&1; echo \$? >use.rc"
	until_ok 60 test -s "$w/use.rc" || { screen >&2; return 1; }
	not grep -q BROKE "$w/use.out"
	test ! -L "$layer/upper"
	grep -q "host-caches/.npm/upper is a link, not a directory of yours: discarded" "$XDG_STATE_HOME/workrex/workrex.log"
	(cd "$HOME/.ssh" && find . -exec stat -c '%n %s %Y' {} + | sort) | diff "$HX/ssh.before" -
}

run_test "host commands from a sandbox: shims, exact output and status, refused names" t_host_commands
run_test "a hostile Makefile on the host: no secret, no plant, no socket, no host network; caches per agent" t_hostile_makefile
run_test "a host command swaps its cache layer for a link to ~/.ssh: the next one gets no host path" t_cache_layer_swap
