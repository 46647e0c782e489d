/*
 * Tests for src/term/pane.c: the emulator without a process. Bytes go in
 * through pane_feed(), answers come out through a recording pane_io.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "term/pane.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec {
	struct buf out;
	int rows, cols;
	int events;
	int closed;
};

static int rec_write(void *ctx, const char *b, size_t n)
{
	buf_add(&((struct rec *)ctx)->out, b, n);
	return 0;
}

static void rec_resize(void *ctx, int rows, int cols)
{
	((struct rec *)ctx)->rows = rows;
	((struct rec *)ctx)->cols = cols;
}

static void rec_close(void *ctx)
{
	((struct rec *)ctx)->closed++;
}

static void on_event(struct pane *p, int ev, void *data)
{
	(void)p;
	((struct rec *)data)->events |= ev;
}

static struct pane *mk(struct rec *r, int rows, int cols)
{
	memset(r, 0, sizeof *r);
	struct pane *p = pane_new(rows, cols, 100, on_event, r);
	struct pane_io io = {
		.write = rec_write, .resize = rec_resize, .close = rec_close, .ctx = r};
	pane_set_io(p, &io);
	return p;
}

static void feed(struct pane *p, const char *s)
{
	pane_feed(p, s, strlen(s));
}

static void test_text_and_attributes(void **state)
{
	(void)state;
	struct rec r;
	struct pane *p = mk(&r, 5, 20);
	feed(p, "\033[1;31mX\033[0m\033[38;2;1;2;3mY\033[9mZ");
	struct wrx_cell c;
	pane_cell(p, 0, 0, &c);
	assert_int_equal(c.ch[0], 'X');
	assert_true(c.attrs & WRX_ATTR_BOLD);
	assert_int_equal(c.fg, WRX_COLOUR_INDEXED | 1);
	pane_cell(p, 0, 1, &c);
	assert_int_equal(c.fg, WRX_COLOUR_RGB | 0x010203);
	pane_cell(p, 0, 2, &c);
	assert_true(c.attrs & WRX_ATTR_STRIKE);
	assert_true(r.events & PANE_EV_DAMAGE);
	assert_true(pane_row_dirty(p, 0));
	pane_clean(p);
	assert_false(pane_row_dirty(p, 0));
	pane_free(p);
	assert_int_equal(r.closed, 1);
	buf_free(&r.out);
}

static void test_line_with_sgr(void **state)
{
	(void)state;
	struct rec r;
	struct pane *p = mk(&r, 3, 20);
	feed(p, "a\033[1;31mb\033[38;2;1;2;3mc\033[0md");
	struct buf b = {0};
	pane_line_append_sgr(p, 0, 0, &b);
	assert_string_equal(b.data, "a\033[0;1;38;5;1mb\033[0;1;38;2;1;2;3mc\033[0md");
	buf_free(&b);
	pane_free(p);
	buf_free(&r.out);
}

static void test_title_split_across_writes(void **state)
{
	(void)state;
	struct rec r;
	struct pane *p = mk(&r, 5, 20);
	/* libvterm 0.1.4 mangles this when the OSC arrives in two pieces. */
	feed(p, "a\033]2;hello wo");
	assert_string_equal(pane_title(p), "");
	feed(p, "rld\007b");
	assert_string_equal(pane_title(p), "hello world");
	assert_true(r.events & PANE_EV_TITLE);
	char *t = pane_line_text(p, 0);
	assert_string_equal(t, "ab");
	free(t);
	/* Split right after ESC, and an ST terminator split between ESC and \. */
	feed(p, "\033");
	feed(p, "]0;second\033");
	feed(p, "\\");
	assert_string_equal(pane_title(p), "second");
	/* Control characters never reach the title. */
	feed(p, "\033]2;x\033[2Jy\007");
	assert_null(strchr(pane_title(p), '\033'));
	pane_free(p);
	buf_free(&r.out);
}

