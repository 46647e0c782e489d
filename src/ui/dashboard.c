/*
 * dashboard.c - the full-screen dashboard: terminal setup, the loop's
 * handles, frames, messages and prompts, and the actions keys lead to.
 *
 * Everything runs on one libuv loop. The keyboard is a separately opened
 * /dev/tty polled with uv_poll_t (fd 0 stays as the shell left it); signals
 * come through uv_signal_t, set up before newterm() so curses installs no
 * handlers of its own; a one-shot frame timer runs only while something is
 * dirty, so an idle dashboard sleeps in epoll with no timers at all.
 */
#include "dashboard.h"

#include "../core/actions.h"
#include "../git/private.h"
#include "../term/pty.h"
#include "../util/beneath.h"
#include "../util/log.h"
#include "ui.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define FRAME_MS 16
/*
 * Right after a key the echo is what the user waits for: frames may then
 * come 1 ms apart, for TYPING_WINDOW_MS, so typing into one pane while
 * another floods answers at once instead of on the next 60 Hz tick.
 */
#define TYPING_FRAME_MS 1
#define MESSAGE_MS 5000

static void on_frame(uv_timer_t *t)
{
	struct ui *ui = t->data;
	ui->frame.pending = false;
	if (ui_output_waits(ui)) {
		ui->tty.frame_held = true; /* drawn when the terminal took the last one */
		return;
	}
	ui->frame.last = now_ms();
	render_frame(ui);
	clock_schedule_tick(ui);
}

void ui_dirty(struct ui *ui)
{
	if (ui->quitting)
		return;
	uint64_t now = now_ms();
	bool typing = now - ui->last_input < TYPING_WINDOW_MS;
	uint64_t due = ui->frame.last + (typing ? TYPING_FRAME_MS : FRAME_MS);
	if (due < now)
		due = now;
	if (ui->frame.pending && ui->frame.due <= due)
		return;
	ui->frame.pending = true;
	ui->frame.due = due;
	uv_timer_start(&ui->timer.frame, on_frame, due - now, 0);
}

void ui_relayout(struct ui *ui)
{
	ui->frame.layout_dirty = true;
	ui_dirty(ui);
}

/*
 * The question or message on the status line goes: rows it took over the
 * panes are theirs again, drawn whole in the next frame (in the same
 * frame as it goes, or the old text would stand there, read as current).
 */
static void status_gone(struct ui *ui)
{
	if (ui->status.rows > 0) {
		ui->status.rows = 0;
		ui->frame.full_redraw = true;
	}
}

static void on_message_timeout(uv_timer_t *t)
{
	struct ui *ui = t->data;
	status_gone(ui);
	free(ui->status.message);
	ui->status.message = NULL;
	ui_dirty(ui);
}

#define SAID_KEPT 100 /* messages C-b ~ shows */

/* text into b in lines of at most w columns, broken between words, the rest indented. */
static void wrap_into(struct buf *b, const char *text, int w)
{
	const char *indent = "         "; /* under the message, past its time */
	int used = 0;
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, " ");
		char *word = xstrndup(p, n);
		int ww = ui_text_width(word);
		if (used > 0 && used + 1 + ww > w) {
			buf_addf(b, "\n%s", indent);
			used = (int)strlen(indent);
		} else if (used > 0) {
			buf_addch(b, ' ');
			used++;
		}
		buf_addstr(b, word);
		used += ww;
		free(word);
		p += n + (p[n] == ' ');
	}
	buf_addch(b, '\n');
}

void ui_message(struct ui *ui, bool error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	status_gone(ui);
	free(ui->status.message);
	char *text = xvasprintf(fmt, ap);
	va_end(ap);
	/* Lines (two config errors, a child's last lines) joined as words, not drawn as '?'. */
	struct buf one = {0};
	for (char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		if (n)
			buf_addf(&one, "%s%.*s", one.len ? "; " : "", (int)n, p);
		p += n + (p[n] == '\n');
	}
	free(text);
	ui->status.message = one.data ? one.data : xstrdup("");
	ui->status.error = error;
	log_msg("%s%s",
		error ? "" : "said: ", ui->status.message); /* what the status line said, kept */
	/* ... and the last ones for C-b ~, whole (the line may have cut them). */
	time_t now = time(NULL);
	struct tm tm;
	char at[16];
	strftime(at, sizeof at, "%H:%M:%S", localtime_r(&now, &tm));
	char *line = xasprintf("%s %s%s", at, error ? "error: " : "", ui->status.message);
	if (ui->status.said.n >= SAID_KEPT) {
		free(ui->status.said.v[0]);
		memmove(ui->status.said.v, ui->status.said.v + 1,
			(ui->status.said.n - 1) * sizeof *ui->status.said.v);
		ui->status.said.n--;
	}
	strlist_add(&ui->status.said, line);
	free(line);
	uv_timer_start(&ui->timer.msg, on_message_timeout, MESSAGE_MS, 0);
	ui_dirty(ui);
}

