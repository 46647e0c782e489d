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
	if (tcgetattr(ui->tty.fd, &ui->tty.tio_saved) < 0)
		return -errno;
	struct termios t = ui->tty.tio_saved;
	cfmakeraw(&t);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	return tcsetattr(ui->tty.fd, TCSADRAIN, &t) < 0 ? -errno : 0;
}

int tty_open(struct ui *ui, char **cause)
{
	ui->tty.fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (ui->tty.fd < 0) {
		*cause =
			xasprintf("the dashboard needs a terminal (/dev/tty: %s)", strerror(errno));
		return -errno;
	}
	/* Its own open of the terminal: non-blocking here alone (see send_out). */
	ui->tty.outfd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	ui->tty.framefd = memfd_create("workrex-frame", MFD_CLOEXEC);
	ui->tty.f = fdopen(ui->tty.fd, "r");
	ui->tty.framef = ui->tty.framefd >= 0 ? fdopen(ui->tty.framefd, "w") : NULL;
	int rc = ui->tty.outfd < 0 || ui->tty.f == NULL || ui->tty.framef == NULL ? -errno : 0;
	if (rc == 0)
		rc = terminal_modes(ui);
	if (rc < 0) {
		*cause = xasprintf("/dev/tty: %s", strerror(-rc));
		goto fail;
	}
	ui->tty.modes_set = true;
	const char *term = getenv("TERM");
	if (term == NULL || *term == '\0')
		term = "xterm-256color";
	/* Its size: curses cannot ask a memory file, but reads LINES and COLUMNS. */
	struct winsize ws;
	bool sized = ioctl(ui->tty.fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0;
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
	char *tdir = NULL, *direct = terminfo_wants_direct(term, ui->tty.outfd)
					     ? terminfo_direct_entry(term, &tdir)
					     : NULL;
	if (direct) {
		char *saved = getenv("TERMINFO") ? xstrdup(getenv("TERMINFO")) : NULL;
		setenv("TERMINFO", tdir, 1);
		ui->tty.scr = newterm(direct, ui->tty.framef, ui->tty.f);
		saved ? setenv("TERMINFO", saved, 1) : unsetenv("TERMINFO");
		log_msg("direct colour through %s/%s%s", tdir, direct,
			ui->tty.scr ? "" : ": curses cannot load it; 256 colours");
		free(saved);
	}
	free(direct);
	free(tdir);
	if (ui->tty.scr == NULL)
		ui->tty.scr = newterm(term, ui->tty.framef, ui->tty.f);
	if (ui->tty.scr == NULL) {
		/* An unknown TERM (ssh from an exotic terminal): xterm is the safe guess. */
		log_msg("terminal type '%s' unknown here; using xterm-256color", term);
		ui->tty.scr = newterm("xterm-256color", ui->tty.framef, ui->tty.f);
	}
	/* Put back as they were: the panes' programs inherit them. */
	lines ? setenv("LINES", lines, 1) : unsetenv("LINES");
	columns ? setenv("COLUMNS", columns, 1) : unsetenv("COLUMNS");
	free(lines);
	free(columns);
	if (ui->tty.scr == NULL) {
		*cause = xasprintf("cannot use terminal type '%s'", term);
		rc = -EINVAL;
		goto fail;
	}
	set_term(ui->tty.scr);
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
		ui->tty.ncolours = COLORS;
		ui->tty.colour_kind = terminfo_direct_kind();
		ui->w->display_colours = ui->tty.colour_kind == TERMINFO_PALETTE ? COLORS : 1 << 24;
	}
	terminfo_extras(term, &ui->tty.extras);
	/* Bracketed paste and focus events from the outer terminal. */
	buf_addstr(&ui->tty.raw, "\033[?2004h\033[?1004h");
	termclip_query(ui);
	ui_flush_terminal(ui);
	input_init(ui);
	return 0;
fail:
	if (ui->tty.modes_set)
		tcsetattr(ui->tty.fd, TCSADRAIN, &ui->tty.tio_saved);
	ui->tty.modes_set = false;
	if (ui->tty.f)
		fclose(ui->tty.f);
	else
		close(ui->tty.fd);
	if (ui->tty.framef)
		fclose(ui->tty.framef);
	else if (ui->tty.framefd >= 0)
		close(ui->tty.framefd);
	if (ui->tty.outfd >= 0)
		close(ui->tty.outfd);
	return rc;
}

