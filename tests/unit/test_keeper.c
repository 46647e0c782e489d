/*
 * Tests for src/keeper/proto.c: frames whole, cut and hostile; input
 * events on the wire and back; what is not an input event refused. And
 * src/keeper/mark.c: an agent's mark, as older builds wrote it and now.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "keeper/mark.h"
#include "keeper/proto.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

static void test_frames_whole_and_cut(void **state)
{
	(void)state;
	struct buf b = {0};
	keeper_frame(&b, KM_HELLO, "{}", 2);
	size_t at = keeper_frame_open(&b, KM_UPDATE);
	buf_addstr(&b, "payload");
	keeper_frame_close(&b, at);
	keeper_frame(&b, KM_KILL, NULL, 0);
	/* Every prefix holds the frames it holds whole, and waits for the rest. */
	for (size_t n = 0; n <= b.len; n++) {
		struct buf part = {0};
		buf_add(&part, b.data, n);
		size_t off = 0;
		int type, got = 0, r;
		const char *data;
		size_t len;
		while ((r = keeper_frame_next(&part, &off, &type, &data, &len)) == 1) {
			got++;
			if (type == KM_UPDATE) {
				assert_int_equal(len, 7);
				assert_memory_equal(data, "payload", 7);
			}
		}
		assert_int_equal(r, 0);
		assert_int_equal(got, n == b.len ? 3 : n >= 7 + 12 ? 2 : n >= 7 ? 1 : 0);
		buf_free(&part);
	}
	buf_free(&b);
}

static void test_hostile_lengths_refused(void **state)
{
	(void)state;
	uint32_t lens[] = {0, KEEPER_FRAME_MAX + 1, UINT32_MAX};
	for (size_t i = 0; i < WRX_ARRAY_LEN(lens); i++) {
		struct buf b = {0};
		buf_add(&b, &lens[i], sizeof lens[i]);
		buf_addstr(&b, "xxxx");
		size_t off = 0;
		int type;
		const char *data;
		size_t len;
		assert_int_equal(keeper_frame_next(&b, &off, &type, &data, &len), -1);
		buf_free(&b);
	}
}

static void test_input_round_trip(void **state)
{
	(void)state;
	struct pane_input in[] = {
		{.kind = PANE_IN_KEY, .key = 5, .mods = 4},
		{.kind = PANE_IN_CHAR, .cp = 0x754c, .mods = 2},
		{.kind = PANE_IN_PASTE, .buf = "pasted\ntext", .len = 11},
		{.kind = PANE_IN_MOUSE, .row = 3, .col = 70, .button = 4, .pressed = true},
		{.kind = PANE_IN_FOCUS, .pressed = true},
		{.kind = PANE_IN_SCROLLBACK, .len = 5000},
	};
	for (size_t i = 0; i < WRX_ARRAY_LEN(in); i++) {
		struct buf b = {0};
		keeper_input_put(&b, &in[i]);
		struct pane_input out;
		assert_int_equal(keeper_input_get(b.data, b.len, &out), 0);
		assert_int_equal(out.kind, in[i].kind);
		assert_int_equal(out.key, in[i].key);
		assert_int_equal(out.mods, in[i].mods);
		assert_int_equal(out.cp, in[i].cp);
		assert_int_equal(out.row, in[i].row);
		assert_int_equal(out.col, in[i].col);
		assert_int_equal(out.button, in[i].button);
		assert_int_equal(out.pressed, in[i].pressed);
		if (in[i].kind == PANE_IN_PASTE || in[i].kind == PANE_IN_SCROLLBACK)
			assert_int_equal(out.len, in[i].len);
		if (in[i].kind == PANE_IN_PASTE)
			assert_memory_equal(out.buf, in[i].buf, in[i].len);
		/* Cut short, or of no kind: refused. */
		assert_int_equal(keeper_input_get(b.data, 8, &out), -1);
		int32_t bad = 99;
		memcpy(b.data, &bad, sizeof bad);
		assert_int_equal(keeper_input_get(b.data, b.len, &out), -1);
		buf_free(&b);
	}
}

/* The mark: written only where there is one (unless made); read as older builds left it. */
static void test_mark_old_and_new(void **state)
{
	(void)state;
	char dir[] = "/tmp/wrx-mark-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *f = xasprintf("%s/kept", dir), *session, *meta;
	assert_int_equal(mark_write(f, "abc-1", "{}", false), -ENOENT);
	assert_int_equal(access(f, F_OK), -1);
	assert_int_equal(mark_write(f, NULL, NULL, true), 0);
	assert_int_equal(mark_read(f, &session, &meta), 0);
	assert_null(session);
	assert_null(meta);
	const char *m = "{\"status\":\"failed\",\"since\":1700000000000,\"failure\":\"exit 3\"}";
	assert_int_equal(mark_write(f, "abc-1", m, false), 0);
	assert_int_equal(mark_read(f, &session, &meta), 0);
	assert_string_equal(session, "abc-1");
	assert_string_equal(meta, m);
	free(session);
	free(meta);
	/* An older build's: the session id, one line. */
	FILE *o = fopen(f, "w");
	fputs("4f1c-9e2a_B.7\n", o);
	fclose(o);
	assert_int_equal(mark_read(f, &session, &meta), 0);
	assert_string_equal(session, "4f1c-9e2a_B.7");
	assert_null(meta);
	free(session);
	/* A session id that is not one (shell code) is none. */
	assert_int_equal(mark_write(f, "x;touch /tmp/pwned", NULL, false), 0);
	assert_int_equal(mark_read(f, &session, &meta), 0);
	assert_null(session);
	unlink(f);
	free(f);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_whole_and_cut),
		cmocka_unit_test(test_hostile_lengths_refused),
		cmocka_unit_test(test_input_round_trip),
		cmocka_unit_test(test_mark_old_and_new),
	};
	return cmocka_run_group_tests_name("keeper", tests, NULL, NULL);
}
