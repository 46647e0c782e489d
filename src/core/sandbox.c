/*
 * sandbox.c - the core's side of sandboxed panes: which panes run in
 * a backend, the argv they get (backends/), the agent's own RPC socket
 * mounted into its containers, stopping a pane's container when the pane
 * goes, and removing containers a dead dashboard left behind.
 *
 * Everything here is quick (a few small files, no git): what a backend
 * needs that comes from git (the common .git directory, the user's git
 * identity) is read once at start. Stopping and cleaning up run as
 * detached child processes, so they finish even as the dashboard exits.
 */
#include "../backends/backend.h"
#include "../net/portfwd.h"
#include "../rpc/control.h"
#include "../rpc/proto.h"
#include "../util/beneath.h"
#include "../rpc/server.h"
#include "../util/json.h"
#include "../util/log.h"
#include "../util/util.h"
#include "../git/private.h"
#include "agentcmd.h"
#include "hostexec.h"
#include "runner.h"
#include "run.h"
#include "wrx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool sandbox_wanted(struct wrx *w, const struct agent *a)
{
	if (!a->git.worktree || a->remote.host)
		return false; /* the project's own shell stays on the host; a server is its own */
	return a->box.wanted == 1 || (a->box.wanted == -1 && w->cfg.sandbox.enabled);
}

/* Does target (sandbox.target) put this pane in a sandbox, once its agent is? */
static bool target_holds(struct wrx *w, bool agent_pane)
{
	return agent_pane ||
	       strcmp(w->cfg.sandbox.target ? w->cfg.sandbox.target : "agent", "all") == 0;
}

bool sandbox_pane_wanted(struct wrx *w, const struct agent *a, bool agent_pane)
{
	return sandbox_wanted(w, a) && target_holds(w, agent_pane);
}

bool sandbox_there(struct wrx *w, const struct agent *a)
{
	return a->remote.host && a->git.worktree &&
	       (a->box.wanted == 1 || (a->box.wanted == -1 && w->cfg.sandbox.enabled));
}

void sandbox_start(struct wrx *w)
{
	w->session_id = xasprintf("%ld-%llu", (long)getpid(), (unsigned long long)now_ms());
	w->guest_bin = backend_guest_path();
	/* Containers a dashboard of this project left when it died. */
	bool any = w->cfg.sandbox.enabled;
	for (int i = 0; i < session_agent_count(w->s); i++)
		any = any || session_agent(w->s, i)->box.wanted == 1;
	/* A command's core (a helper, runner.c) lives a moment: the dashboard cleans up. */
	if (any && w->in_repo && !w->helper) {
		struct strlist argv = {0};
		container_cleanup_argv(&w->cfg, w->root, w->session_id, &w->kept_containers, &argv);
		run_detached(w->loop, &argv);
		strlist_free(&argv);
	}
}

void sandbox_stop(struct wrx *w)
{
	strlist_free(&w->kept_containers);
	free(w->session_id);
	free(w->guest_bin);
	w->session_id = w->guest_bin = NULL;
}

/* The agent's own socket, in its own 0700 directory: what its containers mount. */
int sandbox_agent_socket(struct wrx *w, struct agent *a, char **cause)
{
	if (a->box.rpc_dir)
		return 0;
	char *ctl = xstrdup(w->sock_path);
	char *slash = strrchr(ctl, '/');
	*slash = '\0';
	char *dir =
		xasprintf("%s/a-%08x", ctl, str_hash(str_hash(WRX_HASH_INIT, w->root), a->handle));
	free(ctl);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		*cause = xasprintf("%s: %s", dir, strerror(errno));
		free(dir);
		return -errno;
	}
	char *sock = xasprintf("%s/rpc.sock", dir);
	int rc = rpc_server_listen_unix(w->rpc, sock, false, a->handle, cause);
	free(sock);
	if (rc < 0) {
		free(dir);
		return rc;
	}
	a->box.rpc_dir = dir;
	/* Its family's agents share a budget of the bridge's connections. */
	rpc_server_family(w->rpc, a->handle, session_family_root(w->s, a)->handle);
	return 0;
}

