/*
 * pane.c - a terminal: libvterm's state, our screen and scrollback, dirty rows.
 *
 * libvterm does the parsing; screen.c keeps the cells; this file wires the
 * rest to plain state (dirty rows, cursor, title, modes) and stores the lines
 * pushed off the top in a scrollback ring. Program output passes through
 * vtfilter first, which keeps libvterm 0.1.4's parser bugs out of reach of
 * what programs print; a sequence that is still unfinished at the end of a
 * read is held here until the rest arrives.
 */
#include "pane.h"

#include "../util/util.h"
#include "colour.h"
#include "screen.h"
#include "scrollback.h"
#include "vtfilter.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <vterm.h>

static_assert((int)WRX_KEY_PAGEDOWN == (int)VTERM_KEY_PAGEDOWN, "key values follow libvterm");
static_assert((int)WRX_KEY_F0 == (int)VTERM_KEY_FUNCTION_0, "key values follow libvterm");
static_assert((int)WRX_MOD_CTRL == (int)VTERM_MOD_CTRL && (int)WRX_MOD_ALT == (int)VTERM_MOD_ALT,
	      "mods");

/*
 * libvterm 0.1.4 writes through a NULL pointer when a wide character is
 * printed on a one-column screen (found by tests/fuzz/fuzz_pane.c), so a
 * pane is never narrower than two columns; the UI draws what fits.
 */
#define MIN_COLS 2

/* An unfinished OSC/DCS string longer than this is dropped. */
#define HOLD_MAX (1024 * 1024)
/* pane_feed's scratch space kept between calls: a 64 KB read's needs, with room. */
#define SCRATCH_KEEP (512 * 1024)

enum { DISCARD_NONE, DISCARD_STRING, DISCARD_CSI };

struct pane {
	VTerm *vt; /* NULL in a mirror */
	struct screen *scr;
	/* A mirror's screen: rows of cells and their wrapped marks, and its cursor. */
	struct wrx_cell **mrows;
	bool *mwrapped;
	int mrow, mcol;
	int want_rows, want_cols; /* a mirror's size as its owner last asked */
	int rows, cols;
	struct sb *sb;
	size_t sb_limit;

	uint8_t *dirty;       /* one flag per row */
	bool all_marked;      /* every row dirty at this serial: a flood's scrolls mark no more */
	uint64_t serial;      /* pane_sync_take: what changes now is newer than any taken */
	uint64_t *row_serial; /* the serial of each row's last change */
	int events;           /* PANE_EV_* gathered during one feed */
	pane_event_fn *fn;
	void *data;

	struct pane_io io;
	bool has_io;
	/*
	 * A new mirror's input before it has an io (its keeper is starting):
	 * kept, in order, and given to the io it gets first. Up to EARLY_MAX
	 * bytes; none once it had an io (a link that drops loses what is typed).
	 */
	struct early *early;
	size_t nearly, early_bytes;
	bool early_open;

	struct buf hold; /* held-back unfinished string sequence */
	int discard;     /* inside a sequence too long to hold: DISCARD_* */
	struct vtfilter filter;
	bool plain_text;  /* plain ASCII put by screen_text (pane_plain_text) */
	struct buf osc52; /* the filter's: the last OSC 52 write, "Pc;Pd" */
	struct buf clip;  /* its text, decoded (PANE_EV_CLIPBOARD) */

	char *title; /* owned */
	bool cursor_visible;
	int cursor_shape;
	int mouse_mode;
	bool alt_screen;
	bool exited;
	int exit_status;
	/* A mirror: whether its owner shows it, its last update was held, full updates taken. */
	bool view, held;
	uint64_t fresh;
};

struct early {
	struct pane_input in; /* in.buf: owned */
	bool write;           /* pane_write's bytes, not an input */
};

#define EARLY_MAX (1u << 20)

