/*
 * Tests for src/term/width.c: one width for the pane and the drawing, from
 * our own table of Unicode 15. It agrees with the C library on every
 * character the C library knows; every character libvterm 0.1.4 counts
 * otherwise (emoji of Unicode 9 to 15, newer marks) moves the cursor as the
 * table says, and comes back as itself in the cell.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <locale.h>
#include <wchar.h>
#include <wctype.h>

#include "term/pane.h"
#include "term/width.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_the_table_decides(void **state)
{
	(void)state;
	assert_int_equal(width_of('a'), 1);
	assert_int_equal(width_of(0x1fae8), 2);  /* shaking face, Unicode 15 */
	assert_int_equal(width_of(0x1f6dc), 2);  /* wireless, Unicode 15 */
	assert_int_equal(width_of(0x10efd), 0);  /* Arabic small low word sakta, 15 */
	assert_int_equal(width_of(0x1faf9), -1); /* not assigned */
	assert_int_equal(width_of(0xad), 1);     /* the soft hyphen, as glibc */
	assert_int_equal(width_of(0x2028), -1);
	assert_int_equal(width_of(0x1160), 0);  /* Hangul medial jamo */
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

/*
 * Where the C library knows a character, it agrees; where it does not, the
 * character is newer than its Unicode 14. The process's own wcwidth and
 * iswprint are the table's, so ncurses draws as the pane counts.
 */
static void test_agrees_with_the_c_library(void **state)
{
	(void)state;
	int (*libc_wcwidth)(wchar_t) = (int (*)(wchar_t))dlsym(RTLD_NEXT, "wcwidth");
	int (*libc_iswprint)(wint_t) = (int (*)(wint_t))dlsym(RTLD_NEXT, "iswprint");
	assert_non_null(libc_wcwidth);
	assert_non_null(libc_iswprint);
	assert_ptr_not_equal(libc_wcwidth, wcwidth);
	locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", 0);
	locale_t was = uselocale(utf8);
	int newer = 0;
	for (uint32_t cp = 0; cp < 0x110000; cp++) {
		int theirs = libc_wcwidth((wchar_t)cp), ours = wcwidth((wchar_t)cp);
		if ((libc_iswprint(cp) != 0) != (iswprint(cp) != 0) && theirs >= 0)
			fail_msg("U+%04X: iswprint differs", cp);
		if (theirs == ours)
			continue;
		if (theirs >= 0)
			fail_msg("U+%04X: the C library says %d, the table %d", cp, theirs, ours);
		newer++;
	}
	uselocale(was);
	freelocale(utf8);
	/* Unicode 15.0 added 4489 characters; Debian 12's C library (14.0) has none. */
	assert_int_equal(newer, 4489);
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
			fail_msg("U+%04X: cursor at %d, the table says width %d", cp, col, w);
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
		cmocka_unit_test(test_the_table_decides),
		cmocka_unit_test(test_agrees_with_the_c_library),
		cmocka_unit_test(test_every_disagreement_in_a_pane),
	};
	return cmocka_run_group_tests_name("width", tests, NULL, NULL);
}
