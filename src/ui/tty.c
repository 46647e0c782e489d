/*
 * tty.c - the outer terminal: opening it for the dashboard, its modes,
 * one write per frame, and putting it back as it was.
 */
#include "../util/log.h"
#include "terminfo.h"
#include "ui.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

void tty_utf8_locale(void)
{
	setlocale(LC_ALL, "");
	const char *cs = nl_langinfo(CODESET);
	if (cs == NULL || strcmp(cs, "UTF-8") != 0)
		setlocale(LC_CTYPE, "C.UTF-8");
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

int tty_open(struct ui *ui, char **cause)
{
	ui->ttyfd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (ui->ttyfd < 0) {
		*cause =
			xasprintf("the dashboard needs a terminal (/dev/tty: %s)", strerror(errno));
		return -errno;
	}
	/* Its own open of the terminal: non-blocking here alone (see send_out). */
	ui->outfd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
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
	/*
	 * Direct colour where the terminal has it but TERM's entry does not say
	 * so (xterm-256color with COLORTERM=truecolor, inside tmux too): curses
	 * speaks it only through an entry that does, which we make once.
	 */
	char *tdir = NULL, *direct = terminfo_wants_direct(term, ui->outfd)
					     ? terminfo_direct_entry(term, &tdir)
					     : NULL;
	if (direct) {
		char *saved = getenv("TERMINFO") ? xstrdup(getenv("TERMINFO")) : NULL;
		setenv("TERMINFO", tdir, 1);
		ui->scr = newterm(direct, ui->framef, ui->ttyf);
		saved ? setenv("TERMINFO", saved, 1) : unsetenv("TERMINFO");
		log_msg("direct colour through %s/%s%s", tdir, direct,
			ui->scr ? "" : ": curses cannot load it; 256 colours");
		free(saved);
	}
	free(direct);
	free(tdir);
	if (ui->scr == NULL)
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
	/*
	 * Enter is CR, as every terminal sends it; curses' default (nl) turns it
	 * into LF on input, which a raw-mode program (Claude Code's input box,
	 * Codex's menus) takes for C-j and never submits. C-j stays LF.
	 */
	nonl();
	intrflush(stdscr, FALSE);
	/* Never cut a frame short for pending input: the loop reads it next. */
	typeahead(-1);
	set_escdelay(25);
	curs_set(0);
	if (has_colors()) {
		start_color();
		use_default_colors();
		ui->ncolours = COLORS;
		ui->colour_kind = terminfo_direct_kind();
		ui->w->display_colours = ui->colour_kind == TERMINFO_PALETTE ? COLORS : 1 << 24;
	}
	terminfo_extras(term, &ui->extras);
	/* Bracketed paste and focus events from the outer terminal. */
	buf_addstr(&ui->tty_out, "\033[?2004h\033[?1004h");
	termclip_query(ui);
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

/*
 * Frames to the terminal without blocking the loop: what the terminal has
 * not taken yet waits in ui->out, and a poll for room sends the rest. A
 * frame due meanwhile waits for it (ui_output_waits), then draws what is
 * current: a terminal that reads slowly (a slow link, a paused tmux
 * client) gets fewer frames, and the panes, keys and agents go on.
 * Before the loop runs and at the end, it waits for room instead.
 */
static void send_out(struct ui *ui, bool wait);

static void on_room(uv_poll_t *h, int status, int events)
{
	(void)status;
	(void)events;
	send_out(h->data, false);
}

static void send_out(struct ui *ui, bool wait)
{
	bool may_wait = wait || !ui->out_polls;
	while (ui->out.len > 0) {
		ssize_t n = write(ui->outfd, ui->out.data, ui->out.len);
		if (n > 0) {
			buf_consume(&ui->out, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && !may_wait)
			break;
		struct pollfd pf = {.fd = ui->outfd, .events = POLLOUT};
		if (n < 0 && errno == EAGAIN && poll(&pf, 1, 5000) > 0)
			continue;
		/* The terminal is gone, or took nothing for 5 s at a start or an end. */
		buf_consume(&ui->out, ui->out.len);
	}
	if (!ui->out_polls)
		return;
	bool waits = ui->out.len > 0;
	if (waits && !ui->out_waits)
		uv_poll_start(&ui->out_poll, UV_WRITABLE, on_room);
	else if (!waits && ui->out_waits)
		uv_poll_stop(&ui->out_poll);
	ui->out_waits = waits;
	if (!waits && ui->frame_held) {
		ui->frame_held = false;
		ui_dirty(ui);
	}
}

void tty_output_on_loop(struct ui *ui, uv_loop_t *loop)
{
	uv_poll_init(loop, &ui->out_poll, ui->outfd);
	ui->out_poll.data = ui;
	ui->out_polls = true;
}

void tty_output_off_loop(struct ui *ui)
{
	if (!ui->out_polls)
		return;
	uv_poll_stop(&ui->out_poll);
	uv_close((uv_handle_t *)&ui->out_poll, NULL);
	ui->out_polls = ui->out_waits = false;
}

bool ui_output_waits(const struct ui *ui)
{
	return ui->out.len > 0;
}

void ui_flush_terminal(struct ui *ui)
{
	fflush(ui->framef);
	/* The sequences written besides curses (OSC 52, cursor shape) go after it. */
	if (ui->tty_out.len && write(ui->framefd, ui->tty_out.data, ui->tty_out.len) < 0)
		log_msg("frame buffer: %s", strerror(errno));
	buf_consume(&ui->tty_out, ui->tty_out.len);
	off_t len = lseek(ui->framefd, 0, SEEK_CUR);
	if (len > 0) {
		buf_reserve(&ui->out, (size_t)len);
		ssize_t n = pread(ui->framefd, ui->out.data + ui->out.len, (size_t)len, 0);
		if (n > 0)
			ui->out.len += (size_t)n;
	}
	if (ftruncate(ui->framefd, 0) < 0 || lseek(ui->framefd, 0, SEEK_SET) < 0)
		log_msg("frame buffer: %s", strerror(errno));
	send_out(ui, false);
}

void tty_close(struct ui *ui)
{
	if (ui->scr == NULL)
		return;
	endwin();
	buf_addstr(&ui->tty_out, "\033[?2004l\033[?1004l\033[0 q");
	tty_output_off_loop(ui);
	ui_flush_terminal(ui);
	if (ui->modes_set)
		tcsetattr(ui->ttyfd, TCSADRAIN, &ui->tio_saved);
	ui->modes_set = false;
	delscreen(ui->scr);
	ui->scr = NULL;
	fclose(ui->ttyf);
	fclose(ui->framef);
	close(ui->outfd);
	buf_free(&ui->out);
}
