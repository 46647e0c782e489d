/*
 * scrollback.c - a ring of compactly encoded lines.
 *
 * A line is one allocation: a header, its attribute runs, then its text.
 * The text holds one entry per cell: a wide character is preceded by the
 * byte 0x02 (its right half is implied), a combining mark by 0x01, a blank
 * cell is a space. Control bytes never reach a cell, so the markers are
 * unambiguous. Runs give the attributes and colours from a cell onwards;
 * a typical shell line has one or two.
 *
 * A line that continued on the next (the program's text reached the right
 * margin and wrapped; no newline) is marked, and keeps its trailing blanks:
 * sb_reflow joins such lines and cuts them again at a new width, working on
 * the encoded text itself, so a narrowed and widened pane gets every
 * character back. A line that needs no change keeps its allocation.
 */
#include "scrollback.h"

#include "../util/util.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct sb_run {
	uint16_t start; /* first cell */
	uint16_t attrs;
	uint32_t fg, bg, ul;
};

struct sb_line {
	uint16_t ncells;
	uint16_t nruns;
	uint32_t textlen : 31;
	uint32_t wrapped : 1; /* the text goes on in the next line */
			      /* struct sb_run runs[nruns]; char text[textlen]; */
};

struct sb {
	struct sb_line **ring; /* owned; `cap` slots, grown as lines come (up to the limit) */
	size_t cap;
	size_t limit;
	/*
	 * Lines over the limit that a reflow made (a narrower pane holds the
	 * same text in more lines): kept, not dropped, so that widening again
	 * brings every character back. At most REFLOW_SLACK times the limit.
	 */
	size_t slack;
	size_t head; /* slot of the oldest line */
	size_t count;
	size_t bytes;
	bool held;       /* sb_hold: the limit waits */
	uint64_t pushed; /* lines pushed, ever */
	uint64_t gen;    /* bumped when a line already pushed changes or goes back */
};

#define REFLOW_SLACK 9

#define MARK_COMBINING 0x01
#define MARK_WIDE 0x02
/*
 * A cell erased, never written, at the end of a line that ends there: it
 * keeps its colours (ESC [44m ... ESC [K paints them to the margin), but a
 * reflow leaves it out, as tmux does, rather than wrap a coloured nothing
 * into a line of its own. Decoded as a blank.
 */
#define MARK_ERASED 0x03

struct sb *sb_new(size_t limit)
{
	struct sb *sb = xcalloc(1, sizeof *sb);
	sb->limit = limit;
	/* Small at first: a hundred mirrors opened at once fill few lines each. */
	sb->cap = WRX_MAX(WRX_MIN(limit, (size_t)64), (size_t)1);
	sb->ring = xcalloc(sb->cap, sizeof *sb->ring);
	return sb;
}

/* Line i, counted from the oldest. */
static struct sb_line **slot(const struct sb *sb, size_t i)
{
	return &sb->ring[(sb->head + i) % sb->cap];
}

static size_t line_size(const struct sb_line *l)
{
	return sizeof *l + l->nruns * sizeof(struct sb_run) + l->textlen;
}

void sb_free(struct sb *sb)
{
	if (sb == NULL)
		return;
	for (size_t i = 0; i < sb->count; i++)
		free(*slot(sb, i));
	free(sb->ring);
	free(sb);
}

size_t sb_count(const struct sb *sb)
{
	return sb->count;
}

size_t sb_bytes(const struct sb *sb)
{
	return sb->bytes + sb->cap * sizeof *sb->ring;
}

static void drop_oldest(struct sb *sb)
{
	struct sb_line *l = sb->ring[sb->head];
	sb->bytes -= line_size(l);
	free(l);
	sb->ring[sb->head] = NULL;
	sb->head = sb->head + 1 == sb->cap ? 0 : sb->head + 1;
	sb->count--;
}

