/*
 * render.c - draw one frame from the session's state.
 *
 * Called from the frame timer only. Pane rows are drawn when libvterm marked
 * them dirty (every row after a layout change or in scroll mode); the
 * sidebar, title bars and status line are cheap and drawn every frame, and
 * curses' own diff keeps unchanged cells off the wire. Colours go through a
 * cache of extended colour pairs; when the terminal's pairs run out the
 * cache starts over and the whole screen is redrawn, so a pair is never
 * redefined under a cell that is still showing it.
 */
#include "../term/pane.h"
#include "../term/width.h"
#include "../term/colour.h"
#include "terminfo.h"
#include "ui.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

#define PAIR_SLOTS (1 << 17)

struct pair_slot {
	int fg, bg;
	int pair; /* 0: empty */
};

static struct pair_slot *pairs;
static int pairs_used;
static bool pairs_reset_wanted;

static void reset_colours(void)
{
	if (pairs)
		memset(pairs, 0, PAIR_SLOTS * sizeof *pairs);
	pairs_used = 0;
}

int ui_colour_pair(struct ui *ui, int fg, int bg)
{
	if (ui->tty.ncolours == 0 || (fg == -1 && bg == -1))
		return 0;
	if (pairs == NULL)
		pairs = xcalloc(PAIR_SLOTS, sizeof *pairs);
	unsigned h = ((unsigned)fg * 2654435761u) ^ ((unsigned)bg * 40503u);
	for (unsigned i = 0;; i++) {
		struct pair_slot *s = &pairs[(h + i) & (PAIR_SLOTS - 1)];
		if (s->pair && s->fg == fg && s->bg == bg)
			return s->pair;
		if (s->pair == 0) {
			int limit = WRX_MIN(COLOR_PAIRS - 1, PAIR_SLOTS / 2);
			if (pairs_used >= limit) {
				/* Out of pairs: start over after this frame, redraw all. */
				pairs_reset_wanted = true;
				return 0;
			}
			int pair = ++pairs_used;
			if (init_extended_pair(pair, fg, bg) == ERR) {
				pairs_used--;
				return 0;
			}
			s->fg = fg;
			s->bg = bg;
			s->pair = pair;
			return pair;
		}
	}
}

attr_t ui_cell_attr(struct ui *ui, const struct wrx_cell *c, bool hl, int *pair)
{
	attr_t a = 0;
	if (c->attrs & WRX_ATTR_BOLD)
		a |= WA_BOLD;
	if (c->attrs & WRX_ATTR_UNDERLINES)
		a |= WA_UNDERLINE; /* the nearest a style has; drawn again where there is better */
	if (c->attrs & WRX_ATTR_DIM)
		a |= WA_DIM;
	if (c->attrs & WRX_ATTR_CONCEAL)
		a |= WA_INVIS;
	if (c->attrs & WRX_ATTR_ITALIC)
		a |= WA_ITALIC;
	if (c->attrs & WRX_ATTR_BLINK)
		a |= WA_BLINK;
	if (!!(c->attrs & WRX_ATTR_REVERSE) != hl)
		a |= WA_REVERSE;
	if (ui->tty.colour_kind == TERMINFO_DIRECT256 ||
	    ui->tty.colour_kind == TERMINFO_DIRECT256_SHIFTED) {
		bool shifted = ui->tty.colour_kind == TERMINFO_DIRECT256_SHIFTED;
		*pair = ui_colour_pair(ui, colour_for_direct256(c->fg, shifted),
				       colour_for_direct256(c->bg, shifted));
	} else {
		*pair = ui_colour_pair(ui, colour_for_terminal(c->fg, ui->tty.ncolours),
				       colour_for_terminal(c->bg, ui->tty.ncolours));
	}
	return a;
}

static void put_cell(struct ui *ui, int y, int x, int maxx, const struct wrx_cell *c, bool hl)
{
	wchar_t wch[CCHARW_MAX + 1];
	int n = 0;
	attr_t a = 0;
	int width = c->width ? c->width : 1;
	if (c->ch[0] == 0) {
		wch[n++] = L' ';
	} else {
		int w = width_of(c->ch[0]);
		if (w != width || x + width > maxx) {
			/* libvterm and the C library disagree: keep the line straight. */
			wch[n++] = L'?';
			if (width == 2 && x + 1 < maxx)
				mvaddch(y, x + 1, ' ');
		} else {
			wch[n++] = (wchar_t)c->ch[0];
			/* A cchar_t holds CCHARW_MAX (5); more is drawn again past curses. */
			for (int k = 1; k < WRX_CELL_CHARS && c->ch[k] && n < CCHARW_MAX; k++)
				if (width_of(c->ch[k]) == 0)
					wch[n++] = (wchar_t)c->ch[k];
		}
	}
	/* curses has no strike-through: the terminal's own (drawn again below), else U+0336. */
	if ((c->attrs & WRX_ATTR_STRIKE) && !ui->tty.extras.strike && n < CCHARW_MAX)
		wch[n++] = 0x0336;
	wch[n] = 0;
	int pair;
	a |= ui_cell_attr(ui, c, hl, &pair);
	cchar_t cc;
	setcchar(&cc, wch, a, 0, &pair);
	mvadd_wch(y, x, &cc);
}

/* UTF-8 text at (y, x), at most maxw columns; returns columns used. */
static int put_text(int y, int x, int maxw, const char *s, attr_t a);

/* The sidebar's columns (sidebar.width), the border aside. */
static int ui_sidebar_width(const struct ui *ui)
{
	long w = ui->w->cfg.sidebar_width;
	return w >= 12 && w <= 80 ? (int)w : SIDEBAR_WIDTH;
}

int ui_put_text(int y, int x, int maxw, const char *s, attr_t a)
{
	int used = 0;
	mbstate_t st;
	memset(&st, 0, sizeof st);
	move(y, x);
	attr_set(a, 0, NULL);
	while (*s && used < maxw) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s, strlen(s), &st);
		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			memset(&st, 0, sizeof st);
			wc = L'?';
			n = 1;
		}
		int w = width_of((uint32_t)wc);
		if (w < 0 || wc < 0x20) {
			wc = L'?';
			w = 1;
		}
		if (used + w > maxw)
			break;
		wchar_t str[2] = {wc, 0};
		addnwstr(str, 1);
		used += w;
		s += n;
	}
	attr_set(A_NORMAL, 0, NULL);
	return used;
}

