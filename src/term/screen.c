/*
 * screen.c - a pane's cells on libvterm's state callbacks.
 *
 * libvterm's state says what happens (a glyph here, erase this, scroll that,
 * the pen is now bold); this file does it to rows of wrx_cell. Full-width
 * scrolls rotate row pointers; anything narrower is libvterm's own
 * decomposition into moverect and erase. Resizing follows libvterm's screen:
 * a shrinking main screen pushes the lines above the cursor into the
 * scrollback, a growing one takes them back.
 *
 * A row remembers whether the program's text ran past its right margin into
 * the next (a soft wrap, not a newline). libvterm 0.1.4 does not say so, but
 * it shows: a glyph that ended at the margin, then the next glyph at the
 * start of the row below with no cursor movement reported between them.
 * When the main screen's width changes, its rows and the scrollback are
 * rewrapped as one text (sb_reflow), both ways, the cursor staying on its
 * character and, where it can, on its row, as tmux does. The alternate screen is not rewrapped:
 * what runs there redraws on SIGWINCH.
 */
#include "screen.h"

#include "../util/util.h"
#include "scrollback.h"
#include "vtfilter.h"
#include "width.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAIN, ALT };

struct row {
	bool wrapped; /* the text goes on in the next row */
	struct wrx_cell c[];
};

struct screen {
	VTerm *vt;
	VTermState *st;
	int rows, cols;
	struct row **buf[2]; /* rows of the main and the alternate screen (made on first use) */
	struct row **spare;  /* room for `rows` row pointers, for scrolling */
	int cur;
	int alt_pushed;        /* main screen lines pushed while the alternate one is up */
	struct wrx_cell pen;   /* attributes and colours of what is written next */
	struct wrx_cell saved; /* the pen as DECSC (and 1048, 1049) saved it */
	/*
	 * The row whose last glyph reached the right margin (or one short of
	 * it, where a wide glyph wraps early), while no cursor movement came
	 * after; -1 when none. wrap_col is the column libvterm keeps its
	 * cursor at meanwhile: the margin, or the wide glyph's own column when
	 * it ended there (libvterm waits to wrap with the cursor on the glyph).
	 */
	int wrap_row, wrap_col;
	/*
	 * The row the last glyphs were put in, with no other damage since and
	 * in this feed (screen_feed), -1 none: the next glyph there need not
	 * mark it damaged again, as the pane's marks change only between feeds.
	 */
	int glyph_row;
	/* Columns screen_text moved the cursor on that libvterm is yet to hear of. */
	int ahead;
	struct sb *sb; /* borrowed: the lines above the main screen */
	const struct screen_hooks *h;
	void *user;
};

uint32_t screen_colour(const VTermColor *c, bool fg)
{
	if (fg ? VTERM_COLOR_IS_DEFAULT_FG(c) : VTERM_COLOR_IS_DEFAULT_BG(c))
		return WRX_COLOUR_DEFAULT;
	if (VTERM_COLOR_IS_INDEXED(c))
		return WRX_COLOUR_INDEXED | c->indexed.idx;
	return WRX_COLOUR_RGB | ((uint32_t)c->rgb.red << 16) | ((uint32_t)c->rgb.green << 8) |
	       c->rgb.blue;
}

static void blank(struct screen *s, struct wrx_cell *c)
{
	memset(c->ch, 0, sizeof c->ch);
	c->width = 1;
	c->protect = 0;
	c->attrs = s->pen.attrs;
	c->fg = s->pen.fg;
	c->bg = s->pen.bg;
	c->ul = s->pen.ul;
}

/* Cells from..to-1 blank: one made, then copied in doubling spans (a line scrolled in). */
static void blank_cells(struct screen *s, struct wrx_cell *row, int from, int to)
{
	if (from >= to)
		return;
	blank(s, &row[from]);
	for (int done = 1; done < to - from; done *= 2)
		memcpy(&row[from + done], &row[from],
		       (size_t)WRX_MIN(done, to - from - done) * sizeof *row);
}

/* A row as erased: blank in the pen's colours, going on into nothing. */
static void row_clear(struct screen *s, struct row *r)
{
	blank_cells(s, r->c, 0, s->cols);
	r->wrapped = false;
}

static struct row *row_new(struct screen *s, int cols)
{
	struct row *r = xmalloc(sizeof *r + (size_t)cols * sizeof *r->c);
	r->wrapped = false;
	blank_cells(s, r->c, 0, cols);
	return r;
}

