/*
 * worktree.h - agents' worktrees: naming, creating, finding, removing, and
 * the merge back (merge.c).
 *
 * An agent is a linked worktree with a branch, recorded in the repository's
 * config as workrex.worktree.<handle>.{branch,path,agent,created,sandbox} and
 * branch.<branch>.workrex-base, so `git worktree list` and workrex agree and
 * any workrex process (CLI or dashboard) sees the same agents. An agent on
 * a server (add --remote) has no worktree here: its record says so
 * (.remote, the host's name in remote.hosts; .path, its worktree there),
 * and its branch here is what was last fetched back from it.
 */
#ifndef WRX_WORKTREE_H
#define WRX_WORKTREE_H

#include "../config/config.h"
#include "git.h"

#include <stdbool.h>

struct agent_rec {
	char *handle; /* owned */
	char *branch; /* owned */
	char *path;   /* owned */
	char *agent;  /* owned; may be NULL */
	char *base;   /* owned; may be NULL */
	long created; /* epoch seconds, 0 unknown */
	int sandbox;  /* add -S: 1, --no-sandbox: 0, neither: -1 (the config decides) */
	int number;   /* its number in the dashboard (2.., 1 is the project's own); 0 unknown */
	char *remote; /* owned; the server it runs on (remote.hosts), or NULL: here */
	bool missing; /* its worktree was deleted by hand; git's record and ours remain */
	char *parent; /* owned; the agent whose spawn_agent made it, or NULL: the user */
	char *group;  /* owned; the group of the add that made it (add -n, -a twice...), or NULL */
	char *layout; /* owned; its panes' layout (add -l), or NULL: the config's panes */
	int max_concurrent; /* its group's: at most this many work at once; 0: no limit */
	bool queued;        /* it waits for its group's slot: no panes until then */
	bool adopted;       /* an adopted session's row (git/adopted.h): no worktree of its own */
	int issue;          /* the GitHub issue it works on (add --issue); 0: none */
	char *ports;        /* owned: its ports, "30100,30101" (config ports), or NULL */
	/*
	 * A workspace's agent (add --repos): the directory its panes start
	 * in, its worktree and those of its other repositories side by side
	 * there; and those, "name=root\n"... (each its own agent of the same
	 * handle in that repository). NULL: one repository's.
	 */
	char *home, *repos;
};

/* "feature/auth" -> "feature-auth"; NULL if nothing usable is left. Caller frees. */
char *handle_from_branch(const char *branch);
/* Is name a safe handle: ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ and not "." or ".."? */
bool handle_valid(const char *name);

/* The worktree directory for this repository (config applied, created). */
char *worktree_dir(const struct repo *r, const struct config *c, char **cause);

struct add_opts {
	const char *branch;
	const char *base;   /* NULL: the branch checked out where the user stands */
	const char *handle; /* NULL: from the branch */
	const char *agent;  /* agent name recorded; NULL: none */
	const char *prompt; /* NULL: none */
	const char *cwd;    /* where the user stands */
	int sandbox;        /* 1, 0, or -1: as the config says */
	bool setup_inside;  /* post_create runs in the agent's sandbox, not here */
	const char *parent; /* the agent that asked for it (spawn_agent); NULL: the user */
	const char *group;  /* the group it is one of; NULL: none */
	const char *layout; /* add -l: its layout; NULL: the config's panes */
	const char *fork;   /* add --fork: the session its agent continues, or NULL */
	int max_concurrent; /* the group's limit (add --max-concurrent); 0: none */
	bool queued;        /* made to wait for a slot */
	int issue;          /* add --issue: the GitHub issue it works on; 0: none */
	const char *home;   /* add --repos: the directory its panes start in, or NULL */
	const char *repos;  /* add --repos: its other repositories, "name=root\n"..., or NULL */
};

/* Create branch + worktree, copy/symlink files, run post_create, save the prompt. */
int worktree_add(const struct repo *r, const struct config *c, const struct add_opts *o,
		 struct agent_rec *out, char **cause);

/*
 * Record an agent made on a server (a->remote, a->path there): its keys,
 * its number (the lowest free, into a->number), its base. 0 or -errno.
 */
int agent_record_remote(const struct repo *r, struct agent_rec *a);

/* Find an agent by handle, branch, or path (cwd inside its worktree when name is NULL). */
/*
 * The agent whose handle is handle, exactly: its worktree's entry read
 * alone where git named it as the handle (as add does), else as agent_find
 * does. 0, or -errno with *cause.
 */
int agent_get(const struct repo *r, const char *handle, struct agent_rec *out, char **cause);
int agent_find(const struct repo *r, const char *name, const char *cwd, struct agent_rec *out,
	       char **cause);
