/*
 * cmd_queue.c - `workrex queue` and `merge --queue` (SPEC §14): finished
 * agents land on main one at a time, each rebased onto main in its own
 * worktree (never the user's checkout), checked there (in its sandbox
 * when it has one), and main fast-forwarded only when the check passed.
 * On a conflict or a failing check nothing moves: the agent is given what
 * happened as a prompt (the files and hunks, or the check's output), and
 * is taken again when it says it is done.
 *
 * The landing is `queue run`, one at a time a project (workrex-queue-landing.owner
 * is its lock): started by `queue add` with no dashboard, else by the
 * dashboard (core/lander.c) when an agent is queued or says done. It
 * lands queued entries until none is left or the queue is paused. Its
 * steps are the rebase's and the merge's (git/merge.c), each settled by
 * the next command after a kill, and the queue's file (git/mergeq.h); an
 * entry a killed landing left mid-way is taken again from its start.
 */
#include "cmd.h"

#include "../git/mergeq.h"
#include "../rpc/control.h"
#include "../util/json.h"
#include "../util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool waiting(const struct mq_entry *e)
{
	return strcmp(e->state, MQ_QUEUED) == 0 || strcmp(e->state, MQ_REBASING) == 0 ||
	       strcmp(e->state, MQ_CHECKING) == 0;
}

/* The state queue shows: a queued entry of a paused queue is paused. */
static const char *shown_state(const struct mergeq *q, const struct mq_entry *e)
{
	return q->paused && strcmp(e->state, MQ_QUEUED) == 0 ? "paused" : e->state;
}

