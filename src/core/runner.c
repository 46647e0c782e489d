/*
 * runner.c - where a pane's program runs, chosen once for each pane, and the
 * one way every pane is started, adopted and ended:
 *
 *   pty     on a pty of this process (a core with no keepers: tests);
 *   here    in a keeper on this machine (keeper/), started on the loop;
 *   there   in a keeper on the agent's server, through its host's link
 *           (remote.c), which brings the link up and forwards the socket.
 *
 * A kept pane is a mirror: its keeper owns the pty and the program. Both
 * keeper rows build the keeper's spec here, once, and both connect without
 * waiting and adopt the keeper's hello here, once (runner_hello), so that no
 * pane's start blocks the loop: a new pane takes what is typed into it
 * meanwhile and gives it to its keeper when it answers (pane.c).
 *
 * The core ending (a quit, a detach, a crash, a lost terminal) closes only
 * connections: the keepers and their programs go on, and the next
 * dashboard takes them over, with their screens, history, tokens and what
 * the agents last reported. Only a user's close, remove or merge
 * (session_close_pane) ends a keeper.
 */
#include "../keeper/client.h"
#include "../keeper/keeper.h"
#include "../keeper/proto.h"
#include "../keeper/spawner.h"
#include "../rpc/proto.h"
#include "../rpc/server.h"
#include "../util/json.h"
#include "../util/log.h"
#include "../util/util.h"
#include "actions.h"
#include "runner.h"
#include "wrx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum runner_kind { RUN_PTY, RUN_HERE, RUN_THERE };

static enum runner_kind kind_of(const struct wrx *w, const struct wpane *wp)
{
	return w->keeper_dir == NULL ? RUN_PTY : wp->agent->remote.host ? RUN_THERE : RUN_HERE;
}

int runner_open(struct wrx *w, char **cause)
{
	w->keeper_dir = keeper_dir(w->root, cause);
	return w->keeper_dir ? 0 : -EACCES;
}

void runner_close(struct wrx *w)
{
	spawner_stop();
	free(w->keeper_dir);
	w->keeper_dir = NULL;
}

/* Panes run in keepers (not on ptys of this process). */
static bool runner_kept(const struct wrx *w)
{
	return w->keeper_dir != NULL;
}

const char *runner_pane_link(const struct wpane *wp)
{
	return wp->runner->link;
}

/* ---- the keeper's spec, for either keeper row ---- */

static bool env_for_there(const char *kv)
{
	/* The server has its own PATH; its bridge's socket is its own. */
	return strncmp(kv, "PATH=", 5) != 0 && strncmp(kv, "WORKREX_RPC_SOCKET=", 19) != 0;
}

/*
 * What a keeper runs and tells its clients (keeper.h): the same here and
 * there, but for the environment (there: the server's PATH, its own bridge)
 * and what only a keeper here has (its socket and key, a sandbox, a proxy).
 */
