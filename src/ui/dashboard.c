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

#include "../git/git.h"
#include "../term/pty.h"
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
	ui->frame_pending = false;
	ui->last_frame = now_ms();
	render_frame(ui);
	bridge_schedule_tick(ui);
}

void ui_dirty(struct ui *ui)
{
	if (ui->quitting)
		return;
	uint64_t now = now_ms();
	bool typing = now - ui->last_input < TYPING_WINDOW_MS;
	uint64_t due = ui->last_frame + (typing ? TYPING_FRAME_MS : FRAME_MS);
	if (due < now)
		due = now;
	if (ui->frame_pending && ui->frame_due <= due)
		return;
	ui->frame_pending = true;
	ui->frame_due = due;
	uv_timer_start(&ui->frame_timer, on_frame, due - now, 0);
}

void ui_relayout(struct ui *ui)
{
	ui->layout_dirty = true;
	ui_dirty(ui);
}

static void on_message_timeout(uv_timer_t *t)
{
	struct ui *ui = t->data;
	free(ui->message);
	ui->message = NULL;
	ui_dirty(ui);
}

void ui_message(struct ui *ui, bool error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(ui->message);
	ui->message = xvasprintf(fmt, ap);
	va_end(ap);
	ui->message_error = error;
	if (error)
		log_msg("%s", ui->message);
	uv_timer_start(&ui->msg_timer, on_message_timeout, MESSAGE_MS, 0);
	ui_dirty(ui);
}

void ui_prompt_end(struct ui *ui, const char *answer)
{
	struct prompt *p = ui->prompt;
	if (p == NULL)
		return;
	ui->prompt = NULL; /* first: done may ask something new */
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
	buf_add(&ui->tty_out, s, len);
	ui_dirty(ui);
}

static void quiet_exited(uv_process_t *p, int64_t status, int sig)
{
	(void)status;
	(void)sig;
	uv_close((uv_handle_t *)p, (uv_close_cb)free);
}

void ui_run_quiet(struct ui *ui, const struct strlist *argv)
{
	if (argv->n == 0)
		return;
	char **v = xcalloc(argv->n + 1, sizeof *v);
	memcpy(v, argv->v, argv->n * sizeof *v);
	uv_stdio_container_t stdio[3] = {{.flags = UV_IGNORE}, {.flags = UV_IGNORE},
					 {.flags = UV_IGNORE}};
	uv_process_options_t o = {.file = v[0],
				  .args = v,
				  .exit_cb = quiet_exited,
				  .flags = UV_PROCESS_DETACHED,
				  .stdio_count = 3,
				  .stdio = stdio};
	uv_process_t *p = xcalloc(1, sizeof *p);
	int rc = uv_spawn(ui->loop, p, &o);
	if (rc < 0) {
		log_msg("%s: %s", v[0], uv_strerror(rc));
		uv_close((uv_handle_t *)p, (uv_close_cb)free);
	} else {
		uv_unref((uv_handle_t *)p); /* it may outlive the loop */
	}
	free(v);
}

struct view *ui_view(struct wpane *wp)
{
	if (wp->view == NULL)
		wp->view = xcalloc(1, sizeof(struct view));
	return wp->view;
}

/* ---- session hooks ---- */

static void hook_changed(void *data)
{
	ui_dirty(data);
}

static void hook_pane_gone(void *data, struct wpane *wp)
{
	struct ui *ui = data;
	bridge_pane_gone(ui, wp);
	sandbox_pane_gone(ui, wp);
	free(wp->view);
	wp->view = NULL;
	for (int i = 0; i < ui->nsidebar_rows; i++)
		if (ui->sidebar_rows[i] == wp)
			ui->sidebar_rows[i] = NULL;
	ui_relayout(ui);
}

static void hook_bell(void *data, struct wpane *wp)
{
	struct ui *ui = data;
	if (wp == session_focus(ui->s))
		return;
	wp->bell = true;
	wp->agent->bell = true;
	wp->agent->attention = true;
	ui_relayout(ui);
	if (strcmp(ui->cfg.notify, "bell") == 0 || strcmp(ui->cfg.notify, "both") == 0)
		ui_tty_write(ui, "\a", 1);
}

