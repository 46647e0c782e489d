/*
 * pane.c - a libvterm screen with our own scrollback and dirty tracking.
 *
 * libvterm does the parsing; this file wires its callbacks to plain state
 * (dirty rows, cursor, title, modes), stores the lines it pushes off the top
 * in a scrollback ring. Program output passes through vtfilter first, which
 * keeps libvterm 0.1.4's parser bugs out of reach of what programs print;
 * a sequence that is still unfinished at the end of a read is held here
 * until the rest arrives.
 */
#include "pane.h"

#include "../util/util.h"
#include "scrollback.h"
#include "vtfilter.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <vterm.h>

static_assert((int)WRX_KEY_PAGEDOWN == (int)VTERM_KEY_PAGEDOWN, "key values follow libvterm");
static_assert((int)WRX_KEY_F0 == (int)VTERM_KEY_FUNCTION_0, "key values follow libvterm");
static_assert((int)WRX_MOD_CTRL == (int)VTERM_MOD_CTRL && (int)WRX_MOD_ALT == (int)VTERM_MOD_ALT, "mods");

/*
 * libvterm 0.1.4 writes through a NULL pointer when a wide character is
 * printed on a one-column screen (found by tests/fuzz/fuzz_pane.c), so a
 * pane is never narrower than two columns; the UI draws what fits.
 */
#define MIN_COLS 2

/* An unfinished OSC/DCS string longer than this is dropped. */
#define HOLD_MAX (1024 * 1024)

enum { DISCARD_NONE, DISCARD_STRING, DISCARD_CSI };

struct pane {
	VTerm *vt;
	VTermScreen *vs;
	int rows, cols;
	struct sb *sb;
	size_t sb_limit;

	uint8_t *dirty; /* one flag per row */
	int events;     /* PANE_EV_* gathered during one feed */
	pane_event_fn *fn;
	void *data;

	struct pane_io io;
	bool has_io;

	struct buf hold; /* held-back unfinished string sequence */
	int discard;     /* inside a sequence too long to hold: DISCARD_* */
	struct vtfilter filter;

	char *title; /* owned */
	VTermPos cursor;
	bool cursor_visible;
	int cursor_shape;
	int mouse_mode;
	bool alt_screen;
	bool exited;
	int exit_status;

	struct wrx_cell *linebuf; /* scratch of linebuf_cap cells */
	int linebuf_cap;
};

static uint32_t colour_from_vterm(const VTermColor *c, bool fg)
{
	if (fg ? VTERM_COLOR_IS_DEFAULT_FG(c) : VTERM_COLOR_IS_DEFAULT_BG(c))
		return WRX_COLOUR_DEFAULT;
	if (VTERM_COLOR_IS_INDEXED(c))
		return WRX_COLOUR_INDEXED | c->indexed.idx;
	return WRX_COLOUR_RGB | ((uint32_t)c->rgb.red << 16) | ((uint32_t)c->rgb.green << 8) |
	       c->rgb.blue;
}

