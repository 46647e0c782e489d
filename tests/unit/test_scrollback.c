/* Tests for src/term/scrollback.c: round trips, the ring limit, trimming. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "term/scrollback.h"

#include <stdlib.h>
#include <string.h>

static void fill_text(struct wrx_cell *c, int n, const char *ascii)
{
	memset(c, 0, (size_t)n * sizeof *c);
	for (int i = 0; i < n; i++)
		c[i].width = 1;
	for (int i = 0; i < n && ascii[i]; i++)
		c[i].ch[0] = (uint32_t)(unsigned char)ascii[i];
}

static void test_round_trip_attrs_wide_combining(void **state)
{
	(void)state;
	struct sb *sb = sb_new(10);
	struct wrx_cell in[8], out[8];
	fill_text(in, 8, "ab");
	in[0].attrs = WRX_ATTR_BOLD;
	in[0].fg = WRX_COLOUR_INDEXED | 1;
	in[1].bg = WRX_COLOUR_RGB | 0x102030;
	in[2].ch[0] = 0x4e2d; /* 中: wide */
	in[2].width = 2;
	in[3].width = 0;
	in[4].ch[0] = 'e';
	in[4].ch[1] = 0x301; /* combining acute */
	in[4].width = 1;
	in[5].attrs = WRX_ATTR_STRIKE;
	in[5].ch[0] = 'z';
	sb_push(sb, in, 8, false);
	assert_int_equal(sb_count(sb), 1);
	assert_int_equal(sb_get(sb, 0, out, 8), 6);
	assert_int_equal(out[0].ch[0], 'a');
	assert_int_equal(out[0].attrs, WRX_ATTR_BOLD);
	assert_int_equal(out[0].fg, WRX_COLOUR_INDEXED | 1);
	assert_int_equal(out[1].bg, WRX_COLOUR_RGB | 0x102030);
	assert_int_equal(out[2].ch[0], 0x4e2d);
	assert_int_equal(out[2].width, 2);
	assert_int_equal(out[3].width, 0);
	assert_int_equal(out[4].ch[0], 'e');
	assert_int_equal(out[4].ch[1], 0x301);
	assert_int_equal(out[5].attrs, WRX_ATTR_STRIKE);
	assert_int_equal(out[6].ch[0], 0);
	assert_int_equal(out[7].width, 1);
	sb_free(sb);
}

static void test_ring_limit_keeps_newest(void **state)
{
	(void)state;
	struct sb *sb = sb_new(3);
	struct wrx_cell c[4], out[4];
	const char *lines[] = {"l1", "l2", "l3", "l4", "l5"};
	for (int i = 0; i < 5; i++) {
		fill_text(c, 4, lines[i]);
		sb_push(sb, c, 4, false);
	}
	assert_int_equal(sb_count(sb), 3);
	sb_get(sb, 0, out, 4);
	assert_int_equal(out[1].ch[0], '5');
	sb_get(sb, 2, out, 4);
	assert_int_equal(out[1].ch[0], '3');
	assert_int_equal(sb_get(sb, 3, out, 4), -1);
	assert_int_equal(sb_pop(sb, out, 4, NULL), 0);
	assert_int_equal(out[1].ch[0], '5');
	assert_int_equal(sb_count(sb), 2);
	sb_set_limit(sb, 1);
	assert_int_equal(sb_count(sb), 1);
	sb_get(sb, 0, out, 4);
	assert_int_equal(out[1].ch[0], '4');
	sb_free(sb);
}

static void test_narrower_target_and_blank_lines(void **state)
{
	(void)state;
	struct sb *sb = sb_new(5);
	struct wrx_cell c[6], out[3];
	fill_text(c, 6, "abcdef");
	c[2].ch[0] = 0x4e2d; /* wide across the cut at 3 */
	c[2].width = 2;
	c[3].width = 0;
	c[3].ch[0] = 0;
	sb_push(sb, c, 6, false);
	assert_int_equal(sb_get(sb, 0, out, 3), 6);
	assert_int_equal(out[0].ch[0], 'a');
	assert_int_equal(out[2].ch[0], 0); /* half a wide char: blank */
	fill_text(c, 6, "");
	sb_push(sb, c, 6, false);
	assert_int_equal(sb_get(sb, 0, out, 3), 0);
	sb_free(sb);
}

