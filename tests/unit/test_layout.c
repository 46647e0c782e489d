/* Tests for src/ui/layout.c: the three layouts, zoom, tiny areas, neighbours, many panes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ui/layout.h"

static void no_overlap(const struct rect *r, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			if (r[i].w == 0 || r[j].w == 0)
				continue;
			int ox = r[i].x < r[j].x + r[j].w && r[j].x < r[i].x + r[i].w;
			int oy = r[i].y < r[j].y + r[j].h && r[j].y < r[i].y + r[i].h;
			assert_false(ox && oy);
		}
}

static void test_single_pane_fills(void **state)
{
	(void)state;
	struct rect r[1], area = {10, 0, 100, 40};
	assert_int_equal(layout_compute(WRX_LAYOUT_TILE, false, 1, 0, NULL, area, r, NULL), 1);
	assert_memory_equal(&r[0], &area, sizeof area);
}

static void test_tile_main_and_stack(void **state)
{
	(void)state;
	struct rect r[3], area = {0, 0, 100, 40};
	assert_int_equal(layout_compute(WRX_LAYOUT_TILE, false, 3, 0, NULL, area, r, NULL), 3);
	assert_int_equal(r[0].x, 0);
	assert_int_equal(r[0].h, 40);
	assert_int_equal(r[0].w, 60);
	assert_int_equal(r[1].x, 61); /* one separator column */
	assert_int_equal(r[1].w, 39);
	assert_int_equal(r[1].h + r[2].h, 40);
	assert_int_equal(r[2].y, r[1].y + r[1].h);
	no_overlap(r, 3);
}

static void test_grid_is_square(void **state)
{
	(void)state;
	struct rect r[4], area = {0, 0, 81, 40};
	assert_int_equal(layout_compute(WRX_LAYOUT_GRID, false, 4, 0, NULL, area, r, NULL), 4);
	assert_int_equal(r[0].w, 40);
	assert_int_equal(r[2].x, 41);
	assert_int_equal(r[0].h, 20);
	no_overlap(r, 4);
	struct rect r5[5];
	layout_compute(WRX_LAYOUT_GRID, false, 5, 0, NULL, area, r5, NULL);
	no_overlap(r5, 5);
	for (int i = 0; i < 5; i++)
		assert_true(r5[i].w > 0 && r5[i].h > 0);
}

static void test_full_and_zoom_show_focus_only(void **state)
{
	(void)state;
	struct rect r[3], area = {0, 0, 80, 24};
	assert_int_equal(layout_compute(WRX_LAYOUT_FULL, false, 3, 2, NULL, area, r, NULL), 1);
	assert_int_equal(r[0].w, 0);
	assert_int_equal(r[2].w, 80);
	assert_int_equal(layout_compute(WRX_LAYOUT_TILE, true, 3, 1, NULL, area, r, NULL), 1);
	assert_int_equal(r[1].h, 24);
	assert_int_equal(r[0].h, 0);
}

/* window: each pane split off the one before, beside or below, its size or half. */
static void test_window_splits_in_order(void **state)
{
	(void)state;
	struct rect r[3], area = {0, 0, 101, 40};
	bool vertical[3] = {false, true, false};
	int size[3] = {0, 30, 0};
	assert_int_equal(layout_window(3, vertical, size, area, r), 3);
	/* 1 beside 0, 30% of the width after the separator; 2 below 1, half of it. */
	assert_int_equal(r[0].x, 0);
	assert_int_equal(r[0].w, 70);
	assert_int_equal(r[0].h, 40);
	assert_int_equal(r[1].x, 71);
	assert_int_equal(r[1].w, 30);
	assert_int_equal(r[1].h, 20);
	assert_int_equal(r[2].x, 71);
	assert_int_equal(r[2].y, 20);
	assert_int_equal(r[2].h, 20);
	no_overlap(r, 3);
	/* No room for a split: that pane is not shown, the next splits the last shown. */
	struct rect small = {0, 0, 30, 40};
	bool v2[3] = {false, true, false};
	assert_int_equal(layout_window(3, v2, size, small, r), 2);
	assert_int_equal(r[1].w, 0);
	assert_int_equal(r[0].w, 30);
	assert_int_equal(r[2].y, 20);
	assert_int_equal(layout_compute(WRX_LAYOUT_WINDOW, false, 3, 1, NULL, area, r, NULL), 1);
	assert_int_equal(r[1].w, 101);
}

static void test_tiny_areas_never_negative(void **state)
{
	(void)state;
	struct rect r[9];
	for (int w = 0; w < 4; w++)
		for (int h = 0; h < 4; h++)
			for (int k = 0; k < WRX_LAYOUT_COUNT; k++) {
				layout_compute(k, false, 9, 0, NULL, (struct rect){0, 0, w, h}, r,
					       NULL);
				for (int i = 0; i < 9; i++) {
					assert_true(r[i].w >= 0 && r[i].h >= 0);
					assert_true(r[i].x + r[i].w <= w);
					assert_true(r[i].y + r[i].h <= h);
				}
			}
	assert_int_equal(layout_compute(WRX_LAYOUT_TILE, false, 0, 0, NULL,
					(struct rect){0, 0, 9, 9}, r, NULL),
			 0);
}

