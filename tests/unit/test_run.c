/*
 * Tests for src/core/run.c and src/keeper/spawner.c: children started on
 * the loop, here and through a spawner (this binary run as
 * `test_run __spawner`), their output, input, status, directory and
 * environment; a child of the spawner is the loop's own (its parent pid
 * is ours); a spawner killed mid-way leaves the loop starting its
 * children itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/run.h"
#include "keeper/spawner.h"
#include "util/util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char self[4096];

struct got {
	int status, calls;
	char *output, *last;
	struct buf out, err;
	int code;
};

static void done(void *arg, int status, const char *output, const char *last)
{
	struct got *g = arg;
	g->calls++;
	g->status = status;
	g->output = xstrdup(output);
	g->last = xstrdup(last);
}

static void got_free(struct got *g)
{
	free(g->output);
	free(g->last);
	buf_free(&g->out);
	buf_free(&g->err);
}

static struct got run_sh(uv_loop_t *loop, const char *script, const char *cwd, const char *input)
{
	char *argv[] = {"sh", "-c", (char *)script, NULL};
	struct got g = {0};
	struct run_opts o = {.argv = argv, .cwd = cwd, .input = input, .done = done, .arg = &g};
	assert_int_equal(run_start(loop, &o), 0);
	uv_run(loop, UV_RUN_DEFAULT);
	assert_int_equal(g.calls, 1);
	return g;
}

/* Output gathered, the last line, input, directory, the status; and the parent. */
static void runs(uv_loop_t *loop)
{
	struct got g = run_sh(loop, "echo one; echo two >&2; exit 3", NULL, NULL);
	assert_int_equal(g.status, 3);
	assert_string_equal(g.output, "one\ntwo");
	assert_string_equal(g.last, "two");
	got_free(&g);

	g = run_sh(loop, "pwd; cat; echo \"$PPID\"", "/tmp", "typed\n");
	char *want = xasprintf("/tmp\ntyped\n%d", (int)getpid());
	assert_string_equal(g.output, want);
	assert_int_equal(g.status, 0);
	free(want);
	got_free(&g);

	g = run_sh(loop, "kill -9 $$", NULL, NULL);
	assert_int_equal(g.status, 128 + 9);
	got_free(&g);

	/* No such directory: it says so, as a command that failed. */
	g = run_sh(loop, "true", "/nonexistent-wrx", NULL);
	assert_int_equal(g.status, 127);
	assert_non_null(strstr(g.last, "cannot enter /nonexistent-wrx"));
	got_free(&g);

	/* Not on PATH: refused at once, nothing started. */
	char *none[] = {"wrx-no-such-program", NULL};
	struct run_opts o = {.argv = none, .done = done};
	assert_int_equal(run_start(loop, &o), -ENOENT);
	char plain[] = "/tmp/wrx-run-XXXXXX"; /* no execute bit, even for root */
	close(mkstemp(plain));
	char *text[] = {plain, NULL};
	o.argv = text;
	assert_int_equal(run_start(loop, &o), -EACCES);
	unlink(plain);
}

static void stream_out(void *arg, int stream, const char *p, size_t n)
{
	struct got *g = arg;
	buf_add(stream == 1 ? &g->out : &g->err, p, n);
}

static void stream_exit(void *arg, int code)
{
	struct got *g = arg;
	g->calls++;
	g->code = code;
}

static struct got stream_sh(uv_loop_t *loop, const char *script, int timeout_ms)
{
	char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
	char *env[] = {"WRX_RUN_TEST=seen", "PATH=/usr/bin:/bin", NULL};
	struct got g = {0};
	struct run_stream r = {.argv = argv,
			       .env = env,
			       .timeout_ms = timeout_ms,
			       .output = stream_out,
			       .exit = stream_exit,
			       .arg = &g};
	assert_int_equal(run_stream(loop, &r), 0);
	uv_run(loop, UV_RUN_DEFAULT);
	assert_int_equal(g.calls, 1);
	buf_add(&g.out, "", 1);
	buf_add(&g.err, "", 1);
	return g;
}

/* Bytes of output in the loop's turn now, and the most in any turn. */
static size_t this_turn, most_in_a_turn;

static void turn_begins(uv_prepare_t *h)
{
	(void)h;
	this_turn = 0;
}

