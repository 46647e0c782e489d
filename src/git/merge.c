/*
 * merge.c - bring an agent's branch back: merge commit, rebase, or squash.
 *
 * The merge itself is `git merge` / `git rebase` run by the git CLI, so the
 * user's merge drivers and filters apply. Everything is checked before
 * anything changes (main worktree, uncommitted work, the target's dirty
 * files the merge would touch, pre_merge hooks); once git starts, a failure
 * is rolled back (merge --abort, rebase --abort, the branch reset to where
 * it was), so a failed merge leaves branch, worktree and target as they were.
 *
 * The merge happens in the worktree that has the target branch checked out;
 * when none has, in a temporary worktree that is removed afterwards.
 */
#include "worktree.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Lines of a git command's output as a comma-separated list; caller frees. */
static char *lines_joined(const char *dir, const char *const *argv)
{
	struct buf out = {0}, j = {0};
	git_run(dir, argv, &out, NULL, true);
	for (char *save = NULL, *l = out.data ? strtok_r(out.data, "\n", &save) : NULL; l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (j.len)
			buf_addstr(&j, ", ");
		buf_addstr(&j, l);
	}
	buf_free(&out);
	return j.data ? j.data : xstrdup("");
}

/* Where `into` is checked out, or NULL. */
static char *checkout_of(const struct repo *r, const char *into, char **cause)
{
	struct worktree_info *w;
	size_t n;
	if (repo_worktrees(r, &w, &n, cause) < 0)
		return NULL;
	char *path = NULL;
	for (size_t i = 0; i < n && !path; i++)
		if (w[i].branch && strcmp(w[i].branch, into) == 0)
			path = xstrdup(w[i].path);
	worktree_info_free(w, n);
	return path;
}

/* Refuse when the target has uncommitted changes in files the merge brings. */
static int check_target(const char *target, const char *into, const char *branch, char **cause)
{
	char **changed;
	size_t n;
	int rc = repo_changed_files(target, &changed, &n, cause);
	if (rc < 0)
		return rc;
	struct buf touched = {0};
	char *range = xasprintf("%s...%s", into, branch);
	const char *argv[] = {"diff", "--name-only", range, "--", NULL};
	git_run(target, argv, &touched, NULL, true);
	free(range);
	struct buf clash = {0};
	for (size_t i = 0; i < n; i++) {
		for (char *p = touched.data; p && *p;) {
			char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);
			if (strlen(changed[i]) == len && strncmp(changed[i], p, len) == 0) {
				if (clash.len)
					buf_addstr(&clash, ", ");
				buf_addstr(&clash, changed[i]);
			}
			p = nl ? nl + 1 : p + len;
		}
		free(changed[i]);
	}
	free(changed);
	buf_free(&touched);
	if (clash.len) {
		*cause =
			xasprintf("%s has uncommitted changes the merge would touch: %s; commit or "
				  "stash them first",
				  target, clash.data);
		buf_free(&clash);
		return -EBUSY;
	}
	return 0;
}

static int git_in(const char *dir, const char *const *argv, bool no_hooks, char **cause,
		  const char *fallback)
{
	struct buf err = {0};
	int rc = git_run(dir, argv, NULL, &err, no_hooks);
	if (rc != 0 && cause)
		*cause = git_error_line(&err, fallback);
	buf_free(&err);
	return rc == 0 ? 0 : -EIO;
}

/*
 * Why git refused, from its error output: its error line with the files
 * it names under it ("The following untracked working tree files would be
 * overwritten by merge: x.txt"), or NULL.
 */
static char *git_reason(const struct buf *err)
{
	if (err->data == NULL)
		return NULL;
	struct buf why = {0};
	bool files = false;
	for (const char *l = err->data; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
		size_t n = strcspn(l, "\n");
		if (why.len == 0 && (!strncmp(l, "error: ", 7) || !strncmp(l, "fatal: ", 7))) {
			buf_add(&why, l + 7, n - 7);
			while (why.len &&
			       (why.data[why.len - 1] == ':' || why.data[why.len - 1] == ' '))
				why.data[--why.len] = '\0';
		} else if (why.len && l[0] == '\t') {
			buf_addstr(&why, files ? ", " : ": ");
			buf_add(&why, l + 1, n - 1);
			files = true;
		} else if (why.len) {
			break;
		}
	}
	return why.data;
}

