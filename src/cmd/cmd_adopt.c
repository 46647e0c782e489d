/*
 * cmd_adopt.c - `workrex adopt`: sessions started outside workrex, shown in
 * the dashboard (SPEC §12).
 *
 * An agent CLI that lists its sessions (config/kinds.h: sessions_list;
 * Claude Code's `claude agents --json --all`) is asked, in the project,
 * which run there: in its directory or one of its agents' worktrees. Those
 * that are no agent's own session and not adopted yet are adoptable.
 * Adopting one records it (git/adopted.h) and tells the dashboard, which
 * shows it as a row of its own: its status from the CLI's registry
 * (core/registry.c; no hook needed), and its pane where the CLI can show
 * it in a terminal (a background job: `claude attach ID`); a session that
 * runs in a terminal elsewhere has no pane here, its status only.
 * `--forget` takes the row away; the session itself is never touched.
 */
#include "../config/kinds.h"
#include "../git/adopted.h"
#include "../git/worktree.h"
#include "../util/proc.h"
#include "../util/util.h"
#include "cmd.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIST_MS 30000

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

/* An entry's id: its job's, else its process's. Caller frees. */
static char *entry_id(json_object *e)
{
	json_object *v;
	if (jstr(e, "id"))
		return xstrdup(jstr(e, "id"));
	if (json_object_object_get_ex(e, "pid", &v) && json_object_is_type(v, json_type_int))
		return xasprintf("%lld", (long long)json_object_get_int64(v));
	return NULL;
}

/* Is path dir, or below it? */
static bool under(const char *dir, const char *path)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Where in the project cwd is: an agent's handle, the project's name, or NULL: not in it. */
static const char *where_in(const char *root, const struct agent_rec *as, size_t n, const char *cwd)
{
	for (size_t i = 0; i < n; i++)
		if (as[i].path && under(as[i].path, cwd))
			return as[i].handle;
	if (!under(root, cwd))
		return NULL;
	const char *base = strrchr(root, '/');
	return base ? base + 1 : root;
}

/* k's sessions as it lists them (a JSON array), or NULL after saying why. */
static json_object *kind_sessions(const struct agent_kind *k, const char *root)
{
	struct strlist words = {0};
	strlist_add(&words, k->name);
	char *copy = xstrdup(k->sessions_list), *save = NULL;
	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
		strlist_add(&words, w);
	free(copy);
	char **argv = xcalloc(words.n + 1, sizeof *argv);
	memcpy(argv, words.v, words.n * sizeof *argv);
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.dir = root;
	struct buf out = {0}, err = {0};
	int st = proc_capture(argv, &o, NULL, 0, &out, &err, LIST_MS);
	free(argv);
	json_object *list = st == 0 && out.len ? json_tokener_parse(out.data) : NULL;
	if (!json_object_is_type(list, json_type_array)) {
		fprintf(stderr, "workrex: adopt: %s %s: %s\n", k->name, k->sessions_list,
			st == 127 ? "not found"
			: err.len ? err.data
				  : "no list");
		json_object_put(list);
		list = NULL;
	}
	buf_free(&out);
	buf_free(&err);
	strlist_free(&words);
	return list;
}

/* Is this session an agent's own (as the dashboard knows them), or adopted already? */
static bool taken(json_object *live_agents, const struct adopted_rec *ad, size_t nad,
		  const char *session, const char *id)
{
	for (size_t i = 0; session && live_agents && i < json_object_array_length(live_agents); i++)
		if (jstr(json_object_array_get_idx(live_agents, i), "session") &&
		    !strcmp(jstr(json_object_array_get_idx(live_agents, i), "session"), session))
			return true;
	for (size_t i = 0; i < nad; i++)
		if ((id && !strcmp(ad[i].id, id)) ||
		    (session && ad[i].session && !strcmp(ad[i].session, session)))
			return true;
	return false;
}