static void test_memory_is_compact(void **state)
{
	(void)state;
	struct sb *sb = sb_new(10000);
	struct wrx_cell c[80];
	fill_text(c, 80,
		  "the quick brown fox jumps over the lazy dog 0123456789 the quick brown fox");
	for (int i = 0; i < 10000; i++)
		sb_push(sb, c, 80, false);
	/* 80 wide cells would be ~3 MB as libvterm cells; we keep it near the text size. */
	assert_true(sb_bytes(sb) < 10000 * 130);
	sb_free(sb);
}

/*
 * A logical line: n cells, some wide, some with a combining mark, runs of
 * attributes, from a seed.
 */
static int random_logical(unsigned *seed, struct wrx_cell *c, int max)
{
	int n = rand_r(seed) % max, i = 0;
	uint16_t attrs = 0;
	uint32_t fg = 0;
	while (i < n) {
		struct wrx_cell *x = &c[i];
		memset(x, 0, sizeof *x);
		x->width = 1;
		if (rand_r(seed) % 7 == 0) {
			attrs = (uint16_t)(rand_r(seed) % 2 ? WRX_ATTR_BOLD : 0);
			fg = rand_r(seed) % 2 ? WRX_COLOUR_INDEXED | (uint32_t)(rand_r(seed) % 256)
					      : 0;
		}
		x->attrs = attrs;
		x->fg = fg;
		int k = rand_r(seed) % 10;
		if (k == 0 && i + 1 < n) {
			x->ch[0] = 0x4e00 + (uint32_t)(rand_r(seed) % 100); /* wide */
			x->width = 2;
			c[i + 1] = *x;
			memset(c[i + 1].ch, 0, sizeof c[i + 1].ch);
			c[i + 1].width = 0;
			i += 2;
			continue;
		}
		x->ch[0] = k == 1 ? ' ' : (uint32_t)('a' + rand_r(seed) % 26);
		if (k == 2)
			x->ch[1] = 0x301;
		i++;
	}
	/* Trailing blanks are not kept by a line's end: none to compare. */
	while (n > 0 && c[n - 1].ch[0] == ' ' && c[n - 1].attrs == 0 && c[n - 1].bg == 0)
		n--;
	return n;
}

/* Push a logical line as the screen would: cut at cols, wide characters whole. */
static void push_wrapped(struct sb *sb, const struct wrx_cell *c, int n, int cols)
{
	int at = 0;
	do {
		int w = 0;
		while (at + w < n && w + c[at + w].width <= cols && c[at + w].width != 0)
			w += c[at + w].width;
		sb_push(sb, c + at, w, at + w < n);
		at += w;
	} while (at < n);
}

/* A space and a blank cell are the same; the attributes of either are not seen. */
static bool same_cell(const struct wrx_cell *a, const struct wrx_cell *b)
{
	bool blank_a = a->ch[0] == 0 || a->ch[0] == ' ', blank_b = b->ch[0] == 0 || b->ch[0] == ' ';
	if (blank_a || blank_b)
		return blank_a == blank_b && a->width == b->width;
	return !memcmp(a->ch, b->ch, sizeof a->ch) && a->width == b->width &&
	       (a->ch[0] == 0 || a->ch[0] == ' ' || (a->attrs == b->attrs && a->fg == b->fg));
}

/*
 * Reflow keeps every character: logical lines pushed at one width, rewrapped
 * to others (narrow, wide, narrow again), then read back at a width they all
 * fit are the lines that went in, cell for cell.
 */
