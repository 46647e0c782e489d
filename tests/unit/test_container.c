/*
 * Tests for src/backends/container.c: the command lines for podman, docker
 * and Apple Container, and every refusal. Docker and Apple Container cannot
 * run on this machine: their argv is run against a recording fake on PATH
 * (a script that writes its arguments, one per line) and compared with the
 * expected command line. podman runs for real in tests/sandbox/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backends/agenthome.h"
#include "config/kinds.h"
#include "backends/backend.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char top[] = "/tmp/wrx-ctr-XXXXXX";
static char *repo, *gitdir, *wt, *bin, *guest, *rpcdir, *snap, *record, *priv, *gitfile;
static char *saved_path;

static void sh(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = xvasprintf(fmt, ap);
	va_end(ap);
	char *full = xasprintf("(%s) >/dev/null 2>&1", cmd);
	if (system(full) != 0)
		fail_msg("setup failed: %s", cmd);
	free(cmd);
	free(full);
}

static int setup(void **state)
{
	(void)state;
	if (mkdtemp(top) == NULL)
		return -1;
	repo = xasprintf("%s/proj", top);
	gitdir = xasprintf("%s/.git", repo);
	wt = xasprintf("%s/proj__worktrees/box", top);
	bin = xasprintf("%s/bin", top);
	guest = xasprintf("%s/workrex-guest", top);
	rpcdir = xasprintf("%s/rpc", top);
	snap = xasprintf("%s/snapshot", top);
	record = xasprintf("%s/argv", top);
	priv = xasprintf("%s/private/git", top);
	gitfile = xasprintf("%s/private/gitfile", top);
	sh("git init -q -b main %s && cd %s && git -c user.name=T -c user.email=t@e commit -q "
	   "--allow-empty -m i && git worktree add -q -b box %s",
	   repo, repo, wt);
	sh("mkdir -p %s %s && touch %s %s && chmod +x %s", bin, rpcdir, guest, snap, guest);
	/* The recording fakes: every argument on its own line. */
	const char *fakes[] = {"docker", "container", "podman"};
	for (size_t i = 0; i < 3; i++) {
		char *f = xasprintf("%s/%s", bin, fakes[i]);
		FILE *fp = fopen(f, "w");
		fprintf(fp, "#!/bin/sh\nfor a; do printf '%%s\\n' \"$a\"; done >%s\n", record);
		fclose(fp);
		chmod(f, 0755);
		free(f);
	}
	saved_path = xstrdup(getenv("PATH"));
	setenv("HOME", top, 1);
	unsetenv("XDG_STATE_HOME");
	sh("mkdir -p %s/.claude && echo '{}' >%s/.claude/settings.json && echo "
	   "'{\"mcpServers\":{}}' "
	   ">%s/.claude.json && echo '{}' >%s/.claude/.credentials.json",
	   top, top, top, top);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	setenv("PATH", saved_path, 1);
	char *rm = xasprintf("rm -rf '%s'", top);
	int rc = system(rm);
	free(rm);
	return rc == 0 ? 0 : -1;
}

static char *const pane_argv[] = {"/bin/sh", "-c", "exec 'claude' --dangerously-skip-permissions",
				  NULL};
static char *const pane_env[] = {"TERM=xterm-256color", "WORKREX_PANE=7",
				 "WORKREX_RPC_SOCKET=/host/path.sock", "WORKREX_RPC_TOKEN=abc",
				 NULL};

static struct backend_pane pane(const struct config *c)
{
	struct backend_pane p = {
		.cfg = c,
		.project_root = repo,
		.git_dir = gitdir,
		.worktree = wt,
		.handle = "box",
		.n = 7,
		.agent = "claude",
		.agent_pane = true,
		.argv = pane_argv,
		.env = pane_env,
		.rpc_dir = rpcdir,
		.rpc_port = 40123,
		.guest_bin = guest,
		.snapshot = snap,
		.private_gitdir = priv,
		.private_gitfile = gitfile,
		.session = "s1",
		.git_name = "Host User",
		.tty = true,
	};
	return p;
}

