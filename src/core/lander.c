/*
 * lander.c - the merge queue's landing, for the dashboard (SPEC §14): a
 * child, `workrex queue run [HANDLE]`, never the loop, one at a time. It
 * runs when something is queued (queue-kick, from `merge --queue`, `queue
 * add` and `queue resume`) and when an agent says done while the project
 * has a queue: one the queue gave back is then queued again, by the child.
 * Asked again while it runs: it runs once more after, with the agents done
 * meanwhile. Nothing runs, and nothing wakes, while nothing is asked.
 */
#include "../git/mergeq.h"
#include "../util/log.h"
#include "../util/util.h"
#include "children.h"
#include "run.h"
#include "wrx.h"

#include <stdlib.h>
#include <string.h>

static void start(struct wrx *w, char *done);

static void landed(void *arg, int status, const char *output, const char *last)
{
	struct wrx *w = arg;
	(void)output;
	w->landing = false;
	if (status != 0)
		log_msg("queue: its landing ended with %d: %s", status, last ? last : "");
	if (w->land_done.n == 0 || w->quitting)
		return;
	/* The next asked for: one run a done agent; the last one's entry. */
	char *next = w->land_done.v[--w->land_done.n];
	w->land_done.v[w->land_done.n] = NULL;
	start(w, next);
}

/* Run `queue run [done]`; done is ours (freed). */
static void start(struct wrx *w, char *done)
{
	char *const more[] = {"run", done && *done ? done : NULL, NULL};
	char **argv = child_argv(w, "queue", more);
	struct run_opts o = {.argv = argv, .cwd = w->root, .done = landed, .arg = w};
	int rc = run_start(w->loop, &o);
	child_argv_free(argv);
	if (rc < 0)
		log_msg("queue: its landing did not start: %s", uv_strerror(rc));
	else
		w->landing = true;
	free(done);
}

void lander_kick(struct wrx *w, const char *done)
{
	if (w->helper || !w->in_repo)
		return;
	if (w->landing) {
		/* "" : only to look again; a handle: that agent said done. */
		strlist_add(&w->land_done, done ? done : "");
		return;
	}
	start(w, done && *done ? xstrdup(done) : NULL);
}

void lander_start(struct wrx *w)
{
	if (w->gitdir && mq_exists_at(w->gitdir))
		lander_kick(w, NULL);
}

void lander_status(struct wrx *w, struct agent *a)
{
	if (a->status == WRX_STATUS_DONE && w->gitdir && mq_exists_at(w->gitdir))
		lander_kick(w, a->handle);
}