/* Every agent worktree (the main worktree excluded). */
int agent_list(const struct repo *r, struct agent_rec **out, size_t *n, char **cause);
void agent_rec_free(struct agent_rec *a);
/* handle waits no more (its panes open now): its record says so. 0 or -errno. */
int agent_unqueue(const struct repo *r, const char *handle);

/*
 * Called once every check has passed, just before anything changes: the
 * caller stops the agent's panes there, so a refused merge or remove leaves
 * a running agent running.
 */
typedef void agent_stop_fn(const struct agent_rec *a, void *arg);

/*
 * Where an agent's worktree is when it is not on this machine (a remote
 * agent's server, cmd_remote.c): what remove and merge do there instead
 * of here. The branch here is up to date already (fetched back).
 */
struct worktree_place {
	int (*dirty)(void *arg, const struct agent_rec *a, bool *dirty, char **cause);
	/* Its pre_remove hooks (when run_hooks), then its worktree and branch there. */
	int (*remove)(void *arg, const struct agent_rec *a, bool run_hooks, char **cause);
	void *arg;
};

struct remove_opts {
	agent_stop_fn *stop; /* may be NULL */
	void *stop_arg;
	bool force; /* even with uncommitted or unmerged work */
	bool keep_branch;
	bool run_hooks;                     /* pre_remove */
	const struct worktree_place *place; /* NULL: the worktree is here */
	char **note; /* may be NULL: what was kept and why (a missing worktree's branch) */
};

/*
 * Does agent a's worktree hold changes of its own? What files.copy and
 * files.symlink put there (untracked, matching their globs) is not.
 */
int worktree_dirty(const struct config *c, const struct agent_rec *a, bool *dirty, char **cause);

/*
 * What a command killed part way left (intent.h) completed or undone, and
 * said on stderr: an add is undone, a remove finished (its agent stopped
 * by stop, as remove_opts's). gone is told of each agent whose record it
 * removed (an add undone, a remove or a merge finished): a dashboard that
 * lists it forgets it. Each command that opens the project calls it first.
 */
struct recover_hooks {
	agent_stop_fn *stop;
	agent_stop_fn *gone; /* may be NULL */
	void *arg;
};
void worktree_recover(const struct repo *r, const struct recover_hooks *h);
/* What merge says of a branch whose worktree has uncommitted work (merge --preview too). */
char *merge_dirty_refusal(const char *branch);
/* Its part for merges and rebases (merge.c). */
void merge_recover(const struct repo *r, const struct recover_hooks *h);
/* For merge.c: whether git has a worktree at path; remove's last steps, hooks done. */
bool git_has_worktree(const struct repo *r, const char *path);
int worktree_remove_steps(const struct repo *r, const struct agent_rec *a, bool drop, char **cause);

int worktree_remove(const struct repo *r, const struct config *c, const struct agent_rec *a,
		    const struct remove_opts *o, char **cause);

/* Run a list of shell hooks in dir with the WORKREX_* environment. */
int run_hooks(const struct strlist *hooks, const char *what, const struct repo *r,
	      const struct agent_rec *a, char **cause);

struct merge_opts {
	agent_stop_fn *stop; /* may be NULL */
	void *stop_arg;
	const char *into;     /* NULL: the main branch */
	const char *strategy; /* merge, rebase, squash */
	bool keep;
	bool ignore_uncommitted;
	bool no_verify;
	bool no_hooks;                      /* git hooks off (work done for a sandboxed agent) */
	const struct worktree_place *place; /* NULL: the worktree is here */
};

/* Merge the agent's branch; on any failure nothing has changed. *note: extra info for the user. */
int worktree_merge(const struct repo *r, const struct config *c, const struct agent_rec *a,
		   const struct merge_opts *o, char **note, char **cause);

/*
 * Rebase the agent's branch, in its worktree, onto onto (NULL: the main
 * branch). A conflict aborts the rebase: nothing changed. *note says what
 * happened (caller frees).
 */
int worktree_rebase(const struct repo *r, const struct config *c, const struct agent_rec *a,
		    const char *onto, bool no_hooks, char **note, char **cause);

/*
 * Rename the agent: its handle, worktree directory and git admin dir, its
 * recorded keys, and its branch to branch unless NULL. On failure nothing
 * changed. out gets the agent as it is now.
 */
int worktree_rename(const struct repo *r, const struct agent_rec *a, const char *handle,
		    const char *branch, struct agent_rec *out, char **cause);

/*
 * Apply files.copy and files.symlink again: copies the project has changed
 * are copied again, missing links made; what the branch tracks is left
 * alone. *done counts what was written.
 */
int worktree_sync_files(const struct repo *r, const struct config *c, const struct agent_rec *a,
			int *done, char **cause);

#endif