static void colour_to_vterm(uint32_t w, VTermColor *c, bool fg)
{
	switch (WRX_COLOUR_KIND(w)) {
	case WRX_COLOUR_INDEXED:
		vterm_color_indexed(c, (uint8_t)w);
		break;
	case WRX_COLOUR_RGB:
		vterm_color_rgb(c, (uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w);
		break;
	default:
		vterm_color_indexed(c, 0);
		c->type = fg ? VTERM_COLOR_DEFAULT_FG : VTERM_COLOR_DEFAULT_BG;
		c->type |= VTERM_COLOR_INDEXED;
		break;
	}
}

static void cell_from_vterm(const VTermScreenCell *v, struct wrx_cell *c)
{
	memcpy(c->ch, v->chars, sizeof c->ch);
	if (v->chars[0] == (uint32_t)-1) {
		memset(c->ch, 0, sizeof c->ch);
		c->width = 0;
	} else {
		c->width = (uint8_t)(v->width > 0 ? v->width : 1);
	}
	c->attrs = 0;
	if (v->attrs.bold)
		c->attrs |= WRX_ATTR_BOLD;
	if (v->attrs.underline == VTERM_UNDERLINE_DOUBLE)
		c->attrs |= WRX_ATTR_DUNDERLINE;
	else if (v->attrs.underline)
		c->attrs |= WRX_ATTR_UNDERLINE;
	if (v->attrs.italic)
		c->attrs |= WRX_ATTR_ITALIC;
	if (v->attrs.blink)
		c->attrs |= WRX_ATTR_BLINK;
	if (v->attrs.reverse)
		c->attrs |= WRX_ATTR_REVERSE;
	if (v->attrs.strike)
		c->attrs |= WRX_ATTR_STRIKE;
	c->fg = colour_from_vterm(&v->fg, true);
	c->bg = colour_from_vterm(&v->bg, false);
}

static void cell_to_vterm(const struct wrx_cell *c, VTermScreenCell *v)
{
	memset(v, 0, sizeof *v);
	memcpy(v->chars, c->ch, sizeof v->chars);
	v->width = (char)(c->width ? c->width : 1);
	if (c->width == 0)
		v->chars[0] = (uint32_t)-1;
	v->attrs.bold = !!(c->attrs & WRX_ATTR_BOLD);
	v->attrs.underline = (c->attrs & WRX_ATTR_DUNDERLINE) ? VTERM_UNDERLINE_DOUBLE
			     : (c->attrs & WRX_ATTR_UNDERLINE)   ? VTERM_UNDERLINE_SINGLE
								 : 0;
	v->attrs.italic = !!(c->attrs & WRX_ATTR_ITALIC);
	v->attrs.blink = !!(c->attrs & WRX_ATTR_BLINK);
	v->attrs.reverse = !!(c->attrs & WRX_ATTR_REVERSE);
	v->attrs.strike = !!(c->attrs & WRX_ATTR_STRIKE);
	colour_to_vterm(c->fg, &v->fg, true);
	colour_to_vterm(c->bg, &v->bg, false);
}

static void mark_rows(struct pane *p, int start, int end)
{
	if (start < 0)
		start = 0;
	if (end > p->rows)
		end = p->rows;
	if (start < end) {
		memset(p->dirty + start, 1, (size_t)(end - start));
		p->events |= PANE_EV_DAMAGE;
	}
}

static int cb_damage(VTermRect r, void *user)
{
	mark_rows(user, r.start_row, r.end_row);
	return 1;
}

static int cb_moverect(VTermRect dest, VTermRect src, void *user)
{
	(void)src;
	mark_rows(user, dest.start_row, dest.end_row);
	return 1;
}

static int cb_movecursor(VTermPos pos, VTermPos old, int visible, void *user)
{
	struct pane *p = user;
	(void)visible; /* the CURSORVISIBLE property is authoritative */
	mark_rows(p, old.row, old.row + 1);
	mark_rows(p, pos.row, pos.row + 1);
	p->cursor = pos;
	p->events |= PANE_EV_DAMAGE;
	return 1;
}

/* Keep titles printable: a program must not smuggle escapes into our border. */
static char *clean_title(const char *s)
{
	size_t n = strnlen(s, 256);
	char *t = xstrndup(s, n);
	for (char *c = t; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	return t;
}

static int cb_settermprop(VTermProp prop, VTermValue *val, void *user)
{
	struct pane *p = user;
	switch (prop) {
	case VTERM_PROP_CURSORVISIBLE:
		p->cursor_visible = val->boolean;
		break;
	case VTERM_PROP_CURSORSHAPE:
		p->cursor_shape = val->number;
		break;
	case VTERM_PROP_MOUSE:
		p->mouse_mode = val->number;
		return 1;
	case VTERM_PROP_ALTSCREEN:
		p->alt_screen = val->boolean;
		mark_rows(p, 0, p->rows);
		break;
	case VTERM_PROP_TITLE:
		free(p->title);
		p->title = clean_title(val->string ? val->string : "");
		p->events |= PANE_EV_TITLE;
		return 1;
	default:
		return 1;
	}
	p->events |= PANE_EV_DAMAGE;
	return 1;
}

static int cb_bell(void *user)
{
	struct pane *p = user;
	p->events |= PANE_EV_BELL;
	return 1;
}

static int cb_sb_pushline(int cols, const VTermScreenCell *cells, void *user)
{
	struct pane *p = user;
	int n = WRX_MIN(cols, p->linebuf_cap);
	for (int i = 0; i < n; i++)
		cell_from_vterm(&cells[i], &p->linebuf[i]);
	sb_push(p->sb, p->linebuf, n);
	return 1;
}

static int cb_sb_popline(int cols, VTermScreenCell *cells, void *user)
{
	struct pane *p = user;
	struct wrx_cell *tmp = xmalloc((size_t)cols * sizeof *tmp);
	int rc = sb_pop(p->sb, tmp, cols);
	if (rc == 0)
		for (int i = 0; i < cols; i++)
			cell_to_vterm(&tmp[i], &cells[i]);
	free(tmp);
	return rc == 0;
}

static const VTermScreenCallbacks screen_cbs = {
	.damage = cb_damage,
	.moverect = cb_moverect,
	.movecursor = cb_movecursor,
	.settermprop = cb_settermprop,
	.bell = cb_bell,
	.sb_pushline = cb_sb_pushline,
	.sb_popline = cb_sb_popline,
};

static void cb_output(const char *s, size_t len, void *user)
{
	struct pane *p = user;
	if (p->has_io && !p->exited)
		p->io.write(p->io.ctx, s, len);
}

struct pane *pane_new(int rows, int cols, size_t scrollback, pane_event_fn *fn, void *data)
{
	struct pane *p = xcalloc(1, sizeof *p);
	p->rows = WRX_MAX(rows, 1);
	p->cols = WRX_MAX(cols, MIN_COLS);
	p->fn = fn;
	p->data = data;
	p->sb_limit = scrollback;
	p->sb = sb_new(scrollback);
	p->dirty = xcalloc((size_t)p->rows, 1);
	p->linebuf = xcalloc((size_t)p->cols, sizeof *p->linebuf);
	p->linebuf_cap = p->cols;
	p->title = xstrdup("");
	p->cursor_visible = true;
	p->cursor_shape = WRX_CURSOR_BLOCK;

	p->vt = vterm_new(p->rows, p->cols);
	if (p->vt == NULL)
		abort();
	vterm_set_utf8(p->vt, 1);
	vterm_output_set_callback(p->vt, cb_output, p);
	p->vs = vterm_obtain_screen(p->vt);
	vterm_screen_set_callbacks(p->vs, &screen_cbs, p);
	vterm_screen_enable_altscreen(p->vs, 1);
	vterm_screen_set_damage_merge(p->vs, VTERM_DAMAGE_SCROLL);
	vterm_screen_reset(p->vs, 1);
	mark_rows(p, 0, p->rows);
	p->events = 0;
	return p;
}

void pane_free(struct pane *p)
{
	if (p == NULL)
		return;
	if (p->has_io && p->io.close)
		p->io.close(p->io.ctx);
	vterm_free(p->vt);
	sb_free(p->sb);
	buf_free(&p->hold);
	free(p->dirty);
	free(p->linebuf);
	free(p->title);
	free(p);
}

void pane_set_io(struct pane *p, const struct pane_io *io)
{
	p->io = *io;
	p->has_io = true;
	if (p->io.resize)
		p->io.resize(p->io.ctx, p->rows, p->cols);
}

static void emit(struct pane *p)
{
	int ev = p->events;
	p->events = 0;
	if (ev && p->fn)
		p->fn(p, ev, p->data);
}

static void vt_write(struct pane *p, const char *buf, size_t len)
{
	while (len > 0) {
		size_t n = vterm_input_write(p->vt, buf, len);
		if (n == 0)
			break;
		buf += n;
		len -= n;
	}
}

void pane_feed(struct pane *p, const char *buf, size_t len)
{
	if (len == 0)
		return;
	if (p->discard) {
		size_t t = 0;
		for (; t < len; t++) {
			unsigned char c = (unsigned char)buf[t];
			if (c == 0x07 || c == 0x18 || c == 0x1a || c == 0x1b)
				break;
			if (p->discard == DISCARD_CSI && c >= 0x40 && c != 0x7f)
				break;
		}
		if (t == len)
			return;
		p->discard = DISCARD_NONE;
		if (buf[t] != 0x1b)
			t++; /* ESC stays: it ends the sequence and may begin another */
		buf += t;
		len -= t;
		if (len == 0)
			return;
	}
	if (p->hold.len > 0) {
		buf_add(&p->hold, buf, len);
		buf = p->hold.data;
		len = p->hold.len;
	}
	static struct buf clean;
	buf_consume(&clean, clean.len);
	size_t used = vtfilter(&p->filter, buf, len, &clean);
	vt_write(p, clean.data, clean.len);
	if (p->hold.len > 0) {
		buf_consume(&p->hold, used);
	} else if (used < len) {
		buf_add(&p->hold, buf + used, len - used);
	}
	if (p->hold.len > HOLD_MAX) {
		/* An endless sequence: drop it to its end rather than grow or pass it on. */
		p->discard = memchr(p->hold.data, '[', WRX_MIN(p->hold.len, 64)) &&
				     !memchr(p->hold.data, ']', WRX_MIN(p->hold.len, 64))
			     ? DISCARD_CSI
			     : DISCARD_STRING;
		buf_consume(&p->hold, p->hold.len);
	}
	vterm_screen_flush_damage(p->vs);
	p->events |= PANE_EV_OUTPUT;
	emit(p);
}

void pane_set_exited(struct pane *p, int status)
{
	p->exited = true;
	p->exit_status = status;
	p->events |= PANE_EV_EXIT | PANE_EV_DAMAGE;
	emit(p);
}

void pane_resize(struct pane *p, int rows, int cols)
{
	rows = WRX_MAX(rows, 1);
	cols = WRX_MAX(cols, MIN_COLS);
	if (rows == p->rows && cols == p->cols)
		return;
	if (cols > p->linebuf_cap) {
		free(p->linebuf);
		p->linebuf = xcalloc((size_t)cols, sizeof *p->linebuf);
		p->linebuf_cap = cols;
	}
	free(p->dirty);
	p->dirty = xcalloc((size_t)rows, 1);
	p->rows = rows;
	p->cols = cols;
	vterm_set_size(p->vt, rows, cols);
	vterm_screen_flush_damage(p->vs);
	mark_rows(p, 0, rows);
	if (p->has_io && p->io.resize)
		p->io.resize(p->io.ctx, rows, cols);
	emit(p);
}

void pane_set_scrollback(struct pane *p, size_t lines)
{
	p->sb_limit = lines;
	sb_set_limit(p->sb, lines);
}

void pane_key(struct pane *p, int key, int mods)
{
	vterm_keyboard_key(p->vt, (VTermKey)key, (VTermModifier)mods);
}

void pane_char(struct pane *p, uint32_t cp, int mods)
{
	vterm_keyboard_unichar(p->vt, cp, (VTermModifier)mods);
}

void pane_write(struct pane *p, const char *buf, size_t len)
{
	cb_output(buf, len, p);
}

void pane_paste(struct pane *p, const char *buf, size_t len)
{
	vterm_keyboard_start_paste(p->vt);
	pane_write(p, buf, len);
	vterm_keyboard_end_paste(p->vt);
}

void pane_mouse(struct pane *p, int row, int col, int button, bool pressed, int mods)
{
	vterm_mouse_move(p->vt, row, col, (VTermModifier)mods);
	if (button > 0)
		vterm_mouse_button(p->vt, button, pressed, (VTermModifier)mods);
}

void pane_focus(struct pane *p, bool in)
{
	VTermState *st = vterm_obtain_state(p->vt);
	if (in)
		vterm_state_focus_in(st);
	else
		vterm_state_focus_out(st);
}

int pane_rows(const struct pane *p)
{
	return p->rows;
}

int pane_cols(const struct pane *p)
{
	return p->cols;
}

const char *pane_title(const struct pane *p)
{
	return p->title;
}

void pane_cursor(const struct pane *p, int *row, int *col, bool *visible, int *shape)
{
	*row = p->cursor.row;
	*col = p->cursor.col;
	*visible = p->cursor_visible;
	*shape = p->cursor_shape;
}

int pane_mouse_mode(const struct pane *p)
{
	return p->mouse_mode;
}

bool pane_alt_screen(const struct pane *p)
{
	return p->alt_screen;
}

bool pane_exited(const struct pane *p, int *status)
{
	if (status)
		*status = p->exit_status;
	return p->exited;
}

size_t pane_history(const struct pane *p)
{
	return sb_count(p->sb);
}

size_t pane_history_bytes(const struct pane *p)
{
	return sb_bytes(p->sb);
}

bool pane_row_dirty(const struct pane *p, int row)
{
	return row >= 0 && row < p->rows && p->dirty[row];
}

void pane_clean(struct pane *p)
{
	memset(p->dirty, 0, (size_t)p->rows);
}

void pane_touch(struct pane *p)
{
	memset(p->dirty, 1, (size_t)p->rows);
}

void pane_cell(const struct pane *p, int row, int col, struct wrx_cell *out)
{
	VTermScreenCell v;
	VTermPos pos = {.row = row, .col = col};
	if (!vterm_screen_get_cell(p->vs, pos, &v)) {
		memset(out, 0, sizeof *out);
		out->width = 1;
		return;
	}
	cell_from_vterm(&v, out);
}

int pane_line(const struct pane *p, int line, struct wrx_cell *cells, int ncols)
{
	if (line >= p->rows || line < -(int)sb_count(p->sb))
		return -1;
	if (line < 0)
		return sb_get(p->sb, (size_t)(-line - 1), cells, ncols) < 0 ? -1 : 0;
	for (int c = 0; c < ncols; c++) {
		if (c < p->cols) {
			pane_cell(p, line, c, &cells[c]);
		} else {
			memset(&cells[c], 0, sizeof cells[c]);
			cells[c].width = 1;
		}
	}
	return 0;
}

void pane_line_append(const struct pane *p, int line, int c0, int c1, struct buf *out)
{
	/* History lines may be wider than the screen is now. */
	int ncols = WRX_MAX(p->cols, WRX_MIN(c1 + 1, 4096));
	if (line < 0)
		ncols = WRX_MAX(ncols, 1024);
	struct wrx_cell *cells = xcalloc((size_t)ncols, sizeof *cells);
	if (pane_line(p, line, cells, ncols) == 0) {
		size_t keep = out->len;
		for (int c = WRX_MAX(c0, 0); c <= c1 && c < ncols; c++) {
			if (cells[c].width == 0)
				continue;
			if (cells[c].ch[0] == 0) {
				buf_addch(out, ' ');
				continue;
			}
			for (int k = 0; k < WRX_CELL_CHARS && cells[c].ch[k]; k++) {
				char u[4];
				buf_add(out, u, (size_t)utf8_encode(cells[c].ch[k], u));
			}
			keep = out->len;
		}
		out->len = keep;
		if (out->data)
			out->data[keep] = '\0';
	}
	free(cells);
}

static void sgr_colour(struct buf *out, uint32_t c, bool fg)
{
	switch (WRX_COLOUR_KIND(c)) {
	case WRX_COLOUR_INDEXED:
		buf_addf(out, ";%d;5;%u", fg ? 38 : 48, c & 0xff);
		break;
	case WRX_COLOUR_RGB:
		buf_addf(out, ";%d;2;%u;%u;%u", fg ? 38 : 48, (c >> 16) & 0xff, (c >> 8) & 0xff,
			 c & 0xff);
		break;
	default:
		break;
	}
}

void pane_line_append_sgr(const struct pane *p, int line, struct buf *out)
{
	int ncols = line < 0 ? WRX_MAX(p->cols, 1024) : p->cols;
	struct wrx_cell *cells = xcalloc((size_t)ncols, sizeof *cells);
	if (pane_line(p, line, cells, ncols) == 0) {
		int last = ncols - 1;
		while (last >= 0 && cells[last].ch[0] == 0 && cells[last].bg == WRX_COLOUR_DEFAULT &&
		       !(cells[last].attrs & WRX_ATTR_REVERSE))
			last--;
		uint16_t attrs = 0;
		uint32_t fg = 0, bg = 0;
		for (int c = 0; c <= last; c++) {
			const struct wrx_cell *x = &cells[c];
			if (x->width == 0)
				continue;
			if (x->attrs != attrs || x->fg != fg || x->bg != bg) {
				static const struct {
					uint16_t bit;
					int code;
				} sgr[] = {{WRX_ATTR_BOLD, 1},  {WRX_ATTR_ITALIC, 3},
					   {WRX_ATTR_UNDERLINE, 4}, {WRX_ATTR_BLINK, 5},
					   {WRX_ATTR_REVERSE, 7}, {WRX_ATTR_STRIKE, 9},
					   {WRX_ATTR_DUNDERLINE, 21}};
				buf_addstr(out, "\033[0");
				for (size_t k = 0; k < WRX_ARRAY_LEN(sgr); k++)
					if (x->attrs & sgr[k].bit)
						buf_addf(out, ";%d", sgr[k].code);
				sgr_colour(out, x->fg, true);
				sgr_colour(out, x->bg, false);
				buf_addch(out, 'm');
				attrs = x->attrs;
				fg = x->fg;
				bg = x->bg;
			}
			if (x->ch[0] == 0) {
				buf_addch(out, ' ');
				continue;
			}
			for (int k = 0; k < WRX_CELL_CHARS && x->ch[k]; k++) {
				char u[4];
				buf_add(out, u, (size_t)utf8_encode(x->ch[k], u));
			}
		}
		if (attrs || fg || bg)
			buf_addstr(out, "\033[0m");
	}
	free(cells);
}

char *pane_line_text(const struct pane *p, int line)
{
	struct buf b = {0};
	pane_line_append(p, line, 0, INT32_MAX - 1, &b);
	return b.data ? b.data : xstrdup("");
}
