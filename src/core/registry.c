/*
 * registry.c - an agent's status with no hooks: from its CLI's registry of
 * running sessions (config/kinds.h: registry).
 *
 * Claude Code keeps one file per running session in ~/.claude/sessions,
 * PID.json: {sessionId, cwd, kind, status: busy | idle | waiting,
 * waitingFor, statusUpdatedAt}, rewritten as its status changes; `claude
 * agents --json` lists them. The dashboard watches that directory
 * (inotify, through uv_fs_event: nothing runs while nothing changes),
 * reads a file that changed (a few hundred bytes, at most 256 KiB), and
 * gives its status to the agent whose session it is: the session id
 * workrex started it with, or the one its hooks reported; never a guess
 * by directory. busy is working, waiting is waiting (for what it says),
 * idle after working is done (idle at its start is nothing, and so is a
 * process's that started after the working was said: a resumed session). An agent in
 * a sandbox or on a server is not here: its CLI's registry is its own.
 * Hooks and the registry say the same thing; each is applied by when it
 * fired, so the later wins whichever arrives first.
 *
 * A directory that does not exist yet (the CLI never ran) is waited for
 * the same way: its nearest ancestor is watched for the next name on the
 * way, never polled for.
 */
#include "../config/kinds.h"
#include "../rpc/proto.h"
#include "../util/log.h"
#include "../util/util.h"
#include "agentcmd.h"
#include "wrx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REGISTRY_FILE_MAX (256 * 1024)

struct reg_watch {
	uv_fs_event_t ev;
	struct wrx *w;
	const struct agent_kind *k;
	char *dir; /* owned */
	bool on;
	bool parent;  /* dir is not there yet: its nearest ancestor is watched for it */
	char *coming; /* owned: then the name there on the way to dir */
};

struct registry {
	struct reg_watch **watch; /* one per kind with a registry; each owned (freed once closed) */
	size_t n;
};

