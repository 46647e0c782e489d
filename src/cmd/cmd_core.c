/*
 * cmd_core.c - a command's own core, when no dashboard runs.
 *
 * The verbs a dashboard does for commands (open, close, send, capture,
 * list, ...) are the core's (core/actions.c). With no dashboard, a
 * command that finds the project's keepers running, or that opens an
 * agent, makes a core in this process for its one request: it takes the
 * keepers over as a helper (runner.c), does the verb, and lets them go on.
 * So every command works with or without a dashboard, one way.
 */
#include "cmd.h"

#include "../core/actions.h"
#include "../core/wrx.h"
#include "../keeper/client.h"
#include "../keeper/proto.h"
#include "../rpc/control.h"
#include "../rpc/proto.h"
#include "../util/log.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool has_keepers(const char *root)
{
	char *cause = NULL;
	char *dir = keeper_dir(root, &cause);
	free(cause);
	bool any = dir && keeper_any(dir);
	free(dir);
	return any;
}

int cmd_agent_keepers(struct cmd_ctx *ctx, const char *handle)
{
	char *cause = NULL;
	char *dir = keeper_dir(ctx->repo ? repo_root(ctx->repo) : ctx->cwd, &cause);
	free(cause);
	struct keeper_entry *e = NULL;
	size_t n = dir ? keeper_list_of(dir, handle, &e) : 0;
	keeper_list_free(e, n);
	free(dir);
	return (int)n;
}

/* A command's core says its errors (a pane that did not start) where the command runs. */
static void core_message(void *ui, bool error, const char *text)
{
	(void)ui;
	if (error) {
		fprintf(stderr, "workrex: %s\n", text);
		log_msg("%s", text);
	}
}

static const struct wrx_hooks core_hooks = {.message = core_message};

/* Somebody listens on the unix socket at path. */
static bool control_live(const char *path)
{
	char *cause = NULL;
	int fd = rpc_connect_unix(path, &cause);
	free(cause);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

bool cmd_dashboard_runs(struct cmd_ctx *ctx)
{
	char *cause = NULL;
	char *path = control_path(ctx->repo ? repo_root(ctx->repo) : ctx->cwd, &cause);
	free(cause);
	bool up = path && control_live(path);
	free(path);
	return up;
}

/* Is the request's agent one on a server (whose keepers run there)? */
static bool on_server(struct cmd_ctx *ctx, json_object *req)
{
	json_object *v;
	struct agent_rec a;
	char *cause = NULL;
	if (ctx->repo == NULL || !json_object_object_get_ex(req, "handle", &v) ||
	    agent_find(ctx->repo, json_object_get_string(v), ctx->cwd, &a, &cause) < 0) {
		free(cause);
		return false;
	}
	bool there = a.remote != NULL;
	agent_rec_free(&a);
	return there;
}

bool cmd_core_wanted(struct cmd_ctx *ctx, json_object *req)
{
	json_object *v;
	const char *verb =
		json_object_object_get_ex(req, "cmd", &v) ? json_object_get_string(v) : "";
	/* list asks the keepers alone (cmd_keepers_live): no core takes them all over. */
	if (!strcmp(verb, "open"))
		return true;
	if (!strcmp(verb, "list") || !strcmp(verb, "answer") || !strcmp(verb, "queue-kick") ||
	    !strcmp(verb, "queue-notes"))
		return false; /* answer: only a dashboard asks; the queue's: for a dashboard only */
	return has_keepers(ctx->repo ? repo_root(ctx->repo) : ctx->cwd) || on_server(ctx, req);
}

int cmd_keepers_live(struct cmd_ctx *ctx, json_object **reply)
{
	char *cause = NULL;
	char *dir = keeper_dir(ctx->repo ? repo_root(ctx->repo) : ctx->cwd, &cause);
	free(cause);
	struct keeper_entry *e = NULL;
	size_t n = dir ? keeper_list(dir, &e) : 0;
	free(dir);
	if (n == 0) {
		keeper_list_free(e, n);
		return -ENOENT;
	}
	/* Per agent: its panes, how many ended, and what its agent pane's keeper last heard. */
	json_object *agents = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		const struct keeper_info *k = &e[i].info;
		if (k->handle == NULL)
			continue;
		json_object *a = NULL, *v;
		for (size_t j = 0; j < json_object_array_length(agents) && a == NULL; j++) {
			json_object *o = json_object_array_get_idx(agents, j);
			if (json_object_object_get_ex(o, "handle", &v) &&
			    !strcmp(json_object_get_string(v), k->handle))
				a = o;
		}
		if (a == NULL) {
			a = json_object_new_object();
			json_object_object_add(a, "handle", json_object_new_string(k->handle));
			json_object_object_add(a, "panes", json_object_new_int(0));
			json_object_object_add(a, "exited", json_object_new_int(0));
			json_object_array_add(agents, a);
		}
		json_object_object_get_ex(a, "panes", &v);
		json_object_set_int(v, json_object_get_int(v) + 1);
		json_object_object_get_ex(a, "exited", &v);
		json_object_set_int(v, json_object_get_int(v) + k->exited);
		json_object *m = k->agent_pane && k->meta ? json_tokener_parse(k->meta) : NULL;
		if (m && json_object_object_get_ex(m, "status", &v))
			json_object_object_add(a, "status", json_object_get(v));
		if (m && json_object_object_get_ex(m, "failure", &v))
			json_object_object_add(a, "failure", json_object_get(v));
		uint64_t now = wall_ms();
		if (m && json_object_object_get_ex(m, "since", &v) &&
		    (uint64_t)json_object_get_int64(v) <= now)
			json_object_object_add(
				a, "since_ms",
				json_object_new_int64(
					(int64_t)(now - (uint64_t)json_object_get_int64(v))));
		/* Its program ended with no dashboard to see it: done, or failed and how. */
		const char *said = m && json_object_object_get_ex(m, "status", &v)
					   ? json_object_get_string(v)
					   : "";
		char how[48];
		if (k->agent_pane && k->exited && strcmp(said, STATUS_DONE) != 0 &&
		    strcmp(said, STATUS_FAILED) != 0) {
			enum wrx_status st = status_ended(k->status, how, sizeof how);
			json_object_object_add(a, "status",
					       json_object_new_string(status_word(st)));
			if (st == WRX_STATUS_FAILED)
				json_object_object_add(a, "failure", json_object_new_string(how));
		}
		json_object_put(m);
	}
	keeper_list_free(e, n);
	*reply = json_object_new_object();
	json_object_object_add(*reply, "ok", json_object_new_boolean(1));
	json_object_object_add(*reply, "agents", agents);
	return 0;
}

