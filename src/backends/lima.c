/*
 * lima.c - the Lima backend: one persistent VM per project
 * (wrx-<project>-<hash>; `isolation: shared` makes it one for all), made
 * from a Lima YAML generated here and entered with `limactl shell
 * --workdir`.
 *
 * The VM mounts the project read-only, and the git common dir and the
 * worktrees writable: Lima shares directories, not single files, so the
 * container backend's private git dir cannot cover a worktree's `.git`
 * here, and an agent can change hooks and config that the host runs. The
 * user accepts that once (sandbox.lima.accept_reduced_git_metadata_isolation);
 * until then nothing starts. No socket crosses into the VM: the RPC bridge
 * listens on the host's loopback, which Lima forwards as host.lima.internal.
 *
 * Creating or starting a VM takes minutes, so it never happens on the
 * dashboard's loop: a pane runs `workrex __lima-up VM YAML -- limactl shell
 * ...` (cmd_sandbox.c), which takes the VM's lock, creates or starts it with
 * limactl's output in the pane, and then becomes the shell.
 */
#include "backend.h"
#include "agenthome.h"

#include "../util/log.h"
#include "../util/ports.h"
#include "../config/kinds.h"
#include "../util/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define LIMA_GUEST_DIR "/opt/workrex/bin"
#define LIMA_PATH                                                                                  \
	LIMA_GUEST_DIR ":/nix/var/nix/profiles/default/bin:/usr/local/sbin:/usr/local/bin:"        \
		       "/usr/sbin:/usr/bin:/sbin:/bin"

/* Debian 12's cloud images, as Lima boots them. */
static const char *const images[][2] = {
	{"x86_64", "https://cloud.debian.org/images/cloud/bookworm/latest/"
		   "debian-12-genericcloud-amd64.qcow2"},
	{"aarch64", "https://cloud.debian.org/images/cloud/bookworm/latest/"
		    "debian-12-genericcloud-arm64.qcow2"},
};

char *lima_vm_name(const struct config *cfg, const char *project_root)
{
	if (cfg->sandbox.lima.isolation && strcmp(cfg->sandbox.lima.isolation, "shared") == 0)
		return xstrdup("wrx-shared");
	const char *base = strrchr(project_root, '/');
	base = base && base[1] ? base + 1 : "project";
	char name[24];
	size_t n = 0;
	for (const char *c = base; *c && n < 16; c++)
		if (isalnum((unsigned char)*c))
			name[n++] = (char)tolower((unsigned char)*c);
		else if (n > 0 && name[n - 1] != '-')
			name[n++] = '-';
	while (n > 0 && name[n - 1] == '-')
		n--;
	name[n] = '\0';
	return xasprintf("wrx-%s%s%06x", name, n ? "-" : "",
			 str_hash(WRX_HASH_INIT, project_root) & 0xffffff);
}

