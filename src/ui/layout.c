/*
 * layout.c - tile (the focused pane as the main one, the rest stacked
 * beside it), grid and full layouts, and the geometry behind directional
 * focus; and window, one agent's panes as a tmux window's, each split
 * off the one before.
 *
 * No pane shown is ever squeezed below LAYOUT_MIN_ROWS rows under its
 * title bar: panes that do not fit are not shown at all (w = h = 0), and a
 * line says how many (the note). Squeezing was the alternative, and a pane
 * one row high is useless to read and to type into. The focused pane is
 * always shown, and in tile it is the main pane, so keys never go to a
 * pane the screen does not show. The others keep their display order.
 *
 * Sizes are split so the remainders go to the first panes, and nothing is
 * ever negative: a 1x1 terminal yields tiny or empty rectangles, which the
 * renderer skips, never a crash.
 */
#include "layout.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A shown pane: its title bar and LAYOUT_MIN_ROWS rows. */
#define MIN_H (LAYOUT_MIN_ROWS + 1)
/* The narrowest stack or grid column worth showing. */
#define MIN_W 16

const char *layout_name(enum wrx_layout kind)
{
	static const char *names[] = {"tile", "grid", "full", "window"};
	return kind < WRX_LAYOUT_COUNT ? names[kind] : "?";
}

/* Split `total` cells into n parts separated by `gap`; writes starts and sizes. */
static void split(int start, int total, int n, int gap, int *pos, int *size)
{
	int avail = total - gap * (n - 1);
	if (avail < 0)
		avail = 0;
	int at = start;
	for (int i = 0; i < n; i++) {
		int s = avail / n + (i < avail % n ? 1 : 0);
		/* With no room for the gaps, later parts collapse at the end. */
		pos[i] = at < start + total ? at : start + total;
		size[i] = pos[i] + s <= start + total ? s : 0;
		at += s + gap;
	}
}

static int *ints(int n)
{
	int *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
	if (p == NULL)
		abort();
	return p;
}

/* The panes which[0..k) one above the other in col. */
static void stack(struct rect col, const int *which, int k, struct rect *out)
{
	int *pos = ints(k), *size = ints(k);
	split(col.y, col.h, k, 0, pos, size);
	for (int i = 0; i < k; i++)
		out[which[i]] = (struct rect){col.x, pos[i], col.w, size[i]};
	free(pos);
	free(size);
}

/*
 * How many of `want` panes a column of height h shows, at least MIN_H rows
 * each; *note is set when some are left out, and one row is kept for it.
 */
static int fit(int h, int want, bool *note)
{
	*note = want > h / MIN_H;
	if (!*note)
		return want;
	return h > 1 ? (h - 1) / MIN_H : 0;
}

/*
 * The k panes to show besides the focused one: those of the lowest rank
 * (rank NULL: all alike), the first in display order among equals, put in
 * display order. which[] gets their indices.
 */
static int others(int n, int focus, const int *rank, int k, int *which)
{
	int m = 0;
	int top = 0;
	for (int i = 0; rank && i < n; i++)
		top = WRX_MAX(top, rank[i]);
	for (int r = 0; r <= top && m < k; r++)
		for (int i = 0; i < n && m < k; i++)
			if (i != focus && (rank == NULL || rank[i] == r))
				which[m++] = i;
	/* Back in display order. */
	for (int i = 1; i < m; i++)
		for (int j = i; j > 0 && which[j] < which[j - 1]; j--) {
			int t = which[j];
			which[j] = which[j - 1];
			which[j - 1] = t;
		}
	return m;
}

static int tile(int n, int focus, const int *rank, struct rect area, struct rect *out,
		struct rect *note)
{
	int mainw = area.w * 3 / 5, stackw = area.w - mainw - 1;
	if (stackw < MIN_W || area.h < MIN_H) {
		out[focus] = area;
		return 1;
	}
	bool noted;
	int k = fit(area.h, n - 1, &noted);
	out[focus] = (struct rect){area.x, area.y, k > 0 || noted ? mainw : area.w, area.h};
	struct rect col = {area.x + mainw + 1, area.y, stackw, area.h - (noted ? 1 : 0)};
	if (noted)
		*note = (struct rect){col.x, area.y + area.h - 1, stackw, 1};
	int *which = ints(k);
	k = others(n, focus, rank, k, which);
	stack(col, which, k, out);
	free(which);
	return k + 1;
}