static void close_any(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

/* The request names an agent on a server: its host's keepers attached first. */
static void remote_first(struct wrx *w, json_object *req)
{
	json_object *v;
	struct agent *a = req && json_object_object_get_ex(req, "handle", &v)
				  ? session_find_agent(w->s, json_object_get_string(v))
				  : NULL;
	if (a == NULL || a->remote.host == NULL)
		return;
	remote_attach_host(w, a->remote.host);
	wrx_run_until(w, remote_settled, 30000);
	/* The first screens come right after the hellos. */
	wrx_run_until(w, NULL, 50);
}

int cmd_core(struct cmd_ctx *ctx, json_object *req, json_object **reply, char **cause)
{
	signal(SIGPIPE, SIG_IGN); /* a keeper that went costs a write EPIPE, not us our life */
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct wrx w;
	struct wrx_opts o = {.cwd = ctx->cwd,
			     .config_file = ctx->config_file,
			     .keepers = true,
			     .helper = true,
			     .repo = ctx->repo};
	/* A request about one agent: its keepers only, not every one of the project's. */
	json_object *v;
	if (req && json_object_object_get_ex(req, "handle", &v) &&
	    json_object_is_type(v, json_type_string))
		o.only = json_object_get_string(v);
	int rc = wrx_open(&w, &loop, &o, &core_hooks, NULL, cause);
	if (rc == 0 && (rc = wrx_start(&w, cause)) < 0)
		wrx_close(&w);
	if (rc == 0) {
		remote_first(&w, req);
		*reply = actions_control_wait(&w, req);
		wrx_run_until(&w, runner_settled, 60000); /* a pane starting, here or there */
		runner_flush(&w, 2000);
		w.quitting = true;
		wrx_close(&w);
	}
	/* Every handle closed, so that no signal libuv set up outlives its loop. */
	uv_walk(&loop, close_any, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	return rc;
}
