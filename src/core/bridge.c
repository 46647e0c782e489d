/*
 * bridge.c - the core's end of the RPC bridge: the server, each pane's
 * token, and agents' requests decoded into actions (actions.h).
 *
 * Every pane gets its own token at spawn (WORKREX_RPC_TOKEN, with
 * WORKREX_RPC_SOCKET naming the control socket); the server tells us which
 * pane called, so a request always acts for the caller's own agent, as the
 * actions table allows. A token dies with its pane.
 */
#include "../rpc/control.h"
#include "../rpc/server.h"
#include "../util/util.h"
#include "actions.h"
#include "runner.h"
#include "wrx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The one reply envelope, on the RPC wire: {"type": "ok"} or {"type": "error", ...}. */
static void reply_rpc(struct wrx *w, json_object *r, void *arg)
{
	struct rpc_call *call = arg;
	(void)w;
	const char *e = actions_error(r);
	json_object *m, *out;
	if (e) {
		out = rpc_error("%s", e);
	} else if (json_object_object_get_ex(r, "path", &m)) {
		out = rpc_reply("clipboard_data");
		json_object_object_add(out, "path", json_object_get(m));
		if (json_object_object_get_ex(r, "mime", &m))
			json_object_object_add(out, "mime", json_object_get(m));
	} else if (json_object_object_get_ex(r, "exit", &m)) {
		out = rpc_reply("exec_exit");
		json_object_object_add(out, "code", json_object_get(m));
	} else {
		out = rpc_reply("ok");
		if (json_object_object_get_ex(r, "message", &m))
			json_object_object_add(out, "message", json_object_get(m));
	}
	json_object_put(r);
	rpc_call_finish(call, out);
}

static void add_str(json_object *o, const char *key, const char *v)
{
	if (v)
		json_object_object_add(o, key, json_object_new_string(v));
}

static void add_bool(json_object *o, const char *key, bool v)
{
	if (v)
		json_object_object_add(o, key, json_object_new_boolean(1));
}

/* A decoded request (proto.h) as its verb's arguments. */
static json_object *request_args(const struct rpc_req *req)
{
	json_object *o = json_object_new_object();
	add_str(o, "status", req->status);
	add_str(o, "session", req->session);
	add_str(o, "dir", req->dir);
	add_str(o, "why", req->why);
	add_bool(o, "quota", req->quota);
	if (req->has_usage) {
		json_object_object_add(o, "tokens_in", json_object_new_int64(req->usage.in));
		json_object_object_add(o, "tokens_out", json_object_new_int64(req->usage.out));
		if (req->usage.cost_micro >= 0)
			json_object_object_add(o, "cost_micro",
					       json_object_new_int64(req->usage.cost_micro));
	}
	if (req->at > 0)
		json_object_object_add(o, "at", json_object_new_int64(req->at));
	add_str(o, "title", req->title);
	add_str(o, "text", req->text);
	add_str(o, "branch", req->branch);
	add_str(o, "prompt", req->prompt);
	add_bool(o, "background", req->background);
	add_str(o, "handle", req->handle);
	add_bool(o, "rebase", req->rebase);
	add_bool(o, "squash", req->squash);
	add_bool(o, "keep", req->keep);
	add_bool(o, "ignore_uncommitted", req->ignore_uncommitted);
	add_str(o, "command", req->command);
	add_str(o, "mime", req->mime);
	if (req->args) {
		json_object *a = json_object_new_array();
		for (size_t i = 0; i < req->nargs; i++)
			json_object_array_add(a, json_object_new_string(req->args[i]));
		json_object_object_add(o, "args", a);
	}
	return o;
}

/* A verb's output as it comes (exec): base64, so that every byte arrives as it was. */
static void stream_output(void *arg, int stream, const char *p, size_t n)
{
	json_object *r = rpc_reply(stream == 1 ? "exec_stdout" : "exec_stderr");
	struct buf b = {0};
	base64_encode(&b, p, n);
	json_object_object_add(r, "data",
			       json_object_new_string_len(b.data ? b.data : "", (int)b.len));
	buf_free(&b);
	rpc_call_reply(arg, r);
}

static long stream_backlog(void *arg)
{
	return rpc_call_backlog(arg);
}

static const struct act_stream rpc_stream = {stream_output, stream_backlog};

static void on_request(struct rpc_call *call, const struct rpc_req *req, void *data)
{
	struct wrx *w = data;
	const char *verb = actions_for_rpc(rpc_type_name(req->type));
	actions_call_stream(w, verb, request_args(req), DOOR_AGENT, rpc_call_pane(call), reply_rpc,
			    &rpc_stream, call);
}

static void reply_control(struct wrx *w, json_object *r, void *arg)
{
	(void)w;
	rpc_call_finish(arg, r);
}

static void on_control(struct rpc_call *call, json_object *req, void *data)
{
	actions_control(data, req, reply_control, call);
}

static const struct rpc_ops ops = {
	.control = on_control,
	.request = on_request,
};

char **bridge_pane_env(struct wrx *w, struct wpane *wp)
{
	char tok[RPC_TOKEN_LEN + 1];
	if (w->rpc == NULL || rpc_server_token_add(w->rpc, wp->id, wp->agent->handle, tok) < 0)
		return NULL;
	char **env = xcalloc(3, sizeof *env);
	env[0] = xasprintf("WORKREX_RPC_SOCKET=%s", w->sock_path);
	env[1] = xasprintf("WORKREX_RPC_TOKEN=%s", tok);
	explicit_bzero(tok, sizeof tok);
	return env;
}

void bridge_pane_gone(struct wrx *w, struct wpane *wp)
{
	if (w->rpc)
		rpc_server_token_revoke(w->rpc, wp->id);
}

int bridge_start(struct wrx *w, char **cause)
{
	w->sock_path = control_path(w->root, cause);
	if (w->sock_path == NULL)
		return -EINVAL;
	w->rpc = rpc_server_new(w->loop, &ops, w);
	/*
	 * A command's core (a helper, runner.c) does not listen: commands run
	 * side by side, and none is a dashboard. The tokens it gives new panes
	 * are the next dashboard's (their keepers keep them).
	 */
	if (w->helper)
		return 0;
	int rc = rpc_server_listen_unix(w->rpc, w->sock_path, true, NULL, cause);
	if (rc < 0) {
		rpc_server_free(w->rpc);
		w->rpc = NULL;
	}
	return rc;
}

void bridge_stop(struct wrx *w)
{
	rpc_server_free(w->rpc);
	w->rpc = NULL;
	free(w->sock_path);
	w->sock_path = NULL;
}
