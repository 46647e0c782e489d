/*
 * Tests for src/core/session.c with no pty: each pane's bytes come through
 * the pane_start seam (a recording pane_io, output fed with pane_feed), so
 * focus, attention, status, silence, bells, agent numbers and closing are
 * checked exactly, with no program and no timing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/session.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	int changed, gone, bells, attention, started;
	char what[32];    /* the last attention's reason */
	struct buf typed; /* what went to the programs */
	int fail_start;   /* the next pane_start fails */
} seen;

static int io_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	buf_add(&seen.typed, buf, len);
	return 0;
}

static void io_resize(void *ctx, int rows, int cols)
{
	(void)ctx;
	(void)rows;
	(void)cols;
}

static void io_close(void *ctx)
{
	(void)ctx;
}

static const struct pane_io fake_io = {.write = io_write, .resize = io_resize, .close = io_close};

static int fake_start(void *ui, struct wpane *wp, const struct pty_spawn *sp, char **cause)
{
	(void)ui;
	(void)sp;
	if (seen.fail_start) {
		seen.fail_start = 0;
		*cause = xstrdup("no such program");
		return -ENOENT;
	}
	seen.started++;
	pane_set_io(wp->term, &fake_io);
	return 0;
}

static void on_changed(void *ui)
{
	(void)ui;
	seen.changed++;
}

static void on_gone(void *ui, struct wpane *wp)
{
	(void)ui;
	(void)wp;
	seen.gone++;
}

static void on_bell(void *ui, struct wpane *wp)
{
	(void)ui;
	(void)wp;
	seen.bells++;
}

static void on_attention(void *ui, struct agent *a, const char *what)
{
	(void)ui;
	(void)a;
	seen.attention++;
	snprintf(seen.what, sizeof seen.what, "%s", what);
}

static const struct session_hooks hooks = {
	.changed = on_changed,
	.pane_gone = on_gone,
	.bell = on_bell,
	.attention = on_attention,
	.pane_start = fake_start,
};

static struct session *s;
static struct agent *a, *b;
static struct wpane *pa, *pb;

static struct wpane *open_pane(struct agent *ag, bool focus)
{
	char *argv[] = {"prog", NULL}, *cause = NULL;
	struct wpane *wp = session_open_pane(s, ag, argv, 10, 40, focus, &cause);
	assert_non_null(wp);
	return wp;
}

static int setup(void **state)
{
	(void)state;
	memset(&seen, 0, sizeof seen);
	s = session_new(uv_default_loop(), &hooks, NULL);
	a = session_add_agent(s, "a", "/tmp");
	b = session_add_agent(s, "b", "/tmp");
	pa = open_pane(a, true);
	pb = open_pane(b, false);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	session_free(s);
	buf_free(&seen.typed);
	return 0;
}

static void test_open_through_the_seam(void **state)
{
	(void)state;
	assert_int_equal(seen.started, 2);
	assert_int_equal(session_pane_count(s), 2);
	assert_ptr_equal(session_focus(s), pa); /* the first pane takes focus; b's did not ask */
	/* Keys reach the program through the pane's io. */
	pane_write(pa->term, "ls\r", 3);
	assert_int_equal(seen.typed.len, 3);
	assert_memory_equal(seen.typed.data, "ls\r", 3);
	/* Output reaches the screen. */
	pane_feed(pb->term, "hello", 5);
	char *t = pane_line_text(pb->term, 0);
	assert_string_equal(t, "hello");
	free(t);
	/* A program that cannot start: no pane, the cause, its token gone. */
	seen.fail_start = 1;
	char *argv[] = {"nope", NULL}, *cause = NULL;
	assert_null(session_open_pane(s, a, argv, 10, 40, false, &cause));
	assert_string_equal(cause, "no such program");
	free(cause);
	assert_int_equal(seen.gone, 1);
	assert_int_equal(session_pane_count(s), 2);
}

static void test_attention(void **state)
{
	(void)state;
	/* Waiting on an agent not focused: attention, once per change. */
	session_set_status(s, b, WRX_STATUS_WAITING);
	assert_true(b->attention);
	assert_int_equal(seen.attention, 1);
	assert_string_equal(seen.what, "waiting");
	session_set_status(s, b, WRX_STATUS_WAITING);
	assert_int_equal(seen.attention, 1);
	session_set_status(s, b, WRX_STATUS_DONE);
	assert_int_equal(seen.attention, 2);
	assert_string_equal(seen.what, "done");
	/* The focused agent's own done asks nothing. */
	session_set_status(s, a, WRX_STATUS_DONE);
	assert_false(a->attention);
	assert_int_equal(seen.attention, 2);
	/* Focusing b clears its attention, not its status: done stays until it says otherwise. */
	session_focus_agent(s, 1);
	assert_ptr_equal(session_focus(s), pb);
	assert_false(b->attention);
	assert_int_equal(b->status, WRX_STATUS_DONE);
	/* Working again clears a raised attention too. */
	session_set_status(s, a, WRX_STATUS_WAITING);
	assert_true(a->attention);
	session_set_status(s, a, WRX_STATUS_WORKING);
	assert_false(a->attention);
}

