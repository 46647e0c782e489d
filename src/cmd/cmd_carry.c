/*
 * cmd_carry.c - uncommitted work that goes with a new agent into its
 * worktree: add -w/--with-changes (moved from where the user stands) and
 * add --fork (copied from the agent it continues).
 *
 * git does the work, so binary files, modes and the index come as git
 * keeps them. A move is a stash: pushed where the user stands (-u with
 * untracked files, --patch with git's own hunk questions), applied in the
 * new worktree, and dropped only once applied; applied back where it came
 * from when it does not apply. A copy must not touch a running agent's
 * files: `git stash create` records its tracked changes without changing
 * them, and its untracked files are copied one by one, links as links,
 * nothing followed. Either way nothing is lost: what did not arrive is
 * where it was, or in the stash, and the message says which.
 */
#include "cmd.h"

#include "../git/git.h"
#include "../util/beneath.h"
#include "../util/proc.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* git in dir; its stdout trimmed into *out when out. 0, or git's failure with *cause. */
static int git(const char *dir, const char *const *argv, char **out, char **cause)
{
	struct buf o = {0}, e = {0};
	int rc = git_run(dir, argv, &o, &e, true);
	if (rc != 0) {
		char *why = e.data ? e.data : o.data;
		if (why)
			why[strcspn(why, "\n")] = '\0';
		*cause = xasprintf("git %s: %s", argv[0], why && *why ? why : "failed");
	} else if (out) {
		while (o.len && (o.data[o.len - 1] == '\n' || o.data[o.len - 1] == ' '))
			o.data[--o.len] = '\0';
		*out = o.len ? xstrdup(o.data) : NULL;
	}
	buf_free(&o);
	buf_free(&e);
	return rc == 0 ? 0 : -EIO;
}

/* The bytes of sd/sbase into a new dd/dbase of mode. 0 or -errno. */
static int copy_file(int sd, const char *sbase, int dd, const char *dbase, mode_t mode)
{
	int in = openat(sd, sbase, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -errno;
	int out = openat(dd, dbase, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (out < 0) {
		int e = -errno;
		close(in);
		return e;
	}
	int rc = 0;
	char buf[65536];
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : 0;
			break;
		}
		if ((rc = fd_write_all(out, buf, (size_t)n)) < 0)
			break;
	}
	if (close(out) < 0 && rc == 0)
		rc = -errno;
	close(in);
	return rc;
}

/*
 * from/rel to to/rel: a file with its mode, a link as a link. Both sides
 * are walked with beneath_parent: a directory on the way that a running
 * (perhaps sandboxed) agent made a link meanwhile is an error, never a
 * way to read a host file into the new worktree or to write out of it.
 */
static int copy_entry(const char *from, const char *to, const char *rel)
{
	const char *sbase, *dbase;
	int sd = beneath_parent(from, rel, false, &sbase);
	if (sd < 0)
		return sd;
	int dd = beneath_parent(to, rel, true, &dbase), rc = 0;
	struct stat st;
	if (dd < 0) {
		rc = dd;
	} else if (fstatat(sd, sbase, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = -errno;
	} else if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlinkat(sd, sbase, target, sizeof target - 1);
		if (n >= 0)
			target[n] = '\0';
		rc = n < 0 ? -errno : symlinkat(target, dd, dbase) < 0 ? -errno : 0;
	} else if (S_ISREG(st.st_mode)) { /* sockets, fifos: nothing git would have */
		rc = copy_file(sd, sbase, dd, dbase, st.st_mode & 07777);
	}
	close(sd);
	if (dd >= 0)
		close(dd);
	return rc;
}

/* The untracked files (not ignored) of from, copied into to. */
static int copy_untracked(const char *from, const char *to, int *count, char **cause)
{
	const char *ls[] = {"ls-files", "-z", "--others", "--exclude-standard", NULL};
	struct buf o = {0};
	if (git_run(from, ls, &o, NULL, true) != 0) {
		*cause = xstrdup("git ls-files: failed");
		buf_free(&o);
		return -EIO;
	}
	int rc = 0;
	for (size_t i = 0; i < o.len; i += strlen(o.data + i) + 1) {
		const char *rel = o.data + i;
		if ((rc = copy_entry(from, to, rel)) < 0) {
			*cause = xasprintf("%s: %s", rel, strerror(-rc));
			break;
		}
		++*count;
	}
	buf_free(&o);
	return rc;
}

