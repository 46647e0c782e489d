/*
 * table.c - the configuration keys (see table.h): SPEC.md section 3 as rows.
 *
 * Adding a key is adding a row here and its field in struct config; the
 * walk, the defaults, `config reference`, `config check`, `workrex init`
 * and workrex.yaml(5)'s KEY REFERENCE follow from the row.
 */
#include "table.h"
#include "config.h"

#include <string.h>

#define AT(field) offsetof(struct config, field)
#define SB(field) offsetof(struct config, sandbox.field)

static const char *const strategies[] = {"merge", "rebase", "squash", NULL};
static const char *const notifies[] = {"off", "bell", "desktop", "both", NULL};
static const char *const backends[] = {"container", "lima", "devcontainer", NULL};
static const char *const targets[] = {"agent", "all", NULL};
static const char *const runtimes[] = {"podman", "docker", "apple-container", NULL};
static const char *const kernels[] = {"default", "gvisor", NULL};
static const char *const policies[] = {"allow", "deny", NULL};
static const char *const tristate[] = {"auto", "true", "false", NULL};
static const char *const isolations[] = {"project", "shared", NULL};
static const char *const clip_policies[] = {"allow", "ask", "deny", NULL};
static const char *const orders[] = {"number", "attention", NULL};
static const char *const toolchains[] = {"auto", "off", "devbox", "flake", NULL};
static const char *const committers[] = {"user", "agent", NULL};

/* A row: its path, type and field; then only what differs from nothing. */
// clang-format off
#define KEY(p, t, field, ...) {.path = (p), .type = (t), .offset = (field), __VA_ARGS__}
#define SECTION(p, ...) {.path = (p), .type = CONFIG_SECTION, __VA_ARGS__}
// clang-format on
#define GLOBAL .flags = CONFIG_GLOBAL_ONLY