static int put_text(int y, int x, int maxw, const char *s, attr_t a)
{
	return ui_put_text(y, x, maxw, s, a);
}

static void fill(int y, int x, int w, attr_t a, chtype ch)
{
	if (w <= 0)
		return;
	attr_set(a, 0, NULL);
	mvhline(y, x, ch, w);
	attr_set(A_NORMAL, 0, NULL);
}

const char *ui_status_icon(struct ui *ui, const struct agent *a, uint64_t now)
{
	return config_icon(&ui->w->cfg, session_interrupted(ui->w->s, a, now)
						? WRX_STATUS_INTERRUPTED
						: a->status);
}

const char *ui_status_word(struct ui *ui, const struct agent *a, uint64_t now)
{
	return status_word(session_interrupted(ui->w->s, a, now) ? WRX_STATUS_INTERRUPTED
								 : a->status);
}

/* Agents needing the user first (waiting, then done, then other calls), else in order. */
static int attention_rank(const struct agent *a)
{
	if (!a->attention && !a->bell)
		return 3;
	return a->status == WRX_STATUS_WAITING ? 0 : a->status == WRX_STATUS_DONE ? 1 : 2;
}

/*
 * The agents by number: rows that move as statuses change take clicks and
 * keys meant for the row that was there. sidebar.order: attention puts
 * those needing the user first, for whoever wants that.
 */
int ui_agent_order(struct ui *ui, int *order)
{
	struct session *s = ui->w->s;
	int n = session_agent_count(s), k = 0;
	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = 1; i < n; i++)
		for (int j = i;
		     j > 0 && session_agent(s, order[j])->num < session_agent(s, order[j - 1])->num;
		     j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	if (strcmp(ui->w->cfg.sidebar_order, "attention") != 0)
		return n;
	int *byrank = xcalloc((size_t)WRX_MAX(n, 1), sizeof *byrank);
	for (int rank = 0; rank <= 3; rank++)
		for (int i = 0; i < n; i++)
			if (attention_rank(session_agent(s, order[i])) == rank)
				byrank[k++] = order[i];
	memcpy(order, byrank, (size_t)n * sizeof *order);
	free(byrank);
	return n;
}

/* "icon " for the agent's status, nothing without one. */
static char *status_prefix(struct ui *ui, const struct agent *a, uint64_t now)
{
	const char *icon = ui_status_icon(ui, a, now);
	return *icon ? xasprintf("%s ", icon) : xstrdup("");
}