/* The copy of --fork: from is an agent's worktree, and stays as it is. */
static int carry_copy(const struct carry *c, const char *to, char **cause)
{
	char *sha = NULL;
	const char *create[] = {"stash", "create", NULL};
	if (git(c->from, create, &sha, cause) < 0)
		return -EIO;
	int rc = 0, files = 0;
	if (sha) {
		const char *apply[] = {"stash", "apply", sha, NULL};
		rc = git(to, apply, NULL, cause);
	}
	if (rc == 0 && c->untracked)
		rc = copy_untracked(c->from, to, &files, cause);
	if (rc == 0)
		printf("carried %s%s%s from %s\n", sha ? "its uncommitted changes" : "",
		       sha && files ? " and " : "",
		       files ? (files == 1 ? "1 untracked file" : "untracked files") : "", c->from);
	else if (sha)
		fprintf(stderr, "workrex: add: its changes did not all arrive; %s has them still\n",
			c->from);
	free(sha);
	return rc;
}

/* The index of stash sha in the stash list, or -1. */
static int stash_index(const char *dir, const char *sha)
{
	const char *list[] = {"stash", "list", "--format=%H", NULL};
	char *out = NULL, *cause = NULL;
	int at = -1;
	if (git(dir, list, &out, &cause) == 0 && out) {
		int i = 0;
		for (char *l = strtok(out, "\n"); l && at < 0; l = strtok(NULL, "\n"), i++)
			if (strcmp(l, sha) == 0)
				at = i;
	}
	free(out);
	free(cause);
	return at;
}

static void stash_drop(const char *dir, const char *sha)
{
	int i = stash_index(dir, sha);
	if (i < 0)
		return;
	char *ref = xasprintf("stash@{%d}", i), *cause = NULL;
	const char *drop[] = {"stash", "drop", "-q", ref, NULL};
	if (git(dir, drop, NULL, &cause) < 0) {
		fprintf(stderr, "workrex: add: %s (the stash %s stays)\n", cause, sha);
		free(cause);
	}
	free(ref);
}

/* The move of -w: stashed where the user stands, applied there, dropped. */
static int carry_move(const struct carry *c, const char *to, char **cause)
{
	const char *before_argv[] = {"rev-parse", "-q", "--verify", "refs/stash", NULL};
	char *before = NULL, *sha = NULL, *ignore = NULL;
	git(c->from, before_argv, &before, &ignore);
	free(ignore);
	ignore = NULL;
	char *msg = xasprintf("workrex add: moving to %s", to);
	/*
	 * The project's own .workrex.yaml stays: the dashboard and every
	 * command here run with it (workrex init leaves it untracked), and
	 * moved, the project would go on without its config.
	 */
	const char *status[] = {"status", "--porcelain", "--", ":(top).workrex.yaml", NULL};
	char *config_changed = NULL;
	git(c->from, status, &config_changed, &ignore);
	free(ignore);
	ignore = NULL;
	const char *push[] = {"git",
			      "-C",
			      c->from,
			      "stash",
			      "push",
			      "-m",
			      msg,
			      c->untracked ? "--include-untracked" : "--quiet",
			      c->patch ? "--patch" : "--quiet",
			      config_changed ? "--" : NULL,
			      ":/",
			      ":(top,exclude).workrex.yaml",
			      NULL};
	if (config_changed)
		printf("the project's .workrex.yaml stays in %s (its config), not moved\n",
		       c->from);
	free(config_changed);
	int rc;
	if (c->patch) { /* git asks about each hunk, on this terminal */
		struct proc_opts o = PROC_OPTS_DEFAULT;
		rc = proc_run((char *const *)push, &o) == 0 ? 0 : -EIO;
		if (rc < 0)
			*cause = xstrdup("git stash push --patch: failed");
	} else {
		rc = git(c->from, push + 3, NULL, cause);
	}
	free(msg);
	if (rc == 0)
		git(c->from, before_argv, &sha, &ignore);
	free(ignore);
	if (rc == 0 && (sha == NULL || (before && !strcmp(before, sha)))) {
		printf("no uncommitted changes to carry from %s\n", c->from);
		free(before);
		free(sha);
		return 0;
	}
	free(before);
	if (rc < 0) {
		free(sha);
		return rc;
	}
	const char *apply[] = {"stash", "apply", "--index", sha, NULL};
	char *why = NULL;
	if (git(to, apply, NULL, &why) == 0) {
		stash_drop(c->from, sha);
		printf("moved the uncommitted changes of %s into %s\n", c->from, to);
		free(sha);
		return 0;
	}
	/* Not applied there: back where they were, or kept in the stash. */
	const char *back[] = {"stash", "apply", "--index", sha, NULL};
	char *bcause = NULL;
	if (git(c->from, back, NULL, &bcause) == 0) {
		stash_drop(c->from, sha);
		*cause = xasprintf("%s; your changes are back in %s", why, c->from);
	} else {
		*cause = xasprintf("%s; your changes are in the stash: git stash apply %s", why,
				   sha);
	}
	free(bcause);
	free(why);
	free(sha);
	return -EIO;
}

int cmd_carry(const struct carry *c, const char *to, char **cause)
{
	return c->move ? carry_move(c, to, cause) : carry_copy(c, to, cause);
}
