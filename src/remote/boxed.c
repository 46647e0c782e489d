/*
 * boxed.c - a sandboxed agent's pane on a server: its container made
 * there by the same backend as here (backends/container.c), from the
 * settings the dashboard resolved and sent, against the server's own
 * clone, git dir and container engine (remote.hosts.NAME.runtime, else
 * what is installed there).
 *
 * What is the server's: the agent's private git dir (git/private.h), where
 * its commits go and from which remote_box_import alone brings them onto
 * its branch in the clone, every object verified, before this machine
 * fetches them (hashing each again); its RPC directory, <runtime>/a-<hash>,
 * into which the link forwards the bridge (rpc.sock) and where its keeper
 * there runs its proxy under policy: deny (proxy.sock), as a keeper does
 * here. Host commands and extra mounts are this machine's paths, not the
 * server's: a container there gets neither.
 */
#include "boxed.h"

#include "../backends/backend.h"
#include "../git/private.h"
#include "../git/worktree.h"
#include "../net/portfwd.h"
#include "../net/spec.h"
#include "../rpc/control.h"
#include "../rpc/proto.h"
#include "../util/beneath.h"
#include "../util/json.h"
#include "../util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The settings the dashboard sent (its resolved config, as YAML) into c. */
static int box_config(json_object *sb, struct config *c, char **cause)
{
	config_init(c);
	const char *yaml = json_str(sb, "config");
	if (yaml == NULL) {
		*cause = xstrdup("a sandboxed pane needs its settings");
		return -EINVAL;
	}
	char *dir = control_dir(cause);
	if (dir == NULL)
		return -EIO;
	char *path = xasprintf("%s/sandbox-XXXXXX", dir);
	free(dir);
	int fd = mkstemp(path), rc = fd < 0 ? -errno : 0;
	if (rc == 0 && fd_write_all(fd, yaml, strlen(yaml)) < 0)
		rc = -EIO;
	if (fd >= 0)
		close(fd);
	char *err = NULL;
	if (rc == 0 && config_load(c, path, true, &err) < 0) {
		*cause = xasprintf("its settings there: %s", err);
		rc = -EINVAL;
	} else if (rc < 0) {
		*cause = xasprintf("its settings there: %s", strerror(-rc));
	}
	free(err);
	unlink(path);
	free(path);
	/* This machine's paths: nothing of them is the server's. */
	config_free_mounts(&c->sandbox);
	strlist_free(&c->sandbox.host_commands);
	const char *rt = json_str(sb, "runtime");
	if (rc == 0 && rt) {
		free(c->sandbox.container.runtime);
		c->sandbox.container.runtime = xstrdup(rt);
	}
	return rc;
}

char *remote_box_dir(const char *root, const char *handle, bool create, char **cause)
{
	char *ctl = control_dir(cause);
	if (ctl == NULL)
		return NULL;
	char *dir = xasprintf("%s/a-%08x", ctl, str_hash(str_hash(WRX_HASH_INIT, root), handle));
	free(ctl);
	struct stat st;
	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		*cause = xasprintf("%s: %s", dir, strerror(errno));
	} else if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid()) {
		return dir;
	} else if (create) {
		*cause = xasprintf("%s is not a directory of this user's", dir);
	}
	free(dir);
	return NULL;
}

/* Under policy: deny, a resolv.conf with no nameserver, in the agent's private dir there. */
static char *box_resolv(const char *root, const char *handle)
{
	char *dir = private_agent_dir(root, handle, true);
	static const char text[] = "# workrex: policy deny, no DNS in here; HTTPS goes through the "
				   "proxy (HTTPS_PROXY)\n";
	char *path = dir && beneath_write(dir, "resolv.conf", text, sizeof text - 1, 0644) == 0
			     ? xasprintf("%s/resolv.conf", dir)
			     : NULL;
	free(dir);
	return path;
}

/* What its keeper runs: the proxy (net/spec.h) at proxy.sock in its RPC directory. */
static json_object *box_proxy(const struct config *c, const char *dir, const char *token)
{
	json_object *o = json_object_new_object();
	char *sock = xasprintf("%s/" BACKEND_PROXY_SOCKET, dir);
	json_add_str(o, "socket", sock);
	free(sock);
	json_add_str(o, "token", token);
	json_object_object_add(o, "max_connections",
			       json_object_new_int((int)c->sandbox.network.max_connections));
	json_object_object_add(o, "allowed_domains",
			       proxy_domains_json(&c->sandbox.network.allowed));
	return o;
}

static json_object *strings_json(const struct strlist *l)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < l->n; i++)
		json_object_array_add(a, json_object_new_string(l->v[i]));
	return a;
}