static json_object *pane_spec(struct wrx *w, struct wpane *wp, const struct pty_spawn *sp,
			      const char *socket)
{
	struct agent *a = wp->agent;
	bool there = kind_of(w, wp) == RUN_THERE, agent_pane = session_agent_pane(w->s, a) == wp;
	json_object *spec = json_object_new_object(), *env = json_object_new_array();
	for (char *const *p = sp->env; p && *p; p++)
		if (!there || env_for_there(*p))
			json_object_array_add(env, json_object_new_string(*p));
	if (there) {
		/* Its add, merge, close and status go to this dashboard, as a sandbox's do. */
		json_object_array_add(env, json_object_new_string("WORKREX_SANDBOX=1"));
	}
	json_object_object_add(spec, "argv", json_of_strv(sp->argv));
	json_object_object_add(spec, "env", env);
	const char *cwd = there ? a->path : sp->cwd;
	if (cwd)
		json_object_object_add(spec, "cwd", json_object_new_string(cwd));
	json_object_object_add(spec, "rows", json_object_new_int(pane_rows(wp->term)));
	json_object_object_add(spec, "cols", json_object_new_int(pane_cols(wp->term)));
	json_object_object_add(spec, "scrollback", json_object_new_int((int)w->cfg.scrollback));
	json_object_object_add(spec, "pane", json_object_new_int(wp->id));
	json_object_object_add(spec, "handle", json_object_new_string(a->handle));
	json_object_object_add(spec, "label", json_object_new_string(wp->label));
	json_object_object_add(spec, "agent_pane", json_object_new_boolean(agent_pane));
	if (there) {
		json_object *box = sandbox_there_spec(w, a, agent_pane);
		if (box)
			json_object_object_add(spec, "sandbox", box);
		return spec;
	}
	json_object_object_add(spec, "socket", json_object_new_string(socket));
	/* Its key, which it makes: only a client that reads it from our state directory writes. */
	json_object_object_add(spec, "make_key", json_object_new_boolean(1));
	/* The mark its agent's session id goes into, reported with no dashboard. */
	char *mark = agent_pane && a->git.worktree ? kept_path(w, a, false) : NULL;
	if (mark)
		json_object_object_add(spec, "mark", json_object_new_string(mark));
	free(mark);
	json_object_object_add(spec, "sandboxed", json_object_new_boolean(wp->sandboxed));
	if (wp->runner->container)
		json_object_object_add(spec, "container",
				       json_object_new_string(wp->runner->container));
	/*
	 * The agent's socket, which the keeper serves while no dashboard does:
	 * a sandbox's own (its container mounts it; the dashboard serves it
	 * while there is one), or for a pane here one of the keeper's beside
	 * its socket, which the pane's `workrex set-status` tries when the
	 * dashboard does not answer (WORKREX_RPC_KEEPER, as on a server).
	 */
	char *rs = !agent_pane      ? NULL
		   : !wp->sandboxed ? keeper_beside(socket, "rpc")
		   : a->box.rpc_dir ? xasprintf("%s/rpc.sock", a->box.rpc_dir)
				    : NULL;
	if (rs) {
		json_object_object_add(spec, "rpc_socket", json_object_new_string(rs));
		if (!wp->sandboxed) {
			char *kv = xasprintf("WORKREX_RPC_KEEPER=%s", rs);
			json_object_array_add(env, json_object_new_string(kv));
			free(kv);
		}
		free(rs);
	}
	if (wp->sandboxed && agent_pane && a->box.rpc_dir && a->box.proxy_token)
		json_object_object_add(spec, "proxy", keep_proxy_spec(w, a));
	if (wp->sandboxed && agent_pane && a->git.ports && wp->runner->container)
		json_object_object_add(spec, "ports",
				       sandbox_ports_spec(w, a, wp->runner->container));
	return spec;
}

/* ---- the keeper's hello: the one adoption ---- */

static void keeper_went(struct keeper_conn *c, const char *why, void *data)
{
	struct wpane *wp = data;
	(void)c;
	log_msg("pane %d (%s): its keeper went%s%s", wp->id, wp->agent->handle, why ? ": " : "",
		why ? why : "");
}

static void on_egress(struct keeper_conn *c, const char *json, size_t len, void *data)
{
	struct wpane *wp = data;
	(void)c;
	char *s = xstrndup(json, len);
	json_object *o = json_tokener_parse(s);
	free(s);
	if (o == NULL)
		return;
	wrx_egress(session_owner(wp->session), wp->agent, o);
	json_object_put(o);
}

/*
 * wp's keeper said who it is: a new pane's, or one an earlier dashboard
 * left (here or there). What it holds becomes the pane's: its token (its
 * agent speaks through this dashboard's bridge), label, container, what
 * the agent reported; a sandbox's socket listened on again and its proxy
 * told the allowed domains as the files say now (allow-domain may have run
 * with no dashboard). false: it is not the pane we asked for.
 */
static bool adopt(struct wrx *w, struct wpane *wp, const struct keeper_info *info)
{
	struct agent *a = wp->agent;
	if (info->pane != wp->id || info->handle == NULL || strcmp(info->handle, a->handle) != 0)
		return false;
	keeper_conn_set_pid(wp->runner->keeper, info->keeper_pid);
	if (info->token && w->rpc)
		rpc_server_token_adopt(w->rpc, wp->id, a->handle, info->token);
	if (info->label && strcmp(info->label, wp->label) != 0) {
		free(wp->label);
		wp->label = xstrdup(info->label);
	}
	if (info->container && wp->runner->container == NULL) {
		wp->runner->container = xstrdup(info->container);
		strlist_add(&w->kept_containers, info->container);
	}
	/* Its ports, which its keeper listens on (config ports): one it cannot, said. */
	if (info->ports_refused)
		wrx_message(w, true, "%s: not forwarded here: port %s", a->handle,
			    info->ports_refused);
	bool taken = wp->runner->taken_over;
	char *cause = NULL;
	if (taken && info->sandboxed && !w->helper && sandbox_agent_socket(w, a, &cause) < 0) {
		wrx_message(w, true, "%s: %s", a->handle, cause);
		free(cause);
	}
	if (info->agent_pane) {
		/* Its proxy's count goes on where the last dashboard's stopped. */
		if (taken && info->egress_refused >= 0) {
			a->box.egress_ok = (int)WRX_MIN(info->egress_ok, INT32_MAX);
			a->box.egress_refused = (int)WRX_MIN(info->egress_refused, INT32_MAX);
		}
		kept_meta_apply(w, a, info->meta);
		if (!taken) {
			kept_mark(w, a, true); /* an earlier dashboard's is marked already */
			keep_meta(w, a);       /* a new keeper: told what its agent is */
		}
	}
	if (taken && info->sandboxed && !w->helper && sandbox_network_denied(w))
		keep_policy_to(w, wp);
	return true;
}

