/*
 * cmd.h - the workrex command line: one table entry per command.
 *
 * Each command parses its own flags and returns the process exit status:
 * 0 success, 1 failure (one line on stderr from cmd_fail), 2 usage error.
 */
#ifndef WRX_CMD_H
#define WRX_CMD_H

#include "../config/config.h"
#include "../config/foreach.h"
#include "../git/diff.h"
#include "../git/worktree.h"

#include <json-c/json.h>
#include <stdio.h>

struct cmd_ctx {
	const char *config_file; /* --config, or NULL */
	char *cwd;               /* owned */
	const struct cmd *self;  /* the command running: set by cmd_exec() */
	struct cmd_args *args;   /* what cmd_exec parsed of its options, or NULL */
	/* Filled by cmd_open_repo(): */
	struct repo *repo;
	struct config cfg;
	bool cfg_loaded;
};

/* One option of a command: --name, -letter (0: none), and its value. */
enum cmd_has { OPT_FLAG, OPT_VALUE, OPT_MAYBE /* --name[=value] */ };
struct cmd_opt {
	const char *name;
	int letter;
	enum cmd_has has;
};
/* A row's options, for the table: CMD_OPTS({"json", 0, OPT_FLAG}, ...). */
#define CMD_OPTS(...) ((const struct cmd_opt[]){__VA_ARGS__, {NULL, 0, OPT_FLAG}})
/* A row that takes no option but --help: its arguments are parsed all the same. */
#define CMD_NO_OPTS ((const struct cmd_opt[]){{NULL, 0, OPT_FLAG}})

struct cmd {
	const char *name;
	const char *alias;
	const char *usage;
	const char *summary;
	int (*exec)(struct cmd_ctx *ctx, int argc, char **argv);
	/* Inside a sandbox (WORKREX_SANDBOX=1) this runs instead, over RPC; or NULL. */
	int (*sandboxed)(int argc, char **argv);
	/*
	 * Its options and how many arguments follow them (max -1: any):
	 * cmd_exec parses them (--help, an unknown option or a wrong count
	 * answered there) and exec reads them from ctx (cmd_given,
	 * cmd_value, cmd_arg). NULL: exec reads its own words (a command
	 * with sub-commands, or one whose words are text for an agent).
	 */
	const struct cmd_opt *opts;
	int min_args, max_args;
};

const struct cmd *cmd_find(const char *name);
/*
 * `workrex CMD --help` (or -h) and nothing else: its usage and summary
 * printed, true. For every row, also those whose words are text (a title
 * "--help" is never set), and before a sandbox sends the command away.
 */
bool cmd_help_asked(const struct cmd *c, int argc, char **argv);
/* Runs c in ctx, as itself (ctx->self), its options parsed, and gives back its exit status. */
int cmd_exec(struct cmd_ctx *ctx, const struct cmd *c, int argc, char **argv);
/* How many times the running command was given --name (0: not at all). */
int cmd_given(const struct cmd_ctx *ctx, const char *name);
/* The value --name was last given, or NULL (not given, or --name without its value). */
const char *cmd_value(const struct cmd_ctx *ctx, const char *name);
/* Every value --name was given, in order ("" for one without a value). */
const struct strlist *cmd_values(const struct cmd_ctx *ctx, const char *name);
/* How many arguments followed the options, and the i-th of them (NULL past the last). */
int cmd_nargs(const struct cmd_ctx *ctx);
const char *cmd_arg(const struct cmd_ctx *ctx, int i);
/* The arguments as an argv (NULL-ended), and where those after "--" begin (-1: no "--"). */
char *const *cmd_argv(const struct cmd_ctx *ctx);
int cmd_dashdash(const struct cmd_ctx *ctx);
/*
 * Each option given, in command-line order, for a command where order
 * counts (add: the last -p or -P wins): fn gets its index in the row and
 * its value (NULL for a flag), until it answers non-zero, which is
 * returned.
 */
typedef int cmd_opt_fn(int index, const char *value, void *arg);
int cmd_each_opt(const struct cmd_ctx *ctx, cmd_opt_fn *fn, void *arg);
/* c's options parsed into ctx->args, as cmd_exec does (0, -1 --help, 2); then freed. */
int cmd_args_begin(struct cmd_ctx *ctx, const struct cmd *c, int argc, char **argv);
void cmd_args_end(struct cmd_ctx *ctx);
void cmd_list_all(FILE *f);
/* The i-th command of the table, or NULL past its end. */
const struct cmd *cmd_at(size_t i);

