/*
 * queue_land.c - `queue run`: the merge queue's landing (cmd_queue.c says
 * what it is). Each entry: rebased onto main in its worktree, checked,
 * main fast-forwarded to it; or given back to its agent with why.
 */
#include "cmd.h"

#include "../git/checks.h"
#include "../git/mergeq.h"
#include "../util/fault.h"
#include "../util/json.h"
#include "../util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HUNKS_MAX 6000  /* of the conflicting hunks, in a prompt */
#define OUTPUT_MAX 4000 /* of a failed check's output: its tail */
#define FILES_MAX 10    /* conflicting files whose hunks are shown */
#define LANDING "passed; landing"
#define LAND_TRIES 3 /* main moved while it was checked: rebased and checked again */

static bool tried_before(const struct strlist *l, const char *h)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], h) == 0)
			return true;
	return false;
}

/* One landing at a time a project: the lock's fd, or -1 when another holds it. */
static int run_lock(const struct repo *r)
{
	char *path = xasprintf("%s/workrex-queue-landing.owner", repo_gitdir(r));
	int fd = lock_file(path, false);
	free(path);
	return fd < 0 ? -1 : fd;
}

static void set(struct cmd_ctx *ctx, const char *handle, const char *state, const char *why)
{
	int rc = mq_set(ctx->repo, handle, state, why);
	if (rc < 0)
		fprintf(stderr, "workrex: queue: %s: the queue cannot be written: %s\n", handle,
			strerror(-rc));
	else if (strcmp(state, MQ_RETURNED) != 0) /* given back: said by queue-return */
		cmd_queue_tell(ctx);
}

/* The conflict-marked hunks of text (a file as a merge left it), onto b. */
static void hunks_of(const char *text, struct buf *b)
{
	bool in = false;
	for (const char *l = text; *l && b->len < HUNKS_MAX;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);
		if (!in && strncmp(l, "<<<<<<< ", 8) == 0)
			in = true;
		if (in)
			buf_add(b, l, n);
		if (in && strncmp(l, ">>>>>>> ", 8) == 0)
			in = false;
		l += n;
	}
}

bool cmd_merge_conflicts(const char *root, const char *into, const char *branch, char **files,
			 char **hunks)
{
	const char *argv[] = {"merge-tree", "--write-tree", "--name-only", "--no-messages",
			      into,         branch,         NULL};
	struct buf out = {0}, names = {0}, h = {0};
	int st = git_run(root, argv, &out, NULL, true);
	char *save = NULL, *tree = st == 1 && out.data ? strtok_r(out.data, "\n", &save) : NULL;
	int k = 0;
	for (char *f; tree && (f = strtok_r(NULL, "\n", &save));) {
		if (*f == '\0' || strstr(names.data ? names.data : "", f))
			continue;
		buf_addf(&names, "%s%s", names.len ? ", " : "", f);
		if (k++ >= FILES_MAX)
			continue;
		char *spec = xasprintf("%s:%s", tree, f);
		const char *show[] = {"cat-file", "-p", spec, NULL};
		struct buf text = {0};
		if (git_run(root, show, &text, NULL, true) == 0 && text.data) {
			buf_addf(&h, "--- %s\n", f);
			hunks_of(text.data, &h);
		}
		buf_free(&text);
		free(spec);
	}
	buf_free(&out);
	*files = names.data;
	*hunks = h.data;
	return *files != NULL;
}

/*
 * Give a back to its agent: out of the queue until it says done again,
 * told why (the dashboard types it into the agent's pane and shows it
 * working; with none, it is printed here).
 */
static void give_back(struct cmd_ctx *ctx, const struct agent_rec *a, const char *into,
		      const char *why, const char *brief, const char *details, const char *todo)
{
	set(ctx, a->handle, MQ_RETURNED, why);
	char *text = xasprintf(
		"workrex's merge queue could not land your branch %s on %s: %s.\n"
		"%s%s\n%s Commit, and end your turn: the queue takes your branch "
		"again when you are done.",
		a->branch, into, why, details ? details : "",
		details && *details && details[strlen(details) - 1] != '\n' ? "\n" : "", todo);
	json_object *req = cmd_agent_request("queue-return", a);
	json_add_str(req, "text", text);
	json_add_str(req, "why", brief); /* under its row: a sidebar's width */
	int rc = cmd_dashboard(ctx, "queue", req, NULL);
	json_object_put(req);
	printf("%s: given back: %s\n", a->handle, why);
	if (rc == -ENOENT)
		printf("(no dashboard runs to tell it; what it would be told:)\n%s\n", text);
	free(text);
}