void runner_hello(struct keeper_conn *c, const struct keeper_info *info, void *data)
{
	struct wpane *wp = data;
	struct wrx *w = session_owner(wp->session);
	bool there = kind_of(w, wp) == RUN_THERE;
	wp->runner->connecting = false;
	if (!adopt(w, wp, info)) {
		log_msg("pane %d (%s): the keeper that answered says it is pane %d of %s: dropped",
			wp->id, wp->agent->handle, info->pane, info->handle ? info->handle : "?");
		keeper_conn_release(c);
		wp->runner->keeper = NULL;
		if (there)
			remote_pane_wrong(w, wp);
		pane_mirror_lost(wp->term);
		wrx_relayout(w);
		return;
	}
	if (there)
		remote_pane_attached(w, wp);
	int rows, cols;
	pane_mirror_wanted(wp->term, &rows, &cols);
	uint16_t rc[2] = {(uint16_t)WRX_MIN(rows, 65535), (uint16_t)WRX_MIN(cols, 65535)};
	keeper_conn_send(c, KM_RESIZE, rc, sizeof rc);
	wrx_relayout(w);
}

/* wp's connection to its keeper on fd, on the loop. */
static void conn(struct wrx *w, struct wpane *wp, int fd, keeper_gone_fn *gone)
{
	wp->runner->keeper = keeper_conn_new(w->loop, fd, wp->term, gone ? gone : keeper_went, wp);
	keeper_conn_on_egress(wp->runner->keeper, on_egress);
}

int runner_connect(struct wrx *w, struct wpane *wp, const char *socket, keeper_gone_fn *gone,
		   char **cause)
{
	int fd = keeper_conn_open(socket, w->helper ? "helper" : "writer", cause);
	if (fd < 0)
		return fd;
	conn(w, wp, fd, gone);
	keeper_conn_on_hello(wp->runner->keeper, runner_hello);
	wp->runner->connecting = true;
	return 0;
}

/* ---- here: a keeper started on the loop ---- */

/* What a start's answer finds its pane by: never a pointer that may have gone. */
struct ticket {
	struct wrx *w;
	int pane;
	char *socket; /* owned */
};

static void started(void *arg, int rc, const char *why)
{
	struct ticket *t = arg;
	struct wrx *w = t->w;
	w->starting--;
	struct wpane *wp = w->quitting ? NULL : session_find_pane(w->s, t->pane);
	char *cause = NULL;
	if (wp == NULL) {
		/* Closed while it started: it ends now. The core quitting: the next one takes it. */
		if (rc == 0 && !w->quitting) {
			int fd = keeper_conn_open(t->socket, "helper", &cause);
			if (fd >= 0) {
				keeper_send(fd, KM_KILL, NULL, 0);
				close(fd);
			}
		}
	} else if (rc < 0 || runner_connect(w, wp, t->socket, NULL, &cause) < 0) {
		wrx_message(w, true, "%s: its pane did not start: %s", wp->agent->handle,
			    cause ? cause : why);
		pane_mirror_lost(wp->term);
		wrx_relayout(w);
	}
	free(cause);
	free(t->socket);
	free(t);
	actions_started(w); /* connected, or said why not: a reply waiting for it goes */
	if (w->hooks->started)
		w->hooks->started(w->ui);
}

static int here_start(struct wrx *w, struct wpane *wp, const struct pty_spawn *sp, char **cause)
{
	char *path = keeper_path(w->keeper_dir, wp->id, cause);
	if (path == NULL)
		return -ENAMETOOLONG;
	json_object *spec = pane_spec(w, wp, sp, path);
	struct ticket *t = xcalloc(1, sizeof *t);
	*t = (struct ticket){.w = w, .pane = wp->id, .socket = path};
	int rc = keeper_start_async(w->loop, w->self_exe, spec, started, t, cause);
	json_object_put(spec);
	if (rc < 0) {
		free(path);
		free(t);
		return rc;
	}
	w->starting++;
	w->keepers_started++;
	wp->runner->connecting = true;
	return 0;
}

