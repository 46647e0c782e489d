/*
 * sandbox.c - the dashboard's side of sandboxed panes: which panes run in
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
#include "../core/agentcmd.h"
#include "../rpc/control.h"
#include "../rpc/server.h"
#include "../util/log.h"
#include "ui.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool sandbox_wanted(struct ui *ui, const struct agent *a)
{
	if (!a->worktree)
		return false; /* the project's own shell stays on the host */
	return a->sandbox == 1 || (a->sandbox == -1 && ui->cfg.sandbox.enabled);
}

bool sandbox_pane_wanted(struct ui *ui, const struct agent *a, bool agent_pane)
{
	return sandbox_wanted(ui, a) &&
	       (agent_pane || strcmp(ui->cfg.sandbox.target ? ui->cfg.sandbox.target : "agent",
				     "all") == 0);
}

void sandbox_start(struct ui *ui)
{
	ui->session_id = xasprintf("%ld-%llu", (long)getpid(), (unsigned long long)now_ms());
	ui->guest_bin = backend_guest_path();
	/* Containers a dashboard of this project left when it died. */
	bool any = ui->cfg.sandbox.enabled;
	for (int i = 0; i < session_agent_count(ui->s); i++)
		any = any || session_agent(ui->s, i)->sandbox == 1;
	if (any && ui->in_repo) {
		struct strlist argv = {0};
		container_cleanup_argv(&ui->cfg, ui->root, ui->session_id, &argv);
		ui_run_quiet(ui, &argv);
		strlist_free(&argv);
	}
}

void sandbox_stop(struct ui *ui)
{
	free(ui->session_id);
	free(ui->guest_bin);
	free(ui->gitdir);
	free(ui->git_name);
	free(ui->git_email);
	ui->session_id = ui->guest_bin = ui->gitdir = ui->git_name = ui->git_email = NULL;
}

/* The agent's own socket, in its own 0700 directory: what its containers mount. */
static int agent_socket(struct ui *ui, struct agent *a, char **cause)
{
	if (a->rpc_dir)
		return 0;
	char *ctl = xstrdup(ui->sock_path);
	char *slash = strrchr(ctl, '/');
	*slash = '\0';
	char *dir = xasprintf("%s/a-%08x", ctl, str_hash(str_hash(WRX_HASH_INIT, ui->root), a->handle));
	free(ctl);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		*cause = xasprintf("%s: %s", dir, strerror(errno));
		free(dir);
		return -errno;
	}
	char *sock = xasprintf("%s/rpc.sock", dir);
	int rc = rpc_server_listen_unix(ui->rpc, sock, false, a->handle, cause);
	free(sock);
	if (rc < 0) {
		free(dir);
		return rc;
	}
	a->rpc_dir = dir;
	return 0;
}

/*
 * Apple Container runs each container in its own VM: no unix socket
 * crosses. The bridge listens on TCP, on the host's address on the VMs'
 * network only (sandbox.rpc_host), never on all addresses; tokens guard it.
 */
static int tcp_listener(struct ui *ui, char **cause)
{
	if (ui->rpc_port)
		return 0;
	const char *host = ui->cfg.sandbox.rpc_host ? ui->cfg.sandbox.rpc_host : "192.168.64.1";
	if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0) {
		*cause = xasprintf("sandbox.rpc_host %s would listen on every address; name the "
				   "host's address on the sandbox's network",
				   host);
		return -EINVAL;
	}
	int port = 0;
	int rc = rpc_server_listen_tcp(ui->rpc, host, 0, &port, cause);
	if (rc < 0)
		return rc;
	ui->rpc_port = port;
	log_msg("rpc: listening on %s:%d for sandboxes that cannot share a socket", host, port);
	return 0;
}

/* The backend a pane runs in (NULL: configured but not built in). */
static const struct backend *pane_backend(struct ui *ui, const struct wpane *wp)
{
	return backend_find(wp->sandboxed ? ui->cfg.sandbox.backend : "host");
}

int sandbox_pane_argv(struct ui *ui, struct wpane *wp, char *const *argv, char *const *env,
		      char ***out, char **cause)
{
	*out = NULL;
	struct agent *a = wp->agent;
	const struct backend *b = pane_backend(ui, wp);
	if (b == &backend_host)
		return 0; /* its argv as it is: nothing to build */
	if (b == NULL || ui->gitdir == NULL) {
		*cause = xasprintf("sandbox.backend '%s' is not available in this build",
				   ui->cfg.sandbox.backend);
		return -ENOTSUP;
	}
	int rc = agent_socket(ui, a, cause);
	if (rc < 0)
		return rc;
	struct backend_git git;
	if (!a->git_ready || backend_git_ready(ui->root, a->handle, &git) < 0) {
		rc = backend_git_prepare(ui->root, a->handle, a->branch, &git, cause);
		if (rc < 0)
			return rc;
	}
	a->git_ready = false; /* once: later panes bring it up to date */
	struct backend_pane p = {
		.cfg = &ui->cfg,
		.project_root = ui->root,
		.git_dir = ui->gitdir,
		.worktree = a->path,
		.handle = a->handle,
		.n = wp->id,
		.agent = a->agent ? a->agent : agentcmd_default(&ui->cfg),
		.agent_pane = session_agent_pane(ui->s, a) == NULL,
		.argv = argv,
		.env = env,
		.rpc_dir = a->rpc_dir,
		.rpc_port = ui->rpc_port,
		.guest_bin = ui->guest_bin,
		.session = ui->session_id,
		.git_name = ui->git_name,
		.git_email = ui->git_email,
		.tty = true,
	};
	backend_pane_git(&p, &git);
	struct strlist run = {0};
	rc = b->check(&p, cause);
	/* A runtime that cannot share a socket gets the TCP listener, once checked. */
	const char *rt = container_runtime(&ui->cfg);
	if (rc == 0 && rt && strcmp(rt, "container") == 0 && (rc = tcp_listener(ui, cause)) == 0)
		p.rpc_port = ui->rpc_port;
	if (rc == 0)
		rc = b->argv(&p, &run, cause);
	backend_git_free(&git);
	if (rc < 0) {
		strlist_free(&run);
		return rc;
	}
	char **v = xcalloc(run.n + 1, sizeof *v);
	memcpy(v, run.v, run.n * sizeof *v);
	free(run.v);
	*out = v;
	return 0;
}

void sandbox_pane_gone(struct ui *ui, struct wpane *wp)
{
	const struct backend *b = pane_backend(ui, wp);
	if (b == NULL || b == &backend_host)
		return;
	struct backend_pane p = {.cfg = &ui->cfg, .handle = wp->agent->handle, .n = wp->id};
	struct strlist argv = {0};
	b->stop_argv(&p, &argv);
	ui_run_quiet(ui, &argv);
	strlist_free(&argv);
}
