/*
 * container.c - the container backend: each pane its own `run --rm -it`
 * container (podman, docker, Apple Container), named wrx-<handle>-<n>.
 *
 * What the agent sees is only what is mounted: its worktree read-write at
 * its own path; the main worktree read-only; the host's git dir read-only
 * as a whole (objects, refs, hooks, info, worktree admin dirs) with its
 * config replaced by a credential-free snapshot, and the worktree's `.git`
 * covered by a file naming the agent's private git dir (git/private.h),
 * where its commits, refs and index live and which the host only imports
 * from after hashing every object. HOME is an empty tmpfs holding only
 * the agent's own config dir, so ~/.ssh, ~/.aws, ~/.gnupg, shell history
 * and the rest of the host do not exist in there. The guest client and the
 * agent's RPC socket are mounted read-only; RPC needs no network on Linux.
 * No capabilities, no new privileges, no user namespaces of its own
 * (seccomp.c), pid and memory limits.
 *
 * Refused before anything starts: container-engine sockets in
 * extra_mounts (read-only does not stop connect()), cap_add ALL or
 * SYS_ADMIN, writable extra mounts over git metadata, and hooks that are
 * symlinks out of the repository.
 */
#include "backend.h"
#include "agenthome.h"

#include "../util/log.h"
#include "../config/kinds.h"
#include "../util/util.h"

#include <dirent.h>
#include <json-c/json.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define GUEST_DIR BACKEND_GUEST_DIR
#define GUEST_PATH                                                                                 \
	BACKEND_GUEST_HOST_BIN ":" GUEST_DIR ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:" \
			       "/sbin:/bin"

const char *container_runtime(const struct config *cfg)
{
	static const char *const order[] = {"podman", "docker", "container"};
	const char *want = cfg->sandbox.container.runtime;
	if (want)
		return strcmp(want, "apple-container") == 0 ? "container" : want;
	for (size_t i = 0; i < WRX_ARRAY_LEN(order); i++)
		if (path_has(order[i]))
			return order[i];
	return NULL;
}

char *container_image(const struct config *cfg, const char *agent)
{
	if (cfg->sandbox.image)
		return xstrdup(cfg->sandbox.image);
	return xasprintf("workrex-sandbox:%s", agent && *agent ? agent : "shell");
}

char *container_name(const char *handle, int n, const char *session)
{
	return xasprintf("wrx-%s-%d-%06x", handle, n,
			 str_hash(WRX_HASH_INIT, session ? session : "") & 0xffffff);
}

static bool is_apple(const char *rt)
{
	return strcmp(rt, "container") == 0;
}

/*
 * Docker Desktop runs its engine in a VM that unix sockets do not cross:
 * on macOS always; on Linux when the context in use is its own.
 */
static bool docker_desktop(void)
{
	struct utsname u;
	if (uname(&u) == 0 && strcmp(u.sysname, "Darwin") == 0)
		return true;
	const char *host = getenv("DOCKER_HOST"), *ctx = getenv("DOCKER_CONTEXT");
	if (host && *host)
		return strstr(host, "/.docker/desktop/") != NULL;
	if (ctx && *ctx)
		return strcmp(ctx, "desktop-linux") == 0;
	const char *dir = getenv("DOCKER_CONFIG"), *home = getenv("HOME");
	char *path = dir && *dir ? xasprintf("%s/config.json", dir)
		     : home      ? xasprintf("%s/.docker/config.json", home)
				 : NULL;
	json_object *o = path ? json_object_from_file(path) : NULL, *v;
	bool desktop = o && json_object_object_get_ex(o, "currentContext", &v) &&
		       json_object_is_type(v, json_type_string) &&
		       strcmp(json_object_get_string(v), "desktop-linux") == 0;
	json_object_put(o);
	free(path);
	return desktop;
}

int container_reach(const struct config *cfg, struct backend_reach *r, char **cause)
{
	memset(r, 0, sizeof *r);
	const char *rt = container_runtime(cfg), *share = cfg->sandbox.container.share_sockets;
	const char *host = cfg->sandbox.rpc_host;
	if (rt == NULL)
		return 0;
	bool desktop = strcmp(rt, "docker") == 0 && docker_desktop();
	if (is_apple(rt)) {
		r->tcp = true;
		r->bind = r->guest = host ? host : "192.168.64.1";
	} else if (share && strcmp(share, "true") == 0) {
		return 0;
	} else if (desktop || (share && strcmp(share, "false") == 0)) {
		r->tcp = true;
		if (host) {
			r->bind = r->guest = host;
		} else if (desktop) {
			/* Its VM forwards host.docker.internal to the host's loopback. */
			r->bind = "127.0.0.1";
			r->guest = "host.docker.internal";
			r->add_host = true;
		} else {
			*cause = xasprintf("sandbox.container.share_sockets is false: set "
					   "sandbox.rpc_host to the host's address on %s's "
					   "network (its bridge's gateway)",
					   rt);
			return -EINVAL;
		}
	}
	if (r->tcp && (strcmp(r->bind, "0.0.0.0") == 0 || strcmp(r->bind, "::") == 0)) {
		*cause = xasprintf("sandbox.rpc_host %s would listen on every address; name the "
				   "host's address on the sandbox's network",
				   r->bind);
		return -EINVAL;
	}
	return 0;
}