/*
 * Run git argv in dir (a merge, a squash, a rebase); if it fails, undo it
 * with git undo and say why, which files conflicted and what to do next
 * (next, may be NULL): nothing has changed.
 */
static int run_or_undo(const char *dir, const char *what, const char *const *argv,
		       const char *const *undo, bool no_hooks, const char *next, char **cause)
{
	struct buf err = {0};
	if (git_run(dir, argv, NULL, &err, no_hooks) == 0) {
		buf_free(&err);
		return 0;
	}
	const char *cf[] = {"diff", "--name-only", "--diff-filter=U", NULL};
	char *files = lines_joined(dir, cf);
	git_in(dir, undo, true, NULL, NULL);
	char *why = git_reason(&err);
	if (*files)
		*cause = xasprintf("conflict in %s; nothing was changed%s%s", files,
				   next ? ": " : "", next ? next : "");
	else if (why)
		*cause = xasprintf("git %s refused in %s: %s; nothing was changed", what, dir, why);
	else
		*cause = xasprintf("git %s failed; nothing was changed", what);
	free(why);
	free(files);
	buf_free(&err);
	return -EIO;
}

/* Rebase the branch checked out in dir onto onto; on a conflict, abort: nothing changes. */
static int rebase_or_abort(const char *dir, const char *onto, bool no_hooks, char **cause)
{
	const char *argv[] = {"rebase", "--", onto, NULL};
	const char *abort_[] = {"rebase", "--abort", NULL};
	char *next = xasprintf("rebase onto %s in the agent's worktree with git, or ask the agent, "
			       "then try again",
			       onto);
	int rc = run_or_undo(dir, "rebase", argv, abort_, no_hooks, next, cause);
	free(next);
	return rc;
}

/* What to do after a merge's conflict: the target into the agent's branch, there. */
static char *merge_next(const struct agent_rec *a, const char *into)
{
	return xasprintf("merge %s into %s in its worktree (git merge %s there, or ask the "
			 "agent), then merge again",
			 into, a->branch, into);
}

/*
 * A temporary worktree of branch, under a directory of its own in /tmp:
 * its path (caller frees; checkout_drop removes both), or NULL with *cause.
 */
static char *temp_checkout(const char *root, const char *branch, char **cause)
{
	char tmpl[] = "/tmp/workrex-merge.XXXXXX";
	if (mkdtemp(tmpl) == NULL) {
		*cause = xasprintf("temporary worktree: %s", strerror(errno));
		return NULL;
	}
	char *dir = xasprintf("%s/worktree", tmpl);
	const char *argv[] = {"worktree", "add", "--", dir, branch, NULL};
	if (git_in(root, argv, true, cause, "git worktree add failed") < 0) {
		rmdir(dir);
		rmdir(tmpl);
		free(dir);
		return NULL;
	}
	return dir;
}

/*
 * A checkout of the branch to rebase in: its worktree, or for an agent
 * whose worktree is elsewhere (o->place) a temporary one here. *tmp gets
 * what to remove after (caller frees), NULL for none.
 */
static char *branch_checkout(const char *root, const struct agent_rec *a,
			     const struct merge_opts *o, char **tmp, char **cause)
{
	*tmp = NULL;
	if (o->place == NULL)
		return xstrdup(a->path);
	char *dir = temp_checkout(root, a->branch, cause);
	if (dir)
		*tmp = xstrdup(dir);
	return dir;
}

static void checkout_drop(const char *root, char *tmp)
{
	if (tmp == NULL)
		return;
	const char *argv[] = {"worktree", "remove", "--force", "--", tmp, NULL};
	git_in(root, argv, true, NULL, NULL);
	*strrchr(tmp, '/') = '\0';
	rmdir(tmp);
	free(tmp);
}