static void draw_title(struct ui *ui, struct wpane *wp)
{
	struct view *v = wp->view;
	struct rect r = v->r;
	bool focused = wp == session_focus(ui->w->s);
	attr_t a = focused ? (A_REVERSE | A_BOLD) : A_REVERSE;
	if (r.h < 1 || r.w < 1)
		return;
	fill(r.y, r.x, r.w, focused ? a : A_DIM, ' ');
	struct agent *ag = wp->agent;
	char *icon = status_prefix(ui, ag, now_ms());
	/* The agent's own title (set-title) on its agent pane; the program's elsewhere. */
	const char *title = ag->title && session_agent_pane(ui->w->s, ag) == wp
				    ? ag->title
				    : pane_title(wp->term);
	/* The pane's number is its WORKREX_PANE: the same for its whole life. */
	char *left = xasprintf(" %d %s%s:%s%s%s", wp->id, icon, ag->handle, wp->label,
			       *title ? " — " : "", title);
	/* What must show however narrow: its number, status and agent. */
	char *core = xasprintf(" %d %s%s", wp->id, icon, ag->handle);
	free(icon);
	/* The markers on the right, each with its weight: the lightest go first when narrow. */
	struct {
		char text[48];
		int weight;
	} mark[7];
	int nmark = 0, status;
#define MARK(wt, ...)                                                                              \
	do {                                                                                       \
		snprintf(mark[nmark].text, sizeof mark[nmark].text, __VA_ARGS__);                  \
		mark[nmark++].weight = (wt);                                                       \
	} while (0)
	if (wp->bell)
		MARK(3, " [bell]");
	if (ag->status != WRX_STATUS_NONE && session_agent_pane(ui->w->s, ag) == wp) {
		char age[16];
		clock_age(ag, age, sizeof age);
		/* The icon says the status; the marker its age (and what no icon says). */
		if (session_interrupted(ui->w->s, ag, now_ms()))
			MARK(4, " [interrupted %s]", age);
		else
			MARK(1, " [%s]", age);
	}
	if (session_zoomed(ui->w->s) && focused)
		MARK(2, " [zoom]");
	/* Its ports (config ports), where its dev server is opened: 127.0.0.1:PORT. */
	if (ag->git.ports && session_agent_pane(ui->w->s, ag) == wp)
		MARK(2, " [:%.40s]", ag->git.ports);
	if (v->copy)
		MARK(4, " [scroll %d/%zu]", v->top, pane_history(wp->term));
	if (runner_pane_link(wp)) {
		MARK(5, " [%s]", wp->agent->remote.host ? wp->agent->remote.host : "link");
	} else if (pane_exited(wp->term, &status)) {
		if (status == PANE_LOST)
			MARK(5, " [keeper gone]");
		else if (WIFEXITED(status))
			MARK(5, " [exited %d]", WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			MARK(5, " [killed by signal %d]", WTERMSIG(status));
	}
#undef MARK
	int room = r.w - ui_text_width(core) - 1, rw;
	for (;;) {
		rw = 1;
		for (int i = 0; i < nmark; i++)
			rw += mark[i].weight ? (int)strlen(mark[i].text) : 0; /* ASCII only */
		int lightest = -1;
		for (int i = 0; i < nmark; i++)
			if (mark[i].weight &&
			    (lightest < 0 || mark[i].weight < mark[lightest].weight))
				lightest = i;
		if (rw <= room || lightest < 0)
			break;
		mark[lightest].weight = 0; /* dropped: the agent's name shows instead */
	}
	struct buf right = {0};
	for (int i = 0; i < nmark; i++)
		if (mark[i].weight)
			buf_addstr(&right, mark[i].text);
	buf_addch(&right, ' ');
	rw = (int)right.len;
	put_text(r.y, r.x, WRX_MAX(r.w - rw, 0), left, focused ? a : A_DIM);
	if (rw <= r.w)
		put_text(r.y, r.x + r.w - rw, rw, right.data, focused ? a : A_DIM);
	free(left);
	free(core);
	buf_free(&right);
}

/*
 * Cells curses cannot draw as they are: strike-through, the underline
 * styles and colour, overline, more combining marks than a cchar_t holds. curses draws each with the nearest it has;
 * then, after its frame, the rows holding such cells are written again with
 * the terminal's own sequences (terminfo_extras), the cursor put back where
 * curses left it. A row drawn so last time is written again once more when
 * it changes, so that nothing of the old attributes stays on the terminal.
 */
struct extra_row {
	int y, x, n;
	struct wrx_cell *cells; /* owned */
	uint8_t *hl;            /* owned */
};
static struct extra_row *extra_rows;
static size_t nextra_rows, extra_cap;

static bool cell_needs_extra(const struct ui *ui, const struct wrx_cell *c)
{
	const struct terminfo_extras *x = &ui->tty.extras;
	return (CCHARW_MAX < WRX_CELL_CHARS && c->ch[CCHARW_MAX] != 0) ||
	       ((c->attrs & WRX_ATTR_STRIKE) && x->strike) ||
	       ((c->attrs & WRX_ATTR_UNDERLINES & ~WRX_ATTR_UNDERLINE) && x->underline_style) ||
	       ((c->attrs & WRX_ATTR_OVERLINE) && x->overline) ||
	       (c->ul != WRX_COLOUR_DEFAULT && (c->attrs & WRX_ATTR_UNDERLINES) &&
		x->underline_colour);
}

static void extra_add(int y, int x, int n, const struct wrx_cell *cells, const uint8_t *hl)
{
	if (nextra_rows == extra_cap) {
		extra_cap = WRX_MAX(extra_cap * 2, 16);
		extra_rows = xrealloc(extra_rows, extra_cap * sizeof *extra_rows);
	}
	struct extra_row *e = &extra_rows[nextra_rows++];
	*e = (struct extra_row){y, x, n, xmalloc((size_t)n * sizeof *cells), xmalloc((size_t)n)};
	memcpy(e->cells, cells, (size_t)n * sizeof *cells);
	memcpy(e->hl, hl, (size_t)n);
}

/* ";38;5;n"-style parameters for a colour as curses would send it here. */
static void sgr_colour_for(const struct ui *ui, struct buf *b, uint32_t c, int base)
{
	int v;
	bool rgb;
	if (ui->tty.colour_kind == TERMINFO_DIRECT256 ||
	    ui->tty.colour_kind == TERMINFO_DIRECT256_SHIFTED) {
		v = colour_for_direct256(c, false);
		rgb = v >= 256;
	} else {
		v = colour_for_terminal(c, ui->tty.ncolours);
		rgb = ui->tty.ncolours >= (1 << 24) && v >= 8;
	}
	if (v < 0 || ui->tty.ncolours == 0)
		return;
	if (rgb)
		buf_addf(b, ";%d;2;%d;%d;%d", base + 8, (v >> 16) & 0xff, (v >> 8) & 0xff,
			 v & 0xff);
	else if (v < 8)
		buf_addf(b, ";%d", base + v);
	else if (v < 16 && ui->tty.ncolours <= 16)
		buf_addf(b, ";%d", base + 60 + v - 8);
	else
		buf_addf(b, ";%d;5;%d", base + 8, v);
}

static void extra_cell(const struct ui *ui, struct buf *b, const struct wrx_cell *c, bool hl)
{
	const struct terminfo_extras *x = &ui->tty.extras;
	static const struct {
		uint16_t bit;
		int code;
	} plain[] = {{WRX_ATTR_BOLD, 1},
		     {WRX_ATTR_DIM, 2},
		     {WRX_ATTR_ITALIC, 3},
		     {WRX_ATTR_BLINK, 5},
		     {WRX_ATTR_CONCEAL, 8}};
	buf_addstr(b, "\033[0");
	for (size_t k = 0; k < WRX_ARRAY_LEN(plain); k++)
		if (c->attrs & plain[k].bit)
			buf_addf(b, ";%d", plain[k].code);
	if (!!(c->attrs & WRX_ATTR_REVERSE) != hl)
		buf_addstr(b, ";7");
	sgr_colour_for(ui, b, c->fg, 30);
	sgr_colour_for(ui, b, c->bg, 40);
	buf_addch(b, 'm');
	static const struct {
		uint16_t bit;
		int style;
	} styles[] = {{WRX_ATTR_UNDERLINE, 1},
		      {WRX_ATTR_DUNDERLINE, 2},
		      {WRX_ATTR_CURLY, 3},
		      {WRX_ATTR_DOTTED, 4},
		      {WRX_ATTR_DASHED, 5}};
	for (size_t k = 0; k < WRX_ARRAY_LEN(styles); k++) {
		if (!(c->attrs & styles[k].bit))
			continue;
		if (x->underline_style)
			buf_addstr(b, tiparm(x->underline_style, styles[k].style));
		else
			buf_addstr(b, "\033[4m");
	}
	if ((c->attrs & WRX_ATTR_UNDERLINES) && c->ul != WRX_COLOUR_DEFAULT &&
	    x->underline_colour) {
		if (WRX_COLOUR_KIND(c->ul) == WRX_COLOUR_INDEXED)
			buf_addf(b, "\033[58:5:%um", c->ul & 0xff);
		else
			buf_addf(b, "\033[58:2::%u:%u:%um", (c->ul >> 16) & 0xff,
				 (c->ul >> 8) & 0xff, c->ul & 0xff);
	}
	if ((c->attrs & WRX_ATTR_OVERLINE) && x->overline)
		buf_addstr(b, x->overline);
	if ((c->attrs & WRX_ATTR_STRIKE) && x->strike)
		buf_addstr(b, x->strike);
	if (c->ch[0] == 0 || width_of(c->ch[0]) != (c->width ? c->width : 1)) {
		buf_addch(b, c->ch[0] == 0 ? ' ' : '?');
		return;
	}
	for (int k = 0; k < WRX_CELL_CHARS && c->ch[k]; k++) {
		char u[4];
		buf_add(b, u, (size_t)utf8_encode(c->ch[k], u));
	}
}

/* After curses' frame: the rows of extra_add, then the cursor back where it was. */
static void extra_draw(struct ui *ui)
{
	bool covered = ui_mode_top(ui) != NULL;
	for (size_t i = 0; i < nextra_rows; i++) {
		struct extra_row *e = &extra_rows[i];
		/* Written after curses' frame: never over a question's rows. */
		if (!covered && e->y < ui->status.prompt_top) {
			buf_addf(&ui->tty.raw, "\033[%d;%dH", e->y + 1, e->x + 1);
			for (int k = 0; k < e->n; k++)
				if (e->cells[k].width != 0 || k == 0)
					extra_cell(ui, &ui->tty.raw, &e->cells[k], e->hl[k]);
		}
		free(e->cells);
		free(e->hl);
	}
	if (nextra_rows && !covered)
		buf_addf(&ui->tty.raw, "\033[0m\033[%d;%dH", getcury(curscr) + 1,
			 getcurx(curscr) + 1);
	nextra_rows = 0;
}

static void draw_pane(struct ui *ui, struct wpane *wp, bool full)
{
	struct view *v = wp->view;
	struct rect r = v->r;
	struct pane *p = wp->term;
	int rows = WRX_MIN(pane_rows(p), r.h - 1), cols = WRX_MIN(pane_cols(p), r.w);
	bool scrolled = v->copy && (v->top > 0 || v->sel || v->mlen);
	if (v->copy)
		copy_sync(wp);
	static struct wrx_cell *line;
	static int line_cap;
	if (cols > line_cap) {
		line_cap = cols;
		line = xrealloc(line, (size_t)line_cap * sizeof *line);
	}
	static uint8_t *hl;
	static int hl_cap;
	if (cols > hl_cap) {
		hl_cap = cols;
		hl = xrealloc(hl, (size_t)hl_cap);
	}
	if (v->ndrawn_extra != rows) {
		v->drawn_extra = xrealloc(v->drawn_extra, (size_t)WRX_MAX(rows, 1));
		memset(v->drawn_extra, 1, (size_t)WRX_MAX(rows, 1)); /* not known: as if drawn */
		v->ndrawn_extra = rows;
	}
	for (int y = 0; y < rows; y++) {
		if (!full && !scrolled && !pane_row_dirty(p, y))
			continue;
		int abs = scrolled ? y - v->top : y;
		if (pane_line(p, abs, line, cols) < 0)
			continue;
		bool extra = false;
		for (int x = 0; x < cols; x++) {
			if (line[x].width == 0 && x > 0)
				continue;
			hl[x] = v->copy && copy_highlight(v, abs, x);
			put_cell(ui, r.y + 1 + y, r.x + x, r.x + cols, &line[x], hl[x]);
			extra |= cell_needs_extra(ui, &line[x]);
		}
		if (extra || v->drawn_extra[y])
			extra_add(r.y + 1 + y, r.x, cols, line, hl);
		v->drawn_extra[y] = extra;
	}
	/* Clear whatever the pane does not cover (it lags a resize by a frame). */
	if (full) {
		for (int y = 1; y < r.h; y++) {
			int from = y - 1 < rows ? cols : 0;
			if (from < r.w)
				fill(r.y + y, r.x + from, r.w - from, A_NORMAL, ' ');
		}
	}
	pane_clean(p);
}

/*
 * A pane on a server that is not attached there: a bar over its last row
 * says so (its screen is the last one it had), until its link is back and
 * the keeper there sends the whole screen again (a relayout: all redrawn).
 */
static void draw_link(struct wpane *wp)
{
	struct rect r = ((struct view *)wp->view)->r;
	if (runner_pane_link(wp) == NULL || r.h < 3 || r.w < 8)
		return;
	char *bar = xasprintf(" %s%s ", runner_pane_link(wp),
			      pane_exited(wp->term, NULL) ? "" : "; the program goes on there");
	fill(r.y + r.h - 1, r.x, r.w, A_REVERSE | A_BOLD, ' ');
	put_text(r.y + r.h - 1, r.x, r.w, bar, A_REVERSE | A_BOLD);
	free(bar);
}

/* The line under an agent's row: its title, how it failed, or its last notice. */
static const char *agent_note(const struct agent *a)
{
	if (a->git.missing)
		return "worktree gone (rm)";
	if (a->git.queued)
		return "queued for a slot"; /* (the sidebar is narrow) */
	return a->title ? a->title : a->failure ? a->failure : a->note;
}

/* The sidebar rows of agent a: its own, its title's and its panes'; `full`, or only its own. */
static int sidebar_height(struct session *s, const struct agent *a, bool full)
{
	if (!full)
		return 1;
	return 1 + (agent_note(a) != NULL) + session_agent_panes(s, a);
}

/* Agent ag's rows from y on, at most to h; returns the next row. */
static int sidebar_agent(struct ui *ui, struct agent *ag, bool full, int y, int h, uint64_t now)
{
	struct session *s = ui->w->s;
	int w = ui_sidebar_width(ui);
	char *icon = status_prefix(ui, ag, now);
	char age[16];
	clock_age(ag, age, sizeof age);
	/* ▣: runs in a sandbox; ⊘N: its proxy refused N connections. */
	char refused[24] = "";
	if (ag->box.egress_refused)
		snprintf(refused, sizeof refused, " \u2298%d", ag->box.egress_refused);
	/* @host: it runs on that server. */
	char *where = ag->remote.host ? xasprintf(" @%s%s", ag->remote.host,
						  ag->remote.unreachable ? " unreachable" : "")
				      : xstrdup("");
	/* ✎N: review comments wait for it. */
	char comments[64] = "";
	int cl = 0;
	if (ag->comments)
		cl = snprintf(comments, sizeof comments, " \u270e%d", ag->comments);
	/* #N and its checks (✓ ✗ ◌): its pull request (prs.c); merged or closed in words. */
	bool open = strcmp(ag->pr.state, "OPEN") == 0;
	if (ag->pr.number)
		snprintf(comments + cl, sizeof comments - (size_t)cl, " #%d%s%s", ag->pr.number,
			 !strcmp(ag->pr.state, "MERGED")   ? " merged"
			 : !strcmp(ag->pr.state, "CLOSED") ? " closed"
							   : "",
			 open && strcmp(ag->pr.checks, "-") ? ag->pr.checks : "");
	/* What its session used: $0.42, or 123k tok. */
	char used[32] = "";
	if (ag->has_usage) {
		used[0] = ' ';
		rpc_usage_short(&ag->usage, used + 1, sizeof used - 1);
	}
	char *row =
		xasprintf(" %d %s%s%s%s%s%s%s%s%s%s", ag->num, icon, ag->handle, where,
			  sandbox_wanted(ui->w, ag) || sandbox_there(ui->w, ag) ? " \u25a3" : "",
			  refused, comments, *age ? " " : "", age, used, ag->bell ? " !" : "");
	free(where);
	free(icon);
	struct wpane *focus = session_focus(s);
	attr_t at = ag->attention ? (A_BOLD | A_REVERSE) : A_BOLD;
	/* Folded to one row, the focused agent's row is the one marked. */
	if (!full && focus && focus->agent == ag)
		at |= A_REVERSE;
	ui->sidebar_rows[y] = session_agent_pane(s, ag);
	if (at & A_REVERSE)
		fill(y, 0, w, at, ' ');
	put_text(y++, 0, w, row, at);
	free(row);
	if (!full)
		return y;
	const char *note = agent_note(ag);
	if (note && y < h) {
		/* The agent's own words are marked as its: no row of theirs passes for another. */
		bool own = !ag->git.missing && !ag->git.queued &&
			   (ag->title || (!ag->failure && ag->note));
		char *trow = xasprintf(own ? "   \u00bb %s" : "   %s", note);
		ui->sidebar_rows[y] = session_agent_pane(s, ag);
		put_text(y++, 0, w, trow, A_DIM);
		free(trow);
	}
	for (int i = 0; i < session_pane_count(s) && y < h; i++) {
		struct wpane *wp = session_pane(s, i);
		if (wp->agent != ag)
			continue;
		const char *t = pane_title(wp->term);
		char *prow = xasprintf("   %d %s%s%s%s", wp->id, wp->label, *t ? " " : "", t,
				       pane_exited(wp->term, NULL) ? " (exited)" : "");
		ui->sidebar_rows[y] = wp;
		attr_t pat = wp == focus ? A_REVERSE : A_NORMAL;
		if (pat)
			fill(y, 0, w, pat, ' ');
		put_text(y++, 0, w, prow, pat);
		free(prow);
	}
	return y;
}

/*
 * Every agent with its title and panes, while they fit. When they do not,
 * one row an agent (the focused one keeps its panes), and when even that
 * does not fit, a window of them that holds the focused agent, scrolled no
 * more than it must be, and a last line saying how many more there are.
 */
/* Does order[k] begin a run of one group's agents (a heading above it when all fit)? */
static bool group_starts(struct session *s, const int *order, int k)
{
	const struct agent *a = session_agent(s, order[k]);
	if (a->git.group == NULL)
		return false;
	const struct agent *b = k > 0 ? session_agent(s, order[k - 1]) : NULL;
	return b == NULL || b->git.group == NULL || strcmp(a->git.group, b->git.group) != 0;
}

/* The heading of a group's run: its name and how many it has. */
static void group_heading(struct ui *ui, const struct agent *a, int y)
{
	int members = 0;
	for (int i = 0; i < session_agent_count(ui->w->s); i++) {
		const struct agent *o = session_agent(ui->w->s, i);
		members += o->git.group && !strcmp(o->git.group, a->git.group);
	}
	char *head = xasprintf(" \u2500 %s (%d)", a->git.group, members);
	put_text(y, 0, ui_sidebar_width(ui), head, A_DIM);
	free(head);
}

static void draw_sidebar(struct ui *ui, int h)
{
	int w = ui_sidebar_width(ui);
	struct session *s = ui->w->s;
	if (h != ui->nsidebar_rows) {
		free(ui->sidebar_rows);
		ui->sidebar_rows = xcalloc((size_t)WRX_MAX(h, 1), sizeof *ui->sidebar_rows);
		ui->nsidebar_rows = h;
	} else {
		memset(ui->sidebar_rows, 0, (size_t)h * sizeof *ui->sidebar_rows);
	}
	for (int y = 0; y < h; y++)
		fill(y, 0, w, A_NORMAL, ' ');
	int n = session_agent_count(s);
	int *order = xcalloc((size_t)WRX_MAX(n, 1), sizeof *order);
	ui_agent_order(ui, order);
	struct wpane *focus = session_focus(s);
	int fk = 0, total = 0, room = h - 1;
	for (int k = 0; k < n; k++) {
		struct agent *ag = session_agent(s, order[k]);
		total += sidebar_height(s, ag, true) + group_starts(s, order, k);
		if (focus && focus->agent == ag)
			fk = k;
	}
	bool full = total <= room;
	/* Folded: the rows of agents from top on, the last line kept for the count. */
	int top = WRX_MIN(ui->sidebar_top, WRX_MAX(n - 1, 0)), last = n;
	if (!full) {
		int fold = 0;
		for (int k = 0; k < n; k++)
			fold += sidebar_height(s, session_agent(s, order[k]), k == fk);
		if (fold > room) {
			room--;
			if (fk < top)
				top = fk;
			for (;;) {
				int used = 0;
				for (last = top; last < n; last++) {
					int need = sidebar_height(s, session_agent(s, order[last]),
								  last == fk);
					if (used + need > room)
						break;
					used += need;
				}
				if (fk < last || top >= fk)
					break;
				top++;
			}
		} else {
			top = 0;
		}
	} else {
		top = 0;
	}
	ui->sidebar_top = top;
	uint64_t now = now_ms();
	int y = 0;
	if (y < h) {
		char *head =
			top > 0 ? xasprintf(" workrex  \u2191%d more", top) : xstrdup(" workrex");
		put_text(y++, 0, w, head, A_BOLD);
		free(head);
	}
	for (int k = top; k < last && y < h; k++) {
		/* All of them fit: a group's agents under its heading. */
		if (full && group_starts(s, order, k) && y < h - 1)
			group_heading(ui, session_agent(s, order[k]), y++);
		y = sidebar_agent(ui, session_agent(s, order[k]), full || k == fk, y, h, now);
	}
	if (last < n && h > 1) {
		char name[32];
		keys_name(ui->w->cfg.prefix, name, sizeof name);
		char *more = xasprintf(" \u2193%d more (%s ')", n - last, name);
		put_text(h - 1, 0, w, more, A_DIM);
		free(more);
	}
	free(order);
	attr_set(A_DIM, 0, NULL);
	mvvline_set(0, w, WACS_VLINE, h);
	attr_set(A_NORMAL, 0, NULL);
}

/* Columns the UTF-8 text s takes. */
int ui_text_width(const char *s)
{
	int n = 0;
	mbstate_t st;
	memset(&st, 0, sizeof st);
	while (*s) {
		wchar_t wc;
		size_t k = mbrtowc(&wc, s, strlen(s), &st);
		if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
			memset(&st, 0, sizeof st);
			k = 1;
			wc = L'?';
		}
		n += WRX_MAX(width_of((uint32_t)wc), 1);
		s += k;
	}
	return n;
}

