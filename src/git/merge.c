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
 *
 * A kill at any step leaves its intent (intent.h, notes of each step
 * begun): the next command settles it (merge_settle). Before the target
 * moved, it is undone: a merge or rebase git left half done is aborted,
 * a rebased branch put back, temporary worktrees removed. After, it is
 * finished: the agent removed as the merge would have. Merges wait for
 * each other (workrex-merge.owner), so the target is never moved by two.
 */
#include "worktree.h"

#include "../util/beneath.h"
#include "../util/fault.h"
#include "intent.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

char *merge_dirty_refusal(const char *branch)
{
	return xasprintf("branch '%s' has uncommitted changes; commit them or pass "
			 "--ignore-uncommitted",
			 branch);
}
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
	if (strcmp(what, "rebase") == 0)
		FAULT("rebase.conflict");
	else
		FAULT("merge.conflict");
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
static char *temp_checkout(const char *root, const char *branch, struct intent *in, const char *key,
			   char **cause)
{
	char tmpl[] = "/tmp/workrex-merge.XXXXXX";
	if (mkdtemp(tmpl) == NULL) {
		*cause = xasprintf("temporary worktree: %s", strerror(errno));
		return NULL;
	}
	int rc = intent_note(in, key, tmpl);
	if (rc < 0) {
		*cause = xasprintf("cannot note the merge's temporary worktree: %s", strerror(-rc));
		rmdir(tmpl);
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
			     const struct merge_opts *o, struct intent *in, char **tmp,
			     char **cause)
{
	*tmp = NULL;
	if (o->place == NULL)
		return xstrdup(a->path);
	char *dir = temp_checkout(root, a->branch, in, "branch-tmp", cause);
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

/* Note a step about to begin; refused (nothing done) if it cannot be noted. */
static int step(struct intent *in, const char *key, const char *value, char **cause)
{
	int rc = intent_note(in, key, value);
	if (rc < 0)
		*cause = xasprintf("cannot note the merge's step: %s; nothing was changed",
				   strerror(-rc));
	return rc;
}

static int do_merge(const char *root, const char *target, const struct agent_rec *a,
		    const struct merge_opts *o, struct intent *in, char **cause)
{
	const char *branch = a->branch;
	if (step(in, "target", target, cause) < 0)
		return -EIO;
	if (strcmp(o->strategy, "squash") == 0) {
		if (step(in, "squashing", "1", cause) < 0)
			return -EIO;
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
		FAULT("merge.squashed");
		/* Nothing staged: its changes are on the target already (squashed before). */
		const char *same[] = {"diff", "--cached", "--quiet", NULL};
		if (git_run(target, same, NULL, NULL, true) == 0) {
			buf_free(&body);
			return 0;
		}
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
		char *tmp, *dir = branch_checkout(root, a, o, in, &tmp, cause);
		if (dir == NULL)
			return -EIO;
		char *before = git_rev(dir, "HEAD");
		int rc = step(in, "rebasing", dir, cause);
		if (rc == 0)
			rc = rebase_or_abort(dir, o->into, o->no_hooks, cause);
		if (rc == 0)
			FAULT("merge.rebased");
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
	if (step(in, "merging", "1", cause) < 0)
		return -EIO;
	char *msg = xasprintf("Merge branch '%s'", branch);
	const char *argv[] = {"merge", "--no-ff", "--no-edit", "-m", msg, "--", branch, NULL};
	const char *abort_[] = {"merge", "--abort", NULL};
	char *next = merge_next(a, o->into);
	int rc = run_or_undo(target, "merge", argv, abort_, o->no_hooks, next, cause);
	free(next);
	free(msg);
	return rc;
}

/*
 * Wait for any other merge in this project to end (said, when it must):
 * the lock is held until the fd returned is closed; -1 with *cause if it
 * cannot be taken.
 */
static int merge_lock(const struct repo *r, char **cause)
{
	char *path = xasprintf("%s/workrex-merge.owner", repo_gitdir(r));
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			fprintf(stderr, "workrex: waiting for another merge to end\n");
		int got;
		while ((got = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
			;
		if (got < 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		*cause = xasprintf("cannot lock %s: %s", path, strerror(errno));
	free(path);
	return fd;
}

/* The merge once decided, under its intent: the target moves, or nothing does. */
static int merge_steps(const struct repo *r, const struct config *c, const struct agent_rec *a,
		       const struct merge_opts *o, struct intent *in, char **tmp, char **cause)
{
	int rc;
	char *target = checkout_of(r, o->into, cause);
	if (target == NULL) {
		/* Not checked out anywhere: merge in a temporary worktree. */
		if ((*tmp = temp_checkout(repo_root(r), o->into, in, "tmp", cause)) == NULL)
			return -EIO;
		target = xstrdup(*tmp);
	}
	FAULT("merge.checkout");
	if ((rc = check_target(target, o->into, a->branch, cause)) == 0 && !o->no_verify)
		rc = run_hooks(&c->pre_merge, "pre_merge", r, a, cause);
	FAULT("merge.hooks");
	/*
	 * The agent keeps running through the merge: a conflict or a failing
	 * hook leaves it as it was, and -k keeps it. Its panes close only when
	 * its worktree goes (worktree_remove, after).
	 */
	if (rc == 0)
		rc = do_merge(repo_root(r), target, a, o, in, cause);
	free(target);
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
	int rc = 0, lock = -1;
	char *tmp = NULL;
	struct intent in = {0};

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
		*cause = merge_dirty_refusal(a->branch);
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
	if ((lock = merge_lock(r, cause)) < 0) {
		rc = -EIO;
		goto out;
	}
	long ahead = repo_ahead(r, a->branch, o.into);
	if (ahead == 0) {
		*note = xasprintf("'%s' has nothing to merge into %s", a->branch, o.into);
	} else {
		char *brev = repo_branch_tip(r, a->branch), *irev = repo_branch_tip(r, o.into);
		char *body = xasprintf("branch=%s\nbranch-rev=%s\ninto=%s\ninto-rev=%s\n"
				       "path=%s\nremove=%d\nremote=%d\n",
				       a->branch, brev ? brev : "", o.into, irev ? irev : "",
				       a->path ? a->path : "", !o.keep && !dirty, o.place != NULL);
		rc = brev && irev ? intent_begin(r, "merge", a->handle, body, &in) : -ENOENT;
		free(body);
		free(brev);
		free(irev);
		if (rc < 0) {
			*cause = intent_refused(r, "a merge", a->handle, rc);
			goto out;
		}
		FAULT("merge.intent");
		if ((rc = merge_steps(r, c, a, &o, &in, &tmp, cause)) < 0)
			goto out;
		FAULT("merge.moved");
	}
	if (!o.keep && dirty) {
		*note = xasprintf(
			"the worktree %s keeps its uncommitted changes and was not removed",
			a->path);
	} else if (!o.keep) {
		/* Merged: the branch may go even after a squash. */
		struct remove_opts ro = {.stop = o.stop,
					 .stop_arg = o.stop_arg,
					 .force = true,
					 .keep_branch = false,
					 .run_hooks = true,
					 .place = o.place};
		if ((rc = worktree_remove(r, c, a, &ro, cause)) < 0) {
			/* What moved stays moved: said first. */
			const char *why = *cause ? *cause : strerror(-rc);
			char *more = ahead ? xasprintf("merged into %s, but the agent was not "
						       "removed: %s",
						       o.into, why)
					   : xasprintf("the agent was not removed: %s", why);
			free(*cause);
			*cause = more;
		}
		FAULT("merge.removed");
	}
out:
	checkout_drop(repo_root(r), tmp);
	intent_end(&in);
	if (lock >= 0)
		close(lock);
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
	struct intent in = {0};
	if (rc == 0 && repo_ahead(r, onto, a->branch) == 0) {
		*note = xasprintf("%s already has everything on %s", a->branch, onto);
	} else if (rc == 0) {
		char *brev = repo_branch_tip(r, a->branch);
		char *body = xasprintf("branch=%s\nbranch-rev=%s\nrebasing=%s\n", a->branch,
				       brev ? brev : "", a->path);
		rc = brev ? intent_begin(r, "rebase", a->handle, body, &in) : -ENOENT;
		free(body);
		free(brev);
		if (rc < 0)
			*cause = intent_refused(r, "a rebase", a->handle, rc);
		FAULT("rebase.intent");
		if (rc == 0 && (rc = rebase_or_abort(a->path, onto, no_hooks, cause)) == 0)
			*note = xasprintf("%s is now on top of %s", a->branch, onto);
		FAULT("rebase.done");
	}
	intent_end(&in);
	free(main);
	return rc;
}

/* Whether a rebase git began is under way in the checkout dir. */
static bool rebase_under_way(const char *dir)
{
	bool found = false;
	for (int i = 0; i < 2 && !found; i++) {
		const char *argv[] = {"rev-parse", "--git-path",
				      i ? "rebase-apply" : "rebase-merge", NULL};
		struct buf out = {0};
		struct stat st;
		if (git_run(dir, argv, &out, NULL, true) == 0 && out.data) {
			out.data[strcspn(out.data, "\n")] = '\0';
			char *p = out.data[0] == '/' ? xstrdup(out.data)
						     : xasprintf("%s/%s", dir, out.data);
			found = stat(p, &st) == 0;
			free(p);
		}
		buf_free(&out);
	}
	return found;
}

/*
 * Whether the branch's last move was a rebase's end, from was: its reflog's
 * newest entry a rebase's, the one before it at was.
 */
static bool rebased_from(const struct repo *r, const char *branch, const char *was)
{
	char *ref = xasprintf("refs/heads/%s", branch);
	const char *argv[] = {"log", "-g", "-n", "2", "--format=%H %gs", ref, "--", NULL};
	struct buf out = {0};
	git_run(repo_root(r), argv, &out, NULL, true);
	free(ref);
	const char *l = out.data ? out.data : "";
	const char *second = strchr(l, '\n');
	bool yes = second && strncmp(strchr(l, ' ') ? strchr(l, ' ') + 1 : "", "rebase", 6) == 0 &&
		   strncmp(second + 1, was, strlen(was)) == 0 && second[1 + strlen(was)] == ' ';
	buf_free(&out);
	return yes;
}

/* A temporary worktree a merge noted (/tmp/workrex-merge.XXXXXX): gone, and git's entry. */
static void temp_drop(const struct repo *r, const char *dir)
{
	static const char pre[] = "/tmp/workrex-merge.";
	if (dir == NULL || strncmp(dir, pre, sizeof pre - 1) != 0 ||
	    strlen(dir + sizeof pre - 1) != 6 || strchr(dir + sizeof pre - 1, '/'))
		return; /* not one of ours */
	char *wt = xasprintf("%s/worktree", dir);
	const char *argv[] = {"worktree", "remove", "--force", "--force", "--", wt, NULL};
	if (git_has_worktree(r, wt))
		git_run(repo_root(r), argv, NULL, NULL, true);
	struct stat st;
	if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && !git_has_worktree(r, wt))
		beneath_remove_tree(dir);
	free(wt);
}

/* The branch back at was from now: its checkout reset (dir), or the ref alone (no dir). */
static bool branch_back(const struct repo *r, const char *dir, const char *branch, const char *was)
{
	char *ref = xasprintf("refs/heads/%s", branch);
	char *now = git_rev(repo_root(r), ref);
	char *at = dir ? repo_branch_at(r, dir) : NULL;
	bool ok = false;
	if (now && at && strcmp(at, branch) == 0) {
		const char *argv[] = {"reset", "--keep", "--quiet", was, NULL};
		ok = git_run(dir, argv, NULL, NULL, true) == 0;
	} else if (now && dir == NULL) {
		const char *argv[] = {"update-ref", "-m", "workrex: a merge undone", ref, was,
				      now,          NULL};
		ok = git_run(repo_root(r), argv, NULL, NULL, true) == 0;
	}
	free(at);
	free(now);
	free(ref);
	return ok;
}

/* What a merge's intent noted (see merge_settle). */
struct merge_noted {
	char *branch, *brev, *into, *irev; /* the branch and the target, each with its rev before */
	char *target;                      /* the checkout the merge ran in */
	char *merging, *squashing;         /* git merge, git merge --squash begun */
	char *rebasing;                    /* git rebase begun in this checkout */
	char *tmp, *btmp;                  /* temporary worktrees made (target, branch) */
	char *path, *remove, *remote;      /* the agent's worktree; to be removed after; remote */
};

/* Settle the merge n noted: undone or finished, and said. */
static void settle(const struct repo *r, const char *handle, const struct merge_noted *n,
		   const struct recover_hooks *h)
{
	if (!handle_valid(handle) || !n->branch || !*n->branch || !n->brev || !n->into ||
	    !*n->into || !n->irev || !repo_branch_name_valid(n->branch) ||
	    !repo_branch_name_valid(n->into))
		return; /* not one of ours: nothing to settle */
	char *inow = repo_branch_tip(r, n->into);
	bool moved = inow && strcmp(inow, n->irev) != 0;
	free(inow);
	/* What git was left doing: undone, as it had not moved the target. */
	if (n->target && n->merging) {
		char *mh = git_rev(n->target, "MERGE_HEAD");
		const char *abort_[] = {"merge", "--abort", NULL};
		if (mh && strcmp(mh, n->brev) == 0)
			git_run(n->target, abort_, NULL, NULL, true);
		free(mh);
	}
	if (n->target && n->squashing && !moved) {
		const char *argv[] = {"rev-parse", "--git-path", "SQUASH_MSG", NULL};
		struct buf out = {0};
		struct stat st;
		if (git_run(n->target, argv, &out, NULL, true) == 0 && out.data) {
			out.data[strcspn(out.data, "\n")] = '\0';
			char *p = out.data[0] == '/' ? xstrdup(out.data)
						     : xasprintf("%s/%s", n->target, out.data);
			const char *reset[] = {"reset", "--merge", NULL};
			if (stat(p, &st) == 0 && git_run(n->target, reset, NULL, NULL, true) == 0)
				unlink(p);
			free(p);
		}
		buf_free(&out);
	}
	if (n->rebasing && rebase_under_way(n->rebasing)) {
		const char *abort_[] = {"rebase", "--abort", NULL};
		git_run(n->rebasing, abort_, NULL, NULL, true);
	}
	temp_drop(r, n->tmp);
	temp_drop(r, n->btmp);
	if (!moved) {
		/* Rebased for the merge: the branch back where it was (in its checkout, if kept). */
		bool back = n->rebasing && rebased_from(r, n->branch, n->brev) &&
			    branch_back(r, n->btmp ? NULL : n->rebasing, n->branch, n->brev);
		fprintf(stderr,
			"workrex: a merge of '%s' into %s was cut short; undone: %s%s as it was\n",
			handle, n->into, n->into, back ? " and its branch (rebased) are" : " is");
		return;
	}
	/* The target moved: finished, as the merge would have. */
	char *key = xasprintf("workrex.worktree.%s.path", handle);
	char *recorded = repo_config_get(r, key);
	free(key);
	bool here = n->remote && strcmp(n->remote, "0") == 0;
	bool remove = recorded && n->remove && strcmp(n->remove, "1") == 0;
	char *cause = NULL;
	const char *kept = NULL;
	if (remove && !here) {
		kept = "it runs on a server";
	} else if (remove && (!n->path || strcmp(recorded, n->path) != 0 ||
			      repo_ahead(r, n->branch, n->into) != 0)) {
		kept = "its branch or worktree changed since";
	} else if (remove) {
		struct agent_rec a = {
			.handle = (char *)handle, .branch = n->branch, .path = n->path};
		if (h && h->stop)
			h->stop(&a, h->arg);
		if (worktree_remove_steps(r, &a, true, &cause) < 0)
			kept = cause;
		else if (h && h->gone)
			h->gone(&a, h->arg);
	}
	if (kept)
		fprintf(stderr,
			"workrex: a merge of '%s' into %s was cut short after %s moved; finished, "
			"but the agent is kept (%s): `workrex rm %s` removes it\n",
			handle, n->into, n->into, kept, handle);
	else
		fprintf(stderr,
			"workrex: a merge of '%s' into %s was cut short after %s moved; "
			"finished%s\n",
			handle, n->into, n->into,
			remove ? ": its worktree and branch removed" : "");
	free(cause);
	free(recorded);
}

/*
 * A merge a kill cut short, settled by the next command (see the top of
 * this file).
 */
static int merge_settle(const struct repo *r, const char *handle, const char *body, void *arg)
{
	struct merge_noted n = {
		.branch = intent_get(body, "branch"),
		.brev = intent_get(body, "branch-rev"),
		.into = intent_get(body, "into"),
		.irev = intent_get(body, "into-rev"),
		.target = intent_get(body, "target"),
		.merging = intent_get(body, "merging"),
		.squashing = intent_get(body, "squashing"),
		.rebasing = intent_get(body, "rebasing"),
		.tmp = intent_get(body, "tmp"),
		.btmp = intent_get(body, "branch-tmp"),
		.path = intent_get(body, "path"),
		.remove = intent_get(body, "remove"),
		.remote = intent_get(body, "remote"),
	};
	settle(r, handle, &n, arg);
	char *all[] = {n.branch,   n.brev, n.into, n.irev, n.target, n.merging, n.squashing,
		       n.rebasing, n.tmp,  n.btmp, n.path, n.remove, n.remote};
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		free(all[i]);
	return 0;
}

/* A rebase (the command) a kill cut short: a rebase git left under way is aborted. */
static int rebase_settle(const struct repo *r, const char *handle, const char *body, void *arg)
{
	(void)arg;
	char *branch = intent_get(body, "branch"), *brev = intent_get(body, "branch-rev");
	char *dir = intent_get(body, "rebasing");
	char *key = xasprintf("workrex.worktree.%s.path", handle);
	char *recorded = repo_config_get(r, key);
	free(key);
	/* Only in the agent's own worktree, as recorded. */
	if (handle_valid(handle) && branch && brev && dir && recorded &&
	    strcmp(recorded, dir) == 0) {
		const char *abort_[] = {"rebase", "--abort", NULL};
		if (rebase_under_way(dir) && git_run(dir, abort_, NULL, NULL, true) == 0)
			fprintf(stderr,
				"workrex: a rebase of '%s' was cut short; undone: %s is as it "
				"was\n",
				handle, branch);
		else if (rebased_from(r, branch, brev))
			fprintf(stderr,
				"workrex: a rebase of '%s' was cut short; it had finished\n",
				handle);
		else
			fprintf(stderr,
				"workrex: a rebase of '%s' was cut short; undone: %s is as it "
				"was\n",
				handle, branch);
	}
	free(recorded);
	free(branch);
	free(brev);
	free(dir);
	return 0;
}

void merge_recover(const struct repo *r, const struct recover_hooks *h)
{
	intent_each_left(r, "merge", merge_settle, (void *)h);
	intent_each_left(r, "rebase", rebase_settle, (void *)h);
}