void ui_prompt_end(struct ui *ui, const char *answer)
{
	struct prompt *p = ui->prompt;
	if (p == NULL)
		return;
	ui->prompt = NULL; /* first: done may ask something new */
	status_gone(ui);
	p->done(ui, answer, p->arg);
	free(p->label);
	buf_free(&p->input);
	free(p);
	ui_dirty(ui);
}

void ui_prompt(struct ui *ui, const char *label, bool yesno,
	       void (*done)(struct ui *, const char *, void *), void *arg)
{
	ui_prompt_end(ui, NULL);
	status_gone(ui); /* a long error's rows, under a question that may take fewer */
	struct prompt *p = xcalloc(1, sizeof *p);
	p->label = xstrdup(label);
	p->yesno = yesno;
	p->done = done;
	p->arg = arg;
	ui->prompt = p;
	ui_dirty(ui);
}

void ui_tty_write(struct ui *ui, const char *s, size_t len)
{
	buf_add(&ui->tty.raw, s, len);
	ui_dirty(ui);
}

struct view *ui_view(struct wpane *wp)
{
	if (wp->view == NULL)
		wp->view = xcalloc(1, sizeof(struct view));
	return wp->view;
}

/* ---- the core's hooks ---- */

static void hook_changed(void *data)
{
	ui_dirty(data);
}

static void hook_relayout(void *data)
{
	ui_relayout(data);
}

static void hook_message(void *data, bool error, const char *text)
{
	ui_message(data, error, "%s", text);
}

static void hook_show(void *data, const char *title, const char *text)
{
	textview_open(data, title, text);
}

static void hook_ring(void *data)
{
	ui_tty_write(data, "\a", 1);
}

static void hook_pane_gone(void *data, struct wpane *wp)
{
	struct ui *ui = data;
	struct view *v = wp->view;
	if (v)
		free(v->drawn_extra);
	free(wp->view);
	wp->view = NULL;
	for (int i = 0; i < ui->nsidebar_rows; i++)
		if (ui->sidebar_rows[i] == wp)
			ui->sidebar_rows[i] = NULL;
	if (ui->laid_focus == wp) {
		ui->laid_focus = NULL;
		ui_relayout(ui);
	}
}

struct ask {
	wrx_answer_fn *done;
	void *arg;
};

static void asked(struct ui *ui, const char *answer, void *arg)
{
	struct ask k = *(struct ask *)arg;
	free(arg);
	/* q: yes, to the merge queue (the merge question offers it; confirmed reads it). */
	ui->w->answer = answer;
	k.done(ui->w, answer && (strcmp(answer, "y") == 0 || strcmp(answer, "q") == 0), k.arg);
	ui->w->answer = NULL;
}

bool ui_open_asked(struct ui *ui)
{
	struct asked *q = ui->asked;
	if (q == NULL || ui->prompt)
		return false;
	ui->asked = q->next;
	ui_prompt(ui, q->question, true, q->done, q->arg);
	free(q->question);
	free(q->agent);
	free(q);
	ui_web_asked(ui);
	return true;
}

int ui_asked_answer(struct ui *ui, unsigned id, bool yes)
{
	for (struct asked **at = &ui->asked; *at; at = &(*at)->next) {
		struct asked *q = *at;
		if (q->id != id)
			continue;
		*at = q->next;
		q->done(ui, yes ? "y" : "n", q->arg);
		free(q->question);
		free(q->agent);
		free(q);
		ui_dirty(ui);
		ui_web_asked(ui);
		return 0;
	}
	return -1;
}

static int hook_answer(void *data, unsigned id, bool yes)
{
	return ui_asked_answer(data, id, yes);
}

