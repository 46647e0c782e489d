/*
 * Tests for src/keeper/sync.c: a mirror fed a pane's updates shows what the
 * pane shows (screen, history, cursor, modes, title, exit), whatever the
 * program printed and however the pane was resized between updates; and an
 * update cut short or garbled is refused without harm.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "keeper/sync.h"
#include "term/pane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *line_sgr(const struct pane *p, int line)
{
	struct buf b = {0};
	pane_line_append_sgr(p, line, 0, &b);
	return b.data ? b.data : strdup("");
}

static void same(const struct pane *p, const struct pane *m, const char *where)
{
	if (pane_rows(p) != pane_rows(m) || pane_cols(p) != pane_cols(m))
		fail_msg("%s: size %dx%d, mirror %dx%d", where, pane_rows(p), pane_cols(p),
			 pane_rows(m), pane_cols(m));
	if (pane_history(p) != pane_history(m))
		fail_msg("%s: history %zu, mirror %zu", where, pane_history(p), pane_history(m));
	for (int l = -(int)pane_history(p); l < pane_rows(p); l++) {
		char *a = line_sgr(p, l), *b = line_sgr(m, l);
		if (strcmp(a, b))
			fail_msg("%s: line %d\n  pane   '%s'\n  mirror '%s'", where, l, a, b);
		if (pane_line_wrapped(p, l) != pane_line_wrapped(m, l))
			fail_msg("%s: line %d wrapped %d, mirror %d", where, l,
				 pane_line_wrapped(p, l), pane_line_wrapped(m, l));
		free(a);
		free(b);
	}
	int r1, c1, s1, r2, c2, s2;
	bool v1, v2;
	pane_cursor(p, &r1, &c1, &v1, &s1);
	pane_cursor(m, &r2, &c2, &v2, &s2);
	if (r1 != r2 || c1 != c2 || v1 != v2 || s1 != s2)
		fail_msg("%s: cursor %d,%d %d %d, mirror %d,%d %d %d", where, r1, c1, v1, s1, r2,
			 c2, v2, s2);
	assert_int_equal(pane_alt_screen(p), pane_alt_screen(m));
	assert_int_equal(pane_mouse_mode(p), pane_mouse_mode(m));
	assert_string_equal(pane_title(p), pane_title(m));
}

static void piece(unsigned *seed, int rows, int cols, struct buf *out)
{
	static const char *fixed[] = {"\r\n",
				      "\n",
				      "\r",
				      "\t",
				      "\033M",
				      "\033[?1049h",
				      "\033[?1049l",
				      "\033[?25l",
				      "\033[?25h",
				      "\033[?1000h",
				      "\033[?1000l",
				      "\033[2 q",
				      "\033[?7l",
				      "\033[?7h",
				      "\033[2J",
				      "\033[0m",
				      "\033[1;31m",
				      "\033[4:3m",
				      "\033[58;5;3m",
				      "\033]2;tit\a",
				      "\033]0;le\033\\",
				      "\a",
				      "\u754c\u754c",
				      "e\u0301",
				      "\033[48;2;1;2;3m",
				      "\033[K",
				      "\033[3L",
				      "\033[2M",
				      "\033[5@",
				      "\033[r"};
	static const char *words[] = {"agent ", "x", "merge-worktree", "    ", "status", "$ "};
	unsigned r = (unsigned)rand_r(seed) % 100;
	if (r < 40) {
		buf_addstr(out, words[rand_r(seed) % (int)WRX_ARRAY_LEN(words)]);
	} else if (r < 75) {
		buf_addstr(out, fixed[rand_r(seed) % (int)WRX_ARRAY_LEN(fixed)]);
	} else if (r < 90) {
		int a = 1 + rand_r(seed) % (rows + 1);
		int b = 1 + rand_r(seed) % (cols + 1);
		buf_addf(out, "\033[%d;%dH", a, b);
	} else {
		int a = 1 + rand_r(seed) % rows;
		int b = 1 + rand_r(seed) % rows;
		buf_addf(out, "\033[%d;%dr", WRX_MIN(a, b), WRX_MAX(a, b));
	}
}

static void test_random_streams_mirrored(void **state)
{
	(void)state;
	for (unsigned round = 0; round < 40; round++) {
		unsigned seed = round * 104729 + 3;
		int rows = 2 + (int)(round % 9) * 3, cols = 4 + (int)((round * 17) % 60);
		struct pane *p = pane_new(rows, cols, 50 + round * 7, NULL, NULL);
		struct pane *m = pane_mirror_new(5, 5, 10, NULL, NULL);
		struct sync_since since = {0};
		struct buf piece_b = {0}, up = {0};
		bool owed = false;
		for (int step = 0; step < 500; step++) {
			if (rand_r(&seed) % 60 == 0) {
				rows = 1 + rand_r(&seed) % 30;
				cols = 2 + rand_r(&seed) % 70;
				pane_resize(p, rows, cols);
			}
			buf_consume(&piece_b, piece_b.len);
			piece(&seed, rows, cols, &piece_b);
			pane_feed(p, piece_b.data, piece_b.len);
			if (rand_r(&seed) % 4)
				continue;
			buf_consume(&up, up.len);
			/* A third of the updates held (the pane hidden): the next full one catches up. */
			bool held = rand_r(&seed) % 3 == 0;
			size_t hist = pane_history(m);
			held = held && since.sent; /* the first is whole */
			bool sent = sync_write(p, &since, 0, held, &up);
			if (sent)
				assert_int_equal(sync_apply(m, up.data, up.len), 0);
			if (held) {
				owed = true; /* rows and history wait, sent or not */
				assert_true(!sent || pane_held(m));
				assert_int_equal(pane_history(m), hist);
				continue;
			}
			if (owed && !sent)
				continue;
			owed = false;
			char where[64];
			snprintf(where, sizeof where, "round %u step %d", round, step);
			same(p, m, where);
		}
		buf_free(&piece_b);
		buf_free(&up);
		pane_free(p);
		pane_free(m);
	}
}