static int do_merge(const char *root, const char *target, const struct agent_rec *a,
		    const struct merge_opts *o, char **cause)
{
	const char *branch = a->branch;
	if (strcmp(o->strategy, "squash") == 0) {
		const char *argv[] = {"merge", "--squash", "--", branch, NULL};
		const char *undo[] = {"reset", "--merge", NULL};
		char *next = merge_next(a, o->into);
		int undone =
			run_or_undo(target, "merge --squash", argv, undo, o->no_hooks, next, cause);
		free(next);
		if (undone < 0)
			return -EIO;
		/* The branch's own messages, oldest first: the squash keeps what they said. */
		char *range = xasprintf("%s..%s", o->into, branch);
		const char *log[] = {"log", "--reverse", "--format=* %s%n%n%w(0,2,2)%b", range,
				     NULL};
		struct buf body = {0};
		git_run(target, log, &body, NULL, true);
		free(range);
		char *msg =
			xasprintf("Squashed branch '%s'\n\n%s", branch, body.data ? body.data : "");
		buf_free(&body);
		const char *commit[] = {"commit", "--no-edit", "--cleanup=strip", "-m", msg, NULL};
		int rc = git_in(target, commit, o->no_hooks, cause, "git commit failed");
		free(msg);
		if (rc < 0) {
			const char *reset[] = {"reset", "--merge", NULL};
			git_in(target, reset, true, NULL, NULL);
		}
		return rc;
	}
	if (strcmp(o->strategy, "rebase") == 0) {
		char *tmp, *dir = branch_checkout(root, a, o, &tmp, cause);
		if (dir == NULL)
			return -EIO;
		char *before = git_rev(dir, "HEAD");
		int rc = rebase_or_abort(dir, o->into, o->no_hooks, cause);
		const char *ff[] = {"merge", "--ff-only", "--", branch, NULL};
		if (rc == 0 && git_in(target, ff, o->no_hooks, cause, "fast-forward failed") < 0) {
			/* Put the branch back where it was. */
			if (before) {
				const char *back[] = {"reset", "--hard", before, NULL};
				git_in(dir, back, true, NULL, NULL);
			}
			rc = -EIO;
		}
		free(before);
		free(dir);
		checkout_drop(root, tmp);
		return rc < 0 ? -EIO : 0;
	}
	char *msg = xasprintf("Merge branch '%s'", branch);
	const char *argv[] = {"merge", "--no-ff", "--no-edit", "-m", msg, "--", branch, NULL};
	const char *abort_[] = {"merge", "--abort", NULL};
	char *next = merge_next(a, o->into);
	int rc = run_or_undo(target, "merge", argv, abort_, o->no_hooks, next, cause);
	free(next);
	free(msg);
	return rc;
}

