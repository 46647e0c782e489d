/*
 * config.h - workrex's settings, read from YAML into one typed struct.
 *
 * Files are read in order (global, then project); later values win. Bad
 * YAML or a bad value is an error naming file:line:column; an unknown key
 * is a warning naming file:line. Only this module touches libyaml.
 *
 * Keys that would let a cloned repository widen its own sandbox are
 * global-only: a project file that sets them gets a warning and is ignored.
 * In the hook and file lists, the item "<global>" splices the global list.
 * Every key, its type, default and rules are one row of table.c.
 */
#ifndef WRX_CONFIG_H
#define WRX_CONFIG_H

#include "../net/hostname.h"
#include "../rpc/status.h"

#include <stdbool.h>
#include <stddef.h>

struct config_bind {
	int key;
	int action; /* enum wrx_action */
	int arg;
};

struct strlist {
	char **v; /* owned */
	size_t n;
};

struct agent_def {
	char *name;    /* owned */
	char *type;    /* owned: its kind (kinds.h) when its command does not say, or NULL */
	char *command; /* owned */
	struct strlist args;
	struct strlist env; /* "NAME=value" */
};

struct pane_def {
	char *command;  /* owned; "<agent>" for the agent */
	bool vertical;  /* split: vertical (side by side) */
	int percentage; /* 0: even */
	bool focus;
};

/* workspaces: repositories add --repos takes together (absolute paths, ~ expanded). */
struct workspace_def {
	char *name; /* owned */
	struct strlist repos;
};

/* layouts: a named set of panes, chosen with add -l NAME. */
struct layout_def {
	char *name; /* owned */
	struct pane_def *panes;
	size_t npanes;
};

struct mount_def {
	char *host;  /* owned; absolute, ~ expanded */
	char *guest; /* owned; the same path unless given */
	bool writable;
};

struct sandbox_config {
	bool enabled;
	char *backend;                  /* owned: container, lima or devcontainer */
	char *runtime;                  /* owned: default or gvisor; global-only */
	char *target;                   /* owned: agent or all */
	char *image;                    /* owned; NULL: workrex-sandbox:<agent> */
	struct strlist env;             /* "NAME=value"; global-only */
	struct strlist env_passthrough; /* global-only */
	struct mount_def *extra_mounts; /* owned; global-only */
	size_t nextra_mounts;
	struct strlist host_commands;                      /* global-only */
	struct strlist host_command_paths;                 /* global-only: read-only in the box */
	long host_command_processes, host_command_seconds; /* global-only */
	char *host_command_memory;                         /* owned, "8GiB"; global-only */
	char *agent_config_dir;                            /* owned; global-only */
	char *rpc_host;                                    /* owned; global-only */
	bool dangerously_allow_unsandboxed_host_exec;      /* global-only */
	struct {
		char *runtime; /* owned: podman, docker, apple-container; NULL: detect */
		char *memory;  /* owned: "4g" */
		char *cpus;    /* owned: "2" */
		long pids_limit;
		struct strlist devices, group_add, excluded_files, cap_add,
			security_opt; /* global */
		char *oci_runtime;    /* owned; global-only */
		char *share_sockets;  /* owned: auto, true, false; global-only */
	} container;
	struct {
		char *policy;              /* owned: allow, deny */
		struct net_policy allowed; /* owned: allowed_domains */
		long max_connections;
	} network; /* global-only */
	struct {
		char *isolation, *memory, *disk, *provision, *toolchain; /* owned */
		long cpus;
		bool skip_default_provision;
		bool accept_reduced_git_metadata_isolation; /* global-only */
	} lima;                 /* read by the lima backend (backends/lima.c) */
	char *devcontainer_cli; /* owned; global-only: the dev container CLI */
};

/* A server agents may run on (remote.hosts; add --remote). */
/* A provisioned host's steps (remote.hosts.NAME.provision): argv templates, run here. */
enum provision_step {
	PROVISION_CREATE,
	PROVISION_START,
	PROVISION_ENDPOINT,
	PROVISION_STOP,
	PROVISION_DESTROY,
	PROVISION_STEPS
};
struct remote_host {
	char *name, *ssh, *path; /* owned: its name here, ssh's destination, the clone there */
	char *runtime;           /* owned; NULL: the agent runs directly; docker or podman */
	/* provision's argv per step ({host}, {project}, {id} expanded), n 0: not set */
	struct strlist provision[PROVISION_STEPS];
};

