/*
 * Tests for src/term/width.c: one width for the pane and the drawing. Every
 * character the C library counts otherwise than libvterm 0.1.4 (emoji of
 * Unicode 9 to 15, newer marks) moves the cursor as the C library says, and
 * comes back as itself in the cell.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "term/pane.h"
#include "term/width.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_the_c_library_decides(void **state)
{
	(void)state;
	assert_int_equal(width_of('a'), 1);
	assert_int_equal(width_of(0x4e2d), 2);  /* 中 */
	assert_int_equal(width_of(0x1f972), 2); /* 🥲, Unicode 13 */
	assert_int_equal(width_of(0x1f7e2), 2); /* 🟢, Unicode 12 */
	assert_int_equal(width_of(0x301), 0);   /* combining acute */
	assert_int_equal(width_of(0x7), -1);
	/* Where libvterm agrees, it gets the character itself. */
	assert_int_equal(width_for_vterm(0x4e2d), 0x4e2d);
	assert_int_equal(width_for_vterm('a'), 'a');
	uint32_t s = width_for_vterm(0x1f972);
	assert_int_not_equal(s, 0x1f972);
	assert_int_equal(width_original(s), 0x1f972);
	assert_int_equal(width_for_vterm(0x1f972), s); /* the same stand-in each time */
	/* A stand-in's own code point, printed, is not read as another character. */
	uint32_t own = width_for_vterm(s);
	assert_int_not_equal(own, s);
	assert_int_equal(width_original(own), s);
}

static void cursor_col(struct pane *p, int *col)
{
	int row, shape;
	bool visible;
	pane_cursor(p, &row, col, &visible, &shape);
}

/* Each character the two count differently, in a pane: cursor and cell as the C library says. */
static void test_every_disagreement_in_a_pane(void **state)
{
	(void)state;
	struct pane *p = pane_new(2, 10, 10, NULL, NULL);
	int checked = 0;
	for (uint32_t cp = 0x300; cp < 0x40000; cp++) {
		if (cp >= 0xd800 && cp < 0xe000)
			continue;
		int w = width_of(cp);
		if (w < 0 || width_for_vterm(cp) == cp)
			continue;
		char b[16] = "\r\033[2Ka";
		int n = 6 + utf8_encode(cp, b + 6);
		pane_feed(p, b, (size_t)n);
		int col;
		cursor_col(p, &col);
		struct wrx_cell c[10];
		pane_line(p, 0, c, 10);
		if (col != 1 + w)
			fail_msg("U+%04X: cursor at %d, the C library says width %d", cp, col, w);
		const struct wrx_cell *at = w == 0 ? &c[0] : &c[1];
		bool found = false;
		for (int k = 0; k < 6; k++)
			found |= at->ch[k] == cp;
		if (!found)
			fail_msg("U+%04X: the cell holds U+%04X", cp, at->ch[w == 0 ? 1 : 0]);
		if (w == 2 && c[1].width != 2)
			fail_msg("U+%04X: the cell is %d wide", cp, c[1].width);
		checked++;
	}
	/* 1494 wide, 1167 marks and a few more on Debian 12's libraries. */
	assert_true(checked > 1000);
	pane_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_c_library_decides),
		cmocka_unit_test(test_every_disagreement_in_a_pane),
	};
	return cmocka_run_group_tests_name("width", tests, NULL, NULL);
}
