/*
 * bridge.c - the dashboard's end of the RPC bridge: what agents may ask,
 * and how their status reaches the screen and the user.
 *
 * Every pane gets its own token at spawn (WORKREX_RPC_TOKEN, with
 * WORKREX_RPC_SOCKET naming the control socket); the server tells us which
 * pane called, so a request always acts for the caller's own agent: its
 * status, its title, its notification, a merge or close of itself. A token
 * dies with its pane. spawn_agent, merge and close run the same `workrex`
 * commands as the keys do, as child processes, and reply when they end.
 *
 * Status ages ("3m") and the silence of a working agent change with time
 * alone; one tick timer is armed for the nearest such change, and only
 * while some agent has a status, so an idle dashboard has no timers.
 */
#include "../rpc/control.h"
#include "../rpc/server.h"
#include "../util/log.h"
#include "ui.h"

#include <errno.h>
#include <stdlib.h>

#define WRX_SPAWNS_PER_MINUTE 5
#include <string.h>

/* ---- notification ---- */

static void notify_desktop(struct ui *ui, const char *title, const char *body)
{
	static bool warned;
	if (!path_has("notify-send")) {
		if (!warned)
			log_msg("notify: notify-send is not installed; desktop notifications are off");
		warned = true;
		return;
	}
	struct strlist argv = {0};
	strlist_add(&argv, "notify-send");
	strlist_add(&argv, "--app-name=workrex");
	strlist_add(&argv, title);
	strlist_add(&argv, body);
	ui_run_quiet(ui, &argv);
	strlist_free(&argv);
}

void bridge_attention(struct ui *ui, struct agent *a, const char *what)
{
	const char *how = ui->cfg.notify;
	bool bell = strcmp(how, "bell") == 0 || strcmp(how, "both") == 0;
	bool desktop = strcmp(how, "desktop") == 0 || strcmp(how, "both") == 0;
	if (bell)
		ui_tty_write(ui, "\a", 1);
	if (desktop) {
		char *title = xasprintf("workrex: %s", a->handle);
		notify_desktop(ui, title, what);
		free(title);
	}
	ui_relayout(ui); /* its row moves up */
}

/* ---- the clock: status ages and silence ---- */

void bridge_age(const struct agent *a, uint64_t now, char *out, size_t len)
{
	if (a->status == WRX_STATUS_NONE) {
		*out = '\0';
		return;
	}
	uint64_t s = now > a->status_since ? (now - a->status_since) / 1000 : 0;
	if (s < 60)
		snprintf(out, len, "<1m");
	else if (s < 3600)
		snprintf(out, len, "%um", (unsigned)(s / 60));
	else if (s < 86400)
		snprintf(out, len, "%uh", (unsigned)(s / 3600));
	else
		snprintf(out, len, "%ud", (unsigned)(s / 86400));
}

static void on_tick(uv_timer_t *t)
{
	ui_dirty(t->data); /* the frame re-arms the tick */
}

void bridge_schedule_tick(struct ui *ui)
{
	if (ui->quitting)
		return;
	uint64_t now = now_ms(), next = UINT64_MAX;
	for (int i = 0; i < session_agent_count(ui->s); i++) {
		struct agent *a = session_agent(ui->s, i);
		if (a->status == WRX_STATUS_NONE)
			continue;
		/* The age label changes at each whole minute (hours: each hour). */
		uint64_t age = now - WRX_MIN(now, a->status_since);
		uint64_t step = age < 3600000 ? 60000 : 3600000;
		next = WRX_MIN(next, a->status_since + (age / step + 1) * step);
		if (a->status == WRX_STATUS_WORKING && !session_interrupted(ui->s, a, now)) {
			struct wpane *wp = session_agent_pane(ui->s, a);
			uint64_t quiet = WRX_MAX(wp ? wp->last_output : 0, a->status_since);
			next = WRX_MIN(next, quiet + WRX_SILENCE_MS);
		}
	}
	if (next == UINT64_MAX) {
		uv_timer_stop(&ui->tick_timer);
		return;
	}
	uv_timer_start(&ui->tick_timer, on_tick, next > now ? next - now + 5 : 5, 0);
}

/* ---- requests ---- */

static struct wpane *caller_pane(struct ui *ui, struct rpc_call *call)
{
	return session_find_pane(ui->s, rpc_call_pane(call));
}

/* A command run for a call: its outcome is the reply. */
static void call_cli_done(struct ui *ui, int status, const char *last, void *arg)
{
	struct rpc_call *call = arg;
	if (!ui->quitting && *last)
		ui_message(ui, status != 0, "%s", last);
	if (status == 0) {
		json_object *r = rpc_reply("ok");
		if (*last)
			json_object_object_add(r, "message", json_object_new_string(last));
		rpc_call_finish(call, r);
	} else {
		rpc_call_finish(call, rpc_error("%s", *last ? last : "failed"));
	}
}