int cmd_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cmd_usage(const struct cmd *c);
/* Open the repository around ctx->cwd and load the config. Returns 0 or exit status. */
int cmd_open_repo(struct cmd_ctx *ctx, const char *cmd);
/*
 * What a killed command left in the project around cwd completed or
 * undone, and said (worktree_recover), before the dashboard starts: the
 * dashboard's start is the next command too. cmd_open_repo does the same.
 */
void cmd_recover(const char *cwd);
void cmd_ctx_free(struct cmd_ctx *ctx);

int cmd_add(struct cmd_ctx *ctx, int argc, char **argv);

/* add for a group (SPEC §11, cmd_group.c). */
struct add_group {
	const char *base_name;       /* add's branch argument */
	struct strlist agents;       /* -a, in order; none: the default agent */
	int count;                   /* -n */
	struct foreach each;         /* --foreach, and the prompt file's front matter */
	struct strlist inputs;       /* -p -: stdin's lines */
	const char *prompt;          /* its template; NULL: none */
	const char *branch_template; /* NULL: base_name-agent-num */
	const char *remote;
	int max_concurrent; /* --max-concurrent; 0: all at once */
	bool background;
	struct add_opts o; /* base, sandbox, where the user stands */
};
bool cmd_add_is_group(const struct add_group *g);

/* Uncommitted work a new agent takes with it (cmd_carry.c). */
struct carry {
	const char *from; /* the worktree it comes from */
	bool untracked;   /* untracked files too */
	bool move;        /* -w: taken away from there; else (--fork) copied */
	bool patch;       /* -w --patch: git asks which hunks */
};

/*
 * add, as asked (add_plan.c): the options parsed, checked against each
 * other before anything is looked up; then resolved (the fork's source,
 * the branch named, the PR's) into what cmd_add_made makes.
 */
struct add_plan {
	struct add_opts o;  /* one agent's: base, handle, agent, sandbox, layout, ... */
	struct add_group g; /* a group's: -a..., -n, --foreach, --prompts-from */
	struct carry carry; /* -u, --patch; -w and --fork fill in where from */
	const char *branch; /* the argument, or NULL */
	int positionals;    /* how many arguments follow the options */
	const char *remote, *pr, *issue, *repos, *fork_session;
	bool background, new_only, from_stdin, forking, with_changes, auto_name;
	/* Owned, for the command's life (o's strings point into them): */
	char *prompt;           /* -p or -P's text */
	char *session;          /* --fork: the session it continues */
	char *named;            /* -A: the branch named */
	char *pr_branch;        /* --pr: the PR's head branch */
	char *issue_prompt;     /* --issue: its title and body (and -p's text after) */
	char *home, *repos_rec; /* --repos: where its panes start; its other repositories */
	char *main_branch;      /* from a sandbox: its base */
	struct agent_rec src;   /* --fork: the agent it continues */
	int pr_number;
};

/* One conflict between options: which one breaks it (NULL: none), and why. */
struct add_rule {
	const char *name;
	const char *(*breaks)(const struct add_plan *p);
	const char *says; /* after the option's name; NULL: a usage error */
};
extern const struct add_rule add_rules[]; /* ends with a NULL name */

/* add's options: its row's in cmd.c's table. */
extern const struct cmd_opt add_opts[];
/* What cmd_exec parsed into p (zeroed but for o.cwd, o.sandbox -1, g.count 1): 0, or 1 (said). */
int add_plan_fill(const struct cmd_ctx *ctx, struct add_plan *p);
/* The first rule p breaks: 0 none, 2 usage, 1 with *why (owned) to say. */
int add_plan_check(const struct add_plan *p, char **why);
bool add_plan_group(const struct add_plan *p);
void add_plan_free(struct add_plan *p);

/*
 * o's worktree made, its agent told to a running dashboard (or left for
 * the next) and announced; pr_number > 0: its PR followed (cmd_worktree.c).
 * 0, or 1 (said).
 */
int cmd_add_made(struct cmd_ctx *ctx, const struct add_opts *o, bool background, int pr_number,
		 const struct carry *carry);

/* Carry c's changes into the new worktree to. 0, or -errno with *cause (nothing lost). */
int cmd_carry(const struct carry *c, const char *to, char **cause);