/*
 * A question longer than the status line (a refusal and what to do about
 * it, the project config to trust) in lines of at most w columns, broken
 * between words and at each newline, drawn above the status line: a yes
 * must never be to text the user could not see. Returns the rows used,
 * bottom up from y.
 */
static int draw_wrapped(struct ui *ui, int y, const char *text, int w, int attr)
{
	struct strlist lines = {0};
	struct buf line = {0};
	const char *p = text;
	bool started = false; /* the line has begun (its first word may be an indent's "") */
	while (*p) {
		size_t n = strcspn(p, " \n");
		char *word = xstrndup(p, n);
		int lw = line.len ? ui_text_width(line.data) : 0;
		if (line.len && lw + 1 + ui_text_width(word) > w) {
			strlist_add(&lines, line.data);
			buf_consume(&line, line.len);
			started = false;
		}
		if (started)
			buf_addch(&line, ' ');
		buf_addstr(&line, word);
		started = true;
		free(word);
		if (p[n] == '\n') {
			strlist_add(&lines, line.data ? line.data : "");
			buf_consume(&line, line.len);
			started = false;
		}
		p += n + (p[n] != '\0');
	}
	if (line.len)
		strlist_add(&lines, line.data);
	buf_free(&line);
	/* What does not fit is its start: the end holds the question. */
	int k = WRX_MIN((int)lines.n, y);
	for (int i = 0; i < k; i++) {
		int row = y - k + i;
		fill(row, 0, ui->cols, attr, ' ');
		put_text(row, 0, w, lines.v[lines.n - (size_t)k + (size_t)i], attr);
	}
	strlist_free(&lines);
	return k;
}