/* ---- checks ---- */

/* Do a and b overlap (one contains the other)? Both absolute and clean. */
static bool overlaps(const char *a, const char *b)
{
	return path_within(a, b) || path_within(b, a);
}

static bool engine_socket(const char *path)
{
	static const char *const names[] = {"docker.sock", "podman.sock", "containerd.sock",
					    "crio.sock", "buildkitd.sock"};
	char real[PATH_MAX];
	const char *p = realpath(path, real) ? real : path;
	for (int k = 0; k < 2; k++, p = path) {
		const char *base = strrchr(p, '/');
		base = base ? base + 1 : p;
		for (size_t i = 0; i < WRX_ARRAY_LEN(names); i++)
			if (strcmp(base, names[i]) == 0)
				return true;
		if (path_within(p, "/run/docker") || path_within(p, "/run/podman") ||
		    path_within(p, "/run/containerd") || path_within(p, "/var/run/docker") ||
		    path_within(p, "/var/run/podman") || path_within(p, "/var/lib/docker") ||
		    path_within(p, "/var/lib/containers"))
			return true;
	}
	return false;
}

/* A mount source that holds an engine socket somewhere below it (/run, /var, /). */
bool backend_holds_engine_socket(const char *dir)
{
	static const char *const sockets[] = {"/run/docker.sock", "/var/run/docker.sock",
					      "/run/podman/podman.sock",
					      "/run/containerd/containerd.sock"};
	for (size_t i = 0; i < WRX_ARRAY_LEN(sockets); i++)
		if (path_within(sockets[i], dir) && access(sockets[i], F_OK) == 0)
			return true;
	return engine_socket(dir);
}

static int check_mounts(const struct backend_pane *p, char **cause)
{
	const struct sandbox_config *sb = &p->cfg->sandbox;
	char *wgit = xasprintf("%s/.git", p->worktree);
	int rc = 0;
	for (size_t i = 0; i < sb->nextra_mounts && rc == 0; i++) {
		const struct mount_def *m = &sb->extra_mounts[i];
		char real[PATH_MAX];
		const char *host = realpath(m->host, real) ? real : m->host;
		if (backend_holds_engine_socket(host)) {
			*cause = xasprintf(
				"sandbox.extra_mounts: %s gives access to a container engine "
				"socket, which controls the host; refused (read-only does "
				"not stop a socket being used)",
				m->host);
			rc = -EPERM;
		} else if (m->writable &&
			   (overlaps(host, p->git_dir) || overlaps(host, wgit) ||
			    overlaps(m->guest, p->git_dir) || overlaps(m->guest, wgit))) {
			*cause = xasprintf(
				"sandbox.extra_mounts: %s is writable and overlaps the git "
				"metadata (%s); refused: the sandbox could plant hooks or "
				"config the host runs",
				m->host, p->git_dir);
			rc = -EPERM;
		} else if (strchr(m->host, ',') || strchr(m->guest, ',')) {
			*cause = xasprintf(
				"sandbox.extra_mounts: %s: paths with ',' cannot be mounted",
				m->host);
			rc = -EINVAL;
		}
	}
	free(wgit);
	return rc;
}

static int check_caps(const struct backend_pane *p, char **cause)
{
	const struct strlist *caps = &p->cfg->sandbox.container.cap_add;
	for (size_t i = 0; i < caps->n; i++) {
		const char *c = caps->v[i];
		if (strncasecmp(c, "CAP_", 4) == 0)
			c += 4;
		if (strcasecmp(c, "ALL") == 0 || strcasecmp(c, "SYS_ADMIN") == 0) {
			*cause = xasprintf(
				"sandbox.container.cap_add: %s would let the agent out of "
				"its container; refused",
				caps->v[i]);
			return -EPERM;
		}
	}
	return 0;
}

/* Collapse "." and ".." in an absolute path, textually. Caller frees. */
static char *normalize(const char *path)
{
	char *out = xmalloc(strlen(path) + 2), *o = out;
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o > out && *--o != '/')
				;
		} else {
			*o++ = '/';
			memcpy(o, p, n);
			o += n;
		}
		p = e;
	}
	if (o == out)
		*o++ = '/';
	*o = '\0';
	return out;
}

/* Where a symlink leads: resolved if the target exists, else textually. Caller frees. */
static char *link_target(const char *link)
{
	char *real = realpath(link, NULL);
	if (real)
		return real;
	char buf[PATH_MAX];
	ssize_t n = readlink(link, buf, sizeof buf - 1);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	char *joined;
	if (buf[0] == '/') {
		joined = xstrdup(buf);
	} else {
		char *dir = xstrdup(link);
		*strrchr(dir, '/') = '\0';
		joined = xasprintf("%s/%s", dir, buf);
		free(dir);
	}
	char *norm = normalize(joined);
	free(joined);
	return norm;
}

/*
 * A hook the host may run must not lead out of the repository, nor into
 * anything the sandbox can write (the worktree, objects/refs/logs/worktrees
 * of the git dir, writable extra mounts): there it could plant the hook's
 * code. NULL if fine, else why.
 */
