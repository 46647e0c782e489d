/*
 * remote.c - the core's agents on servers (remote.hosts): their panes'
 * keepers run there, and the core attaches to them through one ssh link
 * per host, without ever waiting on the network itself.
 *
 * A host is brought up by a child, `workrex __remote-up` (cmd_remote.c):
 * the ssh master, this build there, the host's keepers of this project
 * listed and each one's socket forwarded to one here, the RPC bridge's
 * socket there forwarded to ours. A new pane's keeper is started by
 * another child, `__remote-start`, with the pane's spec on its stdin.
 * Both report one JSON line; on the loop, a pane then connects to its
 * forwarded socket as it would to a keeper here, and adopts its hello as
 * runner.c does every pane's (runner_connect: the hello arrives a round trip
 * later).
 *
 * The link dropping shows as every connection of the host ending while
 * its programs still run. Such a pane keeps its screen, says so on its
 * border, and the host is brought up again, at once and then after 1, 2,
 * 4, ... 15 s; when it is up, each pane connects again and its keeper
 * sends the whole screen. A pane whose keeper is not listed any more has
 * ended there. Panes closed while the host was down are ended there once
 * it is back. The ids of the panes there are kept in the project's state
 * dir, so that no pane here takes one before its host is attached.
 */
#include "../git/private.h"
#include "../keeper/client.h"
#include "../keeper/proto.h"
#include "../remote/link.h"
#include "../rpc/control.h"
#include "../rpc/server.h"
#include "../util/beneath.h"
#include "../util/json.h"
#include "../util/log.h"
#include "../util/util.h"
#include "runner.h"
#include "run.h"
#include "children.h"
#include "wrx.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 15000
/* Waiting for nobody's pane: a host tried again this seldom. */
#define BACKOFF_IDLE_MS 60000
/* __remote-up's and __remote-start's status when the host cannot be reached. */
#define UNREACHABLE 3

struct rhost {
	struct wrx *w;
	char *name; /* owned */
	struct remote_link link;
	bool linked;         /* link_init worked: link's paths are good */
	bool busy, again;    /* an up runs; another is wanted after it */
	bool up;             /* the last up worked */
	bool said;           /* its being down is on the status line already */
	int backoff_ms;      /* the next wait after a failure */
	uv_timer_t retry;    /* retry.data = this */
	int starts;          /* __remote-start children running */
	struct strlist kill; /* ids of panes closed while it was down, to end there */
	char *why;           /* owned: why the last up failed */
	struct rhost *next;
};

/* What a child's done finds its way back by: never a pointer that may have gone. */
struct ticket {
	struct wrx *w;
	char *host; /* owned */
	int pane;   /* __remote-start's */
};

static struct rhost *host_find(struct wrx *w, const char *name)
{
	for (struct rhost *h = w->hosts; h; h = h->next)
		if (strcmp(h->name, name) == 0)
			return h;
	return NULL;
}

static void host_refresh(struct rhost *h);

static void on_retry(uv_timer_t *t)
{
	host_refresh(t->data);
}

static struct rhost *host_get(struct wrx *w, const char *name)
{
	struct rhost *h = host_find(w, name);
	if (h)
		return h;
	h = xcalloc(1, sizeof *h);
	h->w = w;
	h->name = xstrdup(name);
	h->backoff_ms = BACKOFF_MIN_MS;
	uv_timer_init(w->loop, &h->retry);
	h->retry.data = h;
	const struct remote_host *rh = NULL;
	for (size_t i = 0; i < w->cfg.nhosts && rh == NULL; i++)
		if (strcmp(w->cfg.hosts[i].name, name) == 0)
			rh = &w->cfg.hosts[i];
	char *cause = NULL;
	if (rh == NULL)
		h->why = xasprintf("no host '%s' in remote.hosts", name);
	else if (link_init(&h->link, rh, w->root, &cause) == 0)
		h->linked = true;
	else
		h->why = cause;
	h->next = w->hosts;
	w->hosts = h;
	return h;
}

