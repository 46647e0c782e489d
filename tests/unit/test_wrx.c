/*
 * Tests for src/core/ with no terminal and no curses: a struct wrx started
 * headless on a real git repository, a real pane whose program speaks the
 * RPC bridge with its own token, its status changed through the agent
 * door, the table's policy refusing what an agent may not do, and the
 * control door closing the pane.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/actions.h"
#include "core/wrx.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
	int changed, gone, messages;
	struct wrx *w;
	bool want_status; /* stop the loop once the pane said all */
} seen;

static void on_changed(void *ui)
{
	(void)ui;
	seen.changed++;
	if (!seen.want_status)
		return;
	struct agent *a = session_agent(seen.w->s, 0);
	struct wpane *wp = session_agent_pane(seen.w->s, a);
	if (a->status != WRX_STATUS_WAITING || wp == NULL)
		return;
	/* Its last reply is on its screen: the merge it was refused. */
	for (int y = 0; y < pane_rows(wp->term); y++) {
		char *t = pane_line_text(wp->term, y);
		bool end = strstr(t, "END") != NULL;
		free(t);
		if (end) {
			uv_stop(seen.w->loop);
			return;
		}
	}
}

static void on_gone(void *ui, struct wpane *wp)
{
	(void)ui;
	(void)wp;
	seen.gone++;
}

static void on_message(void *ui, bool error, const char *text)
{
	(void)ui;
	(void)error;
	(void)text;
	seen.messages++;
}

static const struct wrx_hooks hooks = {
	.changed = on_changed,
	.pane_gone = on_gone,
	.message = on_message,
};

static void on_guard(uv_timer_t *t)
{
	(void)t;
	fail_msg("the pane's requests did not arrive in 20 s");
}

static char *screen_text(struct wpane *wp)
{
	struct buf b = {0};
	for (int y = 0; y < pane_rows(wp->term); y++) {
		char *t = pane_line_text(wp->term, y);
		buf_addf(&b, "%s\n", t);
		free(t);
	}
	return b.data;
}

/* A program that speaks the bridge as an agent's hook would, with the pane's token. */
static const char agent_py[] =
	"import json, os, socket, time\n"
	"s = socket.socket(socket.AF_UNIX); s.connect(os.environ['WORKREX_RPC_SOCKET'])\n"
	"f = s.makefile('rw')\n"
	"def call(o):\n"
	"    f.write(json.dumps(o) + '\\n'); f.flush(); return json.loads(f.readline())\n"
	"print('auth', call({'token': os.environ['WORKREX_RPC_TOKEN']})['type'])\n"
	"print('merge', call({'type': 'merge'}).get('message'))\n"
	"print('close', call({'type': 'close', 'handle': 'other'}).get('message'))\n"
	"print('status', call({'type': 'set_status', 'status': 'waiting'})['type'])\n"
	"print('END', flush=True)\n"
	"time.sleep(60)\n";

/*
 * A repository with one commit in dir (a mkdtemp template), with its own
 * runtime dir and home: the control socket and config are the test's.
 */
