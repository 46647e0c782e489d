/*
 * backend.h - where a pane's command runs: "host" (as it is) or a sandbox
 * ("container": podman, docker, Apple Container). A backend is a table of
 * functions; adding one is a file and a row in backend.c.
 *
 * A backend turns "run this argv for this agent" into the argv the pane's
 * pty runs (`podman run --rm -it ... image argv`), checks first that it can
 * (runtime present, configuration not refused), and says how to stop what
 * it started. Nothing here blocks: the caller runs the stop argv as a child
 * process. Only the dashboard's thread calls these, with everything they
 * need in struct backend_pane, so no git or network is read here.
 */
#ifndef WRX_BACKEND_H
#define WRX_BACKEND_H

#include "../config/config.h"

#include <stdbool.h>

struct backend_pane {
	const struct config *cfg;
	const char *project_root; /* the main worktree */
	const char *git_dir;      /* the repository's common .git directory */
	const char *worktree;     /* the agent's worktree: the pane's directory */
	const char *handle;
	int n;                    /* the pane's number: containers are wrx-<handle>-<n> */
	const char *agent;        /* the agent's name (claude, codex, ...), or NULL */
	bool agent_pane;          /* the pane running the agent (approval flag goes here) */
	char *const *argv;        /* what to run */
	char *const *env;         /* "NAME=value" for the program (WORKREX_*, TERM, ...) */
	const char *rpc_dir;      /* host directory holding the agent's RPC socket "rpc.sock" */
	int rpc_port;             /* the TCP listener, for runtimes that cannot share a socket */
	const char *guest_bin;    /* the static guest client, mounted as workrex */
	const char *snapshot;     /* a file holding the read-only copy of the git config */
	const char *session;      /* this dashboard's id, a label on what it starts */
	const char *git_name;     /* the host's user.name and user.email, or NULL */
	const char *git_email;
	bool tty;                 /* the pane is a terminal (-t) */
};

struct backend {
	const char *name;
	/* Can this pane run here? 0, or -errno with *cause saying why not (and what to do). */
	int (*check)(const struct backend_pane *p, char **cause);
	/* The argv for the pane's pty (caller frees with strlist_free). 0 or -errno. */
	int (*argv)(const struct backend_pane *p, struct strlist *out, char **cause);
	/* A command that stops what argv started, or nothing (out left empty). */
	void (*stop_argv)(const struct backend_pane *p, struct strlist *out);
};

extern const struct backend backend_host;
extern const struct backend backend_container;

/* The static guest client: $WORKREX_GUEST, else workrex-guest beside this binary. Caller frees. */
char *backend_guest_path(void);
/*
 * Copy the repository's git config (git_dir/config) to a private file under
 * the state directory, for the sandbox to read. *out: its path (caller frees).
 */
int backend_config_snapshot(const char *project_root, const char *git_dir, char **out,
			    char **cause);

/* "host", "container". NULL when unknown. */
const struct backend *backend_find(const char *name);

/* The container runtime to use: the configured one, else podman, docker, container on PATH. */
const char *container_runtime(const struct config *cfg);
/* The sandbox image for an agent: sandbox.image, else workrex-sandbox:<agent>. Caller frees. */
char *container_image(const struct config *cfg, const char *agent);
/* The name of pane n's container. Caller frees. */
char *container_name(const char *handle, int n);
/*
 * A command (argv) that removes this project's containers not started by
 * session: for a dashboard that died. Empty when no runtime is installed.
 */
void container_cleanup_argv(const struct config *cfg, const char *project_root,
			    const char *session, struct strlist *out);

#endif