/* Every waiting question answered no (the dashboard is going). */
static void ui_asked_clear(struct ui *ui)
{
	while (ui->asked) {
		struct asked *q = ui->asked;
		ui->asked = q->next;
		q->done(ui, NULL, q->arg);
		free(q->question);
		free(q->agent);
		free(q);
	}
}

void ui_asked_drop(struct ui *ui, const char *who)
{
	struct asked **at = &ui->asked;
	while (*at) {
		struct asked *q = *at;
		if (strcmp(q->agent, who) != 0) {
			at = &q->next;
			continue;
		}
		*at = q->next;
		q->done(ui, NULL, q->arg);
		free(q->question);
		free(q->agent);
		free(q);
		ui_dirty(ui);
		ui_web_asked(ui);
	}
}

int ui_ask_waiting(struct ui *ui, const char *question, const char *who,
		   void (*done)(struct ui *, const char *, void *), void *arg, bool replace)
{
	if (replace)
		ui_asked_drop(ui, who); /* what it asked is no longer so: the new question says */
	int n = 0;
	struct asked **end = &ui->asked;
	for (; *end; end = &(*end)->next)
		n += strcmp((*end)->agent, who) == 0;
	if (n >= ASKED_MAX)
		return -EBUSY;
	static unsigned ids;
	struct asked *q = xcalloc(1, sizeof *q);
	q->id = ++ids;
	q->question = xstrdup(question);
	q->agent = xstrdup(who);
	q->done = done;
	q->arg = arg;
	*end = q;
	ui_dirty(ui);
	ui_web_asked(ui);
	return 0;
}

/*
 * The user's own question (a verb of theirs asks again) opens at once; an
 * agent's waits its turn, said on the status line, until the user opens
 * it (ui_open_asked): a key typed into a pane never answers it.
 */
static int hook_ask(void *data, const char *question, const char *agent, wrx_answer_fn *done,
		    void *arg)
{
	struct ui *ui = data;
	if (ui->quitting || (agent == NULL && ui->prompt))
		return -EBUSY;
	struct ask *k = xcalloc(1, sizeof *k);
	k->done = done;
	k->arg = arg;
	if (agent == NULL) {
		ui_prompt(ui, question, true, asked, k);
		return 0;
	}
	int rc = ui_ask_waiting(ui, question, agent, asked, k, false);
	if (rc < 0)
		free(k);
	return rc;
}

static void hook_set_clipboard(void *data, const char *text, size_t len)
{
	char *t = xstrndup(text, len);
	copy_to_clipboard(data, t);
	free(t);
}

static void hook_pane_size(void *data, int *rows, int *cols)
{
	struct ui *ui = data;
	*rows = WRX_MAX(ui->area.h - 1, 1); /* its title bar */
	*cols = WRX_MAX(ui->area.w, 1);
}

static void hook_place(void *data)
{
	render_layout(data);
}

static void hook_config_changed(void *data)
{
	ui_config_changed(data);
}

static void hook_trust(void *data)
{
	trust_ask(data);
}

static void hook_started(void *data);

static const struct wrx_hooks hooks = {
	.changed = hook_changed,
	.relayout = hook_relayout,
	.message = hook_message,
	.show = hook_show,
	.ring = hook_ring,
	.pane_gone = hook_pane_gone,
	.started = hook_started,
	.ask = hook_ask,
	.set_clipboard = hook_set_clipboard,
	.terminal_clipboard = termclip_read,
	.pane_size = hook_pane_size,
	.place = hook_place,
	.config_changed = hook_config_changed,
	.trust = hook_trust,
	.answer = hook_answer,
};

/* ---- actions ---- */

static void dashboard_stop(struct ui *ui);

static struct wpane *open_shell(struct ui *ui, struct agent *a)
{
	char *cause = NULL;
	int rows = WRX_MAX(ui->area.h - 1, 1), cols = WRX_MAX(ui->area.w, 1);
	struct wpane *wp = session_open_pane(ui->w->s, a, NULL, rows, cols, true, &cause);
	if (wp == NULL) {
		ui_message(ui, true, "%s", cause);
		free(cause);
	}
	ui_relayout(ui);
	return wp;
}