/* ---- the rows ---- */

int runner_pane_start(struct wrx *w, struct wpane *wp, const struct pty_spawn *sp, char **cause)
{
	switch (kind_of(w, wp)) {
	case RUN_PTY:
		return pty_start(w->loop, wp->term, sp, cause);
	case RUN_HERE:
		return here_start(w, wp, sp, cause);
	case RUN_THERE: {
		json_object *spec = pane_spec(w, wp, sp, NULL);
		int rc = remote_pane_start(
			w, wp, json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PLAIN), cause);
		json_object_put(spec);
		return rc; /* marked once it runs there */
	}
	}
	return -EINVAL;
}

void runner_pane_closing(struct wrx *w, struct wpane *wp)
{
	enum runner_kind k = kind_of(w, wp);
	if (k == RUN_PTY)
		return; /* its program ends with its pty, its container in runner_pane_gone */
	if (wp->runner->keeper)
		keeper_conn_kill(wp->runner->keeper);
	if (k == RUN_THERE)
		remote_pane_closing(w, wp);
	if (session_agent_pane(w->s, wp->agent) == wp)
		kept_mark(w, wp->agent, false);
	sandbox_pane_gone(w, wp);
}

void runner_pane_gone(struct wrx *w, struct wpane *wp)
{
	/* A pty's program and container end with the pane; a keeper's go on. */
	if (kind_of(w, wp) == RUN_PTY)
		sandbox_pane_gone(w, wp);
}

/* ---- taking over the keepers here an earlier dashboard left ---- */

/* Take over the keeper e, open as a writer: 1 adopted, 0 not (its agent is gone: ended). */
static int take_over(struct wrx *w, struct keeper_entry *e)
{
	const struct keeper_info *info = &e->info;
	struct agent *a = info->handle ? session_find_agent(w->s, info->handle) : NULL;
	if (a == NULL || session_find_pane(w->s, info->pane)) {
		/* Its worktree went while no dashboard ran. */
		log_msg("keeper of pane %d (%s): no such agent any more: ended", info->pane,
			info->handle ? info->handle : "?");
		keeper_send(e->fd, KM_KILL, NULL, 0);
		return 0;
	}
	struct wpane *wp =
		session_adopt_pane(w->s, a, e->mirror, info->pane, info->label, info->sandboxed);
	conn(w, wp, e->fd, NULL);
	e->mirror = NULL;
	e->fd = -1;
	wp->runner->taken_over = true;
	adopt(w, wp, info);
	return 1;
}

/* Every keeper is opened at once (keeper_open_all): a start waits about one answer. */
int runner_attach(struct wrx *w)
{
	if (!runner_kept(w))
		return 0;
	/* A dashboard's processes are started off its loop, by one started while it is small. */
	if (!w->helper && spawner_start(w->loop, w->self_exe) < 0)
		log_msg("spawner: it did not start; the dashboard starts processes itself");
	struct keeper_entry *e;
	size_t n = keeper_open_all(w->keeper_dir, w->attach_only, w->helper ? "helper" : "writer",
				   w->cfg.scrollback, &e);
	int adopted = 0;
	for (size_t i = 0; i < n; i++)
		adopted += take_over(w, &e[i]);
	keeper_list_free(e, n);
	if (adopted)
		wrx_relayout(w);
	/* A command's core attaches a host only when its request needs one (cmd_core.c). */
	if (!w->helper)
		remote_attach(w);
	return adopted;
}

int runner_next_id(struct wrx *w)
{
	int next = 1;
	DIR *d = w->keeper_dir ? opendir(w->keeper_dir) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		next = WRX_MAX(next, atoi(e->d_name) + 1);
	if (d)
		closedir(d);
	return WRX_MAX(next, remote_next_id(w));
}

bool runner_settled(struct wrx *w)
{
	if (w->starting > 0 || !remote_settled(w))
		return false;
	for (int i = 0; w->s && i < session_pane_count(w->s); i++) {
		struct wpane *wp = session_pane(w->s, i);
		if (wp->runner->keeper && wp->runner->connecting)
			return false;
	}
	return true;
}

static bool flushed(struct wrx *w)
{
	for (int i = 0; i < session_pane_count(w->s); i++) {
		struct wpane *wp = session_pane(w->s, i);
		if (wp->runner->keeper && keeper_conn_pending(wp->runner->keeper))
			return false;
	}
	return true;
}

void runner_flush(struct wrx *w, int timeout_ms)
{
	wrx_run_until(w, flushed, timeout_ms);
}