int worktree_merge(const struct repo *r, const struct config *c, const struct agent_rec *a,
		   const struct merge_opts *o_in, char **note, char **cause)
{
	struct merge_opts o = *o_in;
	*note = NULL;
	char *main = repo_main_branch(r, c->main_branch);
	o.into = o.into ? o.into : main;
	if (o.strategy == NULL)
		o.strategy = c->merge_strategy ? c->merge_strategy : "merge";
	int rc = 0;
	char *target = NULL, *tmp = NULL;

	if (a->branch == NULL) {
		*cause = xasprintf("'%s' has no branch checked out (detached HEAD)", a->handle);
		rc = -EINVAL;
		goto out;
	}
	if (o.into == NULL || !repo_branch_exists(r, o.into)) {
		*cause = xasprintf("no branch '%s' to merge into", o.into ? o.into : "(main)");
		rc = -ENOENT;
		goto out;
	}
	if (strcmp(a->branch, o.into) == 0) {
		*cause = xasprintf("'%s' cannot be merged into itself", a->branch);
		rc = -EINVAL;
		goto out;
	}
	bool dirty = false;
	if ((rc = o.place ? o.place->dirty(o.place->arg, a, &dirty, cause)
			  : worktree_dirty(c, a, &dirty, cause)) < 0)
		goto out;
	if (dirty && !o.ignore_uncommitted) {
		*cause = xasprintf("branch '%s' has uncommitted changes; commit them or pass "
				   "--ignore-uncommitted",
				   a->branch);
		rc = -EBUSY;
		goto out;
	}
	if (o.place && o.keep && strcmp(o.strategy, "rebase") == 0) {
		*cause = xasprintf("'%s' runs on %s, where its branch stays as it is: merge it "
				   "without -k to rebase it, or keep it with another strategy",
				   a->handle, a->remote ? a->remote : "a server");
		rc = -EINVAL;
		goto out;
	}
	if (dirty && strcmp(o.strategy, "rebase") == 0) {
		*cause =
			xasprintf("'%s' has uncommitted changes and cannot be rebased; commit them "
				  "first or use another strategy",
				  a->handle);
		rc = -EBUSY;
		goto out;
	}
	long ahead = repo_ahead(r, a->branch, o.into);
	if (ahead == 0) {
		*note = xasprintf("'%s' has nothing to merge into %s", a->branch, o.into);
	} else {
		target = checkout_of(r, o.into, cause);
		if (target == NULL) {
			/* Not checked out anywhere: merge in a temporary worktree. */
			if ((tmp = temp_checkout(repo_root(r), o.into, cause)) == NULL) {
				rc = -EIO;
				goto out;
			}
			target = xstrdup(tmp);
		}
		if ((rc = check_target(target, o.into, a->branch, cause)) < 0)
			goto out;
		if (!o.no_verify && (rc = run_hooks(&c->pre_merge, "pre_merge", r, a, cause)) < 0)
			goto out;
		/*
		 * The agent keeps running through the merge: a conflict or a
		 * failing hook leaves it as it was, and -k keeps it. Its panes
		 * close only when its worktree goes (worktree_remove, below).
		 */
		if ((rc = do_merge(repo_root(r), target, a, &o, cause)) < 0)
			goto out;
	}
	if (!o.keep && dirty) {
		*note = xasprintf(
			"merged; the worktree %s keeps its uncommitted changes and was not "
			"removed",
			a->path);
	} else if (!o.keep) {
		/* Merged: the branch may go even after a squash. */
		struct remove_opts ro = {.stop = o.stop,
					 .stop_arg = o.stop_arg,
					 .force = true,
					 .keep_branch = false,
					 .run_hooks = true,
					 .place = o.place};
		rc = worktree_remove(r, c, a, &ro, cause);
	}
out:
	checkout_drop(repo_root(r), tmp);
	free(target);
	free(main);
	return rc;
}

int worktree_rebase(const struct repo *r, const struct config *c, const struct agent_rec *a,
		    const char *onto, bool no_hooks, char **note, char **cause)
{
	*note = NULL;
	char *main = repo_main_branch(r, c->main_branch);
	onto = onto ? onto : main;
	int rc = 0;
	bool dirty = false;
	if (a->remote) {
		*cause = xasprintf("'%s' runs on %s: its branch is rebased as it merges (merge "
				   "--rebase)",
				   a->handle, a->remote);
		rc = -EINVAL;
	} else if (a->branch == NULL) {
		*cause = xasprintf("'%s' has no branch checked out (detached HEAD)", a->handle);
		rc = -EINVAL;
	} else if (onto == NULL || !repo_branch_exists(r, onto)) {
		*cause = xasprintf("no branch '%s' to rebase onto", onto ? onto : "(main)");
		rc = -ENOENT;
	} else if (strcmp(a->branch, onto) == 0) {
		*cause = xasprintf("'%s' cannot be rebased onto itself", a->branch);
		rc = -EINVAL;
	} else if ((rc = worktree_dirty(c, a, &dirty, cause)) == 0 && dirty) {
		*cause = xasprintf("'%s' has uncommitted changes; commit them first (a rebase "
				   "rewrites the branch under them)",
				   a->handle);
		rc = -EBUSY;
	}
	if (rc == 0 && repo_ahead(r, onto, a->branch) == 0)
		*note = xasprintf("%s already has everything on %s", a->branch, onto);
	else if (rc == 0 && (rc = rebase_or_abort(a->path, onto, no_hooks, cause)) == 0)
		*note = xasprintf("%s is now on top of %s", a->branch, onto);
	free(main);
	return rc;
}
