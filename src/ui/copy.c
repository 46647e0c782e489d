/*
 * copy.c - scroll mode: read a pane's history, search it, copy from it.
 *
 * Positions are absolute lines: 0 .. rows-1 is the live screen, -1 the
 * newest history line, -history the oldest. The view shows `top` lines back
 * from the live screen. While the program keeps printing, its history grows
 * under us; copy_sync() shifts the view and the marks so they stay on the
 * same text. Copying goes to the outer terminal's clipboard (OSC 52) and to
 * xclip/wl-copy when one is installed.
 */
#include "../term/pane.h"
#include "../core/run.h"
#include "ui.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rows_of(struct wpane *wp)
{
	return WRX_MAX(pane_rows(wp->term), 1);
}

static int history_of(struct wpane *wp)
{
	return (int)pane_history(wp->term);
}

void copy_sync(struct wpane *wp)
{
	struct view *v = wp->view;
	size_t h = pane_history(wp->term);
	if (h == v->hist_seen)
		return;
	int d = (int)h - (int)v->hist_seen;
	v->hist_seen = h;
	if (v->top > 0 || v->sel) {
		v->top += d;
		v->cy -= d;
		v->sy -= d;
		v->mline -= d;
	}
	if (v->top > (int)h)
		v->top = (int)h;
	if (v->top < 0)
		v->top = 0;
	if (v->cy < -(int)h)
		v->cy = -(int)h;
}

static void clamp(struct wpane *wp)
{
	struct view *v = wp->view;
	int rows = rows_of(wp), hist = history_of(wp);
	if (v->top > hist)
		v->top = hist;
	if (v->top < 0)
		v->top = 0;
	if (v->cy < -hist)
		v->cy = -hist;
	if (v->cy > rows - 1)
		v->cy = rows - 1;
	if (v->cx < 0)
		v->cx = 0;
	if (v->cx > pane_cols(wp->term) - 1)
		v->cx = pane_cols(wp->term) - 1;
	/* Keep the cursor on screen by scrolling the view. */
	if (v->cy < -v->top)
		v->top = -v->cy;
	if (v->cy > -v->top + rows - 1)
		v->top = -(v->cy - rows + 1);
	if (v->top < 0)
		v->top = 0;
}

void copy_enter(struct ui *ui, struct wpane *wp, bool by_wheel)
{
	struct view *v = ui_view(wp);
	if (!v->copy) {
		int row, col, shape;
		bool vis;
		pane_cursor(wp->term, &row, &col, &vis, &shape);
		v->copy = true;
		v->by_wheel = by_wheel;
		v->top = 0;
		v->hist_seen = pane_history(wp->term);
		v->cy = row;
		v->cx = col;
		v->sel = false;
		v->mlen = 0;
	}
	ui_dirty(ui);
}

static void copy_leave(struct ui *ui, struct wpane *wp)
{
	struct view *v = ui_view(wp);
	v->copy = false;
	v->top = 0;
	v->sel = false;
	v->mlen = 0;
	pane_touch(wp->term);
	ui_dirty(ui);
}

void copy_scroll(struct ui *ui, struct wpane *wp, int delta)
{
	struct view *v = ui_view(wp);
	v->top += delta;
	v->cy -= delta;
	clamp(wp);
	if (v->top == 0 && v->by_wheel && !v->sel) {
		copy_leave(ui, wp);
		return;
	}
	ui_dirty(ui);
}

static void order(const struct view *v, int *l0, int *c0, int *l1, int *c1)
{
	if (v->sy < v->cy || (v->sy == v->cy && v->sx <= v->cx)) {
		*l0 = v->sy, *c0 = v->sx, *l1 = v->cy, *c1 = v->cx;
	} else {
		*l0 = v->cy, *c0 = v->cx, *l1 = v->sy, *c1 = v->sx;
	}
}

bool copy_highlight(const struct view *v, int line, int col)
{
	if (v->sel) {
		int l0, c0, l1, c1;
		order(v, &l0, &c0, &l1, &c1);
		if (line > l0 && line < l1)
			return true;
		if (line == l0 && line == l1)
			return col >= c0 && col <= c1;
		if (line == l0)
			return col >= c0;
		if (line == l1)
			return col <= c1;
		return false;
	}
	return v->mlen && line == v->mline && col >= v->mcol && col < v->mcol + v->mlen;
}

static char *selection_text(struct wpane *wp)
{
	struct view *v = wp->view;
	int l0, c0, l1, c1;
	order(v, &l0, &c0, &l1, &c1);
	struct buf b = {0};
	for (int l = l0; l <= l1; l++) {
		pane_line_append(wp->term, l, l == l0 ? c0 : 0, l == l1 ? c1 : 4095, &b);
		if (l < l1)
			buf_addch(&b, '\n');
	}
	return b.data ? b.data : xstrdup("");
}

/* Hand text to a clipboard program on the host, without blocking the loop. */
static bool run_copier(struct ui *ui, const char *prog, char *const args[], const char *text)
{
	if (!path_has(prog))
		return false;
	struct run_opts o = {.argv = args, .input = text};
	return run_start(ui->w->loop, &o) == 0;
}

