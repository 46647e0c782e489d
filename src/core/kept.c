/*
 * kept.c - what lets an agent come back after its keepers went (a
 * reboot, a crash): its mark, in its host-only directory, in the format
 * keeper/mark.h writes, holding its session id and what it was (the meta
 * keep.c tells its keepers). Its keeper writes the same mark with no
 * dashboard; resume.c reads it at the next start.
 */
#include "../git/private.h"
#include "../keeper/mark.h"
#include "../rpc/proto.h"
#include "../util/log.h"
#include "../util/json.h"
#include "../util/util.h"
#include "wrx.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * An agent whose agent pane a keeper runs is marked in its host-only
 * directory (which, unlike the runtime directory, outlives a reboot):
 * a marked agent with no keeper at the next start lost it to a reboot or
 * a crash, and is opened again with its resume flag. Closing the pane
 * (close, remove, merge, quit) takes the mark away. The mark holds the
 * session id the agent's hooks last reported, if any, so that the agent
 * resumes that session (claude --resume ID) rather than the latest.
 */
char *kept_path(struct wrx *w, const struct agent *a, bool create)
{
	char *dir = private_agent_dir(w->root, a->handle, create);
	char *f = dir ? xasprintf("%s/kept", dir) : NULL;
	free(dir);
	return f;
}

/* a's mark made to say its session id and what it is (mark.h): 0 or -errno. */
static int mark_save(struct wrx *w, struct agent *a, bool create)
{
	char *f = kept_path(w, a, create);
	int rc = f ? mark_write(f, a->session_id, a->kept_meta, create) : -ENOENT;
	if (rc < 0 && rc != -ENOENT)
		log_msg("%s: its mark not kept: %s", a->handle, strerror(-rc));
	free(f);
	return rc;
}

void kept_mark(struct wrx *w, struct agent *a, bool on)
{
	if (!a->git.worktree)
		return;
	if (on) {
		/* One there already may hold a session its keeper heard: kept, unless we know one. */
		if (a->session_id || !kept_marked(w, a))
			mark_save(w, a, true);
		return;
	}
	char *f = kept_path(w, a, false);
	if (f)
		unlink(f);
	free(f);
}

void kept_meta(struct wrx *w, struct agent *a, const char *meta)
{
	if (a->kept_meta && !strcmp(a->kept_meta, meta))
		return;
	free(a->kept_meta);
	a->kept_meta = xstrdup(meta);
	if (a->git.worktree && w->keeper_dir)
		mark_save(w, a, false);
}

bool kept_marked(struct wrx *w, const struct agent *a)
{
	char *f = kept_path(w, a, false);
	bool marked = f && access(f, F_OK) == 0;
	free(f);
	return marked;
}

void kept_session(struct wrx *w, struct agent *a, const char *id)
{
	if (a->session_id && strcmp(a->session_id, id) == 0)
		return;
	free(a->session_id);
	a->session_id = xstrdup(id);
	/* Into the mark, where there is one: a pane not yet in a keeper has none. */
	if (a->git.worktree && w->keeper_dir)
		mark_save(w, a, false);
}

/*
 * What a's mark kept: its session, resumed, and what it was when its
 * keepers went (its status, since when, why it failed). One that had
 * failed stays so, not started again: its program would only fail anew,
 * and what it printed went with its keeper. (The user opens it again.)
 */
bool kept_apply(struct wrx *w, struct agent *a)
{
	char *f = kept_path(w, a, false), *session = NULL, *meta = NULL;
	if (f)
		(void)mark_read(f, &session, &meta);
	free(f);
	free(a->session_id);
	a->session_id = session;
	kept_meta_apply(w, a, meta);
	free(meta);
	return a->status != WRX_STATUS_FAILED;
}

/* What the agent was, from its keeper's hello or its mark: its status last. */
void kept_meta_apply(struct wrx *w, struct agent *a, const char *meta)
{
	json_object *m = meta ? json_tokener_parse(meta) : NULL, *v;
	if (m == NULL)
		return;
	enum wrx_status st = WRX_STATUS_NONE;
	bool has = json_object_object_get_ex(m, "status", &v) &&
		   status_parse_reached(json_object_get_string(v), &st) == 0;
	/*
	 * Its status last: its hooks keep what it is (keep_meta), with its
	 * reason, age, title and session already its own.
	 */
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
		kept_session(w, a, json_object_get_string(v));
	/* What its session used, as its hooks last said. */
	json_object *u;
	if (json_object_object_get_ex(m, "usage", &u) && json_object_is_type(u, json_type_object)) {
		a->usage.in = WRX_MAX(json_long(u, "in", 0), 0);
		a->usage.out = WRX_MAX(json_long(u, "out", 0), 0);
		a->usage.cost_micro = json_long(u, "cost_micro", -1);
		a->has_usage = true;
	}
	/* When its last hook started: a later dashboard orders what arrives late by it. */
	if (json_object_object_get_ex(m, "at", &v) && json_object_get_int64(v) > 0)
		a->hook_at = (uint64_t)json_object_get_int64(v);
	int64_t since = json_object_object_get_ex(m, "since", &v) ? json_object_get_int64(v) : 0;
	if (has)
		session_set_status_at(w->s, a, st,
				      since > 0 && (uint64_t)since <= wall_ms() ? (uint64_t)since
										: 0);
	json_object_put(m);
}