/* The adoptable sessions of every kind that lists its own: [{kind, id, where, ...entry}]. */
static json_object *adoptable(struct cmd_ctx *ctx)
{
	const char *root = repo_root(ctx->repo);
	struct agent_rec *as = NULL;
	size_t n = 0, nad = 0;
	char *cause = NULL;
	if (agent_list(ctx->repo, &as, &n, &cause) < 0)
		free(cause);
	struct adopted_rec *ad = NULL;
	adopted_list(ctx->repo, &ad, &nad);
	json_object *live = NULL, *live_agents = NULL;
	cmd_live_agents(ctx, "adopt", &live, &live_agents);
	json_object *out = json_object_new_array();
	for (size_t k = 0; k < agent_nkinds; k++) {
		const struct agent_kind *kind = &agent_kinds[k];
		if (kind->sessions_list == NULL || !kind_installed(kind))
			continue;
		json_object *list = kind_sessions(kind, root);
		for (size_t i = 0; list && i < json_object_array_length(list); i++) {
			json_object *e = json_object_array_get_idx(list, i);
			const char *cwd = jstr(e, "cwd"),
				   *where = cwd ? where_in(root, as, n, cwd) : NULL;
			char *id = entry_id(e);
			if (where && id && !taken(live_agents, ad, nad, jstr(e, "sessionId"), id)) {
				json_object *o = json_object_get(e);
				json_object_object_add(o, "kind_of",
						       json_object_new_string(kind->name));
				json_object_object_add(o, "adopt_id", json_object_new_string(id));
				json_object_object_add(o, "where", json_object_new_string(where));
				json_object_array_add(out, o);
			}
			free(id);
		}
		json_object_put(list);
	}
	json_object_put(live);
	for (size_t i = 0; i < n; i++)
		agent_rec_free(&as[i]);
	free(as);
	adopted_list_free(ad, nad);
	return out;
}

/*
 * Does any session of k run (its registry has an entry: a background
 * job's worker has one too)? A cheap look, before the CLI is asked.
 */
static bool registry_has_entries(const struct agent_kind *k)
{
	char *dir = kind_config_dir(k, getenv("HOME"));
	char *d = dir && k->registry ? xasprintf("%s/%s", dir, k->registry) : NULL;
	DIR *h = d ? opendir(d) : NULL;
	bool any = false;
	for (struct dirent *e; h && !any && (e = readdir(h));)
		any = e->d_name[0] != '.';
	if (h)
		closedir(h);
	free(d);
	free(dir);
	return any;
}

void cmd_adoptable_note(struct cmd_ctx *ctx)
{
	bool look = false;
	for (size_t k = 0; k < agent_nkinds && !look; k++)
		look = agent_kinds[k].sessions_list && kind_installed(&agent_kinds[k]) &&
		       registry_has_entries(&agent_kinds[k]);
	if (!look)
		return;
	json_object *list = adoptable(ctx);
	size_t n = 0;
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		json_object *e = json_object_array_get_idx(list, i);
		const char *state = jstr(e, "state");
		/* Running: a process of its own, or a job still at work or waiting. */
		n += json_object_object_get(e, "pid") ||
		     (state && (!strcmp(state, "working") || !strcmp(state, "blocked")));
	}
	if (n)
		printf("%zu session%s started outside workrex run%s here (workrex adopt --list)\n",
		       n, n == 1 ? "" : "s", n == 1 ? "s" : "");
	json_object_put(list);
}