static struct row **rows_new(struct screen *s, int rows, int cols)
{
	struct row **v = xmalloc((size_t)rows * sizeof *v);
	for (int r = 0; r < rows; r++)
		v[r] = row_new(s, cols);
	return v;
}

static void rows_free(struct row **v, int rows)
{
	for (int r = 0; v && r < rows; r++)
		free(v[r]);
	free(v);
}

static void damage(struct screen *s, int start, int end)
{
	s->glyph_row = -1; /* a glyph after this marks its row again */
	if (start < 0)
		start = 0;
	if (end > s->rows)
		end = s->rows;
	if (start < end)
		s->h->damage(s->user, start, end);
}

/*
 * After cells c0..c1-1 of a row were replaced: a wide character that lost
 * one half at either edge loses the other too.
 */
static void mend_edges(struct screen *s, struct wrx_cell *row, int c0, int c1)
{
	const int edge[2] = {c0, c1};
	for (int e = 0; e < 2; e++) {
		for (int c = WRX_MAX(edge[e] - 1, 0); c <= edge[e] && c < s->cols; c++) {
			struct wrx_cell *x = &row[c];
			if (x->width == 0 && (c == 0 || row[c - 1].width != 2))
				blank(s, x);
			else if (x->width == 2 && (c + 1 >= s->cols || row[c + 1].width != 0))
				blank(s, x);
		}
	}
}

/* A glyph's characters into c, each stand-in as what it stands for. */
static void glyph_chars(struct wrx_cell *c, const uint32_t *chars)
{
	for (int i = 0; i < WRX_CELL_CHARS && chars[i]; i++)
		c->ch[i] = chars[i] < WIDTH_STAND_IN_MIN ? chars[i] : width_original(chars[i]);
}

static int cb_putglyph(VTermGlyphInfo *info, VTermPos pos, void *user)
{
	struct screen *s = user;
	if (pos.row < 0 || pos.row >= s->rows || pos.col < 0 || pos.col >= s->cols)
		return 0;
	if (pos.col == 0 && s->wrap_row >= 0 && pos.row == s->wrap_row + 1)
		s->buf[s->cur][s->wrap_row]->wrapped = true;
	struct wrx_cell *row = s->buf[s->cur][pos.row]->c;
	int width = WRX_MAX(info->width, 1);
	if (pos.col + width > s->cols)
		width = 1;
	s->wrap_row = pos.col + width >= s->cols - 1 ? pos.row : -1;
	s->wrap_col = pos.col + width >= s->cols ? pos.col : s->cols - 1;
	struct wrx_cell *c = &row[pos.col];
	/*
	 * Only a wide glyph, or one over either half of a wide character or
	 * before the right half of one, can leave half a character behind.
	 */
	bool mend = width == 2 || c->width != 1 ||
		    (pos.col + 1 < s->cols && row[pos.col + 1].width == 0);
	memset(c->ch, 0, sizeof c->ch);
	if (info->chars[1] == 0 && info->chars[0] < WIDTH_STAND_IN_MIN)
		c->ch[0] = info->chars[0]; /* one character as it is: most */
	else
		glyph_chars(c, info->chars);
	c->width = (uint8_t)width;
	c->protect = info->protected_cell;
	c->attrs = s->pen.attrs;
	c->fg = s->pen.fg;
	c->bg = s->pen.bg;
	c->ul = s->pen.ul;
	for (int k = 1; k < width; k++) {
		row[pos.col + k] = *c;
		memset(row[pos.col + k].ch, 0, sizeof c->ch);
		row[pos.col + k].width = 0;
	}
	if (mend)
		mend_edges(s, row, pos.col, pos.col + width);
	if (pos.row != s->glyph_row) {
		s->h->damage(s->user, pos.row, pos.row + 1);
		s->glyph_row = pos.row;
	}
	return 1;
}

static int cb_erase(VTermRect r, int selective, void *user)
{
	struct screen *s = user;
	int c0 = WRX_MAX(r.start_col, 0), c1 = WRX_MIN(r.end_col, s->cols);
	for (int row = WRX_MAX(r.start_row, 0); row < r.end_row && row < s->rows; row++) {
		struct wrx_cell *line = s->buf[s->cur][row]->c;
		for (int c = c0; c < c1; c++)
			if (!selective || !line[c].protect)
				blank(s, &line[c]);
		mend_edges(s, line, c0, c1);
		/* As xterm: a row erased to its end no longer runs on. */
		if (c1 == s->cols && !selective)
			s->buf[s->cur][row]->wrapped = false;
		/*
		 * The first row erased whole: the history's last line does not
		 * run on into what comes there now (clear after a long command
		 * line joined them when the pane was next resized).
		 */
		if (row == 0 && c0 == 0 && c1 == s->cols && !selective && s->cur == MAIN && s->sb)
			sb_unwrap_last(s->sb);
	}
	damage(s, r.start_row, r.end_row);
	return 1;
}