/* Keep what a mirror with no io yet is given: true if kept (or dropped past the bound). */
static bool early_keep(struct pane *p, const struct pane_input *in, bool write)
{
	if (p->has_io || !p->early_open || p->exited)
		return false;
	/* Its bytes, if any: a scrollback limit's len is a count of lines, with no buf. */
	size_t n = in->buf ? in->len : 0;
	if (p->early_bytes + n + sizeof *p->early > EARLY_MAX)
		return true;
	p->early = xrealloc(p->early, (p->nearly + 1) * sizeof *p->early);
	struct early *e = &p->early[p->nearly++];
	e->in = *in;
	char *copy = n ? xmalloc(n) : NULL;
	if (copy)
		memcpy(copy, in->buf, n);
	e->in.buf = copy;
	e->write = write;
	p->early_bytes += n + sizeof *p->early;
	return true;
}

static void early_drop(struct pane *p)
{
	for (size_t i = 0; i < p->nearly; i++)
		free((char *)p->early[i].in.buf);
	free(p->early);
	p->early = NULL;
	p->nearly = p->early_bytes = 0;
	p->early_open = false;
}

static void mark_rows(struct pane *p, int start, int end)
{
	if (start < 0)
		start = 0;
	if (end > p->rows)
		end = p->rows;
	if (start >= end)
		return;
	p->events |= PANE_EV_DAMAGE;
	if (p->all_marked)
		return;
	p->all_marked = start == 0 && end == p->rows;
	for (int r = start; r < end; r++) { /* mostly one row: a glyph */
		p->dirty[r] = 1;
		p->row_serial[r] = p->serial;
	}
}

static void on_damage(void *user, int start_row, int end_row)
{
	mark_rows(user, start_row, end_row);
}

