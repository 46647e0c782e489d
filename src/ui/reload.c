/*
 * reload.c - the dashboard reads its config again: when a config file
 * changes, on prefix R, and on `workrex config reload`.
 *
 * The directories holding the files are watched (inotify through
 * uv_fs_event): a file may not exist yet, and editors replace a file by
 * renaming a new one over it. Events are filtered by name and gathered for
 * a moment (an editor's save is several), then the files are read as at
 * start, with the same errors and warnings. A file that no longer loads
 * leaves the config as it was, and says why. A file written again with the
 * same bytes (git does that) is no change. What the new config changes
 * applies from then on: keys and prefix, icons, notify, scrollback at once;
 * the agent, panes and sandbox settings for the panes opened next.
 * Nothing runs while nothing changes: no timer is armed until an event.
 */
#include "../core/actions.h"
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

/* What the config files hold now, each with its path: equal means unchanged. */
static struct buf fingerprint(struct ui *ui)
{
	struct buf b = {0};
	char *paths[2] = {config_global_path(), NULL};
	paths[1] = ui->w->config_file ? xstrdup(ui->w->config_file)
				      : config_project_path(config_search_dir(
						ui->w->cwd, ui->w->in_repo ? ui->w->root : NULL));
	for (size_t i = 0; i < 2; i++) {
		char *text = NULL, *cause = NULL;
		if (paths[i] && file_read(paths[i], 1u << 20, &text, &cause) < 0)
			free(cause);
		buf_addf(&b, "%s\n%s", paths[i] ? paths[i] : "-", text ? text : "");
		buf_addch(&b, '\0');
		free(text);
		free(paths[i]);
	}
	return b;
}

/* Is now what was read last? It is what was read last from here on. */
static bool unchanged(struct ui *ui, struct buf now)
{
	bool same = ui->config_seen.len == now.len &&
		    (now.len == 0 || !memcmp(ui->config_seen.data, now.data, now.len));
	buf_free(&ui->config_seen);
	ui->config_seen = now;
	return same;
}

void ui_config_changed(struct ui *ui)
{
	unchanged(ui, fingerprint(ui)); /* what was read is what is seen */
	ui_apply_config(ui);
	ui_watch_config(ui); /* a directory made since (the global one) is watched from now */
	ui->frame.full_redraw = true;
	ui_relayout(ui);
}

/* Reload (the action says on the status line what came of it); ask to trust the file when ask. */
static void reload_and_say(struct ui *ui, bool ask)
{
	actions_call(ui->w, "reload", NULL, DOOR_UI, 0, NULL, NULL);
	if (ask)
		trust_ask(ui); /* a changed project file asks again */
}

void ui_reload_key(struct ui *ui)
{
	reload_and_say(ui, true);
}

static void on_settled(uv_timer_t *t)
{
	struct ui *ui = t->data;
	if (!unchanged(ui, fingerprint(ui)))
		reload_and_say(ui, true);
}

void ui_reload_pending(struct ui *ui)
{
	if (ui->timer.reload.data && uv_is_active((uv_handle_t *)&ui->timer.reload)) {
		uv_timer_stop(&ui->timer.reload);
		if (!unchanged(ui, fingerprint(ui)))
			reload_and_say(ui, false);
	}
}

static void on_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
	struct watch *w = (struct watch *)h;
	struct ui *ui = h->data;
	if (status < 0 || ui->quitting || (filename && strcmp(filename, w->name) != 0))
		return;
	uv_timer_start(&ui->timer.reload, on_settled, RELOAD_SETTLE_MS, 0);
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
	uv_fs_event_init(ui->w->loop, &w->ev);
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
	if (ui->timer.reload.data == NULL) {
		uv_timer_init(ui->w->loop, &ui->timer.reload);
		ui->timer.reload.data = ui;
		unchanged(ui, fingerprint(ui)); /* what the start read */
	}
	char *global = config_global_path();
	if (global)
		watch_file(ui, global);
	free(global);
	if (ui->w->config_file) {
		char *real = realpath(ui->w->config_file, NULL);
		watch_file(ui, real ? real : ui->w->config_file);
		free(real);
		return;
	}
	/* The project file: where the search starts, and the project's root. */
	const char *dir = config_search_dir(ui->w->cwd, ui->w->in_repo ? ui->w->root : NULL);
	watch_dir(ui, dir, ".workrex.yaml");
	if (ui->w->in_repo)
		watch_dir(ui, ui->w->root, ".workrex.yaml");
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
	if (!uv_is_closing((uv_handle_t *)&ui->timer.reload))
		uv_close((uv_handle_t *)&ui->timer.reload, NULL);
	buf_free(&ui->config_seen);
}
