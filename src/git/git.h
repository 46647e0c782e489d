/*
 * git.h - the repository: what workrex reads with libgit2 and what it asks
 * the git CLI to do.
 *
 * libgit2 answers questions exactly and fast (which worktrees exist, is one
 * dirty, how far a branch is ahead, does a branch exist). Changes that must
 * honour the user's own git setup (clean/smudge filters such as git-lfs,
 * merge drivers, credential helpers) go through the git CLI, which runs
 * them; libgit2 does not. Only this folder includes git2.h.
 */
#ifndef WRX_GIT_H
#define WRX_GIT_H

#include "../util/util.h"

#include <stdbool.h>
#include <stddef.h>

struct repo;
struct strlist;

/* Start libgit2 once, without loading CA certificates (certs.c). */
void git_lib_init(void);

struct worktree_info {
	char *path;   /* owned, absolute */
	char *branch; /* owned; NULL when detached */
	bool main;    /* the main worktree */
	bool missing; /* git has it, but its directory is gone (deleted by hand) */
};

/* Open the repository around dir; always resolves to the main worktree. */
int repo_open(const char *dir, struct repo **out, char **cause);
void repo_free(struct repo *r);
const char *repo_root(const struct repo *r); /* main worktree, absolute */
const char *repo_name(const struct repo *r); /* its directory name */
/*
 * A submodule's superproject: the outermost working tree whose .git/modules
 * holds this repository's git dir (caller frees), or NULL for a repository
 * of its own.
 */
char *repo_superproject(const struct repo *r);
const char *repo_gitdir(const struct repo *r); /* the common .git directory */

/* The branch checked out in the main worktree; caller frees. NULL if detached. */
char *repo_head_branch(const struct repo *r);
/* configured, else origin/HEAD's target, else main, else master; caller frees. */
char *repo_main_branch(const struct repo *r, const char *configured);
bool repo_branch_exists(const struct repo *r, const char *branch);
/* Is name a remote-tracking branch ("origin/main")? */
bool repo_remote_branch_exists(const struct repo *r, const char *name);
/* Is name a valid new branch name (git check-ref-format --branch)? */
bool repo_branch_name_valid(const char *name);

/* What branch changed since it left into (their merge base), in process. */
struct repo_diffstat {
	int files, added, deleted;
	char **paths; /* owned: each file changed (its new path) */
	size_t npaths;
};
/* 0, or -1 (a branch missing, no merge base). */
int repo_diffstat(const struct repo *r, const char *branch, const char *into,
		  struct repo_diffstat *out);
void repo_diffstat_free(struct repo_diffstat *d);
/* The branch checked out in the worktree around dir; caller frees; NULL if none. */
char *repo_branch_at(const struct repo *r, const char *dir);
/* The commit refs/heads/branch points at, in hex; NULL if none. Caller frees. */
char *repo_branch_tip(const struct repo *r, const char *branch);
/* Does the repository hold the object named hex (40 or 64 hex digits)? */
bool repo_has_object(const struct repo *r, const char *hex);
/* The repository's branches and tags but skip_branch, as a packed-refs file. Caller frees. */
char *repo_packed_refs(const struct repo *r, const char *skip_branch);
/* Commits on branch that are not on into (0 when merged). -1 on error. */
long repo_ahead(const struct repo *r, const char *branch, const char *into);

/*
 * Does the worktree at path have uncommitted changes (untracked counted)?
 * Untracked files that match a glob of placed (files.copy, files.symlink:
 * workrex put them there) are not the agent's changes; placed may be NULL.
 */
int repo_dirty(const char *path, const struct strlist *placed, bool *dirty, char **cause);
/* Files changed in the worktree at path (tracked only); caller frees list. */
int repo_changed_files(const char *path, char ***files, size_t *n, char **cause);

/* Every worktree, the main one first. */
int repo_worktrees(const struct repo *r, struct worktree_info **out, size_t *n, char **cause);
/* The one linked worktree git names name (its directory in .git/worktrees/), as one of those. */
int repo_worktree(const struct repo *r, const char *name, struct worktree_info **out, char **cause);
void worktree_info_free(struct worktree_info *w, size_t n);