/*
 * Frames to the terminal without blocking the loop: what the terminal has
 * not taken yet waits in ui->tty.out, and a poll for room sends the rest. A
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
	bool may_wait = wait || !ui->tty.out_polls;
	while (ui->tty.out.len > 0) {
		ssize_t n = write(ui->tty.outfd, ui->tty.out.data, ui->tty.out.len);
		if (n > 0) {
			buf_consume(&ui->tty.out, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && !may_wait)
			break;
		struct pollfd pf = {.fd = ui->tty.outfd, .events = POLLOUT};
		if (n < 0 && errno == EAGAIN && poll(&pf, 1, 5000) > 0)
			continue;
		/* The terminal is gone, or took nothing for 5 s at a start or an end. */
		buf_consume(&ui->tty.out, ui->tty.out.len);
	}
	if (!ui->tty.out_polls)
		return;
	bool waits = ui->tty.out.len > 0;
	if (waits && !ui->tty.out_waits)
		uv_poll_start(&ui->tty.out_poll, UV_WRITABLE, on_room);
	else if (!waits && ui->tty.out_waits)
		uv_poll_stop(&ui->tty.out_poll);
	ui->tty.out_waits = waits;
	if (!waits && ui->tty.frame_held) {
		ui->tty.frame_held = false;
		ui_dirty(ui);
	}
}

void tty_output_on_loop(struct ui *ui, uv_loop_t *loop)
{
	uv_poll_init(loop, &ui->tty.out_poll, ui->tty.outfd);
	ui->tty.out_poll.data = ui;
	ui->tty.out_polls = true;
}

void tty_output_off_loop(struct ui *ui)
{
	if (!ui->tty.out_polls)
		return;
	uv_poll_stop(&ui->tty.out_poll);
	uv_close((uv_handle_t *)&ui->tty.out_poll, NULL);
	ui->tty.out_polls = ui->tty.out_waits = false;
}

bool ui_output_waits(const struct ui *ui)
{
	return ui->tty.out.len > 0;
}

void ui_flush_terminal(struct ui *ui)
{
	fflush(ui->tty.framef);
	/* The sequences written besides curses (OSC 52, cursor shape) go after it. */
	if (ui->tty.raw.len && write(ui->tty.framefd, ui->tty.raw.data, ui->tty.raw.len) < 0)
		log_msg("frame buffer: %s", strerror(errno));
	buf_consume(&ui->tty.raw, ui->tty.raw.len);
	off_t len = lseek(ui->tty.framefd, 0, SEEK_CUR);
	if (len > 0) {
		buf_reserve(&ui->tty.out, (size_t)len);
		ssize_t n =
			pread(ui->tty.framefd, ui->tty.out.data + ui->tty.out.len, (size_t)len, 0);
		if (n > 0)
			ui->tty.out.len += (size_t)n;
	}
	if (ftruncate(ui->tty.framefd, 0) < 0 || lseek(ui->tty.framefd, 0, SEEK_SET) < 0)
		log_msg("frame buffer: %s", strerror(errno));
	send_out(ui, false);
}

void tty_close(struct ui *ui)
{
	if (ui->tty.scr == NULL)
		return;
	endwin();
	buf_addstr(&ui->tty.raw, "\033[?2004l\033[?1004l\033[0 q");
	tty_output_off_loop(ui);
	ui_flush_terminal(ui);
	if (ui->tty.modes_set)
		tcsetattr(ui->tty.fd, TCSADRAIN, &ui->tty.tio_saved);
	ui->tty.modes_set = false;
	delscreen(ui->tty.scr);
	ui->tty.scr = NULL;
	fclose(ui->tty.f);
	fclose(ui->tty.framef);
	close(ui->tty.outfd);
	buf_free(&ui->tty.out);
}