/* a's failed check: its output's tail, for the agent. */
static char *check_output(struct cmd_ctx *ctx, const struct agent_rec *a, int *code)
{
	struct check_result r;
	*code = -1;
	if (check_load(repo_root(ctx->repo), a->handle, &r) < 0)
		return NULL;
	*code = r.code;
	const char *o = r.output ? r.output : "";
	size_t n = strlen(o);
	char *out = xasprintf("The check (%s) said%s:\n%s", ctx->cfg.check,
			      n > OUTPUT_MAX ? ", at its end" : "",
			      n > OUTPUT_MAX ? o + n - OUTPUT_MAX : o);
	check_result_free(&r);
	return out;
}

/*
 * a rebased onto into and checked, until into stays where it was while the
 * check ran. 0: ready to land; 1: given back (or left queued, said).
 */
static int prepare(struct cmd_ctx *ctx, const struct agent_rec *a, const char *into)
{
	bool boxed = cmd_sandboxed(ctx, a), dirty = false;
	for (int tries = 0;; tries++) {
		set(ctx, a->handle, MQ_REBASING, NULL);
		FAULT("queue.rebasing");
		char *base = repo_branch_tip(ctx->repo, into), *cause = NULL, *note = NULL;
		char *files = NULL, *hunks = NULL;
		int rc = worktree_dirty(&ctx->cfg, a, &dirty, &cause) < 0 ? -1 : 0;
		if (rc < 0) {
			give_back(ctx, a, into, cause ? cause : "its worktree cannot be read",
				  "unreadable", NULL, "Check that your worktree is whole.");
			rc = 1;
		} else if (dirty) {
			give_back(ctx, a, into, "its worktree has uncommitted changes",
				  "uncommitted", NULL, "Commit them, or drop them.");
			rc = 1;
		} else if (repo_ahead(ctx->repo, into, a->branch) > 0 &&
			   cmd_merge_conflicts(repo_root(ctx->repo), into, a->branch, &files,
					       &hunks)) {
			char *why = xasprintf("it conflicts with %s in %s", into, files);
			char *what = xasprintf("The conflicting hunks, as git marks them:\n%s",
					       hunks ? hunks : "");
			char *todo =
				xasprintf("Rebase your branch onto %s and resolve them.", into);
			char *brief = xasprintf("conflict: %s", files);
			give_back(ctx, a, into, why, brief, what, todo);
			free(brief);
			free(todo);
			free(what);
			free(why);
			rc = 1;
		} else if (repo_ahead(ctx->repo, into, a->branch) > 0 &&
			   worktree_rebase(ctx->repo, &ctx->cfg, a, into, boxed, &note, &cause) <
				   0) {
			char *todo = xasprintf("Rebase your branch onto %s.", into);
			give_back(ctx, a, into, cause ? cause : "its rebase failed",
				  "rebase failed", NULL, todo);
			free(todo);
			rc = 1;
		}
		free(files);
		free(hunks);
		free(note);
		free(cause);
		FAULT("queue.rebased");
		if (rc == 0 && ctx->cfg.check) {
			set(ctx, a->handle, MQ_CHECKING, NULL);
			if (cmd_check(ctx, a, false) != 0) {
				int code;
				char *out = check_output(ctx, a, &code);
				char *why = xasprintf("its check failed (exit %d) on top of %s",
						      code, into);
				give_back(ctx, a, into, why, "check failed", out,
					  "Make the check pass.");
				free(why);
				free(out);
				rc = 1;
			}
			FAULT("queue.checked");
		}
		char *now = repo_branch_tip(ctx->repo, into);
		bool moved = rc == 0 && (!now || !base || strcmp(now, base) != 0);
		free(now);
		free(base);
		if (!moved)
			return rc;
		if (tries + 1 == LAND_TRIES) {
			set(ctx, a->handle, MQ_QUEUED, "main kept moving while it was checked");
			return 1;
		}
	}
}

