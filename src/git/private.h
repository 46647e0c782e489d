/*
 * private.h - a sandboxed agent's private git dir, and the import of its
 * commits into the host repository (SPEC §6).
 *
 * A sandbox that could write the host's objects/ or refs/ could replace a
 * loose object's content under its old name (git does not re-hash what it
 * checks out), and the next `workrex add` on the host would check out, and
 * post_create run, what the sandbox chose. So inside a container the
 * host's git dir is read-only, and the worktree's .git (a file mounted over
 * it) points to a git dir of the agent's own: its refs, its HEAD, its
 * index, its new objects, the host's object store as a read-only alternate.
 *
 * The host never opens that dir as a repository (its config, hooks,
 * commondir and alternates are the sandbox's to write). To import, the host
 * reads the branch tip as 40 hex digits, copies the dir's object files into
 * a quarantine repository of its own, and runs `git fetch` from there with
 * transfer.fsckObjects, so every object that enters the host repository is
 * hashed and checked; then it moves the branch with a compare-and-swap
 * against the tip it last handed the sandbox, and resets the worktree's
 * host index to the new commit (files untouched). A branch that moved on
 * both sides is never overwritten: the sandbox's commits wait under
 * refs/workrex/import/<handle> and the caller is told.
 *
 * Layout, under the state directory: sandbox/git-<project hash>/<handle>/
 * holds `git/` (the private dir, mounted read-write), `gitfile` (mounted
 * over the worktree's .git, read-only) and `synced` (the tip last agreed;
 * never mounted).
 */
#ifndef WRX_PRIVATE_H
#define WRX_PRIVATE_H

#include "git.h"

#include <stdbool.h>

struct private_git {
	char *gitdir;  /* owned: the private git dir, mounted read-write at the same path */
	char *gitfile; /* owned: "gitdir: <gitdir>", mounted over the worktree's .git */
};

/*
 * Make (or bring up to date) the agent's private git dir before a container
 * starts: config from config_text (a credential-free snapshot), HEAD, the
 * branch at the host's tip unless the sandbox has commits not yet imported,
 * the host's other branches and tags as packed refs, the index. 0 or -errno.
 */
int private_prepare(const struct repo *r, const char *handle, const char *branch,
		    const char *config_text, struct private_git *out, char **cause);
void private_git_free(struct private_git *p);

/*
 * Bring the commits the sandbox made on branch into the host repository.
 * 0 when there was nothing to import or it was imported; *note (caller
 * frees) when the sandbox's commits had to be set aside. -errno with *cause
 * when they could not be verified (nothing changed on the host).
 */
int private_import(const struct repo *r, const char *handle, const char *branch,
		   const char *worktree, char **note, char **cause);

/*
 * The host-only directory kept for a sandboxed agent (its private git dir,
 * its private copies of agent state files); made when create. Caller frees.
 */
char *private_agent_dir(const char *project_root, const char *handle, bool create);
/* The directory of those of a project (the agents' dirs are in it). Caller frees. */
char *private_project_dir(const char *project_root, bool create);

/* The agent is gone: remove its private git dir and everything kept for it. */
void private_forget(const struct repo *r, const char *handle);

#endif
