/*
 * hostexec.c - see hostexec.h. The argv and environment are built here as
 * data (tests/unit/test_hostexec.c reads them); the run is run_stream's.
 */
#include "hostexec.h"

#include "../backends/backend.h"
#include "../util/beneath.h"
#include "../util/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool hostexec_name_ok(const char *name)
{
	return str_is_word(name, 64);
}

bool hostexec_allowed(const struct config *c, const char *name)
{
	if (!hostexec_name_ok(name))
		return false;
	for (size_t i = 0; i < c->sandbox.host_commands.n; i++)
		if (strcmp(c->sandbox.host_commands.v[i], name) == 0)
			return true;
	return false;
}

/* The system, read-only; a link (merged /usr) stays a link. */
static const char *const system_dirs[] = {
	"/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
};
/* What of /etc is a secret: files become /dev/null, directories empty. */
static const char *const etc_files[] = {
	"/etc/shadow",           "/etc/shadow-",          "/etc/gshadow",     "/etc/gshadow-",
	"/etc/sudoers",          "/etc/security/opasswd", "/etc/krb5.keytab", "/etc/ipsec.secrets",
	"/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets",
};
static const char *const etc_dirs[] = {
	"/etc/ssl/private", "/etc/sudoers.d",
	"/etc/wireguard",   "/etc/NetworkManager/system-connections",
	"/etc/letsencrypt", "/etc/libvirt/secrets",
	"/etc/docker",      "/etc/containers/auth.d",
};
/* Toolchains under home a command runs, read-only. */
static const char *const toolchains[] = {
	".rustup",          ".cargo/bin", ".cargo/config.toml",
	".cargo/config",    ".cargo/env", ".nvm",
	".pyenv",           ".sdkman",    ".volta",
	".bun/bin",         ".deno/bin",  "go/bin",
	".local/share/fnm",
};
/* Caches a build tool writes: the user's read-only, under the agent's layer. */
static const char *const caches[] = {
	".cargo/registry", ".cargo/git",           ".npm",
	"go/pkg/mod",      ".cache/go-build",      ".cache/pip",
	".cache/uv",       ".cache/pre-commit",    ".cache/node",
	".cache/yarn",     ".cache/ms-playwright", ".local/share/pnpm",
	".m2/repository",  ".gradle/caches",       ".gradle/wrapper",
};

static bool is_dir(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static void add(struct strlist *l, const char *a, const char *b, const char *c)
{
	strlist_add(l, a);
	if (b)
		strlist_add(l, b);
	if (c)
		strlist_add(l, c);
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/*
 * path seen read-only at the same place (a link as a link, and what it
 * names), if it is there and not in sight already; shown lists what is.
 */
static void show(struct strlist *l, struct strlist *shown, const char *path)
{
	for (size_t i = 0; i < shown->n; i++)
		if (under(path, shown->v[i]))
			return;
	char target[4096];
	ssize_t n = readlink(path, target, sizeof target - 1);
	if (n > 0) {
		target[n] = '\0';
		add(l, "--symlink", target, path);
		strlist_add(shown, path);
		char *real = realpath(path, NULL);
		if (real && strcmp(real, path) != 0)
			show(l, shown, real);
		free(real);
	} else if (exists(path)) {
		add(l, "--ro-bind", path, path);
		strlist_add(shown, path);
	}
}

/* Is path in sight already, read-only (the system)? */
static bool in_system(const char *path)
{
	for (size_t i = 0; i < WRX_ARRAY_LEN(system_dirs); i++)
		if (under(path, system_dirs[i]))
			return true;
	return false;
}

static void mkdirs(const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0700);
			*s = '/';
		}
	mkdir(p, 0700);
	free(p);
}

/*
 * dir/name, a directory of ours, made if missing. What a command left
 * there in place of one (a link to ~/.ssh where its layer's upper dir
 * was, a file, anything not the user's own directory) is discarded,
 * never followed, and said in the log. The fd of it, or -1.
 */