static void draw_status(struct ui *ui)
{
	int y = ui->rows - 1;
	fill(y, 0, ui->cols, A_NORMAL, ' ');
	char right[64], name[32];
	snprintf(right, sizeof right, "%s[%s] %s ? help ", ui->prefix_armed ? "PREFIX " : "",
		 layout_name(session_layout(ui->w->s)),
		 keys_name(ui->w->cfg.prefix, name, sizeof name));
	int rw = (int)strlen(right);
	int leftw = ui->cols - rw - 1;
	if (leftw < 0) {
		leftw = ui->cols;
		rw = 0;
	}
	int k = 0;
	if (ui->prompt) {
		const char *label = ui->prompt->label;
		if ((strchr(label, '\n') || ui_text_width(label) + 12 > leftw) && ui->cols > 2 &&
		    (k = draw_wrapped(ui, y, label, ui->cols - 1, A_REVERSE | A_BOLD)) > 0)
			label = ui->prompt->yesno ? "y/n:" : ">";
		int used = put_text(y, 0, leftw, label, A_BOLD);
		if (used < leftw)
			used += put_text(y, used, leftw - used, " ", A_NORMAL);
		const char *in = ui->prompt->input.data ? ui->prompt->input.data : "";
		/* Show the end of a long input. */
		size_t len = strlen(in);
		while (len > (size_t)WRX_MAX(leftw - used, 0) && *in) {
			in++;
			len--;
		}
		used += put_text(y, used, leftw - used, in, A_NORMAL);
		move(y, WRX_MIN(used, ui->cols - 1));
	} else if (ui->status.message && ui->status.error &&
		   ui_text_width(ui->status.message) > leftw && ui->cols > 2) {
		/* An error is read whole: it says why, and what to do next. */
		k = draw_wrapped(ui, y, ui->status.message, ui->cols - 1, A_REVERSE | A_BOLD);
	} else if (ui->asked && !(ui->status.message && ui->status.error)) {
		int n = 0;
		for (struct asked *q = ui->asked; q; q = q->next)
			n++;
		char key[32];
		keys_name(ui->w->cfg.prefix, key, sizeof key);
		/* Its first line: the rest is shown once it is opened. */
		int first = (int)strcspn(ui->asked->question, "\n");
		char *notice = n > 1 ? xasprintf("%d questions wait: %s a to answer - %.*s", n, key,
						 first, ui->asked->question)
				     : xasprintf("a question waits: %s a to answer - %.*s", key,
						 first, ui->asked->question);
		put_text(y, 0, leftw, notice, A_REVERSE);
		free(notice);
	} else if (ui->status.message && ui_text_width(ui->status.message) > leftw && leftw > 12) {
		/*
		 * An outcome longer than the line keeps the panes' rows: cut, it says
		 * where it is whole (C-b ~, as tmux's show-messages; the log too).
		 */
		char key[32];
		keys_name(ui->w->cfg.prefix, key, sizeof key);
		char *more = xasprintf("… (%s ~)", key);
		int mw = ui_text_width(more);
		int used = put_text(y, 0, leftw - mw, ui->status.message, A_NORMAL);
		put_text(y, used, mw, more, A_DIM);
		free(more);
	} else if (ui->status.message) {
		put_text(y, 0, leftw, ui->status.message, ui->status.error ? A_BOLD : A_NORMAL);
	}
	/* Rows over the panes: none of their raw writes there (ui_status_gone gives them back). */
	ui->status.prompt_top = y - k;
	ui->status.rows = k;
	if (rw > 0)
		put_text(y, ui->cols - rw, rw, right, ui->prefix_armed ? A_REVERSE : A_DIM);
}