static void counted_out(void *arg, int stream, const char *p, size_t n)
{
	stream_out(arg, stream, p, n);
	this_turn += n;
	if (this_turn > most_in_a_turn)
		most_in_a_turn = this_turn;
}

/*
 * 2 MB at once comes a turn at a time, 64 KB and at most one read past it
 * (libuv would pass all of it in one turn), whole and in order.
 */
static void big_stream(uv_loop_t *loop)
{
	uv_prepare_t turn;
	uv_prepare_init(loop, &turn);
	uv_prepare_start(&turn, turn_begins);
	uv_unref((uv_handle_t *)&turn);
	most_in_a_turn = 0;
	char *argv[] = {"/bin/sh", "-c", "seq 1 300000", NULL};
	struct got g = {0};
	struct run_stream r = {.argv = argv, .output = counted_out, .exit = stream_exit, .arg = &g};
	assert_int_equal(run_stream(loop, &r), 0);
	uv_run(loop, UV_RUN_DEFAULT);
	assert_int_equal(g.calls, 1);
	assert_int_equal(g.code, 0);
	size_t want = 0;
	for (int i = 1; i <= 300000; i++)
		want += (size_t)snprintf(NULL, 0, "%d\n", i);
	assert_int_equal(g.out.len, want);
	assert_memory_equal(g.out.data + want - 14, "299999\n300000\n", 14);
	assert_true(most_in_a_turn > 0);
	assert_true(most_in_a_turn <= 2 * 65536);
	got_free(&g);
	uv_close((uv_handle_t *)&turn, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
}

/* stdout and stderr apart, its own environment, the limit of its time. */
static void streams(uv_loop_t *loop)
{
	big_stream(loop);
	struct got g = stream_sh(loop, "echo $WRX_RUN_TEST; echo err >&2; exit 5", 0);
	assert_string_equal(g.out.data, "seen\n");
	assert_string_equal(g.err.data, "err\n");
	assert_int_equal(g.code, 5);
	got_free(&g);

	g = stream_sh(loop, "exec sleep 30", 100);
	assert_int_equal(g.code, 128 + SIGKILL);
	got_free(&g);
}

static void test_here(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_loop_init(&loop);
	runs(&loop);
	streams(&loop);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static void nothing(uv_timer_t *t)
{
	(void)t;
}

static void test_through_the_spawner(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_loop_init(&loop);
	assert_int_equal(spawner_start(&loop, self), 0);
	runs(&loop);
	streams(&loop);

	/* Many at once: answers in the order asked, every child reaped. */
	struct got g[20] = {{0}};
	char *argv[] = {"sh", "-c", "echo $$", NULL};
	for (int i = 0; i < 20; i++) {
		struct run_opts o = {.argv = argv, .done = done, .arg = &g[i]};
		assert_int_equal(run_start(&loop, &o), 0);
	}
	uv_run(&loop, UV_RUN_DEFAULT);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(g[i].calls, 1);
		assert_int_equal(g[i].status, 0);
		assert_int_equal(waitpid(atoi(g[i].output), NULL, WNOHANG), -1); /* reaped */
		got_free(&g[i]);
	}

	/* The spawner killed: what waited hears why, and the next start is served here. */
	char *find[] = {"pgrep", "-P", NULL, "-f", "__spawner", NULL};
	find[2] = xasprintf("%d", (int)getpid());
	struct got p = {0};
	struct run_opts o = {.argv = find, .done = done, .arg = &p};
	assert_int_equal(run_start(&loop, &o), 0);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(p.status, 0);
	assert_int_equal(kill(atoi(p.last), SIGKILL), 0);
	free(find[2]);
	got_free(&p);
	uv_timer_t t; /* for the loop to hear it go */
	uv_timer_init(&loop, &t);
	uv_timer_start(&t, nothing, 300, 0);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_close((uv_handle_t *)&t, NULL);
	struct got after = run_sh(&loop, "echo $PPID", NULL, NULL);
	char *me = xasprintf("%d", (int)getpid());
	assert_string_equal(after.output, me);
	free(me);
	got_free(&after);

	spawner_stop();
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&loop), 0);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "__spawner") == 0)
		return spawner_main(argv[0]);
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_here),
		cmocka_unit_test(test_through_the_spawner),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