static int list(struct cmd_ctx *ctx, bool json)
{
	struct mergeq q;
	int rc = mq_load(ctx->repo, &q);
	if (rc < 0)
		return cmd_fail("queue", "the queue cannot be read: %s", strerror(-rc));
	if (json) {
		json_object *a = json_object_new_array();
		for (size_t i = 0; i < q.n; i++) {
			json_object *o = json_object_new_object();
			json_add_str(o, "handle", q.e[i].handle);
			json_add_str(o, "state", shown_state(&q, &q.e[i]));
			json_add_str(o, "reason", q.e[i].reason);
			json_object_object_add(o, "at", json_object_new_int64(q.e[i].at));
			json_object_array_add(a, o);
		}
		printf("%s\n", json_object_to_json_string_ext(
				       a, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(a);
	} else if (q.n == 0) {
		printf("the merge queue is empty (merge --queue HANDLE puts an agent in it)\n");
	} else {
		if (q.paused)
			printf("paused: nothing lands until `workrex queue resume`\n");
		printf("%-3s %-20s %-9s %s\n", "#", "AGENT", "STATE", "WHY");
		for (size_t i = 0, k = 0; i < q.n; i++) {
			char pos[8] = "-";
			if (waiting(&q.e[i]))
				snprintf(pos, sizeof pos, "%zu", ++k);
			printf("%-3s %-20s %-9s %s\n", pos, q.e[i].handle, shown_state(&q, &q.e[i]),
			       q.e[i].reason ? q.e[i].reason : "");
		}
	}
	mq_free(&q);
	return 0;
}

void cmd_queue_tell(struct cmd_ctx *ctx)
{
	struct mergeq q;
	if (mq_load(ctx->repo, &q) < 0)
		return;
	json_object *notes = json_object_new_array();
	for (size_t i = 0, k = 0; i < q.n; i++) {
		if (!waiting(&q.e[i]))
			continue;
		char *t = strcmp(q.e[i].state, MQ_QUEUED)
				  ? xasprintf("queue: %s", q.e[i].state)
				  : xasprintf("queue: #%zu%s", ++k, q.paused ? ", paused" : "");
		json_object_array_add(notes, json_object_new_string(q.e[i].handle));
		json_object_array_add(notes, json_object_new_string(t));
		free(t);
	}
	mq_free(&q);
	json_object *req = json_object_new_object();
	json_add_str(req, "cmd", "queue-notes");
	json_object_object_add(req, "notes", notes);
	/* No dashboard: nobody to show them to. */
	json_object *reply = NULL;
	char *cause = NULL, *path = control_path(repo_root(ctx->repo), &cause);
	if (path && control_request(path, req, &reply, 5000, &cause) == 0)
		json_object_put(reply);
	free(cause);
	free(path);
	json_object_put(req);
}

/*
 * A change to the queue under its lock: fn on the loaded queue, which says
 * what it did (or why not, returning -errno); then saved.
 */
static int change(struct cmd_ctx *ctx, int (*fn)(struct mergeq *q, const char *h, long n),
		  const char *handle, long n)
{
	int fd = mq_lock(ctx->repo);
	if (fd < 0)
		return cmd_fail("queue", "the queue cannot be locked: %s", strerror(-fd));
	struct mergeq q;
	int rc = mq_load(ctx->repo, &q);
	if (rc < 0)
		cmd_fail("queue", "the queue cannot be read: %s", strerror(-rc));
	else if ((rc = fn(&q, handle, n)) == 0 && (rc = mq_save(ctx->repo, &q)) < 0)
		cmd_fail("queue", "the queue cannot be written: %s", strerror(-rc));
	mq_free(&q);
	close(fd);
	if (rc == 0)
		cmd_queue_tell(ctx);
	return rc < 0 ? 1 : 0;
}

static int do_remove(struct mergeq *q, const char *h, long n)
{
	(void)n;
	if (mq_drop(q, h)) {
		printf("%s: out of the merge queue\n", h);
		return 0;
	}
	fprintf(stderr, "workrex: queue: '%s' is not in the merge queue\n", h);
	return -ENOENT;
}

static int do_move(struct mergeq *q, const char *h, long n)
{
	if (n < 1 || !mq_move(q, h, (size_t)n)) {
		fprintf(stderr, "workrex: queue: %s\n",
			n < 1 ? "a position is 1 or more" : "no such agent in the merge queue");
		return -EINVAL;
	}
	printf("%s: now #%ld in the merge queue\n", h, n);
	return 0;
}

static int do_pause(struct mergeq *q, const char *h, long n)
{
	(void)h;
	q->paused = n != 0;
	printf("the merge queue is %s\n",
	       n ? "paused: the landing under way ends first" : "running again");
	return 0;
}

/* Land what is queued: the dashboard's lander, or here and now when none runs. */
static int kick(struct cmd_ctx *ctx)
{
	json_object *req = json_object_new_object();
	json_add_str(req, "cmd", "queue-kick");
	int rc = cmd_dashboard(ctx, "queue", req, NULL);
	json_object_put(req);
	if (rc == -ENOENT)
		return cmd_queue_run(ctx, NULL);
	return rc < 0 ? 1 : 0;
}

int cmd_queue_add(struct cmd_ctx *ctx, const char *name)
{
	int rc = cmd_open_repo(ctx, "merge");
	if (rc)
		return rc;
	struct agent_rec a;
	char *cause = NULL;
	if (agent_find(ctx->repo, name, ctx->cwd, &a, &cause) < 0) {
		rc = cmd_fail("merge", "%s", cause);
		free(cause);
		return rc;
	}
	if (a.repos) {
		rc = cmd_fail("merge",
			      "'%s' has worktrees in several repositories: merge it with "
			      "merge, which previews each (the queue lands one repository's)",
			      a.handle);
		agent_rec_free(&a);
		return rc;
	}
	if (a.remote || a.branch == NULL) {
		rc = cmd_fail("merge", "'%s' %s%s: the queue rebases an agent's branch here",
			      a.handle, a.remote ? "runs on " : "has no branch checked out",
			      a.remote ? a.remote : "");
		agent_rec_free(&a);
		return rc;
	}
	int fd = mq_lock(ctx->repo);
	struct mergeq q;
	rc = fd < 0 ? fd : mq_load(ctx->repo, &q);
	if (rc == 0) {
		struct mq_entry *e = mq_find(&q, a.handle);
		if (e == NULL || !waiting(e))
			mq_put(&q, a.handle, MQ_QUEUED, NULL);
		size_t pos = 0;
		for (size_t i = 0; i < q.n; i++)
			if (waiting(&q.e[i]) && (pos++, strcmp(q.e[i].handle, a.handle) == 0))
				break;
		if ((rc = mq_save(ctx->repo, &q)) == 0)
			printf("%s: #%zu in the merge queue%s\n", a.handle, pos,
			       q.paused ? " (paused)" : "");
		mq_free(&q);
	}
	if (fd >= 0)
		close(fd);
	agent_rec_free(&a);
	if (rc < 0)
		return cmd_fail("merge", "the queue cannot be changed: %s", strerror(-rc));
	cmd_queue_tell(ctx);
	return kick(ctx);
}

int cmd_queue(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	int rc = cmd_open_repo(ctx, "queue");
	if (rc)
		return rc;
	const char *sub = cmd_nargs(ctx) ? cmd_arg(ctx, 0) : "list";
	const char *h = cmd_nargs(ctx) > 1 ? cmd_arg(ctx, 1) : NULL;
	int want = !strcmp(sub, "list") || !strcmp(sub, "pause") || !strcmp(sub, "resume") ? 1
		   : !strcmp(sub, "move")                                                  ? 3
		   : !strcmp(sub, "run")                                                   ? -1
											   : 2;
	if ((want > 0 && cmd_nargs(ctx) > want) || (want == 2 && h == NULL) ||
	    (want == 3 && cmd_nargs(ctx) != 3) || (cmd_given(ctx, "json") && strcmp(sub, "list")))
		return cmd_usage(ctx->self);
	if (!strcmp(sub, "list"))
		return list(ctx, cmd_given(ctx, "json"));
	if (!strcmp(sub, "add"))
		return cmd_queue_add(ctx, h);
	if (!strcmp(sub, "remove"))
		return change(ctx, do_remove, h, 0);
	if (!strcmp(sub, "move")) {
		char *end;
		long n = strtol(cmd_arg(ctx, 2), &end, 10);
		return *end ? cmd_usage(ctx->self) : change(ctx, do_move, h, n);
	}
	if (!strcmp(sub, "pause"))
		return change(ctx, do_pause, NULL, 1);
	if (!strcmp(sub, "resume"))
		return change(ctx, do_pause, NULL, 0) ? 1 : kick(ctx);
	if (!strcmp(sub, "run"))
		return cmd_queue_run(ctx, h);
	return cmd_usage(ctx->self);
}