/* Land the agent handle. 0: landed; 1: not (given back, or said why). */
static int land_one(struct cmd_ctx *ctx, const char *handle)
{
	struct agent_rec a;
	char *cause = NULL;
	if (agent_find(ctx->repo, handle, NULL, &a, &cause) < 0) {
		fprintf(stderr, "workrex: queue: %s: %s; out of the queue\n", handle, cause);
		free(cause);
		int fd = mq_lock(ctx->repo);
		struct mergeq q;
		if (fd >= 0 && mq_load(ctx->repo, &q) == 0) {
			mq_drop(&q, handle);
			mq_save(ctx->repo, &q);
			mq_free(&q);
		}
		if (fd >= 0)
			close(fd);
		return 1;
	}
	char *into = repo_main_branch(ctx->repo, ctx->cfg.main_branch);
	int rc = into ? 0 : 1;
	if (into == NULL)
		set(ctx, handle, MQ_RETURNED, "the project has no main branch");
	else if (cmd_import_sandbox(ctx, "queue", &a) < 0)
		give_back(ctx, &a, into, "its branch could not be brought from its sandbox",
			  "not imported", NULL, "Check that your branch has commits.");
	if (rc == 0 && (rc = prepare(ctx, &a, into)) == 0) {
		set(ctx, handle, MQ_CHECKING, LANDING);
		struct merge_opts o = {.strategy = "rebase"};
		char *why = NULL;
		if (cmd_merge_agent(ctx, &a, &o, &why) < 0) {
			give_back(ctx, &a, into, why ? why : "its merge failed", "merge failed",
				  NULL, "Bring your branch up to date.");
			rc = 1;
		} else {
			FAULT("queue.landed");
			set(ctx, handle, MQ_LANDED, NULL);
		}
		free(why);
	}
	free(into);
	agent_rec_free(&a);
	return rc;
}

/* done's entry, given back before, queued again at the end: it said it is done. */
static void requeue(struct cmd_ctx *ctx, const char *done)
{
	int fd = mq_lock(ctx->repo);
	struct mergeq q;
	if (fd >= 0 && mq_load(ctx->repo, &q) == 0) {
		struct mq_entry *d = mq_find(&q, done);
		if (d && strcmp(d->state, MQ_RETURNED) == 0) {
			mq_drop(&q, done);
			mq_put(&q, done, MQ_QUEUED, NULL);
			mq_save(ctx->repo, &q);
		}
		mq_free(&q);
	}
	if (fd >= 0)
		close(fd);
}

/*
 * With the landing's lock held: what a killed landing left, settled (an
 * entry at a step is queued again, its rebase and merge settled by
 * cmd_open_repo; landed when its merge was done). The next to land: its
 * handle, or NULL (none queued, or paused); with peek, nothing changed.
 */
static char *next_entry(struct cmd_ctx *ctx, bool peek)
{
	int fd = mq_lock(ctx->repo);
	struct mergeq q;
	if (fd < 0 || mq_load(ctx->repo, &q) < 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (size_t i = 0; i < q.n && !peek; i++) {
		struct mq_entry *e = &q.e[i];
		if (strcmp(e->state, MQ_REBASING) && strcmp(e->state, MQ_CHECKING))
			continue;
		struct agent_rec a;
		char *cause = NULL;
		bool gone = agent_find(ctx->repo, e->handle, NULL, &a, &cause) < 0;
		bool landed = e->reason && !strcmp(e->reason, LANDING) && gone;
		mq_put(&q, e->handle, landed ? MQ_LANDED : MQ_QUEUED,
		       landed ? NULL : "taken again: its landing was cut short");
		if (!gone)
			agent_rec_free(&a);
		free(cause);
	}
	/* Peeking, one a killed landing left at a step counts: it is to be taken again. */
	char *next = NULL;
	for (size_t i = 0; i < q.n && !q.paused && !next; i++)
		if (strcmp(q.e[i].state, MQ_QUEUED) == 0 ||
		    (peek &&
		     (!strcmp(q.e[i].state, MQ_REBASING) || !strcmp(q.e[i].state, MQ_CHECKING))))
			next = xstrdup(q.e[i].handle);
	if (!peek)
		mq_save(ctx->repo, &q);
	mq_free(&q);
	close(fd);
	return next;
}

int cmd_queue_run(struct cmd_ctx *ctx, const char *done)
{
	int rc = cmd_open_repo(ctx, "queue");
	if (rc)
		return rc;
	if (done)
		requeue(ctx, done);
	int landed = 0, back = 0;
	struct strlist tried = {0}; /* each lands once a run: one left queued waits for a kick */
	/*
	 * Another landing runs: it takes what is queued before it ends. One
	 * that ends just as something is queued looks again after its lock
	 * is gone, so nothing queued waits for a next kick.
	 */
	for (char *left; (left = next_entry(ctx, true)) != NULL;) {
		bool again = tried_before(&tried, left);
		free(left);
		int lock = again ? -1 : run_lock(ctx->repo);
		if (lock < 0)
			break;
		for (char *h; (h = next_entry(ctx, false)) != NULL && !tried_before(&tried, h);
		     free(h)) {
			strlist_add(&tried, h);
			if (land_one(ctx, h) == 0)
				landed++;
			else
				back++;
		}
		close(lock);
	}
	strlist_free(&tried);
	if (landed + back)
		printf("merge queue: %d landed, %d not\n", landed, back);
	return 0;
}