/* The ring again with cap slots (at least count), oldest first. */
static void reslot(struct sb *sb, size_t cap)
{
	struct sb_line **ring = xcalloc(cap, sizeof *ring);
	for (size_t i = 0; i < sb->count; i++)
		ring[i] = *slot(sb, i);
	free(sb->ring);
	sb->ring = ring;
	sb->cap = cap;
	sb->head = 0;
}

/* Down to the limit, and the ring no larger than it needs (unless held). */
static void trim(struct sb *sb)
{
	if (sb->held)
		return;
	while (sb->count > sb->limit + sb->slack)
		drop_oldest(sb);
	size_t want = WRX_MAX(sb->limit + sb->slack, (size_t)1);
	if (sb->cap > want)
		reslot(sb, want);
}

void sb_set_limit(struct sb *sb, size_t limit)
{
	sb->limit = limit;
	sb->slack = 0;
	trim(sb);
}

void sb_hold(struct sb *sb, bool on)
{
	sb->held = on;
	trim(sb);
}

static void append(struct sb *sb, struct sb_line *l)
{
	if (sb->count == sb->cap) {
		size_t most = sb->held ? SIZE_MAX : WRX_MAX(sb->limit + sb->slack, sb->count + 1);
		reslot(sb, WRX_MIN(sb->cap * 2, most));
	}
	*slot(sb, sb->count) = l;
	sb->count++;
	sb->bytes += line_size(l);
}

static struct sb_line *line_new(const struct sb_run *runs, size_t nr, const char *text, size_t tl,
				int ncells, bool wrapped)
{
	struct sb_line *l = xmalloc(sizeof *l + nr * sizeof *runs + tl);
	l->ncells = (uint16_t)ncells;
	l->nruns = (uint16_t)nr;
	l->textlen = (uint32_t)tl;
	l->wrapped = wrapped;
	memcpy(l + 1, runs, nr * sizeof *runs);
	memcpy((char *)(l + 1) + nr * sizeof *runs, text, tl);
	return l;
}

static int cell_blank(const struct wrx_cell *c)
{
	return (c->ch[0] == 0 || c->ch[0] == ' ') && c->attrs == 0 && c->bg == WRX_COLOUR_DEFAULT;
}

/*
 * A cell's width, protection, attributes and colours, in two words, for
 * comparing runs of cells at a word each; and its first two characters.
 */
_Static_assert(offsetof(struct wrx_cell, width) == 24 && offsetof(struct wrx_cell, ul) == 36 &&
		       sizeof(struct wrx_cell) == 40,
	       "struct wrx_cell: ch[6], then width to ul in 16 bytes");
struct look {
	uint64_t lo, hi;
};

static struct look look_of(const struct wrx_cell *c)
{
	struct look k;
	memcpy(&k, &c->width, sizeof k);
	return k;
}

static uint64_t first_chars(const struct wrx_cell *c)
{
	uint64_t v;
	memcpy(&v, c->ch, sizeof v);
	return v;
}

/* cells as one line (trailing blanks trimmed unless wrapped), in one exact allocation. */
static struct sb_line *encode(const struct wrx_cell *cells, int ncols, bool wrapped)
{
	int n = ncols;
	while (!wrapped && n > 0 && cell_blank(&cells[n - 1]))
		n--;
	if (n > UINT16_MAX)
		n = UINT16_MAX;