static void test_neighbours(void **state)
{
	(void)state;
	struct rect r[3];
	layout_compute(WRX_LAYOUT_TILE, false, 3, 0, NULL, (struct rect){0, 0, 100, 40}, r, NULL);
	assert_int_equal(layout_neighbour(r, 3, 0, 1, 0), 1);
	assert_int_equal(layout_neighbour(r, 3, 1, 0, 1), 2);
	assert_int_equal(layout_neighbour(r, 3, 2, 0, -1), 1);
	assert_int_equal(layout_neighbour(r, 3, 2, -1, 0), 0);
	assert_int_equal(layout_neighbour(r, 3, 0, -1, 0), -1);
}

/* The focused pane is always shown, and in tile it is the main one. */
static void test_focus_always_shown(void **state)
{
	(void)state;
	enum { N = 50 };
	struct rect r[N], area = {0, 0, 120, 40};
	for (int kind = WRX_LAYOUT_TILE; kind <= WRX_LAYOUT_GRID; kind++) {
		for (int focus = 0; focus < N; focus++) {
			layout_compute((enum wrx_layout)kind, false, N, focus, NULL, area, r, NULL);
			assert_true(r[focus].w >= 1 && r[focus].h >= 2);
			if (kind == WRX_LAYOUT_TILE) {
				assert_int_equal(r[focus].x, 0);
				assert_int_equal(r[focus].h, 40);
			}
			no_overlap(r, N);
		}
	}
}

/*
 * Not all fit: the lowest ranks are shown (agents' own panes before their
 * shells), still in display order.
 */
static void test_rank_decides_who_is_shown(void **state)
{
	(void)state;
	enum { N = 21 };
	int rank[N];
	for (int i = 0; i < N; i++)
		rank[i] = i % 2 ? 2 : 1; /* even: an agent's pane; odd: its shell */
	struct rect r[N], note, area = {25, 0, 55, 23};
	for (int kind = WRX_LAYOUT_TILE; kind <= WRX_LAYOUT_GRID; kind++) {
		int shown =
			layout_compute((enum wrx_layout)kind, false, N, 0, rank, area, r, &note);
		assert_true(shown < N);
		assert_true(note.h > 0);
		int last_y = -1;
		for (int i = 1; i < N; i++) {
			bool on = r[i].w > 0;
			/* Every shell hidden before any agent's pane is. */
			if (i % 2 && on)
				for (int j = 2; j < N; j += 2)
					assert_true(r[j].w > 0);
			/* Shown ones in display order, column by column. */
			if (on && kind == WRX_LAYOUT_TILE) {
				assert_true(r[i].y > last_y);
				last_y = r[i].y;
			}
		}
		assert_true(r[2].w > 0 && r[4].w > 0);
		if (kind == WRX_LAYOUT_TILE)
			assert_int_equal(r[1].w, 0);
	}
}

/* One layout of n panes in area ar: the invariants test_many_agents checks. */
static void many(enum wrx_layout kind, int n, int focus, struct rect ar)
{
	struct rect r[64], note;
	int shown = layout_compute(kind, false, n, focus, NULL, ar, r, &note);
	int visible = 0, biggest = 0;
	for (int i = 0; i < n; i++) {
		if (r[i].w == 0 && r[i].h == 0)
			continue;
		visible++;
		assert_true(r[i].h - 1 >= LAYOUT_MIN_ROWS);
		assert_true(r[i].x >= ar.x && r[i].x + r[i].w <= ar.x + ar.w);
		assert_true(r[i].y >= ar.y && r[i].y + r[i].h <= ar.y + ar.h);
		if (i != focus && r[i].w * r[i].h > biggest)
			biggest = r[i].w * r[i].h;
	}
	assert_int_equal(visible, shown);
	assert_true(r[focus].w * r[focus].h >= biggest);
	if (kind == WRX_LAYOUT_TILE)
		assert_true(r[focus].w * r[focus].h > biggest);
	/* The note is there when, and only when, some are hidden, and covers no pane. */
	assert_int_equal(note.h > 0, shown < n);
	r[n] = note;
	no_overlap(r, note.h > 0 ? n + 1 : n);
}

/*
 * The layouts with many agents, at the sizes a person uses: 80x24 and
 * 200x60 less the sidebar and the status line, 6, 12 and 25 agents of one
 * or two panes each, plus the project's shell. No pane shown is under
 * LAYOUT_MIN_ROWS rows, the focused one is the largest, the rest are
 * hidden and counted on the note line, and nothing overlaps.
 */
static void test_many_agents(void **state)
{
	(void)state;
	const struct rect areas[] = {{25, 0, 55, 23}, {25, 0, 175, 59}};
	const int agents[] = {6, 12, 25};
	for (size_t a = 0; a < WRX_ARRAY_LEN(areas); a++)
		for (size_t k = 0; k < WRX_ARRAY_LEN(agents); k++)
			for (int per = 1; per <= 2; per++) {
				int n = 1 + agents[k] * per;
				for (int focus = 0; focus < n; focus++) {
					many(WRX_LAYOUT_TILE, n, focus, areas[a]);
					many(WRX_LAYOUT_GRID, n, focus, areas[a]);
				}
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_focus_always_shown),
		cmocka_unit_test(test_single_pane_fills),
		cmocka_unit_test(test_tile_main_and_stack),
		cmocka_unit_test(test_grid_is_square),
		cmocka_unit_test(test_full_and_zoom_show_focus_only),
		cmocka_unit_test(test_window_splits_in_order),
		cmocka_unit_test(test_tiny_areas_never_negative),
		cmocka_unit_test(test_neighbours),
		cmocka_unit_test(test_many_agents),
		cmocka_unit_test(test_rank_decides_who_is_shown),
	};
	return cmocka_run_group_tests_name("layout", tests, NULL, NULL);
}