static int cb_moverect(VTermRect dest, VTermRect src, void *user)
{
	struct screen *s = user;
	int rows = dest.end_row - dest.start_row, cols = dest.end_col - dest.start_col;
	if (rows <= 0 || cols <= 0 || dest.start_col < 0 || dest.end_col > s->cols ||
	    src.start_col < 0 || src.start_col + cols > s->cols)
		return 1;
	/* Rows in the order that never reads a row already written. */
	bool down = dest.start_row > src.start_row;
	for (int i = 0; i < rows; i++) {
		int k = down ? rows - 1 - i : i;
		int dr = dest.start_row + k, sr = src.start_row + k;
		if (dr < 0 || dr >= s->rows || sr < 0 || sr >= s->rows)
			continue;
		struct row *d = s->buf[s->cur][dr], *from = s->buf[s->cur][sr];
		memmove(&d->c[dest.start_col], &from->c[src.start_col],
			(size_t)cols * sizeof *d->c);
		mend_edges(s, d->c, dest.start_col, dest.end_col);
		if (cols == s->cols)
			d->wrapped = from->wrapped;
	}
	damage(s, dest.start_row, dest.end_row);
	return 1;
}

/*
 * The cells of row r of v worth keeping: all of a wrapped row but the blank
 * a wide character left at its margin when it wrapped early.
 */
static int row_len(const struct screen *s, struct row **v, int r, int nrows)
{
	const struct row *x = v[r];
	if (x->wrapped && r + 1 < nrows && s->cols > 1 && v[r + 1]->c[0].width == 2 &&
	    x->c[s->cols - 1].ch[0] == 0)
		return s->cols - 1;
	return s->cols;
}

static void push(struct screen *s, struct row **v, int r, int nrows)
{
	if (s->sb)
		sb_push(s->sb, v[r]->c, row_len(s, v, r, nrows), v[r]->wrapped && r + 1 < nrows);
}

/* Whole rows of screen b up (downward > 0) or down, by turning their pointers. */
static void scroll_rows(struct screen *s, int b, int start, int end, int downward)
{
	struct row **v = s->buf[b], **spare = s->spare;
	int n = abs(downward), height = end - start;
	if (downward > 0) {
		if (start == 0 && b == MAIN)
			for (int r = 0; r < n; r++)
				push(s, v, r, s->rows);
		memcpy(spare, &v[start], (size_t)n * sizeof *spare);
		memmove(&v[start], &v[start + n], (size_t)(height - n) * sizeof *v);
		memcpy(&v[end - n], spare, (size_t)n * sizeof *spare);
		for (int r = end - n; r < end; r++)
			row_clear(s, v[r]);
		if (b == s->cur && s->wrap_row >= start && s->wrap_row < end)
			s->wrap_row = s->wrap_row - n >= start ? s->wrap_row - n : -1;
	} else {
		memcpy(spare, &v[end - n], (size_t)n * sizeof *spare);
		memmove(&v[start + n], &v[start], (size_t)(height - n) * sizeof *v);
		memcpy(&v[start], spare, (size_t)n * sizeof *spare);
		for (int r = start; r < start + n; r++)
			row_clear(s, v[r]);
		if (b == s->cur)
			s->wrap_row = -1;
	}
	if (b == s->cur)
		damage(s, start, end);
}

static int cb_scrollrect(VTermRect r, int downward, int rightward, void *user)
{
	struct screen *s = user;
	/*
	 * Anything else libvterm does through moverect and erase below; a scroll
	 * of the whole region is an erase there, with nothing kept (as before).
	 * But not on a screen one row high, where every newline is one: a
	 * squeezed pane kept nothing of what its program printed. Its row goes
	 * to the history, as tmux keeps it.
	 */
	bool one_row_up = s->rows == 1 && r.start_row == 0 && r.end_row == 1 && downward == 1;
	if (rightward != 0 || r.start_col != 0 || r.end_col != s->cols || r.start_row < 0 ||
	    r.end_row > s->rows || downward == 0 ||
	    (abs(downward) >= r.end_row - r.start_row && !one_row_up))
		return 0;
	scroll_rows(s, s->cur, r.start_row, r.end_row, downward);
	return 1;
}