static void test_reflow_keeps_every_character(void **state)
{
	(void)state;
	enum { LINES = 300, MAXCELLS = 200 };
	static struct wrx_cell in[LINES][MAXCELLS], out[MAXCELLS * 2];
	int len[LINES];
	unsigned seed = 7;
	struct sb *sb = sb_new(100000);
	for (int i = 0; i < LINES; i++) {
		len[i] = random_logical(&seed, in[i], MAXCELLS);
		push_wrapped(sb, in[i], len[i], 37);
	}
	static const int widths[] = {5, 80, 2, 13, 64, 3, 300};
	for (size_t k = 0; k < sizeof widths / sizeof *widths; k++) {
		sb_reflow(sb, widths[k], NULL, NULL);
		for (size_t l = 0; l < sb_count(sb); l++) {
			int n = sb_get(sb, l, out, widths[k]);
			if (n > widths[k])
				fail_msg("at %d columns line %zu holds %d cells", widths[k], l, n);
		}
	}
	assert_int_equal(sb_count(sb), LINES);
	for (int i = 0; i < LINES; i++) {
		int n = sb_get(sb, (size_t)(LINES - 1 - i), out, MAXCELLS * 2);
		if (n != len[i])
			fail_msg("line %d: %d cells back, %d went in", i, n, len[i]);
		for (int c = 0; c < n; c++)
			if (!same_cell(&in[i][c], &out[c]))
				fail_msg("line %d cell %d: U+%04x w%d back, U+%04x w%d went in", i,
					 c, out[c].ch[0], out[c].width, in[i][c].ch[0],
					 in[i][c].width);
		assert_false(sb_wrapped(sb, (size_t)(LINES - 1 - i)));
	}
	sb_free(sb);
}

/* A position moves with its character; a wide one never straddles a margin. */
static void test_reflow_moves_the_cursor(void **state)
{
	(void)state;
	struct sb *sb = sb_new(10);
	struct wrx_cell c[12], out[12];
	fill_text(c, 12, "abcdefghij");
	c[10].ch[0] = 0x4e2d;
	c[10].width = 2;
	c[11].width = 0;
	push_wrapped(sb, c, 12, 6); /* "abcdef" "ghij中" */
	assert_int_equal(sb_count(sb), 2);
	size_t line = 0;               /* the newest: "ghij中" */
	int col = 1;                   /* 'h' */
	sb_reflow(sb, 4, &line, &col); /* "abcd" "efgh" "ij中" */
	assert_int_equal(sb_count(sb), 3);
	assert_int_equal(line, 1);
	assert_int_equal(col, 3);
	sb_get(sb, 0, out, 12);
	assert_int_equal(out[0].ch[0], 'i');
	assert_int_equal(out[2].ch[0], 0x4e2d);
	assert_true(sb_wrapped(sb, 1));
	assert_false(sb_wrapped(sb, 0));
	/* At 11 columns the wide character does not fit after "abcdefghij": it starts the next. */
	sb_reflow(sb, 11, &line, &col);
	assert_int_equal(sb_count(sb), 2);
	assert_int_equal(line, 1);
	assert_int_equal(col, 7);
	assert_int_equal(sb_get(sb, 1, out, 12), 10);
	assert_true(sb_wrapped(sb, 1));
	sb_reflow(sb, 20, &line, &col);
	assert_int_equal(sb_count(sb), 1);
	assert_int_equal(line, 0);
	assert_int_equal(col, 7);
	assert_int_equal(sb_get(sb, 0, out, 12), 12);
	sb_free(sb);
}