bool sandbox_network_denied(const struct wrx *w)
{
	return strcmp(w->cfg.sandbox.network.policy, "deny") == 0;
}

/*
 * Under policy: deny, the agent's proxy token: kept in its host-only
 * directory (0600), so that panes opened by a later dashboard, and the
 * keeper that runs its proxy, agree on it.
 */
static int sandbox_proxy_token(struct wrx *w, struct agent *a, char **cause)
{
	if (a->box.proxy_token)
		return 0;
	char *dir = private_agent_dir(w->root, a->handle, true);
	if (dir == NULL) {
		*cause = xasprintf("%s: no private directory for its proxy token", a->handle);
		return -EIO;
	}
	char *tok = NULL;
	int rc = beneath_read(dir, "proxy-token", RPC_TOKEN_LEN + 1, &tok);
	if (rc < 0 || strlen(tok) != RPC_TOKEN_LEN || !rpc_token_wellformed(tok, RPC_TOKEN_LEN)) {
		free(tok);
		tok = xmalloc(RPC_TOKEN_LEN + 1);
		rc = rpc_token_new(tok);
		if (rc == 0)
			rc = beneath_write(dir, "proxy-token", tok, RPC_TOKEN_LEN, 0600);
	}
	/* And a resolv.conf with no nameserver, for its containers' /etc. */
	if (rc == 0) {
		static const char text[] = "# workrex: policy deny, no DNS in here; HTTPS goes "
					   "through the proxy (HTTPS_PROXY)\n";
		rc = beneath_write(dir, "resolv.conf", text, sizeof text - 1, 0644);
	}
	free(dir);
	if (rc < 0) {
		free(tok);
		*cause = xasprintf("%s: its proxy token: %s", a->handle, strerror(-rc));
		return rc;
	}
	a->box.proxy_token = tok;
	return 0;
}

json_object *sandbox_there_spec(struct wrx *w, struct agent *a, bool agent_pane)
{
	if (!sandbox_there(w, a) || !target_holds(w, agent_pane))
		return NULL;
	json_object *o = json_object_new_object();
	/* The user's settings as this dashboard resolved them: the server reads no config. */
	struct buf y = {0};
	config_reference(&y, &w->cfg, CONFIG_REF_LOADABLE);
	json_object_object_add(o, "config", json_object_new_string(y.data ? y.data : ""));
	buf_free(&y);
	const char *agent = a->git.agent ? a->git.agent : agentcmd_default(&w->cfg);
	if (agent)
		json_object_object_add(o, "agent", json_object_new_string(agent));
	if (a->git.branch)
		json_object_object_add(o, "branch", json_object_new_string(a->git.branch));
	if (w->session_id)
		json_object_object_add(o, "session", json_object_new_string(w->session_id));
	if (w->git_name)
		json_object_object_add(o, "git_name", json_object_new_string(w->git_name));
	if (w->git_email)
		json_object_object_add(o, "git_email", json_object_new_string(w->git_email));
	for (size_t i = 0; i < w->cfg.nhosts; i++)
		if (!strcmp(w->cfg.hosts[i].name, a->remote.host) && w->cfg.hosts[i].runtime)
			json_object_object_add(o, "runtime",
					       json_object_new_string(w->cfg.hosts[i].runtime));
	/* Its ports, which its keeper there listens on; the link forwards them here. */
	json_add_str(o, "ports", a->git.ports);
	/* Under deny, its proxy's token: kept here, so that a later dashboard's panes agree. */
	char *cause = NULL;
	if (sandbox_network_denied(w) && sandbox_proxy_token(w, a, &cause) == 0)
		json_object_object_add(o, "proxy_token",
				       json_object_new_string(a->box.proxy_token));
	if (cause)
		log_msg("%s: %s", a->handle, cause);
	free(cause);
	return o;
}