/* A second client starts from nothing and gets the whole pane; the first only what changed. */
static void test_clients_and_exit(void **state)
{
	(void)state;
	struct pane *p = pane_new(4, 10, 100, NULL, NULL);
	struct pane *a = pane_mirror_new(4, 10, 100, NULL, NULL);
	struct pane *b = pane_mirror_new(1, 2, 1, NULL, NULL);
	struct sync_since sa = {0}, sb = {0};
	struct buf up = {0};
	const char *text = "one\r\ntwo\r\nthree\r\nfour\r\nfive\r\nsix";
	pane_feed(p, text, strlen(text));
	assert_true(sync_write(p, &sa, 0, false, &up));
	assert_int_equal(sync_apply(a, up.data, up.len), 0);
	size_t whole = up.len;
	buf_consume(&up, up.len);
	assert_false(sync_write(p, &sa, 0, false, &up)); /* nothing changed */
	pane_feed(p, "!", 1);
	assert_true(sync_write(p, &sa, 0, false, &up));
	assert_true(up.len < whole / 2); /* one row, no history */
	assert_int_equal(sync_apply(a, up.data, up.len), 0);
	buf_consume(&up, up.len);
	pane_set_exited(p, 7 << 8);
	assert_true(sync_write(p, &sb, 0, false, &up));
	assert_int_equal(sync_apply(b, up.data, up.len), 0);
	same(p, a, "a");
	same(p, b, "b");
	int status = 0;
	assert_true(pane_exited(b, &status));
	assert_int_equal(status, 7 << 8);
	assert_int_equal(pane_history(b), 2);
	buf_free(&up);
	pane_free(p);
	pane_free(a);
	pane_free(b);
}

