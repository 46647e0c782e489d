/* Tests for src/ui/colour.c: palette, nearest colour, terminal folding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "term/cell.h"
#include "term/colour.h"

static void test_palette(void **state)
{
	(void)state;
	assert_int_equal(colour_256_to_rgb(16), 0x000000);
	assert_int_equal(colour_256_to_rgb(196), 0xff0000);
	assert_int_equal(colour_256_to_rgb(231), 0xffffff);
	assert_int_equal(colour_256_to_rgb(232), 0x080808);
	assert_int_equal(colour_256_to_rgb(255), 0xeeeeee);
}

static void test_exact_cube_colours_map_to_themselves(void **state)
{
	(void)state;
	for (int i = 16; i < 256; i++)
		assert_int_equal(colour_256_to_rgb(colour_rgb_to_256(colour_256_to_rgb(i))),
				 colour_256_to_rgb(i));
}

static void test_nearest(void **state)
{
	(void)state;
	assert_int_equal(colour_rgb_to_256(0xfe0101), 196);
	assert_int_equal(colour_rgb_to_256(0x808080), 244);
	assert_int_equal(colour_rgb_to_256(0x000000), 16);
	assert_int_equal(colour_rgb_to_256(0x0000ff), 21);
}

static void test_terminal_folding(void **state)
{
	(void)state;
	assert_int_equal(colour_for_terminal(WRX_COLOUR_DEFAULT, 256), -1);
	assert_int_equal(colour_for_terminal(WRX_COLOUR_INDEXED | 1, 256), 1);
	assert_int_equal(colour_for_terminal(WRX_COLOUR_RGB | 0xff0000, 256), 196);
	assert_int_equal(colour_for_terminal(WRX_COLOUR_INDEXED | 196, 8), 1);
	assert_int_equal(colour_for_terminal(WRX_COLOUR_INDEXED | 9, 8), 1);
	assert_int_equal(colour_for_terminal(WRX_COLOUR_INDEXED | 9, 16), 9);
	assert_int_equal(colour_for_terminal(WRX_COLOUR_RGB | 0x123456, 1 << 24), 0x123456);
	assert_int_equal(colour_for_terminal(WRX_COLOUR_INDEXED | 2, 1 << 24), 2);
	assert_int_equal(colour_for_terminal(WRX_COLOUR_INDEXED | 196, 1 << 24), 0xff0000);
}

/* Direct colour with the palette kept: indexed as such, RGB exact (shifted) or nudged. */
static void test_direct_with_palette(void **state)
{
	(void)state;
	assert_int_equal(colour_for_direct256(WRX_COLOUR_DEFAULT, true), -1);
	assert_int_equal(colour_for_direct256(WRX_COLOUR_INDEXED | 200, true), 200);
	assert_int_equal(colour_for_direct256(WRX_COLOUR_RGB | 0x000000, true), 256);
	assert_int_equal(colour_for_direct256(WRX_COLOUR_RGB | 0x123456, true), 0x123456 + 256);
	assert_int_equal(colour_for_direct256(WRX_COLOUR_RGB | 0x0000ff, false), 0x0001ff);
	assert_int_equal(colour_for_direct256(WRX_COLOUR_RGB | 0x123456, false), 0x123456);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_palette),
		cmocka_unit_test(test_exact_cube_colours_map_to_themselves),
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_terminal_folding),
		cmocka_unit_test(test_direct_with_palette),
	};
	return cmocka_run_group_tests_name("colour", tests, NULL, NULL);
}
