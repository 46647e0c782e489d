/*
 * cmd_control.c - open, close, send, capture and wait: the commands that
 * act on a running dashboard of the project through its control socket
 * (rpc/control.h). Each is one request; the dashboard's actions table
 * (core/actions.c) does the verb. No git here.
 */
#include "cmd.h"

#include "../rpc/control.h"
#include "../rpc/status.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int no_dashboard(const char *what)
{
	return cmd_fail(what,
			"no dashboard is running for this project (start one with `workrex`)");
}

/* Ask the dashboard (req taken) and print its reply's "data". */
static int print_data(struct cmd_ctx *ctx, const char *what, json_object *req)
{
	json_object *r = NULL;
	int rc = cmd_dashboard(ctx, what, req, &r);
	json_object_put(req);
	if (rc == -ENOENT)
		return no_dashboard(what);
	if (rc < 0)
		return 1;
	json_object *d;
	if (json_object_object_get_ex(r, "data", &d))
		fputs(json_object_get_string(d), stdout);
	json_object_put(r);
	return 0;
}

int cmd_open(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	bool cont = cmd_given(ctx, "continue"), background = cmd_given(ctx, "background");
	struct agent_rec a;
	int rc = cmd_pane_agent(ctx, "open", cmd_arg(ctx, 0), &a);
	if (rc)
		return rc;
	/* Opened by hand or by its group's queue, it waits no more. */
	if (a.queued && agent_unqueue(ctx->repo, a.handle) == 0)
		a.queued = false;
	json_object *req = cmd_agent_request("open", &a);
	json_object_object_add(req, "focus", json_object_new_boolean(!background));
	json_object_object_add(req, "continue", json_object_new_boolean(cont));
	rc = cmd_dashboard(ctx, "open", req, NULL);
	json_object_put(req);
	agent_rec_free(&a);
	return rc == -ENOENT ? no_dashboard("open") : rc < 0 ? 1 : 0;
}

int cmd_close(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	struct agent_rec a;
	int rc = cmd_pane_agent(ctx, "close", cmd_arg(ctx, 0), &a);
	if (rc)
		return rc;
	bool dashboard = cmd_dashboard_runs(ctx);
	rc = cmd_notify(ctx, "close", "close", &a, false);
	/* An outcome to read (the dashboard's : line shows it), not "close: done". */
	if (rc == 0)
		printf("closed %s: its panes ended, its %s (workrex open %s)\n", a.handle,
		       a.adopted ? "session goes on" : "worktree stays", a.handle);
	/* Its server idle now: stopped, when it says how (a dashboard does it itself). */
	if (rc == 0 && a.remote && !dashboard)
		cmd_remote_idle(ctx, a.remote);
	agent_rec_free(&a);
	return rc == -ENOENT ? no_dashboard("close") : rc < 0 ? 1 : 0;
}

int cmd_send(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc < 2 || argc > 3)
		return cmd_usage(ctx->self);
	struct agent_rec a;
	int rc = cmd_pane_agent(ctx, "send", argv[1], &a);
	if (rc)
		return rc;
	char *text = NULL;
	if (argc == 3) {
		text = xstrdup(argv[2]);
	} else {
		struct buf b = {0};
		char tmp[4096];
		size_t n;
		while ((n = fread(tmp, 1, sizeof tmp, stdin)) > 0)
			buf_add(&b, tmp, n);
		while (b.len && b.data[b.len - 1] == '\n')
			b.data[--b.len] = '\0';
		text = b.data ? b.data : xstrdup("");
	}
	json_object *req = cmd_agent_request("send", &a);
	json_object_object_add(req, "text", json_object_new_string(text));
	json_object_object_add(req, "enter", json_object_new_boolean(1));
	rc = cmd_dashboard(ctx, "send", req, NULL);
	json_object_put(req);
	free(text);
	agent_rec_free(&a);
	return rc == -ENOENT ? no_dashboard("send") : rc < 0 ? 1 : 0;
}