/*
 * What `git worktree add [-b branch] -- path base` does before its checkout,
 * done in-process: branch made from base if new, the worktree's
 * administrative files written (named name), nothing checked out. The
 * caller then runs `git reset --hard` in path, as git itself does, so the
 * checkout runs the user's filters. -EAGAIN, with nothing changed, where git
 * would do more (a post-checkout hook, per-worktree config or sparse
 * patterns to copy, an upstream to set) or would say no: run git's own
 * `worktree add`. *made_branch tells whether branch was created.
 */
int repo_worktree_prepare(const struct repo *r, const char *name, const char *path,
			  const char *branch, const char *base, bool *made_branch);
/* Undo it after a failed checkout: the worktree, its files, and branch if not NULL. */
void repo_worktree_discard(const struct repo *r, const char *name, const char *branch);
/*
 * What a kill in repo_worktree_prepare can leave of name's administrative
 * files, taken away: the entry being built, and an entry in
 * <git>/worktrees that is not whole (an older build wrote it in place).
 * For an add's undo, which holds name's intent.
 */
void repo_worktree_mend(const struct repo *r, const char *name);

/* The repository's config (the main one, shared by all worktrees). */
char *repo_config_get(const struct repo *r, const char *key); /* caller frees; NULL if unset */
int repo_config_set(const struct repo *r, const char *key, const char *value);
int repo_config_unset(const struct repo *r, const char *key);
/*
 * From begin to commit, the sets and unsets above go to the file together,
 * in one write under one lock (as `git config` would take it): an agent's
 * record costs one rewrite of the config, and is there whole or not at
 * all. Reads in between see the file as it was. 0 or -EIO (then
 * repo_config_why says what went wrong, in libgit2's words).
 */
int repo_config_begin(const struct repo *r);
int repo_config_commit(const struct repo *r);
/* Why the last commit failed ("No space left on device"): the caller frees. */
char *repo_config_why(void);
/*
 * A config.lock a workrex killed while it wrote the config left (no later
 * write could be made past it) removed, and said on stderr. begin does
 * the same when it finds one; worktree_recover calls this first, before
 * git itself writes the config.
 */
void repo_config_mend(const struct repo *r);
/*
 * git run in the main worktree (no hooks) for a change that also writes
 * the config (git branch -m and -D move or drop the branch's section):
 * while no other workrex writes it, as git gives up at once on a held
 * config.lock ("Branch is renamed, but update of config-file failed",
 * found by ten commands at once). Its exit status; stderr in err.
 */
int repo_git_config(const struct repo *r, const char *const *argv, struct buf *err);
/* The names of the keys set that begin with prefix and end with suffix, onto out. 0 or -errno. */
int repo_config_names(const struct repo *r, const char *prefix, const char *suffix,
		      struct strlist *out);

/*
 * Run git with argv (without "git") in dir; stdout and stderr captured into
 * out and err when not NULL. Hooks run unless no_hooks. Returns the exit
 * status (0 success), or -1 if git could not be run.
 */
int git_run(const char *dir, const char *const *argv, struct buf *out, struct buf *err,
	    bool no_hooks);
/* The same with env ("NAME=value", NULL-terminated, or NULL) set for git. */
int git_run_env(const char *dir, const char *const *argv, char *const *env, struct buf *out,
		struct buf *err, bool no_hooks);

/*
 * git fetch refspec from (a repository's path or URL) into r, every object
 * hashed and checked (transfer.fsckObjects), no tags, no FETCH_HEAD, no
 * hook; env as git_run_env's. git's exit status, its stderr in err.
 */
int repo_fetch_verified(const struct repo *r, const char *from, const char *refspec,
			char *const *env, struct buf *err);

/* The commit what (a ref, a rev) names in the repository of dir, hex, or NULL. Caller frees. */
char *git_rev(const char *dir, const char *what);

/* git's last line of err (what went wrong), without "fatal: "/"error: "; caller frees. */
char *git_error_line(struct buf *err, const char *fallback);

#endif