int remote_box_start(const struct repo *repo, json_object *req, char *const *argv, char *const *env,
		     json_object *spec, char **cause)
{
	json_object *sb = NULL;
	json_object_object_get_ex(req, "sandbox", &sb);
	const char *handle = json_str(req, "handle"), *branch = json_str(sb, "branch"),
		   *token = json_str(sb, "proxy_token"), *root = repo_root(repo);
	if (handle == NULL || !handle_valid(handle) || json_str(req, "cwd") == NULL) {
		*cause = xstrdup("a sandboxed pane needs its agent and worktree");
		return -EINVAL;
	}
	/* Its command line puts $WORKREX_BIN first on PATH again after a login profile. */
	struct strlist ev = {0};
	for (char *const *e = env; e && *e; e++)
		strlist_add(&ev, *e);
	strlist_add(&ev, "WORKREX_BIN=" BACKEND_GUEST_DIR);
	char **envv = strlist_argv(&ev);
	struct config c;
	struct backend_git git = {0};
	int rc = box_config(sb, &c, cause);
	if (rc == 0 && strcmp(c.sandbox.backend, "container") != 0) {
		*cause = xasprintf("sandbox.backend %s: a sandbox on a server is a container "
				   "(podman or docker there)",
				   c.sandbox.backend);
		rc = -ENOTSUP;
	}
	bool deny = rc == 0 && strcmp(c.sandbox.network.policy, "deny") == 0;
	if (deny && (token == NULL || !rpc_token_wellformed(token, strlen(token)))) {
		*cause = xstrdup("sandbox.network.policy is deny, and the agent's proxy token was "
				 "not sent: the agent does not start");
		rc = -EINVAL;
	}
	if (rc == 0)
		rc = backend_git_prepare(root, handle, branch, &git, cause);
	char *dir = rc == 0 ? remote_box_dir(root, handle, true, cause) : NULL;
	if (rc == 0 && dir == NULL)
		rc = -EIO;
	char *self = realpath("/proc/self/exe", NULL),
	     *resolv = deny ? box_resolv(root, handle) : NULL;
	const char *session = json_str(sb, "session");
	struct backend_pane p = {
		.cfg = &c,
		.project_root = root,
		.git_dir = repo_gitdir(repo),
		.worktree = json_str(req, "cwd"),
		.handle = handle,
		.n = json_int(req, "pane", 0),
		.agent = json_str(sb, "agent"),
		.agent_pane = json_flag(req, "agent_pane"),
		.argv = argv,
		.env = envv,
		.rpc_dir = dir,
		.guest_bin = self, /* this program is the guest client too (server.c) */
		.session = session ? session : "server",
		.git_name = json_str(sb, "git_name"),
		.git_email = json_str(sb, "git_email"),
		.tty = true,
		.proxy_token = deny ? token : NULL,
		.resolv = resolv,
	};
	/* Its ports (config ports), into the container by its sockets, as here. */
	char *ports_dir = rc == 0 && p.agent_pane && json_str(sb, "ports")
				  ? backend_ports_dir(root, handle, true)
				  : NULL;
	p.ports = ports_dir ? json_str(sb, "ports") : NULL;
	p.ports_dir = ports_dir;
	backend_pane_git(&p, &git);
	struct strlist run = {0}, stop = {0};
	if (rc == 0 && (rc = backend_container.check(&p, cause)) == 0)
		rc = backend_container.argv(&p, &run, cause);
	if (rc == 0) {
		char *name = container_name(handle, p.n, p.session);
		p.name = name;
		backend_container.stop_argv(&p, &stop);
		json_object_object_add(spec, "argv", strings_json(&run));
		json_object_object_add(spec, "stop", strings_json(&stop));
		json_add_str(spec, "container", name);
		char *rs = xasprintf("%s/rpc.sock", dir);
		if (p.agent_pane)
			json_add_str(spec, "rpc_socket", rs);
		free(rs);
		if (p.agent_pane && deny)
			json_object_object_add(spec, "proxy", box_proxy(&c, dir, token));
		if (p.ports) {
			struct strlist exec = {0};
			container_port_exec(&c, name, &exec);
			char **xv = strlist_argv(&exec);
			json_object_object_add(spec, "ports",
					       portfwd_spec_json(p.ports, ports_dir, xv));
			free(xv);
			strlist_free(&exec);
		}
		json_add_str(spec, "rpc_dir", dir);
		free(name);
	}
	strlist_free(&run);
	strlist_free(&stop);
	free(envv);
	strlist_free(&ev);
	free(self);
	free(resolv);
	free(ports_dir);
	free(dir);
	backend_git_free(&git);
	config_free(&c);
	return rc;
}

json_object *remote_box_import(const struct repo *repo, json_object *req, char **cause)
{
	const char *handle = json_str(req, "handle");
	if (handle == NULL || !handle_valid(handle)) {
		*cause = xstrdup("import needs the agent");
		return NULL;
	}
	char *note = NULL;
	if (private_import(repo, handle, json_str(req, "branch"), json_str(req, "cwd"), &note,
			   cause) < 0) {
		free(note);
		return NULL;
	}
	json_object *r = json_object_new_object();
	json_object_object_add(r, "ok", json_object_new_boolean(1));
	if (note)
		json_add_str(r, "note", note);
	free(note);
	return r;
}
