#!/usr/bin/env bash
# sandbox.backend: devcontainer with the real dev container CLI
# (@devcontainers/cli from the tests' npm cache) and podman, offline: a
# project's devcontainer.json that builds its image from the tests' own,
# its environment, mounts and lifecycle commands in the agent's container,
# status over the bridge and a merge of what the agent committed there;
# workrex's own rules on top (doctor --attack from inside); a file that
# asks for what workrex refuses is refused with the reason, nothing made.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../e2e/clis.sh"
install_agent_clis || exit 1
export DEVCONTAINER_CLI=$NPM_DIR/node_modules/.bin/devcontainer

# The images these tests' projects built (only this file builds any).
drop_images() { podman images --format '{{.Repository}}:{{.Tag}}' | grep '/wrx-devc-' | xargs -r podman rmi -f >/dev/null 2>&1 || true; }
drop_images

# devc_config LINES...: backend devcontainer, the CLI from the npm cache.
devc_config() {
	global_config "  enabled: true" "  backend: devcontainer" "  devcontainer:" \
		"    cli: $DEVCONTAINER_CLI" "$@"
}

# devc_project: a devcontainer.json that builds on the tests' image.
devc_project() {
	mkdir -p "$repo/.devcontainer" "$repo/data"
	cat >"$repo/.devcontainer/devcontainer.json" <<-'EOF'
		// the project's dev container
		{
		  "name": "proj",
		  "build": { "dockerfile": "Dockerfile" },
		  "containerEnv": { "GREETING": "hello from ${localWorkspaceFolderBasename}" },
		  "mounts": [
		    "source=${localWorkspaceFolder}/data,target=/data,type=bind",
		    { "source": "cache", "target": "/cache", "type": "volume" }
		  ],
		  "onCreateCommand": ["sh", "-c", "echo on-create > /tmp/on-create"],
		  "postCreateCommand": "echo post-create > /tmp/post-create",
		  "remoteUser": "vscode",
		}
	EOF
	cat >"$repo/.devcontainer/Dockerfile" <<-'EOF'
		FROM localhost/workrex-test:latest
		RUN mkdir -p /opt/tool/bin && printf '#!/bin/sh\necho tool-ran\n' > /opt/tool/bin/devtool && chmod +x /opt/tool/bin/devtool
		ENV PATH=/opt/tool/bin:/usr/local/bin:/usr/bin:/bin
	EOF
	echo project-data >"$repo/data/file"
	git -C "$repo" add -A
	git -C "$repo" commit -qm "a dev container"
}

t_devcontainer_agent_runs_in_it() {
	make_repo
	devc_project
	mkdir -p "$HOME/.ssh"
	echo PRIVATE-KEY >"$HOME/.ssh/id_ed25519"
	devc_config
	wrx sandbox devcontainer >"$E2E_TMP/plan" 2>&1 || { cat "$E2E_TMP/plan" >&2; return 1; }
	cat "$E2E_TMP/plan" >&2
	grep -q '^image: localhost/wrx-devc-' "$E2E_TMP/plan"
	grep -q '^remoteUser: left out\|devcontainer.json: remoteUser: left out' "$E2E_TMP/plan"
	start_repo 120 40
	wait_for 'wrx\$'
	wrx add box -b >"$E2E_TMP/add" 2>&1 || { cat "$E2E_TMP/add" >&2; return 1; }
	grep -q "building the dev container's image" "$E2E_TMP/add"
	wait_for '^ 2 box'
	until_ok 60 eval 'podman ps --filter "label=workrex.project=$repo" --format "{{.Image}} {{.Names}}" | grep -q "wrx-devc-.* wrx-box-"' ||
		{ podman ps -a >&2; screen >&2; return 1; }
	local w
	w=$(wrx path box)
	cat >"$w/probe.sh" <<-EOF
		out=$w/result.txt
		: >\$out
		cat /tmp/on-create /tmp/post-create >>\$out 2>&1
		echo "greeting: \$GREETING" >>\$out
		devtool >>\$out 2>&1
		cat /data/file >>\$out
		if (echo x >>/data/file) 2>/dev/null; then echo "WRITABLE /data"; else echo "ro /data"; fi >>\$out
		echo cached >/cache/x && echo "cache writable" >>\$out
		if grep -q . $HOME/.ssh/id_ed25519 2>/dev/null; then echo "READABLE key"; else echo "hidden key"; fi >>\$out
		echo "made in the dev container" >inside.txt
		git add inside.txt && git commit -qm "from the dev container" && echo commit-ok >>\$out
		workrex set-status done && echo status-ok >>\$out
		echo probe-done >>\$out
	EOF
	wrx send box "sh probe.sh"
	until_ok 30 grep -q probe-done "$w/result.txt" || { cat "$w/result.txt" >&2; screen >&2; return 1; }
	cat "$w/result.txt" >&2
	grep -qx on-create "$w/result.txt"
	grep -qx post-create "$w/result.txt"
	grep -qx 'greeting: hello from proj' "$w/result.txt"
	grep -qx tool-ran "$w/result.txt"
	grep -qx project-data "$w/result.txt"
	grep -qx 'ro /data' "$w/result.txt"
	grep -qx 'cache writable' "$w/result.txt"
	grep -qx 'hidden key' "$w/result.txt"
	grep -qx commit-ok "$w/result.txt"
	grep -qx status-ok "$w/result.txt"
	# Its status reached the dashboard, and `list` says which backend.
	wait_for '✓ box'
	wrx list | grep -qE '^box +box .* devcontainer .* 1$' || { wrx list >&2; return 1; }
	# The agent's volume is its own.
	local vol
	vol=$(podman volume ls --format '{{.Name}}' | grep -- '-cache$')
	[ "$(echo "$vol" | wc -l)" -eq 1 ]
	# The commit came back through the verified import; merge lands it.
	rm "$w/probe.sh" "$w/result.txt"
	wrx merge box >/dev/null
	git -C "$repo" log -1 --format=%s main | grep -qx "Merge branch 'box'"
	test "$(cat "$repo/inside.txt")" = "made in the dev container"
	# The merge removed the agent, and its volume with it.
	not eval 'podman volume ls --format "{{.Name}}" | grep -qx "$vol"'
	# workrex's own rules hold in it: the user's attack from inside.
	wrx add probe -b >/dev/null 2>&1
	wrx sandbox doctor --attack probe >"$E2E_TMP/attack" 2>&1 || { cat "$E2E_TMP/attack" >&2; return 1; }
	grep -q '^ok    secrets' "$E2E_TMP/attack"
	grep -qx 'every case held' "$E2E_TMP/attack"
	# rm takes probe's; the test takes the image it built.
	wrx rm -f probe >/dev/null
	not eval 'podman volume ls --format "{{.Name}}" | grep -q -- "-cache$"'
}