/* Run argv (through the fake on PATH) and return what it recorded, one line each. */
static char *run_recorded(struct strlist *argv)
{
	unlink(record);
	pid_t pid = fork();
	if (pid == 0) {
		char **v = calloc(argv->n + 1, sizeof *v);
		memcpy(v, argv->v, argv->n * sizeof *v);
		execvp(v[0], v);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	char *text = NULL, *cause = NULL;
	if (file_read(record, 1 << 20, &text, &cause) < 0)
		fail_msg("the fake did not run: %s", cause);
	return text;
}

/* The command that removes the pane's container, as the runtime got it. */
static void expect_stop(const struct backend_pane *p, const char *want)
{
	struct strlist stop = {0};
	backend_container.stop_argv(p, &stop);
	char *s = run_recorded(&stop);
	assert_string_equal(s, want);
	free(s);
	strlist_free(&stop);
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static void expect_line(const char *text, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line = xvasprintf(fmt, ap);
	va_end(ap);
	if (!has_line(text, line))
		fail_msg("missing argument [%s] in:\n%s", line, text);
	free(line);
}

static void expect_no_line(const char *text, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line = xvasprintf(fmt, ap);
	va_end(ap);
	if (has_line(text, line))
		fail_msg("unexpected argument [%s] in:\n%s", line, text);
	free(line);
}

static void with_runtime(struct config *c, const char *rt)
{
	config_init(c);
	c->sandbox.container.runtime = xstrdup(rt);
	char *path = xasprintf("%s:%s", bin, saved_path);
	setenv("PATH", path, 1);
	free(path);
}

static void test_docker_argv(void **state)
{
	(void)state;
	struct config c;
	with_runtime(&c, "docker");
	free(c.sandbox.container.memory);
	c.sandbox.container.memory = xstrdup("4g");
	strlist_add(&c.sandbox.env, "FOO=bar");
	struct backend_pane p = pane(&c);
	char *cause = NULL;
	assert_int_equal(backend_container.check(&p, &cause), 0);
	struct strlist argv = {0};
	assert_int_equal(backend_container.argv(&p, &argv, &cause), 0);
	char *got = run_recorded(&argv);
	/* The command itself: run --rm -it, the name, the user, the limits. */
	assert_true(strncmp(got, "run\n--rm\n-it\n--name\nwrx-box-7-51b8c9\n", 37) == 0);
	expect_line(got, "--user=%ld:%ld", (long)getuid(), (long)getgid());
	expect_line(got, "--pids-limit=4096");
	expect_line(got, "--memory=4g");
	expect_line(got, "--security-opt=no-new-privileges");
	expect_line(got, "--workdir=%s", wt);
	expect_line(got, "--label=workrex.project=%s", repo);
	/* The git metadata boundary. */
	expect_line(got, "type=bind,source=%s,target=%s,readonly", repo, repo);
	expect_line(got, "type=bind,source=%s,target=%s", wt, wt);
	/* The git dir is inside the main worktree, whose read-only mount covers it. */
	expect_no_line(got, "type=bind,source=%s,target=%s,readonly", gitdir, gitdir);
	/* Nothing of the host's git dir is writable: commits go to the private dir. */
	expect_no_line(got, "type=bind,source=%s/objects,target=%s/objects", gitdir, gitdir);
	expect_no_line(got, "type=bind,source=%s/refs,target=%s/refs", gitdir, gitdir);
	expect_no_line(got, "type=bind,source=%s/worktrees/box,target=%s/worktrees/box", gitdir,
		       gitdir);
	expect_line(got, "type=bind,source=%s,target=%s", priv, priv);
	expect_line(got, "type=bind,source=%s,target=%s/.git,readonly", gitfile, wt);
	expect_line(got, "type=bind,source=%s,target=%s/config,readonly", snap, gitdir);
	/* No capabilities, no new privileges, a memory limit by default. */
	expect_line(got, "--cap-drop=ALL");
	expect_line(got, "--security-opt=no-new-privileges");
	expect_line(got, "type=bind,source=%s,target=/run/workrex,readonly", rpcdir);
	expect_line(got, "type=bind,source=%s,target=/opt/workrex/bin/workrex,readonly", guest);
	/* The agent's config dir is its own; the host's settings on it read-only... */
	char *own = xasprintf("%s/.local/state/workrex/sandbox/git-%08x/box/home/claude", top,
			      str_hash(WRX_HASH_INIT, repo));
	expect_line(got, "type=bind,source=%s,target=/tmp/.claude", own);
	expect_no_line(got, "type=bind,source=%s/.claude,target=/tmp/.claude,readonly", top);
	expect_line(got,
		    "type=bind,source=%s/.claude/settings.json,target=/tmp/.claude/settings.json,"
		    "readonly",
		    top);
	/* ...its credentials a copy, and nothing else of the host's: no projects/, no history. */
	expect_no_line(got,
		       "type=bind,source=%s/.claude/.credentials.json,target=/tmp/.claude/"
		       ".credentials.json",
		       top);
	assert_null(strstr(got, "/.claude/projects"));
	char *cred = xasprintf("%s/.credentials.json", own);
	struct stat st;
	assert_int_equal(lstat(cred, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	free(cred);
	free(own);
	/* ~/.claude.json is this agent's own copy, never the host's. */
	expect_line(got,
		    "type=bind,source=%s/.local/state/workrex/sandbox/git-%08x/box/claude.json,"
		    "target=/tmp/.claude.json",
		    top, str_hash(WRX_HASH_INIT, repo));
	expect_no_line(got, "type=bind,source=%s/.claude.json,target=/tmp/.claude.json", top);
	expect_line(got, "type=tmpfs,target=/tmp,tmpfs-mode=1777");
	/* HOME is the container's; nothing of the host's home is mounted. */
	expect_no_line(got, "type=bind,source=%s,target=%s", top, top);
	/* Environment: the pane's (less its host socket), the sandbox's. */
	expect_line(got, "HOME=/tmp");
	expect_line(got, "WORKREX_SANDBOX=1");
	expect_line(got, "WORKREX_RPC_SOCKET=/run/workrex/rpc.sock");
	expect_line(got, "WORKREX_RPC_TOKEN=abc");
	expect_no_line(got, "WORKREX_RPC_SOCKET=/host/path.sock");
	expect_line(got, "FOO=bar");
	expect_line(got, "GIT_CONFIG_COUNT=1");
	expect_line(got, "GIT_CONFIG_KEY_0=user.name");
	expect_line(got, "GIT_CONFIG_VALUE_0=Host User");
	/* Then the image and the command, after "--". */
	assert_non_null(strstr(got, "--\nworkrex-sandbox:claude\n/bin/sh\n-c\nexec 'claude' "
				    "--dangerously-skip-permissions\n"));
	expect_stop(&p, "rm\n-f\nwrx-box-7-51b8c9\n");
	free(got);
	strlist_free(&argv);
	config_free(&c);
}

/*
 * sandbox.runtime: gvisor is podman's runtime runsc, with its network the
 * container's (or none), host sockets let open; refused where it cannot
 * be that, never run weaker.
 */
static void test_gvisor(void **state)
{
	(void)state;
	sh("printf '#!/bin/sh\\n' >%s/runsc && chmod +x %s/runsc", bin, bin);
	struct config c;
	with_runtime(&c, "podman");
	free(c.sandbox.runtime);
	c.sandbox.runtime = xstrdup("gvisor");
	struct backend_pane p = pane(&c);
	char *cause = NULL;
	struct strlist argv = {0};
	assert_int_equal(backend_container.check(&p, &cause), 0);
	assert_int_equal(backend_container.argv(&p, &argv, &cause), 0);
	assert_string_equal(argv.v[1], "--runtime=runsc");
	assert_string_equal(argv.v[2], "--runtime-flag=network=host");
	assert_string_equal(argv.v[3], "--runtime-flag=host-uds=open");
	assert_string_equal(argv.v[4], "run");
	strlist_free(&argv);
	p.offline = true; /* policy: deny with its socket: no network at all */
	assert_int_equal(backend_container.argv(&p, &argv, &cause), 0);
	assert_string_equal(argv.v[2], "--runtime-flag=network=none");
	char *got = run_recorded(&argv);
	expect_line(got, "--network=none");
	free(got);
	strlist_free(&argv);
	p.offline = false;
	c.sandbox.container.oci_runtime = xstrdup("crun");
	assert_int_equal(backend_container.check(&p, &cause), -ENOTSUP);
	assert_non_null(strstr(cause, "set one"));
	free(cause);
	free(c.sandbox.container.runtime);
	c.sandbox.container.runtime = xstrdup("docker");
	assert_int_equal(backend_container.check(&p, &cause), -ENOTSUP);
	assert_non_null(strstr(cause, "gvisor needs podman"));
	free(cause);
	config_free(&c);
	sh("rm %s/runsc", bin);
	with_runtime(&c, "podman");
	free(c.sandbox.runtime);
	c.sandbox.runtime = xstrdup("gvisor");
	p = pane(&c);
	char *path = xasprintf("%s", bin); /* no runsc anywhere */
	char *saved = xstrdup(getenv("PATH"));
	setenv("PATH", path, 1);
	assert_int_equal(backend_container.check(&p, &cause), -ENOTSUP);
	assert_non_null(strstr(cause, "apt-get install runsc"));
	setenv("PATH", saved, 1);
	free(cause);
	free(saved);
	free(path);
	config_free(&c);
}

/* podman: user namespaces taken away, its proxy variables kept out, 8g by default. */
static void test_podman_argv(void **state)
{
	(void)state;
	struct config c;
	with_runtime(&c, "podman");
	config_free(&c);
	config_init(&c); /* the defaults, with the fake podman found on PATH */
	struct backend_pane p = pane(&c);
	char *cause = NULL;
	struct strlist argv = {0};
	assert_int_equal(backend_container.argv(&p, &argv, &cause), 0);
	char *got = run_recorded(&argv);
	expect_line(got, "--cap-drop=ALL");
	expect_line(got, "--http-proxy=false");
	expect_line(got, "--no-hosts"); /* not the host's /etc/hosts */
	expect_line(got, "--memory=8g");
	if (access("/usr/share/containers/seccomp.json", R_OK) == 0)
		expect_line(got,
			    "--security-opt=seccomp=%s/.local/state/workrex/sandbox/seccomp.json",
			    top);
	free(got);
	strlist_free(&argv);
	config_free(&c);
}

/* The config snapshot a sandbox reads keeps no credential. */
static void test_strip_credentials(void **state)
{
	(void)state;
	const char *in =
		"[core]\n\tbare = false\n"
		"[remote \"origin\"]\n\turl = https://me:ghp_SECRET1@github.com/o/r.git\n"
		"\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
		"[http \"https://github.com/\"]\n\textraHeader = AUTHORIZATION: basic SECRET2\n"
		"[credential]\n\thelper = store\n\tusername = SECRET3\n"
		"[url \"https://x-access-token:SECRET4@github.com/\"]\n"
		"\tinsteadOf = https://github.com/\n"
		"[github]\n\toauth-token = SECRET5\n\tuser = me\n"
		"[user]\n\tname = Me\n";
	char *out = backend_strip_credentials(in);
	assert_null(strstr(out, "SECRET"));
	assert_non_null(strstr(out, "url = https://github.com/o/r.git"));
	assert_non_null(strstr(out, "fetch = +refs/heads/*"));
	assert_non_null(strstr(out, "[url \"https://github.com/\"]"));
	assert_non_null(strstr(out, "user = me"));
	assert_non_null(strstr(out, "name = Me"));
	assert_null(strstr(out, "helper"));
	free(out);
}

static void test_apple_container_argv(void **state)
{
	(void)state;
	struct config c;
	with_runtime(&c, "apple-container");
	c.sandbox.image = xstrdup("ghcr.io/me/agent:1");
	struct backend_pane p = pane(&c);
	char *cause = NULL;
	assert_int_equal(backend_container.check(&p, &cause), 0);
	struct strlist argv = {0};
	assert_int_equal(backend_container.argv(&p, &argv, &cause), 0);
	assert_string_equal(argv.v[0], "container");
	char *got = run_recorded(&argv);
	assert_true(strncmp(got, "run\n--rm\n-it\n--name\nwrx-box-7-51b8c9\n", 37) == 0);
	/* No socket crosses into its VM: the bridge is TCP, token-checked. */
	expect_line(got, "WORKREX_RPC_HOST=192.168.64.1");
	expect_line(got, "WORKREX_RPC_PORT=40123");
	expect_no_line(got, "WORKREX_RPC_SOCKET=/run/workrex/rpc.sock");
	expect_no_line(got, "type=bind,source=%s,target=/run/workrex,readonly", rpcdir);
	expect_line(got, "type=bind,source=%s,target=%s/.git,readonly", gitfile, wt);
	assert_non_null(strstr(got, "--\nghcr.io/me/agent:1\n/bin/sh\n"));
	expect_stop(&p, "delete\n--force\nwrx-box-7-51b8c9\n");
	free(got);
	strlist_free(&argv);
	config_free(&c);
}

static void expect_refused(struct config *c, const char *needle)
{
	struct backend_pane p = pane(c);
	char *cause = NULL;
	int rc = backend_container.check(&p, &cause);
	if (rc == 0 || cause == NULL || strstr(cause, needle) == NULL)
		fail_msg("expected a refusal naming [%s], got rc %d: %s", needle, rc,
			 cause ? cause : "(none)");
	free(cause);
}

/* policy: deny; argv as the runtime got it. */
static char *deny_argv(struct config *c, struct backend_pane *p)
{
	free(c->sandbox.network.policy);
	c->sandbox.network.policy = xstrdup("deny");
	*p = pane(c);
	p->proxy_token = "tok123";
	p->resolv = snap;
	char *cause = NULL;
	if (backend_container.check(p, &cause) != 0)
		fail_msg("refused: %s", cause);
	struct strlist argv = {0};
	if (backend_container.argv(p, &argv, &cause) != 0)
		fail_msg("no argv: %s", cause);
	char *got = run_recorded(&argv);
	strlist_free(&argv);
	return got;
}

/*
 * Where no socket is shared, policy: deny is a firewall step inside:
 * root with NET_ADMIN (which it drops), the bridge and the proxy over TCP,
 * no proxy variables yet (the step sets them, with the proxy's port).
 */
static void expect_firewall(const char *got, const char *host, const char *groups)
{
	expect_line(got, "--user=0:0");
	expect_no_line(got, "--network=none");
	expect_line(got, "WORKREX_RPC_HOST=%s", host);
	expect_line(got, "WORKREX_RPC_PORT=40123");
	expect_line(got, "WORKREX_PROXY_TOKEN=tok123");
	expect_no_line(got, "WORKREX_RPC_SOCKET=/run/workrex/rpc.sock");
	assert_null(strstr(got, "HTTPS_PROXY="));
	/* The proxy's port file is in the agent's RPC directory. */
	expect_line(got, "type=bind,source=%s,target=/run/workrex,readonly", rpcdir);
	char *step =
		xasprintf("/opt/workrex/bin/workrex\nfirewall\n--user=%ld:%ld\n%s--\n/bin/sh\n",
			  (long)getuid(), (long)getgid(), groups);
	if (strstr(got, step) == NULL)
		fail_msg("no firewall step [%s] in:\n%s", step, got);
	free(step);
}

static void test_firewall_mode(void **state)
{
	(void)state;
	struct config c;
	struct backend_pane p;
	/* Apple Container: its own VM, root in it; no capability flags to give. */
	with_runtime(&c, "apple-container");
	char *got = deny_argv(&c, &p);
	expect_firewall(got, "192.168.64.1", "");
	expect_no_line(got, "--cap-add=NET_ADMIN");
	free(got);
	config_free(&c);
	/* Docker Desktop (its context): host.docker.internal, four capabilities, IPv6 off. */
	with_runtime(&c, "docker");
	setenv("DOCKER_CONTEXT", "desktop-linux", 1);
	strlist_add(&c.sandbox.container.group_add, "render");
	got = deny_argv(&c, &p);
	expect_firewall(got, "host.docker.internal", "--group=render\n");
	expect_line(got, "--add-host=host.docker.internal:host-gateway");
	expect_line(got, "--cap-drop=ALL");
	const char *caps[] = {"NET_ADMIN", "SETUID", "SETGID", "SETPCAP"};
	for (size_t i = 0; i < 4; i++)
		expect_line(got, "--cap-add=%s", caps[i]);
	expect_line(got, "--sysctl=net.ipv6.conf.all.disable_ipv6=1");
	expect_line(got, "--security-opt=no-new-privileges");
	expect_line(got, "type=bind,source=%s,target=/etc/resolv.conf,readonly", snap);
	struct backend_reach r;
	char *cause = NULL;
	assert_int_equal(container_reach(&c, &r, &cause), 0);
	assert_true(r.tcp);
	assert_string_equal(r.bind, "127.0.0.1");
	free(got);
	config_free(&c);
	/* ...its config file says so as well; another context is a Linux engine. */
	unsetenv("DOCKER_CONTEXT");
	setenv("DOCKER_CONFIG", top, 1);
	sh("echo '{\"currentContext\": \"desktop-linux\"}' >%s/config.json", top);
	with_runtime(&c, "docker");
	assert_int_equal(container_reach(&c, &r, &cause), 0);
	assert_true(r.tcp);
	sh("echo '{\"currentContext\": \"default\"}' >%s/config.json", top);
	assert_int_equal(container_reach(&c, &r, &cause), 0);
	assert_false(r.tcp);
	unsetenv("DOCKER_CONFIG");
	got = deny_argv(&c, &p); /* the socket is shared: no network at all */
	expect_line(got, "--network=none");
	expect_line(got, "--user=%ld:%ld", (long)getuid(), (long)getgid());
	assert_non_null(strstr(got, "/opt/workrex/bin/workrex\nproxy-forward\n--\n"));
	free(got);
	config_free(&c);
	/* share_sockets: false on podman needs the host's address on its bridge. */
	with_runtime(&c, "podman");
	free(c.sandbox.container.share_sockets);
	c.sandbox.container.share_sockets = xstrdup("false");
	expect_refused(&c, "set sandbox.rpc_host");
	c.sandbox.rpc_host = xstrdup("0.0.0.0");
	expect_refused(&c, "every address");
	free(c.sandbox.rpc_host);
	c.sandbox.rpc_host = xstrdup("10.88.0.1");
	got = deny_argv(&c, &p);
	expect_firewall(got, "10.88.0.1", "");
	expect_line(got, "--cap-add=NET_ADMIN");
	free(got);
	config_free(&c);
}

static void add_mount(struct config *c, const char *host, bool writable)
{
	struct sandbox_config *sb = &c->sandbox;
	sb->extra_mounts =
		realloc(sb->extra_mounts, (sb->nextra_mounts + 1) * sizeof *sb->extra_mounts);
	sb->extra_mounts[sb->nextra_mounts].host = xstrdup(host);
	sb->extra_mounts[sb->nextra_mounts].guest = xstrdup(host);
	sb->extra_mounts[sb->nextra_mounts].writable = writable;
	sb->nextra_mounts++;
}

static void test_refusals(void **state)
{
	(void)state;
	struct config c;
	/* cap_add ALL and SYS_ADMIN, in any spelling. */
	const char *caps[] = {"ALL", "SYS_ADMIN", "cap_sys_admin", "all"};
	for (size_t i = 0; i < 4; i++) {
		with_runtime(&c, "docker");
		strlist_add(&c.sandbox.container.cap_add, caps[i]);
		expect_refused(&c, "cap_add");
		config_free(&c);
	}
	/* Engine sockets, writable or not, and directories holding them. */
	const char *socks[] = {"/var/run/docker.sock", "/run/podman/podman.sock",
			       "/home/me/.docker/run/docker.sock"};
	for (size_t i = 0; i < 3; i++) {
		with_runtime(&c, "docker");
		add_mount(&c, socks[i], false);
		expect_refused(&c, "container engine socket");
		config_free(&c);
	}
	/* Writable mounts over git metadata (the repository's, the worktree's .git file). */
	char *inside = xasprintf("%s/hooks", gitdir), *wgit = xasprintf("%s/.git", wt);
	const char *over[] = {gitdir, inside, repo, wgit};
	for (size_t i = 0; i < 4; i++) {
		with_runtime(&c, "docker");
		add_mount(&c, over[i], true);
		expect_refused(&c, "overlaps the git metadata");
		config_free(&c);
	}
	/* ...read-only they are fine. */
	with_runtime(&c, "docker");
	add_mount(&c, gitdir, false);
	struct backend_pane p = pane(&c);
	char *cause = NULL;
	if (backend_container.check(&p, &cause) != 0)
		fail_msg("a read-only mount of the git dir was refused: %s", cause);
	config_free(&c);
	/* A hook symlinked out of the repository, and a hooks dir that is one. */
	sh("ln -s /tmp/evil-hook %s/hooks/pre-commit", gitdir);
	with_runtime(&c, "docker");
	expect_refused(&c, "outside the repository");
	config_free(&c);
	sh("rm %s/hooks/pre-commit && ln -s ../../proj/a-hook %s/hooks/pre-push", gitdir, gitdir);
	with_runtime(&c, "docker");
	p = pane(&c);
	assert_int_equal(backend_container.check(&p, &cause), 0); /* inside: fine */
	config_free(&c);
	/* Into what the sandbox can write: the worktree, the worktree admin dir. */
	sh("rm %s/hooks/pre-push && ln -s %s/evil %s/hooks/post-checkout", gitdir, wt, gitdir);
	with_runtime(&c, "docker");
	expect_refused(&c, "box/evil");
	config_free(&c);
	sh("rm %s/hooks/post-checkout && ln -s ../worktrees/box/x %s/hooks/post-merge", gitdir,
	   gitdir);
	with_runtime(&c, "docker");
	expect_refused(&c, "which the sandbox can write");
	config_free(&c);
	sh("rm %s/hooks/post-merge && mv %s/hooks %s/hooks.real && ln -s /tmp %s/hooks", gitdir,
	   gitdir, gitdir, gitdir);
	with_runtime(&c, "docker");
	expect_refused(&c, "outside the repository");
	config_free(&c);
	sh("rm %s/hooks && mv %s/hooks.real %s/hooks", gitdir, gitdir, gitdir);
	/* network.policy: deny, whose proxy is not built yet: nothing starts open. */
	with_runtime(&c, "docker");
	free(c.sandbox.network.policy);
	c.sandbox.network.policy = xstrdup("deny");
	expect_refused(&c, "network.policy is deny");
	config_free(&c);
	/* Without its private git dir prepared, no container starts. */
	with_runtime(&c, "docker");
	p = pane(&c);
	p.private_gitdir = NULL;
	struct strlist argv = {0};
	assert_int_equal(backend_container.argv(&p, &argv, &cause), -EINVAL);
	assert_non_null(strstr(cause, "private git dir"));
	free(cause);
	strlist_free(&argv);
	config_free(&c);
	free(inside);
	free(wgit);
}

/*
 * What a sandbox left in its own config dir where a setting or a
 * credential goes (a link to ~/.ssh) is replaced, never followed; its own
 * state stays, and the host's never arrives.
 */
static void test_own_config_dir_replaces_links(void **state)
{
	(void)state;
	char *own = xasprintf("%s/.local/state/workrex/sandbox/git-%08x/box/home/claude", top,
			      str_hash(WRX_HASH_INIT, repo));
	sh("mkdir -p %s/.ssh %s/.claude/projects/p %s && echo key >%s/.ssh/id && "
	   "echo HOST >%s/.claude/projects/p/t.jsonl && echo '{\"t\":1}' "
	   ">%s/.claude/.credentials.json && "
	   "rm -rf %s/settings.json %s/.credentials.json && ln -s %s/.ssh/id %s/settings.json && "
	   "ln -s %s/.ssh/id %s/.credentials.json && mkdir -p %s/projects/mine && "
	   "echo mine >%s/projects/mine/t.jsonl",
	   top, top, own, top, top, top, own, own, top, own, top, own, own, own);
	struct config c;
	with_runtime(&c, "docker");
	struct backend_pane p = pane(&c);
	char *cause = NULL;
	struct strlist argv = {0};
	assert_int_equal(backend_container.argv(&p, &argv, &cause), 0);
	sh("test ! -L %s/settings.json && test ! -s %s/settings.json && test ! -L "
	   "%s/.credentials.json && "
	   "test \"$(cat %s/.credentials.json)\" = '{\"t\":1}' && test \"$(cat %s/.ssh/id)\" = key "
	   "&& "
	   "test \"$(cat %s/projects/mine/t.jsonl)\" = mine && test ! -e %s/projects/p",
	   own, own, own, own, top, own, own);
	strlist_free(&argv);
	config_free(&c);
	free(own);
}

/* Codex's trust of hooks is keyed by their file's path: the sandbox's, rekeyed. */
static void test_rekeyed_settings(void **state)
{
	(void)state;
	const char *host = "model = \"o3\"\n"
			   "[projects.\"/root/src\"]\ntrust_level = \"trusted\"\n"
			   "[hooks.state.\"/root/.codex/hooks.json:stop:0:0\"]\n"
			   "trusted_hash = \"sha256:ab\"\n"
			   "[hooks.state.\"/root/.codexx/hooks.json:stop:0:0\"]\n";
	char *got = agent_home_rekey(host, "/root/.codex", "/tmp/.codex");
	assert_string_equal(got, "model = \"o3\"\n"
				 "[projects.\"/root/src\"]\ntrust_level = \"trusted\"\n"
				 "[hooks.state.\"/tmp/.codex/hooks.json:stop:0:0\"]\n"
				 "trusted_hash = \"sha256:ab\"\n"
				 "[hooks.state.\"/root/.codexx/hooks.json:stop:0:0\"]\n");
	free(got);
	got = agent_home_rekey("", "/root/.codex", "/tmp/.codex");
	assert_string_equal(got, "");
	free(got);
}

/* A worktree of a project the user trusted is trusted in the sandbox's copy; nothing else. */
static void test_trust_carried(void **state)
{
	(void)state;
	const struct agent_kind *claude = kind_find("claude"), *codex = kind_find("codex");
	const char *host = "{\"projects\":{\"/src/p\":{\"hasTrustDialogAccepted\":true,"
			   "\"x\":1}},\"theme\":\"dark\"}";
	char *got = agent_home_trusted(claude, host, "/src/p", "/src/p__worktrees/a");
	assert_string_equal(got,
			    "{\"projects\":{\"/src/p\":{\"hasTrustDialogAccepted\":true,"
			    "\"x\":1},\"/src/p__worktrees/a\":{\"hasTrustDialogAccepted\":true}"
			    "},\"theme\":\"dark\"}");
	/* Trusted already: nothing to add. */
	assert_null(agent_home_trusted(claude, got, "/src/p", "/src/p__worktrees/a"));
	free(got);
	/* The project not trusted, or said false, or no such object, or not JSON: nothing. */
	assert_null(agent_home_trusted(claude, "{\"projects\":{}}", "/src/p", "/w"));
	assert_null(agent_home_trusted(
		claude, "{\"projects\":{\"/src/p\":{\"hasTrustDialogAccepted\":false}}}", "/src/p",
		"/w"));
	assert_null(agent_home_trusted(claude, "{}", "/src/p", "/w"));
	assert_null(agent_home_trusted(claude, "not json", "/src/p", "/w"));
	/* A kind that keeps no trust there. */
	assert_null(agent_home_trusted(codex, host, "/src/p", "/w"));
}

static void test_no_runtime(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	setenv("PATH", "/nonexistent", 1);
	struct backend_pane p = pane(&c);
	char *cause = NULL;
	assert_int_equal(backend_container.check(&p, &cause), -ENOENT);
	assert_non_null(strstr(cause, "install podman"));
	free(cause);
	c.sandbox.container.runtime = xstrdup("docker");
	assert_int_equal(backend_container.check(&p, &cause), -ENOENT);
	assert_string_equal(cause,
			    "sandbox.container.runtime is docker, but docker is not installed");
	free(cause);
	setenv("PATH", saved_path, 1);
	config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_docker_argv),
		cmocka_unit_test(test_podman_argv),
		cmocka_unit_test(test_strip_credentials),
		cmocka_unit_test(test_apple_container_argv),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_firewall_mode),
		cmocka_unit_test(test_own_config_dir_replaces_links),
		cmocka_unit_test(test_gvisor),
		cmocka_unit_test(test_no_runtime),
		cmocka_unit_test(test_rekeyed_settings),
		cmocka_unit_test(test_trust_carried),
	};
	return cmocka_run_group_tests_name("container", tests, setup, teardown);
}