static char *hook_escapes(const struct backend_pane *p, const char *target, const char *repo,
			  const char *git)
{
	if (target == NULL)
		return xstrdup("nowhere");
	if (!path_within(target, git) && !path_within(target, repo))
		return xasprintf("%s, outside the repository", target);
	char wreal[PATH_MAX];
	const char *w = realpath(p->worktree, wreal) ? wreal : p->worktree;
	if (path_within(target, w))
		return xasprintf("%s, inside the agent's worktree", target);
	static const char *const writable[] = {"objects", "refs", "logs", "worktrees"};
	for (size_t i = 0; i < WRX_ARRAY_LEN(writable); i++) {
		char *d = xasprintf("%s/%s", git, writable[i]);
		bool in = path_within(target, d);
		free(d);
		if (in)
			return xasprintf("%s, which the sandbox can write", target);
	}
	const struct sandbox_config *sb = &p->cfg->sandbox;
	for (size_t i = 0; i < sb->nextra_mounts; i++)
		if (sb->extra_mounts[i].writable && path_within(target, sb->extra_mounts[i].host))
			return xasprintf("%s, which the sandbox can write", target);
	return NULL;
}

static int check_hooks(const struct backend_pane *p, char **cause)
{
	char repo[PATH_MAX], git[PATH_MAX];
	if (realpath(p->project_root, repo) == NULL || realpath(p->git_dir, git) == NULL)
		return 0;
	char *hooks = xasprintf("%s/hooks", p->git_dir);
	int rc = 0;
	struct stat st;
	if (lstat(hooks, &st) == 0 && S_ISLNK(st.st_mode)) {
		char *t = link_target(hooks), *why = hook_escapes(p, t, repo, git);
		if (why) {
			*cause = xasprintf(
				"%s is a symlink to %s; refused (the host runs these hooks)", hooks,
				why);
			rc = -EPERM;
		}
		free(why);
		free(t);
	}
	DIR *d = rc == 0 ? opendir(hooks) : NULL;
	struct dirent *e;
	while (d && rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char *f = xasprintf("%s/%s", hooks, e->d_name);
		struct stat fs;
		if (lstat(f, &fs) == 0 && S_ISLNK(fs.st_mode)) {
			char *t = link_target(f), *why = hook_escapes(p, t, repo, git);
			if (why) {
				*cause = xasprintf(
					"hook %s is a symlink to %s; refused (the host runs "
					"it)",
					f, why);
				rc = -EPERM;
			}
			free(why);
			free(t);
		}
		free(f);
	}
	if (d)
		closedir(d);
	free(hooks);
	return rc;
}

/* sandbox.runtime: gvisor */
static bool gvisor(const struct config *cfg)
{
	return cfg->sandbox.runtime && strcmp(cfg->sandbox.runtime, "gvisor") == 0;
}

/*
 * gVisor (runsc) is podman's runtime of the container, given its own
 * flags: podman's only; the firewall inside a box of its own network
 * (share_sockets: false) is iptables, which gVisor's network does not
 * have; and a second runtime is one too many.
 */
static int check_gvisor(const struct backend_pane *p, const char *rt,
			const struct backend_reach *reach, char **cause)
{
	if (!gvisor(p->cfg))
		return 0;
	if (strcmp(rt, "podman") != 0)
		*cause = xasprintf("sandbox.runtime: gvisor needs podman, and the runtime is %s",
				   rt);
	else if (!path_has("runsc"))
		*cause = xstrdup("sandbox.runtime is gvisor, and runsc is not installed "
				 "(apt-get install runsc)");
	else if (p->cfg->sandbox.container.oci_runtime)
		*cause = xstrdup("sandbox.runtime: gvisor and sandbox.container.oci_runtime are "
				 "both set: set one");
	else if (reach->tcp && !strcmp(p->cfg->sandbox.network.policy, "deny"))
		*cause = xstrdup("sandbox.runtime: gvisor cannot keep policy: deny with "
				 "share_sockets: false (its firewall is iptables, which gVisor's "
				 "network has not)");
	return *cause ? -ENOTSUP : 0;
}

static int container_check(const struct backend_pane *p, char **cause)
{
	const char *rt = container_runtime(p->cfg);
	if (rt == NULL) {
		*cause = xstrdup("the sandbox needs a container runtime and none is installed: "
				 "install podman (apt-get install podman) or docker, or set "
				 "sandbox.container.runtime");
		return -ENOENT;
	}
	if (!path_has(rt)) {
		*cause = xasprintf("sandbox.container.runtime is %s, but %s is not installed",
				   p->cfg->sandbox.container.runtime, rt);
		return -ENOENT;
	}
	if (p->guest_bin == NULL || access(p->guest_bin, X_OK) < 0) {
		*cause = xasprintf("the sandbox client %s is missing (make guest builds it)",
				   p->guest_bin ? p->guest_bin : "workrex-guest");
		return -ENOENT;
	}
	struct backend_reach reach;
	if (container_reach(p->cfg, &reach, cause) < 0)
		return -EINVAL;
	if (check_gvisor(p, rt, &reach, cause) < 0)
		return -ENOTSUP;
	if (!strcmp(p->cfg->sandbox.network.policy, "deny") && !p->offline &&
	    (p->proxy_token == NULL || p->rpc_dir == NULL)) {
		*cause = xstrdup("sandbox.network.policy is deny, and the agent's proxy was "
				 "not set up: the agent does not start");
		return -ENOTSUP;
	}
	int rc;
	if ((rc = check_caps(p, cause)) < 0 || (rc = check_mounts(p, cause)) < 0 ||
	    (rc = check_hooks(p, cause)) < 0)
		return rc;
	if (strchr(p->worktree, ',') || strchr(p->project_root, ',') || strchr(p->git_dir, ',')) {
		*cause = xstrdup("the sandbox cannot mount paths that contain ','");
		return -EINVAL;
	}
	return 0;
}