/* merge and close act on the caller's own agent only. */
static struct agent *own_agent(struct ui *ui, struct rpc_call *call, struct agent *caller,
			       const char *handle, const char *verb)
{
	if (handle && strcmp(handle, caller->handle) != 0) {
		log_msg("rpc: pane %d (%s) asked to %s '%s': refused", rpc_call_pane(call),
			caller->handle, verb, handle);
		rpc_call_finish(call, rpc_error("an agent may only %s itself, not '%s'", verb,
						handle));
		return NULL;
	}
	if (!caller->worktree) {
		rpc_call_finish(call, rpc_error("%s: '%s' is the main worktree", verb,
						caller->handle));
		return NULL;
	}
	return caller;
}

/*
 * An agent's own merge: nothing happens before the user says yes in the
 * dashboard, to a question that shows what the merge brings (merge
 * --preview: its diffstat, and a warning when it changes what the host
 * runs: .workrex.yaml, .workrex/, hooks). One question per agent at a
 * time, and never over a question the user is answering already: an agent
 * cannot bury the user in prompts or swap the one they are typing into.
 */
struct merge_ask {
	struct rpc_call *call;
	char *handle; /* owned: the agent may be forgotten while the user thinks */
	char *args[8];
	int nargs;
};

static void merge_ask_free(struct ui *ui, struct merge_ask *m)
{
	struct agent *a = ui->s ? session_find_agent(ui->s, m->handle) : NULL;
	if (a)
		a->merge_asked = false;
	free(m->handle);
	free(m);
}

static void merge_answer(struct ui *ui, const char *answer, void *arg)
{
	struct merge_ask *m = arg;
	if (answer && strcmp(answer, "y") == 0) {
		agents_run_cli_then(ui, m->args, call_cli_done, m->call);
	} else {
		log_msg("rpc: %s: the user declined its merge", m->handle);
		rpc_call_finish(m->call, rpc_error("the user declined the merge"));
	}
	merge_ask_free(ui, m);
}

static void merge_previewed(struct ui *ui, int status, const char *last, void *arg)
{
	struct merge_ask *m = arg;
	if (status != 0 || ui->quitting) {
		rpc_call_finish(m->call, rpc_error("%s", *last ? last : "merge: no preview"));
		merge_ask_free(ui, m);
		return;
	}
	if (ui->prompt) {
		rpc_call_finish(m->call, rpc_error("the user is answering another question; ask again "
						   "later"));
		merge_ask_free(ui, m);
		return;
	}
	struct agent *a = session_find_agent(ui->s, m->handle);
	if (a == NULL) {
		rpc_call_finish(m->call, rpc_error("the agent is gone"));
		merge_ask_free(ui, m);
		return;
	}
	char *q = xasprintf("%s asks to merge %s - allow? (y/n)", m->handle, last);
	ui_prompt(ui, q, true, merge_answer, m);
	free(q);
	bridge_attention(ui, a, "asks to merge");
}

static void merge_request(struct ui *ui, struct rpc_call *call, struct agent *a,
			  const struct rpc_req *req)
{
	if (a->merge_asked || ui->prompt) {
		rpc_call_finish(call, rpc_error(a->merge_asked ? "a merge of this agent already "
								 "waits for the user"
							       : "the user is answering another "
								 "question; ask again later"));
		return;
	}
	struct merge_ask *m = xcalloc(1, sizeof *m);
	m->call = call;
	m->handle = xstrdup(a->handle);
	a->merge_asked = true;
	/* Hooks off: the sandbox could have written the project's pre_merge. */
	m->args[m->nargs++] = "merge";
	m->args[m->nargs++] = "--no-verify";
	if (req->rebase)
		m->args[m->nargs++] = "--rebase";
	if (req->squash)
		m->args[m->nargs++] = "--squash";
	if (req->keep)
		m->args[m->nargs++] = "-k";
	m->args[m->nargs++] = "--";
	m->args[m->nargs++] = m->handle;
	char *preview[] = {"merge", "--preview", "--", m->handle, NULL};
	agents_run_cli_then(ui, preview, merge_previewed, m);
}

