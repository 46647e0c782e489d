/*
 * Tests for src/term/sgr.c: the SGR sequences of a coloured diff line
 * (review.pager), found, stripped and applied; anything else is text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "term/sgr.h"

#include <string.h>

static void apply(struct wrx_cell *c, const char *seq)
{
	size_t n = strlen(seq);
	assert_int_equal(sgr_at(seq, n), n);
	sgr_apply(c, seq, n);
}

static void test_found_and_stripped(void **state)
{
	(void)state;
	assert_int_equal(sgr_at("\033[m", 3), 3);
	assert_int_equal(sgr_at("\033[1;38;5;208mx", 14), 13);
	assert_int_equal(sgr_at("\033[K", 3), 3); /* an erase: delta's fill */
	assert_int_equal(sgr_at("\033[2J", 4), 0);
	assert_int_equal(sgr_at("\033]52;c;eA==\a", 12), 0);
	assert_int_equal(sgr_at("\033[31", 4), 0); /* unfinished */
	assert_int_equal(sgr_at("\033[?25l", 6), 0);
	const char *line = "\033[32m+hello \033[7mthere\033[27m\033[m\033]0;t\a";
	char out[64];
	size_t n = sgr_strip(line, strlen(line), out);
	out[n] = '\0';
	assert_string_equal(out, "+hello there\033]0;t\a");
}

static void test_applied(void **state)
{
	(void)state;
	struct wrx_cell c = {0};
	apply(&c, "\033[1;31;42m");
	assert_int_equal(c.attrs, WRX_ATTR_BOLD);
	assert_int_equal(c.fg, WRX_COLOUR_INDEXED | 1);
	assert_int_equal(c.bg, WRX_COLOUR_INDEXED | 2);
	apply(&c, "\033[22;7;93;104m");
	assert_int_equal(c.attrs, WRX_ATTR_REVERSE);
	assert_int_equal(c.fg, WRX_COLOUR_INDEXED | 11);
	assert_int_equal(c.bg, WRX_COLOUR_INDEXED | 12);
	apply(&c, "\033[38;5;208;48;2;1;2;3m");
	assert_int_equal(c.fg, WRX_COLOUR_INDEXED | 208);
	assert_int_equal(c.bg, WRX_COLOUR_RGB | 0x010203);
	apply(&c, "\033[38:5:99m");
	assert_int_equal(c.fg, WRX_COLOUR_INDEXED | 99);
	apply(&c, "\033[27;39;49m");
	assert_int_equal(c.attrs, 0);
	assert_int_equal(c.fg, WRX_COLOUR_DEFAULT);
	assert_int_equal(c.bg, WRX_COLOUR_DEFAULT);
	apply(&c, "\033[3;4m");
	apply(&c, "\033[m");
	assert_int_equal(c.attrs, 0);
	/* Malformed colours leave the default; an erase changes nothing. */
	apply(&c, "\033[38;5;999m");
	assert_int_equal(c.fg, WRX_COLOUR_DEFAULT);
	apply(&c, "\033[38;2;1m");
	assert_int_equal(c.fg, WRX_COLOUR_DEFAULT);
	apply(&c, "\033[41m");
	apply(&c, "\033[K");
	assert_int_equal(c.bg, WRX_COLOUR_INDEXED | 1);
	/* More parameters than are read: no overflow. */
	char many[400] = "\033[";
	for (int i = 0; i < 60; i++)
		strcat(many, "1;");
	strcat(many, "31m");
	apply(&c, many);
	assert_true(c.attrs & WRX_ATTR_BOLD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found_and_stripped),
		cmocka_unit_test(test_applied),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