	/*
	 * Encode into scratch space that only grows (one thread, and this is
	 * the flood path), then copy into one exact allocation.
	 */
	static char *text;
	static struct sb_run *runs;
	static size_t scratch_cells;
	if ((size_t)n + 1 > scratch_cells) {
		scratch_cells = (size_t)n + 1;
		text = xrealloc(text, scratch_cells * (WRX_CELL_CHARS * 5 + 1));
		runs = xrealloc(runs, scratch_cells * sizeof *runs);
	}
	/* Where the erased tail of a line that ends here begins. */
	int written = n;
	while (!wrapped && written > 0 && cells[written - 1].ch[0] == 0 &&
	       cells[written - 1].width == 1)
		written--;
	size_t tl = 0, nr = 0;
	/*
	 * The run now, in locals: most cells only compare with it. plain:
	 * how a cell of one column in it looks (unprotected; protect is
	 * masked out), which a cell that also holds one printable ASCII
	 * character (the first two characters, as one word, are the
	 * character and 0) matches in three comparisons.
	 */
	struct sb_run at = {0};
	struct look plain = {~0ull, ~0ull}, mask = {0, ~0ull};
	{
		struct wrx_cell m = {.width = 0xff, .attrs = 0xffff, .fg = ~0u};
		mask.lo = look_of(&m).lo;
	}
	for (int i = 0; i < n; i++) {
		const struct wrx_cell *c = &cells[i];
		struct look now = look_of(c);
		if ((now.lo & mask.lo) == plain.lo && now.hi == plain.hi &&
		    first_chars(c) - 0x20 < 0x60 && i < written) {
			text[tl++] = (char)c->ch[0]; /* printable ASCII in the same run: most */
			continue;
		}
		bool same = nr > 0 && at.attrs == c->attrs && at.fg == c->fg && at.bg == c->bg &&
			    at.ul == c->ul;
		if (c->width == 0 && i > 0)
			continue; /* right half of a wide character */
		if (!same) {
			at = (struct sb_run){(uint16_t)i, c->attrs, c->fg, c->bg, c->ul};
			runs[nr++] = at;
			struct wrx_cell one = {.width = 1,
					       .attrs = c->attrs,
					       .fg = c->fg,
					       .bg = c->bg,
					       .ul = c->ul};
			plain = look_of(&one);
		}
		if (c->width == 2)
			text[tl++] = MARK_WIDE;
		if (i >= written) {
			text[tl++] = MARK_ERASED;
			continue;
		}
		uint32_t ch = c->ch[0];
		if (ch < 0x20) {
			text[tl++] = ' '; /* blank */
			continue;
		}
		if (ch < 0x80)
			text[tl++] = (char)ch;
		else
			tl += (size_t)utf8_encode(ch, text + tl);
		for (int k = 1; k < WRX_CELL_CHARS && c->ch[k]; k++) {
			text[tl++] = MARK_COMBINING;
			tl += (size_t)utf8_encode(c->ch[k], text + tl);
		}
	}
	return line_new(runs, nr, text, tl, n, wrapped);
}

static void push_line(struct sb *sb, struct sb_line *l)
{
	if (!sb->held)
		while (sb->count && sb->count >= sb->limit + sb->slack)
			drop_oldest(sb);
	append(sb, l);
	sb->pushed++;
}

void sb_push(struct sb *sb, const struct wrx_cell *cells, int ncols, bool wrapped)
{
	if (sb->limit == 0 && !sb->held)
		return;
	push_line(sb, encode(cells, ncols, wrapped));
}

/* Decode one UTF-8 sequence; invalid bytes decode as U+FFFD. */
static uint32_t utf8_next(const unsigned char **pp, const unsigned char *end)
{
	const unsigned char *p = *pp;
	uint32_t c = *p++;
	int extra = 0;
	if (c >= 0xf0) {
		c &= 0x07;
		extra = 3;
	} else if (c >= 0xe0) {
		c &= 0x0f;
		extra = 2;
	} else if (c >= 0xc0) {
		c &= 0x1f;
		extra = 1;
	} else if (c >= 0x80) {
		c = 0xfffd;
	}
	while (extra-- > 0 && p < end && (*p & 0xc0) == 0x80)
		c = (c << 6) | (*p++ & 0x3f);
	*pp = p;
	return c;
}

static void blank(struct wrx_cell *c)
{
	memset(c, 0, sizeof *c);
	c->width = 1;
}