static int own_dir(int dir, const char *path, const char *name)
{
	struct stat st;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (!S_ISDIR(st.st_mode) || st.st_uid != getuid())) {
		log_msg("host command: %s/%s is %s, not a directory of yours: discarded", path,
			name, S_ISLNK(st.st_mode) ? "a link" : "something else");
		if (unlinkat(dir, name, 0) < 0) {
			char *p = xasprintf("%s/%s", path, name);
			beneath_remove_tree(p);
			free(p);
		}
	}
	mkdirat(dir, name, 0700);
	return openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * The agent's layer for a cache: layers/name with upper/ and work/ in it,
 * each checked not to have changed kind since a command last had it.
 * false: it could not be made (the cache is then not in sight at all).
 */
static bool layer_ready(const char *layers, const char *name)
{
	mkdirs(layers);
	int top = open(layers, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int layer = top >= 0 ? own_dir(top, layers, name) : -1;
	char *path = xasprintf("%s/%s", layers, name);
	int upper = layer >= 0 ? own_dir(layer, path, "upper") : -1;
	int work = layer >= 0 ? own_dir(layer, path, "work") : -1;
	bool ok = upper >= 0 && work >= 0;
	int fds[] = {top, layer, upper, work};
	for (size_t i = 0; i < WRX_ARRAY_LEN(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(path);
	return ok;
}

/*
 * The user's cache at home/rel: read-only below the agent's layer, through
 * an overlay hostbox mounts (it is given --overlay LOWER:LAYER:TARGET); no
 * cache of the user's yet, the layer's upper directory alone.
 */
static void cache(const struct hostexec_spec *s, const char *rel, size_t i, struct strlist *l,
		  struct strlist *box)
{
	char *target = xasprintf("%s/%s", s->home, rel);
	char *name = xstrdup(rel);
	for (char *c = name; *c; c++)
		if (*c == '/')
			*c = '_';
	char *layer = xasprintf("%s/%s", s->layers, name);
	char *upper = xasprintf("%s/upper", layer);
	if (!layer_ready(s->layers, name)) {
		log_msg("host command: no cache layer at %s; %s is not in sight", layer, target);
	} else if (is_dir(target)) {
		char *in_lower = xasprintf(HOSTEXEC_BOX "/lower/%zu", i);
		char *in_layer = xasprintf(HOSTEXEC_BOX "/layer/%zu", i);
		add(l, "--ro-bind", target, in_lower);
		add(l, "--bind", layer, in_layer);
		add(l, "--dir", target, NULL);
		char *o = xasprintf("%s:%s:%s", in_lower, in_layer, target);
		add(box, "--overlay", o, NULL);
		free(o);
		free(in_lower);
		free(in_layer);
	} else {
		add(l, "--bind", upper, target);
	}
	free(upper);
	free(layer);
	free(name);
	free(target);
}

/* The code as the container has it (container.c): the same paths, the same rights. */
static void code(const struct hostexec_spec *s, struct strlist *l)
{
	char *wgit = xasprintf("%s/.git", s->worktree);
	if (s->project_root && s->git_dir && s->private_gitdir && s->private_gitfile) {
		add(l, "--ro-bind", s->project_root, s->project_root);
		add(l, "--bind", s->worktree, s->worktree);
		if (!under(s->git_dir, s->project_root))
			add(l, "--ro-bind", s->git_dir, s->git_dir);
		char *cfg = xasprintf("%s/config", s->git_dir);
		add(l, "--ro-bind", s->snapshot ? s->snapshot : "/dev/null", cfg);
		free(cfg);
		add(l, "--bind", s->private_gitdir, s->private_gitdir);
		add(l, "--ro-bind", s->private_gitfile, wgit);
	} else {
		add(l, "--bind", s->worktree, s->worktree);
		if (exists(wgit))
			add(l, "--ro-bind", wgit, wgit);
	}
	free(wgit);
	const char *roots[] = {s->worktree, s->project_root};
	for (size_t i = 0; s->excluded && i < s->excluded->n; i++) {
		const char *ex = s->excluded->v[i];
		if (ex[0] == '/' || strstr(ex, ".."))
			continue;
		for (size_t r = 0; r < WRX_ARRAY_LEN(roots); r++) {
			if (roots[r] == NULL)
				continue;
			char *p = xasprintf("%s/%s", roots[r], ex);
			if (is_dir(p))
				add(l, "--tmpfs", p, NULL);
			else if (exists(p))
				add(l, "--ro-bind", "/dev/null", p);
			free(p);
		}
	}
}

void hostexec_argv(const struct hostexec_spec *s, struct strlist *out)
{
	if (s->unsandboxed) {
		strlist_add(out, s->prog);
		for (char *const *a = s->args; a && *a; a++)
			strlist_add(out, *a);
		return;
	}
	/* First into its cgroups (the shell is ours; bwrap and all it starts follow). */
	if (s->cgroups && s->cgroups->n) {
		add(out, "/bin/sh", "-c",
		    "while [ \"$1\" != -- ]; do echo $$ >\"$1/cgroup.procs\" || exit 126; shift; "
		    "done; shift; exec \"$@\"");
		strlist_add(out, "hostexec");
		for (size_t i = 0; i < s->cgroups->n; i++)
			strlist_add(out, s->cgroups->v[i]);
		strlist_add(out, "--");
	}
	struct strlist box = {0};   /* hostbox's options */
	struct strlist shown = {0}; /* what is in sight, read-only */
	add(out, "bwrap", "--die-with-parent", "--new-session");
	/* Namespaces: uid 0 of a user namespace, for hostbox to mount the layers. */
	add(out, "--unshare-user", "--uid", "0");
	add(out, "--gid", "0", NULL);
	add(out, "--unshare-pid", "--unshare-ipc", "--unshare-uts");
	add(out, "--unshare-cgroup-try", "--unshare-net", NULL);
	add(out, "--cap-drop", "ALL", NULL);
	static const char *const caps[] = {"CAP_SYS_ADMIN", "CAP_DAC_OVERRIDE", "CAP_SETPCAP",
					   "CAP_SETFCAP"};
	for (size_t i = 0; i < WRX_ARRAY_LEN(caps); i++)
		add(out, "--cap-add", caps[i], NULL);
	for (size_t i = 0; i < WRX_ARRAY_LEN(system_dirs); i++)
		show(out, &shown, system_dirs[i]);
	for (size_t i = 0; i < WRX_ARRAY_LEN(etc_files); i++)
		if (exists(etc_files[i]) && !is_dir(etc_files[i]))
			add(out, "--ro-bind", "/dev/null", etc_files[i]);
	for (size_t i = 0; i < WRX_ARRAY_LEN(etc_dirs); i++)
		if (is_dir(etc_dirs[i]))
			add(out, "--tmpfs", etc_dirs[i], NULL);
	/* ssh_host_*_key: the machine's own keys. */
	DIR *d = opendir("/etc/ssh");
	for (struct dirent *e; d && (e = readdir(d)) != NULL;)
		if (strncmp(e->d_name, "ssh_host_", 9) == 0 && !strstr(e->d_name, ".pub")) {
			char *p = xasprintf("/etc/ssh/%s", e->d_name);
			add(out, "--ro-bind", "/dev/null", p);
			free(p);
		}
	if (d)
		closedir(d);
	add(out, "--dev", "/dev", NULL);
	add(out, "--proc", "/proc", NULL);
	add(out, "--tmpfs", "/tmp", NULL);
	add(out, "--tmpfs", "/var/tmp", NULL);
	add(out, "--tmpfs", HOSTEXEC_BOX, NULL);
	/* Home: empty, but for toolchains and the caches. */
	if (s->home && s->home[0] == '/' && strcmp(s->home, "/") != 0 && !in_system(s->home)) {
		add(out, "--tmpfs", s->home, NULL);
		for (size_t i = 0; i < WRX_ARRAY_LEN(toolchains); i++) {
			char *p = xasprintf("%s/%s", s->home, toolchains[i]);
			show(out, &shown, p);
			free(p);
		}
		for (size_t i = 0; s->layers && i < WRX_ARRAY_LEN(caches); i++)
			cache(s, caches[i], i, out, &box);
	}
	for (size_t i = 0; s->paths && i < s->paths->n; i++)
		if (s->paths->v[i][0] == '/')
			show(out, &shown, s->paths->v[i]);
	show(out, &shown, s->prog);
	strlist_free(&shown);
	code(s, out);
	add(out, "--ro-bind", s->guest, HOSTEXEC_BOX "/workrex");
	if (s->proxy)
		add(out, "--bind", s->proxy, HOSTEXEC_PROXY_SOCKET);
	add(out, "--remount-ro", "/", NULL); /* bwrap's own root: no scratch space but /tmp and ~ */
	add(out, "--chdir", s->worktree, NULL);
	add(out, "--", HOSTEXEC_BOX "/workrex", "hostbox");
	char *n = xasprintf("%u", s->uid);
	add(out, "--uid", n, NULL);
	free(n);
	n = xasprintf("%u", s->gid);
	add(out, "--gid", n, NULL);
	free(n);
	n = xasprintf("%ld", s->procs);
	add(out, "--procs", n, NULL);
	free(n);
	n = xasprintf("%lld", s->memory);
	add(out, "--memory", n, NULL);
	free(n);
	for (size_t i = 0; i < box.n; i++)
		strlist_add(out, box.v[i]);
	strlist_free(&box);
	strlist_add(out, "--");
	strlist_add(out, s->prog);
	for (char *const *a = s->args; a && *a; a++)
		strlist_add(out, *a);
}

/* Where tools and their toolchains are; the rest of our environment stays here. */
static const char *const kept_env[] = {
	"PATH",        "HOME", "USER",       "LOGNAME",     "LANG",   "LC_ALL", "LC_CTYPE",
	"LC_MESSAGES", "TZ",   "CARGO_HOME", "RUSTUP_HOME", "GOPATH", "GOROOT", "JAVA_HOME",
};

/* Our cgroup's directory for controller (v1 "N:pids:/p", or v2 "0::/p"), or NULL. */
static char *our_cgroup(const char *controller, bool v2)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (f == NULL)
		return NULL;
	char line[4096], *dir = NULL;
	while (dir == NULL && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c = strchr(line, ':'), *p = c ? strchr(c + 1, ':') : NULL;
		if (p == NULL)
			continue;
		*p++ = '\0';
		c++;
		if (v2 && *c == '\0')
			dir = xasprintf("/sys/fs/cgroup%s", strcmp(p, "/") ? p : "");
		else if (!v2 && strcmp(c, controller) == 0)
			dir = xasprintf("/sys/fs/cgroup/%s%s", controller, strcmp(p, "/") ? p : "");
	}
	fclose(f);
	return dir;
}

static int put(const char *dir, const char *file, const char *value)
{
	char *p = xasprintf("%s/%s", dir, file);
	FILE *f = fopen(p, "we");
	free(p);
	if (f == NULL)
		return -1;
	int rc = fputs(value, f) < 0 ? -1 : 0;
	return fclose(f) < 0 ? -1 : rc;
}

/*
 * Ours that are empty now (a command's last processes were still going
 * when it was removed), and those of a dashboard that is gone: removed.
 * A cgroup of another running dashboard is left alone.
 */
static void sweep(const char *base)
{
	DIR *d = opendir(base);
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		if (strncmp(e->d_name, "workrex-", 8) != 0)
			continue;
		const char *last = strrchr(e->d_name, '-');
		const char *p = last;
		while (p > e->d_name + 8 && p[-1] != '-')
			p--;
		long pid = strtol(p, NULL, 10);
		if (pid <= 0 || (pid != (long)getpid() && kill((pid_t)pid, 0) == 0))
			continue;
		char *dir = xasprintf("%s/%s", base, e->d_name);
		rmdir(dir); /* fails while a process is in it */
		free(dir);
	}
	if (d)
		closedir(d);
}

void hostexec_cgroups(const char *name, long procs, long long memory, struct strlist *dirs)
{
	static unsigned seq;
	bool v2 = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;
	static const char *const controllers[] = {"pids", "memory"};
	seq++;
	for (size_t i = 0; i < (v2 ? 1u : 2u); i++) {
		char *base = our_cgroup(controllers[i], v2);
		if (base == NULL)
			continue;
		sweep(base);
		if (v2)
			put(base, "cgroup.subtree_control",
			    "+pids +memory"); /* may be on already */
		char *dir = xasprintf("%s/workrex-%s-%ld-%u", base, name, (long)getpid(), seq);
		free(base);
		if (mkdir(dir, 0700) < 0) {
			free(dir);
			continue;
		}
		char v[32];
		bool ok = true;
		if ((v2 || i == 0) && procs > 0) {
			snprintf(v, sizeof v, "%ld", procs);
			ok = put(dir, "pids.max", v) == 0;
		}
		if (ok && (v2 || i == 1) && memory > 0) {
			snprintf(v, sizeof v, "%lld", memory);
			ok = put(dir, v2 ? "memory.max" : "memory.limit_in_bytes", v) == 0;
		}
		if (ok)
			strlist_add(dirs, dir);
		else
			rmdir(dir);
		free(dir);
	}
}

void hostexec_cgroups_remove(struct strlist *dirs)
{
	for (size_t i = 0; i < dirs->n; i++)
		rmdir(dirs->v[i]);
	strlist_free(dirs);
}

long long hostexec_size(const char *s)
{
	char *end;
	double v = s ? strtod(s, &end) : 0;
	if (s == NULL || v <= 0)
		return 0;
	static const struct {
		const char *unit;
		int shift;
	} units[] = {{"GiB", 30}, {"G", 30}, {"MiB", 20}, {"M", 20}, {"TiB", 40}};
	for (size_t i = 0; i < WRX_ARRAY_LEN(units); i++)
		if (strcmp(end, units[i].unit) == 0)
			return (long long)(v * (double)(1LL << units[i].shift));
	return 0;
}

void hostexec_env(const char *proxy_token, struct strlist *out)
{
	for (size_t i = 0; i < WRX_ARRAY_LEN(kept_env); i++) {
		const char *v = getenv(kept_env[i]);
		if (v) {
			char *kv = xasprintf("%s=%s", kept_env[i], v);
			strlist_add(out, kv);
			free(kv);
		}
	}
	strlist_add(out, "TERM=dumb");
	if (proxy_token == NULL)
		return;
	static const char *const names[] = {BACKEND_PROXY_VARS}; /* as the container has them */
	for (size_t i = 0; i < WRX_ARRAY_LEN(names); i++) {
		char *kv = xasprintf("%s=http://workrex:%s@127.0.0.1:%d", names[i], proxy_token,
				     BACKEND_PROXY_PORT);
		strlist_add(out, kv);
		free(kv);
	}
	strlist_add(out, "NO_PROXY=localhost,127.0.0.1,::1");
	strlist_add(out, "no_proxy=localhost,127.0.0.1,::1");
	strlist_add(out, "NODE_USE_ENV_PROXY=1");
	strlist_add(out, "WORKREX_PROXY_SOCKET=" HOSTEXEC_PROXY_SOCKET);
	char *port = xasprintf("WORKREX_PROXY_PORT=%d", BACKEND_PROXY_PORT);
	strlist_add(out, port);
	free(port);
}
