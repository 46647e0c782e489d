/*
 * reload.c - the dashboard reads its config again: when a config file
 * changes, on prefix R, and on `workrex config reload`.
 *
 * The directories holding the files are watched (inotify through
 * uv_fs_event): a file may not exist yet, and editors replace a file by
 * renaming a new one over it. Events are filtered by name and gathered for
 * a moment (an editor's save is several), then the files are read as at
 * start, with the same errors and warnings. A file that no longer loads
 * leaves the config as it was, and says why. What the new config changes
 * applies from then on: keys and prefix, icons, notify, scrollback at once;
 * the agent, panes and sandbox settings for the panes opened next.
 * Nothing runs while nothing changes: no timer is armed until an event.
 */
#include "../util/log.h"
#include "ui.h"

#include <stdlib.h>
#include <string.h>

#define RELOAD_SETTLE_MS 150

struct watch {
	uv_fs_event_t ev; /* ev.data = the ui */
	char *name;       /* owned: the file's name in the directory watched */
};

static void watch_closed(uv_handle_t *h)
{
	struct watch *w = (struct watch *)h;
	free(w->name);
	free(w);
}

int ui_config_reload(struct ui *ui, struct strlist *warnings, char **cause)
{
	struct config c;
	config_init(&c);
	if (config_load_all(&c, config_search_dir(ui->cwd, ui->in_repo ? ui->root : NULL),
			    ui->config_file, cause) < 0) {
		config_free(&c);
		log_msg("config reload: %s", *cause);
		return -1;
	}
	for (size_t i = 0; i < c.nwarnings; i++) {
		log_msg("config: %s", c.warnings[i]);
		if (warnings)
			strlist_add(warnings, c.warnings[i]);
	}
	config_free(&ui->cfg);
	ui->cfg = c;
	ui_apply_config(ui);
	ui_watch_config(ui); /* a directory made since (the global one) is watched from now */
	ui->full_redraw = true;
	ui_relayout(ui);
	return 0;
}

/* Reload, and say on the status line what came of it. */
static void reload_and_say(struct ui *ui)
{
	struct strlist warnings = {0};
	char *cause = NULL;
	if (ui_config_reload(ui, &warnings, &cause) < 0) {
		ui_message(ui, true, "config not reloaded, the old one stays: %s", cause);
		free(cause);
	} else if (warnings.n) {
		ui_message(ui, true, "config reloaded; %s%s", warnings.v[0],
			   warnings.n > 1 ? " (and more: workrex config check)" : "");
	} else {
		ui_message(ui, false, "config reloaded");
	}
	strlist_free(&warnings);
	trust_ask(ui); /* a changed project file asks again */
}

void ui_reload_key(struct ui *ui)
{
	reload_and_say(ui);
}

static void on_settled(uv_timer_t *t)
{
	reload_and_say(t->data);
}

static void on_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
	struct watch *w = (struct watch *)h;
	struct ui *ui = h->data;
	(void)events;
	if (status < 0 || ui->quitting || (filename && strcmp(filename, w->name) != 0))
		return;
	uv_timer_start(&ui->reload_timer, on_settled, RELOAD_SETTLE_MS, 0);
}

static void watch_dir(struct ui *ui, const char *dir, const char *name)
{
	for (size_t i = 0; i < ui->nwatches; i++) {
		struct watch *o = ui->watches[i];
		char path[4096];
		size_t n = sizeof path;
		if (uv_fs_event_getpath(&o->ev, path, &n) == 0 && !strcmp(path, dir) &&
		    !strcmp(o->name, name))
			return;
	}
	struct watch *w = xcalloc(1, sizeof *w);
	w->name = xstrdup(name);
	uv_fs_event_init(ui->loop, &w->ev);
	w->ev.data = ui;
	int rc = uv_fs_event_start(&w->ev, on_event, dir, 0);
	if (rc < 0) {
		/* Not there (no global config dir yet): prefix R still reloads. */
		uv_close((uv_handle_t *)&w->ev, watch_closed);
		return;
	}
	ui->watches = xrealloc(ui->watches, (ui->nwatches + 1) * sizeof *ui->watches);
	ui->watches[ui->nwatches++] = w;
}

/* Watch path's directory for path's name. */
static void watch_file(struct ui *ui, const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		watch_dir(ui, dir, slash + 1);
	}
	free(dir);
}

void ui_watch_config(struct ui *ui)
{
	if (ui->reload_timer.data == NULL) {
		uv_timer_init(ui->loop, &ui->reload_timer);
		ui->reload_timer.data = ui;
	}
	char *global = config_global_path();
	if (global)
		watch_file(ui, global);
	free(global);
	if (ui->config_file) {
		char *real = realpath(ui->config_file, NULL);
		watch_file(ui, real ? real : ui->config_file);
		free(real);
		return;
	}
	/* The project file: where the search starts, and the project's root. */
	const char *dir = config_search_dir(ui->cwd, ui->in_repo ? ui->root : NULL);
	watch_dir(ui, dir, ".workrex.yaml");
	if (ui->in_repo)
		watch_dir(ui, ui->root, ".workrex.yaml");
}

void ui_unwatch_config(struct ui *ui)
{
	for (size_t i = 0; i < ui->nwatches; i++) {
		uv_fs_event_stop(&ui->watches[i]->ev);
		uv_close((uv_handle_t *)&ui->watches[i]->ev, watch_closed);
	}
	free(ui->watches);
	ui->watches = NULL;
	ui->nwatches = 0;
	if (!uv_is_closing((uv_handle_t *)&ui->reload_timer))
		uv_close((uv_handle_t *)&ui->reload_timer, NULL);
}