static int decode(const struct sb_line *l, struct wrx_cell *cells, int ncols)
{
	const struct sb_run *runs = (const struct sb_run *)(l + 1);
	const unsigned char *p = (const unsigned char *)(runs + l->nruns);
	const unsigned char *end = p + l->textlen;
	for (int i = 0; i < ncols; i++)
		blank(&cells[i]);
	int col = 0, r = -1;
	while (p < end && col < l->ncells) {
		while (r + 1 < l->nruns && runs[r + 1].start <= col)
			r++;
		int wide = 0;
		if (*p == MARK_WIDE) {
			wide = 1;
			p++;
			if (p >= end)
				break;
		}
		uint32_t base = *p == MARK_ERASED ? (p++, ' ') : utf8_next(&p, end);
		int k = 1;
		uint32_t comb[WRX_CELL_CHARS] = {0};
		while (p < end && *p == MARK_COMBINING) {
			p++;
			uint32_t m = p < end ? utf8_next(&p, end) : 0;
			if (k < WRX_CELL_CHARS)
				comb[k++] = m;
		}
		if (col >= ncols) {
			col += wide ? 2 : 1;
			continue;
		}
		struct wrx_cell *c = &cells[col];
		c->ch[0] = base == ' ' ? 0 : base;
		for (int j = 1; j < k; j++)
			c->ch[j] = comb[j];
		if (r >= 0) {
			c->attrs = runs[r].attrs;
			c->fg = runs[r].fg;
			c->bg = runs[r].bg;
			c->ul = runs[r].ul;
		}
		if (wide && col + 1 < ncols) {
			c->width = 2;
			cells[col + 1].width = 0;
			cells[col + 1].attrs = c->attrs;
			cells[col + 1].fg = c->fg;
			cells[col + 1].bg = c->bg;
			cells[col + 1].ul = c->ul;
		} else if (wide) {
			c->ch[0] = 0; /* half a wide char does not fit: blank */
		}
		col += wide ? 2 : 1;
	}
	return l->ncells;
}

int sb_get(const struct sb *sb, size_t idx, struct wrx_cell *cells, int ncols)
{
	if (idx >= sb->count)
		return -1;
	return decode(*slot(sb, sb->count - 1 - idx), cells, ncols);
}

int sb_cells(const struct sb *sb, size_t idx)
{
	return idx < sb->count ? (*slot(sb, sb->count - 1 - idx))->ncells : 0;
}

bool sb_wrapped(const struct sb *sb, size_t idx)
{
	return idx < sb->count && (*slot(sb, sb->count - 1 - idx))->wrapped;
}

void sb_unwrap_last(struct sb *sb)
{
	if (sb->count == 0 || !(*slot(sb, sb->count - 1))->wrapped)
		return;
	(*slot(sb, sb->count - 1))->wrapped = false;
	sb->gen++;
}

void sb_clear(struct sb *sb)
{
	if (sb->count == 0)
		return;
	while (sb->count > 0)
		drop_oldest(sb);
	sb->gen++;
}

int sb_pop(struct sb *sb, struct wrx_cell *cells, int ncols, bool *wrapped)
{
	if (sb->count == 0)
		return -1;
	struct sb_line **at = slot(sb, sb->count - 1), *l = *at;
	if (cells)
		decode(l, cells, ncols);
	if (wrapped)
		*wrapped = l->wrapped;
	sb->bytes -= line_size(l);
	free(l);
	*at = NULL;
	sb->count--;
	sb->gen++;
	return 0;
}

/* Bytes of the cell entry at p (a wide mark, a character, its marks) and its width. */
static size_t entry_len(const unsigned char *p, const unsigned char *end, int *width)
{
	const unsigned char *q = p;
	*width = 1;
	if (*q == MARK_WIDE) {
		*width = 2;
		q++;
	}
	for (bool first = true; q < end && (first || *q == MARK_COMBINING); first = false) {
		if (!first)
			q++;
		if (q < end)
			utf8_next(&q, end);
	}
	return (size_t)(q - p);
}

/*
 * A logical line: the text of lines that wrapped into each other, joined.
 * Runs start at a cell of the whole line, which may be longer than a line
 * can hold (a program that printed a megabyte without a newline).
 */
struct logical {
	char *text;
	size_t len, cap;
	struct {
		size_t start;
		uint16_t attrs;
		uint32_t fg, bg, ul;
	} * runs;
	size_t nruns, runcap;
	size_t ncells;
	bool open; /* a line was added and its end not yet seen */
};