/* OSC 52: a write comes to the owner as text, split or not; reads and junk do not. */
static void test_clipboard_write(void **state)
{
	(void)state;
	struct rec r;
	struct pane *p = mk(&r, 5, 20);
	size_t len;
	feed(p, "\033]52;c;aGVsbG8g");
	assert_false(r.events & PANE_EV_CLIPBOARD);
	feed(p, "d29ybGQ=\033\\x");
	assert_true(r.events & PANE_EV_CLIPBOARD);
	const char *t = pane_clipboard(p, &len);
	assert_int_equal(len, 11);
	assert_memory_equal(t, "hello world", 11);
	const char *junk[] = {"\033]52;c;?\a", "\033]52;c;not*base64\a", "\033]52;c;\a",
			      "\033]52;x;aGk=\a", "\033]52;aGk=\a"};
	for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
		r.events = 0;
		feed(p, junk[i]);
		assert_false(r.events & PANE_EV_CLIPBOARD);
	}
	/* Nothing of it reached the screen, and nothing was answered. */
	char *line = pane_line_text(p, 0);
	assert_string_equal(line, "x");
	free(line);
	assert_int_equal(r.out.len, 0);
	pane_free(p);
	buf_free(&r.out);
}

static void test_unterminated_string_is_bounded(void **state)
{
	(void)state;
	struct rec r;
	struct pane *p = mk(&r, 5, 20);
	feed(p, "\033]2;");
	char *junk = malloc(1 << 20);
	memset(junk, 'x', 1 << 20);
	pane_feed(p, junk, 1 << 20);
	pane_feed(p, junk, 1 << 20);
	free(junk);
	feed(p, "\007ok");
	char *t = pane_line_text(p, 0);
	assert_non_null(strstr(t, "ok"));
	free(t);
	pane_free(p);
	buf_free(&r.out);
}

static void test_scrollback_collects_lines(void **state)
{
	(void)state;
	struct rec r;
	struct pane *p = mk(&r, 3, 10);
	for (int i = 1; i <= 10; i++) {
		char line[16];
		snprintf(line, sizeof line, "line%d\r\n", i);
		feed(p, line);
	}
	assert_int_equal(pane_history(p), 8);
	char *t = pane_line_text(p, -1);
	assert_string_equal(t, "line8");
	free(t);
	t = pane_line_text(p, -8);
	assert_string_equal(t, "line1");
	free(t);
	struct wrx_cell cells[10];
	assert_int_equal(pane_line(p, -9, cells, 10), -1);
	/* Growing pulls history back onto the screen. */
	pane_resize(p, 5, 10);
	assert_int_equal(pane_history(p), 6);
	assert_int_equal(r.rows, 5);
	pane_free(p);
	buf_free(&r.out);
}

static void test_alt_screen_keeps_history(void **state)
{
	(void)state;
	struct rec r;
	struct pane *p = mk(&r, 3, 10);
	feed(p, "main\r\n");
	feed(p, "\033[?1049h");
	assert_true(pane_alt_screen(p));
	feed(p, "full\r\nscreen\r\napp\r\nmore\r\n");
	assert_int_equal(pane_history(p), 0);
	feed(p, "\033[?1049l");
	assert_false(pane_alt_screen(p));
	char *t = pane_line_text(p, 0);
	assert_string_equal(t, "main");
	free(t);
	pane_free(p);
	buf_free(&r.out);
}

static void test_wide_and_invalid_utf8(void **state)
{
	(void)state;
	struct rec r;
	struct pane *p = mk(&r, 3, 10);
	feed(p, "中\xff\xfe😀e\xcc\x81");
	struct wrx_cell c;
	pane_cell(p, 0, 0, &c);
	assert_int_equal(c.ch[0], 0x4e2d);
	assert_int_equal(c.width, 2);
	pane_cell(p, 0, 1, &c);
	assert_int_equal(c.width, 0);
	char *t = pane_line_text(p, 0);
	assert_non_null(strstr(t, "😀"));
	assert_non_null(strstr(t, "e\xcc\x81"));
	free(t);
	pane_free(p);
	buf_free(&r.out);
}