/* ---- the command line ---- */

static void add(struct strlist *l, const char *s)
{
	strlist_add(l, s);
}

static void vaddf(struct strlist *l, const char *fmt, va_list ap)
{
	char *s = xvasprintf(fmt, ap);
	strlist_add(l, s);
	free(s);
}

static void addf(struct strlist *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addf(struct strlist *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vaddf(l, fmt, ap);
	va_end(ap);
}

static void mount_bind(struct strlist *l, const char *src, const char *dst, bool writable)
{
	add(l, "--mount");
	addf(l, "type=bind,source=%s,target=%s%s", src, dst, writable ? "" : ",readonly");
}

/*
 * The agent's config dir under the sandbox's HOME (/tmp): its own
 * (agenthome.h), with the host's settings bound read-only over it, for a
 * kind that lists them; else the host's read-only as a whole. Claude's
 * ~/.claude.json (state, but also MCP servers) is a private copy per
 * agent that never flows back to the host.
 */
/*
 * The sandbox's own copy of home/name, one per agent (the host's is never
 * written), made at its first start: its worktree trusted there when the
 * user trusted the project (agent_home_trusted).
 */
static char *private_copy(const struct backend_pane *p, const struct agent_kind *k,
			  const char *home, const char *name)
{
	char *dir = private_agent_dir(p->project_root, p->handle, true);
	if (dir == NULL)
		return NULL;
	char *copy = xasprintf("%s/%s", dir, name[0] == '.' ? name + 1 : name);
	free(dir);
	int fd = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		char *src = xasprintf("%s/%s", home, name), *text = NULL, *cause = NULL;
		if (file_read(src, 16u << 20, &text, &cause) < 0)
			text = xstrdup("{}");
		char rp[PATH_MAX], rw[PATH_MAX];
		char *trusted = realpath(p->project_root, rp) && realpath(p->worktree, rw)
					? agent_home_trusted(k, text, rp, rw)
					: NULL;
		if (trusted) {
			free(text);
			text = trusted;
		}
		if (write(fd, text, strlen(text)) < 0)
			log_msg("sandbox: %s: %s", copy, strerror(errno));
		close(fd);
		free(cause);
		free(src);
		free(text);
	}
	return copy;
}

/*
 * The host's setting f, its config dir's paths made the sandbox's
 * (agent_home_rekey), as a file of ours in the agent's private dir, which
 * the sandbox never sees: bound read-only in f's place. NULL: none.
 */
static char *rekeyed_copy(const char *agent, const struct agent_kind *k, const char *f,
			  const char *src, const char *dst)
{
	char *text = NULL, *cause = NULL;
	if (file_read(f, 16u << 20, &text, &cause) < 0) {
		log_msg("sandbox: %s: %s", f, cause);
		free(cause);
		return NULL;
	}
	char *out = agent_home_rekey(text, src, dst);
	char *copy = xasprintf("%s/%s-%s", agent, k->name, k->rekeyed);
	char *tmp = xasprintf("%s.tmp", copy);
	unlink(tmp);
	int rc = file_stage(tmp, out, strlen(out), 0600);
	if (rc == 0)
		rc = file_swap(tmp, copy);
	if (rc < 0) {
		log_msg("sandbox: %s: %s", copy, strerror(-rc));
		unlink(tmp);
		free(copy);
		copy = NULL;
	}
	free(tmp);
	free(out);
	free(text);
	return copy;
}