static int cb_movecursor(VTermPos pos, VTermPos old, int visible, void *user)
{
	struct pane *p = user;
	(void)visible; /* the CURSORVISIBLE property is authoritative */
	mark_rows(p, old.row, old.row + 1);
	mark_rows(p, pos.row, pos.row + 1);
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

static const struct screen_hooks screen_hooks = {
	.damage = on_damage,
	.movecursor = cb_movecursor,
	.settermprop = cb_settermprop,
	.bell = cb_bell,
};

static void cb_output(const char *s, size_t len, void *user)
{
	struct pane *p = user;
	if (p->has_io && !p->exited)
		p->io.write(p->io.ctx, s, len);
	else if (p->vt == NULL)
		early_keep(p, &(struct pane_input){.buf = s, .len = len}, true);
}

static struct pane *pane_alloc(int rows, int cols, size_t scrollback, pane_event_fn *fn, void *data)
{
	struct pane *p = xcalloc(1, sizeof *p);
	p->rows = WRX_MIN(WRX_MAX(rows, 1), PANE_MAX_ROWS);
	p->cols = WRX_MIN(WRX_MAX(cols, MIN_COLS), PANE_MAX_COLS);
	p->fn = fn;
	p->data = data;
	p->sb_limit = scrollback;
	p->sb = sb_new(scrollback);
	p->dirty = xcalloc((size_t)p->rows, 1);
	p->serial = 1;
	p->row_serial = xcalloc((size_t)p->rows, sizeof *p->row_serial);
	p->title = xstrdup("");
	p->cursor_visible = true;
	p->cursor_shape = WRX_CURSOR_BLOCK;
	return p;
}

static void mirror_rows_free(struct pane *p)
{
	for (int r = 0; p->mrows && r < p->rows; r++)
		free(p->mrows[r]);
	free(p->mrows);
	free(p->mwrapped);
	p->mrows = NULL;
	p->mwrapped = NULL;
}

/* A mirror's rows at rows x cols, keeping what fits of the old ones. */
static void mirror_rows(struct pane *p, int rows, int cols)
{
	struct wrx_cell **m = xcalloc((size_t)rows, sizeof *m);
	bool *w = xcalloc((size_t)rows, sizeof *w);
	for (int r = 0; r < rows; r++) {
		m[r] = xcalloc((size_t)cols, sizeof **m);
		for (int c = 0; c < cols; c++)
			m[r][c].width = 1;
		if (p->mrows && r < p->rows) {
			memcpy(m[r], p->mrows[r], (size_t)WRX_MIN(cols, p->cols) * sizeof **m);
			w[r] = p->mwrapped[r];
		}
	}
	mirror_rows_free(p);
	p->mrows = m;
	p->mwrapped = w;
}

struct pane *pane_mirror_new(int rows, int cols, size_t scrollback, pane_event_fn *fn, void *data)
{
	struct pane *p = pane_alloc(rows, cols, scrollback, fn, data);
	mirror_rows(p, p->rows, p->cols);
	mark_rows(p, 0, p->rows);
	p->events = 0;
	p->early_open = true;
	p->view = true;
	return p;
}

struct pane *pane_new(int rows, int cols, size_t scrollback, pane_event_fn *fn, void *data)
{
	struct pane *p = pane_alloc(rows, cols, scrollback, fn, data);
	p->vt = vterm_new(p->rows, p->cols);
	if (p->vt == NULL)
		abort();
	vterm_set_utf8(p->vt, 1);
	vterm_output_set_callback(p->vt, cb_output, p);
	p->filter.clip = &p->osc52;
	p->plain_text = true;
	p->scr = screen_new(p->vt, p->sb, &screen_hooks, p);
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
	early_drop(p);
	if (p->vt)
		vterm_free(p->vt);
	screen_free(p->scr);
	mirror_rows_free(p);
	sb_free(p->sb);
	buf_free(&p->hold);
	buf_free(&p->osc52);
	buf_free(&p->clip);
	free(p->dirty);
	free(p->row_serial);
	free(p->title);
	free(p);
}

void pane_set_hook(struct pane *p, pane_event_fn *fn, void *data)
{
	p->fn = fn;
	p->data = data;
}

void pane_set_io(struct pane *p, const struct pane_io *io)
{
	p->io = *io;
	p->has_io = true;
	if (p->io.resize)
		p->io.resize(p->io.ctx, p->rows, p->cols);
	/* What was typed while it started, as it was typed. */
	for (size_t i = 0; i < p->nearly && !p->exited; i++) {
		const struct early *e = &p->early[i];
		if (e->write)
			p->io.write(p->io.ctx, e->in.buf, e->in.len);
		else if (p->io.input)
			p->io.input(p->io.ctx, &e->in);
	}
	early_drop(p);
	/* A new connection starts shown: a hidden mirror says so again. */
	if (!p->vt && !p->view && p->io.input && !p->exited)
		p->io.input(p->io.ctx,
			    &(struct pane_input){.kind = PANE_IN_VIEW, .pressed = false});
}

void pane_unset_io(struct pane *p)
{
	memset(&p->io, 0, sizeof p->io);
	p->has_io = false;
}

static void emit(struct pane *p)
{
	int ev = p->events;
	p->events = 0;
	if (ev && p->fn)
		p->fn(p, ev, p->data);
}

/*
 * Run r of text is followed, with nothing between, by an SGR and another
 * run of text: its last glyph need not go to libvterm (screen_text), as
 * the next run's last one will.
 */
static bool more_text(const struct vtfilter_run *run, size_t nrun, size_t r)
{
	return r + 2 < nrun && run[r + 1].kind == VTFILTER_SGR &&
	       run[r + 1].at == run[r].at + run[r].len && run[r + 2].kind == VTFILTER_TEXT &&
	       run[r + 2].at == run[r + 1].at + run[r + 1].len;
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

/*
 * The program wrote to the clipboard (OSC 52 "Pc;Pd"): its text, for the
 * owner to allow or not. Pc names selections (c, p, q, s, 0-7, or none);
 * an empty or malformed Pd sets nothing.
 */
static void take_clipboard(struct pane *p)
{
	p->filter.clip_set = false;
	const char *body = p->osc52.data;
	size_t sel = strcspn(body, ";");
	buf_consume(&p->clip, p->clip.len);
	if (strspn(body, "cpqs01234567") < sel || body[sel] != ';' ||
	    base64_decode(&p->clip, body + sel + 1, strlen(body + sel + 1)) < 0 || p->clip.len == 0)
		return;
	p->events |= PANE_EV_CLIPBOARD;
}

void pane_plain_text(struct pane *p, bool on)
{
	p->plain_text = on;
}

void pane_feed(struct pane *p, const char *buf, size_t len)
{
	if (len == 0 || p->vt == NULL)
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
	static struct buf clean, runs;
	buf_consume(&clean, clean.len);
	buf_consume(&runs, runs.len);
	p->filter.runs = p->plain_text ? &runs : NULL;
	size_t used = vtfilter(&p->filter, buf, len, &clean);
	p->filter.runs = NULL;
	screen_feed(p->scr);
	/*
	 * Plain text and SGRs straight to the screen where it can, the rest
	 * through libvterm; after each restore of the cursor, the cursor
	 * brought back inside (screen_restore_span: the runs mark where).
	 */
	const struct vtfilter_run *run = (const struct vtfilter_run *)(void *)runs.data;
	size_t nrun = runs.len / sizeof *run, off = 0;
	if (!p->plain_text) {
		while (off < clean.len) {
			size_t end = off + screen_restore_span(clean.data + off, clean.len - off);
			vt_write(p, clean.data + off, end - off);
			screen_keep_cursor(p->vt);
			off = end;
		}
	}
	for (size_t r = 0; r < nrun; r++) {
		const char *at = clean.data + run[r].at;
		if (run[r].at > off) {
			screen_sync_cursor(p->scr);
			vt_write(p, clean.data + off, run[r].at - off);
		}
		off = run[r].at;
		if (run[r].kind == VTFILTER_TEXT) {
			off += screen_text(p->scr, at, run[r].len, more_text(run, nrun, r));
		} else if (run[r].kind == VTFILTER_SGR) {
			if (screen_sgr(p->scr, at + 6, run[r].len - 8))
				off += run[r].len;
		} else {
			screen_sync_cursor(p->scr);
			screen_keep_cursor(p->vt);
		}
	}
	screen_sync_cursor(p->scr);
	vt_write(p, clean.data + off, clean.len - off);
	screen_keep_cursor(p->vt);
	/* Scratch space a long sequence made large goes back: a keeper idles small. */
	if (clean.cap > SCRATCH_KEEP)
		buf_free(&clean);
	if (runs.cap > SCRATCH_KEEP)
		buf_free(&runs);
	if (p->filter.clip_set)
		take_clipboard(p);
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
	p->events |= PANE_EV_OUTPUT;
	emit(p);
}

const char *pane_clipboard(const struct pane *p, size_t *len)
{
	*len = p->clip.len;
	return p->clip.data ? p->clip.data : "";
}

void pane_mirror_clipboard(struct pane *p, const char *data, size_t len)
{
	if (p->vt || len == 0)
		return;
	buf_consume(&p->clip, p->clip.len);
	buf_add(&p->clip, data, len);
	p->events |= PANE_EV_CLIPBOARD;
	emit(p);
}

void pane_set_exited(struct pane *p, int status)
{
	p->exited = true;
	p->exit_status = status;
	p->events |= PANE_EV_EXIT | PANE_EV_DAMAGE;
	emit(p);
}

static void resize(struct pane *p, int rows, int cols, bool tell)
{
	rows = WRX_MIN(WRX_MAX(rows, 1), PANE_MAX_ROWS);
	cols = WRX_MIN(WRX_MAX(cols, MIN_COLS), PANE_MAX_COLS);
	if (rows == p->rows && cols == p->cols)
		return;
	bool shrank = rows < p->rows || cols < p->cols;
	if (p->vt == NULL)
		mirror_rows(p, rows, cols);
	free(p->dirty);
	p->dirty = xcalloc((size_t)rows, 1);
	p->all_marked = false;
	free(p->row_serial);
	p->row_serial = xcalloc((size_t)rows, sizeof *p->row_serial);
	p->rows = rows;
	p->cols = cols;
	if (p->vt) {
		vterm_set_size(p->vt, rows, cols);
		if (shrank)
			screen_fit(p->vt);
	} else {
		p->mrow = WRX_MIN(p->mrow, rows - 1);
		p->mcol = WRX_MIN(p->mcol, cols - 1);
	}
	mark_rows(p, 0, rows);
	if (tell && p->has_io && p->io.resize)
		p->io.resize(p->io.ctx, rows, cols);
	emit(p);
}

void pane_resize(struct pane *p, int rows, int cols)
{
	rows = WRX_MIN(WRX_MAX(rows, 1), PANE_MAX_ROWS);
	cols = WRX_MIN(WRX_MAX(cols, MIN_COLS), PANE_MAX_COLS);
	bool asked = rows == p->want_rows && cols == p->want_cols;
	p->want_rows = rows;
	p->want_cols = cols;
	/*
	 * A mirror shows its keeper's size, which an update can set back to
	 * one we asked to leave (sent before the keeper read our resize):
	 * already that size, it is still told what we want now.
	 */
	if (!asked && p->vt == NULL && rows == p->rows && cols == p->cols && p->has_io &&
	    p->io.resize)
		p->io.resize(p->io.ctx, rows, cols);
	resize(p, rows, cols, true);
}

void pane_mirror_wanted(const struct pane *p, int *rows, int *cols)
{
	*rows = p->want_rows ? p->want_rows : p->rows;
	*cols = p->want_cols ? p->want_cols : p->cols;
}

void pane_mirror_size(struct pane *p, int rows, int cols)
{
	if (p->vt == NULL)
		resize(p, rows, cols, false);
}

/* A mirror's input goes to the process that emulates: true if p is one. */
static bool to_emulator(struct pane *p, const struct pane_input *in)
{
	if (p->vt)
		return false;
	if (p->has_io && p->io.input && !p->exited)
		p->io.input(p->io.ctx, in);
	else
		early_keep(p, in, false);
	return true;
}

void pane_set_scrollback(struct pane *p, size_t lines)
{
	p->sb_limit = lines;
	if (to_emulator(p, &(struct pane_input){.kind = PANE_IN_SCROLLBACK, .len = lines}))
		return;
	sb_set_limit(p->sb, lines);
}

void pane_key(struct pane *p, int key, int mods)
{
	if (!to_emulator(p, &(struct pane_input){.kind = PANE_IN_KEY, .key = key, .mods = mods}))
		vterm_keyboard_key(p->vt, (VTermKey)key, (VTermModifier)mods);
}

void pane_char(struct pane *p, uint32_t cp, int mods)
{
	if (!to_emulator(p, &(struct pane_input){.kind = PANE_IN_CHAR, .cp = cp, .mods = mods}))
		vterm_keyboard_unichar(p->vt, cp, (VTermModifier)mods);
}

void pane_write(struct pane *p, const char *buf, size_t len)
{
	cb_output(buf, len, p);
}

void pane_paste(struct pane *p, const char *buf, size_t len)
{
	if (to_emulator(p, &(struct pane_input){.kind = PANE_IN_PASTE, .buf = buf, .len = len}))
		return;
	vterm_keyboard_start_paste(p->vt);
	pane_write(p, buf, len);
	vterm_keyboard_end_paste(p->vt);
}

void pane_mouse(struct pane *p, int row, int col, int button, bool pressed, int mods)
{
	if (to_emulator(p, &(struct pane_input){.kind = PANE_IN_MOUSE,
						.row = row,
						.col = col,
						.button = button,
						.pressed = pressed,
						.mods = mods}))
		return;
	vterm_mouse_move(p->vt, row, col, (VTermModifier)mods);
	if (button > 0)
		vterm_mouse_button(p->vt, button, pressed, (VTermModifier)mods);
}

void pane_focus(struct pane *p, bool in)
{
	if (to_emulator(p, &(struct pane_input){.kind = PANE_IN_FOCUS, .pressed = in}))
		return;
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
	/* From libvterm: not every move it makes reaches movecursor (leaving the alternate screen). */
	VTermPos pos = {p->mrow, p->mcol};
	if (p->vt)
		vterm_state_get_cursorpos(vterm_obtain_state(p->vt), &pos);
	/* libvterm 0.1.4 can restore a cursor saved on a bigger screen. */
	*row = WRX_MIN(pos.row, p->rows - 1);
	*col = WRX_MIN(pos.col, p->cols - 1);
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

bool pane_row_dirty(const struct pane *p, int row)
{
	return row >= 0 && row < p->rows && p->dirty[row];
}

void pane_clean(struct pane *p)
{
	p->all_marked = false;
	memset(p->dirty, 0, (size_t)p->rows);
}

void pane_touch(struct pane *p)
{
	memset(p->dirty, 1, (size_t)p->rows);
}

/* Row 0 .. rows-1 on screen, NULL outside. */
static const struct wrx_cell *row_at(const struct pane *p, int row)
{
	if (p->vt)
		return screen_row(p->scr, row);
	return row >= 0 && row < p->rows ? p->mrows[row] : NULL;
}

bool pane_line_wrapped(const struct pane *p, int line)
{
	if (line < 0)
		return sb_wrapped(p->sb, (size_t)(-line - 1));
	if (line >= p->rows)
		return false;
	return p->vt ? screen_row_wrapped(p->scr, line) : p->mwrapped[line];
}

void pane_cell(const struct pane *p, int row, int col, struct wrx_cell *out)
{
	const struct wrx_cell *r = row_at(p, row);
	if (r == NULL || col < 0 || col >= p->cols) {
		memset(out, 0, sizeof *out);
		out->width = 1;
		return;
	}
	*out = r[col];
}

int pane_line(const struct pane *p, int line, struct wrx_cell *cells, int ncols)
{
	if (line >= p->rows || line < -(int)sb_count(p->sb))
		return -1;
	if (line < 0)
		return sb_get(p->sb, (size_t)(-line - 1), cells, ncols) < 0 ? -1 : 0;
	const struct wrx_cell *row = row_at(p, line);
	int n = row ? WRX_MAX(WRX_MIN(ncols, p->cols), 0) : 0;
	if (n > 0)
		memcpy(cells, row, (size_t)n * sizeof *cells);
	for (int c = n; c < ncols; c++)
		pane_cell(p, line, c, &cells[c]);
	return 0;
}

/*
 * The cells a line holds: a history line may be wider or narrower than the
 * screen is now, and its count stops short of a wide character's right half
 * at its end (a blank): one more. A text of the line needs no more: a
 * capture decodes each history line into its own width, not into a wide
 * scratch row it blanks first (4,096 cells, 160 KB, a line before).
 */
static int line_cells(const struct pane *p, int line)
{
	return line < 0 ? sb_cells(p->sb, (size_t)(-line - 1)) + 1 : p->cols;
}

void pane_line_append(const struct pane *p, int line, int c0, int c1, struct buf *out)
{
	/* c1 may be a wide character's left half: its right half too. c1
	 * is INT32_MAX - 1 for the whole line: no sum past the line's cells. */
	int have = line_cells(p, line);
	int ncols = c1 < have - 1 ? WRX_MAX(c1 + 2, 1) : have;
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

/* ;38;5;n or ;38;2;r;g;b (code 38, 48 or 58) for a colour other than the default. */
static void sgr_colour(struct buf *out, uint32_t c, int code)
{
	switch (WRX_COLOUR_KIND(c)) {
	case WRX_COLOUR_INDEXED:
		buf_addf(out, ";%d;5;%u", code, c & 0xff);
		break;
	case WRX_COLOUR_RGB:
		buf_addf(out, ";%d;2;%u;%u;%u", code, (c >> 16) & 0xff, (c >> 8) & 0xff, c & 0xff);
		break;
	default:
		break;
	}
}

/* A colour as a terminal of ncolours shows it (0: as it is). */
static uint32_t shown(uint32_t c, int ncolours)
{
	if (ncolours == 0 || ncolours >= (1 << 24) || WRX_COLOUR_KIND(c) == WRX_COLOUR_DEFAULT)
		return c;
	return WRX_COLOUR_INDEXED | (uint32_t)colour_for_terminal(c, ncolours);
}

bool pane_line_blank(const struct pane *p, int line, bool colours)
{
	struct wrx_cell *cells = xcalloc((size_t)p->cols, sizeof *cells);
	bool blank = pane_line(p, line, cells, p->cols) == 0;
	for (int c = 0; blank && c < p->cols; c++)
		blank = cells[c].ch[0] == 0 && (!colours || (cells[c].bg == WRX_COLOUR_DEFAULT &&
							     !(cells[c].attrs & WRX_ATTR_REVERSE)));
	free(cells);
	return blank;
}

void pane_line_append_sgr(const struct pane *p, int line, int ncolours, struct buf *out)
{
	int ncols = line_cells(p, line);
	struct wrx_cell *cells = xcalloc((size_t)ncols, sizeof *cells);
	if (pane_line(p, line, cells, ncols) == 0) {
		int last = ncols - 1;
		while (last >= 0 && cells[last].ch[0] == 0 &&
		       cells[last].bg == WRX_COLOUR_DEFAULT &&
		       !(cells[last].attrs & WRX_ATTR_REVERSE))
			last--;
		uint16_t attrs = 0;
		uint32_t fg = 0, bg = 0, ul = 0;
		for (int c = 0; c <= last; c++) {
			const struct wrx_cell *x = &cells[c];
			if (x->width == 0)
				continue;
			if (x->attrs != attrs || x->fg != fg || x->bg != bg || x->ul != ul) {
				static const struct {
					uint16_t bit;
					const char *code;
				} sgr[] = {{WRX_ATTR_BOLD, "1"},        {WRX_ATTR_DIM, "2"},
					   {WRX_ATTR_ITALIC, "3"},      {WRX_ATTR_UNDERLINE, "4"},
					   {WRX_ATTR_BLINK, "5"},       {WRX_ATTR_REVERSE, "7"},
					   {WRX_ATTR_CONCEAL, "8"},     {WRX_ATTR_STRIKE, "9"},
					   {WRX_ATTR_DUNDERLINE, "21"}, {WRX_ATTR_CURLY, "4:3"},
					   {WRX_ATTR_DOTTED, "4:4"},    {WRX_ATTR_DASHED, "4:5"},
					   {WRX_ATTR_OVERLINE, "53"}};
				buf_addstr(out, "\033[0");
				for (size_t k = 0; k < WRX_ARRAY_LEN(sgr); k++)
					if (x->attrs & sgr[k].bit)
						buf_addf(out, ";%s", sgr[k].code);
				sgr_colour(out, shown(x->fg, ncolours), 38);
				sgr_colour(out, shown(x->bg, ncolours), 48);
				sgr_colour(out, shown(x->ul, ncolours), 58);
				buf_addch(out, 'm');
				attrs = x->attrs;
				fg = x->fg;
				bg = x->bg;
				ul = x->ul;
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
		if (attrs || fg || bg || ul)
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

/* Looked for in the last 200 lines: past those, what it printed last is no reason. */
char *pane_failure(const struct pane *p, const char *how)
{
	char *last = NULL;
	for (int r = pane_rows(p) - 1; r >= -(int)pane_history(p) && !last; r--) {
		char *t = pane_line_text(p, r);
		if (t && *t && strspn(t, " ") != strlen(t))
			last = t;
		else
			free(t);
		if (r < pane_rows(p) - 200)
			break;
	}
	char *why = last ? xasprintf("%s: %s", how, last) : xstrdup(how);
	free(last);
	return why;
}

uint64_t pane_sync_take(struct pane *p)
{
	p->all_marked = false;
	return p->serial++;
}

bool pane_row_changed(const struct pane *p, int row, uint64_t since)
{
	return row >= 0 && row < p->rows && p->row_serial[row] > since;
}

const struct sb *pane_scrollback(const struct pane *p)
{
	return p->sb;
}

struct sb *pane_mirror_scrollback(struct pane *p)
{
	return p->vt ? NULL : p->sb;
}

void pane_mirror_row(struct pane *p, int row, const struct wrx_cell *cells, int ncols, bool wrapped)
{
	if (p->vt || row < 0 || row >= p->rows)
		return;
	/* The mirror's width may differ (a pane is never under two columns): blanks pad. */
	int n = WRX_MAX(WRX_MIN(ncols, p->cols), 0);
	memcpy(p->mrows[row], cells, (size_t)n * sizeof *cells);
	for (int c = n; c < p->cols; c++) {
		memset(&p->mrows[row][c], 0, sizeof p->mrows[row][c]);
		p->mrows[row][c].width = 1;
	}
	p->mwrapped[row] = wrapped;
	mark_rows(p, row, row + 1);
}

void pane_mirror_state(struct pane *p, const struct pane_state *st)
{
	if (p->vt)
		return;
	p->held = st->held;
	p->fresh += !st->held;
	if (st->row != p->mrow || st->col != p->mcol) {
		mark_rows(p, p->mrow, p->mrow + 1);
		mark_rows(p, st->row, st->row + 1);
	}
	p->mrow = WRX_MAX(WRX_MIN(st->row, p->rows - 1), 0);
	p->mcol = WRX_MAX(WRX_MIN(st->col, p->cols - 1), 0);
	if (st->cursor_visible != p->cursor_visible || st->cursor_shape != p->cursor_shape)
		p->events |= PANE_EV_DAMAGE;
	p->cursor_visible = st->cursor_visible;
	p->cursor_shape = st->cursor_shape;
	p->mouse_mode = st->mouse_mode;
	if (st->alt_screen != p->alt_screen)
		mark_rows(p, 0, p->rows);
	p->alt_screen = st->alt_screen;
	if (strcmp(p->title, st->title)) {
		free(p->title);
		p->title = clean_title(st->title);
		p->events |= PANE_EV_TITLE;
	}
	p->events |= st->events & (PANE_EV_BELL | PANE_EV_OUTPUT | PANE_EV_DAMAGE);
	if (st->exited && !p->exited) {
		p->exited = true;
		p->exit_status = st->exit_status;
		p->events |= PANE_EV_EXIT | PANE_EV_DAMAGE;
	}
	emit(p);
}

void pane_mirror_lost(struct pane *p)
{
	if (p->vt || p->exited)
		return;
	early_drop(p);
	p->exited = true;
	p->exit_status = PANE_LOST;
	p->events |= PANE_EV_EXIT | PANE_EV_DAMAGE;
	emit(p);
}

void pane_view(struct pane *p, bool shown)
{
	if (p->vt || p->view == shown)
		return;
	p->view = shown;
	/* With no io yet, pane_set_io tells the io it gets. */
	if (p->has_io && p->io.input && !p->exited)
		p->io.input(p->io.ctx,
			    &(struct pane_input){.kind = PANE_IN_VIEW, .pressed = shown});
}

bool pane_viewed(const struct pane *p)
{
	return p->vt || p->view;
}

bool pane_held(const struct pane *p)
{
	return p->held;
}

uint64_t pane_fresh(const struct pane *p)
{
	return p->fresh;
}

bool pane_is_mirror(const struct pane *p)
{
	return p->vt == NULL;
}
