/*
 * wrx.c - the application's life: open a project, start serving it, and
 * the session's hooks, which the core answers itself (tokens, sandboxes,
 * notifications) before it tells its face (wrx.h).
 */
#include "../keeper/proto.h"
#include "wrx.h"

#include "../git/git.h"
#include "../util/log.h"
#include "../util/util.h"
#include "actions.h"
#include "clipboard.h"
#include "run.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the session's hooks ---- */

static void hook_changed(void *data)
{
	struct wrx *w = data;
	if (w->hooks->changed)
		w->hooks->changed(w->ui);
}

static void hook_pane_gone(void *data, struct wpane *wp)
{
	struct wrx *w = data;
	bridge_pane_gone(w, wp);
	runner_pane_gone(w, wp);
	if (wp->agent->git.group && session_agent_panes(w->s, wp->agent) <= 1)
		queue_run(w, wp->agent->git.group); /* its last pane: a slot, maybe */
	if (w->hooks->pane_gone)
		w->hooks->pane_gone(w->ui, wp);
	wrx_relayout(w);
}

static void hook_bell(void *data, struct wpane *wp)
{
	struct wrx *w = data;
	if (wp == session_focus(w->s))
		return;
	wp->bell = true;
	wp->agent->bell = true;
	wp->agent->attention = true;
	wrx_relayout(w);
	if (wrx_notify_has(w, "bell") && w->hooks->ring)
		w->hooks->ring(w->ui);
}

static void hook_clipboard(void *data, struct wpane *wp, const char *text, size_t len)
{
	clipboard_pane_write(data, wp, text, len);
}

static void hook_attention(void *data, struct agent *a, const char *what)
{
	wrx_attention(data, a, what);
}

static void hook_agent_failed(void *data, struct agent *a)
{
	resume_failed(data, a);
}

static void hook_status(void *data, struct agent *a)
{
	keep_meta(data, a); /* a status is state: its keeper and its mark hold it */
	checks_status(data, a);
	lander_status(data, a);
	if (a->git.group)
		queue_run(data, a->git.group);
}

static char **hook_pane_env(void *data, struct wpane *wp)
{
	return bridge_pane_env(data, wp);
}

static int hook_pane_argv(void *data, struct wpane *wp, char *const *argv, char *const *env,
			  char ***out, char **cause)
{
	return sandbox_pane_argv(data, wp, argv, env, out, cause);
}

static int hook_pane_start(void *data, struct wpane *wp, const struct pty_spawn *sp, char **cause)
{
	return runner_pane_start(data, wp, sp, cause);
}

/* The user closes the pane: its keeper, its program and its container end. */
static void hook_pane_closing(void *data, struct wpane *wp)
{
	runner_pane_closing(data, wp);
}

static void hook_place(void *data)
{
	struct wrx *w = data;
	if (w->hooks->place)
		w->hooks->place(w->ui);
}

static const struct session_hooks session_hooks = {
	.place = hook_place,
	.pane_start = hook_pane_start,
	.pane_closing = hook_pane_closing,
	.changed = hook_changed,
	.pane_gone = hook_pane_gone,
	.bell = hook_bell,
	.clipboard = hook_clipboard,
	.attention = hook_attention,
	.agent_failed = hook_agent_failed,
	.status = hook_status,
	.pane_env = hook_pane_env,
	.pane_argv = hook_pane_argv,
};

/* ---- life ---- */

static void free_identity(struct wrx *w)
{
	free(w->cwd);
	free(w->root);
	free(w->config_file);
	free(w->self_exe);
	free(w->gitdir);
	free(w->git_name);
	free(w->git_email);
	w->cwd = w->root = w->config_file = w->self_exe = NULL;
	w->gitdir = w->git_name = w->git_email = NULL;
}

int wrx_open(struct wrx *w, uv_loop_t *loop, const struct wrx_opts *o,
	     const struct wrx_hooks *hooks, void *ui, char **cause)
{
	static const struct wrx_hooks none;
	memset(w, 0, sizeof *w);
	w->loop = loop;
	w->hooks = hooks ? hooks : &none;
	w->ui = ui;
	w->cwd = o->cwd ? xstrdup(o->cwd) : getcwd(NULL, 0);
	if (w->cwd == NULL) {
		*cause = xasprintf("cannot read the current directory: %s", strerror(errno));
		return -errno;
	}
	/* A command's core reads the repository its command opened: git opened once. */
	struct repo *repo = o->repo;
	char *why = NULL;
	if (repo || repo_open(w->cwd, &repo, &why) == 0) {
		w->root = xstrdup(repo_root(repo));
		w->gitdir = xstrdup(repo_gitdir(repo));
		w->git_name = repo_config_get(repo, "user.name");
		w->git_email = repo_config_get(repo, "user.email");
		w->in_repo = true;
		w->repo = o->repo;
		if (repo != o->repo)
			repo_free(repo);
	} else {
		free(why);
		w->root = xstrdup(w->cwd);
	}
	w->config_file = o->config_file ? xstrdup(o->config_file) : NULL;
	/* The project file comes from the main worktree when we stand in an agent's. */
	if (wrx_config_read(w, &w->cfg, cause) < 0) {
		config_free(&w->cfg);
		free_identity(w);
		return -EINVAL;
	}
	w->self_exe = o->self_exe ? xstrdup(o->self_exe) : realpath("/proc/self/exe", NULL);
	if (w->self_exe == NULL)
		w->self_exe = xstrdup("workrex");
	w->s = session_new(loop, &session_hooks, w);
	session_set_scrollback(w->s, w->cfg.scrollback);
	if (o->keepers) {
		if (runner_open(w, cause) < 0) {
			session_free(w->s);
			config_free(&w->cfg);
			free_identity(w);
			return -EACCES;
		}
		session_set_mirrors(w->s, true);
		w->helper = o->helper;
		w->attach_only = o->only;
		session_set_next_pane_id(w->s, runner_next_id(w));
	}
	return 0;
}

