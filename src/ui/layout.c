/*
 * layout.c - tile (one main pane left, the rest stacked right), grid and
 * full layouts, and the geometry behind directional focus.
 *
 * Sizes are split so the remainders go to the first panes, and nothing is
 * ever negative: a 1x1 terminal yields tiny or empty rectangles, which the
 * renderer skips, never a crash.
 */
#include "layout.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *layout_name(enum wrx_layout kind)
{
	static const char *names[] = {"tile", "grid", "full"};
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

static void stack(struct rect col, int first, int n, struct rect *out)
{
	int *pos = calloc((size_t)n, sizeof *pos), *size = calloc((size_t)n, sizeof *size);
	if (pos == NULL || size == NULL)
		abort();
	split(col.y, col.h, n, 0, pos, size);
	for (int i = 0; i < n; i++)
		out[first + i] = (struct rect){col.x, pos[i], col.w, size[i]};
	free(pos);
	free(size);
}

/* Room for a pane: its border line and one line of it. */
static bool shown(const struct rect *r)
{
	return r->w >= 1 && r->h >= 2;
}

/*
 * More panes than rows in a stack leave the last ones without room. The
 * focused pane is always shown, whatever its place: it takes the slot of
 * the last pane that has room (a spawn focused past the last row, or keys
 * sent to a pane nobody can see, were the alternative).
 */
static void show_focus(int n, int focus, struct rect *out)
{
	if (shown(&out[focus]))
		return;
	for (int j = n - 1; j >= 0; j--) {
		if (j != focus && shown(&out[j])) {
			struct rect t = out[j];
			out[j] = out[focus];
			out[focus] = t;
			return;
		}
	}
}

static int compute(enum wrx_layout kind, bool zoom, int n, int focus, struct rect area,
		   struct rect *out);

int layout_compute(enum wrx_layout kind, bool zoom, int n, int focus, struct rect area,
		   struct rect *out)
{
	int rc = compute(kind, zoom, n, focus, area, out);
	if (rc > 0 && focus >= 0 && focus < n)
		show_focus(n, focus, out);
	return rc;
}

static int compute(enum wrx_layout kind, bool zoom, int n, int focus, struct rect area,
		   struct rect *out)
{
	if (n <= 0)
		return 0;
	memset(out, 0, (size_t)n * sizeof *out);
	if (area.w < 1 || area.h < 1)
		return 0;
	if (focus < 0 || focus >= n)
		focus = 0;
	if (zoom || kind == WRX_LAYOUT_FULL || n == 1) {
		out[focus] = area;
		return 1;
	}
	if (kind == WRX_LAYOUT_TILE) {
		int pos[2], size[2];
		int mainw = area.w * 3 / 5;
		pos[0] = area.x;
		size[0] = mainw;
		pos[1] = area.x + mainw + 1;
		size[1] = area.w - mainw - 1;
		if (size[1] < 1) {
			split(area.x, area.w, 2, 1, pos, size);
		}
		out[0] = (struct rect){pos[0], area.y, size[0], area.h};
		stack((struct rect){pos[1], area.y, size[1], area.h}, 1, n - 1, out);
		return n;
	}
	/* Grid: as square as possible, columns first. */
	int cols = 1;
	while (cols * cols < n)
		cols++;
	int rows = (n + cols - 1) / cols;
	int *cpos = calloc((size_t)cols, sizeof *cpos),
	    *csize = calloc((size_t)cols, sizeof *csize);
	if (cpos == NULL || csize == NULL)
		abort();
	split(area.x, area.w, cols, 1, cpos, csize);
	for (int c = 0; c < cols; c++) {
		int first = c * rows;
		int count = n - first < rows ? n - first : rows;
		if (count > 0)
			stack((struct rect){cpos[c], area.y, csize[c], area.h}, first, count, out);
	}
	free(cpos);
	free(csize);
	return n;
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