/*
 * An agent's program that ends badly before saying done is failed, with how
 * it ended and the last line it printed; one that ends well, or had said
 * done, is done.
 */
static void test_failed(void **state)
{
	(void)state;
	const char *out = "starting\r\nclaude: no API key\r\n\r\n";
	pane_feed(pb->term, out, strlen(out));
	pane_set_exited(pb->term, 1 << 8); /* exit 1 */
	assert_int_equal(b->status, WRX_STATUS_FAILED);
	assert_string_equal(b->failure, "exit 1: claude: no API key");
	assert_true(b->attention);
	assert_string_equal(seen.what, "failed");
	/* A status it reports later replaces it, and how it failed with it. */
	session_set_status(s, b, WRX_STATUS_WORKING);
	assert_null(b->failure);
	session_set_status(s, a, WRX_STATUS_DONE);
	pane_set_exited(pa->term, 9); /* killed */
	assert_int_equal(a->status, WRX_STATUS_DONE);
	assert_null(a->failure);
}

static void test_silence(void **state)
{
	(void)state;
	session_set_status(s, a, WRX_STATUS_WORKING);
	/* Working since a second ago (wall time); its last output now (now_ms()). */
	a->status_since = wall_ms() - 1000;
	uint64_t since = now_ms();
	pa->last_output = since;
	assert_false(session_interrupted(s, a, since + WRX_SILENCE_MS - 1));
	assert_true(session_interrupted(s, a, since + WRX_SILENCE_MS));
	/* Output pushes it back. */
	pa->last_output = since + 5000;
	assert_false(session_interrupted(s, a, since + WRX_SILENCE_MS));
	/* Only working can be interrupted. */
	session_set_status(s, a, WRX_STATUS_NONE);
	assert_false(session_interrupted(s, a, since + 10 * WRX_SILENCE_MS));
	/* An exited agent program is done, and not interrupted. */
	session_set_status(s, a, WRX_STATUS_WORKING);
	pane_set_exited(pa->term, 0);
	assert_int_equal(a->status, WRX_STATUS_DONE);
	assert_false(session_interrupted(s, a, since + 10 * WRX_SILENCE_MS));
}

static void test_bell(void **state)
{
	(void)state;
	pane_feed(pb->term, "\a", 1);
	assert_int_equal(seen.bells, 1);
	/* The session reports it; what a bell means (flags, the terminal's bell) is the core's. */
	pane_feed(pa->term, "\a", 1);
	assert_int_equal(seen.bells, 2);
}

static void test_numbers_and_focus_cycle(void **state)
{
	(void)state;
	assert_int_equal(a->num, 1);
	assert_int_equal(b->num, 2);
	struct wpane *pa2 = open_pane(a, false);
	/* A new pane goes after its agent's last pane. */
	assert_int_equal(session_pane_index(s, pa2), 1);
	/* Focusing the focused agent again cycles its panes. */
	session_focus_agent(s, 0);
	assert_ptr_equal(session_focus(s), pa2);
	session_focus_agent(s, 0);
	assert_ptr_equal(session_focus(s), pa);
	/* An agent that goes frees its number; the lowest free one is taken next. */
	session_remove_agent(s, a);
	assert_int_equal(session_agent_count(s), 1);
	assert_int_equal(seen.gone, 2);
	assert_ptr_equal(session_focus(s), pb);
	struct agent *c = session_add_agent(s, "c", "/tmp");
	assert_int_equal(c->num, 1);
	assert_int_equal(session_agent_by_num(s, 2), 0);
	/* A recorded number is kept unless another agent has it. */
	session_set_agent_num(s, c, 2);
	assert_int_equal(c->num, 1);
	session_set_agent_num(s, c, 7);
	assert_int_equal(c->num, 7);
}

static void test_close_moves_focus(void **state)
{
	(void)state;
	struct wpane *pa2 = open_pane(a, true);
	assert_ptr_equal(session_focus(s), pa2);
	session_close_pane(s, pa2);
	assert_int_equal(seen.gone, 1);
	assert_non_null(session_focus(s));
	assert_int_equal(session_pane_count(s), 2);
	session_close_pane(s, pa);
	session_close_pane(s, pb);
	assert_null(session_focus(s));
	assert_int_equal(session_pane_count(s), 0);
	assert_int_equal(seen.gone, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_through_the_seam, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bell, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numbers_and_focus_cycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_moves_focus, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