/* Cells of l's erased tail (MARK_ERASED, one byte each, at its end). */
static int erased_tail(const struct sb_line *l)
{
	const struct sb_run *runs = (const struct sb_run *)(l + 1);
	const char *text = (const char *)(runs + l->nruns);
	int n = 0;
	while ((uint32_t)n < l->textlen && n < l->ncells && text[l->textlen - 1 - n] == MARK_ERASED)
		n++;
	return n;
}

/* l joins g, without its erased tail: a reflow does not carry it. */
static void logical_add(struct logical *g, const struct sb_line *l)
{
	const struct sb_run *runs = (const struct sb_run *)(l + 1);
	const char *text = (const char *)(runs + l->nruns);
	int tail = erased_tail(l);
	size_t textlen = l->textlen - (size_t)tail, ncells = l->ncells - (size_t)tail;
	if (g->len + textlen > g->cap) {
		g->cap = WRX_MAX(g->cap * 2, g->len + textlen);
		g->text = xrealloc(g->text, g->cap);
	}
	memcpy(g->text + g->len, text, textlen);
	g->len += textlen;
	for (size_t i = 0; i < l->nruns && runs[i].start < ncells; i++) {
		if (g->nruns && g->runs[g->nruns - 1].attrs == runs[i].attrs &&
		    g->runs[g->nruns - 1].fg == runs[i].fg &&
		    g->runs[g->nruns - 1].bg == runs[i].bg &&
		    g->runs[g->nruns - 1].ul == runs[i].ul)
			continue;
		if (g->nruns == g->runcap) {
			g->runcap = WRX_MAX(g->runcap * 2, 16);
			g->runs = xrealloc(g->runs, g->runcap * sizeof *g->runs);
		}
		g->runs[g->nruns].start = g->ncells + runs[i].start;
		g->runs[g->nruns].attrs = runs[i].attrs;
		g->runs[g->nruns].fg = runs[i].fg;
		g->runs[g->nruns].bg = runs[i].bg;
		g->runs[g->nruns].ul = runs[i].ul;
		g->nruns++;
	}
	g->ncells += ncells;
	g->open = true;
}

/* Where a cursor in the logical line goes: its cell, and then its new line and column. */
struct mark {
	bool in; /* the cursor is in the logical line being cut */
	size_t cell;
	size_t line; /* out: counted from the oldest */
	int col;
	bool placed;
};

/*
 * Cut g into lines of at most cols cells (a wide character that would
 * straddle the margin starts the next line) and append them to sb.
 */
static void logical_cut(struct logical *g, struct sb *sb, int cols, struct mark *m)
{
	static struct sb_run *runs;
	static size_t runcap;
	const unsigned char *p = (const unsigned char *)g->text, *end = p + g->len;
	size_t cell = 0, r = 0;
	/*
	 * Every cell takes at least a byte, a wide one at least four (its mark
	 * and three), a combining mark cells none: as many bytes as cells is
	 * one byte for each cell.
	 */
	bool plain = g->len == g->ncells;
	do {
		const unsigned char *from = p;
		size_t first = cell;
		int w = 0, ew;
		if (plain) {
			/* One byte a cell, none wide: the cut is arithmetic. */
			w = (int)WRX_MIN((size_t)(end - p), (size_t)cols);
			p += w;
		}
		while (p < end && !plain) {
			size_t n = entry_len(p, end, &ew);
			if (w + ew > cols && w > 0)
				break;
			p += n;
			w += ew;
		}
		cell += (size_t)w;
		/* The runs over [first, cell), rebased to the line. */
		while (r + 1 < g->nruns && g->runs[r + 1].start <= first)
			r++;
		size_t nr = 0;
		for (size_t k = r; k < g->nruns && (k == r || g->runs[k].start < cell); k++) {
			if (nr == runcap) {
				runcap = WRX_MAX(runcap * 2, 16);
				runs = xrealloc(runs, runcap * sizeof *runs);
			}
			size_t st = g->runs[k].start > first ? g->runs[k].start - first : 0;
			runs[nr++] = (struct sb_run){(uint16_t)st, g->runs[k].attrs, g->runs[k].fg,
						     g->runs[k].bg, g->runs[k].ul};
		}
		if (g->nruns == 0 || w == 0)
			nr = 0;
		bool more = p < end;
		append(sb, line_new(runs, nr, (const char *)from, (size_t)(p - from), w, more));
		if (m->in && !m->placed && (m->cell < cell || !more)) {
			m->line = sb->count - 1;
			m->col = (int)WRX_MIN(m->cell - first, (size_t)cols - 1);
			m->placed = true;
		}
	} while (p < end);
	g->len = g->nruns = g->ncells = 0;
	g->open = false;
	m->in = false;
}