static int adopt_list(struct cmd_ctx *ctx, bool json)
{
	json_object *list = adoptable(ctx);
	if (json) {
		printf("%s\n",
		       json_object_to_json_string_ext(
			       list, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	} else if (json_object_array_length(list) == 0) {
		printf("no session to adopt: none of an agent CLI's runs in this project outside "
		       "workrex\n");
	} else {
		printf("%-10s %-8s %-11s %-8s %-16s %s\n", "ID", "CLI", "KIND", "STATE", "WHERE",
		       "NAME");
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			json_object *e = json_object_array_get_idx(list, i);
			const char *state = jstr(e, "state") ? jstr(e, "state") : jstr(e, "status");
			printf("%-10s %-8s %-11s %-8s %-16s %s\n", jstr(e, "adopt_id"),
			       jstr(e, "kind_of"), jstr(e, "kind") ? jstr(e, "kind") : "-",
			       state ? state : "-", jstr(e, "where"),
			       jstr(e, "name") ? jstr(e, "name") : "-");
		}
	}
	json_object_put(list);
	return 0;
}

/* A handle for e no agent or adopted session has: --name, else from its name, else its id. */
static char *new_handle(struct cmd_ctx *ctx, json_object *e, const char *id, char **why)
{
	const char *given = cmd_value(ctx, "name");
	char *h = given             ? xstrdup(given)
		  : jstr(e, "name") ? handle_from_branch(jstr(e, "name"))
				    : NULL;
	if (h == NULL)
		h = xasprintf("adopted-%s", id);
	struct agent_rec a;
	struct adopted_rec ad;
	char *cause = NULL;
	bool used = agent_get(ctx->repo, h, &a, &cause) == 0;
	if (used)
		agent_rec_free(&a);
	free(cause);
	if (!used && adopted_get(ctx->repo, h, &ad) == 0) {
		used = true;
		adopted_rec_free(&ad);
	}
	if (!handle_valid(h) || used) {
		*why = xasprintf("'%s' is %s; name it with --name", h,
				 used ? "taken" : "no usable name");
		free(h);
		return NULL;
	}
	return h;
}

static int adopt_one(struct cmd_ctx *ctx, const char *id)
{
	json_object *list = adoptable(ctx), *e = NULL;
	for (size_t i = 0; i < json_object_array_length(list) && !e; i++) {
		json_object *o = json_object_array_get_idx(list, i);
		if (!strcmp(jstr(o, "adopt_id"), id) ||
		    (jstr(o, "sessionId") && !strcmp(jstr(o, "sessionId"), id)))
			e = o;
	}
	if (e == NULL) {
		json_object_put(list);
		return cmd_fail("adopt",
				"no session '%s' to adopt here (workrex adopt --list shows "
				"them)",
				id);
	}
	const struct agent_kind *k = kind_find(jstr(e, "kind_of"));
	char *why = NULL, *handle = new_handle(ctx, e, jstr(e, "adopt_id"), &why);
	if (handle == NULL) {
		json_object_put(list);
		int rc = cmd_fail("adopt", "%s", why);
		free(why);
		return rc;
	}
	bool job = jstr(e, "kind") && !strcmp(jstr(e, "kind"), "background") && jstr(e, "id");
	struct adopted_rec rec = {
		.handle = handle,
		.id = (char *)jstr(e, "adopt_id"),
		.session = (char *)jstr(e, "sessionId"),
		.cwd = (char *)jstr(e, "cwd"),
		.kind = (char *)k->name,
		.attach = job && k->attach,
	};
	int rc = adopted_add(ctx->repo, &rec);
	if (rc < 0) {
		json_object_put(list);
		free(handle);
		return cmd_fail("adopt", "cannot record it: %s", strerror(-rc));
	}
	json_object *req = json_object_new_object();
	json_object_object_add(req, "cmd", json_object_new_string("adopt"));
	json_object_object_add(req, "handle", json_object_new_string(handle));
	json_object_object_add(req, "id", json_object_new_string(rec.id));
	if (rec.session)
		json_object_object_add(req, "session", json_object_new_string(rec.session));
	json_object_object_add(req, "cwd", json_object_new_string(rec.cwd));
	json_object_object_add(req, "kind", json_object_new_string(rec.kind));
	json_object_object_add(req, "attach", json_object_new_boolean(rec.attach));
	int drc = cmd_dashboard(ctx, "adopt", req, NULL);
	json_object_put(req);
	printf("adopted %s as %s (%s)%s\n", rec.id, handle,
	       rec.attach ? "its pane: the job, attached" : "its status only: it runs elsewhere",
	       drc == -ENOENT ? "; no dashboard runs, the next one shows it" : "");
	free(handle);
	json_object_put(list);
	return drc < 0 && drc != -ENOENT ? 1 : 0;
}

static int adopt_forget(struct cmd_ctx *ctx, const char *handle)
{
	json_object *req = json_object_new_object();
	json_object_object_add(req, "handle", json_object_new_string(handle));
	int rc = adopted_drop(ctx->repo, handle);
	if (rc == -ENOENT) {
		json_object_put(req);
		return cmd_fail("adopt", "'%s' is no adopted session", handle);
	}
	/* Its pane closes (the session goes on: attach detaches); its row goes. */
	json_object_object_add(req, "cmd", json_object_new_string("close"));
	cmd_dashboard(ctx, "adopt", req, NULL);
	json_object_object_add(req, "cmd", json_object_new_string("forget"));
	cmd_dashboard(ctx, "adopt", req, NULL);
	json_object_put(req);
	printf("forgot %s (its session itself goes on)\n", handle);
	return rc < 0 ? 1 : 0;
}

int cmd_adopt(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	int rc = cmd_open_repo(ctx, "adopt");
	if (rc)
		return rc;
	const char *forget = cmd_value(ctx, "forget");
	if (forget)
		return adopt_forget(ctx, forget);
	if (cmd_given(ctx, "list") || cmd_nargs(ctx) == 0)
		return adopt_list(ctx, cmd_given(ctx, "json"));
	return adopt_one(ctx, cmd_arg(ctx, 0));
}
