/*
 * resume.c - agents whose keepers went with a reboot, opened again with
 * their resume flag from what their marks kept (kept.c); and one resumed
 * with nothing to resume, started anew.
 */
#include "../term/pane.h"
#include "../util/log.h"
#include "../util/util.h"
#include "wrx.h"

#include <stdlib.h>
#include <sys/wait.h>

void resume_kept(struct wrx *w)
{
	if (!w->keeper_dir || w->helper)
		return;
	for (int i = 0; i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		/* An agent on a server: its host says, once attached (remote.c). */
		if (!a->git.worktree || a->remote.host || a->git.missing ||
		    session_agent_panes(w->s, a) > 0 || !kept_marked(w, a))
			continue;
		if (!kept_apply(w, a)) {
			log_msg("%s: its keepers are gone (a reboot?): it had failed (%s), left so",
				a->handle, a->failure ? a->failure : "?");
			continue;
		}
		char *cause = NULL;
		log_msg("%s: its keepers are gone (a reboot?): opened again, resuming %s",
			a->handle, a->session_id ? a->session_id : "its latest session");
		a->resumed_at = now_ms();
		if (agents_open(w, a, false, true, &cause) < 0) {
			wrx_message(w, true, "%s: %s", a->handle, cause);
			free(cause);
		}
	}
}

/*
 * Resumed, an agent that fails before anyone typed into it had nothing
 * to resume: Claude Code's --continue in a directory where it never had
 * a conversation says "No conversation found to continue" and exits 1,
 * and every agent a reboot took before its first prompt came back
 * failed. It starts anew, once, said on the status line: only when its
 * program exited so, not when it ended with its keeper (shutdown, a kill:
 * started again, it would outlive what ended it). Within a
 * minute: a dozen Claude Codes starting at once on two cores took more
 * than 10 s to say so. Not inside its pane's own exit event, which the
 * pane outlives: on the loop's next turn.
 */
#define RESUME_GRACE_MS 60000

static void start_anew(struct wrx *w, struct agent *a)
{
	if (a->status != WRX_STATUS_FAILED)
		return;
	char *why = a->failure ? xstrdup(a->failure) : xstrdup("it failed at once");
	/* Typing into it: the new pane takes the keys, not a neighbour's. */
	struct wpane *wp, *focus = session_focus(w->s);
	bool focused = focus && focus->agent == a;
	while ((wp = session_agent_pane(w->s, a)) != NULL)
		session_close_pane(w->s, wp);
	session_set_status(w->s, a, WRX_STATUS_NONE); /* not failed: starting */
	char *cause = NULL;
	if (agents_open(w, a, focused, false, &cause) < 0) {
		wrx_message(w, true, "%s: %s", a->handle, cause);
		free(cause);
	} else {
		wrx_message(w, false, "%s: nothing to resume (%s): started anew", a->handle, why);
	}
	free(why);
}

void resume_failed(struct wrx *w, struct agent *a)
{
	uint64_t at = a->resumed_at;
	a->resumed_at = 0; /* once */
	struct wpane *wp = session_agent_pane(w->s, a);
	/* Its program's own failure (an exit status), not its end with its keeper (shutdown). */
	int st = PANE_LOST;
	bool own = wp && pane_exited(wp->term, &st) && st != PANE_LOST && WIFEXITED(st);
	if (!own || at == 0 || now_ms() - at > RESUME_GRACE_MS || w->quitting || wp->last_key >= at)
		return;
	wrx_agent_later(w, a->handle, start_anew);
}