static int cb_initpen(void *user)
{
	struct screen *s = user;
	s->pen.attrs = 0;
	s->pen.fg = s->pen.bg = s->pen.ul = WRX_COLOUR_DEFAULT;
	return 1;
}

static long arg_at(const long *args, int argc, int i)
{
	return i < argc && !CSI_ARG_IS_MISSING(args[i]) ? (long)CSI_ARG(args[i]) : 0;
}

/*
 * A colour after 38, 48 or 58 at args[i]: 5;n, 2;r;g;b, or their colon
 * forms 5:n, 2::r:g:b (with the colour space, as ncurses' direct entries
 * write it) and 2:r:g:b. Returns the index of the last argument it used.
 */
static int sgr_colour(const long *args, int argc, int i, uint32_t *out)
{
	bool colon = CSI_ARG_HAS_MORE(args[i]);
	int n = 0; /* sub-parameters after args[i] */
	while (colon && i + n < argc - 1 && CSI_ARG_HAS_MORE(args[i + n]))
		n++;
	long kind = arg_at(args, argc, i + 1);
	int first; /* of the colour's numbers */
	if (!colon)
		first = i + 2, n = kind == 5 ? 2 : kind == 2 ? 4 : 1;
	else
		first = kind == 2 && n >= 5 ? i + 3 : i + 2;
	if (kind == 5 && first < argc) {
		long v = arg_at(args, argc, first);
		if (v >= 0 && v < 256)
			*out = WRX_COLOUR_INDEXED | (uint32_t)v;
	} else if (kind == 2 && first + 2 < argc) {
		uint32_t rgb = 0;
		for (int k = 0; k < 3; k++)
			rgb = rgb << 8 | (uint32_t)(arg_at(args, argc, first + k) & 0xff);
		*out = WRX_COLOUR_RGB | rgb;
	}
	return WRX_MIN(i + n, argc - 1);
}

/*
 * The pen is ours, not libvterm's: the filter turns every SGR into its
 * private form (VTFILTER_*), with the saves and restores of the cursor, and
 * this reads it all, the attributes libvterm drops and the colours it reads
 * wrong (58;5;n as blink and a background) among them. libvterm never sees
 * an SGR, and its pen callbacks are not taken.
 */
/* The SGR codes that only set or clear attribute bits. */
static const struct {
	int code;
	uint16_t bits;
	bool on;
} sgr_bits[] = {
	{1, WRX_ATTR_BOLD, true},       {2, WRX_ATTR_DIM, true},
	{3, WRX_ATTR_ITALIC, true},     {5, WRX_ATTR_BLINK, true},
	{6, WRX_ATTR_BLINK, true},      {7, WRX_ATTR_REVERSE, true},
	{8, WRX_ATTR_CONCEAL, true},    {9, WRX_ATTR_STRIKE, true},
	{53, WRX_ATTR_OVERLINE, true},  {22, WRX_ATTR_BOLD | WRX_ATTR_DIM, false},
	{23, WRX_ATTR_ITALIC, false},   {24, WRX_ATTR_UNDERLINES, false},
	{25, WRX_ATTR_BLINK, false},    {27, WRX_ATTR_REVERSE, false},
	{28, WRX_ATTR_CONCEAL, false},  {29, WRX_ATTR_STRIKE, false},
	{55, WRX_ATTR_OVERLINE, false},
};