static void on_request(struct rpc_call *call, const struct rpc_req *req, void *data)
{
	struct ui *ui = data;
	struct wpane *wp = caller_pane(ui, call);
	if (wp == NULL) {
		rpc_call_finish(call, rpc_error("this pane is gone"));
		return;
	}
	struct agent *a = wp->agent;
	switch (req->type) {
	case RPC_HEARTBEAT:
		break;
	case RPC_SET_STATUS:
	{
		enum wrx_status st = WRX_STATUS_NONE; /* rpc_decode checked the word */
		status_parse(req->status, &st);
		session_set_status(ui->s, a, st);
	}
		bridge_schedule_tick(ui);
		break;
	case RPC_SET_TITLE:
		session_set_title(ui->s, a, req->title);
		break;
	case RPC_NOTIFY:
		session_notify(ui->s, a, req->text);
		ui_message(ui, false, "%s: %s", a->handle, req->text && *req->text ? req->text
										: "notification");
		break;
	case RPC_SPAWN_AGENT: {
		if (!ui->in_repo) {
			rpc_call_finish(call, rpc_error("spawn_agent: %s is not a git repository",
							ui->root));
			return;
		}
		if (req->branch[0] == '-' || req->branch[0] == '\0') {
			rpc_call_finish(call, rpc_error("spawn_agent: '%s' is not a branch name",
							req->branch));
			return;
		}
		uint64_t now = now_ms();
		if (now - a->spawn_window >= 60000) {
			a->spawn_window = now;
			a->spawns = 0;
		}
		if (++a->spawns > WRX_SPAWNS_PER_MINUTE) {
			log_msg("rpc: %s: spawn_agent refused: more than %d in a minute", a->handle,
				WRX_SPAWNS_PER_MINUTE);
			rpc_call_finish(call, rpc_error("spawn_agent: at most %d agents a minute",
							WRX_SPAWNS_PER_MINUTE));
			return;
		}
		char *args[9];
		int n = 0;
		args[n++] = "add";
		/* From a sandbox: sandboxed too, a new branch from the base, post_create inside. */
		if (wp->sandboxed)
			args[n++] = "--from-sandbox";
		if (req->prompt && *req->prompt) {
			args[n++] = "-p";
			args[n++] = (char *)req->prompt;
		}
		if (req->background)
			args[n++] = "-b";
		args[n++] = "--";
		args[n++] = (char *)req->branch;
		args[n] = NULL;
		agents_run_cli_then(ui, args, call_cli_done, call);
		return;
	}
	case RPC_MERGE: {
		struct agent *m = own_agent(ui, call, a, req->handle, "merge");
		if (m != NULL)
			merge_request(ui, call, m, req);
		return;
	}
	case RPC_CLOSE: {
		struct agent *m = own_agent(ui, call, a, req->handle, "close");
		if (m == NULL)
			return;
		/* Answer first: closing ends the caller's own connection. */
		rpc_call_finish(call, rpc_reply("ok"));
		struct wpane *p;
		while ((p = session_agent_pane(ui->s, m)) != NULL)
			session_close_pane(ui->s, p);
		ui_relayout(ui);
		return;
	}
	case RPC_EXEC:
	case RPC_CLIPBOARD_READ:
		rpc_call_finish(call, rpc_error("%s is not available in this dashboard yet",
						rpc_type_name(req->type)));
		return;
	}
	rpc_call_finish(call, rpc_reply("ok"));
}

static const struct rpc_ops ops = {
	.control = agents_control,
	.request = on_request,
};

/* ---- panes ---- */

char **bridge_pane_env(struct ui *ui, struct wpane *wp)
{
	char tok[RPC_TOKEN_LEN + 1];
	if (ui->rpc == NULL || rpc_server_token_add(ui->rpc, wp->id, wp->agent->handle, tok) < 0)
		return NULL;
	char **env = xcalloc(3, sizeof *env);
	env[0] = xasprintf("WORKREX_RPC_SOCKET=%s", ui->sock_path);
	env[1] = xasprintf("WORKREX_RPC_TOKEN=%s", tok);
	explicit_bzero(tok, sizeof tok);
	return env;
}

void bridge_pane_gone(struct ui *ui, struct wpane *wp)
{
	if (ui->rpc)
		rpc_server_token_revoke(ui->rpc, wp->id);
}

int bridge_start(struct ui *ui, char **cause)
{
	ui->sock_path = control_path(ui->root, cause);
	if (ui->sock_path == NULL)
		return -EINVAL;
	ui->rpc = rpc_server_new(ui->loop, &ops, ui);
	int rc = rpc_server_listen_unix(ui->rpc, ui->sock_path, true, NULL, cause);
	if (rc < 0) {
		rpc_server_free(ui->rpc);
		ui->rpc = NULL;
	}
	return rc;
}

void bridge_stop(struct ui *ui)
{
	rpc_server_free(ui->rpc);
	ui->rpc = NULL;
	free(ui->sock_path);
	ui->sock_path = NULL;
}