/*
 * Where no unix socket crosses into the sandbox (Apple Container's VMs,
 * Docker Desktop, share_sockets: false), the bridge listens on TCP, on the
 * host's address on the sandboxes' network only (the backend's reach), never
 * on all addresses; tokens guard it.
 */
static int tcp_listener(struct wrx *w, const char *host, char **cause)
{
	if (w->rpc_port)
		return 0;
	int port = 0;
	int rc = rpc_server_listen_tcp(w->rpc, host, 0, &port, cause);
	if (rc < 0)
		return rc;
	w->rpc_port = port;
	log_msg("rpc: listening on %s:%d for sandboxes that cannot share a socket", host, port);
	return 0;
}

/*
 * The shims of sandbox.host_commands, made afresh for each pane in the
 * agent's host-only directory: <dir>/host-bin/NAME, a link to the guest
 * client, which runs `host-exec NAME` when called by that name (and xclip
 * and wl-paste, which read the host clipboard's image); and
 * <dir>/profile.sh, which puts them and the client first on PATH again
 * for login shells (Debian's /etc/profile resets it). The backend mounts
 * both read-only. Names the host would refuse get no shim.
 */
static void host_bin(struct wrx *w, struct agent *a, char **bin, char **profile)
{
	*bin = *profile = NULL;
	char *dir = private_agent_dir(w->root, a->handle, true);
	if (dir == NULL)
		return;
	char *b = xasprintf("%s/host-bin", dir);
	char *pf = xasprintf("%s/profile.sh", dir);
	free(dir);
	if (mkdir(b, 0700) < 0 && errno != EEXIST) {
		log_msg("%s: %s: %s", a->handle, b, strerror(errno));
		free(b);
		free(pf);
		return;
	}
	DIR *d = opendir(b);
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	/* The agent's own image paste (clipboard-read), whatever else is listed. */
	static const char *const clipboard[] = {"xclip", "wl-paste"};
	for (size_t i = 0; d && i < WRX_ARRAY_LEN(clipboard); i++)
		symlinkat(BACKEND_GUEST_CLIENT, dirfd(d), clipboard[i]);
	for (size_t i = 0; d && i < w->cfg.sandbox.host_commands.n; i++) {
		const char *name = w->cfg.sandbox.host_commands.v[i];
		if (hostexec_name_ok(name) && strcmp(name, "xclip") && strcmp(name, "wl-paste"))
			symlinkat(BACKEND_GUEST_CLIENT, dirfd(d), name);
	}
	if (d)
		closedir(d);
	static const char text[] =
		"# workrex: the sandbox client and the host commands first on PATH,\n"
		"# also for login shells.\n"
		"PATH=" BACKEND_GUEST_HOST_BIN ":" BACKEND_GUEST_DIR ":$PATH\n";
	int fd = open(pf, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || fd_write_all(fd, text, sizeof text - 1) < 0) {
		log_msg("%s: %s: %s", a->handle, pf, strerror(errno));
		free(pf);
		pf = NULL;
	}
	if (fd >= 0)
		close(fd);
	*bin = b;
	*profile = pf;
}

/* The backend a pane runs in (NULL: configured but not built in). */
static const struct backend *pane_backend(struct wrx *w, const struct wpane *wp)
{
	return backend_find(wp->sandboxed ? w->cfg.sandbox.backend : "host");
}