/*
 * The loop's stalls: how long each turn worked without waiting for an
 * event (wall time less libuv's idle time, measured before each poll). A
 * turn longer than WORKREX_STALL_MS (default 250) is logged as it happens,
 * the longest at the end: what a user felt as a frozen dashboard, and the
 * scale benchmark's figure. No timer: an idle loop does not turn.
 */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The thread's waits in the kernel and the times it was put off the CPU, so far. */
static void switches(long *waits, long *preempted)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	*waits = ru.ru_nvcsw;
	*preempted = ru.ru_nivcsw;
}

static void on_stall_check(uv_prepare_t *h)
{
	struct wrx *w = h->data;
	uint64_t now = uv_hrtime(), idle = uv_metrics_idle_time(w->loop), cpu = cpu_ns();
	long waits, preempted;
	switches(&waits, &preempted);
	uint64_t busy = now - w->stall_at - WRX_MIN(idle - w->stall_idle, now - w->stall_at);
	uint64_t used = cpu - w->stall_cpu;
	w->stall_at = now;
	w->stall_idle = idle;
	w->stall_cpu = cpu;
	w->stall_max = WRX_MAX(w->stall_max, busy);
	w->stall_cpu_max = WRX_MAX(w->stall_cpu_max, used);
	/*
	 * Wall time (what the user waits, other processes' turns on the CPU
	 * too) and ours; then what the rest was: waits in a system call
	 * (the poll that ends a turn is one), or the CPU given to another.
	 */
	if (busy > w->stall_limit)
		log_msg("loop: stalled %.1f ms (%.1f ms of CPU; %ld waits, %ld times off the CPU)",
			(double)busy / 1e6, (double)used / 1e6, waits - w->stall_waits,
			preempted - w->stall_preempted);
	w->stall_waits = waits;
	w->stall_preempted = preempted;
}

static void stall_meter(struct wrx *w)
{
	const char *ms = getenv("WORKREX_STALL_MS");
	w->stall_limit = (uint64_t)(ms && atof(ms) > 0 ? atof(ms) : 250.0) * 1000000u;
	if (uv_loop_configure(w->loop, UV_METRICS_IDLE_TIME) != 0)
		return;
	uv_prepare_init(w->loop, &w->stall);
	w->stall.data = w;
	w->stall_at = uv_hrtime();
	w->stall_idle = uv_metrics_idle_time(w->loop);
	w->stall_cpu = cpu_ns();
	switches(&w->stall_waits, &w->stall_preempted);
	uv_prepare_start(&w->stall, on_stall_check);
	uv_unref((uv_handle_t *)&w->stall);
	w->stall_on = true;
}

int wrx_start(struct wrx *w, char **cause)
{
	int rc = bridge_start(w, cause);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < w->cfg.nwarnings; i++)
		log_msg("config: %s", w->cfg.warnings[i]);
	const char *base = strrchr(w->root, '/');
	session_add_agent(w->s, base && base[1] ? base + 1 : w->root, w->cwd);
	if (w->in_repo)
		agents_load(w);
	runner_attach(w);
	sandbox_start(w);
	prs_start(w);
	if (!w->helper) {
		stall_meter(w);
		registry_start(w);
		lander_start(w); /* a landing a killed dashboard's child left, resumed */
	}
	return 0;
}

void wrx_close(struct wrx *w)
{
	if (w->stall_on) {
		log_msg("loop: the longest stall was %.1f ms, the most CPU a turn took %.1f ms",
			(double)w->stall_max / 1e6, (double)w->stall_cpu_max / 1e6);
		uv_close((uv_handle_t *)&w->stall, NULL);
		w->stall_on = false;
	}
	w->quitting = true;
	actions_started(w); /* a reply waiting for its panes goes now */
	prs_stop(w);
	registry_stop(w);
	session_free(w->s);
	w->s = NULL;
	remote_stop(w);
	bridge_stop(w);
	sandbox_stop(w);
	strlist_free(&w->land_done);
	config_free(&w->cfg);
	free_identity(w);
	runner_close(w);
}