const char *copy_to_clipboard(struct ui *ui, const char *text)
{
	struct buf seq = {0};
	buf_addstr(&seq, "\033]52;c;");
	base64_encode(&seq, text, strlen(text));
	buf_addstr(&seq, "\a");
	ui_tty_write(ui, seq.data, seq.len);
	buf_free(&seq);
	bool sys = false;
	if (getenv("WAYLAND_DISPLAY")) {
		char *const a[] = {"wl-copy", NULL};
		sys = run_copier(ui, "wl-copy", a, text);
	}
	if (sys)
		return "wl-copy";
	if (getenv("DISPLAY")) {
		char *const a[] = {"xclip", "-selection", "clipboard", NULL};
		if (run_copier(ui, "xclip", a, text))
			return "xclip";
	}
	return NULL;
}

static void search_answer(struct ui *ui, const char *answer, void *arg);

/* Find `needle` searching towards older lines (dir -1) or newer (+1). */
static bool search(struct ui *ui, struct wpane *wp, const char *needle, int dir)
{
	struct view *v = wp->view;
	int rows = rows_of(wp), hist = history_of(wp);
	int line = v->cy;
	for (int step = 0; step <= rows + hist; step++) {
		line += step == 0 ? 0 : dir;
		if (line < -hist || line >= rows)
			break;
		char *t = pane_line_text(wp->term, line);
		const char *hit = NULL;
		if (step == 0) {
			/* On the cursor's own line, only matches past (or before) it. */
			for (const char *s = strstr(t, needle); s; s = strstr(s + 1, needle)) {
				int col = (int)(s - t);
				if ((dir < 0 && col < v->cx) || (dir > 0 && col > v->cx)) {
					hit = s;
					if (dir > 0)
						break;
				}
			}
		} else if (dir < 0) {
			for (const char *s = strstr(t, needle); s; s = strstr(s + 1, needle))
				hit = s;
		} else {
			hit = strstr(t, needle);
		}
		if (hit) {
			/* Column in cells: count characters before the hit. */
			int col = 0;
			for (const char *c = t; c < hit; c++)
				if ((*c & 0xc0) != 0x80)
					col++;
			int len = 0;
			for (const char *c = needle; *c; c++)
				if ((*c & 0xc0) != 0x80)
					len++;
			v->cy = v->mline = line;
			v->cx = v->mcol = col;
			v->mlen = len;
			free(t);
			clamp(wp);
			ui_dirty(ui);
			return true;
		}
		free(t);
	}
	ui_message(ui, true, "not found: %s", needle);
	return false;
}

static char *last_search;

static void search_answer(struct ui *ui, const char *answer, void *arg)
{
	(void)arg;
	struct wpane *wp = session_focus(ui->w->s);
	if (answer == NULL || *answer == '\0' || wp == NULL || !ui_view(wp)->copy)
		return;
	free(last_search);
	last_search = xstrdup(answer);
	search(ui, wp, last_search, -1);
}

bool copy_key(struct ui *ui, struct wpane *wp, int key)
{
	struct view *v = ui_view(wp);
	int rows = rows_of(wp);
	switch (key) {
	case 'q':
	case 27:
	case 3:
		copy_leave(ui, wp);
		return true;
	case 'k':
	case WRX_K_UP:
		v->cy--;
		break;
	case 'j':
	case WRX_K_DOWN:
		v->cy++;
		break;
	case 'h':
	case WRX_K_LEFT:
		v->cx--;
		break;
	case 'l':
	case WRX_K_RIGHT:
		v->cx++;
		break;
	case '0':
	case WRX_K_HOME:
		v->cx = 0;
		break;
	case '$':
	case WRX_K_END:
		v->cx = pane_cols(wp->term) - 1;
		break;
	case WRX_K_PPAGE:
	case 2: /* C-b when the prefix is elsewhere */
		copy_scroll(ui, wp, rows - 1);
		return true;
	case WRX_K_NPAGE:
	case 6: /* C-f */
		copy_scroll(ui, wp, -(rows - 1));
		return true;
	case 'g':
		v->cy = -history_of(wp);
		break;
	case 'G':
		v->cy = rows - 1;
		break;
	case '/':
	case '?':
		ui_prompt(ui, "search up:", false, search_answer, NULL);
		return true;
	case 'n':
		if (last_search)
			search(ui, wp, last_search, -1);
		return true;
	case 'N':
		if (last_search)
			search(ui, wp, last_search, 1);
		return true;
	case 'v':
	case ' ':
		v->sel = !v->sel;
		v->sy = v->cy;
		v->sx = v->cx;
		v->mlen = 0;
		break;
	case 'y':
	case '\r': {
		if (!v->sel) {
			ui_message(ui, true, "nothing selected: v starts a selection");
			return true;
		}
		char *text = selection_text(wp);
		const char *tool = copy_to_clipboard(ui, text);
		size_t n = strlen(text);
		/* Where it went: the terminal's clipboard (OSC 52), if it takes one, and the system's. */
		if (tool)
			ui_message(
				ui, false,
				"copied %zu byte%s to the clipboard (%s) and the terminal (OSC 52)",
				n, n == 1 ? "" : "s", tool);
		else
			ui_message(ui, false,
				   "copied %zu byte%s to the terminal (OSC 52; no wl-copy or xclip "
				   "here, so only a terminal that takes OSC 52 has it)",
				   n, n == 1 ? "" : "s");
		free(text);
		copy_leave(ui, wp);
		return true;
	}
	default:
		return false;
	}
	clamp(wp);
	ui_dirty(ui);
	return true;
}