static void close_answer(struct ui *ui, const char *answer, void *arg)
{
	int id = (int)(intptr_t)arg;
	if (answer == NULL || strcmp(answer, "y") != 0)
		return;
	for (int i = 0; i < session_pane_count(ui->w->s); i++) {
		struct wpane *wp = session_pane(ui->w->s, i);
		if (wp->id == id) {
			session_close_pane(ui->w->s, wp);
			return;
		}
	}
}

/*
 * Quit: every pane's program ends, its keeper with it (a detach leaves them
 * running). A pane whose keeper is still starting (the project's shell, a
 * moment after the start) is closed like the others; its keeper is ended
 * as its start answers (runner.c), so the loop runs until none is starting.
 * Bounded by the start's own timeout.
 */
static void quit_all(struct ui *ui)
{
	struct session *s = ui->w->s;
	while (session_pane_count(s) > 0)
		session_close_pane(s, session_pane(s, session_pane_count(s) - 1));
	ui->ending = true;
	if (ui->w->starting == 0)
		dashboard_stop(ui);
}

static void hook_started(void *data)
{
	struct ui *ui = data;
	if (ui->ending && ui->w->starting == 0)
		dashboard_stop(ui);
}

static void quit_answer(struct ui *ui, const char *answer, void *arg)
{
	(void)arg;
	if (answer && strcmp(answer, "y") == 0)
		quit_all(ui);
}

static void focus_dir(struct ui *ui, int dx, int dy)
{
	int n = session_pane_count(ui->w->s);
	struct rect *r = xcalloc((size_t)WRX_MAX(n, 1), sizeof *r);
	for (int i = 0; i < n; i++)
		r[i] = ui_view(session_pane(ui->w->s, i))->r;
	int to = layout_neighbour(r, n, session_pane_index(ui->w->s, session_focus(ui->w->s)), dx,
				  dy);
	free(r);
	if (to >= 0)
		session_set_focus(ui->w->s, session_pane(ui->w->s, to));
}

void ui_open_agent(struct ui *ui, struct agent *a)
{
	json_object *args = json_object_new_object();
	json_object_object_add(args, "handle", json_object_new_string(a->handle));
	json_object_object_add(args, "focus", json_object_new_boolean(1));
	actions_call(ui->w, "open", args, DOOR_UI, 0, NULL, NULL);
}

/* Focus the agent's last pane, or open its panes. */
void ui_focus_agent(struct ui *ui, int at)
{
	struct agent *a = session_agent(ui->w->s, at);
	if (session_agent_panes(ui->w->s, a) > 0)
		session_focus_agent(ui->w->s, at);
	else
		ui_open_agent(ui, a);
}

/*
 * The agent that most lately came to need the user (waiting, done, a
 * notice). Focusing it answers it, so pressing again goes to the one before.
 */
static void focus_attention(struct ui *ui)
{
	int best = -1;
	uint64_t when = 0;
	for (int i = 0; i < session_agent_count(ui->w->s); i++) {
		struct agent *a = session_agent(ui->w->s, i);
		if (a->attention && (best < 0 || a->attention_since > when)) {
			best = i;
			when = a->attention_since;
		}
	}
	if (best < 0)
		ui_message(ui, false, "no agent has finished or waits for you");
	else
		ui_focus_agent(ui, best);
}

/*
 * What the user chose to see (the layout, C-b Space; the sidebar, C-b s),
 * kept for the project in its host-only state directory: a detach and
 * the next dashboard keep it, as a tmux session keeps its layout.
 */
#define VIEW_FILE "view"

static void view_save(struct ui *ui)
{
	if (!ui->w->in_repo)
		return;
	char *dir = private_project_dir(ui->w->root, true);
	char *text = xasprintf("layout %s\nsidebar %d\n", layout_name(session_layout(ui->w->s)),
			       ui->sidebar);
	if (dir && beneath_write(dir, VIEW_FILE, text, strlen(text), 0600) < 0)
		log_msg("the view chosen (layout, sidebar) not kept for the next dashboard");
	free(text);
	free(dir);
}

static void view_load(struct ui *ui)
{
	char *dir = ui->w->in_repo ? private_project_dir(ui->w->root, false) : NULL, *text = NULL;
	if (dir && beneath_read(dir, VIEW_FILE, 256, &text) == 0) {
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
			if (!strncmp(line, "sidebar ", 8))
				ui->sidebar = line[8] != '0';
			for (int k = 0; !strncmp(line, "layout ", 7) && k < WRX_LAYOUT_COUNT; k++)
				if (!strcmp(line + 7, layout_name((enum wrx_layout)k)))
					session_set_layout(ui->w->s, (enum wrx_layout)k);
		}
	}
	free(text);
	free(dir);
}