int cmd_send_keys(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	struct agent_rec a;
	int rc = cmd_pane_agent(ctx, "send-keys", cmd_arg(ctx, 0), &a);
	if (rc)
		return rc;
	/* One request a key, in order: each pressed before the next is asked. */
	for (int i = 1; i < cmd_nargs(ctx) && rc == 0; i++) {
		json_object *req = cmd_agent_request("send", &a);
		json_object_object_add(req, "key", json_object_new_string(cmd_arg(ctx, i)));
		rc = cmd_dashboard(ctx, "send-keys", req, NULL);
		json_object_put(req);
	}
	agent_rec_free(&a);
	return rc == -ENOENT ? no_dashboard("send-keys") : rc < 0 ? 1 : 0;
}

int cmd_answer(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	const char *id = cmd_arg(ctx, 0), *word = cmd_arg(ctx, 1);
	char *end;
	long n = strtol(id, &end, 10);
	bool yes = !strcmp(word, "yes") || !strcmp(word, "y");
	if (*end || n <= 0 || (!yes && strcmp(word, "no") && strcmp(word, "n")))
		return cmd_usage(ctx->self);
	int rc = cmd_open_repo(ctx, "answer");
	if (rc)
		return rc;
	json_object *req = json_object_new_object();
	json_object_object_add(req, "cmd", json_object_new_string("answer"));
	json_object_object_add(req, "id", json_object_new_int64(n));
	json_object_object_add(req, "yes", json_object_new_boolean(yes));
	rc = cmd_dashboard(ctx, "answer", req, NULL);
	json_object_put(req);
	return rc == -ENOENT ? no_dashboard("answer") : rc < 0 ? 1 : 0;
}

int cmd_paste_image(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	struct agent_rec a;
	int rc = cmd_which_agent(ctx, "paste-image", cmd_arg(ctx, 0), &a);
	if (rc)
		return rc;
	json_object *req = cmd_agent_request("paste-image", &a), *r = NULL, *v;
	rc = cmd_dashboard(ctx, "paste-image", req, &r);
	json_object_put(req);
	agent_rec_free(&a);
	if (rc == 0 && json_object_object_get_ex(r, "path", &v))
		printf("%s\n", json_object_get_string(v));
	json_object_put(r);
	return rc == -ENOENT ? no_dashboard("paste-image") : rc < 0 ? 1 : 0;
}

int cmd_capture(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	const char *n = cmd_value(ctx, "lines");
	int lines = n ? atoi(n) : -1;
	bool colour = cmd_given(ctx, "escapes"), screen = cmd_given(ctx, "screen");
	struct agent_rec a;
	int rc = cmd_pane_agent(ctx, "capture", cmd_arg(ctx, 0), &a);
	if (rc)
		return rc;
	json_object *req = cmd_agent_request("capture", &a);
	json_object_object_add(req, "lines", json_object_new_int(lines));
	json_object_object_add(req, "colour", json_object_new_boolean(colour));
	json_object_object_add(req, "screen", json_object_new_boolean(screen));
	agent_rec_free(&a);
	return print_data(ctx, "capture", req);
}

int cmd_egress(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	struct agent_rec a;
	int rc = cmd_which_agent(ctx, "egress", cmd_arg(ctx, 0), &a);
	if (rc)
		return rc;
	json_object *req = cmd_agent_request("egress", &a);
	agent_rec_free(&a);
	return print_data(ctx, "egress", req);
}

/*
 * allow-domain: the running dashboard asks the user and does it; with none,
 * asked here (or -y), then done here.
 */
