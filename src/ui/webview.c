/*
 * webview.c - the web view served from the dashboard's own loop, when
 * web.listen says where (workrex web serves it without a dashboard).
 */
#include "ui.h"

#include "../config/config.h"
#include "../core/session.h"
#include "../core/wrx.h"
#include "../git/git.h"
#include "../util/log.h"
#include "../web/server.h"

#include <stdlib.h>
#include <string.h>

struct ui_web {
	struct repo *repo; /* the project's, for its agents' records */
	struct web_opts o;
	struct web_asks asks;
	struct web *web;
};

/* The questions waiting for the user, for the page: [{id, agent, question}]. */
static json_object *asks_list(void *arg)
{
	struct ui *ui = arg;
	json_object *arr = json_object_new_array();
	for (struct asked *q = ui->asked; q; q = q->next) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_int64(q->id));
		json_object_object_add(o, "agent", json_object_new_string(q->agent));
		json_object_object_add(o, "question", json_object_new_string(q->question));
		json_object_array_add(arr, o);
	}
	return arr;
}

static int asks_answer(void *arg, unsigned id, bool yes)
{
	return ui_asked_answer(arg, id, yes);
}

/*
 * The questions changed: this dashboard's page is told, and each agent's
 * keepers are given that agent's (keep_asks) for a web view of its own.
 */
void ui_web_asked(struct ui *ui)
{
	if (ui->web)
		web_asks_changed(ui->web->web);
	if (ui->w->s == NULL)
		return;
	for (int i = 0; i < session_agent_count(ui->w->s); i++) {
		struct agent *a = session_agent(ui->w->s, i);
		json_object *list = json_object_new_array();
		for (struct asked *q = ui->asked; q; q = q->next) {
			if (strcmp(q->agent, a->handle) != 0)
				continue;
			json_object *o = json_object_new_object();
			json_object_object_add(o, "id", json_object_new_int64(q->id));
			json_object_object_add(o, "question", json_object_new_string(q->question));
			json_object_array_add(list, o);
		}
		keep_asks(ui->w, a->handle, list);
	}
}

void ui_web_start(struct ui *ui)
{
	struct wrx *w = ui->w;
	char *cause = NULL;
	if (w->cfg.web_listen == NULL || !w->in_repo || ui->web)
		return;
	struct ui_web *v = xcalloc(1, sizeof *v);
	v->asks = (struct web_asks){.list = asks_list, .answer = asks_answer, .arg = ui};
	if (repo_open(w->root, &v->repo, &cause) < 0 ||
	    web_opts_read(&w->cfg, NULL, false, &v->o, &cause) < 0 || !(v->o.asks = &v->asks) ||
	    (v->web = web_start(w->loop, v->repo, &v->o, &cause)) == NULL) {
		ui_message(ui, true, "web: %s", cause);
		log_msg("web: %s", cause);
		free(cause);
		web_opts_free(&v->o);
		repo_free(v->repo);
		free(v);
		return;
	}
	ui->web = v;
	ui_message(ui, false,
		   "web: %s://%s:%d/ serves the agents (workrex web --link pairs a browser)",
		   v->o.tls_cert ? "https" : "http", v->o.host, web_port(v->web));
}

void ui_web_stop(struct ui *ui)
{
	struct ui_web *v = ui->web;
	if (v == NULL)
		return;
	web_stop(v->web);
	web_opts_free(&v->o);
	repo_free(v->repo);
	free(v);
	ui->web = NULL;
}
