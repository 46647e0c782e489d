/*
 * layout.h - where each pane goes. Pure arithmetic, no curses.
 *
 * A pane's rectangle includes its one-line title bar; panes side by side
 * are separated by one column, which the renderer draws.
 */
#ifndef WRX_LAYOUT_H
#define WRX_LAYOUT_H

#include "../core/session.h"

#include <stdbool.h>

struct rect {
	int x, y, w, h;
};

/* The fewest rows a shown pane has under its title bar. */
#define LAYOUT_MIN_ROWS 3

/*
 * Place n panes in area. out[i] gets pane i's rectangle; a pane that is not
 * shown (full layout, zoom, no room) gets w = h = 0. The focused pane is
 * always shown, and in tile it is the main one. When not all fit, those of
 * the lowest rank[i] are shown (rank NULL: the first ones), in their order.
 * Returns how many are shown.
 * *note (may be NULL) gets the line where the renderer says how many did
 * not fit, or h = 0 when all did (or the user chose full or zoom).
 */
int layout_compute(enum wrx_layout kind, bool zoom, int n, int focus, const int *rank,
		   struct rect area, struct rect *out, struct rect *note);

const char *layout_name(enum wrx_layout kind);

/*
 * One agent's n panes in area, as a tmux window's: pane 0 takes it all,
 * each next one is split off the one made before it, beside it
 * (vertical[i]) or below, taking size[i] percent (0: half). A split with
 * no room for both is not made: that pane gets w = h = 0. Returns how
 * many are shown.
 */
int layout_window(int n, const bool *vertical, const int *size, struct rect area, struct rect *out);

/* Index of the pane whose rectangle is nearest in direction (dx, dy), or -1. */
int layout_neighbour(const struct rect *r, int n, int from, int dx, int dy);

#endif