/*
 * The bindings over the panes. Taller than the screen, it scrolls (j, k,
 * arrows, PgUp, PgDn; the drawing clamps its top) and says so.
 */
struct help {
	int top;  /* the first line it shows */
	int page; /* 0: the prefix bindings; 1 + a view: that view's keys (Tab) */
};

static const struct mode_ops help_mode;

void help_open(struct ui *ui)
{
	ui_mode_open(ui, &help_mode, xcalloc(1, sizeof(struct help)));
}

static void help_free(struct ui *ui, void *data)
{
	(void)ui;
	free(data);
}

static void help_key(struct ui *ui, void *data, int key)
{
	struct help *h = data;
	enum view_op op = view_key(VIEW_HELP, key);
	int step = op == V_DOWN        ? 1
		   : op == V_UP        ? -1
		   : op == V_PAGE_DOWN ? 10
		   : op == V_PAGE_UP   ? -10
				       : 0;
	if (op == V_NEXT_MODE) { /* the next page: every view's keys, then the bindings again */
		h->page = (h->page + 1) % (VIEW_HELP + 1);
		h->top = 0;
	} else if (step == 0) {
		ui_mode_close(ui, &help_mode);
		return;
	}
	h->top = WRX_MAX(h->top + step, 0);
	ui->frame.full_redraw = true;
	ui_dirty(ui);
}