t_devcontainer_refusals() {
	make_repo
	mkdir -p "$repo/.devcontainer" "$HOME/.ssh"
	echo PRIVATE-KEY >"$HOME/.ssh/id_ed25519"
	cat >"$repo/.devcontainer/devcontainer.json" <<-'EOF'
		{
		  "image": "localhost/workrex-test:latest",
		  "mounts": ["source=${localEnv:HOME}/.ssh,target=/root/.ssh,type=bind"]
		}
	EOF
	git -C "$repo" add -A
	git -C "$repo" commit -qm "a dev container that wants the keys"
	devc_config
	not wrx add evil -S >"$E2E_TMP/add" 2>&1
	cat "$E2E_TMP/add" >&2
	grep -q "binds $HOME/.ssh, outside the project; refused" "$E2E_TMP/add"
	# Nothing made: no worktree, no branch.
	not git -C "$repo" rev-parse -q --verify refs/heads/evil
	[ "$(git -C "$repo" worktree list | wc -l)" -eq 1 ]
	# privileged and an engine flag: the same.
	printf '{"image": "localhost/workrex-test:latest", "privileged": true}\n' >"$repo/.devcontainer/devcontainer.json"
	not wrx add evil -S >"$E2E_TMP/add2" 2>&1
	grep -q '"privileged": true gives the agent the host; refused' "$E2E_TMP/add2"
	printf '{"image": "localhost/workrex-test:latest", "runArgs": ["--network=host"]}\n' >"$repo/.devcontainer/devcontainer.json"
	not wrx add evil -S >"$E2E_TMP/add3" 2>&1
	grep -q "runArgs '--network=host' passes the engine a flag" "$E2E_TMP/add3"
	# No devcontainer.json: the CLI's reason; and no CLI at all.
	rm -r "$repo/.devcontainer"
	not wrx add evil -S >"$E2E_TMP/add4" 2>&1
	cat "$E2E_TMP/add4" >&2
	grep -qi 'devcontainer read-configuration: .*not found' "$E2E_TMP/add4"
	global_config "  enabled: true" "  backend: devcontainer" "  devcontainer:" "    cli: /nonexistent/devcontainer"
	not wrx add evil -S >"$E2E_TMP/add5" 2>&1
	cat "$E2E_TMP/add5" >&2
	grep -q 'cannot run it (npm install -g @devcontainers/cli' "$E2E_TMP/add5"
	not git -C "$repo" rev-parse -q --verify refs/heads/evil
}

run_test "a dev container from devcontainer.json (built by the real CLI, podman): the agent runs in it, status and merge, rules on top" t_devcontainer_agent_runs_in_it
run_test "a devcontainer.json asking for a host mount, privileged, an engine flag; no file; no CLI: refused with the reason, nothing made" t_devcontainer_refusals
drop_images