static void sgr(struct screen *s, const long *args, int argc)
{
	struct wrx_cell *p = &s->pen;
	static const uint16_t ul_style[] = {0,
					    WRX_ATTR_UNDERLINE,
					    WRX_ATTR_DUNDERLINE,
					    WRX_ATTR_CURLY,
					    WRX_ATTR_DOTTED,
					    WRX_ATTR_DASHED};
	if (argc == 0)
		argc = 1, args = (const long[]){0};
	for (int i = 0; i < argc; i++) {
		long v = arg_at(args, argc, i);
		int last = i; /* a code's sub-parameters are its own */
		while (last < argc - 1 && CSI_ARG_HAS_MORE(args[last]))
			last++;
		switch (v) {
		case 0:
			p->attrs = 0;
			p->fg = p->bg = p->ul = WRX_COLOUR_DEFAULT;
			break;
		case 4: {
			long style = last > i ? arg_at(args, argc, i + 1) : 1;
			p->attrs &= (uint16_t)~WRX_ATTR_UNDERLINES;
			if (style > 0 && style < (long)WRX_ARRAY_LEN(ul_style))
				p->attrs |= ul_style[style];
			break;
		}
		case 21:
			p->attrs =
				(uint16_t)((p->attrs & ~WRX_ATTR_UNDERLINES) | WRX_ATTR_DUNDERLINE);
			break;
		case 38:
		case 48:
		case 58:
			last = sgr_colour(args, argc, i,
					  v == 38   ? &p->fg
					  : v == 48 ? &p->bg
						    : &p->ul);
			break;
		case 39:
			p->fg = WRX_COLOUR_DEFAULT;
			break;
		case 49:
			p->bg = WRX_COLOUR_DEFAULT;
			break;
		case 59:
			p->ul = WRX_COLOUR_DEFAULT;
			break;
		default:
			if (v >= 30 && v <= 37) {
				p->fg = WRX_COLOUR_INDEXED | (uint32_t)(v - 30);
			} else if (v >= 40 && v <= 47) {
				p->bg = WRX_COLOUR_INDEXED | (uint32_t)(v - 40);
			} else if (v >= 90 && v <= 97) {
				p->fg = WRX_COLOUR_INDEXED | (uint32_t)(v - 90 + 8);
			} else if (v >= 100 && v <= 107) {
				p->bg = WRX_COLOUR_INDEXED | (uint32_t)(v - 100 + 8);
			} else {
				for (size_t k = 0; k < WRX_ARRAY_LEN(sgr_bits); k++) {
					if (sgr_bits[k].code != v)
						continue;
					p->attrs =
						(uint16_t)(sgr_bits[k].on
								   ? p->attrs | sgr_bits[k].bits
								   : p->attrs & ~sgr_bits[k].bits);
					break;
				}
			}
			break;
		}
		i = last;
	}
}

static int cb_csi(const char *leader, const long args[], int argc, const char *intermed,
		  char command, void *user)
{
	struct screen *s = user;
	if (leader == NULL || leader[0] != VTFILTER_LEADER || leader[1] || intermed == NULL ||
	    strcmp(intermed, VTFILTER_INTERMED) != 0)
		return 0;
	if (command == 'm')
		sgr(s, args, argc);
	else if (command == 's')
		s->saved = s->pen;
	else if (command == 'u')
		s->pen = s->saved;
	else if (command == 'J' && s->sb)
		sb_clear(s->sb);
	return 1;
}

static const VTermParserCallbacks fallbacks = {.csi = cb_csi};

/*
 * The alternate screen's rows, blank in the reset pen as they would have
 * been made at the start: most programs never go there (a keeper's pane is
 * its largest allocation).
 */
static void alt_rows(struct screen *s)
{
	if (s->buf[ALT])
		return;
	struct wrx_cell pen = s->pen;
	cb_initpen(s);
	s->buf[ALT] = rows_new(s, s->rows, s->cols);
	s->pen = pen;
}

static int cb_settermprop(VTermProp prop, VTermValue *val, void *user)
{
	struct screen *s = user;
	if (prop == VTERM_PROP_ALTSCREEN) {
		if (val->boolean)
			alt_rows(s);
		s->cur = val->boolean ? ALT : MAIN;
		s->wrap_row = -1;
		s->glyph_row = -1;
		s->alt_pushed = 0;
		/* Going in, libvterm erases the alternate screen (damage enough). */
		if (!val->boolean)
			damage(s, 0, s->rows);
	}
	return s->h->settermprop ? s->h->settermprop(prop, val, s->user) : 1;
}

static int cb_movecursor(VTermPos pos, VTermPos old, int visible, void *user)
{
	struct screen *s = user;
	/* Where the last glyph left it (at the margin), or it moved: no wrap. */
	if (s->wrap_row >= 0 && (pos.row != s->wrap_row || pos.col != s->wrap_col))
		s->wrap_row = -1;
	return s->h->movecursor ? s->h->movecursor(pos, old, visible, s->user) : 1;
}

static int cb_bell(void *user)
{
	struct screen *s = user;
	return s->h->bell ? s->h->bell(s->user) : 1;
}

static bool row_blank(const struct wrx_cell *row, int cols)
{
	for (int c = 0; c < cols; c++)
		if (row[c].ch[0] != 0)
			return false;
	return true;
}