/*
 * The dashboard's actions (config/keys.h), one function each, found by
 * the action's number: a new action is one function and one row.
 */
static struct agent *focused_agent(struct ui *ui)
{
	struct wpane *focus = session_focus(ui->w->s);
	return focus ? focus->agent : NULL;
}

static void act_new_pane(struct ui *ui, int arg)
{
	(void)arg;
	struct agent *a = focused_agent(ui);
	if (a == NULL)
		a = session_agent(ui->w->s, 0);
	if (a)
		open_shell(ui, a);
}

static void act_close_pane(struct ui *ui, int arg)
{
	(void)arg;
	struct session *s = ui->w->s;
	struct wpane *focus = session_focus(s);
	if (focus == NULL)
		return;
	if (pane_exited(focus->term, NULL)) {
		session_close_pane(s, focus);
		return;
	}
	char *q = xasprintf("close pane %d (%s is still running)? (y/n)",
			    session_pane_index(s, focus) + 1, focus->label);
	ui_prompt(ui, q, true, close_answer, (void *)(intptr_t)focus->id);
	free(q);
}

static void act_focus_agent(struct ui *ui, int arg)
{
	int at = session_agent_by_num(ui->w->s, arg);
	if (at < 0)
		ui_message(ui, true, "no agent %d", arg);
	else
		ui_focus_agent(ui, at);
}

static void act_attention(struct ui *ui, int arg)
{
	(void)arg;
	if (!ui_open_asked(ui))
		focus_attention(ui);
}

/* The next pane (arg 1) or the one before (-1), round. */
static void act_cycle_pane(struct ui *ui, int arg)
{
	struct session *s = ui->w->s;
	struct wpane *focus = session_focus(s);
	int n = session_pane_count(s);
	if (n == 0 || focus == NULL)
		return;
	int i = (session_pane_index(s, focus) + (arg > 0 ? 1 : n - 1)) % n;
	session_set_focus(s, session_pane(s, i));
	if (session_zoomed(s) || session_layout(s) == WRX_LAYOUT_FULL ||
	    session_layout(s) == WRX_LAYOUT_WINDOW)
		ui_relayout(ui);
}

static void act_next_pane(struct ui *ui, int arg)
{
	(void)arg;
	act_cycle_pane(ui, 1);
}

static void act_prev_pane(struct ui *ui, int arg)
{
	(void)arg;
	act_cycle_pane(ui, -1);
}

static void act_pane_left(struct ui *ui, int arg)
{
	(void)arg;
	focus_dir(ui, -1, 0);
}

static void act_pane_right(struct ui *ui, int arg)
{
	(void)arg;
	focus_dir(ui, 1, 0);
}

static void act_pane_up(struct ui *ui, int arg)
{
	(void)arg;
	focus_dir(ui, 0, -1);
}

static void act_pane_down(struct ui *ui, int arg)
{
	(void)arg;
	focus_dir(ui, 0, 1);
}

static void act_zoom(struct ui *ui, int arg)
{
	(void)arg;
	session_toggle_zoom(ui->w->s);
	ui_relayout(ui);
}

static void act_next_layout(struct ui *ui, int arg)
{
	(void)arg;
	session_next_layout(ui->w->s);
	ui_message(ui, false, "layout: %s", layout_name(session_layout(ui->w->s)));
	view_save(ui);
	ui_relayout(ui);
}

static void act_scroll(struct ui *ui, int arg)
{
	(void)arg;
	struct wpane *focus = session_focus(ui->w->s);
	if (focus)
		copy_enter(ui, focus, false);
}

static void act_sidebar(struct ui *ui, int arg)
{
	(void)arg;
	ui->sidebar = !ui->sidebar;
	view_save(ui);
	ui_relayout(ui);
}

static void act_messages(struct ui *ui, int arg)
{
	(void)arg;
	struct buf b = {0};
	for (size_t i = 0; i < ui->status.said.n; i++)
		wrap_into(&b, ui->status.said.v[i], WRX_MAX(ui->cols - 1, 20));
	textview_open(ui, "messages (the newest last; every one is in workrex.log)",
		      b.data ? b.data : "no message yet\n");
	buf_free(&b);
}