void sb_reflow(struct sb *sb, int cols, size_t *line, int *col)
{
	static struct logical g;
	struct sb old = *sb;
	size_t cursor = line && *line < old.count ? old.count - 1 - *line : SIZE_MAX;
	struct mark m = {0};
	sb->cap = WRX_MAX(old.count, (size_t)1);
	sb->ring = xcalloc(sb->cap, sizeof *sb->ring);
	sb->head = sb->count = sb->bytes = 0;
	for (size_t i = 0; i < old.count; i++) {
		struct sb_line *l = *slot(&old, i);
		if (!g.open && !l->wrapped && l->ncells - erased_tail(l) <= cols) {
			/* A line of its own that fits: as it is (an erased tail past the margin too). */
			append(sb, l);
			if (i == cursor) {
				m.line = sb->count - 1;
				m.col = WRX_MIN(*col, cols - 1);
				m.placed = true;
			}
			continue;
		}
		if (i == cursor) {
			m.in = true;
			m.cell = g.ncells + (size_t)WRX_MAX(*col, 0);
		}
		bool wrapped = l->wrapped;
		logical_add(&g, l);
		free(l);
		if (!wrapped)
			logical_cut(&g, sb, cols, &m);
	}
	if (g.open)
		logical_cut(&g, sb, cols, &m);
	free(old.ring);
	sb->gen++;
	sb->slack = sb->count > sb->limit ? WRX_MIN(sb->count - sb->limit, sb->limit * REFLOW_SLACK)
					  : 0;
	if (line && m.placed) {
		*line = sb->count - 1 - m.line;
		*col = m.col;
	}
}

uint64_t sb_pushed(const struct sb *sb)
{
	return sb->pushed;
}

uint64_t sb_generation(const struct sb *sb)
{
	return sb->gen;
}

size_t sb_capacity(const struct sb *sb)
{
	return sb->limit + sb->slack;
}

void sb_trim_to(struct sb *sb, size_t count)
{
	while (sb->count > count)
		drop_oldest(sb);
}

const void *sb_line_data(const struct sb *sb, size_t idx, size_t *len)
{
	if (idx >= sb->count)
		return NULL;
	const struct sb_line *l = *slot(sb, sb->count - 1 - idx);
	*len = line_size(l);
	return l;
}

/* data as a line of ours, or NULL if it is not one. */
static struct sb_line *line_from(const void *data, size_t len)
{
	struct sb_line h;
	if (len < sizeof h)
		return NULL;
	memcpy(&h, data, sizeof h);
	if (line_size(&h) != len)
		return NULL;
	struct sb_line *l = xmalloc(len);
	memcpy(l, data, len);
	const struct sb_run *runs = (const struct sb_run *)(l + 1);
	for (size_t i = 0; i < l->nruns; i++)
		if ((i > 0 && runs[i].start <= runs[i - 1].start) || runs[i].start >= l->ncells) {
			free(l);
			return NULL;
		}
	return l;
}

int sb_push_data(struct sb *sb, const void *data, size_t len)
{
	struct sb_line *l = line_from(data, len);
	if (l == NULL)
		return -1;
	if (sb->limit == 0 && !sb->held)
		free(l);
	else
		push_line(sb, l);
	return 0;
}