/* The rows of one screen at a new size; new cells blank. */
static struct row **resized(struct screen *s, struct row **old, int rows, int cols)
{
	if (old == NULL)
		return NULL; /* an alternate screen not made yet */
	struct row **v = xmalloc((size_t)rows * sizeof *v);
	for (int r = 0; r < rows; r++) {
		if (r >= s->rows) {
			v[r] = row_new(s, cols);
			continue;
		}
		v[r] = old[r];
		if (cols != s->cols) {
			v[r] = xrealloc(v[r], sizeof *v[r] + (size_t)cols * sizeof *v[r]->c);
			blank_cells(s, v[r]->c, s->cols, cols);
			v[r]->wrapped = false;
		}
	}
	for (int r = rows; r < s->rows; r++)
		free(old[r]);
	free(old);
	return v;
}

/*
 * The main screen at a new width: its rows up to the last written one (or
 * the cursor's) go into the scrollback, which is rewrapped at cols as one
 * text; then the screen takes back the cursor's line, the lines after it,
 * and as many before it as keep the cursor on its row.
 */
static void reflow(struct screen *s, int rows, int cols, VTermPos *delta)
{
	VTermPos cur;
	vterm_state_get_cursorpos(s->st, &cur);
	struct row **v = s->buf[MAIN];
	int keep = s->rows;
	while (keep - 1 > cur.row && row_blank(v[keep - 1]->c, s->cols) && !v[keep - 2]->wrapped)
		keep--;
	sb_hold(s->sb, true);
	for (int r = 0; r < keep; r++)
		push(s, v, r, keep);
	size_t line = (size_t)(keep - 1 - cur.row);
	int col = cur.col;
	sb_reflow(s->sb, cols, &line, &col);
	rows_free(v, s->rows);
	v = s->buf[MAIN] = rows_new(s, rows, cols);
	/* Lines after the cursor's that do not fit are dropped, as tmux does. */
	for (; line > (size_t)rows - 1; line--)
		sb_pop(s->sb, NULL, 0, NULL);
	/*
	 * As tmux: the cursor stays on its row where it can (the lines its
	 * line grew by go into the history, or come back from it), with the
	 * lines after its own below it.
	 */
	size_t above = sb_count(s->sb) - 1 - line;
	int at = (int)WRX_MIN((size_t)WRX_MIN(cur.row, rows - 1 - (int)line), above);
	int n = at + 1 + (int)line;
	for (int r = n - 1; r >= 0; r--)
		sb_pop(s->sb, v[r]->c, cols, &v[r]->wrapped);
	sb_hold(s->sb, false);
	delta->row = at - cur.row;
	delta->col = col - cur.col;
	s->wrap_row = -1;
}

static int cb_resize(int rows, int cols, VTermPos *delta, void *user)
{
	struct screen *s = user;
	int old_rows = s->rows;
	if (cols != s->cols && s->cur == MAIN && s->sb) {
		reflow(s, rows, cols, delta);
		s->buf[ALT] = resized(s, s->buf[ALT], rows, cols);
		s->rows = rows;
		s->cols = cols;
		s->spare = xrealloc(s->spare, (size_t)rows * sizeof *s->spare);
		damage(s, 0, rows);
		return 1;
	}
	if (rows < s->rows) {
		/*
		 * The main screen keeps its last written line and the cursor's; the
		 * rows above them go to the scrollback. Under the alternate screen
		 * too (libvterm cut the main screen's bottom there), where the main
		 * cursor is not known: a shell leaves it on the line after the
		 * program's command. The lines come back when the pane grows.
		 */
		VTermPos cursor;
		vterm_state_get_cursorpos(s->st, &cursor);
		int last = s->rows - 1;
		while (last >= 0 && row_blank(s->buf[MAIN][last]->c, s->cols))
			last--;
		int keep =
			s->cur == MAIN ? WRX_MAX(last, cursor.row) + 1 : WRX_MIN(last + 2, s->rows);
		if (keep > rows) {
			scroll_rows(s, MAIN, 0, s->rows, keep - rows);
			if (s->cur == MAIN)
				delta->row -= keep - rows;
			else
				s->alt_pushed += keep - rows;
		}
	}
	for (int b = MAIN; b <= ALT; b++)
		s->buf[b] = resized(s, s->buf[b], rows, cols);
	s->rows = rows;
	s->cols = cols;
	s->spare = xrealloc(s->spare, (size_t)rows * sizeof *s->spare);
	for (int b = MAIN; b <= ALT; b++)
		for (int r = 0; r < rows && s->buf[b]; r++)
			mend_edges(s, s->buf[b][r]->c, cols, cols);
	if (rows > old_rows && s->sb) {
		/* Take lines back from the scrollback, above the main screen's. */
		int n = rows - old_rows;
		if (s->cur == ALT)
			n = WRX_MIN(n, s->alt_pushed); /* its cursor stays where it was */
		for (; n > 0; n--) {
			struct row *line = s->buf[MAIN][rows - 1];
			if (sb_pop(s->sb, line->c, cols, &line->wrapped) < 0)
				break;
			memmove(&s->buf[MAIN][1], &s->buf[MAIN][0],
				(size_t)(rows - 1) * sizeof(line));
			s->buf[MAIN][0] = line;
			mend_edges(s, line->c, cols, cols);
			if (s->cur == MAIN)
				delta->row++;
			else
				s->alt_pushed--;
		}
	}
	damage(s, 0, rows);
	return 1;
}