static void act_help(struct ui *ui, int arg)
{
	(void)arg;
	help_open(ui);
}

static void act_quit(struct ui *ui, int arg)
{
	(void)arg;
	int running = session_running(ui->w->s);
	if (running == 0) {
		quit_all(ui);
		return;
	}
	char *q = xasprintf("quit and end %d running program%s? (y/n)", running,
			    running == 1 ? "" : "s");
	ui_prompt(ui, q, true, quit_answer, NULL);
	free(q);
}

static void act_detach(struct ui *ui, int arg)
{
	(void)arg;
	ui->detached_running = session_running(ui->w->s);
	ui->detached = true;
	dashboard_stop(ui);
}

/* The prefix key itself, to the focused pane. */
static void act_send_prefix(struct ui *ui, int arg)
{
	(void)arg;
	struct wpane *focus = session_focus(ui->w->s);
	if (focus == NULL)
		return;
	int k = ui->w->cfg.prefix & ~WRX_K_META;
	if (ui->w->cfg.prefix & WRX_K_META)
		pane_write(focus->term, "\x1b", 1);
	if (k < WRX_K_BASE)
		pane_char(focus->term, (uint32_t)k, 0);
}

static void act_redraw(struct ui *ui, int arg)
{
	(void)arg;
	ui->frame.full_redraw = true;
	ui_relayout(ui);
}

/* The overview, its selection on the focused agent. */
static void act_overview(struct ui *ui, int arg)
{
	(void)arg;
	overview_open(ui);
}

static void act_review(struct ui *ui, int arg)
{
	(void)arg;
	struct agent *a = focused_agent(ui);
	if (a)
		review_open(ui, a);
	else
		ui_message(ui, true, "review: no agent is focused");
}

static void act_compare(struct ui *ui, int arg)
{
	(void)arg;
	struct agent *a = focused_agent(ui);
	if (a)
		compare_open(ui, a);
	else
		ui_message(ui, true, "compare: no agent is focused");
}

static void act_new_agent(struct ui *ui, int arg)
{
	(void)arg;
	prompts_new_agent(ui);
}

static void act_merge(struct ui *ui, int arg)
{
	(void)arg;
	prompts_agent_verb(ui, "merge");
}

static void act_remove_agent(struct ui *ui, int arg)
{
	(void)arg;
	prompts_agent_verb(ui, "remove");
}

static void act_pick_agent(struct ui *ui, int arg)
{
	(void)arg;
	prompts_pick_agent(ui);
}

static void act_command(struct ui *ui, int arg)
{
	(void)arg;
	prompts_command(ui);
}

static void act_reload(struct ui *ui, int arg)
{
	(void)arg;
	ui_reload_key(ui);
}

static void act_paste_image(struct ui *ui, int arg)
{
	(void)arg;
	actions_call(ui->w, "paste-image", NULL, DOOR_UI, 0, NULL, NULL);
}

static void (*const act_run[ACT_COUNT])(struct ui *ui, int arg) = {
	[ACT_NEW_AGENT] = act_new_agent,
	[ACT_NEW_PANE] = act_new_pane,
	[ACT_MERGE] = act_merge,
	[ACT_CLOSE_PANE] = act_close_pane,
	[ACT_REMOVE_AGENT] = act_remove_agent,
	[ACT_FOCUS_AGENT] = act_focus_agent,
	[ACT_PICK_AGENT] = act_pick_agent,
	[ACT_ATTENTION] = act_attention,
	[ACT_NEXT_PANE] = act_next_pane,
	[ACT_PREV_PANE] = act_prev_pane,
	[ACT_PANE_LEFT] = act_pane_left,
	[ACT_PANE_RIGHT] = act_pane_right,
	[ACT_PANE_UP] = act_pane_up,
	[ACT_PANE_DOWN] = act_pane_down,
	[ACT_ZOOM] = act_zoom,
	[ACT_NEXT_LAYOUT] = act_next_layout,
	[ACT_OVERVIEW] = act_overview,
	[ACT_SCROLL] = act_scroll,
	[ACT_PASTE_IMAGE] = act_paste_image,
	[ACT_SIDEBAR] = act_sidebar,
	[ACT_COMMAND] = act_command,
	[ACT_HELP] = act_help,
	[ACT_QUIT] = act_quit,
	[ACT_DETACH] = act_detach,
	[ACT_SEND_PREFIX] = act_send_prefix,
	[ACT_REDRAW] = act_redraw,
	[ACT_RELOAD] = act_reload,
	[ACT_REVIEW] = act_review,
	[ACT_COMPARE] = act_compare,
	[ACT_MESSAGES] = act_messages,
};

