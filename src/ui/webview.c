/*
 * webview.c - the web view served from the dashboard's own loop, when
 * web.listen says where (workrex web serves it without a dashboard).
 */
#include "ui.h"

#include "../config/config.h"
#include "../core/wrx.h"
#include "../git/git.h"
#include "../util/log.h"
#include "../web/server.h"

#include <stdlib.h>

struct ui_web {
	struct repo *repo; /* the project's, for its agents' records */
	struct web_opts o;
	struct web *web;
};

void ui_web_start(struct ui *ui)
{
	struct wrx *w = ui->w;
	char *cause = NULL;
	if (w->cfg.web_listen == NULL || !w->in_repo || ui->web)
		return;
	struct ui_web *v = xcalloc(1, sizeof *v);
	if (repo_open(w->root, &v->repo, &cause) < 0 ||
	    web_opts_read(&w->cfg, NULL, false, &v->o, &cause) < 0 ||
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