static int cb_setlineinfo(int row, const VTermLineInfo *newinfo, const VTermLineInfo *oldinfo,
			  void *user)
{
	(void)row, (void)newinfo, (void)oldinfo, (void)user;
	return 1; /* double-width and double-height lines are drawn single */
}

static const VTermStateCallbacks state_cbs = {
	.putglyph = cb_putglyph,
	.movecursor = cb_movecursor,
	.scrollrect = cb_scrollrect,
	.moverect = cb_moverect,
	.erase = cb_erase,
	.initpen = cb_initpen,
	.settermprop = cb_settermprop,
	.bell = cb_bell,
	.resize = cb_resize,
	.setlineinfo = cb_setlineinfo,
};

struct screen *screen_new(VTerm *vt, struct sb *sb, const struct screen_hooks *hooks, void *user)
{
	struct screen *s = xcalloc(1, sizeof *s);
	s->h = hooks;
	s->user = user;
	s->sb = sb;
	s->vt = vt;
	s->wrap_row = -1;
	s->glyph_row = -1;
	vterm_get_size(vt, &s->rows, &s->cols);
	cb_initpen(s);
	s->buf[MAIN] = rows_new(s, s->rows, s->cols);
	s->spare = xmalloc((size_t)s->rows * sizeof *s->spare);
	s->st = vterm_obtain_state(vt);
	vterm_state_set_callbacks(s->st, &state_cbs, s);
	vterm_state_set_unrecognised_fallbacks(s->st, &fallbacks, s);
	vterm_state_reset(s->st, 1);
	/*
	 * libvterm 0.1.4 restores a cursor never saved from zeroed memory: RGB
	 * black on black. As xterm, such a restore gives the reset state.
	 */
	vterm_input_write(vt, "\0337", 2);
	s->saved = s->pen;
	return s;
}

void screen_free(struct screen *s)
{
	if (s == NULL)
		return;
	rows_free(s->buf[MAIN], s->rows);
	rows_free(s->buf[ALT], s->rows);
	free(s->spare);
	free(s);
}

void screen_fit(VTerm *vt)
{
	VTermPos cur;
	vterm_state_get_cursorpos(vterm_obtain_state(vt), &cur);
	/* DECSTBM and DECSLRM (always, in 0.1.4) to the whole screen, and back. */
	char seq[48];
	int n = snprintf(seq, sizeof seq, "\033[r\033[s\033[%d;%dH", cur.row + 1, cur.col + 1);
	vterm_input_write(vt, seq, (size_t)n);
}

void screen_feed(struct screen *s)
{
	s->glyph_row = -1;
}

/* v in decimal at out; returns its length (at most 10). */
static int decimal(unsigned v, char *out)
{
	char d[10];
	int n = 0;
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (int i = 0; i < n; i++)
		out[i] = d[n - 1 - i];
	return n;
}

size_t screen_text(struct screen *s, const char *t, size_t n, bool all)
{
	VTermPos at;
	vterm_state_get_cursorpos(s->st, &at);
	at.col += s->ahead;
	/*
	 * Short of the last two columns, where libvterm's cursor is never
	 * waiting to wrap (a glyph reached the margin) and where none of
	 * these glyphs wraps; the last character goes to libvterm, which
	 * must know it to join a combining character that may follow.
	 */
	if (at.row < 0 || at.row >= s->rows || at.col < 0 || at.col > s->cols - 3 || n < 2)
		return 0;
	size_t k = WRX_MIN(all ? n : n - 1, (size_t)(s->cols - 2 - at.col));
	const VTermLineInfo *li = vterm_state_get_lineinfo(s->st, at.row);
	if (li->doublewidth || li->doubleheight)
		return 0;
	if (at.col == 0 && s->wrap_row >= 0 && at.row == s->wrap_row + 1)
		s->buf[s->cur][s->wrap_row]->wrapped = true;
	s->wrap_row = -1;
	struct wrx_cell *row = s->buf[s->cur][at.row]->c, *c = &row[at.col];
	bool mend = at.col + (int)k < s->cols && row[at.col + k].width == 0;
	struct wrx_cell glyph = {.width = 1,
				 .attrs = s->pen.attrs,
				 .fg = s->pen.fg,
				 .bg = s->pen.bg,
				 .ul = s->pen.ul};
	for (size_t i = 0; i < k; i++) {
		mend |= c[i].width != 1;
		glyph.ch[0] = (unsigned char)t[i];
		c[i] = glyph;
	}
	if (mend)
		mend_edges(s, row, at.col, at.col + (int)k);
	if (at.row != s->glyph_row) {
		s->h->damage(s->user, at.row, at.row + 1);
		s->glyph_row = at.row;
	}
	s->ahead += (int)k;
	return k;
}