/* The lines of page p: the prefix bindings, or a view's keys. */
static void help_lines(const struct help *hp, struct strlist *out)
{
	if (hp->page > 0) {
		struct buf b = {0};
		view_help((enum view_id)(hp->page - 1), &b);
		for (char *line = strtok(b.data, "\n"); line; line = strtok(NULL, "\n")) {
			char *l = xasprintf("  %s", line);
			strlist_add(out, l);
			free(l);
		}
		buf_free(&b);
		return;
	}
	size_t n;
	const struct binding *b = bindings_all(&n);
	for (size_t i = 0; i < n; i++) {
		char name[32];
		char *line;
		keys_name(b[i].key, name, sizeof name);
		if (b[i].action == ACT_FOCUS_AGENT)
			line = xasprintf("  %-8s focus agent %d (again: its next pane)", name,
					 b[i].arg);
		else
			line = xasprintf("  %-8s %s", name, action_help(b[i].action));
		strlist_add(out, line);
		free(line);
	}
}

static void draw_help(struct ui *ui, void *data)
{
	struct help *hp = data;
	struct strlist lines = {0};
	help_lines(hp, &lines);
	int n = (int)lines.n;
	int w = WRX_MIN(ui->cols, 90), h = WRX_MIN(ui->rows, n + 3);
	int x0 = (ui->cols - w) / 2, y0 = (ui->rows - h) / 2;
	int room = WRX_MAX(h - 3, 0);
	bool scrolls = n > room;
	hp->top = WRX_MAX(WRX_MIN(hp->top, n - room), 0);
	for (int y = 0; y < h; y++)
		fill(y0 + y, x0, w, A_REVERSE, ' ');
	char prefix[32];
	const char *how = scrolls ? "j/k scroll, any other key closes"
				  : "Tab: the views, any other key closes";
	char *head = hp->page ? xasprintf(" keys of %s (%s)", view_name(hp->page - 1), how)
			      : xasprintf(" keys after the prefix %s (%s)",
					  keys_name(ui->w->cfg.prefix, prefix, sizeof prefix), how);
	put_text(y0, x0, w, head, A_REVERSE | A_BOLD);
	free(head);
	for (int i = 0; i < room && hp->top + i < n; i++)
		put_text(y0 + 1 + i, x0, w, lines.v[hp->top + i], A_REVERSE);
	char *foot = scrolls ? xasprintf("  %d-%d of %d   Tab: the views' keys", hp->top + 1,
					 WRX_MIN(hp->top + room, n), n)
			     : xstrdup("  Tab: the views' keys");
	put_text(y0 + h - 1, x0, w, foot, A_REVERSE | A_DIM);
	free(foot);
	strlist_free(&lines);
}

static const struct mode_ops help_mode = {
	.name = "help",
	.draw = draw_help,
	.key = help_key,
	.free = help_free,
	.over_status = true,
};

/*
 * The window layout: the focused agent's panes as its layout's (add -l)
 * or panes:'s split and size say, pane k of the agent the list's k-th;
 * the rest not shown. The focused pane not fitting: it alone, as full.
 */
static int agent_window(struct ui *ui, struct wpane *f, struct rect *r)
{
	struct session *s = ui->w->s;
	const struct config *c = &ui->w->cfg;
	const struct layout_def *lay =
		f->agent->git.layout ? config_layout(c, f->agent->git.layout) : NULL;
	const struct pane_def *defs = lay ? lay->panes : c->panes;
	size_t ndefs = lay ? lay->npanes : c->npanes;
	int n = session_pane_count(s), k = 0, fk = 0;
	int *which = xcalloc((size_t)n, sizeof *which), *size = xcalloc((size_t)n, sizeof *size);
	bool *vertical = xcalloc((size_t)n, sizeof *vertical);
	for (int i = 0; i < n; i++) {
		struct wpane *wp = session_pane(s, i);
		if (wp->agent != f->agent)
			continue;
		if (wp == f)
			fk = k;
		if ((size_t)k < ndefs && f->agent->git.worktree) {
			vertical[k] = defs[k].vertical;
			size[k] = defs[k].percentage;
		}
		which[k++] = i;
	}
	struct rect *wr = xcalloc((size_t)k, sizeof *wr);
	int shown = layout_window(k, vertical, size, ui->area, wr);
	if (wr[fk].w > 0) {
		memset(r, 0, (size_t)n * sizeof *r);
		for (int j = 0; j < k; j++)
			r[which[j]] = wr[j];
		ui->note = (struct rect){0};
	} else {
		shown = 1; /* as full: r has the focused pane alone */
	}
	free(wr);
	free(which);
	free(size);
	free(vertical);
	return shown;
}