static void project(char *dir)
{
	assert_non_null(mkdtemp(dir));
	char *cmd =
		xasprintf("git init -q %s && git -C %s -c user.name=t -c user.email=t@t.invalid "
			  "commit -q --allow-empty -m init",
			  dir, dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	char *run = xasprintf("%s/run", dir), *home = xasprintf("%s/home", dir);
	assert_int_equal(mkdir(run, 0700), 0);
	assert_int_equal(mkdir(home, 0700), 0);
	setenv("XDG_RUNTIME_DIR", run, 1);
	setenv("HOME", home, 1);
	unsetenv("XDG_CONFIG_HOME");
	free(run);
	free(home);
}

static void project_remove(const char *dir)
{
	char *cmd = xasprintf("rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static void test_headless(void **state)
{
	(void)state;
	char dir[] = "/tmp/wrx-core-XXXXXX";
	project(dir);

	uv_loop_t *loop = uv_default_loop();
	struct wrx w;
	char *cause = NULL;
	struct wrx_opts o = {.cwd = dir, .self_exe = "/bin/false"};
	assert_int_equal(wrx_open(&w, loop, &o, &hooks, NULL, &cause), 0);
	seen.w = &w;
	assert_true(w.in_repo);
	assert_int_equal(wrx_start(&w, &cause), 0);
	assert_int_equal(session_agent_count(w.s), 1);
	struct agent *home_agent = session_agent(w.s, 0);

	char *py = xasprintf("%s/agent.py", dir);
	FILE *f = fopen(py, "w");
	assert_non_null(f);
	fputs(agent_py, f);
	fclose(f);
	char *argv[] = {"python3", py, NULL};
	struct wpane *wp = session_open_pane(w.s, home_agent, argv, 24, 80, true, &cause);
	assert_non_null(wp);

	uv_timer_t guard;
	uv_timer_init(loop, &guard);
	uv_timer_start(&guard, on_guard, 20000, 0);
	seen.want_status = true;
	uv_run(loop, UV_RUN_DEFAULT);
	seen.want_status = false;
	uv_timer_stop(&guard);
	uv_close((uv_handle_t *)&guard, NULL);

	char *text = screen_text(wp);
	assert_non_null(strstr(text, "auth ok"));
	/* The table's policy: an agent merges only itself, and never the main worktree. */
	assert_non_null(strstr(text, "is the main worktree"));
	assert_non_null(strstr(text, "may only close itself"));
	assert_non_null(strstr(text, "status ok"));
	free(text);
	assert_int_equal(home_agent->status, WRX_STATUS_WAITING);

	/* The control door sees it, and closes the pane. */
	json_object *req = json_tokener_parse("{\"cmd\": \"list\"}");
	json_object *r = actions_control_wait(&w, req);
	json_object *agents, *st;
	assert_true(json_object_object_get_ex(r, "agents", &agents));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(agents, 0), "status", &st));
	assert_string_equal(json_object_get_string(st), "waiting");
	json_object_put(r);
	json_object_put(req);

	req = json_object_new_object();
	json_object_object_add(req, "cmd", json_object_new_string("close"));
	json_object_object_add(req, "handle", json_object_new_string(home_agent->handle));
	r = actions_control_wait(&w, req);
	assert_null(actions_error(r));
	json_object_put(r);
	json_object_put(req);
	assert_int_equal(seen.gone, 1);
	assert_int_equal(session_pane_count(w.s), 0);

	/* Bad input at the door: a verb it does not know, a verb of another door. */
	req = json_tokener_parse("{\"cmd\": \"merge\", \"handle\": \"x\"}");
	r = actions_control_wait(&w, req);
	assert_non_null(strstr(json_object_get_string(r), "unknown command"));
	json_object_put(r);
	json_object_put(req);
	req = json_tokener_parse("{\"cmd\": \"send\", \"handle\": 7}");
	r = actions_control_wait(&w, req);
	assert_non_null(strstr(json_object_get_string(r), "must be a string"));
	json_object_put(r);
	json_object_put(req);

	wrx_close(&w);
	uv_run(loop, UV_RUN_NOWAIT);
	assert_int_equal(uv_loop_close(loop), 0);
	project_remove(dir);
	free(py);
}

static void on_reply(struct wrx *w, json_object *reply, void *arg)
{
	(void)w;
	*(char **)arg = xstrdup(json_object_get_string(reply));
	json_object_put(reply);
}

/*
 * An agent's merge asks the user only after `workrex merge --preview`
 * (a child) answers. The dashboard quitting while that child runs: its
 * answer comes to a core with no session any more, and is a refusal.
 */
static void test_merge_preview_at_shutdown(void **state)
{
	(void)state;
	char dir[] = "/tmp/wrx-core-XXXXXX";
	project(dir);
	/* The preview: a workrex that takes its time, then shows a diffstat. */
	char *exe = xasprintf("%s/slow-workrex", dir);
	FILE *f = fopen(exe, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\nsleep 0.3\necho ' 1 file changed'\n", f);
	fclose(f);
	assert_int_equal(chmod(exe, 0755), 0);

	uv_loop_t *loop = uv_default_loop();
	struct wrx w;
	char *cause = NULL;
	struct wrx_opts o = {.cwd = dir, .self_exe = exe};
	assert_int_equal(wrx_open(&w, loop, &o, &hooks, NULL, &cause), 0);
	seen.w = &w;
	assert_int_equal(wrx_start(&w, &cause), 0);
	struct agent *a = session_add_agent(w.s, "feat", dir);
	a->git.worktree = true;
	char *argv[] = {"sleep", "60", NULL};
	struct wpane *wp = session_open_pane(w.s, a, argv, 24, 80, false, &cause);
	assert_non_null(wp);

	char *reply = NULL;
	actions_call(&w, "merge", NULL, DOOR_AGENT, wp->id, on_reply, &reply);
	assert_null(reply); /* it waits for the preview */
	wrx_close(&w);
	uv_run(loop, UV_RUN_DEFAULT);
	assert_non_null(reply);
	assert_non_null(strstr(reply, "\"ok\": false"));
	free(reply);
	assert_int_equal(uv_loop_close(loop), 0);
	project_remove(dir);
	free(exe);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_headless),
		cmocka_unit_test(test_merge_preview_at_shutdown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
