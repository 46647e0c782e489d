/* Tests for src/term/scrollback.c: round trips, the ring limit, trimming. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "term/scrollback.h"

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
	sb_push(sb, in, 8);
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
		sb_push(sb, c, 4);
	}
	assert_int_equal(sb_count(sb), 3);
	sb_get(sb, 0, out, 4);
	assert_int_equal(out[1].ch[0], '5');
	sb_get(sb, 2, out, 4);
	assert_int_equal(out[1].ch[0], '3');
	assert_int_equal(sb_get(sb, 3, out, 4), -1);
	assert_int_equal(sb_pop(sb, out, 4), 0);
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
	sb_push(sb, c, 6);
	assert_int_equal(sb_get(sb, 0, out, 3), 6);
	assert_int_equal(out[0].ch[0], 'a');
	assert_int_equal(out[2].ch[0], 0); /* half a wide char: blank */
	fill_text(c, 6, "");
	sb_push(sb, c, 6);
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
		sb_push(sb, c, 80);
	/* 80 wide cells would be ~3 MB as libvterm cells; we keep it near the text size. */
	assert_true(sb_bytes(sb) < 10000 * 130);
	sb_free(sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_attrs_wide_combining),
		cmocka_unit_test(test_ring_limit_keeps_newest),
		cmocka_unit_test(test_narrower_target_and_blank_lines),
		cmocka_unit_test(test_memory_is_compact),
	};
	return cmocka_run_group_tests_name("scrollback", tests, NULL, NULL);
}