void render_layout(struct ui *ui)
{
	struct session *s = ui->w->s;
	if (stdscr == NULL)
		return; /* no terminal yet: the first frame lays out */
	getmaxyx(stdscr, ui->rows, ui->cols);
	int sw =
		ui->sidebar && ui->cols >= ui_sidebar_width(ui) + 20 ? ui_sidebar_width(ui) + 1 : 0;
	ui->area = (struct rect){sw, 0, ui->cols - sw, ui->rows - 1};
	int n = session_pane_count(s);
	struct rect *r = xcalloc((size_t)WRX_MAX(n, 1), sizeof *r);
	/*
	 * When not all fit: the focused agent's other panes first, then each
	 * agent's own pane (its CLI), then the rest (their shells): a dozen
	 * agents' shells are not what the stack is for.
	 */
	int *rank = xcalloc((size_t)WRX_MAX(n, 1), sizeof *rank);
	struct wpane *f = session_focus(s);
	for (int i = 0; i < n; i++) {
		struct wpane *wp = session_pane(s, i);
		rank[i] = f && wp->agent == f->agent               ? 0
			  : session_agent_pane(s, wp->agent) == wp ? 1
								   : 2;
	}
	ui->hidden = n - layout_compute(session_layout(s), session_zoomed(s), n,
					session_pane_index(s, f), rank, ui->area, r, &ui->note);
	free(rank);
	if (session_layout(s) == WRX_LAYOUT_WINDOW && !session_zoomed(s) && f)
		ui->hidden = n - agent_window(ui, f, r);
	ui->laid_focus = session_focus(s);
	for (int i = 0; i < n; i++) {
		struct wpane *wp = session_pane(s, i);
		struct view *v = ui_view(wp);
		v->r = r[i];
		/* Hidden panes keep their size, like tmux windows not shown. */
		if (r[i].w >= 1 && r[i].h >= 2)
			pane_resize(wp->term, r[i].h - 1, r[i].w);
		wp->drawn = r[i].w >= 1 && r[i].h >= 1;
		session_pane_view(wp);
	}
	free(r);
	ui->frame.layout_dirty = false;
	ui->frame.full_redraw = true;
}

static void place_cursor(struct ui *ui)
{
	if (ui->prompt) {
		curs_set(1);
		return;
	}
	struct wpane *f = session_focus(ui->w->s);
	if (f == NULL || ui_mode_top(ui)) {
		curs_set(0);
		return;
	}
	struct view *v = f->view;
	int row, col, shape;
	bool visible;
	pane_cursor(f->term, &row, &col, &visible, &shape);
	if (v->copy) {
		row = v->cy + v->top;
		col = v->cx;
		visible = true;
		shape = WRX_CURSOR_BLOCK;
	}
	if (!visible || v->r.w == 0 || row < 0 || row >= v->r.h - 1 || col >= v->r.w) {
		curs_set(0);
		return;
	}
	move(v->r.y + 1 + row, v->r.x + col);
	curs_set(1);
	if (shape != ui->tty.cursor_shape_sent) {
		static const int decscusr[] = {0, 2, 4, 6};
		const char *seq =
			terminfo_cursor_style(decscusr[shape >= 1 && shape <= 3 ? shape : 1]);
		if (seq)
			buf_addstr(&ui->tty.raw, seq);
		ui->tty.cursor_shape_sent = shape;
	}
}

void render_frame(struct ui *ui)
{
	struct session *s = ui->w->s;
	/* Whatever moved the focus (a key, a click, a new agent), the layout shows it. */
	if (ui->frame.layout_dirty || ui->laid_focus != session_focus(s))
		render_layout(ui);
	bool full = ui->frame.full_redraw;
	ui->frame.full_redraw = false;
	if (full)
		erase();
	int n = session_pane_count(s);
	for (int i = 0; i < n; i++) {
		struct wpane *wp = session_pane(s, i);
		struct view *v = ui_view(wp);
		if (v->r.w < 1 || v->r.h < 1)
			continue;
		draw_title(ui, wp);
		draw_pane(ui, wp, full);
		draw_link(wp);
		if (v->r.x + v->r.w < ui->area.x + ui->area.w) {
			attr_set(A_DIM, 0, NULL);
			mvvline_set(v->r.y, v->r.x + v->r.w, WACS_VLINE, v->r.h);
			attr_set(A_NORMAL, 0, NULL);
		}
	}
	if (ui->note.h > 0) {
		char name[32];
		keys_name(ui->w->cfg.prefix, name, sizeof name);
		char *line = xasprintf(" +%d more (%s ')", ui->hidden, name);
		fill(ui->note.y, ui->note.x, ui->note.w, A_DIM, ' ');
		put_text(ui->note.y, ui->note.x, ui->note.w, line, A_DIM);
		free(line);
	}
	if (n == 0 && ui->area.w > 0 && ui->area.h > 0) {
		for (int y = 0; y < ui->area.h; y++)
			fill(y, ui->area.x, ui->area.w, A_NORMAL, ' ');
		put_text(ui->area.y + ui->area.h / 2, ui->area.x + 2, ui->area.w - 2,
			 "no panes: C-b c opens a shell, C-b q quits", A_DIM);
	}
	if (ui->area.x > 0)
		draw_sidebar(ui, ui->rows - 1);
	ui_modes_draw(ui, false); /* the one opened last on top: the review's ? over it */
	/* Over the views: a long error's rows above the status line are read there too. */
	if (ui->rows > 0)
		draw_status(ui);
	ui_modes_draw(ui, true);
	place_cursor(ui);
	wnoutrefresh(stdscr);
	doupdate();
	extra_draw(ui);
	ui_flush_terminal(ui);
	if (pairs_reset_wanted) {
		pairs_reset_wanted = false;
		reset_colours();
		ui->frame.full_redraw = true;
		ui_dirty(ui);
	}
}