/* Held, the ring keeps what is pushed past its limit; let go, it drops the oldest. */
static void test_hold_waits_for_the_limit(void **state)
{
	(void)state;
	struct sb *sb = sb_new(2);
	struct wrx_cell c[4], out[4];
	sb_hold(sb, true);
	for (int i = 0; i < 5; i++) {
		fill_text(c, 4, (const char[][2]){"a", "b", "c", "d", "e"}[i]);
		sb_push(sb, c, 4, false);
	}
	assert_int_equal(sb_count(sb), 5);
	sb_hold(sb, false);
	assert_int_equal(sb_count(sb), 2);
	sb_get(sb, 0, out, 4);
	assert_int_equal(out[0].ch[0], 'e');
	/* A full ring rewrapped narrower keeps every line it made, and gives them back. */
	struct wrx_cell w[10];
	sb_set_limit(sb, 4);
	for (int i = 0; i < 4; i++) {
		fill_text(w, 10, "0123456789");
		w[0].ch[0] = (uint32_t)('a' + i);
		sb_push(sb, w, 10, false);
	}
	sb_reflow(sb, 5, NULL, NULL);
	assert_int_equal(sb_count(sb), 8);
	sb_push(sb, w, 3, false); /* the slack stays: the oldest goes */
	assert_int_equal(sb_count(sb), 8);
	sb_pop(sb, NULL, 0, NULL);
	sb_reflow(sb, 10, NULL, NULL);
	assert_int_equal(sb_count(sb), 4);
	sb_get(sb, 3, w, 10);
	assert_int_equal(w[0].ch[0], '5'); /* "a1234" went for the push; "56789" is left of it */
	sb_get(sb, 2, w, 10);
	assert_int_equal(w[0].ch[0], 'b');
	assert_int_equal(w[9].ch[0], '9');
	sb_set_limit(sb, 0);
	assert_int_equal(sb_count(sb), 0);
	sb_push(sb, c, 4, false);
	assert_int_equal(sb_count(sb), 0);
	sb_free(sb);
}

/*
 * A line erased to the margin in a colour keeps the colour, and a reflow
 * leaves the erased cells out (tmux's rule): a line that fits stays one
 * line, one that does not wraps its text only.
 */
static void test_reflow_leaves_an_erased_tail_out(void **state)
{
	(void)state;
	struct sb *sb = sb_new(10);
	struct wrx_cell c[10], out[10];
	const uint32_t blue = WRX_COLOUR_INDEXED | 4;
	fill_text(c, 10, "ab");
	for (int i = 0; i < 10; i++)
		c[i].bg = blue;
	sb_push(sb, c, 10, false);
	fill_text(c, 10, "abcdefg");
	for (int i = 0; i < 10; i++)
		c[i].bg = blue;
	sb_push(sb, c, 10, false);
	sb_get(sb, 1, out, 10);
	assert_int_equal(out[9].bg, blue); /* kept, as painted */
	assert_int_equal(out[9].ch[0], 0);
	sb_reflow(sb, 5, NULL, NULL);
	assert_int_equal(sb_count(sb), 3); /* "ab", "abcde", "fg": no line of colour alone */
	sb_get(sb, 2, out, 10);
	assert_int_equal(out[1].ch[0], 'b');
	assert_int_equal(out[7].bg, blue); /* fits: as it is, its tail past the margin too */
	sb_get(sb, 0, out, 10);
	assert_int_equal(out[1].ch[0], 'g');
	assert_int_equal(out[2].bg, WRX_COLOUR_DEFAULT);
	sb_reflow(sb, 10, NULL, NULL);
	assert_int_equal(sb_count(sb), 2);
	sb_get(sb, 1, out, 10);
	assert_int_equal(out[9].bg, blue); /* widened again: the fitting line's colour back */
	sb_free(sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_attrs_wide_combining),
		cmocka_unit_test(test_ring_limit_keeps_newest),
		cmocka_unit_test(test_narrower_target_and_blank_lines),
		cmocka_unit_test(test_memory_is_compact),
		cmocka_unit_test(test_reflow_keeps_every_character),
		cmocka_unit_test(test_reflow_moves_the_cursor),
		cmocka_unit_test(test_hold_waits_for_the_limit),
		cmocka_unit_test(test_reflow_leaves_an_erased_tail_out),
	};
	return cmocka_run_group_tests_name("scrollback", tests, NULL, NULL);
}