/*
 * Held updates (a client that hides the pane) carry the title, the exit and
 * the events, never rows or history; a forced update answers even when
 * nothing changed, and brings everything owed.
 */
static void test_held_updates(void **state)
{
	(void)state;
	struct pane *p = pane_new(4, 10, 100, NULL, NULL);
	struct pane *m = pane_mirror_new(4, 10, 100, NULL, NULL);
	struct sync_since since = {0};
	struct buf up = {0};
	pane_feed(p, "one\r\ntwo", 8);
	assert_true(sync_write(p, &since, 0, true, &up)); /* the first is whole, held or not */
	assert_int_equal(sync_apply(m, up.data, up.len), 0);
	assert_false(pane_held(m));
	uint64_t fresh = pane_fresh(m);
	same(p, m, "first");
	const char *more = "\033]2;busy\007\r\n3\r\n4\r\n5\r\n6\r\n7";
	pane_feed(p, more, strlen(more));
	buf_consume(&up, up.len);
	assert_true(sync_write(p, &since, PANE_EV_OUTPUT, true, &up));
	assert_true(up.len < 64); /* the state alone */
	assert_int_equal(sync_apply(m, up.data, up.len), 0);
	assert_true(pane_held(m));
	assert_int_equal(pane_fresh(m), fresh);
	assert_string_equal(pane_title(m), "busy");
	assert_int_equal(pane_history(m), 0);
	char *row = pane_line_text(m, 0);
	assert_string_equal(row, "one");
	free(row);
	buf_consume(&up, up.len);
	assert_false(sync_write(p, &since, 0, true, &up)); /* nothing new to say */
	since.force = true;
	assert_true(sync_write(p, &since, 0, false, &up));
	assert_int_equal(sync_apply(m, up.data, up.len), 0);
	assert_false(pane_held(m));
	assert_int_equal(pane_fresh(m), fresh + 1);
	same(p, m, "caught up");
	buf_consume(&up, up.len);
	since.force = true;
	assert_true(sync_write(p, &since, 0, false, &up)); /* forced: an answer, if empty */
	assert_int_equal(sync_apply(m, up.data, up.len), 0);
	assert_int_equal(pane_fresh(m), fresh + 2);
	buf_free(&up);
	pane_free(p);
	pane_free(m);
}

static void test_garbled_updates_refused(void **state)
{
	(void)state;
	struct pane *p = pane_new(6, 20, 100, NULL, NULL);
	const char *text = "\033[31mred\r\n\u754cwide\r\nmore\r\nand\r\nmore\r\nlines\r\nstill\r\n";
	for (int i = 0; i < 3; i++)
		pane_feed(p, text, strlen(text));
	struct sync_since since = {0};
	struct buf up = {0};
	assert_true(sync_write(p, &since, PANE_EV_BELL, false, &up));
	for (size_t n = 0; n < up.len; n++) {
		struct pane *m = pane_mirror_new(3, 3, 10, NULL, NULL);
		assert_int_equal(sync_apply(m, up.data, n), -1);
		pane_free(m);
	}
	unsigned seed = 5;
	for (int k = 0; k < 2000; k++) {
		struct pane *m = pane_mirror_new(3, 3, 10, NULL, NULL);
		char *bad = malloc(up.len);
		memcpy(bad, up.data, up.len);
		bad[rand_r(&seed) % up.len] ^= (char)(1 + rand_r(&seed) % 255);
		(void)sync_apply(m, bad, up.len); /* refused or not: no harm either way */
		free(bad);
		pane_free(m);
	}
	/* A real pane is not a mirror. */
	assert_int_equal(sync_apply(p, up.data, up.len), -1);
	buf_free(&up);
	pane_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_streams_mirrored),
		cmocka_unit_test(test_clients_and_exit),
		cmocka_unit_test(test_held_updates),
		cmocka_unit_test(test_garbled_updates_refused),
	};
	return cmocka_run_group_tests_name("sync", tests, NULL, NULL);
}