static bool on_host(const struct wpane *wp, const struct rhost *h)
{
	return wp->agent->remote.host && strcmp(wp->agent->remote.host, h->name) == 0;
}

static void set_link(struct wpane *wp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_link(struct wpane *wp, const char *fmt, ...)
{
	free(wp->runner->link);
	wp->runner->link = NULL;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		wp->runner->link = xvasprintf(fmt, ap);
		va_end(ap);
	}
}

/* ---- the ids of the panes there (state dir: they outlive a reboot here) ---- */

static char *ids_dir(struct wrx *w, bool create)
{
	return private_project_dir(w->root, create);
}

/* "id host handle" lines. */
static void ids_read(struct wrx *w, struct strlist *out)
{
	char *dir = ids_dir(w, false), *text = NULL;
	if (dir && beneath_read(dir, "remote-panes", 1u << 20, &text) == 0)
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
			if (atoi(line) > 0)
				strlist_add(out, line);
	free(text);
	free(dir);
}

static void ids_write(struct wrx *w, const struct strlist *lines)
{
	char *dir = ids_dir(w, true);
	struct buf b = {0};
	for (size_t i = 0; i < lines->n; i++)
		buf_addf(&b, "%s\n", lines->v[i]);
	if (dir && beneath_write(dir, "remote-panes", b.data ? b.data : "", b.len, 0600) < 0)
		log_msg("remote: the ids of its panes not kept in %s", dir);
	buf_free(&b);
	free(dir);
}

/* Keep line (not id's) out, and add "id host handle" when host is not NULL. */
static void ids_change(struct wrx *w, int id, const char *host, const char *handle)
{
	struct strlist old = {0}, lines = {0};
	ids_read(w, &old);
	for (size_t i = 0; i < old.n; i++)
		if (atoi(old.v[i]) != id)
			strlist_add(&lines, old.v[i]);
	if (host) {
		char *line = xasprintf("%d %s %s", id, host, handle);
		strlist_add(&lines, line);
		free(line);
	}
	ids_write(w, &lines);
	strlist_free(&old);
	strlist_free(&lines);
}

int remote_next_id(struct wrx *w)
{
	struct strlist lines = {0};
	ids_read(w, &lines);
	int next = 1;
	for (size_t i = 0; i < lines.n; i++)
		next = WRX_MAX(next, atoi(lines.v[i]) + 1);
	strlist_free(&lines);
	return next;
}

/* ---- attaching a pane to its keeper there ---- */

static void pane_went(struct keeper_conn *c, const char *why, void *data);
/* The keeper that answered is another pane's. */
void remote_pane_wrong(struct wrx *w, struct wpane *wp)
{
	(void)w;
	set_link(wp, "%s: another pane's keeper answered", wp->agent->remote.host);
}

void remote_pane_attached(struct wrx *w, struct wpane *wp)
{
	(void)w;
	set_link(wp, NULL);
}

static void pane_connect(struct rhost *h, struct wpane *wp, const char *local)
{
	char *cause = NULL;
	if (runner_connect(h->w, wp, local, pane_went, &cause) < 0) {
		log_msg("remote %s: pane %d: %s", h->name, wp->id, cause);
		set_link(wp, "%s: cannot reach its keeper", h->name);
		free(cause);
	}
}

/* The connection ended: the program's end, or (while it runs) the link's. */
static void pane_went(struct keeper_conn *c, const char *why, void *data)
{
	struct wpane *wp = data;
	struct wrx *w = session_owner(wp->session);
	if (pane_exited(wp->term, NULL) || w->quitting)
		return;
	log_msg("pane %d (%s on %s): its connection ended%s%s", wp->id, wp->agent->handle,
		wp->agent->remote.host, why ? ": " : "", why ? why : "");
	keeper_conn_release(c);
	wp->runner->keeper = NULL;
	set_link(wp, "link to %s lost: reconnecting", wp->agent->remote.host);
	wrx_relayout(w);
	host_refresh(host_get(w, wp->agent->remote.host));
}