const struct config_key config_keys[] = {
	KEY("main_branch", CONFIG_STRING, AT(main_branch), .unset = "detected",
	    .flags = CONFIG_ARGUMENT, .sink = "git merge and rebase, as the branch (after --)",
	    .help = "what merge merges into: origin/HEAD, main or master"),
	KEY("worktree_dir", CONFIG_STRING, AT(worktree_dir), .flags = CONFIG_COMMAND,
	    .sink = "git worktree add: where on the host each new worktree is made",
	    .unset = "<repo-parent>/<project>__worktrees",
	    .help = "~ and {project} expand; a relative path is the repository's"),
	KEY("agent", CONFIG_STRING, AT(agent), .flags = CONFIG_COMMAND,
	    .sink = "the agent's command line: a program the host (or its sandbox) runs",
	    .unset = "claude if on PATH, else $SHELL",
	    .help = "a name from agents, a known CLI or a command"),
	KEY("agents", CONFIG_AGENTS, AT(agents), GLOBAL, .def = "{}",
	    .sink = "each profile's command line: a program the host (or its sandbox) runs",
	    .help = "profiles, name: {type, command, args, env}; type: an agent kind "
		    "(workrex agents) when the command's name does not say"),
	KEY("panes", CONFIG_PANES, AT(panes), .flags = CONFIG_COMMAND,
	    .sink = "each pane's command line: programs the host (or the sandbox) runs",
	    .unset = "the agent's pane and a shell",
	    .help = "a list of {command, split: horizontal|vertical, size, focus}; "
		    "<agent> is the agent"),
	KEY("layouts", CONFIG_LAYOUTS, AT(layouts), .flags = CONFIG_COMMAND, .def = "{}",
	    .sink = "each pane's command line, as panes",
	    .help = "name: {panes: [...]}, as panes; add -l NAME opens an agent with them"),
	SECTION("auto_name", .help = "add -A: the branch named from the prompt"),
	KEY("auto_name.command", CONFIG_STRING, AT(auto_name_command), .flags = CONFIG_COMMAND,
	    .sink = "sh -c on the host, in the project or the agent's worktree",
	    .unset = "the agent kind's cheap model (workrex agents)",
	    .help = "a shell command that reads the request on stdin and prints a name"),
	SECTION("files"),
	KEY("files.copy", CONFIG_LIST, AT(files_copy), .def = "[]", .flags = CONFIG_BENEATH,
	    .sink = "cp -a from the project into each new worktree",
	    .help = "globs copied from the main worktree"),
	KEY("files.symlink", CONFIG_LIST, AT(files_symlink), .def = "[]", .flags = CONFIG_BENEATH,
	    .sink = "links in each new worktree to the project's files",
	    .help = "globs symlinked from the main worktree"),
	KEY("post_create", CONFIG_LIST, AT(post_create), .flags = CONFIG_COMMAND, .def = "[]",
	    .sink = "sh -c on the host, in the project or the agent's worktree",
	    .help = "shell commands; \"<global>\" splices the global list"),
	KEY("pre_merge", CONFIG_LIST, AT(pre_merge), .flags = CONFIG_COMMAND, .def = "[]",
	    .sink = "sh -c on the host, in the project or the agent's worktree",
	    .help = "a failing one aborts the merge"),
	KEY("pre_remove", CONFIG_LIST, AT(pre_remove), .flags = CONFIG_COMMAND, .def = "[]",
	    .sink = "sh -c on the host, in the project or the agent's worktree",
	    .help = "run before a worktree is removed"),
	KEY("merge_strategy", CONFIG_CHOICE, AT(merge_strategy), .def = "merge",
	    .choices = strategies, .help = "how merge brings the branch back"),
	KEY("check", CONFIG_STRING, AT(check), .flags = CONFIG_COMMAND, .unset = "none",
	    .sink = "sh -c in the candidate's worktree, on the host or in its sandbox",
	    .help = "a shell command that says whether a group's candidate, or an agent in the "
		    "merge queue, is good (make test), run in its worktree, inside its sandbox "
		    "when it is sandboxed"),
	KEY("ports", CONFIG_NUMBER, AT(ports), .def = "0", .min = 0, .max = 16,
	    .help = "ports each agent holds, no other agent's, kept while it lives "
		    "(WORKREX_PORT, WORKREX_PORT_1...; 30100-39999), forwarded here from a "
		    "sandboxed or remote agent's"),
	KEY("check_required", CONFIG_BOOL, AT(check_required), .def = "false",
	    .help = "compare --merge refuses a candidate whose check failed or did not run"),
	SECTION("review", .help = "the review view (C-b D) and workrex diff"),
	KEY("review.pager", CONFIG_STRING, AT(review_pager), .flags = CONFIG_COMMAND,
	    .sink = "a program the host runs with the diff on its input",
	    .unset = "delta --color-only if delta is on PATH, else git's colours",
	    .help = "a command the diff goes through to be coloured, its lines kept one for "
		    "one (delta --color-only, diff-highlight); none: git's colours"),
	KEY("review.remote", CONFIG_STRING, AT(review_remote), .def = "origin",
	    .flags = CONFIG_COMMAND | CONFIG_ARGUMENT,
	    .help = "where workrex pr pushes and add --pr fetches",
	    .sink = "git push, fetch and ls-remote, as the remote"),
	KEY("review.commit", CONFIG_CHOICE, AT(review_commit), .def = "user", .choices = committers,
	    .help = "c in the review view: user, what is staged with a message you type; "
		    "agent, asks the agent to commit (review.commit_prompt)"),
	KEY("review.commit_prompt", CONFIG_STRING, AT(review_commit_prompt),
	    .def = "Commit what is staged now, with a message that says what changed and why.",
	    .help = "what c sends the agent with review.commit: agent"),
	SECTION("web", .help = "the web view (workrex web): the agents in a browser"),
	KEY("web.listen", CONFIG_STRING, AT(web_listen), GLOBAL,
	    .unset = "127.0.0.1:7681 for workrex web; the dashboard starts none",
	    .help = "HOST:PORT the web view listens on; set, the dashboard starts it too. "
		    "Not loopback: web.tls_cert and web.tls_key, or workrex web --insecure-listen"),
	KEY("web.tls_cert", CONFIG_PATH, AT(web_tls_cert), GLOBAL,
	    .help = "a PEM certificate: the web view speaks HTTPS"),
	KEY("web.tls_key", CONFIG_PATH, AT(web_tls_key), GLOBAL,
	    .help = "the PEM key of web.tls_cert"),
	KEY("web.names", CONFIG_LIST, AT(web_names), GLOBAL, .def = "[]",
	    .help = "other host names the page is reached by (a tailnet name): any other Host is "
		    "refused"),
	KEY("web.read_only", CONFIG_BOOL, AT(web_read_only), GLOBAL, .def = "false",
	    .help = "the page shows the agents and their panes, and types and merges nothing"),
	SECTION("status_icons", .help = "the sidebar's icon for each status"),
	KEY("status_icons.working", CONFIG_STRING, AT(icons[WRX_STATUS_WORKING - 1]), .def = "●"),
	KEY("status_icons.waiting", CONFIG_STRING, AT(icons[WRX_STATUS_WAITING - 1]), .def = "◆"),
	KEY("status_icons.done", CONFIG_STRING, AT(icons[WRX_STATUS_DONE - 1]), .def = "✓"),
	KEY("status_icons.failed", CONFIG_STRING, AT(icons[WRX_STATUS_FAILED - 1]), .def = "✗"),
	SECTION("keys"),
	KEY("keys.prefix", CONFIG_KEY, AT(prefix), .def = "C-b",
	    .help = "C-x, M-x, a character, Space, F1..F12, ..."),
	KEY("keys.bind", CONFIG_BINDS, AT(binds), .def = "{}",
	    .help = "key: action (workrex(1)); none removes a binding"),
	KEY("scrollback", CONFIG_NUMBER, AT(scrollback), .def = "10000", .min = 0, .max = 1000000,
	    .help = "lines of history kept per pane"),
	SECTION("notify", .scalar = "notify.mode",
		.help = "how an agent that needs you is announced (notify: bell is notify.mode: "
			"bell)"),
	KEY("notify.mode", CONFIG_CHOICE, AT(notify), .def = "bell", .choices = notifies,
	    .help = "off, the terminal's bell, a desktop notification (notify-send), or both"),
	KEY("notify.command", CONFIG_LIST, AT(notify_command), .def = "[]",
	    .flags = CONFIG_GLOBAL_ONLY | CONFIG_COMMAND,
	    .sink = "a program the host runs, its environment WORKREX_HANDLE, WORKREX_STATUS "
		    "and WORKREX_TEXT",
	    .help = "argv run for each notification (a push to ntfy, a chat webhook), whatever "
		    "notify.mode says"),
	SECTION("sidebar"),
	KEY("sidebar.order", CONFIG_CHOICE, AT(sidebar_order), .def = "number", .choices = orders,
	    .help = "number: the agents by number, a stable order; attention: those that "
		    "need you first"),
	KEY("sidebar.width", CONFIG_NUMBER, AT(sidebar_width), .def = "24", .min = 12, .max = 80,
	    .help = "the sidebar's columns (C-b s hides and shows it); long names and titles "
		    "want more"),
	SECTION("clipboard", .help = "what a pane's clipboard writes (OSC 52) may do"),
	KEY("clipboard.host_panes", CONFIG_CHOICE, AT(clipboard_host), GLOBAL, .def = "allow",
	    .choices = clip_policies, .help = "what a host pane's clipboard write (OSC 52) does"),
	KEY("clipboard.sandboxed_panes", CONFIG_CHOICE, AT(clipboard_sandboxed), GLOBAL,
	    .def = "ask", .choices = clip_policies,
	    .help = "the same for a sandboxed pane (asked: the user says y or n)"),
	SECTION("sandbox"),
	KEY("sandbox.enabled", CONFIG_BOOL, SB(enabled), .flags = CONFIG_ONLY_ON, .def = "false",
	    .help = "also add -S"),
	KEY("sandbox.backend", CONFIG_CHOICE, SB(backend), .def = "container", .choices = backends,
	    .help = "lima: a persistent VM per project; devcontainer: the project's "
		    "devcontainer.json"),
	KEY("sandbox.runtime", CONFIG_CHOICE, SB(runtime), GLOBAL, .def = "default",
	    .choices = kernels,
	    .help = "gvisor: containers under runsc, a kernel of their own (podman)"),
	KEY("sandbox.target", CONFIG_CHOICE, SB(target), .def = "agent", .choices = targets,
	    .help = "agent: only the agent's pane; all: every pane"),
	KEY("sandbox.image", CONFIG_STRING, SB(image), .unset = "workrex-sandbox:<agent>",
	    .flags = CONFIG_ARGUMENT,
	    .sink = "podman, docker or container run (after --) and pull, as the image",
	    .help = "made by `workrex sandbox build`"),
	KEY("sandbox.env", CONFIG_ENV, SB(env), GLOBAL, .def = "{}", .help = "NAME: value",
	    .sink = "the sandbox's environment (--env NAME=value)"),
	KEY("sandbox.env_passthrough", CONFIG_LIST, SB(env_passthrough), GLOBAL, .def = "[]",
	    .help = "host variables passed in"),
	KEY("sandbox.extra_mounts", CONFIG_MOUNTS, SB(extra_mounts), GLOBAL, .def = "[]",
	    .sink = "the sandbox's mounts: host paths the agent reads or writes",
	    .help = "path (read-only) or {host_path, guest_path, writable}"),
	KEY("sandbox.host_commands", CONFIG_LIST, SB(host_commands), GLOBAL, .def = "[]",
	    .sink = "programs the host runs for the sandboxed agent",
	    .help = "commands a sandbox may run on the host, in bubblewrap"),
	KEY("sandbox.host_command_paths", CONFIG_LIST, SB(host_command_paths), GLOBAL, .def = "[]",
	    .sink = "host paths a host command reads",
	    .help = "more host paths a host command reads (toolchains), read-only"),
	KEY("sandbox.host_command_processes", CONFIG_NUMBER, SB(host_command_processes), GLOBAL,
	    .def = "512", .min = 16, .max = 100000, .help = "a host command's processes at most"),
	KEY("sandbox.host_command_memory", CONFIG_STRING, SB(host_command_memory),
	    .flags = CONFIG_GLOBAL_ONLY | CONFIG_SIZE, .def = "8GiB",
	    .help = "a host command's resident memory at most"),
	KEY("sandbox.host_command_seconds", CONFIG_NUMBER, SB(host_command_seconds), GLOBAL,
	    .def = "3600", .min = 1, .max = 86400, .help = "a host command is stopped after this"),
	KEY("sandbox.agent_config_dir", CONFIG_PATH, SB(agent_config_dir), GLOBAL,
	    .sink = "a host directory whose settings and credentials the sandbox gets",
	    .unset = "per agent", .help = "the agent kind's own (workrex agents): ~/.claude, ..."),
	KEY("sandbox.rpc_host", CONFIG_STRING, SB(rpc_host), GLOBAL, .unset = "per runtime",
	    .sink = "the address the RPC bridge and the proxy listen on",
	    .help = "the host's address where no socket is shared (Apple Container: "
		    "192.168.64.1; Docker Desktop: 127.0.0.1)"),
	KEY("sandbox.dangerously_allow_unsandboxed_host_exec", CONFIG_BOOL,
	    SB(dangerously_allow_unsandboxed_host_exec), GLOBAL, .def = "false",
	    .help = "host commands without bubblewrap"),
	SECTION("sandbox.container"),
	KEY("sandbox.container.runtime", CONFIG_CHOICE, SB(container.runtime), .choices = runtimes,
	    .unset = "detected", .help = "the first of these installed"),
	KEY("sandbox.container.memory", CONFIG_STRING, SB(container.memory), .def = "8g",
	    .flags = CONFIG_ARGUMENT,
	    .sink = "podman, docker or container run --memory=", .help = "none: no limit"),
	KEY("sandbox.container.cpus", CONFIG_STRING, SB(container.cpus), .unset = "no limit",
	    .flags = CONFIG_ARGUMENT,
	    .sink = "podman, docker or container run --cpus=", .help = "e.g. 4"),
	KEY("sandbox.container.pids_limit", CONFIG_NUMBER, SB(container.pids_limit), .def = "4096",
	    .min = 16, .max = 1000000),
	KEY("sandbox.container.devices", CONFIG_LIST, SB(container.devices), GLOBAL, .def = "[]",
	    .sink = "podman or docker run --device=: host devices in the sandbox"),
	KEY("sandbox.container.group_add", CONFIG_LIST, SB(container.group_add), GLOBAL,
	    .sink = "podman or docker run --group-add=", .def = "[]"),
	KEY("sandbox.container.excluded_files", CONFIG_LIST, SB(container.excluded_files), GLOBAL,
	    .def = "[]", .help = "paths in the worktree hidden from the sandbox"),
	KEY("sandbox.container.oci_runtime", CONFIG_STRING, SB(container.oci_runtime), GLOBAL,
	    .sink = "podman or docker --runtime=: a program the host runs",
	    .unset = "the engine's"),
	KEY("sandbox.container.share_sockets", CONFIG_CHOICE, SB(container.share_sockets), GLOBAL,
	    .def = "auto", .choices = tristate,
	    .help = "false: RPC and proxy over TCP to rpc_host, a firewall inside (auto: false "
		    "for Apple Container and Docker Desktop)"),
	KEY("sandbox.container.cap_add", CONFIG_LIST, SB(container.cap_add), GLOBAL, .def = "[]",
	    .sink = "podman or docker run --cap-add=", .help = "ALL and SYS_ADMIN are refused"),
	KEY("sandbox.container.security_opt", CONFIG_LIST, SB(container.security_opt), GLOBAL,
	    .sink = "podman or docker run --security-opt=", .def = "[]"),
	SECTION("sandbox.network", GLOBAL),
	KEY("sandbox.network.policy", CONFIG_CHOICE, SB(network.policy), .def = "allow",
	    .choices = policies,
	    .help = "deny: no network but HTTPS to allowed_domains, through "
		    "the proxy"),
	KEY("sandbox.network.allowed_domains", CONFIG_DOMAINS, SB(network.allowed), .def = "[]",
	    .help = "example.com, \"*.example.com\" (subdomains only), or {host, "
		    "allow_private_ips}"),
	KEY("sandbox.network.max_connections", CONFIG_NUMBER, SB(network.max_connections),
	    .def = "128", .min = 1, .max = 1024, .help = "connections through the proxy at once"),
	SECTION("sandbox.lima"),
	KEY("sandbox.lima.isolation", CONFIG_CHOICE, SB(lima.isolation), .def = "project",
	    .choices = isolations, .help = "project: a VM per project; shared: one VM"),
	KEY("sandbox.lima.cpus", CONFIG_NUMBER, SB(lima.cpus), .def = "4", .min = 1, .max = 1024),
	KEY("sandbox.lima.memory", CONFIG_STRING, SB(lima.memory), .flags = CONFIG_SIZE,
	    .def = "4GiB"),
	KEY("sandbox.lima.disk", CONFIG_STRING, SB(lima.disk), .flags = CONFIG_SIZE,
	    .def = "100GiB"),
	KEY("sandbox.lima.provision", CONFIG_STRING, SB(lima.provision), .unset = "none",
	    .flags = CONFIG_COMMAND,
	    .sink = "a host file the host reads, run in the Lima VM as it is made",
	    .help = "a script run once in a new VM"),
	KEY("sandbox.lima.skip_default_provision", CONFIG_BOOL, SB(lima.skip_default_provision),
	    .def = "false"),
	KEY("sandbox.lima.toolchain", CONFIG_CHOICE, SB(lima.toolchain), .def = "auto",
	    .choices = toolchains),
	KEY("sandbox.lima.accept_reduced_git_metadata_isolation", CONFIG_BOOL,
	    SB(lima.accept_reduced_git_metadata_isolation), GLOBAL, .def = "false",
	    .help = "Lima mounts git metadata writable"),
	SECTION("sandbox.devcontainer"),
	KEY("sandbox.devcontainer.cli", CONFIG_STRING, SB(devcontainer_cli),
	    .flags = CONFIG_GLOBAL_ONLY | CONFIG_COMMAND, .def = "devcontainer",
	    .sink = "the dev container CLI the host runs (read-configuration, build)",
	    .help = "@devcontainers/cli's devcontainer"),
	KEY("workspaces", CONFIG_WORKSPACES, AT(workspaces), GLOBAL, .def = "{}",
	    .help = "repositories that add --repos takes together: name: {repos: [~/src/api, "
		    "~/src/web]} (or a .workrex-workspace.yaml beside them)"),
	SECTION("remote", GLOBAL),
	KEY("remote.hosts", CONFIG_HOSTS, AT(hosts), GLOBAL, .def = "{}",
	    .sink = "ssh, as the destination (after --); path: a directory there",
	    .help = "servers for add --remote: name: {ssh: user@host, path: /srv/clone}"),
};

const size_t config_nkeys = sizeof config_keys / sizeof *config_keys;

const struct config_key *config_key_find(const char *path)
{
	for (size_t i = 0; i < config_nkeys; i++)
		if (strcmp(config_keys[i].path, path) == 0)
			return &config_keys[i];
	return NULL;
}

const char *config_type_name(enum config_type t)
{
	static const char *const names[] = {
		[CONFIG_SECTION] = "section",
		[CONFIG_STRING] = "string",
		[CONFIG_PATH] = "path",
		[CONFIG_BOOL] = "true or false",
		[CONFIG_NUMBER] = "number",
		[CONFIG_CHOICE] = "choice",
		[CONFIG_LIST] = "list",
		[CONFIG_ENV] = "mapping",
		[CONFIG_KEY] = "key",
		[CONFIG_AGENTS] = "mapping",
		[CONFIG_PANES] = "list",
		[CONFIG_MOUNTS] = "list",
		[CONFIG_LAYOUTS] = "mapping",
		[CONFIG_BINDS] = "mapping",
		[CONFIG_HOSTS] = "mapping",
		[CONFIG_ANY] = "any",
		[CONFIG_WORKSPACES] = "mapping",
		[CONFIG_DOMAINS] = "list",
	};
	return names[t];
}
