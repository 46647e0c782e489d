/*
 * checks.c - a group's candidate is checked when it reaches done (SPEC
 * §11): the project's `check` in its worktree, or in its sandbox, by a
 * child, `workrex compare GROUP --check HANDLE --if-changed`, never on
 * the loop; the child runs nothing when the last check saw the worktree
 * as it is. One child an agent: done again while it runs, it runs once
 * more after. What it found is the child's record (git/checks.h), for
 * compare to show.
 */
#include "../util/log.h"
#include "../util/util.h"
#include "run.h"
#include "children.h"
#include "wrx.h"

#include <stdlib.h>
#include <string.h>

static void start(struct wrx *w, struct agent *a);

static void checked(void *arg, int status, const char *output, const char *last)
{
	struct agent_ref *k = arg;
	struct wrx *w = k->w;
	struct agent *a = agent_ref_get(k);
	(void)output;
	if (status != 0)
		log_msg("check: %s: %s", k->handle, last);
	if (a) {
		a->checking = false;
		if (a->check_again && a->status == WRX_STATUS_DONE)
			start(w, a);
		a->check_again = false;
	}
	agent_ref_free(k);
}

static void start(struct wrx *w, struct agent *a)
{
	struct agent_ref *k = agent_ref_new(w, a);
	char *const more[] = {a->git.group, "--check", a->handle, "--if-changed", NULL};
	char **argv = child_argv(w, "compare", more);
	struct run_opts o = {.argv = argv, .cwd = w->root, .done = checked, .arg = k};
	int rc = run_start(w->loop, &o);
	child_argv_free(argv);
	if (rc < 0) {
		log_msg("check: %s: %s", a->handle, uv_strerror(rc));
		agent_ref_free(k);
		return;
	}
	a->checking = true;
}

void checks_all(struct wrx *w)
{
	for (int i = 0; i < session_agent_count(w->s); i++)
		checks_status(w, session_agent(w->s, i));
}

void checks_status(struct wrx *w, struct agent *a)
{
	if (a->status != WRX_STATUS_DONE || a->git.group == NULL || w->cfg.check == NULL ||
	    a->remote.host || w->helper)
		return;
	if (a->checking)
		a->check_again = true;
	else
		start(w, a);
}