/* ---- starting a pane's keeper there ---- */

static struct ticket *ticket_new(struct rhost *h, int pane)
{
	struct ticket *t = xcalloc(1, sizeof *t);
	t->w = h->w;
	t->host = xstrdup(h->name);
	t->pane = pane;
	return t;
}

/* The child's JSON (its last line), or NULL. Caller puts. */
static json_object *answer_of(const char *last)
{
	json_object *o = last && *last == '{' ? json_tokener_parse(last) : NULL;
	if (o && !json_flag(o, "ok")) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

static void host_failed(struct rhost *h, const char *why);

static void start_done(void *arg, int status, const char *output, const char *last)
{
	struct ticket *t = arg;
	struct wrx *w = t->w;
	(void)output;
	struct rhost *h = w->quitting ? NULL : host_find(w, t->host);
	struct wpane *wp = h ? session_find_pane(w->s, t->pane) : NULL;
	json_object *o = status == 0 ? answer_of(last) : NULL;
	if (h)
		h->starts--;
	if (h && wp == NULL && status == 0) {
		/* Closed while it started: it is ended there with the next up. */
		char id[16];
		snprintf(id, sizeof id, "%d", t->pane);
		strlist_add(&h->kill, id);
		host_refresh(h);
	} else if (wp && o && json_str(o, "local")) {
		free(wp->runner->remote_spec);
		wp->runner->remote_spec = NULL;
		pane_connect(h, wp, json_str(o, "local"));
	} else if (wp && status == UNREACHABLE) {
		host_failed(h, wrx_outcome(last)); /* its spec waits for the host */
	} else if (wp) {
		free(wp->runner->remote_spec);
		wp->runner->remote_spec = NULL;
		ids_change(w, wp->id, NULL, NULL);
		set_link(wp, "did not start on %s", h->name);
		wrx_message(w, true, "%s: %s", wp->agent->handle, wrx_outcome(last));
		pane_mirror_lost(wp->term);
	}
	if (h && !w->quitting)
		wrx_relayout(w);
	json_object_put(o);
	free(t->host);
	free(t);
}

static void listen_remote(struct wrx *w);

static void start_child(struct rhost *h, struct wpane *wp)
{
	struct wrx *w = h->w;
	listen_remote(w);
	char *more[] = {h->name, "--rpc", w->remote_sock, NULL};
	if (w->remote_sock == NULL)
		more[1] = NULL;
	char **argv = child_argv(w, "remote-start", more);
	struct ticket *t = ticket_new(h, wp->id);
	struct run_opts o = {.argv = argv,
			     .cwd = w->root,
			     .input = wp->runner->remote_spec,
			     .done = start_done,
			     .arg = t};
	set_link(wp, "starting on %s", h->name);
	int rc = run_start(w->loop, &o);
	child_argv_free(argv);
	if (rc < 0) {
		set_link(wp, "cannot run workrex __remote-start");
		free(t->host);
		free(t);
		return;
	}
	h->starts++;
}

/* ---- the host's up ---- */

/* Its agents said to be out of reach, or back (the sidebar, list). */
static void host_reachable(struct rhost *h, bool yes)
{
	for (int i = 0; i < session_agent_count(h->w->s); i++) {
		struct agent *a = session_agent(h->w->s, i);
		if (a->remote.host && strcmp(a->remote.host, h->name) == 0)
			a->remote.unreachable = !yes;
	}
}

static void host_failed(struct rhost *h, const char *why)
{
	struct wrx *w = h->w;
	h->up = false;
	free(h->why);
	h->why = xstrdup(why && *why ? why : "it does not answer");
	bool waiting = false;
	for (int i = 0; i < session_pane_count(w->s); i++) {
		struct wpane *wp = session_pane(w->s, i);
		if (on_host(wp, h) && wp->runner->keeper == NULL && !pane_exited(wp->term, NULL)) {
			set_link(wp, "%s unreachable: reconnecting", h->name);
			waiting = true;
		}
	}
	if (!h->said)
		wrx_message(w, true, "%s: %s", h->name, h->why);
	h->said = true;
	host_reachable(h, false);
	log_msg("remote %s: %s (again in %d ms)", h->name, h->why, h->backoff_ms);
	/* The helper of a command does not wait for a host that is down. */
	if (!w->helper)
		uv_timer_start(&h->retry, on_retry,
			       waiting ? (uint64_t)h->backoff_ms : BACKOFF_IDLE_MS, 0);
	h->backoff_ms = WRX_MIN(h->backoff_ms * 2, BACKOFF_MAX_MS);
	wrx_relayout(w);
}

/* One keeper the host listed: its pane here connects (adopted first when new here). */
static void attach_one(struct rhost *h, json_object *k)
{
	struct wrx *w = h->w;
	int pane = json_int(k, "pane", 0);
	const char *handle = json_str(k, "handle") ? json_str(k, "handle") : "";
	const char *local = json_str(k, "local");
	size_t nd = strlen(h->link.dir);
	if (local && (strncmp(local, h->link.dir, nd) != 0 || local[nd] != '/'))
		local = NULL; /* ours are in the link's directory, nowhere else */
	struct agent *a = session_find_agent(w->s, handle);
	if (pane <= 0 || local == NULL || a == NULL || a->remote.host == NULL ||
	    strcmp(a->remote.host, h->name) != 0) {
		log_msg("remote %s: keeper of pane %d (%s): no such agent of %s here: left alone",
			h->name, pane, handle, h->name);
		return;
	}
	struct wpane *wp = session_find_pane(w->s, pane);
	if (wp && (wp->agent != a || wp->runner->keeper || wp->runner->remote_spec))
		return; /* attached, starting, or somebody else's id: nothing to do */
	if (wp == NULL) {
		struct pane *m = pane_mirror_new(24, 80, w->cfg.scrollback, NULL, NULL);
		wp = session_adopt_pane(w->s, a, m, pane, "…", false);
		wp->runner->taken_over = true;
	}
	set_link(wp, "attaching on %s", h->name);
	pane_connect(h, wp, local);
}

/* Agents there marked running whose keepers went (the server rebooted): opened again. */
static void resume_lost(struct rhost *h)
{
	struct wrx *w = h->w;
	if (w->helper)
		return;
	for (int i = 0; i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		if (a->remote.host && strcmp(a->remote.host, h->name) == 0 &&
		    session_agent_panes(w->s, a) == 0 && kept_marked(w, a)) {
			char *cause = NULL;
			log_msg("%s: its keepers on %s are gone: opened again", a->handle, h->name);
			if (agents_open(w, a, false, true, &cause) < 0) {
				wrx_message(w, true, "%s: %s", a->handle, cause);
				free(cause);
			}
		}
	}
}

static void up_done(void *arg, int status, const char *output, const char *last)
{
	struct ticket *t = arg;
	struct wrx *w = t->w;
	(void)output;
	struct rhost *h = w->quitting ? NULL : host_find(w, t->host);
	free(t->host);
	free(t);
	if (h == NULL)
		return;
	h->busy = false;
	json_object *o = status == 0 ? answer_of(last) : NULL, *ks;
	if (o == NULL) {
		host_failed(h, wrx_outcome(last));
	} else {
		if (h->said || !h->up)
			log_msg("remote %s: up", h->name);
		if (h->said)
			wrx_message(w, false, "%s is back", h->name);
		h->up = true;
		h->said = false;
		host_reachable(h, true);
		h->backoff_ms = BACKOFF_MIN_MS;
		strlist_free(&h->kill);
		json_object_object_get_ex(o, "keepers", &ks);
		size_t nk = ks ? json_object_array_length(ks) : 0;
		for (size_t i = 0; i < nk; i++)
			attach_one(h, json_object_array_get_idx(ks, i));
		/* The host's panes here: started now, or ended there while we were away. */
		for (int i = 0; i < session_pane_count(w->s); i++) {
			struct wpane *wp = session_pane(w->s, i);
			if (!on_host(wp, h) || wp->runner->keeper || pane_exited(wp->term, NULL))
				continue;
			bool listed = false;
			for (size_t k = 0; k < nk && !listed; k++)
				listed = json_int(json_object_array_get_idx(ks, k), "pane", 0) ==
					 wp->id;
			if (wp->runner->remote_spec)
				start_child(h, wp);
			else if (!listed) {
				set_link(wp, "ended on %s", h->name);
				ids_change(w, wp->id, NULL, NULL);
				pane_mirror_lost(wp->term);
			}
		}
		resume_lost(h);
		json_object_put(o);
		wrx_relayout(w);
	}
	if (h->again) {
		h->again = false;
		host_refresh(h);
	}
}

/* The RPC bridge's socket for agents on servers: tokens only, no CLI command. */
static void listen_remote(struct wrx *w)
{
	if (w->remote_sock || w->helper || w->rpc == NULL || w->sock_path == NULL)
		return;
	char *path = xasprintf("%.*s.remote.sock", (int)(strlen(w->sock_path) - strlen(".sock")),
			       w->sock_path);
	char *cause = NULL;
	if (rpc_server_listen_unix(w->rpc, path, false, NULL, &cause) < 0) {
		log_msg("remote: no RPC socket for agents there: %s", cause);
		free(cause);
		free(path);
		return;
	}
	w->remote_sock = path;
}

static void host_refresh(struct rhost *h)
{
	struct wrx *w = h->w;
	if (h->busy) {
		h->again = true;
		return;
	}
	uv_timer_stop(&h->retry);
	if (!h->linked) {
		host_failed(h, h->why);
		return;
	}
	listen_remote(w);
	struct strlist a = {0};
	strlist_add(&a, h->name);
	if (w->remote_sock) {
		strlist_add(&a, "--rpc");
		strlist_add(&a, w->remote_sock);
	}
	for (size_t i = 0; i < h->kill.n; i++) {
		strlist_add(&a, "--kill");
		strlist_add(&a, h->kill.v[i]);
	}
	char **more = strlist_argv(&a), **argv = child_argv(w, "remote-up", more);
	free(more);
	struct run_opts o = {
		.argv = argv, .cwd = w->root, .done = up_done, .arg = ticket_new(h, 0)};
	for (int i = 0; i < session_pane_count(w->s); i++) {
		struct wpane *wp = session_pane(w->s, i);
		if (on_host(wp, h) && wp->runner->keeper == NULL && !pane_exited(wp->term, NULL) &&
		    wp->runner->remote_spec == NULL)
			set_link(wp, "connecting to %s", h->name);
	}
	if (run_start(w->loop, &o) < 0) {
		struct ticket *t = o.arg;
		free(t->host);
		free(t);
		host_failed(h, "cannot run workrex __remote-up");
	} else {
		h->busy = true;
	}
	child_argv_free(argv);
	strlist_free(&a);
}

/* ---- the core's calls ---- */

int remote_pane_start(struct wrx *w, struct wpane *wp, const char *spec, char **cause)
{
	struct rhost *h = host_get(w, wp->agent->remote.host);
	if (!h->linked) {
		*cause = xstrdup(h->why);
		return -EINVAL;
	}
	wp->runner->remote_spec = xstrdup(spec);
	ids_change(w, wp->id, h->name, wp->agent->handle);
	/* The start brings the link up itself; an up under way starts it when done. */
	if (!h->busy)
		start_child(h, wp);
	return 0;
}

static void idle_done(void *arg, int status, const char *output, const char *last)
{
	(void)status, (void)output;
	struct ticket *t = arg;
	struct rhost *h = t->w->quitting ? NULL : host_find(t->w, t->host);
	json_object *o = h ? answer_of(last) : NULL;
	/* Stopped: the next pane there brings it up again (provision.start), quietly till then. */
	if (o && json_flag(o, "stopped")) {
		h->up = false;
		log_msg("remote %s: stopped, no pane of this project there", h->name);
	}
	json_object_put(o);
	free(t->host);
	free(t);
}

/* The host's last pane here closed: stopped there, if provision.stop says how (a child's wait). */
static void host_idle(struct rhost *h, const struct wpane *closing)
{
	struct wrx *w = h->w;
	const struct remote_host *rh = NULL;
	for (size_t i = 0; i < w->cfg.nhosts && rh == NULL; i++)
		if (strcmp(w->cfg.hosts[i].name, h->name) == 0)
			rh = &w->cfg.hosts[i];
	if (rh == NULL || rh->provision[PROVISION_STOP].n == 0 || w->helper)
		return;
	for (int i = 0; i < session_pane_count(w->s); i++) {
		struct wpane *wp = session_pane(w->s, i);
		if (wp != closing && on_host(wp, h) && !pane_exited(wp->term, NULL))
			return;
	}
	char *more[] = {h->name, NULL}, **argv = child_argv(w, "remote-idle", more);
	struct run_opts o = {
		.argv = argv, .cwd = w->root, .done = idle_done, .arg = ticket_new(h, 0)};
	if (run_start(w->loop, &o) < 0) {
		struct ticket *t = o.arg;
		free(t->host);
		free(t);
	}
	child_argv_free(argv);
}

void remote_pane_closing(struct wrx *w, struct wpane *wp)
{
	struct rhost *h = host_get(w, wp->agent->remote.host);
	ids_change(w, wp->id, NULL, NULL);
	/* Attached: runner.c's KM_KILL ends it. Starting: start_done ends it. Else: next up. */
	if (wp->runner->keeper == NULL && wp->runner->remote_spec == NULL &&
	    !pane_exited(wp->term, NULL)) {
		char id[16];
		snprintf(id, sizeof id, "%d", wp->id);
		strlist_add(&h->kill, id);
		if (!h->busy)
			uv_timer_start(&h->retry, on_retry, 0, 0);
	} else {
		host_idle(h, wp);
	}
}

void remote_attach(struct wrx *w)
{
	for (int i = 0; i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		if (a->remote.host && host_find(w, a->remote.host) == NULL)
			host_refresh(host_get(w, a->remote.host));
	}
}

void remote_attach_host(struct wrx *w, const char *name)
{
	struct rhost *h = host_get(w, name);
	if (!h->up)
		host_refresh(h);
}

bool remote_settled(struct wrx *w)
{
	for (struct rhost *h = w->hosts; h; h = h->next)
		if (h->busy || h->starts > 0)
			return false;
	/* A pane connected there and not yet answered. */
	for (int i = 0; w->s && i < session_pane_count(w->s); i++) {
		struct wpane *wp = session_pane(w->s, i);
		if (wp->agent->remote.host && wp->runner->keeper && wp->runner->link)
			return false;
	}
	return true;
}

static void host_closed(uv_handle_t *t)
{
	struct rhost *h = t->data;
	if (h->linked)
		link_free(&h->link);
	strlist_free(&h->kill);
	free(h->why);
	free(h->name);
	free(h);
}

void remote_stop(struct wrx *w)
{
	struct rhost *h = w->hosts;
	w->hosts = NULL;
	while (h) {
		struct rhost *next = h->next;
		/* The dashboard's master goes with it: its bridge's socket there leads nowhere now. */
		if (h->linked && h->up && !w->helper) {
			struct strlist a = {0};
			link_exit_argv(&h->link, &a);
			run_detached(w->loop, &a);
			strlist_free(&a);
		}
		uv_timer_stop(&h->retry);
		uv_close((uv_handle_t *)&h->retry, host_closed);
		h = next;
	}
	if (w->rpc && w->remote_sock)
		rpc_server_unlisten(w->rpc, w->remote_sock);
	free(w->remote_sock);
	w->remote_sock = NULL;
}