int sandbox_pane_argv(struct wrx *w, struct wpane *wp, char *const *argv, char *const *env,
		      char ***out, char **cause)
{
	*out = NULL;
	struct agent *a = wp->agent;
	const struct backend *b = pane_backend(w, wp);
	if (b == &backend_host)
		return 0; /* its argv as it is: nothing to build */
	if (b == NULL || w->gitdir == NULL) {
		*cause = xasprintf("sandbox.backend '%s' is not available in this build",
				   w->cfg.sandbox.backend);
		return -ENOTSUP;
	}
	int rc = sandbox_agent_socket(w, a, cause);
	if (rc == 0 && sandbox_network_denied(w))
		rc = sandbox_proxy_token(w, a, cause);
	if (rc < 0)
		return rc;
	struct backend_git git;
	if (!a->git.ready || backend_git_ready(w->root, a->handle, &git) < 0) {
		rc = backend_git_prepare(w->root, a->handle, a->git.branch, &git, cause);
		if (rc < 0)
			return rc;
	}
	a->git.ready = false; /* once: later panes bring it up to date */
	struct backend_pane p = {
		.cfg = &w->cfg,
		.project_root = w->root,
		.git_dir = w->gitdir,
		.worktree = a->path,
		.handle = a->handle,
		.n = wp->id,
		.agent = a->git.agent ? a->git.agent : agentcmd_default(&w->cfg),
		.agent_pane = session_agent_pane(w->s, a) == wp,
		.argv = argv,
		.env = env,
		.rpc_dir = a->box.rpc_dir,
		.rpc_port = w->rpc_port,
		.guest_bin = w->guest_bin,
		.session = w->session_id,
		.git_name = w->git_name,
		.git_email = w->git_email,
		.tty = true,
		.proxy_token = a->box.proxy_token,
	};
	char *resolv = NULL;
	if (a->box.proxy_token) {
		char *dir = private_agent_dir(w->root, a->handle, false);
		resolv = dir ? xasprintf("%s/resolv.conf", dir) : NULL;
		free(dir);
		p.resolv = resolv;
	}
	char *ports_dir =
		p.agent_pane && a->git.ports ? backend_ports_dir(w->root, a->handle, true) : NULL;
	p.ports = ports_dir ? a->git.ports : NULL;
	p.ports_dir = ports_dir;
	backend_pane_git(&p, &git);
	struct strlist run = {0};
	rc = b->check(&p, cause);
	/* A runtime that cannot share a socket gets the TCP listener, once checked. */
	struct backend_reach reach = {0};
	if (rc == 0 && b->reach && (rc = b->reach(&w->cfg, &reach, cause)) == 0 && reach.tcp &&
	    (rc = tcp_listener(w, reach.bind, cause)) == 0)
		p.rpc_port = w->rpc_port;
	char *bin = NULL, *profile = NULL;
	if (rc == 0) {
		host_bin(w, a, &bin, &profile);
		p.host_bin = bin;
		p.profile = profile;
		rc = b->argv(&p, &run, cause);
	}
	free(bin);
	free(profile);
	free(resolv);
	free(ports_dir);
	backend_git_free(&git);
	if (rc < 0) {
		strlist_free(&run);
		return rc;
	}
	char **v = strlist_argv(&run);
	free(run.v);
	*out = v;
	if (b == &backend_container || b == &backend_devcontainer) {
		free(wp->runner->container);
		wp->runner->container = container_name(a->handle, wp->id, w->session_id);
	}
	return 0;
}

json_object *sandbox_ports_spec(struct wrx *w, struct agent *a, const char *container)
{
	char *dir = backend_ports_dir(w->root, a->handle, false); /* (its pane's argv made it) */
	struct strlist exec = {0};
	container_port_exec(&w->cfg, container, &exec);
	char **argv = strlist_argv(&exec);
	json_object *o = portfwd_spec_json(a->git.ports, dir, argv);
	free(argv);
	strlist_free(&exec);
	free(dir);
	return o;
}

void sandbox_pane_gone(struct wrx *w, struct wpane *wp)
{
	const struct backend *b = pane_backend(w, wp);
	if (b == NULL || b == &backend_host)
		return;
	struct backend_pane p = {
		.cfg = &w->cfg,
		.handle = wp->agent->handle,
		.n = wp->id,
		.session = w->session_id,
		.name = wp->runner->container,
	};
	struct strlist argv = {0};
	b->stop_argv(&p, &argv);
	run_detached(w->loop, &argv);
	strlist_free(&argv);
}