static void hook_attention(void *data, struct agent *a, const char *what)
{
	bridge_attention(data, a, what);
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

static const struct session_hooks hooks = {
	.changed = hook_changed,
	.pane_gone = hook_pane_gone,
	.bell = hook_bell,
	.attention = hook_attention,
	.pane_env = hook_pane_env,
	.pane_argv = hook_pane_argv,
};

/* ---- actions ---- */

static struct wpane *open_shell(struct ui *ui, struct agent *a)
{
	char *cause = NULL;
	int rows = WRX_MAX(ui->area.h - 1, 1), cols = WRX_MAX(ui->area.w, 1);
	struct wpane *wp = session_open_pane(ui->s, a, NULL, rows, cols, true, &cause);
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
	for (int i = 0; i < session_pane_count(ui->s); i++) {
		struct wpane *wp = session_pane(ui->s, i);
		if (wp->id == id) {
			session_close_pane(ui->s, wp);
			return;
		}
	}
}

static void quit_answer(struct ui *ui, const char *answer, void *arg)
{
	(void)arg;
	if (answer && strcmp(answer, "y") == 0)
		dashboard_stop(ui);
}

static void focus_dir(struct ui *ui, int dx, int dy)
{
	int n = session_pane_count(ui->s);
	struct rect *r = xcalloc((size_t)WRX_MAX(n, 1), sizeof *r);
	for (int i = 0; i < n; i++)
		r[i] = ui_view(session_pane(ui->s, i))->r;
	int to = layout_neighbour(r, n, session_pane_index(ui->s, session_focus(ui->s)), dx, dy);
	free(r);
	if (to >= 0)
		session_set_focus(ui->s, session_pane(ui->s, to));
}

/* Focus the agent's last pane, or open its panes. */
static void focus_agent(struct ui *ui, int at)
{
	struct agent *a = session_agent(ui->s, at);
	char *cause = NULL;
	if (session_agent_panes(ui->s, a) > 0)
		session_focus_agent(ui->s, at);
	else if (agents_open(ui, a, true, false, &cause) < 0) {
		ui_message(ui, true, "%s", cause);
		free(cause);
	}
}

/*
 * The agent that most lately came to need the user (waiting, done, a
 * notice). Focusing it answers it, so pressing again goes to the one before.
 */
static void focus_attention(struct ui *ui)
{
	int best = -1;
	uint64_t when = 0;
	for (int i = 0; i < session_agent_count(ui->s); i++) {
		struct agent *a = session_agent(ui->s, i);
		if (a->attention && (best < 0 || a->attention_since > when)) {
			best = i;
			when = a->attention_since;
		}
	}
	if (best < 0)
		ui_message(ui, false, "no agent has finished or waits for you");
	else
		focus_agent(ui, best);
}

void ui_action(struct ui *ui, enum wrx_action action, int arg)
{
	struct session *s = ui->s;
	struct wpane *focus = session_focus(s);
	int n = session_pane_count(s);
	switch (action) {
	case ACT_NEW_PANE: {
		struct agent *a = focus ? focus->agent : session_agent(s, 0);
		if (a)
			open_shell(ui, a);
		break;
	}
	case ACT_CLOSE_PANE:
		if (focus == NULL)
			break;
		if (pane_exited(focus->term, NULL)) {
			session_close_pane(s, focus);
		} else {
			char *q = xasprintf("close pane %d (%s is still running)? (y/n)",
					    session_pane_index(s, focus) + 1, focus->label);
			ui_prompt(ui, q, true, close_answer, (void *)(intptr_t)focus->id);
			free(q);
		}
		break;
	case ACT_FOCUS_AGENT: {
		int at = session_agent_by_num(s, arg);
		if (at < 0)
			ui_message(ui, true, "no agent %d", arg);
		else
			focus_agent(ui, at);
		break;
	}
	case ACT_ATTENTION:
		focus_attention(ui);
		break;
	case ACT_RELOAD:
		ui_reload_key(ui);
		break;
	case ACT_NEXT_PANE:
	case ACT_PREV_PANE:
		if (n > 0 && focus) {
			int i = session_pane_index(s, focus);
			i = (i + (action == ACT_NEXT_PANE ? 1 : n - 1)) % n;
			session_set_focus(s, session_pane(s, i));
			if (session_zoomed(s) || session_layout(s) == WRX_LAYOUT_FULL)
				ui_relayout(ui);
		}
		break;
	case ACT_PANE_LEFT:
		focus_dir(ui, -1, 0);
		break;
	case ACT_PANE_RIGHT:
		focus_dir(ui, 1, 0);
		break;
	case ACT_PANE_UP:
		focus_dir(ui, 0, -1);
		break;
	case ACT_PANE_DOWN:
		focus_dir(ui, 0, 1);
		break;
	case ACT_ZOOM:
		session_toggle_zoom(s);
		ui_relayout(ui);
		break;
	case ACT_NEXT_LAYOUT:
		session_next_layout(s);
		ui_message(ui, false, "layout: %s", layout_name(session_layout(s)));
		ui_relayout(ui);
		break;
	case ACT_SCROLL:
		if (focus)
			copy_enter(ui, focus, false);
		break;
	case ACT_SIDEBAR:
		ui->sidebar = !ui->sidebar;
		ui_relayout(ui);
		break;
	case ACT_HELP:
		ui->help = true;
		ui_dirty(ui);
		break;
	case ACT_QUIT: {
		int running = session_running(s);
		if (running == 0) {
			dashboard_stop(ui);
		} else {
			char *q = xasprintf("quit and end %d running program%s? (y/n)", running,
					    running == 1 ? "" : "s");
			ui_prompt(ui, q, true, quit_answer, NULL);
			free(q);
		}
		break;
	}
	case ACT_SEND_PREFIX:
		if (focus) {
			int k = ui->cfg.prefix & ~WRX_K_META;
			if (ui->cfg.prefix & WRX_K_META)
				pane_write(focus->term, "\x1b", 1);
			if (k < WRX_K_BASE)
				pane_char(focus->term, (uint32_t)k, 0);
		}
		break;
	case ACT_REDRAW:
		ui->full_redraw = true;
		ui_relayout(ui);
		break;
	case ACT_NEW_AGENT:
		agents_key_new(ui);
		break;
	case ACT_MERGE:
		agents_key_merge(ui);
		break;
	case ACT_REMOVE_AGENT:
		agents_key_remove(ui);
		break;
	case ACT_COMMAND:
		agents_key_command(ui);
		break;
	case ACT_OVERVIEW:
		ui->overview = true;
		ui->ov_sel = 0;
		if (focus) {
			int na = session_agent_count(s);
			int *order = xcalloc((size_t)WRX_MAX(na, 1), sizeof *order);
			ui_agent_order(ui, order);
			for (int i = 0; i < na; i++)
				if (session_agent(s, order[i]) == focus->agent)
					ui->ov_sel = i;
			free(order);
		}
		ui_dirty(ui);
		break;
	case ACT_PASTE_IMAGE:
		ui_message(ui, true, "%s: not available in this dashboard yet", action_name(action));
		break;
	case ACT_NONE:
	case ACT_COUNT:
		break;
	}
}

/* ---- signals and terminal ---- */

static void on_winch(uv_signal_t *h, int sig)
{
	struct ui *ui = h->data;
	(void)sig;
	struct winsize ws;
	if (ioctl(ui->ttyfd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
		resizeterm(ws.ws_row, ws.ws_col);
		ui->full_redraw = true;
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
	input_read(ui);
}

static void set_utf8_locale(void)
{
	setlocale(LC_ALL, "");
	const char *cs = nl_langinfo(CODESET);
	if (cs == NULL || strcmp(cs, "UTF-8") != 0)
		setlocale(LC_CTYPE, "C.UTF-8");
}

void ui_apply_config(struct ui *ui)
{
	bindings_reset();
	if (ui->cfg.prefix != 2) {
		bindings_unset(2);
		bindings_set(ui->cfg.prefix & ~WRX_K_META, ACT_SEND_PREFIX, 0);
	}
	for (size_t i = 0; i < ui->cfg.nbinds; i++)
		bindings_set(ui->cfg.binds[i].key, ui->cfg.binds[i].action, ui->cfg.binds[i].arg);
	session_set_scrollback(ui->s, ui->cfg.scrollback);
}

static int load_config(struct ui *ui, const char *config_file, char **cause)
{
	config_init(&ui->cfg);
	ui->config_file = config_file ? xstrdup(config_file) : NULL;
	return config_load_all(&ui->cfg, config_search_dir(ui->cwd, ui->in_repo ? ui->root : NULL),
			       config_file, cause);
}

/*
 * Keys are read from /dev/tty, polled (libuv makes that file non-blocking).
 * Frames are written to a second, blocking open of it, and each frame in one
 * write: curses draws into a memory file, which render_frame() hands over
 * whole (ui_flush_terminal). ncurses 6.4 flushes after every cursor movement,
 * so drawing to the terminal directly sent hundreds of small writes a frame:
 * a wake-up each for the terminal, and half-drawn frames on its screen. And
 * on a non-blocking file, a terminal that stopped reading made curses spin.
 *
 * Curses cannot set the terminal's modes through a memory file, so they are
 * set here: raw, no echo, no output processing (curses then assumes none),
 * and put back as they were when the dashboard ends.
 */
static int terminal_modes(struct ui *ui)
{
	if (tcgetattr(ui->ttyfd, &ui->tio_saved) < 0)
		return -errno;
	struct termios t = ui->tio_saved;
	cfmakeraw(&t);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	return tcsetattr(ui->ttyfd, TCSADRAIN, &t) < 0 ? -errno : 0;
}

static int terminal_open(struct ui *ui, char **cause)
{
	ui->ttyfd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (ui->ttyfd < 0) {
		*cause = xasprintf("the dashboard needs a terminal (/dev/tty: %s)", strerror(errno));
		return -errno;
	}
	ui->outfd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	ui->framefd = memfd_create("workrex-frame", MFD_CLOEXEC);
	ui->ttyf = fdopen(ui->ttyfd, "r");
	ui->framef = ui->framefd >= 0 ? fdopen(ui->framefd, "w") : NULL;
	int rc = ui->outfd < 0 || ui->ttyf == NULL || ui->framef == NULL ? -errno : 0;
	if (rc == 0)
		rc = terminal_modes(ui);
	if (rc < 0) {
		*cause = xasprintf("/dev/tty: %s", strerror(-rc));
		goto fail;
	}
	ui->modes_set = true;
	const char *term = getenv("TERM");
	if (term == NULL || *term == '\0')
		term = "xterm-256color";
	/* Its size: curses cannot ask a memory file, but reads LINES and COLUMNS. */
	struct winsize ws;
	bool sized = ioctl(ui->ttyfd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0;
	char *lines = getenv("LINES") ? xstrdup(getenv("LINES")) : NULL;
	char *columns = getenv("COLUMNS") ? xstrdup(getenv("COLUMNS")) : NULL;
	if (sized) {
		char v[16];
		snprintf(v, sizeof v, "%u", ws.ws_row);
		setenv("LINES", v, 1);
		snprintf(v, sizeof v, "%u", ws.ws_col);
		setenv("COLUMNS", v, 1);
	}
	ui->scr = newterm(term, ui->framef, ui->ttyf);
	if (ui->scr == NULL) {
		/* An unknown TERM (ssh from an exotic terminal): xterm is the safe guess. */
		log_msg("terminal type '%s' unknown here; using xterm-256color", term);
		ui->scr = newterm("xterm-256color", ui->framef, ui->ttyf);
	}
	/* Put back as they were: the panes' programs inherit them. */
	lines ? setenv("LINES", lines, 1) : unsetenv("LINES");
	columns ? setenv("COLUMNS", columns, 1) : unsetenv("COLUMNS");
	free(lines);
	free(columns);
	if (ui->scr == NULL) {
		*cause = xasprintf("cannot use terminal type '%s'", term);
		rc = -EINVAL;
		goto fail;
	}
	set_term(ui->scr);
	intrflush(stdscr, FALSE);
	/* Never cut a frame short for pending input: the loop reads it next. */
	typeahead(-1);
	set_escdelay(25);
	curs_set(0);
	if (has_colors()) {
		start_color();
		use_default_colors();
		ui->ncolours = COLORS;
	}
	/* Bracketed paste and focus events from the outer terminal. */
	buf_addstr(&ui->tty_out, "\033[?2004h\033[?1004h");
	ui_flush_terminal(ui);
	input_init(ui);
	return 0;
fail:
	if (ui->modes_set)
		tcsetattr(ui->ttyfd, TCSADRAIN, &ui->tio_saved);
	ui->modes_set = false;
	if (ui->ttyf)
		fclose(ui->ttyf);
	else
		close(ui->ttyfd);
	if (ui->framef)
		fclose(ui->framef);
	else if (ui->framefd >= 0)
		close(ui->framefd);
	if (ui->outfd >= 0)
		close(ui->outfd);
	return rc;
}

void ui_flush_terminal(struct ui *ui)
{
	fflush(ui->framef);
	/* The sequences written besides curses (OSC 52, cursor shape) go after it. */
	if (ui->tty_out.len && write(ui->framefd, ui->tty_out.data, ui->tty_out.len) < 0)
		log_msg("frame buffer: %s", strerror(errno));
	buf_consume(&ui->tty_out, ui->tty_out.len);
	off_t len = lseek(ui->framefd, 0, SEEK_CUR);
	char buf[1 << 16];
	for (off_t off = 0; off < len;) {
		ssize_t n = pread(ui->framefd, buf, sizeof buf, off);
		if (n <= 0)
			break;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(ui->outfd, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				goto out; /* the terminal is gone: nothing more to show */
			done += w;
		}
		off += n;
	}
out:
	if (ftruncate(ui->framefd, 0) < 0 || lseek(ui->framefd, 0, SEEK_SET) < 0)
		log_msg("frame buffer: %s", strerror(errno));
}

static void terminal_close(struct ui *ui)
{
	if (ui->scr == NULL)
		return;
	endwin();
	buf_addstr(&ui->tty_out, "\033[?2004l\033[?1004l\033[0 q");
	ui_flush_terminal(ui);
	if (ui->modes_set)
		tcsetattr(ui->ttyfd, TCSADRAIN, &ui->tio_saved);
	ui->modes_set = false;
	delscreen(ui->scr);
	ui->scr = NULL;
	fclose(ui->ttyf);
	fclose(ui->framef);
	close(ui->outfd);
}

void dashboard_stop(struct ui *ui)
{
	if (ui->quitting)
		return;
	ui->quitting = true;
	uv_stop(ui->loop);
}

static void close_handle(uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

int dashboard_run(const struct dashboard_opts *opts)
{
	struct ui ui_storage = {0}, *ui = &ui_storage;
	char *cause = NULL;
	int rc;

	set_utf8_locale();
	log_open();
	ui->loop = uv_default_loop();
	ui->cwd = getcwd(NULL, 0);
	if (ui->cwd == NULL) {
		fprintf(stderr, "workrex: cannot read the current directory: %s\n", strerror(errno));
		return 1;
	}
	ui->sidebar = true;
	ui->s = session_new(ui->loop, &hooks, ui);
	struct repo *repo = NULL;
	if (repo_open(ui->cwd, &repo, &cause) == 0) {
		ui->root = xstrdup(repo_root(repo));
		ui->gitdir = xstrdup(repo_gitdir(repo));
		ui->git_name = repo_config_get(repo, "user.name");
		ui->git_email = repo_config_get(repo, "user.email");
		ui->in_repo = true;
		repo_free(repo);
	} else {
		free(cause);
		cause = NULL;
		ui->root = xstrdup(ui->cwd);
	}
	/* The project file comes from the main worktree when we stand in an agent's. */
	if (load_config(ui, opts->config_file, &cause) < 0) {
		fprintf(stderr, "workrex: %s\n", cause);
		free(cause);
		session_free(ui->s);
		config_free(&ui->cfg);
		free(ui->config_file);
		free(ui->cwd);
		free(ui->root);
		sandbox_stop(ui);
		return 1;
	}
	ui_apply_config(ui);
	ui->self_exe = realpath("/proc/self/exe", NULL);
	if (ui->self_exe == NULL)
		ui->self_exe = xstrdup("workrex");
	/*
	 * A client that hangs up before its reply is written must cost that
	 * write an EPIPE, not the dashboard its life. (Children get SIG_DFL
	 * back: pty.c and uv_spawn reset every signal.)
	 */
	signal(SIGPIPE, SIG_IGN);
	/* Signals before newterm(), so curses leaves SIGWINCH to us. */
	uv_signal_init(ui->loop, &ui->sig_winch);
	uv_signal_init(ui->loop, &ui->sig_chld);
	uv_signal_init(ui->loop, &ui->sig_term);
	uv_signal_init(ui->loop, &ui->sig_hup);
	ui->sig_winch.data = ui->sig_chld.data = ui->sig_term.data = ui->sig_hup.data = ui;
	uv_signal_start(&ui->sig_winch, on_winch, SIGWINCH);
	uv_signal_start(&ui->sig_chld, on_chld, SIGCHLD);
	uv_signal_start(&ui->sig_term, on_term, SIGTERM);
	uv_signal_start(&ui->sig_hup, on_term, SIGHUP);
	uv_timer_init(ui->loop, &ui->frame_timer);
	uv_timer_init(ui->loop, &ui->msg_timer);
	uv_timer_init(ui->loop, &ui->tick_timer);
	ui->frame_timer.data = ui->msg_timer.data = ui->tick_timer.data = ui;
	ui_watch_config(ui);

	if (bridge_start(ui, &cause) < 0) {
		fprintf(stderr, "workrex: %s\n", cause);
		free(cause);
		rc = 1;
		goto out;
	}

	if (terminal_open(ui, &cause) < 0) {
		fprintf(stderr, "workrex: %s\n", cause);
		free(cause);
		rc = 1;
		goto out;
	}
	uv_poll_init(ui->loop, &ui->tty_poll, ui->ttyfd);
	ui->tty_poll.data = ui;
	uv_poll_start(&ui->tty_poll, UV_READABLE | UV_DISCONNECT, on_tty);

	for (size_t i = 0; i < ui->cfg.nwarnings; i++)
		log_msg("config: %s", ui->cfg.warnings[i]);
	if (ui->cfg.nwarnings)
		ui_message(ui, true, "config: %s", ui->cfg.warnings[0]);

	const char *base = strrchr(ui->root, '/');
	struct agent *home = session_add_agent(ui->s, base && base[1] ? base + 1 : ui->root, ui->cwd);
	if (ui->in_repo)
		agents_load(ui);
	sandbox_start(ui);
	ui->layout_dirty = true;
	render_frame(ui); /* sizes the area before the first pane starts */
	open_shell(ui, home);
	if (ui->cfg.untrusted_path)
		trust_ask(ui);

	uv_run(ui->loop, UV_RUN_DEFAULT);
	rc = 0;
	uv_poll_stop(&ui->tty_poll);
	close_handle((uv_handle_t *)&ui->tty_poll);
out:
	ui->quitting = true;
	/* A question left open is a no: its owner cleans up while all still stands. */
	ui_prompt_end(ui, NULL);
	session_free(ui->s);
	ui->s = NULL;
	bridge_stop(ui);
	sandbox_stop(ui);
	close_handle((uv_handle_t *)&ui->sig_winch);
	close_handle((uv_handle_t *)&ui->sig_chld);
	close_handle((uv_handle_t *)&ui->sig_term);
	close_handle((uv_handle_t *)&ui->sig_hup);
	close_handle((uv_handle_t *)&ui->frame_timer);
	close_handle((uv_handle_t *)&ui->msg_timer);
	close_handle((uv_handle_t *)&ui->tick_timer);
	ui_unwatch_config(ui);
	uv_run(ui->loop, UV_RUN_NOWAIT);
	terminal_close(ui);
	textview_close(ui);
	free(ui->message);
	free(ui->sidebar_rows);
	buf_free(&ui->paste);
	buf_free(&ui->tty_out);
	config_free(&ui->cfg);
	free(ui->config_file);
	free(ui->trust_declined);
	free(ui->cwd);
	free(ui->root);
	free(ui->self_exe);
	uv_loop_close(ui->loop);
	log_close();
	return rc;
}