static void test_keys_follow_program_modes(void **state)
{
	(void)state;
	struct rec r;
	struct pane *p = mk(&r, 3, 10);
	pane_key(p, WRX_KEY_UP, 0);
	assert_string_equal(r.out.data, "\033[A");
	buf_consume(&r.out, r.out.len);
	feed(p, "\033[?1h"); /* application cursor keys */
	pane_key(p, WRX_KEY_UP, 0);
	assert_string_equal(r.out.data, "\033OA");
	buf_consume(&r.out, r.out.len);
	pane_key(p, WRX_KEY_UP, WRX_MOD_CTRL);
	assert_string_equal(r.out.data, "\033[1;5A");
	buf_consume(&r.out, r.out.len);
	pane_paste(p, "hi", 2);
	assert_string_equal(r.out.data, "hi");
	buf_consume(&r.out, r.out.len);
	feed(p, "\033[?2004h");
	pane_paste(p, "hi", 2);
	assert_string_equal(r.out.data, "\033[200~hi\033[201~");
	buf_consume(&r.out, r.out.len);
	pane_char(p, 'q', 0);
	assert_string_equal(r.out.data, "q");
	pane_free(p);
	buf_free(&r.out);
}

static void test_mouse_and_queries(void **state)
{
	(void)state;
	struct rec r;
	struct pane *p = mk(&r, 5, 20);
	assert_int_equal(pane_mouse_mode(p), WRX_MOUSE_NONE);
	feed(p, "\033[?1000h\033[?1006h");
	assert_int_equal(pane_mouse_mode(p), WRX_MOUSE_CLICK);
	pane_mouse(p, 2, 3, 1, true, 0);
	assert_string_equal(r.out.data, "\033[<0;4;3M");
	buf_consume(&r.out, r.out.len);
	/* A device-status query is answered towards the program. */
	feed(p, "\033[6n");
	assert_non_null(strstr(r.out.data, "R"));
	pane_free(p);
	buf_free(&r.out);
}

static void test_exit_and_resize_floor(void **state)
{
	(void)state;
	struct rec r;
	struct pane *p = mk(&r, 3, 10);
	pane_resize(p, 0, 0);
	assert_int_equal(pane_rows(p), 1);
	assert_int_equal(pane_cols(p), 2);
	/* libvterm 0.1.4 crashed on a wide character in one column. */
	feed(p, "\xe7\xa0\x93\xe4\xb8\xad");
	feed(p, "abc\r\ndef");
	pane_resize(p, 200, 500);
	assert_int_equal(pane_cols(p), 500);
	int status = 0;
	assert_false(pane_exited(p, &status));
	pane_set_exited(p, 3 << 8);
	assert_true(pane_exited(p, &status));
	assert_int_equal(status, 3 << 8);
	assert_true(r.events & PANE_EV_EXIT);
	pane_free(p);
	buf_free(&r.out);
}

/* What a new mirror is given before it has an io (its keeper starting), in order. */
static struct buf early_seen;

static void early_input(void *ctx, const struct pane_input *in)
{
	(void)ctx;
	if (in->kind == PANE_IN_CHAR)
		buf_addf(&early_seen, "c%c", (char)in->cp);
	else if (in->kind == PANE_IN_PASTE)
		buf_addf(&early_seen, "p%.*s", (int)in->len, in->buf);
	else if (in->kind == PANE_IN_SCROLLBACK)
		buf_addf(&early_seen, "s%zu", in->len);
	else if (in->kind == PANE_IN_VIEW)
		buf_addf(&early_seen, "v%d", in->pressed);
	else
		buf_addf(&early_seen, "?");
}