static void mount_agent_config(const struct backend_pane *p, struct strlist *l)
{
	const char *home = getenv("HOME");
	const char *dir = p->cfg->sandbox.agent_config_dir;
	const struct agent_kind *k = kind_of(p->cfg, p->agent);
	if (home == NULL || k == NULL || k->config_dir == NULL)
		return;
	char *src = dir ? xstrdup(dir) : xasprintf("%s/%s", home, k->config_dir);
	char *dst = xasprintf("/tmp/%s", k->config_dir);
	char *agent = private_agent_dir(p->project_root, p->handle, true);
	char *own = agent ? xasprintf("%s/home/%s", agent, k->name) : NULL;
	char *cause = NULL;
	if (!agent_home_private(k)) {
		if (mkdir_p(src, 0700) == 0)
			mount_bind(l, src, dst, false);
	} else if (own && agent_home_prepare(k, src, own, AGENT_HOME_BOUND, &cause) == 0) {
		mount_bind(l, own, dst, true);
		for (size_t i = 0; i < WRX_ARRAY_LEN(k->settings) && k->settings[i]; i++) {
			char *f = xasprintf("%s/%s", src, k->settings[i]);
			char *g = xasprintf("%s/%s", dst, k->settings[i]);
			struct stat st;
			if (k->rekeyed && !strcmp(k->settings[i], k->rekeyed) &&
			    stat(f, &st) == 0 && S_ISREG(st.st_mode)) {
				char *copy = rekeyed_copy(agent, k, f, src, dst);
				if (copy)
					mount_bind(l, copy, g, false);
				free(copy);
			} else if (stat(f, &st) == 0 &&
				   (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
				mount_bind(l, f, g, false);
			}
			free(f);
			free(g);
		}
	} else {
		log_msg("sandbox: %s: no config dir of its own (%s); it starts without one",
			p->handle, cause ? cause : "no state directory");
	}
	free(cause);
	free(own);
	free(agent);
	free(src);
	free(dst);
	if (k->home_file) {
		char *copy = private_copy(p, k, home, k->home_file);
		char *g = xasprintf("/tmp/%s", k->home_file);
		if (copy)
			mount_bind(l, copy, g, true);
		free(copy);
		free(g);
	}
}

/* excluded_files: relative to the worktree and the main worktree, hidden. */
static void mount_excluded(const struct backend_pane *p, struct strlist *l)
{
	const struct strlist *ex = &p->cfg->sandbox.container.excluded_files;
	const char *roots[] = {p->worktree, p->project_root};
	for (size_t i = 0; i < ex->n; i++) {
		if (ex->v[i][0] == '/' || strstr(ex->v[i], "..") || strchr(ex->v[i], ','))
			continue; /* config_check reports these */
		for (size_t r = 0; r < WRX_ARRAY_LEN(roots); r++) {
			char *path = xasprintf("%s/%s", roots[r], ex->v[i]);
			struct stat st;
			if (lstat(path, &st) == 0) {
				if (S_ISDIR(st.st_mode)) {
					add(l, "--mount");
					addf(l, "type=tmpfs,target=%s", path);
				} else {
					mount_bind(l, "/dev/null", path, false);
				}
			}
			free(path);
		}
	}
}

/* The dev container's mounts: the project's files read-only, the agent's own volumes, tmpfs. */
static void mount_devc(const struct devc_plan *d, struct strlist *l)
{
	for (size_t i = 0; i < d->nmounts; i++) {
		const struct devc_mount *m = &d->mounts[i];
		if (m->type == 'b') {
			mount_bind(l, m->source, m->target, false);
			continue;
		}
		add(l, "--mount");
		if (m->type == 'v')
			addf(l, "type=volume,source=%s,target=%s", m->source, m->target);
		else
			addf(l, "type=tmpfs,target=%s", m->target);
	}
}

/*
 * Its lifecycle commands before the agent, in its container (and under
 * its network policy): one failing is said and ends the rest, and the
 * agent starts anyway, as after `devcontainer up`.
 */
static void lifecycle(const struct devc_plan *d, struct strlist *l)
{
	struct buf b = {0};
	for (size_t i = 0; i < d->script.n; i++)
		buf_addf(&b, "%s(\n%s\n)", i ? " &&\n" : "", d->script.v[i]);
	buf_addstr(&b, " || echo \"workrex: a lifecycle command of devcontainer.json failed "
		       "(exit $?); the agent starts anyway\" >&2\nexec \"$@\"\n");
	add(l, "/bin/sh");
	add(l, "-c");
	add(l, b.data);
	add(l, "workrex-devcontainer");
	buf_free(&b);
}

static bool env_has(const struct strlist *l, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < l->n; i++)
		if (strncmp(l->v[i], name, n) == 0 && l->v[i][n] == '=')
			return true;
	return false;
}

