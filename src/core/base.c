/*
 * base.c - what every module of the core may call of the application:
 * tell its face (a message, a new layout, the pane size), find an agent
 * again on the next turn or by a reference that outlives it, notify the
 * user, read the config, run the loop until something is done.
 *
 * Nothing here calls a module of the core but the session: it is the
 * floor the others stand on (wrx.c, at the top, assembles them).
 */
#include "wrx.h"

#include "../rpc/status.h"
#include "../util/log.h"
#include "../util/util.h"
#include "run.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void wrx_message(struct wrx *w, bool error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = xvasprintf(fmt, ap);
	va_end(ap);
	if (w->hooks->message && !w->quitting)
		w->hooks->message(w->ui, error, text);
	else if (error)
		log_msg("%s", text);
	free(text);
}

void wrx_relayout(struct wrx *w)
{
	if (w->hooks->relayout)
		w->hooks->relayout(w->ui);
}

struct later {
	uv_timer_t timer;
	struct wrx *w;
	char *handle; /* owned */
	wrx_agent_fn *fn;
};

static void later_closed(uv_handle_t *h)
{
	struct later *l = h->data;
	free(l->handle);
	free(l);
}

static void later_run(uv_timer_t *t)
{
	struct later *l = t->data;
	struct wrx *w = l->w;
	struct agent *a = w->quitting || w->s == NULL ? NULL : session_find_agent(w->s, l->handle);
	if (a)
		l->fn(w, a);
	uv_close((uv_handle_t *)t, later_closed);
}

void wrx_agent_later(struct wrx *w, const char *handle, wrx_agent_fn *fn)
{
	struct later *l = xcalloc(1, sizeof *l);
	*l = (struct later){.w = w, .handle = xstrdup(handle), .fn = fn};
	uv_timer_init(w->loop, &l->timer);
	l->timer.data = l;
	uv_timer_start(&l->timer, later_run, 0, 0);
}

void wrx_pane_size(struct wrx *w, int *rows, int *cols)
{
	*rows = 24;
	*cols = 80;
	if (w->hooks->pane_size)
		w->hooks->pane_size(w->ui, rows, cols);
}

/* ---- notification ---- */

#define NOTIFY_QUIET_MS 2000

bool wrx_notify_has(const struct wrx *w, const char *how)
{
	return strcmp(w->cfg.notify, how) == 0 || strcmp(w->cfg.notify, "both") == 0;
}

static void notify_desktop(struct wrx *w, const char *title, const char *body)
{
	static bool warned;
	if (!path_has("notify-send")) {
		if (!warned)
			log_msg("notify: notify-send is not installed; desktop notifications are "
				"off");
		warned = true;
		return;
	}
	char *const argv[] = {"notify-send", "--app-name=workrex", (char *)title, (char *)body,
			      NULL};
	struct run_opts o = {.argv = argv, .detach = true};
	int rc = run_start(w->loop, &o);
	if (rc < 0)
		log_msg("notify-send: %s", uv_strerror(rc));
}

static void notify_output(void *arg, int stream, const char *p, size_t n)
{
	(void)arg, (void)stream, (void)p, (void)n;
}

static void notify_exit(void *arg, int code)
{
	(void)arg;
	if (code != 0)
		log_msg("notify.command: exit status %d", code);
}

/*
 * notify.command, for a push to a service the user runs (ntfy, a chat
 * webhook): its argv as written, with the agent, its status and what it
 * said in its environment; at most 10 s.
 */
static void notify_command(struct wrx *w, const struct agent *a, const char *what)
{
	extern char **environ;
	struct strlist env = {0};
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "WORKREX_HANDLE=", 15) && strncmp(*e, "WORKREX_STATUS=", 15) &&
		    strncmp(*e, "WORKREX_TEXT=", 13))
			strlist_add(&env, *e);
	char *vars[] = {xasprintf("WORKREX_HANDLE=%s", a->handle),
			xasprintf("WORKREX_STATUS=%s", status_word(a->status)),
			xasprintf("WORKREX_TEXT=%s", what)};
	for (size_t i = 0; i < WRX_ARRAY_LEN(vars); i++) {
		strlist_add(&env, vars[i]);
		free(vars[i]);
	}
	char **envp = strlist_argv(&env), **argv = strlist_argv(&w->cfg.notify_command);
	struct run_stream r = {.argv = argv,
			       .env = envp,
			       .timeout_ms = 10000,
			       .output = notify_output,
			       .exit = notify_exit};
	int rc = run_stream(w->loop, &r);
	if (rc < 0)
		log_msg("notify.command: %s", uv_strerror(rc));
	strlist_free(&env);
	free(envp);
	free(argv);
}

/*
 * An agent wants the user: the bell and a desktop notification, as the
 * config says, at most once in NOTIFY_QUIET_MS per agent (an agent that
 * notifies in a loop starts no process per call); its row moves up always.
 */
void wrx_attention(struct wrx *w, struct agent *a, const char *what)
{
	uint64_t now = now_ms();
	if (a->notified && now - a->notified < NOTIFY_QUIET_MS) {
		wrx_relayout(w);
		return;
	}
	a->notified = now;
	if (wrx_notify_has(w, "bell") && w->hooks->ring)
		w->hooks->ring(w->ui);
	if (wrx_notify_has(w, "desktop")) {
		char *title = xasprintf("workrex: %s", a->handle);
		notify_desktop(w, title, what);
		free(title);
	}
	if (w->cfg.notify_command.n)
		notify_command(w, a, what);
	wrx_relayout(w); /* its row moves up */
}

struct agent_ref *agent_ref_new(struct wrx *w, const struct agent *a)
{
	struct agent_ref *r = xcalloc(1, sizeof *r);
	r->w = w;
	r->handle = xstrdup(a->handle);
	return r;
}

struct agent *agent_ref_get(const struct agent_ref *r)
{
	struct wrx *w = r->w;
	return !w->quitting && w->s ? session_find_agent(w->s, r->handle) : NULL;
}

void agent_ref_free(struct agent_ref *r)
{
	free(r->handle);
	free(r);
}

int wrx_config_read(const struct wrx *w, struct config *c, char **cause)
{
	config_init(c);
	return config_load_all(c, config_search_dir(w->cwd, w->in_repo ? w->root : NULL),
			       w->config_file, cause);
}

static void run_over(uv_timer_t *t)
{
	*(bool *)t->data = true;
}

void wrx_run_until(struct wrx *w, bool (*done)(struct wrx *w), int timeout_ms)
{
	uv_timer_t t;
	bool over = false;
	uv_timer_init(w->loop, &t);
	t.data = &over;
	uv_timer_start(&t, run_over, (uint64_t)WRX_MAX(timeout_ms, 0), 0);
	while (!over && !(done && done(w)))
		uv_run(w->loop, UV_RUN_ONCE);
	uv_close((uv_handle_t *)&t, NULL);
	uv_run(w->loop, UV_RUN_NOWAIT); /* its close, before t goes */
}

const char *wrx_outcome(const char *last)
{
	return strncmp(last, "workrex: ", 9) == 0 ? last + 9 : last;
}