/* libvterm's cursor past what screen_text put: CUF, which no mode here bounds short of it. */
void screen_sync_cursor(struct screen *s)
{
	if (s->ahead == 0)
		return;
	char cuf[16] = "\033[";
	size_t len = 2 + (size_t)decimal((unsigned)s->ahead, cuf + 2);
	cuf[len++] = 'C';
	s->ahead = 0;
	vterm_input_write(s->vt, cuf, len);
}

bool screen_sgr(struct screen *s, const char *p, size_t n)
{
	/* libvterm ends a CSI by bringing a cursor outside the screen back in. */
	VTermPos at;
	vterm_state_get_cursorpos(s->st, &at);
	at.col += s->ahead;
	if (at.row < 0 || at.row >= s->rows || at.col < 0 || at.col >= s->cols)
		return false;
	/* The arguments as libvterm's parser makes them. */
	long args[16]; /* libvterm's CSI_ARGS_MAX, as the filter keeps to */
	int argc = 0;
	args[0] = CSI_ARG_MISSING;
	for (size_t i = 0; i < n; i++) {
		if (p[i] >= '0' && p[i] <= '9') {
			if (args[argc] == CSI_ARG_MISSING)
				args[argc] = 0;
			args[argc] = args[argc] * 10 + (p[i] - '0');
			continue;
		}
		if (p[i] == ':')
			args[argc] |= CSI_ARG_FLAG_MORE;
		if (argc + 1 == (int)WRX_ARRAY_LEN(args))
			return false;
		args[++argc] = CSI_ARG_MISSING;
	}
	sgr(s, args, argc + 1);
	return true;
}

size_t screen_restore_span(const char *d, size_t len)
{
	for (const char *e = memchr(d, 0x1b, len); e != NULL;
	     e = memchr(e + 1, 0x1b, len - (size_t)(e - d) - 1)) {
		size_t at = (size_t)(e - d);
		if (at + 1 < len && e[1] == '8') /* DECRC */
			return at + 2;
		if (at + 2 >= len || e[1] != '[' || e[2] != '?')
			continue;
		/* CSI ? Pm l with 1048 or 1049 among the parameters */
		bool hit = false;
		long v = 0;
		size_t i = at + 3;
		for (; i < len && ((d[i] >= '0' && d[i] <= '9') || d[i] == ';'); i++) {
			if (d[i] == ';') {
				hit |= v == 1048 || v == 1049;
				v = 0;
			} else if (v < 100000) {
				v = v * 10 + (d[i] - '0');
			}
		}
		if (i < len && d[i] == 'l' && (hit || v == 1048 || v == 1049))
			return i + 1;
	}
	return len;
}

void screen_keep_cursor(VTerm *vt)
{
	int rows, cols;
	VTermPos cur;
	vterm_get_size(vt, &rows, &cols);
	vterm_state_get_cursorpos(vterm_obtain_state(vt), &cur);
	if (cur.row < rows && cur.col < cols)
		return;
	char seq[32];
	int n = snprintf(seq, sizeof seq, "\033[%d;%dH", WRX_MIN(cur.row, rows - 1) + 1,
			 WRX_MIN(cur.col, cols - 1) + 1);
	vterm_input_write(vt, seq, (size_t)n);
}

const struct wrx_cell *screen_row(const struct screen *s, int row)
{
	return row >= 0 && row < s->rows ? s->buf[s->cur][row]->c : NULL;
}

bool screen_row_wrapped(const struct screen *s, int row)
{
	return row >= 0 && row < s->rows && s->buf[s->cur][row]->wrapped;
}