static void env(struct strlist *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void env(struct strlist *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strlist_add(l, "--env");
	vaddf(l, fmt, ap);
	va_end(ap);
}

static int container_argv(const struct backend_pane *p, struct strlist *l, char **cause)
{
	const struct sandbox_config *sb = &p->cfg->sandbox;
	const char *rt = container_runtime(p->cfg);
	if (p->private_gitdir == NULL || p->private_gitfile == NULL) {
		*cause = xstrdup("the sandbox's private git dir was not prepared");
		return -EINVAL;
	}
	bool apple = is_apple(rt);
	struct backend_reach reach;
	if (container_reach(p->cfg, &reach, cause) < 0)
		return -EINVAL;
	/* policy: deny. With no socket shared, a firewall inside; else no network at all. */
	bool firewall = p->proxy_token && reach.tcp;
	char *name = container_name(p->handle, p->n, p->session);
	bool no_network = (p->proxy_token && !reach.tcp) || p->offline;
	add(l, rt);
	if (gvisor(p->cfg)) {
		/*
		 * runsc's own network would refuse the netns podman's CNI gives
		 * it; its host network is that netns (the container's eth0, not
		 * the machine's). The agent's sockets (RPC, proxy) are host Unix
		 * sockets it must be let open. The seccomp profile is gVisor's
		 * own: what the agent calls reaches gVisor's kernel, never the
		 * host's (runsc's oci-seccomp, the profile inside it, ends an
		 * interactive bash at once).
		 */
		add(l, "--runtime=runsc");
		addf(l, "--runtime-flag=network=%s", no_network ? "none" : "host");
		/* ...and its ports' sockets, made inside, ones the host connects to. */
		add(l,
		    p->ports_dir ? "--runtime-flag=host-uds=all" : "--runtime-flag=host-uds=open");
	}
	add(l, "run");
	add(l, "--rm");
	add(l, p->tty ? "-it" : "-i");
	add(l, "--name");
	add(l, name);
	addf(l, "--label=workrex.project=%s", p->project_root);
	addf(l, "--label=workrex.session=%s", p->session);
	addf(l, "--label=workrex.handle=%s", p->handle);
	if (strcmp(rt, "podman") == 0 && getuid() != 0)
		add(l, "--userns=keep-id"); /* rootless: the user's own uid inside */
	/* The firewall step starts as root, and becomes the user before the agent. */
	if (firewall)
		add(l, "--user=0:0");
	else if (strcmp(rt, "podman") != 0 || getuid() == 0)
		addf(l, "--user=%ld:%ld", (long)getuid(), (long)getgid());
	if (!apple) {
		/* No capabilities, no setuid gains, no user namespaces of its own (seccomp.c). */
		add(l, "--cap-drop=ALL");
		if (firewall) {
			/* Only for the firewall step, which drops all four before the agent. */
			static const char *const caps[] = {"NET_ADMIN", "SETUID", "SETGID",
							   "SETPCAP"};
			for (size_t i = 0; i < WRX_ARRAY_LEN(caps); i++)
				addf(l, "--cap-add=%s", caps[i]);
			add(l, "--sysctl=net.ipv6.conf.all.disable_ipv6=1");
			add(l, "--sysctl=net.ipv6.conf.default.disable_ipv6=1");
		}
		add(l, "--security-opt=no-new-privileges");
		addf(l, "--pids-limit=%ld", sb->container.pids_limit);
		bool own_seccomp = false;
		for (size_t i = 0; i < sb->container.security_opt.n; i++)
			own_seccomp |= strncmp(sb->container.security_opt.v[i], "seccomp", 7) == 0;
		char *profile =
			strcmp(rt, "podman") == 0 && !own_seccomp ? seccomp_profile() : NULL;
		if (profile)
			addf(l, "--security-opt=seccomp=%s", profile);
		free(profile);
	}
	if (strcmp(rt, "podman") == 0) {
		/* The dashboard's proxy and its credentials stay out; so do the host's own names. */
		add(l, "--http-proxy=false");
		if (!reach.add_host)
			add(l, "--no-hosts");
	}
	/* policy: deny. Nothing but loopback; HTTPS leaves through the mounted proxy socket. */
	if (no_network)
		add(l, "--network=none");
	if (p->proxy_token && p->resolv && !apple)
		mount_bind(l, p->resolv, "/etc/resolv.conf", false);
	if (reach.add_host)
		add(l, "--add-host=host.docker.internal:host-gateway");
	if (sb->container.memory && strcmp(sb->container.memory, "none") != 0)
		addf(l, "--memory=%s", sb->container.memory);
	if (sb->container.cpus)
		addf(l, "--cpus=%s", sb->container.cpus);
	if (sb->container.oci_runtime && !apple)
		addf(l, "--runtime=%s", sb->container.oci_runtime);
	for (size_t i = 0; i < sb->container.cap_add.n; i++)
		addf(l, "--cap-add=%s", sb->container.cap_add.v[i]);
	for (size_t i = 0; p->devc && i < p->devc->caps.n; i++)
		addf(l, "--cap-add=%s", p->devc->caps.v[i]);
	if (p->devc && p->devc->shm_size)
		addf(l, "--shm-size=%s", p->devc->shm_size);
	for (size_t i = 0; i < sb->container.security_opt.n; i++)
		addf(l, "--security-opt=%s", sb->container.security_opt.v[i]);
	for (size_t i = 0; i < sb->container.devices.n; i++)
		addf(l, "--device=%s", sb->container.devices.v[i]);
	for (size_t i = 0; i < sb->container.group_add.n; i++)
		addf(l, "--group-add=%s", sb->container.group_add.v[i]);
	addf(l, "--workdir=%s", p->worktree);

	/* HOME: empty, the container's own. */
	add(l, "--mount");
	add(l, "type=tmpfs,target=/tmp,tmpfs-mode=1777");
	/* The code: the main worktree to read, the agent's to write. */
	mount_bind(l, p->project_root, p->project_root, false);
	mount_bind(l, p->worktree, p->worktree, true);
	/*
	 * Git metadata: all of the host's read-only (private.h). The worktree's
	 * .git names the agent's private git dir instead, where its commits go.
	 * (Inside the main worktree, its read-only mount covers the git dir.)
	 */
	if (!path_within(p->git_dir, p->project_root))
		mount_bind(l, p->git_dir, p->git_dir, false);
	char *cfgpath = xasprintf("%s/config", p->git_dir);
	mount_bind(l, p->snapshot ? p->snapshot : cfgpath, cfgpath, false);
	free(cfgpath);
	mount_bind(l, p->private_gitdir, p->private_gitdir, true);
	char *wgit = xasprintf("%s/.git", p->worktree);
	mount_bind(l, p->private_gitfile, wgit, false);
	free(wgit);
	/* The bridge (its socket, or the proxy's port file) and its client. */
	if (p->rpc_dir && (!reach.tcp || firewall))
		mount_bind(l, p->rpc_dir, BACKEND_GUEST_RPC_DIR, false);
	if (p->ports && p->ports_dir)
		mount_bind(l, p->ports_dir, BACKEND_GUEST_PORTS_DIR, true);
	mount_bind(l, p->guest_bin, BACKEND_GUEST_CLIENT, false);
	if (p->host_bin)
		mount_bind(l, p->host_bin, BACKEND_GUEST_HOST_BIN, false);
	if (p->profile)
		mount_bind(l, p->profile, "/etc/profile.d/workrex.sh", false);
	mount_agent_config(p, l);
	for (size_t i = 0; i < sb->nextra_mounts; i++)
		mount_bind(l, sb->extra_mounts[i].host, sb->extra_mounts[i].guest,
			   sb->extra_mounts[i].writable);
	if (p->devc)
		mount_devc(p->devc, l);
	mount_excluded(p, l);

	/* Environment: the pane's, then the sandbox's own. */
	struct strlist set = {0};
	for (char *const *e = p->env; e && *e; e++) {
		/* The host's socket path and PATH mean nothing in there. */
		if (strncmp(*e, "WORKREX_RPC_SOCKET=", 19) == 0 || strncmp(*e, "PATH=", 5) == 0)
			continue;
		env(l, "%s", *e);
		strlist_add(&set, *e);
	}
	for (size_t i = 0; p->devc && i < p->devc->env.n; i++) {
		char *var = xstrndup(p->devc->env.v[i], strcspn(p->devc->env.v[i], "="));
		if (!env_has(&set, var))
			env(l, "%s", p->devc->env.v[i]);
		free(var);
	}
	env(l, "HOME=/tmp");
	/* The host's git identity, without the rest of its config. */
	int count = 0;
	const char *keys[] = {"user.name", "user.email"}, *vals[] = {p->git_name, p->git_email};
	for (int i = 0; i < 2; i++)
		if (vals[i]) {
			env(l, "GIT_CONFIG_KEY_%d=%s", count, keys[i]);
			env(l, "GIT_CONFIG_VALUE_%d=%s", count, vals[i]);
			count++;
		}
	env(l, "GIT_CONFIG_COUNT=%d", count);
	if (p->devc && p->devc->path) /* the image's own, which its tools need */
		env(l, "PATH=" BACKEND_GUEST_HOST_BIN ":" GUEST_DIR ":%s", p->devc->path);
	else
		env(l, "PATH=%s", GUEST_PATH);
	env(l, "WORKREX_SANDBOX=1");
	/*
	 * Claude Code refuses its approval flag to uid 0 outside what it calls
	 * a deliberate sandbox, which this is; as root (the user is, in CI) it
	 * would exit at once.
	 */
	env(l, "IS_SANDBOX=1");
	if (reach.tcp) {
		/* No socket crosses into its VM: the token-checked TCP listener does. */
		env(l, "WORKREX_RPC_HOST=%s", reach.guest);
		env(l, "WORKREX_RPC_PORT=%d", p->rpc_port);
	} else if (p->rpc_dir) {
		env(l, "WORKREX_RPC_SOCKET=%s/rpc.sock", BACKEND_GUEST_RPC_DIR);
	}
	if (firewall) {
		/* The firewall step names the proxy, at the port the keeper chose. */
		env(l, "WORKREX_PROXY_TOKEN=%s", p->proxy_token);
	} else if (p->proxy_token) {
		/* Every form the agent CLIs and their tools read (curl, git, Node, npm, Python). */
		char *url = xasprintf("http://workrex:%s@127.0.0.1:%d", p->proxy_token,
				      BACKEND_PROXY_PORT);
		static const char *const names[] = {BACKEND_PROXY_VARS};
		for (size_t i = 0; i < WRX_ARRAY_LEN(names); i++)
			env(l, "%s=%s", names[i], url);
		env(l, "NO_PROXY=localhost,127.0.0.1,::1");
		env(l, "no_proxy=localhost,127.0.0.1,::1");
		env(l, "NODE_USE_ENV_PROXY=1");
		env(l, "WORKREX_PROXY_SOCKET=%s/" BACKEND_PROXY_SOCKET, BACKEND_GUEST_RPC_DIR);
		env(l, "WORKREX_PROXY_PORT=%d", BACKEND_PROXY_PORT);
		free(url);
	}
	for (size_t i = 0; i < sb->env.n; i++)
		env(l, "%s", sb->env.v[i]);
	for (size_t i = 0; i < sb->env_passthrough.n; i++) {
		const char *v = getenv(sb->env_passthrough.v[i]);
		if (v && !env_has(&set, sb->env_passthrough.v[i]))
			env(l, "%s=%s", sb->env_passthrough.v[i], v);
	}
	strlist_free(&set);
	add(l, "--");
	char *image = p->devc ? xstrdup(p->devc->image) : container_image(p->cfg, p->agent);
	add(l, image);
	free(image);
	/* The guest's forwarder, or its firewall, first: the proxy is there before the agent. */
	if (firewall) {
		add(l, BACKEND_GUEST_CLIENT);
		add(l, "firewall");
		addf(l, "--user=%ld:%ld", (long)getuid(), (long)getgid());
		for (size_t i = 0; i < sb->container.group_add.n; i++)
			addf(l, "--group=%s", sb->container.group_add.v[i]);
		add(l, "--");
	} else if (p->proxy_token) {
		add(l, BACKEND_GUEST_CLIENT);
		add(l, "proxy-forward");
		add(l, "--");
	}
	if (p->ports && p->ports_dir) {
		add(l, BACKEND_GUEST_CLIENT);
		add(l, "port-serve");
		add(l, p->ports);
		add(l, "--");
	}
	if (p->devc && p->devc->script.n)
		lifecycle(p->devc, l);
	for (char *const *a = p->argv; *a; a++)
		add(l, *a);
	free(name);
	return 0;
}

static void container_stop_argv(const struct backend_pane *p, struct strlist *out)
{
	const char *rt = container_runtime(p->cfg);
	if (rt == NULL)
		return;
	char *name = p->name ? xstrdup(p->name) : container_name(p->handle, p->n, p->session);
	add(out, rt);
	if (is_apple(rt)) {
		add(out, "delete");
		add(out, "--force");
	} else {
		add(out, "rm");
		add(out, "-f");
		if (strcmp(rt, "podman") == 0)
			add(out, "--time=0");
	}
	add(out, name);
	free(name);
}

void container_port_exec(const struct config *cfg, const char *container, struct strlist *out)
{
	const char *rt = container_runtime(cfg);
	if (rt == NULL)
		return;
	add(out, rt);
	add(out, "exec");
	add(out, "-i");
	add(out, container);
	add(out, BACKEND_GUEST_CLIENT);
	add(out, "port-connect");
}

void container_cleanup_argv(const struct config *cfg, const char *project_root, const char *session,
			    const struct strlist *keep, struct strlist *out)
{
	const char *rt = container_runtime(cfg);
	if (rt == NULL || is_apple(rt) || !path_has(rt))
		return;
	/*
	 * Remove this project's containers that another dashboard started,
	 * unless a keeper still runs them (their names follow: $5...).
	 */
	add(out, "/bin/sh");
	add(out, "-c");
	add(out, "rt=$1 project=$2 session=$3 time=$4; shift 4; keep=\" $* \"; "
		 "\"$rt\" ps -a --filter \"label=workrex.project=$project\" "
		 "--format '{{.Names}} {{index .Labels \"workrex.session\"}}' | "
		 "while read -r n s; do [ \"$s\" = \"$session\" ] && continue; "
		 "case $keep in *\" $n \"*) continue ;; esac; "
		 "\"$rt\" rm -f $time \"$n\" >/dev/null 2>&1; done");
	add(out, "workrex-cleanup");
	add(out, rt);
	add(out, project_root);
	add(out, session);
	/* podman waits 10 s for a container that ignores SIGTERM; nobody waits for these. */
	add(out, strcmp(rt, "podman") == 0 ? "--time=0" : "");
	for (size_t i = 0; keep && i < keep->n; i++)
		add(out, keep->v[i]);
}

const struct backend backend_container = {
	.name = "container",
	.check = container_check,
	.argv = container_argv,
	.stop_argv = container_stop_argv,
	.reach = container_reach,
};

/*
 * "devcontainer": the container backend with what the project's
 * devcontainer.json adds (devcontainer.c), as `workrex add` kept it for
 * the agent: a small file read, no CLI run here.
 */
static int devc_check(const struct backend_pane *p, char **cause)
{
	struct devc_plan d;
	int rc = devc_plan_load(p->project_root, p->handle, &d, cause);
	if (rc == 0 && is_apple(container_runtime(p->cfg) ? container_runtime(p->cfg) : "")) {
		*cause = xstrdup("sandbox.backend devcontainer runs on podman or docker, not Apple "
				 "Container");
		rc = -ENOTSUP;
	}
	devc_plan_free(&d);
	return rc < 0 ? rc : container_check(p, cause);
}

static int devc_argv(const struct backend_pane *p, struct strlist *out, char **cause)
{
	struct devc_plan d;
	int rc = devc_plan_load(p->project_root, p->handle, &d, cause);
	if (rc == 0) {
		struct backend_pane q = *p;
		q.devc = &d;
		rc = container_argv(&q, out, cause);
	}
	devc_plan_free(&d);
	return rc;
}

const struct backend backend_devcontainer = {
	.name = "devcontainer",
	.check = devc_check,
	.argv = devc_argv,
	.stop_argv = container_stop_argv,
	.reach = container_reach,
};