int cmd_allow_domain(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	const char *host = cmd_arg(ctx, 0);
	bool yes = cmd_given(ctx, "yes");
	if (cmd_dashboard_runs(ctx)) {
		json_object *req = json_object_new_object();
		json_object_object_add(req, "cmd", json_object_new_string("allow-domain"));
		json_object_object_add(req, "host", json_object_new_string(host));
		fprintf(stderr, "workrex: allow-domain: the dashboard asks you\n");
		int rc = cmd_dashboard(ctx, "allow-domain", req, NULL);
		json_object_put(req);
		return rc < 0 ? 1 : 0;
	}
	char *path = config_global_path(), *cause = NULL;
	if (!yes) {
		if (!isatty(STDIN_FILENO)) {
			free(path);
			return cmd_fail("allow-domain", "no terminal to ask on: pass -y");
		}
		fprintf(stderr, "add %s to sandbox.network.allowed_domains in %s? [y/N] ", host,
			path);
		char line[16] = "";
		if (fgets(line, sizeof line, stdin) == NULL || (line[0] != 'y' && line[0] != 'Y')) {
			free(path);
			return cmd_fail("allow-domain", "not added");
		}
	}
	int rc = config_allow_domain(path, host, &cause) < 0 ? cmd_fail("allow-domain", "%s", cause)
							     : 0;
	if (rc == 0)
		printf("%s is in sandbox.network.allowed_domains (%s); agents running now take "
		       "it when a dashboard next runs (workrex), new ones at once\n",
		       host, path);
	free(cause);
	free(path);
	return rc;
}

/* Block until the agents reach a status (polling the dashboard). */
int cmd_wait(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	const char *want = cmd_value(ctx, "status") ? cmd_value(ctx, "status") : STATUS_DONE;
	const char *t = cmd_value(ctx, "timeout");
	double timeout = t ? atof(t) : -1;
	bool any = cmd_given(ctx, "any");
	int n = cmd_nargs(ctx);
	char **names = xcalloc((size_t)n + 1, sizeof *names);
	for (int i = 0; i < n; i++)
		names[i] = (char *)cmd_arg(ctx, i);
	enum wrx_status want_st;
	if (status_parse_reached(want, &want_st) < 0) {
		free(names);
		return cmd_usage(ctx->self);
	}
	/* Unknown agents never reach a status: say so instead of waiting forever. */
	for (int k = 0; k < n; k++) {
		struct agent_rec a;
		int wrc = cmd_which_agent(ctx, "wait", names[k], &a);
		agent_rec_free(&a);
		if (wrc) {
			free(names);
			return wrc;
		}
	}
	uint64_t deadline = timeout >= 0 ? now_ms() + (uint64_t)(timeout * 1000) : UINT64_MAX;
	int rc = 1;
	for (;;) {
		json_object *r, *agents;
		int drc = cmd_live_agents(ctx, "wait", &r, &agents);
		if (drc == -ENOENT) {
			rc = no_dashboard("wait");
			break;
		}
		if (drc < 0)
			break;
		/* A failed agent will not reach anything else: said at once, not waited on. */
		int reached = 0, failed = 0;
		char *gone = NULL;
		for (int k = 0; k < n; k++) {
			json_object *st = cmd_live_agent(agents, names[k], "status");
			const char *s = st ? json_object_get_string(st) : "";
			reached += !strcmp(s, want);
			if (strcmp(want, STATUS_FAILED) && !strcmp(s, STATUS_FAILED) &&
			    failed++ == 0) {
				json_object *f = cmd_live_agent(agents, names[k], "failure");
				gone = f ? xasprintf("%s failed (%s)", names[k],
						     json_object_get_string(f))
					 : xasprintf("%s failed", names[k]);
			}
		}
		json_object_put(r);
		if (reached == n || (any && reached > 0)) {
			free(gone);
			rc = 0;
			break;
		}
		if (failed && (!any || reached + failed == n)) {
			rc = cmd_fail("wait", "%s: it will not be %s", gone, want);
			free(gone);
			break;
		}
		free(gone);
		if (now_ms() >= deadline) {
			rc = cmd_fail("wait", "timed out before %s reached '%s'",
				      n == 1 ? names[0] : "the agents", want);
			break;
		}
		struct timespec ts = {0, 200 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	free(names);
	return rc;
}