/* What merging branch into into would bring (merge --preview, compare). */
struct branch_changes {
	char *stat; /* owned: git's --shortstat line, or "no changes" */
	int files, added, deleted;
	char *runs; /* owned: the files among them the host runs later, ", "-joined; NULL: none */
};
void cmd_branch_changes(const struct repo *r, const char *branch, const char *into,
			struct branch_changes *out);
void branch_changes_free(struct branch_changes *c);
int cmd_add_group(struct cmd_ctx *ctx, const struct add_group *g);
int cmd_egress(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_web(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_allow_domain(struct cmd_ctx *ctx, int argc, char **argv);
/* workrex __proxy: the network proxy alone (cmd_proxy.c). */
int cmd_proxy_main(void);
/* workrex __lima-up VM YAML -- COMMAND...: the VM up, then COMMAND (cmd_lima.c). */
int cmd_lima_up(int argc, char **argv);
/*
 * sandbox.backend: devcontainer (cmd_devcontainer.c). prepare: the
 * project's devcontainer.json read (and its image built) by the dev
 * container CLI and checked, before `add` makes anything; keep: kept for
 * the agent handle. Each 0, or 1 (said).
 */
int cmd_devc_prepare(struct cmd_ctx *ctx, const char *handle, json_object **kept);
int cmd_devc_keep(struct cmd_ctx *ctx, const char *handle, json_object *kept);
/*
 * What an agent's session used (the dashboard's usage {in, out,
 * cost_micro}, or NULL) into o as tokens_in, tokens_out and cost_usd;
 * and under a table of such rows, their total (nothing when none says).
 */
void cmd_usage_fields(json_object *o, json_object *u);
void cmd_usage_total(json_object *rows);
/* handle removed: its own dev container volumes go too. */
void cmd_devc_gone(struct cmd_ctx *ctx, const char *handle);
/* sandbox devcontainer [handle]: what workrex makes of the file; kept for handle. */
int cmd_sandbox_devcontainer(struct cmd_ctx *ctx, const char *handle);
/* sandbox doctor, stop [--all] and prune for sandbox.backend: lima (cmd_lima.c). */
int cmd_lima_doctor(struct cmd_ctx *ctx);
int cmd_lima_stop(struct cmd_ctx *ctx, bool all, bool prune);
/* sandbox doctor's line for the guest client: 1 when it is missing (cmd_sandbox.c). */
int cmd_doctor_client(void);
int cmd_list(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_status(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_merge(struct cmd_ctx *ctx, int argc, char **argv);
/* A GitHub issue, as `gh issue view --json` gives it. */
struct gh_issue {
	int number;
	char *title, *body, *url; /* owned */
};
/* gh issue view ref into out: 0, or 1 (said: gh missing, no network, no such issue). */
int cmd_issue(struct cmd_ctx *ctx, const char *ref, struct gh_issue *out);
void gh_issue_free(struct gh_issue *i);
/*
 * a merged as o says, its panes stopped and the agent forgotten once its
 * worktree is gone (merge's work once its questions are answered). 0, or
 * -errno with the reason said, or into *why (caller frees) when why.
 */
int cmd_merge_agent(struct cmd_ctx *ctx, struct agent_rec *a, struct merge_opts *o, char **why);
/* a's check (the project's `check`, in its worktree or sandbox), now or if changed. 0 passed. */
int cmd_check(struct cmd_ctx *ctx, const struct agent_rec *a, bool if_changed);
/*
 * Would branch conflict with into, in the repository at root? Its
 * conflicting files (", "-joined) into *files and their hunks as git marks
 * them into *hunks (both to free); false when it merges cleanly (or git
 * cannot tell). Git writes the merge as objects only: no checkout, no ref
 * changes (queue_land.c).
 */
bool cmd_merge_conflicts(const char *root, const char *into, const char *branch, char **files,
			 char **hunks);
/*
 * An agent of several repositories (add --repos; cmd_workspace.c): made
 * in the others first, its home (*home, where its panes start) and its
 * record of them (*repos) for this one's add; 0, or 1 (said: nothing
 * made). undo takes them away again when this one's add failed.
 */
int cmd_workspace_add(struct cmd_ctx *ctx, struct add_opts *o, const char *list, char **home,
		      char **repos);
void cmd_workspace_undo(struct cmd_ctx *ctx, const char *home, const char *repos,
			const char *handle);
/* Its merge: every repository's previewed, then each lands, this one last. 0, or -EIO (said). */
/*
 * Its diff in mode m in its other repositories, after this one's: each
 * path under the repository's name ("web/app.js"). 0, or -errno with *cause.
 */
int cmd_workspace_diff(const struct agent_rec *a, enum diff_mode m, int fd, char **cause);
/* merge --preview of such an agent: each repository's changes on one line, or why none would merge. */
int cmd_workspace_preview(struct cmd_ctx *ctx, const struct agent_rec *a);
int cmd_workspace_merge(struct cmd_ctx *ctx, struct agent_rec *a, struct merge_opts *o);
/* Its agents in the other repositories removed, before this one. 0, or 1 (said). */
int cmd_workspace_remove(struct cmd_ctx *ctx, const struct agent_rec *a,
			 const struct remove_opts *ro);
/* Its home taken away once its worktree here is gone. */
void cmd_workspace_gone(struct cmd_ctx *ctx, const struct agent_rec *a);
/* The merge queue (cmd_queue.c): list and change it; put an agent in it; land what it holds. */
int cmd_queue(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_queue_add(struct cmd_ctx *ctx, const char *name);
/* The dashboard told where each queued agent is, under its row (none running: nothing). */
void cmd_queue_tell(struct cmd_ctx *ctx);
/* Land what is queued, done's entry (given back, now done) queued again first. */
int cmd_queue_run(struct cmd_ctx *ctx, const char *done);
int cmd_remove(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_config(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_trust(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_open(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_close(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_send(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_send_keys(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_answer(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_capture(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_paste_image(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_wait(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_setup(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_adopt(struct cmd_ctx *ctx, int argc, char **argv);
/* Under list's table: how many sessions started outside workrex run here, if any. */
void cmd_adoptable_note(struct cmd_ctx *ctx);
int cmd_agent_kinds(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_sandbox(struct cmd_ctx *ctx, int argc, char **argv);
/*
 * The argv that runs argv in a new sandbox with handle's mounts (as
 * sandbox shell does; no terminal, no network under policy: deny), into
 * out. 0, or -1 with *cause.
 */
int cmd_sandbox_argv(struct cmd_ctx *ctx, const char *handle, char *const *argv,
		     struct strlist *out, char **cause);
int cmd_compare(struct cmd_ctx *ctx, int argc, char **argv);
/* The project's containers removed, when a runtime is installed (shutdown): its status. */
int cmd_sandbox_end(struct cmd_ctx *ctx);
int cmd_completions(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_init(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_path(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_rename(struct cmd_ctx *ctx, int argc, char **argv);
/* cmd_review.c */
int cmd_diff(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_review(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_pr(struct cmd_ctx *ctx, int argc, char **argv);
/* list --pr [--json]: each agent's PR, its state and checks (gh). */
int cmd_list_pr(struct cmd_ctx *ctx, bool json);
/* add --pr NUM|URL: the PR's head branch fetched; "<remote>/<head>" to add, or NULL having said why. */
char *cmd_pr_branch(struct cmd_ctx *ctx, const char *ref, int *number);
/* The agent's PR is number: kept for the dashboards, told to a running one. */
void cmd_pr_track(struct cmd_ctx *ctx, const char *handle, int number);
/* remove --gone: its PR merged or closed, or its pushed branch deleted (*why, caller frees). */
int cmd_pr_gone(struct cmd_ctx *ctx, const struct agent_rec *a, char **why);
/* Why gh failed in this command, once it did (said once), or NULL. */
const char *cmd_gh_broken(void);
int cmd_rebase(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_sync_files(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_attach(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_watch(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_shutdown(struct cmd_ctx *ctx, int argc, char **argv);

/* cmd_remote.c: agents on servers (remote.hosts). */
/* new_only: an agent asked (spawn_agent): a new branch only, never one of the user's here. */
int cmd_remote_add(struct cmd_ctx *ctx, const struct add_opts *o, const char *host, bool background,
		   bool new_only);
/* A remote agent's branch fetched back (connect: link up if none is); 0, or -1 having said why. */
int cmd_remote_import(struct cmd_ctx *ctx, const char *what, const struct agent_rec *a,
		      bool connect);
/* Where remove and merge find a's worktree: NULL for one here. */
const struct worktree_place *cmd_remote_place(struct cmd_ctx *ctx, const struct agent_rec *a);
/* An agent on host went: a provisioned host whose last it was is destroyed (provision.h). */
void cmd_remote_gone(struct cmd_ctx *ctx, const char *host);
/*
 * The agent's first pane on its server, forwarded here (attach, watch):
 * the socket's path here, or NULL with *cause. Caller frees.
 */
char *cmd_remote_pane(struct cmd_ctx *ctx, const struct agent_rec *a, char **cause);
/*
 * The keepers of ctx's project on the servers its agents are on, as
 * {host: [pane, ...]} into out; how many. A host that does not answer is
 * said on stderr and left out.
 */
int cmd_remote_keepers(struct cmd_ctx *ctx, json_object *out);
/* End those keepers (cmd_remote_keepers' out): how many ended. */
int cmd_remote_end(struct cmd_ctx *ctx, json_object *which);
/* sandbox doctor's lines for the servers of remote.hosts: 1 when one has a problem. */
int cmd_remote_doctor(struct cmd_ctx *ctx);
/*
 * workrex __remote-up, __remote-start, __remote-paste (the dashboard's
 * children), __remote (the server's end).
 */
int cmd_remote_up(int argc, char **argv);
/* workrex __remote-idle HOST: cmd_remote_idle for the dashboard, {"stopped"} last. */
int cmd_remote_idle_child(int argc, char **argv);
/*
 * No agent of the project runs on host now (their panes closed): stop it,
 * when its provision.stop says how. 1 stopped, 0 not (nothing to do, or
 * something still runs there), -1 failed (said).
 */
int cmd_remote_idle(struct cmd_ctx *ctx, const char *host);
int cmd_remote_start(int argc, char **argv);
int cmd_remote_paste(int argc, char **argv);
int cmd_remote_serve(void);

/* Does the agent run in a sandbox: its own choice (add -S / --no-sandbox), else the config's. */
bool cmd_sandboxed(const struct cmd_ctx *ctx, const struct agent_rec *a);
/*
 * The running dashboard's agents (its "list"): 0 with *reply (caller puts)
 * and *agents in it, -ENOENT without a dashboard, <0 after saying why.
 */
int cmd_live_agents(struct cmd_ctx *ctx, const char *what, json_object **reply,
		    json_object **agents);
/* field of the agent handle in that list, or NULL. */
json_object *cmd_live_agent(json_object *agents, const char *handle, const char *field);
/* Every agent of ctx's repository (open), or the exit status after saying why not. */
int cmd_agents(struct cmd_ctx *ctx, const char *what, struct agent_rec **as, size_t *n);
/* The agent named, or the one whose worktree we stand in. 0, or the exit status. */
int cmd_which_agent(struct cmd_ctx *ctx, const char *what, const char *name, struct agent_rec *a);
/* The same, or an adopted session's row (adopt): for verbs that only reach its panes. */
int cmd_pane_agent(struct cmd_ctx *ctx, const char *what, const char *name, struct agent_rec *a);
/* A sandboxed agent's commits, imported onto its branch; 0, or -1 after saying why not. */
int cmd_import_sandbox(struct cmd_ctx *ctx, const char *what, const struct agent_rec *a);

/*
 * Ask the project's core: its running dashboard's, or (when none runs, for
 * an open or while the project's keepers run) one made here for the one
 * request (cmd_core.c). 0 when it acted, -ENOENT when there is nobody to
 * ask, another negative errno (with a message printed) when it refused.
 */
int cmd_dashboard(struct cmd_ctx *ctx, const char *what, json_object *req, json_object **reply);
bool cmd_core_wanted(struct cmd_ctx *ctx, json_object *req);
/*
 * With no dashboard: the agents whose keepers run, as a dashboard's list
 * gives them ({"agents": [{handle, panes, exited, status}]}), from each
 * keeper's hello alone. -ENOENT when none runs.
 */
int cmd_keepers_live(struct cmd_ctx *ctx, json_object **reply);
/* Does a dashboard of the project listen on its control socket? */
bool cmd_dashboard_runs(struct cmd_ctx *ctx);
/* How many of the agent's keepers here answer (its panes that run, or ran). */
int cmd_agent_keepers(struct cmd_ctx *ctx, const char *handle);
int cmd_core(struct cmd_ctx *ctx, json_object *req, json_object **reply, char **cause);
/* {"cmd": verb, "handle", "path", "branch"} for an agent; caller puts. */
json_object *cmd_agent_request(const char *verb, const struct agent_rec *a);
int cmd_notify(struct cmd_ctx *ctx, const char *what, const char *verb, const struct agent_rec *a,
	       bool focus);

#endif