/* Grid: as square as possible, columns first; the focused pane always among them. */
static int grid(int n, int focus, const int *rank, struct rect area, struct rect *out,
		struct rect *note)
{
	int maxcols = WRX_MAX((area.w + 1) / (MIN_W + 1), 1), maxrows = area.h / MIN_H;
	bool noted = n > maxcols * maxrows;
	if (noted)
		maxrows = area.h > 1 ? (area.h - 1) / MIN_H : 0;
	int k = WRX_MIN(n, maxcols * maxrows);
	if (k <= 1) {
		out[focus] = (struct rect){area.x, area.y, area.w, area.h - (noted ? 1 : 0)};
		if (noted && area.h > 1)
			*note = (struct rect){area.x, area.y + area.h - 1, area.w, 1};
		return 1;
	}
	int *which = ints(k);
	which[0] = focus;
	others(n, focus, rank, k - 1, which + 1);
	/* Back in display order, the focused pane in its place among them. */
	for (int i = 1; i < k && which[i] < which[i - 1]; i++) {
		int t = which[i];
		which[i] = which[i - 1];
		which[i - 1] = t;
	}
	int cols = 1;
	while (cols * cols < k)
		cols++;
	int rows = (k + cols - 1) / cols;
	if (rows > maxrows) {
		rows = maxrows;
		cols = (k + rows - 1) / rows;
	}
	if (cols > maxcols) {
		cols = maxcols;
		rows = (k + cols - 1) / cols;
	}
	struct rect body = {area.x, area.y, area.w, area.h - (noted ? 1 : 0)};
	int *cpos = ints(cols), *csize = ints(cols);
	split(body.x, body.w, cols, 1, cpos, csize);
	for (int c = 0; c < cols; c++) {
		int first = c * rows, count = WRX_MIN(k - first, rows);
		if (count > 0)
			stack((struct rect){cpos[c], body.y, csize[c], body.h}, which + first,
			      count, out);
	}
	/* The remainders went to the first cells: the focused pane takes the largest. */
	int big = focus;
	for (int i = 0; i < k; i++)
		if (out[which[i]].w * out[which[i]].h > out[big].w * out[big].h)
			big = which[i];
	struct rect t = out[big];
	out[big] = out[focus];
	out[focus] = t;
	if (noted)
		*note = (struct rect){area.x, area.y + area.h - 1, area.w, 1};
	free(cpos);
	free(csize);
	free(which);
	return k;
}

int layout_compute(enum wrx_layout kind, bool zoom, int n, int focus, const int *rank,
		   struct rect area, struct rect *out, struct rect *note)
{
	struct rect none = {0};
	if (note == NULL)
		note = &none;
	*note = (struct rect){0};
	if (n <= 0)
		return 0;
	memset(out, 0, (size_t)n * sizeof *out);
	if (area.w < 1 || area.h < 1)
		return 0;
	if (focus < 0 || focus >= n)
		focus = 0;
	/* window: the renderer places the agent's panes (layout_window); else as full. */
	if (zoom || kind == WRX_LAYOUT_FULL || kind == WRX_LAYOUT_WINDOW || n == 1) {
		out[focus] = area;
		return 1;
	}
	return kind == WRX_LAYOUT_TILE ? tile(n, focus, rank, area, out, note)
				       : grid(n, focus, rank, area, out, note);
}

int layout_neighbour(const struct rect *r, int n, int from, int dx, int dy)
{
	if (from < 0 || from >= n)
		return -1;
	const struct rect *f = &r[from];
	int cx = f->x + f->w / 2, cy = f->y + f->h / 2;
	int best = -1;
	long best_d = LONG_MAX;
	for (int i = 0; i < n; i++) {
		const struct rect *o = &r[i];
		if (i == from || o->w == 0 || o->h == 0)
			continue;
		/* Must lie beyond the edge we move across. */
		if ((dx > 0 && o->x < f->x + f->w) || (dx < 0 && o->x + o->w > f->x) ||
		    (dy > 0 && o->y < f->y + f->h) || (dy < 0 && o->y + o->h > f->y))
			continue;
		int ox = o->x + o->w / 2, oy = o->y + o->h / 2;
		/* Prefer panes overlapping on the other axis, then the nearest. */
		bool overlap = dx ? (o->y < f->y + f->h && f->y < o->y + o->h)
				  : (o->x < f->x + f->w && f->x < o->x + o->w);
		long d = labs((long)(ox - cx)) + labs((long)(oy - cy)) + (overlap ? 0 : 100000);
		if (d < best_d) {
			best_d = d;
			best = i;
		}
	}
	return best;
}

int layout_window(int n, const bool *vertical, const int *size, struct rect area, struct rect *out)
{
	if (n <= 0)
		return 0;
	memset(out, 0, (size_t)n * sizeof *out);
	if (area.w < 1 || area.h < 1)
		return 0;
	out[0] = area;
	int shown = 1, last = 0;
	for (int i = 1; i < n; i++) {
		struct rect *p = &out[last];
		int pct = size[i] > 0 && size[i] < 100 ? size[i] : 50;
		if (vertical[i]) { /* beside it, one column between */
			int avail = p->w - 1, w = avail * pct / 100;
			if (w < MIN_W || avail - w < MIN_W)
				continue;
			out[i] = (struct rect){p->x + avail - w + 1, p->y, w, p->h};
			p->w = avail - w;
		} else { /* below it */
			int h = p->h * pct / 100;
			if (h < MIN_H || p->h - h < MIN_H)
				continue;
			out[i] = (struct rect){p->x, p->y + p->h - h, p->w, h};
			p->h -= h;
		}
		last = i;
		shown++;
	}
	return shown;
}
