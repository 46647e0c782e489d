/*
 * queue.c - add --max-concurrent (SPEC §11): a group's agents past its
 * limit are made and shown, and wait; each opens, in the order add made
 * them, when fewer than the limit of its group are at work. At work: open
 * (panes) and neither done nor failed. A slot frees when a status says
 * so, or a pane goes; an agent that waits, opened by hand, simply runs.
 * While an agent waits for its CLI's rate limit or quota (its hook said
 * so), none of its kind opens, until it moves again.
 *
 * The open is a child, `workrex open -b HANDLE`: it clears the record's
 * "queued" (a git config write, never on the loop) and asks this
 * dashboard to open the panes, as a user's open does. The queue is the
 * dashboard's: with none running, those that wait wait for the next.
 */
#include "../config/kinds.h"
#include "../util/log.h"
#include "../util/util.h"
#include "agentcmd.h"
#include "run.h"
#include "children.h"
#include "wrx.h"

#include <string.h>

static bool at_work(struct wrx *w, const struct agent *a)
{
	return !a->git.queued && (a->git.opening || session_agent_panes(w->s, a) > 0) &&
	       a->status != WRX_STATUS_DONE && a->status != WRX_STATUS_FAILED;
}

static void opened(void *arg, int status, const char *output, const char *last)
{
	(void)output;
	struct agent_ref *o = arg;
	struct wrx *w = o->w;
	struct agent *a = agent_ref_get(o);
	if (status != 0)
		log_msg("queue: %s did not open: %s", o->handle, last);
	if (a) {
		a->git.opening = false;
		if (a->git.group)
			queue_run(w, a->git.group); /* it failed to open: its slot is free */
	}
	agent_ref_free(o);
}

/*
 * An agent of next's kind that waits for its CLI's rate limit or quota to
 * reset (a hook said so), or NULL: while one does, another would only hit
 * the same limit, so none of that kind opens.
 */
static struct agent *quota_out(struct wrx *w, const struct agent *next)
{
	const char *dflt = agentcmd_default(&w->cfg);
	const struct agent_kind *k = kind_of(&w->cfg, next->git.agent ? next->git.agent : dflt);
	for (int i = 0; k && i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		if (a->quota && a->status == WRX_STATUS_WAITING &&
		    session_agent_panes(w->s, a) > 0 &&
		    kind_of(&w->cfg, a->git.agent ? a->git.agent : dflt) == k)
			return a;
	}
	return NULL;
}

/* group's waiting agents opened while it has slots. */
static void run_group(struct wrx *w, const char *group)
{
	int limit = 0, busy = 0;
	for (int i = 0; i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		if (a->git.group == NULL || strcmp(a->git.group, group))
			continue;
		if (a->git.queued && session_agent_panes(w->s, a) > 0)
			a->git.queued = false; /* opened by hand meanwhile: it runs */
		limit = WRX_MAX(limit, a->git.max_concurrent);
		busy += at_work(w, a);
	}
	while (limit > 0 && busy < limit) {
		struct agent *next = NULL;
		for (int i = 0; i < session_agent_count(w->s); i++) {
			struct agent *a = session_agent(w->s, i);
			if (a->git.queued && a->git.group && !strcmp(a->git.group, group) &&
			    (next == NULL || a->num < next->num))
				next = a;
		}
		if (next == NULL)
			return;
		struct agent *out = quota_out(w, next);
		if (out) {
			log_msg("queue: %s waits: %s waits for its quota (%s)", next->handle,
				out->handle, out->note ? out->note : "rate limit");
			return;
		}
		char *const more[] = {next->handle, NULL};
		char **argv = child_argv(w, "open-queued", more);
		struct agent_ref *op = agent_ref_new(w, next);
		struct run_opts o = {.argv = argv, .cwd = w->root, .done = opened, .arg = op};
		int rc = run_start(w->loop, &o);
		child_argv_free(argv);
		if (rc < 0) {
			log_msg("queue: %s: workrex open did not start", op->handle);
			agent_ref_free(op);
			return;
		}
		/* Not waiting any more from now: the slot is its while the child runs. */
		next->git.queued = false;
		next->git.opening = true;
		log_msg("queue: %s opens (%d of %s's %d at work)", next->handle, busy + 1, group,
			limit);
		busy++;
	}
}

void queue_run(struct wrx *w, const char *group)
{
	if (w->helper || w->quitting || w->s == NULL)
		return;
	if (group) {
		run_group(w, group);
		return;
	}
	for (int i = 0; i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		if (a->git.queued && a->git.group)
			run_group(w, a->git.group);
	}
}