void ui_action(struct ui *ui, enum wrx_action action, int arg)
{
	if (action > ACT_NONE && action < ACT_COUNT && act_run[action])
		act_run[action](ui, arg);
}

/* ---- signals and terminal ---- */

static void on_winch(uv_signal_t *h, int sig)
{
	struct ui *ui = h->data;
	(void)sig;
	struct winsize ws;
	if (ioctl(ui->tty.fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
		resizeterm(ws.ws_row, ws.ws_col);
		ui->frame.full_redraw = true;
		ui_relayout(ui);
	}
}

static void on_chld(uv_signal_t *h, int sig)
{
	(void)h;
	(void)sig;
	pty_reap();
}

static void on_term(uv_signal_t *h, int sig)
{
	struct ui *ui = h->data;
	log_msg("signal %d: quitting", sig);
	dashboard_stop(ui);
}

static void on_tty(uv_poll_t *h, int status, int events)
{
	struct ui *ui = h->data;
	if (status < 0 || (events & UV_DISCONNECT)) {
		log_msg("terminal gone: quitting");
		dashboard_stop(ui);
		return;
	}
	if (!termclip_tty(ui))
		input_read(ui);
}

void ui_apply_config(struct ui *ui)
{
	bindings_reset();
	if (ui->w->cfg.prefix != 2) {
		bindings_unset(2);
		bindings_set(ui->w->cfg.prefix & ~WRX_K_META, ACT_SEND_PREFIX, 0);
	}
	for (size_t i = 0; i < ui->w->cfg.nbinds; i++)
		bindings_set(ui->w->cfg.binds[i].key, ui->w->cfg.binds[i].action,
			     ui->w->cfg.binds[i].arg);
	session_set_scrollback(ui->w->s, ui->w->cfg.scrollback);
}

static void dashboard_stop(struct ui *ui)
{
	if (ui->quitting)
		return;
	ui->quitting = true;
	ui->w->quitting = true;
	uv_stop(ui->w->loop);
}

static void close_handle(uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

/* The log cannot be written (a full disk): said on the status line, as nothing else would. */
static void log_failed(void *arg, const char *why)
{
	ui_message(arg, true, "%s", why);
}

/* The dashboard's signals and timers, on the loop: before newterm(), so curses leaves SIGWINCH to us. */
static void handles_start(struct ui *ui, uv_loop_t *loop)
{
	/*
	 * A client that hangs up before its reply is written must cost that
	 * write an EPIPE, not the dashboard its life. (Children get SIG_DFL
	 * back: pty.c and spawner.c reset every signal.)
	 */
	signal(SIGPIPE, SIG_IGN);
	uv_signal_init(loop, &ui->sig.winch);
	uv_signal_init(loop, &ui->sig.chld);
	uv_signal_init(loop, &ui->sig.term);
	uv_signal_init(loop, &ui->sig.hup);
	ui->sig.winch.data = ui->sig.chld.data = ui->sig.term.data = ui->sig.hup.data = ui;
	uv_signal_start(&ui->sig.winch, on_winch, SIGWINCH);
	uv_signal_start(&ui->sig.chld, on_chld, SIGCHLD);
	uv_signal_start(&ui->sig.term, on_term, SIGTERM);
	uv_signal_start(&ui->sig.hup, on_term, SIGHUP);
	uv_timer_init(loop, &ui->timer.frame);
	uv_timer_init(loop, &ui->timer.msg);
	uv_timer_init(loop, &ui->timer.tick);
	uv_timer_init(loop, &ui->timer.clip);
	ui->timer.frame.data = ui->timer.msg.data = ui->timer.tick.data = ui->timer.clip.data = ui;
}

static void handles_close(struct ui *ui)
{
	close_handle((uv_handle_t *)&ui->sig.winch);
	close_handle((uv_handle_t *)&ui->sig.chld);
	close_handle((uv_handle_t *)&ui->sig.term);
	close_handle((uv_handle_t *)&ui->sig.hup);
	close_handle((uv_handle_t *)&ui->timer.frame);
	close_handle((uv_handle_t *)&ui->timer.msg);
	close_handle((uv_handle_t *)&ui->timer.tick);
	close_handle((uv_handle_t *)&ui->timer.clip);
}

/* The first frame: what the config said, the agents kept, the project's shell, the trust question. */
static void dashboard_first(struct ui *ui)
{
	if (ui->w->cfg.nwarnings)
		ui_message(ui, true, "config: %s", ui->w->cfg.warnings[0]);
	else if (getenv("TMUX") && ui->w->cfg.prefix == 2)
		/* tmux takes the first C-b: say how to reach ours. */
		ui_message(ui, false,
			   "inside tmux, C-b is tmux's prefix too: press C-b twice for workrex's, "
			   "or set keys.prefix");
	ui->frame.layout_dirty = true;
	render_frame(ui); /* sizes the area before the first pane starts */
	resume_kept(ui->w);
	queue_run(ui->w, NULL); /* add --max-concurrent's agents that wait, when a slot is free */
	/* The project's own shell, unless a keeper still runs it. */
	if (session_agent_panes(ui->w->s, session_agent(ui->w->s, 0)) == 0)
		open_shell(ui, session_agent(ui->w->s, 0));
	if (ui->w->cfg.untrusted_path)
		trust_ask(ui);
}

/* Back on the user's terminal: what a detach left behind, as tmux says it; and all freed. */
static void dashboard_free(struct ui *ui)
{
	if (ui->detached)
		printf("[detached: %d program%s go%s on; workrex comes back to %s]\n",
		       ui->detached_running, ui->detached_running == 1 ? "" : "s",
		       ui->detached_running == 1 ? "es" : "",
		       ui->detached_running == 1 ? "it" : "them");
	ui_modes_close_all(ui);
	free(ui->status.message);
	free(ui->sidebar_rows);
	buf_free(&ui->paste);
	buf_free(&ui->tty.raw);
	free(ui->trust_declined);
	strlist_free(&ui->status.said);
}

int dashboard_run(const struct dashboard_opts *opts)
{
	struct ui ui_storage = {0}, *ui = &ui_storage;
	struct wrx core;
	char *cause = NULL;
	int rc = 1;

	tty_utf8_locale();
	log_open();
	uv_loop_t *loop = uv_default_loop();
	struct wrx_opts o = {.config_file = opts->config_file, .keepers = true};
	if (wrx_open(&core, loop, &o, &hooks, ui, &cause) < 0) {
		fprintf(stderr, "workrex: %s\n", cause);
		free(cause);
		log_close();
		return 1;
	}
	ui->w = &core;
	ui->sidebar = true;
	view_load(ui);
	ui_apply_config(ui);
	handles_start(ui, loop);
	ui_watch_config(ui);
	log_on_failure(log_failed, ui);

	/* The control socket first: a second dashboard of the project stops here. */
	if (wrx_start(ui->w, &cause) < 0 || tty_open(ui, &cause) < 0) {
		fprintf(stderr, "workrex: %s\n", cause);
		free(cause);
	} else {
		uv_poll_init(loop, &ui->tty.poll, ui->tty.fd);
		ui->tty.poll.data = ui;
		tty_output_on_loop(ui, loop);
		uv_poll_start(&ui->tty.poll, UV_READABLE | UV_DISCONNECT, on_tty);
		dashboard_first(ui);
		ui_web_start(ui);
		uv_run(loop, UV_RUN_DEFAULT);
		rc = 0;
		uv_poll_stop(&ui->tty.poll);
		close_handle((uv_handle_t *)&ui->tty.poll);
	}
	ui->quitting = core.quitting = true;
	/* A question left open or waiting is a no: its owner cleans up while all still stands. */
	ui_prompt_end(ui, NULL);
	ui_asked_clear(ui);
	ui_web_stop(ui);
	termclip_close(ui);
	wrx_close(ui->w);
	handles_close(ui);
	tty_output_off_loop(ui);
	ui_unwatch_config(ui);
	uv_run(loop, UV_RUN_NOWAIT);
	tty_close(ui);
	dashboard_free(ui);
	uv_loop_close(loop);
	log_on_failure(NULL, NULL);
	log_close();
	return rc;
}