/* "1234.json": a session's file (not a temporary one of its writer's). */
static bool session_file(const char *name)
{
	size_t n = name ? strspn(name, "0123456789") : 0;
	return n > 0 && strcmp(name + n, ".json") == 0;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

/* The agent here (no sandbox, no server) whose session this is, or NULL. */
static struct agent *session_agent_here(struct wrx *w, const char *id)
{
	int n = 0;
	struct agent *a = id && rpc_session_wellformed(id) ? agent_by_session(w, id, &n) : NULL;
	struct wpane *wp = a ? session_agent_pane(w->s, a) : NULL;
	if (a == NULL || a->remote.host || (wp && wp->sandboxed) || (a->box.wanted == 1 && !wp))
		return NULL;
	return a;
}

/*
 * The adopted background jobs of rw's kind (adopt): each one's state as
 * its state.json says, once its session's file is gone or at start (a job
 * that ended while no dashboard ran). working and blocked are its session
 * file's to say while it runs.
 */
static void registry_jobs(struct reg_watch *rw)
{
	struct wrx *w = rw->w;
	for (int i = 0; rw->k->jobs && i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		char state[32];
		if (!a->adopted || !a->adopted_attach || kind_find(a->git.agent) != rw->k ||
		    kind_job_state(rw->k, getenv("HOME"), a->adopted, state, sizeof state) < 0)
			continue;
		enum wrx_status st =
			!strcmp(state, "done") || !strcmp(state, "stopped")     ? WRX_STATUS_DONE
			: !strcmp(state, "failed") || !strcmp(state, "crashed") ? WRX_STATUS_FAILED
										: WRX_STATUS_NONE;
		if (st == WRX_STATUS_NONE || st == a->status)
			continue;
		char *why = st == WRX_STATUS_FAILED ? xasprintf("its job %s", state) : NULL;
		if (agent_status_heard(w, a, st, wall_ms(), why, "job state"))
			keep_meta(w, a);
		free(why);
	}
}

/*
 * Did this entry's process start before the agent's status was said (at,
 * wall ms)? Only then is its idle the end of that work: a session resumed
 * after a reboot comes up idle, and the turn it was in did not end well.
 */
static bool started_before(json_object *o, uint64_t at)
{
	json_object *v;
	return at && json_object_object_get_ex(o, "startedAt", &v) &&
	       json_object_is_type(v, json_type_int) && (uint64_t)json_object_get_int64(v) <= at;
}

/* One session's file, as it is now: its status to its agent. */
static void registry_read(struct reg_watch *rw, const char *name)
{
	char *path = xasprintf("%s/%s", rw->dir, name), *text = NULL, *cause = NULL;
	int rc = file_read(path, REGISTRY_FILE_MAX, &text, &cause);
	free(path);
	free(cause);
	if (rc < 0) { /* gone: its session ended, which its pane's end, or its job's state, says */
		registry_jobs(rw);
		return;
	}
	json_object *o = json_tokener_parse(text), *v;
	free(text);
	struct agent *a = session_agent_here(rw->w, jstr(o, "sessionId"));
	const char *said = jstr(o, "status");
	uint64_t at = json_object_object_get_ex(o, "statusUpdatedAt", &v) &&
				      json_object_is_type(v, json_type_int)
			      ? (uint64_t)WRX_MAX(json_object_get_int64(v), 0)
			      : 0;
	enum wrx_status st = WRX_STATUS_NONE;
	if (a && said && !strcmp(said, "busy"))
		st = WRX_STATUS_WORKING;
	else if (a && said && !strcmp(said, "waiting"))
		st = WRX_STATUS_WAITING;
	else if (a && said && !strcmp(said, "idle") && a->status == WRX_STATUS_WORKING &&
		 started_before(o, a->hook_at))
		st = WRX_STATUS_DONE;
	if (st != WRX_STATUS_NONE && st != a->status) {
		/* What it waits for, in its CLI's words ("permission prompt"), under its row. */
		const char *why = st == WRX_STATUS_WAITING ? jstr(o, "waitingFor") : NULL;
		if (agent_status_heard(rw->w, a, st, at, why, "registry entry"))
			keep_meta(rw->w, a);
	}
	json_object_put(o);
}

static void watch_on(struct reg_watch *rw);

/* The parent's watch ended: the directory itself is watched from now. */
static void parent_closed(uv_handle_t *h)
{
	struct reg_watch *rw = h->data;
	rw->on = rw->parent = false;
	if (!rw->w->quitting && rw->w->registry)
		watch_on(rw);
}

static void on_change(uv_fs_event_t *ev, const char *name, int events, int status)
{
	struct reg_watch *rw = ev->data;
	(void)events;
	if (status < 0) {
		log_msg("%s: watching %s: %s", rw->k->name, rw->dir, uv_strerror(status));
		return;
	}
	if (rw->w->quitting)
		return;
	if (rw->parent && name && !strcmp(name, rw->coming))
		uv_close((uv_handle_t *)&rw->ev, parent_closed);
	else if (!rw->parent && session_file(name))
		registry_read(rw, name);
}

/* Every session's file there now: at start, what changed while no dashboard ran. */
static void registry_scan(struct reg_watch *rw)
{
	uv_fs_t req;
	if (uv_fs_scandir(NULL, &req, rw->dir, 0, NULL) < 0)
		return;
	uv_dirent_t ent;
	while (uv_fs_scandir_next(&req, &ent) != UV_EOF)
		if (session_file(ent.name))
			registry_read(rw, ent.name);
	uv_fs_req_cleanup(&req);
}

/* The nearest existing ancestor of dir (a directory), and in *coming the name below it. */
static char *nearest_dir(const char *dir, char **coming)
{
	char *at = xstrdup(dir);
	struct stat st;
	*coming = NULL;
	while (stat(at, &st) < 0 || !S_ISDIR(st.st_mode)) {
		char *slash = strrchr(at, '/');
		if (slash == NULL || slash == at) {
			free(at);
			free(*coming);
			*coming = NULL;
			return NULL;
		}
		free(*coming);
		*coming = xstrdup(slash + 1);
		*slash = '\0';
	}
	return at;
}

/*
 * Watch rw's directory if it is not watched yet; while it is not there
 * (the CLI never ran), its nearest ancestor, for the next name on the way
 * (its config dir, or the registry in it), until it is.
 */
static void watch_on(struct reg_watch *rw)
{
	if (rw->on || rw->dir == NULL)
		return;
	free(rw->coming);
	char *at = nearest_dir(rw->dir, &rw->coming);
	if (at == NULL)
		return;
	uv_fs_event_init(rw->w->loop, &rw->ev);
	rw->ev.data = rw;
	int rc = uv_fs_event_start(&rw->ev, on_change, at, 0);
	if (rc < 0) {
		log_msg("%s: cannot watch %s: %s", rw->k->name, at, uv_strerror(rc));
		free(at);
		uv_close((uv_handle_t *)&rw->ev, NULL);
		return;
	}
	uv_unref((uv_handle_t *)&rw->ev); /* a watch alone keeps no loop running */
	rw->on = true;
	rw->parent = rw->coming != NULL;
	log_msg("%s: its registry %s: watching %s%s%s", rw->k->name, rw->dir, at,
		rw->parent ? " for " : "", rw->parent ? rw->coming : "");
	/* Made between the look and the watch: on at once. */
	char *next = rw->coming ? xasprintf("%s/%s", at, rw->coming) : NULL;
	struct stat st;
	if (next && stat(next, &st) == 0)
		uv_close((uv_handle_t *)&rw->ev, parent_closed);
	else if (!rw->parent)
		registry_scan(rw);
	if (!rw->parent)
		registry_jobs(rw);
	free(next);
	free(at);
}

void registry_start(struct wrx *w)
{
	const char *home = getenv("HOME");
	if (w->registry || home == NULL)
		return;
	struct registry *r = xcalloc(1, sizeof *r);
	r->watch = xcalloc(agent_nkinds, sizeof *r->watch);
	for (size_t i = 0; i < agent_nkinds; i++) {
		const struct agent_kind *k = &agent_kinds[i];
		char *cdir = k->registry ? kind_config_dir(k, home) : NULL;
		if (cdir == NULL)
			continue;
		struct reg_watch *rw = r->watch[r->n++] = xcalloc(1, sizeof *rw);
		rw->w = w;
		rw->k = k;
		rw->dir = xasprintf("%s/%s", cdir, k->registry);
		free(cdir);
	}
	w->registry = r;
	for (size_t i = 0; i < r->n; i++)
		watch_on(r->watch[i]);
}

static void watch_free(struct reg_watch *rw)
{
	free(rw->coming);
	free(rw->dir);
	free(rw);
}

void registry_rescan(struct wrx *w)
{
	for (size_t i = 0; w->registry && i < w->registry->n; i++) {
		struct reg_watch *rw = w->registry->watch[i];
		if (rw->on && !rw->parent) {
			registry_scan(rw);
			registry_jobs(rw);
		}
	}
}

static void watch_closed(uv_handle_t *h)
{
	watch_free(h->data);
}

void registry_stop(struct wrx *w)
{
	struct registry *r = w->registry;
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++) {
		struct reg_watch *rw = r->watch[i];
		if (rw->on) {
			uv_close((uv_handle_t *)&rw->ev, watch_closed); /* freed once closed */
		} else {
			watch_free(rw);
		}
	}
	free(r->watch);
	free(r);
	w->registry = NULL;
}
