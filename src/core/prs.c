/*
 * prs.c - the agents' pull requests as the sidebar shows them (SPEC §10).
 *
 * An agent with a PR (workrex pr or add --pr keep its number, git/
 * comments.h) is asked about it by a child, `workrex pr HANDLE --status`
 * (gh pr view), never on the loop: one child at a time, the next when
 * one is due. An open PR whose checks still run is asked again after a
 * minute, one whose checks are settled after ten; a failure (no network,
 * gh gone) doubles the wait, up to an hour; a merged or closed PR is not
 * asked again. No PR, no timer: an idle dashboard stays asleep.
 * WORKREX_PR_POLL_MS sets the minute (the tests' seconds).
 */
#include "../git/comments.h"
#include "../util/log.h"
#include "../util/util.h"
#include "run.h"
#include "children.h"
#include "wrx.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define SETTLED_TIMES 10 /* a settled PR's wait, in polls */
#define BACKOFF_MAX_MS 3600000

static uint64_t poll_ms(void)
{
	const char *e = getenv("WORKREX_PR_POLL_MS");
	long v = e ? atol(e) : 0;
	return v > 0 ? (uint64_t)v : 60000;
}

static bool followed(const struct agent *a)
{
	return a->pr.number > 0 && strcmp(a->pr.state, "MERGED") != 0 &&
	       strcmp(a->pr.state, "CLOSED") != 0;
}

static void arm(struct wrx *w);

static void answered(void *arg, int status, const char *output, const char *last)
{
	struct agent_ref *q = arg;
	struct wrx *w = q->w;
	struct agent *a = agent_ref_get(q);
	if (a) {
		json_object *o = status == 0 ? json_tokener_parse(output) : NULL, *v;
		uint64_t base = poll_ms();
		if (o && json_object_object_get_ex(o, "state", &v)) {
			snprintf(a->pr.state, sizeof a->pr.state, "%s", json_object_get_string(v));
			snprintf(a->pr.checks, sizeof a->pr.checks, "%s",
				 json_object_object_get_ex(o, "checks", &v)
					 ? json_object_get_string(v)
					 : "-");
			a->pr.backoff_ms = 0;
			bool running = strcmp(a->pr.checks, "\u25cc") == 0;
			a->pr.due = now_ms() + (running ? base : base * SETTLED_TIMES);
			session_agent_changed(w->s, a);
		} else {
			a->pr.backoff_ms = a->pr.backoff_ms
						   ? WRX_MIN(a->pr.backoff_ms * 2, BACKOFF_MAX_MS)
						   : base * 2;
			a->pr.due = now_ms() + a->pr.backoff_ms;
			log_msg("%s: its PR #%d not read (next in %llu s): %s", a->handle,
				a->pr.number, (unsigned long long)(a->pr.backoff_ms / 1000),
				wrx_outcome(last));
		}
		json_object_put(o);
	}
	w->pr_asking = false;
	agent_ref_free(q);
	if (!w->quitting)
		arm(w);
}

static void ask(struct wrx *w, struct agent *a)
{
	char *const more[] = {a->handle, NULL};
	char **argv = child_argv(w, "pr-status", more);
	struct agent_ref *q = agent_ref_new(w, a);
	struct run_opts o = {.argv = argv, .cwd = w->root, .done = answered, .arg = q};
	int rc = run_start(w->loop, &o);
	child_argv_free(argv);
	if (rc < 0) {
		agent_ref_free(q);
		a->pr.due = now_ms() + poll_ms() * 2;
		arm(w);
		return;
	}
	w->pr_asking = true;
}

static void on_timer(uv_timer_t *t)
{
	struct wrx *w = t->data;
	uint64_t now = now_ms();
	for (int i = 0; i < session_agent_count(w->s) && !w->pr_asking; i++) {
		struct agent *a = session_agent(w->s, i);
		if (followed(a) && a->pr.due <= now)
			ask(w, a);
	}
	if (!w->pr_asking)
		arm(w);
}

/* The timer at the next PR due, or stopped when none is followed. */
static void arm(struct wrx *w)
{
	if (!w->pr_timer_on || w->pr_asking)
		return;
	uint64_t next = 0, now = now_ms();
	for (int i = 0; i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		if (followed(a) && (next == 0 || a->pr.due < next))
			next = a->pr.due;
	}
	if (next == 0)
		uv_timer_stop(&w->pr_timer);
	else
		uv_timer_start(&w->pr_timer, on_timer, next > now ? next - now : 0, 0);
}

void prs_start(struct wrx *w)
{
	if (w->helper || !w->in_repo)
		return;
	uv_timer_init(w->loop, &w->pr_timer);
	w->pr_timer.data = w;
	w->pr_timer_on = true;
	for (int i = 0; i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		if (a->git.worktree && (a->pr.number = review_pr_get(w->root, a->handle)) > 0)
			a->pr.due = now_ms();
	}
	arm(w);
}

void prs_track(struct wrx *w, struct agent *a, int number)
{
	a->pr.number = number;
	a->pr.state[0] = '\0';
	snprintf(a->pr.checks, sizeof a->pr.checks, "-");
	a->pr.backoff_ms = 0;
	a->pr.due = now_ms();
	session_agent_changed(w->s, a);
	arm(w);
}

void prs_stop(struct wrx *w)
{
	if (!w->pr_timer_on)
		return;
	w->pr_timer_on = false;
	uv_close((uv_handle_t *)&w->pr_timer, NULL);
}