static int early_write(void *ctx, const char *b, size_t len)
{
	(void)ctx;
	buf_addf(&early_seen, "w%.*s", (int)len, b);
	return 0;
}

static void test_mirror_keeps_early_input(void **state)
{
	(void)state;
	struct pane *m = pane_mirror_new(4, 10, 0, NULL, NULL);
	pane_char(m, 'a', 0);
	pane_paste(m, "xyz", 3);
	pane_write(m, "raw", 3);
	/* A scrollback limit (a config reload as the keeper starts): a count, no bytes. */
	pane_set_scrollback(m, 5000);
	pane_view(m, false);
	char big[1000] = {0};
	for (int i = 0; i < 2000; i++) /* past the bound: dropped, not grown */
		pane_paste(m, big, sizeof big);
	const struct pane_io io = {.write = early_write, .input = early_input};
	pane_set_io(m, &io);
	assert_true(strncmp(early_seen.data, "capxyzwraws5000", 15) == 0);
	assert_true(early_seen.len < 1100 * 1000);
	/* Not shown: said once, after what was typed. */
	assert_string_equal(early_seen.data + early_seen.len - 2, "v0");
	assert_ptr_equal(strstr(early_seen.data, "v0"), early_seen.data + early_seen.len - 2);
	/* Once it had an io, nothing is kept for a later one; a new io hears it is hidden. */
	pane_unset_io(m);
	early_seen.len = 0;
	pane_char(m, 'b', 0);
	pane_set_io(m, &io);
	assert_int_equal(early_seen.len, 2);
	assert_memory_equal(early_seen.data, "v0", 2);
	pane_free(m);
	buf_free(&early_seen);
}

/* The sizes a mirror asked its keeper for, in order. */
static int asked[8][2], nasked;

static void asked_resize(void *ctx, int rows, int cols)
{
	(void)ctx;
	if (nasked < 8) {
		asked[nasked][0] = rows;
		asked[nasked][1] = cols;
	}
	nasked++;
}

/*
 * A keeper's update that was on its way as the mirror asked for another
 * size sets the mirror back to the old one; asked for that old size again,
 * the mirror tells the keeper, which is at the size asked before.
 */
static void test_mirror_asks_again_after_a_stale_size(void **state)
{
	(void)state;
	struct pane *m = pane_mirror_new(33, 80, 0, NULL, NULL);
	const struct pane_io io = {.resize = asked_resize};
	pane_set_io(m, &io);
	nasked = 0;             /* what setting the io said */
	pane_resize(m, 17, 80); /* into the stack */
	assert_int_equal(nasked, 1);
	pane_mirror_size(m, 33, 80); /* the keeper's update, sent before it read that */
	pane_resize(m, 33, 80);      /* focused again: the keeper is at 17 */
	assert_int_equal(nasked, 2);
	assert_int_equal(asked[1][0], 33);
	pane_resize(m, 33, 80); /* asked already: nothing new */
	assert_int_equal(nasked, 2);
	pane_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_and_attributes),
		cmocka_unit_test(test_mirror_keeps_early_input),
		cmocka_unit_test(test_mirror_asks_again_after_a_stale_size),
		cmocka_unit_test(test_line_with_sgr),
		cmocka_unit_test(test_title_split_across_writes),
		cmocka_unit_test(test_clipboard_write),
		cmocka_unit_test(test_unterminated_string_is_bounded),
		cmocka_unit_test(test_scrollback_collects_lines),
		cmocka_unit_test(test_alt_screen_keeps_history),
		cmocka_unit_test(test_wide_and_invalid_utf8),
		cmocka_unit_test(test_keys_follow_program_modes),
		cmocka_unit_test(test_mouse_and_queries),
		cmocka_unit_test(test_exit_and_resize_floor),
	};
	return cmocka_run_group_tests_name("pane", tests, NULL, NULL);
}
