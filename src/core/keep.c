/*
 * keep.c - the core's panes live in keepers (keeper/): starting a pane's
 * keeper, taking over the keepers a project already has, ending them.
 *
 * A pane of the session is a mirror; its keeper owns the pty and the
 * program. The core ending (a quit, a detach, a crash, a lost terminal)
 * closes only connections: the keepers and their programs go on, and the
 * next dashboard takes them over, with their screens, history, tokens and
 * what the agents last reported. Only a user's close, remove or merge
 * (session_close_pane) ends a keeper.
 */
#include "../backends/backend.h"
#include "../git/private.h"
#include "../keeper/client.h"
#include "../keeper/keeper.h"
#include "../keeper/proto.h"
#include "../net/spec.h"
#include "../rpc/proto.h"
#include "../rpc/server.h"
#include "../util/log.h"
#include "../util/util.h"
#include "wrx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_object *strv_json(char *const *v)
{
	json_object *a = json_object_new_array();
	for (; v && *v; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

static void keeper_went(struct keeper_conn *c, const char *why, void *data)
{
	struct wpane *wp = data;
	(void)c;
	log_msg("pane %d (%s): its keeper went%s%s", wp->id, wp->agent->handle, why ? ": " : "",
		why ? why : "");
}

#define EGRESS_LINES 200
#define EGRESS_SAID_MS 1000 /* refusals said on the status line at most once a second */

/*
 * A connection through one of the agent's proxies ended (its own under
 * policy: deny, or a host command's): logged, and counted on the agent; a
 * refusal is also said on the status line, against the agent, so that a
 * blocked dependency download is no mystery. A flood of refusals is
 * counted, not logged and said one by one: past the first in a second,
 * only the tally, once that second is over.
 */
void wrx_egress(struct wrx *w, struct agent *a, json_object *o)
{
	json_object *v;
#define FIELD(k) (json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "")
	int status = json_object_object_get_ex(o, "status", &v) ? json_object_get_int(v) : 0;
	int64_t up = json_object_object_get_ex(o, "up", &v) ? json_object_get_int64(v) : 0;
	int64_t down = json_object_object_get_ex(o, "down", &v) ? json_object_get_int64(v) : 0;
	const char *host = *FIELD("host") ? FIELD("host") : "(no request)";
	char *line = status == 200 ? xasprintf("allowed  %s:%s via %s, %lld bytes up, %lld down",
					       host, FIELD("port"), FIELD("addr"), (long long)up,
					       (long long)down)
				   : xasprintf("refused  %s:%s (%d): %s", host, FIELD("port"),
					       status, FIELD("why"));
#undef FIELD
	uint64_t now = now_ms();
	if (status == 200) {
		a->egress_ok++;
		log_msg("%s: proxy: %s", a->handle, line);
	} else if (status) {
		a->egress_refused++;
		if (now - a->egress_said >= EGRESS_SAID_MS) {
			if (a->egress_quiet)
				log_msg("%s: proxy: %lu more refused in the last second", a->handle,
					a->egress_quiet);
			log_msg("%s: proxy: %s", a->handle, line);
			wrx_message(w, true, "%s: the proxy %s", a->handle, line);
			if (a->egress_quiet == 0)
				wrx_relayout(w);
			a->egress_said = now;
			a->egress_quiet = 0;
		} else {
			a->egress_quiet++;
		}
	}
	if (a->negress >= EGRESS_LINES) {
		free(a->egress[0]);
		memmove(a->egress, a->egress + 1, (a->negress - 1) * sizeof *a->egress);
		a->negress--;
	} else {
		a->egress = xrealloc(a->egress, (a->negress + 1) * sizeof *a->egress);
	}
	a->egress[a->negress++] = line;
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

/* What the agent last reported, for its keeper to give the next dashboard. */
void keep_meta(struct wrx *w, struct agent *a)
{
	json_object *m = json_object_new_object();
	json_object_object_add(m, "status", json_object_new_string(status_word(a->status)));
	if (a->title)
		json_object_object_add(m, "title", json_object_new_string(a->title));
	if (a->note)
		json_object_object_add(m, "note", json_object_new_string(a->note));
	if (a->failure)
		json_object_object_add(m, "failure", json_object_new_string(a->failure));
	if (a->session_id)
		json_object_object_add(m, "session", json_object_new_string(a->session_id));
	const char *s = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
	for (int i = 0; i < session_pane_count(w->s); i++) {
		struct wpane *wp = session_pane(w->s, i);
		if (wp->agent == a && wp->keeper)
			keeper_conn_send(wp->keeper, KM_META, s, strlen(s));
	}
	json_object_put(m);
}

void keep_meta_apply(struct wrx *w, struct agent *a, const char *meta)
{
	json_object *m = meta ? json_tokener_parse(meta) : NULL, *v;
	if (m == NULL)
		return;
	enum wrx_status st = WRX_STATUS_NONE;
	if (json_object_object_get_ex(m, "status", &v) &&
	    status_parse_reached(json_object_get_string(v), &st) == 0)
		session_set_status(w->s, a, st);
	if (st == WRX_STATUS_FAILED && json_object_object_get_ex(m, "failure", &v)) {
		free(a->failure);
		a->failure = xstrdup(json_object_get_string(v));
	}
	if (json_object_object_get_ex(m, "title", &v))
		session_set_title(w->s, a, json_object_get_string(v));
	if (json_object_object_get_ex(m, "note", &v) && a->note == NULL)
		a->note = xstrdup(json_object_get_string(v));
	if (json_object_object_get_ex(m, "session", &v) &&
	    rpc_session_wellformed(json_object_get_string(v)))
		keep_session(w, a, json_object_get_string(v));
	json_object_put(m);
}

/*
 * An agent whose agent pane a keeper runs is marked in its host-only
 * directory (which, unlike the runtime directory, outlives a reboot):
 * a marked agent with no keeper at the next start lost it to a reboot or
 * a crash, and is opened again with its resume flag. Closing the pane
 * (close, remove, merge, quit) takes the mark away. The mark holds the
 * session id the agent's hooks last reported, if any, so that the agent
 * resumes that session (claude --resume ID) rather than the latest.
 */
static char *mark_path(struct wrx *w, const struct agent *a, bool create)
{
	char *dir = private_agent_dir(w->root, a->handle, create);
	char *f = dir ? xasprintf("%s/kept", dir) : NULL;
	free(dir);
	return f;
}

void keep_mark(struct wrx *w, const struct agent *a, bool on)
{
	if (!a->worktree)
		return;
	char *f = mark_path(w, a, on);
	if (f && on) {
		int fd = open(f, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
	} else if (f) {
		unlink(f);
	}
	free(f);
}

bool keep_marked(struct wrx *w, const struct agent *a)
{
	char *f = mark_path(w, a, false);
	bool marked = f && access(f, F_OK) == 0;
	free(f);
	return marked;
}

/* The id in a's mark, or NULL. Caller frees. */
static char *mark_session(struct wrx *w, const struct agent *a)
{
	char *f = mark_path(w, a, false);
	int fd = f ? open(f, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	free(f);
	if (fd < 0)
		return NULL;
	char id[RPC_SESSION_MAX + 2];
	ssize_t n = read(fd, id, sizeof id - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	id[n] = '\0';
	id[strcspn(id, "\n")] = '\0';
	return rpc_session_wellformed(id) ? xstrdup(id) : NULL;
}

void keep_session(struct wrx *w, struct agent *a, const char *id)
{
	if (a->session_id && strcmp(a->session_id, id) == 0)
		return;
	free(a->session_id);
	a->session_id = xstrdup(id);
	if (!a->worktree || w->keeper_dir == NULL)
		return;
	/* Into the mark, where there is one: a pane not yet in a keeper has none. */
	char *f = mark_path(w, a, false);
	int fd = f ? open(f, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC) : -1;
	free(f);
	if (fd < 0)
		return;
	char *line = xasprintf("%s\n", id);
	int rc = fd_write_all(fd, line, strlen(line));
	if (rc < 0)
		log_msg("%s: its session id not kept: %s", a->handle, strerror(-rc));
	free(line);
	close(fd);
}

void keep_resume(struct wrx *w)
{
	if (w->keeper_dir == NULL || w->helper)
		return;
	for (int i = 0; i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		/* An agent on a server: its host says, once attached (remote.c). */
		if (!a->worktree || a->remote || a->missing || session_agent_panes(w->s, a) > 0 ||
		    !keep_marked(w, a))
			continue;
		char *cause = NULL;
		free(a->session_id);
		a->session_id = mark_session(w, a);
		log_msg("%s: its keepers are gone (a reboot?): opened again, resuming %s",
			a->handle, a->session_id ? a->session_id : "its latest session");
		if (agents_open(w, a, false, true, &cause) < 0) {
			wrx_message(w, true, "%s: %s", a->handle, cause);
			free(cause);
		}
	}
}

/* Its network proxy (policy: deny), which the agent pane's keeper runs (net/spec.h). */
static json_object *proxy_spec(struct wrx *w, struct agent *a)
{
	json_object *o = json_object_new_object();
	char *sock = xasprintf("%s/" BACKEND_PROXY_SOCKET, a->rpc_dir);
	json_object_object_add(o, "socket", json_object_new_string(sock));
	free(sock);
	json_object_object_add(o, "token", json_object_new_string(a->proxy_token));
	/* A sandbox no socket reaches: TCP too, its port in a file it can read. */
	struct backend_reach reach;
	const struct backend *b = backend_find(w->cfg.sandbox.backend);
	char *cause = NULL;
	if (b && b->reach && b->reach(&w->cfg, &reach, &cause) == 0 && reach.tcp) {
		json_object_object_add(o, "tcp_host", json_object_new_string(reach.bind));
		char *pf = xasprintf("%s/" BACKEND_PROXY_PORT_FILE, a->rpc_dir);
		json_object_object_add(o, "port_file", json_object_new_string(pf));
		free(pf);
	}
	free(cause);
	json_object_object_add(o, "max_connections",
			       json_object_new_int((int)w->cfg.sandbox.network.max_connections));
	json_object_object_add(o, "allowed_domains",
			       proxy_domains_json(&w->cfg.sandbox.network.allowed));
	return o;
}

/*
 * allowed_domains as they are now, to the keeper of wp (a sandboxed agent's
 * pane, where its proxy runs), or to every such keeper (wp NULL). Not only
 * to agents this dashboard started: one it took over from an earlier
 * dashboard (whose proxy token it never had) was left with the old list,
 * while allow-domain said the proxies took the name.
 */
static void policy_to(struct wrx *w, struct wpane *only)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "allowed_domains",
			       proxy_domains_json(&w->cfg.sandbox.network.allowed));
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	for (int i = 0; i < session_pane_count(w->s); i++) {
		struct wpane *wp = session_pane(w->s, i);
		if ((only == NULL || wp == only) && wp->keeper && wp->sandboxed &&
		    session_agent_pane(w->s, wp->agent) == wp)
			keeper_conn_send(wp->keeper, KM_POLICY, s, strlen(s));
	}
	json_object_put(o);
}

void keep_proxy_policy(struct wrx *w)
{
	policy_to(w, NULL);
}

int keep_pane_start(struct wrx *w, struct wpane *wp, const struct pty_spawn *sp, char **cause)
{
	if (w->keeper_dir == NULL) {
		*cause = xstrdup("no directory for keepers");
		return -ENOENT;
	}
	if (wp->agent->remote)
		return remote_pane_start(w, wp, sp, cause); /* marked once it runs there */
	char *path = keeper_path(w->keeper_dir, wp->id, cause);
	if (path == NULL)
		return -ENAMETOOLONG;
	json_object *spec = json_object_new_object();
	json_object_object_add(spec, "argv", strv_json(sp->argv));
	if (sp->cwd)
		json_object_object_add(spec, "cwd", json_object_new_string(sp->cwd));
	json_object_object_add(spec, "env", strv_json(sp->env));
	json_object_object_add(spec, "rows", json_object_new_int(pane_rows(wp->term)));
	json_object_object_add(spec, "cols", json_object_new_int(pane_cols(wp->term)));
	json_object_object_add(spec, "scrollback", json_object_new_int((int)w->cfg.scrollback));
	json_object_object_add(spec, "socket", json_object_new_string(path));
	/* Its key: only a client that reads it from our state directory writes. */
	char key[RPC_TOKEN_LEN + 1];
	if (keeper_key_make(path, key) == 0)
		json_object_object_add(spec, "key", json_object_new_string(key));
	json_object_object_add(spec, "pane", json_object_new_int(wp->id));
	json_object_object_add(spec, "handle", json_object_new_string(wp->agent->handle));
	json_object_object_add(spec, "label", json_object_new_string(wp->label));
	json_object_object_add(spec, "sandboxed", json_object_new_boolean(wp->sandboxed));
	if (wp->container)
		json_object_object_add(spec, "container", json_object_new_string(wp->container));
	/* Its agent's socket, which the keeper serves while no dashboard does. */
	if (wp->sandboxed && wp->agent->rpc_dir && session_agent_pane(w->s, wp->agent) == wp) {
		char *rs = xasprintf("%s/rpc.sock", wp->agent->rpc_dir);
		json_object_object_add(spec, "rpc_socket", json_object_new_string(rs));
		free(rs);
		if (wp->agent->proxy_token)
			json_object_object_add(spec, "proxy", proxy_spec(w, wp->agent));
	}
	json_object_object_add(spec, "agent_pane",
			       json_object_new_boolean(session_agent_pane(w->s, wp->agent) == wp));
	int rc = keeper_start(w->self_exe, spec, cause);
	json_object_put(spec);
	struct keeper_info info;
	int fd =
		rc < 0 ? rc
		       : keeper_open(path, w->helper ? "helper" : "writer", wp->term, &info, cause);
	free(path);
	if (fd < 0)
		return fd;
	wp->keeper = keeper_conn_new(w->loop, fd, wp->term, keeper_went, wp);
	keeper_conn_on_egress(wp->keeper, on_egress);
	keeper_conn_set_pid(wp->keeper, info.keeper_pid);
	keeper_info_free(&info);
	if (session_agent_pane(w->s, wp->agent) == wp)
		keep_mark(w, wp->agent, true);
	return 0;
}

void keep_pane_closing(struct wrx *w, struct wpane *wp)
{
	if (wp->keeper)
		keeper_conn_kill(wp->keeper);
	if (wp->agent->remote)
		remote_pane_closing(w, wp);
	if (session_agent_pane(w->s, wp->agent) == wp)
		keep_mark(w, wp->agent, false);
}

/* Take over the keeper e: 1 adopted, 0 not (its agent is gone: ended), -1 error. */
static int take_over(struct wrx *w, const struct keeper_entry *e)
{
	const struct keeper_info *info = &e->info;
	struct agent *a = info->handle ? session_find_agent(w->s, info->handle) : NULL;
	if (a == NULL || session_find_pane(w->s, info->pane)) {
		/* Its worktree went while no dashboard ran. A query may not end it; its pid may. */
		log_msg("keeper of pane %d (%s): no such agent any more: ended", info->pane,
			info->handle ? info->handle : "?");
		if (info->keeper_pid > 0)
			kill(info->keeper_pid, SIGTERM);
		return 0;
	}
	char *cause = NULL;
	struct pane *m = pane_mirror_new(24, 80, w->cfg.scrollback, NULL, NULL);
	struct keeper_info live;
	int fd = keeper_open(e->path, w->helper ? "helper" : "writer", m, &live, &cause);
	if (fd < 0) {
		log_msg("%s", cause);
		free(cause);
		pane_free(m);
		return -1;
	}
	struct wpane *wp = session_adopt_pane(w->s, a, m, live.pane, live.label, live.sandboxed);
	wp->keeper = keeper_conn_new(w->loop, fd, m, keeper_went, wp);
	keeper_conn_on_egress(wp->keeper, on_egress);
	keeper_conn_set_pid(wp->keeper, live.keeper_pid);
	if (live.token && w->rpc)
		rpc_server_token_adopt(w->rpc, wp->id, a->handle, live.token);
	if (live.container) {
		wp->container = xstrdup(live.container);
		strlist_add(&w->kept_containers, live.container);
	}
	/* Its container mounts the agent's socket: listened on again, as when it started. */
	if (live.sandboxed && !w->helper && sandbox_agent_socket(w, a, &cause) < 0) {
		wrx_message(w, true, "%s: %s", a->handle, cause);
		free(cause);
	}
	keep_meta_apply(w, a, live.meta);
	keeper_info_free(&live);
	/* allow-domain may have run with no dashboard: the list as the files say now. */
	if (wp->sandboxed && !w->helper && strcmp(w->cfg.sandbox.network.policy, "deny") == 0)
		policy_to(w, wp);
	return 1;
}

int keep_attach(struct wrx *w)
{
	if (w->keeper_dir == NULL)
		return 0;
	struct keeper_entry *e;
	size_t n = keeper_list(w->keeper_dir, &e);
	int adopted = 0;
	for (size_t i = 0; i < n; i++)
		adopted += take_over(w, &e[i]) > 0;
	keeper_list_free(e, n);
	if (adopted)
		wrx_relayout(w);
	return adopted;
}

int keep_next_id(struct wrx *w)
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

static bool flushed(struct wrx *w)
{
	for (int i = 0; i < session_pane_count(w->s); i++) {
		struct wpane *wp = session_pane(w->s, i);
		if (wp->keeper && keeper_conn_pending(wp->keeper))
			return false;
	}
	return true;
}

void keep_flush(struct wrx *w, int timeout_ms)
{
	wrx_run_until(w, flushed, timeout_ms);
}