struct config {
	char *main_branch;        /* owned; NULL: detect */
	char *worktree_dir;       /* owned; NULL: <repo-parent>/<project>__worktrees */
	char *agent;              /* owned; NULL: claude if on PATH, else $SHELL */
	struct agent_def *agents; /* owned; global-only */
	size_t nagents;
	struct remote_host *hosts; /* owned: remote.hosts; global-only */
	size_t nhosts;
	struct workspace_def *workspaces; /* owned: workspaces; global-only */
	size_t nworkspaces;
	struct pane_def *panes; /* owned; NULL: agent pane + a shell pane */
	size_t npanes;
	struct layout_def *layouts; /* owned: layouts */
	size_t nlayouts;
	struct strlist files_copy, files_symlink;
	struct strlist post_create, pre_merge, pre_remove;
	char *merge_strategy;       /* owned: merge, rebase, squash */
	char *check;                /* owned: a group candidate's check (SPEC §11), or NULL */
	char *auto_name_command;    /* owned: add -A's namer, or NULL: the agent kind's */
	bool check_required;        /* compare --merge wants it passed */
	char *review_pager;         /* owned: what colours the review view's diff; NULL: detected */
	char *review_remote;        /* owned: where pr pushes, add --pr fetches */
	char *review_commit;        /* owned: user, agent (c in the review view) */
	char *review_commit_prompt; /* owned: what c sends the agent then */
	long scrollback;
	long ports;                /* each agent's own ports (util/ports.h); 0: none */
	int prefix;                /* key code, C-b by default */
	struct config_bind *binds; /* owned */
	size_t nbinds;
	char *notify;                  /* owned: off, bell, desktop, both (notify.mode) */
	struct strlist notify_command; /* global-only: argv run for each notification */
	/* owned: allow, ask, deny: a pane's OSC 52 clipboard write (global-only) */
	char *clipboard_host, *clipboard_sandboxed;
	/* The web view (global-only): web.listen set starts it with the dashboard. */
	char *web_listen;                 /* owned: HOST:PORT, or NULL */
	char *web_tls_cert, *web_tls_key; /* owned paths, or NULL */
	struct strlist web_names;         /* other names it is reached by */
	bool web_read_only;
	char *sidebar_order; /* owned: number, attention */
	long sidebar_width;  /* columns, the border aside */
	char *icons[4];      /* owned: working, waiting, done, failed (config_icon) */
	struct sandbox_config sandbox;
	char **warnings; /* owned */
	size_t nwarnings;
	/*
	 * A project file whose commands were ignored because the user has not
	 * trusted its content (trust.h): its path, the exact text that was
	 * read (what `trust` must record), and the keys ignored. NULL/empty
	 * when every command counted.
	 */
	char *untrusted_path;           /* owned */
	char *untrusted_text;           /* owned */
	struct strlist untrusted;       /* the keys: post_create, panes, ... */
	struct strlist untrusted_lines; /* the lines setting them ("12: check: make"), in order */
};

/* A size as Lima takes it: a number and GiB, MiB, TiB, G or M. */
bool config_size_ok(const char *s);
void config_init(struct config *c);
/* The sidebar's icon for st ("" for none). */
const char *config_icon(const struct config *c, enum wrx_status st);
void config_free(struct config *c);
/* sandbox.extra_mounts emptied. */
void config_free_mounts(struct sandbox_config *sb);

/*
 * Read one file into c. A missing file is not an error (returns 0). On error
 * returns -1 with *err set ("file:line:col: message"; caller frees). In a
 * project file (global false) the keys that run commands (agent, panes,
 * post_create, pre_merge, pre_remove) count only if its content is trusted.
 */
int config_load(struct config *c, const char *path, bool global, char **err);

/*
 * Add host ("name" or "*.name") to sandbox.network.allowed_domains in the
 * config file at path (the global one), keeping the rest of the file as
 * it is (edit.c). 0 (also when it was there), or -errno with *cause.
 */
int config_allow_domain(const char *path, const char *host, char **cause);
/*
 * sandbox.lima.accept_reduced_git_metadata_isolation: true in the config
 * at path (the global one), edited as text the same way. 0 or -errno.
 */
int config_accept_lima(const char *path, char **cause);

/* The global config path ($XDG_CONFIG_HOME/workrex/config.yaml); caller frees. */
char *config_global_path(void);
/* .workrex.yaml from dir upwards (stopping at a .git), or NULL; caller frees. */
char *config_project_path(const char *dir);

/*
 * Where to search for the project file: cwd, unless cwd is inside a linked
 * worktree (an agent's, which its sandbox can write): then the main
 * worktree, so an agent can never plant the hooks its own merge would run.
 */
const char *config_search_dir(const char *cwd, const char *main_root);

/*
 * Load the global file, then the project file (explicit, or searched from
 * dir). Returns 0, or -1 with *err set.
 */
int config_load_all(struct config *c, const char *dir, const char *project_file, char **err);

/* Trust what c->untrusted_path held when it was read. 0 or -errno with *cause. */
int config_trust(const struct config *c, char **cause);

/*
 * The keys as YAML, in the table's order (reference.c): each at its default
 * with its help (`config reference`), or, given c, at c's values (`config
 * check`). CONFIG_REF_PROJECT leaves out what only the global file may set;
 * CONFIG_REF_LOADABLE writes an unset value as null, so that c loads back
 * (a sandbox on a server gets its settings so).
 */
enum { CONFIG_REF_PROJECT = 1, CONFIG_REF_LOADABLE = 2 };
struct buf;
void config_reference(struct buf *out, const struct config *c, unsigned flags);
/* workrex.yaml(5)'s KEY REFERENCE section, as roff. */
void config_reference_man(struct buf *out);

const struct agent_def *config_agent(const struct config *c, const char *name);
const struct layout_def *config_layout(const struct config *c, const char *name);
/*
 * A workspace file's repositories (workspace.c: .workrex-workspace.yaml,
 * `repos: [PATH...]`), as written, onto out. 0, or -errno with *cause.
 */
int config_workspace_repos(const char *path, struct strlist *out, char **cause);
void strlist_add(struct strlist *l, const char *s);
void strlist_free(struct strlist *l);
/* A NULL-terminated view of l, for an argv (the strings stay l's): caller frees the array. */
char **strlist_argv(const struct strlist *l);

#endif