char *lima_dir(void)
{
	char *state = state_dir();
	if (state == NULL)
		return NULL;
	char *dir = xasprintf("%s/lima", state);
	free(state);
	if (mkdir_p(dir, 0700) < 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

const char *lima_toolchain(const struct config *cfg, const char *project_root)
{
	const char *t = cfg->sandbox.lima.toolchain ? cfg->sandbox.lima.toolchain : "auto";
	if (strcmp(t, "auto") != 0)
		return t;
	char *devbox = xasprintf("%s/devbox.json", project_root);
	char *flake = xasprintf("%s/flake.nix", project_root);
	const char *found = access(devbox, F_OK) == 0  ? "devbox"
			    : access(flake, F_OK) == 0 ? "flake"
						       : "off";
	free(devbox);
	free(flake);
	return found;
}

/* A YAML double-quoted scalar. */
static void q(struct buf *b, const char *s)
{
	buf_addstr(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			buf_addf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			buf_addf(b, "\\x%02x", c);
		else
			buf_add(b, s, 1);
	}
	buf_addstr(b, "\"");
}

static void mount(struct buf *b, const char *location, const char *point, bool writable)
{
	buf_addstr(b, "  - location: ");
	q(b, location);
	buf_addstr(b, "\n");
	if (point) {
		buf_addstr(b, "    mountPoint: ");
		q(b, point);
		buf_addstr(b, "\n");
	}
	buf_addf(b, "    writable: %s\n", writable ? "true" : "false");
}

/* A provisioning script, as a literal block. */
static void provision(struct buf *b, const char *mode, const char *script)
{
	buf_addf(b, "  - mode: %s\n    script: |\n", mode);
	for (const char *p = script; *p;) {
		size_t n = strcspn(p, "\n");
		buf_addstr(b, "      ");
		buf_add(b, p, n);
		buf_addstr(b, "\n");
		p += n + (p[n] == '\n');
	}
}

static char *dirname_of(const char *path)
{
	char *d = xstrdup(path);
	char *slash = strrchr(d, '/');
	if (slash && slash != d)
		*slash = '\0';
	return d;
}

static bool within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/*
 * The agent's config dir in the VM, if its kind has one that a variable
 * moves: the project's own (agenthome.h), under workrex's state, shared by
 * the project's sandboxed agents of that kind and never by the host's.
 * Caller frees; *var names the variable.
 */
static char *agent_config(const struct backend_pane *p, const char **var)
{
	*var = NULL;
	const struct agent_kind *k = kind_of(p->cfg, p->agent);
	if (!agent_home_private(k) || k->config_env == NULL)
		return NULL;
	char *project = private_project_dir(p->project_root, false);
	char *own = project ? xasprintf("%s/.agent-%s", project, k->name) : NULL;
	free(project);
	*var = own ? k->config_env : NULL;
	return own;
}

/* That dir filled from the host's settings and credentials (copies: Lima mounts directories). */
static int agent_config_prepare(const struct backend_pane *p, const char *own, char **cause)
{
	const char *home = getenv("HOME");
	const struct agent_kind *k = kind_of(p->cfg, p->agent);
	if (home == NULL) {
		*cause = xstrdup("HOME is not set: no agent config to copy");
		return -ENOENT;
	}
	char *src = p->cfg->sandbox.agent_config_dir ? xstrdup(p->cfg->sandbox.agent_config_dir)
						     : xasprintf("%s/%s", home, k->config_dir);
	int rc = agent_home_prepare(k, src, own, AGENT_HOME_COPIED, cause);
	free(src);
	return rc;
}

int lima_yaml(const struct backend_pane *p, const char *guest_dir, char **out, char **cause)
{
	const struct sandbox_config *sb = &p->cfg->sandbox;
	struct buf b = {0};
	buf_addf(&b, "# The Lima VM of workrex's sandboxed agents in %s.\n", p->project_root);
	buf_addstr(&b, "# Generated by workrex: edit the sandbox.lima settings instead.\n");
	buf_addstr(&b, "images:\n");
	if (sb->image) {
		buf_addstr(&b, "  - location: ");
		q(&b, sb->image);
		buf_addstr(&b, "\n");
	} else {
		for (size_t i = 0; i < WRX_ARRAY_LEN(images); i++) {
			buf_addstr(&b, "  - location: ");
			q(&b, images[i][1]);
			buf_addf(&b, "\n    arch: %s\n", images[i][0]);
		}
	}
	buf_addf(&b, "cpus: %ld\n", sb->lima.cpus);
	buf_addstr(&b, "memory: ");
	q(&b, sb->lima.memory ? sb->lima.memory : "4GiB");
	buf_addstr(&b, "\ndisk: ");
	q(&b, sb->lima.disk ? sb->lima.disk : "100GiB");
	buf_addstr(&b, "\ncontainerd:\n  system: false\n  user: false\n");
	/*
	 * The project to read; its git metadata and the worktrees to write
	 * (accepted: see the top); the client; the agent's config.
	 */
	buf_addstr(&b, "mounts:\n");
	mount(&b, p->project_root, NULL, false);
	mount(&b, p->git_dir, NULL, true);
	char *wtdir = dirname_of(p->worktree);
	if (!within(wtdir, p->project_root) || strcmp(wtdir, p->project_root) == 0)
		mount(&b, wtdir, NULL, true);
	else
		mount(&b, p->worktree, NULL, true);
	free(wtdir);
	mount(&b, guest_dir, LIMA_GUEST_DIR, false);
	const char *var;
	char *acfg = agent_config(p, &var);
	if (acfg)
		mount(&b, acfg, NULL, true);
	free(acfg);
	for (size_t i = 0; i < sb->nextra_mounts; i++)
		mount(&b, sb->extra_mounts[i].host, sb->extra_mounts[i].guest,
		      sb->extra_mounts[i].writable);
	/*
	 * The agents' ports (config ports), said rather than left to Lima's
	 * default: a dev server on one in the VM is on the host's loopback.
	 */
	buf_addf(&b,
		 "portForwards:\n  - guestIP: 127.0.0.1\n    guestPortRange: [%d, %d]\n"
		 "    hostIP: 127.0.0.1\n",
		 PORTS_FIRST, PORTS_LAST);
	buf_addstr(&b, "provision:\n");
	if (!sb->lima.skip_default_provision) {
		struct buf s = {0};
		buf_addstr(&s, "#!/bin/sh\n# workrex: git and the agent's CLI.\nset -eux\n"
			       "export DEBIAN_FRONTEND=noninteractive\n"
			       "command -v git >/dev/null && command -v npm >/dev/null && exit 0\n"
			       "apt-get update\n"
			       "apt-get install -y --no-install-recommends git ca-certificates "
			       "curl less procps xz-utils nodejs npm\n");
		const struct agent_kind *k = kind_of(p->cfg, p->agent);
		if (k && k->install && strncmp(k->install, "npm:", 4) == 0)
			buf_addf(&s, "npm install -g %s\n", k->install + 4);
		provision(&b, "system", s.data);
		buf_free(&s);
		const char *tc = lima_toolchain(p->cfg, p->project_root);
		if (strcmp(tc, "devbox") == 0 || strcmp(tc, "flake") == 0) {
			provision(&b, "system",
				  "#!/bin/sh\n# workrex: Nix, for the project's toolchain.\n"
				  "set -eux\n"
				  "[ -x /nix/var/nix/profiles/default/bin/nix ] && exit 0\n"
				  "curl -fsSL https://nixos.org/nix/install | sh -s -- --daemon "
				  "--yes\n"
				  "mkdir -p /etc/nix\n"
				  "echo 'experimental-features = nix-command flakes' "
				  ">>/etc/nix/nix.conf\n");
			if (strcmp(tc, "devbox") == 0)
				provision(&b, "system",
					  "#!/bin/sh\n# workrex: Devbox (devbox.json).\n"
					  "set -eux\n"
					  "command -v devbox >/dev/null && exit 0\n"
					  "curl -fsSL https://get.jetify.com/devbox | bash -s -- "
					  "-f\n");
		}
	}
	if (sb->lima.provision) {
		char *script = NULL;
		if (file_read(sb->lima.provision, 1u << 20, &script, cause) < 0) {
			buf_free(&b);
			return -ENOENT;
		}
		provision(&b, "user", script);
		free(script);
	}
	if (b.len >= 11 && strcmp(b.data + b.len - 11, "provision:\n") == 0)
		buf_addstr(&b, "  []\n");
	*out = b.data;
	return 0;
}

/* ---- the backend ---- */

static int lima_check(const struct backend_pane *p, char **cause)
{
	const struct sandbox_config *sb = &p->cfg->sandbox;
	if (sb->runtime && strcmp(sb->runtime, "gvisor") == 0) {
		*cause = xstrdup("sandbox.runtime: gvisor runs containers, and sandbox.backend is "
				 "lima (a VM: a kernel of its own already); set one");
		return -ENOTSUP;
	}
	if (!path_has("limactl")) {
		*cause = xstrdup("sandbox.backend is lima, but limactl is not installed "
				 "(https://lima-vm.io: brew install lima, or its release "
				 "tarball)");
		return -ENOENT;
	}
	if (!sb->lima.accept_reduced_git_metadata_isolation) {
		*cause = xstrdup("the Lima backend mounts the git metadata writable: an agent "
				 "in the VM can change hooks and config the host then runs. "
				 "Accept that with sandbox.lima.accept_reduced_git_metadata_"
				 "isolation: true in the global config, or use the container "
				 "backend");
		return -EPERM;
	}
	if (!strcmp(sb->network.policy, "deny")) {
		*cause = xstrdup("sandbox.network.policy: deny is for the container backend; a "
				 "Lima VM's network is not restricted: the agent does not start");
		return -ENOTSUP;
	}
	if (!config_size_ok(sb->lima.memory) || !config_size_ok(sb->lima.disk)) {
		*cause = xasprintf("sandbox.lima.memory and .disk are sizes like 4GiB (got %s, %s)",
				   sb->lima.memory ? sb->lima.memory : "none",
				   sb->lima.disk ? sb->lima.disk : "none");
		return -EINVAL;
	}
	if (p->guest_bin == NULL || access(p->guest_bin, X_OK) < 0) {
		*cause = xasprintf("the sandbox client %s is missing (make guest builds it)",
				   p->guest_bin ? p->guest_bin : "workrex-guest");
		return -ENOENT;
	}
	for (size_t i = 0; i < sb->nextra_mounts; i++)
		if (backend_holds_engine_socket(sb->extra_mounts[i].host)) {
			*cause = xasprintf("sandbox.extra_mounts: %s gives access to a container "
					   "engine socket, which controls the host; refused",
					   sb->extra_mounts[i].host);
			return -EPERM;
		}
	return 0;
}

/* The guest client, as `workrex`, in a directory of its own for the VM to mount. */
static char *guest_dir(const char *dir, const char *guest, char **cause)
{
	char *bin = xasprintf("%s/bin", dir), *dst = xasprintf("%s/bin/workrex", dir);
	/* Copied once per build: a pane opens on the dashboard's loop. */
	struct stat src, have;
	if (stat(guest, &src) == 0 && lstat(dst, &have) == 0 && S_ISREG(have.st_mode) &&
	    have.st_size == src.st_size && have.st_mtime >= src.st_mtime) {
		free(dst);
		return bin;
	}
	char *tmp = xasprintf("%s.%ld", dst, (long)getpid());
	int in = -1, out = -1;
	bool ok =
		mkdir_p(bin, 0700) == 0 && (in = open(guest, O_RDONLY | O_CLOEXEC)) >= 0 &&
		(out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0755)) >= 0;
	char chunk[65536];
	ssize_t n = 0;
	while (ok && (n = read(in, chunk, sizeof chunk)) > 0)
		ok = fd_write_all(out, chunk, (size_t)n) == 0;
	ok = ok && n == 0;
	if (out >= 0 && close(out) < 0)
		ok = false;
	if (in >= 0)
		close(in);
	if (!ok || rename(tmp, dst) < 0) {
		*cause = xasprintf("the sandbox client for the VM, %s: %s", dst, strerror(errno));
		unlink(tmp);
		free(bin);
		bin = NULL;
	}
	free(tmp);
	free(dst);
	return bin;
}

static void add(struct strlist *l, const char *s)
{
	strlist_add(l, s);
}

static int lima_argv(const struct backend_pane *p, struct strlist *l, char **cause)
{
	char *dir = lima_dir();
	if (dir == NULL) {
		*cause = xstrdup("no state directory for the Lima VM's files (set HOME)");
		return -ENOENT;
	}
	char *vm = lima_vm_name(p->cfg, p->project_root);
	char *yaml_path = xasprintf("%s/%s.yaml", dir, vm), *yaml = NULL;
	char *gdir = guest_dir(dir, p->guest_bin, cause);
	int rc = gdir ? lima_yaml(p, gdir, &yaml, cause) : -EIO;
	const char *var;
	char *acfg = rc == 0 ? agent_config(p, &var) : NULL;
	if (acfg)
		rc = agent_config_prepare(p, acfg, cause);
	if (rc == 0) {
		char *tmp = xasprintf("%s.%ld", yaml_path, (long)getpid());
		int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 || fd_write_all(fd, yaml, strlen(yaml)) < 0 || close(fd) < 0 ||
		    rename(tmp, yaml_path) < 0) {
			rc = -errno;
			*cause = xasprintf("%s: %s", yaml_path, strerror(errno));
			unlink(tmp);
		}
		free(tmp);
	}
	if (rc == 0) {
		char *self = realpath("/proc/self/exe", NULL);
		add(l, self ? self : "workrex");
		free(self);
		add(l, "__lima-up");
		add(l, vm);
		add(l, yaml_path);
		add(l, "--");
		add(l, "limactl");
		add(l, "shell");
		add(l, "--workdir");
		add(l, p->worktree);
		add(l, vm);
		add(l, "--");
		/* limactl shell passes no environment: env sets it in there. */
		add(l, "env");
		for (char *const *e = p->env; e && *e; e++)
			if (strncmp(*e, "WORKREX_RPC_SOCKET=", 19) && strncmp(*e, "PATH=", 5))
				add(l, *e);
		char *s = xasprintf("PATH=%s", LIMA_PATH);
		add(l, s);
		free(s);
		add(l, "WORKREX_SANDBOX=1");
		add(l, "IS_SANDBOX=1"); /* Claude Code's approval flag as root: see container.c */
		s = xasprintf("WORKREX_RPC_HOST=%s", "host.lima.internal");
		add(l, s);
		free(s);
		s = xasprintf("WORKREX_RPC_PORT=%d", p->rpc_port);
		add(l, s);
		free(s);
		if (acfg && var) {
			s = xasprintf("%s=%s", var, acfg);
			add(l, s);
			free(s);
		}
		for (size_t i = 0; i < p->cfg->sandbox.env.n; i++)
			add(l, p->cfg->sandbox.env.v[i]);
		/* The project's toolchain around the agent. */
		const char *tc = lima_toolchain(p->cfg, p->project_root);
		if (strcmp(tc, "devbox") == 0) {
			add(l, "devbox");
			add(l, "run");
			add(l, "--config");
			add(l, p->project_root);
			add(l, "--");
		} else if (strcmp(tc, "flake") == 0) {
			add(l, "nix");
			add(l, "develop");
			add(l, p->project_root);
			add(l, "--command");
		}
		for (char *const *a = p->argv; *a; a++)
			add(l, *a);
	}
	free(yaml);
	free(gdir);
	free(acfg);
	free(yaml_path);
	free(vm);
	free(dir);
	return rc;
}

static void lima_stop_argv(const struct backend_pane *p, struct strlist *out)
{
	(void)p;
	(void)out; /* the VM stays; closing the pty ends the shell in it */
}

/* Lima forwards host.lima.internal to the host's loopback. */
static int lima_reach(const struct config *cfg, struct backend_reach *r, char **cause)
{
	(void)cfg;
	(void)cause;
	memset(r, 0, sizeof *r);
	r->tcp = true;
	r->bind = "127.0.0.1";
	r->guest = "host.lima.internal";
	return 0;
}

const struct backend backend_lima = {
	.name = "lima",
	.check = lima_check,
	.argv = lima_argv,
	.stop_argv = lima_stop_argv,
	.reach = lima_reach,
};
